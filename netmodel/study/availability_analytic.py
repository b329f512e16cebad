"""The availability model in closed form: a multi-rate loss system per spare pool
(Kaufman-Roberts), the capacity lost per second, and the tail of the capacity in progress.

**Analytic** (:func:`analytic`): the same model in closed form. Mean capacity lost per
second is ``sum_k rate_k [B_k (down_k d_repair + sw_k d_slow) + (1 - B_k)((down_k + sw_k)
d_swap + (restored_k + sr_k)(hold_k - d_swap)) + (slow_k - sw_k) d_slow + rs_k d_restart]``
(``sw``, ``sr``, ``rs``: ``slow_swapped``, ``slow_restored``, ``restart``: what the slowed
instances that restart first, NCCL having no link failover, still serve slowed), with ``B_k`` the share of a failure of kind
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
:mod:`netmodel.study.availability_mc`; the bound behind ``threshold_low``, the crossing
refusals' overlap and the pool moments they read: :mod:`netmodel.study.
availability_threshold`; the loss formulas apart from
the pools' chains (Kaufman-Roberts, the capacity lost per second, the streams in progress,
Panjer's recursion, the saturation): :mod:`netmodel.study.availability_loss`; the pools'
chains of the spares busy, their limits and fallbacks (Kaufman-Roberts' recursion over the
spares busy past them): :mod:`netmodel.study.availability_busy`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from itertools import pairwise

import numpy as np

from netmodel.study.availability_busy import (
    FALLBACK_APART,
    FALLBACK_INDEPENDENT,
    _busy_recursion,
    _chain,
    _granted,
)
from netmodel.study.availability_kinds import THRESHOLD, Kind, ask_values, best_grant
from netmodel.study.availability_loss import (
    _all_or_nothing,
    _compound_poisson_tail,
    _lost_rate,
    _profile,
    _refused_apart,
    _saturation,
    _streams,
    kaufman_roberts,
)
from netmodel.study.availability_threshold import (
    DECIDED,
    _crossing_overlap,
    _crossings,
    _lone,
    _pool_slots,
    _refused_counts,
    _threshold_low,
    _top,
)
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.reliability_spares import SparePools

__all__ = ["Analytic", "ClosedForms", "analytic", "blocking", "kaufman_roberts"]


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
    chain (each instance one ask); past the chain's limit by Kaufman-Roberts' recursion
    over the spares busy with each failure's grant one ask of its size
    (:func:`_busy_recursion`, an approximation). Under
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
        if seq is not None:
            occupancy[(slot, cap)] = seq.pop("busy")
            dist.update(seq.pop("refused"))
            for k, v in seq.items():
                b[k] = v
        elif elig:   # one size of grant each: Kaufman-Roberts (a kind granted in part
            # or a failure asking more than once is chained: _sequential, past its limit
            # _busy_recursion)
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


def _short_of(x: Kind, free: np.ndarray) -> np.ndarray:
    """The steps short of the whole grant (``r``, the index of the ``"refused"``
    distributions: 0 all back, :func:`_top` none) of a failure of ``x`` finding each of
    ``free`` spares free (:meth:`Kind.granted`)."""
    if not x.each:
        return x.pieces - np.minimum(x.pieces, free // x.grain)
    return _top(x) - np.array([x.granted(int(f)) for f in free], dtype=np.int64)


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
    finding each number of spares busy; None past
    :data:`~netmodel.study.availability_busy.MAX_SEQUENTIAL_STATES` states.

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
    if chain is not None:
        busy, prob = chain
        p_busy = np.bincount(busy[:, 0], weights=prob, minlength=cap + 1)
    else:   # past the chain's limit: each failure's grant one ask of its size
        if notes is not None:
            notes.add(FALLBACK_INDEPENDENT)

        def taken(us, vs, free):   # the spares its asks are granted of ``free``
            if us is None:
                return int(rule(vs)(free))
            return sum(u for u, ok in zip(us, best_grant(tuple(us), tuple(vs), free),
                                          strict=True) if ok)

        p_busy = _busy_recursion(cap, [
            (x.rate * x.cells / over[a[0]] * x.hold,
             [taken(us, vs, cap - j) for j in range(cap + 1)])
            for (a, x), (_, us, vs) in zip(classes, parts, strict=True)])
    out: dict = {"busy": p_busy, "refused": {}}
    for owner, units, values in parts:
        if units is None:   # instances taking different numbers: by its steps
            (k,), x = owner, values
            r = _short_of(x, cap - np.arange(cap + 1))
            out[k] = float(p_busy @ (_refused_counts(x)[r] / x.pieces))
            out["refused"][k] = np.bincount(r, weights=p_busy, minlength=_top(x) + 1)
            continue
        asked = tuple(units), tuple(values)
        refused = np.array([[not ok for ok in best_grant(*asked, cap - j)]
                            for j in range(cap + 1)], dtype=float)
        for k in dict.fromkeys(owner):   # the share of its instances refused
            cols = [j for j, o in enumerate(owner) if o == k]
            out[k] = float(p_busy @ refused[:, cols].mean(axis=1))
            if len(cols) > 1:
                count = refused[:, cols].sum(axis=1).round().astype(np.int64)
                out["refused"][k] = np.bincount(count, weights=p_busy,
                                                minlength=len(cols) + 1)
    return out


def _unread_crossings(kinds: Sequence[Kind], b, limit: float, pools: SparePools,
                      occupancy: dict) -> list[str]:
    """Why some refusals that cross ``limit`` keep :func:`_crossing_overlap`'s thinning
    where no pool's chain reads them: ``"pools asked together"`` where a kind of its own
    failures (:func:`~netmodel.study.availability_threshold._lone`) drawing on a slot
    solved together with others (:func:`_coupled_blocking`; its own, or any where it
    spreads over every pool) has crossing refusals (:func:`_crossings`), ``"a failure of
    several kinds"`` where some failure of several kinds crosses for longer refused than
    granted:
    its kinds with a blocking strictly between :data:`DECIDED` and 1 minus it all refused
    against all granted, the others as their blocking decides, its losses added over its
    age as the thinning's streams add them
    (:func:`_profile`; a ``joint`` kind loses nothing itself, its refusal is its lead's).

    >>> from dataclasses import replace
    >>> k = Kind("host", "x", 1.0, down=2, slow=0.0, units=2, restored=0.0,
    ...          d_repair=10.0, d_swap=1.0, hold=10.0, d_slow=0.0)
    >>> two, pool = [k, replace(k, follows=True)], SparePools("global", 2, 1, (2,))
    >>> # refused, 4 instances down for 10 s, granted for 1: past 3.5 longer refused
    >>> _unread_crossings(two, [0.5, 0.5], 3.5, pool, {})
    ['a failure of several kinds']
    >>> _unread_crossings(two, [0.5, 0.5], 4.5, pool, {})   # never past
    []
    >>> # a lone kind whose slot 0 is solved with slot 1: its pools asked together
    >>> _unread_crossings([k], [0.5], 1.5, pool, {"comp": {0: (0, 1), 1: (0, 1)}})
    ['pools asked together']
    """
    lone = _lone(kinds)
    joint = _pool_slots(kinds, pools, occupancy)[1]
    why = []
    if joint and any(lone[k] and (x.group < 0 or x.group in joint)
                     and _crossings(x, b[k], limit) for k, x in enumerate(kinds)):
        why.append("pools asked together")

    def past(family, refuse: bool) -> float:   # seconds of its age past the limit
        segs = [seg for x, bk, free in family
                for seg in _profile(x, not ((free and refuse) or bk >= 1.0 - DECIDED))]
        steps = sorted({t for lo, hi, _ in segs for t in (lo, hi)})
        return sum(hi - lo for lo, hi in pairwise(steps)
                   if sum(v for a, z, v in segs if a <= lo and z >= hi) > limit)

    for fam in _families(kinds):
        if len(fam) < 2:
            continue
        family = [(kinds[k], float(b[k]), kinds[k].units > 0
                   and DECIDED < float(b[k]) < 1.0 - DECIDED)
                  for k in fam if not kinds[k].joint]
        if any(free for *_, free in family) and past(family, True) > past(family, False):
            why.append("a failure of several kinds")
            break
    return why


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
    #: the fallbacks the blocking took past the chain's limit
    #: (:data:`~netmodel.study.availability_busy.FALLBACK_ONE_HOLD`,
    #: :data:`~netmodel.study.availability_busy.FALLBACK_ONE_HOLD_TOGETHER`,
    #: :data:`FALLBACK_INDEPENDENT`, :data:`FALLBACK_APART`; sorted), each an
    #: approximation; () where every pool's chain was solved whole or none was needed
    fallback: tuple = ()
    #: whether ``below_threshold`` may read low by as much as it reads
    #: (:func:`_threshold_low`): failures are refused spares some of the time, it takes
    #: more than one refused at once to fall below the threshold, and a bound on the time
    #: such refusals together keep it below, as the pool bunches them, reaches the reading;
    #: or the blocking took :data:`FALLBACK_INDEPENDENT`, whose recursion keeps the spares
    #: busy but not who holds them, so the bound cannot see how refusals bunch (512 H100 at
    #: TP 1 on 28 spares, when independent asks of one spare were the fallback, read 5.0e-5
    #: against a Monte Carlo 4.2e-4)
    threshold_low: bool = False
    #: whether some refusals crossing the threshold alone kept the thinning (Poisson,
    #: each outage counted whole) rather than a pool's chain of holdings
    #: (:func:`_crossing_overlap`): a pool past
    #: :data:`~netmodel.study.availability_threshold.MAX_OVERLAP_STATES`, its solve or its
    #: series unsettled, pools asked together with others, or a failure of several kinds
    #: whose refusal crosses: ``below_threshold`` may then read high, by up to
    #: about a third where refusals bunch (hand-made clusters against the Monte Carlo:
    #: 4-30%)
    overlap_thinned: bool = False

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
    return ClosedForms(kinds, pools, instances, threshold).result(components)


class ClosedForms:
    """:func:`analytic`'s figures for ``kinds`` with spare ``pools`` over ``instances``
    instances, each worked out when first read, the same floats as :func:`analytic`'s:
    the pools' blocking and its :attr:`fallback` at once; :attr:`mean`,
    :attr:`below_threshold` and :attr:`threshold_low` when read; the rest by
    :meth:`result`. The spare search reads the time below of every pool it tries and the
    flag of the one it accepts
    (:func:`~netmodel.study.reliability_summary.reliability_summary`), the spare curve
    the mean and the time below (:func:`~netmodel.study.availability.spare_curve`): the
    flag's bound (:func:`_threshold_low`: chains of holdings of their own) was a seventh
    of ``study lite-gpu``'s closed forms, the saturation another fifth."""

    def __init__(self, kinds: Sequence[Kind], pools: SparePools, instances: int,
                 threshold: float = THRESHOLD) -> None:
        self.kinds, self.pools, self.instances = kinds, pools, instances
        raw, occupancy = _blocking(kinds, pools)
        b = _all_or_nothing(kinds, raw)
        for k, v in occupancy.get("exact", {}).items():   # pools asked together: exact
            b[k] = v
        self.b, self.occupancy = b, occupancy
        #: the fallbacks the blocking took past the chain's limit (:attr:`Analytic.fallback`)
        self.fallback = occupancy.get("fallback", ())
        self.limit = (1.0 - threshold) * instances

    @cached_property
    def _lost(self) -> tuple:
        """``(refused, b_down, b_slow, lost)``: per kind granted in part, P(r refused);
        the shares refused of its down and slowed capacity; each kind's loss a second."""
        # kinds granted in part: P(r refused); the down first where slowed ones are swapped
        refused = self.occupancy.get("refused", {})
        b_down, b_slow = _refused_apart(self.kinds, self.b, refused)
        return refused, b_down, b_slow, _lost_rate(self.kinds, b_down, b_slow)

    @cached_property
    def _mean(self) -> tuple[float, float, float]:
        """``(mean, raw, past)``: the mean capacity, before its clip to [0, 1], and the
        share of it the losses in progress run past the whole cluster."""
        refused, _, _, lost = self._lost
        # the losses in progress add (first-order), but never past the whole cluster
        past = _saturation(_streams(self.kinds, self.b, refused), self.instances)
        raw = 1.0 - float(lost.sum()) / self.instances + past
        return min(1.0, max(0.0, raw)), raw, past

    @property
    def mean(self) -> float:
        """:attr:`Analytic.mean`."""
        return self._mean[0]

    @cached_property
    def _tail(self) -> tuple[float, list]:
        """``(below_threshold, thinned)``: the time below and why pools' crossing
        refusals kept the thinning."""
        kinds, b, limit, pools = self.kinds, self.b, self.limit, self.pools
        refused = self._lost[0]
        tail = _compound_poisson_tail(kinds, b, limit, refused) if limit >= 0 else 1.0
        thinned: list = []   # pools whose crossing refusals kept the thinning
        if limit >= 0 and pools.reachable_total > 0:   # crossing refusals overlap
            thinned += _unread_crossings(kinds, b, limit, pools, self.occupancy)
            tail = min(1.0, max(0.0, 1.0 - (1.0 - tail)
                                * _crossing_overlap(kinds, b, limit, pools, self.occupancy,
                                                    thinned)))
        return tail, thinned

    @property
    def below_threshold(self) -> float:
        """:attr:`Analytic.below_threshold`."""
        return self._tail[0]

    @cached_property
    def threshold_low(self) -> bool:
        """:attr:`Analytic.threshold_low`."""
        return self.pools.reachable_total > 0 and self.limit >= 0 \
            and (FALLBACK_INDEPENDENT in self.fallback
                 or _threshold_low(self.kinds, self.b, self.limit, self.below_threshold,
                                   self.pools, self.occupancy))

    def result(self, components: dict | None = None) -> Analytic:
        """Every figure (:func:`analytic`; ``components`` as it takes them)."""
        kinds, pools, instances, b = self.kinds, self.pools, self.instances, self.b
        _, b_down, _, lost = self._lost
        mean, raw, past = self._mean
        tail, thinned = self._tail
        events, waits = _down_events(kinds, pools, b, self.occupancy)
        # one instance: the components that take it down, each an alternating renewal
        # process
        log_a = 0.0
        for k, x in enumerate(kinds):
            if x.restarted > 0:   # a slowed instance's restart takes it down too
                log_a -= x.rate * x.cells * x.restarted / instances * x.d_restart
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
                        overlap=overlap, fallback=self.fallback,
                        threshold_low=self.threshold_low, overlap_thinned=bool(thinned))
