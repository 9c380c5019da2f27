"""Storage faults, injected for real: data folders that cannot be made or written, full
disks, damaged index files, and wiki folders that cannot be read.

CI runs as root, which ignores file modes, so every behaviour has a test that works
as root: a path whose parent is a regular file, a small tmpfs (skipped where it
cannot be mounted), or ENOSPC raised by the very calls the code makes (``os.fsync``,
``os.scandir``). Tests that rely on file modes skip as root.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.cli import main as wikibot_main
from knowledge.search import IndexBuildError, SearchIndex
from knowledge.search.store import Manifest
from knowledge.service import SKIPPED_SAID_FILE, KnowledgeBase
from knowledge.wiki import WikiFolderError, load_wiki
from knowledge.wiki.cache import PAGE_CACHE_FILE
from tests.knowledge.search.helpers import PAGES, ids, write_wiki
from tests.support import DEMO, ROOT

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_modes = pytest.mark.skipif(AS_ROOT, reason="root ignores file modes")
QUERIES = ("zeppelin", "ballast", "flux capacitor", "frobnicator", "fog")


def wikibot(
    *args: str, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """``wikibot ARGS`` in a fresh process (as a user runs it), ``stdin`` typed in."""
    base = {k: v for k, v in os.environ.items() if k not in ("WIKIBOT_DATA", "XDG_CACHE_HOME")}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        cwd=ROOT,
        timeout=180,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def leftovers(data_dir: Path) -> list[str]:
    """What a failed build left in ``data_dir``: anything but the lock, the page cache,
    and generations that ``current`` points at."""
    keep = {"build.lock", PAGE_CACHE_FILE, "current", SKIPPED_SAID_FILE}
    current = data_dir / "current"
    if current.is_symlink():
        keep.add(os.readlink(current))
    found = [p.name for p in data_dir.iterdir() if p.name not in keep]
    if current.exists():
        found += [f"current/{p.name}" for p in current.iterdir() if p.suffix == ".tmp"]
    return sorted(found)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """``mount(size, ro=False)``: a fresh tmpfs of ``size`` under ``tmp_path`` (skips if
    this process may not mount one); unmounted afterwards."""
    mounted: list[Path] = []

    def mount(size: str, *, ro: bool = False) -> Path:
        point = tmp_path / f"tmpfs{len(mounted)}"
        point.mkdir()
        options = f"size={size},mode=0755" + (",ro" if ro else "")
        run = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {run.stderr.strip() or run.returncode}")
        mounted.append(point)
        return point

    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def fill(folder: Path) -> Path:
    """Write into ``folder`` until its file system is full; the filler file."""
    filler = folder / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def disk_full_on_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``os.fsync`` fails with ENOSPC, as it does when delayed writes find no room."""

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", no_space)


# --- 1. no usable data folder --------------------------------------------------------


def assert_answered_from_memory(run: subprocess.CompletedProcess, data_dir: Path) -> None:
    assert run.returncode == 0, run.stderr
    assert "Decode Context Parallelism" in run.stdout
    assert "Traceback" not in run.stderr
    assert len(lines(run.stderr)) == 1, run.stderr
    assert "in memory" in run.stderr and str(data_dir) in run.stderr


