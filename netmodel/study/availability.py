"""Availability over time: delivered capacity of a scenario's cluster under failures,
repairs and hot spares, by a seeded Monte Carlo and by closed forms side by side.

**Events.** Every symmetry class of components (:mod:`netmodel.study.blast_radius`) is an
event kind: a Poisson process at ``parts x rate x cells`` failures per second (exponential
lifetimes), each failure taking down ``instances_down`` instances and slowing others by
``slow`` instances' worth (a shared part, counted once per set of cells: at ``parts x rate
x sets``, each failure touching every cell of its set at once, :attr:`Kind.cells`) (slowed, or re-balanced to the largest batch that still meets
the SLO). Without a spare the instances are down for detection + repair + reload +
warm-up; the slow-down lasts detection + repair. With a spare (placement and
path from :mod:`netmodel.study.reliability_spares`) the instances are down only for the
swap (detection + reconfiguration + reload + warm-up), then lose ``restored`` instances'
worth while the spares stand in; the slowed instances that spares serve faster
(:func:`~netmodel.study.reliability_spares.slow_recovery`: the operator's better choice)
lose ``slow_swapped`` until the swap, then ``slow_restored`` (the rest of ``slow`` lasts
until the repair either way); the spares are held until the repair (detection +
repair) returns the failed part to the pool. A failure that finds too few free spares in
its pool waits for its repair (all or nothing; a loss system). Failures are spread evenly
over the pools.

**Monte Carlo** (:func:`simulate`): per trial the failures of every kind over the horizon,
sampled at once (a Poisson count, uniform times, a kind and a pool for each; a shared
part's failure then one event per cell of a set drawn evenly, at the same time, each in
its cell's pool: :func:`_spread_sets`) from one repair time before zero so the cluster starts in its steady state; the spare pools are a
loss system run event by event over all trials and pools at once (numpy over lanes, one
step per event rank, never a loop per GPU or per time step); the capacity lost is then the
sum of every failure's intervals (outages that overlap on one instance add: a first-order
model, valid while an instance is down a small share of the time), integrated exactly per
trial. Reported: the mean delivered capacity (with a 95% confidence interval over
trials), its p1/p50/p99 over time and trials (sampled at evenly spaced instants), the
share of time below a capacity threshold, and instance-down events per year.

**Analytic** (:func:`analytic`): the same model in closed form. Mean capacity lost per
second is ``sum_k rate_k [B_k (down_k d_repair + sw_k d_slow) + (1 - B_k)((down_k + sw_k)
d_swap + (restored_k + sr_k)(hold_k - d_swap)) + (slow_k - sw_k) d_slow]`` (``sw``, ``sr``:
``slow_swapped``, ``slow_restored``), with ``B_k`` the probability that a failure of
kind ``k`` finds too few spares: 1 without spares, else the Kaufman-Roberts recursion of a
multi-rate loss system per pool (each pool an Erlang loss system of ``spares`` servers;
insensitive to the repair-time distribution). Without spares the share of time below the
threshold is the tail of a compound Poisson count of instances down (outages in progress:
an M/G/infinity system, Panjer recursion), and the per-instance availability of
independent alternating-renewal components is given too.

>>> a = availability("lite-flat", "Llama-3-70B", "decode", spares=8, trials=50,
...                  horizon="1y", seed=1)
>>> a.pools.reachable_total, a.analytic.mean > a.no_spares.mean
(8, True)
>>> abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci + 1e-9
True
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from compute.search import DEFAULT_MAX_BATCH
from compute.validate import MAX_WHOLE, describe, is_finite, is_whole, number
from netmodel.study.blast_radius import YEAR, Cluster, build_cluster, check_cluster
from netmodel.study.progress import NO_PROGRESS, check_progress
from netmodel.study.reliability_catalog import HOUR, parse_duration, percent
from netmodel.study.reliability_spares import (
    SparePools,
    check_placement,
    recovery,
    slow_recovery,
    spare_pools,
)

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from compute.phases import Slo, Workload
    from compute.roofline import RooflineOptions
    from netmodel.study.progress import ProgressLike
    from netmodel.study.reliability_catalog import Catalog
    from netmodel.study.scenarios import Scenario

__all__ = ["MAX_EVENTS", "MAX_TRIALS", "QUANTILE", "THRESHOLD", "Analytic", "Availability",
           "Kind", "MonteCarlo", "analytic", "availability", "availability_files",
           "event_kinds", "parse_spares", "simulate", "spare_curve", "spares_needed"]

#: Most trials one run may ask for.
MAX_TRIALS = 100_000
#: Most failure events one run may sample (work guard): about 1e6 events/s were sampled on a
#: 2-core box, so 2e7 is 15-20 s (131,072 GPUs for a year, 1,000 trials: 1.4e7); the former
#: 2e9 let a run go on for half an hour.
MAX_EVENTS = 2e7
#: Events held in memory at once (a chunk of trials): ~24 bytes each.
CHUNK_EVENTS = 1_000_000
#: Largest lanes x events matrix of the loss system run at once.
LANE_CELLS = 4_000_000
#: Longest horizon (s): a century.
MAX_HORIZON = 100 * YEAR
#: Default capacity threshold and the share of time it must be met.
THRESHOLD, QUANTILE = 0.99, 0.999


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

    def to_dict(self) -> dict:
        """The kind as JSON: ``units`` null where spares cannot help (the -1 sentinel is
        internal, not a count); ``cells``, ``sets``, ``first`` only for a shared part's."""
        d = asdict(self)
        if self.units < 0:
            d["units"] = None
        if not self.sets:
            for k in ("cells", "sets", "first"):
                del d[k]
        d["rate_per_year"] = self.rate * YEAR
        return d


