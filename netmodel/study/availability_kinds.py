"""The event kinds of the availability model: per symmetry class of a cluster's components,
how often it fails, what each failure takes down, slows and asks of the spares, and for how
long; with the default capacity threshold the model is read against.

**Events.** Every symmetry class of components (:mod:`netmodel.study.blast_radius`) is an
event kind: a Poisson process at ``parts x rate x cells`` failures per second (exponential
lifetimes), each failure taking down ``instances_down`` instances and slowing others by
``slow`` instances' worth (a shared part at ``parts x rate x copies``, its copies in the
cluster, :meth:`Cluster.copies <netmodel.study.reliability_cluster.Cluster.copies>`: a
switch once per set of cells, a link between switches at the cells' share of it; each
failure touching every cell of its set at once, :attr:`Kind.cells`) (slowed, or
re-balanced to the largest batch that still meets
the SLO). Without a spare the instances are down for detection + repair + reload +
warm-up; the slow-down lasts detection + repair, after a restart where the failure took
a link of the slowed instance (NCCL has no link failover: the instance is out for the
span of a swap, losing what it still serves slowed, :attr:`Kind.restart`; where a
repair ends before the restart, the slowed share is charged to the repair only, the
restart's share to its end). With a spare (placement and
path from :mod:`netmodel.study.reliability_spares`) the instances are down only for the
swap (detection + reconfiguration + reload + warm-up), then lose ``restored`` instances'
worth while the spares stand in; the slowed instances that spares serve faster
(:func:`~netmodel.study.reliability_recovery.failure_recovery`: the operator's better choice,
which the blast-radius table's recovery column says too)
lose ``slow_swapped`` until the swap, then ``slow_restored`` (the rest of ``slow`` lasts
until the repair either way); the spares are held until the repair (detection +
repair) returns the failed part to the pool. A failure that finds too few free spares in
its pool (a loss system) brings back as many whole instances as they hold, the down ones
before the slowed it would swap (:meth:`Kind.backs`), and the rest wait for its repair
(:attr:`Kind.per`; where its instances take different numbers of spares, the set that
restores the most capacity: :attr:`Kind.steps`; all or nothing where it asks several
pools). Failures are spread evenly
over the pools; with ``group`` spares each group of a cell is its own pool and a failure
asks its own group's (:func:`~netmodel.study.reliability_recovery.by_group`). A failure that
strikes several groups' instances is a kind per group, the later ones ``follows`` (struck
by the same failures, each asking its own group's pool and waiting for its repair where
that is empty); an instance spanning groups asks each group's pool for that group's share
of its spares, the other groups' shares ``joint`` kinds, and comes back only if every
share is granted.

Capacity is counted in instances' worth of tokens/s: each instance at its own healthy
rate over the cell's mean (:attr:`Cluster.weights
<netmodel.study.reliability_cluster.Cluster.weights>`; one each where all serve alike),
so a down instance that straddles two leaves (a smaller healthy batch) is less than one
(``Kind.down_worth``; ``down`` stays the count of instances).

The model's closed forms are :mod:`netmodel.study.availability_analytic`'s, its Monte Carlo
:mod:`netmodel.study.availability_mc`'s, both over these kinds; a scenario's run is
:mod:`netmodel.study.availability`'s.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from itertools import accumulate, product

import numpy as np

from compute.errors import UserError
from compute.validate import describe, is_finite
from netmodel.study.reliability_cluster import YEAR, Cluster
from netmodel.study.reliability_recovery import by_group, failure_recovery
from netmodel.study.reliability_spares import check_placement
from netmodel.study.reliability_timings import recovery_times

__all__ = ["QUANTILE", "THRESHOLD", "Kind", "ask_values", "best_grant", "check_quantile",
           "check_threshold", "event_kinds"]

#: Default capacity threshold and the share of time it must be met (each a share in (0, 1]:
#: :func:`check_threshold`, :func:`check_quantile`).
THRESHOLD, QUANTILE = 0.99, 0.999


def check_threshold(threshold) -> float:
    """The capacity threshold as a float, a share in (0, 1]; else one line naming it.

    >>> check_threshold(0.99)
    0.99
    >>> check_threshold(float("nan"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: capacity threshold must be a share in (0, 1], got nan
    """
    if not (is_finite(threshold) and 0 < threshold <= 1):
        raise UserError(f"capacity threshold must be a share in (0, 1], got "
                        f"{describe(threshold)}")
    return float(threshold)


def check_quantile(quantile) -> float:
    """The share of the time a pool keeps the capacity at or above the threshold, a float
    in (0, 1]; else one line naming it (nan was taken once: no pool needed, 0 spares).

    >>> check_quantile(1)
    1.0
    """
    if not (is_finite(quantile) and 0 < quantile <= 1):
        raise UserError(f"quantile (the share of the time at or above the threshold) must be "
                        f"a share in (0, 1], got {describe(quantile)}")
    return float(quantile)


@dataclass(frozen=True)
class Kind:
    """One event kind of the cluster (see the module doc; times in seconds, ``rate`` in
    failures per second over the whole cluster, ``units`` -1 where spares cannot help).

    ``cells``: cells one failure touches at the same moment, each losing ``down``,
    ``slow``, ``restored`` and asking ``units`` spares of its own pool (1 for a cell's own
    part; a shared part's failure touches every cell of its set). ``sets``, ``first``: a
    shared part's failures fall evenly on ``sets`` sets of ``cells`` cells, the first
    starting at cell ``first`` (``sets`` 0: a cell's own part, on a cell drawn evenly)."""

    cls: str
    example: str
    rate: float
    down: int
    slow: float
    units: int
    restored: float
    d_repair: float
    d_swap: float
    hold: float
    d_slow: float
    path: str = ""
    slow_swapped: float = 0.0
    slow_restored: float = 0.0
    cells: int = 1
    sets: int = 0
    first: int = 0
    #: ``group`` placement: the group (pool ``g`` of each cell) whose spares its failures
    #: draw on; -1: spread evenly over the pools
    group: int = -1
    #: the down instances' capacity in instances' worth (each at its healthy tokens/s over
    #: the cell's mean: ``Cluster.weights``); -1: ``down`` (every instance alike)
    worth: float = -1.0
    #: struck by the same failures as the kind before it (one failure touching several
    #: groups' instances: a kind per group, each asking its own group's pool; the rate is
    #: each one's own, the failures drawn once for them all)
    follows: bool = False
    #: spares the instances of the nearest kind before it that is not ``joint`` take of
    #: this kind's group (an instance spanning groups): it loses nothing itself, and those
    #: instances come back on spares only if its pool has them free too (all or nothing;
    #: spares it was granted are held to the repair even where another pool had none).
    #: One failure's asks of one pool (a group's own kind and a spanning instance's share
    #: of that group) are granted as :func:`best_grant` picks: those that restore the most
    joint: bool = False
    #: spares each instance's recovery takes where every instance the failure takes down
    #: or swaps takes as many (``units`` of them in all): a failure finding fewer free
    #: than ``units`` brings ``floor(free / per)`` instances back on spares and the rest
    #: wait for the repair, as an operator would (:attr:`grain`); 0: all or nothing (one
    #: instance, or asks of several pools) or the instances take different numbers, or
    #: as many but differ in worth (:attr:`each`)
    per: int = 0
    #: where the instances take different numbers of spares or differ in worth (``per``
    #: 0): the spares each takes, the down instances first, then the slowed ones it swaps, each fewest first
    #: (the free spares go to them as :attr:`steps` says); () otherwise
    each: tuple = ()
    #: with :attr:`each`: what each of those instances loses while it waits, in
    #: instances' worth (a down one its weight, ``Cluster.weights``; a slowed one its loss
    #: x its weight), in ``each``'s order: what a grant restores (:attr:`steps`) and the
    #: share of the down and slowed capacity back (:meth:`backs`); (): the down alike
    #: (``down_worth / down`` each), the slowed alike (``slow_swapped`` shared evenly)
    worths: tuple = ()
    #: the capacity the slowed instances that restart first still serve slowed, in
    #: instances' worth (each ``(1 - share lost) x weight``: what the restart takes on
    #: top of ``slow``), lost from the failure for :attr:`d_restart`
    #: (:func:`~netmodel.study.reliability_recovery.restarts`: NCCL has no link failover;
    #: swapped or not: a swapped one's restart is its swap); ``restarted``: how many
    restart: float = 0.0
    restarted: int = 0
    d_restart: float = 0.0

    @property
    def grain(self) -> int:
        """The spares one grant of this kind's ask comes in: :attr:`per` where the ask
        can be granted in part, the fewest one instance takes where they differ
        (:attr:`each`), else all of ``units``."""
        if self.each:
            return min(self.each)
        return self.per if 0 < self.per < self.units else self.units

    @property
    def pieces(self) -> int:
        """Instances the ask brings back one by one (``units / grain``, or those of
        :attr:`each`; 1: all or nothing)."""
        if self.each:
            return len(self.each)
        return self.units // self.grain if self.units > 0 else 1

    @property
    def down_pieces(self) -> int:
        """Of :attr:`pieces`, those of the down instances where the ask also swaps slowed
        ones (a failure that downs some instances and slows others); 0 where its pieces
        are all alike (all down, or all slowed, every one taking :attr:`per`)."""
        if self.pieces <= 1 or self.slow_swapped <= 0 or not 0 < self.down < self.pieces:
            return 0
        return self.down

    @property
    def steps(self) -> tuple[tuple[int, int, int], ...]:
        """What a failure short of spares gets back, as its free spares grow: ``(spares
        taken, down instances back, slowed instances swapped)`` per step, from nothing
        (step 0) to the whole ask (the last, :attr:`pieces` back), the spares taken rising
        step by step; a failure finding ``free`` spares is at :meth:`granted`'s step.
        Where every instance takes :attr:`per`, the down instances first (a slowed one
        still serves), then the slowed: step ``g`` is ``g`` of the pieces. Where they take
        different numbers (:attr:`each`), the free spares go to the instances that restore
        the most capacity (:func:`_grants`: each instance's :attr:`worths` over the time a
        grant saves it, as :attr:`saved` counts it), as an operator short of spares brings
        back the most serving capacity; where that ties, the more down instances back,
        then the fewer spares taken. With every down instance alike, that is the fewest
        spares first (the most instances back). The closed form and the Monte Carlo both
        read it.

        >>> k = Kind("host", "x", 1.0, down=2, slow=1.0, units=21, restored=0.0,
        ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=1.0, slow_swapped=1.0,
        ...          each=(3, 16, 1, 1))
        >>> k.steps   # 2 free: both slowed (the 3 does not fit); 3: the first down
        ((0, 0, 0), (1, 0, 1), (2, 0, 2), (3, 1, 0), (4, 1, 1), (5, 1, 2), (19, 2, 0), (20, 2, 1), (21, 2, 2))
        >>> k.granted(18), k.backs(5), k.refused(5)
        (5, (0.5, 1.0), 1)
        >>> # a down instance on 5 spares against five slowed by half on 1 each: 5 free
        >>> # swap the five (2.5 instances' worth back), not the down one (1)
        >>> k = Kind("host", "x", 1.0, down=1, slow=2.5, units=10, restored=0.0,
        ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=1.0, slow_swapped=2.5,
        ...          each=(5, 1, 1, 1, 1, 1))
        >>> k.steps[k.granted(5)], k.steps[k.granted(9)]
        ((5, 0, 5), (9, 1, 4))
        """
        if self.each:
            return self._grants[0]
        return _steps((self.grain,) * self.pieces, self.down_pieces)

    @property
    def _grants(self) -> tuple:
        """:func:`_grants` of this kind (:attr:`each`): the steps and their shares back."""
        held = max(self.hold - self.d_swap, 0.0)
        n_down = min(self.down, len(self.each))
        down_w = self.down_worth
        c_down = max(self.d_repair - self.d_swap, 0.0) - (
            self.restored / down_w * held if down_w > 0 else 0.0)
        c_slow = max(self.d_slow - self.d_swap, 0.0) - (
            self.slow_restored / self.slow_swapped * held if self.slow_swapped > 0 else 0.0)
        worths = self.worths
        if not worths:   # alike: the down share the down worth, the slowed the swapped
            n_slow = len(self.each) - n_down
            worths = (*((down_w / n_down,) * n_down if n_down else ()),
                      *((self.slow_swapped / n_slow,) * n_slow if n_slow else ()))
        return _grants(tuple(self.each), tuple(float(w) for w in worths), n_down,
                       float(c_down), float(c_slow))

    def granted(self, free: int) -> int:
        """The step of :attr:`steps` a failure finding ``free`` spares free reaches (the
        last whose spares fit)."""
        if not self.each:
            return min(self.pieces, max(free, 0) // self.grain)
        return bisect_right(self.steps, free, key=lambda step: step[0]) - 1

    def take(self, free: int) -> int:
        """The spares a failure finding ``free`` spares free takes (at :meth:`granted`'s
        step; all of ``units`` where they fit, 0 where not even one instance's do)."""
        if not self.each:
            return self.granted(free) * self.grain
        return self.steps[self.granted(free)][0]

    def refused(self, step: int) -> int:
        """Instances refused spares at ``step`` of :attr:`steps`."""
        if not self.each:
            return self.pieces - step
        _, d, s = self.steps[step]
        return self.pieces - d - s

    def backs(self, granted: int) -> tuple[float, float]:
        """The share of the down instances and of the swapped slowed ones back on spares
        at step ``granted`` of :attr:`steps` (where every instance takes :attr:`per`,
        ``granted`` of the :attr:`pieces`): the spares go to the down instances first (a
        slowed instance still serves), then to the slowed. Alike pieces (all down or all
        slowed): each the share of the pieces back (``granted / pieces``).

        >>> k = Kind("host", "x", 1.0, down=2, slow=1.0, units=32, restored=0.0,
        ...          d_repair=1.0, d_swap=0.0, hold=1.0, d_slow=1.0, slow_swapped=1.0,
        ...          per=8)
        >>> k.pieces, k.down_pieces, k.backs(1), k.backs(3)
        (4, 2, (0.5, 0.0), (1.0, 0.5))
        """
        if self.each:   # the capacity back, each instance at its worth (Kind.worths)
            kd, ks = self._grants[1][granted]
            nd = self.down if self.down < self.pieces and self.slow_swapped > 0 else 0
            if not nd:
                return (kd if self.down else ks,) * 2
            return kd, ks
        d = self.down_pieces
        if not d:
            return (granted / self.pieces,) * 2
        return min(granted, d) / d, max(granted - d, 0) / (self.pieces - d)

    @property
    def whole(self) -> Kind:
        """This kind with its ask all or nothing (no :attr:`per`, no :attr:`each`)."""
        return replace(self, per=0, each=(), worths=())

    @property
    def down_worth(self) -> float:
        """Capacity the down instances hold, in instances' worth (``down`` where every
        instance serves alike)."""
        return self.down if self.worth < 0 else self.worth

    @property
    def saved(self) -> float:
        """Capacity (instances' worth x seconds, in each cell) a granted ask restores over
        a refused one: the refused loss less the granted (:func:`~netmodel.study.
        availability_analytic.analytic`'s terms), at least 0."""
        held = max(self.hold - self.d_swap, 0.0)
        return max(0.0, self.down_worth * (self.d_repair - self.d_swap) - self.restored * held
                   + self.slow_swapped * (self.d_slow - self.d_swap)
                   - self.slow_restored * held)

    def to_dict(self) -> dict:
        """The kind as JSON: ``units`` null where spares cannot help (the -1 sentinel is
        internal, not a count); ``cells``, ``sets``, ``first`` only for a shared part's."""
        d = asdict(self)
        if self.units < 0:
            d["units"] = None
        if not self.sets:
            for k in ("cells", "sets", "first"):
                del d[k]
        if self.group < 0:
            del d["group"]
        if self.worth < 0:
            del d["worth"]
        if not self.follows:
            del d["follows"]
        if not self.joint:
            del d["joint"]
        if self.pieces <= 1 or self.each:
            del d["per"]
        if self.each:
            d["each"] = list(self.each)
            d["worths"] = list(self.worths)
        else:
            del d["each"], d["worths"]
        d["rate_per_year"] = self.rate * YEAR
        return d


@lru_cache(maxsize=1024)
def _steps(order: tuple, n_down: int) -> tuple:
    """:attr:`Kind.steps` of instances taking ``order`` spares each (the first ``n_down``
    down, the rest slowed; each fewest first): with ``free`` spares the down take theirs
    as far as the spares reach (``d`` of them, their prefix sum at most ``free``), then
    the slowed from what is left (``s``), so ``(d, s)`` holds from the spares it takes up
    to, not including, where the next down instance fits. The order is made here, so a
    kind's ``each`` in any order is granted alike (the rule in one place).

    >>> _steps((5, 3, 2), 2) == _steps((3, 5, 2), 2)
    True
    """
    down = [0, *accumulate(sorted(order[:n_down]))]
    slow = [0, *accumulate(sorted(order[n_down:]))]
    return tuple((a + b, d, s) for d, a in enumerate(down) for s, b in enumerate(slow)
                 if d == n_down or a + b < down[d + 1])


#: Most ways to grant one failure's instances :func:`_grants` enumerates (the product
#: over its kinds of instance of their counts + 1); past it, the same best grant at each
#: count of spares by a knapsack over the spares (:func:`_knapsack`).
MAX_GRANTS = 1 << 14


@lru_cache(maxsize=1024)
def _grants(order: tuple, worths: tuple, n_down: int, c_down: float, c_slow: float
            ) -> tuple:
    """``(steps, shares)``: :attr:`Kind.steps` of instances taking ``order`` spares each
    (the first ``n_down`` down, the rest slowed) and losing ``worths`` each while they
    wait, and per step the share of the down instances' worth and of the slowed ones'
    back. With ``free`` spares the grant is the set of instances that fits and restores
    the most, an instance restoring its worth x ``c_down`` (down) or ``c_slow``
    (slowed): the capacity-seconds a grant saves per instances' worth
    (:attr:`Kind.saved`, what the spares cost shared in proportion to worth); on a tie
    the more down instances, then the fewer spares. Instances alike (the same spares,
    worth and state) are counted, not told apart. Steps are the grants as ``free``
    rises, each taking more spares and restoring more than the one before, or as much
    with more down instances back (the best set for ``free`` is the last step that fits
    it; one down on 5 spares and five slowed by half on 1 each: 5 free the five, 8 free
    the down one and three slowed, 2.5 instances' worth either way).

    >>> steps, shares = _grants((4, 8), (0.5, 1.0), 2, 1.0, 1.0)
    >>> steps, shares   # 8 free: the instance of 8 (worth 1), not the one of 4 (0.5)
    (((0, 0, 0), (4, 1, 0), (8, 1, 0), (12, 2, 0)), ((0.0, 0.0), (0.3333333333333333, 0.0), (0.6666666666666666, 0.0), (1.0, 0.0)))
    """
    kinds: dict = {}
    for i, (u, w) in enumerate(zip(order, worths, strict=True)):
        key = (u, w, i < n_down)
        kinds[key] = kinds.get(key, 0) + 1
    types = list(kinds.items())
    total_down = sum(w for w in worths[:n_down])
    total_slow = sum(w for w in worths[n_down:])
    combos = 1
    for _, n in types:
        combos *= n + 1
    # what all would restore, as a magnitude: a value's sign kept (an instance whose
    # grant costs more than it saves is not granted, not the most of them)
    scale = sum(abs(w * (c_down if dn else c_slow)) * n for (_, w, dn), n in types) or 1.0
    if combos > MAX_GRANTS:
        return _knapsack(types, scale, c_down, c_slow, total_down, total_slow)
    rows = []
    for pick in product(*(range(n + 1) for _, n in types)):
        cost = sum(k * u for k, ((u, _, _), _) in zip(pick, types, strict=True))
        value = sum(k * w * (c_down if dn else c_slow)
                    for k, ((_, w, dn), _) in zip(pick, types, strict=True))
        d = sum(k for k, ((_, _, dn), _) in zip(pick, types, strict=True) if dn)
        s = sum(k for k, ((_, _, dn), _) in zip(pick, types, strict=True) if not dn)
        wd = sum(k * w for k, ((_, w, dn), _) in zip(pick, types, strict=True) if dn)
        ws = sum(k * w for k, ((_, w, dn), _) in zip(pick, types, strict=True) if not dn)
        rows.append((cost, round(value / scale, 9), d, s, wd, ws))
    rows.sort(key=lambda r: (r[0], -r[1], -r[2]))   # stable: the enumeration's order
    steps, shares, best = [], [], None
    for cost, value, d, s, wd, ws in rows:
        if best is None or (value, d) > best:
            best = (value, d)
            steps.append((cost, d, s))
            shares.append((wd / total_down if total_down else 0.0,
                           ws / total_slow if total_slow else 0.0))
    return tuple(steps), tuple(shares)


def _knapsack(types: list, scale: float, c_down: float, c_slow: float, total_down: float,
              total_slow: float) -> tuple:
    """:func:`_grants`' steps and shares past :data:`MAX_GRANTS` ways: the same best grant
    at each count of spares (the most restored, then the more down instances), by a
    bounded knapsack over the spares taken (numpy over the costs, a pass per instance:
    ``O(spares x instances)``), the frontier read as the enumeration reads it. Where two
    grants of one cost restore the same with as many down, the one kept may differ from
    the enumeration's (the same value back).

    >>> types = [((1, 1.0, False), 2), ((2, 3.0, False), 1)]
    >>> _knapsack(types, 5.0, 1.0, 1.0, 0.0, 5.0)[0]   # 2 free: the one of 2 (3), not two of 1 (2)
    ((0, 0, 0), (1, 0, 1), (2, 0, 1), (3, 0, 2), (4, 0, 3))
    """
    top = sum(u * n for (u, _, _), n in types)
    val = np.full(top + 1, -np.inf)
    val[0] = 0.0
    d = np.zeros(top + 1, dtype=np.int64)
    s = np.zeros(top + 1, dtype=np.int64)
    wd = np.zeros(top + 1)
    ws = np.zeros(top + 1)
    for (u, w, dn), n in types:
        gain = w * (c_down if dn else c_slow)
        cur = (val.copy(), d.copy(), s.copy(), wd.copy(), ws.copy())
        for k in range(1, n + 1):
            shift = k * u
            if shift > top:
                break
            cv = cur[0][:-shift] + k * gain
            cd = cur[1][:-shift] + (k if dn else 0)
            better = np.round(cv / scale, 9) > np.round(val[shift:] / scale, 9)
            better |= ((np.round(cv / scale, 9) == np.round(val[shift:] / scale, 9))
                       & (cd > d[shift:]))
            better &= np.isfinite(cv)
            idx = np.nonzero(better)[0]
            val[shift + idx] = cv[idx]
            d[shift + idx] = cd[idx]
            s[shift + idx] = cur[2][idx] + (0 if dn else k)
            wd[shift + idx] = cur[3][idx] + (k * w if dn else 0.0)
            ws[shift + idx] = cur[4][idx] + (0.0 if dn else k * w)
    steps, shares, best = [], [], None
    for cost in range(top + 1):
        if not np.isfinite(val[cost]):
            continue
        key = (round(float(val[cost]) / scale, 9), int(d[cost]))
        if best is None or key > best:
            best = key
            steps.append((cost, int(d[cost]), int(s[cost])))
            shares.append((float(wd[cost]) / total_down if total_down else 0.0,
                           float(ws[cost]) / total_slow if total_slow else 0.0))
    return tuple(steps), tuple(shares)


def ask_values(kinds: Sequence[Kind]) -> list[float]:
    """Per kind, what granting its ask restores (:attr:`Kind.saved`); a ``joint`` kind
    (a spanning instance's share of another group's pool) the instance's, its anchor's."""
    out: list = []
    for x in kinds:
        out.append(out[-1] if x.joint and out else x.saved)
    return out


#: Relative difference under which two grants restore the same (:func:`best_grant`).
TIE = 1e-9
#: Most asks of one pool by one failure that :func:`best_grant` weighs as sets (2^n of
#: them; only asks that could fit the free spares count); past it, each in turn from what
#: the ones before left, in the kinds' order.
MAX_BEST_ASKS = 12


@lru_cache(maxsize=4096)
def best_grant(units: tuple[int, ...], values: tuple[float, ...],
               free: int) -> tuple[bool, ...]:
    """Which of one failure's asks of one pool (``units`` spares each, restoring
    ``values``, in the kinds' order) are granted from ``free`` spares: the set that fits
    and restores the most (each ask all or nothing), as a scheduler restores what it can;
    where sets restore the same (within :data:`TIE`), the one granting the earliest
    asks (the kinds' order). Every ask where all fit. The closed form and the Monte Carlo
    both grant by it. Past :data:`MAX_BEST_ASKS` asks that could fit, each in turn.

    >>> best_grant((2, 1), (1.0, 1.5), 2), best_grant((2, 1), (2.0, 1.0), 2)
    ((False, True), (True, False))
    >>> best_grant((2, 1), (1.0, 1.0), 2), best_grant((2, 1), (1.0, 1.0), 3)
    ((True, False), (True, True))
    """
    if sum(u for u in units if u > 0) <= free:
        return tuple(u >= 0 for u in units)
    if len(set(units)) == 1 and len(set(values)) == 1 and units[0] > 0:
        # asks alike (one instance each of a failure granted in part): the most that fit,
        # the earliest first (the pick of the sets below, without weighing 2^n of them)
        return tuple(i < free // units[0] for i in range(len(units)))
    # an ask that cannot fit (-1, or more than is free) is in no set that fits: left out
    # of the count too, so the pick is the same whoever hands them in (the Monte Carlo
    # drops asks past its pool's spares, the closed form does not)
    cand = [i for i, u in enumerate(units) if 0 <= u <= free]
    out = [False] * len(units)
    if len(cand) > MAX_BEST_ASKS:
        for i in cand:
            out[i] = units[i] <= free
            free -= units[i] if out[i] else 0
        return tuple(out)
    best: list = []   # (value, grants) of the sets that fit
    for pick in product((True, False), repeat=len(cand)):   # earliest asks first
        if sum(units[i] for i, p in zip(cand, pick, strict=True) if p) <= free:
            best.append((sum(values[i] for i, p in zip(cand, pick, strict=True) if p), pick))
    top = max(v for v, _ in best)
    for i, p in zip(cand, next(p for v, p in best if v >= top - TIE * abs(top)), strict=True):
        out[i] = p
    return tuple(out)


def event_kinds(cluster: Cluster, placement: str = "pod",
                classes: Iterable[str] | None = None) -> tuple[Kind, ...]:
    """The event kinds of ``cluster`` with spares of ``placement`` (kinds that change no
    capacity are left out)."""
    placement = check_placement(placement)
    # kept on the cluster (frozen; another catalog is another cluster): the spare search
    # and the sensitivity ask for the same kinds many times
    memo = cluster.__dict__.setdefault("_event_kinds", {})
    classes = None if classes is None else tuple(classes)
    hit = memo.get((placement, classes))
    if hit is None:
        hit = memo[placement, classes] = _event_kinds(cluster, placement, classes)
    return hit


def _event_kinds(cluster: Cluster, placement: str, classes) -> tuple[Kind, ...]:
    rates = cluster.rates
    out: list = []
    for e0 in cluster.effects(classes):
        if e0.parts * rates[e0.cls] <= 0 or (e0.instances_down == 0 and e0.slow <= 0):
            continue
        # group spares: each group is its own pool, its components judged by their own
        # group's spares (by_group); else the class as one
        family: list = []
        for group, e, parts, follows, shares in (
                by_group(cluster, e0) if placement == "group"
                else ((-1, e0, e0.parts, False, None),)):
            if not follows:
                out.extend(_together(family))
                family = []
            ks = _kinds(cluster, e, parts, placement, group)
            if group < 0 and placement == "group":   # spread over every group's pools:
                ks = [k.whole for k in ks]   # all or nothing, as the chains
            family.append(_shared_out(ks, shares))
        out.extend(_together(family))
    return tuple(out)


def _shared_out(kinds: list[Kind], shares) -> list[list[Kind]]:
    """Per set size, the kind and, where its instances span groups (``shares``: the spares
    their recovery takes of each group, :func:`~netmodel.study.reliability_spares.
    by_group`), its share of the first group's pool and a ``joint`` kind for each other
    group's (asking that pool for its share, losing nothing itself)."""
    if not shares or kinds[0].units <= 0:
        return [[k] for k in kinds]
    (g0, u0), rest = shares[0], shares[1:]
    none = {"down": 0, "slow": 0.0, "restored": 0.0, "slow_swapped": 0.0,
            "slow_restored": 0.0, "restart": 0.0, "restarted": 0}
    return [[replace(k.whole, group=g0, units=u0),
             *(replace(k.whole, group=g, units=u, follows=True, joint=True,
                       worth=-1.0 if k.worth < 0 else 0.0, **none) for g, u in rest)]
            for k in kinds]


def _together(family: list) -> list[Kind]:
    """The kinds of one failure split by group (:func:`~netmodel.study.reliability_spares.
    by_group`: per group, per set size, its kinds: alike but for the group's share), side
    by side: each set size's kinds of the first group, then the same of every other group,
    every one but the first marked ``follows`` (struck by the same failures)."""
    out = [k if (j, i) == (0, 0) else replace(k, follows=True)
           for same in zip(*family, strict=True) for j, ks in enumerate(same)
           for i, k in enumerate(ks)]
    # one failure asking several pools (or one pool several times): each ask all or
    # nothing (Kind.per), as best_grant and the chains of several asks take them
    return out if len(family) <= 1 and all(len(ks) <= 1 for f in family for ks in f) \
        else [k.whole for k in out]


def _unlike(worths: list) -> bool:
    """Whether instances' worths differ past rounding (a relative 1e-9)."""
    return bool(worths) and max(worths) - min(worths) > 1e-9 * max(map(abs, worths))


def _kinds(cluster: Cluster, e, parts: float, placement: str, group: int) -> list[Kind]:
    rates = cluster.rates
    per_set = cluster.cells_per_shared_part
    out = []
    rate = parts * rates[e.cls] * cluster.copies(e)
    # a shared part: one failure of each set's copy touches every cell of the set at
    # once (the full sets, then the last one part-filled as its own kind); the copies
    # each run of sets holds: a switch one a set, a link the run's cells' share of it
    # (Cluster.copies)
    full, rest = divmod(cluster.cells, per_set)
    shared = per_set > 1 and bool(getattr(e.component, "shared", False))
    groups = ([(per_set, full, 0)] if full else []) + (
        [(rest, 1, full * per_set)] if rest else []) if shared else [(1, 0, 0)]
    # the down instances' recovery and the operator's choice for the slowed ones (no
    # swap for the slowed where the down wait: spares cannot help), as the blast-radius
    # table says it
    fr = failure_recovery(cluster, e, placement)
    rec, sw = fr.down, fr.slow
    units = -1 if fr.units is None else int(fr.units)
    swapped, kept = sw.swapped, sw.restored
    # what each instance's recovery takes (Kind.per): one size for all, else (Kind.each)
    # the down instances' then the swapped slowed ones', each fewest first
    each = list(rec.each) if units > 0 and e.instances_down else []
    slowed = list(sw.each)
    slowed_worths = list(sw.worths)
    together = each + slowed
    fits = len(together) > 1 and min(together) > 0 and sum(together) == units \
        and len(each) in (0, e.instances_down)
    per = together[0] if fits and len(set(together)) == 1 else 0
    # each instance with what it loses waiting (Kind.worths): a down one its weight, a
    # slowed one its loss x weight; the down then the slowed, each fewest spares first
    downs = sorted(zip(each, [cluster.weights[i] for i in e.down] if each else [],
                       strict=True), key=lambda p: p[0])
    slows = sorted(zip(slowed, slowed_worths, strict=True), key=lambda p: p[0])
    if per and (_unlike([w for _, w in downs]) or _unlike([w for _, w in slows])):
        # as many spares each but unlike in worth: granted by capacity too (Kind.each),
        # not the first down then the first slowed, counted as instances
        per = 0
    apart = tuple(u for u, _ in (*downs, *slows)) if fits and not per else ()
    worths = tuple(w for _, w in (*downs, *slows)) if apart else ()
    # capacity in instances' worth, each instance at its own healthy tokens/s (straddling
    # or randomly placed instances serve less); the counts themselves where all are alike
    alike = len(set(cluster.weights)) <= 1
    worth = -1.0 if alike else cluster.worth(e.down)
    slow = e.slow if alike else cluster.worth(slowed=e.slowed)
    rt = recovery_times(cluster)
    # the slowed instances a failure takes a link of restart first (NCCL has no failover),
    # each losing what it still serves slowed for the restart
    rs = fr.restarts
    restart = float(sum((1.0 - share) * cluster.weights[i] for i, share in rs))
    for cells, sets, first in groups:
        out.append(Kind(cls=e.cls, example=e.example,
                        rate=parts * rates[e.cls] * cluster.copies(e, cells * sets)
                        if sets else rate,
                        down=e.instances_down, slow=slow, units=units,
                        restored=rec.restored, d_repair=rt.repair_down_s(e.cls),
                        d_swap=rt.swap_s(), hold=rt.hold_s(e.cls),
                        d_slow=fr.slowed_s, path=fr.path,
                        slow_swapped=swapped, slow_restored=kept, cells=cells,
                        sets=sets, first=first, group=group, worth=worth, per=per,
                        each=apart, worths=worths, restart=restart,
                        restarted=len(rs), d_restart=rt.restart_s() if rs else 0.0))
    return out
