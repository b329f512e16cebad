"""Co-design crossovers: how much network a Lite needs to match the H100 cluster.

For each Lite variant, fabric, model and phase this finds, by root finding on the SLO
search itself (not read off a coarse sweep):

* the **network bandwidth per Lite**, as a multiple of the plain Lite's, at which the
  variant's best tokens/s/SM on that fabric matches the baseline scenario's (``h100-dgx``
  on the H100); every link of the fabric scales with it, as ``adjust.bandwidth_scale``
  does;
* the **per-hop latency** that can be added to every link (``adjust.hop_latency``) before
  the variant, at its own bandwidth, falls below the baseline; only where it matches the
  baseline to begin with.

Each evaluation is one SLO search with the fabric's collectives re-scored, not re-routed
(:class:`~netmodel.study.adjusted_comm.AdjustedComm`): uniform link bandwidth scaling
divides the link-bound parts of every candidate's line (its ``b`` and its pipeline fill,
:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.parts`) by the factor exactly,
and a per-hop latency adds to each candidate's ``a`` a slope measured once per fabric (one
more compilation; a test checks on every shipped fabric that the slope is constant, i.e.
that re-scoring equals recompiling at other latencies). The search's batch range is capped
at the largest batch that fits in memory at any TP degree (memory does not depend on the
network), which changes no answer. Only the first evaluation of a model, phase and GPU
runs the search itself; the others re-score its grid's collective stages
(:class:`~netmodel.study.grid_rescore.GridScorer`, checked to the last bit against that
search), and under a per-hop latency measure slopes only for the configurations that may
still be the best. A mixture
of experts' prefill, whose all-to-alls cross the network once a server (DeepEP's normal
kernels, as ``compare`` and ``search --scenario`` cost them), searches at every
evaluation, those all-to-alls compiled on the fabric with its links adjusted
(:meth:`~netmodel.study.adjusted_comm.AdjustedComm.moe_all_to_all_time`).

The root is bracketed between :data:`BANDWIDTH_RANGE` (or :data:`LATENCY_RANGE`) and
narrowed by bisection in log space to :data:`TOLERANCE`; the reported value is the edge of
the bracket on the matching side, so plugging it back in reproduces at least the baseline's
tokens/s/SM (the best configuration's throughput moves in small steps as a larger batch
starts to meet the SLO, so it may exceed it by one such step).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from os import PathLike
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from compute.hardware import GpuSpec, get_gpu
from compute.moe_routing import moe_comm
from compute.phases import check_slo
from compute.roofline import check_options
from compute.validate import flag, number, of_type
from netmodel.collectives.tuner_plugin import NO_TUNER
from netmodel.study.adjusted_comm import AdjustedComm, hop_latency_slopes
from netmodel.study.figure_kit import figure_style
from netmodel.study.grid_rescore import BestScorer, GridScorer
from netmodel.study.scenarios import BEST

if TYPE_CHECKING:
    from collections.abc import Iterable

    from compute.models import ModelSpec
    from compute.phases import Slo
    from compute.roofline_options import RooflineOptions
    from netmodel.study.compare import CompareResult

__all__ = ["BANDWIDTH_RANGE", "LATENCY_RANGE", "TOLERANCE", "Crossover", "CrossoverResult",
           "find_crossovers"]

#: Multiples of the plain Lite's network bandwidth searched (1/8x to 64x).
BANDWIDTH_RANGE = (0.125, 64.0)
#: Per-hop latency added to every link, searched (1 ns to 100 us).
LATENCY_RANGE = (1e-9, 100e-6)
#: Relative precision of a crossover (0.5%).
TOLERANCE = 0.005
#: The finest precision taken (the search's steps in log space stay far above a double's
#: resolution, ~1e-16, so that the bracket keeps narrowing to it).
MIN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Crossover:
    """One Lite variant on one fabric for one model and phase. Bandwidths are multiples of
    the plain Lite's network bandwidth; latencies seconds added to every link."""

    model: str
    phase: str
    fabric: str                   #: scenario name
    gpu: str
    baseline: str                 #: the baseline's label
    baseline_tokens_per_s_per_sm: float
    tokens_per_s_per_sm: float | None   #: as shipped (its own bandwidth, no added latency)
    own_bandwidth: float          #: the variant's bandwidth, as a multiple of the plain Lite's
    bandwidth_to_match: float | None    #: None: not reached within BANDWIDTH_RANGE
    bandwidth_bound: str          #: "found", "below range" (matches at the lowest), "never"
    tokens_per_s_per_sm_at_bandwidth: float | None
    hop_latency_to_match: float | None  #: None where it does not match to begin with
    latency_bound: str            #: "found", "above range", "no match"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, eq=False)
