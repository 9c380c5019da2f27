"""Upkeep: wiki.refresh_minutes, the heartbeat file and ``wikibot health``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.config import ConfigError, load_config
from bot.heartbeat import Heartbeat, check_heartbeat, heartbeat_path, write_heartbeat

ROOT = Path(__file__).resolve().parents[1]


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
