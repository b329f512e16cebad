"""The blast-radius and the power-and-cost parts of ``netmodel study lite-gpu``.

Both reuse what the fabric comparison found: each shipped scenario with its own GPU
(``h100-dgx`` on the H100, the Lite fabrics on the plain Lite) serving the study's first
model, with the best configuration the comparison's search picked.

* :func:`reliability_part`: per scenario, the blast radius of a GPU failure (SMs out of
  service in hardware and in software), availability without spares and with the reference
  pool, and the smallest pool that keeps 99% of the capacity 99.9% of the time
  (:func:`netmodel.study.reliability_summary.reliability_summary`, closed forms), plus the curve
  of availability against the spare pool for the figure.
* :func:`cost_part`: per scenario and phase, the :class:`~netmodel.study.cost.CostSummary`
  (capex and power split, tokens/s/W, USD per million tokens) and the yield curves of die
  cost per good SM against area with the H100 and the Lite marked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING

from compute.errors import UserError
from netmodel.study.figure_kit import figure_style
from netmodel.study.scenario_catalog import own_gpu_scenarios

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from compute.phases import Slo
    from compute.roofline_options import RooflineOptions
    from netmodel.study.compare import CompareResult, CompareRow
    from netmodel.study.fabric_search import FabricSearch
    from netmodel.study.serving import ServingWorkload

__all__ = ["REFERENCE_SPARES", "CostPart", "ReliabilityPart", "ServingPart", "cost_part",
           "own_gpu_rows",
           "own_gpu_scenarios",
           "plot_serving", "reliability_part", "serving_part"]


def own_gpu_rows(fab: CompareResult, model: str | ModelSpec,
                 phase: str) -> list[tuple[CompareRow, FabricSearch]]:
    """The comparison's (row, FabricSearch) pairs of each scenario with its own GPU
    (:func:`own_gpu_scenarios`; ``model``: a name or a spec, e.g. one read from a model
    file)."""
    labels = {s.label for s in own_gpu_scenarios(fab.scenarios)}
    model = model if isinstance(model, str) else model.name
    return [(row, found) for row, found in zip(fab.rows, fab.searches, strict=True)
            if (row.model, row.phase) == (model, phase) and row.label in labels]


#: The study's reference spare pool: 1% of each scenario's GPUs, rounded up to whole GPUs
#: (:func:`netmodel.study.availability.parse_spares`), so the pool's share of the cluster
#: is as coarse as one GPU of it.
REFERENCE_SPARES = "1%"


@dataclass(frozen=True, eq=False)
class ReliabilityPart:
    """Reliability summaries (one per scenario), the spare curves of the figure and what
    could not be computed; ``spares``: the reference pool as asked of every scenario
    (:data:`REFERENCE_SPARES`, a share of each cluster's GPUs rounded up to whole GPUs),
    ``sms_per_gpu``: per scenario label, its GPU's SMs (what a spare GPU holds);
    ``recovery``: per scenario label, the seconds a GPU failure's instance is down without
    a spare (the shortest and longest over the GPU's failure classes: detection, repair,
    reload, warm-up) and with a hot spare switched in (detection, circuits, reload,
    warm-up), from :mod:`netmodel.study.reliability_timings`."""

    summaries: tuple = ()
    curves: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    spares: str = REFERENCE_SPARES
    sms_per_gpu: dict = field(default_factory=dict)
    recovery: dict = field(default_factory=dict)

    def to_dicts(self) -> list[dict]:
        return [s.to_dict() for s in self.summaries]


def reliability_part(fab: CompareResult, model: str | ModelSpec, phase: str = "decode", *,
                     slo: Slo | None = None, options: RooflineOptions | None = None,
                     curves: bool = True) -> ReliabilityPart:
    """Blast radius and availability of each scenario with its own GPU (see the module
    docstring). ``curves``: whether the spare curves are worked out; only the figure
    (``reliability_spares.png``) reads them, so a study not drawn leaves them out (its
    :attr:`ReliabilityPart.curves` empty, the summaries the same floats): their closed
    forms of pools past the summary's search were a quarter to a third of ``study
    lite-gpu``'s part."""
    from compute.validate import flag
    from netmodel.study.availability import spare_curve
    from netmodel.study.reliability_cluster import build_cluster
    from netmodel.study.reliability_summary import reliability_summary
    from netmodel.study.reliability_timings import recovery_times
    from topologies.failure_domains import GPU_CLASSES

    curves = flag("reliability_part", "curves", curves)   # 'no' worked them out
    out, drawn, notes, sms, recovery = [], {}, {}, {}, {}
    for row, found in own_gpu_rows(fab, model, phase):
        if not row.feasible:
            notes[row.label] = row.reason
            continue
        try:
            cluster = build_cluster(found.scenario, model, phase, search=found, slo=slo,
                                    options=options)
            summary = reliability_summary(found.scenario, model, phase, cluster=cluster,
                                          spares=REFERENCE_SPARES, method="analytic")
            sms[summary.scenario] = cluster.gpu.sms
            times = recovery_times(cluster)
            down = [times.repair_down_s(c) for c in GPU_CLASSES]
            recovery[summary.scenario] = (min(down), max(down), times.swap_s())
            if curves:
                placement = summary.spares_needed_placement or summary.spare_placement
                drawn[f"{row.label} ({placement})"] = spare_curve(cluster, placement,
                                                                  fallback=True)
            out.append(summary)
        except UserError as exc:
            notes[row.label] = str(exc)
    return ReliabilityPart(tuple(out), drawn, notes, REFERENCE_SPARES, sms, recovery)


@dataclass(frozen=True, eq=False)
class CostPart:
    """Cost summaries (scenario x phase), the yield curves and the H100 / Lite packages."""

    summaries: tuple = ()
    curves: dict = field(default_factory=dict)
    marks: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)


