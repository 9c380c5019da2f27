"""The support intake without Discord: the form, cleaning, drafts, filing, the store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge.answers import support_check_reply
from knowledge.answers.triage import triage_reply
from knowledge.intake import validate
from knowledge.intake.desk import Filed, IntakeError, IntakeSettings, SupportDesk, Upload
from knowledge.intake.fields import MAX_FIELD_CHARS, MAX_STEP_FIELDS, build_form
from knowledge.intake.records import Draft
from knowledge.intake.sqlite import MIGRATIONS, SqliteTicketStore
from knowledge.intake.store import RateLimit, StoreTooNew
from knowledge.intake.validate import MAX_LOG_CHARS, MAX_UPLOAD_BYTES
from knowledge.service import KnowledgeBase
from knowledge.templates import load_templates
from knowledge.text import escape_markdown
from knowledge.triage.engine import TriageContext
from knowledge.triage.onboarding import load_checklist
from knowledge.wiki import find_front_page, load_wiki
from tests.support import DEMO, SNAPSHOT, needs_snapshot

T = load_templates("intake.yaml")
TRIAGE_T = load_templates("triage.yaml")
HF = "hf_" + "Kd8" * 12
GITHUB = "ghp_" + "Wq4e" * 9
LOG_LINE = "(APIServer pid=1) INFO 05-15 03:30:49 [utils.py:306] line {}"
V3_LAUNCH = (
    (DEMO / "models" / "glm5_v3.md").read_text("utf-8").split("```bash\n")[1].split("```")[0]
)


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> TriageContext:
    kb = KnowledgeBase.open(DEMO, tmp_path_factory.mktemp("intake-kb"))
    yield kb.triage_context
    kb.close()


@pytest.fixture
def store(tmp_path) -> SqliteTicketStore:
    s = SqliteTicketStore.in_folder(tmp_path)
    yield s
    s.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def desk(context, store, clock) -> SupportDesk:
    return SupportDesk(context, store, settings=IntakeSettings(rate=RateLimit(3, 600)), clock=clock)


def fill(desk: SupportDesk, user: str = "discord:1", **values: str) -> Draft:
    draft = desk.new_draft(user).draft
    answers = {
        "text": "GLM-5 crashes under load after moving to eight GPUs",
        "actual": "the engine dies",
        "expected": "a running server",
        "command": V3_LAUNCH,
        "layout": "8x RTX PRO 6000, TP8",
        "log": "\n".join(LOG_LINE.format(i) for i in range(150)),
        **values,
    }
    return desk.save(draft.id, user, answers).draft


def db_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("tickets.sqlite3*")))


# --- the form ---------------------------------------------------------------------------


def test_the_form_asks_what_the_onboarding_page_asks_in_two_steps():
    wiki = load_wiki(DEMO)
    form = build_form(load_checklist(wiki, find_front_page(wiki), TRIAGE_T), T)
    assert form.source == "docs/newcomer-onboarding.md#before-you-ask"
    assert form.keys == (
        "text", "actual", "expected", "model_page", "image",
        "command", "layout", "log", "client",
    )  # fmt: skip
    assert [f.key for f in form.step(1)] == ["text", "actual", "expected", "model_page", "image"]
    assert form.steps == 2
    command = form.field("command")
    assert command.max_chars == MAX_FIELD_CHARS and command.paragraph
    # The wiki's own words are the description, cut to Discord's 100 characters.
    assert form.field("log").description.startswith("The last 100-300 lines")
    assert all(len(f.label) <= 45 and len(f.description) <= 100 for f in form.fields)


@needs_snapshot
def test_the_real_wiki_gives_the_same_fields():
    wiki = load_wiki(SNAPSHOT)
    form = build_form(load_checklist(wiki, find_front_page(wiki), TRIAGE_T), T)
    assert form.source and form.source.startswith("docs/newcomer-onboarding.md#")
    assert {"model_page", "image", "command", "layout", "log", "client"} <= set(form.keys)


def test_a_reworded_checklist_with_an_unknown_item_still_makes_a_form(tmp_path):
    (tmp_path / "onboarding.md").write_text(
        "# Onboarding\n\n## Bring\n\n| Required | Why |\n|---|---|\n"
        "| The docker image tag | builds differ |\n| Your power supply rating | brownouts |\n"
        "| Driver version | a |\n| Kernel | b |\n| BIOS | c |\n| Riser cables | d |\n",
        "utf-8",
    )
    wiki = load_wiki(tmp_path)
    form = build_form(load_checklist(wiki, None, TRIAGE_T), T)
    assert form.keys[:4] == ("text", "actual", "expected", "image")
    assert form.field("other_1").label == "Your power supply rating"
    # Never more than a modal holds per step.
    assert all(len(form.step(n)) <= MAX_STEP_FIELDS for n in range(1, form.steps + 1))
    assert form.steps == 2


def test_without_an_onboarding_page_the_built_in_list_makes_the_form(tmp_path):
    (tmp_path / "README.md").write_text("# Wiki\n\nNo checklist here.\n", "utf-8")
    wiki = load_wiki(tmp_path)
    form = build_form(load_checklist(wiki, find_front_page(wiki), TRIAGE_T), T)
    assert form.source is None
    assert {"model_page", "image", "command", "log", "client"} <= set(form.keys)


# --- cleaning what was typed ---------------------------------------------------------------


def test_whitespace_only_required_answers_are_refused(desk):
    draft = desk.new_draft("discord:1").draft
    saved = desk.save(draft.id, "discord:1", {"text": " \n\t ", "image": "   "})
    assert saved.problems == (T("problems.empty", field=T("fields.text.label")),)
    assert "image" not in saved.draft.values
    with pytest.raises(IntakeError) as exc:
        desk.check(draft.id, "discord:1")
    assert exc.value.code == "empty"


def test_a_long_answer_is_cut_and_said_and_a_long_log_keeps_its_end(desk):
    draft = desk.new_draft("discord:1").draft
    long_text = ("word " * 2000).strip()
    log = "\n".join(LOG_LINE.format(i) for i in range(6000))
    saved = desk.save(draft.id, "discord:1", {"text": long_text, "log": log})
    assert len(saved.draft.values["text"]) <= MAX_FIELD_CHARS
    assert saved.draft.values["log"].endswith(LOG_LINE.format(5999))
    assert len(saved.draft.values["log"]) <= MAX_LOG_CHARS
    assert not saved.draft.values["log"].startswith(LOG_LINE.format(0))
    codes = {p.code for p in saved.codes}
    assert codes == {"cut", "log_cut"}
    assert len(saved.problems) == 2


def test_a_long_log_in_one_line_keeps_its_end_from_a_word(desk):
    """A log with no line break in the part kept (one JSON line, a paste that lost its
    breaks) keeps its end from the first whole word in it, not nothing."""
    draft = desk.new_draft("discord:1").draft
    words = [f"step{n}=ok" for n in range(MAX_LOG_CHARS // 5)]
    saved = desk.save(draft.id, "discord:1", {"log": " ".join(words)})
    kept = saved.draft.values["log"]
    assert 0 < len(kept) <= MAX_LOG_CHARS and kept.endswith(words[-1])
    assert kept.split()[0] in words  # a whole word first
    assert [p.code for p in saved.codes] == ["log_cut"]


def test_a_binary_upload_is_refused_and_the_rest_is_kept(desk):
    draft = fill(desk)
    binary = b"\x1f\x8b\x08\x00" + bytes(range(256)) * 40
    saved = desk.save(
        draft.id, "discord:1", {"client": "curl localhost"}, uploads={"log": Upload(binary, 10)}
    )
    assert saved.draft.values["client"] == "curl localhost"
    assert saved.draft.values["log"] == draft.values["log"]  # the pasted log is kept
    assert [p.code for p in saved.codes] == ["upload_binary"]


def test_a_25_mb_upload_is_refused_without_reading_it(desk):
    draft = fill(desk)
    saved = desk.save(draft.id, "discord:1", {}, uploads={"log": Upload(None, 25 * 1024 * 1024)})
    assert [p.code for p in saved.codes] == ["upload_too_big"]
    assert "25.0 MB" in saved.problems[0]
    assert saved.draft.values["text"] == draft.values["text"]


def test_an_uploaded_log_full_of_secrets_is_stored_redacted(desk, tmp_path):
    draft = fill(desk)
    lines = [f"{LOG_LINE.format(i)} HF_TOKEN={HF} auth ghp {GITHUB}" for i in range(300)]
    data = ("\n".join(lines)).encode()
    assert len(data) < MAX_UPLOAD_BYTES
    saved = desk.save(draft.id, "discord:1", {}, uploads={"log": Upload(data, len(data))})
    assert HF not in saved.draft.values["log"] and GITHUB not in saved.draft.values["log"]
    kinds = {(kind, field) for kind, field, _ in saved.draft.redactions}
    assert ("hf-token", "log") in kinds and ("github-token", "log") in kinds
    assert HF.encode() not in db_bytes(tmp_path) and GITHUB.encode() not in db_bytes(tmp_path)


def _counting_scans(monkeypatch) -> list[str]:
    """Every text the redaction's passes are run on, from here on."""
    import knowledge.triage.redact as redact_module

    scanned: list[str] = []
    real = redact_module._redact_counts

    def counting(text, **kwargs):
        scanned.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(redact_module, "_redact_counts", counting)
    return scanned


