"""Memory upkeep of the bot process after the wiki is reloaded."""

from __future__ import annotations

import gc
import weakref

from bot.client import WikiBot


class _Blob:
    pass


def test_settle_memory_frees_a_replaced_wiki_kept_by_an_earlier_freeze():
    old = _Blob()
    old.cycle = old  # wiki objects reference each other: only the cyclic GC frees them
    ref = weakref.ref(old)
    try:
        gc.freeze()  # the first settle_memory after start-up
        del old
        gc.collect()
        assert ref() is not None  # frozen: a plain collection cannot free it
        WikiBot.settle_memory(None)  # what a reload does; it uses no bot state
        assert ref() is None
    finally:
        gc.unfreeze()
