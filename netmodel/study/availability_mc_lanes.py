"""The loss system of the availability Monte Carlo: which failures find their spares free,
over many lanes at once (a lane: one spare pool in one trial).

Each lane's events (a time, the spares asked, how long they are held) are granted or
refused in the loop's order against the lane's spares (:mod:`netmodel.study.availability_mc`
samples them and integrates the capacity lost). :func:`_loss_system` grants whole a lane
whose spares never run out (:func:`_never_full`), runs few long lanes one event at a time
(:func:`_loss_lane`) and the rest by the rank loop (:func:`_loss_lanes`: one numpy step per
event rank, every lane at once), a failure granted in part (a grain table) or one failure's
several asks (a pick table) alike in all three.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SEQUENTIAL_LANES"]

#: Most lanes the loss system runs one event at a time (:func:`_loss_lane`) where lanes
#: are few and long: the rank loop's array steps cost some 150 us each whatever the
#: lanes, a lane's event some 2 us.
SEQUENTIAL_LANES = 64


def _loss_system(t, units, hold, cap, order_counts, pick=None, grain=None):
    """Grant or deny each event of a loss system per lane, all lanes at once.

    ``t``, ``units``, ``hold``: 2-D (lanes x rank, padded with inf/0); lanes sorted by
    event count, descending (``order_counts``); ``cap``: spares per lane. Returns the
    granted mask (same shape): :func:`_loss_lanes`'s, whose loop runs once per rank.
    ``grain``: ``(row, table)``, per event (same shape) a row of ``table`` (-1: all or
    nothing): an event finding fewer than its ``units`` free takes ``table[row, free]``
    of them (a failure granted in part, :meth:`~netmodel.study.availability_kinds.
    Kind.take`; the last column for any more), and the mask is then the spares granted.
    ``pick``: ``(pattern, take)``, an event of pattern ``p >= 0`` (one failure's several
    asks of the lane's pool, its ``units`` their sum) granted ``take[p, free]`` spares
    (0: refused); then also the free spares each event found (``cap`` where its lane was
    granted whole). Where
    lanes are few and long (spares shared by a whole cluster: a 131,072-GPU lane holds
    some 14,000 events a year), a lane whose spares never run out even if every event
    were granted (:func:`_never_full`) is granted whole without the loop."""
    lanes, kmax = t.shape
    if lanes * 4 > kmax:   # many short lanes: the loop's ranks are few
        return _loss_lanes(t, units, hold, cap, order_counts, pick, grain)
    granted = np.zeros(t.shape, dtype=bool if grain is None else np.int64)
    seen = np.repeat(cap[:, None], kmax, axis=1) if pick is not None else None
    rest = []
    for i, c in enumerate(order_counts.tolist()):
        if _never_full(t[i, :c], units[i, :c], hold[i, :c], int(cap[i])):
            granted[i, :c] = True if grain is None else units[i, :c]
        else:
            rest.append(i)
    if rest and len(rest) <= SEQUENTIAL_LANES:   # few and long: one event at a time
        for i in rest:
            c = int(order_counts[i])
            out = _loss_lane(t[i, :c], units[i, :c], hold[i, :c], int(cap[i]),
                             None if pick is None else (pick[0][i, :c], pick[1]),
                             None if grain is None else (grain[0][i, :c], grain[1]))
            if pick is None:
                granted[i, :c] = out
            else:
                granted[i, :c], seen[i, :c] = out
    elif rest:   # still sorted by event count, descending
        rest = np.array(rest)
        sub = None if pick is None else (pick[0][rest], pick[1])
        out = _loss_lanes(t[rest], units[rest], hold[rest], cap[rest], order_counts[rest],
                          sub, None if grain is None else (grain[0][rest], grain[1]))
        if pick is None:
            granted[rest] = out
        else:
            granted[rest], seen[rest] = out
    return granted if pick is None else (granted, seen)


def _loss_lane(t, units, hold, cap: int, pick=None, grain=None):
    """One lane of :func:`_loss_lanes` (its events ``t``, ``units``, ``hold`` in the
    loop's order; ``pick``, ``grain`` that lane's rows with their tables) one event at a
    time: the same grants and free spares seen, at a few microseconds an event where the
    rank loop's array steps take some 150 us each whatever the lanes (one lane of 50,000
    events: 8 s). Its holds sit in slots as the loop's do (a grant takes the first slot
    whose hold has ended, a slot freed is taken again), so that events a hair out of time
    order (the float sort key) find what the loop's find."""
    n = len(t)
    ts, us, hs = t.tolist(), units.tolist(), hold.tolist()
    rows, tab = (grain[0].tolist(), grain[1]) if grain is not None else (None, None)
    pats, take = (pick[0].tolist(), pick[1]) if pick is not None else (None, None)
    last = tab.shape[1] - 1 if tab is not None else 0
    granted = [0] * n
    seen = [0] * n
    ends: list[float] = []   # per slot: the end of the hold it took last
    held: list[int] = []     # per slot: the spares that hold took
    for r in range(n):
        tr = ts[r]
        busy, slot = 0, -1
        for j, end in enumerate(ends):
            if end > tr:
                busy += held[j]
            elif slot < 0:
                slot = j
        ur = us[r]
        if rows is not None:   # what a failure granted in part takes (Kind.take)
            free_n = max(cap - busy, 0)
            ur = int(tab[rows[r], min(free_n, last)]) if rows[r] >= 0 else \
                (ur if ur <= free_n else 0)
            ok = ur > 0
        else:
            ok = busy + ur <= cap
        if pats is not None and pats[r] >= 0:   # one failure's several asks
            seen[r] = cap - busy
            ur = int(take[pats[r], cap - busy])
            ok = ur > 0
        if ok:
            if slot < 0:
                ends.append(tr + hs[r])
                held.append(ur)
            else:
                ends[slot], held[slot] = tr + hs[r], ur
            granted[r] = ur if rows is not None else 1
    out = np.array(granted, dtype=np.int64 if grain is not None else bool)
    return out if pick is None else (out, np.array(seen, dtype=np.int64))


