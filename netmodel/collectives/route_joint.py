"""A step's transfers spread together: the split of a step's traffic over its transfers'
shortest paths that makes its busiest link (load over bandwidth) least, where routing each
transfer on its own leaves a busier one.

Each transfer's own route (:mod:`netmodel.collectives.route_search`'s capacity split, or a
maximum flow, :mod:`netmodel.collectives.route_flows`) is as fast as that transfer alone can
be, but blind to the step's other transfers: on a torus whose circuits or cables are not all
alike, a faster link draws some transfers' traffic onto links other transfers need, and more
bandwidth can make a step slower (a 3 x 4 torus of circuits with each column circuit
doubled: the tree all-reduce's busiest link 5/3 -> 7/4 n / B). The joint split is a
linear programme (a multi-commodity flow): a flow per commodity over the links its
transfers may use, every link's load at most ``z`` times its bandwidth, ``z`` least
(:func:`joint_loads`, solved by HiGHS through SciPy's ``linprog``).

What a transfer may use: on a fabric without switches (rings, tori, meshes, circuits),
every shortest path of its pair (the kept shortest paths towards its destination,
:meth:`~netmodel.collectives.route_dags.DagRoutes._dag_csrs`), the transfers towards one
destination one commodity (every path along those links is a shortest path of its
source), up to :data:`JOINT_DAG_WORK` destinations x nodes; elsewhere, the links its own
route crosses, a commodity per pair (ECMP over the shortest up/down paths). Each transfer's own route is one split of them, so the joint split
is never busier than the routes it replaces; and neither depends on bandwidths (but a
searched route of a switched fabric that a maximum flow trims), so on one side of the
fabric (below) a faster link or one more parallel link (a bandwidth raised) never makes a
step busier.

A step is costed with its busiest link's load over bandwidth times an efficiency, one for
the scale-up side and one for the scale-out side (a calibration's): so each side's links
are weighed by the own routes' busiest of that side, and a split replaces the routes only
where it is lighter on both sides, by more than :data:`JOINT_RTOL`. A step on one side
(rings, tori, meshes, circuits: GPU-GPU links) gets the least busy split there is; one that
crosses both (a switched fabric's) a split no slower under any calibration.

It is asked only where it can change the answer: a step of at most
:data:`JOINT_TRANSFERS` transfers and :data:`JOINT_VARIABLES` flow variables whose own
routes' busiest link is busier than bounds no split can beat (what each source must send
over the links out of it and each destination receive over the links into it; the load
on the links some transfers must cross, alone at their distance from the destination;
the step's bytes times links spread evenly over every link its transfers may use): steps
of neighbours (rings), all-to-alls on full tori and fat trees, and most steps of the
shipped scenarios meet a bound and keep their routes without a solve (``netmodel study
lite-gpu`` solves 24 steps in its main process, most of them tree steps on ``lite-ocs``'s
circuit tori; about half keep their routes).
Larger steps keep their transfers' own routes (the 4,096-GPU torus's all-pairs steps),
and so does a step of NCCL's send/recv that PXN routes through other GPUs' NICs. The
routes' latencies are not changed (the joint split crosses links of the same shortest
paths). Concurrent collectives (:mod:`netmodel.collectives.concurrent_loads`) spread each
group's transfers together as the group alone would, on fabrics without switches, in steps
of at most :data:`~netmodel.collectives.concurrent_loads.JOINT_GROUPS` groups; elsewhere,
and in the schedule that follows time between groups of different sizes, they keep each
transfer's own route.

>>> import networkx as nx
>>> from netmodel.collectives.routing import Router
>>> g = nx.Graph(name="square", spec="", gpus=4)
>>> for i in range(4):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
>>> for i in range(4):  # a ring of 4
...     g.add_edge(f"gpu{i}", f"gpu{(i + 1) % 4}", bandwidth=1e9, latency=0.0,
...                medium="copper", lanes=1)
>>> r = Router(g)
>>> step = (("gpu0", "gpu2", 1.0), ("gpu1", "gpu2", 1.0))
>>> links, load = r.loads(step, split=True)[:2]  # each on its own: half of gpu0's by gpu1
>>> float(np.bincount(links, load, minlength=r.n_links)[r.link_id("gpu1", "gpu2")])
1.5
>>> links, load, *_ = r.link_loads(step)  # together: all of gpu0's round by gpu3
>>> {r.link_name(k): round(float(x), 6) for k, x in zip(links, load)}
{('gpu0', 'gpu3'): 1.0, ('gpu1', 'gpu2'): 1.0, ('gpu3', 'gpu2'): 1.0}
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.route_types import KIND_SWITCH, TRANSIT_KINDS
from netmodel.collectives.steps import unique

if TYPE_CHECKING:
    from netmodel.collectives.route_types import Plan

__all__ = ["JOINT_VARIABLES", "joint_flows", "joint_loads"]

#: The most flow variables (commodity x link) of a joint split; a larger step keeps its
#: transfers' own routes. A 4x4 torus's tree all-reduce (60 transfers, 16 destinations):
#: 16 x 64 links at most, solved in a few milliseconds.
JOINT_VARIABLES = 20_000
#: The most transfers of a step looked at (their links are gathered in Python loops).
JOINT_TRANSFERS = 2_048
#: The most destinations x nodes of a step whose shortest paths towards each destination
#: are walked (the router's arrays of them, built with numpy, one row per destination and
#: node); a larger step's transfers may use only their own routes' links.
JOINT_DAG_WORK = 250_000
#: The most links of the pairs' walks :func:`_walk` keeps, a router's in all (a pointer each,
#: the links' numbers shared with the kept searches): a pairwise all-to-all over the 128
#: GPUs of an 8x4x4 torus walks 0.58 million, its 16,256 ordered pairs', in either ring
#: order.
JOINT_WALKS_KEPT = 1 << 21
#: A joint split replaces the own routes only where its busiest link is lighter by more
#: than this (relative), and a bound within it of the own routes' busiest skips the solve:
#: HiGHS's answer is exact to about 1e-10, and an equal answer keeps the routes (and the
#: bottleneck link) the step had.
JOINT_RTOL = 1e-7


def _supports(router, pl: Plan) -> tuple[np.ndarray, np.ndarray]:
    """``(transfer, link)`` of every link each transfer's own route loads (weight > 0)."""
    ts, ls = [], []
    if len(pl.routed):
        ts.append(np.repeat(pl.routed, np.diff(pl.route_ptr)))
        ls.append(pl.route_links)
        keep = pl.route_weights > 0
        ts[-1], ls[-1] = ts[-1][keep], ls[-1][keep]
    if len(pl.hop_index):
        keep = pl.hop_weights > 0
        ts.append(pl.hop_index[keep])
        ls.append(pl.hop_links[keep])
    if len(pl.piece_of):
        which, lk, w = router.expand(pl.piece_of, np.ones(len(pl.piece_of)))
        keep = w > 0
        ts.append(pl.pieces[which[keep]])
        ls.append(lk[keep])
    if not ts:
        z = np.zeros(0, dtype=np.int64)
        return z, z
    return (np.concatenate(ts).astype(np.int64, copy=False),
            np.concatenate(ls).astype(np.int64, copy=False))


