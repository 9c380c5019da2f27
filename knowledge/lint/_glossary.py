"""The glossary: its rows (duplicated, or with no meaning), and what it lacks.

Rows are read as :class:`knowledge.wiki.Glossary` reads them: every table of the
glossary page with a term column and a meaning column; ``a / b`` and ``a, b`` in
a term cell are two names of one row.

An acronym the glossary lacks is a word of prose (code blocks, inline code, link
targets, URLs and HTML left out, as the glossary's own policy leaves commands,
tags, variables and paths alone) with at least two capitals and no more small
letters than capitals (``KV``, ``OOM``, ``MoE``), that the glossary does not
resolve (a composite such as ``TP4`` resolves to ``TP``; a plural ``GPUs`` is
its singular; a word with digits is a part number or a composite). Left out as
well, from how the wiki itself writes them: a word shouted in capitals (its
small-letter form is a word of the wiki's prose at least as often), a unit (most
of its uses follow a number: ``96 GB``), and a name (half of its uses sit beside
a capitalised word or a number: ``RTX PRO 6000``), and a table value (half of its
uses fill a table cell alone: ``| OK |``). It is
reported once it is used on ``LintOptions.acronym_pages`` pages or more, with
the pages counted and, where some page spells it out (``Out Of Memory (OOM)``),
that meaning as the row to add. Acronyms of general computing (:data:`COMMON_ACRONYMS`:
GPU, JSON, URL ...) and words of the model families' names (GLM in GLM-5.2) are never
reported.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterator
from itertools import accumulate

from knowledge.lint._context import LintContext
from knowledge.lint._model import Finding, Rule, Severity
from knowledge.wiki import Page, Table

__all__ = ["ACRONYM_RULES", "ROW_RULES", "check_acronyms", "check_glossary_rows"]

DUPLICATE = Rule("glossary-duplicate", "glossary", Severity.WARNING)
EMPTY_MEANING = Rule("glossary-empty-meaning", "glossary", Severity.ERROR)
ROW_RULES = (DUPLICATE, EMPTY_MEANING)
UNDEFINED = Rule("glossary-missing-acronym", "acronyms", Severity.INFO)
ACRONYM_RULES = (UNDEFINED,)

#: Acronyms of general computing that a field wiki's glossary need not spell out, as
#: prose linters keep them (Vale's acronym rules carry such an exception list): never
#: reported. Terms of the wiki's own field (KV, OOM, NUMA, ...) are not here.
COMMON_ACRONYMS = frozenset(
    {
        "AI", "API", "ASCII", "BIOS", "CLI", "CPU", "CSV", "DNS", "DRAM", "FAQ", "GPU",
        "GUI", "HDD", "HTML", "HTTP", "HTTPS", "ID", "IP", "JSON", "LLM", "ML", "NaN",
        "NVMe", "OK", "OS", "PDF", "PSU", "RAM", "SQL", "SSD", "SSH", "TCP", "TODO", "UDP",
        "URL", "USB", "UTC", "UTF", "XML", "YAML",
    }
)  # fmt: skip

_TERM_COLUMNS = ("acronym", "term", "abbreviation", "name")
_MEANING_COLUMNS = ("meaning", "expansion", "definition", "stands for")
_NAME_SPLIT = re.compile(r"\s+/\s+|,\s+")

_INLINE_CODE = re.compile(r"(`+)([^\n]+?)\1")
_LINK_TARGET = re.compile(r"\]\([^)\n]*\)|^[ \t]*\[[^\]\n]+\]:[ \t]*\S+", re.MULTILINE)
_URL = re.compile(r"<?(?:https?|ftp)://\S+|\bwww\.\S+")
_HTML = re.compile(r"<[^>\n]+>")
#: A word not glued to a path, flag, variable or version (``a/B``, ``--X``, ``$X``, ``X.y``).
#: Only words with two capitals are matched at all (the cost is in the words that are not).
_WORD = re.compile(
    r"(?<![\w./\-$@#=:])((?=[a-z0-9]*[A-Z][a-z0-9]*[A-Z])[A-Za-z][A-Za-z0-9]{1,11})"
    r"(?![\w/$@=]|\.\w|-\w|:\w)"
)
_NUMBER_BEFORE = re.compile(r"\d[\d.,]*\s?$")
_NAME_NEIGHBOUR = re.compile(r"^[A-Z0-9][\w-]*$")
_CELL_BEFORE = re.compile(r"\|\s*$")
_CELL_AFTER = re.compile(r"\s*\|")


def _glossary_tables(page: Page) -> Iterator[tuple[Table, int, int, int | None]]:
    for _, table in page.tables:
        term = table.column(*_TERM_COLUMNS)
        meaning = table.column(*_MEANING_COLUMNS)
        if term is not None and meaning is not None:
            yield table, term, meaning, table.column("notes", "note", "description", "usage")


def check_glossary_rows(ctx: LintContext) -> Iterator[Finding]:
    path = ctx.glossary.page
    page = ctx.wiki.pages.get(path or "")
    if page is None:
        return
    source = ctx.source(page)
    first: dict[str, tuple[str, int]] = {}
    for table, term_col, meaning_col, _ in _glossary_tables(page):
        at = table.line
        for row in table.rows:
            term = row[term_col].text.strip()
            if not term:
                continue
            # The row's line: the next line of the table naming the term (rows never wrap).
            at = source.find(term, at + 1) or at + 1
            if not row[meaning_col].text.strip():
                yield ctx.finding(EMPTY_MEANING, page.path, at, term=term)
            for name in filter(None, (n.strip() for n in _NAME_SPLIT.split(term))):
                key = name.casefold()
                if key in first:
                    earlier, line = first[key]
                    yield ctx.finding(
                        DUPLICATE, page.path, at, term=name, earlier=earlier, earlier_line=line
                    )
                    break
                first[key] = (term, at)


def _prose_words(line: str) -> str:
    line = _INLINE_CODE.sub(" ", line)
    line = _LINK_TARGET.sub("]", line)
    return _HTML.sub(" ", _URL.sub(" ", line))


def _is_acronym(word: str) -> bool:
    capitals = sum(map(str.isupper, word))
    return capitals >= 2 and sum(map(str.islower, word)) <= capitals


def _spelled_out(acronym: str, before: str) -> str | None:
    """The words before ``(ACRONYM)`` whose initials make it (``Out Of Memory (OOM)``)."""
    letters = [c.casefold() for c in acronym if c.isalpha()]
    words = re.findall(r"[A-Za-z][\w-]*", before)[-(len(letters) + 2) :]
    for start in range(len(words)):
        chosen = words[start:]
        initials = [w[0].casefold() for w in chosen]
        if initials == letters[: len(initials)] and len(initials) == len(letters):
            return " ".join(chosen)
    return None


def _name_like(before_text: str, after_text: str) -> bool:
    """A use beside a capitalised word or a number (``RTX PRO 6000``, ``AMD EPYC``): a
    product or company name, not an acronym a glossary spells out. A word opening a
    sentence (``The KV cache``) is capitalised for that reason alone."""
    words = before_text.split()
    before = words[-1:]
    if len(words) == 1 or (len(words) > 1 and words[-2][-1:] in ".:!?|"):
        before = []
    after = after_text.split("\n", 1)[0].split()[:1]
    return any(_NAME_NEIGHBOUR.match(word) and not _is_acronym(word) for word in before + after)


def _small_uses(prose: list[str], words: list[str]) -> Counter[str]:
    """How often each of ``words`` is written in small letters as a word of the prose
    (one pass over the prose for all of them)."""
    if not words:
        return Counter()
    small = sorted({w.casefold() for w in words}, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, small)) + r")(?![\w-])")
    return Counter(found for text in prose for found in pattern.findall(text))


def _family_words(ctx: LintContext) -> set[str]:
    """Words of the model families' names (``GLM-5.2``, ``Xiaomi MiMo``): a model's name,
    which the front page and hubs introduce, is no glossary gap."""
    return {
        word.casefold()
        for family in ctx.catalogue.families
        for word in re.findall(r"[A-Za-z]+", family.name)
    }


def check_acronyms(ctx: LintContext) -> Iterator[Finding]:
    glossary = ctx.glossary
    gpage = ctx.wiki.pages.get(glossary.page or "")
    if gpage is None:
        return
    used: dict[str, dict[str, int]] = defaultdict(dict)  # word -> page -> first line
    count = Counter[str]()
    after_number = Counter[str]()
    in_names = Counter[str]()
    alone_in_cells = Counter[str]()
    meanings: dict[str, str] = {}
    prose: list[str] = []
    for page in ctx.wiki.pages.values():
        if page.path == gpage.path:
            continue
        lines = ctx.source(page).prose()
        # One text per page (substitutions never cross a line), offsets mapped back to lines.
        text = _prose_words("\n".join(line for _, line in lines))
        prose.append(text)
        starts = [0, *accumulate(len(part) + 1 for part in text.split("\n"))]
        for match in _WORD.finditer(text):
            word = match.group(1)
            if not _is_acronym(word) or any(c.isdigit() for c in word):
                continue  # with digits: a part or model number, or a composite (TP4)
            count[word] += 1
            at = bisect_right(starts, match.start()) - 1
            line = text[starts[at] : match.start()]
            if _NUMBER_BEFORE.search(line):
                after_number[word] += 1
            if _name_like(line, text[match.end() : match.end() + 40]):
                in_names[word] += 1
            if _CELL_BEFORE.search(line) and _CELL_AFTER.match(text, match.end()):
                alone_in_cells[word] += 1
            used[word].setdefault(page.path, lines[at][0])
            closes = text[match.end() : match.end() + 1] == ")"
            if word not in meanings and closes and line.endswith("("):
                found = _spelled_out(word, line[:-1])
                if found:
                    meanings[word] = found
    # A plural (GPUs) counts as its singular when that is used too.
    for word in [w for w in used if w.endswith("s") and w[:-1] in used]:
        for path, line in used.pop(word).items():
            used[word[:-1]].setdefault(path, line)
        count[word[:-1]] += count[word]
    gline = next((t.line for t, *_ in _glossary_tables(gpage)), 1)
    threshold = ctx.options.acronym_pages
    names = _family_words(ctx)
    candidates = sorted(
        (
            w
            for w, pages in used.items()
            if len(pages) >= threshold
            and w not in COMMON_ACRONYMS
            and w.casefold() not in names
            and not _defined(glossary, w)
        ),
        key=lambda w: (-len(used[w]), w),
    )
    small = _small_uses(prose, candidates)
    for word in candidates:
        pages = used[word]
        uses = count[word]
        if small[word.casefold()] >= uses:
            continue  # a word shouted in capitals (NOT, FULL)
        if after_number[word] * 2 > uses or in_names[word] * 2 >= uses:
            continue  # a unit (96 GB), or part of product names (RTX PRO 6000)
        if alone_in_cells[word] * 2 >= uses:
            continue  # a value of result tables (| OK |, | FAIL |)
        examples = sorted(pages)[:3]
        yield ctx.finding(
            UNDEFINED,
            gpage.path,
            gline,
            term=word,
            pages=len(pages),
            examples=", ".join(f"{p}:{pages[p]}" for p in examples),
            meaning=meanings.get(word, ""),
        )


def _defined(glossary, word: str) -> bool:
    if glossary.exact(word) is not None:
        return True
    singular = word[:-1] if word.endswith("s") and len(word) > 2 else None
    if singular and glossary.exact(singular) is not None:
        return True
    for candidate in filter(None, (word, singular)):
        found = glossary.lookup(candidate)
        if found.entry is not None and found.how == "composite":
            return True
    return False
