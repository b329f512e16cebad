"""The ring family of collective algorithms: NCCL's rings (one per rail across scale-up
domains), the bidirectional ring, and the pipelined chains of ring broadcast and reduce.

Each generator takes the group and the fabric graph and returns a list of
:class:`~netmodel.collectives.steps.Step` (the interface of
:mod:`netmodel.collectives.algorithms`, whose table gives their costs).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.group_domains import (
    domain_crossings,
    domain_indices,
    nccl_nodes,
    rail_table,
)
from netmodel.collectives.steps import Pairs, Step

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["bidirectional_ring_all_gather", "bidirectional_ring_all_reduce",
           "bidirectional_ring_reduce_scatter", "ring_all_gather", "ring_all_reduce",
           "ring_broadcast", "ring_reduce", "ring_reduce_scatter"]


def ring_indices(p: int) -> tuple[np.ndarray, np.ndarray]:
    """The ring over positions ``0..p-1``: ``(senders, receivers)``, position ``i`` sending to
    ``i + 1`` (mod ``p``)."""
    i = np.arange(p)
    return i, (i + 1) % p


def ring_pairs(group, frac) -> Pairs:
    """One ring in group order: each GPU of ``group`` sends ``frac`` of the data to the next
    (the last to the first)."""
    return Pairs(group, *ring_indices(len(group)), frac)


def _multi_ring(group, graph) -> tuple[Pairs, int]:
    """One step of NCCL's rings for ``group``: ``(transfers, hops that cross domains per
    ring pass)``. Within one scale-up domain (or across domains of one GPU each) a single
    ring in group order; across domains of unequal sizes, :func:`_uneven_rings`. Across
    ``D`` domains of ``m`` GPUs, ``m``
    rings, one per rail, each on ``1/m`` of the data: ring ``c`` visits every domain from
    its GPU ``c`` round to GPU ``c - 1``, which hands the chunk over NVLink back to GPU ``c``
    to leave through GPU ``c``'s own NIC to GPU ``c`` of the next domain (NCCL's PXN), so
    every NIC carries one ring and every hop between domains stays on one rail. Summed over
    the rings, each GPU sends ``1/p`` of ``n`` to the next GPU of its domain and
    ``1/(m p)`` to its peer in the next domain per step."""
    p = len(group)
    table = None if graph is None else rail_table(graph, group)
    if table is None:
        uneven = None if graph is None or p < 3 else _uneven_rings(graph, group)
        if uneven is not None:
            return uneven
        crossings = domain_crossings(graph, group) if p > 1 and graph is not None else 0
        return ring_pairs(group, 1 / p), max(crossings - 1, 0)
    D, m = table.shape
    nxt = np.roll(table, -1, axis=1)     # next GPU of the domain
    peer = np.roll(table, -1, axis=0)    # same rail, next domain
    lanes = nic_lanes(graph, group, table)
    if lanes is not None:  # a NIC down: k rings on the NICs up (NCCL's re-plan)
        k = lanes.shape[1]
        src = np.concatenate([table.ravel(), lanes.ravel()])
        dst = np.concatenate([nxt.ravel(), np.roll(lanes, -1, axis=0).ravel()])
        frac = np.concatenate([np.full(p, 1 / p), np.full(D * k, 1 / (k * p))])
        return Pairs(group, src, dst, frac), D - 1
    src = np.concatenate([table.ravel(), table.ravel()])
    dst = np.concatenate([nxt.ravel(), peer.ravel()])
    frac = np.concatenate([np.full(p, 1 / p), np.full(p, 1 / (m * p))])
    return Pairs(group, src, dst, frac), D - 1


def _uneven_domains(graph, group) -> list[np.ndarray] | None:
    """The group's scale-up domains (positions in ``group``, as :func:`domain_indices`)
    when there are at least two, of unequal sizes, each of at least 2 GPUs; else None."""
    members, sizes = domain_indices(graph, group)
    if len(sizes) < 2 or sizes.min() < 2 or (sizes == sizes[0]).all():
        return None
    return np.split(members, np.cumsum(sizes)[:-1])


def _uneven_rings(graph, group) -> tuple[Pairs, int] | None:
    """:func:`_multi_ring` across ``D >= 2`` scale-up domains of unequal sizes, each of at
    least 2 GPUs (8 + 4, 8 + 8 + 4): ``k`` = the smallest domain's size rings, each on
    ``1/k`` of the data; ring ``c`` visits every domain from its ``c``-th GPU round to the
    one before, hands the chunk back over NVLink and leaves through the ``c``-th GPU's NIC
    to the ``c``-th GPU of the next domain, as the rails of equal domains do (NCCL gives
    every node the channels the smallest one can feed). None when the group is not so."""
    if _uneven_domains(graph, group) is None:
        return None
    members, sizes = domain_indices(graph, group)
    p, D, k = len(group), len(sizes), int(sizes.min())
    starts = np.cumsum(sizes) - sizes
    local = np.arange(p) - np.repeat(starts, sizes)
    nxt = members[np.repeat(starts, sizes) + (local + 1) % np.repeat(sizes, sizes)]
    rails = members[starts[:, None] + np.arange(k)]       # (D, k): each domain's first k
    peer = np.roll(rails, -1, axis=0)
    src = np.concatenate([members, rails.ravel()])
    dst = np.concatenate([nxt, peer.ravel()])
    frac = np.concatenate([np.full(p, 1 / p), np.full(D * k, 1 / (k * p))])
    return Pairs(group, src, dst, frac), D - 1


def _nic_ports(graph, group, table: np.ndarray) -> np.ndarray:
    """Which GPUs of ``table`` (positions in ``group``, one row a domain) have a port into
    the scale-out network (a switch of tier >= 1): a NIC that is up, ``(domains, m)``."""
    adj, data = graph._adj, graph._node

    def port(g) -> bool:
        return any(data[v].get("kind") == "switch" and data[v].get("tier", 0) >= 1
                   for v in adj[g])

    return np.array([[port(group[i]) for i in row] for row in table.tolist()], dtype=bool)


def nic_lanes(graph, group, table: np.ndarray) -> np.ndarray | None:
    """The GPUs whose NICs carry NCCL's channels across the group's domains when a NIC is
    down: ``(domains, k)`` positions in ``group``, ``k`` the fewest NICs up at any domain
    (:func:`nic_channels`), column ``c`` the GPUs through which channel ``c`` leaves each
    domain. The rails whose NICs are up at every domain come first, a channel each (the
    healthy fabric's rail-aligned channels); the channels left over take each domain's
    other GPUs with a NIC up, in ``table``'s order, so they cross rails (through the
    spines). None when every NIC is up (``table`` itself: a channel a rail) or a domain
    has none. NCCL started again on the degraded fabric skips a NIC that is not up
    (src/transport/net_ib/init.cc), lays a channel on each NIC it found and keeps the
    fewest channels any node found (src/init.cc): ``k`` channels, none of them sent
    through a borrowed NIC twice loaded. (The model had laid them only on the rails up
    everywhere: NICs lost on different rails left fewer channels than NCCL's, down to
    none, when every dead rail's channel went back to its borrowed NIC, faster than one
    rail: losing a NIC could speed a collective up.)"""
    k = nic_channels(graph, group, table)
    if k is None:
        return None
    ports = _nic_ports(graph, group, table)
    aligned = ports.all(axis=0)
    order = [np.concatenate([np.flatnonzero(aligned), np.flatnonzero(ok & ~aligned)])[:k]
             for ok in ports]
    return np.take_along_axis(table, np.array(order), axis=1)


def nic_channels(graph, group, table: np.ndarray) -> int | None:
    """NCCL's channels across the group's domains (rows of ``table``, ``m`` GPUs each)
    when a GPU's NIC is down (its link into the scale-out network or its rail's leaf
    failed): ``k``, the NICs up at the domain with the fewest, when ``0 < k < m``; else
    None (every NIC up: the healthy ``m``, one channel a rail; or a domain with none).

    The rule, as NCCL behaves: a NIC that fails mid-job is not routed around, the
    communicator fails and the job makes a new one (NVIDIA/nccl issue 998, the
    maintainer: "If something fails (a link, NIC, GPU, ...), NCCL is going to fail";
    issue 989 alike; the port failover of 2.29 works only between ports fused into one
    virtual NIC, issue 2192, which one single-port NIC a GPU is not); at that new init
    NCCL's IB transport skips a port that is not active (src/transport/net_ib/init.cc,
    ncclIbInitDevices: ``if (portAttr.state != IBV_PORT_ACTIVE) continue;``), so the
    node's topology holds its ``k`` NICs that are up, a channel on each (the model's one
    channel a NIC, as on the healthy fabric); and every rank then takes the fewest
    channels any rank found (src/init.cc: ``graphs[a]->nChannels = std::min(
    allGather3Data[i].graphInfo[a].nChannels, graphs[a]->nChannels)``, "so that the
    tuning is consistent across ranks"). So one NIC down on one node lowers the tree's
    cap to ``k x perChMaxTreeBws`` (NVLSTree's: ``k`` heads) everywhere."""
    up = _nic_ports(graph, group, table).sum(axis=1)
    k = int(up.min())
    return k if 0 < k < table.shape[1] else None


def _ring_latencies(p: int, inter: int) -> tuple[int, int]:
    """NCCL's latency payments of one ring pass of ``p - 1`` steps, ``inter`` of which cross
    domains (tuning.cc: ``(nsteps - nInterSteps) * intraLat + nInterSteps * interLat``)."""
    return (p - 1 - inter, inter)


def ring_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    t, inter = _multi_ring(group, graph)
    lat = _ring_latencies(p, inter)
    return [Step("reduce-scatter", t, p - 1, reduce=1 / p, latencies=lat,
                 ring_nodes=nccl_nodes(graph, group)),
            Step("all-gather", t, p - 1, latencies=lat, ring_nodes=nccl_nodes(graph, group))]


def ring_reduce_scatter(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    t, inter = _multi_ring(group, graph)
    return [Step("reduce-scatter", t, p - 1, reduce=1 / p,
                 latencies=_ring_latencies(p, inter), ring_nodes=nccl_nodes(graph, group))]


def ring_all_gather(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    t, inter = _multi_ring(group, graph)
    return [Step("all-gather", t, p - 1, latencies=_ring_latencies(p, inter),
                 ring_nodes=nccl_nodes(graph, group))]


def _bidirectional_pairs(group, frac) -> Pairs:
    """Both directions of the ring at once, each carrying ``frac`` (two counter-rotating
    rings, each on half of the data)."""
    p = len(group)
    if p == 2:
        return ring_pairs(group, 2 * frac)
    a, b = ring_indices(p)
    return Pairs(group, np.concatenate([a, b]), np.concatenate([b, a]), frac)


def bidirectional_ring_all_reduce(group: tuple[Hashable, ...],
                                  graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    t = _bidirectional_pairs(group, 1 / (2 * p))
    return [Step("reduce-scatter (both ways)", t, p - 1, reduce=1 / p),
            Step("all-gather (both ways)", t, p - 1)]


def bidirectional_ring_reduce_scatter(group: tuple[Hashable, ...],
                                      graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    return [Step("reduce-scatter (both ways)", _bidirectional_pairs(group, 1 / (2 * p)), p - 1,
                 reduce=1 / p)]


def bidirectional_ring_all_gather(group: tuple[Hashable, ...],
                                  graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    return [Step("all-gather (both ways)", _bidirectional_pairs(group, 1 / (2 * p)), p - 1)]


def _chain(group) -> Pairs:
    i = np.arange(len(group) - 1)
    return Pairs(group, i, i + 1, 1.0)


def _rail_chains(group, table: np.ndarray) -> Pairs:
    """NCCL's rings (:func:`_multi_ring`) opened at the root (position 0, ``table[0, 0]``)
    into pipelined chains, one per rail, each on ``1/m`` of the data: chain ``c`` follows
    ring ``c`` from the root until every GPU has had the data, and each of its hops between
    domains, from GPU ``c - 1`` of a domain to GPU ``c`` of the next, goes over NVLink to
    GPU ``c`` and out through GPU ``c``'s NIC (PXN). So every NIC carries ``1/m`` of the
    message, as NCCL's broadcast and reduce spread it over all their ring channels."""
    return _rail_chains_of(group, list(table), table.shape[1])


def _rail_chains_of(group, rows: list[np.ndarray], k: int) -> Pairs:
    """:func:`_rail_chains` over domains given as ``rows`` (positions in ``group``, the
    root first in the first), of any sizes of at least ``k``: ``k`` chains, chain ``c``
    following ring ``c`` (each domain from its ``c``-th GPU round to the one before, out
    through the ``c``-th GPU's NIC), each on ``1/k`` of the data."""
    sizes = np.array([len(r) for r in rows])
    flat = np.concatenate(rows)
    dom = np.empty(len(flat), dtype=np.int64)     # the domain (row) of each position
    dom[flat] = np.repeat(np.arange(len(rows)), sizes)
    src, dst = [], []
    for c in range(k):
        ring = np.concatenate([np.roll(r, -c) for r in rows])  # each domain from GPU c
        ring = np.roll(ring, -((sizes[0] - c) % sizes[0]))     # opened at the root
        a, b = ring[:-1], ring[1:]
        leave = dom[a] != dom[b]                  # hops out of a domain: two transfers,
        at = np.cumsum(1 + leave) - 1 - leave     # a -> GPU c there, GPU c -> b (its NIC)
        s, d = np.repeat(a, 1 + leave), np.repeat(b, 1 + leave)
        via = np.array([rows[x][c] for x in dom[a[leave]].tolist()], dtype=np.int64)
        d[at[leave]] = via
        s[at[leave] + 1] = via
        src.append(s)
        dst.append(d)
    return Pairs(group, np.concatenate(src), np.concatenate(dst), 1 / k)


def _broadcast_chains(group, graph) -> tuple[Pairs, tuple[int, int] | None]:
    """The transfers of a ring broadcast (pipelined chains from the root) and their latency
    payments: one chain in group order, or across ``D`` equal scale-up domains one chain per
    rail (:func:`_rail_chains`) paying NCCL's network latency on its ``D - 1`` hops between
    domains and the scale-up one on the rest."""
    table = None if graph is None else rail_table(graph, group)
    if table is None:
        rows = None if graph is None or len(group) < 3 else _uneven_domains(graph, group)
        if rows is None:
            return _chain(group), None
        return (_rail_chains_of(group, rows, min(map(len, rows))),
                _ring_latencies(len(group), len(rows) - 1))
    return _rail_chains(group, table), _ring_latencies(len(group), table.shape[0] - 1)


def ring_broadcast(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    t, lat = _broadcast_chains(group, graph)
    return [Step("pipelined chain", t, stages=len(group) - 1, latencies=lat)]


def ring_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    t, lat = _broadcast_chains(group, graph)
    t = t.reversed()
    return [Step("pipelined chain", t, stages=len(group) - 1, reduce=t.incoming(),
                 latencies=lat)]
