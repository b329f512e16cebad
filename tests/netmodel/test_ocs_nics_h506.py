"""A realized OCS fabric holds the NIC of every GPU port it cables, a circuit set on the port
now or not, in the bill of materials, the cost model and the failure model alike (h506).

The network bill prices a realized OCS fabric as its cabling (edf0f07: an OCS only steers
light, the transceivers, fibres and NICs are bought with the ports and circuits are re-set
per job on them), and the failure model fails every fibre's NIC (``_circuit_fibres``: a NIC
a fibre, cutting the circuit on it or nothing). ``topologies.nics.nic_gpus`` and
``nic_ports`` still read the NICs from the circuits' ends: one circuit on 8 GPUs x 4
pluggable ports gave the bill of materials 2 NICs beside its 32 transceivers.

Hand-derived: 8 H100 x 4 pluggable ports, port ``p`` of each GPU cabled to ``ocs{p}``: 32
fibres, each one port of 450 / 4 = 112.5 GB/s (900 Gb/s), so 32 NIC ports on 8 GPUs,
whichever circuits are set.
"""

from __future__ import annotations

from collections import Counter

import pytest

from compute.errors import UserError
from netmodel.study.host_bill import nic_charge, scale_out_nics
from topologies import build
from topologies.analysis import summary
from topologies.degrade import degrade
from topologies.failure_domains import components
from topologies.inventory import bill_of_materials
from topologies.nics import nic_gpus, nic_ports, ocs_fibres
from topologies.optical import realize

CABLING = "ocs:gpus=8,ports=4,ocs_ports=8,medium=pluggable-optics"
GPUS = [f"gpu{i}" for i in range(8)]
PORT = 450e9 / 4   # bytes/s: an H100's 450 GB/s over its 4 ports


def _graph(circuits):
    if circuits == "ring":
        return build(CABLING + ",logical=ring")
    return realize(build(CABLING), circuits)


@pytest.mark.parametrize("circuits", ["ring", [("gpu0", "gpu1")],
                                      [("gpu0", "gpu1"), ("gpu2", "gpu3")]])
def test_every_cabled_gpu_holds_its_nic(circuits):
    g = _graph(circuits)
    assert nic_gpus(g) == GPUS
    assert bill_of_materials(g).nics == 8 == scale_out_nics(g)
    assert bill_of_materials(g).pluggable_transceivers == 32
    assert summary(g).table().count("NICs:        8 ") == 1


@pytest.mark.parametrize("circuits", ["ring", [("gpu0", "gpu1")]])
def test_a_nic_port_a_fibre_at_the_port_rate(circuits):
    ports = nic_ports(_graph(circuits))
    assert Counter(gpu for gpu, _, _ in ports) == dict.fromkeys(GPUS, 4)
    assert {(r, c) for _, r, c in ports} == {(PORT, 1.0)}


@pytest.mark.parametrize("circuits", ["ring", [("gpu0", "gpu1")], []])
def test_the_failure_model_fails_the_nics_the_bill_holds(circuits):
    g = _graph(circuits)
    nic = components(g, classes=["nic"])["nic"]
    assert len(nic) == 32 and {c.parts for c in nic} == {1.0}
    assert Counter(gpu for c in nic for gpu, _ in c.fibres) == dict.fromkeys(GPUS, 4)
    fibres, unknown = ocs_fibres(g)
    assert sorted(fibres) == sorted((f"gpu{i}", f"ocs{p}") for i in range(8) for p in range(4))
    assert unknown == 0
    if circuits:
        assert Counter(gpu for gpu, _, _ in nic_ports(g)) == \
            Counter(gpu for c in nic for gpu, _ in c.fibres)


def test_a_nic_with_no_circuit_on_its_port_fails_and_cuts_nothing():
    g = _graph([("gpu0", "gpu1")])
    nic = {c.name: c for c in components(g, classes=["nic"])["nic"]}
    idle = nic["gpu5-ocs2"]
    assert idle.edges == () and idle.scaled == () and idle.parts == 1.0
    assert list(degrade(g, [idle]).edges) == list(g.edges)
    # the circuit's own fibre at gpu0 (on ocs0, the first OCS free at both) takes it
    assert nic["gpu0-ocs0"].edges == (("gpu0", "gpu1"),)


