"""Upkeep: the periodic wiki refresh, the heartbeat file and ``wikibot health``.

The bot's part runs end to end through the Discord stand-in, with the loops'
intervals shortened to fractions of a second (``WikiBot(refresh_interval=...,
heartbeat_interval=...)``); waits poll for the outcome, nothing is timed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.client import WikiBot
from bot.config import ConfigError, load_config
from bot.heartbeat import (
    Heartbeat,
    check_heartbeat,
    heartbeat_path,
    read_heartbeat,
    write_heartbeat,
)
from knowledge.service import KnowledgeBase, demo_wiki_dir
from knowledge.wiki import load_wiki
from tests.bot.helpers import EPHEMERAL, LINK_BASE, bot_factory, embed_of, make_config
from tests.discord_standin import DEFAULT_IDS

ROOT = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "wiki").mkdir(exist_ok=True)
    path = tmp_path / "config.yaml"
    path.write_text(f"wiki:\n  path: wiki\n  data_dir: data\n{extra}", encoding="utf-8")
    return path


def beat(*, age: float = 0.0, connected: bool = True) -> Heartbeat:
    return Heartbeat(
        time=time.time() - age, pid=4242, revision="abc123def456", guilds=3, connected=connected
    )


# --- wiki.refresh_minutes ---------------------------------------------------------


def test_refresh_minutes_defaults_to_ten_and_zero_turns_it_off(tmp_path):
    assert load_config(write_config(tmp_path)).refresh_minutes == 10
    off = write_config(tmp_path, "  refresh_minutes: 0\n")
    assert load_config(off).refresh_minutes == 0
    half_hour = write_config(tmp_path, "  refresh_minutes: 30\n")
    assert load_config(half_hour).refresh_minutes == 30


@pytest.mark.parametrize(
    ("value", "hint"),
    [("ten", "'ten'"), ("-5", "-5"), ("0.5", "0.5"), ("5000", "5000"), ("true", "True")],
)
def test_a_bad_refresh_minutes_names_the_key(tmp_path, value, hint):
    path = write_config(tmp_path, f"  refresh_minutes: {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: wiki.refresh_minutes: "), message
    assert hint in message and "minutes" in message


# --- the heartbeat file --------------------------------------------------------------


def test_heartbeat_is_replaced_atomically_and_reads_back(tmp_path):
    path = heartbeat_path(tmp_path / "data")
    write_heartbeat(path, beat(connected=False))
    write_heartbeat(path, beat())
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) == {"time", "pid", "revision", "guilds", "connected"}
    assert data["connected"] is True and data["guilds"] == 3
    assert data["time"].endswith("+00:00"), "an explicit UTC time, readable by people"
    assert os.listdir(path.parent) == ["heartbeat.json"], "no temp file left behind"


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("{not json", "not JSON"),
        ('["a list"]', "JSON object"),
        ('{"time": "2025-01-01T00:00:00+00:00", "pid": 1, "revision": "x", "guilds": 1}', "conn"),
        (
            '{"time": "yesterday", "pid": 1, "revision": "x", "guilds": 1, "connected": true}',
            "ISO 8601",
        ),
        (
            '{"time": "2025-01-01T00:00:00", "pid": 1, "revision": "x", "guilds": 1,'
            ' "connected": true}',
            "time zone",
        ),
    ],
)
def test_an_unusable_heartbeat_is_unhealthy_and_says_why(tmp_path, text, hint):
    path = heartbeat_path(tmp_path)
    path.write_text(text, encoding="utf-8")
    verdict = check_heartbeat(path)
    assert verdict.status == "unreadable" and not verdict.ok
    assert hint in verdict.error


# --- wikibot health ----------------------------------------------------------------


def health(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["health", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_health_is_0_for_a_fresh_connected_heartbeat(tmp_path, capsys):
    config = write_config(tmp_path)
    write_heartbeat(heartbeat_path(tmp_path / "data"), beat(age=5))
    code, out, err = health(capsys, "--config", str(config))
    assert (code, err) == (0, "")
    (line,) = out.splitlines()
    assert line.startswith("healthy:") and "3 servers" in line and "abc123def456" in line


def test_health_is_1_without_a_heartbeat(tmp_path, capsys):
    config = write_config(tmp_path)
    code, out, err = health(capsys, "--config", str(config))
    assert (code, out) == (1, "")
    (line,) = err.splitlines()
    assert "no heartbeat yet" in line and str(tmp_path / "data" / "heartbeat.json") in line


def test_health_is_1_for_a_stale_heartbeat_and_says_by_how_much(tmp_path, capsys):
    config = write_config(tmp_path)
    write_heartbeat(heartbeat_path(tmp_path / "data"), beat(age=299.9))
    code, out, err = health(capsys, "--config", str(config))
    assert (code, out) == (1, "")
    (line,) = err.splitlines()
    assert "stale by 180 s" in line and "pid 4242" in line
    # The same heartbeat is fresh enough for a more patient check.
    code, out, _ = health(capsys, "--config", str(config), "--max-age", "600")
    assert code == 0 and out.startswith("healthy:")


def test_health_is_1_when_the_bot_says_it_is_disconnected(tmp_path, capsys):
    config = write_config(tmp_path)
    write_heartbeat(heartbeat_path(tmp_path / "data"), beat(connected=False))
    code, _, err = health(capsys, "--config", str(config))
    assert code == 1 and "not connected to Discord" in err


def test_health_finds_the_data_folder_as_the_bot_does(tmp_path, capsys, monkeypatch):
    from knowledge.service import default_data_dir

    # No wiki.data_dir: the per-wiki folder under $WIKIBOT_DATA, as in the Docker image.
    (tmp_path / "wiki").mkdir()
    config = tmp_path / "config.yaml"
    config.write_text("wiki:\n  path: wiki\n", encoding="utf-8")
    monkeypatch.setenv("WIKIBOT_DATA", str(tmp_path / "volume"))
    monkeypatch.setenv("WIKIBOT_CONFIG", str(config))
    data_dir = default_data_dir(tmp_path / "wiki")
    assert data_dir.is_relative_to(tmp_path / "volume")
    write_heartbeat(heartbeat_path(data_dir), beat())
    code, out, _ = health(capsys)  # the config from $WIKIBOT_CONFIG
    assert code == 0 and out.startswith("healthy:")


def test_health_with_a_bad_config_is_1_never_2(tmp_path, capsys):
    # Docker reserves exit code 2; a health check must answer 0 or 1.
    code, out, err = health(capsys, "--config", str(tmp_path / "missing.yaml"))
    assert (code, out) == (1, "")
    (line,) = err.splitlines()
    assert line.startswith("unhealthy:") and "missing.yaml" in line


def test_python_m_bot_cli_health_runs_without_discord(tmp_path):
    config = write_config(tmp_path)
    code = (
        "import sys\n"
        "from bot.cli import main\n"
        f"code = main(['health', '--config', {str(config)!r}])\n"
        "assert 'discord' not in sys.modules\n"
        "sys.exit(code)\n"
    )
    missing = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert missing.returncode == 1, missing.stderr
    assert "no heartbeat yet" in missing.stderr
    write_heartbeat(heartbeat_path(tmp_path / "data"), beat())
    fresh = subprocess.run(
        [sys.executable, "-m", "bot.cli", "health", "--config", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.startswith("healthy:") and len(fresh.stdout.splitlines()) == 1


# --- the refresh loop, end to end ---------------------------------------------------

#: Seconds between two refreshes in these tests (the config's minutes are for real use).
TICK = 0.05


def fresh_kb(tmp_path: Path) -> KnowledgeBase:
    """The demo wiki copied to ``tmp_path``, so a test may edit its pages."""
    wiki = tmp_path / "wiki"
    shutil.copytree(demo_wiki_dir(), wiki)
    return KnowledgeBase.open(wiki, tmp_path / "data", link_base=LINK_BASE)


def edit(path: Path, old: str, new: str) -> str:
    """Replace ``old`` by ``new`` in a page as an editor or ``git pull`` would (new file,
    renamed over the old one); the wiki's revision once the edit is loaded."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text.replace(old, new, 1), encoding="utf-8")
    os.replace(tmp, path)
    return load_wiki(path.parent).revision


