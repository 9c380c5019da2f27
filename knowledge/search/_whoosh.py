"""The Whoosh engine: schema, analyzer, status-weighted BM25F, query objects, merges.

One Whoosh document per section. With :mod:`knowledge.search._segment` (which writes a
full build's segment), the only module that imports Whoosh; the rest of
:mod:`knowledge.search` talks to it through :class:`~knowledge.search.engine.Engine`.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import whoosh
from whoosh import collectors, scoring
from whoosh import index as whoosh_index
from whoosh.analysis import (
    STOP_WORDS,
    Analyzer,
    Filter,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StopFilter,
    Token,
)
from whoosh.fields import ID, STORED, TEXT, Schema
from whoosh.filedb import compound as whoosh_compound
from whoosh.filedb.filestore import RamStorage
from whoosh.filedb.structfile import BufferFile
from whoosh.lang.porter import stem
from whoosh.query import And, Or, Query, Term
from whoosh.searching import Searcher

from knowledge.search import ranking
from knowledge.search._bm25 import BM25Ranker
from knowledge.search._segment import FreshSegmentWriter
from knowledge.search.engine import (
    Document,
    Engine,
    Found,
    Generation,
    IndexLockedError,
    WouldRewrite,
)

__all__ = [
    "MAX_TERM_CHARS",
    "SCHEMA_VERSION",
    "STOP",
    "TOKEN_PATTERN",
    "IndexTerms",
    "PreparedPage",
    "VersionHeadFilter",
    "WhooshEngine",
    "make_analyzer",
    "make_schema",
    "make_term_analyzer",
    "whoosh_rank",
]

log = logging.getLogger(__name__)


class _ViewFile:
    """A read-only file over a memoryview that reads without copying the view first.

    Whoosh opens each part of a segment's compound file (terms, postings, stored
    fields) as a ``BytesIO`` of a view of the memory-mapped file, and ``BytesIO`` copies
    the view: the whole index was held twice, once in the page cache and once on the
    heap (5 MB on the real wiki, ten times that at 10x). This reads the mapped pages
    in place, a slice at a time, as ``BytesIO`` would read its copy."""

    __slots__ = ("_pos", "_view")

    def __init__(self, view: memoryview) -> None:
        self._view = view
        self._pos = 0

    def read(self, size: int | None = -1) -> bytes:
        start = self._pos
        end = len(self._view) if size is None or size < 0 else start + size
        chunk = self._view[start:end].tobytes()
        self._pos = start + len(chunk)
        return chunk

    def readline(self, size: int | None = -1) -> bytes:
        view, start = self._view, self._pos
        limit = len(view) if size is None or size < 0 else min(len(view), start + size)
        end = start
        while end < limit:  # a window at a time: a pickle's lines are short
            window = view[end : min(limit, end + 256)].tobytes()
            found = window.find(b"\n")
            if found >= 0:
                end += found + 1
                break
            end += len(window)
        return self.read(end - start)

    def seek(self, pos: int, whence: int = 0) -> int:
        base = (0, self._pos, len(self._view))[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        self._view = memoryview(b"")
        self._pos = 0


class _MappedBufferFile(BufferFile):
    """Whoosh's :class:`BufferFile` reading its memoryview in place (see :class:`_ViewFile`)."""

    def __init__(self, buf: Any, name: str | None = None, onclose: Any = None) -> None:
        super().__init__(b"", name=name, onclose=onclose)
        self._buf = buf
        self.file = _ViewFile(memoryview(buf))


# Only the compound storage's files (views of its memory map) change: a ``BytesIO`` of
# bytes (RamStorage's, a sub-file's) shares them already.
whoosh_compound.BufferFile = _MappedBufferFile

#: Bump whenever the schema, the analyzer or what goes into a field changes.
SCHEMA_VERSION = 2
#: Longer tokens are dropped, both when indexing and when querying.
MAX_TERM_CHARS = 64
#: Versions stay whole (``2.28.9``, ``K2.7``, ``Qwen3.5``); everything else is split on
#: anything that is not a letter or digit, underscores included (``_zero_fill`` ->
#: ``zero fill``, ``torch.AcceleratorError`` -> ``torch acceleratorerror``).
TOKEN_PATTERN = r"[^\W_]*\d+(?:\.\d+)+|[^\W_]+"

