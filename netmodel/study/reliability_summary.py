"""The reliability columns of a scenario: per GPU failure, the SMs out of service in
hardware and in software; availability and goodput per SM without and with a reference
spare pool; the smallest pool that keeps the capacity above a threshold; and how these
move across the failure catalog's plausible ranges. Built on the availability model
(:mod:`netmodel.study.availability`); used by ``compare --reliability`` and the study's
blast-radius part.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from netmodel.study.availability import parse_spares, spares_needed_on
from netmodel.study.availability_analytic import ClosedForms
from netmodel.study.availability_kinds import (
    QUANTILE,
    THRESHOLD,
    check_quantile,
    check_threshold,
    event_kinds,
)
from netmodel.study.availability_mc import check_run
from netmodel.study.availability_mc_pools import PoolRuns
from netmodel.study.reliability_catalog import HOUR
from netmodel.study.reliability_cluster import YEAR, Cluster, build_cluster, check_cluster
from netmodel.study.reliability_spares import spare_pools
from netmodel.study.reliability_timings import recovery_times
from topologies.failure_domains import GPU_CLASSES

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from compute.phases import Slo, Workload
    from compute.roofline_options import RooflineOptions
    from netmodel.study.fabric_search import FabricSearch
    from netmodel.study.reliability_catalog import Catalog
    from netmodel.study.scenarios import Scenario

__all__ = ["SUMMARY_COLUMNS", "ReliabilitySummary", "reliability_summary", "sensitivity"]


@dataclass(frozen=True)
class ReliabilitySummary:
    """What :func:`reliability_summary` gives one (scenario, model, phase).

    Per GPU failure (die or package, weighted by rate), the SMs out of service on the
    hardware (the GPU) and in software (every GPU of its instance). Mean delivered share
    of capacity and goodput (tokens/s over every SM bought, spares included) without
    spares and with a reference pool (``spares`` GPUs at ``spare_placement``, the better
    of pod and global); the smallest pool that keeps ``threshold`` of the capacity at
    least ``quantile`` of the time, and where it sits (None: no pool the fabric can
    reach does). Monte Carlo figures (``trials`` x ``horizon``, one seed).

    The tokens/s/SM figures are named by the SMs they divide by, as
    :class:`~netmodel.study.availability.Availability` names them (``compare
    --reliability`` takes its columns from these fields): ``healthy_`` and ``goodput_``
    over every SM bought (the cluster's GPUs, idle ones included, and for ``goodput_``
    with spares the pool's), ``healthy_`` at full health, ``goodput_`` at the mean
    delivered capacity; compare's own ``tokens_per_s_per_sm`` is over the SMs serving
    (availability's ``serving_tokens_per_s_per_sm``), ``healthy_`` x GPUs / serving
    GPUs."""

    scenario: str
    model: str
    phase: str
    gpus: int
    tp: int
    pp: int             #: pipeline stages of the instance (its GPUs: ``tp x pp``)
    ep: int             #: expert-parallel groups per stage
    attention_dp: int   #: attention data-parallel groups per stage
    sms_down_per_gpu_failure_hw: float
    sms_down_per_gpu_failure_sw: float
    gpu_failures_per_year: float
    availability: float
    goodput_tokens_per_s_per_sm: float
    healthy_tokens_per_s_per_sm: float
    spares: int
    spare_placement: str
    availability_with_spares: float
    goodput_tokens_per_s_per_sm_with_spares: float
    spares_needed: int | None
    spares_needed_placement: str | None
    threshold: float
    quantile: float
    #: the fallbacks the closed form took past the spare chain's limit for any figure of
    #: the summary, the spares-needed search included (each an approximation:
    #: :attr:`~netmodel.study.availability_analytic.Analytic.fallback`'s names, sorted);
    #: () where it took none or the figures are Monte Carlo ones
    analytic_fallback: tuple = ()
    #: whether the closed-form time below ``threshold`` that decided ``spares_needed``
    #: (the run of the pool found, at its placement) is in the regime where it reads low
    #: (:attr:`~netmodel.study.availability_analytic.Analytic.threshold_low`): the count
    #: may then be low, and availability's Monte Carlo tells; False for Monte Carlo
    #: figures, and where no pool was found (nothing was accepted on that reading)
    threshold_low: bool = False

    def to_dict(self) -> dict:
        d = asdict(self)
        d["analytic_fallback"] = list(self.analytic_fallback)
        return d


def sensitivity(cluster: Cluster, *, spares: int | str = "1%", threshold: float = THRESHOLD
               ) -> list[dict]:
    """How the closed-form answers move across the catalog's plausible ranges: the area
    share of the GPU rate (low, default, high), each class with a published range (its
    low and high rate), and vendor instead of local repair. Per row: GPU failures per
    year, SM-hours lost per year on the hardware (GPUs lost or cut off, until repaired),
    mean capacity without spares and with ``spares`` at the better of pod and global."""
    cat = cluster.catalog
    n = parse_spares(spares, cluster.gpus)
    cases = [("area_share", a, cat.with_(area_share=a))
             for a in (cat.area_share_range[0], cat.area_share, cat.area_share_range[1])]
    for name, c in cat.classes.items():
        if c.rate_range and any(e.cls == name for e in cluster.effects()):
            cases += [(f"rate {name}", r, cat.with_(rates={name: r})) for r in c.rate_range]
    cases.append(("repair", "vendor", cat.with_(repair="vendor")))
    rows = []
    for param, value, cat2 in cases:
        c = cluster.with_catalog(cat2)
        rates = c.rates
        gpu_rate = sum(e.parts * rates[e.cls] for e in c.effects()
                       if e.cls in GPU_CLASSES) * c.cells
        # cell-failures: each part's copies (Cluster.copies) times the cells it touches
        sm_hours = sum(e.parts * rates[e.cls] * e.sms * recovery_times(c).repair_down_s(e.cls)
                       * c.copies(e) * c.cells_hit(e)[0] for e in c.effects()) * YEAR / HOUR
        best = 0.0
        for placement in ("pod", "global"):
            kinds = event_kinds(c, placement)   # the means alone: no time below worked out
            a = ClosedForms(kinds, spare_pools(c, n, placement), c.instances_total, threshold)
            best = max(best, a.mean)
            if placement == "pod":
                none = ClosedForms(kinds, spare_pools(c, 0, placement), c.instances_total,
                                   threshold).mean
        rows.append({"parameter": param, "value": value,
                     "gpu_failures_per_year": gpu_rate * YEAR,
                     "sm_hours_lost_per_year": sm_hours, "availability": none,
                     "availability_with_spares": best, "spares": n})
    return rows


#: Columns of :class:`ReliabilitySummary` (for tables and CSV).
SUMMARY_COLUMNS = tuple(ReliabilitySummary.__dataclass_fields__)


def reliability_summary(scenario: str | Scenario, model: str | ModelSpec,
                        phase: str | Workload = "decode", *, gpus: int | None = None,
                        spares: int | str = "1%", threshold: float = THRESHOLD,
                        quantile: float = QUANTILE, horizon: str | float = "1y",
                        trials: int = 200, seed: int = 0, slo: Slo | None = None,
                        options: RooflineOptions | None = None, catalog_: Catalog | None = None,
                        cluster: Cluster | None = None, search: FabricSearch | None = None,
                        method: str = "monte-carlo") -> ReliabilitySummary:
    """The reliability columns of one scenario, model and phase (see
    :class:`ReliabilitySummary`); ``spares``: the reference pool (count or % of GPUs).
    ``method="analytic"``: closed forms only (no Monte Carlo: about a tenth of the time;
    the time below the threshold with spares is then the independent-thinning
    approximation). ``search``: the scenario's FabricSearch for this model and phase, if
    already run. The Monte Carlo draws each placement's failures once for every pool it
    asks (:class:`~netmodel.study.availability_mc_pools.PoolRuns`): each figure is that of
    :func:`~netmodel.study.availability.availability` and
    :func:`~netmodel.study.availability.spares_needed` with the same seed."""
    if method not in ("monte-carlo", "analytic"):
        raise UserError(f"method {method!r} is not allowed; allowed: monte-carlo, analytic")
    threshold, quantile = check_threshold(threshold), check_quantile(quantile)   # nan ran
    c = check_cluster(cluster) or build_cluster(scenario, model, phase, gpus=gpus, slo=slo,
                                                options=options, catalog_=catalog_,
                                                search=search)   # a 5 raised AttributeError
    if method == "analytic":
        return _summary_analytic(c, spares, threshold, quantile)
    check_run(trials, horizon)   # as the first run checked them, before any is built
    n = parse_spares(spares, c.gpus)
    hw, sw, rate = _gpu_radius(c)
    # one draw of the failures per placement (they read the kinds and the number of
    # pools, never the spares): the pool without spares, the reference pools and the
    # spares-needed search all run on it, each pool as availability()'s Monte Carlo of
    # it would (the same floats), each class of pools granting alike once
    runs = {p: PoolRuns(event_kinds(c, p), c.instances_total, horizon=horizon,
                        trials=trials, seed=seed, threshold=threshold,
                        pools=spare_pools(c, 0, p)) for p in ("global", "pod")}
    # asked together, one pass of the chunks (a run of several draws them per ask): the
    # pool without spares is the base (global) and each search's first step
    zero = {p: spare_pools(c, 0, p) for p in ("pod", "global")}
    with_n = {p: spare_pools(c, n, p) for p in ("pod", "global")}
    means = {p: runs[p].mean([zero[p], with_n[p]]) for p in with_n}
    base = means["global"][0]
    ref = max(with_n, key=lambda p: means[p][1])   # pod where alike, as max keeps the first
    best = None
    for p in ("pod", "global"):
        k = spares_needed_on(runs[p], c, p, quantile=quantile)
        if k is not None and (best is None or k < best[1]):
            best = (p, k)
    return ReliabilitySummary(
        scenario=c.scenario.label, model=c.model.name, phase=c.workload.phase, gpus=c.gpus,
        **c.parallelism.to_dict(), sms_down_per_gpu_failure_hw=hw, sms_down_per_gpu_failure_sw=sw,
        gpu_failures_per_year=rate * YEAR, availability=base,
        goodput_tokens_per_s_per_sm=c.tokens_per_s_per_sm(base, zero["global"].spares),
        healthy_tokens_per_s_per_sm=c.tokens_per_s_per_sm(), spares=n,
        spare_placement=with_n[ref].placement, availability_with_spares=means[ref][1],
        goodput_tokens_per_s_per_sm_with_spares=c.tokens_per_s_per_sm(
            means[ref][1], with_n[ref].spares),
        spares_needed=None if best is None else best[1],
        spares_needed_placement=None if best is None else best[0], threshold=threshold,
        quantile=quantile, analytic_fallback=())


def _gpu_radius(c: Cluster) -> tuple[float, float, float]:
    """(hardware SMs, software SMs) per GPU failure, weighted by rate, and GPU failures
    per second in the cluster. Where no GPU can fail (a rate of 0), the radius is still
    that of a GPU failure were one to happen: weighted by parts."""
    gpu_effects = list(c.effects(GPU_CLASSES))
    parts = np.array([e.parts for e in gpu_effects], dtype=float)
    rate = np.array([e.parts * c.rates[e.cls] for e in gpu_effects])
    w = rate if rate.sum() > 0 else parts
    hw = float(np.dot(w, [e.sms for e in gpu_effects]) / w.sum())
    sw = float(np.dot(w, [e.instances_down * c.instance_gpus * c.gpu.sms for e in gpu_effects]) / w.sum())
    return hw, sw, float(rate.sum()) * c.cells


def _summary_analytic(c: Cluster, spares, threshold: float, quantile: float
                      ) -> ReliabilitySummary:
    n = parse_spares(spares, c.gpus)
    hw, sw, rate = _gpu_radius(c)
    inst = c.instances_total
    taken: set = set()   # every run's fallbacks: each figure, the search's steps too
    # each (placement, spares) solved once: the base is the global search's first step,
    # and the reference pool is asked for again once chosen (and may be a search step);
    # each run works out only what is read of it (ClosedForms): the search's steps their
    # time below, the base and the reference pool their mean, the accepted run its flag
    runs: dict = {}

    def run(placement: str, k: int) -> ClosedForms:
        a = runs.get((placement, k))
        if a is None:
            a = runs[placement, k] = ClosedForms(event_kinds(c, placement),
                                                 spare_pools(c, k, placement), inst,
                                                 threshold)
            taken.update(a.fallback)
        return a

    base = run("global", 0)
    ref = max(("pod", "global"), key=lambda p: run(p, n).mean)
    best = None   # (placement, spares, the run that accepted them)
    for p in ("pod", "global"):
        top = spare_pools(c, c.gpus, p).reachable_total
        per = spare_pools(c, 0, p).pools
        k = next(((k, a) for k in range(0, top + 1, per)
                  if (a := run(p, k)).below_threshold <= 1 - quantile), None)
        if k is not None and (best is None or k[0] < best[1]):
            best = (p, *k)
    with_s = run(ref, n).mean
    return ReliabilitySummary(
        scenario=c.scenario.label, model=c.model.name, phase=c.workload.phase, gpus=c.gpus,
        **c.parallelism.to_dict(), sms_down_per_gpu_failure_hw=hw, sms_down_per_gpu_failure_sw=sw,
        gpu_failures_per_year=rate * YEAR, availability=base.mean,
        goodput_tokens_per_s_per_sm=c.tokens_per_s_per_sm(base.mean),
        healthy_tokens_per_s_per_sm=c.tokens_per_s_per_sm(), spares=n,
        spare_placement=ref, availability_with_spares=with_s,
        goodput_tokens_per_s_per_sm_with_spares=c.tokens_per_s_per_sm(with_s, n),
        spares_needed=None if best is None else best[1],
        spares_needed_placement=None if best is None else best[0], threshold=threshold,
        quantile=quantile, analytic_fallback=tuple(sorted(taken)),
        # a refused size whose time below reads low is refused the more: only the
        # accepted run's reading can make the count low
        threshold_low=best is not None and best[2].threshold_low)
