"""Fetching the wiki from a loopback imitation of GitHub's API: every path of a check.

Waits between retries go through an injected ``sleep`` that records them, so
rate-limit and backoff behaviour is asserted without sleeping or timing.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest

from knowledge.service import KnowledgeBase, demo_wiki_dir
from knowledge.source import (
    ArchiveError,
    Caps,
    FetchError,
    Follower,
    HttpSettings,
    NotFound,
    RateLimited,
    SourceSettings,
    TooLarge,
    parse_source,
)
from tests.github_standin import Fault, github_standin, tarball, tree_files

TOKEN = "ghp_" + "T" * 36


@pytest.fixture
def gh():
    with github_standin() as standin:
        yield standin


def demo_files() -> dict[str, bytes]:
    return tree_files(demo_wiki_dir())


def follower(
    tmp_path: Path,
    gh,
    source: str = "github:owner/wiki",
    *,
    sleeps=None,
    caps=None,
    token: str = TOKEN,
    **http,
) -> Follower:
    settings = SourceSettings(
        parse_source(source),
        api_url=gh.url,
        caps=caps or Caps(),
        http=HttpSettings(api_url=gh.url, backoff_base=0.01, backoff_max=0.05, **http),
    )
    record = sleeps.append if sleeps is not None else (lambda s: None)
    return Follower(settings, tmp_path / "data", token=token, sleep=record)


def generations(tmp_path: Path) -> list[str]:
    root = tmp_path / "data" / "fetched"
    return sorted(p.name for p in root.iterdir() if p.name.startswith("c-") and p.is_dir())


# --- first fetch, unchanged, changed -------------------------------------------------------


def test_first_fetch_makes_the_commit_live(tmp_path, gh, caplog):
    caplog.set_level(logging.DEBUG)
    sha = gh.publish("owner", "wiki", "main", tarball(demo_files()))
    with follower(tmp_path, gh) as f:
        outcome = f.fetch()
    assert outcome.changed and outcome.previous is None
    live = outcome.live
    assert (
        live.commit == sha
        and live.id == sha
        and live.pages == len(list(demo_wiki_dir().rglob("*.md")))
    )
    assert (live.path / "README.md").read_bytes() == (demo_wiki_dir() / "README.md").read_bytes()
    assert (tmp_path / "data" / "fetched" / "live").resolve() == live.path.resolve()
    assert live.link_base == f"{gh.url}/owner/wiki/blob/{sha}/"
    # The commit was asked for as its SHA only; the token went to the API and nowhere else.
    commits = [r for r in gh.requests if "/commits/" in r.path]
    assert commits[0].path == "/repos/owner/wiki/commits/HEAD"
    assert commits[0].headers["Accept"] == "application/vnd.github.sha"
    assert commits[0].headers["Authorization"] == f"Bearer {TOKEN}"
    assert "wikibot" in commits[0].headers["User-Agent"]
    codeload = [r for r in gh.requests if r.path.startswith("/codeload/")]
    assert len(codeload) == 1 and "Authorization" not in codeload[0].headers
    state = (tmp_path / "data" / "fetched" / "state.json").read_text()
    assert TOKEN not in state and TOKEN not in caplog.text
    assert json.loads(state)["etag"] == f'"{sha}"'


def test_every_file_and_folder_is_flushed_before_the_generation_goes_live(
    tmp_path, gh, monkeypatch
):
    """Power loss after the swap must not find half-written pages: each file and folder
    of the new tree is fsynced (several threads at once) before the rename and link."""
    flushed: list[tuple[str, bool]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        live = (tmp_path / "data" / "fetched" / "live").exists()
        flushed.append((path, live))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    gh.publish("owner", "wiki", "main", tarball(demo_files()))
    with follower(tmp_path, gh) as f:
        live = f.fetch().live
    tree = {str(p.relative_to(live.path)) for p in live.path.rglob("*")} | {"."}
    before_swap = {path for path, was_live in flushed if not was_live}
    tmp = {Path(path).parent for path in before_swap if Path(path).name == "tree"}
    assert len(tmp) == 1  # the tree was flushed where it was unpacked, before its rename
    (root,) = tmp
    flushed_rel = {
        str(Path(path).relative_to(root / "tree"))
        for path in before_swap
        if Path(path).is_relative_to(root / "tree")
    }
    assert len(tree) > 10 and flushed_rel == tree


def test_an_unchanged_wiki_costs_one_304(tmp_path, gh):
    gh.publish("owner", "wiki", "main", tarball(demo_files()))
    with follower(tmp_path, gh) as f:
        first = f.fetch()
        second = f.fetch()
    assert not second.changed and second.live == first.live
    commits = [r for r in gh.requests if "/commits/" in r.path]
    assert commits[1].headers["If-None-Match"] == f'"{first.live.commit}"'
    assert gh.count("/codeload/") == 1, "no second download"
    assert f.state().checked_at >= first.live.fetched_at and f.state().last_error is None


def test_a_new_commit_goes_live_and_the_one_before_is_kept(tmp_path, gh):
    files = demo_files()
    with follower(tmp_path, gh) as f:
        shas = []
        for n in range(3):
            files["notes/extra.md"] = f"# Extra\n\nround {n}\n".encode()
            shas.append(gh.publish("owner", "wiki", "main", tarball(files)))
            outcome = f.fetch()
            assert outcome.changed and outcome.live.commit == shas[-1]
        assert generations(tmp_path) == sorted(f"c-{s}" for s in shas[-2:])
        assert outcome.previous is not None and outcome.previous.commit == shas[1]
        assert (outcome.live.path / "notes" / "extra.md").read_text().endswith("round 2\n")


def test_a_branch_tag_or_commit_can_be_followed(tmp_path, gh):
    main = gh.publish("owner", "wiki", "main", tarball(demo_files()))
    files = {**demo_files(), "notes/branch.md": b"# On a branch\n"}
    branch = gh.publish("owner", "wiki", "feature/x", tarball(files))
    with follower(tmp_path, gh, "github:owner/wiki@feature/x") as f:
        assert f.fetch().live.commit == branch
    assert any(r.path == "/repos/owner/wiki/commits/feature%2Fx" for r in gh.requests)
    with follower(tmp_path, gh, f"github:owner/wiki@{main}") as f:
        outcome = f.fetch()
        assert outcome.changed and outcome.live.commit == main, "another source: fetched afresh"


def test_follow_updates_the_index_incrementally_and_finds_the_new_text(tmp_path, gh):
    files = demo_files()
    gh.publish("owner", "wiki", "main", tarball(files))
    with follower(tmp_path, gh) as f:
        live = f.ensure()
        kb = KnowledgeBase.open(live.path, tmp_path / "data", link_base=live.link_base)
        try:
            nothing = f.follow(kb)
            assert not nothing.outcome.changed and nothing.built is None
            page = files["optimization/nccl-tuning.md"].decode()
            files["optimization/nccl-tuning.md"] = (
                page + "\n## Zanzibar Quokka\n\nText.\n"
            ).encode()
            sha = gh.publish("owner", "wiki", "main", tarball(files))
            result = f.follow(kb)
            assert result.outcome.changed and result.built is not None
            assert (result.built.mode, result.built.changed_pages) == ("incremental", 1)
            assert kb.wiki_dir == result.outcome.live.path
            found = kb.search("zanzibar quokka")
            assert found.pages[0].path == "optimization/nccl-tuning.md"
            assert kb.url("README.md") == f"{gh.url}/owner/wiki/blob/{sha}/README.md"
            assert result.announcement is None, "a new section is nothing to announce"
        finally:
            kb.close()


def test_follow_parses_a_changed_page_once_for_the_check_and_the_reload(tmp_path, gh, monkeypatch):
    from knowledge.wiki import pagefile as wiki_load

    files = demo_files()
    gh.publish("owner", "wiki", "main", tarball(files))
    with follower(tmp_path, gh) as f:
        live = f.ensure()
        kb = KnowledgeBase.open(live.path, tmp_path / "data", link_base=live.link_base)
        try:
            parsed: list[str] = []
            parse = wiki_load.parse_page

            def counting(path: str, text: str, **kwargs):
                parsed.append(path)
                return parse(path, text, **kwargs)

            monkeypatch.setattr(wiki_load, "parse_page", counting)
            path = "optimization/nccl-tuning.md"
            files[path] = files[path] + b"\n## Zanzibar Quokka\n\nText.\n"
            gh.publish("owner", "wiki", "main", tarball(files))
            result = f.follow(kb)
            assert result.outcome.changed
            assert parsed == [path]
            assert kb.search("zanzibar quokka").pages[0].path == path
        finally:
            kb.close()


# --- rate limits, server errors, the network --------------------------------------------


def test_403_with_an_exhausted_rate_limit_fails_at_once_saying_when(tmp_path, gh):
    import time

    gh.publish("owner", "wiki", "main", tarball(demo_files()))
    reset = int(time.time()) + 3600
    gh.fault("commits", Fault(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)}))
    sleeps: list[float] = []
    with follower(tmp_path, gh, sleeps=sleeps, token="") as f, pytest.raises(RateLimited) as caught:
        f.fetch()
    assert sleeps == [] and gh.count("/commits/") == 1, "an hour's wait is not waited out"
    assert "rate limited (403)" in str(caught.value) and "GITHUB_TOKEN" in str(caught.value)
    state = f.state()
    assert abs(state.retry_at - reset) < 5 and "rate limited" in state.last_error
    assert f.live() is None


def test_429_with_retry_after_is_waited_out(tmp_path, gh):
    sha = gh.publish("owner", "wiki", "main", tarball(demo_files()))
    gh.fault("commits", Fault(429, {"Retry-After": "7"}))
    sleeps: list[float] = []
    with follower(tmp_path, gh, sleeps=sleeps) as f:
        assert f.fetch().live.commit == sha
    assert sleeps == [7.0] and gh.count("/commits/") == 2


def test_a_500_is_retried_with_backoff_then_succeeds(tmp_path, gh):
    sha = gh.publish("owner", "wiki", "main", tarball(demo_files()))
    gh.fault("codeload", Fault(500), Fault(503))
    sleeps: list[float] = []
    with follower(tmp_path, gh, sleeps=sleeps) as f:
        assert f.fetch().live.commit == sha
    assert len(sleeps) == 2 and all(0 <= s <= 0.05 for s in sleeps)
    assert gh.count("/codeload/") == 3


def test_server_errors_every_time_give_up_and_keep_the_live_wiki(tmp_path, gh):
    files = demo_files()
    first = gh.publish("owner", "wiki", "main", tarball(files))
    with follower(tmp_path, gh, attempts=3) as f:
        f.fetch()
        gh.publish("owner", "wiki", "main", tarball({**files, "notes/n.md": b"# N\n"}))
        gh.fault("codeload", *[Fault(502)] * 3)
        with pytest.raises(FetchError, match=r"server error \(502\) \(gave up after 3 tries\)"):
            f.fetch()
        assert f.live().commit == first
        assert f.state().etag == f'"{first}"', "the ETag of a commit never installed is not kept"
        assert f.fetch().changed, "the next check fetches the new commit"


def test_a_stalled_body_times_out_and_is_retried(tmp_path, gh):
    sha = gh.publish("owner", "wiki", "main", tarball(demo_files()))
    gh.fault("codeload", Fault(hold=True))
    with follower(tmp_path, gh, read_timeout=0.5) as f:
        gh.release.clear()
        assert f.fetch().live.commit == sha
    assert gh.count("/codeload/") == 2


def test_a_slow_answer_every_time_fails_saying_it_timed_out(tmp_path, gh):
    gh.publish("owner", "wiki", "main", tarball(demo_files()))
    gh.fault("commits", Fault(delay=1.0), Fault(delay=1.0))
    with follower(tmp_path, gh, read_timeout=0.2, attempts=2) as f:
        with pytest.raises(FetchError, match=r"timed out.*gave up after 2 tries"):
            f.fetch()
        assert f.live() is None


def test_a_connection_dropped_mid_download_is_retried(tmp_path, gh):
    sha = gh.publish("owner", "wiki", "main", tarball(demo_files()))
    gh.fault("codeload", Fault(drop_after=1000))
    with follower(tmp_path, gh) as f:
        assert f.fetch().live.commit == sha
    assert gh.count("/codeload/") == 2


def test_a_download_over_the_cap_is_refused(tmp_path, gh):
    archive = tarball(demo_files())
    gh.publish("owner", "wiki", "main", archive)
    with follower(tmp_path, gh, caps=Caps(download_bytes=len(archive) // 2)) as f:
        with pytest.raises(TooLarge):
            f.fetch()
        assert f.live() is None


def test_a_redirect_to_another_host_is_refused(tmp_path, gh):
    gh.publish("owner", "wiki", "main", tarball(demo_files()))
    gh.fault("tarball", Fault(302, {"Location": "http://evil.example/x.tar.gz"}, b""))
    with follower(tmp_path, gh) as f, pytest.raises(FetchError, match="refused a redirect"):
        f.fetch()


# --- refused archives -----------------------------------------------------------------


def test_a_truncated_tarball_leaves_the_live_wiki(tmp_path, gh):
    files = demo_files()
    first = gh.publish("owner", "wiki", "main", tarball(files))
    with follower(tmp_path, gh) as f:
        f.fetch()
        whole = tarball({**files, "notes/n.md": b"# N\n"})
        gh.publish("owner", "wiki", "main", whole[: len(whole) * 2 // 3])
        with pytest.raises(ArchiveError, match="truncated or corrupt"):
            f.fetch()
        assert f.live().commit == first
        assert "truncated" in f.state().last_error
        assert generations(tmp_path) == [f"c-{first}"]
        assert not [
            p for p in (tmp_path / "data" / "fetched").iterdir() if p.name.startswith(".tmp-")
        ]


@pytest.mark.parametrize(
    ("name", "words"),
    [("../escape.md", "'..'"), ("/abs.md", "absolute")],
)
def test_a_hostile_tarball_is_refused_end_to_end(tmp_path, gh, name, words):
    import gzip
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for member_name in ("README.md", name):
            info = tarfile.TarInfo(member_name)
            info.size = 4
            tar.addfile(info, io.BytesIO(b"# x\n"))
    gh.publish("owner", "wiki", "main", gzip.compress(buf.getvalue()))
    with follower(tmp_path, gh) as f, pytest.raises(ArchiveError, match=words):
        f.fetch()
    assert not (tmp_path / "escape.md").exists() and not Path("/abs.md").exists()


def test_a_missing_ref_or_repository_is_said_plainly(tmp_path, gh):
    gh.publish("owner", "wiki", "main", tarball(demo_files()))
    with (
        follower(tmp_path, gh, "github:owner/wiki@no-such-branch") as f,
        pytest.raises(NotFound) as caught,
    ):
        f.fetch()
    assert "no branch, tag or commit 'no-such-branch'" in str(caught.value)
    with (
        follower(tmp_path, gh, "github:owner/nope") as f,
        pytest.raises(NotFound, match="no such repository"),
    ):
        f.fetch()


# --- a plain URL of a tarball ----------------------------------------------------------------


def test_a_url_source_uses_etags_and_content_hashes(tmp_path, gh):
    files = demo_files()
    gh.files["wiki.tar.gz"] = tarball(files)
    with follower(tmp_path, gh, f"{gh.url}/files/wiki.tar.gz") as f:
        first = f.fetch()
        assert first.changed and first.live.id.startswith("u") and first.live.commit == ""
        again = f.fetch()
        assert not again.changed
        assert [r.headers.get("If-None-Match") for r in gh.requests][-1] is not None
        gh.files["wiki.tar.gz"] = tarball({**files, "notes/n.md": b"# N\n"})
        assert f.fetch().changed
    assert all("Authorization" not in r.headers for r in gh.requests), "no token to other hosts"


def test_a_rebuilt_store_survives_a_lost_state_file(tmp_path, gh):
    sha = gh.publish("owner", "wiki", "main", tarball(demo_files()))
    with follower(tmp_path, gh) as f:
        f.fetch()
        (tmp_path / "data" / "fetched" / "state.json").write_text("{not json")
        outcome = f.fetch()
    assert not outcome.changed and outcome.live.commit == sha
    shutil.rmtree(tmp_path / "data")


# --- the same content under another source string ---------------------------------------


@pytest.mark.parametrize(
    "second",
    ["github:owner/wiki@main", "github:fork/wiki", "github:fork/wiki@main"],
    ids=["pinned-branch", "fork", "fork-branch"],
)
def test_the_same_commit_under_another_source_serves_the_live_generation(tmp_path, gh, second):
    archive = tarball(demo_files())
    sha = gh.publish("owner", "wiki", "main", archive)
    assert gh.publish("fork", "wiki", "main", archive) == sha  # a fork at that commit
    with follower(tmp_path, gh) as f:
        first = f.fetch().live
    with follower(tmp_path, gh, second) as f:
        outcome = f.fetch()
        assert f.fetch().changed is False  # and again: no error, nothing fetched
    assert outcome.changed is False and outcome.live.id == first.id == sha
    assert outcome.live.path == first.path and generations(tmp_path) == [f"c-{sha}"]
    assert outcome.live.source == second
    owner = second.split(":")[1].split("/")[0]
    assert outcome.live.link_base == f"{gh.url}/{owner}/wiki/blob/{sha}/"
    state = json.loads((tmp_path / "data" / "fetched" / "state.json").read_text())
    assert state["source"] == second and state["last_error"] is None
    assert gh.count("/codeload/") == 1  # downloaded once


def test_the_same_tarball_at_another_url_serves_the_live_generation(tmp_path, gh):
    gh.files["a.tar.gz"] = gh.files["b.tar.gz"] = tarball(demo_files())
    with follower(tmp_path, gh, f"{gh.url}/files/a.tar.gz") as f:
        first = f.fetch().live
    with follower(tmp_path, gh, f"{gh.url}/files/b.tar.gz") as f:
        outcome = f.fetch()
    assert outcome.changed is False and outcome.live.id == first.id
    assert outcome.live.source == f"{gh.url}/files/b.tar.gz"
