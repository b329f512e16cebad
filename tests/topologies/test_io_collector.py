"""read_graph pauses Python's cyclic garbage collector while it reads (a dict and a tuple
per node and edge, none garbage: the collector's passes over them cost 0.4-0.5 s of a
131,072-GPU GraphML import) and gives it back as it found it, also when it refuses."""

from __future__ import annotations

import gc

import pytest

import topologies.io as io
from compute.errors import UserError
from topologies import ring


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
def test_the_collector_is_off_while_reading_and_on_after(tmp_path, monkeypatch, suffix):
    path = io.write_graph(ring(4), tmp_path / f"ring{suffix}")
    seen = []
    validate = io.validate

    def watched(graph, *args, **kwargs):
        seen.append(gc.isenabled())
        return validate(graph, *args, **kwargs)

    monkeypatch.setattr(io, "validate", watched)
    assert gc.isenabled()
    io.read_graph(path)
    assert seen == [False] and gc.isenabled()
    (tmp_path / f"bad{suffix}").write_text("{" if suffix == ".json" else "<graphml")
    with pytest.raises(UserError, match="not a readable"):
        io.read_graph(tmp_path / f"bad{suffix}")
    assert gc.isenabled()   # given back after a refusal too


def test_a_collector_already_off_stays_off(tmp_path):
    path = io.write_graph(ring(4), tmp_path / "ring.json")
    gc.disable()
    try:
        io.read_graph(path)
        assert not gc.isenabled()
    finally:
        gc.enable()