def event_kinds(cluster: Cluster, placement: str = "pod",
                classes: Iterable[str] | None = None) -> tuple[Kind, ...]:
    """The event kinds of ``cluster`` with spares of ``placement`` (kinds that change no
    capacity are left out)."""
    check_placement(placement)
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
    out = []
    per_set = cluster.cells_per_shared_part
    for e in cluster.effects(classes):
        rate = e.parts * rates[e.cls] * cluster.cells
        if rate <= 0 or (e.instances_down == 0 and e.slow <= 0):
            continue
        # a shared part: one failure of each set's copy touches every cell of the set at
        # once (the full sets, then the last one part-filled as its own kind); the cells'
        # failures a second are the same as counted cell by cell
        full, rest = divmod(cluster.cells, per_set)
        shared = per_set > 1 and bool(getattr(e.component, "shared", False))
        groups = ([(per_set, full, 0)] if full else []) + (
            [(rest, 1, full * per_set)] if rest else []) if shared else [(1, 0, 0)]
        rec = recovery(cluster, e, placement)
        units = -1 if rec.units is None else int(rec.units)
        units = units if e.instances_down else 0
        path, swapped, kept = rec.path, 0.0, 0.0
        if units >= 0:   # all or nothing: no swap for the slowed where the down wait
            sw = slow_recovery(cluster, e, placement)
            if sw.units:
                units += sw.units
                swapped, kept = sw.swapped, sw.restored
                path = f"{rec.path}; {sw.path}" if e.instances_down else sw.path
        cat = cluster.catalog
        for cells, sets, first in groups:
            out.append(Kind(cls=e.cls, example=e.example,
                            rate=e.parts * rates[e.cls] * sets if sets else rate,
                            down=e.instances_down, slow=e.slow, units=units,
                            restored=rec.restored, d_repair=cluster.repair_down_s(e.cls),
                            d_swap=cluster.swap_s(), hold=cluster.hold_s(e.cls),
                            d_slow=cat.detection_s + cat.repair_s(e.cls), path=path,
                            slow_swapped=swapped, slow_restored=kept, cells=cells,
                            sets=sets, first=first))
    return tuple(out)


# ---------------------------------------------------------------------- analytic

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
    """Per kind, the probability that a failure finds too few free spares in its pool
    (averaged over pools of different sizes)."""
    out = np.ones(len(kinds))
    sizes: dict = {}
    for c in pools.reachable:
        sizes[c] = sizes.get(c, 0) + 1
    if not kinds:
        return out
    acc = np.zeros(len(kinds))
    for cap, n in sizes.items():
        elig = [k for k, x in enumerate(kinds) if 0 < x.units <= cap]
        b = np.ones(len(kinds))
        if elig:
            loads = [kinds[k].rate * kinds[k].cells / pools.pools * kinds[k].hold
                     for k in elig]
            us = [kinds[k].units for k in elig]
            q = kaufman_roberts(int(cap), loads, us)
            tail = np.cumsum(q[::-1])[::-1]  # tail[j] = P(busy >= j)
            for k, u in zip(elig, us, strict=True):
                b[k] = float(tail[cap - u + 1]) if cap - u + 1 <= cap else 0.0
        acc += b * n
    out = acc / pools.pools
    for k, x in enumerate(kinds):
        if x.units == 0:
            out[k] = 0.0
    return out


def _lost_rate(kinds, b) -> np.ndarray:
    """Instance-seconds lost per second of operation, per kind."""
    out = np.zeros(len(kinds))
    for k, x in enumerate(kinds):
        held = max(x.hold - x.d_swap, 0.0)
        sw = x.slow_swapped
        out[k] = x.rate * x.cells * (b[k] * x.down * x.d_repair
                           + (1 - b[k]) * (x.down * x.d_swap + x.restored * held)
                           + (x.slow - sw) * x.d_slow
                           + b[k] * sw * x.d_slow
                           + (1 - b[k]) * (sw * x.d_swap + x.slow_restored * held))
    return out


def _compound_poisson_tail(kinds, b, limit: float) -> float:
    """P(capacity lost > ``limit`` instances) when the outages and slow-downs in progress
    are independent M/G/infinity streams: a compound Poisson sum (Panjer recursion on a
    lattice of ``limit / 256``; exact where every loss exceeds the limit)."""
    streams = []  # (mean number in progress, loss in instances)
    for k, x in enumerate(kinds):
        held = max(x.hold - x.d_swap, 0.0)
        sw = x.slow_swapped
        for m, loss in ((x.rate * b[k] * x.d_repair, x.down),
                        (x.rate * (1 - b[k]) * x.d_swap, x.down + sw),
                        (x.rate * (1 - b[k]) * held, x.restored + x.slow_restored),
                        (x.rate * x.d_slow, x.slow - sw),
                        (x.rate * b[k] * x.d_slow, sw)):
            if m > 0 and loss > 0:   # a shared part's failure: every cell of its set
                streams.append((m, loss * x.cells))
    total = sum(m for m, _ in streams)
    if total == 0:
        return 0.0
    step = max(limit, 1e-12) / 256
    top = int(math.floor(limit / step + 1e-9))
    lam: dict = {}
    for m, loss in streams:
        j = max(1, int(round(loss / step)))
        lam[j] = lam.get(j, 0.0) + m
    terms = [(j, j * m) for j, m in lam.items()]
    p = [0.0] * (top + 1)   # plain floats: the recursion reads them one at a time
    p[0] = math.exp(-total)
    for n in range(1, top + 1):
        p[n] = sum(jm * p[n - j] for j, jm in terms if j <= n) / n
    return float(min(1.0, max(0.0, 1.0 - np.array(p).sum())))


