"""A frozen fabric's OCS cabling record (:func:`topologies.optical.ocs_cabling`) is read
once and kept while the graph lives, keyed also on the graph attributes it reads:
networkx's freeze leaves ``graph.graph`` writable, and a fibre without a ``length`` has
it read back from its latency with the graph's recorded adjustment undone
(``latency_scale``, ``hop_latency``). Before, the kept record was returned whatever
those attributes said since.

Hand-derived: the ``ocs`` builder's fibres are 10 m of co-packaged optics; their latency
is 10 m x 5 ns/m plus the GPU end's co-packaged engine (5 ns): 55 ns, read back with no
adjustment as (55 - 5) / 5 = 10 m; a hop_latency of 20 ns declares 20 ns of each latency
a hop: (55 - 20 - 5) / 5 = 6 m; a latency_scale of 2 besides: ((55 - 20) / 2 - 5) / 5 =
2.5 m.
"""

from __future__ import annotations

import networkx as nx
import pytest

from topologies.optical import ocs, ocs_cabling


def _frozen_without_lengths() -> nx.Graph:
    g = ocs(gpus=2, ports=2)
    for _, _, d in g.edges(data=True):
        d.pop("length", None)
    return nx.freeze(g)


def test_a_kept_record_follows_the_adjustment_the_graph_records():
    g = _frozen_without_lengths()
    first = ocs_cabling(g)
    assert first["fibres"]["length"] == pytest.approx((10.0,) * 4, abs=1e-9)
    assert ocs_cabling(g) is first   # kept: the same object while nothing it reads changed
    g.graph["hop_latency"] = 20e-9
    hop = ocs_cabling(g)
    assert hop is not first
    assert hop["fibres"]["length"] == pytest.approx((6.0,) * 4, abs=1e-9)
    assert ocs_cabling(g) is hop
    g.graph["latency_scale"] = 2.0
    assert [d["latency"] for _, _, d in g.edges(data=True)] == pytest.approx([55e-9] * 4)
    assert ocs_cabling(g)["fibres"]["length"] == pytest.approx((2.5,) * 4, abs=1e-9)
    del g.graph["latency_scale"], g.graph["hop_latency"]
    again = ocs_cabling(g)
    assert again == first and again is not first   # read again: the same facts


def test_an_edited_copy_is_read_afresh_and_the_frozen_fabric_keeps_its_record():
    g = nx.freeze(ocs(gpus=2, ports=2))
    record = ocs_cabling(g)
    copy = g.copy()   # not frozen: edited, and its record read from it
    copy.edges["gpu0", "ocs0"]["length"] = 25.0
    assert ocs_cabling(copy)["fibres"]["length"] == (25.0, 10.0, 10.0, 10.0)
    assert ocs_cabling(g) is record and record["fibres"]["length"] == (10.0,) * 4
