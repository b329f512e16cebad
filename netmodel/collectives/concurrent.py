"""Many collectives at once on one fabric: every TP group of a cluster in the same layer.

All groups run the same operation and size at the same time, step by step. Links are
shared fairly: during a step, a link carries the traffic of every group routed across it
and drains it at its achievable rate, so a group's step lasts until its most loaded link
(counting everyone's bytes on it) has drained. Groups of one size and algorithm have the
same steps and run in lockstep (step ``i`` of every group beside step ``i`` of the others);
groups of different sizes or algorithms share by time (:func:`_timed`: a link carries a
group's bytes while that group's step runs, not on every repetition of another's step
``i``), unless some group runs a pipeline (its phases overlap: lockstep then). Each group's
slowdown is its time together over its time alone.

:func:`concurrent_cost` (``netmodel collective --all-groups``) lets each group choose its
own (algorithm, protocol) per size, the fastest for it alone over every candidate that runs
on it, as NCCL's communicators tune apart (each by its own topology and size, knowing
nothing of the others' traffic): groups of different shapes may run different algorithms
(in-network inside a scale-up domain beside ring across two), their steps then routed
together, step ``i`` of each group's own algorithm beside step ``i`` of every other's.
Alone is each group's own best; slowdown its time together over that. Where every group
runs one algorithm (groups of one shape: the usual case), its loads are those of that
algorithm costed for all groups at once, reused between sizes and ops.
:func:`concurrent_own` (the fabric search's ``instances = "all"``) compiles that makespan
once for any sizes (:func:`concurrent_own_makespan`). :func:`concurrent_linear` gives the
lines of one choice shared by all groups per size, and :func:`concurrent_makespan` the
(algorithm, protocol), among those that run on every group, with the smallest makespan.

>>> import networkx as nx
>>> from netmodel.collectives.calibration import Calibration
>>> from netmodel.collectives.model import FabricCostModel
>>> g = nx.Graph(name="two leaves", spec="", gpus=4)
>>> for s in ("leaf0", "leaf1"):
...     g.add_node(s, kind="switch", tier=1, radix=4, latency=0.0, in_network_reduction=False)
>>> g.add_node("spine", kind="switch", tier=2, radix=2, latency=0.0, in_network_reduction=False)
>>> for i in range(4):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", f"leaf{i % 2}", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
>>> for s in ("leaf0", "leaf1"):
...     g.add_edge(s, "spine", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
>>> m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
>>> r = concurrent_cost(m, [("gpu0", "gpu1"), ("gpu2", "gpu3")], "send-recv", 1e9)
>>> r.alone[:, 0].tolist(), r.time[:, 0].tolist(), r.slowdown[:, 0].tolist()
([1.0, 1.0], [2.0, 2.0], [2.0, 2.0])
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from compute.comm import check_op
from compute.errors import UserError
from compute.validate import is_whole
from netmodel.collectives.algorithms import (
    PRECHECKS,
    NotApplicable,
    Pairs,
    generate,
    precheck,
)
from netmodel.collectives.cost import (
    SEND_RECV,
    GroupCut,
    combine,
    group_nic,
    p2p_size_range,
    set_step,
    step_protocols,
    step_shape,
    step_table,
)
from netmodel.collectives.in_network import has_in_network
from netmodel.collectives.model import FabricCostModel, check_sizes
from netmodel.collectives.steps import unique

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    #: Groups: explicit GPU lists, or an int size cutting the fabric into groups.
    Groups = int | Iterable[Iterable[Hashable]]

__all__ = ["ConcurrentResult", "concurrent_cost", "concurrent_linear", "concurrent_makespan",
           "concurrent_own", "concurrent_own_makespan"]


@dataclass(frozen=True)
class ConcurrentResult:
    """Times of many groups running one collective together.

    Attributes
    ----------
    op : str
    groups : tuple of tuple
    nbytes : numpy.ndarray
        Message sizes (bytes), shape ``(S,)``.
    algorithm, protocol : tuple of str
        The choice of the slowest group per size (the group whose time is the makespan).
    time : numpy.ndarray
        Seconds together, shape ``(G, S)``: each group running its own choice
        (``algorithms``, ``protocols``) while every other group runs its own.
    alone : numpy.ndarray
        Seconds alone, shape ``(G, S)``: each group's own best, over every algorithm that
        runs on it (two-shot on a Lite package's mesh, in-network within a scale-up domain
        included where the group allows them, whatever the other groups allow).
    hotspots : tuple
        The most loaded directed links ``(u, v)`` at the largest size (at most five),
        with the number of groups sharing each: ``((u, v), groups)``.
    algorithms, protocols : numpy.ndarray
        Each group's own choice per size, shape ``(G, S)`` (str): the (algorithm,
        protocol) fastest for it alone, as NCCL's communicators tune apart.
    """

    op: str
    groups: tuple[tuple[Hashable, ...], ...]
    nbytes: np.ndarray
    algorithm: tuple[str, ...]
    protocol: tuple[str, ...]
    time: np.ndarray
    alone: np.ndarray
    hotspots: tuple[tuple[tuple[Hashable, Hashable], int], ...]
    algorithms: np.ndarray
    protocols: np.ndarray

    @property
    def slowdown(self) -> np.ndarray:
        """Time together over time alone, shape ``(G, S)`` (>= 1)."""
        return self.time / self.alone

    @property
    def makespan(self) -> np.ndarray:
        """The slowest group's seconds per size, shape ``(S,)``."""
        return self.time.max(axis=0)


#: Algorithms whose steps depend on the fabric (scale-up domains), not only on the group's
#: size: their groups share steps only when their domains fall alike.
_GRAPH_AWARE = ("ring", "tree")
#: Algorithms whose steps may name switches (in-switch phases): one class per group.
_OWN_STEPS = ("in-network", "in-network-tree", "hierarchical", "collnet-direct",
              "collnet-chain")


class _Groups:
    """The groups of a concurrent costing, prepared once for every algorithm: in ring order,
    as node numbers, and sorted into classes that share steps."""

    def __init__(self, model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...],
                 hot: bool = True) -> None:
        # the model's graph and switch tiers, not the model: a model keeps its groups
        # (:func:`_prepared`), which then hold no reference back to it
        self.graph, self.tiers = model.graph, model.router.tier
        self.ordered = [model._ordered(g) for g in groups]
        sizes = np.fromiter(map(len, self.ordered), np.int64, count=len(self.ordered))
        flat = model.router.node_numbers([x for g in self.ordered for x in g])
        #: Every group's node numbers one after the other, and where each group starts.
        self.flat, self.start = flat, np.cumsum(sizes) - sizes
        self.sizes = sizes
        #: Whether no GPU is in two groups.
        ranked = np.sort(flat)
        self.disjoint = not bool((ranked[1:] == ranked[:-1]).any())
        #: Names this set of groups in the router's cache of routed patterns.
        self.token = object()
        self._classes: dict[str, list[np.ndarray]] = {}
        #: Loads of the steps costed so far, for every algorithm: ``{(classes, pattern):
        #: (fractions, loads)}`` (see :func:`_evaluate`).
        self.loads: dict = {}
        #: Whether the steps' loads hold their hot spots (:func:`_loads`' ``hot_too``).
        self.hot = hot

    @staticmethod
    def partition(algorithm: str) -> str:
        """Which classes ``algorithm``'s groups fall into: ``own`` (one per group),
        ``domains`` (by size and scale-up domains) or ``sizes`` (by size)."""
        return "own" if algorithm in _OWN_STEPS else "domains" if algorithm in _GRAPH_AWARE \
            else "sizes"

    def classes(self, algorithm: str) -> list[np.ndarray]:
        """Indices of the groups that share steps, class by class."""
        kind = self.partition(algorithm)
        hit = self._classes.get(kind)
        if hit is None:
            if kind == "own":
                hit = [np.array([i]) for i in range(len(self.ordered))]
            elif kind == "domains":
                hit = self._by_domains()
            else:
                hit = [np.flatnonzero(self.sizes == p) for p in unique(self.sizes).tolist()]
            self._classes[kind] = hit
        return hit

    def _by_domains(self) -> list[np.ndarray]:
        """Groups whose members fall into scale-up domains alike (the same members share a
        domain) have the same tree and hierarchical steps."""
        from netmodel.collectives.algorithms import domain_labels

        graph, tiers = self.graph, self.tiers
        out: dict[tuple[int, int], np.ndarray] = {}
        for p in unique(self.sizes).tolist():
            idx = np.flatnonzero(self.sizes == p)
            labels = np.stack([domain_labels(graph, self.ordered[i], tiers) for i in idx]) \
                if p > 64 else None
            if labels is None:
                ids = domain_labels(graph, [x for i in idx.tolist() for x in self.ordered[i]],
                                    tiers)
                ids = ids.reshape(len(idx), p)
                same = (ids[:, :, None] == ids[:, None, :]).reshape(len(idx), -1)
                inv = _unique_rows(same)
            else:
                _, inv = np.unique(labels, axis=0, return_inverse=True)
            inv = inv.ravel()
            for c in range(inv.max() + 1):
                out[(p, c)] = idx[inv == c]
        return list(out.values())


    def rows(self, idx: np.ndarray) -> np.ndarray:
        """Node numbers of groups ``idx`` (all of one size), one row per group."""
        p = int(self.sizes[idx[0]])
        return self.flat[self.start[idx][:, None] + np.arange(p)]


