"""Tree collective algorithms: NCCL's all-reduce tree (a chain inside each scale-up domain,
a double binary tree across, one per rail; its reduce and broadcast at once) and pipelined
binary-tree broadcast and reduce.

Each generator takes the group and the fabric graph and returns a list of
:class:`~netmodel.collectives.steps.Step` (the interface of
:mod:`netmodel.collectives.algorithms`, whose table gives their costs).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.algo_ring import nic_lanes
from netmodel.collectives.group_domains import domain_indices, nccl_nodes, rail_table
from netmodel.collectives.steps import Pairs, Step

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["tree_all_reduce", "tree_broadcast", "tree_reduce"]


def _heap(members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Child -> parent edges of a binary heap over ``members`` (positions in the group)."""
    i = np.arange(1, len(members))
    return members[i], members[(i - 1) // 2]


def tree_depth(count: int) -> int:
    """``floor(log2(count))``: the depth of a balanced binary tree of ``count >= 1`` nodes."""
    return count.bit_length() - 1


def nccl_tree_depth(count: int) -> int:
    """``ceil(log2(count))``: the hops from the deepest rank to the root in NCCL's trees of
    ``count >= 1`` ranks (:func:`nccl_tree_parents`; both trees alike). Its root has one
    child, the highest power of 2 below ``count``, so it is a hop deeper than a balanced
    tree (:func:`tree_depth`) unless ``count`` is a power of 2: on 3 ranks the chain
    0 <- 2 <- 1.

    >>> [nccl_tree_depth(n) for n in (1, 2, 3, 4, 5, 8, 9)]
    [0, 1, 2, 2, 3, 3, 4]
    """
    return (count - 1).bit_length()


def _btree_parent(n: int, r: int) -> int:
    """The parent of rank ``r`` of ``n`` in NCCL's binary tree (src/graph/trees.cc,
    ncclGetBtree; -1 for the root, rank 0): with ``bit`` the lowest set bit of ``r``, the
    rank with that bit cleared and the next one set, or, past ``n``, with it cleared."""
    if r == 0:
        return -1
    bit = r & -r
    up = (r ^ bit) | (bit << 1)
    return up if up < n else r ^ bit


@functools.lru_cache(maxsize=64)
def nccl_tree_parents(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The parents of ranks ``0..n-1`` in NCCL's two trees (src/graph/trees.cc,
    ncclGetDtree; -1 at a root): the binary tree, and for the second its mirror (rank ``r``
    as ``n - 1 - r``) when ``n`` is even, else the same tree shifted by one rank. The
    arrays are cached, so read-only.

    >>> [p.tolist() for p in nccl_tree_parents(3)]   # two chains: 0 <- 2 <- 1, 1 <- 0 <- 2
    [[-1, 2, 0], [1, -1, 0]]
    >>> [p.tolist() for p in nccl_tree_parents(4)]   # 0 <- 2 <- {1, 3}, 3 <- 1 <- {0, 2}
    [[-1, 2, 0, 2], [1, 3, 1, -1]]
    """
    first = np.array([_btree_parent(n, r) for r in range(n)], dtype=np.int64)
    if n % 2:
        up = first[(np.arange(n) - 1) % n]
        second = np.where(up < 0, -1, (up + 1) % n)
    else:
        up = first[n - 1 - np.arange(n)]
        second = np.where(up < 0, -1, n - 1 - up)
    first.flags.writeable = second.flags.writeable = False   # shared by every caller
    return first, second


def double_tree(group, leaders: np.ndarray, frac: float):
    """NCCL's double binary tree over ``leaders`` (positions in ``group``; rank ``i`` is
    ``leaders[i]``, :func:`nccl_tree_parents`): child -> parent edges of both trees, each
    tree on half of ``frac``."""
    src, dst = [], []
    for parent in nccl_tree_parents(len(leaders)):
        child = np.flatnonzero(parent >= 0)
        src.append(leaders[child])
        dst.append(leaders[parent[child]])
    return np.concatenate(src), np.concatenate(dst), np.full(2 * (len(leaders) - 1),
                                                              frac / 2)


def tree_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    table = rail_table(graph, group)
    if table is not None:
        # one tree per rail (NCCL's channels, each through its own NIC): channel c chains
        # every domain's GPUs towards its GPU c, and the GPUs c of all domains form a
        # double binary tree; each channel carries 1/m of the data
        D, m = table.shape
        nxt = np.roll(table, -1, axis=1)
        # with a NIC down, k trees on the NICs up (algo_ring.nic_lanes: the rails up at
        # every domain first), each on 1/k of the data (NCCL's re-plan, as the ring's)
        lanes = nic_lanes(graph, group, table)
        degraded = lanes is not None
        lanes = lanes if degraded else table
        k = lanes.shape[1]
        # edge j -> j+1 of a domain's chain: in every tree but the one leaving through j
        on = (table[:, :, None] == lanes[:, None, :]).any(axis=2)
        share = ((k - on) / k).ravel()
        # (with one channel left, its own edge is in no tree)
        keep = share > 0 if degraded else np.ones(share.shape, dtype=bool)
        src, dst, frac = [table.ravel()[keep]], [nxt.ravel()[keep]], [share[keep]]
        for c in range(k):
            a, b, f = double_tree(group, lanes[:, c], 1 / k)
            src.append(a)
            dst.append(b)
            frac.append(f)
        chain, depth, hops = m - 1, tree_depth(D), nccl_tree_depth(D)
        # NCCL's tuner caps the tree's busbw at its channels (one per NIC: here a rail;
        # with NICs down, the fewest up at any domain, k: algo_ring.nic_channels) times
        # perChMaxTreeBws of its generation and node count (Step.tree_channels)
        cap = {"tree_channels": k, "tree_nodes": D}
    else:
        members, sizes = domain_indices(graph, group)
        starts = np.cumsum(sizes) - sizes
        inner = np.ones(len(members), dtype=bool)
        inner[starts] = False  # chain towards each domain's first GPU
        src, dst = [members[inner]], [members[np.flatnonzero(inner) - 1]]
        frac = [np.ones(len(src[0]))]
        leaders = members[starts]
        if len(leaders) > 1:
            a, b, f = double_tree(group, leaders, 1.0)
            src.append(a)
            dst.append(b)
            frac.append(f)
        chain = int(sizes.max()) - 1
        depth, hops = tree_depth(len(leaders)), nccl_tree_depth(len(leaders))
        cap = {}   # no rails: NCCL's channel count is not known here
    nodes = nccl_nodes(graph, group)
    if nodes:   # across NCCL's nodes: its tuner's LL cap (Step.tree_ranks)
        cap |= {"tree_nodes": nodes, "tree_ranks": len(group)}
    up = Pairs(group, np.concatenate(src), np.concatenate(dst), np.concatenate(frac))
    # NCCL runs the reduce (child to parent) and the broadcast (parent to child) at once,
    # chunk after chunk, each on its own threads (src/device/all_reduce.h, runTreeSplit), on
    # opposite directions of each link: one step carrying both, whose links' loads are the
    # two phases' together. Across domains that is 2 x the message through the busiest
    # node on 4 and more (a node interior in one tree, with a parent and two children, a
    # leaf in the other) and S on 2, as phase after phase, but 1.5 x on 3 (NCCL's two
    # chains); inside a domain of 2 GPUs each sends S one way (a ring's bytes), not 2 S.
    # NCCL's latency, 2 ((m - 1) intraLat + log2i(nodes) interLat) (its tuner's count,
    # src/graph/tuning.cc), and its cap (the two phases' share, tree_share 2) as before;
    # the pipeline fills over the chain and the hops of NCCL's trees, ceil(log2 nodes)
    # (nccl_tree_depth; their root has one child: 3 nodes, 0 <- 2 <- 1, two hops, not
    # log2i's one)
    both = Pairs(group, np.concatenate([up.src, up.dst]), np.concatenate([up.dst, up.src]),
                 np.concatenate([up.fractions(), up.fractions()]))
    lat = (2 * chain, 2 * depth) if depth else (0, 2 * (chain + depth))
    return [Step("reduce and broadcast (pipelined, at once)", both, stages=chain + hops,
                 reduce=up.incoming(), latencies=lat, tree_share=2.0, **cap)]


def tree_broadcast(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    a, b = _heap(np.arange(len(group)))
    return [Step("broadcast (pipelined)", Pairs(group, b, a, 1.0), stages=tree_depth(len(group)))]


def tree_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    a, b = _heap(np.arange(len(group)))
    up = Pairs(group, a, b, 1.0)
    return [Step("reduce (pipelined)", up, stages=tree_depth(len(group)), reduce=up.incoming())]