class CrossoverResult:
    """The crossovers of a study, with the settings."""

    rows: tuple[Crossover, ...] = ()
    settings: dict = field(default_factory=dict)

    def to_dicts(self) -> list[dict]:
        return [r.to_dict() for r in self.rows]

    def to_csv(self) -> str:
        from compute.results import rows_to_csv

        return rows_to_csv(self.to_dicts(), tuple(Crossover.__dataclass_fields__))

    def to_json(self, indent: int | None = 2) -> str:
        import json

        return json.dumps({"crossovers": self.to_dicts(), "settings": self.settings},
                          indent=indent)

    def table(self) -> str:
        """Per model and phase, the bandwidth multiple each variant needs per fabric."""
        lines = []
        fabrics = list(dict.fromkeys(r.fabric for r in self.rows))
        for model in dict.fromkeys(r.model for r in self.rows):
            for phase in dict.fromkeys(r.phase for r in self.rows):
                rows = [r for r in self.rows if (r.model, r.phase) == (model, phase)]
                if not rows:
                    continue
                lines.append(f"{model}, {phase}: network bandwidth (x the plain Lite's) to "
                             f"match {rows[0].baseline}")
                gpus = list(dict.fromkeys(r.gpu for r in rows))
                lines.append(f"  {'fabric':<16}" + "".join(f"{g:>15}" for g in gpus))
                for fab in fabrics:
                    cells = []
                    for g in gpus:
                        r = next((x for x in rows if (x.fabric, x.gpu) == (fab, g)), None)
                        cells.append(f"{_bw_text(r):>15}")
                    lines.append(f"  {fab:<16}" + "".join(cells))
        return "\n".join(lines)


def _bw_text(r) -> str:
    if r is None:
        return "."
    if r.bandwidth_bound == "never":
        return f">{BANDWIDTH_RANGE[1]:g}x"
    if r.bandwidth_bound == "below range":
        return f"<{BANDWIDTH_RANGE[0]:g}x"
    return f"{r.bandwidth_to_match:.2f}x"


def _network_twin(gpu: GpuSpec) -> tuple:
    """What a GPU is apart from its network bandwidth and name: variants with the same
    twin differ only in the network, so one crossover search serves them all."""
    d = asdict(gpu)
    for k in ("name", "source", "scaleup_bandwidth", "scaleout_bandwidth"):
        d.pop(k)
    return tuple(sorted(d.items()))


def _bisect(f, lo: float, hi: float, target: float, *, increasing: bool, tol: float):
    """The edge of ``f >= target`` in ``[lo, hi]``: returns ``(x, value at x, bound)``;
    ``x`` is the smallest (``increasing``) or largest (decreasing) point found on the
    matching side. Regula falsi in log space (Illinois variant: a bracket end that keeps
    its place has its weight halved), which needs a handful of evaluations where the
    throughput is smooth and never more than bisection would where it is not."""
    def ok(v: float | None) -> bool:
        return v is not None and v >= target

    f_lo, f_hi = f(lo), f(hi)
    if increasing:
        if ok(f_lo):
            return lo, f_lo, "below range"
        if not ok(f_hi):
            return None, None, "never"
        good, good_v, bad, bad_v = hi, f_hi, lo, f_lo
    else:
        if ok(f_hi):
            return hi, f_hi, "above range"
        if not ok(f_lo):
            return None, None, "no match"
        good, good_v, bad, bad_v = lo, f_lo, hi, f_hi
    gw = bw = 1.0      # Illinois weights of the two ends
    last = None
    while abs(math.log(good / bad)) > tol:
        xg, xb = math.log(good), math.log(bad)
        dg = (good_v - target) * gw
        db = ((bad_v if bad_v is not None else 0.0) - target) * bw
        frac = dg / (dg - db) if dg != db else 0.5
        frac = min(max(frac, 0.05), 0.95)     # stay inside; bisect-like when unsure
        mid = math.exp(xg + frac * (xb - xg))
        v = f(mid)
        if ok(v):
            good, good_v = mid, v
            bw = bw / 2 if last == "good" else 1.0
            last = "good"
        else:
            bad, bad_v = mid, v
            gw = gw / 2 if last == "bad" else 1.0
            last = "bad"
    return good, good_v, "found"