#: Whoosh's English stop words plus auxiliaries, pronouns and question words, which
#: otherwise survive as stems that match nearly every section ("was" -> "wa").
_MORE_STOP = """
    was were been being has had having do does did doing done am i me my mine our ours
    they them their theirs he him his she her hers its what which who whom whose how
    why where there here so than then too very just also about into onto any all some
    but these those would should could shall might must please use used uses using
"""
STOP = frozenset(STOP_WORDS) | frozenset(_MORE_STOP.split())

#: Whoosh's in-memory buffer for an update of a few pages.
_UPDATE_LIMITMB = 64


class VersionHeadFilter(Filter):
    """After a versioned name also emit its name part: ``qwen3.5`` -> ``qwen3.5 qwen3``.

    So "qwen3" finds pages about Qwen3.5, while "qwen3.5" (both terms required)
    does not find pages that only know Qwen3. Bare numbers (``2.28.9``) are left.
    """

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        for token in tokens:
            text = token.text
            yield token
            head, dot, _ = text.partition(".")
            if dot and head and not head.isdigit():
                extra = token.copy()
                extra.text = head
                yield extra


def make_analyzer() -> Analyzer:
    """The analyzer shared by every text field of the index and by queries."""
    return (
        RegexTokenizer(TOKEN_PATTERN)
        | LowercaseFilter()
        | VersionHeadFilter()
        | StopFilter(stoplist=STOP, minsize=2, maxsize=MAX_TERM_CHARS)
        | StemFilter(cachesize=50000)
    )


def make_term_analyzer() -> Callable[[str], list[str]]:
    """The index's analyzer as a plain function: text -> its index terms, in order."""
    analyzer = make_analyzer()

    def analyze(text: str) -> list[str]:
        return [token.text for token in analyzer(text)]

    return analyze


def make_schema(analyzer: Analyzer | None = None) -> Schema:
    analyzer = analyzer or make_analyzer()

    def text(stored: bool) -> TEXT:
        # No positions: queries are built from single terms and snippets are our own.
        return TEXT(analyzer=analyzer, phrase=False, stored=stored)

    return Schema(
        id=ID(stored=True, unique=True),
        path=ID(stored=True),
        anchor=STORED(),
        page_title=text(True),
        section_title=text(True),
        headings=text(False),
        text=text(True),
        code=text(True),
        symptom=text(False),
        category=ID(stored=True),
        status=ID(stored=True, sortable=True),
    )


class IndexTerms:
    """:func:`make_analyzer` as one plain function, for writing: text -> its index terms.

    The same terms in the same order as the analyzer chain (a test compares them on
    every section of a wiki), made without its per-token generators and Token
    objects, and with every stem kept for the whole build (the chain's cache evicts).
    Whoosh takes the list as an already analysed field value. Analysis was ~40% of
    a full build's time; this does it in about a third of that.
    """

    __slots__ = ("_stems", "_words")

    def __init__(self) -> None:
        self._words = re.compile(TOKEN_PATTERN).findall
        self._stems: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        stems = self._stems
        terms: list[str] = []
        add = terms.append
        for word in self._words(text):
            word = word.lower()
            head, dot, _ = word.partition(".")
            for term in (word, head) if dot and head and not head.isdigit() else (word,):
                if len(term) < 2 or len(term) > MAX_TERM_CHARS or term in STOP:
                    continue
                stemmed = stems.get(term)
                if stemmed is None:
                    stemmed = stems[term] = stem(term)
                add(stemmed)
        return terms


#: Text fields, analysed; the stored ones also keep their text.
_TEXT_FIELDS = ("page_title", "section_title", "headings", "text", "code", "symptom")
_STORED_TEXT = ("page_title", "section_title", "text", "code")


def _fields(doc: Document, terms: IndexTerms) -> dict[str, Any]:
    """Whoosh's ``add_document`` arguments for ``doc``, its text fields analysed by ``terms``.

    A list value is indexed as the terms it holds; ``_stored_<field>`` is what is stored.
    """
    fields: dict[str, Any] = {
        "id": doc.id,
        "path": doc.path,
        "anchor": doc.anchor,
        "category": doc.category,
        "status": doc.status,
    }
    for name in _TEXT_FIELDS:
        fields[name] = terms(getattr(doc, name))
    for name in _STORED_TEXT:
        fields[f"_stored_{name}"] = getattr(doc, name)
    return fields


