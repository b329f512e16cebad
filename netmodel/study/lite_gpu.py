"""The Lite-GPU study (arXiv 2501.10187): tokens/s/SM of H100 versus the Lite family.

For each model x GPU type x phase, the SLO search (:func:`compute.search.search`) finds the
TP degree and batch with the most tokens/s/SM that fit in memory and meet the SLO
(TTFT <= 1 s, TBT <= 50 ms). Tokens/s/SM divides by every SM of the instance, so an H100
instance and a Lite instance with four times as many GPUs are compared at equal silicon.

:func:`run_lite_gpu_study` is a pure function of its arguments. The network enters through
``comm_factory(gpu) -> CollectiveCostModel`` (default: rings over the GPU's scale-up
bandwidth) and is labelled by ``network``, so studies over several networks (an ideal one,
rings) are run separately and joined with ``+``.

:func:`run_full_study` is ``netmodel study lite-gpu``: that comparison, then the same models
on every fabric scenario (:func:`fabric_scenarios`, :mod:`netmodel.study.compare`), then a sweep
of the per-hop latency (:mod:`netmodel.study.sweep`); :func:`write_full_study` writes every
file and ``summary.md`` (:mod:`netmodel.study.summary`) all or nothing
(:func:`compute.outputs.write_outputs`).

>>> s = run_lite_gpu_study(models=["Llama-3-8B"], gpus=["H100-SXM", "Lite"], phases=["decode"])
>>> [(r.gpu, r.feasible) for r in s.rows]
[('H100-SXM', True), ('Lite', True)]
>>> s.row("Llama-3-8B", "H100-SXM", "decode").vs_baseline
1.0
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from compute.comm import NoCommunication
from compute.errors import UserError, chosen, lookalike
from compute.hardware import get_gpu
from compute.limits import check
from compute.models import get_model
from compute.phases import PHASES, Slo, check_phase, check_slo
from compute.roofline import bound_comm, check_options, make_workload, ring_comm
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH, check_max_batch, search
from compute.validate import describe
from compute.workers import forks, in_background
from netmodel.study.defaults import (
    BASELINE,
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    MOE_MODEL,
    SWEEP_GPU,
    SWEEP_HOP_LATENCY,
)
from netmodel.study.lite_gpu_files import (
    GC_YOUNG,  # noqa: F401 - the study's collector threshold, read here by tests
    draw_figures,
    few_collections,
    full_study_files,
    study_files,
    write_full_study,
    write_study,
)
from netmodel.study.lite_gpu_warm_up import import_written_modules, warm_before_fork
from netmodel.study.rows import BestRow, RowsResult, distinct_gpus, distinct_models, key, ratio_text
from netmodel.study.run_words import collectives_note, noted_settings

if TYPE_CHECKING:
    from compute.comm import CommLike
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from netmodel.study.compare import CompareResult
    from netmodel.study.crossovers import CrossoverResult
    from netmodel.study.distributed import Executor
    from netmodel.study.lite_gpu_parts import CostPart, ReliabilityPart, ServingPart
    from netmodel.study.scenarios import Scenario
    from netmodel.study.sweep import SweepResult

__all__ = ["BASELINE", "DEFAULT_GPUS", "DEFAULT_MODELS", "NETWORKS", "STUDY_COLUMNS",
           "SWEEP_GPU", "SWEEP_HOP_LATENCY", "FullStudy", "fabric_scenarios", "run_full_study",
           "write_full_study",
           "StudyResult", "StudyRow", "ideal_network", "run_lite_gpu_study", "study_files",
           "write_study"]



def ideal_network(gpu: GpuSpec) -> NoCommunication:
    """An ideal network: every collective is free."""
    return NoCommunication()


#: Named collective-cost factories: ``ring`` (the study's default, NCCL's ring over the
#: GPU's scale-up bandwidth: :func:`compute.roofline.ring_comm`), ``bound`` (the least time
#: of the algorithms engines run on the GPU's scale-up switch, a lower bound as the
#: roofline is, and infer's default: :func:`compute.roofline.bound_comm`) and ``ideal``.
NETWORKS = {"ring": ring_comm, "bound": bound_comm, "ideal": ideal_network}

@dataclass(frozen=True, kw_only=True)
class StudyRow(BestRow):
    """The best configuration of one model x GPU x phase x network."""

    network: str = key()   #: the network label (``ring``, ``ideal``, ...)


#: The study's CSV columns (from :class:`StudyRow`'s fields).
STUDY_COLUMNS = StudyRow.columns()


@dataclass(frozen=True, eq=False)
class StudyResult(RowsResult):
    """Rows of the study, with the searches behind them (same order) and the settings."""

    rows: tuple[StudyRow, ...] = ()
    settings: dict = field(default_factory=dict)
    searches: tuple = field(default=(), repr=False)
    baseline: str = BASELINE
    #: ``(network, its collective model's label)`` of each network (label "": none, the
    #: ideal network's free collectives), and the engine profile (None: the roofline):
    #: for ``settings``' ``profile_collectives_note`` of a sum of parts
    collectives: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    profile: Any = field(default=None, repr=False)

    ROW = StudyRow

    def __add__(self, other: StudyResult) -> StudyResult:
        collectives = tuple(dict.fromkeys(self.collectives + other.collectives))
        settings = {**self.settings, "networks": self.networks + tuple(
            n for n in other.networks if n not in self.networks)}
        return StudyResult(rows=self.rows + other.rows, searches=self.searches + other.searches,
                           baseline=self.baseline, collectives=collectives,
                           profile=self.profile,
                           settings=_collectives_noted(settings, self.profile, collectives))

    @property
    def networks(self) -> tuple[str, ...]:
        """Network labels in first-seen order."""
        return tuple(dict.fromkeys(r.network for r in self.rows))

    def row(self, model: str, gpu: str, phase: str, network: str | None = None) -> StudyRow:
        """The row of one model x GPU x phase (x network: default the first one)."""
        network = network or self.networks[0]
        for r in self.rows:
            if (r.model, r.gpu, r.phase, r.network) == (model, gpu, phase, network):
                return r
        raise UserError(f"the study has no row for {model} x {gpu} x {phase} x {network}")

    def to_json(self, indent: int | None = 2) -> str:
        """``{"study", "baseline", "settings", "rows"}`` (documented in docs/output-formats.md)."""
        return json.dumps({"study": "lite-gpu", "baseline": self.baseline,
                           "settings": self.settings, "rows": self.to_dicts()}, indent=indent)

    def table(self) -> str:
        """A plain-text table: the first network in full, the others' tokens/s/SM beside."""
        nets = self.networks
        head = (f"{'phase':<8}{'model':<16}{'gpu':<15}{'tp':>3}{'batch':>6}{'lat ms':>8}"
                f"{'tok/s/SM':>10}{'vs ' + self.baseline[:4]:>9}{'cmp%':>6}{'mem%':>6}"
                f"{'net%':>6}")
        head += "".join(f"{n[:10] + ' t/s/SM':>18}{'vs':>6}" for n in nets[1:])
        lines = [f"network: {nets[0]}" + "".join(f"; also {n}" for n in nets[1:]), head]
        for r in (r for r in self.rows if r.network == nets[0]):
            if r.feasible:
                lat = r.latency_s
                line = (f"{r.phase:<8}{r.model:<16}{r.gpu:<15}{r.tp:>3}{r.batch:>6}"
                        f"{lat * 1e3:>8.1f}{r.tokens_per_s_per_sm:>10.3f}{ratio_text(r.vs_baseline):>9}"
                        f"{r.compute_s / lat:>6.0%}{r.memory_s / lat:>6.0%}{r.network_s / lat:>6.0%}")
            else:
                line = (f"{r.phase:<8}{r.model:<16}{r.gpu:<15}{'-':>3}{'-':>6}{'-':>8}"
                        f"{'infeasible':>12}{'':>25}")   # apart from the '-' before it
            for n in nets[1:]:
                o = self.row(r.model, r.gpu, r.phase, n)
                val = f"{o.tokens_per_s_per_sm:.3f}" if o.feasible else "infeasible"
                line += f"{val:>18}{ratio_text(o.vs_baseline):>6}"
            lines.append(line.rstrip())   # an infeasible row alone ends in blank cells
        reasons = [f"  {r.model} x {r.gpu} x {r.phase} ({r.network}): {r.reason}"
                   for r in self.rows if not r.feasible]
        if reasons:
            lines += ["infeasible:"] + reasons
        return "\n".join(lines)