class _Tokens:
    """``tokens(scale, hop)``: best tokens/s/SM of a row's model and phase on a scenario
    with links scaled and per-hop latency added (None when nothing is feasible).

    The first call runs the comparison's own search
    (:func:`~netmodel.study.fabric_search.fabric_search`) with the collectives re-scored
    (:class:`~netmodel.study.adjusted_comm.AdjustedComm`) and keeps its grid; the later
    calls re-score only that grid's collective stages
    (:class:`~netmodel.study.grid_rescore.GridScorer`): the same operations on the same
    numbers, so the same tokens/s/SM to the last bit. Where the grid is one the scorer does
    not reproduce (see :meth:`~netmodel.study.grid_rescore.GridScorer.build`), and for a
    mixture of experts' prefill (its all-to-alls cross the network once a server,
    :meth:`~netmodel.study.adjusted_comm.AdjustedComm.moe_all_to_all_time`), every call
    searches again. The grid apart from its collective times (configurations, batches,
    compute and memory times, message sizes, what fits) is the same on every fabric for one
    model, phase and GPU (and fabric size and batch cap): ``grids`` (shared by the calls of
    one :func:`find_crossovers`) keeps the layout
    (:class:`~netmodel.study.grid_rescore.GridLayout`) of each one checked against a
    search, and the same case on another fabric starts from it instead of
    searching (or working the layout out again).
    """

    def __init__(self, row, scenario, coll, cap, slopes_cache, options, slo, parallelism,
                 grids: dict | None = None, model=None):
        self.model = model if model is not None else _model(row.model)
        self.phase = row.phase
        self.scenario, self.coll, self.cap = scenario, coll, cap
        self.slopes_cache, self.options, self.slo = slopes_cache, options, slo
        self.parallelism = parallelism
        # False: search every time, as for an MoE prefill, whose all-to-alls cross the
        # network once a server (compute.moe_routing.moe_comm asks the comm's
        # moe_all_to_all_time): lines compiled per scale and latency, not re-scored
        comm = AdjustedComm(coll)
        # nor where a tuner plugin chooses: the scorer takes each size's fastest line
        tuned = coll.scenario.tuner != NO_TUNER and coll.scenario.algorithm == "auto"
        # with circuits = "best" the layout is chosen again at each scale and latency
        # (AdjustedComm.layout_comm): the grid is scored with the lines of the layouts
        # chosen there (BestScorer, keyed by them)
        self.rechosen = coll.scenario.is_ocs and coll.scenario.circuits == BEST
        self.scorer: GridScorer | BestScorer | None | bool = \
            None if moe_comm(comm, self.model, self.phase) is comm and not tuned else False
        self.grids = {} if grids is None else grids
        self.key = (self.model, self.phase, _network_twin(scenario.gpu_spec),
                    scenario.gpu_spec.max_instance, coll.gpus, cap, parallelism)

    def slopes(self):
        return hop_latency_slopes(self.scenario, self.coll, self.slopes_cache)

    def search(self, scale: float, hop: float, keep_grid: bool = False):
        from netmodel.study.fabric_search import fabric_search

        comm = AdjustedComm(self.coll, scale, hop, self.slopes())
        return fabric_search(self.model, self.scenario, self.phase, collectives=self.coll,
                             comm=comm, max_batch=self.cap, options=self.options,
                             slo=self.slo, parallelism=self.parallelism,
                             keep_grid=keep_grid)

    def __call__(self, scale: float, hop: float = 0.0) -> float | None:
        if self.scorer is None and self.key in self.grids:
            self.scorer = BestScorer(self.grids[self.key], self.coll) if self.rechosen \
                else GridScorer(None, self.coll, self.slopes, self.grids[self.key])
        if self.scorer:
            return self.scorer(scale, hop)
        r = self.search(scale, hop, keep_grid=self.scorer is None)
        best = r.best.tokens_per_s_per_sm if r.best else None
        if self.scorer is None:
            if self.rechosen:
                self.scorer = BestScorer.build(r.search.grid, self.coll, scale, hop,
                                                best) or False
            else:
                self.scorer = GridScorer.build(r.search.grid, self.coll, self.slopes,
                                                scale, hop, best) or False
            if self.scorer:
                self.grids[self.key] = self.scorer.layout
        return best


