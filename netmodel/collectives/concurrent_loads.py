"""The loads of a concurrent costing's steps on the fabric's links, every group's step at once.

Per step (:func:`_loads`): every group's transfers routed together (whole, or in parts where
only the loads together are asked for: :func:`_loads_in_parts`), each group's bottleneck
together and alone, its latency and the step's hot spots. For every step of an algorithm
(:func:`evaluate_loads`): reused between steps whose bytes differ by a power of two, and
following time where groups run different steps (:func:`_follow_time`, scheduled by
:mod:`netmodel.collectives.concurrent_time`).
"""

from __future__ import annotations

import math

import numpy as np

from netmodel.collectives.algorithms import Pairs
from netmodel.collectives.concurrent_groups import PreparedGroups, group_steps
from netmodel.collectives.concurrent_time import (
    LOCKSTEP,
    LOCKSTEP_BUDGET,
    LOCKSTEP_PIPELINE,
    TIME,
    timed_steps,
)
from netmodel.collectives.cost import step_table
from netmodel.collectives.group_copies import link_map_nodes, worth_looking
from netmodel.collectives.route_joint import JOINT_TRANSFERS, joint_loads
from netmodel.collectives.route_types import KIND_SWITCH
from netmodel.collectives.steps import unique


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
                key.append((s.tobytes(), d.tobytes(), router.pxn_applies(t)))
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


def _p2p(router, classes, i) -> bool:
    """Whether PXN routes step ``i`` (NCCL's send/recv, :meth:`Router.pxn_applies`)."""
    return any(i < len(steps) and router.pxn_applies(steps[i].transfers)
               for steps, _, _ in classes)


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