def upkeep(standin):
    return standin.client.get_cog("UpkeepCog")


NEW_ROW = "| NEWTERM | Newly Written Term | Added while the bot was running. |\n"


def _said(text: str, caplog: pytest.LogCaptureFixture) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


def test_the_refresh_loop_picks_up_a_glossary_edit(discord_standin, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="bot.exts.upkeep")
    kb = fresh_kb(tmp_path)
    glossary = kb.wiki_dir / "GLOSSARY.md"
    old_revision = kb.wiki.revision

    async def scenario(standin):
        before = await standin.slash("acronym", term="NEWTERM")
        await before.answer()
        revision = edit(glossary, "| TP | Tensor", NEW_ROW + "| TP | Tensor")
        # The refresh is over once it has said so (the new state is live a little earlier).
        await standin.wait_until(
            lambda: (kb.wiki.revision == revision and _said("wiki refreshed", caplog)) or None,
            what="the refresh",
            poll=0.01,
        )
        after = await standin.slash("acronym", term="NEWTERM")
        return before, after, revision

    before, after, revision = discord_standin.run(
        bot_factory(kb=kb, refresh_interval=TICK), scenario
    )
    assert "not in the glossary" in embed_of(before.original)["title"]
    assert after.response.callback_type == 4, "now a glossary hit, answered at once"
    embed = embed_of(after.response.message)
    assert embed["title"] == "NEWTERM" and "Newly Written Term" in embed["description"]
    (logged,) = [r.getMessage() for r in caplog.records if "wiki refreshed" in r.getMessage()]
    assert f"revision {old_revision} -> {revision}" in logged
    assert "index incremental" in logged and "changed GLOSSARY.md" in logged