def find_crossovers(fab: CompareResult, *, plain: str = "Lite", tolerance: float = TOLERANCE,
                    options: RooflineOptions | None = None, slo: Slo | None = None,
                    latency: bool = True, models: Iterable[ModelSpec] = ()
                    ) -> CrossoverResult:
    """The crossovers of every Lite row of a fabric comparison (``fab``, a
    :class:`~netmodel.study.compare.CompareResult` run with instances alone) against its
    baseline. ``plain``: the GPU bandwidth multiples are relative to. ``models``: the
    specs of the comparison's models that the catalog does not hold (from a model file or
    a HuggingFace config; rows name their model, and a name not given here is looked up
    in the catalog). The settings carry ``slo`` and ``options`` as a comparison's do
    (:meth:`~compute.phases.Slo.to_dict`, compute's defaults without one;
    :meth:`~compute.roofline_options.RooflineOptions.to_dict`, the roofline's defaults
    without any).

    Parameters
    ----------
    fab : CompareResult
        The fabric comparison, its scenarios' instances costed alone.
    plain : str
        The GPU the bandwidth multiples are relative to.
    tolerance : float
        Relative precision of each root (:data:`TOLERANCE`; a per-hop latency's 4x it).
    options : RooflineOptions, optional
        The roofline's options, as the comparison ran.
    slo : Slo, optional
        The SLO, as the comparison ran.
    latency : bool
        Whether to search the per-hop latency each matching variant tolerates.
    models : iterable of ModelSpec
        The comparison's models the catalog does not hold.

    Returns
    -------
    CrossoverResult
        A row per Lite row of ``fab`` whose baseline is feasible, with the settings.

    Raises
    ------
    UserError
        A scenario whose instances are not costed alone, or an unknown ``plain`` GPU.
    """
    latency = flag("", "latency", latency)
    from compute.model_spec import ModelSpec
    from netmodel.study.compare import CompareResult
    from netmodel.study.scenario_collectives import ScenarioCollectives

    # a fabric comparison and specs (an int raised AttributeError), and a precision the
    # search can reach: 0 or below searched without end, NaN stopped at the first guess
    of_type("fab", fab, CompareResult, "netmodel.compare(...)", default=False)
    tolerance = number("", "tolerance", tolerance, minimum=MIN_TOLERANCE, maximum=1.0)
    options = check_options(options)
    slo = check_slo(slo)
    specs = {of_type("models", m, ModelSpec, "get_model('Llama-3-8B')", default=False).name:
             m for m in models}

    plain_bw = get_gpu(plain).scaleup_bandwidth
    base_rows = {(r.model, r.phase): r for r in fab.rows if r.label == fab.baseline}
    scen = {s.label: s for s in fab.scenarios}
    colls: dict = {}
    slopes_cache: dict = {}
    grids: dict = {}
    done: dict = {}
    rows = []
    for row, found in zip(fab.rows, fab.searches, strict=True):
        base = base_rows.get((row.model, row.phase))
        if row.label == fab.baseline or base is None or not base.feasible:
            continue
        s = scen[row.label]
        if s.instances != "alone":
            raise UserError("crossovers are searched with instances costed alone")
        gpu = s.gpu_spec
        own = gpu.scaleup_bandwidth / plain_bw
        key = (s.name, _network_twin(gpu), row.model, row.phase)
        if key not in done:
            coll = colls.get(s.label)   # one a scenario (setdefault built one a row)
            if coll is None:
                coll = colls[s.label] = ScenarioCollectives(s)
            cap = found.batch_cap or int(found.search.max_batch)
            tokens = _Tokens(row, s, coll, cap, slopes_cache, options, slo,
                             fab.settings.get("parallelism", "auto"), grids,
                             model=specs.get(row.model))
            k, k_v, k_bound = _bisect(lambda m, f=tokens, own=own: f(m / own),
                                      *BANDWIDTH_RANGE, base.tokens_per_s_per_sm,
                                      increasing=True, tol=tolerance)
            done[key] = (k, k_v, k_bound, tokens, own)
        k, k_v, k_bound, tokens, own0 = done[key]
        if latency and row.feasible and row.tokens_per_s_per_sm >= base.tokens_per_s_per_sm:
            h, _, h_bound = _bisect(lambda hop, f=tokens, r=own / own0: f(r, hop),
                                    *LATENCY_RANGE, base.tokens_per_s_per_sm,
                                    increasing=False, tol=tolerance * 4)
        else:
            h, h_bound = None, "no match"
        rows.append(Crossover(
            model=row.model, phase=row.phase, fabric=s.name, gpu=s.gpu,
            baseline=fab.baseline, baseline_tokens_per_s_per_sm=base.tokens_per_s_per_sm,
            tokens_per_s_per_sm=row.tokens_per_s_per_sm, own_bandwidth=own,
            bandwidth_to_match=k, bandwidth_bound=k_bound,
            tokens_per_s_per_sm_at_bandwidth=k_v, hop_latency_to_match=h,
            latency_bound=h_bound))
    settings = {"plain": plain, "bandwidth_range": BANDWIDTH_RANGE,
                "latency_range_s": LATENCY_RANGE, "tolerance": tolerance,
                "baseline": fab.baseline, "slo": slo.to_dict(), "options": options.to_dict()}
    return CrossoverResult(tuple(rows), settings)


