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


def test_building_turns_automatic_collection_off_until_the_last_use_ends():
    heap = FrozenHeap()
    assert gc.isenabled()
    try:
        with heap.building():
            assert not gc.isenabled()
            with heap.building():  # a reindex inside a refresh's window, say
                assert not gc.isenabled()
            assert not gc.isenabled(), "still building"
            built = [[n] for n in range(1000)]
        assert gc.isenabled()
        # What was built is frozen, not left for the next young collection to walk.
        ids = {id(b) for b in built}
        assert not any(id(o) in ids for g in (0, 1, 2) for o in gc.get_objects(g))
    finally:
        gc.unfreeze()


def test_building_restores_collection_after_an_error_and_keeps_it_off_if_it_was():
    heap = FrozenHeap()
    try:
        with heap.building():
            raise RuntimeError("the load failed")
    except RuntimeError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with heap.building():
            pass
        assert not gc.isenabled(), "left as it was before"
    finally:
        gc.enable()
        gc.unfreeze()
