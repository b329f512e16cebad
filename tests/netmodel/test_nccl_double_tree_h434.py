"""NCCL's double binary tree as the tree all-reduce builds it, checked against NCCL's own
algorithm written out here from its comments and code paths (h434).

NVIDIA/nccl src/graph/trees.cc: ``ncclGetBtree`` gives rank ``r`` of ``n`` its parent and
its children from the lowest set bit ``b`` of ``r`` (rank 0, the root, takes the lowest
power of 2 not below ``n``): parent ``(r ^ b) | 2b``, or ``r ^ b`` where that is past the
end; children ``r - b/2`` and ``r + b/2``, the latter halved back (``r + b/4``, ...) while
past the end. ``ncclGetDtree``'s second tree is the first mirrored (rank ``n - 1 - r``) when
``n`` is even, shifted by one rank when it is odd. Below, the parents are read off the
children lists (not the parent rule the model uses), so the two halves of NCCL's rule check
each other and the model.

The tree's reduce and broadcast run at once (src/device/all_reduce.h, runTreeSplit), each
tree on half the message: a rank's port carries, each way, ``n/2`` for every tree edge it
has, parent or child, over both trees. The pipeline fills over the tree's hops: its root
has one child, so the deepest rank is ``ceil(log2 n)`` hops from it (3 ranks: 0 <- 2 <- 1,
two hops), while NCCL's tuner counts ``log2i(n)`` latencies (src/graph/tuning.cc).
"""

from __future__ import annotations

import math

import pytest

from netmodel.collectives.algo_tree import nccl_tree_parents, tree_all_reduce
from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.test_collective_textbook import B, beta, star

COUNTS = [*range(1, 70), 127, 128, 129, 255, 256, 1000, 1023, 1024, 1025]


def btree_children(n: int, r: int) -> list[int]:
    """Rank ``r``'s children in NCCL's binary tree of ``n`` ranks, as ncclGetBtree's
    down0/down1 (rank 0: its one child, the lowest power of 2 not below ``n``, halved)."""
    bit = 1
    while bit < n and not bit & r:
        bit <<= 1
    if r == 0:
        return [bit >> 1] if n > 1 else []
    low = bit >> 1
    if low == 0:
        return []
    down1 = r + low
    while down1 >= n:          # ncclGetBtree's loop: down1 from a halving low bit
        down1 = -1 if low == 0 else r + low
        low >>= 1
    return [r - (bit >> 1)] + ([down1] if down1 >= 0 else [])


def dtree_children(n: int, r: int) -> tuple[list[int], list[int]]:
    """Rank ``r``'s children in NCCL's two trees (ncclGetDtree): the binary tree, then its
    mirror (``n`` even) or its shift by one rank (``n`` odd)."""
    first = btree_children(n, r)
    if n % 2:
        second = [(c + 1) % n for c in btree_children(n, (r - 1) % n)]
    else:
        second = [n - 1 - c for c in btree_children(n, n - 1 - r)]
    return first, second


def parents_from_children(n: int) -> tuple[list[int], list[int]]:
    out = ([-1] * n, [-1] * n)
    for r in range(n):
        for t, kids in enumerate(dtree_children(n, r)):
            for c in kids:
                assert out[t][c] == -1, (n, t, c)   # one parent each
                out[t][c] = r
    return out


def hops(parent: list[int]) -> int:
    deepest = 0
    for r in range(len(parent)):
        d, x = 0, r
        while parent[x] >= 0:
            x, d = parent[x], d + 1
            assert d <= len(parent)                # no cycle
        deepest = max(deepest, d)
    return deepest


@pytest.mark.parametrize("n", COUNTS)
def test_the_model_builds_nccls_two_trees(n):
    want = parents_from_children(n)
    got = [p.tolist() for p in nccl_tree_parents(n)]
    assert got == [list(w) for w in want]
    # roots as ncclGetDtreeRoots: 0, and 1 (n odd) or n - 1 (n even)
    assert want[0].count(-1) == want[1].count(-1) == 1
    assert want[0][0] == -1 and want[1][1 if n % 2 and n > 1 else n - 1] == -1


def test_the_published_pictures():
    # trees.cc's own drawings: 14 ranks (0 - 8 - {4, 12}; 12 - {10, 13}), its mirror's root
    # 13 (n - 1); 13 ranks shifted: root 1, 1 - 9 - {5, 0}
    first, second = parents_from_children(14)
    assert first[8] == 0 and first[4] == first[12] == 8 and first[13] == 12
    assert second[13] == -1
    first, second = parents_from_children(13)
    assert second[1] == -1 and second[9] == 1 and second[5] == second[0] == 9
    assert first[12] == 8 and first[10] == 12   # 12 has one child: 13 is past the end


