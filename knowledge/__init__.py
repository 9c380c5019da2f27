"""Answers from a Markdown field wiki: its pages, glossary, runbooks, search and triage.

The public API, for the bot and for scripts::

    from knowledge import KnowledgeBase

    kb = KnowledgeBase.open(wiki_dir)  # the demo wiki when None
    print(kb.runbook("qwen").title)

Names are imported on first use (PEP 562), so ``import knowledge.text`` does not
load the search engine, and ``wikibot --help`` or ``wikibot health`` start fast.
The sub-packages have one job each: ``wiki`` (pages, glossary, catalogue),
``search`` (the index), ``launch`` (launch commands), ``triage`` (help
requests), ``answers`` (every reply), ``cli`` (the terminal commands).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge.lazy import lazy_exports

if TYPE_CHECKING:
    from knowledge import answers, triage
    from knowledge.answers import WikiState
    from knowledge.reply import Field, PageRef, Reply
    from knowledge.service import KnowledgeBase, default_data_dir, demo_wiki_dir
    from knowledge.templates import Templates, load_templates

__all__ = [
    "Field",
    "KnowledgeBase",
    "PageRef",
    "Reply",
    "Templates",
    "WikiState",
    "answers",
    "default_data_dir",
    "demo_wiki_dir",
    "load_templates",
    "triage",
]

#: public name -> the module that defines it (a sub-package: the name is that package)
_WHERE = {
    "Field": "knowledge.reply",
    "KnowledgeBase": "knowledge.service",
    "PageRef": "knowledge.reply",
    "Reply": "knowledge.reply",
    "Templates": "knowledge.templates",
    "WikiState": "knowledge.answers",
    "answers": "knowledge.answers",
    "default_data_dir": "knowledge.service",
    "demo_wiki_dir": "knowledge.service",
    "load_templates": "knowledge.templates",
    "triage": "knowledge.triage",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
