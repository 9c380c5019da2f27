"""Secrets a hostile or careless user hands the bot, followed to where they could leak.

Each test drives one real path end to end (Discord through the loopback stand-in, the
model server through its stand-in, the command line and the stores through
``knowledge/``) and looks for the secret, or a telling piece of it, in what went out:
the model server's request bodies, what another user is shown, the stores on disk.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import pytest

from bot.client import WikiBot
from bot.exts.search import _views
from bot.exts.search._views import KEYS_FILE, SearchMemory
from knowledge.gaps import MAX_QUERY_CHARS, GapSettings, GapStore
from knowledge.gaps.recorder import MAX_QUEUED_CHARS
from knowledge.intake.desk import MAX_ANSWER_CHARS, IntakeSettings, SupportDesk
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.intake.store import RateLimit
from knowledge.intake.transcript import ThreadMessage, transcript_json, transcript_markdown
from knowledge.llm.prompt import MAX_CONTEXT_CHARS, retrieve
from knowledge.service import KnowledgeBase
from knowledge.templates import load_templates
from tests.bot.helpers import (
    EPHEMERAL,
    LINK_BASE,
    PATIENT,
    bot_factory,
    buttons,
    embed_of,
    make_config,
)
from tests.bot.test_ask import final, llm_config
from tests.bot.test_support import (  # noqa: F401  (fixtures)
    LOG,
    STEP1,
    V3_LAUNCH,
    base_data,
    button_id,
    data,
    factory,
    filed_post,
    through_step_1,
    through_step_2,
)
from tests.discord_standin import DEFAULT_IDS
from tests.support import DEMO

#: An OpenAI-style project key (``sk-proj-`` and random base64url).
OPENAI_KEY = "sk-proj-" + "Vb8xR2kq_Lm4T9wZ-c3NdP7fHj6Ys1Ue5Ga0Qo8Ki2Xr4Wt"
#: A Hugging Face token.
HF = "hf_" + "Rk2Wq7" * 5 + "Zp3x"
#: A key in no known format: only its random looks tell it (``mask_credentials``).
RANDOM_KEY = "Xq4Lm9Zt2Bv7Nc3Kp8Rw1Hy6Df5Gj0SaE"


def test_an_openai_key_in_an_ask_question_never_reaches_the_model_server(
    discord_standin, llm_standin
):
    """/ask "...my key sk-proj-...": the question is redacted before it is sent; an
    OpenAI-style key is a known format, not left to the public post's entropy mask
    (the model server gets no such mask)."""
    question = f"nccl calloc error when the server starts; my client uses {OPENAI_KEY}"

    async def scenario(standin):
        record = await standin.slash("ask", question=question)
        await record.wait_for(final(record), timeout=30, what="the final edit")
        return [repr(r.json) for r in standin.requests]

    shown = discord_standin.run(bot_factory(llm_config(llm_standin.url)), scenario)
    assert llm_standin.served, "the model server was asked"
    sent = repr([s.body for s in llm_standin.served])
    assert "[REDACTED:openai-key]" in sent
    body = OPENAI_KEY.removeprefix("sk-proj-")
    assert all(body[i : i + 8] not in sent for i in range(len(body) - 8))
    assert not any(body[:16] in text for text in shown)


def test_a_similar_solved_ticket_never_shows_what_its_public_post_masked(discord_standin, data):  # noqa: F811
    """Alice's request names a key in no known format in its first line (the ticket's
    title): her public post masks it. After a helper's answer is marked, Bob's /search
    for the same problem is offered "a similar ticket was solved" with that ticket's
    title and the start of its answer: what the post masked must stay masked there."""
    step1 = {**STEP1, "text": f"GLM-5 dies right after loading with key {RANDOM_KEY}"}

    async def scenario(ds):
        opened = await ds.slash("support")
        saved = (await (await ds.submit_modal(opened, step1)).answer()).shown
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        post = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(post.response["id"])
        answer = ds.make_message(
            f"Pin the v4 image; and rotate {RANDOM_KEY}, it is in your title",
            channel_id=thread_id,
            author_id=DEFAULT_IDS.mod,
        )
        await ds.message_command("Mark as answer", answer)
        searched = await ds.slash(
            "search",
            query="glm-5 engine dies after loading on eight gpus",
            user_id=DEFAULT_IDS.newbie,
        )
        return copy.deepcopy(searched.original), copy.deepcopy(post.json)

    page, post = discord_standin.run(factory(data), scenario)
    assert RANDOM_KEY not in repr(post) and "REDACTED" in post["name"], "the public post masks it"
    fields = {f["name"]: f["value"] for f in embed_of(page)["fields"]}
    offered = fields["A similar ticket was solved"]
    assert RANDOM_KEY not in offered and RANDOM_KEY[:12] not in offered
    assert "REDACTED" in offered


@pytest.mark.parametrize(
    "padding",
    [
        pytest.param("zorblax frobnicator melts " * 40, id="cut-for-the-store"),
        pytest.param("zorblax frobnicator melts" + " " * MAX_QUEUED_CHARS, id="cut-for-the-queue"),
    ],
)
def test_a_search_query_cut_for_the_gaps_leaves_no_piece_of_a_token(tmp_path, padding):
    """A long /search query is kept for ``wikibot gaps`` cut to MAX_QUERY_CHARS (and a
    longer one, from the console, queued cut to MAX_QUEUED_CHARS): a token that a cut
    runs through must not leave its first part in the gaps store (a Hugging Face token
    cut after 30 of its 37 characters is 7 characters from being whole)."""
    limit = MAX_QUERY_CHARS if len(padding) < MAX_QUEUED_CHARS else MAX_QUEUED_CHARS
    query = padding[: limit - 31] + " " + HF + " again"
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    try:
        kb.record_gaps(GapSettings())
        kb.search(query)
        assert kb.gaps is not None and kb.gaps.flush()
    finally:
        kb.close()
    (row,) = GapStore.read(tmp_path / "kb")
    assert row.query.startswith("zorblax frobnicator")
    stored = (tmp_path / "kb" / "gaps.sqlite3").read_bytes()
    assert HF[:12].encode() not in stored and HF[3:15] not in row.query


def test_a_marked_answer_cut_to_its_limit_keeps_no_piece_of_a_token(tmp_path):
    """ "Mark as answer" keeps a message of up to MAX_ANSWER_CHARS: a message longer than
    that (Nitro messages hold 4,000 characters, a bot's embeds more) whose token the
    cut runs through must not leave the token's first part in the store, from where
    the start of the answer is offered to other users."""
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        desk = SupportDesk(kb.triage_context, store, settings=IntakeSettings(rate=RateLimit(0, 1)))
        draft = desk.new_draft("discord:1").draft
        desk.save(draft.id, "discord:1", {"text": "GLM-5 dies after loading", "actual": "x"})
        ticket = desk.file(draft.id, "discord:1", post=False).ticket
        # no blank before the cut, so it falls inside the token: after hf_ and 30 more
        message = "=" * (MAX_ANSWER_CHARS - 35) + "," + HF + " rotate it"
        desk.mark_answer(ticket.id, actor="discord:1", staff=False, answer=message, url="u")
        (kept,) = store.solved_answers()
    finally:
        store.close()
        kb.close()
    assert HF[3:15] not in kept.answer
    assert HF[3:15].encode() not in (tmp_path / "tickets.sqlite3").read_bytes()


def test_a_search_with_a_token_keeps_none_of_it_on_disk_and_still_pages_after_a_restart(
    discord_standin,
    data,  # noqa: F811
):
    """/search "... HF_TOKEN=hf_..." (a pasted launch line): the pager's key file in the
    data folder (read back at start-up so old pagers turn) holds the query redacted,
    and the pager of that search still turns after a restart."""
    query = f"nccl hang at start, launched with HF_TOKEN={HF} --tensor-parallel-size 8"

    async def before(ds):
        record = await ds.slash("search", query=query)
        await record.answer()
        return copy.deepcopy(record.original)

    page_one = discord_standin.run(factory(data), before)
    kept = (data / KEYS_FILE).read_text("utf-8")
    assert "nccl hang" in kept and HF[3:15] not in kept and "[REDACTED:" in kept

    async def after_restart(ds):  # a new bot process; the message is still on Discord
        ds.messages[int(page_one["id"])] = copy.deepcopy(page_one)
        next_id = next(b["custom_id"] for b in buttons(page_one) if b["label"] == "Next")
        turn = await ds.press(page_one, next_id)
        await turn.answer()
        return turn, ds.messages[int(page_one["id"])]

    turn, turned = discord_standin.run(factory(data), after_restart)
    assert turn.response.callback_type in (6, 7)
    assert embed_of(turned)["fields"] != embed_of(page_one)["fields"], "on to page 2"


def test_the_search_key_file_rewritten_whole_keeps_the_queries_redacted(tmp_path, monkeypatch):
    monkeypatch.setattr(_views, "KEYS_KEPT", 2)
    memory = SearchMemory(lambda: tmp_path)
    for n in range(5):  # the fifth line rewrites the file with the two kept
        _, pending = memory.remember(f"nccl hang {n} HF_TOKEN={HF}", None)
        if pending is not None:
            asyncio.run(memory.write(pending))
    kept = (tmp_path / KEYS_FILE).read_text("utf-8").splitlines()
    assert len(kept) == 2 and all("[REDACTED:" in line for line in kept)
    assert HF[3:15] not in "".join(kept)


def test_a_key_in_no_known_format_reaches_no_model_server_from_ask_or_support(
    discord_standin,
    llm_standin,
    data,  # noqa: F811
):
    """A long random key (no known format: the public post masks it by its looks) in an
    /ask question, and in the log and story of a /support request answered in words:
    the model server (a third party's, as like as not) gets neither."""
    llm = {"enabled": True, "base_url": llm_standin.url, "model": "standin-model"}
    config = make_config(
        discord=PATIENT,
        support={"forum_channel_id": DEFAULT_IDS.forum, "rate_count": 100},
        llm={**llm, "cooldown_seconds": 0},
    )

    def make(**kwargs):
        bot = WikiBot(
            config, knowledge=KnowledgeBase.open(DEMO, data, link_base=LINK_BASE), **kwargs
        )
        bot._owns_kb = True
        return bot

    log = LOG + f"\n(APIServer pid=1) INFO 05-15 03:31:02 [x.py:1] client key {RANDOM_KEY} ok"

    async def scenario(ds):
        asked = await ds.slash("ask", question=f"nccl calloc error; key {RANDOM_KEY}")
        await asked.wait_for(final(asked), timeout=30, what="the final edit")
        opened = await ds.slash("support", model="glm")
        step1 = {**STEP1, "actual": f"the engine exits; my client sends {RANDOM_KEY}"}
        saved = (await (await ds.submit_modal(opened, step1)).answer()).shown
        await through_step_2(ds, saved, log=log.encode())

    discord_standin.run(make, scenario)
    assert len(llm_standin.served) == 2, "both were answered in words"
    for served in llm_standin.served:
        sent = repr(served.body)
        assert RANDOM_KEY[:12] not in sent and RANDOM_KEY[-12:] not in sent
        assert "[REDACTED:credential-like]" in sent


def log_sent_to_a_model(tmp_path: Path, log: str) -> str:
    """The part of a request's ``log`` that goes to a model server with its question."""
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    try:
        found = retrieve(kb.state, "nccl calloc error at start", {"log": log})
    finally:
        kb.close()
    ((_, sent),) = found.context
    return sent


def test_the_log_window_sent_as_context_starts_at_a_line_so_no_key_is_cut(tmp_path):
    """The log sent to the model is the stored log's last MAX_CONTEXT_CHARS * 4
    characters: with lines a terminal padded with blanks (what a copy out of tmux
    gives), a key on the line where that window starts was cut to a piece too short
    to look like a key, and sent: the window starts at a line."""
    pad = " " * 190
    tail = "".join(f"\nINFO step {n} ok{pad}" for n in range(60))
    head = f"INFO start{pad}\nINFO client key {RANDOM_KEY}"
    start = len(head) - 20  # the window keeps the key's last 20 characters
    log = (head + tail)[: start + MAX_CONTEXT_CHARS * 4]
    assert log[-MAX_CONTEXT_CHARS * 4 :].startswith(RANDOM_KEY[-20:])
    sent = log_sent_to_a_model(tmp_path, log)
    assert "INFO step 3 ok" in sent and RANDOM_KEY[-12:] not in sent


@pytest.mark.parametrize("label", ["--password", "--hf-token", "Authorization: Bearer"])
def test_a_log_in_one_long_line_sends_no_secret_whose_label_a_window_would_cut_off(tmp_path, label):
    """A log pasted as one line (a JSON log, a terminal that lost its breaks): its end
    sent to the model starts at a word, not nothing. Had the window been cut before
    redaction, a cut between a secret's label and its value would leave the value bare;
    and a key block the redaction then shrinks to a marker brings that value into the
    part sent. The log is redacted whole, then cut."""
    secret = "Tr0ub4dor3xyzQ"
    body = "MIIEvQIBADAN" * 700  # a one-line key block of 8,400 characters
    block = f"-----BEGIN PRIVATE KEY----- {body} -----END PRIVATE KEY-----"
    words = " ".join(f"step{n}=ok" for n in range(149))
    tail = f"{secret} {block} {words}"
    head = " ".join(f"init{n}" for n in range(2000)) + f" {label} "
    log = head + tail
    # the old window of MAX_CONTEXT_CHARS * 4 started inside the label
    assert "\n" not in log and 0 < MAX_CONTEXT_CHARS * 4 - len(tail) - 1 < len(label)
    sent = log_sent_to_a_model(tmp_path, log)
    assert sent.endswith("step148=ok")  # the end of the line is sent
    assert secret not in sent and "MIIEvQIBADAN" not in sent


def test_a_ticket_transcript_masks_what_the_public_post_masked(tmp_path):
    """``wikibot tickets export``: a transcript is made to be passed on. A key in no
    known format in the request's story and log, and in a message of its thread, is
    masked in it (Markdown and JSON) as in the ticket's public post."""
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        desk = SupportDesk(kb.triage_context, store, settings=IntakeSettings(rate=RateLimit(0, 1)))
        draft = desk.new_draft("discord:1").draft
        values = {
            "text": f"GLM-5 dies after loading with key {RANDOM_KEY}",
            "actual": "x",
            "log": f"INFO started\nINFO client key {RANDOM_KEY} accepted\nINFO done",
        }
        desk.save(draft.id, "discord:1", values)
        ticket = desk.file(draft.id, "discord:1", post=True).ticket
    finally:
        store.close()
        kb.close()
    messages = [ThreadMessage("alice", 1.0, f"my client key is {RANDOM_KEY}, rotate it?")]
    shown = [
        transcript_markdown(ticket, messages, load_templates("intake.yaml")),
        json.dumps(transcript_json(ticket, messages)),
    ]
    for text in shown:
        assert RANDOM_KEY[:12] not in text and "[REDACTED:credential-like]" in text


def test_a_search_query_with_a_key_in_no_known_format_is_kept_masked_for_the_gaps(tmp_path):
    """``wikibot gaps`` and ``/wiki gaps`` show the unanswered queries to the staff: a
    key that a public post would mask is masked there too."""
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    try:
        kb.record_gaps(GapSettings())
        kb.search(f"zorblax frobnicator melts {RANDOM_KEY}")
        assert kb.gaps is not None and kb.gaps.flush()
    finally:
        kb.close()
    (row,) = GapStore.read(tmp_path / "kb")
    assert row.query == "zorblax frobnicator melts [REDACTED:credential-like]"


def public_and_stored(discord_standin, folder, **step2) -> tuple[list[str], bytes]:
    """A whole /support flow whose step 2 is ``step2``, filed: what it made public (the
    forum post's request and each attachment's text) and the ticket store's bytes."""

    async def scenario(ds):
        return await filed_post(ds, **step2)

    post = discord_standin.run(factory(folder), scenario)
    shown = [repr(post.json), *(f.data.decode("utf-8") for f in post.files)]
    return shown, (folder / "tickets.sqlite3").read_bytes()


def test_a_database_password_with_an_at_sign_reaches_neither_the_post_nor_the_store(
    discord_standin,
    data,  # noqa: F811
):
    """The launch command names a database URL whose password holds an ``@`` typed as
    it is (``P@ssw0rd``, as people write them): redacted up to the host's ``@``, in the
    forum post, its attachments and the ticket store; short, it looks like no key."""
    password = "P@ssw0rd-Winter24"
    command = f"{V3_LAUNCH.strip()} --kv-events-url postgres://vllm:{password}@db:5432/kv"

    shown, stored = public_and_stored(discord_standin, data, command=command)
    assert any("postgres://vllm:[REDACTED:url-password]@db:5432/kv" in text for text in shown)
    assert not any("ssw0rd" in text for text in shown)
    assert b"ssw0rd" not in stored


def test_keys_of_other_services_reach_neither_the_post_nor_the_store(
    discord_standin,
    data,  # noqa: F811
):
    """An NGC key echoed bare in the uploaded log, and a Google key in a comment of the
    launch command, under no name that says secret: found by their prefixes (NVIDIA's
    ``nvapi-``, Google's ``AIza``) and kept out of the forum post, its attachments and
    the ticket store. A Google key without a digit looked like no credential at all."""
    ngc = "nvapi-" + "Tq8vKz2Lw5Rx9Nb4Hc7Jd3Fm6Gp1Sy0Ae" * 2
    google = "AIza" + "SyQwErTyUiOpAsDfGhJkLzXcVbNmQwErTyU"  # 39 characters, as they are
    log = LOG + f"\n(APIServer pid=1) INFO 05-15 03:31:02 [login.py:1] using {ngc} for nvcr.io"
    command = f"{V3_LAUNCH.strip()}  # judge model: {google}"

    shown, stored = public_and_stored(discord_standin, data, log=log.encode(), command=command)
    assert any("[REDACTED:service-key] for nvcr.io" in text for text in shown)
    assert any("judge model: [REDACTED:service-key]" in text for text in shown)
    for key in (ngc, google):
        assert not any(key[6:20] in text for text in shown) and key[6:20].encode() not in stored


def test_every_key_of_vllms_printed_api_key_list_is_redacted(discord_standin, data):  # noqa: F811
    """vLLM prints its non-default arguments at start-up, ``--api-key`` (which takes
    several keys) as a list: ``'api_key': ['k1', 'k2']``. An uploaded log with that
    line: no key of the list reaches the forum post, its attachments or the store."""
    keys = ("team-alpha-7731", "team-beta-0420")
    args = f"{{'model': 'glm', 'api_key': ['{keys[0]}', '{keys[1]}'], 'port': 8000}}"
    log = LOG + f"\n(APIServer pid=1) INFO 05-15 03:31:02 [utils.py:1] non-default args: {args}"

    shown, stored = public_and_stored(discord_standin, data, log=log.encode())
    assert any("'api_key': [[REDACTED:env-secret]]" in text for text in shown)
    for key in keys:
        assert not any(key in text for text in shown) and key.encode() not in stored


def test_a_kubernetes_env_list_pasted_as_the_compose_file_keeps_its_values_out(
    discord_standin,
    data,  # noqa: F811
):
    """The form asks for the launch command or compose file; a Kubernetes manifest's
    ``env:`` list names each variable and gives its value on the next line (``- name:
    VLLM_API_KEY`` / ``value: ...``): the secret one reaches neither the post, its
    attachments nor the store; the others stay readable."""
    manifest = (
        "containers:\n"
        "  - name: vllm\n"
        "    image: demo-registry/vllm:lantern-v3-cu130-20260605\n"
        "    args: [serve, glm, --tensor-parallel-size, '8']\n"
        "    env:\n"
        "      - name: VLLM_API_KEY\n"
        "        value: team-alpha-7731\n"
        "      - name: NCCL_P2P_LEVEL\n"
        "        value: SYS\n"
    )

    shown, stored = public_and_stored(discord_standin, data, command=manifest)
    assert any("value: [REDACTED:env-secret]" in text for text in shown)
    assert any("value: SYS" in text for text in shown)
    assert not any("team-alpha-7731" in text for text in shown)
    assert b"team-alpha-7731" not in stored


def test_a_public_search_answer_never_shows_a_token_typed_in_the_query(discord_standin):
    """/search "glm nccl hang HF_TOKEN=hf_..." (words and a pasted setting): the answer
    is public, in the channel, and its title says what was searched; the token in the
    query, and a key in no known format, are not shown there, on any page."""
    query = f"glm nccl hang HF_TOKEN={HF} key {RANDOM_KEY}"

    async def scenario(ds):
        record = await ds.slash("search", query=query)
        await record.answer()
        first = copy.deepcopy(record.original)
        next_id = next(b["custom_id"] for b in buttons(first) if b["label"] == "Next")
        await (await ds.press(first, next_id)).answer()
        return first, copy.deepcopy(record.original), record.response.json

    first, second, response = discord_standin.run(bot_factory(), scenario)
    assert not response["data"].get("flags", 0) & EPHEMERAL, "public"
    for page in (first, second):
        title = embed_of(page)["title"]
        shown = title.replace("\\", "")  # the query is Markdown-escaped in the title
        assert shown.startswith("Search: glm nccl hang HF_TOKEN=[REDACTED:")
        assert HF[3:15] not in repr(page) and RANDOM_KEY[:12] not in repr(page)


def test_an_unknown_model_named_with_a_secret_is_echoed_without_a_piece_of_it(tmp_path):
    """/support model:<text> echoes an unknown model's name in its private answer, cut
    to a few words: a name that opens with a pasted key block, a token after it across
    the old 200-character cut, left the token's first part in the answer."""
    body = "MIIEvQIBADAN" * 9 + "MIIEvQI"
    block = f"-----BEGIN PRIVATE KEY----- {body} -----END PRIVATE KEY-----"
    name = block + " " + HF  # the old cut fell after hf_ and 27 more characters
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        desk = SupportDesk(kb.triage_context, store)
        key, problem = desk.resolve_model(name)
    finally:
        store.close()
        kb.close()
    shown = problem.replace("\\", "")  # Markdown escapes
    assert key is None and "[REDACTED:private-key]" in shown
    assert HF[:8] not in shown


def test_a_curl_basic_auth_password_in_the_client_command_is_redacted(tmp_path):
    """The form asks for the client command; a server behind basic auth is tested with
    ``curl -u name:password`` (often broken over lines with ``\\``): the password, short
    and no key to look at, reaches neither the ticket's public post nor the store. A
    ``docker run -u 1000:1000`` (user and group) is left as it is."""
    client = (
        "curl -sS \\\n  -u admin:Winter24pw \\\n  http://gpu-box:8000/v1/models\n"
        "docker run -u 1000:1000 demo-registry/vllm:lantern-v3-cu130-20260605"
    )
    kb = KnowledgeBase.open(DEMO, tmp_path / "kb")
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        desk = SupportDesk(kb.triage_context, store, settings=IntakeSettings(rate=RateLimit(0, 1)))
        assert desk.form.field("client") is not None
        draft = desk.new_draft("discord:1").draft
        values = {"text": "GLM-5 answers 401 behind the proxy", "actual": "x", "client": client}
        desk.save(draft.id, "discord:1", values)
        ticket = desk.file(draft.id, "discord:1", post=True).ticket
        post = desk.ticket_post(ticket)
    finally:
        store.close()
        kb.close()
    shown = repr([post.title, post.content, post.reply.fields, post.attachments])
    assert "Winter24pw" not in shown and "Winter24pw" not in ticket.values["client"]
    assert b"Winter24pw" not in (tmp_path / "tickets.sqlite3").read_bytes()
    assert "-u admin:[REDACTED:cli-secret]" in ticket.values["client"]
    assert "docker run -u 1000:1000 demo" in ticket.values["client"]


def test_secrets_in_json_held_in_a_json_string_are_redacted(discord_standin, data):  # noqa: F811
    """A JSON logger writes a request's body and headers as JSON strings inside its own
    JSON line (``\\"api_key\\": \\"...\\"``), as ``kubectl -o json`` writes the
    last-applied manifest: escaped quotes hid the names from redaction. An uploaded log
    with such a line: no key of it reaches the post, its attachments or the store."""
    body = json.dumps({"model": "glm", "api_key": "team-alpha-7731"})
    headers = json.dumps({"Authorization": "Token team-beta-0420"})
    line = json.dumps({"level": "debug", "msg": "upstream", "body": body, "headers": headers})
    log = LOG + "\n" + line

    shown, stored = public_and_stored(discord_standin, data, log=log.encode())
    assert any('\\"api_key\\": \\"[REDACTED:env-secret]\\"' in text for text in shown)
    for key in ("team-alpha-7731", "team-beta-0420"):
        assert not any(key in text for text in shown) and key.encode() not in stored
