"""Which pages answer a long help request: page-level ranking of pasted text.

The section index answers short queries well, but a pasted question of a few
hundred characters drowns the words that matter (error class names, kernel and
op names, flags, model names, versions) in ordinary ones, and a section search
lists the same page several times. :class:`PageRanker` answers such text with
pages instead, from the wiki's structure alone:

- a query model for long text: identifiers, flags, environment variables,
  versions and model names are kept whole and weighed up; ordinary words count
  by their rarity (BM25 weights); error lines count double and are matched,
  tolerant to paths, numbers and addresses, against the quotes of **Error**
  paragraphs and the lines of code blocks, and near verbatim against every line of
  every page, prose too (:mod:`knowledge.search.verbatim`: a daily summary that
  repeats the line is evidence like an Error quote); a line saying the binary has
  no code for the GPU's architecture (CUDA's "no kernel image", PyTorch's "not
  compatible with the current installation", nvcc, ptxas) brings the words of the
  installation, build and image sections that answer it;
- expansion from the glossary (an acronym brings its meaning, a meaning its
  acronym; words a request does not hold rank pages but are never shown as its
  words nor counted as evidence) and the catalogue (a named model, or a maker's
  word only one family starts with, brings its family's hub and current page);
- fusion of the best sections of a page with the page as a whole, times one
  prior per kind of page (:data:`PAGE_PRIORS`; a hub or current runbook keeps its
  prior only when the request names its model); a versioned page no version map
  lists, below the highest number its series has in one, is an older runbook;
- a confidence from the evidence: a matched error quote, a named family, how
  much of the request's telling words the top page holds, and words that look
  like names and occur nowhere in the wiki (a model the wiki does not cover,
  unless a missing-architecture line asks for a build and a section on installing,
  building or images comes first: that fix does not depend on the model).

Everything is built once per wiki load (:meth:`PageRanker.build`, a few
seconds of CPU on the real wiki: the bot builds it at start) and held in memory;
a ranking adds up precomputed postings, held as numpy arrays, a term at a time
(about 2 ms of CPU for a pasted question of 300-1,000 characters,
``python -m benchmarks pasted``).
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import math
import re
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import accumulate, chain
from operator import itemgetter
from typing import TYPE_CHECKING, Final

from knowledge.search.verbatim import PageLines, VerbatimIndex
from knowledge.text import fold_key
from knowledge.wiki import (
    Catalogue,
    Cell,
    Family,
    Glossary,
    Page,
    Section,
    Wiki,
    version_series,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "PAGE_PRIORS",
    "PageHit",
    "PageRanker",
    "PageRanking",
    "error_lines",
    "is_generic_error_word",
    "is_noise",
    "label_word",
    "page_kind",
    "request_terms",
]

#: Multiplier per kind of page (see :func:`page_kind`): answers first, diaries last.
PAGE_PRIORS: Final[Mapping[str, float]] = {
    "troubleshooting": 1.35,
    "hub": 1.3,
    "current": 1.25,
    "reference": 1.0,
    "legacy": 0.95,
    "historical": 0.7,
    "archive": 0.6,
    "notes": 0.55,
    "dated": 0.45,
    "unlinked": 0.55,
    "index": 0.4,
    "glossary": 0.4,
}

#: BM25 parameters (the textbook values).
_K1: Final = 1.2
_B: Final = 0.75
#: Documents whose postings :meth:`_Bm25.of` turns into arrays at a time (each C call
#: handles one run: a few milliseconds with the interpreter lock held at most).
_RUN_DOCS: Final = 256
#: Share of a page's score that comes from its best section (the rest: whole page).
#: Fitted on the two judged dev sets, each apart: 0.3-0.5 rank the first set alike,
#: 0.3-0.45 the second near its best; 0.4 is inside both (0.6 before).
_SECTION_SHARE: Final = 0.4
#: Terms held by more than an eighth of all sections do not rank sections.
_MAX_SECTION_SHARE: Final = 0.12
#: The most telling terms of a request that rank its sections (the page score uses all).
_MAX_SECTION_TERMS: Final = 48
#: Words held by more than about a third of all pages are not shown as reasons.
_MIN_SHOWN_IDF: Final = 1.0
#: Telling words the best page must share with a request (without an error quote
#: or a named family) for the ranking to offer any page.
_MIN_SHARED_WORDS: Final = 2
#: Query-term weights by kind.
_W_ERROR: Final = 2.0
_W_IDENT: Final = 1.6
_W_WORD: Final = 1.0
_W_EXPANSION: Final = 0.5
#: Share of the request's telling weight the top page must hold to be offered with confidence.
_CONFIDENT_COVERAGE: Final = 0.4
#: Distinct words whose terms the ranker keeps between requests (a few MB).
_MAX_REMEMBERED_WORDS: Final = 20_000
#: Caps on what one request may cost.
MAX_REQUEST_CHARS: Final = 12_000
MAX_QUERY_TERMS: Final = 160
MAX_ERROR_LINES: Final = 12
#: Bonus of a page with a line repeating a request's error line near verbatim (times
#: the share matched), as much as an Error quote the line holds whole.
_W_VERBATIM: Final = 0.6

_TOKEN_RE: Final = re.compile(r"-{0,2}[A-Za-z0-9]+(?:[._/+\-][A-Za-z0-9]+)*")
_IDENT_MARK_RE: Final = re.compile(r"[_./+]")
_DIGIT_RE: Final = re.compile(r"\d")
_ALPHA_RE: Final = re.compile(r"[^\W\d_]")
_CAMEL_CASE_RE: Final = re.compile(r"[a-z][A-Z]")
_SPLIT_RE: Final = re.compile(r"[._/+\-]+")
_CAMEL_RE: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
#: An acronym's plural (``OOMs``, ``GPUs``): one word, not ``OO`` + ``Ms``.
_PLURAL_ACRONYM_RE: Final = re.compile(r"^[A-Z]{2,}s$")
_DATE_RE: Final = re.compile(r"(?:^|[/_\-])20\d\d-\d\d(?:-\d\d)?(?:[/_.\-]|$)")
_HEX_RE: Final = re.compile(r"^(?:0x[0-9a-f]+|[0-9a-f]{12,})$")
_PATHISH_RE: Final = re.compile(r"(?:/[\w.\-]+){2,}/?")
_ADDRESS_RE: Final = re.compile(r"\b0x[0-9a-fA-F]+\b")
_LONG_NUMBER_RE: Final = re.compile(r"\b\d{5,}\b")
_MODEL_RE: Final = re.compile(
    r"\b[A-Za-z][\w.\-]*/[A-Za-z][\w.\-]+"
    r"|\b[A-Za-z][\w.]*(?:-[\w.]+)*-(?:[Aa]?\d+(?:\.\d+)?[BbMm])(?:-[\w.]+)*\b"
)
#: Words that report an error (lower case): a line holding one, in any case, is one.
#: Looked for one by one with ``str.find`` in a log's ASCII lines (``_errorish``).
_ERRORISH_WORDS: Final = (
    "error", "exception", "traceback", "failed", "fatal", "assert", "unsupported",
    "not supported", "no valid", "not available", "not compatible", "incompatible",
    "cannot", "can't", "unable", "invalid", "illegal", "out of memory", "oom", "killed",
    "timed out", "timedout", "time out", "timeout",
)  # fmt: skip
#: The same words as a pattern (``timed? ?out``: the four ways of writing it above).
_ERRORISH: Final = (
    r"error|exception|traceback|failed|fatal|assert|unsupported|not supported|no valid|"
    r"not available|not compatible|incompatible|cannot|can't|unable|invalid|illegal|"
    r"out of memory|oom|killed|timed? ?out"
)
_ERRORISH_RE: Final = re.compile(_ERRORISH, re.IGNORECASE)
#: The same words on a lower-cased ASCII line: matching without IGNORECASE is several
#: times faster, and for ASCII text lower-casing first finds exactly the same lines.
_ERRORISH_LOWER_RE: Final = re.compile(_ERRORISH)
#: A model's name and its version: ``GLM-5.1``, ``MiniMax M2.5``, ``Kimi-K2.6``, ``Qwen3.5``.
_NAMED_VERSION_RE: Final = re.compile(
    r"\b([A-Za-z]{3,})[-_ ]?([A-Za-z]?\d+(?:\.\d+)*)(?![\w.]*\d*[BbMm]\b)(?=[^\w.]|\.(?!\d)|$)"
)
#: File names in a path are not model names (``fmha/runner.cuh``, ``deps/gemm-src``).
_FILE_RE: Final = re.compile(
    r"\.(?:c|cc|cpp|cu|cuh|h|hpp|py|pyi|so|rs|go|js|ts|json|ya?ml|toml|txt|md|log|sh)$"
    r"|^(?:deps|src|lib|build|third_party|csrc|include|tests?|usr|opt|home|tmp)/"
)
_FIRST_WORD_RE: Final = re.compile(r"[A-Za-z]{3,}")
#: A word of a request, and a version right after it: a maker's word names a family
#: when it is written as a name (``MiniMax``) or carries a version (``minimax-m2.7``),
#: not as the ordinary word a family may share its name with (``command``).
_FAMILY_WORD_RE: Final = re.compile(r"\b([A-Za-z]{3,})\b([-_ ]?[A-Za-z]?\d)?")
#: Kinds of page that are the page for one model (a family's hub, its current runbook).
_MODEL_KINDS: Final = frozenset({"hub", "current"})
#: Kinds of page that mention things in passing (diaries, notes, lists of links).
_PASSING_KINDS: Final = frozenset({"dated", "notes", "index", "glossary"})
#: A glossary: at least this many table rows define a term (a short first cell, no
#: link, a longer cell beside it), holding at least this share of the page's words.
_GLOSSARY_ROWS: Final = 20
_GLOSSARY_SHARE: Final = 0.3
#: A folder index: at least this many table rows link to other pages of the wiki,
#: holding at least this share of the page's words.
_INDEX_ROWS: Final = 8
_INDEX_SHARE: Final = 0.4
#: Share of a wiki's pages other pages must link to before one no page links to is
#: told apart as ``unlinked`` (see :func:`page_kind`).
_LINKED_SHARE: Final = 0.9
#: Code blocks a glossary or an index may hold (a usage line), not more.
_LISTING_CODE: Final = 2
_NOTE_WORDS: Final = frozenset({"wip", "draft", "scratch", "notes", "diary", "journal", "log"})
_ERROR_LABELS: Final = frozenset({"error", "errors", "symptom", "symptoms"})
#: Python's own exception classes, casefolded (``valueerror``): generic error words too.
_EXCEPTION_NAMES: Final = frozenset(
    name.casefold()
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
#: Words any error line may use, whatever went wrong (the NVIDIA driver's ``NVRM:``
#: prefix and ``Xid`` label too: every GPU fault it logs carries both, its number and
#: message tell which), and Python's own exception
#: classes (``RuntimeError``, ``ValueError``) with their parts: they rank no page (in an
#: error line, and an exception class in the question; a plain one the asker writes
#: alone, ``debug`` or ``support``, is their word for the topic), and are never shown
#: as a reason nor counted as evidence (see :func:`_told_terms`). What
#: identifies the line is the rest: its op or kernel name, its phrase, its variable
#: names, or an exception class of its own (``OutOfMemoryError``, ``EngineDeadError``).
_GENERIC_ERROR_WORDS: Final = frozenset(
    """error errors exception exceptions traceback fatal failed fail failure failing
    warning warn info debug device devices available unavailable unable cannot invalid
    unsupported supported support unknown unexpected raised raise occurred encountered
    caught abort aborted aborting nvrm xid""".split()  # noqa: SIM905
) | _EXCEPTION_NAMES
#: What CUDA, PyTorch, nvcc and ptxas print when a binary holds no code for the GPU's
#: architecture: the fix is another build (a wheel, an image, a source build with the
#: architecture), so such a line asks for the pages on installing, building and images.
_ARCH_MISSING_RE: Final = re.compile(
    r"no kernel image is available"  # CUDA runtime: cudaErrorNoKernelImageForDevice
    r"|invalid device function"  # CUDA runtime: cudaErrorInvalidDeviceFunction
    r"|no binary for gpu"  # CUDA driver: CUDA_ERROR_NO_BINARY_FOR_GPU
    r"|is not compatible with the current pytorch installation"  # torch's arch list check
    r"|unsupported gpu architecture"  # nvcc
    r"|value '?sm_\w+'? is not defined for option",  # ptxas
    re.IGNORECASE,
)
#: The words of those pages' titles a missing-architecture line brings to a request.
_ARCH_MISSING_TERMS: Final = (
    "installation",
    "install",
    "build",
    "source",
    "image",
    "docker",
    "wheel",
)
#: Their weight: twice an error line's, as the section titles they meet are common words
#: (any weight from 3 to 6 ranks the same on the judged requests; 2.5 is too little).
_W_ARCH: Final = 4.0
#: Longest term whose noise answer is remembered (see :func:`is_noise`).
_MAX_REMEMBERED_TERM: Final = 40
#: Units of size and time: a log's numbers come with them (``64.00 MiB``, ``12 ms``).
_UNITS: Final = frozenset({"kib", "mib", "gib", "tib", "kb", "mb", "gb", "tb", "ms", "us", "ns"})

#: Words that carry no topic in a help request (function words and help-desk talk).
STOP: Final = frozenset(
    """a about above after again against all also am an and any anyone are aren as at be
    because been before being below between both but by can cannot could couldn did didn
    do does doesn doing don down during each either else even ever every few first for
    from further get gets getting got had has hasn have haven having he her here hers him
    his how however i if in into is isn it its itself just let like ll me might more most
    much must my myself need needs no nor not now of off on once one only or other our
    ours out over own per please re really right s same she should shouldn since so some
    still such t than that the their theirs them then there these they thing things this
    those though through thus to too try trying tried under until up us use used using ve
    very via was wasn way we well were weren what when where whether which while who whom
    why will with without won would wouldn yet you your yours yourself anything something
    everything nothing works work working worked help thanks hi hello issue problem
    question know see seems seem want wanted getting happens happen happened fine ok okay
    run runs running ran set setting start starts started""".split()  # noqa: SIM905
)


def page_kind(page: Page, status: str | None, *, linked: bool = True) -> str:
    """The kind of a page, from its place in the catalogue and its structure.

    ``status`` is the catalogue's (hub, current, historical, archive, legacy) or
    None. Without one: ``index`` for a page that is mostly links, ``dated`` for a
    page whose path carries a date (daily summaries, dated lab notes), ``notes``
    for work-in-progress folders, ``troubleshooting`` for a page whose sections
    are written as Error / Cause / Fix, ``glossary`` for a page that is mostly a
    table of terms and ``index`` for one that is mostly a table of links to other
    pages (neither with an Error section or more than a usage line of code: such
    pages name things, they rarely answer a problem), ``unlinked`` for a page no
    other page links to (``linked`` False: a file the wiki's navigation never
    reaches, such as a copy left beside the images, which no hub, version map or
    index vouches for), ``reference`` for the rest.
    """
    if status in ("hub", "current", "historical", "archive", "legacy"):
        if status in ("historical", "archive") and _has_errors(page):
            return "troubleshooting" if _error_share(page) >= 0.3 else status
        return status
    if _error_share(page) >= 0.2 or (_has_errors(page) and "troubleshoot" in page.path):
        return "troubleshooting"
    if _DATE_RE.search(page.path):
        return "dated"
    if not linked:
        return "unlinked"
    parts = set(_SPLIT_RE.split(page.path.casefold()))
    if parts & _NOTE_WORDS:
        return "notes"
    if _mostly_links(page):
        return "index"
    if not _has_errors(page) and sum(len(s.code) for s in page.sections) <= _LISTING_CODE:
        if _table_rows_share(page, _is_term_row, _GLOSSARY_ROWS) >= _GLOSSARY_SHARE:
            return "glossary"
        if _table_rows_share(page, _is_link_row, _INDEX_ROWS) >= _INDEX_SHARE:
            return "index"
    return "reference"


def _is_term_row(row: Sequence[Cell]) -> bool:
    """A row that defines a term: a short first cell naming it (letters, at most four
    words), no link in the row, a cell of three or more words beside it."""
    if len(row) < 2 or any(cell.links for cell in row):
        return False
    term = row[0].text.split()
    return (
        0 < len(term) <= 4
        and _ALPHA_RE.search(row[0].text) is not None
        and max(len(cell.text.split()) for cell in row[1:]) >= 3
    )


def _is_link_row(row: Sequence[Cell]) -> bool:
    """A row that points at another page of the wiki."""
    return any(link.path for cell in row for link in cell.links)


def _table_rows_share(page: Page, kind: Callable[[Sequence[Cell]], bool], least: int) -> float:
    """Share of the page's words in table rows of one kind, 0.0 with fewer than ``least``."""
    rows = [row for s in page.sections for t in s.tables for row in t.rows if kind(row)]
    if len(rows) < least:
        return 0.0
    words = sum(len(s.text.split()) for s in page.sections)
    held = sum(len(cell.text.split()) for row in rows for cell in row)
    return held / words if words else 0.0


