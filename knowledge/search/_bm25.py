"""Whoosh's ranking of a query, score for score, without its matcher trees.

:func:`knowledge.search._whoosh.whoosh_rank` asks Whoosh: an ``And`` of one
``Or`` per query term (the term in each field that holds it), scored by the
index's BM25F weighting, or, when no section holds every term, the fallback that
sums each term's scores per section. Whoosh walks a tree of matcher objects per
posting (``skip_to``, ``is_active``, ``id``, ``score`` through every level),
which made a search of a few common words cost 10-30 ms and a pasted question of
sixteen terms 60-100 ms.

:class:`BM25Ranker` gives the same answer from the same numbers. Each term's
postings in a field are read once per search, block by block, into a
``{doc: score}`` dictionary, each score computed by Whoosh's own scorer for that
term (``BM25FScorer._score``, the hook Whoosh documents for its subclasses) and
times the field's boost, as Whoosh's ``WrappingMatcher`` does. Sections holding
every term are found with set operations, then each is scored by adding the
dictionaries' scores in the order Whoosh's matcher tree adds them: floating-point
addition is not associative, and ties are broken by document number, so only
the same order gives the same floats and the same ranking. Whoosh builds that
tree with :func:`whoosh.util.make_weighted_tree` from each part's estimated size
in each segment (:func:`_tree` does the same). The all-words-missed fallback
adds in the order :func:`knowledge.search._whoosh.whoosh_rank` does.

A posting list long enough (:attr:`BM25Ranker.vector_postings`) is scored by
numpy instead, with BM25F's formula (:func:`whoosh.scoring.bm25`) written out
operation for operation in float64, which rounds each operation as Python's float
does: the same scores, bit for bit, at a tenth of the time per posting.

``tests/knowledge/search/test_bm25.py`` checks, on the demo wiki and a two-segment
index with deletions, that the ranking, scores and totals are equal (``==``, not
approximately) to Whoosh's for many queries, so a Whoosh upgrade that changes
any of this fails there. Reading a posting block uses the whoosh3 codec's block
attributes when the matcher has them (the version is pinned exactly) and the
public ``id``/``weight``/``next`` otherwise.
"""

from __future__ import annotations

import heapq
import sys
from bisect import insort
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from whoosh.scoring import BM25FScorer

from knowledge.search import ranking

__all__ = ["BM25Ranker"]

#: A leaf of a scoring tree: a term's scores in one field, by global doc number.
Scores = dict[int, float]
#: Whoosh's matcher tree for one segment: a leaf, or two subtrees whose scores add up.
Tree = Scores | tuple["Tree", "Tree"]


def _tree(weighted: list[tuple[int, Tree]]) -> Tree:
    """The tree :func:`whoosh.util.make_weighted_tree` builds from (weight, part).

    Whoosh sorts (weight, matcher) tuples; its matchers compare as equal (or
    neither less), so equal weights keep their order: a stable sort by weight,
    and each joined pair is inserted after the equal weights (``insort`` right).
    """
    items = sorted(weighted, key=lambda item: item[0])
    while len(items) > 1:
        a = items.pop(0)
        b = items.pop(0)
        insort(items, (a[0] + b[0], (a[1], b[1])), key=lambda item: item[0])
    return items[0][1]


def _values(tree: Tree, docs: set[int]) -> dict[int, float]:
    """{doc: its score under ``tree``} for the ``docs`` some leaf holds: the sum of the
    leaves holding it, left before right, as Whoosh's union and intersection
    matchers add ``a.score() + b.score()``."""
    if type(tree) is dict:
        return {doc: tree[doc] for doc in docs if doc in tree}
    left, right = tree  # type: ignore[misc]
    a = _values(left, docs)
    b = _values(right, docs)
    if not a:
        return b
    for doc, value in b.items():
        before = a.get(doc)
        a[doc] = value if before is None else before + value
    return a


