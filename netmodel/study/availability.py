"""Availability over time: delivered capacity of a scenario's cluster under failures,
repairs and hot spares, by a seeded Monte Carlo and by closed forms side by side.

The model is split by job: :mod:`netmodel.study.availability_kinds` states it (every
symmetry class of components an event kind: its failures a second, the instances each
failure takes down or slows, the spares it asks of its pool and for how long) and holds the
default capacity threshold; :mod:`netmodel.study.availability_mc` runs it as a seeded Monte
Carlo (:func:`~netmodel.study.availability_mc.simulate`) and
:mod:`netmodel.study.availability_analytic` in closed form
(:func:`~netmodel.study.availability_analytic.analytic`). This module runs both for a
scenario's cluster (:func:`availability`: an :class:`Availability`, with the closed forms
without spares beside), sizes the spare pool (:func:`spares_needed`, :func:`spare_curve`)
and writes the run's files (:func:`availability_files`).

>>> a = availability("lite-flat", "Llama-3-70B", "decode", spares=8, trials=50,
...                  horizon="1y", seed=1)
>>> a.pools.reachable_total, a.analytic.mean > a.no_spares.mean
(8, True)
>>> abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci + 1e-9
True
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from compute.search import DEFAULT_MAX_BATCH
from compute.units import counted
from compute.validate import (
    MAX_WHOLE,
    ZeroAllowed,
    describe,
    flag,
    is_whole,
    number,
    number_text,
    read_number,
)
from netmodel.study.availability_analytic import Analytic, ClosedForms, analytic
from netmodel.study.availability_busy import fallback_words
from netmodel.study.availability_kinds import (
    QUANTILE,
    THRESHOLD,
    check_quantile,
    check_threshold,
    event_kinds,
)
from netmodel.study.availability_mc import MonteCarlo, check_run, simulate
from netmodel.study.availability_mc_pools import PoolRuns
from netmodel.study.progress import NO_PROGRESS, check_progress
from netmodel.study.reliability_catalog import HOUR, duration_text, percent
from netmodel.study.reliability_cluster import Cluster, build_cluster, check_cluster
from netmodel.study.reliability_recovery import by_group
from netmodel.study.reliability_spares import SparePools, check_placement, spare_pools
from netmodel.study.reliability_timings import recovery_times
from netmodel.study.summary_words import sig3

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from compute.phases import Slo, Workload
    from compute.roofline_options import RooflineOptions
    from netmodel.study.progress import ProgressLike
    from netmodel.study.reliability_catalog import Catalog
    from netmodel.study.scenarios import Scenario

__all__ = ["Availability", "availability", "availability_files", "parse_spares", "spare_curve",
           "spares_needed", "spares_needed_on"]


def parse_spares(text: int | str, gpus: int) -> int:
    """A spare count from ``"16"``, ``"2%"`` (of the cluster's GPUs, rounded up) or an
    int; more spares than the cluster has GPUs is refused.

    >>> parse_spares("2%", 16384), parse_spares(8, 128)
    (328, 8)
    """
    gpus = number("", "gpus", gpus, minimum=1, maximum=MAX_WHOLE, integer=True)
    if isinstance(text, bool):
        raise UserError(f"spares must be a count or a percentage, got {text!r}")
    allowed = f"allowed: 0 to {gpus:,} (100%), a pool as large as the cluster"
    if is_whole(text):
        n = int(text)
    else:
        s = number_text("spares", str(text)).strip()   # a refusal names all of it
        try:   # the one number grammar ('٨', '1_0' refused; '+8', '1e1' read)
            if s.endswith("%"):
                pct = read_number("spares", s[:-1],   # 0% the default
                                  allowed=ZeroAllowed("a percentage >= 0"))
                if pct is None or math.isnan(pct):
                    raise ValueError
                if pct == math.inf:   # '1e400%': past the range, no count to name
                    raise UserError(f"spares {text!r} exceed the cluster's {gpus:,} GPUs; "
                                    f"{allowed}")
                # a negative share is below the range ('-0.1%' is no pool of 0), said so
                n = math.ceil(pct / 100 * gpus - 1e-9) if pct >= 0 else -1
            else:
                n = read_number("spares", s, whole=True)
                if n is None:
                    raise ValueError
        except ValueError as exc:
            if isinstance(exc, UserError):
                raise
            raise UserError(f"spares {text!r} must be a whole number or a percentage such as "
                            f"2%; {allowed}") from None
    if n < 0:   # the range said alike below it and above
        raise UserError(f"spares {text!r} is below 0; {allowed}")
    if n > gpus:
        raise UserError(f"spares {text!r} ({n:,}) exceed the cluster's {gpus:,} GPUs; {allowed}")
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
        """Mean delivered tokens/s (Monte Carlo) over every SM bought: spares and GPUs in
        no instance (idle) included
        (:meth:`~netmodel.study.reliability_cluster.Cluster.tokens_per_s_per_sm`)."""
        return self.cluster.tokens_per_s_per_sm(self.mc.mean, self.pools.spares)

    @property
    def serving_gpus(self) -> int:
        """GPUs in an instance: the cluster's less those in none (a cell of 128 holds 5
        instances of 24, 120 GPUs, and 8 idle)."""
        c = self.cluster
        return c.gpus - len(c.idle) * c.cells

    @property
    def healthy_per_sm(self) -> float:
        """Healthy tokens/s over every SM of the cluster's GPUs, idle ones included (no
        spares): :attr:`serving_per_sm` x :attr:`serving_gpus` / ``gpus``."""
        return self.cluster.tokens_per_s_per_sm()

    @property
    def serving_per_sm(self) -> float:
        """Healthy tokens/s over the SMs of the GPUs serving (in an instance): the
        tokens/s/SM ``netmodel compare`` reads for the same configuration where every
        instance serves alike."""
        c = self.cluster
        return c.cluster_tokens_per_s / (self.serving_gpus * c.gpu.sms)

    def to_dict(self) -> dict:
        c = self.cluster
        return {"scenario": c.scenario.label, "model": c.model.name,
                "phase": c.workload.phase, "gpus": c.gpus, "cells": c.cells, "tp": c.tp,
                "config": c.parallelism.label, "instance_gpus": c.instance_gpus,
                "batch": c.batch, "instances": c.instances_total,
                "tokens_per_s": c.cluster_tokens_per_s, "threshold": self.threshold,
                "spares": self.pools.to_dict(), "swap_s": recovery_times(c).swap_s(),
                "serving_gpus": self.serving_gpus,
                "goodput_tokens_per_s_per_sm": self.goodput_per_sm,
                "healthy_tokens_per_s_per_sm": self.healthy_per_sm,
                "serving_tokens_per_s_per_sm": self.serving_per_sm,
                "monte_carlo": self.mc.to_dict(), "analytic": self.analytic.to_dict(),
                "analytic_no_spares": self.no_spares.to_dict(),
                "kinds": [{**k.to_dict(), "path": pool_path(k, self.pools)}
                          for k in self.kinds],
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
            f"{c.scenario.label}, {c.model.name} {c.workload.phase}: {counted(c.gpus, 'GPU')}, "
            f"{c.parallelism.label}, {counted(c.instances_total, 'instance')}; spares "
            f"{p.spares:,} ({p.placement}, {p.reachable_total:,} reachable); "
            f"{counted(m.trials, 'trial')} x "
            f"{duration_text(m.horizon_s)}, seed {m.seed}",
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
            f"goodput {sig3(self.goodput_per_sm)} tokens/s/SM over every SM bought, spares and "
            f"idle GPUs included (healthy {sig3(self.healthy_per_sm)})",
            f"healthy {sig3(self.serving_per_sm)} tokens/s/SM over the SMs serving "
            f"({self.serving_gpus:,} of {c.gpus:,} GPUs in instances; compare's figure); "
            f"swap {recovery_times(c).swap_s():.3g} s"]
        if p.spares > 0 and p.reachable_total == 0:
            lines.append(f"note: none of the {p.spares:,} spares placed by {p.placement} is "
                         f"reachable: the fabric has no free port to wire one there (global "
                         f"spares need none)")
        if p.placement == "global" and 0 < p.reachable_total < c.instance_gpus:
            lines.append(f"note: global spares re-create whole instances of "
                         f"{c.instance_gpus:,} GPUs; {p.reachable_total:,} re-create none "
                         f"(give {c.instance_gpus:,} or more, or place them by pod)")
        if a.fallback:
            lines.append(f"note: the analytic column {fallback_words(a.fallback)}: an "
                         f"approximation (the Monte Carlo grants as the model says)")
        if a.threshold_low:
            lines.append(f"note: the analytic time below {percent(self.threshold)} can read "
                         f"low here: spares are refused some of the time and it takes "
                         f"several failures at once to fall below, which it takes as "
                         f"refused apart though a busy pool refuses the next ones too "
                         f"(up to 18 times below the Monte Carlo in the cases measured); "
                         f"read the Monte Carlo's")
        if c.batch_at_limit:
            lines.append(c.batch_limit_note)
        if z.overlap > 0.05:
            lines.append(f"warning: {1 - z.mean:.0%} of the capacity is lost without spares; "
                         f"outages overlap so often (their losses in progress add up to "
                         f"{z.overlap:.3g} times the cluster's, capped at all of it) that the "
                         f"additive model overstates the loss (it is first-order)")
        return "\n".join(lines)


def pool_path(kind, pools) -> str:
    """``kind``'s recovery path as the spare pool ``pools`` lets it run: the fabric's path
    (:func:`~netmodel.study.reliability_recovery.recovery`, which assumes enough free spares
    and counts only the fabric's free ports) where the reachable spares of the largest
    pool it draws on (:attr:`~netmodel.study.reliability_spares.SparePools.reachable`: a
    pool's spares the fabric has ports for; with group spares its own group's) hold the
    whole ask, else, for a failure re-creating whole instances of ``kind.per`` spares
    each, as many as they hold (lite-flat's host takes 2 instances of 16: a pool of 15
    re-creates none, where the fabric's 16 ports would hold one). A failure whose ask is all or nothing (:attr:`~netmodel.study.
    availability_kinds.Kind.pieces` 1) and larger than the pool is never granted: global
    spares re-create a GPU's whole instance, 16 spares, which 8 never hold.

    >>> from netmodel.study.availability_kinds import Kind
    >>> from netmodel.study.reliability_spares import SparePools
    >>> host = Kind("host", "host0", 1e-8, down=2, slow=0.0, units=32, restored=0.0,
    ...             d_repair=1.0, d_swap=0.1, hold=1.0, d_slow=1.0, per=16,
    ...             path="re-create 1 of 2 on 16 spares (16 free port(s); the rest repair)")
    >>> pool_path(host, SparePools("pod", 15, 1, (15,)))
    're-create 0 of 2 (16 spares an instance, 15 reachable; all repair)'
    >>> pool_path(host, SparePools("pod", 16, 1, (16,)))
    're-create 1 of 2 on 16 spares (16 reachable; the rest repair)'
    >>> pool_path(host, SparePools("pod", 32, 1, (32,))) == host.path
    True
    >>> from dataclasses import replace
    >>> gpu = replace(host, cls="gpu-die", down=1, units=16, per=0,
    ...               path="re-create on 16 spares")
    >>> pool_path(gpu, SparePools("global", 8, 1, (8,)))
    'none: 16 spares asked, 8 reachable; all repair (with enough: re-create on 16 spares)'
    >>> # an OCS of lite-ocs slows all 8 instances; global spares re-create each on 16
    >>> ocs = replace(host, cls="ocs", down=0, slow=2.72, slow_swapped=2.72, units=128,
    ...               path="swap 8 of 8 slowed: re-create on 16 spares")
    >>> pool_path(ocs, SparePools("global", 40, 1, (40,)))
    'swap 2 of 8 slowed on 32 spares (16 an instance, 40 reachable; the rest stay slow)'
    >>> # group spares: the host's own group's pool (group 1: 8), not the largest (32)
    >>> pool_path(replace(host, group=1), SparePools("group", 40, 2, (32, 8), 2))
    're-create 0 of 2 (16 spares an instance, 8 reachable; all repair)'
    """
    # the pools its failures draw on: its group's in every cell (group placement), else all
    mine = [r for i, r in enumerate(pools.reachable)
            if kind.group < 0 or i % pools.groups == kind.group]
    top = max(mine, default=0)
    if kind.units <= 0 or top >= kind.units:
        return kind.path
    if kind.pieces <= 1:   # all or nothing: never granted from this pool
        return (f"none: {kind.units} spares asked, {top} reachable; all repair (with "
                f"enough: {kind.path})")
    if kind.per > 0 and kind.down == 0 and kind.slow_swapped > 0:
        # slowed instances only, each swapped on per spares: floor(top / per) of them
        n = min(kind.pieces, top // kind.per)
        return (f"swap {n} of {kind.pieces} slowed on {n * kind.per} spares ({kind.per} an "
                f"instance, {top} reachable; {'the rest' if n else 'all'} stay slow)")
    if kind.per <= 0 or not kind.path.startswith("re-create"):
        return kind.path
    n = min(kind.down, top // kind.per)
    if n == 0:
        return (f"re-create 0 of {kind.down} ({kind.per} spares an instance, {top} "
                f"reachable; all repair)")
    return (f"re-create {n} of {kind.down} on {n * kind.per} spares ({top} reachable; "
            f"the rest repair)")


def _components_per_kind(cluster, kinds) -> dict:
    """Per kind, its components in the cluster: a cell's times the copies the kind's
    cells hold (:meth:`~netmodel.study.reliability_cluster.Cluster.copies`: one per cell,
    one per set of a shared switch, a shared link's share; a shared part's kind covers
    ``sets`` sets of ``cells`` cells); a ``group`` kind's, its group's part of its class
    (:func:`~netmodel.study.reliability_recovery.by_group`)."""
    effects = cluster.effects()
    if any(x.group >= 0 for x in kinds):
        effects = [e for e0 in effects for _, e, *_ in by_group(cluster, e0)]
    by = {(e.cls, e.example): e for e in effects}
    return {k: None if by.get((x.cls, x.example)) is None
            else by[x.cls, x.example].components
            * cluster.copies(by[x.cls, x.example], x.cells * x.sets if x.sets else None)
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
    trials, _ = check_run(trials, horizon)
    threshold = check_threshold(threshold)
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


#: Most spare counts one :func:`spare_curve` solves (each a closed-form solve of the
#: cluster's failure classes, about a millisecond), counted before any is solved:
#: ``range(10**9)`` ran on. ``NETMODEL_MAX_SPARE_COUNTS`` raises it.
MAX_SPARE_COUNTS = 10_000


def _spare_counts(counts: object) -> list[int]:
    """``counts`` as whole spare counts >= 0 (a pool may exceed the cluster's GPUs: one
    that replaces a whole cluster's failure), at most :data:`MAX_SPARE_COUNTS` of them,
    counted before any is solved."""
    from compute.limits import check, setting

    if isinstance(counts, str | bytes) or not isinstance(counts, Iterable) \
            or isinstance(counts, np.ndarray) and counts.ndim == 0:   # np.array(4): no list
        raise UserError(f"counts must be a list of spare counts, got {describe(counts)}")
    limit = setting("NETMODEL_MAX_SPARE_COUNTS", MAX_SPARE_COUNTS)
    taken = list(itertools.islice(counts, limit + 1))   # a generator counted as it is read
    size = len(counts) if hasattr(counts, "__len__") else len(taken)
    check("spare_curve", "spare counts", size, MAX_SPARE_COUNTS, "NETMODEL_MAX_SPARE_COUNTS",
          "give fewer counts (each a closed-form solve)")
    bad = next((n for n in taken if isinstance(n, bool) or not is_whole(n) or n < 0), None)
    if bad is not None:
        raise UserError(f"counts must be whole numbers of spares >= 0, got {describe(bad)}")
    return [int(n) for n in taken]


def _check_limit(limit: object) -> int | None:
    """``limit`` of :func:`spares_needed`, the largest pool searched: a whole number of
    GPUs or None (none but the fabric's); NaN, -1 and True were taken (a pool of at most
    -1 GPUs), text and arrays raised TypeError or ValueError comparing them."""
    if limit is None:
        return None
    return number("", "limit", limit, minimum=0, maximum=MAX_WHOLE, integer=True)


def spares_needed(cluster: Cluster, placement: str = "pod", *, threshold: float = THRESHOLD,
                  quantile: float = QUANTILE, horizon: str | float = "1y", trials: int = 200,
                  seed: int = 0, limit: int | None = None) -> int | None:
    """The smallest spare pool (GPUs, split over the pools of ``placement``) that keeps
    at least ``threshold`` of the capacity at least ``quantile`` of the time (Monte Carlo,
    same seed for every size: each size's time below is ``simulate(...).below_threshold``
    of that pool, all sizes run on one draw of the failures, :class:`~netmodel.study.
    availability_mc_pools.PoolRuns`); None when no pool the fabric can hold does. Searched
    by :func:`_smallest_pool`, which does not take the time below to fall as the pool
    grows (with grants in part it need not)."""
    cluster = check_cluster(cluster, default=False)   # a 5 raised deep inside
    placement = check_placement(placement)
    threshold, quantile = check_threshold(threshold), check_quantile(quantile)
    limit = _check_limit(limit)   # before the runs
    runs = PoolRuns(event_kinds(cluster, placement), cluster.instances_total,
                    horizon=horizon, trials=trials, seed=seed, threshold=threshold,
                    pools=spare_pools(cluster, 0, placement))
    return spares_needed_on(runs, cluster, placement, quantile=quantile, limit=limit)


def spares_needed_on(runs: PoolRuns, cluster: Cluster, placement: str, *, quantile: float,
                     limit: int | None = None) -> int | None:
    """:func:`spares_needed` on ``runs``, the run of ``cluster``'s kinds at ``placement``
    (its seed, horizon, trials and threshold), which may have run other pools already
    (:func:`~netmodel.study.reliability_summary.reliability_summary` asks its reference
    pools of the same draw)."""
    need = 1.0 - quantile
    limit = _check_limit(limit)

    def accepts(sizes: list[int]) -> list[bool]:
        return [b <= need for b in runs.below([spare_pools(cluster, s, placement)
                                               for s in sizes])]

    per = spare_pools(cluster, 0, placement).pools
    cap = spare_pools(cluster, cluster.gpus, placement).reachable_total
    return _smallest_pool(accepts, per, min(cap, limit if limit is not None else cap,
                                            cluster.gpus))


def _smallest_pool(accepts, per: int, top: int) -> int | None:
    """The smallest pool of whole spares per pool (a multiple of ``per``) up to ``top``
    that ``accepts`` (a list of pools -> whether each is accepted) accepts, where a larger
    pool need not be accepted when a smaller one is: with grants in part a failure that
    finds one spare more may take more of them and leave later ones short (the exact
    chain's instances lost a second rise from 11 to 12 spares at (load, n, g) = (4, 3, 1),
    (2, 4, 3): 13.290 -> 13.334), the Monte Carlo's time below moves by noise between
    sizes, and Kaufman-Roberts' recursion past the spare chain's limit bumps where the
    exact chain does not (:func:`~netmodel.study.availability_busy._busy_recursion`). 0
    where accepted; else the pools ``per``, ``2 per``, ``4 per``, ... then ``top``, one at
    a time, until one is accepted (a bound; None where none is), then every multiple of
    ``per`` below the bound not yet tried, asked at once: the first accepted is the
    answer, so that it is accepted and no smaller pool is (a bisection between the bound
    and the last refused pool found a larger one where the curve bumps). None answers
    only that the pools tried (the doubling ones and ``top``) are all refused.

    >>> accepted = {3, 5, 6, 7, 8}   # the former bisection of 4 .. 8 found 5
    >>> asked = []
    >>> def accepts(sizes):
    ...     asked.append(sizes)
    ...     return [s in accepted for s in sizes]
    >>> _smallest_pool(accepts, 1, 8), asked
    (3, [[0], [1], [2], [4], [8], [3, 5, 6, 7]])
    >>> def from_12(sizes):
    ...     return [s >= 12 for s in sizes]
    >>> _smallest_pool(from_12, 4, 30), _smallest_pool(lambda sizes: [False] * len(sizes), 4, 30)
    (12, None)
    """
    if accepts([0])[0]:
        return 0
    if top <= 0:
        return None
    tried, hi = set(), per
    while not accepts([min(hi, top)])[0]:   # a bound: the doubling pools, then the largest
        tried.add(min(hi, top))
        if hi >= top:
            return None
        hi *= 2
    bound = min(hi, top)
    rest = [s for s in range(per, bound, per) if s not in tried]
    return next((s for s, ok in zip(rest, accepts(rest) if rest else [], strict=True) if ok),
                bound)


def spare_curve(cluster: Cluster, placement: str, counts: Iterable[int] | None = None, *,
                threshold: float = THRESHOLD, fallback: bool = False) -> tuple:
    """Closed-form availability against the spare pool: ``(spares as % of the cluster's
    GPUs, mean capacity, share of time below threshold)`` for each count (default: 0 to
    the most the fabric holds, or 8% of the GPUs, in at most 16 steps of whole spares
    every pool can use: where failures take spares in whole instances' worth, ``global``
    placement, a multiple of that worth, so that no point holds spares that serve
    nothing and the x axis reads the spares bought that count); with ``fallback`` a
    fourth array, true where the closed form took a fallback past the spare chain's
    limit (:attr:`~netmodel.study.availability_analytic.Analytic.fallback`: an
    approximation, which :func:`~netmodel.study.reliability_plots.plot_spares` marks)."""
    cluster = check_cluster(cluster, default=False)   # a 5 raised deep inside
    placement, threshold = check_placement(placement), check_threshold(threshold)
    if counts is not None:
        counts = _spare_counts(counts)
    kinds = event_kinds(cluster, placement)
    per = spare_pools(cluster, 0, placement).pools
    if counts is None:  # up to 8% of the GPUs, or four of the largest failure's needs
        top = spare_pools(cluster, cluster.gpus, placement).reachable_total
        needs = [k.units for k in kinds if k.units > 0]
        need = max(needs, default=0) * per
        quantum = per * (math.gcd(*needs) if needs else 1)
        top = min(top, max(quantum, math.ceil(0.08 * cluster.gpus), 4 * need))
        step = max(quantum, math.ceil(top / 16 / quantum) * quantum)
        counts = list(range(0, top + 1, step)) if top else [0]
    pct, mean, below, past = [], [], [], []
    for n in counts:   # the mean and the time below alone (no threshold_low worked out)
        a = ClosedForms(kinds, spare_pools(cluster, int(n), placement),
                        cluster.instances_total, threshold)
        pct.append(100.0 * n / cluster.gpus)
        mean.append(a.mean)
        below.append(a.below_threshold)
        past.append(bool(a.fallback))
    out = np.array(pct), np.array(mean), np.array(below)
    return (*out, np.array(past, dtype=bool)) if fallback else out


def availability_files(avail: Availability, *, plot: bool = True,
                       curves: dict[str, tuple] | None = None) -> dict:
    """The availability run's files: ``availability.json``, ``availability.csv`` (the
    capacity band over time) and, with ``plot``, ``availability_capacity.png``,
    ``availability_event_loss.png`` and ``availability_spares.png`` (``curves``: label ->
    :func:`spare_curve`; default: this scenario, one line per placement it supports)."""
    plot = flag("availability_files", "plot", plot)   # 'no' drew the figures
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
                        c, p, threshold=avail.threshold, fallback=True)
                except UserError:  # no group labels
                    continue
        marks = [(c.scenario.label, 100.0 * avail.pools.spares / c.gpus, avail.mc.mean,
                  avail.mc.below_threshold)]
        files["availability_capacity.png"] = lambda path: rp.plot_capacity(avail, path)
        files["availability_event_loss.png"] = lambda path: rp.plot_event_loss(avail, path)
        files["availability_spares.png"] = lambda path: rp.plot_spares(
            curves, path, threshold=avail.threshold, quantile=QUANTILE, marks=marks)
    return files