def _network_of(comm_factory: Callable[[GpuSpec], CommLike] | None,
                network: object) -> tuple[str, Callable[[GpuSpec], CommLike]]:
    """:func:`run_lite_gpu_study`'s ``(label, factory)``: a label of :data:`NETWORKS`
    without a factory costs with that network's (``network="bound"`` labelled the ring's
    figures ``bound``, as any name did); any other label needs a factory."""
    if network is not None and (not isinstance(network, str) or not network.strip()):
        raise UserError(f"network must be a name (non-empty text), got {describe(network)}")
    if comm_factory is None:
        network = network or "ring"
        if network not in NETWORKS:
            raise UserError(f"network {network!r} is none of the study's networks (known: "
                            f"{', '.join(NETWORKS)}), and with no comm_factory the rows are "
                            f"costed on the network named: give one of them, or a "
                            f"comm_factory for a network of your own")
        return network, NETWORKS[network]
    return network or "custom", comm_factory


def _network_names(networks: object) -> list[str]:
    """:func:`run_full_study`'s ``networks``, each once, in order, as a list (an iterator
    is read once): a text was read letter by letter (``networks="bound"``: ``unknown
    network 'b'``), None and a list of lists raised TypeError."""
    if isinstance(networks, str) or not isinstance(networks, Iterable):
        hint = f"; give [{networks!r}]" if isinstance(networks, str) else ""
        raise UserError(f"networks must be a list of the study's network names "
                        f"({', '.join(NETWORKS)}), got {describe(networks)}{hint}")
    names = list(networks)
    for n in names:
        if chosen(n, NETWORKS) is None:   # blanks at either end dropped, as every choice's
            raise UserError(f"unknown network {describe(n)}{lookalike(n, NETWORKS)}; known: "
                            f"{', '.join(NETWORKS)}")
    names = [chosen(n, NETWORKS) for n in names]
    if not names:
        raise UserError("give at least one network")
    return list(dict.fromkeys(names))