def _never_full(t, units, hold, cap: int) -> bool:
    """Whether one lane's events ``t`` (in the loop's order), holding ``units`` spares
    each for ``hold`` s, would all find their spares free even if every one were granted:
    for each event, the units held by the events before it whose hold has not ended
    (ends after its time; an end at its time frees the spares, as in :func:`_loss_lanes`)
    plus its own are at most ``cap``. The loop then grants every event (the units it
    counts as held belong to granted events before it, a subset of these). Also False
    where an event after another in the loop's order ends its hold by that one's time
    (a zero hold): the count below assumes none does."""
    if not len(t):
        return True
    end = t + hold                       # as the loop adds them
    after = np.minimum.accumulate(end[::-1])[::-1]   # the earliest end at or after each
    if not (after > t).all():
        return False
    order = np.argsort(end, kind="stable")
    freed = np.cumsum(units[order])
    k = np.searchsorted(end[order], t, side="right")   # ends at or before each time
    released = np.where(k > 0, freed[np.maximum(k - 1, 0)], 0)
    held = np.cumsum(units) - units - released
    return bool((held + units <= cap).all())


def _loss_lanes(t, units, hold, cap, order_counts, pick=None, grain=None):
    """:func:`_loss_system` by its loop: one step per rank, every lane with an event at
    that rank at once."""
    lanes, kmax = t.shape
    q = int(min(max(1, cap.max()), 8))
    rel = np.full((lanes, q), -np.inf)
    held = np.zeros((lanes, q), dtype=np.int64)
    granted = np.zeros(t.shape, dtype=bool if grain is None else np.int64)
    seen = np.zeros(t.shape, dtype=np.int64) if pick is not None else None
    counts = order_counts
    for r in range(kmax):
        n = int(np.searchsorted(-counts, -(r + 1), side="right"))  # lanes with > r events
        if n == 0:
            break
        tr = t[:n, r]
        ur = units[:n, r]
        live = rel[:n] > tr[:, None]
        busy = np.where(live, held[:n], 0).sum(1)
        if grain is not None:   # what a failure granted in part takes (Kind.take)
            row, tab = grain[0][:n, r], grain[1]
            free_n = np.maximum(cap[:n] - busy, 0)
            ur = np.where(row >= 0, tab[np.maximum(row, 0), np.minimum(free_n, tab.shape[1] - 1)],
                          np.where(ur <= free_n, ur, 0))
            ok = ur > 0
        else:
            ok = busy + ur <= cap[:n]
        if pick is not None:   # one failure's several asks: what best_grant picks
            pat, take = pick[0][:n, r], pick[1]
            several = pat >= 0
            if several.any():
                seen[:n, r] = cap[:n] - busy
                ur = np.where(several, take[np.maximum(pat, 0), cap[:n] - busy], ur)
                ok = np.where(several, ur > 0, ok)
        free = ~live
        if ok.any() and not free[ok].any(1).all():
            grow = q
            rel = np.concatenate([rel, np.full((lanes, grow), -np.inf)], axis=1)
            held = np.concatenate([held, np.zeros((lanes, grow), dtype=np.int64)], axis=1)
            q += grow
            free = np.concatenate([free, np.ones((n, grow), dtype=bool)], axis=1)
        rows = np.flatnonzero(ok)
        slot = np.argmax(free[rows], axis=1)
        rel[rows, slot] = tr[rows] + hold[rows, r]
        held[rows, slot] = ur[rows]
        granted[:n, r] = ok if grain is None else np.where(ok, ur, 0)
    return granted if pick is None else (granted, seen)