def _top(scores: dict[int, float], count: int) -> list[tuple[int, float]]:
    """The ``count`` best (doc, score) by score, then doc number: Whoosh's order.

    The ``count``-th best score is found among the bare floats first (compared in
    C), so only the few sections at or above it are sorted with a key.
    """
    if count <= 0 or not scores:
        return []
    if len(scores) > count:
        floor = heapq.nlargest(count, scores.values())[-1]
        items = [(doc, value) for doc, value in scores.items() if value >= floor]
    else:
        items = list(scores.items())
    items.sort(key=lambda item: (-item[1], item[0]))
    return items[:count]


def _postings(matcher: Any, deleted: frozenset[int]) -> tuple[list[int], list[float]]:
    """(doc numbers, weights) of a segment's posting list, deleted documents left out."""
    leaf = matcher.child if deleted and hasattr(matcher, "child") else matcher
    ids: list[int] = []
    weights: list[float] = []
    if all(hasattr(leaf, a) for a in ("_read_ids", "_read_weights", "_next_block", "_i")):
        # The whoosh3 codec's leaf matcher: a block of ids and weights at a time.
        while leaf.is_active():
            leaf._read_ids()
            leaf._read_weights()
            start, end = leaf._i, leaf._blocklength
            ids.extend(leaf._ids[start:end])
            weights.extend(leaf._weights[start:end])
            leaf._next_block()
    else:
        while leaf.is_active():
            ids.append(leaf.id())
            weights.append(leaf.weight())
            leaf.next()
    if deleted:
        kept = [i for i, doc in enumerate(ids) if doc not in deleted]
        ids = [ids[i] for i in kept]
        weights = [weights[i] for i in kept]
    return ids, weights


def _vector_scores(
    leaf: _Leaf, field: str, ids: list[int], weights: list[float], scorer: Any, boost: float
) -> Scores:
    """{global doc: score} as :meth:`BM25Ranker._scores` computes them, with numpy.

    Each operation of :func:`whoosh.scoring.bm25` is done in the same order on
    float64 arrays; IEEE arithmetic rounds each one as Python's float does, so
    every score is the same float.
    """
    import numpy as np

    lengths = leaf.arrays.get(field)
    if lengths is None:
        lengths = leaf.arrays[field] = np.full(leaf.reader.doc_count_all(), np.nan)
    docs = np.asarray(ids, dtype=np.int64)
    fl = lengths[docs]
    missing = np.isnan(fl)
    if missing.any():
        field_length = leaf.reader.doc_field_length
        for doc in docs[missing].tolist():
            lengths[doc] = field_length(doc, field, 1)
        fl = lengths[docs]
    tf = np.asarray(weights, dtype=np.float64)
    B, K1 = scorer.B, scorer.K1
    values = scorer.idf * ((tf * (K1 + 1)) / (tf + K1 * ((1 - B) + B * fl / scorer.avgfl)))
    if boost != 1.0:
        values = values * boost
    return dict(zip((docs + leaf.offset).tolist(), values.tolist(), strict=True))


class _Leaf:
    """One segment of the searcher: its reader, doc offset, deletions, field lengths."""

    __slots__ = ("arrays", "deleted", "lengths", "offset", "reader", "searcher")

    def __init__(self, searcher: Any, offset: int) -> None:
        self.searcher = searcher
        self.offset = offset
        self.reader = searcher.reader()
        self.deleted: frozenset[int] = (
            frozenset(self.reader.deleted_docs_set) if self.reader.has_deletions() else frozenset()
        )
        #: Field lengths by field and segment doc number, read as first needed.
        self.lengths: dict[str, list[Any]] = {}
        #: The same as numpy arrays (NaN: not read yet), for long posting lists.
        self.arrays: dict[str, Any] = {}


@dataclass(slots=True)
class _Term:
    """What a search needs of one analysed term, read once and kept (see BM25Ranker)."""

    #: The fields holding it somewhere, with their boosts, in the boosts' order.
    parts: list[tuple[str, float]]
    #: Per segment, per part: its document frequency there (Whoosh's size estimate).
    sizes: list[list[int]]
    #: Per segment, per part: {global doc: score}.
    scores: list[list[Scores]]
    #: Postings held (what the cache is bounded by).
    postings: int


