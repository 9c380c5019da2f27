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


def _loaded(*argv: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """Which of ``heavy`` are imported after ``wikibot *argv`` ran in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=heavy), *argv],
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


#: What ``wikibot ask`` must not load when the data folder holds the index and the
#: page cache and the command answers from the catalogue or the glossary.
NOT_FOR_A_WARM_ANSWER = (
    *(name for name in HEAVY if name != "knowledge.search"),  # its light modules are used
    "markdown_it",
    "rapidfuzz",
    "filelock",
    "tqdm",
    "knowledge.search.index",
    "knowledge.search.store",
    "knowledge.search._whoosh",
)


def test_ask_on_a_warm_data_folder_loads_neither_the_engine_nor_the_parser(tmp_path):
    """The index and the parsed pages are there: /runbook, /acronym and /explain answer
    from the catalogue and the glossary, without Whoosh, the index store (pydantic),
    markdown-it (no page is parsed again) or rapidfuzz (nothing misspelt)."""
    wiki = ("--wiki", str(DEMO), "--data", str(tmp_path / "data"))
    # The first run builds the index and the page cache (and so loads all of it).
    first = _loaded("ask", *wiki, "/runbook qwen", heavy=NOT_FOR_A_WARM_ANSWER)
    assert {"whoosh", "markdown_it"} <= set(first)
    for command in ("/runbook qwen", "/runbook glm versions", "/acronym DCP4", "/explain TP8"):
        assert _loaded("ask", *wiki, command, heavy=NOT_FOR_A_WARM_ANSWER) == [], command
    # A command that searches opens the index when it needs it; nothing is parsed again.
    assert _loaded("ask", *wiki, "/search nccl calloc", heavy=("whoosh", "markdown_it")) == [
        "whoosh"
    ]


def test_the_parser_names_the_fetchers_default_api():
    assert GITHUB_API == DEFAULT_API_URL