#: The most nodes of a level :func:`_walk` reads node by node in Python (a slice each,
#: ~1 us); a wider level is read with numpy at once (~20 us a level whatever its width,
#: which on the study's small fabrics, levels of one to a few nodes, cost 2.4 s where the
#: node-by-node walk took 0.2 s; a 30x30x30 torus's far pairs' levels hold hundreds).
_WALK_LOOPED = 16


def _dag_links(router, src: np.ndarray, dst: np.ndarray) -> tuple | None:
    """``(commodity, link, com, forced)``: every link of every shortest path of each pair
    (the router's shortest-path arrays towards each destination,
    :meth:`~netmodel.collectives.route_dags.DagRoutes._dag_csrs`, the entries of
    :meth:`~netmodel.collectives.route_search.SearchedRoutes._dag` in its order), a
    commodity per destination (``com``, each transfer's), and ``forced``, ``(transfer,
    link)`` of the links every shortest path of a transfer crosses (alone at their distance
    from its destination); None where a pair's ends may not forward (not GPUs or
    switches). The arrays are built with numpy (on a torus of one bandwidth translated from
    node 0's) and kept by the router; the per-node search in Python they replace was
    about 20 us a node, 24 s of CPU for an all-reduce over 8 GPUs placed at random on a
    30x30x30 torus."""
    nodes, kind = router._nodes, router.kind
    dests, com = np.unique(dst, return_inverse=True)
    n = router._n
    upair, pix = np.unique(dst * n + src, return_inverse=True)
    pairs = np.stack([upair // n, upair % n])
    if any(kind.get(nodes[x]) not in TRANSIT_KINDS for x in np.unique(pairs).tolist()):
        return None
    csrs = dict(zip(dests.tolist(), router._dag_csrs(dests), strict=True))
    out_c, out_l, f_pair, f_link = [], [], [], []
    last, dag, links = -1, None, set()
    walks = router.__dict__.setdefault("_joint_walks", {})
    kept = router.__dict__.get("_joint_walked", 0)
    for k, (d, s) in enumerate(pairs.T.tolist()):   # pairs by destination
        if d != last:
            if last >= 0:
                out_l.append(np.fromiter(links, np.int64, count=len(links)))
                out_c.append(np.full(len(links), len(out_c), dtype=np.int64))
            last, links = d, set()
            dag = csrs[d]
        depth = int(dag[0][s])
        if depth < 0:
            return None
        walk = walks.get((d, s))
        if walk is None:
            walk = walks[(d, s)] = _walk(dag, s, depth)
            kept += len(walk[0])
            while kept > JOINT_WALKS_KEPT:
                kept -= len(walks.pop(next(iter(walks)))[0])
            router._joint_walked = kept
        mine, forced = walk
        f_pair += [k] * len(forced)
        f_link += forced
        links.update(mine)
    if last < 0:
        return None
    out_l.append(np.fromiter(links, np.int64, count=len(links)))
    out_c.append(np.full(len(links), len(out_c), dtype=np.int64))
    f_pair = np.array(f_pair, dtype=np.int64)
    f_link = np.array(f_link, dtype=np.int64)
    # each transfer's forced links: its pair's
    order = np.argsort(pix, kind="stable")
    first = np.searchsorted(pix[order], np.arange(pairs.shape[1]))
    counts = np.bincount(pix, minlength=pairs.shape[1])
    reps = counts[f_pair]
    f_t = order[np.repeat(first[f_pair], reps) + np.arange(int(reps.sum()))
                - np.repeat(np.cumsum(reps) - reps, reps)]
    return (np.concatenate(out_c), np.concatenate(out_l), com,
            (f_t, np.repeat(f_link, reps)))


def _walk(dag: tuple, src: int, depth: int) -> tuple[tuple, tuple]:
    """Every link of every shortest path from node ``src`` in ``dag`` (a destination's
    arrays, ``(hops, pointer per node, next node, link id, ...)``, :meth:`~netmodel.
    collectives.route_dags.DagRoutes._dag_csrs`; ``src`` ``depth`` hops from it), level by
    level towards the destination (a level's nodes in the order the one before reaches
    them, each node's next hops in their order), and those alone at their level (every
    shortest path crosses them): ``(links, forced)``. A level of up to
    :data:`_WALK_LOOPED` nodes is read node by node, a wider one with numpy (the same
    order either way).
    :func:`_dag_links` keeps each pair's, a router's (at most :data:`JOINT_WALKS_KEPT`
    links in all, the oldest going first): a pairwise all-to-all walks every ordered pair
    of its group once a ring order, the same pairs in the other."""
    ptr, nxt, lid = dag[1], dag[2], dag[3]
    level, mine, forced = [src], [], []
    for _ in range(depth):
        if len(level) <= _WALK_LOOPED:
            here, ahead = [], {}
            for u in level:   # a few nodes: their slices, without numpy's per-call cost
                a, b = ptr[u:u + 2].tolist()
                here += lid[a:b].tolist()
                ahead.update(dict.fromkeys(nxt[a:b].tolist()))
            level = list(ahead)
        else:
            at = np.asarray(level, dtype=np.int64)
            lo = ptr[at]
            c = ptr[at + 1] - lo
            start = np.cumsum(c) - c
            e = np.repeat(lo - start, c) + np.arange(int(c.sum()))
            here = lid[e].tolist()
            ahead = nxt[e]
            first = np.unique(ahead, return_index=True)[1]
            level = ahead[np.sort(first)].tolist()   # each next node once, first reached first
        if len(here) == 1:
            forced.append(here[0])
        mine += here
    return tuple(mine), tuple(forced)


def _tops(router, uniq: np.ndarray, load: np.ndarray) -> tuple[float, np.ndarray]:
    """The fabric's highest route bandwidth and, on each side (scale-up, scale-out:
    ``Router.scaleout``), the own routes' busiest load over bandwidth scaled by it: what
    :func:`_scaled` weighs each link's bandwidth by."""
    most = float(router._route_bw.max())
    per = load / (router._route_bw[uniq] / most)
    top = np.zeros(2)
    np.maximum.at(top, router.scaleout[uniq].astype(np.intp), per)
    return most, top


def _scaled(router, most: float, top: np.ndarray, links: np.ndarray | None = None
            ) -> np.ndarray:
    """Each link's bandwidth times the own routes' busiest load over bandwidth among the
    links of its side (scale-up or scale-out, ``Router.scaleout``), so that the own routes'
    busiest link of either side is at 1 (``most``, ``top``: :func:`_tops`): a split whose
    every link is below 1 is faster on both sides, whatever efficiency a calibration gives
    each (a step is costed with its busiest link's load over bandwidth times efficiency).
    Links of a side the own routes do not cross get 0 (the step keeps off them: its links
    are its routes'). Every link's, or only those of ``links`` (the same values)."""
    if links is None:
        return router._route_bw / most * top[router.scaleout.astype(np.intp)]
    return router._route_bw[links] / most * top[router.scaleout[links].astype(np.intp)]


def _ends_bound(router, src: np.ndarray, dst: np.ndarray, frac: np.ndarray, most: float,
                top: np.ndarray) -> float:
    """What each source must send over all the links out of it and each destination
    receive over all those into it, over their bandwidths (:func:`_scaled`), the larger:
    no split beats it. Summed over the step's ends' links only, each node's in ascending
    link order as a :func:`numpy.bincount` over every link of the fabric sums them (the
    same sums to the last bit, without the fabric-wide arrays: a 64-GPU step of a
    16,384-GPU fat tree read its 98,304 links)."""
    best = 0.0
    for end, flip in ((src, 0), (dst, 1)):
        nodes = unique(end)   # (np.unique imports numpy.ma on its first call)
        where = np.searchsorted(nodes, end)
        need = np.bincount(where, frac, minlength=len(nodes))
        links, at = _end_links(router, nodes, flip)
        cap = np.bincount(at, _scaled(router, most, top, links), minlength=len(nodes))
        with np.errstate(divide="ignore", invalid="ignore"):
            best = max(best, float(np.nanmax(need / cap)))
    return best


#: The most nodes of the ends :func:`_end_links` keeps, a router's in all (the oldest go
#: first): a collective's steps start and end on the same GPUs, step after step.
JOINT_ENDS_KEPT = 1 << 16


def _end_links(router, nodes: np.ndarray, flip: int) -> tuple[np.ndarray, np.ndarray]:
    """The links out of ``nodes`` (sorted node numbers; ``flip`` 1: into them), ascending,
    and each one's node as its index in ``nodes``: a function of the router's links alone,
    kept per router by ``nodes`` and ``flip`` (up to :data:`JOINT_ENDS_KEPT` nodes)."""
    kept = router.__dict__.setdefault("_end_links", {})
    key = (flip, nodes.dtype.str, nodes.tobytes())
    hit = kept.get(key)
    if hit is not None:
        return hit[:2]
    keys, order, n = router._keys, router._order, router._n
    lo = np.searchsorted(keys, nodes * n)
    hi = np.searchsorted(keys, (nodes + 1) * n)
    count = hi - lo
    total = int(count.sum())
    # the links out of each node (their ids in _order, lo to hi), into it: each ^ 1
    pos = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(total)
    links = np.sort(order[pos] ^ flip)
    at = np.searchsorted(nodes, (router._dst if flip else router._src)[links])
    links.flags.writeable = at.flags.writeable = False
    kept[key] = (links, at, len(nodes))
    size = router.__dict__.get("_end_links_size", 0) + len(nodes)
    while size > JOINT_ENDS_KEPT and len(kept) > 1:
        size -= kept.pop(next(iter(kept)))[2]
    router.__dict__["_end_links_size"] = size
    return links, at


def _bound(router, src, dst, frac, t_of, l_of, bw, forced) -> float:
    """A load over bandwidth no split over the links ``l_of`` (of transfers ``t_of``) can
    beat: each source's traffic over the links out of it that its transfers may take, each
    destination's over those into it, and the load on each link that some transfers must
    cross (``forced``: ``(transfer, link)``)."""
    ls, ld = router._src[l_of], router._dst[l_of]
    best = 0.0
    for end, at, at_all in ((src, ls, router._src), (dst, ld, router._dst)):
        own = at == end[t_of]   # a link out of a transfer's source (into its destination)
        # each link once (a link leaves one node): the bandwidth out of (into) each node
        once = np.unique(l_of[own])
        cap = np.bincount(at_all[once], bw[once], minlength=router._n)
        need = np.bincount(end, frac, minlength=router._n)
        has = cap > 0
        if has.any():
            best = max(best, float((need[has] / cap[has]).max()))
    f_t, f_l = forced
    if len(f_t):
        load = np.bincount(f_l, frac[f_t], minlength=router.n_links)
        best = max(best, float((load / np.where(bw > 0, bw, np.inf)).max()))
    return best


def joint_loads(router, src: np.ndarray, dst: np.ndarray, frac: np.ndarray,
                pl: Plan, uniq: np.ndarray, load: np.ndarray, flows: bool = False
                ) -> tuple | None:
    """The link loads of a step (transfers ``src[i] -> dst[i]``, ``frac[i]`` of ``n``,
    node numbers; ``pl`` their :class:`~netmodel.collectives.route_types.Plan`) spread
    together, where that makes its busiest link lighter than ``load`` on ``uniq`` (their
    own routes'): ``(links ascending, load per byte of n)``, or None (the own routes stay).
    With ``flows``, a third item: each commodity's flows, ``[(its transfers' indices,
    {link id: flow})]`` (:func:`joint_flows`).
    """
    if len(src) < 2 or len(src) > JOINT_TRANSFERS or not len(uniq):
        return None
    keep = (src != dst) & (frac > 0)
    if keep.sum() < 2:
        return None
    if not (len(pl.hop_index) or len(pl.piece_of)) and (np.diff(pl.route_ptr) == 1).all():
        return None   # every transfer one link (neighbours): no other split
    src, dst, frac = src[keep], dst[keep], frac[keep]
    most, top = _tops(router, uniq, load)
    # first, each end's traffic over all its links: no split beats it
    if 1.0 <= _ends_bound(router, src, dst, frac, most, top) * (1 + JOINT_RTOL):
        return None
    bw = _scaled(router, most, top)
    index = np.cumsum(keep) - 1   # a kept transfer's new index
    t_of, l_of = _supports(router, pl)
    own = keep[t_of]
    t_of, l_of = index[t_of[own]], l_of[own]
    if len(l_of) > JOINT_VARIABLES:
        return None   # more own route links than a solve takes: the split's would be more
    got = None
    if (not (router._code == KIND_SWITCH).any() and not len(pl.hop_index)
            and len(np.unique(dst)) * router._n <= JOINT_DAG_WORK):
        got = _dag_links(router, src, dst)
        if got is not None:
            # every own route's links among its pair's shortest paths (else: own links)
            c_of, lk, com, forced = got
            nl = router.n_links
            if not np.isin(com[t_of] * nl + l_of, c_of * nl + lk).all():
                got = None
    if got is None:   # a commodity per pair, its links its own route's
        com = np.unique(src * router._n + dst, return_inverse=True)[1]
        cl = np.unique(com[t_of] * router.n_links + l_of)
        c_of, lk = cl // router.n_links, cl % router.n_links
        # a transfer's one link out of its source (into its destination) is forced
        f_t, f_l = [], []
        for end, at in ((src, router._src[l_of]), (dst, router._dst[l_of])):
            mine = at == end[t_of]
            alone = mine & (np.bincount(t_of[mine], minlength=len(src))[t_of] == 1)
            f_t.append(t_of[alone])
            f_l.append(l_of[alone])
        forced = (np.concatenate(f_t), np.concatenate(f_l))
    # every split over shortest paths loads the links with the same bytes in all (each
    # byte crosses as many links): no split beats them spread evenly over every link usable
    even = float(load.sum()) / float(bw[np.unique(lk)].sum())
    if 1.0 <= max(even, _bound(router, src, dst, frac, *_per_transfer(com, c_of, lk), bw,
                                forced)) * (1 + JOINT_RTOL):
        return None
    if len(lk) > JOINT_VARIABLES:
        return None
    got = _solve(router, src, dst, frac, com, c_of, lk, bw)
    if got is None or not flows:
        return None if got is None else got[:2]
    x, kept = got[2], np.flatnonzero(keep)
    per = []
    for c in range(int(com.max()) + 1):
        on = c_of == c
        per.append((kept[com == c].tolist(),
                    {int(k): float(f) for k, f in zip(lk[on], x[on], strict=True) if f > 0}))
    return got[0], got[1], per


def joint_flows(router, transfers) -> list | None:
    """The joint split of ``transfers`` (``(src, dst, fraction)`` triples) as flows, for
    checking it: ``[(indices of a commodity's transfers, {(u, v): flow per byte of n})]``,
    or None where the transfers keep their own routes (:meth:`~netmodel.collectives.
    route_plans.PlannedRoutes.link_loads` loads the links with their sum)."""
    if router.pxn_applies(transfers):
        return None
    pl = router.plan(transfers)
    links, coef = router._plan_loads(pl, True)[:2]
    uniq, inv = np.unique(links, return_inverse=True)
    src, dst, frac = router._node_ids(transfers)
    got = joint_loads(router, src, dst, frac, pl, uniq, np.bincount(inv, coef), flows=True)
    if got is None:
        return None
    return [(ts, {router.link_name(k): f for k, f in fl.items()}) for ts, fl in got[2]]


def _per_transfer(com: np.ndarray, c_of: np.ndarray, lk: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Each transfer's links, from its commodity's: ``(transfer, link)``."""
    order = np.argsort(c_of, kind="stable")
    c_sorted, l_sorted = c_of[order], lk[order]
    start = np.searchsorted(c_sorted, com, side="left")
    stop = np.searchsorted(c_sorted, com, side="right")
    count = stop - start
    t_of = np.repeat(np.arange(len(com)), count)
    at = np.repeat(start, count) + np.arange(int(count.sum())) - np.repeat(
        np.cumsum(count) - count, count)
    return t_of, l_sorted[at]


def _programme(router, src, dst, frac, com, c_of, lk, bw) -> tuple | None:
    """The linear programme's matrices (:func:`_solve`): ``(a_eq, b_eq, a_ub, ukey, links,
    lix)``, conservation rows keyed ``commodity x n + node`` (``ukey``) and a capacity row per
    link used (``links``, ``lix`` each variable's); None where a transfer's end is off its
    commodity's links."""
    from scipy.sparse import coo_matrix, csr_matrix

    V = len(lk)
    n = router._n
    u, v = router._src[lk], router._dst[lk]
    # conservation rows: (commodity, node), numbered as they occur
    rows_key = np.concatenate([c_of * n + u, c_of * n + v])
    ukey, rix = np.unique(rows_key, return_inverse=True)
    R = len(ukey)
    a_eq = csr_matrix((np.concatenate([np.ones(V), -np.ones(V)]),
                       (rix, np.tile(np.arange(V), 2))), shape=(R, V + 1))
    b_eq = np.zeros(R)
    for end, sign in ((src, 1.0), (dst, -1.0)):
        at = np.searchsorted(ukey, com * n + end)
        ok = (at < R) & (ukey[np.minimum(at, R - 1)] == com * n + end)
        if not ok.all():
            return None   # a transfer's end off its commodity's links: leave the routes
        np.add.at(b_eq, at, sign * frac)
    # capacity rows: each link used, its load less z times its bandwidth <= 0
    links, lix = np.unique(lk, return_inverse=True)
    L = len(links)
    a_ub = coo_matrix((np.concatenate([np.ones(V), -bw[links]]),
                       (np.concatenate([lix, np.arange(L)]),
                        np.concatenate([np.arange(V), np.full(L, V)]))), shape=(L, V + 1))
    return a_eq, b_eq, a_ub.tocsr(), ukey, links, lix


def _linprog(a_eq, b_eq, a_ub, primal: bool = False):
    """``min z`` (the last variable) subject to ``a_eq x = b_eq``, ``a_ub x <= 0``, ``x >= 0``;
    ``primal``: by HiGHS's primal simplex (``simplex_strategy`` 4), not its dual (the
    default), which is slow on the degenerate programmes of a torus's steps whose
    symmetry is broken (pairwise all-to-all over 96 of an 8x4x4 torus's GPUs: a step of
    9,873 variables, 8.9 s dual, 0.30 s primal, the same least ``z``)."""
    import warnings

    from scipy.optimize import OptimizeWarning, linprog

    cost = np.zeros(a_eq.shape[1])
    cost[-1] = 1.0
    options = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    if primal:
        options["simplex_strategy"] = 4
    with warnings.catch_warnings():   # SciPy names the option unknown, and passes it on
        warnings.simplefilter("ignore", OptimizeWarning)
        return linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq, b_eq=b_eq,
                       bounds=(0, None), method="highs", options=options)


def _natural(name: str) -> tuple:
    """A node name's sort key with its numbers as numbers (``gpu2`` before ``gpu10``)."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t)
                 for t in re.split(r"(\d+)", name))


def _natural_rank(router) -> np.ndarray:
    """Each node's place (by number) in its name's natural order (:func:`_natural`),
    worked out once a router: :func:`_symmetry` orders the nodes of each programme by it
    (sorting them by name each time took 3 ms a programme, 1.4 s of a pairwise all-to-all
    on four models of an 8x4x4 torus)."""
    rank = router.__dict__.get("_joint_natural")
    if rank is None:
        names = [_natural(str(x)) for x in router._nodes]
        rank = np.empty(len(names), dtype=np.int64)
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        router._joint_natural = rank
    return rank


def _mapped(keys_sorted: np.ndarray, order: np.ndarray, image: np.ndarray) -> np.ndarray | None:
    """Each of ``image``'s positions among the keys (``keys_sorted`` = keys[order]), or None
    where one is not a key or two land on one (not a permutation)."""
    if not len(keys_sorted):
        return None
    at = np.minimum(np.searchsorted(keys_sorted, image), len(keys_sorted) - 1)
    if not (keys_sorted[at] == image).all():
        return None
    out = order[at]
    if len(np.unique(out)) != len(out):
        return None
    return out


def _symmetry(router, src, dst, frac, com, c_of, lk, bw, b_eq, ukey, links):
    """A symmetry of the programme: a rotation of the nodes it touches (in their names'
    natural order, by the fewest places that maps it onto itself) under which every link
    used lands on a link used of equal bandwidth, every commodity on one whose transfers
    and links are the images of its own, and every conservation row on one of equal
    right-hand side; ``(variable map, conservation row map, capacity row map, order)``,
    or None where no such rotation exists (a torus's tree step, a group not on whole
    rings). Averaging a solution over the rotation's powers keeps it feasible and its
    busiest link no busier, so the programme's least ``z`` is the least over solutions
    the rotation leaves alone, which the maps fold into a programme ``order`` times
    smaller (:func:`_folded`)."""
    n, nl = router._n, router.n_links
    rs, rd = router._src, router._dst
    used = np.unique(np.concatenate([rs[links], rd[links], src, dst]))
    order = used[np.argsort(_natural_rank(router)[used], kind="stable")]
    N = len(order)
    lkey = rs.astype(np.int64) * n + rd
    lsrt = np.argsort(lkey, kind="stable")
    tkey = src * n + dst
    tsrt = np.argsort(tkey, kind="stable")
    var = c_of * nl + lk
    vsrt = np.argsort(var, kind="stable")
    C = int(com.max()) + 1
    if (np.diff(lkey[lsrt]) == 0).any() or (np.diff(tkey[tsrt]) == 0).any():
        return None   # parallel links or repeated pairs: no one image each
    for a in range(1, N // 2 + 1):
        if N % a:
            continue
        pi = np.arange(n)
        pi[order] = order[(np.arange(N) + a) % N]
        lmap = np.full(nl, -1, dtype=np.int64)
        got = _mapped(lkey[lsrt], lsrt, pi[rs[links]] * n + pi[rd[links]])
        if got is None or not (bw[got] == bw[links]).all():
            continue
        lmap[links] = got
        image = _mapped(tkey[tsrt], tsrt, pi[src] * n + pi[dst])
        if image is None or not (frac[image] == frac).all():
            continue
        tau = np.full(C, -1, dtype=np.int64)
        tau[com] = com[image]
        if not (tau[com] == com[image]).all() or len(np.unique(tau)) != C:
            continue
        vmap = _mapped(var[vsrt], vsrt, tau[c_of] * nl + lmap[lk])
        if vmap is None:
            continue
        rmap = _mapped(ukey, np.arange(len(ukey)), tau[ukey // n] * n + pi[ukey % n])
        if rmap is None or not (b_eq[rmap] == b_eq).all():
            continue
        return vmap, rmap, np.searchsorted(links, lmap[links]), N // a
    return None


def _orbits(m: np.ndarray, order: int) -> np.ndarray:
    """Each index's orbit's least member under the permutation ``m`` (``m`` to the power
    ``order`` is the identity)."""
    least, cur = np.arange(len(m)), m
    for _ in range(order):
        least = np.minimum(least, cur)
        cur = m[cur]
    return least


def _folded(router, src, dst, frac, com, c_of, lk, bw, prog) -> tuple | None:
    """The programme solved through its symmetry (:func:`_symmetry`): ``(least z, flows)``,
    the flows those of the folded programme's optimum copied to every variable of its
    orbit (an optimum of the whole programme the rotation leaves alone), or None where
    it has no symmetry or the folded programme is not solved."""
    from scipy.sparse import csr_matrix

    a_eq, b_eq, a_ub, ukey, links, _ = prog
    sym = _symmetry(router, src, dst, frac, com, c_of, lk, bw, b_eq, ukey, links)
    if sym is None:
        return None
    vmap, rmap, lmap, order = sym
    V = len(lk)
    reps, col = np.unique(_orbits(vmap, order), return_inverse=True)
    fold = csr_matrix((np.ones(V + 1), (np.arange(V + 1), np.r_[col, len(reps)])),
                      shape=(V + 1, len(reps) + 1))
    # a row and its images say the same of a solution the rotation leaves alone: one each
    rows = np.flatnonzero(_orbits(rmap, order) == np.arange(len(rmap)))
    caps = np.flatnonzero(_orbits(lmap, order) == np.arange(len(lmap)))
    res = _linprog((a_eq[rows] @ fold).tocsr(), b_eq[rows], (a_ub[caps] @ fold).tocsr())
    return (float(res.fun), fold @ res.x) if res.status == 0 else None


#: The most flow variables (and programmes) of the solved programmes :func:`_solve` keeps,
#: a router's in all (about 16 bytes a variable with its links and loads; the oldest go
#: first): the same step costed alone (:meth:`~netmodel.collectives.route_plans.PlannedRoutes.link_loads`) and as
#: one group of every instance at once (:mod:`~netmodel.collectives.concurrent_loads`), or
#: checked as flows (:func:`joint_flows`) and then costed, is one programme solved once.
JOINT_SOLVED = 1 << 18


def _solve(router, src, dst, frac, com, c_of, lk, bw):
    """:func:`_solve_programme`, kept per router by everything it reads of the step: its
    transfers (``src``, ``dst``, ``frac``), commodities and their links (``com``, ``c_of``,
    ``lk``) and the links' scaled bandwidths (``bw``); the rest it reads is the router's
    own (its links' ends, sides and route bandwidths, fixed with it). A programme solved
    before gives its answer again (copies), the same numbers."""
    h = hashlib.blake2b(digest_size=32)
    for x in (src, dst, frac, com, c_of, lk, bw):
        x = np.ascontiguousarray(x)
        h.update(f"{x.dtype.str}{x.shape}".encode())
        h.update(x.tobytes())
    key = h.digest()
    kept = router.__dict__.setdefault("_joint_solved", {})
    if key in kept:
        hit = kept[key]
        return None if hit is None else tuple(x.copy() for x in hit)
    got = _solve_programme(router, src, dst, frac, com, c_of, lk, bw)
    if got is not None:
        got = tuple(got)
        kept[key] = tuple(x.copy() for x in got)
        for x in kept[key]:
            x.flags.writeable = False
    else:
        kept[key] = None
    size = router.__dict__.get("_joint_solved_size", 0) + 1 + (0 if got is None
                                                               else len(got[2]))
    while size > JOINT_SOLVED and kept:
        old = kept.pop(next(iter(kept)))
        size -= 1 + (0 if old is None else len(old[2]))
    router.__dict__["_joint_solved_size"] = size
    return got


def _solve_programme(router, src, dst, frac, com, c_of, lk, bw):
    """The linear programme: minimise ``z`` over flows ``x >= 0`` (one per commodity and
    link) that keep each commodity's traffic (each node sends out what it takes in, plus
    what its sources send, less what its destination receives) with every link's load at
    most ``z`` times its bandwidth.

    Where the programme has a symmetry (a pairwise step on a torus, every GPU sending as
    far along), it is solved folded by it (:func:`_folded`): a least ``z`` clear of beating
    the own routes keeps them, and one that beats them, with every link it uses on one side
    (scale-up or scale-out), gives its flows, the same on every link of an orbit. On one
    side a step's time is its busiest link's, which every optimum shares (HiGHS's least
    ``z`` to about 1e-10), so the folded optimum's times are the whole programme's, found
    a hundred times faster (the whole programme's dual simplex is slow on these degenerate
    programmes: pairwise all-to-all on an 8x4x4 torus, 299 s of solves); only which of
    the links tied at the busiest load is named may differ. Any other step on one side
    solves the whole programme by the primal simplex (:func:`_linprog`), thirty times
    faster there than the dual, once for it and its mirror image (:func:`_whole`); a step
    on both sides solves it by the dual simplex, as always (its optima differ on the side
    that does not bind)."""
    prog = _programme(router, src, dst, frac, com, c_of, lk, bw)
    if prog is None:
        return None
    got = _folded(router, src, dst, frac, com, c_of, lk, bw, prog)
    if got is not None and got[0] >= 1 - JOINT_RTOL / 2:
        return None   # within HiGHS's 1e-10 of the whole solve's, clear of beating them
    a_eq, b_eq, a_ub, _, links, lix = prog
    V, L = len(lk), len(links)
    one_side = len(np.unique(router.scaleout[links])) == 1
    if got is not None and one_side:
        x = np.maximum(got[1][:V], 0.0)
    else:
        x = _whole(router, src, dst, frac, com, c_of, lk, prog, one_side)
        if x is None:
            return None
    per = np.bincount(lix, x, minlength=L)
    if not float((per / bw[links]).max()) < 1 - JOINT_RTOL:
        return None
    tiny = per > 1e-12 * float(per.max())
    return links[tiny], per[tiny], x


#: The most flow variables of the programmes :func:`_whole` keeps solved, a router's in all
#: (8 bytes each, 8 MiB; the oldest go first; ``router_for`` keeps 16 routers): a pairwise
#: all-to-all's shifts on an 8x4x4 torus keep 0.29 million a ring order.
JOINT_KEPT = 1 << 20


def _mirror_keys(router, src, dst, frac, com, c_of, lk) -> tuple | None:
    """The programme of a step whose transfers are one a source and one a destination
    (each commodity one pair: a pairwise all-to-all's shift) keyed as it is and as its
    mirror image: ``((digest, order), (digest, order))``, each variable ``(source,
    destination, link)`` and, mirrored, ``(destination, source, the link the other way)``,
    ``order`` sorting the variables by it, the digest that of the sorted keys with each
    variable's pair's fraction and link's bandwidth and side. None where a commodity has
    more than one transfer, a link used has no link the other way round, or the keys
    would not fit 63 bits."""
    n, nl = router._n, router.n_links
    if len(unique(src)) != len(src) or len(unique(dst)) != len(dst) \
            or int(com.max()) + 1 != len(src) or n * n * nl >= 1 << 62:
        return None
    back = lk ^ 1
    rs, rd = router._src, router._dst
    if (back >= nl).any() or not ((rs[back] == rd[lk]) & (rd[back] == rs[lk])).all():
        return None
    pair = np.empty(len(src), dtype=np.int64)
    pair[com] = np.arange(len(src))   # each commodity's transfer
    t = pair[c_of]
    s, d = src[t].astype(np.int64), dst[t].astype(np.int64)
    out = []
    for key in ((s * n + d) * nl + lk, (d * n + s) * nl + back):
        order = np.argsort(key, kind="stable")
        h = hashlib.blake2b(key[order].tobytes(), digest_size=32)
        h.update(frac[t[order]].tobytes())
        h.update(router._route_bw[lk[order]].tobytes())
        h.update(router.scaleout[lk[order]].astype(np.int8).tobytes())
        out.append((h.digest(), order))
    return tuple(out)


def _whole(router, src, dst, frac, com, c_of, lk, prog, one_side) -> np.ndarray | None:
    """The whole programme's flows (:func:`_solve`), solved by :func:`_linprog`, or, on one
    side, those of a programme solved before on ``router`` that is the same or its mirror
    image (:func:`_mirror_keys`: each pair's transfer the other way, over the links the
    other way, of the same bandwidths): a pairwise all-to-all's shift ``p - k`` sends
    what shift ``k`` sends, back. The mirrored flows are an optimum of the mirrored
    programme: each node's balance changes sign with its source and destination swapped,
    each link carries what its mirror did, and the least load over bandwidth on one side
    is that times a factor the flows do not depend on (:func:`_scaled`), so its time is
    that of a solve to HiGHS's 1e-10 (an optimum the simplex reaches may tie another's
    busiest link, as any solve may); the greedy ring order and a failed cable, which
    leave no symmetry to fold, halve their solves. A large programme on one side is
    solved over paths (:func:`_by_paths`), the whole one where that finds no proof."""
    keys = _mirror_keys(router, src, dst, frac, com, c_of, lk) if one_side else None
    kept = router.__dict__.setdefault("_joint_kept", {})
    if keys is not None:
        for digest, order in (keys[1], keys[0]):
            hit = kept.get(digest)
            if hit is not None:
                x = np.empty(len(lk))
                x[order] = hit
                return x
    x = _by_paths(router, src, dst, frac, com, c_of, lk, prog) if one_side else None
    if x is None:
        a_eq, b_eq, a_ub = prog[:3]
        res = _linprog(a_eq, b_eq, a_ub, primal=one_side)
        if res.status != 0:
            return None
        x = np.maximum(res.x[:len(lk)], 0.0)
    if keys is not None:
        digest, order = keys[0]
        kept[digest] = solved = x[order]
        solved.flags.writeable = False
        size = sum(len(v) for v in kept.values())
        while size > JOINT_KEPT and kept:
            size -= len(kept.pop(next(iter(kept))))
    return x


def _by_paths(router, src, dst, frac, com, c_of, lk, prog) -> np.ndarray | None:
    """The flows of a programme of at least :data:`~netmodel.collectives.route_joint_paths.
    JOINT_PATHS_FROM` variables on one side, solved over a few paths at a time with its
    dual prices proving the optimum (:func:`~netmodel.collectives.route_joint_paths.
    path_flows`), or None (smaller, or not solved so: :func:`_whole` solves it whole)."""
    from netmodel.collectives.route_joint_paths import JOINT_PATHS_FROM, path_flows

    if len(lk) < JOINT_PATHS_FROM:
        return None
    a_ub, lix = prog[2], prog[5]
    bw = -a_ub[:, -1].toarray().ravel()   # each capacity row's bandwidth (its z column)
    got = path_flows(src, dst, frac, com, c_of, lk, router._src, router._dst, lix, bw)
    return None if got is None else np.maximum(got[1], 0.0)