def test_an_uploaded_log_is_scanned_once_from_upload_to_ticket(desk, monkeypatch):
    scanned = _counting_scans(monkeypatch)
    draft = fill(desk)
    log = "\n".join(LOG_LINE.format(i) for i in range(300)) + "\n"
    data = f"{log}HF_TOKEN={HF}\n".encode()
    desk.save(draft.id, "discord:1", {}, uploads={"log": Upload(data, len(data))})
    stored = desk.draft(draft.id, "discord:1").values["log"]
    assert HF not in stored and stored.endswith("HF_TOKEN=[REDACTED:hf-token]")
    desk.check(draft.id, "discord:1")
    desk.file(draft.id, "discord:1", post=True)
    # the upload as given, then its redacted form once more: the proof it is clean;
    # the draft's save, the check's triage and the ticket's save pass it through
    assert scanned.count(data.decode().strip()) == 1
    assert scanned.count(stored) == 1
    assert not any(HF in text for text in scanned[scanned.index(stored) :])


def test_text_that_only_looks_redacted_is_redacted_all_the_same(desk, tmp_path):
    draft = desk.new_draft("discord:1").draft
    looks = f"[REDACTED:hf-token] then {HF}, and HF_TOKEN=[REDACTED:env-secret] {GITHUB}"
    saved = desk.save(draft.id, "discord:1", {"text": looks, "log": looks})
    for key in ("text", "log"):
        assert HF not in saved.draft.values[key] and GITHUB not in saved.draft.values[key]
    assert not desk.scrubber.known_clean(looks)
    record = Draft(  # built by hand, never through the desk: the store redacts it
        id="f" * 16,
        user="discord:2",
        created_at=1.0,
        updated_at=1.0,
        values={"text": looks, "notes": "[REDACTED:jwt]"},
    )
    desk.store.save_draft(record)
    raw = db_bytes(tmp_path)
    assert HF.encode() not in raw and GITHUB.encode() not in raw