@dataclass(frozen=True, slots=True)
class PreparedPage:
    """One page's documents as :meth:`FreshSegmentWriter.add_document` arguments (see
    :func:`_fields`): what :meth:`WhooshEngine.preparer` makes for a build process."""

    fields: list[dict[str, Any]]


class WhooshEngine(Engine):
    """Sections in a Whoosh index, ranked by BM25F times the page status factor."""

    schema_version = SCHEMA_VERSION

    def __init__(self) -> None:
        self.analyzer = make_analyzer()
        self.schema = make_schema(self.analyzer)

    def __reduce__(self) -> tuple[type[WhooshEngine], tuple[()]]:
        # The build process makes its own (empty stem cache, same schema).
        return (WhooshEngine, ())

    @property
    def version(self) -> str:
        return whoosh.versionstring()

    def analyze(self, text: str) -> list[str]:
        return [token.text for token in self.analyzer(text)]

    def preparer(self) -> Callable[[Sequence[Document]], PreparedPage]:
        terms = IndexTerms()  # its stems kept from page to page, for one build

        def prepare(docs: Sequence[Document]) -> PreparedPage:
            return PreparedPage([_fields(doc, terms) for doc in docs])

        return prepare

    def write(
        self,
        gen_dir: Path,
        pages: Iterable[object],
        on_page: Callable[[int], None] | None = None,
    ) -> int:
        ix = whoosh_index.create_in(str(gen_dir), self.schema)
        try:
            try:
                writer = FreshSegmentWriter(ix)
            except whoosh_index.LockError as exc:
                raise IndexLockedError(f"search index in {gen_dir} is locked") from exc
            count = 0
            terms = IndexTerms()
            try:
                for done, page in enumerate(pages, start=1):
                    if isinstance(page, PreparedPage):
                        for fields in page.fields:
                            writer.add_document(**fields)
                        count += len(page.fields)
                    else:
                        docs: Sequence[Document] = page  # type: ignore[assignment]
                        for doc in docs:
                            writer.add_document(**_fields(doc, terms))
                        count += len(docs)
                    if on_page is not None:
                        on_page(done)
                writer.commit(merge=False)
            except BaseException:
                with contextlib.suppress(Exception):
                    writer.cancel()
                raise
        finally:
            ix.close()
        return count

    def open(self, gen_dir: Path) -> Generation:
        return _WhooshGeneration(gen_dir, whoosh_index.open_dir(str(gen_dir), schema=self.schema))

    def write_memory(self, pages: Iterable[Sequence[Document]]) -> Generation:
        ix = RamStorage().create_index(self.schema)
        writer = FreshSegmentWriter(ix)
        terms = IndexTerms()
        try:
            for docs in pages:
                for doc in docs:
                    writer.add_document(**_fields(doc, terms))
            writer.commit(merge=False)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            ix.close()
            raise
        return _WhooshGeneration(Path(":memory:"), ix)


