"""The availability model in closed form: a multi-rate loss system per spare pool
(Kaufman-Roberts), the capacity lost per second, and the tail of the capacity in progress.

**Analytic** (:func:`analytic`): the same model in closed form. Mean capacity lost per
second is ``sum_k rate_k [B_k (down_k d_repair + sw_k d_slow) + (1 - B_k)((down_k + sw_k)
d_swap + (restored_k + sr_k)(hold_k - d_swap)) + (slow_k - sw_k) d_slow]`` (``sw``, ``sr``:
``slow_swapped``, ``slow_restored``), with ``B_k`` the share of a failure of kind
``k``'s instances that find too few spares (the probability that it does where its ask is
all or nothing; a failure short of spares brings back as many whole instances as they
hold, :attr:`~netmodel.study.availability_kinds.Kind.per`, each instance one ask of
:func:`_sequential`'s chain; where they take different numbers of spares, as far as they
reach in the order of :attr:`~netmodel.study.availability_kinds.Kind.steps`): 1 without spares, else the Kaufman-Roberts recursion of a
multi-rate loss system per pool (each pool an Erlang loss system of ``spares`` servers;
insensitive to the repair-time distribution); where one failure asks one pool more than
once (a group's own instances and a spanning instance's share of it), the set of its asks
that restores the most granted (:func:`~netmodel.study.availability_kinds.best_grant`), as
the Monte Carlo grants them, the pool a Markov chain
(:func:`_sequential`), as are the pools of a cell one failure asks together (its groups',
a spanning instance's shares: :func:`_coupled_blocking`). The losses in progress add (first-order)
but never past the whole cluster: the mean adds back ``E[(X - I)^+] / I``, the share by
which their compound Poisson sum ``X`` runs past the cluster's ``I`` instances (as the
Monte Carlo caps its sum; :func:`_saturation`: 0 at any shipped scenario's rates), so it
stays in [0, 1] (one instance, no spares, failures at rate ``r`` each down ``2 / r`` s:
``e^-2``, the share of time no outage is in progress, where the additive mean was -1). Without spares the share of time below the
threshold is the tail of a compound Poisson count of instances down (outages in progress:
an M/G/infinity system, Panjer recursion; each failure's losses together, a stream per band
of its age, :func:`_streams`; with spares each refusal thinned apart, those crossing the
threshold alone overlapping as the pool's chain of holdings brings them together,
:func:`_crossing_overlap`), and the per-instance availability of
independent alternating-renewal components is given too.

The model and its event kinds: :mod:`netmodel.study.availability`,
:mod:`netmodel.study.availability_kinds`; its Monte Carlo:
:mod:`netmodel.study.availability_mc`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise

import numpy as np

from compute.units import counted
from netmodel.study.availability_kinds import THRESHOLD, Kind, ask_values, best_grant
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.reliability_spares import SparePools

__all__ = ["Analytic", "analytic", "blocking", "kaufman_roberts"]


def kaufman_roberts(capacity: int, loads: Iterable[float], units: Iterable[int]) -> np.ndarray:
    """Occupancy distribution ``q[j]`` (j busy units, 0..capacity) of a multi-rate loss
    system: classes offering ``loads`` Erlangs each of ``units`` servers.

    With one class of 1 unit it is Erlang's loss formula: blocking = q[capacity].

    >>> q = kaufman_roberts(2, [1.0], [1])
    >>> round(float(q[2]), 6)  # Erlang B(2, 1) = (1/2) / (1 + 1 + 1/2)
    0.2
    """
    q = np.zeros(capacity + 1)
    q[0] = 1.0
    for j in range(1, capacity + 1):
        s = 0.0
        for a, u in zip(loads, units, strict=True):
            if 0 < u <= j:
                s += a * u * q[j - u]
        q[j] = s / j
        if q[j] > 1e250:  # keep the recursion finite; only ratios matter
            q[: j + 1] /= q[j]
    return q / q.sum()


def blocking(kinds: Sequence[Kind], pools: SparePools) -> np.ndarray:
    """Per kind, the share of a failure's instances that find too few free spares in its
    pool (the probability that it does, where its ask is all or nothing):
    :func:`_blocking`'s."""
    return _blocking(kinds, pools)[0]


