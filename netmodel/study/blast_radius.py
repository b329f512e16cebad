"""Static blast radius: what one failure of each component takes down, per scenario.

The table of ``netmodel blast-radius``: per component class, its count and failure rate,
the hardware and software radius of one failure, the tokens/s it costs and the recovery
path and time without and with hot spares (:class:`BlastRow`, :class:`BlastRadius`,
:func:`blast_radius`). The model behind it (the cluster, what a failure removes, the
symmetry classes) is :mod:`netmodel.study.reliability_cluster`'s, described in that
module's docstring.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from compute.phases import Slo
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH
from compute.units import counted
from compute.validate import flag
from netmodel.study.reliability_catalog import HOUR, Catalog
from netmodel.study.reliability_cluster import YEAR, Cluster, build_cluster, check_cluster
from netmodel.study.reliability_timings import recovery_times
from topologies.failure_domains import CLASSES

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from compute.models import ModelSpec
    from compute.phases import Workload
    from netmodel.study.scenarios import Scenario

__all__ = ["BLAST_COLUMNS", "BlastRadius", "BlastRow", "blast_files", "blast_radius",
           "recovery_words"]


# ---------------------------------------------------------------------- the table

@dataclass(frozen=True)
class BlastRow:
    """One component class in a cluster (radii are per failure; ``mean`` weighted by rate).

    ``count``: parts in the cluster; ``rate_per_hour``: per part; ``events_per_year``: in
    the cluster; ``recovery_*``: the path and time of the instances it takes down, then of
    those it slows (:func:`recovery_words`; the longest of the class's).
    """

    cls: str
    description: str
    count: float
    rate_per_hour: float
    events_per_year: float
    gpus_mean: float
    gpus_max: int
    sms_mean: float
    sms_max: int
    instances_down_mean: float
    instances_down_max: int
    gpus_down_mean: float          #: GPUs in the instances it takes down (software radius)
    tokens_lost_pct_mean: float
    tokens_lost_pct_max: float
    symmetry_classes: int
    recovery_without_spares: str
    recovery_without_spares_s: float | None
    recovery_with_spares: str
    recovery_with_spares_s: float | None

    def to_dict(self) -> dict:
        return asdict(self)


BLAST_COLUMNS = tuple(f.name for f in BlastRow.__dataclass_fields__.values())


@dataclass(frozen=True, eq=False)
class BlastRadius:
    """The blast-radius table of one scenario, model and phase."""

    cluster: Cluster
    rows: tuple
    effects: tuple
    recoveries: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        c = self.cluster
        return {"scenario": c.scenario.label, "model": c.model.name,
                "phase": c.workload.phase, "gpus": c.gpus, "cells": c.cells,
                "cell_gpus": c.cell_gpus, "cells_per_shared_part": c.cells_per_shared_part, "tp": c.tp, "config": c.parallelism.label,
                "instance_gpus": c.instance_gpus, "batch": c.batch,
                "instances": c.instances_total, "idle_gpus": len(c.idle) * c.cells,
                "sms_per_gpu": c.gpu.sms, "tokens_per_s": c.cluster_tokens_per_s,
                "instance_tokens_per_s": c.tokens_per_s, "swap_s": recovery_times(c).swap_s(),
                "reconfiguration_s": recovery_times(c).reconfiguration_s,
                "catalog": c.catalog.to_dict(),
                "rows": [r.to_dict() for r in self.rows],
                "symmetry_classes": [
                    {**{k: v for k, v in asdict(e).items() if k not in ("component", "down")},
                     "down_members": list(e.down_members), "gpus": e.gpus,
                     "slowed": [list(s) for s in e.slowed],
                     "recovery": self.recoveries.get(id(e))}
                    for e in self.effects]}

    def slow_sms_mean(self) -> dict[str, float]:
        """Per class of :attr:`rows`, the tokens/s a failure takes from the instances that
        stay up (slowed, or re-balanced to a smaller batch), in SMs' worth (instances'
        worth x an instance's SMs, the unit of the software radius ``gpus_down_mean``),
        mean over the class weighted as the rows' means: the slow-down ``tokens_lost_pct``
        counts that no radius shows."""
        c = self.cluster
        out = {}
        for row in self.rows:
            es = [e for e in self.effects if e.cls == row.cls]
            w, hit = _class_weights(c, es)
            slow = np.array([e.slow for e in es]) * c.instance_gpus * c.gpu.sms
            out[row.cls] = float(np.dot(w, hit * slow) / w.sum()) if w.sum() > 0 else 0.0
        return out

    def to_json(self, indent: int | None = 2) -> str:
        import json

        return json.dumps(self.to_dict(), indent=indent)

    def to_csv(self) -> str:
        from compute.results import rows_to_csv

        return rows_to_csv([r.to_dict() for r in self.rows], BLAST_COLUMNS)

    def table(self) -> str:
        c = self.cluster
        lines = [f"{c.scenario.label}, {c.model.name} {c.workload.phase}: {counted(c.gpus, 'GPU')} "
                 f"({c.cells} x {c.cell_gpus}), {c.parallelism.label} x batch {c.batch}, "
                 f"{counted(c.instances_total, 'instance')}, {c.cluster_tokens_per_s:,.0f} tokens/s",
                 f"{'class':<12}{'count':>9}{'rate/h':>10}{'ev/yr':>9}{'GPUs':>8}{'SMs':>9}"
                 f"{'inst':>8}{'tok%':>8}  recovery (no spares | with spares)"]
        for r in self.rows:
            lines.append(
                f"{r.cls:<12}{r.count:>9,.0f}{r.rate_per_hour:>10.2e}{r.events_per_year:>9.3g}"
                f"{_cell(r.gpus_mean, 8)}{_cell(r.sms_mean, 9)}"
                f"{_cell(r.instances_down_mean, 8)}{_cell(r.tokens_lost_pct_mean, 8)}"
                f"  {r.recovery_without_spares} | "
                f"{r.recovery_with_spares}")
        lines.append("GPUs, SMs, inst, tok%: per failure, mean over the class weighted by rate "
                     "(hardware radius: GPUs lost, stopped or cut off; inst: instances down)")
        if c.batch_at_limit:
            lines.append(c.batch_limit_note)
        return "\n".join(lines)


def blast_files(result: BlastRadius, *, plot: bool = True) -> dict:
    """``blast_radius.json``, ``blast_radius.csv`` and (with ``plot``) ``blast_radius.png``."""
    flag("", "plot", plot)   # "no" drew the figure
    files = {"blast_radius.json": result.to_json().encode(),
             "blast_radius.csv": result.to_csv().encode()}
    if plot:
        from netmodel.study.reliability_plots import plot_blast_radius

        files["blast_radius.png"] = lambda path: plot_blast_radius(result, path)
    return files


def _cell(x: float, width: int) -> str:
    """``x`` right-aligned in ``width`` characters with at least one space before it: whole
    numbers with thousands separators from 1,000 up (a rack of 72 GB300 is 10,656 SMs),
    else 3 significant digits.

    >>> _cell(10656, 9), _cell(72, 8), _cell(0.5, 8), _cell(131072, 8)
    ('   10,656', '      72', '     0.5', ' 131,072')
    """
    text = f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"
    return " " + text.rjust(width - 1)


def _tokens_lost_pct(c: Cluster, e) -> float:
    """Per cent of the cluster's tokens/s one failure of ``e`` takes from one cell: each
    down instance's own healthy tokens/s and each slowed one's share of its own
    (:attr:`Cluster.healthy`: an instance across two leaves serves less than the search's
    first group, so counting instances over-stated what taking it down costs)."""
    own = c.healthy
    lost = sum(own[i].tokens_per_s for i in e.down) \
        + sum(share * own[i].tokens_per_s for i, share in e.slowed)
    return 100 * lost / c.healthy_tokens_per_s / c.cells


def _class_weights(c: Cluster, es: list) -> tuple[np.ndarray, np.ndarray]:
    """The effects ``es`` of one class: each one's weight in the class's means (its parts x
    the cluster's copies of it) and the cells one failure of it hits on average (a shared
    part's failure touches every cell of its set)."""
    return (np.array([e.parts * c.copies(e) for e in es], dtype=float),
            np.array([c.cells_hit(e)[0] for e in es]))


def _fmt_s(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 2 * HOUR:
        return f"{s / HOUR:.3g} h"
    if s >= 120:
        return f"{s / 60:.3g} min"
    return f"{s:.3g} s"


def recovery_words(c: Cluster, cls: str, frs: list) -> tuple[tuple, tuple]:
    """The recovery column of class ``cls``, ``((without spares, seconds), (with spares,
    seconds))``, from its failures' recoveries ``frs`` (:func:`~netmodel.study.
    reliability_recovery.failure_recovery`, the availability model's own): the down
    instances' path and time (the class's longest), then ``;`` and the slowed ones'. Without
    spares the down instances wait for detection, the repair, the reload and warm-up, and
    the slowed stay slow for detection and the repair; with them, the down come back as
    the recovery says and each slowed one is swapped onto spares where that loses less
    than staying slow (its time the swap's), else stays slow until the repair. A slowed
    instance whose communicator the failure takes a link of restarts first (``restart
    (90.1 s), then ...``: NCCL has no link failover,
    :func:`~netmodel.study.reliability_recovery.restarts`; a swapped one's restart is its
    swap). The time is the longest of the two; None where the class takes no instance down
    and slows none.

    >>> from netmodel.study.reliability_cluster import build_cluster
    >>> from netmodel.study.reliability_recovery import failure_recovery
    >>> c = build_cluster("lite-ocs", "Llama-3-70B", "decode")
    >>> e = next(x for x in c.effects() if x.cls == "cpo-engine")
    >>> (a, ta), (b, tb) = recovery_words(c, "cpo-engine", [failure_recovery(c, e, "pod")])
    >>> a, round(ta / 3600, 4)
    ('restart (90.1 s), then slowed until repair (4.01 h)', 4.0083)
    >>> b, round(tb, 2)
    ('swap 1 of 1 slowed: substitute 1 spare (circuits re-set) (90.1 s)', 90.11)
    """
    rt = recovery_times(c)
    down = [fr for fr in frs if fr.instances_down]
    slow = [fr for fr in frs if fr.slowed]
    if not down and not slow:
        return ("no instance down", None), ("no instance down", None)
    without, with_ = [], []
    if down:
        t = rt.repair_down_s(cls)
        without.append((f"repair ({_fmt_s(t)})", t))
        worst = max((fr.down for fr in down),
                    key=lambda r: (r.units is None, r.time_s or 0.0, r.units or 0))
        with_.append((f"{worst.path}: repair", t) if worst.units is None
                     else (f"{worst.path} ({_fmt_s(worst.time_s)})", worst.time_s))
    if slow:
        t = rt.slowed_s(cls)
        # a slowed instance whose communicator lost a link restarts first (no failover)
        # (its time the longer of the restart and the slow-down: a repair under 90 s)
        r = rt.restart_s() if any(fr.restarted for fr in slow) else 0.0
        first = f"restart ({_fmt_s(r)}), then " if r else ""
        without.append((f"{first}slowed until repair ({_fmt_s(t)})", max(t, r)))
        worst = max(slow, key=lambda fr: (fr.slow_time_s, -fr.slow.units))
        again = first if worst.restarted and not worst.slow.units else ""
        with_.append((f"{again}{worst.slow.path} ({_fmt_s(worst.slow_time_s)})",
                      max(worst.slow_time_s, r if again else 0.0)))
    return tuple(("; ".join(p for p, _ in xs), max(t for _, t in xs))
                 for xs in (without, with_))


def blast_radius(scenario: str | Scenario, model: str | ModelSpec,
                 phase: str | Workload = "decode", *, gpus: int | None = None,
                 slo: Slo | None = None, options: RooflineOptions | None = None,
                 catalog_: Catalog | None = None, placement: str = "pod",
                 prompt: int | None = None, context: int | None = None,
                 classes: Iterable[str] | None = None,
                 cluster: Cluster | None = None, parallelism: str = "auto",
                 max_batch: int = DEFAULT_MAX_BATCH) -> BlastRadius:
    """The blast-radius table (see the module doc): per class, the count, rate, hardware
    and software radius, tokens/s lost, and the recovery path and time without spares
    (repair) and with a hot spare of ``placement`` (group, pod or global) at hand."""
    from netmodel.study.reliability_recovery import failure_recovery

    c = check_cluster(cluster) or build_cluster(
        scenario, model, phase, gpus=gpus, slo=slo, options=options, prompt=prompt,
        context=context, catalog_=catalog_, parallelism=parallelism, max_batch=max_batch)
    effects = c.effects(classes)
    rates = c.rates
    total = c.instances_total
    rows = []
    recs = {}
    for cls in CLASSES:
        es = [e for e in effects if e.cls == cls]
        if not es:
            continue
        # a class's failures a year: each effect's parts x the cluster's copies of it;
        # a shared part's failure touches every cell of its set (hit, mean and most)
        w, hit = _class_weights(c, es)
        wsum = float(w.sum())
        rate = rates[cls]
        most = [c.cells_hit(e)[1] for e in es]

        def mean(xs: ArrayLike, w: np.ndarray = w, wsum: float = wsum) -> float:
            return float(np.dot(w, xs) / wsum) if wsum > 0 else 0.0

        hurt = [e for e in es if e.instances_down or e.slowed]
        frs = [failure_recovery(c, e, placement) for e in hurt]
        for e, fr in zip(hurt, frs, strict=True):
            recs[id(e)] = {**(fr.down.to_dict() if e.instances_down else {}),
                           **({"slow": {**fr.slow.to_dict(), "time_s": fr.slow_time_s}}
                              if e.slowed else {})}
        (path0, t0), (path1, t1) = recovery_words(c, cls, frs)
        lost = np.array([_tokens_lost_pct(c, e) for e in es])
        rows.append(BlastRow(
            cls=cls, description=c.catalog.classes[cls].description,
            count=wsum, rate_per_hour=rate * HOUR,
            events_per_year=wsum * rate * YEAR,
            gpus_mean=mean(hit * [e.gpus for e in es]),
            gpus_max=max(m * e.gpus for m, e in zip(most, es, strict=True)),
            sms_mean=mean(hit * [e.sms for e in es]),
            sms_max=max(m * e.sms for m, e in zip(most, es, strict=True)),
            instances_down_mean=mean(hit * [e.instances_down for e in es]),
            instances_down_max=max(m * e.instances_down for m, e in zip(most, es, strict=True)),
            gpus_down_mean=mean(hit * [e.instances_down * c.instance_gpus for e in es]),
            tokens_lost_pct_mean=mean(hit * lost),
            tokens_lost_pct_max=float(max(lost * most)),
            symmetry_classes=len(es), recovery_without_spares=path0,
            recovery_without_spares_s=t0, recovery_with_spares=path1,
            recovery_with_spares_s=t1))
    if not math.isfinite(total):  # pragma: no cover - guarded by build_cluster
        raise UserError("no instance")
    return BlastRadius(cluster=c, rows=tuple(rows), effects=tuple(effects), recoveries=recs)
