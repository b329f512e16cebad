"""Hostile input, round 11 (h380): the numbers of a fabric file (JSON, GraphML) read by the
one number grammar (:mod:`compute.validate`)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph

BELOW = "below the smallest number netmodel reads (2.225e-308); write 0 for zero"


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
@pytest.mark.parametrize("number", ["1e-400", "1e-310"])
def test_a_latency_below_the_smallest_is_refused(tmp_path, suffix, number):
    """Before: a link latency written 1e-400 was read as 0 s (1e-310 as a subnormal), exit 0."""
    path = tmp_path / f"ring{suffix}"
    write_graph(build("ring:n=4"), path)
    assert "1e-08" in path.read_text()
    path.write_text(path.read_text().replace("1e-08", number))
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value).startswith(str(path)) and str(err.value).endswith(
        f"holds the number {number}, {BELOW}"), str(err.value)


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
def test_a_latency_of_zero_spelt_is_read(tmp_path, suffix):
    path = tmp_path / f"ring{suffix}"
    write_graph(build("ring:n=4"), path)
    path.write_text(path.read_text().replace("1e-08", "0e-400"))
    assert {d["latency"] for *_, d in read_graph(path).edges(data=True)} == {0.0}