def _blocking(kinds: Sequence[Kind], pools: SparePools) -> tuple[np.ndarray, dict]:
    """Per kind, the probability that a failure finds too few free spares in its pool
    (averaged over the pools it draws on, of different sizes). A kind of group -1 spreads
    its load over every pool; with ``group`` placement (pool ``cell x G + g``) a kind of
    group ``g`` offers its load to the ``pools / G`` pools of slot ``g`` only, and is
    blocked as averaged over those. Each slot's pools of one size are one multi-rate loss
    system (:func:`kaufman_roberts`) of the kinds drawing on them; where one failure asks
    such a pool more than once, the set of its asks that restores the most is granted
    (:func:`_sequential`). Also, per ``(slot, spares)``, the share of failures that find
    each number of its spares busy, and under ``"refused"`` per kind granted in part
    (:attr:`Kind.pieces` > 1) the probability that a failure finds ``r`` of its instances
    no spares, ``r = 0 .. pieces`` (where they take different numbers, ``r`` steps of
:attr:`Kind.steps` short of the whole grant: :func:`_short_of`; 1 - its first: the waits
for repair). A kind granted in part is solved by :func:`_sequential`'s
    chain (each instance one ask); past the chain's limit by Kaufman-Roberts with its
    instances as independent asks (an approximation: they arrive together). Under
    ``"fallback"`` the fallbacks taken past the chain's limit (:attr:`Analytic.fallback`)."""
    occupancy: dict = {}
    if not kinds:
        return np.ones(0), occupancy
    n_groups = pools.groups if any(x.group >= 0 for x in kinds) else 1
    # the pools each kind draws on: every one (group -1) or its slot's
    over = [pools.pools if x.group < 0 else pools.pools // n_groups for x in kinds]
    sizes: dict = {}   # (slot, capacity) -> pools
    for p, c in enumerate(pools.reachable):
        sizes[(p % n_groups, c)] = sizes.get((p % n_groups, c), 0) + 1
    acc = np.zeros(len(kinds))
    # pools that one failure asks together (a failure over several groups): one chain
    jointly: set = set()
    notes: set = set()   # the fallbacks past the chain's limit taken (Analytic.fallback)
    # each slot's kinds and the failure each kind follows, once (not per slot: a 16,384-GPU
    # cell with group spares has 2,048 slots and 8,000 kinds)
    family = _lead(kinds)
    by_slot: dict = {}
    for k, x in enumerate(kinds):
        by_slot.setdefault(x.group, []).append(k)
    for comp in _coupled(kinds, n_groups):
        solved = _coupled_blocking(kinds, pools, comp, n_groups, over, notes)
        if solved is None:
            notes.add(FALLBACK_APART)
        else:
            acc += solved[0]
            occupancy.setdefault("exact", {}).update(solved[1])
            occupancy.update(solved[2])
            occupancy.setdefault("comp", {}).update({g: comp for g in comp})
            jointly |= set(comp)
    for (slot, cap), n in sizes.items():
        if slot in jointly:
            continue
        here = sorted([*by_slot.get(-1, ()), *by_slot.get(slot, ())])
        # a kind granted in part (Kind.grain) is served while one instance's spares fit
        elig = [k for k in here if 0 < kinds[k].grain <= cap]
        b = np.ones(len(kinds))
        dist: dict = {}   # kinds granted in part: P(r of its instances refused)
        asks = _asks(kinds, [k for k in elig if kinds[k].group == slot >= 0], family)
        chained = any(len(a) > 1 for a in asks) or any(kinds[k].pieces > 1 for k in elig)
        seq = _sequential(int(cap), kinds, [k for k in elig if kinds[k].group < 0], asks,
                          over, notes) if chained else None
        if chained and seq is None:
            notes.add(FALLBACK_INDEPENDENT)
        if seq is not None:
            occupancy[(slot, cap)] = seq.pop("busy")
            dist.update(seq.pop("refused"))
            for k, v in seq.items():
                b[k] = v
        elif elig:   # one size of grant each: Kaufman-Roberts (a kind granted in part
            # past the chain's limit: its instances as independent asks, approximate;
            # instances taking different numbers of spares: an ask of each size)
            loads, us = [], []
            for k in elig:
                x = kinds[k]
                load = x.rate * x.cells / over[k] * x.hold
                for u, many in (sorted(Counter(x.each).items()) if x.each
                                else ((x.grain, x.pieces),)):
                    loads.append(load * many)
                    us.append(u)
            q = occupancy[(slot, cap)] = kaufman_roberts(int(cap), loads, us)
            tail = np.cumsum(q[::-1])[::-1]  # tail[j] = P(busy >= j)
            for k in elig:
                x = kinds[k]
                u = x.grain
                b[k] = float(tail[cap - u + 1]) if cap - u + 1 <= cap else 0.0
                if x.pieces > 1:   # busy j: the steps the free spares do not reach
                    r = _short_of(x, cap - np.arange(cap + 1))
                    dist[k] = np.bincount(r, weights=q, minlength=_top(x) + 1)
                    # its blocking is the share of its instances refused (the chain's
                    # too), not the chance that none fits: a failure asking more than
                    # the pool holds is refused some of its instances every time
                    b[k] = float(dist[k] @ _refused_counts(x)) / x.pieces
        for k in here:
            acc[k] += b[k] * n
            x = kinds[k]
            if x.pieces > 1:   # none fits: every instance refused
                d = dist.get(k, np.eye(_top(x) + 1)[_top(x)])
                occupancy.setdefault("refused", {})
                occupancy["refused"][k] = occupancy["refused"].get(k, 0.0) + d * n
    out = acc / np.array(over)
    for k, x in enumerate(kinds):
        if x.units == 0:
            out[k] = 0.0
    if "refused" in occupancy:
        occupancy["refused"] = {k: v / over[k] for k, v in occupancy["refused"].items()}
    occupancy["fallback"] = tuple(sorted(notes))
    return out, occupancy


def _coupled(kinds: Sequence[Kind], n_groups: int) -> list[tuple[int, ...]]:
    """The slots (groups) whose pools one failure asks together (a failure over several
    groups, an instance spanning them: :attr:`Kind.follows`), joined where failures link
    them; each set of two or more, in order."""
    from networkx.utils import UnionFind

    joined = UnionFind(range(n_groups))
    for fam in _families(kinds):
        joined.union(*{kinds[k].group for k in fam if kinds[k].group >= 0
                       and kinds[k].units > 0})
    return sorted(tuple(sorted(c)) for c in joined.to_sets() if len(c) > 1)


def _granted(caps, used, asks) -> list[bool]:
    """Whether each of one failure's ``asks`` ``(pool, spares, restores)`` is granted
    with ``used`` busy: each pool's asks as :func:`~netmodel.study.availability_kinds.
    best_grant` picks from its free spares."""
    out = [False] * len(asks)
    for pool in sorted({a[0] for a in asks}):
        ix = [i for i, a in enumerate(asks) if a[0] == pool]
        picks = best_grant(tuple(asks[i][1] for i in ix), tuple(asks[i][2] for i in ix),
                           caps[pool] - used[pool])
        for i, ok in zip(ix, picks, strict=True):
            out[i] = ok
    return out


def _coupled_blocking(kinds: Sequence[Kind], pools: SparePools, comp: tuple, n_groups: int,
                      over: list, notes: set | None = None
                      ) -> tuple[np.ndarray, dict, dict] | None:
    """:func:`_blocking` for the pools of slots ``comp`` of each cell, which failures over
    several groups ask together: one chain (:func:`_chain`) per cell's pool sizes, each
    failure's asks of each (each group's kinds of a failure and a spanning instance's
    shares) granted as :func:`_granted` picks. Returns the blocking summed
    over the cells (to be divided by ``over``), the blocking of each spanning instance
    (back only if its ask and every share are granted: exact in the chain, where
    :func:`_all_or_nothing` takes the pools as independent) and the chains' spares busy
    ``(per pool of comp, probability)``; None past the chain's limit (then ``notes`` gets
    nothing from the cells' chains, all set aside: the pools are taken apart)."""
    pos = {g: j for j, g in enumerate(comp)}
    classes: list = []   # kind indices asking together, in the kinds' order
    for fam in _families(kinds):
        ks = [k for k in fam if kinds[k].group in pos and kinds[k].units > 0]
        if ks and all(getattr(kinds[ks[0]], f) == getattr(kinds[k], f)
                      for k in ks for f in ("rate", "cells", "hold")):
            classes.append(ks)
        else:
            classes.extend([k] for k in ks)
    spread = [k for k, x in enumerate(kinds) if x.group < 0 and x.units > 0]
    cells = pools.pools // n_groups
    by_caps: dict = {}
    for c in range(cells):
        caps = tuple(int(pools.reachable[c * n_groups + g]) for g in comp)
        by_caps[caps] = by_caps.get(caps, 0) + 1
    acc = np.zeros(len(kinds))
    exact: dict = {}
    occ: dict = {}
    vals = ask_values(kinds)
    taken: set = set()   # the cells' fallbacks, said only where every cell's chain is kept
    for caps, n in by_caps.items():
        asks = [[(pos[kinds[k].group], kinds[k].units, vals[k]) for k in ks]
                for ks in classes]
        chain = _chain(caps, [(kinds[ks[0]].rate * kinds[ks[0]].cells / over[ks[0]],
                               kinds[ks[0]].hold, a) for ks, a in zip(classes, asks,
                                                                      strict=True)]
                       + [(kinds[k].rate * kinds[k].cells / over[k], kinds[k].hold,
                           [(j, kinds[k].units, vals[k])]) for k in spread
                          for j in range(len(comp))], taken)
        if chain is None:
            return None
        busy, prob = chain
        used, inv = np.unique(busy, axis=0, return_inverse=True)
        p = np.bincount(inv.ravel(), weights=prob, minlength=len(used))
        occ[("coupled", comp, caps)] = (used, p)
        for ks, a in zip(classes, asks, strict=True):
            ok = np.array([_granted(caps, u, a) for u in used.tolist()], dtype=bool)
            for j, k in enumerate(ks):
                acc[k] += float(p @ ~ok[:, j]) * n
            for j, k in enumerate(ks):   # a spanning instance: its ask and its shares
                mine = []
                while not kinds[k].joint and k + 1 + len(mine) < len(kinds) \
                        and kinds[k + 1 + len(mine)].joint:
                    mine.append(k + 1 + len(mine))
                if mine and all(i in ks for i in mine):   # else taken apart, as before
                    back = float(p @ ok[:, [j] + [ks.index(i) for i in mine]].all(axis=1))
                    exact[k] = exact.get(k, 0.0) + (1.0 - back) * n / cells
        for k in spread:
            for j in range(len(comp)):
                ok = np.array([_granted(caps, u, [(j, kinds[k].units, vals[k])])[0]
                               for u in used.tolist()], dtype=bool)
                acc[k] += float(p @ ~ok) * n
    if notes is not None:
        notes |= taken
    return acc, exact, occ


def _families(kinds: Sequence[Kind]) -> list[list[int]]:
    """The kinds by the failure that strikes them: each kind that follows no other with
    the kinds that follow it (:attr:`Kind.follows`)."""
    out: list = []
    for k, x in enumerate(kinds):
        if x.follows and out:
            out[-1].append(k)
        else:
            out.append([k])
    return out


def _top(x: Kind) -> int:
    """The last step of a kind granted in part (:attr:`Kind.steps`; :attr:`Kind.pieces`
    where every instance takes :attr:`Kind.per`)."""
    return len(x.steps) - 1 if x.each else x.pieces


def _short_of(x: Kind, free: np.ndarray) -> np.ndarray:
    """The steps short of the whole grant (``r``, the index of the ``"refused"``
    distributions: 0 all back, :func:`_top` none) of a failure of ``x`` finding each of
    ``free`` spares free (:meth:`Kind.granted`)."""
    if not x.each:
        return x.pieces - np.minimum(x.pieces, free // x.grain)
    return _top(x) - np.array([x.granted(int(f)) for f in free], dtype=np.int64)


def _refused_counts(x: Kind) -> np.ndarray:
    """Instances refused at each ``r`` of :func:`_short_of` (where every instance takes
    :attr:`Kind.per`, ``r`` itself)."""
    if not x.each:
        return np.arange(x.pieces + 1)
    return np.array([x.refused(_top(x) - r) for r in range(_top(x) + 1)])


def _down_events(kinds: Sequence[Kind], pools: SparePools, b: np.ndarray,
                 occupancy: dict) -> tuple[float, float]:
    """Failures a second that take an instance down, and those of them where one waits
    for its repair (too few spares in a pool it asks): one per failure and cell it strikes,
    however many groups' instances it takes down there (its kinds: :func:`_families`).
    A failure of one kind waits as its blocking says. One of several asks back only if
    every ask its down instances make (theirs and, for an instance spanning groups, its
    ``joint`` shares) is granted: in each pool as its occupancy says, the failure's asks
    of that pool as :func:`_granted` picks; pools asked together by the same failures
    from their joint chain (:func:`_coupled_blocking`), else taken as independent (as
    :func:`_all_or_nothing`), the cells averaged; a kind of group -1 apart."""
    events = waits = 0.0
    n_groups = pools.groups if any(x.group >= 0 for x in kinds) else 1
    cells = max(1, pools.pools // n_groups)
    vals = ask_values(kinds)
    for fam in _families(kinds):
        downs = [k for k in fam if kinds[k].down > 0]
        if not downs:
            continue
        x = kinds[downs[0]]
        events += x.rate * x.cells
        if len(downs) == 1:   # granted in part: waits unless every instance is back
            d = occupancy.get("refused", {}).get(downs[0])
            if d is not None and x.down_pieces and not x.each:   # the down first: one
                # waits only where more are refused than the slowed swapped
                waits += x.rate * x.cells * float(np.sum(d[x.pieces - x.down_pieces + 1:]))
                continue
            if d is not None and x.each:   # the steps where a down instance is refused
                top = _top(x)
                short = [r for r in range(top + 1) if x.steps[top - r][1] < x.down]
                waits += x.rate * x.cells * float(np.sum(d[short]))
                continue
            waits += x.rate * x.cells * (float(b[downs[0]]) if d is None else 1.0 - float(d[0]))
            continue
        # the asks whose refusal leaves a down instance waiting
        need, anchor = set(), -1
        for k in fam:
            anchor = anchor if kinds[k].joint else k
            if kinds[anchor].down > 0:
                need.add(k)
        if any(kinds[k].units < 0 for k in need):
            waits += x.rate * x.cells
            continue
        apart = 1.0
        for k in need:
            if kinds[k].group < 0 and kinds[k].units > 0:
                apart *= 1.0 - float(b[k])
        comp_of = occupancy.get("comp", {})
        blocks = sorted({comp_of.get(kinds[k].group, (kinds[k].group,)) for k in fam
                         if kinds[k].group >= 0})
        granted: dict = {}   # (pools, their spares) -> P(the failure's asks all granted)
        back = 0.0
        for c in range(cells):
            p = apart
            for block in blocks:
                caps = tuple(int(pools.reachable[c * n_groups + g]) for g in block)
                if (block, caps) not in granted:
                    pos = {g: j for j, g in enumerate(block)}
                    seq = [k for k in fam if kinds[k].group in pos and kinds[k].units > 0]
                    asks = [(pos[kinds[k].group], kinds[k].units, vals[k]) for k in seq]
                    if len(block) > 1:
                        used, q = occupancy[("coupled", block, caps)]
                    else:
                        q = occupancy.get((block[0], caps[0]), np.eye(1, caps[0] + 1)[0])
                        used = np.arange(len(q))[:, None]
                    granted[(block, caps)] = float(sum(
                        qi for u, qi in zip(used.tolist(), q, strict=True)
                        if all(ok for k, ok in zip(seq, _granted(caps, u, asks), strict=True)
                               if k in need)))
                p *= granted[(block, caps)]
            back += p / cells
        waits += x.rate * x.cells * (1.0 - back)
    return events, waits


def _lead(kinds: Sequence[Kind]) -> list[int]:
    """Per kind, the index of the failure that strikes it: its family in
    :func:`_families` (a kind and the kinds that follow it, :attr:`Kind.follows`, one
    failure), counted in the kinds' order."""
    return [f for f, family in enumerate(_families(kinds)) for _ in family]


def _asks(kinds: Sequence[Kind], ks: list[int], family: list[int] | None = None
          ) -> list[list[int]]:
    """``ks`` (kinds of one pool's slot, ascending) by the failure that strikes them: a
    kind and the kinds that follow it (:attr:`Kind.follows`), in the kinds' order, where
    they fail alike (rate, cells and hold); any other kind alone. ``family``:
    :func:`_lead` of ``kinds`` where the caller has it."""
    if family is None:
        family = _lead(kinds)
    out: dict = {}
    for k in ks:
        groups = out.setdefault(family[k], [])
        if groups and all(getattr(kinds[groups[0][0]], f) == getattr(kinds[k], f)
                          for f in ("rate", "cells", "hold")):
            groups[0].append(k)
        else:
            groups.append([k])
    return [a for groups in out.values() for a in groups]


#: Most states of one chain (:func:`_chain`: one pool's in :func:`_sequential`, the pools
#: asked together in :func:`_coupled_blocking`): a pool of 24 spares asked by 4 failure
#: kinds of 3 repair times, one asking twice, is 5,915 states, 0.3 s; two pools of 9
#: asked together and by kinds of 3 repair times 7,942, 1.5-2 s. Past it the chain with
#: one repair time (:func:`_chain`), and past that too the independent arrivals
#: (Kaufman-Roberts; the pools apart), an approximation.
MAX_SEQUENTIAL_STATES = 10_000
#: The closed form's fallbacks past :data:`MAX_SEQUENTIAL_STATES` (each an approximation),
#: as :attr:`Analytic.fallback` names them: the chain with every repair time taken as one;
#: a pool's asks taken as independent arrivals (Kaufman-Roberts); pools that one failure
#: asks together taken apart.
FALLBACK_ONE_HOLD = "one repair time"
FALLBACK_INDEPENDENT = "independent asks"
FALLBACK_APART = "pools taken apart"


def fallback_words(fallback: Iterable[str]) -> str:
    """What the closed form did past the spare chain's limit, named by ``fallback``
    (:attr:`Analytic.fallback`'s names), as availability's and compare's notes say it
    (the limit read from this module when called).

    >>> fallback_words([FALLBACK_ONE_HOLD])
    "passed the spare chain's limit (10,000 states) and fell back to one repair time"
    """
    return (f"passed the spare chain's limit ({counted(MAX_SEQUENTIAL_STATES, 'state')}) "
            f"and fell back to {', '.join(fallback)}")


def _sequential(cap: int, kinds: Sequence[Kind], alone: list[int], asks: list[list[int]],
                over: list, notes: set | None = None) -> dict | None:
    """Blocking of one pool's kinds where a failure asks it more than once (its own
    group's instances and a spanning instance's share, :attr:`Kind.joint`): each failure's
    asks (``asks``: lists of kind indices, in the kinds' order) granted as
    :func:`~netmodel.study.availability_kinds.best_grant` picks from the free spares (the
    set that restores the most), as the Monte Carlo grants them; ``alone``: kinds
    of group -1 (one ask each). A lone kind granted in part (:attr:`Kind.pieces` > 1) is
    its instances' asks, one each, the most that fit granted (best_grant's pick of alike
    asks): its blocking is the share of them refused, under ``"refused"`` the probability
    that ``r`` are, ``r = 0 .. pieces`` (instances taking different numbers of spares:
    one ask of all of them, granted as :attr:`Kind.steps` say, ``r`` the steps short,
    :func:`_short_of`). The pool is a Markov chain over the failures in progress
    and the spares each holds (exponential holds; exact where each failure's grant is one
    size, as in Kaufman-Roberts, else an approximation of the fixed holds), solved for its
    steady state; a kind's blocking is the share of arrivals (PASTA) whose ask finds too
    few spares: ``{kind index: blocking}``, and under ``"busy"`` the share of arrivals
    finding each number of spares busy; None past :data:`MAX_SEQUENTIAL_STATES` states.

    >>> k = Kind("host", "x", rate=1.0, down=2, slow=0.0, units=2, restored=0.0,
    ...          d_repair=1.0, d_swap=0.1, hold=1.0, d_slow=0.0, group=0)
    >>> from dataclasses import replace
    >>> ks = [k, replace(k, down=1, units=1, follows=True)]
    >>> b = _sequential(2, ks, [], [[0, 1]], [1, 1])   # 2 spares, then 1, of a pool of 2
    >>> round(b[0], 6), round(b[1], 6)                # Erlang B(1, 1); the 1 never fits
    (0.5, 1.0)
    """
    classes = [([k], kinds[k]) for k in alone] + [(a, kinds[a[0]]) for a in asks]
    vals = ask_values(kinds)

    def split(a):   # each ask's spares; a lone kind granted in part: one per instance
        if len(a) == 1 and kinds[a[0]].pieces > 1:
            x = kinds[a[0]]
            if x.each:   # as its steps say (Kind.granted), not a pick among its asks
                return a, None, x
            return [a[0]] * x.pieces, [x.grain] * x.pieces, [vals[a[0]] / x.pieces] * x.pieces
        return list(a), [kinds[k].units for k in a], [vals[k] for k in a]

    def rule(x):   # the spares a failure of x takes of ``free``
        return lambda free: x.steps[x.granted(free)][0]

    parts = [split(a) for a, _ in classes]
    chain = _chain((cap,), [(x.rate * x.cells / over[a[0]], x.hold,
                             rule(vs) if us is None else
                             [(0, u, v) for u, v in zip(us, vs, strict=True)])
                            for (a, x), (_, us, vs) in zip(classes, parts, strict=True)],
                   notes)
    if chain is None:
        return None
    busy, prob = chain
    p_busy = np.bincount(busy[:, 0], weights=prob, minlength=cap + 1)
    out: dict = {"busy": p_busy, "refused": {}}
    for owner, units, values in parts:
        if units is None:   # instances taking different numbers: by its steps
            (k,), x = owner, values
            r = _short_of(x, cap - np.arange(cap + 1))
            out[k] = float(p_busy @ (_refused_counts(x)[r] / x.pieces))
            out["refused"][k] = np.bincount(r, weights=p_busy, minlength=_top(x) + 1)
            continue
        refused = np.array([[not ok for ok in best_grant(tuple(units), tuple(values), cap - j)]
                            for j in range(cap + 1)], dtype=float)
        for k in dict.fromkeys(owner):   # the share of its instances refused
            cols = [j for j, o in enumerate(owner) if o == k]
            out[k] = float(p_busy @ refused[:, cols].mean(axis=1))
            if len(cols) > 1:
                count = refused[:, cols].sum(axis=1).round().astype(np.int64)
                out["refused"][k] = np.bincount(count, weights=p_busy,
                                                minlength=len(cols) + 1)
    return out


def _chain(caps: tuple, classes: list,
           notes: set | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Pools of ``caps`` spares asked by ``classes``: ``(rate, hold, asks)`` each, its
    failures at ``rate`` a second asking ``(pool, spares, restores)`` (each pool's asks
    granted as :func:`~netmodel.study.availability_kinds.best_grant` picks) and holding what
    they were granted for ``hold`` s (exponential). The Markov chain of the failures in
    progress by hold and the spares each holds, in its steady state: the spares busy in
    each pool (states x pools) and each state's probability, which an arrival sees
    (PASTA); None where a hold is 0.

    Past :data:`MAX_SEQUENTIAL_STATES` states, the chain with every hold taken as one,
    each class's offered load (rate x hold) kept: a state is then the spares each failure
    in progress holds, far fewer (the same values where each failure's grant is one size,
    the loss system being insensitive; else another approximation of the fixed holds,
    where the independent arrivals of the fallback below it missed every refusal of one
    failure's own asks; ``notes``, where given, gets :data:`FALLBACK_ONE_HOLD`); None past
    that limit too.

    Two kinds of one spare each, loads 1 and 0.5 x 3 Erlangs, on a pool of 2: Erlang
    B(2, 2.5) = 3.125 / 6.625 whatever the holds, so with one hold too:

    >>> busy, p = _chain_of((2,), [(1.0, 1.0, [(0, 1, 1.0)]), (0.5, 3.0, [(0, 1, 1.0)])])
    >>> len(p), round(float(p @ (busy[:, 0] == 2)), 12) == round(3.125 / 6.625, 12)
    (6, True)
    >>> busy, p = _chain_of((2,), [(1 / 3, 3.0, [(0, 1, 1.0)]), (0.5, 3.0, [(0, 1, 1.0)])])
    >>> len(p), round(float(p @ (busy[:, 0] == 2)), 12) == round(3.125 / 6.625, 12)
    (3, True)
    """
    if any(hold <= 0 for _, hold, _ in classes):
        return None
    out = _chain_of(caps, classes)
    if out is None and len({hold for _, hold, _ in classes}) > 1:
        one = max(hold for _, hold, _ in classes)
        out = _chain_of(caps, [(lam * hold / one, one, asks) for lam, hold, asks in classes])
        if out is not None and notes is not None:
            notes.add(FALLBACK_ONE_HOLD)
    return out


def _chain_of(caps: tuple, classes: list) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_chain`'s Markov chain as the classes give it; None past
    :data:`MAX_SEQUENTIAL_STATES` states."""
    m = len(caps)
    # a failure in progress is its hold and the spares it holds: those alike leave alike
    holds = sorted({hold for _, hold, _ in classes})
    hold_of = [holds.index(hold) for _, hold, _ in classes]
    start: tuple = ()
    index = {start: 0}
    states = [start]
    rows, cols, vals, busy = [], [], [], []

    def at(d: dict) -> int:   # the state's index, a new one where it is new
        key = tuple(sorted(d.items()))
        if key not in index:
            index[key] = len(states)
            states.append(key)
        return index[key]

    grants: dict = {}
    i = 0
    while i < len(states):
        st = states[i]
        used = [0] * m
        for (_, vec), n in st:
            for j, v in enumerate(vec):
                used[j] += v * n
        busy.append(used)
        for c, (lam, _, asks) in enumerate(classes):
            key = (c, *used)   # the grant hangs on the spares busy only
            vec = grants.get(key)
            if vec is None:   # asks: a list, or one pool's rule (free -> spares taken)
                vec = grants[key] = (asks(caps[0] - used[0]),) if callable(asks) \
                    else _grants(caps, used, asks)
            if any(vec) and lam > 0:
                d = dict(st)
                d[(hold_of[c], vec)] = d.get((hold_of[c], vec), 0) + 1
                rows.append(i)
                cols.append(at(d))
                vals.append(lam)
        for (h, vec), n in st:
            d = dict(st)
            d[(h, vec)] -= 1
            if not d[(h, vec)]:
                del d[(h, vec)]
            rows.append(i)
            cols.append(at(d))
            vals.append(n / holds[h])
        i += 1
        if len(states) > MAX_SEQUENTIAL_STATES:
            return None
    return np.array(busy, dtype=np.int64).reshape(-1, m), _steady_state(len(states), rows,
                                                                      cols, vals)


def _grants(caps, used, asks) -> tuple[int, ...]:
    """The spares one failure's ``asks`` ``(pool, spares, restores)`` are granted of each
    pool with ``used`` busy (:func:`_granted`)."""
    got = [0] * len(caps)
    for (pool, u, _), ok in zip(asks, _granted(caps, used, asks), strict=True):
        got[pool] += u if ok else 0
    return tuple(got)


def _steady_state(n: int, rows, cols, vals) -> np.ndarray:
    """The steady state of the Markov chain of ``n`` states (state 0 recurrent) with
    transition rates ``vals`` from ``rows`` to ``cols``: the balance equations of the
    other states with state 0's weight set to 1, then normalized."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.linalg import spsolve

    if n == 1:
        return np.ones(1)
    v = np.asarray(vals) / max(vals)
    out = np.bincount(rows, weights=v, minlength=n)   # each state's rate out
    qt = (coo_matrix((v, (cols, rows)), shape=(n, n))
          - coo_matrix((out, (range(n), range(n))), shape=(n, n))).tocsc()
    x = spsolve(qt[1:, 1:], -qt[1:, 0].toarray().ravel())
    pi = np.clip(np.r_[1.0, np.atleast_1d(x)], 0.0, None)
    return pi / pi.sum()


def _all_or_nothing(kinds: Sequence[Kind], b: np.ndarray) -> np.ndarray:
    """``b`` where a kind's instances span groups (the ``joint`` kinds after it ask the
    other groups' pools for their shares): blocked unless every pool has its share free,
    ``1 - (1 - b_0) prod (1 - b_j)``, the pools taken as independent (they are not: the
    same failures ask them all, so where nothing else does the truth is ``max b_j``; the
    product is the upper end). :func:`analytic` replaces it with the chain of the pools
    asked together (:func:`_coupled_blocking`) wherever that was solved; this is the
    fallback past its limit. The model's granted shares hold their spares even where
    another pool had none."""
    if not any(x.joint for x in kinds):
        return b
    out = b.copy()
    anchor = 0
    for k, x in enumerate(kinds):
        if not x.joint:
            anchor = k
        else:
            out[anchor] = 1.0 - (1.0 - out[anchor]) * (1.0 - b[k])
    return out


def _lost_rate(kinds, b, b_slow=None) -> np.ndarray:
    """Instance-seconds lost per second of operation, per kind; ``b_slow``: the share of
    the swapped slowed instances refused where it is not ``b`` (:func:`_refused_apart`)."""
    out = np.zeros(len(kinds))
    b_slow = b if b_slow is None else b_slow
    for k, x in enumerate(kinds):
        held = max(x.hold - x.d_swap, 0.0)
        sw = x.slow_swapped
        down = x.down_worth   # instances' worth (token-rate weighted)
        out[k] = x.rate * x.cells * (b[k] * down * x.d_repair
                           + (1 - b[k]) * (down * x.d_swap + x.restored * held)
                           + (x.slow - sw) * x.d_slow
                           + b_slow[k] * sw * x.d_slow
                           + (1 - b_slow[k]) * (sw * x.d_swap + x.slow_restored * held))
    return out


def _refused_apart(kinds, b, refused: dict):
    """The share refused of the down capacity and of the swapped slowed one, per kind:
    ``b`` (the share of instances refused) for both but where a failure granted in part
    downs some instances and swaps slowed others (:attr:`Kind.down_pieces`): its spares
    go to the down first (:meth:`Kind.backs`), so from the distribution of pieces refused
    (``refused``) the down are refused ``E[max(r - slowed, 0)] / down``, the slowed
    ``E[min(r, slowed)] / slowed``; and where its instances take different numbers of
    spares (:attr:`Kind.each`): the capacity its steps bring back (:meth:`Kind.backs`,
    each instance at its worth, not each counted as one)."""
    b_down, b_slow = b, b
    for k, dist in refused.items():
        x = kinds[k]
        if not x.down_pieces and not x.each:
            continue
        if b_down is b:
            b_down, b_slow = np.array(b, dtype=float), np.array(b, dtype=float)
        backs = [x.backs(_top(x) - r) for r in range(_top(x) + 1)]
        p = np.asarray(dist, dtype=float)
        b_down[k] = 1.0 - float(p @ np.array([d for d, _ in backs]))
        b_slow[k] = 1.0 - float(p @ np.array([v for _, v in backs]))
    return b_down, b_slow


def _streams(kinds, b, refused: dict | None = None) -> list[tuple[float, float]]:
    """The outages and slow-downs in progress as independent M/G/infinity streams: (mean
    number in progress, loss in instances of each) with both > 0; their sum of products is
    :func:`_lost_rate`'s total.

    One failure's losses are not independent of each other: its down instances, its
    slowed ones and, where kinds follow it (:attr:`Kind.follows`: one per group the
    failure touches), the other groups' all start at its moment. So each failure is one
    profile of loss over its age, as the Monte Carlo lays its intervals (:mod:`netmodel.
    study.availability_mc`): refused a spare, ``down`` until ``d_repair`` and ``slow``
    until ``d_slow``; granted, ``down + slow_swapped`` until ``d_swap``, ``restored +
    slow_restored`` from ``d_swap`` to ``hold`` and ``slow - slow_swapped`` until
    ``d_slow``; times the ``cells`` it strikes. The failures in progress whose age lies in
    one band between the profile's steps are a Poisson count of their own (the marking
    theorem), independent of the other bands', each losing the band's level: a stream per
    band, exact in the model where no spare is asked or every blocking is 0 or 1 (no
    spares). With spares each failure is refused or granted as its blocking says, apart
    from other failures (independent thinning, an approximation); the kinds of one failure
    with the same blocking are refused together, those with another apart from them. A
    failure granted in part (:attr:`Kind.per`, a failure of its own: no kind follows it;
    ``refused``: per such kind the probability that ``r`` of its instances find no spares,
    ``r = 0 .. pieces``; the steps short, :func:`_short_of`, where they take different
    numbers) is a stream per ``r``, what that step brings back on spares."""
    streams: list = []
    family: list = []
    refused = refused or {}
    for k, x in enumerate(kinds):
        if not x.follows and family:
            streams.extend(_family_streams(family))
            family = []
        if k in refused:   # granted in part: its own failure, a stream per count refused
            for r, p in enumerate(np.asarray(refused[k], dtype=float).tolist()):
                if p > 0:
                    streams.extend(_bands(x.rate * p, _profile(x, r == 0, r)))
            continue
        if not x.joint:   # a share of another kind's spares: it loses nothing itself
            family.append((x, float(b[k])))
    if family:
        streams.extend(_family_streams(family))
    return streams


#: Above this many distinct blockings strictly between 0 and 1 in one failure's kinds,
#: :func:`_family_streams` takes each blocking's kinds as a failure of its own.
MAX_JOINT_BLOCKINGS = 8


def _profile(x, granted: bool, short: int = 0) -> list[tuple[float, float, float]]:
    """``x``'s loss over a failure's age, ``(from, to, loss)``, refused or granted a spare
    (as the Monte Carlo's intervals; every cell it strikes); refused with ``short`` > 0
    steps short of the whole grant (a failure granted in part, :attr:`Kind.steps`: r of
    the ``"refused"`` distributions), what that step brings back on spares."""
    down, sw = x.down_worth, x.slow_swapped
    top = _top(x) if short else 0
    if not granted and short >= top:
        out = [(0.0, x.d_repair, down), (0.0, x.d_slow, x.slow)]
    elif granted:
        out = [(0.0, x.d_swap, down + sw), (x.d_swap, x.hold, x.restored + x.slow_restored),
               (0.0, x.d_slow, x.slow - sw)]
    elif x.down_pieces or x.each:   # the down back first, then the slowed (Kind.backs)
        kd, ks = x.backs(top - short)
        out = [(0.0, x.d_swap, kd * down + ks * sw), (0.0, x.d_repair, (1.0 - kd) * down),
               (x.d_swap, x.hold, kd * x.restored + ks * x.slow_restored),
               (0.0, x.d_slow, x.slow - ks * sw)]
    else:
        keep = 1.0 - short / x.pieces
        out = [(0.0, x.d_swap, keep * (down + sw)), (0.0, x.d_repair, (1.0 - keep) * down),
               (x.d_swap, x.hold, keep * (x.restored + x.slow_restored)),
               (0.0, x.d_slow, x.slow - keep * sw)]
    return [(a, z, loss * x.cells) for a, z, loss in out if z > a and loss > 0]


def _bands(rate: float, segments: list) -> list[tuple[float, float]]:
    """Streams of failures at ``rate`` a second whose loss over their age is the sum of
    ``segments``: one per band between steps where the loss is > 0."""
    steps = sorted({t for a, z, _ in segments for t in (a, z)})
    out = []
    for lo, hi in pairwise(steps):
        loss = sum(v for a, z, v in segments if a <= lo and z >= hi)
        if loss > 0 and rate * (hi - lo) > 0:
            out.append((rate * (hi - lo), loss))
    return out


def _family_streams(family: list) -> list[tuple[float, float]]:
    """:func:`_streams` for the kinds of one failure, ``(kind, blocking)`` each, each
    refused or granted whole: every combination of refused and granted over its distinct
    blockings (0 and 1 decide alone), at the failures' rate times that combination's
    probability."""
    rate = family[0][0].rate
    if any(x.rate != rate for x, _ in family):   # not struck together: each its own
        return [s for one in family for s in _family_streams([one])]
    by_b: dict = {}
    for x, bk in family:
        by_b.setdefault(bk, []).append(x)
    open_ = [bk for bk in by_b if 0.0 < bk < 1.0]
    if len(open_) > MAX_JOINT_BLOCKINGS:   # each blocking's kinds a failure of their own
        return [s for bk, xs in by_b.items()
                for s in _family_streams([(x, bk) for x in xs])]
    out = []
    for pick in range(1 << len(open_)):
        p = 1.0
        segments = []
        for bk, xs in by_b.items():
            if 0.0 < bk < 1.0:
                refused = bool(pick >> open_.index(bk) & 1)
                p *= bk if refused else 1.0 - bk
            else:
                refused = bk >= 1.0
            for x in xs:
                segments += _profile(x, not refused)
        if p > 0:
            out += _bands(rate * p, segments)
    return out


def _panjer(streams, step: float, top: int, split: bool = False) -> list[float]:
    """P(loss in progress = n x ``step``), n = 0..``top``, for the compound Poisson sum of
    ``streams`` (Panjer recursion; each loss rounded to whole steps, at least one; with
    ``split`` a loss between two steps is split between them, its rate shared so that its
    mean is kept, and one under a step goes to one step at the rate that keeps its mean)."""
    lam: dict = {}
    for m, loss in streams:
        x = loss / step
        if not split:
            parts = [(max(1, int(round(x))), m)]
        elif x < 1:
            parts = [(1, m * x)]
        else:
            j = int(math.floor(x))
            parts = [(j, m * (j + 1 - x)), (j + 1, m * (x - j))]
        for j, mj in parts:
            if mj > 0:
                lam[j] = lam.get(j, 0.0) + mj
    total = sum(lam.values()) if split else sum(m for m, _ in streams)
    terms = [(j, j * m) for j, m in lam.items()]
    p = [0.0] * (top + 1)   # plain floats: the recursion reads them one at a time
    p[0] = math.exp(-total)
    for n in range(1, top + 1):
        p[n] = sum(jm * p[n - j] for j, jm in terms if j <= n) / n
    return p


#: Lattice points of :func:`_saturation`'s recursion over the cluster's instances.
SATURATION_STEPS = 8192
#: Below this bound on the loss past the whole cluster (a share of its capacity),
#: :func:`_saturation` takes it as none: far under any figure the model prints.
SATURATION_NEGLIGIBLE = 1e-12


def _saturation(streams, instances: int) -> float:
    """``E[(X - instances)^+] / instances``: the share of the capacity by which the sum of
    the losses in progress ``X`` (compound Poisson, :func:`_streams`) runs past the whole
    cluster, which the additive mean counts and no cluster can lose. It is at most
    ``min over t > 0 of E[e^(t (X - I))] / (e t)`` (as ``y^+ <= e^(t y) / (e t)``; ``E[e^(tX)]
    = exp(sum m (e^(t x) - 1))``): below :data:`SATURATION_NEGLIGIBLE` of the capacity it is
    0 (the mean is then the additive one to the bit), else ``E[X] - E[min(X, I)]`` on a
    lattice of ``I / SATURATION_STEPS`` (Panjer; each loss split between its two lattice
    points so that ``E[X]`` is kept, and the mean is ``1 - E[min(X, I)] / I`` there).

    >>> round(_saturation([(2.0, 1.0)], 1), 6)   # N ~ Poisson(2) down: E[(N-1)+] = 1 + e^-2
    1.135335
    >>> _saturation([(1e-3, 1.0)] * 8, 8)       # 8 instances, 0.008 down on average
    0.0
    """
    if not streams:
        return 0.0
    top = max(x for _, x in streams)
    bound = math.inf   # log of the bound, over t = top^-1 x 2^-10 .. 2^9
    for e in range(-10, 10):
        t = 2.0 ** e / top
        bound = min(bound, sum(m * math.expm1(t * x) for m, x in streams) - t * instances
                    - 1.0 - math.log(t))
    if bound < math.log(SATURATION_NEGLIGIBLE * instances):
        return 0.0
    step = instances / SATURATION_STEPS
    p = _panjer(streams, step, SATURATION_STEPS, split=True)   # E[X] kept on the lattice
    below = sum(n * step * q for n, q in enumerate(p[:-1]))
    capped = below + instances * max(0.0, 1.0 - sum(p[:-1]))   # E[min(X, I)] on the lattice
    return max(0.0, sum(m * x for m, x in streams) - capped) / instances


#: A blocking within this of 0 or 1 decides alone (:func:`_threshold_low`).
DECIDED = 1e-9


def _outcomes(x: Kind, bk: float, limit: float) -> list[tuple[int, float]]:
    """The refusals of kind ``x`` that :func:`_threshold_low` counts: ``(r, loss)`` for
    each number ``r`` of its instances a failure can be refused (1 where its ask is all or
    nothing, :func:`_refused_counts` where it is granted in part) whose loss, ``r`` of its
    :attr:`Kind.pieces` of its down and slowed instances' worth over every cell it
    strikes, is no more than ``limit``: a refusal crossing alone is a single event, which
    the thinning counts at its rate. None where the kind asks no spares or its blocking
    is within :data:`DECIDED` of 0 or 1 (refused always or never: nothing to bunch)."""
    if x.units <= 0 or not DECIDED < bk < 1.0 - DECIDED:
        return []
    whole = (x.down_worth + x.slow) * x.cells
    counts = sorted(set(_refused_counts(x).tolist()) - {0}) if x.pieces > 1 else [1]
    return [(r, whole * r / max(x.pieces, 1)) for r in counts
            if whole * r / max(x.pieces, 1) <= limit]


#: Most refusals at once whose binomial moments :func:`_threshold_low` takes; past it
#: the bound counts any more as crossing (looser, never below the truth in its model).
MOST_MOMENTS = 8
#: Most pairs of terms one product of :func:`_missed`'s truncated generating functions
#: may walk (the terms: count vectors over the refusal types of total at most
#: :data:`MOST_MOMENTS`, C(types + 8, 8) of them; 5 types, 1,287 terms, 1.7 million
#: pairs, about a second a product). Past it the bound is not worked out and the reading
#: is flagged as one that may read low: 16,384 Lites of lite-flat with 2% global spares
#: (11 types, 75,582 terms, 5.7e9 pairs a product) ran for more than ten minutes.
MISSED_PAIRS = 4_000_000


def _pool_moments(kinds, lam, q: np.ndarray, types: list, top: int) -> dict:
    """``E[prod_t C(Y_t, c_t)]`` for every count vector ``c`` of at most ``top``, where
    ``Y_t`` is the refusals of type ``t`` (``types``: ``(arrive, d)`` pairs, ``arrive[j,
    j']`` the type's arrivals a second with ``j`` spares busy that leave ``j'`` busy, a
    failure refused in part taking what it is granted; each in progress ``d`` s,
    exponential) by one pool whose busy spares follow a birth-death chain with the
    steady state ``q`` (the closed form's own, :func:`_blocking`): a failure of kind
    ``k`` (``lam[k]`` a second at this pool) finding ``j`` busy takes :meth:`Kind.take`
    of the free spares, and each grant is undone at the rate that keeps ``q`` (detailed
    balance: the real chain's steady state, its dynamics approximated). Refusals of types
    ``t_1 .. t_m`` (oldest first) with gaps ``w_i`` between them and the last ``v`` s ago
    are all in progress with probability ``exp(-(s_1 w_1 + .. + s_(m-1) w_(m-1) + s_m
    v))``, ``s_i`` the sum of ``1 / d`` of the first ``i``, so the moment is the sum over
    the orders of ``q' A_t1 R(s_1) A_t2 R(s_2) .. A_tm 1 / s_m``, ``R(s) = (s I - Q)^-1``
    (``Q`` the chain's generator, ``A_t`` the type's ``arrive``), which one pass over the
    count vectors gives (``s_i`` hangs on the counts only). As a dict from count tuples.
    Independent thinning has ``prod_t E[Y_t]^c_t / c_t!``.

    One kind of one spare on a pool of 1 (Erlang, load 1): busy half the time, each
    failure then refused:

    >>> k = Kind("gpu", "x", 1.0, down=1, slow=0.0, units=1, restored=0.0,
    ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=0.0)
    >>> refused = np.array([[0.0, 0.0], [0.0, 1.0]])   # at 1 busy, stays 1 busy
    >>> mo = _pool_moments([k], [1.0], np.array([0.5, 0.5]), [(refused, 1.0)], 2)
    >>> # E[Y] = d lam B = 0.5; R(1) (0, 1) = (1/3, 2/3), so E[C(Y, 2)] = 0.5 x 2/3 / 2
    >>> {c: round(v, 6) for c, v in mo.items()}
    {(0,): 1.0, (1,): 0.5, (2,): 0.166667}
    """
    from scipy.linalg import lu_factor, lu_solve

    cap = len(q) - 1
    gen = np.zeros((cap + 1, cap + 1))
    for k, x in enumerate(kinds):
        if lam[k] <= 0 or x.units <= 0:
            continue
        for j in range(cap + 1):
            t = x.take(cap - j)
            if t > 0 and q[j] > 0 and q[j + t] > 0:
                gen[j, j + t] += lam[k]
                gen[j + t, j] += lam[k] * q[j] / q[j + t]
    gen -= np.diag(gen.sum(axis=1))
    zero = (0,) * len(types)
    out = {zero: 1.0}
    left = {zero: np.asarray(q, dtype=float)}   # the row vector before the next arrival
    lus: dict = {}
    for m in range(1, top + 1):
        nxt: dict = {}
        for c, row in left.items():
            for t, (arrive, _) in enumerate(types):
                cc = (*c[:t], c[t] + 1, *c[t + 1:])
                v = row @ arrive
                if not v.any():
                    continue
                nxt[cc] = nxt.get(cc, 0.0) + v
        left = {}
        for c, v in nxt.items():
            s = sum(n / d for n, (_, d) in zip(c, types, strict=True))
            out[c] = float(v.sum()) / s
            if m < top:
                key = round(s, 15)
                if key not in lus:
                    lus[key] = lu_factor((s * np.eye(cap + 1) - gen).T)
                left[c] = lu_solve(lus[key], v)
    return out


#: Most states of :func:`_held_moments`'s chain (the spares each failure in progress
#: holds, by the kind and the refusal it carries); past it :func:`_pool_moments`'s chain
#: of the busy count, which can read the bound low (see :func:`_held_moments`).
MAX_HELD_STATES = 4_000


def _held_moments(kinds, lam, cap: int, types: list, durations: list, top: int,
                  limit: int | None = None) -> dict | None:
    """:func:`_pool_moments` on the pool's chain of holdings: a state is the failures in
    progress that hold spares, each by its hold, what it took and the refusal type it
    carries, so that a grant is undone by its own failure's release (exponential holds,
    as :func:`_chain`'s), not at the busy count's average rate, and a failure granted in
    part carries its refused instances for as long as it holds its grant (in the model
    both last its repair; the pool's refusals bunch most in that case: a TP-1 DGX host
    refused 2 of its 8 instances on a pool of 6 takes every free spare and keeps them,
    and the GPU failures of that day are refused).

    ``types``: per refusal type its ``(kind, r)`` outcomes, ``durations`` its repair;
    ``lam[k]``: kind ``k``'s failures a second at this pool. A failure refused in whole
    (it takes nothing) is a timer of its type (in progress ``d`` s, exponential, its
    arrivals ``a_t`` a diagonal: the state stays); one that takes spares and is refused
    some carries the refusal in the state. With ``L_a`` the row over states after the
    timer arrivals ``a`` (:func:`_pool_moments`'s recursion: ``q' A_t1 R(s_1) .. A_tm
    R(s_m)``) and ``f_b(state)`` the product of ``C(carried_t, b_t)``, the moment of ``c``
    is ``sum over a + b = c of L_a f_b`` (Vandermonde: ``C(x + y, c) = sum C(x, a) C(y,
    c - a)``). None past ``limit`` states (:data:`MAX_HELD_STATES` where None).

    One kind of one spare on a pool of 2, as :func:`_pool_moments` by hand (1/22): the
    busy count is then the whole state.

    >>> k = Kind("gpu", "x", 1.0, down=1, slow=0.0, units=1, restored=0.0,
    ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=0.0)
    >>> mo = _held_moments([k], [1.0], 2, [[(0, 1)]], [1.0], 2)
    >>> round(mo[(1,)], 12) == 0.2, round(mo[(2,)], 12) == round(1 / 22, 12)
    (True, True)
    """
    from scipy.sparse import coo_matrix, identity
    from scipy.sparse.linalg import splu

    n_types = len(types)
    mark = {(k, r): t for t, outs in enumerate(types) for k, r in outs}
    alike: dict = {}   # kinds the pool tells apart by what they take and carry only
    for k, x in enumerate(kinds):
        if lam[k] <= 0 or x.units <= 0:
            continue
        frees = range(cap + 1)
        sig = (tuple(x.take(f) for f in frees),
               tuple(mark.get((k, x.refused(x.granted(f))), -1) for f in frees), x.hold)
        alike[sig] = alike.get(sig, 0.0) + lam[k]
    classes = [(rate, *sig) for sig, rate in alike.items()]
    index = {(): 0}
    states: list = [()]
    rows, cols, vals, busy = [], [], [], []
    timer = []   # per state: the timer arrivals a second of each type

    def at(d: dict) -> int:
        key = tuple(sorted(d.items()))
        if key not in index:
            index[key] = len(states)
            states.append(key)
        return index[key]

    i = 0
    while i < len(states):
        st = states[i]
        used = sum(t * n for (_, t, _), n in st)
        busy.append(used)
        here = [0.0] * n_types
        for rate, takes, marks, hold in classes:
            t, m = takes[cap - used], marks[cap - used]
            if t > 0:   # a grant: its release hangs on its hold only
                d = dict(st)
                d[(hold, t, m)] = d.get((hold, t, m), 0) + 1
                rows.append(i)
                cols.append(at(d))
                vals.append(rate)
            elif m >= 0:
                here[m] += rate
        timer.append(here)
        for (hold, t, m), n in st:
            d = dict(st)
            d[(hold, t, m)] -= 1
            if not d[(hold, t, m)]:
                del d[(hold, t, m)]
            rows.append(i)
            cols.append(at(d))
            vals.append(n / hold)
        i += 1
        if len(states) > (MAX_HELD_STATES if limit is None else limit):
            return None
    n = len(states)
    pi = _steady_state(n, rows, cols, vals)
    gen = coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    gen = (gen - coo_matrix((np.asarray(gen.sum(axis=1)).ravel(), (range(n), range(n))),
                            shape=(n, n))).T.tocsc()   # Q', for row vectors
    arrive = np.array(timer).reshape(n, n_types).T
    carried = np.zeros((n_types, n), dtype=np.int64)
    for j, st in enumerate(states):
        for (_, _, m), cnt in st:
            if m >= 0:
                carried[m, j] += cnt
    # f_b: the carried refusals' binomials, for each b some state carries
    most = int(carried.max(initial=0))
    binom = np.array([[math.comb(x, j) for j in range(top + 1)] for x in range(most + 1)],
                     dtype=float)   # C(x, j)
    fb: dict = {}
    for vec in {tuple(col) for col in carried.T.tolist()}:
        for b in np.ndindex(*(v + 1 for v in vec)):
            if sum(b) <= top and b not in fb:
                fb[b] = np.prod([binom[carried[t], bt] for t, bt in enumerate(b)], axis=0)
    zero = (0,) * n_types
    out: dict = {}

    def add(a, row):   # L_a f_b into the moment of a + b
        for b, f in fb.items():
            c = tuple(i + j for i, j in zip(a, b, strict=True))
            if sum(c) <= top:
                out[c] = out.get(c, 0.0) + float(row @ f)

    add(zero, pi)
    left = {zero: pi}
    lus: dict = {}
    for m in range(1, top + 1):
        nxt: dict = {}
        for c, row in left.items():
            for t in range(n_types):
                if not arrive[t].any():
                    continue
                v = row * arrive[t]
                if v.any():
                    cc = (*c[:t], c[t] + 1, *c[t + 1:])
                    nxt[cc] = nxt.get(cc, 0.0) + v
        left = {}
        for c, v in nxt.items():
            s = sum(k / d for k, d in zip(c, durations, strict=True))
            if m == top:   # only f_0 = 1 follows: L_a 1 = v 1 / s, no solve
                out[c] = out.get(c, 0.0) + float(v.sum()) / s
                continue
            key = round(s, 15)
            if key not in lus:
                lus[key] = splu((s * identity(n, format="csc") - gen).tocsc())
            left[c] = lus[key].solve(v)
            add(c, left[c])
    return out


def _threshold_low(kinds, b, limit: float, tail: float, pools: SparePools | None = None,
                   occupancy: dict | None = None) -> bool:
    """Whether the time below the threshold (``tail``, :func:`_compound_poisson_tail`)
    may read low by as much as it reads. The tail thins each failure's refusal apart from
    the others', but a pool a failure found busy stays busy for the next ones: refusals
    come together. That matters where it takes several refused failures at once to fall
    below (:func:`_outcomes`: the refusals that do not cross ``limit`` alone, typed by
    their loss and repair). Any moment below it with the refusals in progress ``Y_t`` of
    each type meets some least count vector ``c`` whose losses pass ``limit``, so
    ``P(cross) <= sum over those c of E[prod_t C(Y_t, c_t)]`` (Markov's inequality; past
    :data:`MOST_MOMENTS` refusals at once, ``P(sum Y >= MOST_MOMENTS + 1)`` bounds the
    rest), the moments as each pool's chain brings its refusals together
    (:func:`_held_moments`, the chain of its holdings; past its limit
    :func:`_pool_moments`, the busy count's, which can read low; pools apart independent,
    their generating functions multiplied; refusals of pools solved together,
    :func:`_coupled_blocking`, or with no ``occupancy``: Poisson). That bounds the time the thinning can miss; the flag is
    set where the bound reaches ``tail`` itself, so that unflagged the time below is at
    most about twice the reading (in the chain's model of the pool).

    On 256 H100 at TP 1 (GPU failures 1e-3 an hour, one-day repairs, 17 global spares) a
    refused GPU failure is one instance of 256 and 3 cross 99% (2.56): the former rule
    (two at once, Poisson ``R^2 / 2``, at least a tenth of the tail) was unmet at 4.8e-5
    against 6.0e-4, but a host holding 8 spares leaves 9 for the GPUs for a day, and their
    refusals come in bursts; the Monte Carlo reads 1.9e-3
    (tests/netmodel/test_threshold_low_bursts_h484.py).

    >>> k = Kind("host", "x", 0.1, down=2, slow=0.0, units=32, restored=0.0,
    ...          d_repair=1.0, d_swap=0.1, hold=1.0, d_slow=0.0, per=16)
    >>> # a host refused 1 of its 2 instances loses 1, both 2; below 1.5, two refusals of
    >>> # one cross; no pool's chain given: Poisson, R = 0.1 x 0.3 x 1, R^2 / 2 = 4.5e-4
    >>> _threshold_low([k], [0.3], 1.5, 4.5e-4), _threshold_low([k], [0.3], 1.5, 4.6e-4)
    (True, False)
    >>> _threshold_low([k], [0.3], 0.5, 1e-9), _threshold_low([k], [1.0], 1.5, 1e-9)
    (False, False)
    """
    bound = _missed(kinds, b, limit, pools, occupancy)
    return bool(bound > 0 and bound >= tail)


def _missed(kinds, b, limit: float, pools: SparePools | None = None,
            occupancy: dict | None = None) -> float:
    """:func:`_threshold_low`'s bound on the time below that two or more refusals at
    once, none crossing ``limit`` alone, keep the cluster below (0 where no refusal
    counts)."""
    types: dict = {}   # (loss, d) -> [(kind, r)]
    for k, (x, bk) in enumerate(zip(kinds, b, strict=True)):
        for r, loss in _outcomes(x, bk, limit):
            types.setdefault((loss, max(x.d_repair, x.d_slow)), []).append((k, r))
    if not types:
        return 0.0
    keys = sorted(types)
    top = MOST_MOMENTS
    if math.comb(len(keys) + top, top) ** 2 > MISSED_PAIRS:
        return math.inf   # estimated before the work: not worked out, flagged
    refused = {}   # (kind) -> P(r refused), r = 0 .. top: the closed form's own
    if occupancy is not None:
        refused = occupancy.get("refused", {})

    def share(k, r):   # P(a failure of k is refused r of its instances), thinned
        x = kinds[k]
        if x.pieces <= 1:
            return float(b[k])
        dist = refused.get(k)
        counts = _refused_counts(x)
        return float(sum(p for p, c in zip(dist, counts, strict=False) if c == r)) \
            if dist is not None else float(b[k])

    gf = {(0,) * len(keys): 1.0}

    def times(f, g):   # the product of two truncated generating functions
        out: dict = {}
        for c1, v1 in f.items():
            for c2, v2 in g.items():
                c = tuple(i + j for i, j in zip(c1, c2, strict=True))
                if sum(c) <= top:
                    out[c] = out.get(c, 0.0) + v1 * v2
        return out

    solved: set = set()
    if pools is not None and occupancy is not None:
        n_groups = pools.groups if any(x.group >= 0 for x in kinds) else 1
        over = [pools.pools if x.group < 0 else pools.pools // n_groups for x in kinds]
        joint = set(occupancy.get("comp", {}))
        sizes: dict = {}
        for p, c in enumerate(pools.reachable):
            sizes[(p % n_groups, c)] = sizes.get((p % n_groups, c), 0) + 1
        skipped = set()   # slots with a pool whose chain is not read here
        for (slot, cap), n in sizes.items():
            q = occupancy.get((slot, cap))
            if slot in joint or q is None or len(q) != cap + 1:
                skipped.add(slot)
                continue
            here = {k for k, x in enumerate(kinds) if x.group in (-1, slot)}
            lam = [kinds[k].rate * kinds[k].cells / over[k] if k in here else 0.0
                   for k in range(len(kinds))]
            mo = _held_moments(kinds, lam, cap, [types[key] for key in keys],
                               [key[1] for key in keys], top)
            if mo is None:   # past the holdings chain's limit: the busy count's chain
                rates = []
                for key in keys:
                    arrive = np.zeros((cap + 1, cap + 1))
                    for k, r in types[key]:
                        if k in here:
                            x = kinds[k]
                            for j in range(cap + 1):
                                if x.refused(x.granted(cap - j)) == r:
                                    arrive[j, j + x.take(cap - j)] += lam[k]
                    rates.append((arrive, key[1]))
                mo = _pool_moments(kinds, lam, np.asarray(q, dtype=float), rates, top)
            power, base = {(0,) * len(keys): 1.0}, mo   # mo ** n, by squaring
            while n:
                if n & 1:
                    power = times(power, base)
                base, n = times(base, base), n >> 1
            gf = times(gf, power)
        # a kind whose every pool was read (else all its refusals taken as Poisson; a
        # kind read in some pools and not others is then counted twice: larger, safe)
        solved = {k for k, x in enumerate(kinds)
                  if not (skipped & ({s for s, _ in sizes} if x.group < 0 else {x.group}))}
    # refusals no pool's chain accounts for: Poisson, E[C(Y_t, c)] = R_t^c / c!
    for t, key in enumerate(keys):
        rt = key[1] * sum(kinds[k].rate * kinds[k].cells * share(k, r)
                          for k, r in types[key] if k not in solved)
        if rt > 0:
            one = (0,) * len(keys)
            gf = times(gf, {(*one[:t], m, *one[t + 1:]): rt ** m / math.factorial(m)
                            for m in range(top + 1)})
    losses = [loss for loss, _ in keys]
    bound = 0.0
    longest = 0
    for c, v in gf.items():
        total = sum(n * loss for n, loss in zip(c, losses, strict=True))
        least = total > limit and all(total - loss <= limit
                                      for n, loss in zip(c, losses, strict=True) if n)
        if least:
            bound += v
        if total <= limit:
            longest = max(longest, sum(c))
    if longest >= top:   # least vectors past the moments taken: Y >= top + 1 covers them
        bound += sum(v for c, v in gf.items() if sum(c) == top) / (top + 1)
    return bound


def _crossings(x: Kind, bk: float, limit: float) -> list[tuple[int, float]]:
    """The refusals of kind ``x`` that cross ``limit`` alone: ``(r, d)`` for each number
    ``r`` of its instances a failure can be refused (as :func:`_outcomes` counts them)
    whose loss passes ``limit`` at once, ``d`` how long it stays past it (its down
    instances to their repair, its slowed ones to theirs); none where the kind asks no
    spares or its blocking is within :data:`DECIDED` of 0 or 1."""
    if x.units <= 0 or not DECIDED < bk < 1.0 - DECIDED:
        return []
    counts = sorted(set(_refused_counts(x).tolist()) - {0}) if x.pieces > 1 else [1]
    out = []
    for r in counts:
        share = x.cells * r / max(x.pieces, 1)
        segs = [(x.d_repair, x.down_worth * share), (x.d_slow, x.slow * share)]
        past = [end for end, _ in segs if end > 0
                and sum(v for e, v in segs if e >= end) > limit]
        if past:
            out.append((r, max(past)))
    return out


#: Most states of :func:`_crossing_overlap`'s chain of a pool (:func:`_held_moments`);
#: past it the pool's crossing refusals keep the thinning.
MAX_OVERLAP_STATES = 300


def _crossing_overlap(kinds, b, limit: float, pools: SparePools,
                      occupancy: dict) -> float:
    """The factor on the thinning's chance that no refusal crossing ``limit`` alone is
    in progress (:func:`_crossings`), as each pool's chain of holdings brings them
    together: ``P(Y = 0) / exp(-E[Y])`` over the pool's crossing refusals ``Y``, pools
    apart independent (a product over them). The thinning takes them as Poisson, so the
    time below counts each in full; but a refusal comes while the pool is held, and where
    the failure holding it is itself below (a host granted one of its two instances on
    all the spares, its other down), the refusal's outage overlaps that one's. In the
    chain (:func:`_held_moments`; a failure granted in part carries its refusal while it
    holds its grant, one refused in whole is a timer of its repair) ``P(Y = 0) = sum over
    c of (-1)^|c| E[prod_t C(Y_t, c_t)]`` (inclusion-exclusion over the binomial moments,
    to 2 at once, else to :data:`MOST_MOMENTS`); a pool whose chain passes
    :data:`MAX_OVERLAP_STATES`, whose series has not settled (the last order's terms past
    a hundredth of ``1 - P(Y = 0)``), or that is asked together with others
    (:func:`_coupled_blocking`) keeps the thinning (factor 1); so do the kinds of a
    failure of several kinds (:attr:`Kind.follows`). The time below is then ``1 - (1 -
    tail) x factor``.

    The holding failure's outage and the refusal's overlap by half where both last the
    repair: a GPU failure refused at a uniform moment of a host's one-day hold
    outlasts it by half a day on average, as an exponential refusal outlasts an
    exponential hold of the same mean by half its own."""
    types: dict = {}   # d -> [(kind, r)]
    lone = [not x.follows and not (k + 1 < len(kinds) and kinds[k + 1].follows)
            and not x.joint for k, x in enumerate(kinds)]
    for k, (x, bk) in enumerate(zip(kinds, b, strict=True)):
        if lone[k]:
            for r, d in _crossings(x, bk, limit):
                types.setdefault(d, []).append((k, r))
    if not types:
        return 1.0
    keys = sorted(types)
    n_groups = pools.groups if any(x.group >= 0 for x in kinds) else 1
    over = [pools.pools if x.group < 0 else pools.pools // n_groups for x in kinds]
    joint = set(occupancy.get("comp", {}))
    sizes: dict = {}
    for p, c in enumerate(pools.reachable):
        sizes[(p % n_groups, c)] = sizes.get((p % n_groups, c), 0) + 1
    log_factor = 0.0
    for (slot, cap), n in sizes.items():
        if slot in joint or cap <= 0:
            continue
        lam = [x.rate * x.cells / over[k] if x.group in (-1, slot) else 0.0
               for k, x in enumerate(kinds)]
        outs = [[(k, r) for k, r in types[d] if lam[k] > 0] for d in keys]
        if not any(outs):
            continue
        for top in (2, MOST_MOMENTS):   # most crossing refusals are rare: 2 at once
            mo = _held_moments(kinds, lam, int(cap), outs, keys, top, MAX_OVERLAP_STATES)
            if mo is None:
                break
            none = sum((-1) ** sum(c) * v for c, v in mo.items())
            last = sum(v for c, v in mo.items() if sum(c) == top)
            if 0.0 < none <= 1.0 and last <= 0.01 * (1.0 - none):
                mean = sum(v for c, v in mo.items() if sum(c) == 1)
                log_factor += n * (math.log(none) + mean)
                break
    return math.exp(log_factor)


def _compound_poisson_tail(kinds, b, limit: float, refused: dict | None = None) -> float:
    """P(capacity lost > ``limit`` instances) when the outages and slow-downs in progress
    are independent M/G/infinity streams: a compound Poisson sum (Panjer recursion on a
    lattice of ``limit / 256``; exact where every loss exceeds the limit)."""
    streams = _streams(kinds, b, refused)
    total = sum(m for m, _ in streams)
    if total == 0:
        return 0.0
    step = max(limit, 1e-12) / 256
    top = int(math.floor(limit / step + 1e-9))
    p = _panjer(streams, step, top)
    return float(min(1.0, max(0.0, 1.0 - np.array(p).sum())))


@dataclass(frozen=True)
class Analytic:
    """Closed-form results (see the module doc). ``mean``: time-average delivered share of
    capacity; ``below_threshold``: share of time below the threshold (exact in the model
    without spares; independent thinning with spares, the refusals crossing alone
    overlapping as each pool's chain of holdings says, :func:`_crossing_overlap`, an
    approximation that reads low where ``threshold_low`` says);
    ``instance_availability``: one instance's availability from independent components
    (no spares); ``blocking``: per kind; ``overlap``: instances' worth lost per instance
    summed over the outages in progress (1 - mean before the cap at the whole cluster):
    the additive model is a first-order one, trustworthy while it is small (the table
    warns above 5%). ``instance_down_events_per_year``: failures a year that take an
    instance down, one per failure and cell it strikes however many groups' instances it
    takes down; ``waits_for_repair_per_year``: those where one of them waits for its
    repair (:func:`_down_events`). ``lost_per_year``: per failure class, the seconds of the whole
    cluster's capacity it costs a year (capacity lost x time over the instances); the
    classes add up to ``(1 - mean)`` x a year. Where the cap cut the total (outages
    overlapping past the cluster) each class has the capped total's share its first-order
    loss has of the first-order total (which class fails more stays as it was, and none
    exceeds the total, so none a year); elsewhere, every shipped scenario, the
    first-order loss itself."""

    mean: float
    below_threshold: float
    instance_availability: float
    instance_down_events_per_year: float
    waits_for_repair_per_year: float
    lost_per_year: dict
    blocking: tuple
    exact_threshold: bool
    overlap: float = 0.0
    #: the fallbacks the blocking took past the chain's limit (:data:`FALLBACK_ONE_HOLD`,
    #: :data:`FALLBACK_INDEPENDENT`, :data:`FALLBACK_APART`; sorted), each an
    #: approximation; () where every pool's chain was solved whole or none was needed
    fallback: tuple = ()
    #: whether ``below_threshold`` may read low by as much as it reads
    #: (:func:`_threshold_low`): failures are refused spares some of the time, it takes
    #: more than one refused at once to fall below the threshold, and a bound on the time
    #: such refusals together keep it below, as the pool bunches them, reaches the reading;
    #: or the blocking took :data:`FALLBACK_INDEPENDENT`, whose independent asks never
    #: bunch refusals, so the bound cannot see them (512 H100 at TP 1 on 28 spares read
    #: 5.0e-5 against a Monte Carlo 4.2e-4)
    threshold_low: bool = False

    def to_dict(self) -> dict:
        """JSON-ready: Python floats and lists (``blocking`` and ``fallback`` lists)."""
        d = asdict(self)
        d["blocking"] = list(self.blocking)
        d["fallback"] = list(self.fallback)
        return d


def analytic(kinds: Sequence[Kind], pools: SparePools, instances: int, threshold: float = THRESHOLD,
             components: dict | None = None) -> Analytic:
    """The closed forms for ``kinds`` with spare ``pools`` over ``instances`` instances.
    ``components``: per kind index, components of that kind in the cluster (for the
    per-instance availability; default one per failure)."""
    raw, occupancy = _blocking(kinds, pools)
    b = _all_or_nothing(kinds, raw)
    for k, v in occupancy.get("exact", {}).items():   # pools asked together: exact
        b[k] = v
    # kinds granted in part: P(r refused); the down first where slowed ones are swapped
    refused = occupancy.get("refused", {})
    b_down, b_slow = _refused_apart(kinds, b, refused)
    lost = _lost_rate(kinds, b_down, b_slow)
    # the losses in progress add (first-order), but never past the whole cluster
    past = _saturation(_streams(kinds, b, refused), instances)
    raw = 1.0 - float(lost.sum()) / instances + past
    mean = min(1.0, max(0.0, raw))
    limit = (1.0 - threshold) * instances
    tail = _compound_poisson_tail(kinds, b, limit, refused) if limit >= 0 else 1.0
    if limit >= 0 and pools.reachable_total > 0:   # crossing refusals overlap
        tail = min(1.0, max(0.0, 1.0 - (1.0 - tail)
                            * _crossing_overlap(kinds, b, limit, pools, occupancy)))
    events, waits = _down_events(kinds, pools, b, occupancy)
    # one instance: the components that take it down, each an alternating renewal process
    log_a = 0.0
    for k, x in enumerate(kinds):
        if x.down <= 0:
            continue
        n_comp = (components or {}).get(k, None)
        per_instance_rate = x.rate * x.cells * x.down / instances
        d = b_down[k] * x.d_repair + (1 - b_down[k]) * x.d_swap
        if n_comp:
            lam = x.rate / n_comp
            log_a -= (per_instance_rate / lam) * math.log1p(lam * d)
        else:
            log_a -= per_instance_rate * d
    # each class's first-order loss; where the cap cut the total, each its share of it
    overlap = float(lost.sum()) / instances
    share = (1.0 - mean) / overlap if (past > 0 or mean != raw) and overlap > 0 else 1.0
    per_class: dict = {}
    for k, x in enumerate(kinds):
        per_class[x.cls] = per_class.get(x.cls, 0.0) + float(lost[k]) * YEAR / instances
    if share != 1.0:
        per_class = {cls: v * share for cls, v in per_class.items()}
    return Analytic(mean=mean, below_threshold=tail, instance_availability=math.exp(log_a),
                    instance_down_events_per_year=events * YEAR,
                    waits_for_repair_per_year=float(waits * YEAR),
                    lost_per_year=per_class, blocking=tuple(float(v) for v in b),
                    exact_threshold=pools.reachable_total == 0,
                    overlap=overlap, fallback=occupancy.get("fallback", ()),
                    threshold_low=pools.reachable_total > 0 and limit >= 0
                    and (FALLBACK_INDEPENDENT in occupancy.get("fallback", ())
                         or _threshold_low(kinds, b, limit, tail, pools, occupancy)))