def run_lite_gpu_study(models: Iterable[str | ModelSpec] = DEFAULT_MODELS,
                       gpus: Iterable[str | GpuSpec] = DEFAULT_GPUS,
                       phases: Iterable[str] = PHASES, *,
                       comm_factory: Callable[[GpuSpec], CommLike] | None = None,
                       network: str | None = None, options: RooflineOptions | None = None,
                       slo: Slo | None = None, prompt: int | None = None,
                       context: int | None = None,
                       baseline: str = BASELINE, max_batch: int = DEFAULT_MAX_BATCH
                       ) -> StudyResult:
    """Best configuration of every model x GPU x phase (a pure function of its arguments).

    Parameters
    ----------
    models, gpus : iterables of names or specs
    phases : iterable of ``"prefill"`` / ``"decode"``
    comm_factory : callable, optional
        ``comm_factory(gpu) -> CollectiveCostModel``; default rings over the GPU's scale-up
        bandwidth (:func:`compute.roofline.ring_comm`, the study's ``ring`` network; not
        infer's default, the scale-up bound).
    network : str, optional
        Label of the network in the rows (default ``"ring"``, or ``"custom"`` with a
        ``comm_factory``). Without a ``comm_factory``, one of :data:`NETWORKS` (``ring``,
        ``bound``, ``ideal``), whose collectives the rows are costed with.
    options, slo, prompt, context, max_batch
        Passed to :func:`compute.search.search`.
    baseline : str
        GPU that ``vs_baseline`` divides by (in the same model, phase and network).
    """
    models = distinct_models(get_model(m) for m in models)
    gpus = distinct_gpus(get_gpu(g) for g in gpus)
    max_batch = check_max_batch(max_batch)   # Python's int in the JSON, not numpy's
    phases = [check_phase(p) for p in phases]
    if not (models and gpus and phases):
        raise UserError("the study needs at least one model, one GPU and one phase")
    network, factory = _network_of(comm_factory, network)
    options = check_options(options)
    slo = check_slo(slo)
    rows, searches, labels = [], [], {}
    for phase in phases:
        workload = make_workload(phase, prompt, context)
        for model in models:
            for gpu in gpus:
                comm = factory(gpu)
                labels.setdefault(getattr(comm, "label", ""), None)
                r = replace(search(model, gpu, workload, comm=comm, options=options,
                                   slo=slo, max_batch=max_batch), grid=None)
                searches.append(r)
                rows.append(StudyRow.from_search(r, network=network))
    rows = _with_ratios(rows, baseline)
    settings = {"slo": slo.to_dict(),
                "prompt_tokens": make_workload("prefill", prompt, context).prompt,
                "context_tokens": make_workload("decode", prompt, context).context,
                "options": options.to_dict(), "max_batch": max_batch, "networks": (network,)}
    settings = noted_settings(settings, options, rows)
    collectives = tuple((network, label) for label in labels)
    return StudyResult(rows=tuple(rows), searches=tuple(searches), baseline=baseline,
                       collectives=collectives, profile=options.profile,
                       settings=_collectives_noted(settings, options.profile, collectives))


