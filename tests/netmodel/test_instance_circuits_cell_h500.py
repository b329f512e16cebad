"""placed_graph.instance_circuits sets an instance's circuits on the members' part of the
cell (circuit_copies.members_cell: every node, the members' fibres only) and then gives
them the whole cell's cabling: the same graph as realize on the whole (perhaps degraded)
cell, each layout of circuits = "best" costed alike, without listing every GPU's fibres
for each layout tried (524,288 at 4,096 ports)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import netmodel.study.circuit_copies as circuit_copies
from netmodel.study.placed_graph import instance_circuits
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric


def _dump(g):
    return (list(g.nodes(data=True)), list(g.edges(data=True)),
            [list(g.adj[n]) for n in g], dict(g.graph))


def _cells(ports):
    """lite-ocs at ``ports``: healthy, a fibre down, an OCS down, a GPU's ports thinned."""
    s = get_scenario("lite-ocs")
    g = build_fabric(replace(s, fabric={**s.fabric, "ports": ports}))
    fibre = g.copy()
    fibre.remove_edge("gpu1", next(iter(fibre.adj["gpu1"])))
    plane = g.copy()
    plane.remove_node("ocs1")
    plane.graph["ocs_cabling"] = {"medium": "co-packaged-optics", "cables": 1, "lanes": 3}
    thin = g.copy()
    for o in list(thin.adj["gpu2"])[:2]:
        thin.edges["gpu2", o]["bandwidth"] /= 2
    return {"healthy": g, "fibre": fibre, "plane": plane, "thin": thin}


@pytest.mark.parametrize("ports", [4, 8, 16])
@pytest.mark.parametrize("circuits", ["best", "ring", "torus"])
def test_the_members_part_sets_what_the_whole_cell_does(ports, circuits, monkeypatch):
    s = replace(get_scenario("lite-ocs"), circuits=circuits,
                fabric={**get_scenario("lite-ocs").fabric, "ports": ports})
    for name, cell in _cells(ports).items():
        for size in (2, 3, 4, 8, 9, 16):
            members = [f"gpu{i}" for i in range(size)]
            got = instance_circuits(s, cell, members)
            with monkeypatch.context() as m:   # the whole cell, as before
                m.setattr(circuit_copies, "members_cell", lambda physical, members: physical)
                want = instance_circuits(s, cell, members)
            assert (got is None) == (want is None), (name, size)
            if want is not None:
                assert _dump(got) == _dump(want), (name, size)


def test_the_whole_cell_is_not_realized(monkeypatch):
    """Each layout tried is set on the members' part (was: the whole cell, each time)."""
    import topologies.optical as optical

    s = get_scenario("lite-ocs")
    g = build_fabric(replace(s, fabric={**s.fabric, "ports": 16})).copy()
    seen, realize = [], optical.realize

    def counting(graph, *a, **k):
        seen.append(graph is g)
        return realize(graph, *a, **k)

    monkeypatch.setattr(optical, "realize", counting)
    assert instance_circuits(s, g, [f"gpu{i}" for i in range(16)]) is not None
    assert len(seen) >= 2 and not any(seen)   # ring and torus, neither on the whole cell
