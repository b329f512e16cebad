"""``topologies.analysis.network_bandwidth`` takes a GPU of the graph (h443).

It summed the links of whatever node it was given to switches of tier >= 1 and OCS: a
switch gave its uplinks as if a GPU's NIC (fat-tree:k=4's leaf0: its two 50 GB/s links
to tier-2 switches, 100 GB/s), and a name not in the graph a bare KeyError. Both are now a UserError naming ``gpu``.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build
from topologies.analysis import network_bandwidth


def test_a_switch_is_refused():
    g = build("fat-tree:k=4")
    assert g.nodes["leaf0"]["kind"] == "switch"
    with pytest.raises(UserError, match=r"gpu must be a GPU of graph, got 'leaf0' \(a switch\)"):
        network_bandwidth(g, "leaf0")


def test_a_name_not_in_the_graph_is_refused():
    with pytest.raises(UserError, match=r"gpu must be a GPU of graph, got 'gpu99'$"):
        network_bandwidth(build("ring:n=4"), "gpu99")


def test_a_gpu_still_gives_its_nic():
    # rail-optimized, 2 domains: each GPU's one 400 Gb/s NIC to its rail switch, 50 GB/s
    g = build("rail-optimized:domains=2")
    assert network_bandwidth(g, "gpu0") == pytest.approx(400e9 / 8)
