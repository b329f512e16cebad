"""Collective algorithms as sequences of steps of point-to-point transfers.

Every generator takes the group (GPU nodes, in ring order) and returns a list of
:class:`Step`. A step is a set of transfers that run at the same time; each transfer moves a
fixed *fraction* of the message size ``n`` (nccl-tests convention: the full buffer on each
rank), so a step's structure does not depend on ``n`` and is costed once for every size.

A step may be *pipelined* (``stages > 1``): a chain or tree through which the whole message
streams in small chunks; it pays its latency once per stage and its link loads once (the
steady state of the pipeline), the textbook pipelined cost ``stages * alpha + n * beta``, plus
the fill of its first slice (:func:`~netmodel.collectives.cost.combine`). Steps may also form
a *pipeline* of phases (``Step.pipeline``: hierarchical and in-switch algorithms), whose steady
time is its slowest phase's, not their sum.

Across scale-up domains the algorithms follow NCCL's channels: across ``D`` domains of ``m``
GPUs the ring and the tree run one instance per rail (GPU ``c`` of every domain, each with its
own NIC), each on ``1/m`` of the data, and count NCCL's latencies (a ring pass pays the
network latency on its ``D - 1`` hops between domains and the scale-up one on the rest; a
tree pays ``m - 1`` scale-up and ``lg D`` network latencies each way).

Algorithms (``p`` GPUs; on one ideal switch with per-step latency alpha and per-byte time
beta = 1/B the costs are):

=====================  =========================================================
``ring``               all-reduce ``2(p-1) alpha + 2(p-1)/p n beta``; reduce-scatter,
                       all-gather ``(p-1) alpha + (p-1)/p n beta``; broadcast, reduce
                       (pipelined chain) ``(p-1) alpha + n beta``; across domains one ring
                       per rail (NCCL's channels, PXN at the domain's edge)
``bidirectional-ring`` the ring's steps with half the data going each way round (two
                       counter-rotating rings): the same cost as ``ring`` on a switch, where
                       each GPU port carries the same bytes, but each link of a physical ring
                       or torus carries half, so it halves the transfer time there
``tree``               all-reduce: NCCL's shape, a chain inside each scale-up domain and a
                       double binary tree across domains, pipelined, ``2 d alpha + 2 n beta``
                       (``d`` = chain length + tree depth; ``floor(lg p)`` when every GPU is its
                       own domain, ``p - 1`` inside one domain), one tree per rail across
                       domains; broadcast, reduce: one pipelined binary tree
                       ``floor(lg p) alpha + 2 n beta``
``halving-doubling``   Rabenseifner all-reduce ``2 lg p alpha + 2(p-1)/p n beta`` (plus
                       ``2(alpha + n beta)`` to fold in the ranks beyond a power of two);
                       recursive halving reduce-scatter / doubling all-gather
                       ``lg p alpha + (p-1)/p n beta`` (powers of two only)
``recursive-doubling`` all-reduce exchanging whole vectors ``lg p (alpha + n beta)`` (+ fold)
``direct``             one step, everyone to everyone: all-reduce (one-shot)
                       ``alpha + (p-1) n beta``; reduce-scatter, all-gather, all-to-all
                       ``alpha + (p-1)/p n beta``; broadcast, reduce ``alpha + (p-1) n beta``;
                       send-recv (each rank to the next) ``alpha + n beta``
``two-shot``           all-reduce as a direct reduce-scatter then a direct all-gather
                       ``2 alpha + 2(p-1)/p n beta`` (vLLM's custom all-reduce, two-stage);
                       only where every two GPUs of the group share a cable (full meshes),
                       where each GPU sends on all its ``p-1`` links at once: ``beta`` is
                       then one over the GPU's whole injection bandwidth
``torus``              all-reduce on a ``k``-dimensional torus (the ``torus`` builder's, or a
                       sub-torus of it): bidirectional rings along every dimension at once,
                       the data in ``k`` chunks each taking the dimensions in a rotated
                       order; equal sides ``s``, ports of ``b``:
                       ``2 k (s-1) alpha + 2 (p-1)/p n / (2 k b)``; reduce-scatter,
                       all-gather (its halves) ``k (s-1) alpha + (p-1)/p n / (2 k b)``;
                       unequal sides weight the chunks (``w_j`` proportional to
                       ``r_j s_j/(s_j-1)``, ``r_j`` a GPU's rate along dimension ``j``, where
                       no side is 2)
``pairwise``           all-to-all in ``p-1`` shifted exchanges ``(p-1) alpha + (p-1)/p n beta``
``hierarchical``       all-reduce in two levels over ``D`` domains of ``m`` GPUs, pipelined:
                       reduce-scatter inside (in the switch where it reduces, else a ring),
                       ``m`` rings across on ``n/m``, all-gather inside:
                       ``2(m-1) alpha + 2(D-1) alpha + max(2(m-1)/m n beta_in,
                       2(D-1)/(D m) n beta_out)``
``in-network``         the switch reduces (NVLS, SHARP): all-reduce ``alpha + (1+1/p) n beta``
                       on NVSwitch (``alpha + n beta`` under one SHARP switch), reduce-scatter,
                       all-gather, broadcast, reduce ``alpha + n beta``; across scale-up
                       domains, NVLS inside each chained into SHARP across (NVLS + CollNet)
``in-network-tree``    all-reduce across scale-up domains (NCCL's NVLSTree): NVLS inside each
                       domain, a double binary tree per rail across, pipelined
``collnet-direct``     all-reduce across scale-up domains of at most 8 GPUs (NCCL's
                       CollNetDirect): direct reduce-scatter inside each domain over
                       point-to-point links, each GPU's ``1/m`` share reduced in the switches
                       above (SHARP) through its own NIC, direct all-gather inside, pipelined:
                       ``2 alpha_in + alpha_out + max(2(m-1)/m n beta_in, n/m beta_out)``
``collnet-chain``      the same across a chain of each domain's GPUs per rail (NCCL's
                       CollNetChain): the same bytes per port, ``2(m-1)`` scale-up latencies
=====================  =========================================================

>>> ring_allreduce = generate("ring", "all-reduce", ("a", "b", "c", "d"), None)
>>> [(s.name, s.repeat, len(s.transfers), s.transfers[0]) for s in ring_allreduce]
[('reduce-scatter', 3, 4, ('a', 'b', 0.25)), ('all-gather', 3, 4, ('a', 'b', 0.25))]
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from itertools import chain, combinations, compress, filterfalse, repeat
from operator import is_, is_not, methodcaller
from typing import TYPE_CHECKING

import numpy as np

from compute.comm import OPERATIONS
from compute.errors import UserError, known
from compute.validate import describe
from netmodel.collectives.in_network import (
    collnet_steps,
    domain_planes,
    has_in_network,
    in_network_steps,
    nvls_phases,
)
from netmodel.collectives.steps import NotApplicable, Pairs, Step, union_of, unique

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["ALGORITHMS", "NCCL_ALGORITHMS", "NCCL_OPS", "NotApplicable", "Pairs", "Step", "algorithms_for",
           "domains", "generate", "precheck", "quadratic", "rail_table", "transfer_count"]


# ------------------------------------------------------------------ group structure

def _kind(graph, node):
    return graph.nodes[node].get("kind")


def domain_key(graph: nx.Graph, node: Hashable) -> tuple[str, Hashable]:
    """The scale-up domain of a GPU: its ``group`` label, else the tier-0 switches it is
    wired to, else its ``server`` label, else itself."""
    nodes = graph._node
    data = nodes[node]
    if "group" in data:
        return ("group", data["group"])
    t0 = sorted(str(s) for s in graph._adj[node]
                if nodes[s].get("kind") == "switch" and nodes[s].get("tier", 0) == 0)
    if t0:
        return ("switch", tuple(t0))
    if "server" in data:
        return ("server", data["server"])
    return ("gpu", node)


def domains(graph: nx.Graph, group: Iterable[Hashable]) -> list[list[Hashable]]:
    """The group split by scale-up domain, domains and members in group order."""
    out: dict = {}
    for g in group:
        out.setdefault(domain_key(graph, g), []).append(g)
    return list(out.values())


_NONE = object()


def _tier0(graph: nx.Graph, tiers: Mapping[Hashable, int] | None = None) -> frozenset:
    """The graph's tier-0 switches (found once per graph; ``tiers``: the tier of each of
    its switches, if known)."""
    tier0 = _TIER0.get(graph)
    if tier0 is None and tiers is not None:
        tier0 = _TIER0[graph] = frozenset(s for s, t in tiers.items() if t == 0)
    elif tier0 is None:
        data = graph._node
        switches = compress(data, map("switch".__eq__, map(methodcaller("get", "kind"),
                                                            data.values())))
        tier0 = _TIER0[graph] = frozenset(s for s in switches if data[s].get("tier", 0) == 0)
    return tier0


def _domain_keys(graph: nx.Graph, nodes: list,
                 tiers: Mapping[Hashable, int] | None = None) -> list:
    """:func:`domain_key` of each of ``nodes``, None for a key no other node can have
    (``("gpu", node)``; ``tiers`` as :func:`_tier0`); the tier-0 switches of all of them
    found in one pass over their links (the names of each one's switches sorted by rank,
    one key built per distinct set)."""
    data, adj = graph._node, graph._adj
    ds = list(map(data.__getitem__, nodes))
    groups = list(map(methodcaller("get", "group", _NONE), ds))
    if _NONE in groups:
        keys = [None if v is _NONE else ("group", v) for v in groups]
        rest = list(compress(range(len(nodes)), map(is_, keys, repeat(None))))
    else:
        return [("group", v) for v in groups]
    tier0 = _tier0(graph, tiers)
    if rest and tier0:
        nbrs = list(map(adj.__getitem__, map(nodes.__getitem__, rest)))
        count = np.fromiter(map(len, nbrs), np.int64, count=len(nbrs))
        flat = list(chain.from_iterable(nbrs))
        is0 = np.fromiter(map(tier0.__contains__, flat), bool, count=len(flat))
        if is0.any():
            names = _TIER0_NAMES.get(graph)
            if names is None:
                ordered = sorted(tier0, key=str)
                names = _TIER0_NAMES[graph] = (
                    {s: r for r, s in enumerate(ordered)}, [str(s) for s in ordered])
            rank_of, strs = names
            owner = np.repeat(np.arange(len(rest)), count)[is0]
            rank = np.fromiter(map(rank_of.__getitem__, compress(flat, is0.tolist())),
                               np.int64, count=len(owner))
            order = np.lexsort((rank, owner))
            owner, rank = owner[order], rank[order]
            per = np.bincount(owner, minlength=len(rest))
            col = np.arange(len(owner)) - np.repeat(np.cumsum(per) - per, per)
            table = np.full((len(rest), int(per.max())), -1, dtype=np.int64)
            table[owner, col] = rank
            has = np.flatnonzero(per)
            uniq, inv = np.unique(table[has], axis=0, return_inverse=True)
            made = [("switch", tuple(strs[r] for r in row if r >= 0))
                    for row in uniq.tolist()]
            for j, u in zip(has.tolist(), inv.ravel().tolist(), strict=True):
                keys[rest[j]] = made[u]
            rest = [rest[j] for j in np.flatnonzero(per == 0).tolist()]
    servers = list(map(methodcaller("get", "server", _NONE), map(ds.__getitem__, rest)))
    if all(map(is_, servers, repeat(_NONE))):
        servers = [None] * len(rest)
    else:
        servers = [None if v is _NONE else ("server", v) for v in servers]
    if len(rest) == len(keys):
        return servers
    for i, k in zip(rest, servers, strict=True):
        keys[i] = k
    return keys


def domain_labels(graph: nx.Graph, nodes: Sequence[Hashable],
                  tiers: Mapping[Hashable, int] | None = None) -> np.ndarray:
    """A number per GPU of ``nodes`` naming its scale-up domain (equal numbers: same
    domain): the domains (keys of :func:`domain_key`) numbered per graph in order of first
    appearance, those of nodes not seen before worked out together
    (:func:`_domain_keys`; ``tiers``: the tier of each switch of the graph, if known, as
    :attr:`~netmodel.collectives.routing.Router.tier`)."""
    label = _LABELS.setdefault(graph, {})
    try:  # every node seen before: one dictionary lookup each
        return np.fromiter(map(label.__getitem__, nodes), dtype=np.int64, count=len(nodes))
    except KeyError:
        pass
    missing = list(filterfalse(label.__contains__, dict.fromkeys(nodes)))
    keys = _domain_keys(graph, missing, tiers)
    state = _DOMAIN_NUMBERS.get(graph)
    if state is None:
        state = _DOMAIN_NUMBERS[graph] = [{}, 0]  # numbers of shared keys, numbers given
    numbers, given = state
    shared = np.fromiter(map(is_not, keys, repeat(None)), bool, count=len(keys))
    new = ~shared  # a key of its own: always a new number
    sh = np.flatnonzero(shared)
    if len(sh):
        local: dict = {}
        kid = np.array([local.setdefault(k, len(local)) for k in compress(keys, shared)],
                       dtype=np.int64)
        distinct = list(local)  # in order of first appearance
        known = np.fromiter(map(numbers.get, distinct, repeat(-1)), np.int64,
                            count=len(distinct))
        first = sh[np.unique(kid, return_index=True)[1]]
        new[first[known < 0]] = True
    out = given + np.cumsum(new) - 1
    if len(sh):
        knum = np.where(known >= 0, known, out[first])
        out[sh] = knum[kid]
        numbers.update(zip(distinct, knum.tolist(), strict=True))
    state[1] = given + int(np.count_nonzero(new))
    label.update(zip(missing, out.tolist(), strict=True))
    return np.fromiter(map(label.__getitem__, nodes), dtype=np.int64, count=len(nodes))


_TIER0: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_TIER0_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_DOMAIN_NUMBERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LABELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: The last groups' domain indices per graph (the algorithms of one group ask in turn).
_INDICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _domain_indices(graph, group) -> tuple[np.ndarray, np.ndarray]:
    """:func:`domains` as positions in ``group``: ``(members, sizes)``, the members domain
    by domain (each in group order, domains in order of first member) and the size of each
    domain."""
    memo = _INDICES.setdefault(graph, {})
    key = group if isinstance(group, tuple) else tuple(group)
    hit = memo.get(key)
    if hit is not None:
        return hit
    labels = domain_labels(graph, group)
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))  # by first member
    ids = rank[inv.ravel()]
    members = np.argsort(ids, kind="stable")
    hit = (members, np.bincount(ids, minlength=len(first)))
    if len(memo) >= 8:
        memo.pop(next(iter(memo)))
    memo[key] = hit
    return hit


def rail_table(graph: nx.Graph, group: Sequence[Hashable]) -> np.ndarray | None:
    """The group as a ``(domains, m)`` table of positions in ``group`` (domain by domain,
    each domain's members in group order) when it spans at least two scale-up domains of
    the same size ``m >= 2``: column ``r`` holds the GPUs of position ``r`` in their domains,
    the peers NCCL joins across domains over their own NICs (one rail each); else None."""
    members, sizes = _domain_indices(graph, group)
    if len(sizes) < 2 or sizes[0] < 2 or (sizes != sizes[0]).any():
        return None
    return members.reshape(len(sizes), int(sizes[0]))


def _crossings(graph, group) -> int:
    """Hops of the ring in group order that join two scale-up domains."""
    members, sizes = _domain_indices(graph, group)
    if len(sizes) == len(group):  # every GPU its own domain: every hop
        return len(group)
    labels = domain_labels(graph, group)
    return int(np.count_nonzero(labels != np.roll(labels, -1)))


def _pow2_floor(p: int) -> int:
    return 1 << (p.bit_length() - 1)


def _heap(members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Child -> parent edges of a binary heap over ``members`` (positions in the group)."""
    i = np.arange(1, len(members))
    return members[i], members[(i - 1) // 2]


def _depth(count: int) -> int:
    return count.bit_length() - 1


# ------------------------------------------------------------------ ring family

def _ring(p: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(p)
    return i, (i + 1) % p


def _ring_pairs(group, frac) -> Pairs:
    return Pairs(group, *_ring(len(group)), frac)


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
        crossings = _crossings(graph, group) if p > 1 and graph is not None else 0
        return _ring_pairs(group, 1 / p), max(crossings - 1, 0)
    D, m = table.shape
    nxt = np.roll(table, -1, axis=1)     # next GPU of the domain
    peer = np.roll(table, -1, axis=0)    # same rail, next domain
    live = _live_rails(graph, group, table)
    if live is not None:  # rings only on the rails whose NICs all work (NCCL's re-plan)
        k = int(live.sum())
        src = np.concatenate([table.ravel(), table[:, live].ravel()])
        dst = np.concatenate([nxt.ravel(), peer[:, live].ravel()])
        frac = np.concatenate([np.full(p, 1 / p), np.full(D * k, 1 / (k * p))])
        return Pairs(group, src, dst, frac), D - 1
    src = np.concatenate([table.ravel(), table.ravel()])
    dst = np.concatenate([nxt.ravel(), peer.ravel()])
    frac = np.concatenate([np.full(p, 1 / p), np.full(p, 1 / (m * p))])
    return Pairs(group, src, dst, frac), D - 1


def _uneven_domains(graph, group) -> list[np.ndarray] | None:
    """The group's scale-up domains (positions in ``group``, as :func:`_domain_indices`)
    when there are at least two, of unequal sizes, each of at least 2 GPUs; else None."""
    members, sizes = _domain_indices(graph, group)
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
    members, sizes = _domain_indices(graph, group)
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


def _live_rails(graph, group, table: np.ndarray) -> np.ndarray | None:
    """Which rails (columns of ``table``) have a port into the scale-out network (a switch
    of tier >= 1) at every GPU, when some but not all do; else None (every rail, or a
    fabric whose domains meet otherwise). A GPU whose NIC link or rail leaf failed leaves
    its rail dead: NCCL, started again on the degraded fabric, lays its channels over the
    NICs that remain (each ring on ``1/k`` of the data over ``k`` rails) rather than
    sending one rail's ring through a borrowed NIC twice loaded."""
    adj, data = graph._adj, graph._node

    def port(g) -> bool:
        return any(data[v].get("kind") == "switch" and data[v].get("tier", 0) >= 1
                   for v in adj[g])

    ok = np.array([[port(group[i]) for i in row] for row in table.tolist()], dtype=bool)
    live = ok.all(axis=0)
    if live.all() or not live.any():
        return None
    return live


def _ring_latencies(p: int, inter: int) -> tuple[int, int]:
    """NCCL's latency payments of one ring pass of ``p - 1`` steps, ``inter`` of which cross
    domains (tuning.cc: ``(nsteps - nInterSteps) * intraLat + nInterSteps * interLat``)."""
    return (p - 1 - inter, inter)


def ring_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    t, inter = _multi_ring(group, graph)
    lat = _ring_latencies(p, inter)
    return [Step("reduce-scatter", t, p - 1, reduce=1 / p, latencies=lat),
            Step("all-gather", t, p - 1, latencies=lat)]


def ring_reduce_scatter(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    t, inter = _multi_ring(group, graph)
    return [Step("reduce-scatter", t, p - 1, reduce=1 / p,
                 latencies=_ring_latencies(p, inter))]


def ring_all_gather(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    t, inter = _multi_ring(group, graph)
    return [Step("all-gather", t, p - 1, latencies=_ring_latencies(p, inter))]


def _bidirectional_pairs(group, frac) -> Pairs:
    """Both directions of the ring at once, each carrying ``frac`` (two counter-rotating
    rings, each on half of the data)."""
    p = len(group)
    if p == 2:
        return _ring_pairs(group, 2 * frac)
    a, b = _ring(p)
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


# ------------------------------------------------------------------ trees

def _double_tree(group, leaders: np.ndarray, frac: float):
    """NCCL's double binary tree over ``leaders`` (positions in ``group``): child -> parent
    edges of both trees, each tree on half of ``frac``."""
    src, dst = [], []
    for order in (leaders, leaders[::-1]):
        a, b = _heap(order)
        src.append(a)
        dst.append(b)
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
        src = [table.ravel()]
        dst = [nxt.ravel()]
        frac = [np.full(D * m, (m - 1) / m)]  # every edge but c -> c+1, in m - 1 channels
        for c in range(m):
            a, b, f = _double_tree(group, table[:, c], 1 / m)
            src.append(a)
            dst.append(b)
            frac.append(f)
        chain, depth = m - 1, _depth(D)
    else:
        members, sizes = _domain_indices(graph, group)
        starts = np.cumsum(sizes) - sizes
        inner = np.ones(len(members), dtype=bool)
        inner[starts] = False  # chain towards each domain's first GPU
        src, dst = [members[inner]], [members[np.flatnonzero(inner) - 1]]
        frac = [np.ones(len(src[0]))]
        leaders = members[starts]
        if len(leaders) > 1:
            a, b, f = _double_tree(group, leaders, 1.0)
            src.append(a)
            dst.append(b)
            frac.append(f)
        chain, depth = int(sizes.max()) - 1, _depth(len(leaders))
    up = Pairs(group, np.concatenate(src), np.concatenate(dst), np.concatenate(frac))
    # NCCL's latency: 2 ((m - 1) intraLat + log2(nodes) interLat)
    lat = (chain, depth) if depth else None
    return [Step("reduce (pipelined)", up, stages=chain + depth, reduce=up.incoming(),
                 latencies=lat),
            Step("broadcast (pipelined)", up.reversed(), stages=chain + depth, latencies=lat)]


def tree_broadcast(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    a, b = _heap(np.arange(len(group)))
    return [Step("broadcast (pipelined)", Pairs(group, b, a, 1.0), stages=_depth(len(group)))]


def tree_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    a, b = _heap(np.arange(len(group)))
    up = Pairs(group, a, b, 1.0)
    return [Step("reduce (pipelined)", up, stages=_depth(len(group)), reduce=up.incoming())]


# ------------------------------------------------------------------ recursive algorithms

def _fold(group):
    """The power-of-two core size and the (extra -> partner) positions."""
    p = len(group)
    q = _pow2_floor(p)
    return q, np.arange(q, p), np.arange(p - q)


def _exchange(group, q, distance, frac) -> Pairs:
    i = np.arange(q)
    return Pairs(group, i, i ^ distance, frac)


def halving_doubling_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    q, extra, partner = _fold(group)
    steps = []
    if len(extra):
        steps.append(Step("fold in", Pairs(group, extra, partner, 1.0), reduce=1.0))
    dist, frac = q // 2, 0.5
    while dist >= 1:
        steps.append(Step(f"halving d={dist}", _exchange(group, q, dist, frac), reduce=frac))
        dist, frac = dist // 2, frac / 2
    dist, frac = 1, 1 / q
    while dist < q:
        steps.append(Step(f"doubling d={dist}", _exchange(group, q, dist, frac)))
        dist, frac = dist * 2, frac * 2
    if len(extra):
        steps.append(Step("fold out", Pairs(group, partner, extra, 1.0)))
    return steps


def _need_pow2(group, what):
    p = len(group)
    if p & (p - 1):
        raise NotApplicable(f"{what} needs a power-of-two group, got {p} GPUs")


def halving_reduce_scatter(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    _need_pow2(group, "recursive halving")
    q = len(group)
    steps, dist, frac = [], q // 2, 0.5
    while dist >= 1:
        steps.append(Step(f"halving d={dist}", _exchange(group, q, dist, frac), reduce=frac))
        dist, frac = dist // 2, frac / 2
    return steps


def doubling_all_gather(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    _need_pow2(group, "recursive doubling")
    q = len(group)
    steps, dist, frac = [], 1, 1 / q
    while dist < q:
        steps.append(Step(f"doubling d={dist}", _exchange(group, q, dist, frac)))
        dist, frac = dist * 2, frac * 2
    return steps


def recursive_doubling_all_reduce(group: tuple[Hashable, ...],
                                  graph: nx.Graph | None) -> list[Step]:
    q, extra, partner = _fold(group)
    steps = []
    if len(extra):
        steps.append(Step("fold in", Pairs(group, extra, partner, 1.0), reduce=1.0))
    dist = 1
    while dist < q:
        steps.append(Step(f"exchange d={dist}", _exchange(group, q, dist, 1.0), reduce=1.0))
        dist *= 2
    if len(extra):
        steps.append(Step("fold out", Pairs(group, partner, extra, 1.0)))
    return steps


# ------------------------------------------------------------------ direct

def quadratic(algorithm: str, op: str) -> bool:
    """Whether ``algorithm`` routes ``p (p - 1)`` transfers for ``op`` on ``p`` GPUs (every
    GPU to every other), the work that is counted and bounded before it is built.

    >>> quadratic("direct", "all-reduce"), quadratic("direct", "broadcast")
    (True, False)
    """
    return (algorithm == "direct" and op in ("all-reduce", "reduce-scatter", "all-gather",
                                             "all-to-all")) \
        or (algorithm == "pairwise" and op == "all-to-all") \
        or (algorithm == "two-shot" and op == "all-reduce")


def transfer_count(algorithm: str, op: str, p: int) -> int:
    """Transfers ``algorithm`` routes for ``op`` on ``p`` GPUs, counted without building
    them: exact, ``p (p - 1)``, for the :func:`quadratic` ones, else an upper bound of
    ``4 p log2 p`` (steps times transfers of the logarithmic algorithms).

    >>> transfer_count("direct", "all-reduce", 4), transfer_count("pairwise", "all-to-all", 4)
    (12, 12)
    """
    if quadratic(algorithm, op):
        return p * (p - 1)
    return 4 * p * max(1, p.bit_length())


def _all_pairs(group, frac) -> Pairs:
    p = len(group)
    src = np.repeat(np.arange(p), p - 1)
    j = np.tile(np.arange(p - 1), p)
    return Pairs(group, src, j + (j >= src), frac)  # every b != a, in order


def direct_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    return [Step("one-shot exchange", _all_pairs(group, 1.0), reduce=p - 1.0)]


def _pairwise_linked(graph, group) -> None:
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
    _pairwise_linked(graph, group)
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
    return [Step("exchange", _all_pairs(group, 1 / len(group)))]


def direct_broadcast(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    i = np.arange(1, len(group))
    return [Step("root sends", Pairs(group, np.zeros_like(i), i, 1.0))]


def direct_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    i = np.arange(1, len(group))
    return [Step("all send to root", Pairs(group, i, np.zeros_like(i), 1.0),
                 reduce=len(group) - 1.0)]


def direct_send_recv(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    return [Step("send-recv", _ring_pairs(group, 1.0))]


def pairwise_all_to_all(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    p = len(group)
    i = np.arange(p)
    return [Step(f"shift {k}", Pairs(group, i, (i + k) % p, 1 / p)) for k in range(1, p)]


# ------------------------------------------------------------------ torus

def _torus_grid(graph, group) -> tuple[list[int], np.ndarray]:
    """The sides of the torus dimensions the group spans and, for each, the group
    positions of every member's ``-1`` and ``+1`` neighbours: ``(sides, nbr)`` with
    ``nbr[d, 0|1]`` arrays of length ``p``. The fabric must be a torus as the ``torus``
    builder makes it (graph attribute ``dims``, GPUs ``gpu0 ...`` numbered row-major, last
    side fastest) and the group a sub-torus: in each dimension either one coordinate or all
    of them, at least two dimensions whole. NotApplicable otherwise."""
    dims = None if graph is None else graph.graph.get("dims")
    if not dims:
        raise NotApplicable("torus needs a torus fabric (its dims, as the torus builder "
                            "records them)")
    try:
        sides = [int(x) for x in str(dims).split("x")]
    except ValueError:
        raise NotApplicable(f"torus cannot read the fabric's dims {dims!r}") from None
    total = int(np.prod(sides))
    if graph.graph.get("gpus") != total:
        raise NotApplicable(f"torus needs the fabric's {graph.graph.get('gpus')} GPUs to "
                            f"be the {dims} torus's {total}")
    idx = []
    for g in group:
        name = str(g)
        i = int(name[3:]) if name.startswith("gpu") and name[3:].isdigit() else -1
        if not 0 <= i < total:
            raise NotApplicable(f"torus needs GPUs gpu0 to gpu{total - 1}, got {g!r}")
        idx.append(i)
    index = np.array(idx, dtype=np.int64)
    strides = np.cumprod([1, *sides[:0:-1]])[::-1]
    coords = (index[:, None] // strides) % np.array(sides)
    active = []
    for d, side in enumerate(sides):
        seen = len(unique(coords[:, d]))
        if seen == side:
            active.append(d)
        elif seen != 1:
            raise NotApplicable(f"torus needs the group to span each dimension of the "
                                f"{dims} torus wholly or at one coordinate")
    p = len(group)
    if len(active) < 2 or int(np.prod([sides[d] for d in active])) != p:
        raise NotApplicable("torus needs the group to be a sub-torus of at least two whole "
                            "dimensions (on one, bidirectional-ring is the same)")
    pos = np.full(total, -1, dtype=np.int64)
    pos[index] = np.arange(p)
    nbr = np.empty((len(active), 2, p), dtype=np.int64)
    for a, d in enumerate(active):
        for b, step in enumerate((-1, 1)):
            shift = ((coords[:, d] + step) % sides[d] - coords[:, d]) * strides[d]
            nbr[a, b] = pos[index + shift]
    return [sides[d] for d in active], nbr


def _torus_rates(graph, group, sides, nbr) -> list[float]:
    """Bytes/s a GPU sends along each of the group's torus dimensions, half each way round:
    twice its slower port there (a side of 2: the one edge to its one neighbour), the most
    any member has (a lost cable leaves the schedule as the design set it)."""
    rates = []
    for a, side in enumerate(sides):
        best = 0.0
        for i, g in enumerate(group):
            ends = [group[nbr[a, 1, i]]] if side == 2 else \
                [group[nbr[a, 0, i]], group[nbr[a, 1, i]]]
            bws = [graph.edges[g, e]["bandwidth"] if graph.has_edge(g, e) else 0.0
                   for e in ends]
            best = max(best, bws[0] if side == 2 else 2 * min(bws))
        rates.append(float(best))
    return rates


def _torus_weights(sides: Sequence[int], rates: Sequence[float]) -> list[float]:
    """The chunks' shares of the data, for the least total of the reduce-scatter's phases
    (each phase lasts as long as its slowest chunk).

    Chunk ``j`` is on dimension ``a = j + t`` (mod ``k``) in phase ``t``, having been cut
    by the sides before: it takes ``w_j c[j, t]`` per byte of ``n``, ``c[j, t] =
    (s_a - 1)/s_a / (s_j ... s_{a-1}) / r_a`` (``r_a`` a GPU's rate along ``a``,
    :func:`_torus_rates`). The first phase, which moves most, ends on every dimension at
    once with ``w_j`` proportional to ``r_j s_j / (s_j - 1)``: it lasts
    ``n / sum_j r_j s_j/(s_j - 1)``. Equal sides and rates keep ``1/k`` each. That is the
    least total wherever no side is 2 (checked against a linear program for every 2D and
    3D torus of sides 3 to 11); a side of 2 halves its chunk only, so the next phase carries
    that chunk's half: there the least total is found exactly among the vertices of the
    phases' pieces (``w_i c[i, t] = w_j c[j, t]`` or ``w_j = 0``, ``k - 1`` of them at a
    time; up to 4 dimensions), a vertex taken over the first-phase weights only where it is
    faster (2x3x4: ``(27, 36, 32)/95`` against ``(12, 9, 8)/29``)."""
    k = len(sides)
    x = [r * s / (s - 1) for r, s in zip(rates, sides, strict=True)]
    if all(v == x[0] for v in x) or min(x) <= 0:
        return [1 / k] * k
    cost = np.array([[(sides[(j + t) % k] - 1) / sides[(j + t) % k]
                      / float(np.prod([sides[(j + u) % k] for u in range(t)]))
                      / rates[(j + t) % k] for t in range(k)] for j in range(k)])

    def total(w):
        return float((np.asarray(w)[:, None] * cost).max(axis=0).sum())

    best = [v / sum(x) for v in x]
    least = total(best)
    if k > 4:
        return best
    planes = [np.eye(k)[j] for j in range(k)]
    for t in range(k):
        for i in range(k):
            for j in range(i + 1, k):
                row = np.zeros(k)
                row[i], row[j] = cost[i, t], -cost[j, t]
                planes.append(row / np.abs(row).max())
    rhs = np.zeros(k)
    rhs[0] = 1.0
    for chosen in combinations(planes, k - 1):
        a = np.vstack([np.ones(k), *chosen])
        if abs(np.linalg.det(a)) < 1e-12:
            continue
        w = np.linalg.solve(a, rhs)
        if w.min() < -1e-12:
            continue
        w = np.clip(w, 0.0, None)
        w /= w.sum()
        if (f := total(w)) < least * (1 - 1e-12):
            best, least = w.tolist(), f
    return best


def _torus_phases(group: tuple[Hashable, ...], graph: nx.Graph | None
                  ) -> tuple[list[tuple[Pairs, float]], int]:
    """The reduce-scatter phases of :func:`torus_all_reduce` as ``(transfers, reduced)``,
    one per dimension, each to be repeated ``R = max(side) - 1`` times, and ``R``."""
    sides, nbr = _torus_grid(graph, group)
    k, p = len(sides), len(group)
    weights = _torus_weights(sides, _torus_rates(graph, group, sides, nbr))
    rounds = max(sides) - 1
    me = np.arange(p)
    phases = []
    for t in range(k):
        src, dst, frac, reduce = [], [], [], 0.0
        for j in range(k):
            a = (j + t) % k
            chunk = weights[j] / float(np.prod([sides[(j + u) % k] for u in range(t)]))
            side = sides[a]
            sent = chunk * (side - 1) / side / rounds   # per GPU per step
            reduce += sent
            if side == 2:  # both ways round are the one neighbour
                src.append(me)
                dst.append(nbr[a, 1])
                frac.append(np.full(p, sent))
            else:
                src += [me, me]
                dst += [nbr[a, 0], nbr[a, 1]]
                frac += [np.full(p, sent / 2)] * 2
        phases.append((Pairs(group, np.concatenate(src), np.concatenate(dst),
                             np.concatenate(frac)), reduce))
    return phases, rounds


def torus_reduce_scatter(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """The reduce-scatter half of :func:`torus_all_reduce`: ``k`` phases of ``max(side) - 1``
    steps, chunk ``j`` reduce-scattering along dimensions ``j, j+1, ...``; equal sides
    ``s``, ports of ``b``: ``k (s-1) alpha + (p-1)/p n / (2 k b)``."""
    phases, rounds = _torus_phases(group, graph)
    return [Step(f"reduce-scatter phase {t + 1}/{len(phases)}", pairs, rounds, reduce=reduce)
            for t, (pairs, reduce) in enumerate(phases)]


def torus_all_gather(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """The all-gather half of :func:`torus_all_reduce`: the reduce-scatter's phases in
    reverse, nothing reduced; equal sides ``s``, ports of ``b``:
    ``k (s-1) alpha + (p-1)/p n / (2 k b)``."""
    phases, rounds = _torus_phases(group, graph)
    k = len(phases)
    return [Step(f"all-gather phase {t + 1}/{k}", phases[k - 1 - t][0], rounds)
            for t in range(k)]


def torus_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """Bidirectional rings along each dimension of a ``k``-dimensional torus with every
    port busy: the data in ``k`` chunks, chunk ``j`` reduce-scattering along dimensions
    ``j, j+1, ...`` (mod ``k``) in turn, so that in each phase every dimension carries one
    chunk, half each way round its rings; then all-gathering back in reverse
    (:func:`torus_reduce_scatter`, :func:`torus_all_gather`). Each phase is
    one step repeated ``R = max(side) - 1`` times, its chunks' bytes spread over the ``R``
    (a shorter ring's finish earlier does not shorten the phase). Equal sides ``s``:
    ``2 k (s-1) alpha + 2 (p-1)/p n / (2 k b)``, ``b`` a port's bandwidth, ``2 k b`` what
    a GPU injects: half of one bidirectional ring's transfer time on a 2D torus (Google's
    ParaGraph torus-2d reduce-scatter and all-gather, paragraph/translation/reducescatter/
    torus_2d_reducescatter_translator.cc: one stage per dimension, each running every
    dimension at once on ``1/k`` of the data). Unequal sides weight the chunks
    (:func:`_torus_weights`) so that the first phase ends on every dimension at once."""
    phases, rounds = _torus_phases(group, graph)
    k = len(phases)
    steps = [Step(f"reduce-scatter phase {t + 1}/{k}", pairs, rounds, reduce=reduce)
             for t, (pairs, reduce) in enumerate(phases)]
    steps += [Step(f"all-gather phase {t + 1}/{k}", phases[k - 1 - t][0], rounds)
              for t in range(k)]
    return steps


# ------------------------------------------------------------------ hierarchical

def _rails_or_refuse(graph, group, what: str) -> np.ndarray:
    members, sizes = _domain_indices(graph, group)
    if len(sizes) < 2:
        raise NotApplicable(f"{what} needs GPUs in at least two scale-up domains")
    if sizes[0] < 2:
        raise NotApplicable(f"{what} needs at least two GPUs per scale-up domain")
    if (sizes != sizes[0]).any():
        raise NotApplicable(f"{what} needs the same number of GPUs in every domain, got "
                            + "/".join(str(x) for x in sizes.tolist()))
    return members.reshape(len(sizes), int(sizes[0]))


def _in_domain_planes(graph, group, table):
    doms = [[group[i] for i in row] for row in table.tolist()]
    return doms, domain_planes(graph, doms)


def hierarchical_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    table = _rails_or_refuse(graph, group, "hierarchical")
    n_dom, m = table.shape
    doms, planes = _in_domain_planes(graph, group, table)
    a, b = _ring(n_dom)
    across = Pairs(group, table[a, :].T.ravel(), table[b, :].T.ravel(), 1 / (m * n_dom))
    out_rs = Step("reduce-scatter across", across, n_dom - 1, reduce=1 / (m * n_dom),
                  latencies=(0, n_dom - 1), pipeline=1, heads=m)
    out_ag = Step("all-gather across", across, n_dom - 1, latencies=(0, n_dom - 1),
                  pipeline=1, heads=m)
    across_bound = union_of("across together", [out_rs, out_ag], pipeline=1, bound=2,
                            heads=m)
    if planes is not None:  # the domains' switches reduce: NVLS inside
        rs, ag, inside = nvls_phases(graph, doms, planes)
        return [rs, out_rs, out_ag, ag, inside, across_bound]
    a, b = _ring(m)
    inner = Pairs(group, table[:, a].ravel(), table[:, b].ravel(), 1 / m)
    rs = Step("reduce-scatter in domain", inner, m - 1, reduce=1 / m, latencies=(m - 1, 0),
              pipeline=1, heads=m)
    ag = Step("all-gather in domain", inner, m - 1, latencies=(m - 1, 0), pipeline=1,
              heads=m)
    inside = union_of("in-domain phases together", [rs, ag], pipeline=1, bound=1, heads=m)
    return [rs, out_rs, out_ag, ag, inside, across_bound]


#: The most NVLS heads (GPUs whose NIC carries NVLSTree's tree across domains) NCCL gives
#: one domain: ``NCCL_MAX_NVLS_ARITY`` is 32 in src/include/device.h (NCCL > 2.20; 8
#: before), and src/graph/search.cc caps the NVLS graph at it ("NVLS and COLLNET_DIRECT
#: search must have ngpus heads at most": ``maxChannels = min(NCCL_MAX_NVLS_ARITY,
#: ngpus)``). With MNNVL (an NVL72 rack) the whole clique is one node (topo.cc fuses the
#: clique's topology), so 72 GPUs still get at most 32 heads.
NVLS_MAX_HEADS = 32


def in_network_tree_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """NCCL's NVLSTree: in-switch reduce-scatter inside each domain, one double binary tree
    per head across the domains, in-switch all-gather. The heads are the first
    ``h = min(m, NVLS_MAX_HEADS)`` rails of each domain, each tree on ``1/h`` of the data."""
    if not has_in_network(graph):
        raise NotApplicable("no switch in the fabric has in_network_reduction")
    table = _rails_or_refuse(graph, group, "in-network-tree")
    doms, planes = _in_domain_planes(graph, group, table)
    if planes is None:
        raise NotApplicable("in-network-tree needs the switches of every scale-up domain to "
                            "reduce (in_network_reduction), each domain its own")
    n_dom, m = table.shape
    rs, ag, inside = nvls_phases(graph, doms, planes)
    h = min(m, NVLS_MAX_HEADS)
    src, dst, frac = [], [], []
    for c in range(h):
        a, b, f = _double_tree(group, table[:, c], 1 / h)
        src.append(a)
        dst.append(b)
        frac.append(f)
    up = Pairs(group, np.concatenate(src), np.concatenate(dst), np.concatenate(frac))
    depth = _depth(n_dom)
    tree_up = Step("reduce across (tree)", up, stages=depth, reduce=up.incoming(),
                   latencies=(0, depth), pipeline=1, bound=2, heads=h)
    tree_down = Step("broadcast across (tree)", up.reversed(), stages=depth,
                     latencies=(0, depth), pipeline=1, bound=2, heads=h)
    return [rs, tree_up, tree_down, ag, inside]


def _collnet(kind: str) -> Generator:
    def generate_collnet(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
        return collnet_steps(kind, group, graph,
                             _rails_or_refuse(graph, group, f"collnet-{kind}"))
    return generate_collnet


# ------------------------------------------------------------------ registry

def _innet(op):
    return lambda group, graph: in_network_steps(op, group, graph,
                                                 lambda: rail_table(graph, group))


Generator = Callable[[tuple[Hashable, ...], "nx.Graph | None"], list[Step]]

#: algorithm -> op -> generator(group, graph) -> list[Step]
ALGORITHMS: dict[str, dict[str, Generator]] = {
    "ring": {"all-reduce": ring_all_reduce, "reduce-scatter": ring_reduce_scatter,
             "all-gather": ring_all_gather, "broadcast": ring_broadcast, "reduce": ring_reduce},
    "bidirectional-ring": {"all-reduce": bidirectional_ring_all_reduce,
                           "reduce-scatter": bidirectional_ring_reduce_scatter,
                           "all-gather": bidirectional_ring_all_gather},
    "tree": {"all-reduce": tree_all_reduce, "broadcast": tree_broadcast, "reduce": tree_reduce},
    "halving-doubling": {"all-reduce": halving_doubling_all_reduce,
                         "reduce-scatter": halving_reduce_scatter,
                         "all-gather": doubling_all_gather},
    "recursive-doubling": {"all-reduce": recursive_doubling_all_reduce},
    "direct": {"all-reduce": direct_all_reduce, "reduce-scatter": direct_reduce_scatter,
               "all-gather": direct_all_gather, "all-to-all": direct_all_to_all,
               "broadcast": direct_broadcast, "reduce": direct_reduce,
               "send-recv": direct_send_recv},
    "two-shot": {"all-reduce": two_shot_all_reduce},
    "torus": {"all-reduce": torus_all_reduce, "reduce-scatter": torus_reduce_scatter,
              "all-gather": torus_all_gather},
    "pairwise": {"all-to-all": pairwise_all_to_all},
    "hierarchical": {"all-reduce": hierarchical_all_reduce},
    "in-network": {op: _innet(op) for op in ("all-reduce", "reduce-scatter", "all-gather",
                                             "broadcast", "reduce")},
    "in-network-tree": {"all-reduce": in_network_tree_all_reduce},
    "collnet-direct": {"all-reduce": _collnet("direct")},
    "collnet-chain": {"all-reduce": _collnet("chain")},
}

#: op -> the algorithms NCCL itself chooses from for it: use these to compare with
#: nccl-tests. NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel, 2.23+) skips every
#: algorithm but Ring for Broadcast and Reduce, and all but Ring, NVLS, CollNetDirect (and
#: PAT, one GPU per node, not modelled) for ReduceScatter and AllGather; AllReduce has Ring,
#: Tree, NVLS, NVLS + CollNet, NVLSTree, CollNetDirect and CollNetChain (src/enqueue.cc,
#: updateCollCostTable: the two CollNets wherever CollNet is supported, NVLS on or off; the
#: model's CollNet, a switch above the domains that reduces, is ``sharp=true``). The model's
#: CollNetDirect is all-reduce only (NCCL's reduce-scatter and all-gather CollNetDirect, one
#: GPU per NIC, is not modelled). All-to-all and send-recv are no NCCL collective:
#: nccl-tests' alltoall_perf and sendrecv_perf post every ncclSend/ncclRecv in one group
#: (NVIDIA/nccl-tests src/alltoall.cu, src/sendrecv.cu), which run at once: ``direct``.
NCCL_OPS: dict[str, tuple[str, ...]] = {
    "all-reduce": ("ring", "tree", "in-network", "in-network-tree", "collnet-direct",
                   "collnet-chain"),
    "reduce-scatter": ("ring", "in-network"),
    "all-gather": ("ring", "in-network"),
    "broadcast": ("ring",),
    "reduce": ("ring",),
    "all-to-all": ("direct",),
    "send-recv": ("direct",),
}

#: Every algorithm NCCL has for some op (:data:`NCCL_OPS`).
NCCL_ALGORITHMS = tuple(dict.fromkeys(a for names in NCCL_OPS.values() for a in names))

assert all(op in OPERATIONS for table in ALGORITHMS.values() for op in table)
assert set(NCCL_OPS) == set(OPERATIONS)
assert all(op in ALGORITHMS[a] for op, names in NCCL_OPS.items() for a in names)


def algorithms_for(op: str) -> tuple[str, ...]:
    """Names of the algorithms that implement ``op``."""
    return tuple(name for name, table in ALGORITHMS.items() if op in table)


#: (algorithm, op) -> a check of the group and fabric, raising :class:`NotApplicable`,
#: cheaper than building the steps: run before the work of a :func:`quadratic` algorithm is
#: counted (64 GPUs of a fat tree are no full mesh, whatever two-shot would route there).
PRECHECKS: dict[tuple[str, str], Callable[..., None]] = {
    ("two-shot", "all-reduce"): lambda group, graph: _pairwise_linked(graph, group),
}


def precheck(algorithm: str, op: str, group: Iterable[Hashable], graph: nx.Graph | None
             ) -> None:
    """Raise :class:`NotApplicable` where a cheap look at ``group`` and ``graph`` rules
    ``algorithm`` out for ``op`` (see :data:`PRECHECKS`); else nothing."""
    check = PRECHECKS.get((algorithm, op))
    if check is not None:
        check(tuple(group), graph)


def generate(algorithm: str, op: str, group: Iterable[Hashable], graph: nx.Graph | None
             ) -> list[Step]:
    """The steps of ``algorithm`` for ``op`` over ``group`` (>= 2 GPUs) on ``graph``.

    Raises :class:`~compute.errors.UserError` for an unknown algorithm or one that does not
    implement ``op``, :class:`NotApplicable` when the fabric or group rules it out.
    """
    if algorithm not in ALGORITHMS:
        raise UserError(f"unknown algorithm {describe(algorithm)}; known: {known(ALGORITHMS)}")
    table = ALGORITHMS[algorithm]
    if op not in table:
        raise UserError(f"algorithm {algorithm!r} does not implement {op!r}; algorithms for "
                        f"{op!r}: {known(algorithms_for(op))}")
    return table[op](tuple(group), graph)