def _unique_rows(same: np.ndarray) -> np.ndarray:
    """``np.unique(same, axis=0, return_inverse=True)[1]`` of a boolean table: the rows
    packed into bytes (most significant bit first, so that the bytes sort as the rows do)
    and, when they fit in 8 bytes, read as one big-endian integer each."""
    packed = np.packbits(same, axis=1)
    if packed.shape[1] > 8:
        return np.unique(packed, axis=0, return_inverse=True)[1].ravel()
    wide = np.zeros((len(packed), 8), dtype=np.uint8)
    wide[:, :packed.shape[1]] = packed
    return np.unique(wide.view(">u8").ravel(), return_inverse=True)[1].ravel()


def _group_steps(groups: _Groups, op: str, algorithm: str):
    """Steps of every group: ``[(steps, rows, indices)]``, one per class of groups with the
    same steps up to renaming: the steps of one of them, the node numbers of each member
    group's GPUs in ring order (one row per group) and the groups' indices. In-network
    steps (each group's own switch tree) are one class per group."""
    out = []
    for idx in groups.classes(algorithm):
        steps = generate(algorithm, op, groups.ordered[idx[0]], groups.graph)
        rows = groups.rows(idx)
        out.append((steps, rows, idx))
    return out


def _step_transfers(router, classes, i):
    """All groups' transfers of step ``i``: node numbers, fractions and group of each, and
    a key naming the pattern (which transfers, fractions apart; None for in-network
    steps, which are not shared)."""
    src, dst, frac, gid, key = [], [], [], [], []
    for steps, rows, idx in classes:
        if i >= len(steps):
            continue
        t = steps[i].transfers
        if isinstance(t, Pairs):
            s, d = t.src, t.dst
            # take, not rows[:, s]: that indexing lays the result out column by column, and
            # its ravel copied it again (0.26 s for the 4.2 million ends of an all-pairs step
            # of 64 groups of 256, against 0.02 s)
            src.append(rows.take(s, axis=1).ravel())
            dst.append(rows.take(d, axis=1).ravel())
            frac.append(np.tile(t.fractions(), len(idx)))
            gid.append(np.repeat(idx, len(s)))
            if key is not None:
                key.append((s.tobytes(), d.tobytes()))
        else:  # one group (in-network): its own nodes
            a, b, f = router._node_ids(t)
            src.append(a)
            dst.append(b)
            frac.append(f)
            gid.append(np.full(len(a), idx[0], dtype=np.int64))
            key = None
    # one class (groups of one size: the usual case) needs no copy: an all-pairs step of 64
    # groups of 256 GPUs has 4.2 million transfers, 33 MB an array
    cat = (lambda x, t: x[0] if len(x) == 1 else np.concatenate(x) if x  # noqa: E731
           else np.zeros(0, dtype=t))
    return (cat(src, np.int64), cat(dst, np.int64), cat(frac, float), cat(gid, np.int64),
            None if key is None else tuple(key))


#: :func:`_group_pieces` sums into a dense (group, piece) table when it has at most this
#: many cells per entry (8 bytes a cell), else it sorts the entries.
_DENSE_FACTOR = 8


def _group_pieces(gid, pl, G, NP, traffic: bool = True):
    """Traffic of each group through each piece it crosses: ``(group, piece, fraction)``,
    by group then piece (a pair crossed with no bytes included); without ``traffic`` the
    fractions are None (not summed)."""
    key = gid[pl.pieces] * NP + pl.piece_of
    if G * NP <= _DENSE_FACTOR * len(key):  # a dense table: quicker than sorting
        seen = np.zeros(G * NP, dtype=bool)
        seen[key] = True
        uk = np.flatnonzero(seen)
        return uk // NP, uk % NP, (np.bincount(key, pl.frac[pl.pieces], minlength=G * NP)[uk]
                                   if traffic else None)
    uk, inv = np.unique(key, return_inverse=True)
    return uk // NP, uk % NP, np.bincount(inv.ravel(), pl.frac[pl.pieces]) if traffic else None


