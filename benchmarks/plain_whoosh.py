"""The benchmark's reference: plain whoosh-ng on the same sections as the project.

What a newcomer to whoosh-ng would write from its documentation: a stemming
analyzer, BM25F, a multi-field query parser with an OR group, and the
highlighter for the snippets. The only module outside ``knowledge.search`` that
imports whoosh (the boundary test lists it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["PAGE", "PlainWhoosh"]

#: Hits asked for per search: one page of /search.
PAGE = 5


class PlainWhoosh:
    """whoosh-ng as its documentation shows it: BM25F, OR-group parser, highlighter."""

    def __init__(self, kb: Any, folder: Path) -> None:
        from whoosh import index, scoring
        from whoosh.analysis import StemmingAnalyzer
        from whoosh.fields import ID, STORED, TEXT, Schema
        from whoosh.qparser import MultifieldParser, OrGroup, PhrasePlugin

        from knowledge.search.documents import section_document

        analyzer = StemmingAnalyzer()

        def text() -> TEXT:
            # No positions, as in the project's index (whoosh-ng 5.4's phrase
            # matcher fails to decode some position lists).
            return TEXT(stored=True, analyzer=analyzer, phrase=False)

        schema = Schema(
            id=ID(stored=True, unique=True),
            path=ID(stored=True),
            anchor=STORED(),
            page_title=text(),
            section_title=text(),
            text=text(),
            code=text(),
        )
        folder.mkdir(parents=True, exist_ok=True)
        ix = index.create_in(str(folder), schema)
        writer = ix.writer(limitmb=256)
        for _, page in sorted(kb.wiki.pages.items()):
            for section in page.sections:
                doc = section_document(page, section, "other")
                writer.add_document(
                    id=doc.id,
                    path=doc.path,
                    anchor=doc.anchor,
                    page_title=doc.page_title,
                    section_title=doc.section_title,
                    text=doc.text,
                    code=doc.code,
                )
        writer.commit()
        self.ix = ix
        self.searcher = ix.searcher(weighting=scoring.BM25F())
        self.parser = MultifieldParser(
            ["page_title", "section_title", "text", "code"], schema, group=OrGroup
        )
        # Quotes would make phrase queries, which need positions (see text() above).
        self.parser.remove_plugin_class(PhrasePlugin)

    def search(self, text: str) -> list[str]:
        from knowledge.search import MAX_QUERY_CHARS
        from knowledge.text import cap_user_text

        cleaned, _ = cap_user_text(text, MAX_QUERY_CHARS)
        query = self.parser.parse(cleaned)
        results = self.searcher.search(query, limit=PAGE, terms=True)
        return [hit.highlights("text") or hit.highlights("code") for hit in results]

    def close(self) -> None:
        self.searcher.close()
        self.ix.close()
