"""Where a request's error line appears nearly word for word in the wiki.

An error line a page repeats is the strongest evidence there is that the page is
about that failure, whatever the page: a runbook, a reference page or a daily
summary that mentions it in passing. The page ranker's Error quotes and code lines
catch the lines the wiki sets apart; this index catches the rest, every line of
every page (prose, lists, tables, code), so that a page quoting the line inside a
sentence is found too.

A line is compared by its words after :func:`verbatim_words` took out what differs
between machines (paths but their last part, addresses, hexadecimal, numbers), as
overlapping runs of :data:`SHINGLE` words (shingles). A wiki line *holds* a request's
error line when it holds 80% of the error line's shingles, or when the error line
holds 80% of the wiki line's own; the tails of a request's line after its last few
``: `` or ``] `` count as lines too (a log prefixes the message with a time, a process
name, a source line). Either way the words matched must count :data:`MIN_TELLING` telling
words (not a stop word, a number, a unit or a word every error line may use): two
lines sharing only ``RuntimeError: ... failed`` are not the same error. A piece more
than :data:`_MAX_PAGES` pages repeat is a stock message (a CUDA error string): it is
left to the ranking's other evidence.

The index is a sorted array of shingle hashes beside the number of the line holding
each (:class:`VerbatimIndex`); a lookup is one binary search per shingle of the
request (about a millisecond for a dozen error lines, ``python -m benchmarks
--only pasted``). Each page's part (:class:`PageLines`) is made of that page alone,
so a later load reuses the parts of pages whose bytes are the same.
"""

from __future__ import annotations

import re
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import numpy as np

    from knowledge.wiki import Page

__all__ = [
    "MIN_TELLING",
    "SHINGLE",
    "PageLines",
    "VerbatimHit",
    "VerbatimIndex",
    "verbatim_words",
]

#: Words per shingle: three in a row rarely repeat by chance in one line.
SHINGLE: Final = 3
#: Telling words the matched part must hold (see the module's docstring).
MIN_TELLING: Final = 3
#: A piece of a request's line that more pages than this repeat is a stock message
#: (``an illegal memory access was encountered``): it tells no page apart.
_MAX_PAGES: Final = 3
#: Share of the shorter side's shingles the other side must hold.
_MIN_SHARE: Final = 0.8
#: Lines read per page section and characters read per line (bounded work on any wiki).
_MAX_LINES: Final = 2_000
_MAX_LINE_CHARS: Final = 2_000
#: Words of a request's error line compared (its first ones).
_MAX_WORDS: Final = 60
#: Pieces of error lines whose hits an index remembers (a few KB each at most).
_MEMO_PIECES: Final = 512
#: A piece's hits: (path, (line number, share)) of each page's best line holding it.
_PieceHits = tuple[tuple[str, tuple[int, float]], ...]

#: Tails of a request's line compared besides the whole line (see :func:`_pieces`).
_MAX_TAILS: Final = 3
_SEPARATOR_RE: Final = re.compile(r"[:\]]\s+")
_PATH_RE: Final = re.compile(r"(?:[\w.\-~]*/)+([\w.\-]*)")
#: An address or any hexadecimal word with a digit (``0x7f3a``, ``93003d42``).
_HEX_RE: Final = re.compile(r"\b(?:0x[0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*)\b")
_DIGITS_RE: Final = re.compile(r"\d+")
_WORD_RE: Final = re.compile(r"[a-z][a-z_]*[a-z]")


def verbatim_words(line: str) -> list[str]:
    """The words of ``line`` that two copies of one error line share whatever the machine:
    lower case, paths cut to their last part, addresses, hexadecimal and numbers out.

    >>> verbatim_words("RuntimeError on GPU3 at /opt/x/y.py:12: 0xdeadbeef failed (8 GPUs)")
    ['runtimeerror', 'on', 'gpu', 'at', 'py', 'failed', 'gpus']
    """
    line = line[:_MAX_LINE_CHARS]
    if "/" in line:
        line = _PATH_RE.sub(lambda m: " " + m.group(1), line)
    line = _DIGITS_RE.sub(" ", _HEX_RE.sub(" ", line))
    return _WORD_RE.findall(line.lower())


def _pieces(line: str) -> list[str]:
    """``line`` and its tails after each of its last :data:`_MAX_TAILS` separators
    (``: ``, ``] ``): a log writes its own prefix (a time, a process, a source line,
    an exception class) before the message a page may quote."""
    line = line[:_MAX_LINE_CHARS]
    tails = [line[m.end() :] for m in _SEPARATOR_RE.finditer(line)]
    return [line, *tails[-_MAX_TAILS:]]