def test_a_failing_refresh_is_logged_and_the_loop_goes_on(
    discord_standin, tmp_path, monkeypatch, caplog
):
    caplog.set_level(logging.INFO, logger="bot.exts.upkeep")
    kb = fresh_kb(tmp_path)
    real_reload = kb.reload
    armed = threading.Event()  # set once the scenario expects the error logs
    failures = []

    def failing_twice(**kwargs):
        if not armed.is_set():
            return real_reload(**kwargs)
        if len(failures) < 2:
            failures.append(kwargs)
            raise OSError("wiki folder unreadable")
        return real_reload(**kwargs)

    monkeypatch.setattr(kb, "reload", failing_twice)

    async def scenario(standin):
        standin.expect_error_log("wiki refresh failed")
        armed.set()
        await standin.wait_until(lambda: len(failures) == 2 or None, what="failures", poll=0.01)
        revision = edit(kb.wiki_dir / "GLOSSARY.md", "| TP | Tensor", NEW_ROW + "| TP | Tensor")
        await standin.wait_until(
            lambda: kb.wiki.revision == revision or None, what="a refresh that works", poll=0.01
        )
        assert (await standin.slash("acronym", term="NEWTERM")).response.callback_type == 4
        # the "works again" line is written once reload has returned, after the swap
        await standin.wait_until(
            lambda: any("works again" in r.getMessage() for r in caplog.records) or None,
            what="the recovery logged",
            poll=0.01,
        )
        loop = upkeep(standin).refresh
        return loop.is_running(), loop.failed()

    running, failed = discord_standin.run(bot_factory(kb=kb, refresh_interval=TICK), scenario)
    assert running and not failed
    assert len(failures) == 2
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [bool(r.exc_info) for r in errors] == [True, False], "one traceback, then a line"
    assert "wiki folder unreadable" in str(errors[0].exc_info[1])
    assert "2 in a row" in errors[1].getMessage()
    assert any("works again after 2 failures" in r.getMessage() for r in caplog.records)


