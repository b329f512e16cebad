"""What stands at a fabric file's path is told as it is: a loop of symbolic links was 'does
not exist' (``Path.exists`` is False for it); a folder, a FIFO and a device are not files; the
file is opened once, the one checked the one read."""

from __future__ import annotations

import os

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_fabric_bytes, read_graph, write_graph


def _refusal(path) -> str:
    with pytest.raises(UserError) as err:
        read_graph(path)
    said = str(err.value)
    assert "\n" not in said
    return said


def test_a_loop_of_symbolic_links_is_named_as_one(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    assert _refusal(a) == f"cannot read fabric file {str(a)!r}: Too many levels of symbolic links"


def test_a_missing_file_and_a_dangling_link_do_not_exist(tmp_path):
    link = tmp_path / "gone.graphml"
    link.symlink_to(tmp_path / "nowhere.graphml")
    assert _refusal(link) == f"fabric file {str(link)!r} does not exist"
    assert _refusal(tmp_path / "no.json") == f"fabric file {str(tmp_path / 'no.json')!r} does not exist"


def test_a_folder_a_fifo_and_a_device_are_not_files(tmp_path):
    folder = tmp_path / "d.json"
    folder.mkdir()
    fifo = tmp_path / "f.graphml"
    os.mkfifo(fifo)   # no writer: opened without blocking, then refused
    device = tmp_path / "zero.json"
    device.symlink_to("/dev/zero")
    for path in (folder, fifo, device):
        assert _refusal(path) == f"fabric file {str(path)!r} is not a file"


def test_a_name_over_the_file_systems_limit_is_told_so(tmp_path):
    path = tmp_path / ("a" * 300 + ".json")
    said = _refusal(path)   # the long name shortened in the middle
    assert said.startswith("cannot read fabric file ") and said.endswith(": File name too long")


def test_a_file_over_the_limit_is_refused_and_one_within_read_whole(tmp_path, monkeypatch):
    path = tmp_path / "ring.json"
    write_graph(build("ring:n=4"), path)
    size = path.stat().st_size
    assert read_fabric_bytes(path) == path.read_bytes()
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_FILE_BYTES", str(size - 1))
    assert _refusal(path) == (f"fabric file {str(path)!r} is {size:,} bytes, over the limit of "
                              f"{size - 1:,}; raise NETMODEL_MAX_FABRIC_FILE_BYTES to read it")
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_FILE_BYTES", str(size))
    assert read_graph(path).number_of_edges() == 4
