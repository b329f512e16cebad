"""A circuit left when its partner's OCS fails keeps its port's lanes.

realize gives a circuit edge the lanes of the ports its circuits hold (each circuit a
whole port: a fibre's lanes, not the bandwidth's rounded up). drop_circuits recomputed the
lanes left from the bandwidth instead, so where a fabric's fibres carry more lanes than
their bandwidth needs (a fabric file may say 8 lanes for 56.25 GB/s, which needs 5 of
12.5 GB/s) two circuits of 8 lanes, one failed, came back with 5.
"""

from __future__ import annotations

import pytest

from topologies.common import lanes_for
from topologies.optical import drop_circuits, ocs, realize


@pytest.mark.parametrize("lanes", [None, 8])   # None: the builder's (lanes_for the port)
def test_the_circuits_left_keep_their_ports_lanes(lanes):
    g = ocs(gpus=2, ports=3, ocs_ports=2, gpu="Lite")
    if lanes is not None:
        for u in ("gpu0", "gpu1"):
            for o in ("ocs0", "ocs1", "ocs2"):
                g.edges[u, o]["lanes"] = lanes
    port = g.edges["gpu0", "ocs0"]
    per_port = port["lanes"]
    assert per_port == (lanes or lanes_for(port["bandwidth"]))
    out = realize(g, [("gpu0", "gpu1")] * 3)
    assert out.edges["gpu0", "gpu1"]["lanes"] == 3 * per_port
    drop_circuits(out, {"ocs1"})
    d = out.edges["gpu0", "gpu1"]
    assert (d["links"], d["bandwidth"], d["lanes"]) == (2, 2 * port["bandwidth"], 2 * per_port)
    drop_circuits(out, {"ocs0"})
    d = out.edges["gpu0", "gpu1"]
    assert (d.get("links", 1), d["bandwidth"], d["lanes"]) == (1, port["bandwidth"], per_port)
