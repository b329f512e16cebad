"""read_graph's ``raw`` (the bytes a caller already read, as the scenario loader does to key
its cache by content) goes through the same checks as a file read: the file-size limit, and
one line for anything that is not bytes."""

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_fabric_bytes, read_graph, write_graph


def _saved(tmp_path):
    path = tmp_path / "ring.json"
    write_graph(build("ring", {"n": 4}), path)
    return path


def test_raw_bytes_read_as_the_file(tmp_path):
    path = _saved(tmp_path)
    a, b = read_graph(path), read_graph(path, raw=read_fabric_bytes(path))
    assert sorted(a.edges) == sorted(b.edges) and a.number_of_nodes() == b.number_of_nodes()


def test_raw_bytes_over_the_limit_refused(tmp_path, monkeypatch):
    path = _saved(tmp_path)
    raw = read_fabric_bytes(path)
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_FILE_BYTES", "100")
    with pytest.raises(UserError, match=rf"is {len(raw):,} bytes, over the limit of 100"):
        read_graph(path, raw=raw)


@pytest.mark.parametrize("raw", [5, "{}", [1, 2]])
def test_raw_not_bytes_refused(tmp_path, raw):
    path = _saved(tmp_path)
    with pytest.raises(UserError, match=r"^raw: the bytes of fabric file .* must be bytes"):
        read_graph(path, raw=raw)