def _max_at(out: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
    """``np.maximum.at(out, idx, values)``, each run of equal ``idx`` reduced first where
    there are many entries a slot (a step's transfers come group by group: 32,768 hop
    entries of 64 groups, 140 -> 45 us). The same maxima: a maximum is exact whatever the
    grouping, and the entries are taken in their order either way.

    >>> out = np.array([0.0, 20.0])
    >>> _max_at(out, np.array([0] * 8 + [1] * 8 + [0] * 8), np.arange(24.0))
    >>> out.tolist()
    [23.0, 20.0]
    """
    if len(idx) and len(idx) >= 8 * len(out):
        starts = np.flatnonzero(np.concatenate(([True], idx[1:] != idx[:-1])))
        np.maximum.at(out, idx[starts], np.maximum.reduceat(values, starts))
    else:
        np.maximum.at(out, idx, values)


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
    _max_at(together, eg, util[el])
    if alone_too and disjoint and not routed:
        # first and last hops only: a GPU's links carry its own group's bytes alone
        alone = together.copy()
    else:
        alone = np.zeros(G)
    if alone_too and not (disjoint and not routed):  # own bytes per (group, link)
        u2, i2 = np.unique(eg * L + el, return_inverse=True)
        own = np.bincount(i2.ravel(), ew)
        _max_at(alone, u2 // L, own / rate[u2 % L])
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
        _max_at(together, pg, pmax[slot])
    if have and alone_too:
        # a group's own bytes on a piece's links are its traffic through the piece times the
        # piece's weights, unless pieces (or its routes) share links: then sum them exactly
        covered, exclusive = router.piece_cover()
        exact = np.zeros(G, dtype=bool)
        exact[pg[~exclusive[pp]]] = True
        exact[eg[covered[el]]] = True
        _max_at(alone, pg, X * pmaxw[slot])
        if exact.any():
            sel = exact[pg]
            w2, l2, v2 = router.expand(pp[sel], X[sel])
            g2 = np.concatenate([pg[sel][w2], eg[exact[eg]]])
            l2 = np.concatenate([l2, el[exact[eg]]])
            v2 = np.concatenate([v2, ew[exact[eg]]])
            u3, i3 = np.unique(g2 * L + l2, return_inverse=True)
            s3 = np.bincount(i3.ravel(), v2)
            redo = np.zeros(G)
            _max_at(redo, u3 // L, s3 / rate[u3 % L])
            alone[exact] = redo[exact]
    latency = np.zeros(G)
    _max_at(latency, gid, pl.latency)
    lat_up = np.full(G, -1.0)
    up = ~pl.scaleout
    _max_at(lat_up, gid[up], pl.latency[up])
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


#: :func:`evaluate_loads` routes a step of more transfers than this in parts of about
#: :data:`_PART` (:func:`_loads_in_parts`) where only the loads together are asked for.
_IN_PARTS = 1 << 19
_PART = 1 << 16
#: ... when groups x links (and groups x pieces) is at most this: the links and pieces each
#: group crosses are marked in a table of that many cells.
_PART_CELLS = 1 << 26


def _step_parts(classes, i, router):
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
        members.append((t.src, t.dst, t.fractions(), rows, idx, router.pxn_applies(t)))
        total += len(t.src) * len(idx)
    if total <= _IN_PARTS or (_joint_fits(router, sum(len(m[4]) for m in members))
                              and all(len(m[0]) <= JOINT_TRANSFERS for m in members)):
        return None   # small, or spread together per group (_joint_groups): one plan

    # parts of whole groups, in order, each of at least _PART transfers (and more than 64:
    # a router works fewer out through its dict of pairs, learning apart), the last merged
    # into the one before when it has fewer
    least = max(_PART, 65)
    cuts: list[list[tuple[int, int, int]]] = [[]]
    size = 0
    for m, (s, _, _, _, idx, _) in enumerate(members):
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
                s, d, f, rows, idx, _ = members[m]
                r = rows[a:b]
                out.append((r.take(s, axis=1).ravel(), r.take(d, axis=1).ravel(),
                            np.tile(f, len(r)), np.repeat(idx[a:b], len(s))))
            yield tuple(x[0] if len(out) == 1 else np.concatenate(x) for x in zip(*out, strict=True))

    key = tuple((s.tobytes(), d.tobytes(), m[-1]) for s, d, *m in members)
    return key, np.concatenate([m[2] for m in members]), parts


#: :func:`_joint_groups` spreads each group's transfers together only in steps of at most
#: this many groups (a route plan and bounds per group, in Python), on fabrics without
#: switches (rings, tori, meshes, circuits: a switched fabric's concurrent steps keep
#: their own routes, whose ECMP a per-pair split over the same links rarely betters).
JOINT_GROUPS = 64


def _joint_fits(router, G: int) -> bool:
    """Whether :func:`_joint_groups` looks at a step of ``G`` groups on ``router``'s
    fabric: at most :data:`JOINT_GROUPS`, and a fabric without switches."""
    return G <= JOINT_GROUPS and not (router._code == KIND_SWITCH).any()


#: The most groups of a step :func:`_joint_groups` tries a group as a copy of.
COPY_TRIES = 4


def _copy_loads(router, routed: list, s: np.ndarray, d: np.ndarray, f: np.ndarray
                ) -> tuple | None:
    """A group's loads alone (``(links, load, joint)``) as :func:`_joint_groups` works them
    out, from those of a group routed (``routed``) that it is a copy of: the same bytes
    transfer by transfer, the ends of each of one's transfers those of the other's under
    one node correspondence that :func:`~netmodel.collectives.group_copies.
    link_map_nodes` shows a relabelling of the fabric (its routes and plans the images of
    the other's, link for link, and so the other's joint split mapped is an optimum of its
    own programme); None where none is, or where the fabric is too large for the group to
    look (:func:`~netmodel.collectives.group_copies.worth_looking`).

    A copy's loads are then the other's to the bit, but not always those of its own
    programme solved: the solver's answer rounds with the order of its variables (and,
    where optima tie, may be another optimum), so a copy's busiest link, its time alone,
    may differ from its lone collective's in the last place or two (a 4 x 4 torus's
    all-gather in scattered groups of 4: one group 1-2 ulp under,
    ``tests/netmodel/test_group_copies.py``)."""
    for rs, rd, rf, uniq, load, joint in routed:
        if len(rs) != len(s) or not np.array_equal(rf, f):
            continue
        a, b = np.concatenate([rs, rd]), np.concatenate([s, d])
        ua, first, inv = np.unique(a, return_index=True, return_inverse=True)
        if not worth_looking(router, len(ua)):
            return None
        if not np.array_equal(b[first][inv.ravel()], b) or len(np.unique(b)) != len(ua):
            continue   # no one node of one for each of the other's
        keep = np.sort(first)   # the members in order of their first transfer
        image = link_map_nodes(router, a[keep], b[keep])
        if image is None:
            continue
        mapped = image[uniq]
        at = np.argsort(mapped, kind="stable")
        return mapped[at], load[at], joint
    return None


def _joint_groups(router, rate, pl, src, dst, frac, gid, G, out, hot_too):
    """``out`` (:func:`_loads`' answer for one step of every group) where each group's
    transfers are spread together as a lone collective's are
    (:func:`~netmodel.collectives.route_joint.joint_loads`, by
    :meth:`~netmodel.collectives.routing.Router.link_loads`' rules): where that changes
    some group's links, each group's loads are those it has alone (its own routes', or
    its joint split), summed over groups for the loads together, unless that makes some
    group's busiest link busier than the own routes together (each group's split is blind
    to the others): then the loads together stay the own routes'. So a group's step alone
    is the lone collective's step (a copy of a group split before takes that one's split,
    mapped: :func:`_copy_loads`, equal to its own to the last places), and a group sharing
    no link takes it together too. A step of more than :data:`JOINT_GROUPS` groups, or
    whose groups' transfers each cross one link (neighbours), keeps ``out``."""
    if not _joint_fits(router, G) or len(src) < 2:
        return out
    if not (len(pl.hop_index) or len(pl.piece_of)) and (np.diff(pl.route_ptr) == 1).all():
        return out   # every transfer one link: no other split (joint_loads' own test)
    order = np.argsort(gid, kind="stable")
    cut = np.flatnonzero(np.diff(gid[order])) + 1
    per, changed = [], False
    routed: list = []   # the groups routed here, each (src, dst, frac, links, load, joint)
    for m in np.split(order, cut):
        if not len(m):
            continue
        s, d, f = src[m], dst[m], frac[m]
        hit = _copy_loads(router, routed, s, d, f)
        if hit is not None:
            uniq, load, joint = hit
        else:
            pg = router.plan_nodes(s, d, f)
            links, coef = router._plan_loads(pg, True)[:2]
            if len(links) > 4096:   # as link_loads sums them
                load = np.bincount(links, coef, minlength=router.n_links)
                uniq = np.flatnonzero(load)
                load = load[uniq]
            else:
                uniq, inv = np.unique(links, return_inverse=True)
                load = np.bincount(inv, coef)
            joint = joint_loads(router, s, d, f, pg, uniq, load) \
                if len(f) <= JOINT_TRANSFERS else None
            if joint is not None:
                uniq, load = joint
            if len(routed) < COPY_TRIES:
                routed.append((s, d, f, uniq, load, joint))
        changed |= joint is not None
        per.append((int(gid[m[0]]), uniq, load))
    if not changed:
        return out
    total = np.bincount(np.concatenate([u for _, u, _ in per]),
                        np.concatenate([w for _, _, w in per]), minlength=router.n_links)
    util = total / rate
    together, alone = out[0].copy(), out[1].copy()
    users = {}
    for g, u, w in per:
        together[g] = util[u].max() if len(u) else 0.0
        alone[g] = (w / rate[u]).max() if len(u) else 0.0
        for k in u.tolist():
            users.setdefault(k, set()).add(g)
    if (together > out[0] * (1 + 1e-12)).any():
        # the groups' splits, each blind to the others, make some group's busiest link
        # busier than their own routes do (beyond rounding): the step keeps its own routes
        # together (a group's own routes' loads together are no lighter than its lone split
        # alone)
        return out[0], alone, out[2], out[3], out[4], out[5]
    hot = out[5]
    if hot_too:
        k = min(5, len(util))
        cand = np.argpartition(util, len(util) - k)[len(util) - k:]
        top = cand[np.lexsort((cand, -util[cand]))]
        hot = [(float(util[t]), int(t), len(users.get(t, ()))) for t in top.tolist()
               if util[t] > 0]
    return together, alone, out[2], out[3], out[4], hot


def _loads_in_parts(router, rate, parts, G, disjoint: bool = False,
                    alone_too: bool = False, pxn: bool = False) -> tuple | None:
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
    if not router.learn_in_parts(lambda: ((s, d, g) for s, d, _, g in parts()), pxn):
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
        pl = router.plan_nodes(src, dst, frac, gid=g, pxn=pxn)
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
        _max_at(latency, g, pl.latency)
        up = ~pl.scaleout
        _max_at(lat_up, g[up], pl.latency[up])
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
    _max_at(together, hg, util[hl])
    if have:
        _max_at(together, pg, _piece_max(which, plk, util, len(used))[slot_of[pp]])
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


def evaluate_loads(model, op, algorithm, groups: PreparedGroups, alone_too: bool = True,
                   classes: list | None = None):
    """Per group and step: the steps' fields (:data:`~netmodel.collectives.cost.STEP_FIELDS`),
    alone beta, together beta, latency, scale-up latency, scale-out (arrays ``(G, S)``); the
    hot spots of every step index (without ``alone_too``: alone zeros, no hot spots); and
    the schedule that shared the links (:data:`~netmodel.collectives.concurrent_time.TIME`
    or a lockstep: :func:`_follow_time`; groups of one size on one algorithm
    :data:`~netmodel.collectives.concurrent_time.LOCKSTEP`), worked out on every call
    with the numbers it goes with (the steps' loads are reused, never the schedule).
    ``classes``: the steps of groups running different algorithms
    (:func:`~netmodel.collectives.concurrent_choice.mixed_classes`; ``algorithm`` then
    unused), their loads neither reused nor kept."""
    router, cal = model.router, model.calibration
    eff = np.where(router.scaleout, cal.scaleout_efficiency, cal.scaleup_efficiency)
    rate = router.bandwidth * eff
    shared = classes is None
    if shared:
        classes = group_steps(groups, op, algorithm)
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
        parted = None if alone_too and groups.hot else _step_parts(classes, i, router)
        pxn = _p2p(router, classes, i)   # NCCL's send/recv: PXN routes it
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
                                          alone_too, pxn)
                if out is None:   # as it was: one plan of the whole step
                    src, dst, frac_all, gid, _ = _step_transfers(router, classes, i)
                    pl = router.plan_nodes(src, dst, frac_all, plan_key, gid, pxn)
                    out = _loads(router, rate, pl, gid, G, groups.disjoint, alone_too,
                                 groups.hot)
                    del pl, src, dst, frac_all, gid
            else:
                pl = router.plan_nodes(src, dst, frac, plan_key, gid, pxn)
                out = _loads(router, rate, pl, gid, G, groups.disjoint, alone_too,
                             groups.hot)
                if not pxn:
                    out = _joint_groups(router, rate, pl, src, dst, frac, gid, G, out,
                                        alone_too and groups.hot)
                del pl
            if key is not None:
                done[key] = (frac, out)
        together[:, i], alone[:, i], latency[:, i], lat_up[:, i], scaleout[:, i], h = out
        hot.append(h)
        for steps, _, idx in classes:
            if i < len(steps) and steps[i].route_latency is not None:
                latency[idx, i] = lat_up[idx, i] = steps[i].route_latency
    for steps, _, idx in classes:
        # each class's steps written into the table at once, its rows alike (step_table
        # converts as assigning each step did; step by step, a pairwise all-to-all's 255
        # steps of some 20 fields were 5,000 small assignments)
        for k, v in step_table(steps).items():
            table[k][idx, :len(steps)] = v
    if alone_too:
        # a group is never faster together than alone: where the two are one sum of one
        # group's own bytes, added in another order (a group sharing no link), they agree
        alone = np.minimum(alone, together)
    # groups of different sizes or algorithms run different steps: step i of one beside
    # step i of another is no more than an index, so the sharing follows time
    schedule = LOCKSTEP
    if not shared or len(unique(groups.sizes)) > 1:
        together, schedule = _follow_time(router, rate, classes, table, together,
                                          alone if alone_too else None)
    return table, alone, together, latency, lat_up, scaleout, hot, schedule


def _step_entries(router, rate: np.ndarray, classes, i: int, G: int) -> tuple:
    """Each group's own load on every link its transfers of step ``i`` cross:
    ``(group, link, seconds per byte of n)`` (a link may be listed more than once for a
    group; their sum is its load). The links and weights of :func:`_loads`, by group."""
    src, dst, frac, gid, _ = _step_transfers(router, classes, i)
    if not len(src):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    pl = router.plan_nodes(src, dst, frac, gid=gid, pxn=_p2p(router, classes, i))
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


def _follow_time(router, rate: np.ndarray, classes, table: dict, together: np.ndarray,
                 alone: np.ndarray | None = None) -> tuple[np.ndarray, str]:
    """``together`` (seconds per byte of ``n`` per group and step, from the loads of step
    ``i`` of every group at once) with link sharing following time (:func:`timed_steps`): each
    step's seconds over its repetitions; and which schedule that is
    (:data:`~netmodel.collectives.concurrent_time.TIME`). Only where no step runs in a
    pipeline (their phases overlap in time, which one step after another does not say):
    else ``together`` as it is, in lockstep
    (:data:`~netmodel.collectives.concurrent_time.LOCKSTEP_PIPELINE`), and so past
    :data:`~netmodel.collectives.concurrent_time._TIMED_WORK`
    (:data:`~netmodel.collectives.concurrent_time.LOCKSTEP_BUDGET`). ``alone``
    (optional): the steps alone, taken where no other group loaded the group's links
    during the step (the schedule's sum of event times would differ from it in the last
    bit)."""
    on = table["on"]
    if (on & (table["pipeline"] > 0)).any():
        return together, LOCKSTEP_PIPELINE
    work = np.where(on & table["member"], table["repeat"], 0.0)
    G, S = work.shape
    entries = [_step_entries(router, rate, classes, i, G) for i in range(S)]
    shared = np.zeros(work.shape, dtype=bool)
    dur = timed_steps(work, entries, router.n_links, shared)
    if dur is None:
        return together, LOCKSTEP_BUDGET
    with np.errstate(invalid="ignore", divide="ignore"):
        timed = np.where(work > 0, dur / work, together)
    if alone is not None:
        timed = np.where((work > 0) & ~shared, alone, timed)
    return timed, TIME