def _collectives_noted(settings: dict, profile, collectives) -> dict:
    """``settings`` with ``profile_collectives_note`` where ``profile`` was fitted with other
    collectives than the networks' ``collectives`` (``(network, label)``): infer's note
    (:func:`~netmodel.study.run_words.collectives_note`), each network named. The ideal
    network's free collectives (no label) are no model a profile is fitted with: not said,
    as the fabric parts' scenarios are not (each fabric's own collectives, by design)."""
    settings = {k: v for k, v in settings.items() if k != "profile_collectives_note"}
    note = "" if profile is None else collectives_note(
        profile, [f"{label} (network {n})" for n, label in collectives if label])
    return {**settings, "profile_collectives_note": note} if note else settings


def _with_ratios(rows, baseline: str) -> list[StudyRow]:
    base = {(r.model, r.phase, r.network): r.tokens_per_s_per_sm for r in rows
            if r.gpu == baseline and r.feasible}
    return [r.with_ratio(base.get((r.model, r.phase, r.network))) for r in rows]


@dataclass(frozen=True, eq=False)
class FullStudy:
    """The parts of ``netmodel study lite-gpu``: the ideal-network comparison
    (:class:`StudyResult`), the fabric comparison
    (:class:`~netmodel.study.compare.CompareResult`), the per-hop latency sweep
    (:class:`~netmodel.study.sweep_result.SweepResult`) and the parts below; each None when
    skipped."""

    ideal: StudyResult
    fabric: CompareResult | None = None
    sweep: SweepResult | None = None
    #: The fabric comparison under the paper's assumption (each collective overlapped with
    #: the GEMM that feeds it); None when skipped or when ``fabric`` already assumes it.
    paper: CompareResult | None = None
    #: Blast radius and availability (:class:`~netmodel.study.lite_gpu_parts.ReliabilityPart`).
    reliability: ReliabilityPart | None = None
    #: Power and cost (:class:`~netmodel.study.lite_gpu_parts.CostPart`).
    cost: CostPart | None = None
    #: Co-design crossovers (:class:`~netmodel.study.crossovers.CrossoverResult`).
    crossovers: CrossoverResult | None = None
    #: Disaggregated serving (:class:`~netmodel.study.lite_gpu_parts.ServingPart`).
    serving: ServingPart | None = None
    #: The MoE model on each scenario with its own GPU
    #: (:class:`~netmodel.study.compare.CompareResult`).
    moe: CompareResult | None = None
    #: The fabric comparison packed: every instance of the cluster at once, stranded GPUs
    #: charged (:class:`~netmodel.study.compare.CompareResult`).
    packed: CompareResult | None = None
    #: Seconds each part took (printed, never written: files stay byte-identical).
    timings: dict = field(default_factory=dict)
    #: Figures already drawn, ``{file name: bytes}``: those of the parts that ran beside
    #: the others, drawn there (:func:`run_full_study`'s ``figures``); written as they are.
    figures: dict = field(default_factory=dict, repr=False)

    def table(self) -> str:
        """The parts' tables, one after the other, in summary.md's order (1, 2, 2b the
        paper's assumption, 2c the crossovers, 3 the sweep)."""
        parts = [self.ideal.table()]
        if self.fabric is not None:
            parts.append("fabric comparison (tokens/s/SM of the best configuration per "
                         "scenario)\n" + self.fabric.table())
        if self.paper is not None:
            parts.append("fabric comparison under the paper's assumption (collectives "
                         "overlapped with the GEMM that feeds them)\n" + self.paper.table())
        if self.crossovers is not None:
            parts.append("co-design crossovers\n" + self.crossovers.table())
        if self.sweep is not None:
            parts.append("per-hop latency sweep\n" + self.sweep.table())
        return "\n\n".join(parts)

    def to_json(self, indent: int | None = 2) -> str:
        """``{"study", "fabric", "paper", "sweep", "reliability", "cost", "crossovers",
        "serving", "moe", "packed"}``: the parts' JSON documents (``null`` for a part that
        was skipped)."""
        parts = {"study": self.ideal, "fabric": self.fabric, "paper": self.paper,
                 "sweep": self.sweep}
        doc = {k: None if v is None else json.loads(v.to_json(indent=None))
               for k, v in parts.items()}
        doc["reliability"] = None if self.reliability is None else \
            self.reliability.to_dicts()
        doc["cost"] = None if self.cost is None else [s.to_dict()
                                                      for s in self.cost.summaries]
        doc["crossovers"] = None if self.crossovers is None else self.crossovers.to_dicts()
        doc["serving"] = None if self.serving is None else self.serving.rows()
        for name in ("moe", "packed"):
            part = getattr(self, name)
            doc[name] = None if part is None else json.loads(part.to_json(indent=None))
        return json.dumps(doc, indent=indent)


