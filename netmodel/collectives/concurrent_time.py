"""Link sharing that follows time, for groups running different steps at once.

Groups of different sizes or algorithms each run their own steps in turn, event by event
over the union of the steps' ends (:func:`timed_steps`), the links shared among the groups'
current steps in proportion to their loads, a group held back elsewhere leaving the rest to
the others (:func:`_paces`: progressive filling).
:func:`~netmodel.collectives.concurrent_loads._follow_time` feeds it the loads of every
group's steps.
"""

from __future__ import annotations

import numpy as np

#: :func:`timed_steps` gives up (the steps stay in lockstep) past this many group-link entries
#: looked at over all its events (and at once where its estimate, one round an event, is
#: past it), one link of each set of parallel links (:func:`_one_link_of_each`): 102 groups
#: of 2-16 GPUs on a 1,024-GPU 2:1 fat tree, a 1 MiB all-reduce under auto, look at under
#: 2^25 in its longest working (8 steps, 630 events, 5,407 rounds of :func:`_paces`; 13,699
#: filling one link a round). 912 such groups on 8,192 GPUs (a 2:1 k=32 fat tree) would
#: look at 2^29.8 in one of their eight-step workings (4,176 events, 71,252 rounds; 381,574
#: and 2^32 filling one link a round), 2^26.3 to 2^30.2 a working, 58 s of CPU for all
#: seven: lockstep.
_TIMED_WORK = 1 << 27

#: what a round of :func:`_paces` counts towards :data:`_TIMED_WORK` besides its entries:
#: its numpy calls (thirty-odd when this was set, as long as summing that many entries;
#: thirty-odd again since a round holds every link full first among its neighbours, where
#: it was twenty-odd holding the slowest only): the budget means what it did, so the 912
#: groups above give up after about as many entries, in fewer but dearer rounds (16.4 s of
#: CPU to fall back, was 14.0)
_ROUND = 1 << 12

#: Which schedule charged the groups of a concurrent costing
#: (:attr:`~netmodel.collectives.concurrent.ConcurrentResult.schedule`): in time
#: (:func:`timed_steps`); in lockstep where every group runs the same steps (groups of one size
#: on one algorithm), where some group runs a pipeline, or where the schedule in time would
#: look at more than :data:`_TIMED_WORK` entries (no bound of the schedule in time).
TIME = "time"
LOCKSTEP = "lockstep"
LOCKSTEP_PIPELINE = "lockstep (a pipeline)"
LOCKSTEP_BUDGET = "lockstep (past the schedule's budget)"


def timed_steps(work: np.ndarray, entries: list[tuple], L: int,
                shared: np.ndarray | None = None) -> np.ndarray | None:
    """Each group's seconds per byte of ``n`` in each of its steps when link sharing follows
    time: ``(G, S)``, or None past :data:`_TIMED_WORK`.

    ``work[g, i]``: how many times group ``g`` runs step ``i`` one after another (0: a step
    that takes no time); ``entries[i]``: :func:`~netmodel.collectives.concurrent_loads._step_entries` of step ``i``. Every group
    runs its steps in turn, the groups' current steps sharing the links (:func:`_paces`:
    in proportion to their loads, so that their bytes drain together, a group held back
    elsewhere leaving the rest to the others); the shares change only when some group
    finishes a step (its repetitions in one go: they load the same links alike), so the
    schedule is event by event over the union of the steps' ends. Where every group runs
    the same steps at the same pace and none is held back elsewhere, this is the lockstep
    of :func:`~netmodel.collectives.concurrent_loads.evaluate_loads`; where one finishes a step first, the others' links carry its
    bytes no longer (a 4-GPU ring beside a 2-GPU direct all-gather: the ring's last two of
    three repetitions run alone).

    >>> e = [(np.array([0, 1]), np.array([0, 0]), np.array([0.5, 0.25]))]
    >>> timed_steps(np.array([[1.0], [3.0]]), e, 1).tolist()   # 0.75 together, then 2 x 0.25
    [[0.75], [1.25]]

    ``shared`` (bool ``(G, S)``, optional): set where some other group loaded one of the
    group's links during some part of the step (untouched: the step ran as alone).
    """
    G, S = work.shape
    eg = np.concatenate([e[0] for e in entries])
    el = np.concatenate([e[1] for e in entries])
    eu = np.concatenate([e[2] for e in entries])
    es = np.repeat(np.arange(S, dtype=np.int64), [len(e[0]) for e in entries])
    # links that carry the same entries (ECMP's parallel links) share alike: one of each,
    # the entries by group, then step, as listed
    eg, el, eu, es, L = _one_link_of_each(eg, el, eu, es, L, G, S)
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


