"""One loaded demo wiki for every answer test: its state and the reply wording."""

from __future__ import annotations

import pytest

from knowledge.answers import WikiState
from knowledge.service import KnowledgeBase, demo_wiki_dir
from knowledge.templates import Templates, load_templates

LINK_BASE = "https://github.com/example/wiki/blob/main/"


@pytest.fixture(scope="package")
def demo_kb(tmp_path_factory) -> KnowledgeBase:
    base = KnowledgeBase.open(demo_wiki_dir(), tmp_path_factory.mktemp("data"), link_base=LINK_BASE)
    yield base
    base.close()


@pytest.fixture(scope="package")
def state(demo_kb) -> WikiState:
    return demo_kb.state


@pytest.fixture(scope="package")
def t() -> Templates:
    return load_templates()
