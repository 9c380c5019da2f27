"""``wikibot tickets file|list|show`` as a person would run them, and the console's /support."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.cli.tickets import open_desk, support_flow
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.service import KnowledgeBase
from tests.support import DEMO, ROOT

HF = "hf_" + "Pm5" * 12
V3_LAUNCH = (
    (DEMO / "models" / "glm5_v3.md").read_text("utf-8").split("```bash\n")[1].split("```")[0]
)
LOG = "\n".join(f"(APIServer pid=1) INFO 05-15 03:30:49 [x.py:1] line {i}" for i in range(150))


def wikibot(data: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "tickets", *args],
        cwd=ROOT,
        env={**os.environ, "WIKIBOT_DATA": str(data / "cache")},
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def filed(tmp_path_factory) -> tuple[Path, int, Path]:
    data = tmp_path_factory.mktemp("tickets")
    request = data / "request.yaml"
    request.write_text(
        json.dumps(
            {
                "question": "GLM-5 dies right after loading on eight GPUs",
                "runbook": "models/glm5_v3.md",
                "launch_command": V3_LAUNCH + f" -e HF_TOKEN={HF}",
                "gpu_layout": "8x RTX PRO 6000",
                "logs": LOG,
                "already_tried": "a reboot",
            }
        ),
        "utf-8",
    )
    result = wikibot(data, "file", "--data", str(data), str(request))
    assert result.returncode == 0, result.stderr
    assert HF not in result.stdout + result.stderr
    return data, int(result.stdout.strip()), request


def test_file_prints_the_new_id_and_stores_it_redacted(filed):
    data, ticket_id, _ = filed
    assert ticket_id == 1
    raw = b"".join(p.read_bytes() for p in data.glob("tickets.sqlite3*"))
    assert HF.encode() not in raw
    assert b"[REDACTED:hf-token]" in raw


def test_show_json_has_the_contract(filed):
    data, ticket_id, _ = filed
    result = wikibot(data, "show", "--data", str(data), "--json", str(ticket_id))
    assert result.returncode == 0, result.stderr
    ticket = json.loads(result.stdout)
    assert {"id", "status", "title", "family", "created_at", "fields"} <= set(ticket)
    assert ticket["id"] == ticket_id and ticket["status"] == "open"
    assert ticket["family"] == "glm-5"
    assert ticket["title"] == "GLM-5 dies right after loading on eight GPUs"
    assert ticket["created_at"].endswith("Z")
    assert "[REDACTED:hf-token]" in ticket["fields"]["command"]
    assert "tried: a reboot" in ticket["fields"]["text"]  # asked by no checklist item
    assert {"kind": "hf-token", "field": "command", "count": 1} in ticket["redactions"]
    assert ticket["post"]["state"] == "none"
    assert [e["kind"] for e in ticket["events"]] == ["created"]
    assert ticket["triage"]["suggestions"]


def test_show_text_and_list(filed):
    data, ticket_id, _ = filed
    shown = wikibot(data, "show", "--data", str(data), str(ticket_id))
    assert shown.returncode == 0 and "GLM-5 dies" in shown.stdout and HF not in shown.stdout
    listed = wikibot(data, "list", "--data", str(data), "--json")
    rows = json.loads(listed.stdout)
    assert [r["id"] for r in rows] == [ticket_id]
    assert set(rows[0]) >= {"id", "status", "title", "family", "created_at"}
    text = wikibot(data, "list", "--data", str(data), "--status", "closed")
    assert text.stdout.strip() == "no tickets"


def test_unknown_ids_and_empty_requests_fail_plainly(filed, tmp_path):
    data, _, _ = filed
    missing = wikibot(data, "show", "--data", str(data), "999")
    assert missing.returncode == 1 and "999" in missing.stderr
    empty = tmp_path / "empty.yaml"
    empty.write_text("text: '   '\n", "utf-8")
    refused = wikibot(data, "file", "--data", str(data), str(empty))
    assert refused.returncode == 2 and "nothing to triage" in refused.stderr


def _console_answers(last: str) -> list[str]:
    return [
        "GLM-5 hangs at startup",  # text
        ".",
        "it hangs",  # actual
        ".",
        "",  # expected (skipped)
        ".",
        "models/glm5_v3.md",  # model page
        "",  # image
        V3_LAUNCH,  # command
        ".",
        "8x RTX PRO 6000, TP8",  # layout
        *LOG.splitlines(),  # log
        ".",
        "curl localhost:8000/v1/models",  # client
        ".",
        last,
    ]


def test_the_console_asks_item_by_item_and_files(tmp_path):
    kb = KnowledgeBase.open(DEMO, tmp_path)
    answers = iter(_console_answers("file"))
    said: list[str] = []
    try:
        ticket = support_flow(kb, lambda prompt: next(answers), said.append, user="local:t")
    finally:
        kb.close()
    assert ticket is not None and ticket.title == "GLM-5 hangs at startup"
    assert any("Filed ticket #1" in line for line in said)
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        stored = store.get_ticket(ticket.id)
        assert stored.values["layout"] == "8x RTX PRO 6000, TP8"
        assert stored.values["log"].count("\n") == 149
    finally:
        store.close()


def test_the_consoles_check_offers_a_solved_ticket_like_it_as_the_bot_does(tmp_path):
    """The console's check is the desk's, as the bot's: a solved ticket whose request is
    like this one comes first, with its marked answer and its thread's link."""
    kb = KnowledgeBase.open(DEMO, tmp_path)
    thread = "https://discord.com/channels/1/2/3"
    try:
        first = iter(_console_answers("file"))
        ticket = support_flow(kb, lambda p: next(first), lambda line: None, user="local:a")
        assert ticket is not None
        desk = open_desk(kb)
        try:
            desk.mark_answer(
                ticket.id,
                actor="local:a",
                staff=True,
                answer="Pin the image to the runbook's own tag.",
                url=thread,
            )
        finally:
            desk.store.close()
        shown: list[str] = []

        def render(reply) -> str:
            return "\n".join([reply.title, *(f"{f.name}: {f.value}" for f in reply.fields)])

        second = iter(_console_answers("cancel"))
        ask = lambda p: next(second)  # noqa: E731
        assert support_flow(kb, ask, shown.append, user="local:b", render=render) is None
    finally:
        kb.close()
    check = next(line for line in shown if "A similar ticket was solved" in line)
    assert "Pin the image to the runbook's own tag." in check and thread in check


def test_the_console_keeps_the_draft_when_stopped_and_offers_it_again(tmp_path):
    kb = KnowledgeBase.open(DEMO, tmp_path)
    said: list[str] = []
    try:
        first = iter(["my server will not start", ".", "/cancel"])
        assert support_flow(kb, lambda p: next(first), said.append, user="local:t") is None
        second = iter(["y", "it exits", ".", "/cancel"])
        prompts: list[str] = []

        def ask(prompt: str) -> str:
            prompts.append(prompt)
            return next(second)

        assert support_flow(kb, ask, said.append, user="local:t") is None
    finally:
        kb.close()
    assert "Continue it?" in prompts[0]
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        draft = store.open_draft("local:t", 0)
        assert draft.values == {"text": "my server will not start", "actual": "it exits"}
    finally:
        store.close()
