"""A failed OCS takes the circuits through it (topologies.degrade.degrade).

Fabric: 4 GPUs x 2 ports on 2 OCS (ocs0, ocs1). Circuits: gpu0-gpu1 twice and gpu2-gpu3
once, 3 in all. The pair's two circuits leave the same two GPUs, so they ride different
OCS (a port of each GPU a plane): each OCS carries exactly one of them. gpu2-gpu3 rides
one OCS. So failing one OCS leaves gpu0-gpu1 with 1 circuit at half its bandwidth and
takes gpu2-gpu3 or leaves it: 1 + 2 = 3 circuits left between the two failures (each
circuit lost once), and failing both leaves none. Before, the OCS node went and its
circuits stayed (3 left, and a ``via`` naming an OCS no longer there: not a valid graph).
"""

from __future__ import annotations

import pytest

from topologies.degrade import degrade
from topologies.failure_domains import components
from topologies.optical import ocs, realize
from topologies.schema import circuit_via, validate


@pytest.fixture
def fabric():
    return realize(ocs(gpus=4, ports=2, ocs_ports=4),
                   [("gpu0", "gpu1")] * 2 + [("gpu2", "gpu3")])


def _ocs(graph, name):
    return next(c for c in components(graph)["ocs"] if c.nodes == (name,))


def test_one_ocs_failed(fabric):
    pair = fabric.edges["gpu0", "gpu1"]["bandwidth"]
    lone = circuit_via("gpu2", "gpu3", fabric.edges["gpu2", "gpu3"])
    left = []
    for name, other in (("ocs0", "ocs1"), ("ocs1", "ocs0")):
        out = degrade(fabric, [_ocs(fabric, name)])
        validate(out, check_connected=False)   # no circuit names the failed OCS
        d = out.edges["gpu0", "gpu1"]
        assert (d.get("links", 1), d["via"], d["bandwidth"]) == (1, other, pair / 2)
        assert out.has_edge("gpu2", "gpu3") == (lone == (other,))
        left.append(out.graph["circuits"])
    assert sorted(left) == [1, 2] and sum(left) == 3
    assert fabric.graph["circuits"] == 3   # the healthy fabric untouched


def test_both_ocs_failed(fabric):
    out = degrade(fabric, [_ocs(fabric, "ocs0"), _ocs(fabric, "ocs1")])
    assert (out.graph["circuits"], out.number_of_edges(), out.graph["gpus"]) == (0, 0, 4)