def fabric_scenarios(gpus: Iterable[str | GpuSpec],
                     scenarios: Iterable[str | Scenario] | None = None, baseline: str = BASELINE
                    ) -> list[Scenario]:
    """The fabric part's scenarios: each scenario whose own GPU is ``baseline`` (h100-dgx)
    runs with it; every other scenario runs with each GPU of ``gpus`` but the baseline,
    except one on a fabric graph (a scenario file's ``fabric = "FILE"``, a
    :func:`~netmodel.study.scenarios.fabric_scenario`), whose GPUs are part of the graph:
    it runs with its own GPU alone, whether or not ``gpus`` holds it
    (:attr:`Scenario.fixed_gpu <netmodel.study.scenarios.Scenario.fixed_gpu>`; the study's
    notes name them).
    The baseline scenario (:data:`~netmodel.study.defaults.BASELINE_SCENARIO`), which every
    fabric ratio divides by, is always there, added first when ``scenarios`` lacks it.

    >>> [s.label for s in fabric_scenarios(["H100-SXM", "Lite"], ["h100-dgx", "lite-flat"])]
    ['h100-dgx@H100-SXM', 'lite-flat@Lite']
    >>> [s.label for s in fabric_scenarios(["H100-SXM", "Lite"], ["lite-flat"])]
    ['h100-dgx@H100-SXM', 'lite-flat@Lite']
    >>> from topologies.specs import build
    >>> from netmodel.study.scenarios import fabric_scenario
    >>> mine = fabric_scenario(build("ring:n=8,gpu=Lite"), "ring:n=8,gpu=Lite")
    >>> [s.label for s in fabric_scenarios(["H100-SXM", "Lite+BW", "Lite+NetBW"], [mine])]
    ['h100-dgx@H100-SXM', 'ring:n=8,gpu=Lite']
    """
    from netmodel.study.defaults import BASELINE_SCENARIO
    from netmodel.study.scenario_catalog import get_scenario, scenario_names, split_ref

    others = [g for g in map(get_gpu, gpus) if g.name != baseline]
    refs = [get_scenario(ref) for ref in scenarios or scenario_names()]
    for ref, s in zip(scenarios or (), refs, strict=False):
        if isinstance(ref, str) and split_ref(ref)[1] and s.gpu != baseline \
                and not s.fixed_gpu:   # run on each of others instead: '@' never run
            raise UserError(f"scenarios {ref!r} swaps in GPU {s.gpu!r}, and gpus "
                            f"({', '.join(g.name for g in others)}) runs every scenario on "
                            f"each of its GPUs instead of the scenario's own (those on "
                            f"{baseline} aside); give {split_ref(ref)[0]!r} and put {s.gpu!r} "
                            f"in gpus")
    if BASELINE_SCENARIO not in {s.name for s in refs}:
        refs.insert(0, get_scenario(BASELINE_SCENARIO))
    out = {}
    for s in refs:
        for v in ([s] if s.gpu == baseline or s.fixed_gpu else
                  [s.with_gpu(g) for g in others]):
            out.setdefault(v.label, v)
    return list(out.values())