class BM25Ranker:
    """Ranks sections of one opened Whoosh searcher as Whoosh would (see the module).

    What a term needs (its fields, sizes and scores per section) is kept for the
    last :attr:`cache_postings` postings' worth of terms: a searcher's scores never
    change, and most questions share words with earlier ones. Not thread-safe: the
    index serialises searches on a generation.
    """

    #: Postings (about 100 bytes each) of the most recently used terms kept.
    cache_postings = 200_000
    #: Posting lists at least this long are scored with numpy: below it, Python's
    #: loop costs less than converting to arrays and back.
    vector_postings = 256
    #: Until numpy is imported (the page ranker imports it in the bot), only lists
    #: this long are scored with it: a one-shot ``wikibot ask`` would pay numpy's
    #: import (about 0.1 s) to save less.
    vector_postings_cold = 20_000

    def __init__(
        self,
        searcher: Any,
        boosts: Mapping[str, float] = ranking.FIELD_BOOSTS,
        *,
        factors: Sequence[float] | None = None,
    ) -> None:
        """``factors``: when the weighting's ``final`` is ``score * factors[doc]`` for the
        docs it has a factor for (the index's status weighting), the factors, applied
        here directly instead of through a method call per section."""
        self.searcher = searcher
        self.factors = factors
        self.boosts = dict(boosts)
        self._reader = searcher.reader()
        self._leaves = [_Leaf(sub, offset) for sub, offset in searcher.leaf_searchers()]
        self._weighting = searcher.weighting
        self._final: Callable[[Any, int, float], float] | None = (
            self._weighting.final if self._weighting.use_final else None
        )
        self._terms: OrderedDict[str, _Term] = OrderedDict()
        self._held = 0

    def _term(self, term: str) -> _Term:
        entry = self._terms.get(term)
        if entry is not None:
            self._terms.move_to_end(term)
            return entry
        reader = self._reader
        parts = [
            (field, boost)
            for field, boost in self.boosts.items()
            if reader.doc_frequency(field, term)
        ]
        sizes: list[list[int]] = []
        scores: list[list[Scores]] = []
        for leaf in self._leaves:
            sizes.append([leaf.reader.doc_frequency(field, term) for field, _ in parts])
            scores.append([self._scores(leaf, field, term, boost) for field, boost in parts])
        held = 1 + sum(len(one) for per_leaf in scores for one in per_leaf)
        entry = _Term(parts=parts, sizes=sizes, scores=scores, postings=held)
        self._terms[term] = entry
        self._held += held
        while self._held > self.cache_postings and len(self._terms) > 1:
            _, old = self._terms.popitem(last=False)
            self._held -= old.postings
        return entry

    def _scores(self, leaf: _Leaf, field: str, term: str, boost: float) -> Scores:
        """{global doc: Whoosh's score of the term in the field}, in doc order."""
        btext = self.searcher.schema[field].to_bytes(term)
        reader = leaf.reader
        if (field, btext) not in reader:
            return {}
        scorer = self._weighting.scorer(leaf.searcher, field, btext)
        score = getattr(scorer, "_score", None)
        if score is None or not hasattr(scorer, "dfl"):  # not a weight-and-length scorer
            return self._scores_by_matcher(leaf, field, btext, boost)
        ids, weights = _postings(reader.postings(field, btext), leaf.deleted)
        if type(scorer) is BM25FScorer and self._vectorise(len(ids)):
            return _vector_scores(leaf, field, ids, weights, scorer, boost)
        lengths = leaf.lengths.get(field)
        if lengths is None:
            lengths = leaf.lengths[field] = [None] * reader.doc_count_all()
        field_length = reader.doc_field_length
        offset = leaf.offset
        out: Scores = {}
        for doc, weight in zip(ids, weights, strict=True):
            length = lengths[doc]
            if length is None:
                length = lengths[doc] = field_length(doc, field, 1)
            value = score(weight, length)
            out[offset + doc] = value * boost if boost != 1.0 else value
        return out

    def _vectorise(self, postings: int) -> bool:
        if postings < self.vector_postings:
            return False
        return "numpy" in sys.modules or postings >= self.vector_postings_cold

    def _scores_by_matcher(self, leaf: _Leaf, field: str, btext: bytes, boost: float) -> Scores:
        matcher = leaf.searcher.postings(field, btext)
        out: Scores = {}
        while matcher.is_active():
            value = matcher.score()
            out[leaf.offset + matcher.id()] = value * boost if boost != 1.0 else value
            matcher.next()
        return out

    # -- a query ----------------------------------------------------------------------

    def rank(
        self, terms: Sequence[str], need: int, allowed: set[int] | None
    ) -> tuple[list[tuple[float, int]], int]:
        """(score, doc) of the best ``need`` sections and how many matched in all.

        ``allowed``: the doc numbers a category filter lets through, or None.
        Same contract and answer as :func:`knowledge.search._whoosh.whoosh_rank`.
        """
        groups = [entry for entry in map(self._term, terms) if entry.parts]
        if not groups:
            return [], 0
        # One group: the sections holding it; several: those holding every one.
        found = self._matching(groups, allowed)
        if found or len(groups) == 1:
            return self._best(found, need), len(found)
        depth = max(need, ranking.RERANK_DEPTH)
        summed, total = self._any_term(groups, depth, allowed)
        return ranking.coordinated(summed, len(groups), need), total

    def _matching(self, groups: list[_Term], allowed: set[int] | None) -> dict[int, float]:
        """{doc: final score} of the sections holding every group, as Whoosh's ``And``
        of the groups' ``Or`` (a lone group or part is its own matcher) scores them."""
        found: dict[int, float] = {}
        for n, leaf in enumerate(self._leaves):
            doc_count = leaf.reader.doc_count()
            docs: set[int] | None = None
            trees: list[tuple[int, Tree]] = []
            for group in groups:
                part_scores = group.scores[n]
                sizes = group.sizes[n]
                held: set[int] = set(part_scores[0])
                for one in part_scores[1:]:
                    held.update(one)
                docs = held if docs is None else docs & held
                if len(part_scores) == 1:
                    group_tree: Tree = part_scores[0]
                    size = sizes[0]
                else:
                    group_tree = _tree(list(zip(sizes, part_scores, strict=True)))
                    size = min(sum(sizes), doc_count)  # Or.estimate_size
                trees.append((0 - size, group_tree))
            if not docs:
                continue
            if allowed is not None:
                docs &= allowed
            tree = trees[0][1] if len(trees) == 1 else _tree(trees)
            found.update(_values(tree, docs))
        return self._finished(found)

    def _finished(self, scores: dict[int, float]) -> dict[int, float]:
        """``scores`` after the weighting's ``final`` (the status factors)."""
        factors = self.factors
        if factors is not None:
            count = len(factors)
            return {
                doc: value * factors[doc] if doc < count else value for doc, value in scores.items()
            }
        final = self._final
        if final is None:
            return scores
        return {doc: final(self.searcher, doc, value) for doc, value in scores.items()}

    @staticmethod
    def _best(found: dict[int, float], need: int) -> list[tuple[float, int]]:
        return [(score, doc) for doc, score in _top(found, need)]

    def _any_term(
        self, groups: list[_Term], depth: int, allowed: set[int] | None
    ) -> tuple[list[tuple[float, int, int]], int]:
        """The fallback: (score, doc, terms held) of the best ``depth`` sections holding
        any term, and how many do; added up in the order of ``_whoosh._any_term``."""
        summed: dict[int, float] = {}
        holds: dict[int, int] = {}
        for n in range(len(self._leaves)):
            for group in groups:
                found: set[int] = set()
                for one in group.scores[n]:
                    for doc, value in one.items():
                        summed[doc] = summed.get(doc, 0.0) + value
                    found.update(one)
                for doc in found:
                    holds[doc] = holds.get(doc, 0) + 1
        if allowed is not None:
            summed = {doc: value for doc, value in summed.items() if doc in allowed}
        summed = self._finished(summed)
        return [(value, doc, holds[doc]) for doc, value in _top(summed, depth)], len(summed)