class _WhooshGeneration(Generation):
    def __init__(self, gen_dir: Path, ix: Any) -> None:
        self.gen_dir = gen_dir
        self.ix = ix
        self._searcher: Searcher | None = None
        self._ranker: BM25Ranker | None = None

    def doc_count(self) -> int:
        return int(self.ix.doc_count())

    @property
    def searching(self) -> bool:
        return self._searcher is not None

    def _opened(self) -> Searcher:
        if self._searcher is None:
            self._searcher = _new_searcher(self.ix)
            weighting = self._searcher.weighting
            self._ranker = BM25Ranker(self._searcher, factors=weighting.factors)
        return self._searcher

    def rank(
        self, terms: Sequence[str], *, need: int, category: str | None
    ) -> tuple[int, list[tuple[float, int]]]:
        searcher = self._opened()
        assert self._ranker is not None
        allowed = set(searcher.docs_for_query(Term("category", category))) if category else None
        ranked, total = self._ranker.rank(terms, need, allowed)
        return total, ranked

    def whoosh_rank(
        self, terms: Sequence[str], *, need: int, category: str | None
    ) -> tuple[int, list[tuple[float, int]]]:
        """:meth:`rank` as Whoosh's own query path answers it (the reference it is tested
        against)."""
        filter_q = Term("category", category) if category else None
        ranked, total = whoosh_rank(self._opened(), terms, need, filter_q)
        return total, ranked

    def fetch(self, score: float, doc: int) -> Found:
        return _found(score, self._opened().stored_fields(doc))

    def update(
        self,
        changes: Iterable[tuple[str, Sequence[Document]]],
        *,
        rewrite_ok: bool,
        timeout: float,
    ) -> None:
        merge = functools.partial(_merge_into_delta, whole=rewrite_ok)
        try:
            writer = self.ix.writer(limitmb=_UPDATE_LIMITMB, timeout=timeout)
        except whoosh_index.LockError as exc:
            raise IndexLockedError(
                f"search index in {self.gen_dir} is locked by another writer"
            ) from exc
        terms = IndexTerms()
        try:
            for path, docs in changes:
                writer.delete_by_term("path", path)
                for doc in docs:
                    writer.add_document(**_fields(doc, terms))
            writer.commit(mergetype=merge)
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise

    def close(self) -> None:
        searcher, self._searcher = self._searcher, None
        self._ranker = None
        if searcher is not None:
            with contextlib.suppress(Exception):
                searcher.close()
        with contextlib.suppress(Exception):
            self.ix.close()


def _found(score: float, fields: dict[str, Any]) -> Found:
    return Found(
        score=float(score or 0.0),
        path=fields.get("path", ""),
        anchor=fields.get("anchor", ""),
        page_title=fields.get("page_title", ""),
        section_title=fields.get("section_title", ""),
        category=fields.get("category", ""),
        status=fields.get("status", "other"),
        text=fields.get("text") or "",
        code=fields.get("code") or "",
    )


class _StatusWeighting(scoring.BM25F):
    """BM25F whose final score is multiplied by the page status factor of each doc."""

    use_final = True

    def __init__(self, factors: list[float]) -> None:
        super().__init__(B=0.75, K1=1.2, symptom_B=ranking.SYMPTOM_B)
        #: Status factor by document number (BM25Ranker applies them itself).
        self.factors = factors

    def final(self, searcher: Any, docnum: int, score: float) -> float:
        if docnum < len(self.factors):
            return score * self.factors[docnum]
        return score


def _new_searcher(ix: Any) -> Searcher:
    reader = ix.reader()
    factors: list[float] = []
    try:
        count = reader.doc_count_all()
        if count and reader.has_column("status"):
            column = reader.column_reader("status")
            factors = [ranking.status_factor(column[i]) for i in range(count)]
    except Exception:
        log.exception("could not read page statuses; ranking without them")
    return Searcher(reader, weighting=_StatusWeighting(factors), fromindex=ix)


def whoosh_rank(
    searcher: Searcher, terms: Sequence[str], need: int, filter_q: Query | None
) -> tuple[list[tuple[float, int]], int]:
    """(score, docnum) of the best ``need`` sections, and how many matched in all,
    as Whoosh's query objects and collectors rank them.

    Searches use :class:`knowledge.search._bm25.BM25Ranker`, which gives the same
    answer several times faster; this is the reference the tests hold it to.

    Terms found nowhere in the index are dropped first. Sections holding every
    remaining term come first; if there are none, the OR of the terms is ranked
    by :func:`knowledge.search.ranking.coordinated`.
    """
    reader = searcher.reader()
    term_groups: list[list[Term]] = []
    for term in terms:
        # Only fields that hold the term: absent terms would still cost a matcher.
        parts = [
            Term(field, term, boost=boost)
            for field, boost in ranking.FIELD_BOOSTS.items()
            if reader.doc_frequency(field, term)
        ]
        if parts:
            term_groups.append(parts)
    if not term_groups:
        return [], 0
    groups: list[Query] = [parts[0] if len(parts) == 1 else _union(parts) for parts in term_groups]
    if len(groups) == 1:
        results = _collect(searcher, groups[0], need, filter_q)
        return [(hit.score or 0.0, hit.docnum) for hit in results], len(results)
    results = _collect(searcher, And(groups), need, filter_q)
    if len(results):
        return [(hit.score or 0.0, hit.docnum) for hit in results], len(results)
    depth = max(need, ranking.RERANK_DEPTH)
    scored, total = _any_term(searcher, term_groups, depth, filter_q)
    return ranking.coordinated(scored, len(groups), need), total


