"""The process and its edges, each fault injected for real: a closed pipe, a closed
port where Discord should be, a heartbeat dated in the future, a missing token."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot import serve_cli
from bot.cli import main
from bot.heartbeat import Heartbeat, check_heartbeat, heartbeat_path, write_heartbeat
from tests.support import hang_guard

ROOT = Path(__file__).resolve().parents[1]


def _env_without_token() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}


def test_ask_into_a_closed_pipe_ends_quietly(tmp_path):
    # `wikibot ask ... | head -1`: the reader exits after one line.
    env = _env_without_token() | {"WIKIBOT_DATA": str(tmp_path / "data")}
    ask = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "ask", "/runbook glm versions"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert ask.stdout is not None and ask.stderr is not None
    ask.stdout.close()  # nobody reads: the first write hits a closed pipe
    err = ask.stderr.read().decode()
    code = ask.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert code == 141


@pytest.mark.parametrize("command", ["serve", "sync"])
def test_a_missing_token_is_reported_by_the_command_that_needs_it(command, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", command],
        cwd=tmp_path,
        env=_env_without_token() | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"wikibot {command}: DISCORD_TOKEN is not set")


def test_a_heartbeat_dated_in_the_future_is_not_healthy(tmp_path, capsys):
    (tmp_path / "wiki").mkdir()
    config = tmp_path / "config.yaml"
    config.write_text("wiki:\n  path: wiki\n  data_dir: data\n", encoding="utf-8")
    ahead = Heartbeat(
        time=time.time() + 3600, pid=7, revision="abc123def456", guilds=1, connected=True
    )
    write_heartbeat(heartbeat_path(tmp_path / "data"), ahead)
    verdict = check_heartbeat(heartbeat_path(tmp_path / "data"))
    assert verdict.status == "future" and not verdict.ok
    assert main(["health", "--config", str(config)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("unhealthy:") and "in the future" in line
    # A clock a second or two ahead is still fresh.
    close = Heartbeat(time=time.time() + 1, pid=7, revision="abc", guilds=1, connected=True)
    write_heartbeat(heartbeat_path(tmp_path / "data"), close)
    assert check_heartbeat(heartbeat_path(tmp_path / "data")).ok


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_without_a_network_retries_and_says_in_one_line_what_failed(
    tmp_path, monkeypatch, capsys
):
    import discord.http

    # Discord's API at a loopback port nobody listens on: every connection is refused.
    monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{_closed_port()}/api/v10")
    monkeypatch.setattr(serve_cli, "RETRY_ATTEMPTS", 3)
    monkeypatch.setattr(serve_cli, "RETRY_FIRST_DELAY", 0.0)
    monkeypatch.setenv("DISCORD_TOKEN", "MTIz.not.real")
    (tmp_path / "wiki").mkdir()
    config = tmp_path / "config.yaml"
    config.write_text("wiki:\n  path: wiki\n  data_dir: data\n", encoding="utf-8")
    assert main(["serve", "--config", str(config)]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "MTIz.not.real" not in err + out
    lines = [line for line in err.splitlines() if line.startswith("wikibot serve:")]
    assert len(lines) == 3, err
    assert all("cannot reach Discord" in line and "127.0.0.1" in line for line in lines)
    assert "attempt 1 of 3" in lines[0] and "attempt 2 of 3" in lines[1]
    assert "gave up after 3 attempts" in lines[2]


def test_a_fifo_for_config_or_heartbeat_is_refused_not_waited_on(tmp_path, capsys):
    (tmp_path / "wiki").mkdir()
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with hang_guard(60, "reading a FIFO config"):
        assert main(["health", "--config", str(fifo)]) != 0
    (line,) = capsys.readouterr().err.splitlines()
    assert str(fifo) in line and "not a regular file" in line
    config = tmp_path / "config.yaml"
    config.write_text("wiki:\n  path: wiki\n  data_dir: data\n", encoding="utf-8")
    (tmp_path / "data").mkdir()
    os.mkfifo(heartbeat_path(tmp_path / "data"))
    with hang_guard(60, "reading a FIFO heartbeat"):
        verdict = check_heartbeat(heartbeat_path(tmp_path / "data"))
        assert main(["health", "--config", str(config)]) == 1
    assert verdict.status == "unreadable" and not verdict.ok
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("unhealthy:")
