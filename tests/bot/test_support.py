"""/support end to end: the form's steps, the wiki's answer, the forum post, the faults.

Each test drives the real bot through the loopback stand-in and asserts on the JSON
it sent. Tickets live in the SQLite store in the knowledge base's data folder; each
test uses its own data folder, so "a restart" is a second run over the same folder.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import re
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from bot.client import WikiBot
from knowledge.intake.desk import SupportDesk
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.service import KnowledgeBase, demo_wiki_dir
from knowledge.text import escape_markdown
from tests.bot.helpers import (
    EPHEMERAL,
    IMPATIENT,
    LINK_BASE,
    PATIENT,
    Gate,
    buttons,
    embed_of,
    make_config,
)
from tests.discord_standin import DEFAULT_IDS
from tests.discord_standin.faults import fail
from tests.discord_standin.modal_uploads import submit_modal_with_files
from tests.discord_standin.payloads import forum_post_json, iso_now

HF = "hf_" + "Tz6" * 12
GH = "ghp_" + "Lm2k" * 9
DEMO = demo_wiki_dir()
V3_LAUNCH = (
    (DEMO / "models" / "glm5_v3.md").read_text("utf-8").split("```bash\n")[1].split("```")[0]
)
LOG = "\n".join(
    f"(APIServer pid=1) INFO 05-15 03:30:49 [x.py:1] line {i}"
    + (f" HF_TOKEN={HF}" if i == 7 else "")
    for i in range(300)
)
STEP1 = {
    "text": "GLM-5 dies right after loading on eight GPUs",
    "actual": "the engine exits",
    "expected": "a running server",
    "image": "demo-registry/vllm:lantern-v3-cu130-20260605",
}


@pytest.fixture(scope="module")
def base_data() -> Path:
    """A data folder with the demo wiki's index built once; each test copies it."""
    folder = Path(tempfile.mkdtemp(prefix="wikibot-support-"))
    KnowledgeBase.open(DEMO, folder, link_base=LINK_BASE).close()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def data(base_data, tmp_path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(base_data, target, symlinks=True)
    return target


def factory(
    data: Path, *, wiki: Path = DEMO, discord: dict[str, Any] | None = None, **support: Any
):
    settings = {"forum_channel_id": DEFAULT_IDS.forum, "rate_count": 100, **support}
    config = make_config(support=settings, **({"discord": discord} if discord else {}))

    def make(**kwargs: Any) -> WikiBot:
        kb = KnowledgeBase.open(wiki, data, link_base=LINK_BASE)
        bot = WikiBot(config, knowledge=kb, **kwargs)
        bot._owns_kb = True  # closed with the bot: the next run reopens the same folder
        bot.support_retry_interval = 0.05
        return bot

    return make


def button_id(message: dict[str, Any], label: str) -> str:
    return next(b["custom_id"] for b in buttons(message) if b["label"] == label)


def inputs(modal: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for label in modal["components"]:
        assert label["type"] == 18, "every input is wrapped in a ui.Label"
        out[label["component"]["custom_id"]] = label["component"]
    return out


async def through_step_1(ds, **slash: Any):
    opened = await ds.slash("support", **slash)
    assert opened.response.callback_type == 9, opened.response.json
    submitted = await ds.submit_modal(opened, STEP1)
    saved = await submitted.answer()
    return opened, submitted, saved.shown


async def through_step_2(ds, saved_message, *, log: bytes | None = LOG.encode(), **values):
    step2 = await ds.press(saved_message, button_id(saved_message, "Continue"))
    assert step2.response.callback_type == 9
    files = {"log__file": [ds.attachment("server.log", log)]} if log is not None else {}
    answers = {"command": V3_LAUNCH, "layout": "8x RTX PRO 6000, TP8", **values}
    submitted = await submit_modal_with_files(ds, step2, answers, files=files)
    check = await submitted.answer()
    return step2, check.shown


async def filed_post(ds, **step2: Any):
    """The forum post's request, for a draft of the GLM family whose step 2 has
    ``step2`` (``log``, ``command``, ...) filed with "File the ticket"."""
    _, _, saved = await through_step_1(ds, model="glm")
    _, check = await through_step_2(ds, saved, **step2)
    await ds.press(check, button_id(check, "File the ticket"))
    return await ds.wait_for_request(lambda r: r.route == "create_thread")


def no_secret_sent(ds) -> None:
    for request in ds.requests:
        blob = repr(request.json) + "".join(
            f.data.decode("utf-8", "replace") for f in request.files
        )
        assert HF not in blob and GH not in blob, f"a secret went to Discord in {request.path}"


# --- the flow -----------------------------------------------------------------------------


def test_the_form_in_two_steps_then_the_wiki_answer_then_a_forum_post(discord_standin, data):
    async def scenario(ds):
        opened, _, saved = await through_step_1(ds, model="glm")
        step2, check = await through_step_2(ds, saved)
        check = copy.deepcopy(check)  # as shown before the press changes it
        filed = await ds.press(check["id"], button_id(check, "File the ticket"))
        done = await filed.answer()
        thread_request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        return opened, saved, step2, check, done, thread_request

    opened, saved, step2, check, filed, request = discord_standin.run(factory(data), scenario)
    modal = opened.response.json["data"]
    assert modal["title"] == "Support request (1/2)"
    step1 = inputs(modal)
    assert list(step1) == ["text", "actual", "expected", "model_page", "image"]
    assert step1["model_page"]["type"] == 3, "the model page is a select of families"
    assert any(o.get("default") and o["value"] == "glm-5" for o in step1["model_page"]["options"])
    assert step1["text"]["required"] and step1["text"]["style"] == 2
    assert saved["flags"] & EPHEMERAL and "Step 1 of 2 saved" in embed_of(saved)["title"]
    second = inputs(step2.response.json["data"])
    assert list(second) == ["command", "layout", "log", "client", "log__file"]
    assert second["command"]["max_length"] == 4000 and second["log__file"]["type"] == 19
    # The wiki's answer, privately, before anything is posted.
    assert check["flags"] & EPHEMERAL
    answer = embed_of(check)
    names = [f["name"] for f in answer["fields"]]
    # The triage reply every triage answer uses (templates/triage.yaml), titled for /support.
    assert answer["title"] == "Before you file: what the wiki says"
    assert answer["footer"]["text"] == "Nothing has been posted yet."
    removed_name = "Secrets removed before anything else read the request"
    assert removed_name in names and "Suggested pages" in names and "Checklist" in names
    assert names.index("Findings") < names.index("Known errors in your log")
    removed = answer["fields"][names.index(removed_name)]["value"].replace("\\", "")
    assert "hf-token" in removed and "log" in removed and HF not in removed
    checklist = answer["fields"][names.index("Checklist")]["value"]
    assert "[missing]" in checklist, "the items still missing are marked"
    assert [b["label"] for b in buttons(check)] == ["This solved it", "Edit", "File the ticket"]
    # The post.
    body = request.json
    assert body["name"] == STEP1["text"]
    assert str(DEFAULT_IDS.tag_open) in [str(t) for t in body["applied_tags"]]
    message = body["message"]
    assert message["content"].startswith(f"<@{DEFAULT_IDS.alice}>")
    assert message["allowed_mentions"]["parse"] == []
    assert [str(u) for u in message["allowed_mentions"]["users"]] == [str(DEFAULT_IDS.alice)]
    names = sorted(f.filename for f in request.files)
    assert names == ["ticket-1-launch.txt", "ticket-1-log-tail.txt"]
    tail = next(f for f in request.files if f.filename.endswith("log-tail.txt")).data.decode()
    assert len(tail.splitlines()) == 300 and "[REDACTED:hf-token]" in tail
    labels = [b["label"] for row in message["components"] for b in row["components"]]
    assert labels == ["Solved", "Close"]
    # Filing answers on the checked message: the outcome above the wiki's answer, which
    # stays; its buttons go.
    done = filed.shown
    assert done["content"].startswith("**Ticket #1 filed**")
    assert "Your post is up" in done["content"]
    assert embed_of(done)["title"] == "Before you file: what the wiki says"
    assert buttons(done) == []
    no_secret_sent(discord_standin.last)


def test_each_quick_answer_comes_in_the_first_response(discord_standin, data):
    """Step 1 saved, the wiki's answer and "filed" are each ready within the bot's
    patience: each is the interaction's first (and only) response, no "thinking…"."""

    async def scenario(ds):
        _, step1, saved = await through_step_1(ds)
        step2 = await ds.press(saved, button_id(saved, "Continue"))
        files = {"log__file": [ds.attachment("server.log", LOG.encode())]}
        answers = {"command": V3_LAUNCH, "layout": "8x RTX PRO 6000, TP8"}
        submitted = await submit_modal_with_files(ds, step2, answers, files=files)
        check = (await submitted.answer()).shown
        filed = await ds.press(check, button_id(check, "File the ticket"))
        await ds.wait_for_request(lambda r: r.route == "create_thread")
        return step1, submitted, filed

    *asked, filed = discord_standin.run(factory(data, discord=PATIENT), scenario)
    for record in asked:
        assert [r.route for r in record.requests] == ["interaction_callback"], record.requests
        assert record.response.callback_type == 4
        assert record.response.message["flags"] & EPHEMERAL
    assert [r.route for r in filed.requests] == ["interaction_callback"], filed.requests
    assert filed.response.callback_type == 7, "the checked message is updated in place"


def test_a_whole_flow_makes_seven_requests_to_discord_and_no_more(discord_standin, data):
    """/support, step 1, Continue, step 2 with a log, File: one response to each of the
    five interactions, the log's download and the post. Each request costs the bot a
    millisecond or two of its event loop; a new one here is a choice, not an accident."""

    async def scenario(ds):
        since = len(ds.requests)
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        filed = await ds.press(check, button_id(check, "File the ticket"))
        await filed.answer()
        await ds.settle()
        return collections.Counter(r.route for r in ds.requests[since:])

    routes = discord_standin.run(factory(data, discord=PATIENT), scenario)
    assert routes == {"interaction_callback": 5, "cdn": 1, "create_thread": 1}, routes


def test_each_slow_answer_replaces_its_private_thinking_message(discord_standin, data, monkeypatch):
    """Step 1's save, the triage and the filing each held until the submit or press was
    acknowledged: a private "thinking..." first, then the answer edits it (one request,
    nothing deleted and resent)."""
    gates = {name: Gate() for name in ("save", "check_draft", "file")}
    for name, gate in gates.items():
        monkeypatch.setattr(SupportDesk, name, gate.hold(getattr(SupportDesk, name)))

    async def scenario(ds):
        try:
            opened = await ds.slash("support")
            step1 = await ds.submit_modal(opened, STEP1)  # returns at the acknowledgement
            gates["save"].open()
            saved = (await step1.answer()).shown
            step2 = await ds.press(saved, button_id(saved, "Continue"))
            files = {"log__file": [ds.attachment("server.log", LOG.encode())]}
            answers = {"command": V3_LAUNCH, "layout": "8x RTX PRO 6000, TP8"}
            submitted = await submit_modal_with_files(ds, step2, answers, files=files)
            gates["check_draft"].open()
            check = (await submitted.answer()).shown
            filed = await ds.press(check, button_id(check, "File the ticket"))
            gates["file"].open()
            told = (await filed.answer()).shown
            await ds.wait_for_request(lambda r: r.route == "create_thread")
        finally:
            for gate in gates.values():
                gate.open()
        return (step1, submitted, filed), (saved, check, told)

    records, shown = discord_standin.run(factory(data, discord=IMPATIENT), scenario)
    for record in records:
        requests = [(r.route, r.method, r.path.rsplit("/", 1)[-1]) for r in record.requests]
        assert requests[1:] == [("webhook_message", "PATCH", "@original")], requests
        if record is records[-1]:  # File: a silent acknowledgement, then its message edited
            assert record.response.callback_type == 6
            continue
        assert record.response.callback_type == 5
        assert record.response.json["data"]["flags"] & EPHEMERAL
    saved, check, told = shown
    assert "Step 1 of 2 saved" in embed_of(saved)["title"]
    assert embed_of(check)["title"] == "Before you file: what the wiki says"
    assert told["content"].startswith("**Ticket #1 filed**")


def test_no_copy_of_the_forms_and_buttons_sent_is_kept_in_memory(discord_standin, data):
    """Every button the bot sends is a dynamic item found again from its custom_id, and
    modal submits are read from theirs: discord.py keeps no per-message view, modal or
    15-minute timeout task for them (they would pile up with every answer)."""

    async def scenario(ds):
        searched = await ds.slash("search", query="nccl")
        await searched.answer()
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        assert buttons(request.json["message"]), "the post has its buttons"
        store = ds.client._connection._view_store
        timeouts = [t for t in asyncio.all_tasks() if "__timeout_task_impl" in repr(t.get_coro())]
        return store._views, store._synced_message_views, store._modals, timeouts

    views, synced, modals, timeouts = discord_standin.run(factory(data), scenario)
    assert views == {} and synced == {} and modals == {}
    assert timeouts == []


@pytest.mark.parametrize("runner", ["in_filing", "in_thread_storing"])
def test_work_under_way_finishes_before_the_store_closes_at_shutdown(discord_standin, data, runner):
    """The bot stopping (its cog unloaded) while a filing runs in the filing thread, or a
    form's last step is saved and checked in one trip to the knowledge threads: the
    work's store writes still succeed, and the store is closed after it."""

    async def scenario(ds):
        cog = ds.client.get_cog("SupportCog")
        desk = await cog.desk()
        started, release = threading.Event(), threading.Event()

        def slow_work() -> int:
            started.set()
            release.wait(30)
            return desk.store.count_tickets(status="open")

        loop = asyncio.get_running_loop()
        work = asyncio.ensure_future(getattr(cog, runner)(slow_work))
        await loop.run_in_executor(None, started.wait, 30)
        unloading = asyncio.ensure_future(ds.client.remove_cog("SupportCog"))
        await asyncio.sleep(0.1)  # the unload runs meanwhile, up to its wait for the work
        assert not unloading.done()
        release.set()
        await unloading
        return await work, cog.store

    counted, store = discord_standin.run(factory(data), scenario)
    assert counted == 0
    with pytest.raises(sqlite3.ProgrammingError):
        store.count_tickets(status="open")  # closed once the work was done


def test_no_trip_that_writes_to_the_store_starts_once_the_cog_unloads(discord_standin, data):
    """The stop has begun (the unload waits for a filing under way): a form's last step
    arriving now is refused, as the store threads refuse new work, instead of running on
    a store that closes under it."""

    async def scenario(ds):
        cog = ds.client.get_cog("SupportCog")
        desk = await cog.desk()
        started, release = threading.Event(), threading.Event()
        ran: list[str] = []

        def slow_filing() -> int:
            started.set()
            release.wait(30)
            return desk.store.count_tickets(status="open")

        loop = asyncio.get_running_loop()
        filing = asyncio.ensure_future(cog.in_filing(slow_filing))
        await loop.run_in_executor(None, started.wait, 30)
        unloading = asyncio.ensure_future(ds.client.remove_cog("SupportCog"))
        await asyncio.sleep(0.1)  # the unload runs, up to its wait for the filing
        try:
            with pytest.raises(RuntimeError):
                await cog.in_thread_storing(ran.append, "late step")
        finally:
            release.set()
            await unloading
            await filing
        return ran

    assert discord_standin.run(factory(data), scenario) == []


def test_the_last_step_is_saved_and_checked_in_one_trip_to_a_thread(
    discord_standin, data, monkeypatch
):
    """Step 2's submit: its save and the wiki's check go to the knowledge threads once
    (each trip wakes a thread and the event loop); step 1 is saved in the store threads."""
    trips: list[str] = []
    original = WikiBot.submit

    def counted(self: WikiBot, func: Any, /, *args: Any, **kwargs: Any) -> Any:
        trips.append(getattr(func, "__name__", repr(func)))
        return original(self, func, *args, **kwargs)

    monkeypatch.setattr(WikiBot, "submit", counted)

    async def scenario(ds):
        cog = ds.client.get_cog("SupportCog")
        await cog.desk()
        stored = 0
        original_in_store = cog.in_store

        async def in_store(func: Any, /, *args: Any, **kwargs: Any) -> Any:
            nonlocal stored
            stored += getattr(func, "__name__", "") == "save"
            return await original_in_store(func, *args, **kwargs)

        cog.in_store = in_store
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        return stored, embed_of(check)

    stored, embed = discord_standin.run(factory(data), scenario)
    assert trips == ["_saved_and_checked_now"] and stored == 1
    assert embed["title"], "the wiki's answer came from that trip"


def test_edit_opens_the_form_again_with_the_answers_filled_in(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        edit = await ds.press(check, button_id(check, "Edit"))
        return edit.response

    response = discord_standin.run(factory(data), scenario)
    assert response.callback_type == 9, "a modal"
    modal = response.json["data"]
    assert modal["title"] == "Support request (1/2)"
    assert inputs(modal)["text"]["value"] == STEP1["text"]
    assert inputs(modal)["expected"]["value"] == STEP1["expected"]
    assert not discord_standin.last.requests_to("create_thread")


def test_this_solved_it_records_a_deflection_and_posts_nothing(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        solved = await ds.press(check, button_id(check, "This solved it"))
        return solved.response

    response = discord_standin.run(factory(data), scenario)
    assert response.callback_type == 7, "the private answer is updated in place"
    assert embed_of(response.message)["title"] == "Glad the wiki had it"
    assert not discord_standin.last.requests_to("create_thread")
    store = SqliteTicketStore.in_folder(data)
    try:
        assert store.list_tickets() == []
        events = store._db.execute("SELECT kind FROM ticket_events").fetchall()
        assert [e[0] for e in events] == ["deflected"]
    finally:
        store.close()


def test_pressing_file_twice_makes_one_post(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        file = button_id(check, "File the ticket")
        first = await ds.press(check, file, wait=False)  # a double click: both presses
        second = await ds.press(check, file, wait=False)  # leave before either is answered
        return (await first.answer()).json, (await second.answer()).json

    # Each answer's text: in its callback (type 7), or in the edit after a deferral.
    answers = [m.get("data", m)["content"] for m in discord_standin.run(factory(data), scenario)]
    assert len(discord_standin.last.requests_to("create_thread")) == 1
    # The two presses race; whichever is handled first files, the other is told.
    filed = [e for e in answers if "Your post is up" in e]
    told = [e for e in answers if "filed already as ticket #1" in e]
    assert len(filed) == 1 and len(told) == 1


def test_a_fresh_filing_posts_without_reading_the_forums_earlier_posts(discord_standin, data):
    """Only a retry looks for a post made before (the crash tests below); a filing that
    was just recorded posts at once, whatever the forum already holds: the look reads
    every recent post's starter message, seconds of requests under twenty filings."""

    async def scenario(ds):
        for _ in range(2):
            _, _, saved = await through_step_1(ds)
            _, check = await through_step_2(ds, saved)
            filed = await ds.press(check, button_id(check, "File the ticket"))
            await filed.answer()

    discord_standin.run(factory(data), scenario)
    ds = discord_standin.last
    assert len(ds.requests_to("create_thread")) == 2
    assert not ds.requests_to("active_threads"), "the forum was searched before a fresh post"
    assert not [r for r in ds.requests_to("message") if r.method == "GET"]


def test_unknown_model_is_answered_with_the_known_families(discord_standin, data):
    async def scenario(ds):
        return (await ds.slash("support", model="zebra-9000")).response

    response = discord_standin.run(factory(data), scenario)
    assert response.callback_type == 4 and response.message["flags"] & EPHEMERAL
    assert "GLM-5" in embed_of(response.message)["description"]


def test_whitespace_only_story_is_refused_with_an_edit_button(discord_standin, data):
    async def scenario(ds):
        opened = await ds.slash("support")
        submitted = await ds.submit_modal(opened, {**STEP1, "text": "   "})
        saved = (await submitted.answer()).shown
        _, check = await through_step_2(ds, saved)
        return check

    check = discord_standin.run(factory(data), scenario)
    assert embed_of(check)["title"] == "A little more is needed"
    assert [b["label"] for b in buttons(check)] == ["Edit"]


def test_a_binary_upload_is_refused_and_the_rest_kept(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved, log=b"\x1f\x8b\x08\x00" + bytes(range(256)) * 8)
        return check

    check = discord_standin.run(factory(data), scenario)
    fields = {f["name"]: f["value"] for f in embed_of(check)["fields"]}
    assert "not text" in fields["Please note"]
    assert "Suggested pages" in fields


# --- faults posting -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("permission", "gives the bot Create Posts there"),
        ("server", "Discord had a problem"),
        ("deleted", "channel is gone"),
    ],
)
def test_a_failed_post_stays_pending_and_is_retried(discord_standin, data, fault, said):
    async def scenario(ds):
        if fault == "permission":
            fail(ds, "create_thread", status=403, code=50013, message="Missing Permissions")
        elif fault == "server":
            fail(ds, "create_thread", status=503, code=0, message="Service Unavailable")
        else:  # deleted on Discord; the bot's cache has not heard yet
            forum = ds.guild.channel(DEFAULT_IDS.forum)
            ds.guild.channels.remove(forum)
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        filed = await ds.press(check, button_id(check, "File the ticket"))
        told = (await filed.answer()).shown
        if fault == "deleted":  # an admin restores it; the retry posts
            ds.guild.channels.append(forum)
        store = SqliteTicketStore.in_folder(data)
        try:
            store._db.execute("UPDATE tickets SET next_attempt_at = 0")  # due now
        finally:
            store.close()
        posted = await ds.wait_for_request(
            lambda r: r.route == "create_thread" and r.status == 200, timeout=10
        )
        return told, posted

    told, posted = discord_standin.run(factory(data), scenario)
    assert "saved, not posted yet" in told["content"].splitlines()[0]
    assert said in told["content"]
    assert posted.json["name"] == STEP1["text"]
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.post_state == "posted" and ticket.post_attempts >= 1
    finally:
        store.close()


def test_ten_tickets_a_minute_are_refused_plainly(discord_standin, data):
    async def scenario(ds):
        told = []
        for _ in range(4):
            _, _, saved = await through_step_1(ds)
            _, check = await through_step_2(ds, saved)
            filed = await ds.press(check, button_id(check, "File the ticket"))
            told.append((await filed.answer()).shown)
        return told

    told = discord_standin.run(factory(data, rate_count=3, rate_minutes=10), scenario)
    assert len(discord_standin.last.requests_to("create_thread")) == 3
    assert "Please wait" in embed_of(told[-1])["description"]


# --- the lifecycle ------------------------------------------------------------------------


def test_solved_close_reopen_by_asker_and_staff_not_by_others(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(request.response["id"])
        starter = ds.messages[thread_id]
        stranger = await ds.press(starter, "wikibot:tk:close:1", user_id=DEFAULT_IDS.newbie)
        solved = await ds.press(starter, "wikibot:tk:solved:1")
        await ds.wait_for_request(lambda r: r.route == "channel" and r.method == "PATCH")
        reopen = await ds.press(
            ds.messages[thread_id], "wikibot:tk:reopen:1", user_id=DEFAULT_IDS.mod
        )
        return stranger.response, solved.response, reopen.response, ds.threads[thread_id]

    stranger, solved, _, thread = discord_standin.run(factory(data), scenario)
    assert stranger.message["flags"] & EPHEMERAL
    assert "Only the person who asked" in embed_of(stranger.message)["description"]
    assert solved.callback_type == 7
    assert thread["thread_metadata"]["archived"] is False, "reopened by staff"
    assert str(DEFAULT_IDS.tag_open) in thread["applied_tags"]
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.status == "open"
        assert [(e.kind, e.actor) for e in ticket.events][-2:] == [
            ("solved", f"discord:{DEFAULT_IDS.alice}"),
            ("reopened", f"discord:{DEFAULT_IDS.mod}"),
        ]
    finally:
        store.close()


def test_staff_list_and_show_tickets_and_others_are_refused(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        await ds.wait_for_request(lambda r: r.route == "create_thread")
        listed = await ds.slash("ticket list", user_id=DEFAULT_IDS.mod, status="open")
        shown = await ds.slash("ticket show", user_id=DEFAULT_IDS.mod, id=1)
        refused = await ds.slash("ticket list", user_id=DEFAULT_IDS.alice)
        typed = await ds.slash("ticket list", user_id=DEFAULT_IDS.mod, family="GLM 5")
        unknown = await ds.slash("ticket list", user_id=DEFAULT_IDS.mod, family="zzqx-9")
        return (
            listed.response.message,
            shown.response.message,
            refused.response.message,
            typed.response.message,
            unknown.response.message,
        )

    listed, shown, refused, typed, unknown = discord_standin.run(factory(data), scenario)
    assert "#1 · open · glm-5" in embed_of(listed)["description"]
    # A family typed by its name (not picked from the list) finds its tickets; an
    # unknown one is said so, with the families known, rather than "no tickets match".
    assert "#1 · open · glm-5" in embed_of(typed)["description"]
    assert embed_of(unknown)["description"].startswith("I do not know the model zzqx\\-9.")
    assert embed_of(shown)["title"] == escape_markdown(STEP1["text"])  # shown as typed
    assert "support staff" in embed_of(refused)["description"]


# --- restarts -----------------------------------------------------------------------------


def test_a_restart_mid_draft_offers_the_draft_again(discord_standin, data):
    async def first(ds):
        await through_step_1(ds)

    async def second(ds):
        offer = await ds.slash("support")
        message = offer.original
        step2 = await ds.press(message, button_id(message, "Continue your draft"))
        return message, step2.response.json["data"]

    discord_standin.run(factory(data), first)
    offer, modal = discord_standin.run(factory(data), second)
    assert embed_of(offer)["title"] == "You have a draft"
    assert modal["title"] == "Support request (2/2)"


def test_a_restart_with_an_open_ticket_keeps_its_buttons_working(discord_standin, data):
    saved: dict[str, Any] = {}

    async def first(ds):
        _, _, step = await through_step_1(ds)
        _, check = await through_step_2(ds, step)
        await ds.press(check, button_id(check, "File the ticket"))
        request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(request.response["id"])
        saved["thread"] = copy.deepcopy(ds.threads[thread_id])
        saved["message"] = copy.deepcopy(ds.messages[thread_id])

    async def second(ds):
        thread = saved["thread"]
        ds.threads[int(thread["id"])] = thread
        closed = await ds.press(saved["message"], "wikibot:tk:close:1")
        await ds.wait_for_request(lambda r: r.route == "channel" and r.method == "PATCH")
        await asyncio.sleep(0)
        return closed.response, ds.threads[int(thread["id"])]

    discord_standin.run(factory(data), first)
    closed, thread = discord_standin.run(factory(data), second)
    assert closed.callback_type == 7
    assert [b["label"] for b in buttons(closed.message)] == ["Reopen"]
    assert thread["thread_metadata"]["archived"] and thread["thread_metadata"]["locked"]


def _as_killed_before_recording(data: Path, *, thread_id: int | None) -> None:
    """The database as ``kill -9`` right after "File the ticket" leaves it: the ticket
    pending with its post begun (``post_started_at`` was written before the request
    left), no thread recorded, due now. ``thread_id``: the post Discord made, if any."""
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.post_started_at is not None, "the intent is recorded before posting"
        if thread_id is not None:
            assert ticket.thread_id == thread_id and ticket.post_state == "posted"
        store._db.execute(
            "UPDATE tickets SET post_state = 'pending', thread_id = NULL, next_attempt_at = 0"
        )
    finally:
        store.close()


async def _until_posted(data: Path, *, patience: float = 60.0) -> Any:
    """Ticket 1 once it is posted. ``patience`` is generous (a loaded machine starts the
    bot and its retry loop slowly); a retry that never posts still fails the test."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + patience
    while loop.time() < give_up:
        store = SqliteTicketStore.in_folder(data)
        try:
            ticket = store.get_ticket(1)
        finally:
            store.close()
        if ticket.post_state == "posted":
            return ticket
        await asyncio.sleep(0.025)
    raise AssertionError(f"the pending ticket was never posted nor found in {patience:.0f} s")


def _file_and_keep_the_post(data: Path, made: dict[str, Any]):
    """A scenario that files a ticket, waits for its post and keeps a copy of the post
    (thread and first message) in ``made``, to put back after a simulated crash."""

    async def first(ds):
        _, _, step = await through_step_1(ds)
        _, check = await through_step_2(ds, step)
        await ds.press(check, button_id(check, "File the ticket"))
        request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(request.response["id"])
        await _until_posted(data)
        made["id"] = thread_id
        made["thread"] = copy.deepcopy(ds.threads[thread_id])
        made["message"] = copy.deepcopy(ds.messages[thread_id])

    return first


def test_a_crash_between_the_post_and_its_record_finds_the_post_instead_of_posting_again(
    discord_standin, data
):
    made: dict[str, Any] = {}

    async def after_restart(ds):  # Discord still has the post; the bot's store does not
        ds.threads[made["id"]] = made["thread"]
        ds.messages[made["id"]] = made["message"]
        return await _until_posted(data)

    discord_standin.run(factory(data), _file_and_keep_the_post(data, made))
    _as_killed_before_recording(data, thread_id=made["id"])
    ticket = discord_standin.run(factory(data), after_restart)
    assert ticket.thread_id == made["id"], "the post made before the crash is recorded"
    assert discord_standin.last.requests_to("active_threads"), "it was looked for"
    assert not discord_standin.last.requests_to("create_thread"), "and not made again"
    assert [e.kind for e in ticket.events].count("posted") == 2


def test_a_post_archived_before_the_retry_is_found_among_the_forums_archived_posts(
    discord_standin, data
):
    """As above, but the post was archived meanwhile (closed by staff, or by Discord
    after inactivity): the guild's active threads no longer list it, the forum's
    archived public threads do."""
    made: dict[str, Any] = {}

    async def after_restart(ds):
        thread = made["thread"]
        thread["thread_metadata"].update(archived=True, archive_timestamp=iso_now())
        ds.threads[made["id"]] = thread
        ds.messages[made["id"]] = made["message"]
        return await _until_posted(data)

    discord_standin.run(factory(data), _file_and_keep_the_post(data, made))
    _as_killed_before_recording(data, thread_id=made["id"])
    ticket = discord_standin.run(factory(data), after_restart)
    ds = discord_standin.last
    assert ticket.thread_id == made["id"], "the archived post is recorded"
    [listed] = ds.requests_to("archived_threads")
    assert listed.path == f"/channels/{DEFAULT_IDS.forum}/threads/archived/public"
    assert [t["id"] for t in listed.response["threads"]] == [str(made["id"])]
    assert not ds.requests_to("create_thread"), "and not made again"


def test_a_crash_before_the_post_left_posts_it_once_on_retry(discord_standin, data):
    async def first(ds):
        fail(ds, "create_thread", status=503, code=0, message="Service Unavailable", times=None)
        _, _, step = await through_step_1(ds)
        _, check = await through_step_2(ds, step)
        await ds.press(check, button_id(check, "File the ticket"))
        await ds.wait_for_request(lambda r: r.route == "create_thread")

    async def after_restart(ds):
        return await _until_posted(data)

    discord_standin.run(factory(data), first)
    _as_killed_before_recording(data, thread_id=None)
    ticket = discord_standin.run(factory(data), after_restart)
    assert discord_standin.last.requests_to("active_threads"), "it looked for an earlier post"
    [made] = discord_standin.last.requests_to("create_thread")
    assert ticket.thread_id == int(made.response["id"])
    assert made.json["message"]["embeds"][0]["footer"]["text"].endswith(f"ref {ticket.draft_id}")


# --- more faults --------------------------------------------------------------------------


def _guild_with_forum(**changes: Any):
    import dataclasses

    from tests.discord_standin import default_guild

    guild = default_guild()
    guild.channels[:] = [
        dataclasses.replace(c, **changes) if c.id == DEFAULT_IDS.forum else c
        for c in guild.channels
    ]
    return guild


def test_without_create_posts_the_asker_gets_one_sentence_and_admins_see_why(discord_standin, data):
    send_messages = 1 << 11
    denied = ((DEFAULT_IDS.role_bot, 0, 0, send_messages),)
    discord_standin.config.guild = _guild_with_forum(overwrites=denied)

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        filed = await ds.press(check, button_id(check, "File the ticket"))
        told = (await filed.answer()).shown
        status = (await ds.slash("wiki status", user_id=DEFAULT_IDS.mod)).response.message
        return told, status

    told, status = discord_standin.run(factory(data), scenario)
    refused = discord_standin.last.requests_to("create_thread")
    assert refused and all(r.error_code == 50013 for r in refused), "Discord refused, 50013"
    said = told["content"].split("\n", 1)[1]  # under the title line
    assert "Create Posts" in said and "#1" in said
    assert len(re.findall(r"[.!?](\s|$)", said)) == 1, f"one sentence: {said!r}"
    assert told["flags"] & EPHEMERAL
    fields = {f["name"]: f["value"] for f in embed_of(status)["fields"]}
    assert "1 waiting to be posted" in fields["Support tickets"]
    assert "50013" in fields["Support tickets"] and "send_messages" in fields["Support tickets"]
    store = SqliteTicketStore.in_folder(data)
    try:
        ticket = store.get_ticket(1)
        assert ticket.post_state == "pending", "the request is kept, to be posted later"
        assert ticket.values["text"] == STEP1["text"] and ticket.values["command"]
    finally:
        store.close()
    assert any("missing send_messages" in r.getMessage() for r in discord_standin.last.log_records)


def test_closing_without_manage_threads_says_why_the_post_did_not_follow(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        request = await ds.wait_for_request(lambda r: r.route == "create_thread")
        thread_id = int(request.response["id"])
        fail(ds, "channel", method="PATCH", status=403, code=50013, message="Missing Permissions")
        closed = await ds.press(ds.messages[thread_id], "wikibot:tk:close:1")
        public = (await closed.followup()).response
        private = (await closed.followup()).response
        return closed.response, public, private, ds.threads[thread_id]

    closed, public, private, thread = discord_standin.run(factory(data), scenario)
    assert closed.callback_type == 7 and [b["label"] for b in buttons(closed.message)] == ["Reopen"]
    assert "Marked closed" in public["content"]
    assert private["flags"] & EPHEMERAL
    assert "Manage Posts" in private["content"] and "closed" in private["content"]
    assert thread["thread_metadata"]["archived"] is False, "Discord refused the edit"
    store = SqliteTicketStore.in_folder(data)
    try:
        assert store.get_ticket(1).status == "closed"
    finally:
        store.close()


def test_wiki_status_counts_open_tickets_and_says_where_the_checklist_came_from(
    discord_standin, data, tmp_path
):
    """With the wiki's onboarding page, /wiki status names it; without one, the form is
    the built-in list and /wiki status says so."""
    bare = tmp_path / "wiki"
    shutil.copytree(DEMO, bare)
    pages = [p for p in bare.rglob("*.md") if "onboarding" in p.name.casefold()]
    assert pages, "the demo wiki has an onboarding page"
    for page in pages:
        page.unlink()

    async def scenario(ds):
        before = (await ds.slash("wiki status", user_id=DEFAULT_IDS.mod)).response.message
        opened, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await (await ds.press(check, button_id(check, "File the ticket"))).answer()
        after = (await ds.slash("wiki status", user_id=DEFAULT_IDS.mod)).response.message
        return before, opened, after

    def support_field(message: dict[str, Any]) -> str:
        return {f["name"]: f["value"] for f in embed_of(message)["fields"]}["Support tickets"]

    before, _, after = discord_standin.run(factory(data), scenario)
    assert support_field(before).startswith("0 open")
    assert "checklist: " in support_field(before) and "built-in" not in support_field(before)
    assert support_field(after).startswith("1 open, 0 waiting")
    bare_data = tmp_path / "data-bare"
    before, opened, after = discord_standin.run(factory(bare_data, wiki=bare), scenario)
    assert support_field(before).startswith("0 open")
    assert "checklist: built-in list (the wiki has no onboarding table)" in support_field(before)
    assert support_field(after).startswith("1 open, 0 waiting")
    asked = inputs(opened.response.json["data"])
    assert {"text", "model_page", "image"} <= set(asked), "the built-in list makes the form"


def test_every_forum_permission_is_worded():
    from bot.exts.support._helpers import FORUM_PERMISSIONS, PRIVATE_PERMISSIONS
    from knowledge.templates import load_templates

    t = load_templates("support.yaml")
    for name in FORUM_PERMISSIONS:
        assert t(f"permissions.{name}"), name
    for name in PRIVATE_PERMISSIONS:  # the staff channel of private tickets
        assert t(f"channel_permissions.{name}"), name


@pytest.mark.parametrize("slow", [False, True], ids=["quick", "slow"])
def test_a_step_submitted_after_its_interaction_expired_keeps_the_answers(
    discord_standin, data, monkeypatch, slow
):
    """Quick: the answer is the first response, refused (10062). Slow: the deferral is
    refused while the save is held; the save still finishes, and nothing is sent after."""
    gate, stored = Gate(), threading.Event()
    real_save = SupportDesk.save

    def save(self, *args, **kwargs):
        try:
            return (gate.hold(real_save) if slow else real_save)(self, *args, **kwargs)
        finally:
            stored.set()

    monkeypatch.setattr(SupportDesk, "save", save)

    async def scenario(ds):
        opened = await ds.slash("support")
        ds.config.response_deadline = 0.0  # every answer now comes too late (10062)
        try:
            late = await ds.submit_modal(opened, STEP1, wait=False)
            await ds.wait_for_request(
                lambda r: r.route == "interaction_callback" and r.interaction is not None
                and r.interaction.id == late.id
            )  # fmt: skip
        finally:
            gate.open()
        await asyncio.get_running_loop().run_in_executor(None, stored.wait, 30)
        ds.config.response_deadline = 3.0
        offer = await ds.slash("support")
        message = offer.original
        step2 = await ds.press(message, button_id(message, "Continue your draft"))
        return late, message, step2.response.json["data"]

    config = IMPATIENT if slow else PATIENT
    late, offer, modal = discord_standin.run(factory(data, discord=config), scenario)
    assert [r.error_code for r in late.callbacks] == [10062]
    assert late.callbacks[0].callback_type == (5 if slow else 4)
    assert [r.route for r in late.requests] == ["interaction_callback"], "nothing said after"
    assert embed_of(offer)["title"] == "You have a draft"
    assert modal["title"] == "Support request (2/2)", "step 1 was kept"


@pytest.mark.parametrize("slow", [False, True], ids=["quick", "slow"])
def test_file_pressed_after_its_interaction_expired_still_files_and_posts(
    discord_standin, data, monkeypatch, slow
):
    gate = Gate()
    if slow:
        monkeypatch.setattr(SupportDesk, "file", gate.hold(SupportDesk.file))

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        ds.config.response_deadline = 0.0  # the press is answered too late (10062)
        try:
            late = await ds.press(check, button_id(check, "File the ticket"), wait=False)
            await late.wait_response()
        finally:
            gate.open()
        posted = await ds.wait_for_request(lambda r: r.route == "create_thread")
        await _until_posted(data)
        return late, posted

    config = IMPATIENT if slow else PATIENT
    late, posted = discord_standin.run(factory(data, discord=config), scenario)
    assert [r.error_code for r in late.callbacks] == [10062]
    assert late.callbacks[0].callback_type == (6 if slow else 7)
    assert posted.json["name"] == STEP1["text"] and posted.status == 200
    assert [r.route for r in late.requests] == ["interaction_callback"], "nothing said after"


def test_a_forum_at_the_20_tag_limit_gets_the_post_with_the_tags_it_has(discord_standin, data):
    from tests.discord_standin.payloads import ForumTagSpec

    family = ForumTagSpec(DEFAULT_IDS.tag_open + 99, "glm-5")
    topics = [ForumTagSpec(DEFAULT_IDS.tag_open + 100 + i, f"topic {i}") for i in range(18)]
    tags = (ForumTagSpec(DEFAULT_IDS.tag_open, "open"), family, *topics)
    discord_standin.config.guild = _guild_with_forum(available_tags=tags)

    async def scenario(ds):
        _, _, saved = await through_step_1(ds, model="glm")
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        return await ds.wait_for_request(lambda r: r.route == "create_thread")

    request = discord_standin.run(factory(data), scenario)
    assert request.status == 200
    applied = sorted(request.json["applied_tags"])
    assert applied == sorted([str(DEFAULT_IDS.tag_open), str(DEFAULT_IDS.tag_open + 99)])
    assert not discord_standin.last.requests_to("channel"), "no tag was invented"


def test_the_model_option_autocompletes_families(discord_standin, data):
    async def scenario(ds):
        return (await ds.autocomplete("support", "model", "gl")).choices

    choices = discord_standin.run(factory(data), scenario)
    assert choices and len(choices) <= 25
    assert any(c["value"] == "glm-5" for c in choices)


def test_an_upload_over_the_limit_is_refused_unread_and_the_rest_kept(discord_standin, data):
    big = b"(APIServer pid=1) INFO line\n" * 340_000  # about 9.5 MB: under Discord's 10 MB

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved, log=big)
        return check, ds.requests_to("cdn")

    check, downloads = discord_standin.run(factory(data), scenario)
    fields = {f["name"]: f["value"] for f in embed_of(check)["fields"]}
    assert "at most 8.0 MB is read" in fields["Please note"]
    assert "Suggested pages" in fields, "the rest of the request was checked"
    assert downloads == [], "the file was never downloaded"


def test_a_forum_without_tags_still_gets_the_post(discord_standin, data):
    import dataclasses

    from tests.discord_standin import default_guild

    guild = default_guild()
    guild.channels[:] = [
        dataclasses.replace(c, available_tags=()) if c.id == DEFAULT_IDS.forum else c
        for c in guild.channels
    ]
    discord_standin.config.guild = guild

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "File the ticket"))
        return await ds.wait_for_request(lambda r: r.route == "create_thread")

    request = discord_standin.run(factory(data), scenario)
    assert request.status == 200 and not request.json.get("applied_tags")


def test_a_form_submitted_after_its_draft_expired_says_to_start_again(discord_standin, data):
    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        step2 = await ds.press(saved, button_id(saved, "Continue"))
        store = SqliteTicketStore.in_folder(data)
        try:  # untouched for longer than support.draft_hours
            store._db.execute("UPDATE drafts SET updated_at = updated_at - 2 * 3600")
        finally:
            store.close()
        submitted = await submit_modal_with_files(ds, step2, {"command": V3_LAUNCH}, files={})
        return (await submitted.answer()).shown

    told = discord_standin.run(factory(data, draft_hours=1), scenario)
    assert told["flags"] & EPHEMERAL
    assert "That draft is gone" in embed_of(told)["description"]


def test_the_earlier_steps_of_a_filed_or_solved_request_are_closed(discord_standin, data):
    """Once the request is filed, its step-1 message still shows Continue and a step
    form may still be open: both are refused, naming the ticket, instead of changing a
    draft whose ticket is posted already. Likewise after "This solved it"."""

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        late_form = await ds.press(saved, button_id(saved, "Continue"))  # opened, not sent
        filed = await ds.press(check, button_id(check, "File the ticket"))
        await filed.answer()
        again = await ds.press(saved, button_id(saved, "Continue"))
        pressed = (await again.answer()).shown
        submitted = await submit_modal_with_files(ds, late_form, {"command": "x"}, files={})
        resubmitted = (await submitted.answer()).shown

        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved)
        await ds.press(check, button_id(check, "This solved it"))
        after_solved = await ds.press(saved, button_id(saved, "Continue"))
        return pressed, resubmitted, (await after_solved.answer()).shown, again, after_solved

    pressed, resubmitted, solved, again, after_solved = discord_standin.run(factory(data), scenario)
    for told in (pressed, resubmitted):
        assert told["flags"] & EPHEMERAL
        assert "filed as ticket #1, so its form is closed" in embed_of(told)["description"]
    assert "marked this request as solved" in embed_of(solved)["description"]
    assert again.response.callback_type != 9 and after_solved.response.callback_type != 9
    store = SqliteTicketStore.in_folder(data)
    try:
        assert store.get_ticket(1).values["command"] == V3_LAUNCH.strip(), "kept as filed"
        assert store.get_draft(store.get_ticket(1).draft_id).values["command"] != "x"
    finally:
        store.close()


def test_a_first_form_dismissed_leaves_no_draft_to_continue(discord_standin, data):
    """/support opens the form; closing it unsent stores nothing, so the next /support
    opens a fresh form instead of offering "You have a draft"."""

    async def scenario(ds):
        first = await ds.slash("support", model="glm")  # dismissed: never submitted
        second = await ds.slash("support")
        submitted = await ds.submit_modal(second, STEP1)
        await submitted.answer()
        third = await ds.slash("support")
        return first.response, second.response, third.response

    first, second, third = discord_standin.run(factory(data), scenario)
    assert first.callback_type == 9 and second.callback_type == 9
    assert third.callback_type == 4 and embed_of(third.message)["title"] == "You have a draft"
    store = SqliteTicketStore.in_folder(data)
    try:
        drafts = store._db.execute("SELECT user, step FROM drafts").fetchall()
        assert [tuple(d) for d in drafts] == [(f"discord:{DEFAULT_IDS.alice}", 1)]
    finally:
        store.close()


# --- posts made without /support ----------------------------------------------------------


async def _forum_post(ds, text: str, owner: int = DEFAULT_IDS.alice) -> int:
    """A post alice (or ``owner``) makes in the help forum by hand: the thread, its
    starter message."""
    thread_id = ds.ids.next()
    thread = forum_post_json(
        thread_id,
        owner,
        "vllm will not start",
        guild_id=DEFAULT_IDS.guild,
        forum_id=DEFAULT_IDS.forum,
    )
    ds.threads[thread_id] = thread
    message = ds.make_message(text, channel_id=thread_id)
    del ds.messages[int(message["id"])]
    message["id"] = str(thread_id)
    ds.messages[thread_id] = message
    await ds.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
    return thread_id


def test_a_post_without_support_gets_a_pointer_when_the_nudge_is_off(discord_standin, data):
    async def scenario(ds):
        thread_id = await _forum_post(ds, "my GLM-5 server hangs at startup")
        return await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{thread_id}/messages"
        )

    request = discord_standin.run(factory(data), scenario)
    assert "/support" in request.json["content"] and not request.json.get("embeds")
    assert not discord_standin.last.identify["intents"] & (1 << 15), "no Message Content intent"


def test_the_nudge_answers_with_missing_items_and_opens_support_prefilled(discord_standin, data):
    async def scenario(ds):
        thread_id = await _forum_post(ds, "my GLM-5 server hangs after NCCL init, TP8")
        request = await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{thread_id}/messages"
        )
        nudge = ds.channel_messages(thread_id)[-1]
        opened = await ds.press(nudge, button_id(nudge, "Open /support"))
        return request, opened.response.json["data"], ds.identify

    request, modal, identify = discord_standin.run(factory(data, nudge=True), scenario)
    assert identify["intents"] & (1 << 15), "the nudge needs the Message Content intent"
    fields = {f["name"]: f["value"] for f in request.json["embeds"][0]["fields"]}
    assert "Docker image" in fields["Still missing"] or "image" in fields["Still missing"]
    assert request.json["allowed_mentions"]["parse"] == []
    assert "hangs after NCCL init" in inputs(modal)["text"]["value"]


def test_the_nudge_leaves_the_bots_own_posts_alone(discord_standin, data):
    # the bot's ticket posts are forum posts too: answering them would nudge itself
    async def scenario(ds):
        own = await _forum_post(ds, "Ticket #1 · open · glm-5", owner=DEFAULT_IDS.bot)
        theirs = await _forum_post(ds, "my GLM-5 server hangs after NCCL init, TP8")
        await ds.wait_for_request(
            lambda r: r.route == "channel_message" and r.path == f"/channels/{theirs}/messages"
        )
        await ds.settle()
        return own

    own = discord_standin.run(factory(data, nudge=True), scenario)
    sent = [r.path for r in discord_standin.last.requests if r.route == "channel_message"]
    assert f"/channels/{own}/messages" not in sent


def test_a_long_uploaded_log_is_said_cut_in_the_answer_the_post_and_wiki_status(
    discord_standin, data
):
    """The intake keeps a log's last MAX_LOG_CHARS characters: the check's answer and the
    forum post say which lines those are; /wiki status names the limit."""
    from knowledge.intake.validate import MAX_LOG_CHARS

    lines = [
        f"(APIServer pid=1) INFO 05-15 03:30:49 [x.py:1] loading shard {i}" for i in range(6000)
    ]
    log = "\n".join(lines).encode()
    assert MAX_LOG_CHARS < len(log) < 8 * 1024 * 1024

    async def scenario(ds):
        _, _, saved = await through_step_1(ds)
        _, check = await through_step_2(ds, saved, log=log)
        await (await ds.press(check, button_id(check, "File the ticket"))).answer()
        post = await ds.wait_for_request(lambda r: r.route == "create_thread")
        status = (await ds.slash("wiki status", user_id=DEFAULT_IDS.mod)).response.message
        return check, post, status

    check, post, status = discord_standin.run(factory(data), scenario)
    answer = repr(embed_of(check))
    first = next(i for i, line in enumerate(lines) if f"from line {i + 1:,} on" in answer) + 1
    assert lines[first - 1] in "\n".join(lines)[-MAX_LOG_CHARS - 200 :]
    fields = {f["name"]: f["value"] for f in post.json["message"]["embeds"][0]["fields"]}
    log_field = next(v for v in fields.values() if "log tail" in v)
    assert log_field.startswith(
        f"The log was cut when it was given: only its end is kept, lines {first:,} to"
        f" {len(lines):,}"
    ), log_field
    said = {f["name"]: f["value"] for f in embed_of(status)["fields"]}["Support tickets"]
    assert f"the last {MAX_LOG_CHARS:,} characters kept" in said and "8.0 MB" in said