def test_unknown_model_names_are_said_with_the_known_ones(desk):
    saved = desk.new_draft("discord:1", model="zebra-9000")
    assert "model_page" not in saved.draft.values
    assert saved.problems and "zebra" in saved.problems[0]
    assert "GLM" in saved.problems[0]
    known = desk.new_draft("discord:2", model="glm")
    assert known.draft.values["model_page"] == "glm-5" and not known.problems


# --- drafts -------------------------------------------------------------------------------


def test_a_draft_survives_a_new_desk_and_expires(context, tmp_path, clock):
    first = SupportDesk(context, SqliteTicketStore.in_folder(tmp_path), clock=clock)
    draft = first.new_draft("discord:1").draft
    first.save(draft.id, "discord:1", {"text": "half done"})
    first.store.close()
    again = SupportDesk(
        context,
        SqliteTicketStore.in_folder(tmp_path),
        settings=IntakeSettings(draft_ttl=3600),
        clock=clock,
    )
    resumed = again.resumable("discord:1")
    assert resumed is not None and resumed.id == draft.id
    assert resumed.values == {"text": "half done"} and resumed.step == 1
    assert again.resumable("discord:2") is None
    clock.now += 3601
    assert again.resumable("discord:1") is None
    with pytest.raises(IntakeError):
        again.save(draft.id, "discord:1", {"text": "late"})
    again.store.close()


def test_someone_elses_draft_cannot_be_touched(desk):
    draft = fill(desk)
    with pytest.raises(IntakeError) as exc:
        desk.save(draft.id, "discord:2", {"text": "mine now"})
    assert exc.value.code == "not_yours"
    with pytest.raises(IntakeError):
        desk.file(draft.id, "discord:2", post=True)


# --- checking and filing --------------------------------------------------------------------


def test_the_check_shows_redactions_suggestions_and_missing_items(desk):
    command = V3_LAUNCH.replace("-e NCCL_GRAPH_FILE=/etc/nccl/graph.xml", f"-e HF_TOKEN={HF}")
    draft = fill(desk, command=command)
    checked, result = desk.check(draft.id, "discord:1")
    reply = support_check_reply(
        result, checked.redactions, desk.context.templates, T, draft_id=checked.id
    )
    assert reply.title == T("deflection.title") and reply.footer == T("deflection.footer")
    # The shared triage reply: the same sections, worded by templates/triage.yaml.
    shared = triage_reply(result, TRIAGE_T)
    names = [f.name for f in reply.fields]
    assert names[1:] == [f.name for f in shared.fields]
    assert names[0] == TRIAGE_T("sections.redactions"), "the draft's redactions come first"
    redactions = reply.fields[0].value.replace("\\", "")  # Markdown-escaped
    assert "hf-token" in redactions and "command" in redactions and HF not in redactions
    assert reply.pages == shared.pages and result.suggestions
    checklist = reply.fields[names.index(TRIAGE_T("sections.completeness"))].value
    client = next(ln for ln in checklist.splitlines() if "client" in ln.casefold())
    assert client.startswith("- [missing]")  # no client command was given
    assert reply.ephemeral and reply.meta["draft"] == checked.id


def test_deflection_is_recorded_and_files_nothing(desk, store):
    draft = fill(desk)
    desk.deflect(draft.id, "discord:1")
    assert store.get_draft(draft.id).state == "deflected"
    assert [e.kind for e in store.draft_events(draft.id)] == ["deflected"]
    assert store.list_tickets() == []
    assert desk.resumable("discord:1") is None


def test_filing_twice_makes_one_ticket(desk, store):
    draft = fill(desk)
    first = desk.file(draft.id, "discord:1", post=True)
    second = desk.file(draft.id, "discord:1", post=True)
    assert first.created and not second.created
    assert first.ticket.id == second.ticket.id
    assert len(store.list_tickets()) == 1
    ticket = store.get_ticket(first.ticket.id)
    assert ticket.family == "glm-5" and ticket.status == "open" and ticket.post_state == "pending"
    assert ticket.title.startswith("GLM-5 crashes under load")
    assert [(e.kind, e.actor) for e in ticket.events] == [("created", "discord:1")]


