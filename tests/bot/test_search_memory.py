"""The /search pager's keys on disk: a log appended per new search, compacted, read back."""

from __future__ import annotations

import asyncio
import json

from bot.exts.search import _views
from bot.exts.search._views import KEYS_FILE, SearchMemory

LONG = "the server dies after loading the weights, " * 90  # a pasted question, ~3,900 chars


def remembered(memory: SearchMemory, query: str, category: str | None = None) -> str:
    key, pending = memory.remember(query, category)
    if pending is not None:
        asyncio.run(memory.write(pending))
    return key


def test_each_new_search_appends_one_line_and_a_restart_reads_them_all(tmp_path):
    memory = SearchMemory(lambda: tmp_path)
    keys = [remembered(memory, f"{LONG} {n}", "models" if n % 2 else None) for n in range(5)]
    path = tmp_path / KEYS_FILE
    size, inode = path.stat().st_size, path.stat().st_ino
    assert remembered(memory, f"{LONG} 1", "models") == keys[1]  # not new: nothing written
    assert path.stat().st_size == size
    sixth = remembered(memory, "nccl")
    grown = path.read_bytes()[size:]
    assert json.loads(grown) == [sixth, "nccl", None], "only the new search's line is written"
    assert path.stat().st_ino == inode, "appended, not rewritten"

    again = SearchMemory(lambda: tmp_path)  # after a restart
    assert again.search_of(keys[3]) == (f"{LONG} 3", "models")
    assert again.search_of(keys[0]) == (f"{LONG} 0", None)
    assert again.search_of(sixth) == ("nccl", None)


def test_the_log_is_rewritten_with_the_keys_kept_once_it_holds_twice_as_many(tmp_path, monkeypatch):
    monkeypatch.setattr(_views, "KEYS_KEPT", 4)
    memory = SearchMemory(lambda: tmp_path)
    keys = [remembered(memory, f"query {n}") for n in range(9)]
    lines = (tmp_path / KEYS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)[0] for line in lines] == keys[-4:], "compacted: the newest four"
    assert memory.search_of(keys[4]) is None and memory.search_of(keys[8]) == ("query 8", None)
    again = SearchMemory(lambda: tmp_path)
    assert [again.search_of(k) is not None for k in keys] == [False] * 5 + [True] * 4


def test_a_line_cut_short_by_a_crash_is_passed_over(tmp_path):
    memory = SearchMemory(lambda: tmp_path)
    first = remembered(memory, "nccl")
    with (tmp_path / KEYS_FILE).open("a", encoding="utf-8") as out:
        out.write('["abcdef012345", "cuda out of mem')  # no end: the process died mid-write
    again = SearchMemory(lambda: tmp_path)
    assert again.search_of(first) == ("nccl", None)
    later = remembered(again, "flashinfer")
    assert SearchMemory(lambda: tmp_path).search_of(later) == ("flashinfer", None)


def test_keys_of_the_file_earlier_versions_wrote_still_page_and_move_to_the_log(tmp_path):
    key = SearchMemory.key_of("nccl", "troubleshooting")
    (tmp_path / "search-keys.json").write_text(json.dumps({key: ["nccl", "troubleshooting"]}))
    memory = SearchMemory(lambda: tmp_path)
    assert memory.search_of(key) == ("nccl", "troubleshooting")
    newer = remembered(memory, "driver version")
    assert not (tmp_path / "search-keys.json").exists(), "moved to the log at the first write"
    again = SearchMemory(lambda: tmp_path)
    assert again.search_of(key) == ("nccl", "troubleshooting")
    assert again.search_of(newer) == ("driver version", None)


def test_writes_run_in_the_order_the_searches_came(tmp_path, monkeypatch):
    """The writes of searches made one after the other land in that order, whichever of
    their threads would have run first, compaction included."""
    monkeypatch.setattr(_views, "KEYS_KEPT", 3)
    memory = SearchMemory(lambda: tmp_path)

    async def burst() -> list[str]:
        keys, writes = [], []
        for n in range(10):
            key, pending = memory.remember(f"query {n}", None)
            keys.append(key)
            writes.append(asyncio.create_task(memory.write(pending)))
        await asyncio.gather(*writes)
        return keys

    keys = asyncio.run(burst())
    lines = (tmp_path / KEYS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)[0] for line in lines][-3:] == keys[-3:]
    again = SearchMemory(lambda: tmp_path)
    assert [again.search_of(k) for k in keys[-3:]] == [(f"query {n}", None) for n in (7, 8, 9)]
