"""OCS ports of two media whose circuits each join ports of one medium are set, not refused.

realize refuses a circuit joining a co-packaged port to a pluggable one, so a ring on 4
GPUs whose ocs0 fibres are all co-packaged and ocs1 fibres all pluggable is set: a ring of 4
is 2-edge-coloured, each circuit on one plane, its two ends one medium. The study's
re-set after a failure (instance_circuits) and instance_graph checked the members' ports
for one medium before trying the counts and refused this cell, which realize sets.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from compute.errors import UserError
from topologies.optical import ocs, ports_optics, realize

MEMBERS = ["gpu0", "gpu1", "gpu2", "gpu3"]


@pytest.fixture
def planes():
    """4 GPUs x 2 ports: ocs0 co-packaged for every GPU, ocs1 pluggable for every GPU."""
    g = ocs(gpus=4, ports=2, ocs_ports=4)
    for gpu in MEMBERS:
        g.edges[gpu, "ocs1"]["medium"] = "pluggable-optics"
    return g


def _optics(g):
    return sorted(d["optics"] for *_, d in g.edges(data=True) if d.get("medium") == "ocs-circuit")


def test_realize_sets_a_plane_of_each_medium(planes):
    # 4 circuits, 2 a plane: each circuit's ends on one plane, so one medium
    assert _optics(realize(planes, "ring")) == ["co-packaged-optics"] * 2 + ["pluggable-optics"] * 2
    with pytest.raises(UserError, match="two media"):   # the members' ports: two media
        ports_optics(planes, MEMBERS)


def test_the_study_sets_what_realize_sets(planes):
    from netmodel.study.placed_graph import instance_circuits
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_fabric import instance_graph

    s = get_scenario("lite-ocs")
    s = replace(s, fabric={**s.fabric, "ports": 2})
    cell = instance_circuits(s, planes, MEMBERS)
    assert cell is not None and _optics(cell) == _optics(realize(planes, "ring"))
    whole = instance_graph(s, planes, 4)
    assert _optics(whole) == ["co-packaged-optics"] * 2 + ["pluggable-optics"] * 2