def test_the_store_counts_tickets_by_status_family_and_user_without_a_cap(desk, store):
    for user in ("discord:1", "discord:1", "discord:2"):
        desk.file(fill(desk, user=user).id, user, post=False)
    desk.set_status(1, "solved", actor="discord:1", staff=False)
    assert store.count_tickets() == 3
    assert store.count_tickets(status="open") == 2
    assert store.count_tickets(status="open", user="discord:1") == 1
    assert store.count_tickets(family="glm-5") == 3 and store.count_tickets(family="x") == 0
    # Far more open tickets than anything loads at once (/wiki status used to load 10,000).
    cursor = store._db.execute("SELECT * FROM tickets WHERE id = 2")
    row = cursor.fetchone()
    columns = [d[0] for d in cursor.description if d[0] != "id"]
    copies = [
        tuple(f"bulk-{n}" if c == "draft_id" else row[c] for c in columns) for n in range(10_050)
    ]
    marks = ", ".join("?" for _ in columns)
    with store._write() as db:  # one transaction
        db.executemany(f"INSERT INTO tickets ({', '.join(columns)}) VALUES ({marks})", copies)
    assert store.count_tickets(status="open") == 10_052


def test_filing_after_the_check_files_what_it_showed_without_a_second_triage(desk, clock):
    runs = []
    triage = desk.triage
    desk.triage = lambda draft: runs.append(draft.id) or triage(draft)
    checked = fill(desk)
    _, result = desk.check(checked.id, "discord:1")
    ticket = desk.file(checked.id, "discord:1", post=True).ticket
    assert runs == [checked.id], "the check's triage was reused"
    assert [s["page"] for s in ticket.triage["suggestions"]] == [s.page for s in result.suggestions]
    edited = fill(desk)
    desk.check(edited.id, "discord:1")
    clock.now += 1
    desk.save(edited.id, "discord:1", {"client": "curl localhost:8000/v1/models"})
    desk.file(edited.id, "discord:1", post=True)
    assert runs == [checked.id, edited.id, edited.id], "an edit after the check is triaged again"


def test_a_user_filing_ten_a_minute_is_told_to_wait(desk, clock):
    filed = []
    refused = []
    for _ in range(10):
        draft = fill(desk)
        try:
            filed.append(desk.file(draft.id, "discord:1", post=False))
        except IntakeError as exc:
            refused.append(exc)
        clock.now += 6
    assert len(filed) == 3 and len(refused) == 7
    assert refused[0].code == "rate_limited"
    assert "3 tickets in the last 10 min" in str(refused[0])
    assert refused[0].retry_after > 0
    # Someone else is not affected.
    assert desk.file(fill(desk, user="discord:2").id, "discord:2", post=False).created
    clock.now += 600
    assert desk.file(fill(desk).id, "discord:1", post=False).created


def test_lifecycle_by_asker_and_staff_with_events(desk, store, clock):
    ticket = desk.file(fill(desk).id, "discord:1", post=False).ticket
    with pytest.raises(IntakeError) as exc:
        desk.set_status(ticket.id, "closed", actor="discord:9", staff=False)
    assert exc.value.code == "not_allowed"
    clock.now += 10
    desk.set_status(ticket.id, "solved", actor="discord:1", staff=False)
    clock.now += 10
    desk.set_status(ticket.id, "open", actor="discord:7", staff=True)
    clock.now += 10
    done = desk.set_status(ticket.id, "closed", actor="discord:7", staff=True)
    with pytest.raises(IntakeError):
        desk.set_status(ticket.id, "closed", actor="discord:7", staff=True)
    assert done.status == "closed"
    events = [(e.kind, e.actor) for e in done.events]
    assert events == [
        ("created", "discord:1"),
        ("solved", "discord:1"),
        ("reopened", "discord:7"),
        ("closed", "discord:7"),
    ]
    assert [e.at for e in done.events] == sorted(e.at for e in done.events)


def test_a_failed_post_stays_pending_and_is_retried_with_backoff(desk, store, clock):
    ticket = desk.file(fill(desk).id, "discord:1", post=True).ticket
    assert desk.due_posts() == []  # leased to the filer for a while
    clock.now += 61
    due = desk.due_posts()
    assert [t.id for t in due] == [ticket.id]
    assert desk.due_posts() == []  # claimed: no second poster
    failed = desk.post_failed(due[0], "403 Missing Permissions")
    assert failed.post_attempts == 1 and failed.post_error == "403 Missing Permissions"
    assert store.pending_count() == 1
    clock.now += 29
    assert desk.due_posts() == []
    clock.now += 2
    again = desk.due_posts()
    assert [t.id for t in again] == [ticket.id]
    second = desk.post_failed(again[0], "503")
    assert second.next_attempt_at - clock.now == pytest.approx(60)  # doubled
    clock.now += 61
    posted = desk.posted(desk.due_posts()[0].id, 4242)
    assert posted.post_state == "posted" and posted.thread_id == 4242
    assert store.pending_count() == 0
    assert store.ticket_for_thread(4242).id == ticket.id
    kinds = [e.kind for e in posted.events]
    assert kinds == ["created", "post_failed", "post_failed", "posted"]


def test_the_post_fits_discord_and_attaches_the_command_and_log_tail(desk):
    log = "\n".join(LOG_LINE.format(i) for i in range(900))
    ticket = desk.file(fill(desk, log=log, text="x" * 3000).id, "discord:1", post=True).ticket
    post = desk.ticket_post(ticket)
    assert len(post.title) <= 100 and len(post.content) <= 2000
    assert post.reply.total_length() <= 6000
    names = [name for name, _ in post.attachments]
    assert names == [f"ticket-{ticket.id}-launch.txt", f"ticket-{ticket.id}-log-tail.txt"]
    tail = post.attachments[1][1].splitlines()
    assert len(tail) == 300 and tail[-1] == LOG_LINE.format(899)
    assert post.tags == ("glm-5", "open")
    assert "<@" not in post.content and "@everyone" not in post.content


