"""A NIC down lowers NCCL's channels, and with them its per-channel tree caps (h280).

NCCL does not route around a NIC that fails: the communicator fails and the job makes a new
one, whose init skips a port that is not active (NVIDIA/nccl src/transport/net_ib/init.cc),
finds a channel per NIC that is up and takes the fewest channels any rank found
(src/init.cc); see netmodel.collectives.algo_ring.nic_channels. The model had kept the
healthy channel count (one a rail), so under a binding tree cap (channels x
perChMaxTreeBws) a failed NIC showed no slowdown (1.01x).

Hand-derived on 2 domains x 8 H100 (rail-optimized: GPU i of every server on leaf i), 1 GiB:
Hopper's perChMaxTreeBws on 2 nodes is 41.4 GB/s and perChMaxNVLSTreeBws 57.7 GB/s
(netmodel/data/collective_generations.toml), NVLink 450 GB/s x 0.824 and NICs 50 GB/s x
0.94 move payload (collective_generations.toml, collective_defaults.toml).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives.algo_ring import nic_channels
from netmodel.collectives.algorithms import generate
from netmodel.collectives.degraded import degrade, degraded_cost
from netmodel.collectives.group_domains import rail_table
from netmodel.collectives.model import FabricCostModel
from topologies import rail_optimized

AR = "all-reduce"
N = 2.0 ** 30
TREE_2N = 41.4e9       # perChMaxTreeBws, Hopper, 2 nodes
NVLS_TREE_2N = 57.7e9  # perChMaxNVLSTreeBws, Hopper, 2 nodes
NVLINK = 450e9 * 0.824


@pytest.fixture(scope="module")
def fabric():
    return rail_optimized(domains=2)


@pytest.mark.parametrize(("links", "nodes", "k"), [
    ([("gpu0", "leaf0")], [], 7),                   # node 0's NIC 0
    ([("gpu9", "leaf1")], [], 7),                   # node 1's NIC 1
    ([], ["leaf0"], 7),                             # rail 0's leaf: NIC 0 of both nodes
    ([("gpu0", "leaf0"), ("gpu1", "leaf1")], [], 6),   # two NICs of node 0
    # two nodes, a NIC each on different rails: NCCL's fewest per node, 7, though only 6
    # rails have every NIC up (the trees run on those 6 and on a 7th channel that crosses
    # rails, node 0's GPU 3 and node 1's GPU 0: algo_ring.nic_lanes, h286)
    ([("gpu0", "leaf0"), ("gpu11", "leaf3")], [], 7),
])
def test_tree_cap_takes_the_nics_that_are_up(fabric, links, nodes, k):
    r = degraded_cost(fabric, AR, N, 16, links=links, nodes=nodes, algorithm="tree")
    for res, ch in ((r.healthy, 8), (r.degraded, k)):
        assert res.tree_cap.channels == ch
        # reduce and broadcast at once, one step at the cap: 2 n / (channels x 41.4 GB/s)
        assert len(res.steps) == 1
        assert res.steps[0].serialization == pytest.approx(2 * N / (ch * TREE_2N), rel=1e-12)
    # 8 -> 7 channels: 6.484 -> 7.410 ms at the cap
    assert r.slowdown > 1.0 and r.slowdown < 8 / k
    # the large-message line, algbw = channels x rate / 2, on the degraded fabric
    m = FabricCostModel(degrade(fabric, links=links, nodes=nodes), algorithms="nccl")
    group = m.group(16)
    lines = [(a, b) for _, p, a, b, _ in m.candidates(AR, group, "tree") if p == "Simple"]
    assert lines[-1][1] == pytest.approx(2 / (k * TREE_2N), rel=1e-12)


def test_one_nic_down_links_alone(fabric):
    # with rail 0's NIC down on a node, the 7 trees run on rails 1-7, each on 1/7: every
    # domain's chain edge 0 -> 1 is in all 7 (rail 0's tree, which skipped it, is gone),
    # so it carries all of n, the edges j -> j + 1 of the other lanes 6/7 of it. Reduce
    # (along the edges) and broadcast (against them) run at once, so GPU j sends its edge
    # j -> j + 1's share and edge j - 1 -> j's: GPU 0 (edge 7 -> 0, 6/7, and 0 -> 1, 1) and
    # GPU 1 (1 -> 2, 6/7, and 0 -> 1 back, 1) 13/7 n over NVLink: links alone
    # 13 n / (7 x 370.8 GB/s), the cap's 2 n / (7 x 41.4 GB/s) 2 x 370.8 / (13 x 41.4) =
    # 1.3779x that
    r = degraded_cost(fabric, AR, N, 16, links=[("gpu0", "leaf0")], algorithm="tree")
    assert r.degraded.tree_cap.slowdown == pytest.approx(2 * NVLINK / (13 * TREE_2N),
                                                         rel=1e-12)
    # each way: 2 x 8 chain edges (every edge j -> j + 1 of each domain is in some tree)
    # and a double tree of 2 nodes on each of the 7 lanes (2 x 7): 30, both ways 60
    assert [s.transfers for s in r.degraded.steps] == [60]


def test_nvls_tree_heads_follow_the_nics(fabric):
    # NVLSTree's channels are its heads, a GPU with a NIC each: 7 with one NIC down; each
    # tree phase at the cap, (p - 1)/p of n over channels x 57.7 GB/s
    r = degraded_cost(fabric, AR, N, 16, links=[("gpu0", "leaf0")],
                      algorithm="in-network-tree")
    for res, ch in ((r.healthy, 8), (r.degraded, 7)):
        assert res.tree_cap.channels == ch
        across = [s for s in res.steps if "across" in s.name]
        assert len(across) == 2
        for s in across:
            assert s.serialization == pytest.approx(N * 15 / 16 / (ch * NVLS_TREE_2N),
                                                    rel=1e-12)
            assert s.transfers == 2 * ch     # a double tree of 2 nodes per head
    assert r.slowdown > 1.0


def test_ring_shares_the_nics_that_are_up(fabric):
    # the ring already re-plans (algo_ring.nic_lanes): 7 rings, each on 1/7, so each
    # step a NIC carries n / (7 x 16), at 50 GB/s x 0.94 (a guard: this passed before)
    r = degraded_cost(fabric, AR, N, 16, links=[("gpu0", "leaf0")], algorithm="ring")
    for s in r.degraded.steps:
        assert s.serialization == pytest.approx(N / (7 * 16) / (50e9 * 0.94), rel=1e-12)
    assert r.healthy.tree_cap is None and r.degraded.tree_cap is None


def test_nic_channels_none_when_healthy_or_no_nic(fabric):
    group = tuple(f"gpu{i}" for i in range(16))
    table = rail_table(fabric, group)
    assert nic_channels(fabric, group, table) is None          # every NIC up: m, as before
    # a domain without a NIC left: no channel count (the group is cut apart)
    dead = degrade(fabric, links=[(f"gpu{i}", f"leaf{i}") for i in range(8)])
    assert nic_channels(dead, group, table) is None
    assert nic_channels(degrade(fabric, links=[("gpu3", "leaf3")]), group, table) == 7


@settings(max_examples=25, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 2), st.integers(0, 7)), min_size=1, max_size=6))
def test_tree_channels_are_the_fewest_nics_up(down):
    # 3 domains x 8: NCCL's channels are the fewest NICs up at any domain; the healthy
    # fabric keeps its 8
    g = rail_optimized(domains=3)
    group = tuple(f"gpu{i}" for i in range(24))
    links = [(f"gpu{8 * d + c}", f"leaf{c}") for d, c in sorted(down)]
    per_domain = [8 - sum(1 for d, _ in down if d == x) for x in range(3)]
    steps = generate("tree", AR, group, degrade(g, links=links))
    assert {s.tree_channels for s in steps} == {min(per_domain)}
    assert {s.tree_channels for s in generate("tree", AR, group, g)} == {8}
    # the trees carry every byte: k = min(per_domain) channels (h286: the rails up
    # everywhere and, past them, channels crossing rails), each a double tree over 3
    # leaders, 2 edges in each of its 2 trees, each tree on 1/(2k), every edge used both
    # ways at once (reduce up, broadcast down): 8 k edges, 8 k / (2 k) = 4
    k = min(per_domain)
    if k < 8:
        across = steps[0].transfers
        edges = [(a, b, f) for a, b, f in across if int(a[3:]) // 8 != int(b[3:]) // 8]
        assert len(edges) == 8 * k
        assert sum(f for *_, f in edges) == pytest.approx(4.0)
