"""A cable's length read back from its latency is its as-built one on an adjusted fabric.

The switched, hierarchical and direct builders put no ``length`` on their edges: the network
bill reads a cable's length back from its latency (5 ns/m, less the co-packaged engines').
``scenario_fabric.adjusted`` scales every link's latency and adds a hop to it, so the read
length grew with them. ``adjusted`` now records what it did to the latencies on the graph
(``latency_scale``, ``hop_latency``; composed when adjusted again), and the read-back
(``topologies.common.cable_length``) undoes it.

Hand-derived, ``leaf-spine`` (4 leaves x 4 H100, 4 spines, pluggable optics): 16 GPU-leaf
cables of 20 m (100 ns) and 16 leaf-spine cables of 50 m (250 ns), at 50 USD a cable + 1
USD/m (network_costs.toml's fibre_cable_price, fibre_price_per_m): 16 x 70 + 16 x 100 =
2,720 USD. Read back from the adjusted latencies before: latency_scale 2 gave 40 m and
100 m, 16 x 90 + 16 x 150 = 3,840 USD; hop_latency 100 ns gave 40 m and 70 m, 16 x 90 +
16 x 120 = 3,360 USD.
"""

from __future__ import annotations

import math

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.network_bill import _legacy_length, network_bill
from netmodel.study.scenario_fabric import adjusted
from netmodel.study.scenarios import Adjust
from topologies import build
from topologies.common import cable_latency, cable_length, latency_adjustment
from topologies.edge_arrays import edges_of
from topologies.io import read_graph, write_graph
from topologies.optical import ocs_cabling, realize
from topologies.schema import validate

LEAF_SPINE = [("pluggable-optics cable 20 m", 16.0, 16 * (50 + 20)),
              ("pluggable-optics cable 50 m", 16.0, 16 * (50 + 50))]   # 1,120 + 1,600


def cables(graph):
    return sorted((i.what, i.count, round(i.capex, 6))
                  for i in network_bill(graph, share="as-built").items if i.category == "cable")


@pytest.mark.parametrize("adjust", [Adjust(), Adjust(latency_scale=2.0),
                                    Adjust(hop_latency=100e-9),
                                    Adjust(latency_scale=2.0, hop_latency=100e-9),
                                    Adjust(latency_scale=0.5, bandwidth_scale=3.0)])
def test_leaf_spine_bill_keeps_its_cables(adjust):
    g = build("leaf-spine")
    assert {round(d["latency"] * 1e9, 6) for *_, d in g.edges(data=True)} == {100.0, 250.0}
    a = adjusted(g, adjust)
    lat = {round(d["latency"] * 1e9, 6) for *_, d in a.edges(data=True)}
    assert lat == {100 * adjust.latency_scale + adjust.hop_latency * 1e9,
                   250 * adjust.latency_scale + adjust.hop_latency * 1e9}
    assert cables(a) == LEAF_SPINE   # 2,720 USD; 3,840 (x2) and 3,360 (+100 ns) before
    assert sum(c for *_, c in cables(a)) == 2720


def test_adjusting_twice_composes():
    g = build("leaf-spine")
    twice = adjusted(adjusted(g, Adjust(latency_scale=2.0, hop_latency=100e-9)),
                     Adjust(latency_scale=3.0, hop_latency=50e-9))
    # (l 2 + 100 ns) 3 + 50 ns = l 6 + 350 ns: 20 m (100 ns) -> 950 ns
    assert latency_adjustment(twice.graph) == pytest.approx((6.0, 350e-9), rel=1e-12)
    assert twice.edges["gpu0", "leaf0"]["latency"] == pytest.approx(950e-9, rel=1e-12)
    assert cables(twice) == LEAF_SPINE
    back = adjusted(adjusted(g, Adjust(latency_scale=2.0)), Adjust(latency_scale=0.5))
    assert latency_adjustment(back.graph) == (1.0, 0.0)
    assert cables(back) == LEAF_SPINE
    # the built fabric itself keeps no record (adjusted copies it)
    assert "latency_scale" not in g.graph and "hop_latency" not in g.graph


def test_scale_zero_drops_the_record():
    # an ideal fabric (latency_scale 0): every latency is the hop, no length is left in it
    g = build("leaf-spine")
    for a in (adjusted(g, Adjust(latency_scale=0.0)),
              adjusted(adjusted(g, Adjust(latency_scale=2.0)), Adjust(latency_scale=0.0))):
        assert "latency_scale" not in a.graph and "hop_latency" not in a.graph
        validate(a)
        assert {d["latency"] for *_, d in a.edges(data=True)} == {0.0}


def test_bandwidth_alone_records_nothing():
    a = adjusted(build("leaf-spine"), Adjust(bandwidth_scale=2.0))
    assert "latency_scale" not in a.graph and "hop_latency" not in a.graph


@pytest.mark.parametrize("spec", ["flat", "fat-tree:k=4", "ring", "full-mesh", "torus",
                                  "lite-groups", "rail-optimized", "superpod"])