def test_the_posts_embed_title_shows_the_askers_title_as_typed_not_as_markdown(desk):
    """The embed's title renders Markdown; the thread's name does not. A title typed
    with ``*``, ``_`` or backticks shows them in both, not bold or a code span."""
    title = "GLM-5 **dies** at _step 2_ with `--tp 8`"
    ticket = desk.file(fill(desk, text=title).id, "discord:1", post=True).ticket
    post = desk.ticket_post(ticket)
    assert post.title == title  # a thread name is plain text
    assert post.reply.title == escape_markdown(title) != title


# --- the store ------------------------------------------------------------------------------


def test_an_old_database_is_migrated_forward_and_a_newer_one_refused(tmp_path):
    path = tmp_path / "tickets.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute(
        "INSERT INTO drafts VALUES ('d1', 'discord:1', 'open', 1, 1.0, 1.0, "
        '\'{"values": {"text": "kept"}}\')'
    )
    db.commit()
    db.close()
    store = SqliteTicketStore(path)
    assert store.version == len(MIGRATIONS)
    assert store.get_draft("d1").values == {"text": "kept"}
    store.close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreTooNew):
        SqliteTicketStore(path)


def test_the_database_is_in_wal_mode_and_private(store):
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.path.stat().st_mode & 0o077 == 0


def test_tickets_are_flushed_to_disk_and_draft_steps_are_not(desk, store):
    """A ticket (and its status) survives a power loss: its commit runs with
    synchronous=FULL. A draft's steps commit with NORMAL (they survive the process
    being killed) and leave the connection at FULL."""
    commits: list[str] = []
    level = {"value": "FULL"}

    def trace(statement: str) -> None:
        if statement.startswith("PRAGMA synchronous="):
            level["value"] = statement.split("=", 1)[1]
        elif statement == "COMMIT":
            commits.append(level["value"])

    store._db.set_trace_callback(trace)
    draft = fill(desk)
    assert commits and set(commits) == {"NORMAL"}
    commits.clear()
    filed = desk.file(draft.id, "discord:1", post=True)
    assert commits == ["FULL"]
    commits.clear()
    desk.posted(filed.ticket.id, 42)
    desk.set_status(filed.ticket.id, "solved", actor="discord:1", staff=False)
    assert commits == ["NORMAL", "FULL"]
    store._db.set_trace_callback(None)
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


# --- secrets never reach the disk -----------------------------------------------------------

SECRETS = st.one_of(
    st.from_regex(r"hf_[A-Za-z0-9]{34,40}", fullmatch=True),
    st.from_regex(r"ghp_[A-Za-z0-9]{36}", fullmatch=True),
    st.from_regex(r"github_pat_[A-Za-z0-9_]{82}", fullmatch=True),
    st.from_regex(r"AKIA[A-Z0-9]{16}", fullmatch=True),
    st.from_regex(r"[a-zA-Z0-9]{24,40}", fullmatch=True).map(lambda s: "Zx" + s),
)
WRAPPERS = st.sampled_from(
    [
        "{}",
        "HF_TOKEN={}",
        "export MY_API_KEY={}",
        "docker run -e SECRET_KEY={} img",
        "Authorization: Bearer {}",
        '{{"token": "{}"}}',
        "--api-key {}",
        "https://user:{}@example.org/x",
    ]
)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
FIELDS = ("text", "actual", "expected", "model_page", "image", "command", "layout")


