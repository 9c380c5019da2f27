"""Atomic replacement and bounded reads of files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from knowledge import files
from knowledge.files import (
    FileTooLarge,
    NotRegularFile,
    read_regular_bytes,
    read_regular_text,
    write_atomic,
)
from tests.support import hang_guard


def test_write_atomic_text_and_bytes_into_a_new_folder(tmp_path: Path):
    target = tmp_path / "new" / "state.json"
    write_atomic(target, "één\n")
    assert target.read_bytes() == "één\n".encode()
    write_atomic(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert os.listdir(target.parent) == ["state.json"]  # no temp file left behind
    assert stat.S_IMODE(target.stat().st_mode) == files.DEFAULT_MODE


def test_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["state.json"]


def test_write_atomic_flushes_file_and_folder(tmp_path: Path, monkeypatch):
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(files.os, "fsync", lambda fd: synced.append(fd) or real(fd))
    write_atomic(tmp_path / "a.txt", "x")
    assert len(synced) == 2  # the temp file's data, then the folder's rename


def test_read_regular_bounds_the_size(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_bytes(b"x" * 10)
    assert read_regular_bytes(page, 10) == b"x" * 10
    assert read_regular_text(page, 10) == "x" * 10
    with pytest.raises(FileTooLarge) as too_large:
        read_regular_bytes(page, 9)
    assert too_large.value.size == 10


def test_read_regular_refuses_folders_and_fifos_without_blocking(tmp_path: Path):
    with pytest.raises(NotRegularFile):
        read_regular_bytes(tmp_path, 100)
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    with hang_guard(10, "reading a FIFO"), pytest.raises(NotRegularFile):
        read_regular_bytes(fifo, 100)
