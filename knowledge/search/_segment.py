"""A fresh index's one segment, written through Whoosh's codec without its general writer's
per-posting work: :class:`FreshSegmentWriter`.

Whoosh's :class:`~whoosh.writing.SegmentWriter` sends every posting of every
document through an external-sort pool (a size estimate and two type checks per
posting), sorts all of them as tuples at commit, and then, for each posting it
writes, reads the document's field length back from the length column it has just
written. On the real wiki (about 200,000 postings) that was over half of a full
build. A build into an empty index needs none of it: postings are grouped by
(field, term) as documents arrive (document numbers only grow, so each group is
already in order), only the groups' keys are sorted, and each field length is
kept in memory as the length byte the column holds.

What reaches the codec is what Whoosh's own writer sends it, call for call, so the
segment's files are byte for byte the same (``tests/knowledge/search/
test_segment.py`` compares them on the demo wiki with the segment's name fixed):
the on-disk format, the scores and every search answer are Whoosh's.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from whoosh.fields import UnknownFieldError
from whoosh.formats import Frequency
from whoosh.system import emptybytes, pack_uint
from whoosh.util.numeric import byte_to_length, length_to_byte
from whoosh.writing import SegmentWriter

__all__ = ["FreshSegmentWriter"]


class FreshSegmentWriter(SegmentWriter):
    """A :class:`~whoosh.writing.SegmentWriter` for one build into an empty index.

    ``add_document`` takes what Whoosh's takes, except boosts (``_boost`` and
    ``_<field>_boost``): a text field's value may be a list of already analysed
    terms, as Whoosh allows, and ``_stored_<field>`` the value to store instead.
    Everything stays in memory until :meth:`commit`. Fields with term vectors or a
    separate spelling field are refused (the schema here has neither), as is an
    index that already holds segments: this writer never merges.
    """

    def __init__(self, ix: Any, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        try:
            if self.segments:
                raise ValueError("FreshSegmentWriter writes into an empty index only")
            for name, field in self.schema.items():
                if field.vector or field.separate_spelling():
                    raise ValueError(f"field {name!r} has vectors or spelling: not supported")
        except BaseException:
            self.cancel()
            raise
        #: Postings as {(field, term bytes): [(doc number, weight, value bytes), ...]}.
        self._posts: dict[tuple[str, bytes], list[tuple[int, float, bytes]]] = {}
        #: {field: {doc number: length byte}} for documents with a non-zero length.
        self._length_bytes: dict[str, dict[int, int]] = {}
        #: pack_uint(freq) by frequency: the value bytes of a Frequency posting.
        self._freq_bytes: dict[int, bytes] = {}

    def add_document(self, **fields: Any) -> None:
        """Add one document (see the class). Same effect as Whoosh's ``add_document``."""
        self._check_state()
        if any(name.startswith("_") and name.endswith("_boost") for name in fields):
            raise ValueError("FreshSegmentWriter takes no boosts")
        perdocwriter = self.perdocwriter
        schema = self.schema
        docnum = self.docnum
        posts = self._posts
        fieldnames = sorted(name for name in fields if not name.startswith("_"))
        for name in fieldnames:
            if name not in schema:
                raise UnknownFieldError(f"No field named {name!r} in {schema}")

        perdocwriter.start_doc(docnum)
        try:
            for name in fieldnames:
                value = fields[name]
                if value is None:
                    continue
                field = schema[name]
                length = 0
                if field.indexed:
                    fmt = field.format
                    if type(value) is list and type(fmt) is Frequency:
                        # What Frequency.word_values makes of analysed terms: each term
                        # once, in order of first use, weighted by its count.
                        boost = fmt.field_boost
                        freq_bytes = self._freq_bytes
                        for term, freq in Counter(value).items():
                            vbytes = freq_bytes.get(freq)
                            if vbytes is None:
                                vbytes = freq_bytes[freq] = pack_uint(freq)
                            key = (name, term.encode("utf-8"))
                            posting = (docnum, float(freq) * boost, vbytes)
                            bucket = posts.get(key)
                            if bucket is None:
                                posts[key] = [posting]
                            else:
                                bucket.append(posting)
                        if field.scorable:
                            length = len(value)
                    else:
                        scorable = field.scorable
                        for tbytes, freq, weight, vbytes in field.index(value):
                            if scorable:
                                length += freq
                            key = (name, tbytes)
                            posting = (docnum, weight, vbytes)
                            bucket = posts.get(key)
                            if bucket is None:
                                posts[key] = [posting]
                            else:
                                bucket.append(posting)
                stored = fields.get(f"_stored_{name}", value)
                perdocwriter.add_field(name, field, stored if field.stored else None, length)
                if length:
                    self._length_bytes.setdefault(name, {})[docnum] = length_to_byte(length)
                column = field.column_type
                if column and stored is not None:
                    perdocwriter.add_column_value(name, column, field.to_column_value(stored))
        except ValueError:
            perdocwriter.cancel_doc()
            raise
        perdocwriter.finish_doc()
        self._added = True
        self.docnum += 1

    def add_reader(self, reader: Any) -> None:
        raise NotImplementedError("FreshSegmentWriter does not merge")

    def _flush_segment(self) -> None:
        """The per-document files, then every posting list in (field, term) order.

        The calls :meth:`whoosh.codec.base.FieldWriter.add_postings` would make, with
        each posting's field length as the length column returns it: 0 for a field
        that has no column, else the length of its byte (None for byte 0).
        """
        self.perdocwriter.close()
        writer = self.fieldwriter
        with_lengths = self.codec.length_stats
        field_name: str | None = None
        lengths: dict[int, int] | None = None
        for key in sorted(self._posts):
            name, tbytes = key
            if name != field_name:
                if field_name is not None:
                    writer.finish_field()
                writer.start_field(name, self.schema[name])
                field_name = name
                lengths = self._length_bytes.get(name) if with_lengths else None
            writer.start_term(tbytes)
            for docnum, weight, vbytes in self._posts[key]:
                if lengths is None:
                    length = 0
                else:
                    lbyte = lengths.get(docnum, 0)
                    length = byte_to_length(lbyte) if lbyte else None
                writer.add(docnum, weight, emptybytes if vbytes is None else vbytes, length)
            writer.finish_term()
        if field_name is not None:
            writer.finish_field()
        writer.close()
        self._posts.clear()
