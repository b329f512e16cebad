"""The availability model by a seeded Monte Carlo: failures sampled over the horizon, the
spare pools run as a loss system over all trials and pools at once, the capacity lost
integrated per trial.

**Monte Carlo** (:func:`simulate`): per trial the failures of every kind over the horizon,
sampled at once (a Poisson count, uniform times, a kind and a pool for each; a shared
part's failure then one event per cell of a set drawn evenly, at the same time, each in
its cell's pool: :func:`_spread_sets`; a failure that strikes several groups' instances
then one event per group's kind in the same cell, each in its group's pool:
:func:`_with_followers`, an instance spanning groups granted only if each group's share
is: :func:`_all_granted`) from one repair time before zero so the cluster starts in its steady state; the spare pools are a
loss system run event by event over all trials and pools at once (numpy over lanes, one
step per event rank, never a loop per GPU or per time step; a failure short of spares
granted as many whole instances as the free spares hold, :attr:`~netmodel.study.
availability_kinds.Kind.per`, those back on spares down for the swap, the rest to the
repair); the capacity lost is then the
sum of every failure's intervals (outages that overlap on one instance add: a first-order
model, valid while an instance is down a small share of the time; the sum is capped at the
whole cluster, so the capacity never falls below 0), integrated exactly per trial. Reported: the mean delivered capacity (with a 95% confidence interval over
trials), its p1/p50/p99 over time and trials (sampled at evenly spaced instants), the
share of time below a capacity threshold, and instance-down events per year (one per failure
and cell it strikes, however many groups' instances it takes down there; a wait for repair
where any of them finds too few spares).

The model and its event kinds: :mod:`netmodel.study.availability`,
:mod:`netmodel.study.availability_kinds`; its closed forms:
:mod:`netmodel.study.availability_analytic`; the loss system it runs:
:mod:`netmodel.study.availability_mc_lanes`; many spare pools on one draw (the spare
search): :mod:`netmodel.study.availability_mc_pools`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from compute.errors import UserError
from compute.units import counted
from compute.validate import describe, is_whole
from netmodel.study.availability_kinds import THRESHOLD, Kind, ask_values, best_grant
from netmodel.study.availability_mc_lanes import _loss_system
from netmodel.study.progress import NO_PROGRESS, check_progress
from netmodel.study.reliability_catalog import HOUR, duration_text, parse_duration
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.reliability_spares import SparePools

if TYPE_CHECKING:
    from netmodel.study.progress import ProgressLike

__all__ = ["MAX_EVENTS", "MAX_SEED", "MAX_TRIALS", "MAX_TRIAL_EVENTS", "MonteCarlo", "simulate"]

#: Most trials one run may ask for.
MAX_TRIALS = 100_000
#: Largest seed taken: a signed 64-bit integer's, as the JSON's ``seed`` is read back by
#: tools that hold it in one (``--seed`` said so alone; the library took 2**64).
MAX_SEED = 2**63 - 1
#: Most failure events one run may sample (work guard): about 1e6 events/s were sampled on a
#: 2-core box, so 2e7 is 15-20 s (131,072 GPUs for a year, 1,000 trials: 1.4e7); the former
#: 2e9 let a run go on for half an hour.
MAX_EVENTS = 2e7
#: Events held in memory at once (a chunk of trials): ~24 bytes each.
CHUNK_EVENTS = 1_000_000
#: Most failure events one trial may sample (memory guard): a trial is drawn whole, however
#: many events it holds (a chunk is at least one trial), at some 350 bytes of peak memory an
#: event (lite-flat --rate gpu=1, one trial: 1.86e6 events 0.71 GB, 4.6e6 1.6 GB peak RSS;
#: 1.86e7, under MAX_EVENTS, past 5.5 GB), so 4e6 is about 1.4 GB. A 131,072-GPU cluster at
#: the catalog's rates draws some 14,000 events a year: 1.4e6 over a century.
MAX_TRIAL_EVENTS = 4e6
#: Largest lanes x events matrix of the loss system run at once.
LANE_CELLS = 4_000_000
#: Longest horizon (s): a century.
MAX_HORIZON = 100 * YEAR
#: Shortest horizon (s): an hour. The Monte Carlo estimates the steady-state time shares the
#: closed forms give, from failures at rates per part-hour whose outages last from the swap
#: (detection and warm-up, some 90 s) to repairs hours long; a shorter span samples almost
#: none of them (1e-300 s ran an empty simulation), and its 400-instant grid still resolves a
#: swap at an hour (9 s a step).
MIN_HORIZON = HOUR


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


def check_run(trials, horizon) -> tuple[int, float]:
    """A Monte Carlo run's ``trials`` (a whole number from 1 to :data:`MAX_TRIALS`) and
    ``horizon`` (a duration from 1 h to :data:`MAX_HORIZON`) as (int, seconds); a
    :class:`~compute.errors.UserError` naming the value otherwise."""
    if isinstance(trials, bool) or not is_whole(trials) \
            or not 1 <= trials <= MAX_TRIALS:
        raise UserError(f"trials must be a whole number from 1 to {MAX_TRIALS:,}, got "
                        f"{describe(trials)}")
    allowed = f"1 h to {MAX_HORIZON / YEAR:g} y"   # said alike below the range and above
    h = parse_duration(horizon, "horizon", rule=f"a duration from {allowed}")
    if not MIN_HORIZON <= h <= MAX_HORIZON:
        side = "shorter than an hour" if h < MIN_HORIZON else \
            f"longer than {MAX_HORIZON / YEAR:g} years"
        raise UserError(f"horizon {horizon!r} is {side}; allowed: {allowed}")
    return int(trials), h


def simulate(kinds: Sequence[Kind], pools: SparePools, instances: int, *,
             horizon: str | float = "1y", trials: int = 1000, seed: int = 0,
             threshold: float = THRESHOLD, grid: int = 400,
             progress: ProgressLike = NO_PROGRESS) -> MonteCarlo:
    """The Monte Carlo of the module doc for ``kinds`` over ``instances`` instances."""
    trials, h = check_run(trials, horizon)
    progress = check_progress(progress)
    plan = _plan(kinds, trials, h, seed)
    grid_s = (np.arange(grid) + 0.5) * h / grid
    means, below, downs, denials, evs = [], [], [], [], []
    bands, lost_samples = [], []
    for (lo, hi), ss in zip(plan.chunks, plan.streams, strict=True):
        res = _simulate_chunk(kinds, plan.draw, pools, instances, h, plan.warm, hi - lo,
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


class _Plan(NamedTuple):
    """A run's draws as its seed sets them: the chunks of trials (``(first, end)``), a
    seed sequence each, the rates drawn (a kind that follows another drawn with it) and
    the warm-up (s) the draws start before the horizon."""

    chunks: list
    streams: list
    draw: np.ndarray
    warm: float


def _plan(kinds, trials: int, h: float, seed) -> _Plan:
    """The draws of a run of ``trials`` trials over ``h`` s from ``seed`` (checked, and
    the events it would sample: :data:`MAX_EVENTS`, :data:`MAX_TRIAL_EVENTS`). They read
    the kinds, the horizon, the trials and the seed, never the spare pools: every pool
    run from one seed sees the same failures."""
    if isinstance(seed, bool) or not is_whole(seed) or not 0 <= seed <= MAX_SEED:
        raise UserError(f"seed must be a whole number from 0 to 2**63 - 1, got {describe(seed)}")
    rates = np.array([k.rate for k in kinds], dtype=float)
    # events as the loss system and the intervals see them: one per cell a failure touches
    lam = float(np.dot(rates, [k.cells for k in kinds])) if kinds else 0.0
    warm = max([max(k.d_repair, k.hold, k.d_slow, k.d_restart) for k in kinds], default=0.0)
    span = h + warm
    per_trial = lam * span
    if per_trial * trials > MAX_EVENTS:
        # the draws start one repair time before the horizon (the steady state): where
        # that is the longer span, a shorter horizon does not help
        why = (f": the draws start one repair time ({duration_text(warm)}) before the "
               f"horizon ({duration_text(h)}) to begin in the steady state; give fewer "
               f"trials or shorter repair times") if warm > h else \
            ": give fewer trials or a shorter horizon"
        raise UserError(f"{per_trial * trials:.3g} failure events to simulate "
                        f"({counted(trials, 'trial')}); at most {MAX_EVENTS:.0e}{why}")
    if per_trial > MAX_TRIAL_EVENTS:   # fewer trials do not help: one is drawn whole
        why = ("shorter repair times (the draws start one repair time, "
               f"{duration_text(warm)}, before the horizon)") if warm > h else \
            "a shorter horizon"
        raise UserError(f"{per_trial:.3g} failure events in one trial; at most "
                        f"{MAX_TRIAL_EVENTS:.0e} (a trial is drawn whole, at some 350 bytes "
                        f"of memory an event): give {why} or lower failure rates")
    chunk = max(1, int(CHUNK_EVENTS // max(per_trial, 1.0)))
    chunks = [(i, min(trials, i + chunk)) for i in range(0, trials, chunk)]
    streams = np.random.SeedSequence(int(seed)).spawn(len(chunks))
    # a kind that follows another is struck by its failures: drawn once, for the first
    draw = np.where([k.follows for k in kinds], 0.0, rates) if kinds else rates
    return _Plan(chunks, streams, draw, warm)


class _Trace(NamedTuple):
    """One chunk's events, sorted by (trial, time): each one's trial, time (s from the
    horizon's start; negative in the warm-up), kind, pool and failure (its index before
    the sets and followers were spread: one failure's events share it; None where none
    was)."""

    trial: np.ndarray
    t: np.ndarray
    kind: np.ndarray
    pool: np.ndarray
    fid: np.ndarray | None


def _simulate_chunk(kinds, rates, pools, instances, h, warm, n, rng, threshold, grid_s):
    kinds, trace = _draw(kinds, rates, pools, h, warm, n, rng)
    backs = _grants(kinds, trace, pools)
    return _integrate(kinds, trace, backs, instances, h, n, threshold, grid_s)


def _draw(kinds, rates, pools, h, warm, n, rng):
    """One chunk's failures of ``n`` trials drawn from ``rng`` (every draw of the run:
    nothing after reads ``rng``): the kinds they are of (a kind of nothing where there
    are none) and the events as :class:`_Trace`, sorted by (trial, time). Nothing here
    reads the pools' spares, only how many pools and groups there are."""
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
    # after the sets are spread, so that a follower shares its lead's cell (before, it
    # would draw a set of its own: no output reads it, so no test holds this order)
    trial, t, kind, pool, fid = _with_followers(kinds, trial, t, kind, pool)
    slot = np.array([k.group for k in kinds], dtype=np.int64)[kind]
    if (slot >= 0).any():   # group spares: a failure asks its own group's pool, in the
        n_groups = pools.groups   # cell drawn (pool // G)
        pool = np.where(slot >= 0, pool // n_groups * n_groups + slot, pool)
    total = len(t)
    # sort by (trial, time) with one float key (trials are blocks 2 spans apart; within a
    # chunk the key resolves times to better than 0.2 s for any horizon and trial count);
    # stable where kinds follow others, so one failure's events (one moment) keep their
    # kinds' order and its asks of one pool sit side by side, in that order, for
    # _several_asks (best_grant: ties go by that order), as the closed form takes them.
    # Elsewhere the events of one moment are one kind's (a
    # shared part's cells): alike, so their order changes nothing, and the default sort
    # is some 2x faster (14 million events: 0.24-0.48 s against 0.83 s)
    order = np.argsort(trial * (2.0 * span) + (t + warm),
                       kind="stable" if fid is not None else "quicksort")
    trial, t, kind, pool = trial[order], t[order], kind[order], pool[order]
    fid = fid[order] if fid is not None else None
    del order
    return kinds, _Trace(trial, t, kind, pool, fid)


def _grants(kinds, trace, pools):
    """The share of each event's instances back on spares, ``(fd, fs)``: of the down
    and of the slowed it swaps, as the loss system of ``pools``' spares grants them.
    All that the spares change of a run (:mod:`netmodel.study.availability_mc_pools`
    runs many pools on one draw)."""
    trial, t, kind, pool, fid = trace.trial, trace.t, trace.kind, trace.pool, trace.fid
    total = len(t)
    units = np.array([k.units for k in kinds], dtype=np.int64)
    holds = np.array([k.hold for k in kinds])
    cap_pool = np.asarray(pools.reachable, dtype=np.int64)
    u = units[kind]
    # the spares one grant comes in (Kind.grain): a failure short of its units brings
    # back as many whole instances as the free spares hold
    grains = np.array([k.grain for k in kinds], dtype=np.int64)
    partial = bool((grains < units).any())
    gr = grains[kind]
    if partial:   # per kind granted in part a row: the spares it takes of each free count
        rows = np.full(len(kinds), -1, dtype=np.int64)
        split = [j for j, x in enumerate(kinds) if x.grain < x.units]
        rows[split] = np.arange(len(split))
        width = max(kinds[j].units for j in split) + 1
        table = np.array([[kinds[j].take(f) for f in range(width)] for j in split],
                         dtype=np.int64)
    cap = cap_pool[pool]
    granted = np.zeros(total, dtype=bool)
    got = np.zeros(total, dtype=np.int64) if partial else None   # spares granted
    in_part = np.zeros(total, dtype=bool)   # the events granted in part where short
    idx = np.flatnonzero((u > 0) & (gr <= cap))
    if len(idx):
        lane = trial[idx].astype(np.int64) * pools.pools + pool[idx]
        srt = np.argsort(lane, kind="stable")        # keeps time order within a lane
        idx, lane = idx[srt], lane[srt]
        several = None   # one failure's several asks of one pool: one event, best_grant's
        if fid is not None:
            idx, lane, several = _several_asks(kinds, idx, lane, fid, kind, u, cap_pool)
        seen_at = np.zeros(total, dtype=np.int64) if several is not None else None
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
            hh[row, rank] = holds[kind[src]]
            gg = None
            if partial:
                gg = np.full((hi - lo, kmax), -1, dtype=np.int64)
                gg[row, rank] = rows[kind[src]]
            if several is None:
                uu[row, rank] = u[src]
                g = _loss_system(tt, uu, hh, cap_pool[uniq[lo:hi] % pools.pools], c,
                                 grain=None if gg is None else (gg, table))
            else:
                pattern, usum, take = several[:3]
                uu[row, rank] = np.where(pattern[src] >= 0, usum[src], u[src])
                if partial:   # one failure's several asks: each all or nothing
                    gg[row, rank] = np.where(pattern[src] >= 0, -1, rows[kind[src]])
                pp = np.full((hi - lo, kmax), -1, dtype=np.int64)
                pp[row, rank] = pattern[src]
                g, seen = _loss_system(tt, uu, hh, cap_pool[uniq[lo:hi] % pools.pools], c,
                                       (pp, take), None if gg is None else (gg, table))
                seen_at[src] = seen[row, rank]
            granted[src] = g[row, rank] > 0
            if partial:
                got[src] = g[row, rank]
                in_part[src] = (gr[src] < u[src]) if several is None else \
                    (several[0][src] < 0) & (gr[src] < u[src])
            lo = hi
        if several is not None:   # each ask of a failure's several: as best_grant picked
            pattern, _, _, bits, member, lead, j = several
            granted[member] = bits[pattern[lead], seen_at[lead]] >> j & 1 == 1
    joint = np.array([k.joint for k in kinds], dtype=bool)
    if joint.any() and fid is not None:   # an instance spanning groups (no failure drawn:
        # nothing to take back): back only if every pool had its share
        granted = _all_granted(joint, kind, fid, granted)
    # the share of each event's instances back on spares, fd of the down and fs of the
    # slowed it swaps: all or none, else (a failure granted in part) as the step its
    # spares reached says (Kind.steps, Kind.backs: the down first, then the slowed); a
    # failure's several asks of one pool (each all or nothing) and spanning instances
    # (Kind.per 0) as granted
    f = granted.astype(float)
    fd = fs = f
    if partial:
        fd, fs = f.copy(), f.copy()
        for j in split:
            x, sel = kinds[j], in_part & (kind == j)
            if sel.any():   # the step its spares reached: the spares taken rise by step
                step = np.searchsorted([t for t, _, _ in x.steps], got[sel])
                backs = np.array([x.backs(g) for g in range(len(x.steps))])
                fd[sel], fs[sel] = backs[step, 0], backs[step, 1]
    return fd, fs


def _integrate(kinds, trace, backs, instances, h, n, threshold, grid_s, short=False):
    """The capacity lost per trial from the events of ``trace`` and their shares back
    on spares ``backs`` (:func:`_grants`): :func:`_simulate_chunk`'s figures, or with
    ``short`` the mean capacity and the share of time below ``threshold`` per trial
    alone (the same floats; no grid, band or events' losses worked out)."""
    trial, t, kind, fid = trace.trial, trace.t, trace.kind, trace.fid
    fd, fs = backs
    # intervals: (start, end, weight) per event
    down = np.array([k.down for k in kinds], dtype=float)[kind]
    # capacity lost in instances' worth (token-rate weighted; the count where all alike)
    worth = np.array([k.down_worth for k in kinds], dtype=float)[kind]
    slow = np.array([k.slow for k in kinds], dtype=float)[kind]
    restored = np.array([k.restored for k in kinds], dtype=float)[kind]
    d_rep = np.array([k.d_repair for k in kinds])[kind]
    d_swap = np.array([k.d_swap for k in kinds])[kind]
    hold = np.array([k.hold for k in kinds])[kind]
    d_slow = np.array([k.d_slow for k in kinds])[kind]
    sw = np.array([k.slow_swapped for k in kinds], dtype=float)[kind]
    sr = np.array([k.slow_restored for k in kinds], dtype=float)[kind]
    # the slowed instances that restart first (Kind.restart: NCCL has no link failover),
    # lost for d_restart from the failure: where that is the swap's span (as the kinds
    # are built: the restart is a swap's span) added to the swapped slowed ones' interval
    # (no more breakpoints to sort), else an interval of its own for those events alone
    k_rst = np.array([k.restart for k in kinds], dtype=float)
    k_drst = np.array([k.d_restart for k in kinds])
    fold = (k_rst > 0) & (k_drst == np.array([k.d_swap for k in kinds]))
    swap_w = fs * sw + np.where(fold[kind], k_rst[kind], 0.0) if fold.any() else fs * sw
    rst_at = np.flatnonzero(((k_rst > 0) & ~fold)[kind]) \
        if ((k_rst > 0) & ~fold).any() else np.zeros(0, int)
    rst = k_rst[kind[rst_at]]
    d_rst = k_drst[kind[rst_at]]
    # the share f back on spares is down until the swap, the rest (``wait``, where only
    # some came back) until the repair
    first_end = np.where(fd > 0, t + d_swap, t + d_rep)
    first = np.where(fd > 0, fd * worth, worth)
    wait = np.where((fd > 0) & (fd < 1), (1.0 - fd) * worth, 0.0)
    granted_restored = fd * restored
    stay = slow - sw + (1.0 - fs) * sw    # slowed until the repair
    parts_t, parts_x, parts_w = [], [], []
    for a, b, w in ((t, first_end, first), (t + d_swap, t + hold, granted_restored),
                    (t, t + d_slow, stay), (t, t + d_swap, swap_w),
                    (t + d_swap, t + hold, fs * sr), (t, t + d_rep, wait),
                    (t[rst_at], t[rst_at] + d_rst, rst)):
        a, b = np.clip(a, 0, h), np.clip(b, 0, h)
        keep = (w > 0) & (b > a)
        tr = (trial if w is not rst else trial[rst_at])[keep]
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
    # outages that overlap add (first-order), but never past the whole cluster
    level = np.clip(level - _trial_offsets(level, bt), 0.0, instances)
    lost_int = np.bincount(bt, weights=level * dur, minlength=n)
    limit = (1.0 - threshold) * instances
    below_t = np.bincount(bt, weights=np.where(level > limit + 1e-9, dur, 0.0), minlength=n)
    mean = 1.0 - lost_int / (h * instances)
    if short:
        return mean, below_t / h
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
    ev_lost = (first * (first_end - t) + wait * d_rep
               + granted_restored * np.maximum(hold - d_swap, 0.0)
               + stay * d_slow + fs * (sw * d_swap + sr * np.maximum(hold - d_swap, 0.0))
               ) / HOUR
    if (k_rst > 0).any():   # every restart, folded or apart
        at = np.flatnonzero((k_rst > 0)[kind])
        ev_lost[at] += k_rst[kind[at]] * k_drst[kind[at]] / HOUR
    # a wait for repair where any down instance waits
    is_down, waits = down > 0, (down > 0) & (fd < 1.0)
    if fid is not None:   # one failure's events in one cell (a kind, its followers) are one
        _, first, inv = np.unique(fid, return_index=True, return_inverse=True)
        m = len(first)
        trial, t = trial[first], t[first]   # its events share its trial and time
        is_down = np.bincount(inv, weights=is_down, minlength=m) > 0
        waits = np.bincount(inv, weights=waits, minlength=m) > 0
        ev_lost = np.bincount(inv, weights=ev_lost, minlength=m)
    inside = t >= 0
    n_down = np.bincount(trial[inside & is_down], minlength=n)
    denied = np.bincount(trial[inside & waits], minlength=n)
    n_ev = np.bincount(trial[inside], minlength=n)
    return mean, below_t / h, n_down, denied, n_ev, band, ev_lost[inside][:100_000]


def _several_asks(kinds, idx, lane, fid, kind, u, cap_pool):
    """One failure's several asks of one pool (``idx``: events sorted by lane, ``lane``
    their lanes; one failure's events of a lane side by side in the kinds' order) as one
    event, its first: ``idx`` and ``lane`` without the others, and ``(pattern, usum,
    take, bits, member, lead, j)``: per event index the pattern of a first's asks (-1
    elsewhere) and their spares summed; per pattern and free spares the spares
    :func:`~netmodel.study.availability_kinds.best_grant` grants and which asks (bit
    ``j``); each such failure's events (``member``), its first (``lead``) and place
    (``j``). None where no failure asks a pool more than once."""
    same = (lane[1:] == lane[:-1]) & (fid[idx[1:]] == fid[idx[:-1]])
    if not same.any():
        return idx, lane, None
    head = np.r_[True, ~same]
    gid = np.cumsum(head) - 1
    size = np.bincount(gid)
    starts = np.flatnonzero(head)
    j = np.arange(len(idx)) - starts[gid]
    mat = np.full((len(size), int(size.max())), -1, dtype=np.int64)
    mat[gid, j] = kind[idx]
    keys, inv = np.unique(mat[size > 1], axis=0, return_inverse=True)
    vals = ask_values(kinds)
    top = int(cap_pool.max())
    take = np.zeros((len(keys), top + 1), dtype=np.int64)
    bits = np.zeros((len(keys), top + 1), dtype=np.int64)
    for p, key in enumerate(keys.tolist()):
        ks = [k for k in key if k >= 0]
        us, vs = tuple(kinds[k].units for k in ks), tuple(vals[k] for k in ks)
        for f in range(top + 1):
            picks = best_grant(us, vs, f)
            take[p, f] = sum(x for x, ok in zip(us, picks, strict=True) if ok)
            bits[p, f] = sum(1 << i for i, ok in enumerate(picks) if ok)
    pattern = np.full(len(kind), -1, dtype=np.int64)
    leads = idx[starts]
    pattern[leads[size > 1]] = inv.ravel()
    usum = np.zeros(len(kind), dtype=np.int64)
    usum[leads] = np.bincount(gid, weights=u[idx]).astype(np.int64)
    many = size[gid] > 1
    return idx[head], lane[head], (pattern, usum, take, bits, idx[many],
                                   leads[gid[many]], j[many])


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


def _with_followers(kinds, trial, t, kind, pool):
    """Each event of a kind that others follow (one failure touching several groups'
    instances, :attr:`Kind.follows`) with one event of each follower at the same moment in
    the same pool, whose slot the follower's group then sets (the same cell); nothing
    changes where no kind follows another. Also each event's failure (its index before:
    one per cell a failure touches), None where nothing changed."""
    follows = np.array([k.follows for k in kinds], dtype=bool)
    if not len(kind) or not follows.any():
        return trial, t, kind, pool, None
    n = np.zeros(len(kinds), dtype=np.int64)   # followers after each kind
    for k in range(len(kinds) - 2, -1, -1):
        n[k] = n[k + 1] + 1 if follows[k + 1] else 0
    n = np.where(follows, 0, n)
    m = n[kind] + 1
    rep = np.repeat(np.arange(len(kind)), m)
    j = np.arange(len(rep)) - np.repeat(np.cumsum(m) - m, m)
    return trial[rep], t[rep], kind[rep] + j, pool[rep], rep


def _all_granted(joint, kind, fid, granted):
    """``granted`` where an event of a kind whose instances span groups (the ``joint``
    kinds after it ask the other groups' pools for their shares, :attr:`Kind.joint`) is
    granted only if each of its failure's shares was too (the shares' own grants stand:
    their spares are held to the repair)."""
    anchor = np.arange(len(joint))   # each kind's: itself, or the nearest non-joint before
    for k in range(1, len(joint)):
        if joint[k]:
            anchor[k] = anchor[k - 1]
    key = fid * len(joint) + anchor[kind]
    refused = np.unique(key[joint[kind] & ~granted])
    return granted & ~(~joint[kind] & np.isin(key, refused))


def _trial_offsets(level: np.ndarray, trial: np.ndarray) -> np.ndarray:
    """The running sum carried into each trial from the trials before it (``level`` is a
    cumulative sum over trials sorted one after another)."""
    if not len(level):
        return level
    starts = np.r_[True, trial[1:] != trial[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(len(level)), 0))
    before = np.r_[0.0, level[:-1]]
    return before[first]
