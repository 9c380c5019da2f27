"""``wikibot serve`` as a service: stopped by a signal, in a process of its own.

The bot runs as ``wikibot serve`` in a child process (``tests.discord_standin.serve_process``)
against a stand-in served by this process, so the signal handling, the exit code and
the log are the real command's.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowledge.service import KnowledgeBase, demo_wiki_dir
from tests.bot.helpers import LINK_BASE
from tests.bot.test_support import STEP1, button_id, through_step_1, through_step_2
from tests.discord_standin import DEFAULT_IDS
from tests.discord_standin.server import Standin
from tests.support import ROOT

#: A hang, not a speed limit: the child is killed after this and the test fails.
HANG = 60.0


class HeldPosts(Standin):
    """A stand-in that holds each new forum post until the test releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.post_arrived = asyncio.Event()
        self.release_post = asyncio.Event()

    async def _create_thread(self, request: Any) -> Any:
        self.post_arrived.set()
        await self.release_post.wait()
        return await super()._create_thread(request)


def _config(tmp_path: Path, data: Path) -> Path:
    config = {
        "discord": {"guild_ids": [DEFAULT_IDS.guild]},
        "wiki": {
            "path": str(demo_wiki_dir()),
            "data_dir": str(data),
            "link_base": LINK_BASE,
            "refresh_minutes": 0,
        },
        "support": {"forum_channel_id": DEFAULT_IDS.forum, "rate_count": 100},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _spawn(port: int, config: Path, log: Path, token: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DISCORD_TOKEN": token,
        "PYTHONUNBUFFERED": "1",
        # JSON lines, at DEBUG: every line of the process, discord.py's too, is checked.
        "WIKIBOT_LOG_FORMAT": "json",
        "WIKIBOT_LOG_LEVEL": "DEBUG",
    }
    launcher = [sys.executable, "-m", "tests.discord_standin.serve_process", str(port)]
    return subprocess.Popen(
        [*launcher, "serve", "--config", str(config)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )


async def _until(predicate: Any, what: str, child: subprocess.Popen[bytes], log: Path) -> None:
    loop = asyncio.get_running_loop()
    give_up = loop.time() + HANG
    while not predicate():
        if child.poll() is not None:
            pytest.fail(f"the bot exited ({child.returncode}) before {what}:\n{log.read_text()}")
        if loop.time() > give_up:
            pytest.fail(f"waited {HANG:.0f} s for {what}:\n{log.read_text()}")
        await asyncio.sleep(0.05)


def test_sigterm_in_the_middle_of_a_filing_lets_it_finish_then_exits_0(tmp_path):
    data = tmp_path / "data"
    KnowledgeBase.open(demo_wiki_dir(), data, link_base=LINK_BASE).close()  # index built
    config = _config(tmp_path, data)
    log = tmp_path / "serve.log"
    figures: dict[str, float] = {}

    async def scenario() -> dict[str, Any]:
        ds = HeldPosts()
        ds.config.response_deadline = 3.0
        await ds.start()
        child = _spawn(ds.port, config, log, ds.config.token)
        try:
            # Ready: connected, commands synced, and the heartbeat written (after ready).
            await _until(lambda: (data / "heartbeat.json").exists(), "the heartbeat", child, log)
            _, _, saved = await through_step_1(ds)
            _, check = await through_step_2(ds, saved)
            press = await ds.press(check, button_id(check, "File the ticket"), wait=False)
            await asyncio.wait_for(ds.post_arrived.wait(), HANG)  # the filing is under way
            child.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            # The gateway closes at once; the post is still being made.
            await _until(lambda: ds._ws is None, "the gateway to close", child, log)
            assert child.poll() is None, "the bot exited with a filing in flight"
            figures["gateway_closed_s"] = time.monotonic() - signalled
            await asyncio.sleep(1.0)  # the post held a while longer: the bot waits for it
            assert child.poll() is None, "the bot exited with a filing in flight"
            ds.release_post.set()
            loop = asyncio.get_running_loop()
            code = await loop.run_in_executor(None, child.wait, HANG)
            figures["exit_s"] = time.monotonic() - signalled
            answer = await press.answer()
            return {"code": code, "answer": answer.shown, "threads": dict(ds.threads)}
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            await ds.close()

    result = asyncio.run(scenario())
    text = log.read_text()
    print(f"\nstop figures: {figures}, exit code {result['code']}")
    assert result["code"] == 0, text
    entries = [json.loads(line) for line in text.splitlines()]  # every line is an object
    assert all(set(e) >= {"time", "level", "logger", "message"} for e in entries)
    assert {"discord.client", "discord.gateway"} <= {e["logger"] for e in entries}
    assert not [e for e in entries if e["level"] in ("ERROR", "CRITICAL") or "exception" in e]
    messages = [e["message"] for e in entries]
    assert any("SIGTERM received" in m for m in messages)
    assert any(m.startswith("stopped in") for m in messages)
    assert not [m for m in messages if "voice" in m], "no warning about voice libraries"
    # What the user typed and uploaded never reaches the log, even at DEBUG.
    assert STEP1["text"] not in text and "APIServer" not in text and "\x1b[" not in text
    # The filing finished: the post was made, the asker told, and the ticket is whole.
    # (the outcome stands above the wiki's answer on the checked message)
    assert result["answer"]["content"].startswith("**Ticket #1 filed**"), result["answer"]
    (thread_id,) = result["threads"]
    with sqlite3.connect(data / "tickets.sqlite3") as db:
        rows = db.execute("SELECT id, status, thread_id FROM tickets").fetchall()
    assert rows == [(1, "open", int(thread_id))]
    # Within the grace the bot gives its work (7 s), well inside Docker's 10 s.
    assert figures["exit_s"] < 5.0, figures


def test_leaving_the_bot_context_waits_for_a_stop_to_close_the_stores(discord_standin, tmp_path):
    """``serve`` runs the bot in ``async with bot``, then the loop ends. discord.py's exit
    waits only for its own part of closing (gateway, HTTP), and the loop's end then
    cancelled a stop still closing the index and the stores ("stopped in" was never
    logged: seen with ``docker stop`` of an idle bot in the image)."""
    import time as clock

    from bot.client import WikiBot
    from tests.bot.helpers import make_config

    config = make_config(wiki={"data_dir": str(tmp_path / "data")})
    closed: list[str] = []

    async def scenario(ds):
        bot = ds.client
        kb = bot.kb
        real_close = kb.close

        def slow_close() -> None:  # a store flushing to a slow disk, in its thread
            clock.sleep(0.3)
            real_close()
            closed.append("index and stores")

        kb.close = slow_close
        stopping = asyncio.create_task(bot.stop())
        while bot._closing_task is None:  # the stop has reached discord.py's close
            await asyncio.sleep(0.001)
        await bot.__aexit__(None, None, None)
        return stopping.done(), list(closed)

    stop_done, closed_when_exited = discord_standin.run(
        lambda **kw: WikiBot(config, **kw), scenario
    )
    assert closed_when_exited == ["index and stores"] and stop_done


def test_a_stop_waits_for_handlers_only_as_long_as_its_grace_then_cuts_them_short(
    discord_standin, caplog
):
    """Work that never ends cannot hold the stop past ``stop_grace``; tasks that are not
    a user's work (a view's timeout) are not waited for at all."""
    from bot.client import WikiBot
    from tests.bot.helpers import demo_kb, make_config

    def factory(**kwargs: Any) -> WikiBot:
        return WikiBot(make_config(), knowledge=demo_kb(), stop_grace=0.3, **kwargs)

    async def scenario(ds):
        bot = ds.client
        loop = asyncio.get_running_loop()
        stuck = asyncio.create_task(asyncio.sleep(3600), name="CommandTree-invoker")
        quick = asyncio.create_task(asyncio.sleep(0.05), name="discord-ui-modal-dispatch-1")
        other = asyncio.create_task(asyncio.sleep(3600), name="discord-ui-view-timeout-1")
        started = loop.time()
        await bot.stop()
        took = loop.time() - started
        result = (stuck.cancelled(), quick.done() and not quick.cancelled(), other.done(), took)
        other.cancel()
        return result, bot.is_closed()

    with caplog.at_level("INFO", logger="bot.client"):
        (stuck_cancelled, quick_done, other_done, took), closed = discord_standin.run(
            factory, scenario
        )
    assert stuck_cancelled and quick_done and not other_done and closed
    assert took < 5.0  # a hang guard: the grace is 0.3 s
    assert any(
        "cut short" in r.getMessage() and "CommandTree-invoker" in r.getMessage()
        for r in caplog.records
    )
