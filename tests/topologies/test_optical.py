"""Optical circuit switching: cabling, circuits as GPU-GPU edges, port limits."""

from __future__ import annotations

from collections import Counter

import pytest

from compute.errors import UserError
from topologies import ocs, realize


def _ports_in_use(g):
    """(gpu, ocs) -> circuits using that GPU's port on that OCS."""
    use = Counter()
    for u, v, d in g.edges(data=True):
        for o in d["via"].split(","):
            use[u, o] += 1
            use[v, o] += 1
    return use


def test_cabling_one_port_per_ocs_plane():
    g = ocs(gpus=8, ports=4, bandwidth=400e9)
    assert sorted(n for n in g if n.startswith("ocs")) == ["ocs0", "ocs1", "ocs2", "ocs3"]
    assert all(g.degree(f"gpu{i}") == 4 for i in range(8))
    assert all(g.degree(f"ocs{q}") == 8 for q in range(4))
    assert g.edges["gpu3", "ocs2"]["bandwidth"] == 100e9
    assert g.nodes["ocs0"]["ports"] == 136  # Palomar


def test_ring_circuits_carry_one_port_and_fibre_latency():
    g = realize(ocs(gpus=6, ports=2, bandwidth=200e9, length=10, medium="pluggable-optics"),
                "ring")
    assert sorted(g.neighbors("gpu0")) == ["gpu1", "gpu5"]
    e = g.edges["gpu0", "gpu1"]
    assert e["medium"] == "ocs-circuit" and e["bandwidth"] == 100e9
    assert e["latency"] == pytest.approx(2 * 10 * 5e-9)  # 10 m of fibre each side, 0 s OCS
    assert g.graph["circuits"] == 6 and g.graph["reconfiguration_time"] == 0.01
    assert max(_ports_in_use(g).values()) == 1  # no GPU port carries two circuits
    assert not any(g.nodes[n]["kind"] == "ocs" and g.degree(n) for n in g)


def test_odd_ring_needs_a_third_plane():
    # a ring of 5 cannot be 2-coloured: with a port per OCS plane it needs 3 planes
    with pytest.raises(UserError, match="no OCS has a free port of both GPUs"):
        realize(ocs(gpus=5, ports=2), "ring")
    g = realize(ocs(gpus=5, ports=3), "ring")
    assert g.number_of_edges() == 5 and max(_ports_in_use(g).values()) == 1


@pytest.mark.parametrize("gpus, ports, logical, edges", [
    (16, 4, "torus:4x4", 32),
    (8, 7, "full-mesh", 28),
    (8, 4, "torus:2x4", 12),  # the side of 2 doubles up: 8 + 4 distinct pairs, 16 circuits
    (64, 6, "torus:4x4x4", 192),
    (27, 7, "torus:3x3x3", 81),   # odd and 6-regular: needs a 7th plane (see below)
    (32, 31, "full-mesh", 496),
])
def test_logical_topologies_use_each_port_once(gpus, ports, logical, edges):
    g = realize(ocs(gpus=gpus, ports=ports), logical)
    assert g.number_of_edges() == edges
    assert max(_ports_in_use(g).values()) == 1
    assert g.graph["circuits"] == sum(d.get("links", 1) for *_, d in g.edges(data=True))


def test_odd_regular_logical_topology_needs_one_more_plane():
    # a regular graph on an odd number of GPUs has no perfect matching, so its circuits
    # cannot be split into degree-many OCS planes (each plane is a matching)
    with pytest.raises(UserError, match="no OCS has a free port of both GPUs"):
        realize(ocs(gpus=27, ports=6), "torus:3x3x3")


def test_parallel_circuits_merge():
    g = realize(ocs(gpus=2, ports=4, bandwidth=400e9), "0-1;0-1;1-0")
    e = g.edges["gpu0", "gpu1"]
    assert e["links"] == 3 and e["bandwidth"] == 300e9 and len(e["via"].split(",")) == 3


def test_more_circuits_than_ports_refused():
    with pytest.raises(UserError, match="needs 4 circuits at GPU 'gpu0' but it has 3 optical"):
        realize(ocs(gpus=5, ports=3), "full-mesh")
    with pytest.raises(UserError, match="gpus 200 exceeds ocs_ports 136"):
        ocs(gpus=200)


def test_explicit_circuits_subset_and_errors():
    g = realize(ocs(gpus=8, ports=2), [("gpu0", "gpu4"), (4, 5)], gpus=None)
    assert g.has_edge("gpu0", "gpu4") and g.has_edge("gpu4", "gpu5")
    sub = realize(ocs(gpus=8, ports=2), "ring", gpus=["gpu0", "gpu2", "gpu4", "gpu6"])
    assert sub.has_edge("gpu6", "gpu0") and sub.degree("gpu1") == 0
    with pytest.raises(UserError, match="joins a GPU to itself"):
        realize(ocs(gpus=4), "1-1")
    with pytest.raises(UserError, match="not a GPU index in 0..3"):
        realize(ocs(gpus=4), "0-9")
    with pytest.raises(UserError, match="has 16 positions but there are 8"):
        realize(ocs(gpus=8), "torus:4x4")


def test_logical_spec_round_trip():
    g = ocs(gpus=16, ports=4, logical="torus:4x4")
    assert g.graph["spec"] == "ocs:logical=torus:4x4"
    assert g.graph["logical"] == "torus:4x4"
