"""The bot's config file: a good file loads, a bad one fails naming the file and the key."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ConfigError, load_config
from bot.serve_cli import DEFAULT_CONFIG

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "wiki").mkdir(exist_ok=True)
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
discord:
  guild_ids: [111111111111111111, "222222222222222222"]
  admin_role_ids: [333]
wiki:
  path: wiki
  link_base: https://github.com/owner/repo/blob/main
  data_dir: data
cooldown: {rate: 2, per: 5}
"""


def test_a_good_file_loads_into_typed_values(tmp_path):
    config = load_config(write(tmp_path, GOOD))
    assert config.guild_ids == (111111111111111111, 222222222222222222)
    assert config.admin_role_ids == (333,)
    assert config.wiki_dir == (tmp_path / "wiki").resolve()  # relative to the file
    assert config.data_dir == (tmp_path / "data").resolve()
    assert config.link_base == "https://github.com/owner/repo/blob/main/"
    assert (config.cooldown.rate, config.cooldown.per) == (2, 5.0)


def test_the_retired_pager_timeout_still_loads_with_a_warning(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="bot.config"):
        load_config(write(tmp_path, "wiki: {path: wiki}\nsearch: {pager_timeout: 60}\n"))
    assert "search.pager_timeout is no longer used" in caplog.text


def test_an_id_pasted_twice_counts_once(tmp_path):
    config = load_config(write(tmp_path, "discord: {guild_ids: [5, '5', 6]}\nwiki: {path: wiki}\n"))
    assert config.guild_ids == (5, 6)


def test_defaults_for_optional_keys(tmp_path):
    config = load_config(write(tmp_path, "wiki:\n  path: wiki\n"))
    assert config.guild_ids == () and config.admin_role_ids == ()
    assert config.link_base is None and config.data_dir is None
    assert config.cooldown.rate >= 1 and config.cooldown.per > 0


def test_the_example_config_is_valid(tmp_path):
    text = (ROOT / "config.example.yaml").read_text(encoding="utf-8")
    # The example points at a wiki checkout beside it; check it against a folder that exists.
    text, count = re.subn(r"(?m)^(  path:) \S+$", r"\1 wiki", text)
    assert count == 1
    config = load_config(write(tmp_path, text))
    assert config.link_base and config.link_base.startswith("https://github.com/")


@pytest.mark.parametrize(
    ("text", "key", "hint"),
    [
        ("discord:\n  guild_ids: [12, abc]\nwiki: {path: wiki}\n", "discord.guild_ids[1]", "'abc'"),
        ("discord:\n  guild_ids: 12\nwiki: {path: wiki}\n", "discord.guild_ids", "list"),
        (
            "discord:\n  admin_role_ids: [-5]\nwiki: {path: wiki}\n",
            "discord.admin_role_ids[0]",
            "-5",
        ),
        ("discord:\n  guild_ids: [true]\nwiki: {path: wiki}\n", "discord.guild_ids[0]", "True"),
        ("wiki: {path: missing}\n", "wiki.path", "not found"),
        ("discord: {guild_ids: [1]}\n", "wiki.path", "required"),
        ("wiki: {path: wiki, link_base: 'http://x.org/'}\n", "wiki.link_base", "https"),
        ("wiki: {path: wiki, link_base: 'github.com/a'}\n", "wiki.link_base", "https"),
        ("wiki: {path: wiki}\ncooldown: {rate: 0}\n", "cooldown.rate", "1 to 100"),
        ("wiki: {path: wiki}\ncooldown: {per: 'ten'}\n", "cooldown.per", "seconds"),
        ("wiki: {path: wiki}\ncooldown: {per: -1}\n", "cooldown.per", "more than 0"),
        ("wiki: {path: wiki, pth: x}\n", "wiki.pth", "unknown key"),
        ("wiki: {path: wiki}\nwikis: {}\n", "wikis", "unknown section"),
        ("wiki: {path: wiki}\ndiscord: {token: abc.def.ghi}\n", "discord.token", "DISCORD_TOKEN"),
        ("token: abc\nwiki: {path: wiki}\n", "token", "DISCORD_TOKEN"),
        ("wiki: [a, b]\n", "wiki", "mapping"),
        ("wiki: {path: '  '}\n", "wiki.path", "folder"),
        ("wiki: {path: wiki, refresh_minutes: 0.5}\n", "wiki.refresh_minutes", "0 (off)"),
        ("wiki: {path: wiki, http2: 'yes'}\n", "wiki.http2", "true or false"),
        ("wiki: {path: wiki, refresh_minutes: .inf}\n", "wiki.refresh_minutes", "minutes"),
        ("wiki: {path: wiki}\ndiscord: {thinking_after: 3}\n", "discord.thinking_after", "0 to 2"),
        ("wiki: {path: wiki}\ndiscord: {thinking_after: -1}\n", "discord.thinking_after", "got -1"),
        ("wiki: {path: wiki}\ngaps: {enabled: 'no'}\n", "gaps.enabled", "true or false"),
        ("wiki: {path: wiki}\ngaps: {keep_days: 0}\n", "gaps.keep_days", "1 to 3650"),
        ("wiki: {path: wiki}\ngaps: {keep_days: 1.5}\n", "gaps.keep_days", "whole number"),
        ("wiki: {path: wiki}\nmetrics: {port: 70000}\n", "metrics.port", "1 to 65535"),
        ("wiki: {path: wiki}\nmetrics: {port: '9108'}\n", "metrics.port", "TCP port"),
        ("wiki: {path: wiki}\nmetrics: {host: ''}\n", "metrics.host", "address"),
        # A misspelt key is named, not the "required" key it leaves out.
        ("wiki: {pth: wiki}\n", "wiki.pth", "unknown key"),
    ],
)
def test_errors_name_the_file_and_the_key(tmp_path, text, key, hint):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {key}: "), message
    assert hint in message
    assert "abc.def.ghi" not in message  # a pasted secret is never echoed