def test_refresh_and_reindex_never_run_at_once(discord_standin, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="bot.exts.upkeep")
    kb = fresh_kb(tmp_path)
    real_reload = kb.reload
    calls = []
    refreshing, release = threading.Event(), threading.Event()

    def held_refresh(**kwargs):  # in a worker thread
        calls.append(kwargs)
        if len(calls) == 1:
            refreshing.set()
            release.wait(10)
        return real_reload(**kwargs)

    monkeypatch.setattr(kb, "reload", held_refresh)

    def skipped():
        return sum("refresh skipped" in r.getMessage() for r in caplog.records)

    async def scenario(standin):
        # A refresh is running: /wiki reindex says so instead of starting a second reload.
        await standin.wait_until(lambda: refreshing.is_set() or None, what="a refresh", poll=0.01)
        busy = await standin.slash("wiki reindex", user_id=DEFAULT_IDS.owner)
        release.set()
        lock = standin.client.reload_lock
        await standin.wait_until(
            lambda: not lock.locked() or None, what="the refresh to end", poll=0.01
        )
        # A reindex is running (it holds the lock): ticks are skipped, not queued.
        async with lock:
            reloads = len(calls)
            await standin.wait_until(lambda: skipped() >= 3 or None, what="skips", poll=0.01)
            skipped_reloads = len(calls) - reloads
        await standin.wait_until(
            lambda: len(calls) > reloads or None, what="the next refresh", poll=0.01
        )
        return busy, skipped_reloads

    busy, skipped_reloads = discord_standin.run(bot_factory(kb=kb, refresh_interval=TICK), scenario)
    assert busy.response.callback_type == 4 and busy.response.message["flags"] & EPHEMERAL
    embed = embed_of(busy.response.message)
    assert embed["title"] == "Reindex not started"
    assert "being re-read already" in embed["description"]
    assert not any(call.get("force") for call in calls), "the reindex never ran"
    assert skipped_reloads == 0


def test_shutdown_waits_for_a_refresh_in_progress(discord_standin, tmp_path, monkeypatch):
    kb = fresh_kb(tmp_path)
    real_reload = kb.reload
    started, finished = threading.Event(), threading.Event()

    def slow_reload(**kwargs):
        started.set()
        time.sleep(0.3)
        built = real_reload(**kwargs)
        finished.set()
        return built

    monkeypatch.setattr(kb, "reload", slow_reload)
    seen_at_close = []

    def factory(**kwargs):
        bot = WikiBot(make_config(), knowledge=kb, refresh_interval=TICK, **kwargs)
        close = bot.close

        async def close_and_look():
            await close()
            seen_at_close.append(finished.is_set())

        bot.close = close_and_look
        return bot

    async def scenario(standin):
        await standin.wait_until(lambda: started.is_set() or None, what="a refresh", poll=0.01)

    discord_standin.run(factory, scenario)
    assert seen_at_close == [True], "close() returned only after the refresh had finished"


def test_refresh_minutes_0_turns_the_loop_off(discord_standin):
    config = make_config(wiki={"refresh_minutes": 0})

    async def scenario(standin):
        cog = upkeep(standin)
        return cog.refresh.is_running(), cog.heartbeat.is_running()

    assert discord_standin.run(bot_factory(config), scenario) == (False, True)


# --- the heartbeat, end to end ------------------------------------------------------


def test_heartbeat_is_written_while_the_bot_runs_and_health_follows_it(
    discord_standin, tmp_path, capsys
):
    kb = fresh_kb(tmp_path)
    path = heartbeat_path(kb.data_dir)
    config = tmp_path / "config.yaml"
    config.write_text(f"wiki:\n  path: {kb.wiki_dir}\n  data_dir: {kb.data_dir}\n")

    def beat_after(after: float, *, connected: bool):
        def check():
            try:
                found = read_heartbeat(path)
            except FileNotFoundError:
                return None
            return found if found.time > after and found.connected is connected else None

        return check

    async def scenario(standin):
        first = await standin.wait_until(beat_after(0, connected=True), poll=0.01)
        again = await standin.wait_until(beat_after(first.time, connected=True), poll=0.01)
        healthy = main(["health", "--config", str(config)])
        standin.client.dispatch("disconnect")  # as discord.py does when the gateway drops
        down = await standin.wait_until(beat_after(again.time, connected=False), poll=0.01)
        standin.client.dispatch("resumed")
        await standin.wait_until(beat_after(down.time, connected=True), poll=0.01)
        return first, healthy

    first, healthy = discord_standin.run(bot_factory(kb=kb, heartbeat_interval=TICK), scenario)
    assert first.pid == os.getpid() and first.revision == kb.wiki.revision
    assert first.guilds == 1 and first.connected
    assert healthy == 0
    # The last heartbeat, written at shutdown, says the bot is gone from Discord.
    assert read_heartbeat(path).connected is False
    capsys.readouterr()
    assert main(["health", "--config", str(config)]) == 1
    assert "not connected to Discord" in capsys.readouterr().err