def _wrapped(secret: str, wrapper: str) -> bool:
    """Bare random strings are not secrets by their shape; only wrapped ones are."""
    return not (secret.startswith("Zx") and wrapper == "{}")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(st.tuples(SECRETS, WRAPPERS).filter(lambda p: _wrapped(*p)), min_size=12, max_size=12),
    TEXT,
    st.integers(min_value=0, max_value=400),
)
def test_secrets_in_every_field_and_log_never_reach_the_database_file(
    context, tmp_path_factory, pairs, noise, log_lines
):
    folder = tmp_path_factory.mktemp("secrets")
    store = SqliteTicketStore.in_folder(folder)
    desk = SupportDesk(context, store, settings=IntakeSettings(rate=RateLimit(0, 1)))
    try:
        keys = [*FIELDS, "client"]
        secrets = [wrapper.format(secret) for secret, wrapper in pairs]
        values = {key: f"{noise}\n{secrets[i]}\n{noise}" for i, key in enumerate(keys)}
        values["text"] = "my server fails\n" + values["text"]
        log = [LOG_LINE.format(i) for i in range(log_lines)]
        log.insert(len(log) // 2, secrets[-3])
        log.append(secrets[-2])
        upload = "\n".join([*log, secrets[-1]]).encode()
        draft = desk.new_draft("discord:1").draft
        desk.save(draft.id, "discord:1", values)
        desk.save(draft.id, "discord:1", {"log": "\n".join(log)})
        desk.save(draft.id, "discord:1", {}, uploads={"log": Upload(upload, len(upload))})
        filed = desk.file(draft.id, "discord:1", post=True)
        desk.post_failed(filed.ticket, f"error quoting {secrets[0]}")
        desk.set_status(filed.ticket.id, "closed", actor="discord:1", staff=False)
        raw = db_bytes(folder)
        for secret, _ in pairs:
            assert secret.encode() not in raw
    finally:
        store.close()


# --- durability -----------------------------------------------------------------------------

_FILER = """
import sys
from pathlib import Path
from knowledge.intake.records import Draft
from knowledge.intake.sqlite import SqliteTicketStore
from knowledge.intake.store import RateLimit

store = SqliteTicketStore.in_folder(Path(sys.argv[1]))
n = 0
while True:
    n += 1
    draft = Draft(id=f"d{n}", user="discord:1", created_at=n, updated_at=n,
                  values={"text": f"request {n}", "log": "line\\n" * 300})
    store.save_draft(draft)
    ticket, _ = store.file_ticket(draft, title=f"request {n}", family="glm-5",
                                  triage={}, post=True, at=float(n), limit=RateLimit(0, 1))
    print(ticket.id, draft.id, flush=True)
"""


def test_acknowledged_tickets_survive_kill_9_mid_filing(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from tests.support import ROOT, hang_guard

    child = subprocess.Popen(
        [sys.executable, "-c", _FILER, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    acked: list[tuple[int, str]] = []
    try:
        with hang_guard(120, "the filing child"):
            for line in child.stdout:
                ticket_id, draft_id = line.split()
                acked.append((int(ticket_id), draft_id))
                if len(acked) == 40:
                    break
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    store = SqliteTicketStore.in_folder(tmp_path)
    try:
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for ticket_id, draft_id in acked:
            ticket = store.get_ticket(ticket_id)
            assert ticket is not None and ticket.draft_id == draft_id
            assert ticket.post_state == "pending" and ticket.values["text"].startswith("request")
            assert [e.kind for e in ticket.events] == ["created"]
        # The store keeps working after the crash: no lock or half-written row left.
        ids = [t.id for t in store.list_tickets(limit=10_000)]
        assert ids == sorted(set(ids), reverse=True) and len(ids) >= len(acked)
        draft = Draft(id="after", user="discord:2", created_at=1.0, updated_at=1.0)
        ticket, created = store.file_ticket(
            draft, title="after", family="", triage={}, post=False, at=1.0, limit=RateLimit(0, 1)
        )
        assert created and ticket.id > max(ids)
    finally:
        store.close()


@settings(deadline=None, max_examples=300)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FF), max_size=60))
def test_control_characters_go_alike_from_ascii_and_other_text(text):
    lines = text.replace("\r\n", "\n").replace("\r", "\n")
    assert validate._normalise(text)[0] == validate._CONTROL_RE.sub("", lines)


# --- a log cut by the intake says which part it keeps -------------------------------------


def test_an_uploaded_log_cut_by_the_intake_says_which_part_is_kept_everywhere(desk):
    from knowledge.cli.tickets import _ticket_text

    error = "torch.AcceleratorError: CUDA error: an illegal memory access was encountered"
    lines = [LOG_LINE.format(i) for i in range(1, 8001)] + [error]
    data = ("\n".join(lines) + "\n").encode()
    draft = fill(desk, log="")
    saved = desk.save(draft.id, "discord:1", {}, uploads={"log": Upload(data, len(data))})
    kept = saved.draft.values["log"]
    first = len(lines) - kept.count("\n")  # the number of the first line kept
    assert kept.startswith(LOG_LINE.format(first)) and kept.endswith(error)
    said = T(
        "problems.log_cut",
        field=desk.form.field("log").label,
        limit=MAX_LOG_CHARS,
        first=first,
        lines=len(lines),
    )
    assert saved.problems == (said,)
    # The check's reply says which part was read, its lines numbered as in the upload.
    checked, result = desk.check(draft.id, "discord:1")
    reply = support_check_reply(result, checked.redactions, TRIAGE_T, T, draft_id=draft.id)
    text = reply.to_json()["text"] + "".join(f["value"] for f in reply.to_json()["fields"])
    assert f"from line {first:,} on" in text
    assert result.known_errors and result.known_errors[0].lines[-1].number == len(lines)
    # The forum post and `tickets show` say it too.
    ticket = desk.file(draft.id, "discord:1", post=True).ticket
    cut = T(
        "ticket.log_cut",
        first=first,
        lines=len(lines),
        kept=len(kept),
        total=len("\n".join(lines)),
    )
    label = desk.form.field("log").label
    log_field = next(f for f in desk.ticket_post(ticket).reply.fields if f.name == label)
    assert log_field.value.startswith(cut), log_field.value
    assert cut in _ticket_text(ticket, T)
    # A later log that fits is whole again: nothing is said about parts.
    draft = fill(desk, user="discord:2")
    assert desk.ticket_post(desk.file(draft.id, "discord:2", post=True).ticket)
    assert "log_part" not in desk.file(draft.id, "discord:2", post=True).ticket.triage


def test_a_post_discord_refuses_is_given_up_after_a_few_attempts(desk, store, clock):
    """A refusal (a 400) is retried ``refused_attempts`` times in all, then the ticket
    stays "failed": not due again, counted apart; other failures keep being retried."""
    ticket = desk.file(fill(desk).id, "discord:1", post=True).ticket
    for attempt in range(1, desk.settings.refused_attempts + 1):
        clock.now += desk.settings.retry_max + 61
        (due,) = desk.due_posts()
        failed = desk.post_failed(due, "400 40067 tag_required", refused=True)
        assert failed.post_attempts == attempt
    assert failed.post_state == "failed" and failed.next_attempt_at is None
    clock.now += desk.settings.retry_max * 10
    assert desk.due_posts() == []
    assert store.pending_count() == 0 and store.failed_count() == 1
    assert [e.kind for e in store.events(ticket.id)][-1] == "post_given_up"
    other = desk.file(fill(desk, "discord:2").id, "discord:2", post=True).ticket
    for _ in range(desk.settings.refused_attempts + 2):
        clock.now += desk.settings.retry_max + 61
        (due,) = desk.due_posts()
        assert desk.post_failed(due, "503").post_state == "pending"
    assert store.get_ticket(other.id).post_state == "pending"


def test_a_family_picked_from_the_list_counts_as_its_runbook_link(desk):
    """The form's list gives a family key; the checklist asks for the runbook followed:
    the key is read as the family's current runbook page, and the post links it."""
    family = next(f for f in desk.context.catalogue.families if f.current_page)
    draft = fill(desk, model_page=family.key)
    _, result = desk.check(draft.id, "discord:1")
    runbook = next(i for i in result.completeness.items if i.key == "runbook")
    assert runbook.status == "present", runbook
    assert result.family is not None and result.family.family.key == family.key
    shown, url = desk.model_ref(family.key)
    assert url is None and family.key not in shown  # no link base: the name, not the key


def test_feedback_is_the_askers_once_and_claims_are_staffs(desk, store):
    from knowledge.intake.desk import IntakeError

    ticket = desk.file(fill(desk).id, "discord:1", post=False).ticket
    with pytest.raises(IntakeError, match="Only the person who asked"):
        desk.give_feedback(ticket.id, actor="discord:7", helpful=True)
    assert desk.give_feedback(ticket.id, actor="discord:1", helpful=True).feedback == "helpful"
    with pytest.raises(IntakeError, match="recorded already"):
        desk.give_feedback(ticket.id, actor="discord:1", helpful=False)
    with pytest.raises(IntakeError):
        desk.claim(ticket.id, actor="discord:1", staff=False)
    assert desk.claim(ticket.id, actor="discord:7", staff=True).helper == "discord:7"
    assert desk.claim(ticket.id, actor="discord:8", staff=True).helper == "discord:8"
    assert desk.claim(ticket.id, actor="discord:8", staff=True, release=True).helper is None
    assert store.get_ticket(ticket.id).to_json()["feedback"] == "helpful"


def test_a_solved_answer_is_found_by_a_like_question_and_not_by_another(desk, store):
    """Mark as answer keeps the answer redacted and solves the ticket; similar() offers
    it to a reworded question, not to an unrelated one; nearest_sections tells an answer
    the wiki already holds from one it does not."""
    import dataclasses

    from knowledge.intake.similar import IN_WIKI, nearest_sections

    secret = "hf_" + "Kp2" * 12
    ticket = desk.file(fill(desk).id, "discord:1", post=False).ticket
    solved = desk.mark_answer(
        ticket.id,
        actor="discord:7",
        staff=True,
        answer=f"Pin the image of the current runbook; token {secret}",
        url="https://discord.com/channels/1/2/3",
    )
    assert solved.status == "solved"
    (kept,) = store.solved_answers()
    assert secret not in kept.answer and kept.url.endswith("/3")
    like = desk.similar("GLM-5 crashes under load once I moved it to eight GPUs")
    assert [a.ticket_id for a, _ in like] == [ticket.id]
    assert desk.similar("the fans are loud when the card is idle") == []
    page = next(iter(desk.context.wiki.pages.items()))
    section = page[1].sections[0]
    sections = [(f"{page[0]}#{section.anchor}", f"{section.title}\n{section.text}")]
    from_wiki = dataclasses.replace(kept, answer=f"{section.title}\n{section.text}")
    (_, _, score), (_, _, novel_score) = nearest_sections([from_wiki, kept], sections)
    assert score >= IN_WIKI > novel_score


def test_a_private_tickets_answer_is_offered_to_nobody_else(desk, store):
    """An asker who filed privately chose a staff-only thread: their solved ticket is
    never offered as "a similar ticket was solved" (to the /support check or /search),
    though maintainers still list it."""
    question = "GLM-5 crashes under load once I moved it to eight GPUs"
    ticket = desk.file(fill(desk).id, "discord:1", post=True).ticket
    desk.make_private(ticket.id)
    desk.mark_answer(ticket.id, actor="discord:7", staff=True, answer="Pin the image", url="")
    assert desk.similar(question) == [] and desk.similar_field_for(question) is None
    assert desk.nothing_solved(), "known at once: nothing to offer"
    assert [a.ticket_id for a in store.solved_answers()] == [ticket.id]
    public = desk.file(fill(desk, user="discord:2").id, "discord:2", post=True).ticket
    desk.mark_answer(public.id, actor="discord:7", staff=True, answer="Pin the image", url="")
    offer = desk.similar_field_for(question)
    assert offer is not None and offer.value.startswith(f"#{public.id} ")
    assert not desk.nothing_solved()


def test_a_ticket_filed_privately_is_private_in_the_filings_own_write(desk, store, monkeypatch):
    """A ticket filed privately is never left to the public forum's retries: its private
    mark is written with the ticket, not by a later write a stop or a failure can skip."""
    failing: list[str] = []

    def record_event(*args, **kwargs):  # any later write fails (a full disk, a stop)
        failing.append(args[1] if len(args) > 1 else kwargs.get("kind", ""))
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store, "record_event", record_event)
    filed = desk.file(fill(desk).id, "discord:1", post=True, private=True)
    assert filed.created and desk.is_private(filed.ticket.id) and failing == []
    again = desk.file(fill(desk, user="discord:2").id, "discord:2", post=True)
    assert not desk.is_private(again.ticket.id)
    assert desk.file(fill(desk).id, "discord:1", post=True, private=False).created
    # a second press finds the ticket filed before, private as it was filed
    assert desk.is_private(desk.file(filed.ticket.draft_id, "discord:1", post=True).ticket.id)