def _old(graph):
    """``graph`` as a fabric file written before ``ocs_cabling`` kept its fibres (h508)."""
    graph.graph["ocs_cabling"] = {k: v for k, v in graph.graph["ocs_cabling"].items()
                                  if k != "fibres"}
    return graph


def test_a_realized_fabric_with_no_circuit_names_its_nics_but_has_no_rate():
    g = _graph([])
    assert nic_gpus(g) == GPUS and bill_of_materials(g).nics == 8
    # its cabling's own fibres (realize records them, h508): 32 ports of 112.5 GB/s
    assert nic_ports(g) == [(f"gpu{i}", PORT, 1.0) for i in range(8) for _ in range(4)]
    with pytest.raises(UserError, match="no circuit set"):   # a file without them
        nic_ports(_old(g))


def test_co_packaged_cabling_has_no_nic():
    g = build("ocs:gpus=8,ports=4,ocs_ports=8,logical=ring")
    assert nic_gpus(g) == [] and nic_ports(g) == [] and bill_of_materials(g).nics == 0
    assert nic_charge(g)[0] == 0


def test_fibres_of_unknown_ends_are_ports_of_no_named_gpu():
    # a fabric file's cabling: gpu0, gpu1 on ocs0, gpu2, gpu3 on ocs1, one port each (4
    # fibres, not 4 GPUs x 2 OCS); one circuit gpu0-gpu1 names two fibres, the other 2 are
    # not known after realize: one NIC entry of 2 ports, as the failure model's one
    # component of 2 parts
    g = build("ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics")
    g.remove_edges_from([("gpu0", "ocs1"), ("gpu1", "ocs1"), ("gpu2", "ocs0"),
                         ("gpu3", "ocs0")])
    r = realize(g, [("gpu0", "gpu1")])
    rate = 450e9 / 2
    # realize records the cabling's fibres (h508): all 4 known, each a NIC port
    assert ocs_fibres(r) == ([("gpu0", "ocs0"), ("gpu1", "ocs0"), ("gpu2", "ocs1"),
                              ("gpu3", "ocs1")], 0)
    assert nic_ports(r) == [(f"gpu{i}", rate, 1.0) for i in range(4)]
    r = _old(r)   # a fabric file written before that record
    assert ocs_fibres(r) == ([("gpu0", "ocs0"), ("gpu1", "ocs0")], 2)
    assert nic_ports(r) == [("gpu0", rate, 1.0), ("gpu1", rate, 1.0), (None, rate, 2.0)]
    nic = components(r, classes=["nic"])["nic"]
    assert [(c.fibres, c.parts) for c in nic] == [
        ((("gpu0", "ocs0"),), 1.0), ((("gpu1", "ocs0"),), 1.0), ((), 2.0)]
    # 4 ports of 1,800 Gb/s, each 1,800 / 800 = 2.25 800G NICs' worth
    assert nic_charge(r)[2] == ((800e9, 9.0),)
    # only the GPUs whose fibres are known are named (the others' are not known)
    assert nic_gpus(r) == ["gpu0", "gpu1"]


def test_a_realized_fabric_of_unequal_ports_is_priced_as_its_cabling():
    # 4 H100 x 2 pluggable ports of 225 GB/s (1,800 Gb/s), gpu0's two at twice the rate on
    # as many lanes: its cabling's optics are (6 x 1,800 + 2 x 3,600) Gb/s x 1.5625 USD
    # = 28,125 USD. Every circuit at gpu0 carries the slower end's 225 GB/s, so the ring
    # read back prices all 8 ports at 1,800 Gb/s: 22,500 USD (edf0f07's review, h506)
    from netmodel.study.network_bill import network_bill

    g = build("ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics")
    for o in ("ocs0", "ocs1"):
        g.edges["gpu0", o]["bandwidth"] *= 2
    optics = network_bill(g, share="as-built").by_category()["optics"]["capex"]
    assert optics == pytest.approx(28_125)
    ring = network_bill(realize(g, "ring"), share="as-built").by_category()["optics"]["capex"]
    assert ring == pytest.approx(28_125)
