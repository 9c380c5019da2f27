"""Commands load only what they use: ``wikibot ask`` on a wiki folder never loads
discord.py, the wiki fetcher (httpx), triage or the ticket desk; building the
parser loads none of the heavy modules. (Start-up time itself is a benchmark figure, not a test.)"""

from __future__ import annotations

import json
import subprocess
import sys

from knowledge.cli.wiki import GITHUB_API
from knowledge.source import DEFAULT_API_URL
from tests.support import DEMO, ROOT

HEAVY = (
    "discord",
    "pydantic",
    "httpx",
    "whoosh",
    "knowledge.search",
    "knowledge.triage",
    "knowledge.intake",
    "knowledge.source",
)

_PROBE = """
import json, sys
from bot.cli import main
if sys.argv[1:]:
    main(sys.argv[1:])
heavy = {heavy!r}
print(json.dumps(sorted(h for h in heavy if h in sys.modules)))
"""


def _loaded(*argv: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_parser_loads_no_heavy_module():
    assert _loaded() == []


def test_ask_loads_the_search_engine_but_not_the_bot_or_triage(tmp_path):
    loaded = _loaded("ask", "--wiki", str(DEMO), "--data", str(tmp_path / "data"), "/acronym DCP")
    assert "knowledge.search" in loaded
    # pydantic may come with the index's manifest; the rest has no business here
    assert set(loaded) <= {"knowledge.search", "whoosh", "pydantic"}


def test_the_parser_names_the_fetchers_default_api():
    assert GITHUB_API == DEFAULT_API_URL