def test_a_ping_is_spent_only_by_a_post_that_carries_it(desk, store, clock):
    """claim_ping holds the helpers' ping for one post: a failed post gives it back (its
    retry may ping), a post made records it (never again for that ticket), and while one
    is held or within the quiet window no other ticket pings."""
    one, two = (desk.file(fill(desk, user=u).id, u, post=True).ticket.id for u in ("d:1", "d:2"))
    assert desk.claim_ping(one, quiet=600)
    assert not desk.claim_ping(two, quiet=600), "held for the first post: a burst pings once"
    desk.ping_unsent(one)  # Discord refused the post
    assert "helpers_pinged" not in [e.kind for e in store.events(one)]
    clock.now += 60
    assert desk.claim_ping(one, quiet=600), "the retry pings"
    desk.ping_sent(one)
    assert [e.kind for e in store.events(one)].count("helpers_pinged") == 1
    assert not desk.claim_ping(one, quiet=0), "never twice for one ticket"
    assert not desk.claim_ping(two, quiet=600), "within the quiet window"
    clock.now += 601
    assert desk.claim_ping(two, quiet=600)


def test_a_ping_found_on_an_earlier_attempts_post_counts_from_when_it_was_sent(desk, store, clock):
    """A retry found the post an errored attempt made, and it carried the ping: recorded
    at the post's time, once; the quiet window runs from then."""
    one, two = (desk.file(fill(desk, user=u).id, u, post=True).ticket.id for u in ("d:1", "d:2"))
    assert desk.claim_ping(one, quiet=600)
    desk.ping_unsent(one)  # the bot saw an error, though Discord made the post
    clock.now += 120  # the retry, two minutes later
    assert desk.ping_found(one, at=clock.now - 120)
    assert not desk.ping_found(one, at=clock.now), "once per ticket"
    assert [e.at for e in store.events(one) if e.kind == "helpers_pinged"] == [clock.now - 120]
    assert not desk.claim_ping(two, quiet=600), "within the window of the found ping"
    clock.now += 481  # 601 s after the post was sent
    assert desk.claim_ping(two, quiet=600)