def _loads(router, rate, pl, gid, G, disjoint, alone_too: bool = True, hot_too: bool = True):
    """Per group, for one step of every group: the bottleneck together (busiest own link,
    counting everyone's bytes, over its rate) and alone (own bytes only), latency,
    scale-out; and the step's hot spots ``[(utilisation, link, groups using it)]``.
    ``disjoint``: no GPU is in two groups (a GPU's own links then carry one group only).
    Without ``alone_too``, alone is zeros and there are no hot spots (not computed)."""
    L = router.n_links
    f = pl.frac
    eg, el, ew = gid[pl.hop_index], pl.hop_links, pl.hop_weights * f[pl.hop_index]
    routed = len(pl.routed) > 0
    if routed:  # every routed transfer's links, in the routes' order
        idx = pl.routed
        sizes = np.diff(pl.route_ptr)
        eg = np.concatenate([eg, np.repeat(gid[idx], sizes)])
        el = np.concatenate([el, pl.route_links])
        ew = np.concatenate([ew, pl.route_weights * np.repeat(f[idx], sizes)])
    el = el.astype(np.int64, copy=False)
    total = np.bincount(el, ew, minlength=L)
    have = len(pl.piece_of) > 0
    if have:
        NP = len(router._piece_links)
        per_piece = np.bincount(pl.piece_of, f[pl.pieces], minlength=NP)
        used = np.flatnonzero(np.bincount(pl.piece_of, minlength=NP))
        slot_of, coef, which, plk, pw = _spread_pieces(router, used, per_piece, NP, total)
    util = total / rate
    together = np.zeros(G)
    np.maximum.at(together, eg, util[el])
    if alone_too and disjoint and not routed:
        # first and last hops only: a GPU's links carry its own group's bytes alone
        alone = together.copy()
    else:
        alone = np.zeros(G)
    if alone_too and not (disjoint and not routed):  # own bytes per (group, link)
        u2, i2 = np.unique(eg * L + el, return_inverse=True)
        own = np.bincount(i2.ravel(), ew)
        np.maximum.at(alone, u2 // L, own / rate[u2 % L])
    if have:
        count = np.bincount(which, minlength=len(used))
        starts = np.cumsum(count) - count
        nonempty = count > 0
        pmax = np.zeros(len(used))
        pmaxw = np.zeros(len(used))
        if nonempty.any():
            s0 = starts[nonempty]
            pmax[nonempty] = np.maximum.reduceat(util[plk], s0)
            if alone_too:
                pmaxw[nonempty] = np.maximum.reduceat(pw / coef[which] / rate[plk], s0)
        # each (group, piece) once: a group's busiest piece is the same over fewer entries
        pg, pp, X = _group_pieces(gid, pl, G, NP, alone_too)   # X: for alone only
        slot = slot_of[pp]
        np.maximum.at(together, pg, pmax[slot])
    if have and alone_too:
        # a group's own bytes on a piece's links are its traffic through the piece times the
        # piece's weights, unless pieces (or its routes) share links: then sum them exactly
        covered, exclusive = router.piece_cover()
        exact = np.zeros(G, dtype=bool)
        exact[pg[~exclusive[pp]]] = True
        exact[eg[covered[el]]] = True
        np.maximum.at(alone, pg, X * pmaxw[slot])
        if exact.any():
            sel = exact[pg]
            w2, l2, v2 = router.expand(pp[sel], X[sel])
            g2 = np.concatenate([pg[sel][w2], eg[exact[eg]]])
            l2 = np.concatenate([l2, el[exact[eg]]])
            v2 = np.concatenate([v2, ew[exact[eg]]])
            u3, i3 = np.unique(g2 * L + l2, return_inverse=True)
            s3 = np.bincount(i3.ravel(), v2)
            redo = np.zeros(G)
            np.maximum.at(redo, u3 // L, s3 / rate[u3 % L])
            alone[exact] = redo[exact]
    latency = np.zeros(G)
    np.maximum.at(latency, gid, pl.latency)
    lat_up = np.full(G, -1.0)
    up = ~pl.scaleout
    np.maximum.at(lat_up, gid[up], pl.latency[up])
    lat_up = np.where(lat_up < 0, latency, lat_up)
    scaleout = np.bincount(gid, pl.scaleout.astype(float), minlength=G) > 0
    if not alone_too or not hot_too:   # no hot spots asked for
        return together, alone, latency, lat_up, scaleout, []
    k = min(5, len(util))
    cand = np.argpartition(util, len(util) - k)[len(util) - k:] if k else np.zeros(0, int)
    top = cand[np.lexsort((cand, -util[cand]))]
    hot = []
    for t in top.tolist():
        if util[t] <= 0:
            continue
        users = set(eg[el == t].tolist())
        if have:
            users |= set(pg[np.isin(pp, used[which[plk == t]])].tolist())
        hot.append((float(util[t]), int(t), len(users)))
    return together, alone, latency, lat_up, scaleout, hot


#: :func:`_evaluate` routes a step of more transfers than this in parts of about
#: :data:`_PART` (:func:`_loads_in_parts`) where only the loads together are asked for.
_IN_PARTS = 1 << 19
_PART = 1 << 16
#: ... when groups x links (and groups x pieces) is at most this: the links and pieces each
#: group crosses are marked in a table of that many cells.
_PART_CELLS = 1 << 26


def _step_parts(classes, i):
    """For a step of more than :data:`_IN_PARTS` transfers between GPUs of groups
    (:class:`Pairs` in every class): ``(key, fractions, parts)``, the key and the fractions of
    :func:`_step_transfers` (the fractions once per class, not per group) and ``parts()``,
    yielding its ``(src, dst, frac, gid)`` in parts of whole groups, about :data:`_PART`
    transfers each, in its order; else None."""
    members, total = [], 0
    for steps, rows, idx in classes:
        if i >= len(steps):
            continue
        t = steps[i].transfers
        if not isinstance(t, Pairs):
            return None
        members.append((t.src, t.dst, t.fractions(), rows, idx))
        total += len(t.src) * len(idx)
    if total <= _IN_PARTS:
        return None

    # parts of whole groups, in order, each of at least _PART transfers (and more than 64:
    # a router works fewer out through its dict of pairs, learning apart), the last merged
    # into the one before when it has fewer
    least = max(_PART, 65)
    cuts: list[list[tuple[int, int, int]]] = [[]]
    size = 0
    for m, (s, _, _, _, idx) in enumerate(members):
        per = max(1, -(-least // max(1, len(s))))
        for a in range(0, len(idx), per):
            if size >= least:
                cuts.append([])
                size = 0
            b = min(a + per, len(idx))
            cuts[-1].append((m, a, b))
            size += (b - a) * len(s)
    if size < least and len(cuts) > 1:
        cuts[-2].extend(cuts.pop())

    def parts():
        for part in cuts:
            out = []
            for m, a, b in part:
                s, d, f, rows, idx = members[m]
                r = rows[a:b]
                out.append((r.take(s, axis=1).ravel(), r.take(d, axis=1).ravel(),
                            np.tile(f, len(r)), np.repeat(idx[a:b], len(s))))
            yield tuple(x[0] if len(out) == 1 else np.concatenate(x) for x in zip(*out, strict=True))

    key = tuple((s.tobytes(), d.tobytes()) for s, d, *_ in members)
    return key, np.concatenate([m[2] for m in members]), parts


def _loads_in_parts(router, rate, parts, G, disjoint: bool = False,
                    alone_too: bool = False) -> tuple | None:
    """:func:`_loads` without hot spots of the step whose transfers ``parts()`` yields
    (:func:`_step_parts`), bit for bit, routed part by part (a step of 4.2 million transfers
    allocated some 40 arrays of 33-67 MB whose fresh pages the kernel zeroed: more time
    than the arithmetic); None where it would not be the same (a transfer routed on its
    own, whose links come after every hop in one plan; tables too large; pairs not learned
    as one plan would learn them: :meth:`~netmodel.collectives.routing.Router.
    learn_in_parts`).

    Why it is the same: the step's pairs are learned first as one plan would learn them (the
    same signatures, patterns and piece ids); a link's bytes are summed in the order one
    plan sums them (:func:`numpy.add.at` adds in order, as :func:`numpy.bincount` does; a
    link is a first hop or a last hop, never both, and parts keep the transfers' order), and
    the rest is maxima, order-free. With ``alone_too``, each group's loads alone are
    :func:`_loads`' of the part holding it (a part holds whole groups, and a group's own
    bytes are summed in its transfers' order, as in one plan)."""
    L = router.n_links
    if G * L > _PART_CELLS:
        return None
    if not router.learn_in_parts(lambda: ((s, d) for s, d, _, _ in parts())):
        return None
    NP = len(router._piece_links)
    if G * NP > _PART_CELLS:
        return None
    hop_total = np.zeros(L)
    per_piece = np.zeros(NP)
    links_of = np.zeros(G * L, dtype=bool)     # (group, link) crossed by a first or last hop
    pieces_of = np.zeros(G * NP, dtype=bool)   # (group, piece) crossed
    latency = np.zeros(G)
    lat_up = np.full(G, -1.0)
    scaleout = np.zeros(G, dtype=bool)
    alone = np.zeros(G)
    for src, dst, frac, g in parts():
        pl = router.plan_nodes(src, dst, frac)
        if len(pl.routed) or len(router._piece_links) != NP:
            return None   # routed on its own, or not learned up front after all: one plan
        if alone_too:
            np.maximum(alone, _loads(router, rate, pl, g, G, disjoint, True, False)[1],
                       out=alone)
        f = pl.frac
        el = pl.hop_links.astype(np.int64, copy=False)
        eg = g[pl.hop_index]
        np.add.at(hop_total, el, pl.hop_weights * f[pl.hop_index])
        links_of[eg * L + el] = True
        del el, eg
        if len(pl.piece_of):
            np.add.at(per_piece, pl.piece_of, f[pl.pieces])
            pieces_of[g[pl.pieces] * NP + pl.piece_of] = True
        np.maximum.at(latency, g, pl.latency)
        up = ~pl.scaleout
        np.maximum.at(lat_up, g[up], pl.latency[up])
        scaleout[g[pl.scaleout]] = True
        del pl
    total = hop_total
    pg, pp = np.divmod(np.flatnonzero(pieces_of), NP)
    have = len(pp) > 0
    if have:   # as _loads: the pieces' bytes on their links
        used = np.flatnonzero(np.bincount(pp, minlength=NP))
        slot_of, coef, which, plk, pw = _spread_pieces(router, used, per_piece, NP, total)
    util = total / rate
    together = np.zeros(G)
    hg, hl = np.divmod(np.flatnonzero(links_of), L)
    np.maximum.at(together, hg, util[hl])
    if have:
        np.maximum.at(together, pg, _piece_max(which, plk, util, len(used))[slot_of[pp]])
    lat_up = np.where(lat_up < 0, latency, lat_up)
    return together, alone, latency, lat_up, scaleout, []


def _spread_pieces(router, used: np.ndarray, per_piece: np.ndarray, NP: int,
                   total: np.ndarray) -> tuple:
    """Add the bytes of the route pieces ``used`` (``per_piece`` of them each) to their
    links' ``total`` (in place, in the router's expansion order) and return ``slot_of``
    (a piece's index in ``used``), their coefficients and the expansion ``(which, links,
    weights)`` (:meth:`Router.expand`)."""
    slot_of = np.zeros(NP, dtype=np.int64)
    slot_of[used] = np.arange(len(used))
    coef = per_piece[used]
    which, plk, pw = router.expand(used, coef)
    total += np.bincount(plk, pw, minlength=len(total))
    return slot_of, coef, which, plk, pw


def _piece_max(which: np.ndarray, plk: np.ndarray, util: np.ndarray, n: int) -> np.ndarray:
    """The largest ``util`` over each of the ``n`` used pieces' links (0 for a piece with
    none), from the expansion ``which``/``plk`` that lists a piece's links together."""
    count = np.bincount(which, minlength=n)
    starts = np.cumsum(count) - count
    nonempty = count > 0
    pmax = np.zeros(n)
    if nonempty.any():
        pmax[nonempty] = np.maximum.reduceat(util[plk], starts[nonempty])
    return pmax


def _power_of_two_ratio(new: np.ndarray, old: np.ndarray) -> float | None:
    """``c`` when ``new == old * c`` exactly for a power of two ``c`` (1 included), else
    None. Scaling by a power of two is exact in binary floating point (far from overflow
    and the subnormals), so that every sum, product, quotient and maximum of the loads of
    ``old`` scales exactly: the loads of ``new`` are theirs times ``c``, bit for bit."""
    if new.shape != old.shape or not len(new) or not old[0] > 0:
        return None
    c = float(new[0] / old[0])
    if not 2.0 ** -64 <= c <= 2.0 ** 64 or math.frexp(c)[0] != 0.5:
        return None
    return c if np.array_equal(old * c, new) else None


def _scaled(out: tuple, c: float) -> tuple:
    """The loads of one step (:func:`_loads`) of traffic times ``c``."""
    together, alone, latency, lat_up, scaleout, hot = out
    if c == 1.0:
        return out
    return (together * c, alone * c, latency, lat_up, scaleout,
            [(u * c, t, users) for u, t, users in hot])


def _evaluate(model, op, algorithm, groups: _Groups, alone_too: bool = True,
              classes: list | None = None):
    """Per group and step: the steps' fields (:data:`~netmodel.collectives.cost.STEP_FIELDS`),
    alone beta, together beta, latency, scale-up latency, scale-out (arrays ``(G, S)``); and
    the hot spots of every step index (without ``alone_too``: alone zeros, no hot spots).
    ``classes``: the steps of groups running different algorithms (:func:`_mixed_classes`;
    ``algorithm`` then unused), their loads neither reused nor kept."""
    router, cal = model.router, model.calibration
    eff = np.where(router.scaleout, cal.scaleout_efficiency, cal.scaleup_efficiency)
    rate = router.bandwidth * eff
    shared = classes is None
    if shared:
        classes = _group_steps(groups, op, algorithm)
    n_steps = max(len(c[0]) for c in classes)
    G = len(groups.ordered)
    shape = (G, n_steps)
    alone, together, latency, lat_up = (np.zeros(shape) for _ in range(4))
    scaleout = np.zeros(shape, dtype=bool)
    table = {k: np.zeros(shape, dtype=v.dtype) for k, v in step_table([], 1).items()}
    hot = []
    done, kind = groups.loads, groups.partition(algorithm) if shared else None
    for i in range(n_steps):
        # a large step of only the loads together: routed in parts, never whole (its key's
        # fractions kept once per class: the key and alone_too fix whether a step is)
        parted = None if alone_too and groups.hot else _step_parts(classes, i)
        if parted is None:
            src, dst, frac, gid, key = _step_transfers(router, classes, i)
        else:
            key, frac, parts = parted
        if key is not None:
            key = (kind, key) if shared else None
        hit = None if key is None else done.get(key)
        scale = None if hit is None else _power_of_two_ratio(frac, hit[0])
        if scale is not None:
            # the same transfers as an earlier step (of this algorithm or another), their
            # bytes times a power of two: the same loads times it, to the last bit
            out = _scaled(hit[1], scale)
        else:
            plan_key = None if key is None else ("concurrent", key, groups.token)
            out = None
            if parted is not None:
                if plan_key not in router._plans:
                    out = _loads_in_parts(router, rate, parts, G, groups.disjoint,
                                          alone_too)
                if out is None:   # as it was: one plan of the whole step
                    src, dst, frac_all, gid, _ = _step_transfers(router, classes, i)
                    pl = router.plan_nodes(src, dst, frac_all, plan_key)
                    out = _loads(router, rate, pl, gid, G, groups.disjoint, alone_too,
                                 groups.hot)
                    del pl, src, dst, frac_all, gid
            else:
                pl = router.plan_nodes(src, dst, frac, plan_key)
                out = _loads(router, rate, pl, gid, G, groups.disjoint, alone_too,
                             groups.hot)
                del pl
            if key is not None:
                done[key] = (frac, out)
        together[:, i], alone[:, i], latency[:, i], lat_up[:, i], scaleout[:, i], h = out
        hot.append(h)
        for steps, _, idx in classes:
            if i >= len(steps):
                continue
            st = steps[i]
            set_step(table, idx, i, st)
            if st.route_latency is not None:
                latency[idx, i] = lat_up[idx, i] = st.route_latency
    # groups of different sizes or algorithms run different steps: step i of one beside
    # step i of another is no more than an index, so the sharing follows time
    if not shared or len(unique(groups.sizes)) > 1:
        together = _follow_time(router, rate, classes, table, together)
    return table, alone, together, latency, lat_up, scaleout, hot


def _step_entries(router, rate: np.ndarray, classes, i: int, G: int) -> tuple:
    """Each group's own load on every link its transfers of step ``i`` cross:
    ``(group, link, seconds per byte of n)`` (a link may be listed more than once for a
    group; their sum is its load). The links and weights of :func:`_loads`, by group."""
    src, dst, frac, gid, _ = _step_transfers(router, classes, i)
    if not len(src):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    pl = router.plan_nodes(src, dst, frac)
    f = pl.frac
    gs = [gid[pl.hop_index]]
    ls = [pl.hop_links.astype(np.int64, copy=False)]
    ws = [pl.hop_weights * f[pl.hop_index]]
    if len(pl.routed):
        sizes = np.diff(pl.route_ptr)
        gs.append(np.repeat(gid[pl.routed], sizes))
        ls.append(pl.route_links.astype(np.int64, copy=False))
        ws.append(pl.route_weights * np.repeat(f[pl.routed], sizes))
    if len(pl.piece_of):
        pg, pp, X = _group_pieces(gid, pl, G, len(router._piece_links))
        which, links, w = router.expand(pp, X)
        gs.append(pg[which])
        ls.append(links.astype(np.int64, copy=False))
        ws.append(w)
    links = np.concatenate(ls)
    return np.concatenate(gs), links, np.concatenate(ws) / rate[links]


#: :func:`_timed` gives up (the steps stay in lockstep) past this many group-link entries
#: looked at over all its events.
_TIMED_WORK = 1 << 27


def _timed(work: np.ndarray, entries: list[tuple], L: int) -> np.ndarray | None:
    """Each group's seconds per byte of ``n`` in each of its steps when link sharing follows
    time: ``(G, S)``, or None past :data:`_TIMED_WORK`.

    ``work[g, i]``: how many times group ``g`` runs step ``i`` one after another (0: a step
    that takes no time); ``entries[i]``: :func:`_step_entries` of step ``i``. Every group
    runs its steps in turn, the groups' current steps sharing the links (:func:`_paces`:
    in proportion to their loads, so that their bytes drain together, a group held back
    elsewhere leaving the rest to the others); the shares change only when some group
    finishes a step (its repetitions in one go: they load the same links alike), so the
    schedule is event by event over the union of the steps' ends. Where every group runs
    the same steps at the same pace and none is held back elsewhere, this is the lockstep
    of :func:`_evaluate`; where one finishes a step first, the others' links carry its
    bytes no longer (a 4-GPU ring beside a 2-GPU direct all-gather: the ring's last two of
    three    repetitions run alone).

    >>> e = [(np.array([0, 1]), np.array([0, 0]), np.array([0.5, 0.25]))]
    >>> _timed(np.array([[1.0], [3.0]]), e, 1).tolist()   # 0.75 together, then 2 x 0.25
    [[0.75], [1.25]]
    """
    G, S = work.shape
    eg = np.concatenate([e[0] for e in entries])
    el = np.concatenate([e[1] for e in entries])
    eu = np.concatenate([e[2] for e in entries])
    es = np.concatenate([np.full(len(e[0]), i, np.int64) for i, e in enumerate(entries)])
    order = np.argsort(eg * S + es, kind="stable")
    eg, el, eu = eg[order], el[order], eu[order]
    count = np.bincount(eg * S + es[order], minlength=G * S)
    first = np.cumsum(count) - count
    dur = np.zeros((G, S))
    ph = np.zeros(G, np.int64)
    todo = work > 0

    def next_phase(g, at):   # the first step from ``at`` on that takes time (S: none)
        rest = todo[g] & (np.arange(S) >= at[:, None])
        return np.where(rest.any(axis=1), rest.argmax(axis=1), S)

    every = np.arange(G)
    ph = next_phase(every, ph)
    rem = np.where(ph < S, work[every, np.minimum(ph, S - 1)], 0.0)
    start = np.zeros(G)
    now, looked = 0.0, 0
    while True:
        live = np.flatnonzero(ph < S)
        if not len(live):
            return dur
        cell = live * S + ph[live]
        c = count[cell]
        looked += int(c.sum())
        if looked > _TIMED_WORK:
            return None
        at = np.repeat(first[cell] - (np.cumsum(c) - c), c) + np.arange(int(c.sum()))
        pace, rounds = _paces(eg[at], el[at], eu[at], G, L)
        looked += rounds * int(c.sum())
        need = rem[live] * pace[live]
        dt = need.min()
        now += dt
        done = need <= dt * (1 + 1e-12)
        going = live[~done]
        rem[going] -= dt / pace[going]
        fin = live[done]
        dur[fin, ph[fin]] = now - start[fin]
        start[fin] = now
        ph[fin] = next_phase(fin, ph[fin] + 1)
        more = ph[fin] < S
        rem[fin] = np.where(more, work[fin, np.minimum(ph[fin], S - 1)], 0.0)


def _paces(eg: np.ndarray, el: np.ndarray, eu: np.ndarray, G: int, L: int
           ) -> tuple[np.ndarray, int]:
    """Seconds per byte of ``n`` of one repetition of each group's current step, the
    groups' loads ``(group, link, seconds per byte)`` sharing the links: every link's
    capacity shared among the groups on it in proportion to their loads (so that their
    bytes on it drain together, as in :func:`_loads`), a group held back by a busier link
    elsewhere leaving what it cannot use to the others (progressive filling: all paces
    raised together until a link is full, its groups then held there); and the rounds.
    Alone on its links, or beside groups none of which is held elsewhere, a group's
    seconds are its busiest link's load summed over every group, those of :func:`_loads`.

    >>> _paces(np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([1.0, 1.0, 4.0]), 2, 2)
    ... # group 1 held by link 1 (4 s) takes 1/4 of link 0: group 0 gets 3/4, 4/3 s
    (array([1.33333333, 4.        ]), 2)
    """
    T = np.zeros(G)
    held = np.zeros(G, dtype=bool)
    used = np.zeros(L)            # capacity taken by the groups held so far
    rounds = 0
    while True:
        rounds += 1
        free = ~held[eg]
        demand = np.bincount(el[free], eu[free], minlength=L)
        with np.errstate(divide="ignore", invalid="ignore"):
            # seconds a repetition takes if the free groups on the link share what is left
            t_link = np.where(demand > 0, demand / np.maximum(1.0 - used, 0.0), 0.0)
        t = np.zeros(G)
        np.maximum.at(t, eg[free], t_link[el[free]])
        top = t[~held].max(initial=0.0)
        now = ~held & (t >= top * (1 - 1e-12))
        if top == 0 or now.sum() == (~held).sum():
            T[~held] = t[~held] if top == 0 else top
            return T, rounds
        T[now] = top
        held |= now
        take = now[eg]
        used += np.bincount(el[take], eu[take] / top, minlength=L)


def _follow_time(router, rate: np.ndarray, classes, table: dict, together: np.ndarray
                 ) -> np.ndarray:
    """``together`` (seconds per byte of ``n`` per group and step, from the loads of step
    ``i`` of every group at once) with link sharing following time (:func:`_timed`): each
    step's seconds over its repetitions. Only where no step runs in a pipeline (their
    phases overlap in time, which one step after another does not say): else, or past
    :data:`_TIMED_WORK`, ``together`` as it is."""
    on = table["on"]
    if (on & (table["pipeline"] > 0)).any():
        return together
    work = np.where(on & table["member"], table["repeat"], 0.0)
    G, S = work.shape
    entries = [_step_entries(router, rate, classes, i, G) for i in range(S)]
    dur = _timed(work, entries, router.n_links)
    if dur is None:
        return together
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(work > 0, dur / work, together)


def _prepare(model: FabricCostModel, groups: Groups, op: str, algorithm: str | None
             ) -> tuple[tuple[tuple[Hashable, ...], ...], list[str]]:
    """The groups as checked node tuples and the algorithm names to try."""
    check_op(op)
    if is_whole(groups):
        from netmodel.collectives.placement import partition

        groups = tuple(partition(model.graph, int(groups), model.placement, seed=model.seed,
                                 gpus=model.router.gpu_list))  # GPU tuples by construction
    else:
        groups = model.groups(groups)
    if not groups:
        raise UserError("concurrent_cost needs at least one group")
    if any(len(g) < 2 for g in groups):
        raise UserError("every concurrent group needs at least 2 GPUs")
    return groups, model.algorithm_names(op, algorithm)


#: How many sets of prepared groups (:class:`_Groups`, with their steps' loads) a model
#: keeps for the next costing of the same groups (the least recently used dropped). The
#: fabric search asks every op at each instance size in turn (2, 4, ..., 256 GPUs: 8 sets
#: and more), so fewer than its sizes evict every set before its next op reuses it.
_KEPT_GROUPS = 16


def _prepared(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...],
              alone_too: bool, hot: bool = True) -> _Groups:
    """The :class:`_Groups` of ``groups`` on ``model``, kept on the model: a later
    costing of the same groups (another op) reuses the loads of the steps it shares
    with the ops costed before (a ring all-reduce's steps are its reduce-scatter's and its
    all-gather's), as one costing reuses them between its algorithms. Kept apart by
    ``alone_too`` and ``hot`` (hot spots worked out), which change what a step's loads
    hold."""
    kept = model._concurrent
    key = (groups, alone_too, hot)
    hit = kept.pop(key, None)
    if hit is None:
        hit = _Groups(model, groups, hot)
    kept[key] = hit   # the most recently used last
    while len(kept) > _KEPT_GROUPS:
        _forget(model, kept.pop(next(iter(kept))))
    return hit


def _forget(model: FabricCostModel, dropped: _Groups) -> None:
    """Drop the router's plans of ``dropped``'s steps (kept under its token, which no
    later costing can name): else up to 256 plans of dropped sets stay, a direct
    all-to-all's of 64 groups of 256 GPUs 389 MB."""
    router = model.router
    router.drop_plans([k for k in router._plans if isinstance(k, tuple) and len(k) == 3
                       and k[0] == "concurrent" and k[2] is dropped.token])


def _costly(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
            names: list[str]) -> set[str]:
    """The algorithms of ``names`` routing more than 65,536 transfers (or more than
    ``max_transfers``) for some group: everyone to everyone over more than 256 GPUs, left
    out by :func:`_options` at sizes where a lower bound shows they cannot matter."""
    from netmodel.collectives.algorithms import quadratic, transfer_count
    from netmodel.collectives.model import _COSTLY

    limit = min(_COSTLY, model.max_transfers)
    p = max(len(g) for g in groups)
    return {a for a in names if quadratic(a, op) and transfer_count(a, op, p) > limit}


def _check_total_work(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...],
                      op: str, name: str) -> None:
    """UserError when a quadratic algorithm would route more than ``max_transfers``
    transfers for all ``groups`` together (each group alone is checked by
    FabricCostModel._check_work): 128 groups of 1,024 GPUs on a 131,072-GPU fabric route
    134 million transfers for a direct all-to-all, some 40 GB."""
    from netmodel.collectives.algorithms import quadratic, transfer_count

    if len(groups) < 2 or not quadratic(name, op):
        return
    total = sum(transfer_count(name, op, len(g)) for g in groups)
    if total > model.max_transfers:
        sizes = sorted({len(g) for g in groups})
        size = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        raise UserError(
            f"{name} {op} on {len(groups):,} groups of {size} GPUs at once routes {total:,} "
            f"point-to-point transfers, more than the limit of {model.max_transfers:,} "
            f"(max_transfers, all groups together): use fewer or smaller groups, leave it "
            f"out (algorithms=...), or raise the limit")


def _useless(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
             name: str, n: np.ndarray, options: list[tuple],
             lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> bool:
    """Whether ``name`` (a :func:`_costly` algorithm) can change neither the choice nor
    the time alone of :func:`concurrent_cost` at the sizes ``n``, by a lower bound on its
    time alone (FabricCostModel._lower_bound: what each GPU must send over its own links;
    together is never faster than alone) against ``options`` (the other algorithms'):
    above the best makespan and above every group's best time alone at every size.
    ``lo``, ``hi`` (shape ``(O, G)``, :func:`_ranges`; None: every option at every size):
    an option counts only at the sizes its group runs it at (NCCL's send/recv picks LL or
    Simple by size), so that a line cheaper than the protocol that runs there prunes
    nothing.

    >>> from netmodel.collectives.calibration import Calibration
    >>> import networkx as nx
    >>> g = nx.Graph(name="pair", spec="", gpus=2)
    >>> g.add_node("sw", kind="switch", tier=0, radix=2, latency=0.0,
    ...            in_network_reduction=False)
    >>> for i in range(2):
    ...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    ...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    >>> m = FabricCostModel(g, calibration=Calibration.ideal())
    >>> [(p, a, float(b)) for p, a, b in m._lower_bound("all-to-all", "direct",
    ...                                               ("gpu0", "gpu1"))]  # n/2 at 1 GB/s
    [('ideal', 0.0, 5e-10)]
    >>> one = np.ones(1)   # a line of 0.1 ns per byte: 0.1 s at 1 GB, under the bound's 0.5 s
    >>> o = [("x", "LL", one * 0, one * 1e-10, one * 0, one * 1e-10, [], one > 0)]
    >>> _useless(m, (("gpu0", "gpu1"),), "all-to-all", "direct", np.array([1e9]), o)
    True
    >>> # ... but that line runs only up to 1 MB: at 1 GB it is no option
    >>> _useless(m, (("gpu0", "gpu1"),), "all-to-all", "direct", np.array([1e9]), o,
    ...          np.zeros((1, 1)), np.full((1, 1), 1e6))
    False
    """
    if not options:
        return False
    low = []
    for g in groups:
        lb = model._lower_bound(op, name, g)
        if lb is None:
            return False
        low.append(np.min([a + b * n for _, a, b in lb], axis=0))
    low = np.array(low)                                                    # (G, N)
    t = _masked(np.stack([o[2][:, None] + o[3][:, None] * n for o in options]), lo, hi, n)
    a = _masked(np.stack([o[4][:, None] + o[5][:, None] * n for o in options]), lo, hi, n)
    # the best shared choice's makespan (LL and Simple of one send/recv algorithm one
    # choice where groups run them at different sizes: concurrent_makespan's)
    keys = _choice_keys(op, [o[0] for o in options], not _one_class(lo, hi))
    together = _by_choice(t, keys).max(axis=1).min(axis=0)                 # (N,)
    alone = a.min(axis=0)                                                  # (G, N)
    margin = 1 + 1e-9
    return bool(np.all(low.max(axis=0) > together * margin)
                and np.all(low > alone * margin))


def _options(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
             names: Iterable[str], alone_too: bool = True,
             nbytes: np.ndarray | None = None,
             why_out: dict[str, list[str]] | None = None, hot: bool = True) -> list[tuple]:
    """Every valid (algorithm, protocol): ``(name, protocol, a_together, b_together,
    a_alone, b_alone, hot, crosses)``, the a/b arrays of shape ``(G,)``; without
    ``alone_too`` ``(name, protocol, a_together, b_together, crosses)`` only (the rest is
    not computed). With ``nbytes`` (and ``alone_too``), a :func:`_costly` algorithm whose
    lower bound shows it can change neither the best choice nor the best time alone at any
    of these sizes (:func:`_useless`) is left out without being routed. ``why_out``: filled
    with why each algorithm that cannot run on every group was left out (by name), and
    no error where none can (the list is then empty). Without ``hot``, no hot spots
    (empty lists: their search is most of the time of a step of few transfers on a large
    fabric)."""
    names = list(names)
    prepared = _prepared(model, groups, alone_too, hot)
    why: dict[str, list[str]] = {name: [] for name in names}
    for name in list(names):  # ruled out by a look at the groups: no work counted
        if (name, op) not in PRECHECKS:   # nothing to look at (8,192 groups of 2: 0.4 s)
            continue
        try:
            for g in groups:
                precheck(name, op, g, model.graph)
        except NotApplicable as exc:
            why[name].append(f"{name}: {exc}")
            names.remove(name)
    for name in names:
        for p in unique(prepared.sizes).tolist():
            model._check_work(op, name, p)
    costly = _costly(model, groups, op, names) if nbytes is not None and alone_too else set()

    def routed(name):
        if nbytes is not None:
            _check_total_work(model, groups, op, name)
        return _name_options(model, op, name, prepared, alone_too, why[name])

    by_name = {name: routed(name) for name in names if name not in costly}
    cheap = [o for name in names if name not in costly for o in by_name[name]]
    ranges = (_ranges(model, groups, op, cheap) or (None, None)) if costly and cheap \
        else (None, None)
    for name in names:
        if name in costly and not _useless(model, groups, op, name, nbytes, cheap, *ranges):
            by_name[name] = routed(name)
    options = [o for name in names for o in by_name.get(name, ())]
    if why_out is not None:
        why_out.update(why)
        return options
    if not options:
        reasons = "; ".join(w for ws in why.values() for w in ws)
        raise UserError(f"no algorithm can run {op} on these groups ({reasons})")
    return options


def _name_options(model: FabricCostModel, op: str, name: str, prepared: _Groups,
                  alone_too: bool, why: list[str]) -> list[tuple]:
    """The options of :func:`_options` of one algorithm (none, its reason added to
    ``why``, when it cannot run)."""
    cal = model.calibration
    options: list[tuple] = []
    try:
        table, alone, together, latency, lat_up, scaleout, hot = _evaluate(
            model, op, name, prepared, alone_too)
    except NotApplicable as exc:
        why.append(f"{name}: {exc}")
        return options
    except GroupCut as exc:
        raise UserError(f"a group is cut apart: {exc}") from None
    on, innet = table["on"], table["in_network"]
    protos = step_protocols(bool((on & innet).any()),
                            bool((on & table["member"] & ~innet).any()), cal,
                            (op, name) in SEND_RECV)
    shape = step_shape(table)
    crosses = scaleout.any(axis=1)   # per group: a step crosses the scale-out network
    for proto in protos:
        lt = combine(table, together, latency, lat_up, scaleout, proto, cal, shape)
        if not alone_too:
            options.extend((name, proto.name, at, bt, crosses) for at, bt, _ in lt)
            continue
        la = combine(table, alone, latency, lat_up, scaleout, proto, cal, shape)
        for (at, bt, _), (aa, ba, _) in zip(lt, la, strict=True):
            options.append((name, proto.name, at, bt, aa, ba, hot, crosses))
    return options


def _ranges(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
            options: list[tuple]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(lo, hi)`` of shape ``(O, G)``: option ``o`` runs for group ``g`` at the sizes
    ``lo < n <= hi``, those of the group's own collective costed alone (NCCL's send/recv
    picks LL or Simple by size, whatever else runs beside it:
    :func:`~netmodel.collectives.cost.p2p_size_range`); None where every option runs at
    every size. A group whose steps cross the scale-out network needs only its size for
    that (unless the calibration is ``scaleup_everywhere``); one that stays on the scale-up
    network needs its links' rate too, read off the
    first such group of its size compiled alone
    (:meth:`~netmodel.collectives.cost.CompiledCollective.size_range`): the groups of one
    size share their steps (:data:`SEND_RECV`'s algorithms do), and compiling each alone
    would route every group's transfers twice (64 all-to-alls of 256 GPUs: 4.2 million).
    Groups of one size whose scale-up links differ in rate (a placement mixing a Lite
    package's mesh and its NVSwitch ports) then take the first one's channels."""
    cal = model.calibration
    if cal.p2p_ll_threshold <= 0 or not any((op, o[0]) in SEND_RECV for o in options):
        return None
    lo = np.zeros((len(options), len(groups)))
    hi = np.full((len(options), len(groups)), math.inf)
    first: dict[tuple, tuple[float, float]] = {}
    nics: dict[int, tuple[float, int] | None] = {}   # a crossing group's NICs, read once
    # the groups of each (size, crosses, NICs), in order of their first group: worked out
    # once per algorithm (its options share ``crosses``), not per option and group
    alike: dict[str, tuple[np.ndarray, list]] = {}
    for i, o in enumerate(options):
        if (op, o[0]) not in SEND_RECV:
            continue
        crosses = o[-1]
        hit_alike = alike.get(o[0])
        if hit_alike is None or hit_alike[0] is not crosses:
            where: dict[tuple, list[int]] = {}
            for g, members in enumerate(groups):
                net = bool(crosses[g]) and not cal.scaleup_everywhere
                if net and g not in nics:
                    nics[g] = group_nic(model.router, members)
                k = (len(members), bool(crosses[g]), nics.get(g) if net else None)
                where.setdefault(k, []).append(g)
            hit_alike = alike[o[0]] = (crosses, [(k, np.array(gs)) for k, gs in where.items()])
        for k, gs in hit_alike[1]:
            key = (o[0], o[1]) + k
            hit = first.get(key)
            if hit is None:
                members = groups[gs[0]]
                if k[1] and not cal.scaleup_everywhere:   # crosses the network
                    hit = p2p_size_range(o[1], op, len(members), True, (), cal, 1.0, k[2])
                else:
                    hit = model.compiled(op, o[0], members).size_range(o[1], cal)
                first[key] = hit
            lo[i, gs], hi[i, gs] = hit
    if not (lo > 0).any() and not (hi < math.inf).any():
        return None
    return lo, hi


def _one_class(lo: np.ndarray | None, hi: np.ndarray | None) -> bool:
    """Whether every group runs each option at the same sizes (``lo``, ``hi`` of shape
    ``(O, G)``; None: at every size)."""
    return lo is None or hi is None or bool((lo == lo[:, :1]).all() and (hi == hi[:, :1]).all())


def _choice_keys(op: str, names: list[str], ranged: bool) -> np.ndarray:
    """The shared choice each option belongs to: its own, except that where groups run
    an option at different sizes (``ranged``) the options of one send/recv algorithm
    (:data:`~netmodel.collectives.cost.SEND_RECV`) are one choice, each group running the
    protocol its size picks (where all run each option at the same sizes, LL and Simple
    are never both possible at one size, and each stays its own choice)."""
    keys, seen = [], {}
    for i, name in enumerate(names):
        k = name if ranged and (op, name) in SEND_RECV else i
        keys.append(seen.setdefault(k, len(seen)))
    return np.array(keys, dtype=np.intp)


def _by_choice(t: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Per shared choice (:func:`_choice_keys`) and group, the smallest of its options'
    times ``t`` (shape ``(O, G, ...)``)."""
    if len(keys) == 0 or keys[-1] == len(keys) - 1:   # every option its own choice
        return t
    out = np.full((int(keys.max()) + 1,) + t.shape[1:], np.inf)
    np.minimum.at(out, keys, t)
    return out


def _masked(t: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, n) -> np.ndarray:
    """``t`` (shape ``(O, G) + n.shape``) with ``inf`` where an option does not run."""
    if lo is None or hi is None:
        return t
    shape = lo.shape + (1,) * np.ndim(n)
    return np.where((n > lo.reshape(shape)) & (n <= hi.reshape(shape)), t, np.inf)


def concurrent_makespan(op: str, choices, a: np.ndarray, b: np.ndarray,
                        lo: np.ndarray | None, hi: np.ndarray | None,
                        nbytes: ArrayLike) -> np.ndarray:
    """The collective's time at the sizes ``nbytes`` (any shape) from
    :func:`concurrent_linear`'s ``(choices, a, b, lo, hi)``: the makespan of the best
    shared choice, each group's lines counted only at the sizes they run at.

    >>> concurrent_makespan("send-recv", [("direct", "LL"), ("direct", "Simple")],
    ...                     np.array([[1.0, 1.0], [3.0, 3.0]]), np.array([[2.0, 2.0],
    ...                     [1.0, 1.0]]), np.array([[0.0, 0.0], [4.0, 2.0]]),
    ...                     np.array([[4.0, 2.0], [np.inf, np.inf]]), [1.0, 3.0, 5.0]).tolist()
    [3.0, 7.0, 8.0]
    """
    n = np.asarray(nbytes, dtype=float)
    merge = not _one_class(lo, hi)
    keys = _choice_keys(op, [c[0] for c in choices], merge)
    if not merge:
        shape = a.shape + (1,) * n.ndim
        t = _masked(a.reshape(shape) + b.reshape(shape) * n, lo, hi, n)
        return t.max(axis=1).min(axis=0)
    # per group the smallest of its choice's options: (O, G, sizes) at once, in parts of
    # at most 2**22 numbers (a search grid holds thousands of sizes)
    flat = n.ravel()
    out = np.empty(len(flat))
    step = max(1, 2 ** 22 // max(1, a.size))
    for i in range(0, len(flat), step):
        m = flat[i:i + step]
        t = _masked(a[:, :, None] + b[:, :, None] * m, lo, hi, m)
        out[i:i + step] = _by_choice(t, keys).max(axis=1).min(axis=0)
    return out.reshape(n.shape)


def concurrent_linear(model: FabricCostModel, groups: Groups, op: str,
                      algorithm: str | None = None, ranges: bool = False) -> tuple:
    """The linear candidates of ``op`` run by all ``groups`` at once, compiled once so that
    any array of sizes costs a multiply-add: ``(choices, a, b)``, and with ``ranges``
    ``(choices, a, b, lo, hi)``.

    ``choices`` lists the valid ``(algorithm, protocol)``; ``a`` and ``b`` have shape
    ``(C, G)``: group ``g`` takes ``a[c, g] + b[c, g] * n`` seconds together under choice
    ``c``. The time of the collective at size ``n`` is then the makespan of the best shared
    choice, ``min_c max_g (a[c, g] + b[c, g] * n)``, among the choices that run on every
    group (:func:`concurrent_cost` instead lets each group run its own best alone).
    ``lo`` and ``hi`` (shape ``(C, G)``, or both None where every choice runs at every
    size): group ``g`` runs choice ``c`` only at the sizes ``lo < n <= hi`` (NCCL's
    send/recv: LL or Simple by each group's size rule, those choices one shared
    algorithm); :func:`concurrent_makespan` takes the five. ``groups`` and ``algorithm``
    as there.

    >>> import networkx as nx
    >>> from netmodel.collectives.calibration import Calibration
    >>> g = nx.Graph(name="one link", spec="", gpus=4)
    >>> g.add_node("sw", kind="switch", tier=0, radix=4, latency=0.0,
    ...            in_network_reduction=False)
    >>> for i in range(4):
    ...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    ...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    >>> m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
    >>> choices, a, b = concurrent_linear(m, [("gpu0", "gpu1"), ("gpu2", "gpu1")],
    ...                                   "send-recv")
    >>> choices[0][0], a.shape, b[0].tolist()  # both send into gpu1: 2 s per GB each
    ('direct', (1, 2), [2e-09, 2e-09])
    """
    groups, names = _prepare(model, groups, op, algorithm)
    options = _options(model, groups, op, names, alone_too=False)
    out = (tuple((o[0], o[1]) for o in options), np.stack([o[2] for o in options]),
           np.stack([o[3] for o in options]))
    if not ranges:
        return out
    return out + (_ranges(model, groups, op, options) or (None, None))


#: Algorithms that reduce in switches: none runs where no switch of the fabric reduces.
_NEEDS_REDUCTION = ("in-network", "in-network-tree", "collnet-direct", "collnet-chain")


def _runs_on(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
             name: str) -> np.ndarray:
    """Which ``groups`` algorithm ``name`` can run on, as a mask: its check of each group
    (:func:`~netmodel.collectives.algorithms.precheck`) and its steps, generated once per
    class of groups that share them."""
    runs = np.ones(len(groups), dtype=bool)
    if name in _NEEDS_REDUCTION and not has_in_network(model.graph):
        return ~runs   # no group can: their steps are never generated (2,048 TP-8 groups)
    if (name, op) in PRECHECKS:
        for g, members in enumerate(groups):
            try:
                precheck(name, op, members, model.graph)
            except NotApplicable:
                runs[g] = False
    where = np.flatnonzero(runs)
    if not len(where):
        return runs
    sub = _prepared(model, tuple(groups[g] for g in where.tolist()), True)
    # hierarchical's steps are refused by the GPUs' domains alone (algorithms.
    # _rails_or_refuse): one look per class of groups whose domains fall alike
    for idx in (sub.classes("tree") if name == "hierarchical" else sub.classes(name)):
        try:
            generate(name, op, sub.ordered[idx[0]], sub.graph)
        except NotApplicable:
            runs[where[idx]] = False
    return runs


def _embed(o: tuple, where: np.ndarray, G: int) -> tuple:
    """Option ``o`` of :func:`_options` costed on the groups ``where`` of ``G``, as one of
    all ``G`` groups: no time (inf) on the others."""
    def full(x, fill):
        out = np.full(G, fill, dtype=np.asarray(x).dtype)
        out[where] = x
        return out

    name, proto, at, bt, aa, ba, hot, crosses = o
    return (name, proto, full(at, np.inf), full(bt, 0.0), full(aa, np.inf), full(ba, 0.0),
            hot, full(crosses, False))


def _own_options(model: FabricCostModel, groups: tuple[tuple[Hashable, ...], ...], op: str,
                 names: list[str], n: np.ndarray | None, hot: bool = True) -> tuple:
    """Every group's candidates: ``(options, lo, hi, whole)``, the options of
    :func:`_options` and their sizes (:func:`_ranges`; ``lo``, ``hi`` both None where every
    option runs at every size) over all groups, an algorithm that runs on some groups only
    (two-shot on a Lite package's mesh, in-network within a scale-up domain) costed on
    those and inf on the others; ``whole``, the algorithms costed on every group together
    (only their loads together are the groups' own when all run one of them). ``hot``:
    as :func:`_options`'."""
    why: dict[str, list[str]] = {}
    options = _options(model, groups, op, names, nbytes=n, why_out=why, hot=hot)
    G = len(groups)
    lo, hi = (_ranges(model, groups, op, options) or (None, None)) if options else (None, None)
    whole = {o[0] for o in options}
    extra, ranges = [], []
    for name in names:
        if not why.get(name):
            continue
        runs = _runs_on(model, groups, op, name)
        if runs.all() or not runs.any():   # runs.all(): left out for another reason
            continue
        where = np.flatnonzero(runs)
        sub = tuple(groups[g] for g in where.tolist())
        sub_opts = _options(model, sub, op, [name], nbytes=n, why_out={}, hot=hot)
        if not sub_opts:
            continue
        slo, shi = _ranges(model, sub, op, sub_opts) or (None, None)
        for j, o in enumerate(sub_opts):
            extra.append(_embed(o, where, G))
            r_lo, r_hi = np.zeros(G), np.full(G, math.inf)
            if slo is not None:
                r_lo[where], r_hi[where] = slo[j], shi[j]
            ranges.append((r_lo, r_hi))
    if not options and not extra:
        reasons = "; ".join(w for ws in why.values() for w in ws)
        raise UserError(f"no algorithm can run {op} on these groups ({reasons})")
    if extra:
        if lo is None:
            lo, hi = np.zeros((len(options), G)), np.full((len(options), G), math.inf)
        options = options + extra
        lo = np.vstack([lo] + [r[0][None] for r in ranges])
        hi = np.vstack([hi] + [r[1][None] for r in ranges])
        if not (lo > 0).any() and not (hi < math.inf).any():
            lo = hi = None
    return options, lo, hi, whole


def _mixed_classes(groups: _Groups, op: str, assignment: np.ndarray) -> list:
    """:func:`_group_steps` of groups running different algorithms (``assignment``: each
    group's), each algorithm's classes of groups that share steps cut to its groups."""
    out = []
    for name in dict.fromkeys(assignment.tolist()):
        mine = assignment == name
        for idx in groups.classes(name):
            sub = idx[mine[idx]]
            if len(sub):
                steps = generate(name, op, groups.ordered[sub[0]], groups.graph)
                out.append((steps, groups.rows(sub), sub))
    return out


def _mixed_lines(model: FabricCostModel, op: str, evaluated: tuple, rows: np.ndarray,
                 name: str, proto: str) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` of shape ``(lines, len(rows))``: the lines together of the groups
    ``rows``, all running ``name`` with protocol ``proto``, from the loads of every group's
    steps (:func:`_evaluate` of :func:`_mixed_classes`)."""
    table, _, together, latency, lat_up, scaleout, _ = evaluated
    cal = model.calibration
    sub = {k: v[rows] for k, v in table.items()}
    on, innet = sub["on"], sub["in_network"]
    protos = step_protocols(bool((on & innet).any()),
                            bool((on & sub["member"] & ~innet).any()), cal,
                            (op, name) in SEND_RECV)
    protocol = next(p for p in (*protos, *cal.protocols, cal.in_network) if p.name == proto)
    lines = combine(sub, together[rows], latency[rows], lat_up[rows], scaleout[rows],
                    protocol, cal, step_shape(sub))
    return np.stack([x[0] for x in lines]), np.stack([x[1] for x in lines])


def _own_times(options: list[tuple], lo, hi, n: np.ndarray) -> tuple:
    """Each group's own choice and times at the sizes ``n`` from ``options``
    (:func:`_own_options`, with their sizes ``lo``, ``hi``): ``(time, alone, own, keys,
    pairs, t_all)``: seconds together, each running its own choice beside the others'
    (every group on one algorithm's loads: :func:`_mixed_sizes` says where that is not
    so), seconds alone, each group's choice (an index into ``pairs``, the (algorithm,
    protocol) choices), each option's choice, and every option's lines together at ``n``
    (``(O, G, S)``)."""
    t_all = _masked(np.stack([o[2][:, None] + o[3][:, None] * n[None, :] for o in options]),
                    lo, hi, n)
    a_all = _masked(np.stack([o[4][:, None] + o[5][:, None] * n[None, :] for o in options]),
                    lo, hi, n)
    # each group's choices: (algorithm, protocol), its lines one choice (the least at n)
    pairs: dict[tuple[str, str], int] = {}
    keys = np.array([pairs.setdefault((o[0], o[1]), len(pairs)) for o in options],
                    dtype=np.intp)
    G, S = t_all.shape[1:]
    # each group's own choice: the one holding its least line alone (the first such)
    best = np.argmin(a_all, axis=0)                        # (G, S): an option
    own = keys[best]                                       # (G, S): its choice
    gi, si = np.arange(G)[:, None], np.arange(S)[None, :]
    alone = a_all[best, gi, si]
    # together: the least of the own choice's lines (gathered line by line, not reduced
    # over every option: 2,048 groups x 30 sizes x 40 options)
    order = np.argsort(keys, kind="stable")
    count = np.bincount(keys)
    first = (np.cumsum(count) - count)[own]
    time = np.full((G, S), np.inf)
    for j in range(int(count.max())):
        o = order[np.minimum(first + j, len(order) - 1)]
        np.minimum(time, np.where(j < count[own], t_all[o, gi, si], np.inf), out=time)
    return time, alone, own, keys, list(pairs), t_all


def _mixed_sizes(own: np.ndarray, pair_list: list, whole: set) -> np.ndarray:
    """Per size, whether the groups' own choices ``own`` (``(G, S)``, indices into
    ``pair_list``) run different algorithms, or one not costed on every group together
    (not in ``whole``): their loads together are then no single algorithm's."""
    alg_names = list(dict.fromkeys(p[0] for p in pair_list))
    alg = np.array([alg_names.index(p[0]) for p in pair_list], dtype=np.intp)[own]
    in_whole = np.array([name in whole for name in alg_names])
    return (alg != alg[:1]).any(axis=0) | ~in_whole[alg[0]]


def concurrent_own(model: FabricCostModel, groups: Groups, op: str,
                   algorithm: str | None = None) -> tuple:
    """:func:`concurrent_cost`'s makespan compiled once for any sizes (the fabric search's
    ``instances = "all"``): ``(options, lo, hi, whole, groups)`` for
    :func:`concurrent_own_makespan`, each group running its own choice, the fastest for it
    alone, as NCCL's communicators tune apart. Groups whose lines are all alike (one shape:
    the usual case) are kept once (they choose alike and take the same time); the groups
    themselves are kept for the sizes where their choices run different algorithms
    (costed there by :func:`concurrent_cost`, their steps routed together)."""
    groups, names = _prepare(model, groups, op, algorithm)
    options, lo, hi, whole = _own_options(model, groups, op, names, None, hot=False)
    cols = [np.stack([np.asarray(o[k], dtype=float) for o in options]) for k in (2, 3, 4, 5)]
    if lo is not None:
        cols += [lo, hi]
    _, keep = np.unique(np.vstack(cols), axis=1, return_index=True)
    keep = np.sort(keep)
    opts = [(o[0], o[1], o[2][keep], o[3][keep], o[4][keep], o[5][keep]) for o in options]
    if lo is not None:
        lo, hi = lo[:, keep], hi[:, keep]
    return opts, lo, hi, whole, groups


def _own_lean(options: list[tuple], lo, hi, n: np.ndarray) -> tuple | None:
    """:func:`_own_times`' ``(time, alone, own, pairs)`` choice by choice, without the
    tables of every option (the fabric search asks for hundreds of thousands of sizes at
    once), where each choice's options lie side by side (else None): per choice its least
    line alone and together, a group's own the first with the least alone, as there."""
    pairs: dict[tuple[str, str], int] = {}
    keys = [pairs.setdefault((o[0], o[1]), len(pairs)) for o in options]
    if any(k < j for j, k in zip(keys, keys[1:], strict=False)):   # numbered as first seen
        return None

    def line(i, a, b):
        t = a[:, None] + b[:, None] * n[None, :]
        if lo is None or hi is None:
            return t
        return np.where((n > lo[i][:, None]) & (n <= hi[i][:, None]), t, np.inf)

    blocks = [[i for i, key in enumerate(keys) if key == k] for k in range(len(pairs))]

    def least(k, a, b):   # choice k's least line (its a, b fields)
        out = None
        for i in blocks[k]:
            t = line(i, options[i][a], options[i][b])
            out = t if out is None else np.minimum(out, t)
        return out

    alone = own = None
    for k in range(len(pairs)):
        a_k = least(k, 4, 5)
        if alone is None:
            alone, own = a_k, np.zeros(a_k.shape, dtype=np.intp)
            continue
        better = a_k < alone
        alone = np.where(better, a_k, alone)
        own[better] = k
    # together: only the choices some group takes somewhere
    chosen = np.unique(own).tolist()
    time = least(chosen[0], 2, 3)
    for k in chosen[1:]:
        time = np.where(own == k, least(k, 2, 3), time)
    return time, alone, own, list(pairs)


def concurrent_own_makespan(model: FabricCostModel, op: str, own: tuple,
                            nbytes: ArrayLike) -> np.ndarray:
    """The makespan at the sizes ``nbytes`` (any shape) of :func:`concurrent_own`'s
    ``own``: :func:`concurrent_cost`'s, each group running its own choice."""
    options, lo, hi, whole, groups = own
    n = np.asarray(nbytes, dtype=float)
    flat = n.ravel()
    lean = _own_lean(options, lo, hi, flat)
    if lean is None:
        time, alone, choice, _, pairs, _ = _own_times(options, lo, hi, flat)
    else:
        time, alone, choice, pairs = lean
    if not np.isfinite(alone).all():
        raise UserError(f"no algorithm can run {op} on every group")
    out = time.max(axis=0)
    mixed = _mixed_sizes(choice, pairs, whole)
    if mixed.any():   # groups on different algorithms: their steps routed together
        out[mixed] = concurrent_cost(model, groups, op, flat[mixed]).makespan
    return out.reshape(n.shape)


def concurrent_cost(model: FabricCostModel, groups: Groups, op: str, nbytes: ArrayLike,
                    algorithm: str | None = None) -> ConcurrentResult:
    """Cost ``op`` of ``nbytes`` (scalar or array) run by all ``groups`` at once.

    ``groups``: explicit GPU lists, or an int size to cut the whole fabric into groups by
    the model's placement policy. ``algorithm``: one name, or None/"auto" for the model's
    choice, which each group makes for itself, as it would alone (NCCL's communicators
    tune apart, knowing nothing of each other's traffic). A group cut apart by a failure
    raises :class:`~compute.errors.UserError`.
    """
    check_op(op)
    n = np.atleast_1d(check_sizes(nbytes)).astype(float)
    groups, names = _prepare(model, groups, op, algorithm)
    options, lo, hi, whole = _own_options(model, groups, op, names, n)
    time, alone, own, keys, pair_list, t_all = _own_times(options, lo, hi, n)
    if not np.isfinite(alone).all():
        g = int(np.flatnonzero(~np.isfinite(alone).all(axis=1))[0])
        raise UserError(f"no algorithm can run {op} on the group "
                        f"{', '.join(map(str, groups[g]))}")
    G, S = own.shape
    algorithms = np.array([p[0] for p in pair_list])[own]
    protocols = np.array([p[1] for p in pair_list])[own]
    # sizes where the groups run different algorithms (or one that runs on some only):
    # every group's own steps routed together (their loads are no single algorithm's)
    mixed = _mixed_sizes(own, pair_list, whole).tolist()
    prepared = None
    evaluated: dict[tuple, tuple] = {}
    lines: dict[tuple, tuple] = {}
    mixed_hot = None
    for s in range(S):
        if not mixed[s]:
            continue
        col = algorithms[:, s]
        if prepared is None:
            prepared = _prepared(model, groups, True)
        assignment = tuple(col.tolist())
        ev = evaluated.get(assignment)
        if ev is None:
            try:
                ev = evaluated[assignment] = _evaluate(
                    model, op, None, prepared, True, _mixed_classes(prepared, op, col))
            except GroupCut as exc:
                raise UserError(f"a group is cut apart: {exc}") from None
        for k in np.unique(own[:, s]).tolist():
            rows = np.flatnonzero(own[:, s] == k)
            lk = (assignment, k, rows.tobytes())
            hit = lines.get(lk)
            if hit is None:
                hit = lines[lk] = _mixed_lines(model, op, ev, rows, *pair_list[k])
            time[rows, s] = (hit[0] + hit[1] * n[s]).min(axis=0)
        if s == S - 1:
            mixed_hot = ev[6]
    # the choice of each size's slowest group, and (at the largest size) its option's hot
    # links: the option of that choice it runs (its protocol by size for send/recv)
    slowest = np.argmax(time, axis=0)
    cols = np.arange(S)
    router = model.router
    if mixed_hot is None:
        k = own[slowest[-1], -1]
        at = np.where(keys == k, t_all[:, slowest[-1], -1], np.inf)
        hot = options[int(np.argmin(at))][6]
    else:
        hot = mixed_hot
    worst = max(hot, key=lambda h: h[0][0] if h else 0.0) if hot else []
    hotspots = tuple((router.link_name(t), users) for _, t, users in worst)
    return ConcurrentResult(op, groups, n, tuple(algorithms[slowest, cols].tolist()),
                            tuple(protocols[slowest, cols].tolist()), time, alone, hotspots,
                            algorithms, protocols)