@settings(max_examples=15, deadline=None)
@given(scale=st.floats(1e-3, 1e3), hop=st.floats(0.0, 1e-5))
def test_every_builders_cables_as_built(spec, scale, hop):
    g = build(spec)
    a = adjusted(g, Adjust(latency_scale=scale, hop_latency=hop))
    before, after = cables(g), cables(a)
    assert before   # each has cables
    assert [(w, n) for w, n, _ in after] == [(w, n) for w, n, _ in before]
    assert [c for *_, c in after] == pytest.approx([c for *_, c in before], rel=1e-9)


def test_cable_length_inverts_cable_latency():
    assert float(cable_length(cable_latency(50, "pluggable-optics"))) == pytest.approx(50.0)
    # a co-packaged cable crosses 2 engines: 9 m = 45 + 10 ns; adjusted x2 + 100 ns: 210 ns
    assert float(cable_length(210e-9, 2, (2.0, 100e-9))) == pytest.approx(9.0)
    assert float(cable_length(55e-9, 1)) == pytest.approx(10.0)   # a fibre to an OCS
    assert float(cable_length(1e-9, 2)) == 0.0   # under the engines' delay: 0 m


@pytest.mark.parametrize("suffix", ["json", "graphml"])
def test_file_keeps_the_record(tmp_path, suffix):
    a = adjusted(build("leaf-spine"), Adjust(latency_scale=2.0, hop_latency=100e-9))
    loaded = read_graph(write_graph(a, tmp_path / f"f.{suffix}"))
    assert latency_adjustment(loaded.graph) == latency_adjustment(a.graph) == (2.0, 100e-9)
    assert cables(loaded) == LEAF_SPINE


@pytest.mark.parametrize(("key", "value"), [
    ("latency_scale", 0.0), ("latency_scale", -2.0), ("latency_scale", math.nan),
    ("latency_scale", math.inf), ("latency_scale", True), ("latency_scale", "2"),
    ("hop_latency", -1e-9), ("hop_latency", math.nan), ("hop_latency", math.inf),
    ("hop_latency", False)])
def test_record_checked(key, value):
    g = nx.Graph(build("leaf-spine"))
    g.graph[key] = value
    with pytest.raises(UserError, match=rf"graph attribute '{key}' must be "):
        validate(g)


def test_record_from_a_file_checked(tmp_path):
    a = adjusted(build("leaf-spine"), Adjust(latency_scale=2.0))
    path = write_graph(a, tmp_path / "f.json")
    text = open(path).read()
    assert '"latency_scale": 2.0' in text
    bad = tmp_path / "bad.json"
    bad.write_text(text.replace('"latency_scale": 2.0', '"latency_scale": -2.0'))
    with pytest.raises(UserError, match=r"bad\.json: invalid fabric graph: graph attribute "
                                        r"'latency_scale' must be finite and > 0 .*got -2\.0"):
        read_graph(bad)


def test_unrealized_ocs_fibres_without_length():
    # a fabric file written before its fibres carried their length: 8 fibres of 10 m
    # (55 ns, one co-packaged engine); adjusted x2 + 100 ns: 210 ns, read 41 m before
    g = nx.Graph(build("ocs:gpus=4,ports=2,ocs_ports=4"))
    for *_, d in g.edges(data=True):
        d.pop("length", None)
    a = adjusted(g, Adjust(latency_scale=2.0, hop_latency=100e-9))
    assert ocs_cabling(a)["fibres"]["length"] == (10.0,) * 8
    assert ocs_cabling(realize(a, "ring"))["fibres"]["length"] == (10.0,) * 8


def test_legacy_realized_ocs_read_from_circuits():
    # a realized file with no fibre record and no builder's args: each fibre's length is
    # half a circuit's latency less its OCS's: circuit 2 x 55 ns = 110 ns, 10 m a fibre;
    # adjusted x2 + 100 ns: 320 ns, half 160 ns, read (160 - 5) / 5 = 31 m before
    r = realize(build("ocs:gpus=4,ports=2,ocs_ports=4"), "ring")
    r.graph["ocs_cabling"] = {k: v for k, v in r.graph["ocs_cabling"].items() if k != "fibres"}
    r.graph.pop("builder", None)
    r.graph.pop("args", None)
    a = adjusted(r, Adjust(latency_scale=2.0, hop_latency=100e-9))
    assert {round(d["latency"] * 1e9, 6) for *_, d in a.edges(data=True)} == {320.0}
    for graph in (r, a):
        length, _ = _legacy_length(graph, edges_of(graph), "co-packaged-optics")
        assert length == pytest.approx(10.0)


def test_sweep_over_latency_scale_keeps_the_network_capex():
    out = CliRunner().invoke(cli, ["sweep", "--scenarios", "h100-dgx", "--param",
                                   "adjust.latency_scale=1,2,4", "--models", "Llama-3-8B",
                                   "--json"])
    assert out.exit_code == 0, out.output
    import json

    rows = json.loads(out.output)["rows"]
    assert [r["x"] for r in rows] == [1.0, 2.0, 4.0]
    shares = {r["network_share_capex"] for r in rows}
    assert len(shares) == 1 and 0 < shares.pop() < 1
