"""Upkeep: wiki.refresh_minutes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_config


def write_config(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "wiki").mkdir(exist_ok=True)
    path = tmp_path / "config.yaml"
    path.write_text(f"wiki:\n  path: wiki\n  data_dir: data\n{extra}", encoding="utf-8")
    return path


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
