"""One safe reader of a user's file's bytes (compute.config_files.read_bytes) under both the
TOML/JSON readers (read_text) and the fabric reader (topologies.io): each refusal has one
reason, worded by each caller its own way, and never more than the limit and a byte is read."""

from __future__ import annotations

import os
import socket

import pytest

from compute import config_files
from compute.config_files import FileRefusal, read_bytes, read_text
from compute.errors import UserError
from topologies.io import read_fabric_bytes


def _reason(path, limit=100) -> FileRefusal:
    with pytest.raises(FileRefusal) as err:
        read_bytes(path, limit)
    return err.value


def _said(read, *args, **kwargs) -> str:
    with pytest.raises(UserError) as err:
        read(*args, **kwargs)
    return str(err.value)


@pytest.mark.parametrize("size", [0, 1, 99, 100, 101, 5000])
@pytest.mark.parametrize("limit", [0, 1, 100])
def test_a_file_is_read_whole_within_the_limit_and_refused_past_it(tmp_path, size, limit):
    path = tmp_path / "a.json"
    data = bytes(i % 251 for i in range(size))
    path.write_bytes(data)
    if size <= limit:
        assert read_bytes(path, limit) == data
    else:
        refusal = _reason(path, limit)
        assert (refusal.reason, refusal.size, refusal.limit) == ("large", size, limit)


def test_a_file_grown_after_its_size_was_taken_is_read_only_to_the_limit_and_a_byte(
        tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    path.write_bytes(b"a" * 3000)
    real = os.fstat

    class Stale:   # the size as it was before the file grew to 3,000 bytes
        def __init__(self, info):
            self.info = info

        def __getattr__(self, name):
            return 10 if name == "st_size" else getattr(self.info, name)

    monkeypatch.setattr(config_files.os, "fstat", lambda fd: Stale(real(fd)))
    refusal = _reason(path, 100)
    assert (refusal.reason, refusal.size) == ("large", 101)


def test_every_reason_is_worded_by_each_reader(tmp_path, monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_FILE_BYTES", "100")
    folder = tmp_path / "d.json"
    folder.mkdir()
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)   # no writer: opened without blocking, then refused
    device = tmp_path / "zero.json"
    device.symlink_to("/dev/zero")
    loop, other = tmp_path / "a.json", tmp_path / "b.json"
    loop.symlink_to(other)
    other.symlink_to(loop)
    sock_path = tmp_path / "s.json"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    big = tmp_path / "big.json"
    big.write_bytes(b"1" * 101)
    missing = tmp_path / "no.json"
    try:
        for path, reason, text, fabric in (
                (missing, "missing", f"file {str(missing)!r} does not exist",
                 f"fabric file {str(missing)!r} does not exist"),
                (folder, "folder", f"cannot read file {str(folder)!r}: it is a folder, not a file",
                 f"fabric file {str(folder)!r} is not a file"),
                (fifo, "special", f"file {str(fifo)!r} is not a regular file (a FIFO, device "
                 f"or socket); give a file", f"fabric file {str(fifo)!r} is not a file"),
                (device, "special", f"file {str(device)!r} is not a regular file (a FIFO, "
                 f"device or socket); give a file", f"fabric file {str(device)!r} is not a file"),
                (loop, "unreadable", f"cannot read file {str(loop)!r}: Too many levels of "
                 f"symbolic links", f"cannot read fabric file {str(loop)!r}: Too many levels of "
                 f"symbolic links"),
                (sock_path, "unreadable", f"cannot read file {str(sock_path)!r}: No such "
                 f"device or address", f"cannot read fabric file {str(sock_path)!r}: No such device "
                 f"or address"),
                (big, "large", f"file {str(big)!r} is larger than the 100-byte limit for such "
                 f"files; is it the right file?", f"fabric file {str(big)!r} is 101 bytes, over the "
                 f"limit of 100; raise NETMODEL_MAX_FABRIC_FILE_BYTES to read it")):
            assert _reason(path).reason == reason
            assert _said(read_text, path, max_bytes=100) == text
            assert _said(read_fabric_bytes, path) == fabric
    finally:
        sock.close()


def test_a_path_given_as_text_is_named_as_a_path(tmp_path):
    given = f"{tmp_path}//./no.toml"   # named as pathlib writes it, as before read_bytes
    assert _said(read_text, given, "model file") == \
        f"model file {str(tmp_path / 'no.toml')!r} does not exist"
