"""The schedule in time worked out the plain way, as the reference for
``netmodel/collectives/concurrent_time.py`` (``test_concurrent_time_reference.py``): a
dictionary of loads per group, step and link; progressive filling one level at a time (every
free group's pace raised together until some link is full, the free groups on the fullest
links held there); events one at a time, every group's repetitions left counted down.
In exact fractions (``exact=True``: ties are ties) or in floats (a group within a relative
1e-12 of the next event ends with it)."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import numpy as np


def _number(x, exact: bool):
    return Fraction(float(x)) if exact else float(x)


def step_loads(entries: list[tuple], exact: bool = True) -> dict:
    """``{(group, step): {link: load}}``: every entry's load added to its group's, step's and
    link's (an entry listed twice loads its link twice)."""
    loads: dict = defaultdict(lambda: defaultdict(int))
    for i, (eg, el, eu) in enumerate(entries):
        for g, link, u in zip(eg.tolist(), el.tolist(), eu.tolist(), strict=True):
            loads[g, i][link] += _number(u, exact)
    return loads


def paces(loads: dict, exact: bool = True) -> dict:
    """``{group: seconds of one repetition}`` for groups whose loads are ``{group: {link:
    load}}``: a link of capacity 1 a second carries ``sum(load / seconds)`` of its groups;
    progressive filling on the groups' rates ``1 / seconds`` (all raised together, a group
    held where one of its links is full). A group with no load takes 0 s."""
    seconds = {g: 0 for g, on in loads.items() if not any(u > 0 for u in on.values())}
    free = {g for g in loads if g not in seconds}
    used: dict = defaultdict(int)
    while free:
        demand: dict = defaultdict(int)   # the free groups' loads on each link
        for g in free:
            for x, u in loads[g].items():
                if u > 0:
                    demand[x] += u
        # the rate at which each link fills up with the free groups on it
        level = {x: (1 - used[x]) / d for x, d in demand.items()}
        rate = min(level.values())
        full = {x for x, v in level.items()
                if (v == rate if exact else v <= rate * (1 + 1e-12))}
        held = {g for g in free if any(loads[g].get(x, 0) > 0 for x in full)}
        for g in held:
            seconds[g] = 1 / rate
            for x, u in loads[g].items():
                used[x] += u * rate
        free -= held
    return seconds


def timed(work: np.ndarray, entries: list[tuple], exact: bool = True):
    """``(seconds, shared)``: each group's seconds in each step, ``(G, S)``, its steps run in
    turn (``work[g, i]`` repetitions of step ``i``; none: no time), the live groups' current
    steps sharing the links (:func:`paces`) between events (a group's step ending); and
    where some other live group had an entry on one of the group's links during the step."""
    G, S = work.shape
    loads = step_loads(entries, exact)
    links = {(g, i): set(on) for (g, i), on in loads.items()}
    out = np.zeros((G, S))
    shared = np.zeros((G, S), dtype=bool)
    step = {g: 0 for g in range(G)}
    left = {}
    begun = {g: 0 for g in range(G)}
    now = 0

    def begin(g):
        while step[g] < S and work[g, step[g]] <= 0:
            step[g] += 1
        if step[g] < S:
            left[g] = _number(work[g, step[g]], exact)
            begun[g] = now

    for g in range(G):
        begin(g)
    while True:
        live = [g for g in range(G) if step[g] < S]
        if not live:
            return out, shared
        for g in live:
            mine = links.get((g, step[g]), set())
            if any(mine & links.get((h, step[h]), set()) for h in live if h != g):
                shared[g, step[g]] = True
        secs = paces({g: loads.get((g, step[g]), {}) for g in live}, exact)
        need = {g: left[g] * secs[g] for g in live}
        dt = min(need.values())
        now += dt
        for g in live:
            if (need[g] == dt) if exact else need[g] <= dt * (1 + 1e-12):
                out[g, step[g]] = float(now - begun[g])
                step[g] += 1
                begin(g)
            else:
                left[g] -= dt / secs[g]
