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

import importlib
from typing import TYPE_CHECKING, Any

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


# The root keeps its own copy of what knowledge.lazy gives the sub-packages: importing
# ``knowledge`` loads no other module of the package.
def __getattr__(name: str) -> Any:
    module_name = _WHERE.get(name)
    if module_name is None:
        raise AttributeError(f"module 'knowledge' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    return module if module_name == f"{__name__}.{name}" else getattr(module, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