def _shingles(words: Sequence[str]) -> list[str]:
    if len(words) < SHINGLE:
        return []
    return [" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)]


@dataclass(frozen=True, slots=True)
class PageLines:
    """One page's lines that may repeat an error line, with the hash of each distinct
    shingle of a line beside that line's number.

    Laid out flat, as the page ranker keeps one for every page between loads: where
    each line is in the page (its text is read from the page for the few lines a
    request matches, not copied), and the hashes and counts as C arrays, where tuples
    of Python ints and strings took several times the memory."""

    #: Per line, three unsigned ints: its section's number in the page, its text's
    #: number in that section (0: the prose, k: code block k - 1), and its number in
    #: that text's lines (see :meth:`line`).
    places: array[int]
    #: Number of distinct shingles of each line (in line order, unsigned int). The
    #: hashes (signed 64-bit) are Python's own string hashes, so a part is only read
    #: in the process that made it (as the ranker is: built and kept in the bot's
    #: process, never pickled).
    sizes: array[int]
    hashes: array[int]
    numbers: array[int]

    @classmethod
    def of(cls, page: Page) -> PageLines:
        places = array("I")
        sizes = array("I")
        hashes = array("q")
        numbers = array("I")
        for section_at, section in enumerate(page.sections):
            texts = [section.text, *(block.text for block in section.code)]
            for text_at, text in enumerate(texts):
                for line_at, line in enumerate(text.splitlines()[:_MAX_LINES]):
                    distinct = set(_shingles(verbatim_words(line)))
                    if not distinct:
                        continue
                    number = len(sizes)
                    places.extend((section_at, text_at, line_at))
                    sizes.append(len(distinct))
                    hashes.extend(map(hash, distinct))
                    numbers.extend([number] * len(distinct))
        return cls(places, sizes, hashes, numbers)

    def line(self, number: int, page: Page) -> tuple[str, str]:
        """(section anchor, stripped text) of line ``number``, read from ``page`` (the
        page this part was made of, or one with the same bytes)."""
        section_at, text_at, line_at = self.places[3 * number : 3 * number + 3]
        section = page.sections[section_at]
        text = section.text if text_at == 0 else section.code[text_at - 1].text
        return section.anchor, text.splitlines()[line_at].strip()

    def __len__(self) -> int:
        return len(self.sizes)

    @property
    def shingled(self) -> bool:
        """Whether the part holds its shingles' hashes (see :meth:`shed`)."""
        return len(self.hashes) > 0 or not self.sizes

    def shed(self) -> PageLines:
        """This part without its shingles' hashes, once an index holds them: the ranker
        keeps the part for the next load, whose index takes the hashes from this one's
        (:meth:`VerbatimIndex.build`) instead of holding every hash twice."""
        if not self.shingled:
            return self
        return PageLines(self.places, self.sizes, array("q"), array("I"))


@dataclass(frozen=True, slots=True)
class VerbatimHit:
    """A wiki line holding a request's error line: its page, section and text, and the
    share of the shorter side's shingles the other side holds (0.8 to 1.0)."""

    path: str
    anchor: str
    line: str
    share: float


@dataclass(slots=True)
class VerbatimIndex:
    """The shingles of every line of a wiki, sorted by hash (see the module's docstring)."""

    hashes: np.ndarray  # int64, sorted
    lines: np.ndarray  # int32: the global line number of each hash
    sizes: np.ndarray  # int32: distinct shingles per global line
    #: The pages' parts in order (the ranker holds them already: nothing is copied),
    #: and the global number of each part's first line (one more than parts).
    parts: list[tuple[str, PageLines]]
    bases: array[int]
    #: The pages by path, whose lines :meth:`ref` reads.
    source: Mapping[str, Page]
    #: (a piece's words, telling) -> its hits (:meth:`find`), the latest last.
    _memo: OrderedDict[tuple[tuple[str, ...], Callable[[str], bool]], _PieceHits] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False
    )
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    @classmethod
    def build(
        cls,
        pages: Iterable[tuple[str, PageLines]],
        source: Mapping[str, Page],
        previous: VerbatimIndex | None = None,
    ) -> VerbatimIndex:
        """The index of ``pages`` (path and part), whose lines are read from ``source``
        (the pages by path). A part that has shed its hashes (:meth:`PageLines.shed`)
        takes them from ``previous``, the index that holds that very part."""
        import numpy as np

        parts = list(pages)
        bases = array("q", [0])
        for _, part in parts:
            bases.append(bases[-1] + len(part))
        shed = [part for _, part in parts if not part.shingled]
        if shed and previous is None:
            raise ValueError("parts without their shingles need the index that held them")
        taken = previous._rows_of(shed) if previous is not None and shed else {}
        hash_parts: list[np.ndarray] = [np.zeros(0, np.int64)]
        line_parts: list[np.ndarray] = [np.zeros(0, np.int32)]
        for base, (_, part) in zip(bases, parts, strict=False):
            if part.shingled:
                hashes = np.frombuffer(part.hashes, dtype=np.int64)
                numbers = np.frombuffer(part.numbers, dtype=np.uint32).astype(np.int32)
            else:
                hashes, numbers = taken[id(part)]
            hash_parts.append(hashes)
            line_parts.append(numbers + np.int32(base))
        hashes = np.concatenate(hash_parts)
        lines = np.concatenate(line_parts)
        sizes = np.concatenate(
            [np.zeros(0, np.uint32)]
            + [np.frombuffer(part.sizes, dtype=np.uint32) for _, part in parts]
        ).astype(np.int32)
        # Equal hashes stay in line order, as one line holds a hash once: the rows a
        # shed part takes back (in hash order per line) sort to the same arrays.
        order = np.argsort(hashes, kind="stable")
        return cls(hashes[order], lines[order], sizes, parts, bases, source)

    def _rows_of(self, parts: Iterable[PageLines]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """id(part) -> (hashes, line numbers in the part) of each part this index holds."""
        import numpy as np

        where = {id(part): k for k, (_, part) in enumerate(self.parts)}
        by_line = np.argsort(self.lines, kind="stable")
        sorted_lines = self.lines[by_line]
        out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for part in parts:
            k = where.get(id(part))
            if k is None:
                raise ValueError("a part without its shingles that the previous index lacks")
            base, end = self.bases[k], self.bases[k + 1]
            low, high = np.searchsorted(sorted_lines, [base, end]).tolist()
            rows = by_line[low:high]
            out[id(part)] = (self.hashes[rows], self.lines[rows] - np.int32(base))
        return out

    def ref(self, number: int) -> tuple[str, str, str]:
        """(path, anchor, text) of global line ``number``."""
        page = bisect_right(self.bases, number) - 1
        path, part = self.parts[page]
        anchor, text = part.line(number - self.bases[page], self.source[path])
        return path, anchor, text

    def find(self, errors: Sequence[str], telling: Callable[[str], bool]) -> dict[str, VerbatimHit]:
        """path -> the best line of that page holding one of ``errors`` near verbatim.
        ``telling``: whether a word tells what went wrong (see the module's docstring).

        A piece's lines are remembered by its words (:data:`_MEMO_PIECES` of them, the
        index's lifetime: one wiki generation): the same error met again, on another
        machine with other numbers and paths, is not looked up again."""
        found: dict[str, VerbatimHit] = {}
        if not self.hashes.size:
            return found
        pieces = [piece for error in errors for piece in _pieces(error)]
        for piece in dict.fromkeys(pieces):
            words = tuple(verbatim_words(piece)[:_MAX_WORDS])
            key = (words, telling)
            with self._lock:
                hits = self._memo.get(key)
                if hits is not None:
                    self._memo.move_to_end(key)
            if hits is None:
                hits = self._piece_hits(words, telling)
                with self._lock:
                    self._memo[key] = hits
                    while len(self._memo) > _MEMO_PIECES:
                        self._memo.popitem(last=False)
            for path, (number, share_of) in hits:
                if share_of > (found[path].share if path in found else 0.0):
                    _, anchor, text = self.ref(number)
                    found[path] = VerbatimHit(path, anchor, text, share_of)
        return found

    def _piece_hits(self, words: Sequence[str], telling: Callable[[str], bool]) -> _PieceHits:
        """(path, (line number, share)) of each page's best line holding the piece of
        ``words``; none when more than :data:`_MAX_PAGES` pages do (a stock message)."""
        import numpy as np

        shingles = list(dict.fromkeys(_shingles(words)))
        if len(shingles) < 2:
            return ()
        wanted = np.array([hash(s) for s in shingles], dtype=np.int64)
        starts = np.searchsorted(self.hashes, wanted, "left").tolist()
        ends = np.searchsorted(self.hashes, wanted, "right").tolist()
        present = [k for k in range(len(shingles)) if ends[k] > starts[k]]
        if len(present) < 2:
            return ()
        held = np.concatenate([self.lines[starts[k] : ends[k]] for k in present])
        which = np.concatenate([np.full(ends[k] - starts[k], k, np.int64) for k in present])
        # each (line, shingle) pair once: a hash collision must not count twice
        width = len(shingles)
        pairs = np.unique(held.astype(np.int64) * width + which)
        numbers, counts = np.unique(pairs // width, return_counts=True)
        sizes = self.sizes[numbers]
        share = np.maximum(
            counts / len(shingles), np.where(sizes >= 3, counts / np.maximum(sizes, 1), 0.0)
        )
        kept = np.flatnonzero((counts >= 2) & (share >= _MIN_SHARE))
        # path -> (line number, share) of its best line; the line's text is read from
        # its page only for the pages kept
        hits: dict[str, tuple[int, float]] = {}
        for number, share_of in zip(numbers[kept].tolist(), share[kept].tolist(), strict=True):
            path = self.parts[bisect_right(self.bases, number) - 1][0]
            rows = (pairs[pairs // width == number] % width).tolist()
            words_held = {w for k in rows for w in shingles[k].split()}
            if sum(1 for w in words_held if telling(w)) < MIN_TELLING:
                continue
            share_of = min(1.0, share_of)
            if share_of > (hits[path][1] if path in hits else 0.0):
                hits[path] = (number, share_of)
        if len(hits) > _MAX_PAGES:
            return ()  # a stock message many pages quote tells no page apart
        return tuple(hits.items())