def _has_errors(page: Page) -> bool:
    return any(_is_error_section(s) for s in page.sections)


def _error_share(page: Page) -> float:
    if not page.sections:
        return 0.0
    return sum(1 for s in page.sections if _is_error_section(s)) / len(page.sections)


def label_word(label: str) -> str:
    """``Fix (kernel params)`` -> ``fix``: the label's first word, folded."""
    words = label.split()
    return words[0].casefold().rstrip(":") if words else ""


def _is_error_section(section: Section) -> bool:
    return any(label_word(item.label) in _ERROR_LABELS for item in section.labelled)


def _mostly_links(page: Page) -> bool:
    links = sum(len(s.links) for s in page.sections)
    words = sum(len(s.text.split()) for s in page.sections)
    return links >= 40 and words < links * 12


# ----------------------------------------------------------------------- terms


def is_noise(term: str) -> bool:
    """A term that tells nothing about what a request is about, whatever its rarity:
    a number or version alone (``2.28.9``, ``00``, ``865``), a fragment of two
    characters (``mi``, ``cu``, ``sm`` of ``cu130`` or ``sm_120``), a unit of size or
    time (``MiB``), a word that mostly repeats a letter or two (``ffsfsss``: a
    keyboard, not a topic). Such terms still rank pages; they are neither shown as a
    reason nor counted as evidence that a page covers a request."""
    if len(term) > _MAX_REMEMBERED_TERM:
        return _is_noise(term)
    return _remembered_noise(term)


def _is_noise(term: str) -> bool:
    if len(term) <= 2 or term in _UNITS or _ALPHA_RE.search(term) is None:
        return True
    return term.isalpha() and len(term) >= 4 and len(set(term)) <= len(term) // 3