#: entries :func:`_one_link_of_each` hashes and compares at a time (whole links): its
#: temporaries stay small, where arrays as long as all the entries (ten million on 8,192
#: GPUs) would each be fresh pages to zero
_CHUNK = 1 << 20


def _chunks(cnt: np.ndarray) -> list[tuple[int, int]]:
    """``(first, last + 1)`` ranges of the links whose entry counts are ``cnt``, whole
    links of about :data:`_CHUNK` entries together."""
    ends = np.cumsum(cnt)
    cut = np.unique(np.searchsorted(ends, np.arange(_CHUNK, int(ends[-1]), _CHUNK)))
    cut = np.r_[0, cut + 1, len(cnt)]
    return [(int(a), int(b)) for a, b in zip(cut[:-1], cut[1:], strict=True) if a < b]


def _one_link_of_each(eg, el, eu, es, L, G=None, S=None):
    """The entries ``(group, link, load, step)`` on one link of each set of links that
    carry the same entries, in the same order (a leaf's uplinks to every spine, loaded
    alike by ECMP), by group, then step, as listed; the links renumbered ``0 .. L' - 1``;
    and ``L'``. Such links share alike in every event of :func:`timed_steps` (the same sums of
    the same loads in the same order, so the same bits): the schedule is the same, each
    link looked at once. Links are matched by a hash of their entries, then compared entry
    by entry. ``G``, ``S``: more than the largest group and step (found where not given)."""
    n = len(el)
    if not n:
        return eg, el, eu, es, 0
    G = int(eg.max()) + 1 if G is None else G
    S = int(es.max()) + 1 if S is None else S
    if L * G * S < 1 << 62:   # by link, then group, step, as listed: one sort
        o = np.argsort((el * G + eg) * S + es, kind="stable")
    else:
        o = np.argsort(eg * S + es, kind="stable")
        o = o[np.argsort(el[o], kind="stable")]
    cnt = np.bincount(el, minlength=L)
    ptr = np.cumsum(cnt) - cnt
    bits = eu.view(np.uint64)
    k1, k2, k3, k4 = _MIX
    on = np.flatnonzero(cnt)
    h = np.empty(len(on), np.uint64)
    for a, b in _chunks(cnt[on]):   # each link's entries hashed, a chunk at a time
        e0, e1 = int(ptr[on[a]]), int(ptr[on[b - 1]] + cnt[on[b - 1]])
        oc = o[e0:e1]
        pos = (np.arange(e0, e1) - np.repeat(ptr[on[a:b]], cnt[on[a:b]])).astype(np.uint64)
        v = (eg[oc].astype(np.uint64) * k1) ^ (es[oc].astype(np.uint64) * k2) ^ (bits[oc] * k3)
        v = (v ^ (v >> np.uint64(31))) * k4 + pos * k1
        v ^= v >> np.uint64(29)
        h[a:b] = np.add.reduceat(v, ptr[on[a:b]] - e0)
    by = np.lexsort((on, h, cnt[on]))
    new_key = np.r_[True, (h[by][1:] != h[by][:-1]) | (cnt[on][by][1:] != cnt[on][by][:-1])]
    rep = np.arange(L)
    rep[on[by]] = on[by][np.flatnonzero(new_key)[np.cumsum(new_key) - 1]]
    # compare each link with the one it stands for, entry by entry
    dup = on[rep[on] != on]
    for a, b in _chunks(cnt[dup]) if len(dup) else ():
        d = dup[a:b]
        c = cnt[d]
        at = np.repeat(ptr[d] - (np.cumsum(c) - c), c) + np.arange(int(c.sum()))
        ra = o[at + np.repeat(ptr[rep[d]] - ptr[d], c)]
        at = o[at]
        bad = (eg[at] != eg[ra]) | (es[at] != es[ra]) | (bits[at] != bits[ra])
        if bad.any():
            wrong = d[np.bincount(np.repeat(np.arange(len(d)), c), bad, minlength=len(d)) > 0]
            rep[wrong] = wrong
    keep_link = rep == np.arange(L)
    keep_link &= cnt > 0
    number = np.cumsum(keep_link) - 1
    # the kept entries, back in the order they were listed, then by group and step
    kept = np.sort(o[np.repeat(keep_link, cnt)])
    kept = kept[np.argsort(eg[kept] * S + es[kept], kind="stable")]
    return eg[kept], number[el[kept]], eu[kept], es[kept], int(keep_link.sum())