class _Laps:
    """Seconds each part of a run took: calling it with a part's name records the time
    since the previous call (or since it was made, or :meth:`restart`)."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}
        self.restart()

    def restart(self) -> None:
        self._start = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.times[name] = now - self._start
        self._start = now


@few_collections
def run_full_study(models: Sequence[str | ModelSpec] = DEFAULT_MODELS,
                   gpus: Iterable[str | GpuSpec] = DEFAULT_GPUS, phases: Sequence[str] = PHASES, *,
                   networks: Iterable[str] = ("ring", "ideal"),
                   scenarios: Iterable[str | Scenario] | None = None, fabric: bool = True,
                   sweep: bool = True, paper: bool = True, reliability: bool = True,
                   cost: bool = True, crossovers: bool = True, serving: bool = True,
                   moe: str | None = MOE_MODEL, packed: bool = True, parallelism: str = "auto",
                   executor: Executor | None = None, options: RooflineOptions | None = None,
                   slo: Slo | None = None, prompt: int | None = None, context: int | None = None,
                   max_batch: int = DEFAULT_MAX_BATCH, quiet: bool = True,
                   figures: bool = False, plot: bool = True) -> FullStudy:
    """The whole Lite-GPU study: :func:`run_lite_gpu_study` for each of ``networks``, then
    :func:`~netmodel.study.compare.run_compare` over :func:`fabric_scenarios`, then a sweep of the
    per-hop latency (:data:`SWEEP_HOP_LATENCY`, decode) of h100-dgx and the Lite scenarios
    with :data:`SWEEP_GPU` (or the last Lite GPU of ``gpus`` when it is not there). With
    ``paper`` the fabric comparison runs a second time under the paper's assumption
    (``overlap_collectives``: each collective hidden behind the GEMM that feeds it, as the
    Lite-GPU paper's model overlaps network I/O inside each stage), so the summary can say
    which claim holds under which assumption. The baseline GPU (:data:`BASELINE`) is always part of the study, added when ``gpus`` lacks
    it: every ratio divides by it. A progress bar shows on stderr unless ``quiet``.
    ``executor`` (:class:`netmodel.study.distributed.Executor`) runs the comparisons' and
    the sweep's cells on Dask; the other parts run here. With more than one core
    (:func:`compute.workers.jobs`), the MoE part runs from the start in a forked process
    (it needs nothing the other parts compute), and the crossovers and the sweep in
    another, forked once the fabric comparison is done (with its caches), and the blast
    radius in a third, forked then too, beside the paper's assumption, cost, serving and
    packed parts here (the packed comparison costs the same scenarios' collectives; here,
    not after the crossovers and the sweep, so that the three processes end together on
    two cores instead of the crossovers' alone for ~2 s); with ``figures``
    each process draws its parts' figures (kept in ``FullStudy.figures`` for
    :func:`write_full_study`). ``plot=False``: the result is not to be drawn (the CLI's
    ``--no-plot``; ``figures`` then false), so what only a figure reads is not worked out:
    the blast radius's spare curves (:func:`~netmodel.study.lite_gpu_parts.reliability_part`'s
    ``curves``), and :func:`write_full_study` with ``plot`` then draws no
    ``reliability_spares.png``. The result never depends on how many processes computed
    it."""
    from compute.validate import flag
    from netmodel.study.progress import NO_PROGRESS, Progress

    # a flag of 'no' or 0.0 was taken as its truth ('no' ran the part)
    for what, value in (("fabric", fabric), ("sweep", sweep), ("paper", paper),
                       ("reliability", reliability), ("cost", cost),
                       ("crossovers", crossovers), ("serving", serving), ("packed", packed),
                       ("quiet", quiet), ("figures", figures), ("plot", plot)):
        flag("the study", what, value)
    if figures and not plot:   # figures drawn of a result not to be drawn
        raise UserError("figures=True with plot=False: the figures would be drawn without "
                        "what they read; give plot=True, or figures=False")
    max_batch = check_max_batch(max_batch)   # Python's int in the JSON, not numpy's
    if not fabric and executor is not None and executor.distributed:
        # only the fabric parts run on an executor: it was taken and never used
        raise UserError(f"executor {executor!r} with fabric=False: nothing would run on it "
                        f"(only the fabric parts do); give fabric=True or no executor")
    lap = _Laps()
    timings = lap.times

    gpus = distinct_gpus(get_gpu(g) for g in gpus)
    distinct_models(get_model(m) for m in models)
    if not gpus:   # it ran the baseline alone, where models=[] is refused
        raise UserError(f"gpus is empty: give at least one GPU name or GpuSpec (the default "
                        f"is {', '.join(DEFAULT_GPUS)})")
    if BASELINE not in [g.name for g in gpus]:  # every ratio of the study divides by it
        gpus.insert(0, get_gpu(BASELINE))
    # every input is checked before the first part runs, even one of a part skipped
    if moe is not None and get_model(moe).experts <= 1:
        raise UserError(f"moe model {get_model(moe).name!r} is not a mixture of experts (one "
                        f"MLP per layer); give one with experts, e.g. {MOE_MODEL!r}, or moe=None "
                        f"to skip the part")
    scens = fabric_scenarios(gpus, scenarios) if fabric or scenarios is not None else []
    networks = _network_names(networks)
    models = [get_model(m) for m in models]
    from netmodel.study.search_options import refuse_unwired_options

    refuse_unwired_options(options, "the study",
                           models + ([get_model(moe)] if moe is not None else []))
    options = check_options(options)
    from netmodel.study.compare import MAX_SEARCHES, run_compare
    from netmodel.study.lite_gpu_parts import own_gpu_scenarios
    from netmodel.study.sweep import parse_param, run_sweep

    if fabric:   # its comparisons' limit, said before any part runs (the first refused
        # run_compare's 24,000 searches only after the GPUs alone and, forked, the packed part)
        check("study", "searches of the fabric comparison", len(scens) * len(models)
              * len(phases), MAX_SEARCHES, "NETMODEL_MAX_COMPARE_SEARCHES",
              "give fewer scenarios, GPUs, models or phases")
    own = own_gpu_scenarios(scens)
    packed = packed and fabric and any(s.instances != "all" for s in own)
    moe = moe if fabric else None
    beside = (executor is None or not executor.distributed) and forks()

    def packed_part(progress, part_done) -> CompareResult | None:
        """The packed comparison: each scenario on its own GPU, every instance at once
        (the costliest costing); it needs only the fabric comparison's caches."""
        if not packed:
            return None
        out = run_compare(models, own, phases, options=options, slo=slo, prompt=prompt,
                          context=context, max_batch=max_batch, progress=progress,
                          instances="all", parallelism=parallelism, executor=executor)
        part_done("fabrics, packed")
        return out

    def moe_part() -> tuple:
        """The MoE part and its time: it needs nothing the others compute, so (with more
        than one core) it runs from the start in a forked process."""
        part_done = _Laps()
        out = None
        if moe:
            out = run_compare([moe], own, phases, options=options, slo=slo, prompt=prompt,
                              context=context, max_batch=max_batch, parallelism=parallelism,
                              executor=executor)
            part_done("mixture of experts")
        return out, part_done.times

    if beside and moe:
        # what both the forked MoE part and the fabric comparison use (the GPUs' prices,
        # the modules the comparisons run on, the instances both place): made once, here
        warm_before_fork(scens, own, get_model(moe), models)
        lap("inputs and GPU prices")
    early = in_background(moe_part) if beside and moe else None
    ideal = None
    for n in networks:
        part = run_lite_gpu_study(models, gpus, phases, comm_factory=NETWORKS[n], network=n,
                                  options=options, slo=slo, prompt=prompt, context=context,
                                  max_batch=max_batch)
        ideal = part if ideal is None else ideal + part
    lap("GPUs alone")
    if not fabric:
        return FullStudy(ideal, timings=timings)

    lites = [g for g in (get_gpu(x).name for x in gpus) if g != BASELINE]
    sweep_gpu = SWEEP_GPU if SWEEP_GPU in lites else (lites[-1] if lites else None)
    swept = [s for s in scens if s.gpu in (BASELINE, sweep_gpu)] if sweep else []
    param = parse_param(SWEEP_HOP_LATENCY, swept) if swept else None
    decode = [p for p in phases if p == "decode"]
    paper_options = replace(options, overlap_collectives=True) \
        if paper and not options.overlap_collectives else None
    fabric_work = len(scens) * len(models) * len(phases)
    packed_work = len(own) * len(models) * len(phases) * packed
    # the crossovers and the sweep need only the fabric comparison: they run beside the
    # other parts, in a forked process that starts with this one's caches (here, one
    # after the other, with one core, NETMODEL_JOBS=1 or on Dask)
    side_work = len(swept) * len(param.values) if param and decode else 0
    work = fabric_work * (1 + bool(paper_options)) + side_work * (not beside) \
        + packed_work * (not beside)
    colls: dict = {}
    with Progress(work, "lite-gpu study", quiet=quiet) as bar:
        compared = run_compare(models, scens, phases, options=options, slo=slo, prompt=prompt,
                               context=context, max_batch=max_batch, progress=bar,
                               collectives=colls, parallelism=parallelism, executor=executor)
        lap("fabrics")
        first = models[0]   # the spec: a model file's name is not in the catalog

        def side_parts(progress) -> tuple:
            """Crossovers and the sweep: parts that need only the fabric comparison (and
            its caches). The packed comparison runs in the main process (see below)."""
            part_done = _Laps()
            cross = None
            if crossovers and all(s.instances == "alone" for s in scens):
                from netmodel.study.crossovers import find_crossovers

                cross = find_crossovers(compared, options=options, slo=slo, models=models)
                part_done("co-design crossovers")
            swept_result = None
            if param and decode:
                swept_result = run_sweep(swept, [param], models, decode, options=options,
                                         slo=slo, prompt=prompt, context=context,
                                         max_batch=max_batch, progress=progress,
                                         parallelism=parallelism, executor=executor)
                part_done("per-hop latency sweep")
            drawn: dict = {}
            if figures and progress is NO_PROGRESS:   # beside: draw these parts' figures
                ours = full_study_files(FullStudy(ideal, compared, swept_result,
                                                  crossovers=cross), summary=False)
                drawn = draw_figures({k: v for k, v in ours.items() if k not in study_files(ideal)})
                part_done("figures beside")
            return cross, swept_result, part_done.times, drawn

        if figures and beside:   # imported once, here, for both processes that draw
            from netmodel.study.figure_kit import pyplot

            pyplot()
        side = in_background(lambda: side_parts(NO_PROGRESS)) if beside else None

        def blast_part() -> tuple:
            """The blast radius (it needs only the fabric comparison) and, beside, its
            figure."""
            from netmodel.study.lite_gpu_parts import reliability_part

            part_done = _Laps()
            out = reliability_part(compared, first, "decode", slo=slo, options=options,
                                   curves=plot)
            part_done("blast radius")
            drawn: dict = {}
            if figures and beside:
                ours = full_study_files(FullStudy(ideal, reliability=out), summary=False)
                theirs = study_files(ideal)   # once, not once a file (its CSV and JSON each)
                drawn = draw_figures({k: v for k, v in ours.items() if k not in theirs})
                part_done("figures of the blast radius")
            return out, part_done.times, drawn

        # beside too, in a third process: the longest part after the fabric comparison
        blast = None
        if beside and reliability and "decode" in phases:
            import_written_modules()   # once, here, not in both processes
            blast = in_background(blast_part)
        if side is None:
            cross, swept_result, side_times, drawn = side_parts(bar)
            lap.restart()   # the side parts keep their own times
        paper_result = None
        if paper_options is not None:
            paper_result = run_compare(models, scens, phases, options=paper_options, slo=slo,
                                       prompt=prompt, context=context, max_batch=max_batch,
                                       progress=bar, collectives=colls,
                                       parallelism=parallelism, executor=executor)
            lap("fabrics, paper's assumption")
        if side is None:
            early_times = _Laps()
            packed_result = packed_part(bar, early_times)
            moe_result, moe_times = moe_part()
            early_times = {**early_times.times, **moe_times}
            lap.restart()
    rel_part = cost_result = None
    if blast is None and reliability and "decode" in phases:
        rel_part, _, _ = blast_part()
        lap("blast radius")
    if cost:
        from netmodel.study.lite_gpu_parts import cost_part

        cost_result = cost_part(compared, first, phases)
        lap("power and cost")
    serving_result = None
    if serving:
        from netmodel.study.lite_gpu_parts import serving_part

        serving_result = serving_part(compared, first, slo=slo, options=options,
                                      collectives=colls)
        lap("disaggregated serving")
    if side is not None:   # beside the crossovers and the sweep: it balances the cores
        packed_result = packed_part(NO_PROGRESS, lap)
    if figures and side is not None:   # while the parts beside finish: the figures of the
        here = draw_figures(full_study_files(FullStudy(ideal, reliability=rel_part,  # parts here
                                                cost=cost_result, serving=serving_result),
                                      summary=False))
        lap("figures here")
    if blast is not None:
        rel_part, blast_times, blast_drawn = blast.result()
        timings.update(blast_times)
        if figures:
            here.update(blast_drawn)
        lap("waiting for the blast radius")
    if early is not None:
        moe_result, early_times = early.result()
        lap("waiting for the MoE part")
    elif side is not None:   # beside, and no MoE part
        moe_result, early_times = None, {}
    if side is not None:
        cross, swept_result, side_times, drawn = side.result()
        if figures:
            drawn.update(here)
        lap("waiting for the parts beside")
    timings.update(early_times)
    timings.update(side_times)
    return FullStudy(ideal, compared, swept_result, paper_result, rel_part, cost_result,
                     cross, serving_result, moe_result, packed_result, timings, drawn)