#: A ranking asks about every term of a request, and requests share most words:
#: the answers for short terms are remembered (a bounded cache of short strings).
_remembered_noise = functools.lru_cache(maxsize=1 << 14)(_is_noise)


def is_generic_error_word(term: str) -> bool:
    """A word of :data:`_GENERIC_ERROR_WORDS` (``failed``, ``runtimeerror``)."""
    return term in _GENERIC_ERROR_WORDS


def _telling_term(term: str) -> bool:
    """A term that may be shown as a reason and counted as evidence that a page
    covers a request."""
    return not is_noise(term) and not is_generic_error_word(term)


def _verbatim_telling(word: str) -> bool:
    """A word of :func:`knowledge.search.verbatim.verbatim_words` that tells what went
    wrong: no stop word, and a telling term (:func:`_telling_term`) once stemmed."""
    return word not in STOP and _telling_term(_stem(word))


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _is_identifier(raw: str) -> bool:
    """A token that names a thing: a flag, a variable, a dotted or snake name, a
    version, a CamelCase class, a model name with digits."""
    if raw.startswith("-") or _IDENT_MARK_RE.search(raw):
        return True
    if raw.isupper() and len(raw) >= 2:
        return True
    has_digit = _DIGIT_RE.search(raw) is not None
    if has_digit and ("-" in raw or _ALPHA_RE.search(raw)):
        return True
    return _CAMEL_CASE_RE.search(raw) is not None


#: What :func:`_tokens` found for each match of :data:`_TOKEN_RE` it has read (a
#: match's terms depend on its text alone), kept by a caller across texts.
_TokenMemo = dict[str, tuple[tuple[str, bool], ...]]


def _tokens(text: str, memo: _TokenMemo | None = None) -> list[tuple[str, bool]]:
    """(term, is_identifier) for every term of ``text``: whole names and their parts.

    ``memo``: the terms of matches read before (by this call or earlier ones sharing
    it); a log or a wiki repeats the same words, paths and flags many times."""
    seen: _TokenMemo = {} if memo is None else memo
    out: list[tuple[str, bool]] = []
    for word in _TOKEN_RE.findall(text):
        terms = seen.get(word)
        if terms is None:
            terms = seen[word] = _word_terms(word)
        out.extend(terms)
    return out


def _word_terms(word: str) -> tuple[tuple[str, bool], ...]:
    """The terms :func:`_tokens` gives for one match ``word`` of :data:`_TOKEN_RE`."""
    raw = word.lstrip("-")
    if not raw:
        return ()
    lowered = raw.casefold()
    if _HEX_RE.match(lowered):
        return ()
    if _PLURAL_ACRONYM_RE.match(raw):
        return ((lowered[:-1], True),)  # OOMs, GPUs: the acronym
    out: list[tuple[str, bool]] = []
    ident = _is_identifier(word)
    parts = [p for p in _SPLIT_RE.split(lowered) if p]
    if len(parts) > 1:
        out.append((lowered, True))
    camel = _CAMEL_RE.findall(raw) if not raw.islower() and not raw.isupper() else []
    if len(camel) > 1 and len(parts) == 1:
        out.append((lowered, True))
        parts = [p.casefold() for p in camel]
    for part in parts:
        if part.isdigit() and len(part) > 4:
            continue  # line numbers, pids, sizes
        if part in STOP or (len(part) < 2 and not part.isdigit()):
            continue
        out.append((_stem(part), ident and len(parts) == 1))
    return tuple(out)


def _clean_error_line(line: str) -> str:
    """An error line without what differs between machines: paths, addresses, numbers."""
    if "/" in line:  # each pattern needs its mark: most lines skip the first two
        line = _PATHISH_RE.sub(lambda m: " " + m.group().rstrip("/").rsplit("/", 1)[-1], line)
    if "0x" in line:
        line = _ADDRESS_RE.sub(" ", line)
    return _LONG_NUMBER_RE.sub(" ", line)


def _error_tokens(line: str, memo: _TokenMemo | None = None) -> list[tuple[str, bool]]:
    """The terms of an error line (its first 1,000 characters, paths, addresses and long
    numbers left out), as :func:`_tokens` gives them."""
    return _tokens(_clean_error_line(line[:1000]), memo)


def _told_terms(
    text: str, memo: _TokenMemo, *, prose: bool = False
) -> Iterator[tuple[str, bool]]:
    """:func:`_tokens` of ``text`` without the terms of its generic error words: a word of
    :data:`_GENERIC_ERROR_WORDS` and every part of one (``value`` and ``error`` of
    ``ValueError``, ``runtime`` of ``RuntimeError``) tell nothing of what went wrong, so
    they rank no page; the same part written as a word of its own still counts.
    ``prose``: ``text`` is the request's own words, not a logged line: there a generic
    word written alone (``debug``, ``support``, ``device``) is the asker's word for the
    topic and counts; only an exception class (``ValueError``) and its parts do not."""
    for word in _TOKEN_RE.findall(text):
        terms = memo.get(word)
        if terms is None:
            terms = memo[word] = _word_terms(word)
        if not terms:
            continue
        head = terms[0][0]
        if head not in _GENERIC_ERROR_WORDS:
            yield from (term for term in terms if term[0] not in _GENERIC_ERROR_WORDS)
        elif prose and len(terms) == 1 and head not in _EXCEPTION_NAMES:
            yield terms[0]


def request_terms(
    text: str,
    errors: Sequence[str] = (),
    *,
    memo: _TokenMemo | None = None,
) -> dict[str, float]:
    """The weighted terms of a request: error lines and identifiers above plain words,
    generic error words left out (see :func:`_told_terms`).

    ``memo``: see :func:`_tokens`."""
    seen: _TokenMemo = {} if memo is None else memo
    weights: dict[str, float] = {}
    get = weights.get
    for line in list(errors)[:MAX_ERROR_LINES]:
        for term, _ in _told_terms(_clean_error_line(line[:1000]), seen):
            if get(term, 0.0) < _W_ERROR:
                weights[term] = _W_ERROR
    for term, ident in _told_terms(text[:MAX_REQUEST_CHARS], seen, prose=True):
        weight = _W_IDENT if ident else _W_WORD
        if weight > get(term, 0.0):
            weights[term] = weight
    if len(weights) > MAX_QUERY_TERMS:
        kept = sorted(weights.items(), key=lambda kv: -kv[1])[:MAX_QUERY_TERMS]
        weights = dict(kept)
    return weights


def _is_errorish(line: str) -> bool:
    """True when ``line`` uses a word that reports an error (any case)."""
    if line.isascii():
        return _ERRORISH_LOWER_RE.search(line.lower()) is not None
    return _ERRORISH_RE.search(line) is not None


def _errorish(lines: Iterable[str]) -> list[str]:
    """The lines for which ``_is_errorish`` holds, in order. ASCII lines are searched
    all at once, lower-cased once, for each word (a log's hundreds of lines, at C
    speed): no word holds a character that ends a line, so a word found never runs from
    one line into the next, and the line it starts in is the one that holds it."""
    lines = lines if isinstance(lines, list) else list(lines)
    joined = "\n".join(lines)
    if not joined.isascii():
        return [line for line in lines if _is_errorish(line)]
    lowered = joined.lower()
    ends = list(accumulate(len(line) + 1 for line in lines))  # each line's end, its break too
    found: set[int] = set()
    for word in _ERRORISH_WORDS:  # str.find: far faster than the pattern's alternation
        pos = lowered.find(word)
        while pos >= 0:
            index = bisect_right(ends, pos)
            found.add(index)
            pos = lowered.find(word, ends[index])  # from the next line on
    return [lines[index] for index in sorted(found)]


def error_lines(lines: Iterable[str], limit: int = MAX_ERROR_LINES) -> list[str]:
    """The lines of a log or pasted text that report an error, each once.

    A long log keeps its first error lines (often the cause) and its last ones
    (the crash) up to ``limit`` in all.
    """
    found = list(dict.fromkeys(line.strip() for line in _errorish(lines)))
    if len(found) <= limit:
        return found
    head = limit // 3
    return found[:head] + found[len(found) - (limit - head) :]


# ----------------------------------------------------------------------- model


@dataclass(frozen=True, slots=True)
class PageHit:
    """One page that may answer the request, with its best section."""

    path: str
    anchor: str
    title: str
    section_title: str
    score: float
    kind: str
    #: Reasons, as (code, detail) pairs worded by the caller's templates:
    #: ``error_quote`` (the quote), ``family`` (the family name), ``terms`` (words).
    why: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class PageRanking:
    hits: tuple[PageHit, ...]
    #: high, medium, low or none.
    confidence: str
    #: Name-like words of the request that occur nowhere in the wiki.
    unknown: tuple[str, ...] = ()
    #: The family the request names, if one does.
    family: str | None = None


def _count_array(counts: Iterable[int]) -> array[int]:
    """``counts`` as unsigned shorts (two bytes each), or unsigned ints (four) when one
    does not fit: a section's words rarely repeat 65,535 times."""
    values = list(counts)
    try:
        return array("H", values)
    except OverflowError:
        return array("I", values)


