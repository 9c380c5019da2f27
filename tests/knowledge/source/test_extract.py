"""Safe extraction of wiki tarballs: hostile archives are refused before anything is written."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zlib
from pathlib import Path

import pytest

from knowledge.source.extract import ArchiveError, Caps, extract_tarball
from tests.github_standin import tarball

PAGES = {"README.md": b"# Wiki\n\nHello.\n", "models/a.md": b"# A\n\ntext\n"}


def write(tmp_path: Path, data: bytes, name: str = "archive.tar.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def raw_tar(members: list[tuple[tarfile.TarInfo, bytes | None]], fmt=tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def member(name: str, data: bytes = b"# x\n", **attrs) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in attrs.items():
        setattr(info, key, value)
    if info.type != tarfile.REGTYPE:
        info.size = 0
        return info, None
    return info, data


def refused(tmp_path: Path, data: bytes, caps: Caps | None = None) -> str:
    dest = tmp_path / "out"
    with pytest.raises(ArchiveError) as caught:
        extract_tarball(write(tmp_path, data), dest, caps or Caps())
    return str(caught.value)


def test_a_github_shaped_tarball_unpacks_without_its_top_folder(tmp_path):
    files = {**PAGES, "images/x.png": b"\x89PNG", "scripts/run.sh": b"#!/bin/sh\nrm -rf /\n"}
    got = extract_tarball(write(tmp_path, tarball(files)), tmp_path / "out", Caps())
    out = tmp_path / "out"
    assert (out / "README.md").read_bytes() == PAGES["README.md"]
    assert (out / "models" / "a.md").is_file() and (out / "images" / "x.png").is_file()
    assert not (out / "scripts" / "run.sh").exists(), "scripts are never written"
    assert (got.pages, got.files, got.skipped, got.prefix) == (2, 3, 1, "owner-wiki-0123456")
    for path in out.rglob("*"):
        if path.is_file():
            assert not path.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("top/../../etc/passwd.md", "'..'"),
        ("/etc/passwd.md", "absolute"),
        ("top/a\\..\\b.md", "backslash"),
    ],
)
def test_names_escaping_the_tree_are_refused(tmp_path, name, words):
    data = gzip.compress(raw_tar([member("top/", type=tarfile.DIRTYPE), member(name)]))
    assert words in refused(tmp_path, data)
    assert not list((tmp_path / "out").rglob("*.md"))


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        (tarfile.SYMTYPE, "link"),
        (tarfile.LNKTYPE, "link"),
        (tarfile.CHRTYPE, "device"),
        (tarfile.BLKTYPE, "device"),
        (tarfile.FIFOTYPE, "device"),
    ],
)
def test_links_and_devices_are_refused(tmp_path, kind, words):
    bad = member("top/evil.md", type=kind, linkname="../../../etc/passwd")
    data = gzip.compress(raw_tar([member("top/", type=tarfile.DIRTYPE), member("top/a.md"), bad]))
    assert words in refused(tmp_path, data)


def test_duplicate_names_are_refused(tmp_path):
    data = gzip.compress(
        raw_tar(
            [
                member("top/", type=tarfile.DIRTYPE),
                member("top/a.md"),
                member("top/a.md", b"# other\n"),
            ]
        )
    )
    assert "duplicate" in refused(tmp_path, data)


def test_a_folder_entry_after_the_files_inside_it_is_accepted(tmp_path):
    # Not every tar writer lists a folder before its contents (a .tar.gz URL source).
    data = gzip.compress(
        raw_tar(
            [
                member("top/", type=tarfile.DIRTYPE),
                member("top/a/b/c.md"),
                member("top/a/d.md"),
                member("top/a/", type=tarfile.DIRTYPE),
                member("top/a/b/", type=tarfile.DIRTYPE),
            ]
        )
    )
    got = extract_tarball(write(tmp_path, data), tmp_path / "out", Caps())
    assert got.pages == 2 and (tmp_path / "out" / "a" / "b" / "c.md").is_file()


def test_a_file_named_like_a_folder_made_before_is_refused(tmp_path):
    data = gzip.compress(
        raw_tar([member("top/", type=tarfile.DIRTYPE), member("top/a/b.md"), member("top/a")])
    )
    assert "duplicate member name: 'top/a'" in refused(tmp_path, data)


def test_a_folder_listed_twice_is_refused(tmp_path):
    folder = member("top/a/", type=tarfile.DIRTYPE)
    data = gzip.compress(
        raw_tar([member("top/", type=tarfile.DIRTYPE), folder, member("top/a/b.md"), folder])
    )
    assert "duplicate member name" in refused(tmp_path, data)


def test_a_member_outside_the_top_folder_is_refused(tmp_path):
    data = gzip.compress(
        raw_tar([member("top/", type=tarfile.DIRTYPE), member("top/a.md"), member("other/b.md")])
    )
    assert "outside" in refused(tmp_path, data)


def test_a_path_deeper_than_the_cap_is_refused(tmp_path):
    deep = "top/" + "d/" * 20 + "a.md"
    data = gzip.compress(raw_tar([member("top/", type=tarfile.DIRTYPE), member(deep)]))
    assert "deeper" in refused(tmp_path, data)


def sparse_header(name: str, real_size: int) -> bytes:
    """An old-GNU sparse member claiming ``real_size`` bytes, holding none."""
    info = tarfile.TarInfo(name)
    info.type = tarfile.GNUTYPE_SPARSE
    info.size = 0
    block = bytearray(info.tobuf(format=tarfile.GNU_FORMAT))
    block[483:495] = b"%011o\0" % real_size  # realsize of the old GNU sparse header
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block[:512])
    return bytes(block[:512])


def top_header() -> bytes:
    info, _ = member("top/", type=tarfile.DIRTYPE)
    return info.tobuf(format=tarfile.GNU_FORMAT)


def test_a_2gb_sparse_member_is_refused_from_its_header(tmp_path):
    head = top_header()
    data = gzip.compress(head + sparse_header("top/big.md", 2 * 1024**3) + b"\0" * 1024)
    message = refused(tmp_path, data)
    assert message == "sparse member of 2147483648 bytes: 'top/big.md'"
    assert not (tmp_path / "out" / "big.md").exists()


def test_a_member_over_the_file_cap_is_refused_before_reading(tmp_path):
    info = tarfile.TarInfo("top/huge.md")
    info.size = 2 * 1024**3
    head = top_header() + info.tobuf(tarfile.PAX_FORMAT)
    # The body is missing altogether: the header alone must get it refused.
    assert "over the cap" in refused(tmp_path, gzip.compress(head))


def empty_files(count: int) -> bytes:
    """A tar.gz of ``count`` empty pages, headers patched from one template (fast)."""
    template = bytearray(tarfile.TarInfo("x").tobuf(format=tarfile.USTAR_FORMAT))
    blocks = []
    for i in range(count):
        block = bytearray(template)
        block[0:100] = f"f{i}.md".encode().ljust(100, b"\0")
        block[148:156] = b" " * 8
        block[148:156] = b"%06o\0 " % sum(block)
        blocks.append(bytes(block))
    return gzip.compress(b"".join(blocks) + b"\0" * 1024, compresslevel=1)


def test_100000_empty_files_are_refused_at_the_member_cap(tmp_path):
    # A small cap keeps the test quick; the default (Caps.members) works the same way.
    message = refused(tmp_path, empty_files(100_000), Caps(members=1000))
    assert "more than 1000 members" in message
    assert sum(1 for _ in (tmp_path / "out").iterdir()) <= 1000


def gzip_bomb(mib: int) -> bytes:
    """A valid tar.gz holding one ``mib`` MiB file of zeros, about 1000:1.

    After a full flush deflate starts afresh, so every further MiB of zeros
    compresses to the same bytes: they are made once and repeated.
    """
    info = tarfile.TarInfo("top/bomb.md")
    info.size = mib << 20
    header = info.tobuf(tarfile.USTAR_FORMAT)
    zeros = b"\0" * (1 << 20)
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = squeeze.compress(header) + squeeze.flush(zlib.Z_FULL_FLUSH)
    block = squeeze.compress(zeros) + squeeze.flush(zlib.Z_FULL_FLUSH)
    tail = squeeze.compress(b"\0" * 1024) + squeeze.flush()
    crc = zlib.crc32(header)
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    crc = zlib.crc32(b"\0" * 1024, crc)
    length = (len(header) + (mib << 20) + 1024) & 0xFFFFFFFF
    gz_head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return (
        gz_head
        + head
        + block * mib
        + tail
        + crc.to_bytes(4, "little")
        + length.to_bytes(4, "little")
    )


def test_a_gzip_bomb_is_refused_without_unpacking_it(tmp_path):
    bomb = gzip_bomb(1024)
    assert (
        len(gzip.decompress(gzip_bomb(2))) == len(tarfile.TarInfo("x").tobuf()) + (2 << 20) + 1024
    )
    assert len(bomb) < 2 * 1024**2
    assert "over the cap" in refused(tmp_path, bomb)
    assert not (tmp_path / "out" / "bomb.md").exists()


def test_many_files_within_the_file_cap_stop_at_the_unpacked_cap(tmp_path):
    files = {f"p{i}.md": b"# p\n" + b"x" * 60_000 for i in range(40)}
    caps = Caps(file_bytes=100_000, unpacked_bytes=1_000_000)
    assert "more than 1000000 bytes" in refused(tmp_path, tarball(files), caps)
    written = sum(p.stat().st_size for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written <= 1_000_000


def test_a_truncated_gzip_stops_cleanly(tmp_path):
    data = tarball({**PAGES, "big.md": os.urandom(200_000)})
    message = refused(tmp_path, data[: len(data) // 2])
    assert "truncated or corrupt" in message


def test_a_corrupt_gzip_stops_cleanly(tmp_path):
    data = bytearray(tarball({**PAGES, "big.md": os.urandom(200_000)}))
    data[len(data) // 2 : len(data) // 2 + 64] = b"\xff" * 64
    assert "truncated or corrupt" in refused(tmp_path, bytes(data))


def test_not_a_gzip_at_all(tmp_path):
    assert "truncated or corrupt" in refused(tmp_path, b"<html>rate limited</html>")


def test_an_archive_without_pages_is_refused(tmp_path):
    assert "no Markdown pages" in refused(tmp_path, tarball({"a.png": b"x"}))


def test_the_download_cap_applies_to_the_file(tmp_path):
    data = tarball(PAGES)
    assert "over the cap" in refused(tmp_path, data, Caps(download_bytes=len(data) - 1))


# --- each layer of the extraction on its own: removing one fails its test, even where
# --- another layer would still refuse the member


def test_a_member_of_another_type_is_refused_by_its_type_before_the_data_filter(tmp_path):
    # a GNU volume label: neither a file nor a folder, a link or a device; tarfile's data
    # filter would refuse it too, but as a "special file": the type check answers first
    odd = member("top/label.md", type=b"V")
    data = gzip.compress(
        raw_tar([member("top/", type=tarfile.DIRTYPE), member("top/a.md"), odd], tarfile.GNU_FORMAT)
    )
    said = refused(tmp_path, data)
    assert "unsupported member type" in said and "data filter" not in said


def test_every_member_is_shown_to_tarfiles_data_filter(tmp_path, monkeypatch):
    # the data filter is a second opinion on every member: one it refuses stops the
    # extraction, whatever the checks before it said
    real = tarfile.data_filter
    shown = []

    def fussy(member_info, dest_path):
        shown.append(member_info.name)
        if member_info.name.endswith("b.md"):
            raise tarfile.FilterError("refused for the test")
        return real(member_info, dest_path)

    monkeypatch.setattr(tarfile, "data_filter", fussy)
    data = gzip.compress(
        raw_tar([member("top/", type=tarfile.DIRTYPE), member("top/a.md"), member("top/b.md")])
    )
    assert "data filter" in refused(tmp_path, data)
    assert shown == ["top", "top/a.md", "top/b.md"]


def test_hidden_files_and_folders_are_never_written(tmp_path):
    data = gzip.compress(
        raw_tar(
            [
                member("top/", type=tarfile.DIRTYPE),
                member("top/a.md"),
                member("top/.hidden.md"),
                member("top/.git/", type=tarfile.DIRTYPE),
                member("top/.git/notes.md"),
                member("top/models/.draft.md"),
            ]
        )
    )
    got = extract_tarball(write(tmp_path, data), tmp_path / "out", Caps())
    written = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.md")
    )
    assert written == ["a.md"]
    assert (got.files, got.skipped) == (1, 3)


def test_each_file_is_created_new_without_following_a_link(tmp_path, monkeypatch):
    import knowledge.source.extract as extract_module

    flags_seen = []
    real_open = os.open

    def watching(path, flags, *args, **kwargs):
        flags_seen.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(extract_module.os, "open", watching)
    extract_tarball(write(tmp_path, tarball(PAGES)), tmp_path / "out", Caps())
    assert len(flags_seen) == len(PAGES)
    for flags in flags_seen:
        assert flags & os.O_NOFOLLOW, "a link planted at the path is not followed"
        assert flags & os.O_EXCL and flags & os.O_CREAT, "a file there already is not reused"


def with_zeros_after(archive: bytes, mib: int) -> bytes:
    """A gzip of ``archive`` followed by ``mib`` MiB of zeros (about 1000:1), the
    repeated-block trick of :func:`gzip_bomb`."""
    zeros = b"\0" * (1 << 20)
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = squeeze.compress(archive) + squeeze.flush(zlib.Z_FULL_FLUSH)
    block = squeeze.compress(zeros) + squeeze.flush(zlib.Z_FULL_FLUSH)
    end = squeeze.flush()
    crc = zlib.crc32(archive)
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    length = (len(archive) + (mib << 20)) & 0xFFFFFFFF
    gz_head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return (
        gz_head
        + head
        + block * mib
        + end
        + crc.to_bytes(4, "little")
        + length.to_bytes(4, "little")
    )


def test_gigabytes_of_zeros_after_the_archive_count_against_the_unpacked_cap(tmp_path):
    archive = raw_tar([member("top/", type=tarfile.DIRTYPE, data=b""), member("top/a.md")])
    small = with_zeros_after(archive, 2)
    assert len(gzip.decompress(small)) == len(archive) + (2 << 20)  # a valid gzip
    assert extract_tarball(write(tmp_path, small, "small.tar.gz"), tmp_path / "ok", Caps()).pages
    bomb = with_zeros_after(archive, 3 * 1024)  # 3 GiB after the archive's end
    assert len(bomb) < 4 * 1024**2
    message = refused(tmp_path, bomb, Caps(unpacked_bytes=1 << 20))
    assert "more than 1048576 bytes" in message and "after its end" in message