def test_a_filed_or_solved_draft_is_closed_to_further_steps(desk, store):
    """Its earlier steps' buttons and forms are refused, saying why: the ticket is
    posted as filed (a second File still answers with the ticket)."""
    filed = fill(desk, user="d:1")
    ticket = desk.file(filed.id, "d:1", post=False).ticket
    with pytest.raises(IntakeError, match=f"filed as ticket #{ticket.id}") as refused:
        desk.save(filed.id, "d:1", {"text": "changed"}, step=1)
    assert refused.value.code == "closed"
    with pytest.raises(IntakeError, match="closed"):
        desk.check(filed.id, "d:1")
    assert desk.file(filed.id, "d:1", post=False) == Filed(ticket, False)
    solved = fill(desk, user="d:2")
    desk.deflect(solved.id, "d:2")
    with pytest.raises(IntakeError, match="marked this request as solved"):
        desk.deflect(solved.id, "d:2")
    with pytest.raises(IntakeError, match="someone else"):
        desk.draft(solved.id, "d:3")


def test_the_check_reply_puts_a_solved_ticket_first_and_notes_the_triage_for_gaps(desk):
    """The answer a finished draft gets (the bot's /support check): its triage worded for
    that draft, a solved ticket asked much the same first, and the triage handed to the
    gaps recorder; a draft that cannot be checked yet is refused, nothing noted."""

    class Gaps:
        def __init__(self) -> None:
            self.noted: list[tuple[str, str, object]] = []

        def note_triage(self, command: str, query: str, result: object) -> bool:
            self.noted.append((command, query, result))
            return True

    gaps = Gaps()
    first = fill(desk)
    reply = desk.check_reply(first, gaps=gaps)
    assert reply.meta["draft"] == first.id and reply.ephemeral
    assert [(c, q) for c, q, _ in gaps.noted] == [("/support", first.values["text"])]
    ticket = desk.file(first.id, "discord:1", post=False).ticket
    desk.mark_answer(ticket.id, actor="discord:7", staff=True, answer="Pin the image", url="")
    again = fill(desk, user="discord:2")
    reply = desk.check_reply(again)
    assert reply.fields[0] == desk.similar_field(again) is not None
    empty = desk.new_draft("discord:3").draft
    with pytest.raises(IntakeError):
        desk.check_reply(empty, gaps=gaps)
    assert len(gaps.noted) == 1
