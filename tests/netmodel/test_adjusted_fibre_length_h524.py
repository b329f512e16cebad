"""A fibre's length is a fact of the cabling, not of its latency (h524).

The ``ocs`` builder's GPU-OCS fibres carried no ``length``, so their length was read back
from their latency (5 ns/m plus the GPU end's co-packaged engine). A scenario's
``latency_scale`` or ``hop_latency`` (``scenario_fabric.adjusted``) changes delays, not
metres: an unrealized fabric adjusted and then realized recorded its fibres at the length
read back from the scaled latency, and the bill of the adjusted fabric priced its cables
so. The builder now puts each fibre's length on its edge (a file keeps it), and both read
it.

Hand-derived: ``ocs:gpus=4,ports=2,ocs_ports=4,length=23`` (co-packaged optics) is 4 GPUs
x 2 ports = 8 fibres of 23 m, each 23 x 5 + 5 = 120 ns. With ``latency_scale = 2`` and
``hop_latency = 100 ns`` each is 340 ns, which read back gives (340 - 5) / 5 = 67 m; the
cabling is still 8 fibres of 23 m, priced 8 x (50 USD a cable + 23 m x 1 USD/m) = 584 USD
(network_costs.toml's fibre_cable_price and fibre_price_per_m).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.network_bill import network_bill
from netmodel.study.scenario_fabric import adjusted
from netmodel.study.scenarios import Adjust
from topologies import build
from topologies.io import read_graph, write_graph
from topologies.optical import ocs_cabling, realize
from topologies.schema import validate

SPEC = "ocs:gpus=4,ports=2,ocs_ports=4,length=23"
ADJUST = Adjust(latency_scale=2.0, hop_latency=100e-9)
FIBRES = 8
LENGTH = 23.0
CABLES_USD = FIBRES * (50 + LENGTH * 1)   # 584


def fibre_edges(graph):
    return [d for u, v, d in graph.edges(data=True) if "ocs" in (u[:3], v[:3])]


def cables(bill):
    return [(i.what, i.count, round(i.capex, 6)) for i in bill.items if i.category == "cable"]


def test_builder_records_each_fibres_length():
    edges = fibre_edges(build(SPEC))
    assert len(edges) == FIBRES
    assert {d["length"] for d in edges} == {LENGTH}
    assert {round(d["latency"] * 1e9, 6) for d in edges} == {120.0}


def test_adjusted_then_realized_records_the_cabled_length():
    a = adjusted(build(SPEC), ADJUST)
    assert {round(d["latency"] * 1e9, 6) for d in fibre_edges(a)} == {340.0}   # scaled
    fibres = ocs_cabling(realize(a, "ring"))["fibres"]
    assert fibres["length"] == (LENGTH,) * FIBRES   # 67 m read back from 340 ns before


def test_bill_of_adjusted_fabric_prices_the_same_cables():
    g = build(SPEC)
    expected = [("co-packaged-optics cable 23 m", FIBRES, CABLES_USD)]
    for graph in (g, adjusted(g, ADJUST), realize(g, "ring"),
                  realize(adjusted(g, ADJUST), "ring"), adjusted(realize(g, "ring"), ADJUST)):
        assert cables(network_bill(graph, share="as-built")) == expected


def test_file_keeps_the_length(tmp_path):
    path = write_graph(build(SPEC), tmp_path / "ocs.json")
    loaded = read_graph(path)
    assert {d["length"] for d in fibre_edges(loaded)} == {LENGTH}
    fibres = ocs_cabling(realize(adjusted(loaded, ADJUST), "ring"))["fibres"]
    assert fibres["length"] == (LENGTH,) * FIBRES


@pytest.mark.parametrize("value", [float("nan"), -1.0, float("inf"), 1e6, "2m"])
def test_edge_length_checked_as_the_builder_checks_it(value):
    g = nx_copy(build(SPEC))
    g.edges["gpu0", "ocs0"]["length"] = value
    with pytest.raises(UserError, match=r"edge 'gpu0'-'ocs0' length must be"):
        validate(g)


def test_whole_number_length_passes():
    g = nx_copy(build(SPEC))
    g.edges["gpu0", "ocs0"]["length"] = 23
    assert validate(g) is g


def nx_copy(graph):
    return graph.copy()   # a built fabric is frozen