@dataclass(frozen=True)
class Analytic:
    """Closed-form results (see the module doc). ``mean``: time-average delivered share of
    capacity; ``below_threshold``: share of time below the threshold (exact in the model
    without spares; independent thinning with spares, an approximation);
    ``instance_availability``: one instance's availability from independent components
    (no spares); ``blocking``: per kind; ``overlap``: instances' worth lost per instance
    (1 - mean): the additive model is a first-order one, trustworthy while it is small
    (the table warns above 5%)."""

    mean: float
    below_threshold: float
    instance_availability: float
    instance_down_events_per_year: float
    waits_for_repair_per_year: float
    lost_per_year: dict
    blocking: tuple
    exact_threshold: bool
    overlap: float = 0.0

    def to_dict(self) -> dict:
        """JSON-ready: Python floats and lists (``blocking`` a list, per kind)."""
        d = asdict(self)
        d["blocking"] = list(self.blocking)
        return d


def analytic(kinds: Sequence[Kind], pools: SparePools, instances: int, threshold: float = THRESHOLD,
             components: dict | None = None) -> Analytic:
    """The closed forms for ``kinds`` with spare ``pools`` over ``instances`` instances.
    ``components``: per kind index, components of that kind in the cluster (for the
    per-instance availability; default one per failure)."""
    b = blocking(kinds, pools)
    lost = _lost_rate(kinds, b)
    mean = 1.0 - float(lost.sum()) / instances
    limit = (1.0 - threshold) * instances
    tail = _compound_poisson_tail(kinds, b, limit) if limit >= 0 else 1.0
    # one instance: the components that take it down, each an alternating renewal process
    log_a = 0.0
    for k, x in enumerate(kinds):
        if x.down <= 0:
            continue
        n_comp = (components or {}).get(k, None)
        per_instance_rate = x.rate * x.cells * x.down / instances
        d = b[k] * x.d_repair + (1 - b[k]) * x.d_swap
        if n_comp:
            lam = x.rate / n_comp
            log_a -= (per_instance_rate / lam) * math.log1p(lam * d)
        else:
            log_a -= per_instance_rate * d
    per_class: dict = {}
    for k, x in enumerate(kinds):
        per_class[x.cls] = per_class.get(x.cls, 0.0) + float(lost[k]) * YEAR / instances
    return Analytic(mean=mean, below_threshold=tail, instance_availability=math.exp(log_a),
                    instance_down_events_per_year=sum(x.rate * x.cells * YEAR
                                                      for x in kinds if x.down),
                    waits_for_repair_per_year=float(sum(x.rate * x.cells * b[k] * YEAR
                                                        for k, x in enumerate(kinds) if x.down)),
                    lost_per_year=per_class, blocking=tuple(float(v) for v in b),
                    exact_threshold=pools.reachable_total == 0,
                    overlap=float(lost.sum()) / instances)


# ---------------------------------------------------------------------- Monte Carlo

@dataclass(frozen=True, eq=False)
class MonteCarlo:
    """Monte Carlo results (see the module doc); capacities are shares of the healthy
    cluster's. ``grid_s``, ``band``: capacity at evenly spaced instants, its p1, p50 and
    p99 over trials; ``event_lost``: instance-hours lost by each failure (a sample)."""

    trials: int
    horizon_s: float
    seed: int
    mean: float
    mean_ci: float
    p1: float
    p50: float
    p99: float
    below_threshold: float
    below_threshold_ci: float
    instance_down_events_per_year: float
    events_per_year: float
    waits_for_repair_per_year: float
    grid_s: np.ndarray = field(repr=False)
    band: np.ndarray = field(repr=False)
    event_lost: np.ndarray = field(repr=False)
    trial_means: np.ndarray = field(repr=False)

    def to_dict(self) -> dict:
        """JSON-ready figures (a confidence interval of one trial is None)."""
        out = {k: getattr(self, k) for k in (
            "trials", "horizon_s", "seed", "mean", "mean_ci", "p1", "p50", "p99",
            "below_threshold", "below_threshold_ci", "instance_down_events_per_year",
            "events_per_year", "waits_for_repair_per_year")}
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in out.items()}


def _check_run(trials, horizon) -> tuple[int, float]:
    if isinstance(trials, bool) or not is_whole(trials) \
            or not 1 <= trials <= MAX_TRIALS:
        raise UserError(f"trials must be a whole number from 1 to {MAX_TRIALS:,}, got "
                        f"{describe(trials)}")
    h = parse_duration(horizon, "horizon")
    if h > MAX_HORIZON:
        raise UserError(f"horizon {horizon!r} is longer than {MAX_HORIZON / YEAR:g} years")
    return int(trials), h


def _loss_system(t, units, hold, cap, order_counts) -> np.ndarray:
    """Grant or deny each event of a loss system per lane, all lanes at once.

    ``t``, ``units``, ``hold``: 2-D (lanes x rank, padded with inf/0); lanes sorted by
    event count, descending (``order_counts``); ``cap``: spares per lane. Returns the
    granted mask (same shape): :func:`_loss_lanes`'s, whose loop runs once per rank. Where
    lanes are few and long (spares shared by a whole cluster: a 131,072-GPU lane holds
    some 14,000 events a year), a lane whose spares never run out even if every event
    were granted (:func:`_never_full`) is granted whole without the loop."""
    lanes, kmax = t.shape
    if lanes * 4 > kmax:   # many short lanes: the loop's ranks are few
        return _loss_lanes(t, units, hold, cap, order_counts)
    granted = np.zeros(t.shape, dtype=bool)
    rest = []
    for i, c in enumerate(order_counts.tolist()):
        if _never_full(t[i, :c], units[i, :c], hold[i, :c], int(cap[i])):
            granted[i, :c] = True
        else:
            rest.append(i)
    if rest:   # still sorted by event count, descending
        rest = np.array(rest)
        granted[rest] = _loss_lanes(t[rest], units[rest], hold[rest], cap[rest],
                                    order_counts[rest])
    return granted


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


