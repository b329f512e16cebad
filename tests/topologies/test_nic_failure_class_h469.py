"""The failure model's ``nic`` class covers the GPUs the bill prices a NIC for (h469).

``topologies.nics.nic_gpus`` (bd8e28b) prices a NIC for a GPU whose cable of pluggable
optics, fibre or copper reaches a switch of tier >= 1 or an OCS; the failure model's ``nic``
class (``topologies.failure_domains``) had only the switch, so an OCS fabric on pluggable
optics paid for 4 NICs that never failed. A pluggable module at an OCS port sits in a NIC's
cage at the GPU's end as at a switch's, and that NIC fails like any other.
"""

from __future__ import annotations

import pytest

from topologies import build
from topologies.degrade import degrade
from topologies.failure_domains import component_arrays, components
from topologies.nics import nic_gpus


def _failing_nic_gpus(graph) -> set:
    gpus = set()
    for comp in components(graph, classes=["nic"])["nic"]:
        for u, v in (*comp.edges, *(e for e, _ in comp.scaled)):
            gpus.update(n for n in (u, v) if graph.nodes[n]["kind"] == "gpu")
    return gpus


@pytest.mark.parametrize("spec", [
    "ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics",
    "ocs:gpus=4,ports=2,ocs_ports=4,medium=fibre",
    "ocs:gpus=4,ports=2,ocs_ports=4",                       # co-packaged: none either side
    "leaf-spine:leaves=2,radix=4",
    "leaf-spine:leaves=2,radix=4,medium=co-packaged-optics",
    "rail-optimized:domains=2,nics_per_server=4",
    "lite-groups:base=[rail-optimized:domains=2]",          # breakout shares
])
def test_the_gpus_that_fail_by_a_nic_are_those_priced_one(spec):
    g = build(spec)
    assert _failing_nic_gpus(g) == set(nic_gpus(g))


def test_an_ocs_port_on_pluggable_optics_has_a_nic_a_cable():
    # 4 GPUs x 2 ports, each a cable to one of 2 OCS: 8 NIC ports, one part each (the
    # GPU's end of the cable), as its 8 GPU-end transceivers
    g = build("ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics")
    nic = component_arrays(g, classes=["nic"])["nic"]
    assert len(nic) == 8 and nic.weights.tolist() == [1.0] * 8
    comp = components(g, classes=["nic"])["nic"][0]
    (u, v), = comp.edges
    assert {g.nodes[u]["kind"], g.nodes[v]["kind"]} == {"gpu", "ocs"}
    # its failure removes that one cable, nothing else
    out = degrade(g, [comp])
    assert not out.has_edge(u, v) and out.number_of_edges() == g.number_of_edges() - 1
