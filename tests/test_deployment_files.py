"""The files an admin deploys with: compose.yaml, .env.example, the Dockerfile and the
lock file it installs from. Read as data, so a change that breaks a promise the README
makes (read-only wiki, token from the environment, a stop grace longer than the bot's
own, a pinned base, locked dependencies) fails here rather than on a server."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bot.shutdown import STOP_GRACE, WATCHDOG_MARGIN
from tests.support import ROOT


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text("utf-8"))["services"]["wikibot"]


def _seconds(text: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text))


def test_compose_runs_the_bot_as_a_service():
    bot = _compose()
    assert bot["restart"] in ("always", "unless-stopped")
    assert bot["healthcheck"]["test"][:3] == ["CMD", "wikibot", "health"]
    # Compose must wait longer than the bot's own stop takes (grace, then its watchdog).
    assert _seconds(bot["stop_grace_period"]) > STOP_GRACE + WATCHDOG_MARGIN
    volumes = bot["volumes"]
    assert any(v.endswith(":/wiki:ro") for v in volumes), "the wiki is mounted read-only"
    assert any(v.split(":")[1] == "/data" for v in volumes), "the data folder is a volume"
    assert any(v.endswith(":/config/config.yaml:ro") for v in volumes)
    data_volume = next(v.split(":")[0] for v in volumes if v.split(":")[1] == "/data")
    assert data_volume in yaml.safe_load((ROOT / "compose.yaml").read_text())["volumes"]


def test_the_token_comes_from_the_environment_and_every_variable_is_in_env_example():
    text = (ROOT / "compose.yaml").read_text("utf-8")
    assert _compose()["environment"]["DISCORD_TOKEN"].startswith("${DISCORD_TOKEN:?")
    used = set(re.findall(r"\$\{([A-Z_]+)", text))
    example = (ROOT / ".env.example").read_text("utf-8")
    defined = set(re.findall(r"^([A-Z_]+)=", example, re.M))
    assert used <= defined, f"not in .env.example: {sorted(used - defined)}"
    assert re.search(r"^DISCORD_TOKEN=$", example, re.M), "the example holds no token"


def test_the_image_pins_its_base_by_digest_and_runs_under_tini():
    text = (ROOT / "Dockerfile").read_text("utf-8")
    (base,) = re.findall(r"^ARG BASE=(\S+)$", text, re.M)
    assert re.fullmatch(r"[\w.:/-]+@sha256:[0-9a-f]{64}", base), base
    assert re.search(r'^ENTRYPOINT \["/usr/bin/tini", "--", "wikibot"\]$', text, re.M)
    assert "tini" in re.search(r"apt-get install[^\n]*\n[^\n]*", text).group(0)
    assert "--require-hashes" in text and "requirements.lock" in text


def test_the_lock_pins_every_dependency_within_pyproject_with_hashes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    wanted = [Requirement(r) for r in project["dependencies"]]
    wanted += [Requirement(r) for r in project["optional-dependencies"]["http2"]]
    lock = (ROOT / "requirements.lock").read_text("utf-8")
    pins = {
        canonicalize_name(name): version
        for name, version in re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", lock, re.M)
    }
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements.lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {name}=={pins[name]}, pyproject wants {requirement}"
        )
    entries = re.split(r"\n(?=[A-Za-z0-9])", lock.split("\n", 1)[1])
    for entry in (e for e in entries if "==" in e):
        assert "--hash=sha256:" in entry, entry.splitlines()[0]