def _loss_lanes(t, units, hold, cap, order_counts) -> np.ndarray:
    """:func:`_loss_system` by its loop: one step per rank, every lane with an event at
    that rank at once."""
    lanes, kmax = t.shape
    q = int(min(max(1, cap.max()), 8))
    rel = np.full((lanes, q), -np.inf)
    held = np.zeros((lanes, q), dtype=np.int64)
    granted = np.zeros(t.shape, dtype=bool)
    counts = order_counts
    for r in range(kmax):
        n = int(np.searchsorted(-counts, -(r + 1), side="right"))  # lanes with > r events
        if n == 0:
            break
        tr = t[:n, r]
        ur = units[:n, r]
        live = rel[:n] > tr[:, None]
        busy = np.where(live, held[:n], 0).sum(1)
        ok = busy + ur <= cap[:n]
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
        granted[:n, r] = ok
    return granted


def simulate(kinds: Sequence[Kind], pools: SparePools, instances: int, *,
             horizon: str | float = "1y", trials: int = 1000, seed: int = 0,
             threshold: float = THRESHOLD, grid: int = 400,
             progress: ProgressLike = NO_PROGRESS) -> MonteCarlo:
    """The Monte Carlo of the module doc for ``kinds`` over ``instances`` instances."""
    trials, h = _check_run(trials, horizon)
    progress = check_progress(progress)
    if isinstance(seed, bool) or not is_whole(seed) or seed < 0:
        raise UserError(f"seed must be a whole number >= 0, got {describe(seed)}")
    rates = np.array([k.rate for k in kinds], dtype=float)
    # events as the loss system and the intervals see them: one per cell a failure touches
    lam = float(np.dot(rates, [k.cells for k in kinds])) if kinds else 0.0
    warm = max([max(k.d_repair, k.hold, k.d_slow) for k in kinds], default=0.0)
    span = h + warm
    per_trial = lam * span
    if per_trial * trials > MAX_EVENTS:
        raise UserError(f"{per_trial * trials:.3g} failure events to simulate "
                        f"({trials:,} trials); at most {MAX_EVENTS:.0e}: give fewer trials "
                        f"or a shorter horizon")
    chunk = max(1, int(CHUNK_EVENTS // max(per_trial, 1.0)))
    chunks = [(i, min(trials, i + chunk)) for i in range(0, trials, chunk)]
    streams = np.random.SeedSequence(int(seed)).spawn(len(chunks))
    grid_s = (np.arange(grid) + 0.5) * h / grid
    means, below, downs, denials, evs = [], [], [], [], []
    bands, lost_samples = [], []
    for (lo, hi), ss in zip(chunks, streams, strict=True):
        res = _simulate_chunk(kinds, rates, pools, instances, h, warm, hi - lo,
                              np.random.default_rng(ss), threshold, grid_s)
        means.append(res[0])
        below.append(res[1])
        downs.append(res[2])
        denials.append(res[3])
        evs.append(res[4])
        bands.append(res[5])
        if sum(len(x) for x in lost_samples) < 200_000:
            lost_samples.append(res[6])
        progress.advance(f"trials {hi}/{trials}", hi - lo)
    m = np.concatenate(means)
    bt = np.concatenate(below)
    samples = np.concatenate(bands, axis=0)          # trials x grid
    pct = np.percentile(samples, [1, 50, 99], axis=0)
    flat = samples.ravel()
    years = h / YEAR
    ci = 1.96 * float(m.std(ddof=1)) / math.sqrt(trials) if trials > 1 else math.inf
    bci = 1.96 * float(bt.std(ddof=1)) / math.sqrt(trials) if trials > 1 else math.inf
    return MonteCarlo(
        trials=trials, horizon_s=h, seed=int(seed), mean=float(m.mean()), mean_ci=ci,
        p1=float(np.percentile(flat, 1)), p50=float(np.percentile(flat, 50)),
        p99=float(np.percentile(flat, 99)), below_threshold=float(bt.mean()),
        below_threshold_ci=bci,
        instance_down_events_per_year=float(np.concatenate(downs).mean() / years),
        events_per_year=float(np.concatenate(evs).mean() / years),
        waits_for_repair_per_year=float(np.concatenate(denials).mean() / years),
        grid_s=grid_s, band=pct, event_lost=np.concatenate(lost_samples)
        if lost_samples else np.zeros(0), trial_means=m)


def _simulate_chunk(kinds, rates, pools, instances, h, warm, n, rng, threshold, grid_s):
    lam = float(rates.sum())
    span = h + warm
    counts = rng.poisson(lam * span, size=n) if lam > 0 else np.zeros(n, dtype=np.int64)
    total = int(counts.sum())
    trial = np.repeat(np.arange(n), counts)
    t = rng.random(total) * span - warm
    kind = rng.choice(len(kinds), size=total, p=rates / lam) if total else \
        np.zeros(0, dtype=np.int64)
    if not len(kinds):
        kinds = (Kind("none", "", 0.0, 0, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 0.0),)
    pool = rng.integers(0, pools.pools, size=total) if total else np.zeros(0, dtype=np.int64)
    trial, t, kind, pool = _spread_sets(kinds, pools.pools, trial, t, kind, pool, rng)
    total = len(t)
    # sort by (trial, time) with one float key (trials are blocks 2 spans apart; within a
    # chunk the key resolves times to better than 0.2 s for any horizon and trial count)
    order = np.argsort(trial * (2.0 * span) + (t + warm))
    trial, t, kind, pool = trial[order], t[order], kind[order], pool[order]
    del order

    units = np.array([k.units for k in kinds], dtype=np.int64)
    holds = np.array([k.hold for k in kinds])
    cap_pool = np.asarray(pools.reachable, dtype=np.int64)
    u = units[kind]
    cap = cap_pool[pool]
    granted = np.zeros(total, dtype=bool)
    idx = np.flatnonzero((u > 0) & (u <= cap))
    if len(idx):
        lane = trial[idx].astype(np.int64) * pools.pools + pool[idx]
        srt = np.argsort(lane, kind="stable")        # keeps time order within a lane
        idx, lane = idx[srt], lane[srt]
        uniq, start, cnt = np.unique(lane, return_index=True, return_counts=True)
        by = np.argsort(-cnt, kind="stable")         # lanes with the most events first
        uniq, start, cnt = uniq[by], start[by], cnt[by]
        offsets = np.cumsum(cnt) - cnt
        # lanes are independent: run them in blocks of at most LANE_CELLS matrix cells
        lo = 0
        while lo < len(uniq):
            hi = min(len(uniq), lo + max(1, LANE_CELLS // int(cnt[lo])))
            c = cnt[lo:hi]
            n_ev = int(c.sum())
            row = np.repeat(np.arange(hi - lo), c)
            rank = np.arange(n_ev) - np.repeat(offsets[lo:hi] - offsets[lo], c)
            src = idx[np.repeat(start[lo:hi], c) + rank]
            kmax = int(c[0])
            tt = np.full((hi - lo, kmax), np.inf)
            uu = np.zeros((hi - lo, kmax), dtype=np.int64)
            hh = np.zeros((hi - lo, kmax))
            tt[row, rank] = t[src]
            uu[row, rank] = u[src]
            hh[row, rank] = holds[kind[src]]
            g = _loss_system(tt, uu, hh, cap_pool[uniq[lo:hi] % pools.pools], c)
            granted[src] = g[row, rank]
            lo = hi

    # intervals: (start, end, weight) per event
    down = np.array([k.down for k in kinds], dtype=float)[kind]
    slow = np.array([k.slow for k in kinds], dtype=float)[kind]
    restored = np.array([k.restored for k in kinds], dtype=float)[kind]
    d_rep = np.array([k.d_repair for k in kinds])[kind]
    d_swap = np.array([k.d_swap for k in kinds])[kind]
    hold = np.array([k.hold for k in kinds])[kind]
    d_slow = np.array([k.d_slow for k in kinds])[kind]
    sw = np.array([k.slow_swapped for k in kinds], dtype=float)[kind]
    sr = np.array([k.slow_restored for k in kinds], dtype=float)[kind]
    first_end = np.where(granted, t + d_swap, t + d_rep)
    granted_restored = np.where(granted, restored, 0.0)
    stay = slow - sw + np.where(granted, 0.0, sw)    # slowed until the repair
    parts_t, parts_x, parts_w = [], [], []
    for a, b, w in ((t, first_end, down), (t + d_swap, t + hold, granted_restored),
                    (t, t + d_slow, stay), (t, t + d_swap, np.where(granted, sw, 0.0)),
                    (t + d_swap, t + hold, np.where(granted, sr, 0.0))):
        a, b = np.clip(a, 0, h), np.clip(b, 0, h)
        keep = (w > 0) & (b > a)
        tr = trial[keep]
        parts_t += [tr, tr]
        parts_x += [a[keep], b[keep]]
        ww = w[keep]
        parts_w += [ww, -ww]
    # breakpoints sorted per trial; level = lost instances after each breakpoint
    bt = np.concatenate(parts_t)
    bx = np.concatenate(parts_x)
    bw = np.concatenate(parts_w)
    del parts_t, parts_x, parts_w
    o = np.argsort(bt * (2.0 * h + 1.0) + bx, kind="stable")
    bt, bx, bw = bt[o], bx[o], bw[o]
    del o
    level = np.cumsum(bw)
    # reset the running sum at each trial's start (levels return to 0 within a trial)
    nxt = np.empty_like(bx)
    if len(bx):
        nxt[:-1] = bx[1:]
        nxt[-1] = h
        last = np.r_[bt[1:] != bt[:-1], True]
        nxt[last] = h
    dur = nxt - bx
    level = np.maximum(level - _trial_offsets(level, bt), 0.0)
    lost_int = np.bincount(bt, weights=level * dur, minlength=n)
    limit = (1.0 - threshold) * instances
    below_t = np.bincount(bt, weights=np.where(level > limit + 1e-9, dur, 0.0), minlength=n)
    mean = 1.0 - lost_int / (h * instances)
    # capacity at grid instants: the level of the last breakpoint at or before each instant
    key = bt.astype(float) * (h * 4) + bx
    q = (np.arange(n)[:, None] * (h * 4) + grid_s[None, :]).ravel()
    at = np.searchsorted(key, q, side="right") - 1
    if len(bx):
        safe = np.clip(at, 0, None)
        same = (at >= 0) & (bt[safe] == np.repeat(np.arange(n), len(grid_s)))
        lv = np.where(same, level[safe], 0.0)
    else:
        lv = np.zeros(len(q))
    band = np.clip(1.0 - lv.reshape(n, len(grid_s)) / instances, 0.0, 1.0)
    inside = t >= 0
    n_down = np.bincount(trial[inside & (down > 0)], minlength=n)
    denied = np.bincount(trial[inside & (down > 0) & ~granted], minlength=n)
    n_ev = np.bincount(trial[inside], minlength=n)
    ev_lost = (down * (first_end - t) + granted_restored * np.maximum(hold - d_swap, 0.0)
               + stay * d_slow + np.where(granted, sw * d_swap + sr * np.maximum(
                   hold - d_swap, 0.0), 0.0))[inside] / HOUR
    return mean, below_t / h, n_down, denied, n_ev, band, ev_lost[:100_000]


def _spread_sets(kinds, n_pools: int, trial, t, kind, pool, rng):
    """A shared part's failure, drawn once for its set, as one event per cell of the set
    at the same moment (same trial and time), each cell asking its own pool: a set drawn
    evenly among the kind's ``sets``, its cells ``first + set x cells + j``; pool ``cell x
    G + g`` where the cluster's pools are ``G`` per cell (``g`` the failure's drawn pool's
    slot, the same part in every cell), else the one pool. Other events pass unchanged
    (and nothing is drawn where no kind is a shared part's: a single cell, Lite fabrics)."""
    sets_k = np.array([k.sets for k in kinds], dtype=np.int64)
    if not len(kind) or not (sets_k > 0).any():
        return trial, t, kind, pool
    m_k = np.array([k.cells if k.sets else 1 for k in kinds], dtype=np.int64)
    first_k = np.array([k.first for k in kinds], dtype=np.int64)
    m = m_k[kind]
    wide = np.flatnonzero(sets_k[kind] > 0)
    cell0 = np.zeros(len(kind), dtype=np.int64)
    cell0[wide] = first_k[kind[wide]] + rng.integers(0, sets_k[kind[wide]]) * m[wide]
    cells = int(max(k.first + k.sets * k.cells for k in kinds if k.sets))
    rep = np.repeat(np.arange(len(kind)), m)
    j = np.arange(len(rep)) - np.repeat(np.cumsum(m) - m, m)
    trial, t, kind, old = trial[rep], t[rep], kind[rep], pool[rep]
    cell = cell0[rep] + j
    if n_pools == 1:
        spread = np.zeros_like(old)
    elif n_pools % cells == 0:
        per = n_pools // cells
        spread = cell * per + old % per
    else:   # not a pool per cell: consecutive pools from the drawn one
        spread = (old + j) % n_pools
    pool = np.where(sets_k[kind] > 0, spread, old)
    return trial, t, kind, pool


def _trial_offsets(level: np.ndarray, trial: np.ndarray) -> np.ndarray:
    """The running sum carried into each trial from the trials before it (``level`` is a
    cumulative sum over trials sorted one after another)."""
    if not len(level):
        return level
    starts = np.r_[True, trial[1:] != trial[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(len(level)), 0))
    before = np.r_[0.0, level[:-1]]
    return before[first]


# ---------------------------------------------------------------------- spares and the run

def parse_spares(text: int | str, gpus: int) -> int:
    """A spare count from ``"16"``, ``"2%"`` (of the cluster's GPUs, rounded up) or an
    int; more spares than the cluster has GPUs is refused.

    >>> parse_spares("2%", 16384), parse_spares(8, 128)
    (328, 8)
    """
    gpus = number("", "gpus", gpus, minimum=1, maximum=MAX_WHOLE, integer=True)
    if isinstance(text, bool):
        raise UserError(f"spares must be a count or a percentage, got {text!r}")
    if is_whole(text):
        n = int(text)
    else:
        s = str(text).strip()
        try:
            if s.endswith("%"):
                pct = float(s[:-1])
                if not math.isfinite(pct) or pct < 0:
                    raise ValueError
                n = math.ceil(pct / 100 * gpus - 1e-9)
            else:
                n = int(s)
        except ValueError:
            raise UserError(f"spares {text!r} must be a whole number or a percentage such as "
                            f"2%") from None
    if n < 0:
        raise UserError(f"spares must be >= 0, got {text!r}")
    if n > gpus:
        raise UserError(f"spares {text!r} ({n:,}) exceed the cluster's {gpus:,} GPUs")
    return n


@dataclass(frozen=True, eq=False)
class Availability:
    """Availability of one scenario's cluster with a spare pool: Monte Carlo and analytic
    results side by side (the analytic result without spares too)."""

    cluster: Cluster
    pools: SparePools
    kinds: tuple
    analytic: Analytic
    no_spares: Analytic
    mc: MonteCarlo
    threshold: float

    @property
    def sms_bought(self) -> int:
        """Every SM bought: the cluster's GPUs and the spares."""
        return (self.cluster.gpus + self.pools.spares) * self.cluster.gpu.sms

    @property
    def goodput_per_sm(self) -> float:
        """Mean delivered tokens/s (Monte Carlo) over every SM bought."""
        return self.mc.mean * self.cluster.cluster_tokens_per_s / self.sms_bought

    def to_dict(self) -> dict:
        c = self.cluster
        return {"scenario": c.scenario.label, "model": c.model.name,
                "phase": c.workload.phase, "gpus": c.gpus, "cells": c.cells, "tp": c.tp,
                "config": c.parallelism.label, "instance_gpus": c.instance_gpus,
                "batch": c.batch, "instances": c.instances_total,
                "tokens_per_s": c.cluster_tokens_per_s, "threshold": self.threshold,
                "spares": self.pools.to_dict(), "swap_s": c.swap_s(),
                "goodput_tokens_per_s_per_sm": self.goodput_per_sm,
                "healthy_tokens_per_s_per_sm": c.cluster_tokens_per_s
                / (c.gpus * c.gpu.sms),
                "monte_carlo": self.mc.to_dict(), "analytic": self.analytic.to_dict(),
                "analytic_no_spares": self.no_spares.to_dict(),
                "kinds": [k.to_dict() for k in self.kinds],
                "catalog": c.catalog.to_dict()}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_csv(self) -> str:
        """The capacity band over time: time (h), p1, p50, p99 of the capacity share."""
        from compute.results import rows_to_csv

        rows = [{"time_h": t / HOUR, "capacity_p1": a, "capacity_p50": b, "capacity_p99": c}
                for t, a, b, c in zip(self.mc.grid_s, *self.mc.band, strict=True)]
        return rows_to_csv(rows, ("time_h", "capacity_p1", "capacity_p50", "capacity_p99"))

    def table(self) -> str:
        c, m, a, z = self.cluster, self.mc, self.analytic, self.no_spares
        p = self.pools
        lines = [
            f"{c.scenario.label}, {c.model.name} {c.workload.phase}: {c.gpus:,} GPU{'' if c.gpus == 1 else 's'}, "
            f"{c.parallelism.label}, {c.instances_total:,} instance{'' if c.instances_total == 1 else 's'}; spares {p.spares:,} "
            f"({p.placement}, {p.reachable_total:,} reachable); {m.trials:,} trials x "
            f"{_horizon(m.horizon_s)}, seed {m.seed}",
            f"{'':<34}{'Monte Carlo':>16}{'analytic':>12}{'no spares':>12}",
            f"{'mean capacity':<34}{m.mean:>10.6f} ±{m.mean_ci:<5.1e}{a.mean:>12.6f}"
            f"{z.mean:>12.6f}",
            f"{'time below ' + percent(self.threshold) + ' capacity':<34}"
            f"{m.below_threshold:>10.2e} ±{m.below_threshold_ci:<5.0e}"
            f"{a.below_threshold:>12.2e}{z.below_threshold:>12.2e}",
            f"{'capacity p1 / p50 / p99':<34}{m.p1:>.4f} / {m.p50:.4f} / {m.p99:.4f}",
            f"{'instance-down events per year':<34}{m.instance_down_events_per_year:>16.4g}"
            f"{a.instance_down_events_per_year:>12.4g}",
            f"{'down events waiting for repair/y':<34}{m.waits_for_repair_per_year:>16.4g}"
            f"{a.waits_for_repair_per_year:>12.4g}{z.waits_for_repair_per_year:>12.4g}",
            f"{'one instance availability':<34}{'':>16}{a.instance_availability:>12.6f}"
            f"{z.instance_availability:>12.6f}",
            f"goodput {self.goodput_per_sm:.4g} tokens/s/SM over every SM bought (healthy "
            f"{c.cluster_tokens_per_s / (c.gpus * c.gpu.sms):.4g}); swap {c.swap_s():.3g} s"]
        if p.spares > 0 and p.reachable_total == 0:
            lines.append(f"note: none of the {p.spares:,} spares placed by {p.placement} is "
                         f"reachable: the fabric has no free port to wire one there (global "
                         f"spares need none)")
        if p.placement == "global" and 0 < p.reachable_total < c.instance_gpus:
            lines.append(f"note: global spares re-create whole instances of "
                         f"{c.instance_gpus:,} GPUs; {p.reachable_total:,} re-create none "
                         f"(give {c.instance_gpus:,} or more, or place them by pod)")
        if c.batch_at_limit:
            lines.append(c.batch_limit_note)
        if z.overlap > 0.05:
            lines.append(f"warning: {z.overlap:.0%} of the capacity is lost without spares; "
                         f"outages overlap so often that the additive model overstates the "
                         f"loss (it is first-order)")
        return "\n".join(lines)


def _horizon(seconds: float) -> str:
    """A horizon in the largest of y, d, h, min it fills at least once, else s (a horizon
    of one second read '3.17e-08 y').

    >>> _horizon(YEAR), _horizon(30 * 86400), _horizon(1.0), _horizon(5400.0)
    ('1 y', '30 d', '1 s', '1.5 h')
    """
    for unit, size in (("y", YEAR), ("d", 86400.0), ("h", HOUR), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def _components_per_kind(cluster, kinds) -> dict:
    """Per kind, its components in the cluster: one per cell, or per set of a shared
    part's kind (the kind's ``sets``)."""
    by = {(e.cls, e.example): e.components for e in cluster.effects()}
    return {k: None if by.get((x.cls, x.example)) is None
            else by[x.cls, x.example] * (x.sets or cluster.cells)
            for k, x in enumerate(kinds)}


def availability(scenario: str | Scenario | None, model: str | ModelSpec | None,
                 phase: str | Workload = "decode", *, gpus: int | None = None,
                 spares: int | str = 0, placement: str = "pod", horizon: str | float = "1y",
                 trials: int = 1000, seed: int = 0, threshold: float = THRESHOLD,
                 slo: Slo | None = None, options: RooflineOptions | None = None,
                 catalog_: Catalog | None = None, cluster: Cluster | None = None,
                 progress: ProgressLike = NO_PROGRESS, parallelism: str = "auto",
                 max_batch: int = DEFAULT_MAX_BATCH) -> Availability:
    """Availability of the scenario's cluster (see the module doc). ``spares``: a count or
    a percentage string of the cluster's GPUs; ``placement``: group, pod or global."""
    trials, _ = _check_run(trials, horizon)
    threshold = _check_threshold(threshold)
    check_progress(progress)   # before the cluster is built
    c = check_cluster(cluster) or build_cluster(
        scenario, model, phase, gpus=gpus, slo=slo, options=options, catalog_=catalog_,
        parallelism=parallelism, max_batch=max_batch)
    n = parse_spares(spares, c.gpus)
    pools = spare_pools(c, n, placement)
    kinds = event_kinds(c, placement)
    comps = _components_per_kind(c, kinds)
    an = analytic(kinds, pools, c.instances_total, threshold, comps)
    zero = analytic(kinds, replace(pools, reachable=(0,) * pools.pools), c.instances_total,
                    threshold, comps)
    mc = simulate(kinds, pools, c.instances_total, horizon=horizon, trials=trials, seed=seed,
                  threshold=threshold, progress=progress)
    return Availability(cluster=c, pools=pools, kinds=kinds, analytic=an, no_spares=zero,
                        mc=mc, threshold=threshold)


def _check_threshold(threshold) -> float:
    if not (is_finite(threshold) and 0 < threshold <= 1):
        raise UserError(f"capacity threshold must be a share in (0, 1], got "
                        f"{describe(threshold)}")
    return float(threshold)


def spares_needed(cluster: Cluster, placement: str = "pod", *, threshold: float = THRESHOLD,
                  quantile: float = QUANTILE, horizon: str | float = "1y", trials: int = 200,
                  seed: int = 0, limit: int | None = None) -> int | None:
    """The smallest spare pool (GPUs, split over the pools of ``placement``) that keeps
    at least ``threshold`` of the capacity at least ``quantile`` of the time (Monte Carlo,
    same seed for every size); None when no pool the fabric can hold does."""
    check_placement(placement)
    kinds = event_kinds(cluster, placement)
    inst = cluster.instances_total
    need = 1.0 - quantile

    def ok(s: int) -> bool:
        pools = spare_pools(cluster, s, placement)
        return simulate(kinds, pools, inst, horizon=horizon, trials=trials, seed=seed,
                        threshold=threshold).below_threshold <= need

    if ok(0):
        return 0
    per = spare_pools(cluster, 0, placement).pools
    cap = spare_pools(cluster, cluster.gpus, placement).reachable_total
    hi_max = min(cap, limit if limit is not None else cap, cluster.gpus)
    if hi_max <= 0:
        return None
    lo, hi = 0, per
    while not ok(min(hi, hi_max)):
        if hi >= hi_max:
            return None
        lo, hi = hi, hi * 2
    hi = min(hi, hi_max)
    while hi - lo > per:  # bisection on whole spares per pool
        mid = (lo + hi) // 2 // per * per
        mid = max(mid, lo + per)
        if mid >= hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def spare_curve(cluster: Cluster, placement: str, counts: Iterable[int] | None = None, *,
                threshold: float = THRESHOLD) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closed-form availability against the spare pool: ``(spares as % of the cluster's
    GPUs, mean capacity, share of time below threshold)`` for each count (default: 0 to
    the most the fabric holds, or 8% of the GPUs, in about a dozen steps)."""
    kinds = event_kinds(cluster, placement)
    comps = _components_per_kind(cluster, kinds)
    per = spare_pools(cluster, 0, placement).pools
    if counts is None:  # up to 8% of the GPUs, or four of the largest failure's needs
        top = spare_pools(cluster, cluster.gpus, placement).reachable_total
        need = max([k.units * per for k in kinds if k.units > 0], default=0)
        top = min(top, max(per, math.ceil(0.08 * cluster.gpus), 4 * need))
        step = max(per, math.ceil(top / 12 / per) * per)
        counts = list(range(0, top + 1, step)) if top else [0]
    pct, mean, below = [], [], []
    for n in counts:
        a = analytic(kinds, spare_pools(cluster, int(n), placement), cluster.instances_total,
                     threshold, comps)
        pct.append(100.0 * n / cluster.gpus)
        mean.append(a.mean)
        below.append(a.below_threshold)
    return np.array(pct), np.array(mean), np.array(below)


def availability_files(avail: Availability, *, plot: bool = True,
                       curves: dict[str, tuple] | None = None) -> dict:
    """The availability run's files: ``availability.json``, ``availability.csv`` (the
    capacity band over time) and, with ``plot``, ``availability_capacity.png``,
    ``availability_event_loss.png`` and ``availability_spares.png`` (``curves``: label ->
    :func:`spare_curve`; default: this scenario, one line per placement it supports)."""
    files = {"availability.json": avail.to_json().encode(),
             "availability.csv": avail.to_csv().encode()}
    if plot:
        from netmodel.study import reliability_plots as rp

        c = avail.cluster
        if curves is None:
            curves = {}
            for p in ("pod", "global", "group"):
                try:
                    curves[f"{c.scenario.label} {p}"] = spare_curve(
                        c, p, threshold=avail.threshold)
                except UserError:  # no group labels
                    continue
        marks = [(c.scenario.label, 100.0 * avail.pools.spares / c.gpus, avail.mc.mean,
                  avail.mc.below_threshold)]
        files["availability_capacity.png"] = lambda path: rp.plot_capacity(avail, path)
        files["availability_event_loss.png"] = lambda path: rp.plot_event_loss(avail, path)
        files["availability_spares.png"] = lambda path: rp.plot_spares(
            curves, path, threshold=avail.threshold, quantile=QUANTILE, marks=marks)
    return files
