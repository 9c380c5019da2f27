"""Faults that must end in one line naming the problem, exit code 1 or 2, no traceback
and nothing half-written; each injected for real through the command line.

As root (CI), file modes do not stop writes: a read-only folder is a read-only tmpfs
(skipped where it cannot be mounted), a full disk is a small tmpfs filled up, a lock is
held by a second SQLite connection in another process, and damaged databases are real
files with their bytes changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from knowledge.intake.sqlite import FILE_NAME, SqliteTicketStore
from knowledge.intake.store import StoreUnavailable
from knowledge.safe_yaml import load_yaml
from knowledge.triage.known_errors import _lower_same_length
from knowledge.triage.request import MAX_REQUEST_BYTES
from tests.support import ROOT
from tests.test_storage_faults import fill, lines, tmpfs, wikibot

__all__ = ["tmpfs"]  # the fixture, imported to be used here

REQUEST = "text: NCCL error calloc failed while loading GLM\n"


def one_line(run: subprocess.CompletedProcess, *, code: int, prefix: str) -> str:
    """The one line ``run`` said on stderr (after asserting it is the only one)."""
    assert run.returncode == code, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    said = lines(run.stderr)
    assert len(said) == 1, run.stderr
    assert said[0].startswith(prefix), said[0]
    return said[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def filed_db(tmp_path_factory) -> Path:
    """A ticket database holding one ticket, filed through the command line."""
    data = tmp_path_factory.mktemp("filed")
    request = data / "request.yaml"
    request.write_text(REQUEST)
    run = wikibot("tickets", "file", "--data", str(data), str(request))
    assert run.returncode == 0, run.stderr
    db = data / FILE_NAME
    with sqlite3.connect(db) as conn:  # everything in the main file, as a copy would be
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


# --- a damaged ticket database ---------------------------------------------------------


def _truncated(good: bytes) -> bytes:
    return good[:3000]


def _random(good: bytes) -> bytes:
    return os.urandom(len(good))


def _bad_header(good: bytes) -> bytes:
    return b"definitely not!!" + good[16:]


@pytest.mark.parametrize("damage", [_truncated, _random, _bad_header])
def test_a_damaged_ticket_database_is_one_line_and_left_as_it_was(tmp_path, filed_db, damage):
    db = tmp_path / FILE_NAME
    db.write_bytes(damage(filed_db.read_bytes()))
    before = digest(db)
    request = tmp_path / "request.yaml"
    request.write_text(REQUEST)
    for args in (("list",), ("show", "1"), ("file", str(request))):
        run = wikibot("tickets", *args, "--data", str(tmp_path))
        said = one_line(run, code=2, prefix="wikibot tickets:")
        assert str(db) in said and "damaged" in said, said
    assert digest(db) == before  # nothing written into it


# --- a read-only data folder -----------------------------------------------------------


@pytest.mark.parametrize("with_db", [False, True], ids=["no-database", "with-database"])
def test_tickets_with_a_read_only_data_folder_name_it_and_stop(tmp_path, tmpfs, filed_db, with_db):
    data = tmpfs("4m")
    if with_db:
        (data / FILE_NAME).write_bytes(filed_db.read_bytes())
    subprocess.run(["mount", "-o", "remount,ro", str(data)], check=True)
    request = tmp_path / "request.yaml"
    request.write_text(REQUEST)
    for args in (("list",), ("show", "1"), ("file", str(request))):
        run = wikibot("tickets", *args, "--data", str(data))
        said = one_line(run, code=2, prefix="wikibot tickets:")
        assert f"{data} is read-only" in said, said
    assert sorted(p.name for p in data.iterdir()) == ([FILE_NAME] if with_db else [])


# --- a full disk while filing ----------------------------------------------------------


def test_disk_full_while_filing_is_one_line_and_the_database_stays_whole(tmp_path, tmpfs):
    disk = tmpfs("4m")
    data = disk / "data"
    request = tmp_path / "request.yaml"
    request.write_text(REQUEST)
    assert wikibot("tickets", "file", "--data", str(data), str(request)).stdout.strip() == "1"
    filler = fill(disk)
    run = wikibot("tickets", "file", "--data", str(data), str(request))
    said = one_line(run, code=2, prefix="wikibot tickets:")
    assert "full" in said and str(data) in said, said
    filler.unlink()
    with sqlite3.connect(data / FILE_NAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [r[0] for r in conn.execute("SELECT id FROM tickets")] == [1]
    assert wikibot("tickets", "file", "--data", str(data), str(request)).stdout.strip() == "2"


# --- another process holds the lock ----------------------------------------------------

HOLDER = textwrap.dedent(
    """
    import sqlite3, sys, time
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("PRAGMA locking_mode=EXCLUSIVE")
    db.execute("BEGIN EXCLUSIVE")
    db.execute("UPDATE tickets SET title = title")
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    db.execute("ROLLBACK")
    """
)


def test_a_writer_holding_the_lock_means_a_bounded_wait_then_one_line(tmp_path, filed_db):
    db = tmp_path / FILE_NAME
    db.write_bytes(filed_db.read_bytes())
    request = tmp_path / "request.yaml"
    request.write_text(REQUEST)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db), "60"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        base = {k: v for k, v in os.environ.items() if k != "WIKIBOT_DATA"}
        runs = [  # both wait at once: the wait is the store's own bound, not the holder's
            subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "tickets", *args, "--data", str(tmp_path)],
                cwd=ROOT,
                env=base,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for args in (("list",), ("file", str(request)))
        ]
        for proc in runs:
            out, err = proc.communicate(timeout=120)
            run = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
            said = one_line(run, code=2, prefix="wikibot tickets:")
            assert "busy" in said and str(db) in said, said
        assert holder.poll() is None, "the holder let go before the commands gave up"
    finally:
        holder.kill()
        holder.wait()
    with sqlite3.connect(db) as conn:
        assert [r[0] for r in conn.execute("SELECT id FROM tickets")] == [1]


def test_the_store_says_which_problem_it_met(tmp_path, filed_db):
    db = tmp_path / FILE_NAME
    db.write_bytes(_bad_header(filed_db.read_bytes()))
    with pytest.raises(StoreUnavailable) as failure:
        SqliteTicketStore(db)
    assert (failure.value.problem, failure.value.path) == ("damaged", str(db))
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(StoreUnavailable) as failure:
        SqliteTicketStore(blocker / "data" / FILE_NAME)
    assert failure.value.problem == "io" and "Not a directory" in failure.value.reason


# --- hostile arguments -----------------------------------------------------------------


def test_show_of_an_id_past_what_sqlite_holds_is_no_such_ticket(tmp_path, filed_db):
    (tmp_path / FILE_NAME).write_bytes(filed_db.read_bytes())
    run = wikibot("tickets", "show", "--data", str(tmp_path), "99999999999999999999999")
    said = one_line(run, code=1, prefix="wikibot tickets:")
    assert "no ticket 99999999999999999999999" in said
    store = SqliteTicketStore(tmp_path / FILE_NAME)
    try:
        assert store.get_ticket(-(2**70)) is None and store.ticket_for_thread(2**64) is None
    finally:
        store.close()


@pytest.mark.parametrize("limit", ["-1", "0", "many"])
def test_list_refuses_a_limit_below_one(tmp_path, filed_db, limit):
    (tmp_path / FILE_NAME).write_bytes(filed_db.read_bytes())
    run = wikibot("tickets", "list", "--data", str(tmp_path), "--limit", limit)
    assert run.returncode == 2 and "Traceback" not in run.stderr and run.stdout == ""
    last = lines(run.stderr)[-1]
    assert "--limit" in last and limit in last, last


# --- a full disk on the first index build ----------------------------------------------


def test_a_full_disk_in_the_index_build_process_is_one_line_without_its_traceback(
    tmp_path, tmpfs, caplog
):
    from knowledge.search import IndexBuildError, SearchIndex
    from knowledge.wiki import load_wiki
    from tests.knowledge.search.helpers import PAGES, write_wiki

    wiki = write_wiki(tmp_path / "wiki", PAGES)
    data = tmpfs("64k") / "data"
    caplog.set_level("DEBUG", logger="knowledge.search")
    with pytest.raises(IndexBuildError) as failure:
        SearchIndex.open(load_wiki(wiki), data, build_in_child=True)
    assert "No space left on device" in str(failure.value)
    said = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert said == [], [r.getMessage() for r in said]  # the caller says it, once


@pytest.mark.skipif(not (ROOT.parent / "shared" / "wiki-snapshot").is_dir(), reason="no snapshot")
def test_index_and_ask_on_a_full_disk_end_in_one_line(tmpfs):
    """The real wiki is built in a child process (the demo wiki is too small for one)."""
    wiki = str(ROOT.parent / "shared" / "wiki-snapshot")
    data = tmpfs("1m") / "data"
    run = wikibot("index", "--wiki", wiki, "--data", str(data))
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "No space left on device" in lines(run.stderr)[-1]
    for command in ("/search nccl", "/acronym TP"):
        run = wikibot("ask", "--wiki", wiki, "--data", str(data), command)
        assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
        last = lines(run.stderr)[-1]
        assert "No space left on device" in last or "disk is full" in last, last


# --- request files ---------------------------------------------------------------------

EMOJI_TEXTS = ("server died 😀 help", "a\\\\uD83D\\uDE00 literal", "😀" * 3 + "\\ud83d x", "é ñ")


@pytest.mark.parametrize("text", EMOJI_TEXTS)
def test_json_with_escaped_surrogate_pairs_loads_as_json_does(text):
    document = json.dumps({"text": text, "list": [text, {"k": text}]})
    assert "\\ud83d" in document or "😀" not in text
    assert load_yaml(document) == json.loads(document)


def test_a_lone_surrogate_or_yaml_that_is_not_json_is_still_refused():
    import yaml

    with pytest.raises(yaml.YAMLError):
        load_yaml('{"text": "\\ud83d alone"}')
    with pytest.raises(yaml.YAMLError):
        load_yaml('text: "\\uD83D\\uDE00"')  # YAML, not JSON: its own escape rules


def test_triage_takes_a_json_request_written_by_json_dumps(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"text": "vLLM dies at start 😀", "log": "NCCL error 😀"}))
    run = wikibot("triage", "--json", str(request), env={"WIKIBOT_DATA": str(tmp_path / "d")})
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert json.loads(run.stdout)["reply"]


def test_a_request_over_the_cap_is_too_large_not_a_syntax_error(tmp_path):
    request = tmp_path / "request.json"
    with open(request, "w") as out:
        out.write('{"text": "help", "log": "')
        out.write("x" * (MAX_REQUEST_BYTES + 1024))
        out.write('"}')
    env = {"WIKIBOT_DATA": str(tmp_path / "d")}
    run = wikibot("triage", str(request), env=env)
    said = one_line(run, code=2, prefix="wikibot triage:")
    assert "too large" in said and f"{request.stat().st_size:,} bytes" in said, said
    run = wikibot("triage", "-", env=env, stdin=request.read_text())
    said = one_line(run, code=2, prefix="wikibot triage:")
    assert "standard input is too large" in said, said
    run = wikibot("tickets", "file", "--data", str(tmp_path / "d"), str(request))
    assert "too large" in one_line(run, code=2, prefix="wikibot tickets:")
    assert not (tmp_path / "d" / FILE_NAME).exists()


# --- memory for a binary log -----------------------------------------------------------


def test_lowering_keeps_offsets_where_a_character_grows():
    text = "İstanbul ERROR İ x" * 3 + "ǅ" + os.urandom(3000).decode("utf-8", "replace")
    lowered = _lower_same_length(text)
    assert len(lowered) == len(text)
    assert lowered == "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def test_a_binary_log_is_triaged_within_300_mb(tmp_path):
    """5 MB of random bytes took 540 MB (a list of one-character strings)."""
    log = tmp_path / "random.bin"
    log.write_bytes(os.urandom(5 * 1024 * 1024))
    script = textwrap.dedent(
        """
        import resource, subprocess, sys
        run = subprocess.run(sys.argv[1:], capture_output=True)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
        print(run.returncode, peak)
        """
    )
    command = [sys.executable, "-m", "bot.cli", "triage", "--text", "server dies"]
    command += ["--log", str(log)]
    run = subprocess.run(
        [sys.executable, "-c", script, *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "WIKIBOT_DATA": str(tmp_path / "d")},
    )
    code, peak_mb = map(int, run.stdout.split())
    assert code == 0, run.stderr
    assert peak_mb <= 300, f"peak RSS {peak_mb} MB"
    assert resource  # imported for the figure above in the child


def test_the_consoles_support_on_a_damaged_database_says_one_line_and_goes_on(
    tmp_path, filed_db
):
    db = tmp_path / FILE_NAME
    db.write_bytes(_bad_header(filed_db.read_bytes()))
    run = wikibot("console", "--data", str(tmp_path), stdin="/support\n/acronym DCP\n/quit\n")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert f"the ticket database {db} is damaged" in run.stdout
    assert "Decode Context Parallelism" in run.stdout  # the console went on