#: Defect densities (per cm^2) of the yield figure: TSMC N5's published 0.1 and a
#: pessimistic and an optimistic bracket (compute/data/economics.toml).
DEFECT_DENSITIES_PER_CM2 = (0.05, 0.1, 0.2)


def cost_part(fab: CompareResult, model: str | ModelSpec, phases: Iterable[str]) -> CostPart:
    """Power and cost of each scenario with its own GPU in each phase, and the yield
    curves (see the module docstring)."""
    from compute.yield_model import package_cost, yield_curve
    from netmodel.study.cost import cost_summary

    out, notes = [], {}
    for phase in phases:
        for row, found in own_gpu_rows(fab, model, phase):
            if not row.feasible:
                continue
            try:
                out.append(cost_summary(found.scenario, model, phase, found.best))
            except UserError as exc:
                notes[row.label] = str(exc)
    curves = {f"D = {d:g}/cm^2": yield_curve(defect_density=d * 1e4)
              for d in DEFECT_DENSITIES_PER_CM2}
    marks = {}
    for name in ("H100-SXM", "Lite"):
        try:
            marks[name] = package_cost(name)
        except UserError as exc:
            notes[name] = str(exc)
    return CostPart(tuple(out), curves, marks, notes)


@dataclass(frozen=True, eq=False)
class ServingPart:
    """Disaggregated serving of the study's first model on each scenario with its own GPU,
    per workload (:func:`netmodel.study.serving.serve`)."""

    results: tuple = ()
    baseline: str = ""
    #: The pools' search space (:func:`netmodel.study.serving.serve`'s ``dimensions``):
    #: ``"tp"`` plain tensor parallelism, ``"all"`` TP x PP x EP x attention DP.
    dimensions: str = "tp"

    def rows(self) -> list[dict]:
        """Flat rows for serving.csv (one per scenario and workload), with the ratio of
        tokens/s/SM to the baseline scenario's under the same workload."""
        base = {r.workload.name: r.tokens_per_s_per_sm for r in self.results
                if r.scenario == self.baseline and r.feasible}
        out = []
        for r in self.results:
            d = {"model": r.model, "scenario": r.scenario, "workload": r.workload.name,
                 "prompt": r.workload.prompt, "output": r.workload.output,
                 "feasible": r.feasible}
            for side in ("prefill", "decode"):
                x = getattr(r, side)
                for k in ("tp", "pp", "ep", "attention_dp", "gpus", "batch"):
                    d[f"{side}_{k}"] = getattr(x, k) if x is not None else None
            for k in ("kv_bytes_per_request", "transfer_s", "transfer_visible_s", "ttft_s",
                      "tbt_s", "decode_gpus_per_prefill_gpu", "requests_per_s_per_sm",
                      "tokens_per_s_per_sm", "output_tokens_per_s_per_sm"):
                d[k] = getattr(r, k)
            ref = base.get(r.workload.name)
            d["vs_baseline"] = r.tokens_per_s_per_sm / ref if (r.feasible and ref) else None
            d["reason"] = r.reason
            out.append(d)
        return out