@pytest.mark.parametrize("p", [2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 33])
def test_time_is_the_busiest_ports_tree_edges(p):
    # p GPUs, each its own domain, on one switch at B: the busiest port carries n/2 each way
    # for each of its tree edges over both trees (runTreeSplit): 2 (one edge each), 3 (two
    # chains, three at the middle ranks), >= 4 (four: interior in one tree, leaf in the
    # other)
    edges = [0] * p
    for parent in parents_from_children(p):
        for c, u in enumerate(parent):
            if u >= 0:
                edges[c] += 1
                edges[u] += 1
    busiest = max(edges) / 2
    assert busiest == {2: 1.0, 3: 1.5}.get(p, 2.0)
    m = FabricCostModel(star(p), algorithm="tree", calibration=Calibration.ideal(0.0))
    n = 1e9
    assert float(m.collective_time("all-reduce", n, p)) == pytest.approx(
        busiest * n * beta, rel=1e-12)


@pytest.mark.parametrize("p", [2, 3, 4, 5, 7, 8, 9, 33])
def test_the_pipeline_fills_over_the_trees_hops(p):
    # one protocol with a chunk c on ch channels: past a slice (c x ch) the time is
    # b n + (stages - 1) b slice + 2 log2i(p) alpha, stages the deepest rank's hops,
    # ceil(log2 p) (3: two, the chain 0 <- 2 <- 1; the balanced heap's floor(log2 p) was one)
    depth = max(hops(parent) for parent in parents_from_children(p))
    assert depth == math.ceil(math.log2(p))
    (step,) = tree_all_reduce(tuple(f"gpu{i}" for i in range(p)), star(p))
    assert step.stages == depth
    chunk, channels, alpha = 2.0**19, 4, 3e-6
    cal = Calibration.ideal(alpha).with_(
        protocols=(Protocol("ideal", 1.0, 0.0, alpha, alpha, chunk=chunk),),
        channels=channels)
    b = {2: 1.0, 3: 1.5}.get(p, 2.0) / B
    n = 2.0**30
    want = b * n + (depth - 1) * b * chunk * channels + 2 * int(math.log2(p)) * alpha
    m = FabricCostModel(star(p), algorithm="tree", calibration=cal)
    assert float(m.collective_time("all-reduce", n, p)) == pytest.approx(want, rel=1e-12)


def test_one_more_nic_down_can_run_faster_as_nccls_chains_do():
    """2 x 8 H100 (rail-optimized), 1 GiB tree all-reduce, NCCL's tree cap lifted (1 PB/s a
    channel, as where the links bind): node 0's NICs 0, 2, 4, 6 and node 1's 1, 3, 7 down,
    4 channels on node 1's GPUs 5, 0, 2, 4 (rail 5 up at both first,
    algo_ring.nic_lanes). NCCL's tree search on an NVSwitch node tries only a GPU's two
    neighbours, the previous first (src/graph/search.cc, ncclTopoSearchNextGpuSort: for
    NCCL_TOPO_PATTERN_BALANCED_TREE "firstGpus[0] = prevGpu; firstGpus[1] = nextGpu" and
    "*countPtr = firstGpuRealCount"; the same in the 2.27 fork and the 2026 source), so a
    channel's chain runs lane, lane - 1, ..., lane + 1: its tail is the GPU after its lane,
    fixed. GPU 7 of node 1, no chain's end, sends both its chain edges' whole n each way at
    once: 2 n / 370.8 GB/s = 5.791 ms. Node 1's NIC 5 down too: lanes 0, 2, 4, 6, every GPU
    a chain's end, 1.75 n over NVLink, the NICs' n / (4 x 47 GB/s) = 5.711 ms binds: 6.198
    -> 6.113 ms (-1.4%): NCCL's own chains make one more NIC down faster here."""
    from netmodel.collectives.calibration_files import default_calibration
    from netmodel.collectives.degraded import degraded_cost
    from topologies import rail_optimized

    big = (1e15,) * 3
    cal = default_calibration().for_gpu("H100-SXM").with_(tree_channel_bandwidth=big)
    f = rail_optimized(domains=2)
    down = [(0, 0), (0, 2), (0, 4), (0, 6), (1, 1), (1, 3), (1, 7)]

    def time(lost):
        links = [(f"gpu{8 * d + c}", f"leaf{c}") for d, c in lost]
        return degraded_cost(f, "all-reduce", 2.0**30, 16, links=links, algorithm="tree",
                             calibration=cal).degraded.time

    assert time([*down, (1, 5)]) < time(down) * (1 - 0.01)
