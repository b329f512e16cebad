"""The closed form's loss formulas apart from the spare pools' chains: a multi-rate loss
system's occupancy (Kaufman-Roberts), a spanning instance's blocking with its pools taken
as independent, the capacity lost per second, and the losses in progress as independent
M/G/infinity streams, their compound Poisson sum's tail (Panjer recursion) and the share of
it past the whole cluster.

Split from :mod:`netmodel.study.availability_analytic`, which uses them (the model and its
derivations: its docstring).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np

from compute.errors import UserError
from compute.validate import MAX_WHOLE, listed, number
from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_threshold import _top
from netmodel.study.reliability_fabric import MAX_GPUS

__all__ = ["kaufman_roberts"]


def _check_classes(capacity: object, loads: Iterable[float], units: Iterable[int]
                   ) -> tuple[int, tuple[float, ...], tuple[int, ...]]:
    """:func:`kaufman_roberts`'s arguments read once and checked: a generator was read
    up by the first occupancy and the rest taken as no class; NaN or a negative load, a
    negative capacity (IndexError), text and None went into the recursion."""
    where = "kaufman_roberts"
    cap = number(where, "capacity", capacity, minimum=0, maximum=MAX_GPUS, integer=True)
    a = tuple(number(where, "loads", x, minimum=0, maximum=MAX_WHOLE)
              for x in listed("loads", loads, "Erlangs"))
    u = tuple(number(where, "units", x, minimum=0, maximum=MAX_WHOLE, integer=True)
              for x in listed("units", units, "whole numbers of units"))
    if len(a) != len(u):
        raise UserError(f"{where}: loads and units must be as many (one of each a class), "
                        f"got {len(a)} and {len(u)}")
    return cap, a, u


def kaufman_roberts(capacity: int, loads: Iterable[float], units: Iterable[int]) -> np.ndarray:
    """Occupancy distribution ``q[j]`` (j busy units, 0..capacity) of a multi-rate loss
    system: classes offering ``loads`` Erlangs each of ``units`` servers.

    With one class of 1 unit it is Erlang's loss formula: blocking = q[capacity].

    >>> q = kaufman_roberts(2, [1.0], [1])
    >>> round(float(q[2]), 6)  # Erlang B(2, 1) = (1/2) / (1 + 1 + 1/2)
    0.2
    """
    capacity, loads, units = _check_classes(capacity, loads, units)
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


def _all_or_nothing(kinds: Sequence[Kind], b: np.ndarray) -> np.ndarray:
    """``b`` where a kind's instances span groups (the ``joint`` kinds after it ask the
    other groups' pools for their shares): blocked unless every pool has its share free,
    ``1 - (1 - b_0) prod (1 - b_j)``, the pools taken as independent (they are not: the
    same failures ask them all, so where nothing else does the truth is ``max b_j``; the
    product is the upper end). :func:`~netmodel.study.availability_analytic.analytic`
    replaces it with the chain of the pools asked together
    (:func:`~netmodel.study.availability_analytic._coupled_blocking`) wherever that was
    solved; this is the fallback past its limit. The model's granted shares hold their
    spares even where another pool had none."""
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
                           + (1 - b_slow[k]) * (sw * x.d_swap + x.slow_restored * held)
                           + x.restart * x.d_restart)
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
    ``d_slow``; and, either way, the slowed instances that restart first (NCCL has no
    link failover) what they still serve slowed (``restart``) until ``d_restart``; times
    the ``cells`` it strikes. The failures in progress whose age lies in
    one band between the profile's steps are a Poisson count of their own (the marking
    theorem), independent of the other bands', each losing the band's level: a stream per
    band, exact in the model where no spare is asked or every blocking is 0 or 1 (no
    spares). With spares each failure is refused or granted as its blocking says, apart
    from other failures (independent thinning, an approximation); the kinds of one failure
    with the same blocking are refused together, those with another apart from them. A
    failure granted in part (:attr:`Kind.per`, a failure of its own: no kind follows it;
    ``refused``: per such kind the probability that ``r`` of its instances find no spares,
    ``r = 0 .. pieces``; the steps short,
    :func:`~netmodel.study.availability_analytic._short_of`, where they take different
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
    # the slowed instances that restart first (Kind.restart) lose what they still serve
    # slowed for the restart, granted or refused alike
    out.append((0.0, x.d_restart, x.restart))
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
    least = min((j for j, _ in terms), default=top + 1)
    if least >= PANJER_BLOCK:
        return _panjer_blocks(terms, math.exp(-total), top, least)
    p = [0.0] * (top + 1)   # plain floats: the recursion reads them one at a time
    p[0] = math.exp(-total)
    for n in range(1, top + 1):
        s = 0.0   # added in the terms' order, as the blocks add them (not sum(): from
        for j, jm in terms:   # Python 3.12 it compensates its float sums)
            if j <= n:
                s += jm * p[n - j]
        p[n] = s / n
    return p


#: Least step of every loss from which :func:`_panjer` works its recursion out a block of
#: that many points at a time (:func:`_panjer_blocks`); below it, a point at a time.
PANJER_BLOCK = 16


def _panjer_blocks(terms: list, first: float, top: int, least: int) -> list[float]:
    """:func:`_panjer`'s recursion ``p[n] = sum over terms of jm p[n - j] / n`` (``terms``:
    its ``(j, j m)`` pairs, every ``j`` at least ``least``; ``p[0] = first``) a block of
    ``least`` points at a time: each point of a block reads only points before it, so a
    term adds to the whole block at once. The same floats as a point at a time: each
    point's products added in the terms' order from 0, one rounding each, then divided
    by ``n``.

    >>> terms = [(20, 20 * 0.5), (33, 33 * 0.25)]
    >>> p = [math.exp(-0.75)] + [0.0] * 100
    >>> for n in range(1, 101):
    ...     s = 0.0
    ...     for j, jm in terms:
    ...         if j <= n:
    ...             s += jm * p[n - j]
    ...     p[n] = s / n
    >>> _panjer_blocks(terms, math.exp(-0.75), 100, 20) == p
    True
    """
    p = np.zeros(top + 1)
    p[0] = first
    for lo in range(1, top + 1, least):
        hi = min(lo + least, top + 1)
        acc = np.zeros(hi - lo)
        for j, jm in terms:
            at = max(lo, j)   # the block's points n >= j
            if at < hi:
                acc[at - lo:] += jm * p[at - j:hi - j]
        p[lo:hi] = acc / np.arange(lo, hi)
    return p.tolist()


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
    # the spare search asks for the same losses at many pool sizes (a pool no failure
    # waits on leaves them as they were): study lite-gpu's 277 calls hold 69 distinct
    return _saturation_of(tuple((float(m), float(x)) for m, x in streams), instances,
                          SATURATION_STEPS, SATURATION_NEGLIGIBLE)


@functools.lru_cache(maxsize=4096)
def _saturation_of(streams: tuple, instances: float, steps: int, negligible: float
                   ) -> float:
    """:func:`_saturation` of ``streams`` (a tuple of ``(rate, loss)`` floats, the cache's
    key with the lattice's ``steps`` and the ``negligible`` share)."""
    top = max(x for _, x in streams)
    bound = math.inf   # log of the bound, over t = top^-1 x 2^-10 .. 2^9
    for e in range(-10, 10):
        t = 2.0 ** e / top
        bound = min(bound, sum(m * math.expm1(t * x) for m, x in streams) - t * instances
                    - 1.0 - math.log(t))
    if bound < math.log(negligible * instances):
        return 0.0
    step = instances / steps
    p = _panjer(streams, step, steps, split=True)   # E[X] kept on the lattice
    below = sum(n * step * q for n, q in enumerate(p[:-1]))
    capped = below + instances * max(0.0, 1.0 - sum(p[:-1]))   # E[min(X, I)] on the lattice
    return max(0.0, sum(m * x for m, x in streams) - capped) / instances


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