class _Counts:
    """A section's term counts, read-only and compact: its terms as a tuple and their
    counts as an array of unsigned shorts (:func:`_count_array`), about a third of a
    dict's memory (thousands of sections are kept for the next refresh to reuse; only
    the postings are searched).
    Reads as a mapping: iteration gives the terms, ``values()`` the counts."""

    __slots__ = ("counts", "terms")

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.terms = tuple(counts)
        self.counts = _count_array(counts.values())

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)

    def values(self) -> array[int]:
        return self.counts

    def items(self) -> Iterable[tuple[str, int]]:
        return zip(self.terms, self.counts, strict=True)

    def get(self, term: str, default: int | None = None) -> int | None:
        try:
            return self.counts[self.terms.index(term)]
        except ValueError:
            return default

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Counts):
            return self.terms == other.terms and self.counts == other.counts
        return isinstance(other, Mapping) and dict(self.items()) == dict(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"


class _SortedCounts(_Counts):
    """:class:`_Counts` with its terms sorted, so a query's ``term in tf`` (a whole
    page's, for the few pages a ranking explains) is a binary search in C."""

    __slots__ = ()

    def __init__(self, counts: Mapping[str, int]) -> None:
        ordered = sorted(counts.items())
        self.terms = tuple(term for term, _ in ordered)
        self.counts = _count_array([count for _, count in ordered])

    def __contains__(self, term: object) -> bool:
        terms = self.terms
        at = bisect_left(terms, term)  # type: ignore[type-var]
        return at < len(terms) and terms[at] == term

    def get(self, term: str, default: int | None = None) -> int | None:
        terms = self.terms
        at = bisect_left(terms, term)
        return self.counts[at] if at < len(terms) and terms[at] == term else default


@dataclass(slots=True)
class _Doc:
    path: str
    anchor: str
    title: str
    length: int
    #: Term counts: :class:`_SortedCounts` for a whole page (looked up per query),
    #: :class:`_Counts` for a section (only read when postings are built).
    tf: _Counts


def _distinct(terms: Iterable[str]) -> tuple[str, ...]:
    """``terms`` once each, in order: a tuple holds a few words in a third of a
    frozenset's memory, and a quote's words are only intersected with a log line's."""
    return tuple(dict.fromkeys(terms))


@dataclass(slots=True)
class _Quote:
    """An Error quote, or a line of a code block, that a log line may repeat."""

    path: str
    anchor: str
    text: str
    #: Its distinct words (see :func:`_distinct`).
    terms: tuple[str, ...]
    #: True for an Error quote, False for a code line.
    quote: bool = True


class _TermValues(Mapping[str, float]):
    """term -> a float of an array, through the terms' numbers: a read-only mapping that
    holds no Python float per term (a dict of the idfs took 3 MB on the real wiki).
    ``values[number]`` is read as the very float64 stored, so scores are unchanged."""

    __slots__ = ("_numbers", "_values")

    def __init__(self, numbers: Mapping[str, int], values: np.ndarray) -> None:
        self._numbers = numbers
        self._values = values

    def __getitem__(self, term: str) -> float:
        return self._values.item(self._numbers[term])

    def get(self, term: str, default: float | None = None) -> float | None:  # type: ignore[override]
        number = self._numbers.get(term)
        return default if number is None else self._values.item(number)

    def __contains__(self, term: object) -> bool:
        return term in self._numbers

    def __iter__(self) -> Iterator[str]:
        return iter(self._numbers)

    def __len__(self) -> int:
        return len(self._numbers)


class _TermSet(AbstractSet[str]):
    """Some of the terms a :class:`_Bm25` numbers, as one flag byte per term number: a
    read-only set that holds no hash table of its own (a frozenset of the wiki's terms
    took 2 MB)."""

    __slots__ = ("_count", "_held", "_numbers")

    def __init__(self, numbers: Mapping[str, int], held: bytes) -> None:
        self._numbers = numbers
        self._held = held
        self._count = held.count(1)

    def __contains__(self, term: object) -> bool:
        number = self._numbers.get(term)  # type: ignore[call-overload]
        return number is not None and self._held[number] == 1

    def __iter__(self) -> Iterator[str]:
        held = self._held
        return (term for term, number in self._numbers.items() if held[number] == 1)

    def __len__(self) -> int:
        return self._count

    __hash__ = None  # type: ignore[assignment]


@dataclass(slots=True)
class _Bm25:
    """BM25 over postings kept in two flat arrays (doc numbers, and each posting's term
    count, its weight without idf worked out from the count and its document's length
    norm when a query reads it), a term's postings one run of them in doc order: a few
    arrays instead of a tuple and a float per posting, and a query's scores added up by
    numpy instead of a Python loop per posting or per term."""

    docs: list[_Doc]
    #: term -> its number: its postings are ``bounds[number]:bounds[number + 1]`` of
    #: :attr:`ids` and :attr:`counts`, its idf ``idfs[number]``
    numbers: dict[str, int]
    #: where each term's postings start (int64), and the end of the last term's
    bounds: np.ndarray
    #: doc numbers (int32) and term counts (uint16, or uint32 where a count needs it),
    #: term by term: 2 bytes a posting where its float64 weight took 8 (23 MB at 10x)
    ids: np.ndarray
    counts: np.ndarray
    #: each document's BM25 length norm, ``k1 * (1 - b + b * length / average)`` (float64)
    norms: np.ndarray
    #: each term's idf by its number (float64); :attr:`idf` reads it by term
    idfs: np.ndarray

    @property
    def idf(self) -> Mapping[str, float]:
        """term -> its idf (a view of :attr:`numbers` and :attr:`idfs`)."""
        return _TermValues(self.numbers, self.idfs)

    @property
    def weights(self) -> np.ndarray:
        """Each posting's BM25 term weight without idf (float64), term by term."""
        return self._weights(slice(None), self.ids)

    def _weights(self, at: np.ndarray | slice, ids: np.ndarray) -> np.ndarray:
        """The weights of the postings ``at`` (whose doc numbers are ``ids``):
        ``count * (k1 + 1) / (count + norm)``, the very float operations the build made
        when it kept the weights themselves, so the same floats to the last bit."""
        import numpy as np

        counts = self.counts[at].astype(np.float64)
        return counts * (_K1 + 1) / (counts + self.norms[ids])

    @classmethod
    def of(cls, docs: list[_Doc]) -> _Bm25:
        """The postings of ``docs``, made by numpy from each run of documents' terms.

        A term's postings are one run of the arrays (documents in order), the runs in
        the order the terms first appear. No Python object is made per posting and no
        Python code runs per posting (there are millions at 10x the wiki): a run of
        :data:`_RUN_DOCS` documents at a time is turned into arrays by calls in C
        (their terms' numbers and counts), then one stable sort by term number lays
        the postings out. Each C call handles one run, so none holds the interpreter
        lock long enough to stall the bot's event loop. The weights (worked out when a
        query reads them, :meth:`_weights`) are the same floats as the per-posting
        loop's (``count * (k1 + 1) / (count + norm)``, the same operations in the same
        order; the idfs by :func:`math.log`).
        """
        import numpy as np

        n = max(1, len(docs))
        avg = max(1.0, sum(d.length for d in docs) / n if docs else 1.0)
        runs = [docs[first : first + _RUN_DOCS] for first in range(0, len(docs), _RUN_DOCS)]
        # The terms in order of first appearance (a dict keeps a key where it was first
        # put), then numbered: each call in C, over one run or the distinct terms.
        seen: dict[str, None] = {}
        for run in runs:
            seen.update(dict.fromkeys(chain.from_iterable(d.tf for d in run)))
        numbers = dict(zip(seen, range(len(seen)), strict=True))
        del seen
        term_runs: list[np.ndarray] = []
        count_runs: list[np.ndarray] = []
        lengths = np.fromiter((len(d.tf) for d in docs), dtype=np.int64, count=len(docs))
        for run in runs:
            terms = list(chain.from_iterable(d.tf for d in run))
            # itemgetter looks every term up in one C call (a third of map's time).
            term_runs.append(
                np.array(itemgetter(*terms)(numbers), dtype=np.int32)
                if len(terms) > 1
                else np.array([numbers[term] for term in terms], dtype=np.int32)
            )
            count_runs.append(
                np.fromiter(
                    chain.from_iterable(d.tf.values() for d in run),
                    dtype=np.uint32,
                    count=len(terms),
                )
            )
        term_numbers = np.concatenate(term_runs) if term_runs else np.zeros(0, np.int32)
        del term_runs
        order = np.argsort(term_numbers, kind="stable")
        sizes = np.bincount(term_numbers, minlength=len(numbers))
        del term_numbers
        bounds = np.zeros(len(numbers) + 1, dtype=np.int64)
        np.cumsum(sizes, out=bounds[1:])
        doc_numbers = np.repeat(np.arange(len(docs), dtype=np.intc), lengths)
        ids = doc_numbers[order]
        del doc_numbers
        counts = (np.concatenate(count_runs) if count_runs else np.zeros(0, np.uint32))[order]
        del count_runs, order
        if not counts.size or int(counts.max()) <= np.iinfo(np.uint16).max:
            counts = counts.astype(np.uint16)
        norms = np.array([_K1 * (1 - _B + _B * d.length / avg) for d in docs], dtype=np.float64)
        idfs = np.array(
            [math.log(1 + (n - size + 0.5) / (size + 0.5)) for size in sizes.tolist()],
            dtype=np.float64,
        )
        return cls(docs, numbers, bounds, ids, counts, norms, idfs)

    def _span(self, term: str) -> tuple[int, int]:
        number = self.numbers.get(term)
        if number is None:
            return 0, 0
        start, end = self.bounds[number : number + 2].tolist()
        return start, end

    def frequency(self, term: str) -> int:
        """How many documents hold ``term``."""
        start, end = self._span(term)
        return end - start

    def postings(self, term: str) -> list[tuple[int, float]]:
        """(doc number, term weight without idf) of each document holding ``term``."""
        start, end = self._span(term)
        ids = self.ids[start:end]
        ids, weights = ids.tolist(), self._weights(slice(start, end), ids).tolist()
        return list(zip(ids, weights, strict=True))

    def scores(
        self, query: Mapping[str, float], max_share: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """(score, first) per document: its BM25 score for ``query`` (0.0 when it holds no
        query term), and the position in ``query`` of the first term it holds
        (``len(query)`` when none). Terms held by more than ``max_share`` of the
        documents (and at least 20 of them) are passed over.

        The postings of the query's terms are laid end to end in the query's order, each
        weight times its term's ``weight * idf``, and summed per document by
        ``numpy.bincount``, which adds them one at a time in that order starting from
        0.0: the float operations of a loop adding ``factor * term_weight`` to a
        dictionary term by term, so the sums are the same to the last bit (the tests
        compare them with that loop). Only the terms' numbers are looked up in Python:
        their runs are found, and gathered, by numpy.
        """
        import numpy as np

        count = len(self.docs)
        max_docs = max(20, int(max_share * count)) if max_share < 1.0 else count
        first = np.full(count, len(query), dtype=np.int32)
        numbers = self.numbers
        terms = np.fromiter(
            (numbers.get(term, -1) for term in query), dtype=np.intp, count=len(query)
        )
        positions = np.flatnonzero(terms >= 0)
        terms = terms[positions]
        starts = self.bounds[terms]
        lengths = self.bounds[terms + 1] - starts
        kept = lengths <= max_docs
        positions, terms, starts, lengths = (
            positions[kept],
            terms[kept],
            starts[kept],
            lengths[kept],
        )
        if not positions.size:
            return np.zeros(count, dtype=np.float64), first
        query_weights = np.fromiter(query.values(), dtype=np.float64, count=len(query))
        factors = query_weights[positions] * self.idfs[terms]
        # the runs laid end to end: posting k of run r is at starts[r] + k
        ends = np.cumsum(lengths)
        at = np.arange(ends[-1]) + np.repeat(starts - (ends - lengths), lengths)
        ids = self.ids[at]
        values = np.repeat(factors, lengths) * self._weights(at, ids)
        out = np.bincount(ids, weights=values, minlength=count)
        np.minimum.at(first, ids, np.repeat(positions.astype(np.int32), lengths))
        return out, first


def _section_terms(page: Page, section: Section, memo: _TokenMemo) -> Counter[str]:
    terms: Counter[str] = Counter()
    heading = " ".join((page.title, *section.parents, section.title))
    for term, _ in _tokens(heading, memo):
        terms[term] += 3
    for term, _ in _tokens(section.text[:40_000], memo):
        terms[term] += 1
    for block in section.code:
        for term, _ in _tokens(block.text[:20_000], memo):
            terms[term] += 1
    for item in section.labelled:
        if label_word(item.label) in _ERROR_LABELS:
            for quote, _ in item.quotes:
                for term, _ in _tokens(quote, memo):
                    terms[term] += 2
    return terms


@dataclass(slots=True)
class _Fused:
    """The pages' scores for one request (:meth:`PageRanker._fused`) and what picks each
    page's best section: arrays over all pages and sections, read for the few pages shown.

    Every operation gives, float for float, what the dictionaries it replaced gave
    (``tests/knowledge/search/test_pages_scoring.py`` compares them with those loops):
    a score is a page's fused value times its prior, a bonus is added to it, and pages
    are ordered by score, then path (pages are numbered in path order)."""

    #: Per page: its fused score times its prior (meaningful where :attr:`held`).
    scores: np.ndarray
    #: Per page: True when it holds a query term or was given a bonus.
    held: np.ndarray
    #: Per section: its score and the position of the first query term it holds
    #: (:attr:`section_terms` when none), see :meth:`_Bm25.scores`.
    section_scores: np.ndarray
    section_first: np.ndarray
    section_terms: int
    #: Per section: its page (:attr:`PageRanker.section_pages`).
    section_pages: np.ndarray

    def add(self, page: int, bonus: float) -> None:
        """Add ``bonus`` to a page's score (to 0.0 for a page holding no query term)."""
        before = float(self.scores[page]) if self.held[page] else 0.0
        self.scores[page] = before + bonus
        self.held[page] = True

    def top(self, limit: int) -> list[tuple[int, float]]:
        """(page, score) of the ``limit`` best pages held: by score, then page number."""
        import numpy as np

        pages = np.flatnonzero(self.held)
        scores = self.scores[pages]
        order = np.lexsort((pages, -scores))[:limit]
        return list(zip(pages[order].tolist(), scores[order].tolist(), strict=True))

    def best_sections(self, pages: Sequence[int]) -> list[int]:
        """The number of each page's best section, -1 for a page none of whose sections
        holds a section term: the highest score; of equals, the one holding the earliest
        query term, then the first (the one a dictionary filled term by term would list
        first)."""
        import numpy as np

        wanted = np.zeros(len(self.held), dtype=bool)
        wanted[list(pages)] = True
        holding = self.section_first < self.section_terms
        held = np.flatnonzero(holding & wanted[self.section_pages])
        page_of = self.section_pages[held]
        # by page, then best score, then first term, then number; each page's first row
        order = np.lexsort((held, self.section_first[held], -self.section_scores[held], page_of))
        ordered = page_of[order]
        leaders = order[np.r_[True, ordered[1:] != ordered[:-1]]] if held.size else order
        best = dict(zip(page_of[leaders].tolist(), held[leaders].tolist(), strict=True))
        return [best.get(page, -1) for page in pages]


@dataclass(frozen=True, slots=True)
class _PageParts:
    """What the ranker reads of one page: its section documents, its page document, its
    Error quotes and code lines, and the (family word, version) pairs it names. Made of
    the page alone (its kind, which depends on other pages, is not in it), so the ranker
    of a later load takes it as it is while the page's bytes (``sha``) are the same."""

    sha: str
    sections: tuple[_Doc, ...]
    page: _Doc
    quotes: tuple[_Quote, ...]
    #: Every line of the page, for an error line it repeats in prose (see
    #: :mod:`knowledge.search.verbatim`).
    lines: PageLines
    #: None until derived (only with a catalogue, from its family words).
    versions: frozenset[tuple[str, str]] | None = None

    @classmethod
    def of(cls, path: str, page: Page, memo: _TokenMemo) -> _PageParts:
        sections: list[_Doc] = []
        quotes: list[_Quote] = []
        whole: Counter[str] = Counter()
        for term, _ in _tokens(page.title, memo):
            whole[term] += 3
        for section in page.sections:
            terms = _section_terms(page, section, memo)
            whole.update(terms)
            sections.append(
                _Doc(path, section.anchor, section.title, sum(terms.values()), _Counts(terms))
            )
            for item in section.labelled:
                if label_word(item.label) not in _ERROR_LABELS:
                    continue
                for quote, _ in item.quotes:
                    qterms = _distinct(t for t, _ in _tokens(_clean_error_line(quote), memo))
                    if len(qterms) >= 2:
                        quotes.append(_Quote(path, section.anchor, quote, qterms))
            for block in section.code:
                for line in block.text.splitlines()[:400]:
                    lterms = _distinct(t for t, _ in _tokens(_clean_error_line(line), memo))
                    if len(lterms) >= 3:
                        quotes.append(_Quote(path, section.anchor, line, lterms, False))
        page_doc = _Doc(path, "", page.title, sum(whole.values()), _SortedCounts(whole))
        return cls(page.sha, tuple(sections), page_doc, tuple(quotes), PageLines.of(page))


# ---------------------------------------------------------------------- ranker


@dataclass(slots=True)
class PageRanker:
    """Ranks the pages of one loaded wiki for long, pasted help requests."""

    sections: _Bm25
    pages: _Bm25
    kinds: dict[str, str]
    page_titles: dict[str, str]
    quotes: list[_Quote]
    #: term -> numbers of the Error quotes holding it (in :attr:`quotes`), as an array of
    #: C ints: 4 bytes a posting where a list of Python ints took 36 (17 MB at 10x)
    quote_postings: dict[str, array[int]]
    #: term -> numbers of the code lines holding it (in :attr:`quotes`), the same way
    line_postings: dict[str, array[int]]
    #: The page document number of each section document (int32), in section order
    #: (so in page order: a page's sections are one run).
    section_pages: np.ndarray
    #: Each page document's prior (:data:`PAGE_PRIORS` of its kind), in page order.
    page_priors: np.ndarray
    #: Every line of every page, for an error line a page repeats anywhere.
    verbatim: VerbatimIndex | None = None
    #: The page numbers of the hubs and current runbooks (int32), and for each the
    #: factor that turns its prior into a reference page's (float64): a request naming
    #: no model reads them as any other page.
    model_pages: np.ndarray | None = None
    model_page_factors: np.ndarray | None = None
    families: list[tuple[tuple[str, ...], Family]] = field(default_factory=list)
    expansions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Every term of the wiki's answering pages, all but diaries (:data:`_PASSING_KINDS`):
    #: a model named only in passing there is one the wiki has no page for.
    vocabulary: AbstractSet[str] = frozenset()
    #: (family word, version) pairs the wiki names (``("glm", "5.1")``), and the
    #: words of family names: a version of a family the wiki never names is a newer model.
    named_versions: frozenset[tuple[str, str]] = frozenset()
    family_words: frozenset[str] = frozenset()
    #: A family word held by one model family alone (``minimax`` when one family's name
    #: or hub starts with it): naming the maker names that family.
    #: With each, the lines and generations its versions carry after that word
    #: (``("v", "4")`` of ``V4``, see :func:`_version_line`).
    family_by_word: dict[str, tuple[Family, frozenset[tuple[str, str]]]] = field(
        default_factory=dict
    )
    #: path -> keys of the families whose hub or version map lists that page.
    page_families: dict[str, frozenset[str]] = field(default_factory=dict)
    #: path -> number of its page document; (path, anchor) -> section title.
    page_number: dict[str, int] = field(default_factory=dict)
    section_titles: dict[tuple[str, str], str] = field(default_factory=dict)
    #: path -> what the ranker read of that page (see :class:`_PageParts`), for the
    #: next load's ranker to take where the page is still the same.
    page_parts: dict[str, _PageParts] = field(default_factory=dict, repr=False, compare=False)
    #: The terms of words requests used (see :func:`_tokens`), kept for later requests
    #: (most share words with earlier ones), up to :data:`_MAX_REMEMBERED_WORDS`.
    words: _TokenMemo = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(
        cls,
        wiki: Wiki,
        statuses: Mapping[str, str] | None = None,
        *,
        catalogue: Catalogue | None = None,
        glossary: Glossary | None = None,
        previous: PageRanker | None = None,
    ) -> PageRanker:
        """The ranker of ``wiki``. ``previous``: the ranker of an earlier load, whose
        documents and quotes of pages that are still the same (same path and bytes)
        are taken as they are instead of being read again: after a refresh that
        changed a few pages, only those are read (and their sections decoded)."""
        statuses = statuses or {}
        older = _older_versions(wiki.pages, statuses)
        linked = _linked_pages(wiki)
        family_words = _family_words(catalogue) if catalogue is not None else frozenset()
        kept = previous.page_parts if previous is not None else {}
        # A page's named versions depend on the family words: kept only if those are too.
        versions_kept = previous is not None and previous.family_words == family_words
        section_docs: list[_Doc] = []
        page_docs: list[_Doc] = []
        kinds: dict[str, str] = {}
        titles: dict[str, str] = {}
        quotes: list[_Quote] = []
        parts: dict[str, _PageParts] = {}
        memo: _TokenMemo = {}  # the wiki's words, read once each
        for path in sorted(wiki.pages):
            page = wiki.pages[path]
            kinds[path] = page_kind(
                page, statuses.get(path) or older.get(path), linked=linked is None or path in linked
            )
            titles[path] = page.title
            one = kept.get(path)
            if one is None or not page.sha or one.sha != page.sha:
                one = _PageParts.of(path, page, memo)
            if catalogue is not None and (one.versions is None or not versions_kept):
                one = dataclasses.replace(
                    one,
                    versions=frozenset(
                        pair
                        for text in _page_texts(page)
                        for pair in _named_versions(text, family_words)
                    ),
                )
            parts[path] = one
            section_docs.extend(one.sections)
            page_docs.append(one.page)
            quotes.extend(one.quotes)
        import numpy as np

        postings: dict[str, list[int]] = defaultdict(list)
        line_postings: dict[str, list[int]] = defaultdict(list)
        for number, quote in enumerate(quotes):
            for term in quote.terms:
                (postings if quote.quote else line_postings)[term].append(number)
        page_number = {d.path: i for i, d in enumerate(page_docs)}
        ranker = cls(
            sections=_Bm25.of(section_docs),
            pages=_Bm25.of(page_docs),
            kinds=kinds,
            page_titles=titles,
            quotes=quotes,
            quote_postings={term: array("i", numbers) for term, numbers in postings.items()},
            line_postings={term: array("i", numbers) for term, numbers in line_postings.items()},
            section_pages=np.array([page_number[d.path] for d in section_docs], dtype=np.int32),
            page_priors=np.array(
                [PAGE_PRIORS.get(kinds.get(d.path, "reference"), 1.0) for d in page_docs],
                dtype=np.float64,
            ),
        )
        models = [i for i, d in enumerate(page_docs) if kinds[d.path] in _MODEL_KINDS]
        ranker.model_pages = np.array(models, dtype=np.int32)
        ranker.model_page_factors = np.array(
            [PAGE_PRIORS["reference"] / PAGE_PRIORS[kinds[page_docs[i].path]] for i in models],
            dtype=np.float64,
        )
        page_terms = ranker.pages.numbers
        vocabulary = bytearray(len(page_terms))
        for doc in page_docs:
            if kinds[doc.path] not in _PASSING_KINDS:
                for term in doc.tf:
                    vocabulary[page_terms[term]] = 1
        ranker.vocabulary = _TermSet(page_terms, bytes(vocabulary))
        ranker.page_number = page_number
        ranker.section_titles = {(d.path, d.anchor): d.title for d in section_docs}
        ranker.page_parts = parts
        held = previous.verbatim if previous is not None else None
        for path, one in parts.items():
            if not one.lines.shingled and held is None:  # kept, but no index to take from
                parts[path] = dataclasses.replace(one, lines=PageLines.of(wiki.pages[path]))
        ranker.verbatim = VerbatimIndex.build(
            ((path, one.lines) for path, one in parts.items()), wiki.pages, previous=held
        )
        # The index holds the hashes now: the parts kept for the next load shed theirs.
        for path, one in parts.items():
            if one.lines.shingled:
                parts[path] = dataclasses.replace(one, lines=one.lines.shed())
        ranker.verbatim.parts = [(path, one.lines) for path, one in parts.items()]
        if catalogue is not None:
            ranker.families = _family_names(catalogue)
            ranker.page_families = _page_families(catalogue)
            ranker.family_words = family_words
            ranker.family_by_word = _families_by_word(catalogue)
            ranker.named_versions = frozenset(
                pair for one in parts.values() for pair in one.versions or ()
            )
        if glossary is not None:
            ranker.expansions = _expansions(glossary)
        return ranker

    # -- ranking -----------------------------------------------------------------

    def rank(self, text: str, errors: Sequence[str] = (), *, limit: int = 5) -> PageRanking:
        """The pages that best answer ``text`` (with its error lines), best first."""
        text = text[:MAX_REQUEST_CHARS]
        if len(self.words) > _MAX_REMEMBERED_WORDS:
            self.words.clear()  # a pure memo: emptied, it fills again with today's words
        memo = self.words
        query = request_terms(text, errors, memo=memo)
        # Words the request does not hold, brought by what it holds, rank pages but are
        # never shown as the user's words: the meaning of an acronym it uses (evidence
        # of its topic still), and the words of the fix a line asks for (no evidence).
        meanings: set[str] = set()
        for term in list(query):
            for extra in self.expansions.get(term, ()):
                if extra not in query:
                    query[extra] = _W_EXPANSION
                    meanings.add(extra)
        fix: set[str] = set()
        arch_missing = any(
            _ARCH_MISSING_RE.search(line) for line in (text, *errors[:MAX_ERROR_LINES])
        )
        if arch_missing:
            for term in _ARCH_MISSING_TERMS:
                if term not in query:
                    fix.add(term)
                query[term] = max(query.get(term, 0.0), _W_ARCH)
        if not query:
            return PageRanking((), "none")
        family = self._named_family(text)
        idf = self.sections.idf.get
        keys = {term: -weight * idf(term, 0.0) for term, weight in query.items()}
        telling = sorted(query, key=keys.__getitem__)  # a stable sort: equals in query order
        section_query = {term: query[term] for term in telling[:_MAX_SECTION_TERMS]}
        fused = self._fused(query, section_query)
        unknown = self._unknown_names(text)
        # A request naming the family among models of other makers (the wiki has no
        # page for them) asks about something they share: the family is no subject.
        subject = family if family is not None and not _others(family, unknown) else None
        if subject is None and self.model_pages is not None:
            # A hub or current runbook is the page for one model: without a model as the
            # request's subject, it is a page like any other (its words match a
            # request's generic deployment words: image, container, flags).
            fused.scores[self.model_pages] *= self.model_page_factors
        quote_hits = self._quote_hits(errors, text, functools.partial(_error_tokens, memo=memo))
        self._verbatim_hits(errors, quote_hits)
        for path, (strength, _, _) in quote_hits.items():
            fused.add(self.page_number[path], strength)
        if subject is not None:
            for path in filter(None, (subject.hub, subject.current_page)):
                if path in self.page_titles:
                    fused.add(self.page_number[path], 0.35)
        page_docs = self.pages.docs
        ranked = [(page_docs[page].path, score) for page, score in fused.top(max(1, limit))]
        evidence = quote_hits or family is not None or unknown
        # What shows that a page covers the request: its terms and their meanings.
        topic = {term: weight for term, weight in query.items() if term not in fix}
        if ranked and not evidence and not self._telling(ranked[0][0], topic):
            ranked = []  # a word in common is no reason to read a page
        hits = []
        shown = [t for t in self._shown_terms(topic) if t not in meanings] if ranked else []
        best_sections = fused.best_sections([self.page_number[path] for path, _ in ranked])
        for (path, score), number in zip(ranked, best_sections, strict=True):
            anchor, section_title = "", ""
            why: list[tuple[str, str]] = []
            if path in quote_hits:
                _, anchor, quote = quote_hits[path]
                why.append(("error_quote", quote))
            elif number >= 0:
                doc = self.sections.docs[number]
                anchor, section_title = doc.anchor, doc.title
            if anchor and not section_title:
                section_title = self.section_titles.get((path, anchor), "")
            if family is not None and path in (family.hub, family.current_page):
                why.append(("family", family.name))
            shared = self._shared_words(path, shown)
            if shared:
                why.append(("terms", ", ".join(shared)))
            hits.append(
                PageHit(
                    path=path,
                    anchor=anchor,
                    title=self.page_titles.get(path, path),
                    section_title=section_title,
                    score=round(score, 4),
                    kind=self.kinds.get(path, "reference"),
                    why=tuple(why),
                )
            )
        newer = (*self._unknown_versions(text), *self._unknown_variants(text))
        unknown = tuple(dict.fromkeys((*newer, *unknown)))[:10]
        confidence = self._confidence(
            hits, topic, quote_hits, family, unknown, newer, arch_missing=arch_missing
        )
        return PageRanking(
            tuple(hits), confidence, unknown, family.name if family is not None else None
        )

    def _fused(self, query: Mapping[str, float], section_query: Mapping[str, float]) -> _Fused:
        """Each page's score fused with its best section's, times its prior, for the pages
        holding any term of ``query``; sections are scored on ``section_query``."""
        import numpy as np

        section_scores, section_first = self.sections.scores(section_query, _MAX_SECTION_SHARE)
        page_scores, page_first = self.pages.scores(query)
        # A page's best section score: the highest of its sections' (0.0 for none; a
        # section holding a term scores above 0.0, one holding none exactly 0.0).
        best_score = np.zeros(len(self.pages.docs), dtype=np.float64)
        np.maximum.at(best_score, self.section_pages, section_scores)
        top_section = (float(section_scores.max()) if section_scores.size else 0.0) or 1.0
        top_page = (float(page_scores.max()) if page_scores.size else 0.0) or 1.0
        scores = (
            _SECTION_SHARE * best_score / top_section
            + (1 - _SECTION_SHARE) * page_scores / top_page
        ) * self.page_priors
        return _Fused(
            scores=scores,
            held=page_first < len(query),
            section_scores=section_scores,
            section_first=section_first,
            section_terms=len(section_query),
            section_pages=self.section_pages,
        )

    def _named_family(self, text: str) -> Family | None:
        folded = " " + fold_key(text[:4000]) + " "
        found: list[tuple[int, Family]] = []
        for names, family in self.families:
            for name in names:
                if f" {name} " in folded:
                    found.append((len(name), family))
                    break
        if not found:
            named: dict[int, Family] = {}
            for match in _FAMILY_WORD_RE.finditer(text[:4000]):
                word, after = match.group(1), match.group(2)
                entry = self.family_by_word.get(word.casefold())
                if entry is None or (word.islower() and not after):
                    continue
                family, letters = entry
                if after and letters and _version_line(after) not in letters:
                    continue  # another line or generation of the maker's models (R1, V3 by V4)
                named[id(family)] = family
            return next(iter(named.values())) if len(named) == 1 else None
        found.sort(key=lambda item: -item[0])
        if len(found) > 1 and found[0][0] == found[1][0] and found[0][1] is not found[1][1]:
            return None
        return found[0][1]

    def _quote_hits(
        self,
        errors: Sequence[str],
        text: str,
        line_tokens: Callable[[str], list[tuple[str, bool]]] | None = None,
    ) -> dict[str, tuple[float, str, str]]:
        """Pages whose Error quotes (or code lines) the request's error lines contain.

        An Error quote counts when a line holds 80% of its words; a code line when it
        holds 80% of the line's words (at least 3) and half of its own. The quotes'
        postings are counted whole (a wiki has few); for the code lines, any one holding
        80% of a line's ``n`` words holds one of any ``n - m + 1`` of them (``m``: the
        fewest enough), so only the lines in the postings of the ``n - m + 1`` rarest are
        read, and each is checked on its own words. Of a page's matches of equal
        strength the one a count over every posting, term after term, would meet first
        is kept (its earliest word in the line's term order, then its number), as before.
        """
        tokens = line_tokens or _error_tokens
        lines = [line for line in errors if line.strip()][:MAX_ERROR_LINES]
        found: dict[str, tuple[float, str, str]] = {}
        # A line's terms in the order they first appear in it (a set's order would hang
        # on the interpreter's string hashing, so ties would go one way or the other
        # from one run to the next).
        line_orders = [dict.fromkeys(t for t, _ in tokens(line)) for line in lines]
        quotes = self.quotes
        for ordered in line_orders:
            if len(ordered) < 2:
                continue
            terms = frozenset(ordered)
            size = len(terms)
            order = {term: k for k, term in enumerate(ordered)}
            matches: list[tuple[int, int, float, str]] = []
            counts: Counter[int] = Counter()
            for term in terms:
                counts.update(self.quote_postings.get(term, ()))
            for number, shared in counts.items():
                entry = quotes[number]
                inside = shared / len(entry.terms)
                if shared < 2 or inside < 0.8:
                    continue
                key = min(order[t] for t in terms.intersection(entry.terms))
                matches.append((key, number, 0.6 * inside, entry.text))
            enough = next((s for s in range(3, size + 1) if not s / size < 0.8), None)
            if enough is not None:
                rarest = sorted(ordered, key=lambda t: len(self.line_postings.get(t, ())))
                candidates: set[int] = set()
                for term in rarest[: size - enough + 1]:
                    candidates.update(self.line_postings.get(term, ()))
                for number in candidates:
                    entry = quotes[number]
                    held = terms.intersection(entry.terms)
                    shared = len(held)
                    if shared < 3 or shared / size < 0.8 or shared / len(entry.terms) < 0.5:
                        continue
                    key = min(order[t] for t in held)
                    matches.append((key, number, 0.3 * shared / size, entry.text.strip()[:200]))
            matches.sort(key=lambda match: match[:2])
            for _, number, strength, shown in matches:
                entry = quotes[number]
                if strength > found.get(entry.path, (0.0, "", ""))[0]:
                    found[entry.path] = (strength, entry.anchor, shown)
        return found

    def _verbatim_hits(
        self, errors: Sequence[str], found: dict[str, tuple[float, str, str]]
    ) -> None:
        """Add to ``found`` (:meth:`_quote_hits`) the pages with a line, any line (prose
        too), repeating one of ``errors`` near verbatim (:mod:`knowledge.search.verbatim`):
        it weighs as much as an Error quote holding all of it."""
        if self.verbatim is None:
            return
        lines = [line for line in errors if line.strip()][:MAX_ERROR_LINES]
        for path, hit in self.verbatim.find(lines, _verbatim_telling).items():
            strength = _W_VERBATIM * hit.share
            if strength > found.get(path, (0.0, "", ""))[0]:
                found[path] = (strength, hit.anchor, hit.line[:200])

    def _telling(self, path: str, query: Mapping[str, float]) -> bool:
        """True when the page holds at least :data:`_MIN_SHARED_WORDS` of the request's
        terms that at most half of the wiki's pages (or two) hold."""
        i = self.page_number.get(path)
        if i is None:
            return False
        tf = self.pages.docs[i].tf
        most = max(2, len(self.pages.docs) // 2)
        shared = 0
        for term in query:
            if term in tf and _telling_term(term) and self.pages.frequency(term) <= most:
                shared += 1
                if shared >= _MIN_SHARED_WORDS:
                    return True
        return False

    def _shown_terms(self, query: Mapping[str, float]) -> list[str]:
        """The request's terms rare enough to be shown as a reason, most telling first
        (weight x rarity; equals in the request's order)."""
        idf = self.pages.idf
        rare = _MIN_SHOWN_IDF
        keys = {
            t: -(weight * idf[t])
            for t, weight in query.items()
            if idf.get(t, 0.0) >= rare and _telling_term(t)
        }
        return sorted(keys, key=keys.__getitem__)  # a stable sort: equals in query order

    def _shared_words(self, path: str, shown: Sequence[str], limit: int = 5) -> list[str]:
        """The first ``limit`` of ``shown`` (:meth:`_shown_terms`) the page holds."""
        i = self.page_number.get(path)
        if i is None or limit <= 0:
            return []
        tf = self.pages.docs[i].tf
        shared: list[str] = []
        for term in shown:
            if term in tf:
                shared.append(term)
                if len(shared) >= limit:
                    break
        return shared

    def _unknown_names(self, text: str) -> tuple[str, ...]:
        """Model names the request uses and the wiki never does.

        A model name is a Hugging Face repository id (``org/name``) or a name with
        a parameter count (``...-20b``, ``...-a3b``); a model the wiki does not name
        is one it cannot have a runbook for.
        """
        unknown: list[str] = []
        for match in _MODEL_RE.finditer(text[:MAX_REQUEST_CHARS]):
            name = match.group().casefold().strip("/.-")
            if name in self.vocabulary or name in unknown or _FILE_RE.search(name):
                continue
            tail = name.rsplit("/", 1)[-1]
            if tail in self.vocabulary:
                continue
            unknown.append(name)
        return tuple(unknown[:10])

    def _unknown_versions(self, text: str) -> tuple[str, ...]:
        """Versions of a family the wiki never names (``GLM-9.9`` when it knows 5.1 and 5.2):
        a newer model than the wiki covers, whatever the family's pages say."""
        found: list[str] = []
        for word, version in _named_versions(text[:MAX_REQUEST_CHARS], self.family_words):
            name = f"{word}-{version}"
            if (word, version) not in self.named_versions and name not in found:
                found.append(name)
        return tuple(found[:10])

    def _unknown_variants(self, text: str) -> tuple[str, ...]:
        """Hyphenated names that extend a family's name with words the glossary does not
        define (``Widget-Pro-Vision-Exp`` when the wiki knows ``Widget-Pro`` and never the
        whole): another model of the family than the wiki covers. A format or method the
        glossary defines (``-NVFP4``, ``-MTP``) or a number keeps the family's model."""
        names = {name for names, _ in self.families for name in names if " " in name}
        found: list[str] = []
        for word in _TOKEN_RE.findall(text[:MAX_REQUEST_CHARS]):
            raw = word.strip("-")
            if "-" not in raw:
                continue
            lowered = raw.casefold()
            if lowered in self.vocabulary or lowered in found:
                continue
            parts = lowered.split("-")
            for size in range(len(parts) - 1, 0, -1):
                if fold_key("-".join(parts[:size])) not in names:
                    continue
                rest = [p for p in parts[size:] if not p.isdigit() and p not in self.expansions]
                if rest and all(p.isalpha() for p in rest):
                    found.append(lowered)
                break
        return tuple(found[:10])

    def _confidence(
        self,
        hits: Sequence[PageHit],
        query: Mapping[str, float],
        quote_hits: Mapping[str, tuple[float, str, str]],
        family: Family | None,
        unknown: Sequence[str],
        newer: Sequence[str] = (),
        *,
        arch_missing: bool = False,
    ) -> str:
        if not hits:
            return "none"
        if quote_hits and hits[0].path in quote_hits:
            return "high"
        covered = self._coverage(hits[0].path, query)
        if newer:
            return "low"  # about a version of a family the wiki never names
        if family is not None and hits[0].path in (family.hub, family.current_page):
            return "high" if covered >= 0.5 else "medium"
        owners = self.page_families.get(hits[0].path)
        if family is not None and owners and family.key not in owners:
            return "low"  # another model's runbook first: no answer for the model named
        # A family named, but another page first: the name is no evidence for that page,
        # which must hold the request's telling words like any other. A model name the
        # wiki never writes that carries the family's word is that family's checkpoint
        # (a repository id, a quantisation), not a model the wiki does not cover.
        if family is not None:
            unknown = _others(family, unknown)
        # A binary without the GPU's architecture is fixed by another build whatever model
        # it was to serve: with an installation, build or image section first, a model the
        # wiki never names is not what the request is about.
        if arch_missing and _is_build_section(hits[0]):
            unknown = ()
        if unknown:
            return "low"  # about a model the wiki never names
        return "medium" if covered >= _CONFIDENT_COVERAGE else "low"

    def _coverage(self, path: str, query: Mapping[str, float]) -> float:
        """Share of the request's telling weight (weight x rarity) the page holds: its
        telling terms only (:func:`_telling_term`), no noise and no generic error word."""
        i = self.page_number.get(path)
        if i is None:
            return 0.0
        tf = self.pages.docs[i].tf
        total = held = 0.0
        for term, weight in query.items():
            idf = self.pages.idf.get(term)
            if idf is None or not _telling_term(term):
                continue
            total += weight * idf
            if term in tf:
                held += weight * idf
        return held / total if total else 0.0


def _is_build_section(hit: PageHit) -> bool:
    """True when the hit's section (or its page, without one) is titled with a word of
    :data:`_ARCH_MISSING_TERMS`: a section on installing, building or images."""
    title = hit.section_title or hit.title
    return any(term in _ARCH_MISSING_TERMS for term, _ in _tokens(title))


def _linked_pages(wiki: Wiki) -> frozenset[str] | None:
    """The pages some other page of ``wiki`` links to; None unless they are nearly all
    of its pages (:data:`_LINKED_SHARE`): only where the wiki's links reach nearly every
    page does one they leave out stand apart (a small wiki with few links, or one
    whose pages stand alone, has no unlinked pages)."""
    linked = frozenset(
        link.path
        for page in wiki.pages.values()
        for link in page.links
        if link.path and link.path != page.path
    )
    share = len(linked & wiki.pages.keys()) / len(wiki.pages) if wiki.pages else 0.0
    return linked if share >= _LINKED_SHARE else None


def _older_versions(pages: Iterable[str], statuses: Mapping[str, str]) -> dict[str, str]:
    """``historical`` for each page that no version map lists but that continues a
    listed series below its highest listed number (``name_v7.md`` when the map lists
    ``name_v9.md``): an older runbook the hub no longer names, not a reference page."""
    listed: dict[tuple[str, str, str], int] = {}
    for path, status in statuses.items():
        series = version_series(path)
        if series is not None and status in ("current", "historical", "archive", "legacy"):
            key = (series[0], series[1].casefold(), series[3].casefold())
            listed[key] = max(listed.get(key, -1), series[2])
    older: dict[str, str] = {}
    for path in pages:
        series = version_series(path)
        if path in statuses or series is None:
            continue
        top = listed.get((series[0], series[1].casefold(), series[3].casefold()))
        if top is not None and series[2] < top:
            older[path] = "historical"
    return older


def _family_names(catalogue: Catalogue) -> list[tuple[tuple[str, ...], Family]]:
    out = []
    for family in catalogue.families:
        names = {fold_key(family.name)}
        if (hub := _hub_name(family)) is not None:
            names.add(fold_key(hub))
        names.update(fold_key(v.title) for v in family.current)
        names = {n for n in names if len(n) >= 3}
        out.append((tuple(sorted(names, key=len, reverse=True)), family))
    return out


def _page_families(catalogue: Catalogue) -> dict[str, frozenset[str]]:
    """path -> the keys of the families whose hub, current or listed version it is."""
    owners: dict[str, set[str]] = defaultdict(set)
    for family in catalogue.families:
        for path in (family.hub, *(v.path for v in (*family.current, *family.versions))):
            if path:
                owners[path].add(family.key)
    return {path: frozenset(keys) for path, keys in owners.items()}


def _hub_name(family: Family) -> str | None:
    """The file name of a family's hub without ``.md`` (``minimax-m25``), if it has one."""
    return family.hub.rsplit("/", 1)[-1].removesuffix(".md") if family.hub else None


def _first_words(family: Family) -> set[str]:
    """The first word of a family's name and of its hub's file name: the model's maker
    or series (``glm``, ``kimi``, ``minimax``), the word a version number follows."""
    names = [family.name.strip(), _hub_name(family) or ""]
    return {m.group().casefold() for n in names if (m := _FIRST_WORD_RE.match(n))}


def _others(family: Family, unknown: Iterable[str]) -> list[str]:
    """The names of ``unknown`` (model names the wiki never writes) that do not carry
    the family's word: other makers' models. One that does is the family's own
    checkpoint (a repository id, a quantisation)."""
    words = _first_words(family)
    return [name for name in unknown if not any(word in name for word in words)]


def _family_words(catalogue: Catalogue) -> frozenset[str]:
    """The first words (:func:`_first_words`) of every family."""
    return frozenset(word for family in catalogue.families for word in _first_words(family))


def _version_letter(version: str) -> str:
    """``-V4`` -> ``v``, ``m2.5`` -> ``m``, ``5.2`` -> ``""``: the model line a version names."""
    first = version.lstrip("-_ ")[:1]
    return first.casefold() if first.isalpha() else ""


def _version_line(version: str) -> tuple[str, str]:
    """``-V4`` -> ``("v", "4")``, ``m2.5`` -> ``("m", "2")``, ``5.2`` -> ``("", "5")``: the
    model line a version names and its generation (the first digit of the number)."""
    letter = _version_letter(version)
    digits = version.lstrip("-_ ")[len(letter) :]
    return letter, digits[:1]


def _families_by_word(
    catalogue: Catalogue,
) -> dict[str, tuple[Family, frozenset[tuple[str, str]]]]:
    """Family word -> the one model family (a family with a current page) it starts, or
    the one family of the front page among several (legacy ones are older models), with
    the line and generation of each version its names write after the word (``("v", "4")``
    of DeepSeek-V4)."""
    owners: dict[str, list[Family]] = defaultdict(list)
    for family in catalogue.families:
        if not family.current:
            continue  # a row of the front page that is no model (a list of others)
        for word in _first_words(family):
            if family not in owners[word]:
                owners[word].append(family)
    named: dict[str, tuple[Family, frozenset[tuple[str, str]]]] = {}
    for word, found in owners.items():
        main = [f for f in found if f.group == "main"]
        if len(found) != 1 and len(main) != 1:
            continue
        family = found[0] if len(found) == 1 else main[0]  # the front page's before legacy
        texts = [family.name, *(v.title for v in family.current), _hub_name(family) or ""]
        words = frozenset({word})
        letters = {_version_line(v) for t in texts for _, v in _named_versions(t, words)}
        named[word] = (family, frozenset(letters))
    return named


def _page_texts(page: Page) -> Iterable[str]:
    yield page.title
    for section in page.sections:
        yield section.title
        yield section.text
        for block in section.code:
            yield block.text


def _named_versions(text: str, words: frozenset[str]) -> Iterable[tuple[str, str]]:
    """(family word, version) for each ``name-version`` in ``text`` whose name is a family word."""
    for match in _NAMED_VERSION_RE.finditer(text):
        word = match.group(1).casefold()
        if word in words:
            yield word, match.group(2).casefold()


def _expansions(glossary: Glossary) -> dict[str, tuple[str, ...]]:
    """term -> extra terms: an acronym's meaning words and a meaning's acronym."""
    out: dict[str, tuple[str, ...]] = {}
    for entry in glossary.entries if hasattr(glossary, "entries") else ():
        meaning = [t for t, _ in _tokens(entry.meaning[:200])][:6]
        for name in entry.names:
            key = [t for t, _ in _tokens(name)]
            if len(key) != 1:
                continue
            out[key[0]] = tuple(dict.fromkeys((*out.get(key[0], ()), *meaning)))
    return out
