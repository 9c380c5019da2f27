"""``wikibot serve`` / ``python -m bot`` without a token or config: one clear line, no crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_serve_without_a_token_prints_one_line_and_exits(monkeypatch, capsys):
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert main(["serve"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "DISCORD_TOKEN" in lines[0] and "export DISCORD_TOKEN=" in lines[0]
    assert "wikibot console" in lines[0]


def test_python_m_bot_without_a_token_says_the_same(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    result = subprocess.run(
        [sys.executable, "-m", "bot"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "DISCORD_TOKEN" in line and "wikibot console" in line


def test_serve_with_a_token_but_a_bad_config_names_the_file_and_key(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DISCORD_TOKEN", "not.a.real-token")
    config = tmp_path / "config.yaml"
    config.write_text("wiki:\n  path: nowhere\n", encoding="utf-8")
    assert main(["serve", "--config", str(config)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(config) in line and "wiki.path" in line
    assert "not.a.real-token" not in line

    assert main(["sync", "--config", str(tmp_path / "missing.yaml")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "missing.yaml" in line and "config file not found" in line


def test_tickets_without_wiki_use_the_configured_wiki_and_the_bots_store(
    monkeypatch, capsys, tmp_path
):
    """``wikibot tickets`` reads the bot's config (``--config`` or ``$WIKIBOT_CONFIG``):
    the ticket is checked against the configured wiki and filed in the store the bot
    uses (``tickets.sqlite3`` in its data folder), and list/show read that store."""
    import json
    import shutil

    from knowledge.intake.sqlite import SqliteTicketStore
    from knowledge.service import demo_wiki_dir

    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    for page in wiki.rglob("*onboarding*.md"):  # this wiki asks the built-in checklist
        page.unlink()
    data = tmp_path / "bot-data"
    config = tmp_path / "config.yaml"
    config.write_text(f"wiki:\n  path: {wiki}\n  data_dir: {data}\n", encoding="utf-8")
    request = tmp_path / "request.yaml"
    request.write_text(json.dumps({"question": "GLM-5 hangs after NCCL init"}), "utf-8")
    monkeypatch.delenv("WIKIBOT_CONFIG", raising=False)
    assert main(["tickets", "file", "--config", str(config), str(request)]) == 0
    assert capsys.readouterr().out.strip() == "1"
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket is not None
        assert not ticket.triage["checklist_source"], "the configured wiki, not the demo's"
    finally:
        store.close()
    monkeypatch.setenv("WIKIBOT_CONFIG", str(config))
    assert main(["tickets", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [t["id"] for t in listed] == [1]
    monkeypatch.chdir(tmp_path / "wiki")  # no config.yaml here, none in the environment
    monkeypatch.delenv("WIKIBOT_CONFIG")
    assert main(["tickets", "list", "--data", str(data)]) == 0
    assert "#1" in capsys.readouterr().out
    monkeypatch.setenv("WIKIBOT_DATA", str(tmp_path / "cache"))  # the demo's folder
    assert main(["tickets", "list", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == [] and "no config file" in err and "--config" in err


def test_tickets_export_writes_the_ticket_and_its_thread_redacted(
    threaded_standin, monkeypatch, capsys, tmp_path
):
    """``wikibot tickets export ID``: the ticket from the bot's store and its thread's
    messages read from Discord with the bot's token, secrets removed, in Markdown or
    JSON; without a token, the ticket alone and a line saying why."""
    import json

    from knowledge.intake.desk import SupportDesk
    from knowledge.intake.sqlite import SqliteTicketStore
    from knowledge.service import KnowledgeBase, demo_wiki_dir
    from tests.discord_standin import DEFAULT_IDS

    secret = "hf_" + "Qz7" * 12
    data = tmp_path / "data"
    kb = KnowledgeBase.open(demo_wiki_dir(), data)
    desk = SupportDesk(kb.triage_context, SqliteTicketStore.in_folder(data))
    try:
        draft = desk.new_draft("discord:42").draft
        desk.save(draft.id, "discord:42", {"text": "GLM-5 hangs at NCCL init"})
        ticket = desk.file(draft.id, "discord:42", post=True).ticket
        thread_id = threaded_standin.ids.next()
        threaded_standin.threads[thread_id] = {
            "id": str(thread_id),
            "type": 11,
            "parent_id": str(DEFAULT_IDS.forum),
            "guild_id": str(DEFAULT_IDS.guild),
            "name": ticket.title,
            "owner_id": str(DEFAULT_IDS.bot),
            "last_message_id": None,
            "message_count": 0,
            "member_count": 1,
            "total_message_sent": 0,
            "rate_limit_per_user": 0,
            "flags": 0,
            "applied_tags": [],
            "thread_metadata": {
                "archived": False,
                "locked": False,
                "auto_archive_duration": 4320,
                "archive_timestamp": "2026-01-01T00:00:00+00:00",
            },
        }
        desk.posted(ticket.id, thread_id)
    finally:
        desk.store.close()
        kb.close()
    ds = threaded_standin
    ds.make_message("it still hangs, my token is " + secret, channel_id=thread_id)
    ds.make_message("try NCCL_P2P_LEVEL=SYS", channel_id=thread_id, author_id=DEFAULT_IDS.mod)
    monkeypatch.setenv("DISCORD_TOKEN", ds.config.token)
    args = ["tickets", "export", "--data", str(data)]
    assert main([*args, "--format", "json", str(ticket.id)]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["id"] == ticket.id and exported["fields"]["text"]
    contents = [m["content"] for m in exported["thread"]]
    assert contents == ["it still hangs, my token is [REDACTED:hf-token]", "try NCCL_P2P_LEVEL=SYS"]
    out = tmp_path / "ticket.md"
    assert main([*args, "--output", str(out), str(ticket.id)]) == 0
    text = out.read_text("utf-8")
    assert text.startswith(f"# Ticket #{ticket.id}: GLM-5 hangs at NCCL init")
    assert "> try NCCL_P2P_LEVEL=SYS" in text and secret not in text
    monkeypatch.delenv("DISCORD_TOKEN")
    assert main([*args, str(ticket.id)]) == 0
    assert "set DISCORD_TOKEN to include them" in capsys.readouterr().out


def test_tickets_answers_lists_the_answers_the_wiki_lacks(monkeypatch, capsys, tmp_path):
    import json

    from knowledge.service import demo_wiki_dir
    from tests.support import file_solved_tickets

    data = tmp_path / "data"
    off_wiki = ("the card whines under load", "A trick: undervolt with a curve, not a cap.")
    file_solved_tickets(data, off_wiki)
    monkeypatch.delenv("WIKIBOT_CONFIG", raising=False)
    args = ["tickets", "answers", "--json", "--data", str(data), "--wiki", str(demo_wiki_dir())]
    assert main(args) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert main([*args, "--not-in-wiki"]) == 0
    (candidate,) = json.loads(capsys.readouterr().out)
    assert candidate["title"] == "the card whines under load" and candidate["nearest_section"]
