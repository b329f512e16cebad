"""The schedule in time as it was at 8af7c04 (``netmodel/collectives/concurrent_time.py``:
``_timed``, ``_one_link_of_each``, ``_paces``, docstrings left out), kept as the reference
that the faster code must match bit for bit (``test_concurrent_time_reference.py``)."""

from __future__ import annotations

import numpy as np

_TIMED_WORK = 1 << 27
_ROUND = 1 << 12


def _timed(work: np.ndarray, entries: list[tuple], L: int,
           shared: np.ndarray | None = None) -> np.ndarray | None:
    G, S = work.shape
    eg = np.concatenate([e[0] for e in entries])
    el = np.concatenate([e[1] for e in entries])
    eu = np.concatenate([e[2] for e in entries])
    es = np.concatenate([np.full(len(e[0]), i, np.int64) for i, e in enumerate(entries)])
    order = np.argsort(eg * S + es, kind="stable")
    eg, el, eu, es = eg[order], el[order], eu[order], es[order]
    # links that carry the same entries (ECMP's parallel links) share alike: one of each
    eg, el, eu, es, L = _one_link_of_each(eg, el, eu, es, L)
    # about one round an event, an event a step's end, each looking at the live groups'
    # entries (about a step's worth): past the budget already, give up before the work
    if (work > 0).sum() * (len(eg) / S + _ROUND) > _TIMED_WORK:
        return None
    count = np.bincount(eg * S + es, minlength=G * S)
    first = np.cumsum(count) - count
    if shared is not None:   # the first entry of each (group, step, link)
        firsts = np.unique((eg * S + es) * L + el, return_index=True)[1]
        once = len(firsts) == len(eg)
        first_of = np.zeros(len(eg), dtype=bool)
        first_of[firsts] = True
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
        pace, seen = _paces(eg[at], el[at], eu[at], G, L)
        if shared is not None:   # a link another live group also loads
            ga, la = eg[at], el[at]
            # the groups on each link, each counted once (a group runs one step at a time)
            other = np.bincount(la if once else la[first_of[at]], minlength=L)[la] > 1
            mixed = np.zeros(G, dtype=bool)
            mixed[ga[other]] = True
            shared[live, ph[live]] |= mixed[live]
        looked += seen
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


#: odd multipliers mixing an entry's fields into :func:`_one_link_of_each`'s hash
_MIX = tuple(np.uint64(k) for k in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F,
                                     0x165667B19E3779F9, 0xD6E8FEB86659FD93))


def _one_link_of_each(eg, el, eu, es, L):
    n = len(el)
    if not n:
        return eg, el, eu, es, 0
    o = np.argsort(el, kind="stable")          # by link, then group, step, as listed
    cnt = np.bincount(el, minlength=L)
    ptr = np.cumsum(cnt) - cnt
    og, os_, ou = eg[o], es[o], eu[o]
    bits = ou.view(np.uint64)
    pos = (np.arange(n) - np.repeat(ptr, cnt)).astype(np.uint64)
    k1, k2, k3, k4 = _MIX
    v = (og.astype(np.uint64) * k1) ^ (os_.astype(np.uint64) * k2) ^ (bits * k3)
    v = (v ^ (v >> np.uint64(31))) * k4 + pos * k1
    v ^= v >> np.uint64(29)
    on = np.flatnonzero(cnt)
    h = np.add.reduceat(v, ptr[on])
    by = np.lexsort((on, h, cnt[on]))
    new_key = np.r_[True, (h[by][1:] != h[by][:-1]) | (cnt[on][by][1:] != cnt[on][by][:-1])]
    rep = np.arange(L)
    rep[on[by]] = on[by][np.flatnonzero(new_key)[np.cumsum(new_key) - 1]]
    # compare each link with the one it stands for, entry by entry
    dup = on[rep[on] != on]
    if len(dup):
        c = cnt[dup]
        at = np.repeat(ptr[dup] - (np.cumsum(c) - c), c) + np.arange(int(c.sum()))
        ra = at + np.repeat(ptr[rep[dup]] - ptr[dup], c)
        bad = (og[at] != og[ra]) | (os_[at] != os_[ra]) | (bits[at] != bits[ra])
        if bad.any():
            wrong = dup[np.bincount(np.repeat(np.arange(len(dup)), c), bad,
                                    minlength=len(dup)) > 0]
            rep[wrong] = wrong
    keep_link = rep == np.arange(L)
    keep_link &= cnt > 0
    number = np.cumsum(keep_link) - 1
    keep = keep_link[el]
    return eg[keep], number[el[keep]], eu[keep], es[keep], int(keep_link.sum())


def _paces(eg: np.ndarray, el: np.ndarray, eu: np.ndarray, G: int, L: int
           ) -> tuple[np.ndarray, int]:
    T = np.zeros(G)
    used = np.zeros(L)            # capacity taken by the groups held so far
    if not (eu > 0).all():   # a load of no time needs nothing of its link
        eg, el, eu = eg[eu > 0], el[eu > 0], eu[eu > 0]
    if len(eg) > 1 and (eg[1:] < eg[:-1]).any():   # by group (as _timed gives them)
        order = np.argsort(eg, kind="stable")
        eg, el, eu = eg[order], el[order], eu[order]
    if not len(eg):
        return T, 0
    # the free groups with loads, in order, and how many entries each (a group with none
    # takes no time)
    first = np.flatnonzero(np.concatenate(([True], eg[1:] != eg[:-1])))
    gs, gc = eg[first], np.diff(np.append(first, len(eg)))
    looked = 0
    while True:
        # the free groups' entries only (a held group's are dropped), in group order
        looked += len(el) + _ROUND
        demand = np.bincount(el, eu, minlength=L)
        with np.errstate(divide="ignore", invalid="ignore"):
            # seconds a repetition takes if the free groups on the link share what is left
            t_link = np.where(demand > 0, demand / np.maximum(1.0 - used, 0.0), 0.0)
        t = np.maximum.reduceat(t_link[el], np.cumsum(gc) - gc)
        top = t.max()
        now = t >= top * (1 - 1e-12)
        T[gs[now]] = top
        if now.all():
            return T, looked
        take = np.repeat(now, gc)
        used += np.bincount(el[take], eu[take] / top, minlength=L)
        keep = ~take
        el, eu = el[keep], eu[keep]
        gs, gc = gs[~now], gc[~now]
