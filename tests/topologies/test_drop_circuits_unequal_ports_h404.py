"""A circuit left when another of its pair's fails keeps its own port's bandwidth.

realize gives a pair's parallel circuits one edge, each circuit at the slower of its two
ports. drop_circuits kept an equal share of the edge's bandwidth and lanes for each circuit
left, right where every port is the same (the ocs builder's) but not where a GPU's ports
differ (a fabric file may give each fibre its own): a Lite's ports at 37.5, 9.375 and
18.75 GB/s to a Lite of 37.5 GB/s ports, the 37.5 GB/s circuit failed, left 2/3 x 65.625
= 43.75 GB/s where 9.375 + 18.75 = 28.125 GB/s are left (and 2/3 of the lanes).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies.common import lanes_for
from topologies.optical import drop_circuits, ocs, realize


@pytest.fixture
def uneven():
    """2 GPUs x 3 ports; gpu0's port on ocs1 a quarter of the others', on ocs2 a half."""
    g = ocs(gpus=2, ports=3, ocs_ports=2, gpu="Lite")
    for o, share in (("ocs1", 4), ("ocs2", 2)):
        d = g.edges["gpu0", o]
        d["bandwidth"] /= share
        d["lanes"] = lanes_for(d["bandwidth"])
    return g


def _port(g, o):
    return g.edges["gpu0", o]["bandwidth"], g.edges["gpu0", o]["lanes"]


def test_the_circuits_left_keep_their_own_ports(uneven):
    (b0, l0), (b1, l1), (b2, l2) = (_port(uneven, o) for o in ("ocs0", "ocs1", "ocs2"))
    assert (b1, b2) == (b0 / 4, b0 / 2) and l1 < l2 < l0
    out = realize(uneven, [("gpu0", "gpu1")] * 3)
    d = out.edges["gpu0", "gpu1"]
    assert (d["bandwidth"], d["lanes"]) == (b0 + b1 + b2, l0 + l1 + l2)
    drop_circuits(out, {"ocs0"})
    d = out.edges["gpu0", "gpu1"]
    assert (d["links"], d["bandwidth"], d["lanes"]) == (2, b1 + b2, l1 + l2)   # was 2/3 each
    drop_circuits(out, set(), {("gpu1", "ocs2")})
    d = out.edges["gpu0", "gpu1"]
    assert (d.get("links", 1), d["via"], d["bandwidth"], d["lanes"]) == (1, "ocs1", b1, l1)


def test_a_fibre_at_either_end_takes_its_circuit(uneven):
    (b0, l0), (b1, l1), _ = (_port(uneven, o) for o in ("ocs0", "ocs1", "ocs2"))
    out = realize(uneven, [("gpu1", "gpu0")] * 3)   # named the other way round
    drop_circuits(out, set(), {("gpu0", "ocs2")})
    d = out.edges["gpu0", "gpu1"]
    assert (d["links"], d["bandwidth"], d["lanes"]) == (2, b0 + b1, l0 + l1)


def test_equal_circuits_write_nothing_more():
    """Every circuit alike (the builder's ports, or one GPU slower on all its ports):
    no per-circuit figures, equal shares as before."""
    g = ocs(gpus=2, ports=2, ocs_ports=2, gpu="Lite")
    for o in ("ocs0", "ocs1"):
        g.edges["gpu1", o]["bandwidth"] /= 4
    out = realize(g, [("gpu0", "gpu1")] * 2)
    d = out.edges["gpu0", "gpu1"]
    assert "via_bandwidth" not in d and "via_lanes" not in d
    drop_circuits(out, {"ocs1"})
    assert out.edges["gpu0", "gpu1"]["bandwidth"] == g.edges["gpu1", "ocs0"]["bandwidth"]


@pytest.mark.parametrize("rates", ["1e9", "1e9,x", "1e9,-1", "1e9,inf"])
def test_per_circuit_figures_that_do_not_fit_are_refused(uneven, rates):
    out = realize(uneven, [("gpu0", "gpu1")] * 2)
    out.edges["gpu0", "gpu1"]["via_bandwidth"] = rates
    with pytest.raises(UserError, match="via_bandwidth .* must give each of its 2 circuits"):
        drop_circuits(out, {"ocs0"})