def _model(name):
    from compute.models import get_model

    return get_model(name)


@figure_style
def plot_crossovers(result: CrossoverResult, path: str | PathLike[str]) -> None:
    """``crossovers.png``: per model (rows) and phase (columns) a heatmap of the network
    bandwidth per Lite (x the plain Lite's) each variant (columns of a panel) needs on each
    fabric (rows of a panel) to match the baseline; darker needs more; '>64x': never within
    the range (memory or compute, not the network, holds it back)."""
    from matplotlib.colors import LogNorm

    from netmodel.study.figure_kit import DPI, label, pyplot, save_figure, static_ticks

    plt = pyplot()

    models = list(dict.fromkeys(r.model for r in result.rows))
    phases = list(dict.fromkeys(r.phase for r in result.rows))
    fabrics = list(dict.fromkeys(r.fabric for r in result.rows))
    gpus = list(dict.fromkeys(r.gpu for r in result.rows))
    lo, hi = BANDWIDTH_RANGE
    fig, axes = plt.subplots(len(models), len(phases), squeeze=False, dpi=DPI,
                             figsize=(1.1 * len(gpus) * len(phases) + 2.2,
                                      0.42 * len(fabrics) * len(models) + 1.6))
    cmap = plt.get_cmap("magma_r")
    norm = LogNorm(vmin=lo, vmax=hi)
    for i, model in enumerate(models):
        for j, phase in enumerate(phases):
            ax = axes[i][j]
            grid = np.full((len(fabrics), len(gpus)), np.nan)
            for r in result.rows:
                if (r.model, r.phase) != (model, phase):
                    continue
                y, x = fabrics.index(r.fabric), gpus.index(r.gpu)
                v = {"never": hi, "below range": lo}.get(r.bandwidth_bound,
                                                         r.bandwidth_to_match)
                grid[y, x] = v
                text = _bw_text(r).replace("x", "")
                label(ax, x, y, text, ha="center", va="center", fontsize=6.5,
                      color="white" if v > 6 else "black")
            ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto")
            ax.set_title(f"{model}, {phase}", fontsize=8.5, y=1.0)
    fig.suptitle("Network bandwidth per Lite (x the plain Lite's) to match "
                 f"{result.settings.get('baseline', 'the baseline')}'s tokens/s/SM",
                 fontsize=9.5)
    w, h = fig.get_figwidth(), fig.get_figheight()
    fig.subplots_adjust(left=1.05 / w, right=1 - 0.15 / w, bottom=0.85 / h, top=1 - 0.62 / h,
                        wspace=0.08, hspace=0.35)
    for i in range(len(models)):
        for j in range(len(phases)):
            ax = axes[i][j]
            static_ticks(ax, "x", range(len(gpus)), gpus if i == len(models) - 1 else None,
                         rotation=30, ha="right", labelsize=7, length=0)
            static_ticks(ax, "y", range(len(fabrics)), fabrics if j == 0 else None,
                         labelsize=7, length=0)
    save_figure(fig, path)