def test_the_last_heartbeat_lands_after_a_loop_beat_still_being_written(
    discord_standin, tmp_path, monkeypatch
):
    """A loop's beat cancelled at shutdown goes on in its thread: it must not overwrite
    the last beat, which says the bot is gone."""
    import bot.exts.upkeep._cog as upkeep

    kb = fresh_kb(tmp_path)
    path = heartbeat_path(kb.data_dir)
    slow = threading.Event()
    started = threading.Event()
    last_requested = threading.Event()
    real_write = upkeep.write_heartbeat

    def write(target, beat):
        if not beat.connected:
            last_requested.set()
        elif slow.is_set() and not started.is_set():
            started.set()
            # Without ordering, the last beat is written meanwhile and this one lands after.
            last_requested.wait(timeout=1.0)
        real_write(target, beat)

    monkeypatch.setattr(upkeep, "write_heartbeat", write)

    async def scenario(standin):
        await standin.wait_until(lambda: path.exists() or None, poll=0.01)
        slow.set()
        await standin.wait_until(lambda: started.is_set() or None, poll=0.01)

    discord_standin.run(bot_factory(kb=kb, heartbeat_interval=TICK), scenario)
    assert last_requested.is_set()
    assert read_heartbeat(path).connected is False


def test_a_refresh_loads_and_builds_the_ranker_with_automatic_gc_off(
    discord_standin, tmp_path, monkeypatch
):
    """Each automatic full collection over what a load makes holds the interpreter lock
    (the event loop stalls): the refresh's reload and its ranker build run without."""
    import gc

    from knowledge.answers import WikiState

    kb = fresh_kb(tmp_path)
    glossary = kb.wiki_dir / "GLOSSARY.md"
    seen: dict[str, bool] = {}
    real_reload = kb.reload
    real_ranker = WikiState.ranker

    def reload(**kwargs):
        seen.setdefault("reload", gc.isenabled())
        return real_reload(**kwargs)

    def ranker(state):
        if "reload" in seen:
            seen.setdefault("ranker", gc.isenabled())
        return real_ranker.fget(state)

    monkeypatch.setattr(kb, "reload", reload)
    monkeypatch.setattr(WikiState, "ranker", property(ranker))

    async def scenario(standin):
        edit(glossary, "| TP | Tensor", NEW_ROW + "| TP | Tensor")
        await standin.wait_until(lambda: "ranker" in seen or None, what="the refresh", poll=0.01)
        return await standin.wait_until(lambda: gc.isenabled() or None, poll=0.01)

    discord_standin.run(bot_factory(kb=kb, refresh_interval=TICK), scenario)
    assert seen == {"reload": False, "ranker": False}
    assert gc.isenabled()


def test_a_stop_waits_for_a_refresh_only_within_its_grace(discord_standin, tmp_path, monkeypatch):
    """SIGTERM's stop (WikiBot.stop): a wiki refresh that does not end within the grace
    is left to its thread (a swap is atomic) and the bot closes anyway, saying so."""
    kb = fresh_kb(tmp_path)
    real_reload = kb.reload
    started, release = threading.Event(), threading.Event()

    def stuck_reload(**kwargs):
        started.set()
        release.wait(30)
        return real_reload(**kwargs)

    monkeypatch.setattr(kb, "reload", stuck_reload)

    def factory(**kwargs):
        return WikiBot(make_config(), knowledge=kb, refresh_interval=TICK, stop_grace=0.3, **kwargs)

    async def scenario(standin):
        await standin.wait_until(lambda: started.is_set() or None, what="a refresh", poll=0.01)
        loop = asyncio.get_running_loop()
        begun = loop.time()
        try:
            await standin.client.stop()
            took = loop.time() - begun
        finally:
            release.set()
        return took, standin.client.is_closed()

    took, closed = discord_standin.run(factory, scenario)
    assert closed and took < 10.0  # a hang guard; the grace is 0.3 s
    records = discord_standin.last.log_records
    assert any("did not finish before the stop" in r.getMessage() for r in records)
