"""A scenario's ``[adjust]`` applied to a realized OCS fabric scales its fibres' record with
its links (h521).

``scenario_fabric.adjusted`` scales every link's bandwidth by ``bandwidth_scale`` (a
fabric's links as a whole: its GPU-OCS fibres too, where they are edges), so the circuits
of a realized fabric carried twice their fibres' rate while its cabling's record
(``ocs_cabling["fibres"]``, the bill's and the NICs') still said the unscaled one; realized
after the adjustment, the same fabric's record said the scaled one. Now the record's
``bandwidth`` column is scaled with the links; its cables, lanes (adjusted changes no
link's lanes: faster lanes) and lengths (the cables in the ground; latency_scale and
hop_latency change delays, not metres) stay, and the record the fabric it came from
shares is not changed.

Hand-derived: ``ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics`` is 4 GPUs x 2
ports = 8 fibres of one cable each, 18 lanes and 225 GB/s a port (the Lite's 450 GB/s
over 2 ports), 10 m; one circuit gpu0-gpu1 set. With ``bandwidth_scale = 2`` each fibre is
450 GB/s: 8 NIC ports of 450 GB/s (pluggable optics: a NIC a cable), the bill's cabling
8 cables of 450 GB/s and 10 m, 8 x 18 = 144 lanes, 8 transceivers (the GPU end's:
the OCS end is mirrors).
"""

from __future__ import annotations

import pytest

from netmodel.study.network_bill import ocs_cabling_ports
from netmodel.study.scenario_fabric import adjusted
from netmodel.study.scenarios import Adjust
from topologies import build
from topologies.inventory import bill_of_materials
from topologies.nics import nic_ports, ocs_fibre_rows
from topologies.optical import realize

SPEC = "ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics"
PORT = 225e9


@pytest.fixture()
def realized():
    return realize(build(SPEC), [("gpu0", "gpu1")])


def test_bandwidth_scale_scales_the_fibres_record(realized):
    before = realized.graph["ocs_cabling"]
    out = adjusted(realized, Adjust(bandwidth_scale=2.0))
    assert out.edges["gpu0", "gpu1"]["bandwidth"] == 2 * PORT   # the circuit, as before
    assert out.graph["ocs_cabling"]["fibres"]["bandwidth"] == (2 * PORT,) * 8   # was PORT
    assert nic_ports(out) == [(f"gpu{i}", 2 * PORT, 1.0) for i in range(4) for _ in (0, 1)]
    assert ocs_cabling_ports(out) == ("pluggable-optics", 8, 2 * PORT, 10.0)
    bom = bill_of_materials(out)   # a transceiver a fibre, the GPU's (the OCS is mirrors)
    assert (bom.cables, bom.lanes, bom.circuits, bom.pluggable_transceivers) == \
        ({"pluggable-optics": 8}, 144, 1, 8)
    # the fabric it came from keeps its own record, unchanged
    assert realized.graph["ocs_cabling"] is before
    assert before["fibres"]["bandwidth"] == (PORT,) * 8
    assert nic_ports(realized) == [(f"gpu{i}", PORT, 1.0) for i in range(4) for _ in (0, 1)]


def test_adjusting_then_realizing_gives_the_same_record(realized):
    a = Adjust(bandwidth_scale=0.5)
    first = adjusted(realized, a).graph["ocs_cabling"]
    then = realize(adjusted(build(SPEC), a), [("gpu0", "gpu1")]).graph["ocs_cabling"]
    assert first == then and first["fibres"]["bandwidth"] == (PORT / 2,) * 8


def test_latency_leaves_lengths_cables_and_lanes(realized):
    out = adjusted(realized, Adjust(latency_scale=3.0, hop_latency=1e-6, bandwidth_scale=4.0))
    rows = ocs_fibre_rows(out)
    assert [r[2:] for r in rows] == [(1, 4 * PORT, 18, 10.0)] * 8
    assert (out.graph["ocs_cabling"]["cables"], out.graph["ocs_cabling"]["lanes"]) == (8, 144)
    assert ocs_cabling_ports(out) == ("pluggable-optics", 8, 4 * PORT, 10.0)


def test_a_record_without_fibres_is_left_to_its_circuits(realized):
    # a fabric file saved before the record: no rate of its own; the circuits' (scaled)
    # are what it is read back from
    g = realized.copy()
    g.graph["ocs_cabling"] = {k: v for k, v in g.graph["ocs_cabling"].items()
                              if k != "fibres"}
    out = adjusted(g, Adjust(bandwidth_scale=2.0))
    assert "fibres" not in out.graph["ocs_cabling"]
    assert ocs_cabling_ports(out)[:3] == ("pluggable-optics", 8, 2 * PORT)


def test_no_bandwidth_change_shares_the_record(realized):
    out = adjusted(realized, Adjust(latency_scale=2.0))
    assert out.graph["ocs_cabling"] is realized.graph["ocs_cabling"]