def _any_term(
    searcher: Searcher, term_groups: list[list[Term]], depth: int, filter_q: Query | None
) -> tuple[list[tuple[float, int, int]], int]:
    """The fallback when no section holds every term: the best ``depth`` sections
    holding any of them, as (score, doc number, how many of the terms it holds),
    and how many sections hold any.

    Scores are what Whoosh's union of the terms gives (each term's BM25F score in
    each field times the field's boost, summed, then the status factor), but each
    term's postings are walked once into a dictionary: a union matcher over a
    long pasted question walks a tree of matchers per posting, and a terms
    collector then walks it again per section, which made this path about ten
    times slower than a search that finds every word.
    """
    context = searcher.context()
    scores: dict[int, float] = {}
    holds: dict[int, int] = {}
    for subsearcher, offset in searcher.leaf_searchers():
        for parts in term_groups:
            found: set[int] = set()
            for term in parts:
                matcher = term.matcher(subsearcher, context)
                while matcher.is_active():
                    doc = matcher.id() + offset
                    scores[doc] = scores.get(doc, 0.0) + matcher.score()
                    found.add(doc)
                    matcher.next()
            for doc in found:
                holds[doc] = holds.get(doc, 0) + 1
    if filter_q is not None:
        allowed = set(searcher.docs_for_query(filter_q))
        scores = {doc: score for doc, score in scores.items() if doc in allowed}
    weighting = searcher.weighting
    if weighting.use_final:
        scores = {doc: weighting.final(searcher, doc, score) for doc, score in scores.items()}
    best = heapq.nsmallest(depth, scores.items(), key=lambda item: (-item[1], item[0]))
    return [(score, doc, holds[doc]) for doc, score in best], len(scores)


def _collect(searcher: Searcher, query: Query, limit: int, filter_q: Query | None) -> Any:
    """Score every matching section and keep the best ``limit``.

    Whoosh's default top-N collector prunes with score bounds ("replace" and
    block quality) computed before :meth:`_StatusWeighting.final`, which could
    drop a section that a status factor above 1 would have lifted into the top
    N, and its total is then only an estimate. Scoring everything is exact, and
    at a few thousand sections it measured no slower.
    """
    collector: Any = collectors.TopCollector(limit=limit, usequality=False, replace=0)
    if filter_q is not None:
        collector = collectors.FilterCollector(collector, filter_q)
    searcher.search_with_collector(query, collector)
    return collector.results()


def _union(queries: list[Query]) -> Or:
    """An Or that merges its parts lazily.

    Whoosh's automatic choice for small indexes preloads and scores every posting
    of every part, which made two- and three-word searches 2-3x slower here; the
    binary tree of union matchers lets an enclosing And skip what cannot match.
    """
    query = Or(queries)
    query.matcher_type = Or.DEFAULT_MATCHER
    return query


def _merge_into_delta(writer: Any, segments: list[Any], *, whole: bool = True) -> list[Any]:
    """Whoosh merge policy for updates: the big segment plus at most one small one.

    Each update writes a segment and every extra segment costs each search about
    1.5 ms, so all but the biggest segment are merged into the one being written
    (a few hundred sections at most: milliseconds). Once the small side or the
    deleted sections reach a quarter of the big segment, everything is merged;
    unless ``whole`` is false: then it raises :class:`WouldRewrite` before touching
    anything (merging the real wiki's segments took ~1.4 s in process, holding
    the GIL for up to ~175 ms at a time), and the caller rebuilds in a child.
    """
    from whoosh.reading import SegmentReader

    if not segments:
        return segments
    biggest = max(segments, key=lambda seg: seg.doc_count_all())
    rest = [seg for seg in segments if seg is not biggest]
    churn = biggest.deleted_count() + sum(seg.doc_count_all() for seg in rest)
    if churn * 4 > biggest.doc_count_all():
        if not whole:
            raise WouldRewrite
        merge, keep = segments, []
    else:
        merge, keep = rest, [biggest]
    for segment in merge:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        writer.add_reader(reader)
        reader.close()
    return keep
