"""The hierarchical all-reduce's phases overlap only on links they do not share (h234).

Its four phases run as a pipeline whose steady time per byte was the slower of two bounds,
the in-domain phases together and the across phases together: right where a domain has
links of its own (NVLink, a Lite mesh), but a hand-made fabric whose GPUs share a
``server`` label (a domain, ``group_domains.domain_key``) with no scale-up link between them
routes all four phases over the same GPU-leaf links, and the pipeline counted those links
twice: 64 MiB on 4 GPUs (two servers of 2) under two 50 GB/s leaves ran at busbw 118.6 GB/s,
above the 100 GB/s each GPU can inject."""

from __future__ import annotations

import networkx as nx
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import validate


def _two_planes() -> nx.Graph:
    """4 GPUs (servers of 2, no scale-up links), each cabled to two leaves at 50 GB/s."""
    g = nx.Graph(name="two planes", spec="", gpus=4)
    for leaf in range(2):
        g.add_node(f"leaf{leaf}", kind="switch", tier=1, radix=64, latency=330e-9,
                   in_network_reduction=False)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM", server=i // 2)
        for leaf in range(2):
            g.add_edge(f"gpu{i}", f"leaf{leaf}", bandwidth=50e9, latency=1e-7,
                       medium="pluggable-optics", lanes=4)
    return validate(g)


@pytest.mark.parametrize("n", [2**26, 2**30])
def test_phases_on_shared_links_add_up(n):
    model = FabricCostModel(_two_planes(), placement="contiguous")
    r = model.cost("all-reduce", n, 4, algorithm="hierarchical")
    # every GPU sends n/2 to its server's peer in each in-domain phase and n/4 across in
    # each across phase: 1.5 n through its two 50 GB/s links at the network's efficiency
    eff = default_calibration().scaleout_efficiency
    floor = 1.5 * n / (2 * 50e9 * eff)
    assert r.time >= floor
    assert r.busbw <= 2 * 50e9 * eff * (1 + 1e-12)
    if n == 2**30:   # latencies and the pipeline's fill are small beside 17 ms
        assert r.time <= floor * 1.01