#: The workloads the study serves (Splitwise's coding and conversation medians).
SERVING_WORKLOADS = ("coding", "conversation")


def serving_part(fab: CompareResult, model: str | ModelSpec, *, slo: Slo | None = None,
                 options: RooflineOptions | None = None, collectives: dict | None = None,
                 workloads: Iterable[str | ServingWorkload] = SERVING_WORKLOADS) -> ServingPart:
    """Disaggregated serving (prefill and decode pools, each request's KV cache over the
    fabric) of ``model`` on each scenario of ``fab`` with its own GPU, per workload. The
    pools are spread as ``fab`` was (its ``parallelism`` setting): ``tp`` plain tensor
    parallelism, ``all`` every dimension, ``auto`` every dimension for a mixture of
    experts and TP alone for a dense model."""
    from compute.models import get_model
    from netmodel.study.serving import serve

    m = get_model(model)
    how = fab.settings.get("parallelism", "auto")
    dims = "all" if how == "all" or (how == "auto" and m.is_moe) else "tp"
    labels = list(dict.fromkeys(row.label for row, _ in own_gpu_rows(fab, model, "decode")))
    scen = {s.label: s for s in fab.scenarios}
    out = []
    for w in workloads:
        for label in labels:
            out.append(serve(m, scen[label], w, slo=slo, options=options, dimensions=dims,
                             collectives=collectives))
    return ServingPart(tuple(out), fab.baseline, dims)


@figure_style
def plot_serving(part: ServingPart, path: str | PathLike[str]) -> None:
    """``serving.png``: per workload, the service's tokens/s/SM on each scenario (its ratio
    to the baseline on the bar) and the decode GPUs per prefill GPU that balance it."""
    from matplotlib.transforms import ScaledTranslation

    from netmodel.study.figure_kit import (
        DPI,
        bars,
        pyplot,
        save_figure,
        set_margins,
        static_ticks,
    )

    plt = pyplot()
    rows = part.rows()
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    scen = list(dict.fromkeys(r["scenario"] for r in rows))
    fig, axes = plt.subplots(2, len(workloads), squeeze=False, dpi=DPI,
                             figsize=(4.6 * len(workloads), 5.6))
    up = ScaledTranslation(0, 2 / 72, fig.dpi_scale_trans)     # 2 points above the bar
    x = list(range(len(scen)))
    pad = 0.35 + 0.05 * (len(scen) - 0.3)     # as ax.bar's autoscale: 5% beyond the bars
    for j, w in enumerate(workloads):
        mine = {r["scenario"]: r for r in rows if r["workload"] == w}
        tok = [mine[s]["tokens_per_s_per_sm"] or 0.0 for s in scen]
        ratio = [mine[s]["decode_gpus_per_prefill_gpu"] or 0.0 for s in scen]
        top, low = axes[0][j], axes[1][j]
        bars(top, x, tok, 0.7, color="#4c72b0")
        for k, s in enumerate(scen):
            v = mine[s]["vs_baseline"]
            if v is not None:
                top.text(k, tok[k], f"{v:.2f}x", transform=top.transData + up, ha="center",
                         va="baseline", fontsize=7)
        top.set_ylim(0, max(tok + [1e-9]) * 1.13)
        bars(low, x, ratio, 0.7, color="#dd8452")
        low.set_ylim(0, max(ratio + [1e-9]) * 1.05)
        first = rows[0]
        top.set_title(f"{first['model']}, {w} (prompt {mine[scen[0]]['prompt']}, "
                      f"output {mine[scen[0]]['output']})", fontsize=9, y=1.0)
        top.set_ylabel("tokens/s per SM (service)", fontsize=8)
        low.set_ylabel("decode GPUs per prefill GPU", fontsize=8)
        for ax in (top, low):
            ax.set_xlim(-pad, len(scen) - 1 + pad)
            ax.set_axisbelow(True)
    fig.suptitle("Disaggregated serving: prefill and decode pools, the KV cache sent over "
                 "the fabric", fontsize=10)
    set_margins(fig, bottom=1.05, top=0.6, left=0.75, right=0.15, wspace=0.3, hspace=0.15)
    for i, row in enumerate(axes):
        for ax in row:
            static_ticks(ax, "x", x, scen if i == 1 else None, rotation=30, ha="right",
                         labelsize=7)
            static_ticks(ax, "y", labelsize=7, grid_alpha=0.3)
    save_figure(fig, path)
