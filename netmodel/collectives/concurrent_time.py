"""Link sharing that follows time, for groups running different steps at once.

Groups of different sizes or algorithms each run their own steps in turn, event by event
over the union of the steps' ends (:func:`_timed`), the links shared among the groups'
current steps in proportion to their loads, a group held back elsewhere leaving the rest to
the others (:func:`_paces`: progressive filling).
:func:`~netmodel.collectives.concurrent_loads._follow_time` feeds it the loads of every
group's steps.
"""

from __future__ import annotations

import numpy as np

#: :func:`_timed` gives up (the steps stay in lockstep) past this many group-link entries
#: looked at over all its events (and at once where its estimate, one round an event, is
#: past it): 102 groups of 2-16 GPUs on a 1,024-GPU fat tree look at about 2^26 in 0.6 s;
#: 912 on 8,192 GPUs would look at 2^36.
_TIMED_WORK = 1 << 27

#: Which schedule charged the groups of a concurrent costing
#: (:attr:`~netmodel.collectives.concurrent.ConcurrentResult.schedule`): in time
#: (:func:`_timed`); in lockstep where every group runs the same steps (groups of one size
#: on one algorithm), where some group runs a pipeline, or where the schedule in time would
#: look at more than :data:`_TIMED_WORK` entries (no bound of the schedule in time).
TIME = "time"
LOCKSTEP = "lockstep"
LOCKSTEP_PIPELINE = "lockstep (a pipeline)"
LOCKSTEP_BUDGET = "lockstep (past the schedule's budget)"


def _timed(work: np.ndarray, entries: list[tuple], L: int,
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
    of :func:`~netmodel.collectives.concurrent_loads._evaluate`; where one finishes a step first, the others' links carry its
    bytes no longer (a 4-GPU ring beside a 2-GPU direct all-gather: the ring's last two of
    three repetitions run alone).

    >>> e = [(np.array([0, 1]), np.array([0, 0]), np.array([0.5, 0.25]))]
    >>> _timed(np.array([[1.0], [3.0]]), e, 1).tolist()   # 0.75 together, then 2 x 0.25
    [[0.75], [1.25]]

    ``shared`` (bool ``(G, S)``, optional): set where some other group loaded one of the
    group's links during some part of the step (untouched: the step ran as alone).
    """
    G, S = work.shape
    # about one round an event, an event a step's end, each looking at the live groups'
    # entries (about a step's worth): past the budget already, give up before the work
    if (work > 0).sum() * sum(len(e[0]) for e in entries) / S > _TIMED_WORK:
        return None
    eg = np.concatenate([e[0] for e in entries])
    el = np.concatenate([e[1] for e in entries])
    eu = np.concatenate([e[2] for e in entries])
    es = np.concatenate([np.full(len(e[0]), i, np.int64) for i, e in enumerate(entries)])
    order = np.argsort(eg * S + es, kind="stable")
    eg, el, eu = eg[order], el[order], eu[order]
    count = np.bincount(eg * S + es[order], minlength=G * S)
    first = np.cumsum(count) - count
    once = shared is None or len(np.unique((eg * S + es[order]) * L + el)) == len(eg)
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
            if once:    # each (group, step, link) listed once: more than one entry is two groups
                other = np.bincount(la, minlength=L)[la] > 1
            else:
                lo, hi = np.full(L, G), np.full(L, -1)
                np.minimum.at(lo, la, ga)
                np.maximum.at(hi, la, ga)
                other = lo[la] != hi[la]
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


def _paces(eg: np.ndarray, el: np.ndarray, eu: np.ndarray, G: int, L: int
           ) -> tuple[np.ndarray, int]:
    """Seconds per byte of ``n`` of one repetition of each group's current step, the
    groups' loads ``(group, link, seconds per byte)`` sharing the links: every link's
    capacity shared among the groups on it in proportion to their loads (so that their
    bytes on it drain together, as in :func:`~netmodel.collectives.concurrent_loads._loads`), a group held back by a busier link
    elsewhere leaving what it cannot use to the others (progressive filling: all paces
    raised together until a link is full, its groups then held there); and how many
    entries it looked at over its rounds (a held group's are dropped).
    Alone on its links, or beside groups none of which is held elsewhere, a group's
    seconds are its busiest link's load summed over every group, those of :func:`~netmodel.collectives.concurrent_loads._loads`.

    >>> _paces(np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([1.0, 1.0, 4.0]), 2, 2)
    ... # group 1 held by link 1 (4 s) takes 1/4 of link 0: group 0 gets 3/4, 4/3 s
    (array([1.33333333, 4.        ]), 4)
    """
    T = np.zeros(G)
    held = np.zeros(G, dtype=bool)
    used = np.zeros(L)            # capacity taken by the groups held so far
    if not (eu > 0).all():   # a load of no time needs nothing of its link
        eg, el, eu = eg[eu > 0], el[eu > 0], eu[eu > 0]
    if len(eg) > 1 and (eg[1:] < eg[:-1]).any():   # by group (as _timed gives them)
        order = np.argsort(eg, kind="stable")
        eg, el, eu = eg[order], el[order], eu[order]
    looked = 0
    while True:
        # the free groups' entries only (a held group's are dropped), in group order
        looked += len(eg)
        demand = np.bincount(el, eu, minlength=L)
        with np.errstate(divide="ignore", invalid="ignore"):
            # seconds a repetition takes if the free groups on the link share what is left
            t_link = np.where(demand > 0, demand / np.maximum(1.0 - used, 0.0), 0.0)
        t = np.zeros(G)
        if len(eg):
            starts = np.flatnonzero(np.r_[True, eg[1:] != eg[:-1]])
            t[eg[starts]] = np.maximum.reduceat(t_link[el], starts)
        top = t[~held].max(initial=0.0)
        now = ~held & (t >= top * (1 - 1e-12))
        if top == 0 or now.sum() == (~held).sum():
            T[~held] = t[~held] if top == 0 else top
            return T, looked
        T[now] = top
        held |= now
        take = now[eg]
        used += np.bincount(el[take], eu[take] / top, minlength=L)
        keep = ~take
        eg, el, eu = eg[keep], el[keep], eu[keep]
