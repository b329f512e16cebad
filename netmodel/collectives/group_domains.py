"""Where a group's GPUs sit: their scale-up domains, numbered per graph, and the rails that
join equal domains (the structure every collective algorithm reads from the fabric).

A GPU's domain is its ``group`` label, else the tier-0 switches it is wired to, else its
``server`` label, else itself (:func:`domain_key`); :func:`domain_labels` numbers the
domains of many GPUs at once, cached per graph, and :func:`rail_table` lays a group out as
``(domains, m)`` positions, one column per rail.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import chain, compress, filterfalse, repeat
from operator import is_, is_not, methodcaller
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["domain_key", "domain_labels", "domains", "nccl_nodes", "rail_table"]


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


def domain_indices(graph, group) -> tuple[np.ndarray, np.ndarray]:
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
    members, sizes = domain_indices(graph, group)
    if len(sizes) < 2 or sizes[0] < 2 or (sizes != sizes[0]).any():
        return None
    return members.reshape(len(sizes), int(sizes[0]))


def domain_crossings(graph, group) -> int:
    """Hops of the ring in group order that join two scale-up domains."""
    members, sizes = domain_indices(graph, group)
    if len(sizes) == len(group):  # every GPU its own domain: every hop
        return len(group)
    labels = domain_labels(graph, group)
    return int(np.count_nonzero(labels != np.roll(labels, -1)))


def nccl_nodes(graph, group) -> int:
    """NCCL's nodes of the group (a step's ``ring_nodes``, a tree's ``tree_nodes`` with
    ``tree_ranks``): its ``D >= 2`` scale-up domains where each holds at least 2 of its GPUs
    (servers whose GPUs NVLink joins, which NCCL's rings and trees cross a rail at a time);
    0 inside one domain, and across domains of one GPU each (a torus, GPUs on circuits: no
    node of NCCL's)."""
    if graph is None or len(group) < 4:
        return 0
    _, sizes = domain_indices(graph, group)
    return len(sizes) if len(sizes) >= 2 and sizes.min() >= 2 else 0
