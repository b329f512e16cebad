"""A degraded realized OCS fabric's ``circuits`` counts the circuits left.

Fabric: 4 GPUs x 2 ports on 2 OCS; circuits gpu0-gpu1 twice (one per OCS) and gpu2-gpu3
once: 3 circuits. By hand: failing the gpu0-gpu1 edge takes its 2 circuits (1 left);
failing GPU gpu2 takes its 1 (2 left); failing the pair's fibre to one OCS takes 1 of
the pair's 2 (2 left); failing both the edge and gpu3 leaves none.
"""

import pytest

from netmodel.collectives.degraded import degrade
from topologies.degrade import degrade as degrade_components
from topologies.failure_domains import Component
from topologies.optical import ocs, realize
from topologies.schema import circuit_count


@pytest.fixture
def fabric():
    return realize(ocs(gpus=4, ports=2, ocs_ports=4), [("gpu0", "gpu1")] * 2 + [("gpu2", "gpu3")])


def test_realize_counts_parallel_circuits(fabric):
    assert fabric.graph["circuits"] == 3 == circuit_count(fabric)


@pytest.mark.parametrize(("links", "nodes", "left"), [
    ([("gpu0", "gpu1")], [], 1),
    ([("gpu1", "gpu0")], [], 1),
    ([], ["gpu2"], 2),
    ([], ["gpu0"], 1),
    ([("gpu0", "gpu1")], ["gpu3"], 0),
    ([("gpu0", "ocs1")], [], 2),
])
def test_degrade_recounts_circuits(fabric, links, nodes, left):
    out = degrade(fabric, links=links, nodes=nodes)
    assert out.graph["circuits"] == left
    assert fabric.graph["circuits"] == 3   # the healthy fabric untouched


def test_failure_domains_degrade_recounts_circuits(fabric):
    edge = Component("transceiver", "gpu0-gpu1", edges=(("gpu0", "gpu1"),))
    assert degrade_components(fabric, [edge]).graph["circuits"] == 1
    gpu = Component("gpu-die", "gpu3", nodes=("gpu3",))
    assert degrade_components(fabric, [gpu]).graph["circuits"] == 2
    assert degrade_components(fabric, [edge, gpu]).graph["circuits"] == 0