def test_a_file_that_is_not_yaml_or_not_there(tmp_path):
    broken = write(tmp_path, "wiki: {path: wiki\n")
    with pytest.raises(ConfigError, match=r"not valid YAML \(line \d+"):
        load_config(broken)
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- just\n- a list\n"))


def test_loading_the_config_and_the_console_cli_do_not_import_discord():
    code = (
        "import sys, bot.config, bot.serve_cli, bot.cli\n"
        "bot.cli.build_parser()\n"
        "assert 'discord' not in sys.modules, sorted(m for m in sys.modules if 'discord' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_default_config_name_matches_the_example():
    assert (ROOT / f"{DEFAULT_CONFIG.stem}.example{DEFAULT_CONFIG.suffix}").is_file()


# --- a key given twice (YAML would keep the last one silently) --------------------------


@pytest.mark.parametrize(
    ("text", "key", "lines"),
    [
        ("wiki:\n  path: wiki\n  refresh_minutes: 5\n  path: /srv/other\n", "wiki.path", (2, 4)),
        ("wiki: {path: wiki}\ncooldown: {rate: 2}\nwiki: {path: other}\n", "wiki", (1, 3)),
        ("wiki: {path: wiki, path: wiki}\n", "wiki.path", (1, 1)),
    ],
    ids=["nested", "section", "flow"],
)
def test_a_key_given_twice_is_refused_naming_the_key_and_the_file(tmp_path, text, key, lines):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: {key}: given twice (lines {lines[0]} and {lines[1]}); keep one"
    )


def test_the_same_key_in_different_mappings_and_aliases_are_fine(tmp_path):
    text = "wiki:\n  path: wiki\nsupport:\n  draft_hours: &h 24\nsearch: {}\nx_anchor: *h\n"
    with pytest.raises(ConfigError) as caught:  # only the unknown key is the problem
        load_config(write(tmp_path, text))
    assert "x_anchor" in str(caught.value) and "twice" not in str(caught.value)
    assert load_config(write(tmp_path, "wiki: {path: wiki}\ncooldown: {rate: 2, per: 5}\n"))


def test_serve_stops_on_a_key_given_twice_in_one_line(tmp_path):
    path = write(tmp_path, "wiki:\n  path: wiki\n  path: other\n")
    run = subprocess.run(
        [sys.executable, "-m", "bot.cli", "serve", "--config", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DISCORD_TOKEN": "not-a-token"},
        timeout=120,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [
        f"wikibot: {path}: wiki.path: given twice (lines 2 and 3); keep one"
    ]