def test_ask_when_the_data_folder_cannot_be_created(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be\n")
    run = wikibot("ask", "/acronym DCP", env={"WIKIBOT_DATA": str(blocker / "data")})
    assert_answered_from_memory(run, blocker / "data")
    assert "Not a directory" in run.stderr


def test_ask_when_home_is_unusable(tmp_path):
    home = tmp_path / "home"
    home.write_text("HOME is a file\n")
    run = wikibot("ask", "/acronym DCP", env={"HOME": str(home)})
    assert_answered_from_memory(run, home / ".cache" / "wikibot")


def test_triage_when_the_data_folder_cannot_be_created(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    request = tmp_path / "request.yaml"
    request.write_text("text: NCCL error calloc failed while loading GLM\n")
    run = wikibot("triage", "--json", str(request), env={"WIKIBOT_DATA": str(blocker / "x")})
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["suggestions"]
    assert "Traceback" not in run.stderr and len(lines(run.stderr)) == 1


def test_console_when_the_data_folder_cannot_be_created(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    run = wikibot(
        "console", env={"WIKIBOT_DATA": str(blocker / "x")}, stdin="/acronym DCP\n/quit\n"
    )
    assert_answered_from_memory(run, blocker / "x")


def test_tickets_name_the_data_folder_they_need(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    request = tmp_path / "request.yaml"
    request.write_text("text: NCCL error calloc failed while loading GLM\n")
    data = str(blocker / "x")
    for args in (("list",), ("show", "1"), ("file", str(request))):
        run = wikibot("tickets", *args, "--data", data)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
        said = [line for line in lines(run.stderr) if line.startswith("wikibot tickets:")]
        assert len(said) == 1 and data in said[0] and "Not a directory" in said[0]


@needs_modes
def test_ask_when_the_data_folder_is_read_only_by_mode(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o555)
    run = wikibot("ask", "--data", str(data), "/acronym DCP")
    assert_answered_from_memory(run, data)


def test_ask_when_the_data_folder_is_a_read_only_mount(tmpfs):
    data = tmpfs("1m", ro=True)
    run = wikibot("ask", "--data", str(data), "/acronym DCP")
    assert_answered_from_memory(run, data)
    assert "Read-only file system" in run.stderr


def test_a_read_only_data_folder_with_an_index_is_used_quietly(tmp_path, tmpfs):
    data = tmpfs("2m")
    assert wikibot("index", "--data", str(data)).returncode == 0
    subprocess.run(["mount", "-o", "remount,ro", str(data)], check=True)
    run = wikibot("ask", "--data", str(data), "/search nccl calloc")
    assert run.returncode == 0 and "common-issues" in run.stdout
    assert lines(run.stderr) == []


def serve_config(tmp_path: Path, data_dir: Path, wiki: Path = DEMO) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"discord:\n  guild_ids: [123456789012345678]\n"
        f"wiki:\n  path: {wiki}\n  data_dir: {data_dir}\n"
    )
    return config


def test_serve_names_the_data_folder_it_needs_and_stops(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    config = serve_config(tmp_path, blocker / "data")
    # No network is reached: the check comes before connecting.
    run = wikibot("serve", "--config", str(config), env={"DISCORD_TOKEN": "not-a-real-token"})
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert len(lines(run.stderr)) == 1, run.stderr
    assert str(blocker / "data") in run.stderr and "Not a directory" in run.stderr
    assert "wiki.data_dir" in run.stderr


def test_serve_refuses_a_read_only_data_folder(tmp_path, tmpfs):
    data = tmpfs("1m", ro=True)
    run = wikibot(
        "serve",
        "--config",
        str(serve_config(tmp_path, data)),
        env={"DISCORD_TOKEN": "not-a-real-token"},
    )
    assert run.returncode == 1 and "Read-only file system" in run.stderr
    assert "Traceback" not in run.stderr and len(lines(run.stderr)) == 1


# --- 2. disk full ---------------------------------------------------------------------


@pytest.fixture
def wiki_dir(tmp_path: Path) -> Path:
    return write_wiki(tmp_path / "wiki", PAGES)


def test_disk_full_on_a_first_build_does_not_claim_a_previous_index(
    wiki_dir, tmp_path, monkeypatch
):
    data = tmp_path / "data"
    disk_full_on_fsync(monkeypatch)
    with pytest.raises(IndexBuildError) as failure:
        SearchIndex.open(load_wiki(wiki_dir), data)
    assert failure.value.previous_kept is False
    assert "No space left on device" in str(failure.value)
    assert "still in use" not in str(failure.value)
    assert leftovers(data) == []


@pytest.mark.parametrize("in_child", [False, True], ids=["in-process", "child"])
def test_full_tmpfs_on_a_first_build_leaves_nothing(wiki_dir, tmpfs, in_child):
    data = tmpfs("64k") / "data"
    with pytest.raises(IndexBuildError) as failure:
        SearchIndex.open(load_wiki(wiki_dir), data, build_in_child=in_child)
    assert failure.value.previous_kept is False
    assert "still in use" not in str(failure.value)
    assert leftovers(data) == []


def test_wikibot_index_on_a_full_disk_says_so_in_one_line(tmpfs):
    data = tmpfs("128k") / "data"
    run = wikibot("index", "--data", str(data))
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    failures = [line for line in lines(run.stderr) if "wikibot index" in line]
    assert len(failures) == 1 and "No space left on device" in failures[0]
    assert "previous index" in failures[0] and "still in use" not in failures[0]
    assert leftovers(data) == []
    # The read-only commands still answer, from memory.
    ask = wikibot("ask", "--data", str(data), "/acronym DCP")
    assert ask.returncode == 0 and "Decode Context Parallelism" in ask.stdout
    assert "Traceback" not in ask.stderr and "in memory" in ask.stderr


def test_failed_update_keeps_the_previous_index_and_says_so_once(
    wiki_dir, tmp_path, monkeypatch, caplog
):
    data = tmp_path / "data"
    ix, _ = SearchIndex.open(load_wiki(wiki_dir), data)
    before = {query: ids(ix.search(query)) for query in QUERIES}
    generation = ix.generation
    ix.close()
    write_wiki(wiki_dir, {"guides/misc.md": PAGES["guides/misc.md"] + "\nA dirigible too.\n"})
    disk_full_on_fsync(monkeypatch)
    caplog.set_level(logging.WARNING)
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data)
    try:
        assert stats.problem is not None and "No space left on device" in stats.problem
        assert ix.generation == generation
        assert {query: ids(ix.search(query)) for query in QUERIES} == before
        assert leftovers(data) == []
        # Retrying while the disk is still full says nothing new.
        assert ix.update(load_wiki(wiki_dir)).problem is not None
        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "previous index" in warnings[0].getMessage()
        assert leftovers(data) == []
        monkeypatch.undo()
        stats = ix.update(load_wiki(wiki_dir))
        assert (stats.mode, stats.problem) == ("incremental", None)
        assert ids(ix.search("dirigible")) == ["guides/misc.md#weather"]
    finally:
        ix.close()


def test_full_tmpfs_during_an_update_keeps_the_previous_index_serving(tmp_path, tmpfs):
    disk = tmpfs("4m")
    wiki = disk / "wiki"
    shutil.copytree(DEMO, wiki)
    data = disk / "data"
    assert wikibot("index", "--wiki", str(wiki), "--data", str(data)).returncode == 0
    generation = os.readlink(data / "current")
    page = next(iter(sorted(wiki.rglob("*.md"))))
    page.write_text(page.read_text() + "\nOne more line about NCCL.\n")
    filler = fill(disk)
    run = wikibot("ask", "--wiki", str(wiki), "--data", str(data), "/search nccl calloc")
    assert run.returncode == 0, run.stderr
    assert "common-issues" in run.stdout
    assert "Traceback" not in run.stderr
    said = [line for line in lines(run.stderr) if "previous index" in line]
    assert len(said) == 1 and "No space left on device" in said[0]
    assert os.readlink(data / "current") == generation
    assert leftovers(data) == []
    filler.unlink()
    run = wikibot("ask", "--wiki", str(wiki), "--data", str(data), "/search nccl calloc")
    assert run.returncode == 0 and lines(run.stderr) == []
    assert os.readlink(data / "current") != generation


# --- 3. index integrity ----------------------------------------------------------------


def biggest_file(folder: Path) -> Path:
    return max((p for p in folder.iterdir() if p.is_file()), key=lambda p: p.stat().st_size)


def test_random_bytes_in_a_segment_mean_a_rebuild_with_a_warning(wiki_dir, tmp_path, caplog):
    data = tmp_path / "data"
    ix, _ = SearchIndex.open(load_wiki(wiki_dir), data)
    expected = {query: ids(ix.search(query)) for query in QUERIES}
    ix.close()
    live = (data / "current").resolve()
    manifest = Manifest.from_json((live / "manifest.json").read_text())
    assert manifest.files and set(manifest.files) <= {p.name for p in live.iterdir()}
    segment = biggest_file(live)
    assert segment.stat().st_size >= 8192
    with open(segment, "r+b") as handle:
        handle.seek(segment.stat().st_size // 3)
        handle.write(os.urandom(4096))
    caplog.set_level(logging.WARNING)
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data)
    try:
        assert stats.mode == "full"
        assert any(
            "damaged" in r.getMessage() and segment.name in r.getMessage() for r in caplog.records
        )
        assert {query: ids(ix.search(query)) for query in QUERIES} == expected
    finally:
        ix.close()


def test_a_truncated_file_is_caught_by_its_size(wiki_dir, tmp_path, caplog):
    data = tmp_path / "data"
    SearchIndex.open(load_wiki(wiki_dir), data)[0].close()
    segment = biggest_file((data / "current").resolve())
    os.truncate(segment, segment.stat().st_size - 1)
    caplog.set_level(logging.WARNING)
    ix, stats = SearchIndex.open(load_wiki(wiki_dir), data)
    ix.close()
    assert stats.mode == "full"
    assert any("bytes, the manifest says" in r.getMessage() for r in caplog.records)


def test_a_manifest_without_checksums_means_one_rebuild(wiki_dir, tmp_path):
    data = tmp_path / "data"
    SearchIndex.open(load_wiki(wiki_dir), data)[0].close()
    path = (data / "current").resolve() / "manifest.json"
    raw = json.loads(path.read_text())
    del raw["files"]
    path.write_text(json.dumps(raw))
    for expected in ("full", "reused"):
        ix, stats = SearchIndex.open(load_wiki(wiki_dir), data)
        ix.close()
        assert stats.mode == expected


# --- 4. a wiki folder that cannot be read -----------------------------------------------


def test_a_file_given_as_the_wiki_is_named_so(tmp_path):
    page = tmp_path / "README.md"
    page.write_text("# Not a folder\n")
    run = wikibot("ask", "--wiki", str(page), "--data", str(tmp_path / "d"), "/acronym DCP")
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "is a file, not a wiki folder" in run.stderr
    assert "glossary" not in run.stdout + run.stderr


def test_a_missing_wiki_folder_is_named_so(tmp_path):
    run = wikibot("index", "--wiki", str(tmp_path / "nowhere"), "--data", str(tmp_path / "d"))
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "wiki folder not found" in run.stderr


def refuse_listing(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """``os.scandir`` of ``folder`` fails with EACCES, as for a user without the x/r bits."""
    real = os.scandir

    def scandir(path=".", *args, **kwargs):
        if Path(path).resolve() == folder.resolve():
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)


def test_an_unlistable_wiki_folder_is_reported_not_an_empty_wiki(tmp_path, monkeypatch, capsys):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    refuse_listing(monkeypatch, wiki)
    with pytest.raises(WikiFolderError) as failure:
        load_wiki(wiki)
    assert failure.value.problem == "unreadable"
    with pytest.raises(WikiFolderError):
        KnowledgeBase.open(wiki, tmp_path / "data")
    with pytest.raises(SystemExit) as stopped:
        wikibot_main(["ask", "--wiki", str(wiki), "--data", str(tmp_path / "d"), "/acronym DCP"])
    message = str(stopped.value.code)
    assert "cannot be read" in message and "Permission denied" in message
    assert "glossary" not in capsys.readouterr().out


def test_an_unlistable_sub_folder_is_skipped_with_its_reason(tmp_path, monkeypatch):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    sub = next(p for p in sorted(wiki.iterdir()) if p.is_dir())
    refuse_listing(monkeypatch, sub)
    loaded = load_wiki(wiki)
    assert (f"{sub.name}/", "unreadable folder: Permission denied") in loaded.skipped
    assert not any(path.startswith(f"{sub.name}/") for path in loaded.pages)


@needs_modes
def test_a_wiki_folder_without_read_permission_is_reported(tmp_path):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    wiki.chmod(0o000)
    try:
        run = wikibot("ask", "--wiki", str(wiki), "--data", str(tmp_path / "d"), "/acronym DCP")
    finally:
        wiki.chmod(0o755)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "cannot be read" in run.stderr and "glossary" not in run.stdout


def test_serve_names_an_unreadable_wiki_folder(tmp_path, monkeypatch, capsys):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    config = serve_config(tmp_path, tmp_path / "data", wiki)
    monkeypatch.setenv("DISCORD_TOKEN", "not-a-real-token")
    refuse_listing(monkeypatch, wiki)
    assert wikibot_main(["serve", "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert "cannot read the wiki folder" in err and "Permission denied" in err


# --- what /wiki status says ---------------------------------------------------------------


def test_status_says_when_the_index_is_in_memory_or_its_update_failed(tmp_path, monkeypatch):
    wiki = tmp_path / "wiki"
    shutil.copytree(DEMO, wiki)
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    kb = KnowledgeBase.open(wiki, blocker / "data", memory_fallback=True)
    try:
        status = kb.status()
        assert status.meta["index_in_memory"] is True and status.meta["index_problem"] is None
        assert any("in memory" in f.value for f in status.fields)
    finally:
        kb.close()
    kb = KnowledgeBase.open(wiki, tmp_path / "data")
    try:
        assert kb.status().text == ""
        page = next(iter(sorted(wiki.rglob("*.md"))))
        page.write_text(page.read_text() + "\nOne more line.\n")
        disk_full_on_fsync(monkeypatch)
        assert kb.reload().problem is not None
        status = kb.status()
        assert "No space left on device" in status.meta["index_problem"]
        assert "update failed" in status.text and "No space left on device" in status.text
        monkeypatch.undo()
        assert kb.reload().problem is None and kb.status().text == ""
    finally:
        kb.close()