def _paces(eg: np.ndarray, el: np.ndarray, eu: np.ndarray, G: int, L: int
           ) -> tuple[np.ndarray, int]:
    """Seconds per byte of ``n`` of one repetition of each group's current step, the
    groups' loads ``(group, link, seconds per byte)`` sharing the links: every link's
    capacity shared among the groups on it in proportion to their loads (so that their
    bytes on it drain together, as in :func:`~netmodel.collectives.concurrent_loads._loads`), a group held back by a busier link
    elsewhere leaving what it cannot use to the others (progressive filling: all paces
    raised together until a link is full, its groups then held there); and how many
    entries it looked at over its rounds (a held group's are dropped), each round counting
    :data:`_ROUND` more.
    Alone on its links, or beside groups none of which is held elsewhere, a group's
    seconds are its busiest link's load summed over every group, those of :func:`~netmodel.collectives.concurrent_loads._loads`.

    A round holds every link that is full first among its neighbours: its seconds (its
    free groups sharing what is left of it) no less than those of any free group on it,
    within a relative 1e-12, each group on such a link held at its own seconds (its
    busiest link's). Holding a group frees capacity on its other links (it takes no more
    of a link than its share there), so no other link's seconds rise and such a link's do
    not change before it is held: the max-min fair shares of filling one link a round
    (the slowest first), in far fewer rounds, the depth of the chain of links each held
    after a busier neighbour, not the number of distinct paces. The result may differ from
    one link a round's in the last bits (what is left of a link summed in another order,
    a near tie held at its own seconds, not the slowest's).

    >>> _paces(np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([1.0, 1.0, 4.0]), 2, 2)[0]
    ... # group 1 held by link 1 (4 s) takes 1/4 of link 0: group 0 gets 3/4, 4/3 s
    array([1.33333333, 4.        ])
    """
    T = np.zeros(G)
    if not (eu > 0).all():   # a load of no time needs nothing of its link
        eg, el, eu = eg[eu > 0], el[eu > 0], eu[eu > 0]
    if len(eg) > 1 and (eg[1:] < eg[:-1]).any():   # by group (as timed_steps gives them)
        order = np.argsort(eg, kind="stable")
        eg, el, eu = eg[order], el[order], eu[order]
    if not len(eg):
        return T, 0
    used = np.zeros(L)            # capacity taken by the groups held so far
    # the free groups with loads, in order, where each one's entries start and how many (a
    # group with none takes no time)
    starts = np.flatnonzero(np.concatenate(([True], eg[1:] != eg[:-1])))
    gs, gc = eg[starts], np.diff(np.append(starts, len(eg)))
    looked = 0
    near = 1 - 1e-12
    before = np.full(L, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        while True:
            # the free groups' entries only (a held group's are dropped), in group order
            looked += len(el) + _ROUND
            # seconds a repetition takes if the free groups on the link share what is left
            # (every free entry's link has a demand: a sum of loads > 0), never more than
            # the round before (holding a group at its busiest link's seconds leaves each
            # of its links at least its share: no link's seconds rise but by rounding, as a
            # link used up to the last bit beside a load of a few ulps)
            t_link = np.bincount(el, eu, minlength=L) / np.maximum(1.0 - used, 0.0)
            np.minimum(t_link, before, out=t_link)
            before = t_link
            at_link = t_link[el]
            t = np.maximum.reduceat(at_link, starts)
            # a link is full first where no free group on it is slower (within near)
            t_of = np.repeat(t, gc)
            slower = np.bincount(el, t_of * near > at_link, minlength=L)
            full = (slower == 0)[el]
            now = np.logical_or.reduceat(full, starts)
            T[gs[now]] = t[now]
            if np.count_nonzero(now) == len(now):
                return T, looked
            take = np.repeat(now, gc)
            used += np.bincount(el[take], eu[take] / t_of[take], minlength=L)
            np.logical_not(take, out=take)
            el, eu = el[take], eu[take]
            np.logical_not(now, out=now)
            gs, gc = gs[now], gc[now]
            starts = np.cumsum(gc) - gc
