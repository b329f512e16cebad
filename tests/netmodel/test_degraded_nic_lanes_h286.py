"""NICs lost on different rails keep NCCL's channels: the fewest NICs up at any domain (h286).

NCCL started again on a degraded fabric lays a channel on each NIC that is up and keeps the
fewest channels any node found (netmodel.collectives.algo_ring.nic_channels, where the
sources are). The model laid the rings, trees and NVLSTree heads only on the rails whose
NICs were up at every domain: with NICs lost on different rails that left fewer channels
than NCCL's (one where NCCL has four), and when no rail was left whole every dead rail's
channel went back to its borrowed NIC, so losing one more NIC sped the collective up (2 x 8
H100, 1 GiB tree all-reduce: 24.18 ms with rail 7 the only whole rail, 15.15 ms with it
gone too). Now the channels are the rails up everywhere first, then each domain's other
GPUs with a NIC up (algo_ring.nic_lanes): crossing rails through the spines.

Monotone in the NICs lost where bandwidth counts (1 GiB below): the steady rate; the tree's
pipeline fill, bound by its links, may shrink where the lanes lie more evenly (reduce and
broadcast run at once, so a GPU's NVLink carries the shares of the chain edges on both its
sides), within the bound worked out below. Where latency counts it is
not quite: k + 1 channels, one crossing rails, pay that channel's spine hops, which k
rail-aligned ones do not (3 x 8 B200, 1 MiB in-network-tree, node 0's NICs 1, 2, 6 and node
2's 0, 2, 6 down: 5 heads, 69.40 us; node 2's NIC 1 too: 4 heads, 69.31 us, -0.13%), as
NCCL's own channels would.

Hand-derived on 2 domains x 8 H100 (rail-optimized, GPU i of every server on leaf i), 1 GiB,
node 0's NICs 0-3 and node 1's NICs 4-6 down: 4 NICs up on node 0, 5 on node 1, so 4
channels. Hopper's perChMaxTreeBws on 2 nodes 41.4 GB/s and perChMaxNVLSTreeBws 57.7 GB/s
(collective_generations.toml); a NIC 50 GB/s x 0.94 of payload (collective_defaults.toml).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from netmodel.collectives.algo_ring import nic_lanes
from netmodel.collectives.degraded import degrade, degraded_cost
from netmodel.collectives.group_domains import rail_table
from topologies import rail_optimized

AR = "all-reduce"
N = 2.0 ** 30
TREE_2N = 41.4e9
NVLS_TREE_2N = 57.7e9
NIC = 50e9 * 0.94
NVLINK = 450e9 * 0.824   # H100's NVLink4 x its efficiency (collective_defaults.toml)
SPLIT = [(0, c) for c in range(4)] + [(1, c) for c in range(4, 7)]


def _links(down):
    return [(f"gpu{8 * d + c}", f"leaf{c}") for d, c in down]


@pytest.fixture(scope="module")
def fabric():
    return rail_optimized(domains=2)


def test_nics_lost_on_other_rails_keep_four_channels(fabric):
    g = degrade(fabric, links=_links(SPLIT))
    group = tuple(f"gpu{i}" for i in range(16))
    lanes = nic_lanes(g, group, rail_table(fabric, group))
    # rail 7 is up at both nodes: its channel first; then node 0's GPUs 4-6, node 1's 0-2
    assert lanes.tolist() == [[7, 4, 5, 6], [15, 8, 9, 10]]
    tree = degraded_cost(fabric, AR, N, 16, links=_links(SPLIT), algorithm="tree").degraded
    assert tree.tree_cap.channels == 4
    # reduce and broadcast at once, one step at the cap: 2 n / (4 x 41.4 GB/s) = 12.97 ms
    assert len(tree.steps) == 1
    for s in tree.steps:
        assert s.serialization == pytest.approx(2 * N / (4 * TREE_2N), rel=1e-12)
        # chains: 2 x 8 edges (each domain's edges into its 4 lanes in 3 trees of 4, the
        # others in all 4); a double tree of 2 nodes per channel: 2 x 4; 24 each way
        assert s.transfers == 2 * 24
    nvls = degraded_cost(fabric, AR, N, 16, links=_links(SPLIT),
                         algorithm="in-network-tree").degraded
    assert nvls.tree_cap.channels == 4
    across = [s for s in nvls.steps if "across" in s.name]
    for s in across:       # (p - 1)/p of n over 4 heads x 57.7 GB/s
        assert s.serialization == pytest.approx(N * 15 / 16 / (4 * NVLS_TREE_2N), rel=1e-12)
        assert s.transfers == 2 * 4
    ring = degraded_cost(fabric, AR, N, 16, links=_links(SPLIT), algorithm="ring").degraded
    for s in ring.steps:   # 4 rings, each on 1/4: a lane's NIC carries n / (4 x 16) a step
        assert s.serialization == pytest.approx(N / (4 * 16) / NIC, rel=1e-12)


@pytest.mark.parametrize("algorithm", ["tree", "ring", "in-network-tree"])
def test_losing_the_last_whole_rail_is_not_faster(fabric, algorithm):
    # node 1's NIC 7 too: no rail is up at both nodes; still 4 NICs up at node 0 and 4 at
    # node 1, NCCL's 4 channels, all crossing rails: not faster (was 24.18 -> 15.15 ms)
    a = degraded_cost(fabric, AR, N, 16, links=_links(SPLIT), algorithm=algorithm)
    b = degraded_cost(fabric, AR, N, 16, links=_links([*SPLIT, (1, 7)]), algorithm=algorithm)
    assert b.degraded.time >= a.degraded.time
    assert a.degraded.time >= a.healthy.time


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=8, max_size=8), st.integers(0, 8),
       st.integers(0, 1))
@example([0] * 8, 8, 0)   # every NIC of node 0 down, no rail whole: cut (the test's own bug)
def test_one_more_nic_down_is_never_faster(lost_at, whole, more_at):
    # 2 x 8 H100, 1 GiB: rail c's NIC down at node lost_at[c], but rail `whole` (none
    # when 8) up at both; then one more NIC down, rail `whole`'s at node more_at (else
    # the first NIC still up at node more_at): never faster, wherever the NICs went
    down = {(d, c) for c, d in enumerate(lost_at) if c != whole}
    up = [c for c in range(8) if (more_at, c) not in down]
    if whole == 8 and not up:
        return   # node more_at has no NIC left: the group is cut apart already
    more = (more_at, whole if whole < 8 else up[0])
    for d in (0, 1):
        if sum(1 for x, _ in down | {more} if x == d) >= 8:
            return   # a node without a NIC: the group is cut apart
    f = rail_optimized(domains=2)
    for algorithm in ("tree", "ring", "in-network-tree"):
        a = degraded_cost(f, AR, N, 16, links=_links(sorted(down)), algorithm=algorithm)
        b = degraded_cost(f, AR, N, 16, links=_links(sorted(down | {more})),
                          algorithm=algorithm)
        slack = 0.0
        if algorithm == "tree":
            # k channels: the cap, 2 n / (k x 41.4 GB/s), binds (every GPU's NVLink carries
            # at most 2 n / 370.8 GB/s, a lane's NIC n / (k x 47 GB/s) each way), so the
            # steady time never falls; the fill, 7 stages over a slice of 16 channels x
            # 512 KiB at the links' rate, is at most that slice at the slower of those two
            # with k channels and at least at a lane's NIC's with one NIC fewer: 4.4 us at
            # k = 4 (the links' rate falls from the NVLink's to the NIC's where the lanes
            # lie evenly: 13.3744 -> 13.3700 ms), not the cap's rate (0.40 ms)
            ka, kb = a.degraded.tree_cap.channels, b.degraded.tree_cap.channels
            assert kb <= ka
            assert b.degraded.steps[0].serialization >= \
                a.degraded.steps[0].serialization * (1 - 1e-12)
            slack = 7 * 16 * 524288 * (max(2 / NVLINK, 1 / (ka * NIC)) - 1 / (kb * NIC))
        assert b.degraded.time >= a.degraded.time * (1 - 1e-12) - slack, \
            (algorithm, down, more)
