"""Direct collective algorithms, every transfer in one step: one-shot all-reduce,
reduce-scatter, all-gather, all-to-all, broadcast, reduce and send-recv; vLLM's two-shot
all-reduce on full meshes; and the pairwise all-to-all in shifted exchanges.

Each generator takes the group and the fabric graph and returns a list of
:class:`~netmodel.collectives.steps.Step` (the interface of
:mod:`netmodel.collectives.algorithms`, whose table gives their costs).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.algo_ring import ring_pairs
from netmodel.collectives.steps import NotApplicable, Pairs, Step

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["direct_all_gather", "direct_all_reduce", "direct_all_to_all", "direct_broadcast",
           "direct_reduce", "direct_reduce_scatter", "direct_send_recv", "pairwise_all_to_all",
           "two_shot_all_reduce"]


def _all_pairs(group, frac, p2p: bool = False) -> Pairs:
    p = len(group)
    src = np.repeat(np.arange(p), p - 1)
    j = np.arange(p - 1)   # every b != a, in order: row a of p - 1, by broadcasting (no
    # tiled copy and mask of every transfer: 16.8 million over 4,096 GPUs, 0.7 -> 0.2 s)
    return Pairs(group, src, (j + (j >= np.arange(p)[:, None])).ravel(), frac, p2p=p2p)


def direct_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    return [Step("one-shot exchange", _all_pairs(group, 1.0), reduce=p - 1.0)]


def pairwise_linked(graph, group) -> None:
    """NotApplicable unless every two GPUs of ``group`` share a cable (a full mesh: an
    xGMI box, a group of Lites): two-shot's ``p (p - 1)`` transfers each then have a link
    of their own; on switched fabrics they share ports that NCCL's rings use as well."""
    if graph is None:
        return
    adj, p = graph._adj, len(group)
    for g in group:
        near = adj[g]
        if len(near) < p - 1 or any(h not in near for h in group if h != g):
            raise NotApplicable("two-shot needs every two GPUs of the group linked directly "
                                "(a full mesh)")


def two_shot_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """All-reduce as a direct reduce-scatter (each GPU sends ``n/p`` to every peer at once and
    reduces its slice) then a direct all-gather: ``2 alpha + 2 (p-1)/p n`` over what a GPU
    injects on all its links; vLLM's ``cross_device_reduce_2stage``
    (csrc/custom_all_reduce.cuh), used above 256-512 KiB on fully NVLinked GPUs, below
    which its one-shot (``direct``) is faster."""
    pairwise_linked(graph, group)
    p = len(group)
    t = _all_pairs(group, 1 / p)
    return [Step("reduce-scatter (direct)", t, reduce=(p - 1) / p),
            Step("all-gather (direct)", t)]


def direct_reduce_scatter(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    return [Step("exchange", _all_pairs(group, 1 / p), reduce=(p - 1) / p)]


def direct_all_gather(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    return [Step("exchange", _all_pairs(group, 1 / len(group)))]


def direct_all_to_all(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    # NCCL's all-to-all is grouped ncclSend/ncclRecv (p2p: PXN routes it; p2p_ranks: its
    # Simple chunks are copied twice in turn inside an NVLink domain, pipeline_fill.p2p_fills)
    return [Step("exchange", _all_pairs(group, 1 / len(group), p2p=True),
                 p2p_ranks=len(group))]


def direct_broadcast(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    i = np.arange(1, len(group))
    return [Step("root sends", Pairs(group, np.zeros_like(i), i, 1.0))]


def direct_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    i = np.arange(1, len(group))
    return [Step("all send to root", Pairs(group, i, np.zeros_like(i), 1.0),
                 reduce=len(group) - 1.0)]


def direct_send_recv(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    # nccl-tests' sendrecv_perf: each rank sends n to the next, grouped ncclSend/ncclRecv
    # among the group's ranks, one peer each (p2p_peers 1: its LL rate on a peer's channels,
    # pipeline_fill.p2p_ll_share)
    ring = ring_pairs(group, 1.0)
    return [Step("send-recv", Pairs(ring.nodes, ring.src, ring.dst, ring.frac, p2p=True),
                 p2p_ranks=len(group), p2p_peers=1)]


def pairwise_all_to_all(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    i = np.arange(p)
    return [Step(f"shift {k}", Pairs(group, i, (i + k) % p, 1 / p, p2p=True))
            for k in range(1, p)]
