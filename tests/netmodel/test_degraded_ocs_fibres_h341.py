"""A failed GPU-OCS fibre and the circuits left after OCS failures (h341, review of 9e38535).

A realized OCS fabric keeps its circuits as GPU-GPU edges (``via`` the OCS each rides), not
its fibres, so ``collective --fail gpu0/ocs0`` said "failed link 'gpu0' - 'ocs0' is not a
link of the fabric" although the fibre is in the ground (``ocs_cabling``). A fibre carries
one circuit: failing it takes that circuit, as a failed OCS takes every circuit through it.
Each circuit is one GPU port's bandwidth (``topologies.optical``: ``bandwidth / ports``), so
what is left of an edge is held here to the port's bandwidth, not to a fraction of itself;
and the graph's ``circuits`` (stale at the healthy count before) counts those left."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from netmodel.collectives.degraded import degrade
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import ocs, realize

#: A ring of 4 H100s, 2 circuits a pair on 4 OCS planes (greedy planes: gpu0-gpu1 and
#: gpu2-gpu3 on ocs0 and ocs1, gpu1-gpu2 and gpu3-gpu0 on ocs2 and ocs3).
RING = [(f"gpu{i}", f"gpu{(i + 1) % 4}") for i in range(4) for _ in range(2)]
PORT = get_gpu("H100-SXM").scaleup_bandwidth / 4   # one port, one circuit: 112.5 GB/s


@pytest.fixture(scope="module")
def ring():
    g = realize(ocs(gpus=4, ports=4, ocs_ports=4, gpu="H100-SXM"), RING)
    assert g.edges["gpu0", "gpu1"]["via"] == "ocs0,ocs1" == g.edges["gpu2", "gpu3"]["via"]
    assert g.graph["circuits"] == 8
    return g


def test_a_failed_ocs_leaves_one_port_a_circuit(ring):
    out = degrade(ring, nodes=["ocs0"])
    for pair in (("gpu0", "gpu1"), ("gpu2", "gpu3")):
        d = out.edges[pair]
        assert (d["via"], d.get("links", 1), d["bandwidth"]) == ("ocs1", 1, PORT)
    assert out.edges["gpu1", "gpu2"]["bandwidth"] == 2 * PORT
    assert out.graph["circuits"] == 6
    assert degrade(ring, nodes=["ocs0", "ocs1"]).graph["circuits"] == 4


def test_a_failed_fibre_takes_its_one_circuit(ring):
    for pair in (("gpu0", "ocs0"), ("ocs0", "gpu0")):   # either way round
        out = degrade(ring, links=[pair])
        d = out.edges["gpu0", "gpu1"]
        assert (d["via"], d.get("links", 1), d["bandwidth"]) == ("ocs1", 1, PORT)
        assert out.edges["gpu2", "gpu3"] == ring.edges["gpu2", "gpu3"]   # its ocs0 fibres stay
        assert out.graph["circuits"] == 7
    both = degrade(ring, links=[("gpu0", "ocs0"), ("gpu1", "ocs1")])
    assert not both.has_edge("gpu0", "gpu1") and both.graph["circuits"] == 6


def test_a_fibre_is_refused_where_no_circuit_rides_it_or_twice(ring):
    with pytest.raises(UserError, match=r"^failed link 'gpu0' - 'ocs2' carries no circuit of "
                                        r"the fabric \(a realized OCS fabric keeps"):
        degrade(realize(ocs(gpus=4, ports=4, ocs_ports=4), [("gpu0", "gpu1")]),
                links=[("gpu0", "ocs2")])
    with pytest.raises(UserError, match="is given more than once"):
        degrade(ring, links=[("gpu0", "ocs0"), ("ocs0", "gpu0")])


def test_a_failed_fibre_on_the_command_line():
    base = ["collective", "all-reduce", "--scenario", "lite-ocs", "--json"]
    healthy = json.loads(run_cli(base).output)
    r = run_cli([*base, "--fail", "gpu0/ocs0"])
    assert r.exit_code == 0, r.output
    failed = json.loads(r.output)
    # gpu0's neighbour pair keeps one circuit of its two: the bottleneck halves
    assert failed["connected"] and failed["time"] > 1.5 * healthy["time"]
    one_line_error(run_cli([*base[:-1], "--fail", "gpu0/ocs0,ocs0/gpu0"]),
                   "failed link 'ocs0' - 'gpu0' is given more than once")


def test_a_circuit_holds_its_ports_whole_lanes():
    """Lite's 112.5 GB/s over 4 ports: a port (one circuit) is 28.125 GB/s on 3 lanes of
    12.5 GB/s. Two circuits between a pair are 2 x 3 = 6 lanes (the edge's lanes were the
    sum's rounded up, 5: less than its two ports hold), and one left after a failure 3."""
    lite = realize(ocs(gpus=4, ports=4, ocs_ports=4, gpu="Lite"), RING)
    port = get_gpu("Lite").scaleup_bandwidth / 4
    assert port == 28.125e9
    d = lite.edges["gpu0", "gpu1"]
    assert (d["links"], d["bandwidth"], d["lanes"]) == (2, 2 * port, 6)
    for out in (degrade(lite, nodes=["ocs0"]), degrade(lite, links=[("gpu0", "ocs0")])):
        d = out.edges["gpu0", "gpu1"]
        assert (d.get("links", 1), d["bandwidth"], d["lanes"]) == (1, port, 3)
