"""Memory upkeep of the bot process after the wiki is reloaded."""

from __future__ import annotations

import gc
import sys
import weakref

from bot.client import FrozenHeap


class _Blob:
    pass


def _cyclic_garbage(count: int) -> list[weakref.ref]:
    refs = []
    for _ in range(count):
        blob = _Blob()
        blob.cycle = blob  # wiki objects reference each other: only the cyclic GC frees them
        refs.append(weakref.ref(blob))
    return refs


def test_frozen_cycles_are_collected_once_the_heap_has_grown_enough():
    heap = FrozenHeap(growth=1.5)
    try:
        assert heap.settle() is False  # start-up: freeze, remember the size
        small = _cyclic_garbage(10)  # a reload that left a little garbage behind
        assert heap.settle() is False  # not worth a full collection on the loop
        gc.collect()
        assert all(ref() is not None for ref in small)  # kept while frozen
        big = _cyclic_garbage(heap.baseline)  # reloads piled up as much again (and more)
        assert heap.settle(collect=False) is False  # /wiki reindex: never a pause now
        assert heap.settle() is True  # the next periodic refresh collects
        assert all(ref() is None for ref in small + big)
        assert heap.baseline < sys.getallocatedblocks() * heap.growth
    finally:
        gc.unfreeze()
