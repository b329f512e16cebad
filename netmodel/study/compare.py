"""``netmodel compare``: the best configuration of each model x scenario x phase on the
scenario's fabric, side by side.

Each row is :func:`~netmodel.study.fabric_search.fabric_search`'s best configuration (TP degree,
batch, TTFT or TBT, tokens/s, tokens/s/SM), the split of its step time into compute, memory
and network (the network share is the part of the step bound by collectives), its ratio to
the baseline scenario (``h100-dgx`` when present) and to the same GPU with an ideal network
(free collectives: what the fabric costs), and the circuit reconfiguration time of an
optical circuit-switched fabric (paid once per re-provisioning, never per token).

>>> r = run_compare(["Llama-3-8B"], ["h100-dgx", "lite-flat"], ["decode"])
>>> [(row.label, row.feasible) for row in r.rows]
[('h100-dgx@H100-SXM', True), ('lite-flat@Lite', True)]
>>> r.row("Llama-3-8B", "h100-dgx@H100-SXM", "decode").vs_baseline
1.0
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from os import PathLike
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from compute.comm import NoCommunication
from compute.errors import UserError
from compute.limits import check
from compute.memo import Lru
from compute.models import get_model
from compute.parallel import Parallelism
from compute.phases import DECODE, PHASES, Slo, check_phase, check_slo, latency_name, slo_text
from compute.roofline import check_options, make_workload
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH, check_max_batch, search
from compute.validate import describe, flag, listed
from netmodel.study.defaults import BASELINE_SCENARIO
from netmodel.study.progress import NO_PROGRESS
from netmodel.study.rows import (
    FabricRow,
    RowsResult,
    column,
    distinct_models,
    key,
    mtp_note,
    ratio_text,
)
from netmodel.study.run_words import noted_settings
from netmodel.study.scenario_catalog import expand_scenarios, instances_note
from netmodel.study.scenarios import BEST
from netmodel.study.summary_words import and_list

if TYPE_CHECKING:
    from pathlib import Path

    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from netmodel.study.distributed import Executor
    from netmodel.study.fabric_search import FabricSearch
    from netmodel.study.progress import ProgressLike
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from netmodel.study.scenarios import Scenario

__all__ = ["BASELINE_SCENARIO", "COMPARE_COLUMNS", "CompareResult", "CompareRow",
           "compare_files", "run_compare",
           "write_compare"]


#: Most searches of one comparison: scenarios (x GPUs) x models x phases
#: (``NETMODEL_MAX_COMPARE_SEARCHES`` overrides), as a sweep's
#: (:data:`netmodel.study.sweep_params.MAX_SEARCHES`): each takes 5-100 ms on one core (about 12 ms
#: for 5 copies of h100-dgx x 10 GPUs x 8 models x 2 phases, 800 searches in 10 s).
MAX_SEARCHES = 20_000


def _num(v, width: int, decimals: int) -> str:
    """A number right-aligned in ``width`` with fixed ``decimals``, or ``-``, after a blank
    however wide (:func:`~netmodel.study.rows.column`).

    >>> _num(0.328, 8, 3), _num(7016.019, 8, 3), _num(None, 4, 0)
    ('   0.328', ' 7,016.019', '   -')
    """
    return column("-" if v is None else f"{v:,.{decimals}f}", width)




@dataclass(frozen=True, kw_only=True)
class CompareRow(FabricRow):
    """The best configuration of one model on one scenario in one phase."""

    scenario: str = key()              #: scenario name
    label: str = key()                 #: ``scenario@gpu``
    ideal_tokens_per_s_per_sm: float | None = None  #: same GPU, free collectives
    vs_ideal: float | None = None      #: tokens/s/SM over ``ideal_tokens_per_s_per_sm``
    reconfiguration_s: float = 0.0     #: OCS circuits of the best instance; once per setup
    fabric: str = ""                   #: the fabric's spec string


#: The comparison's CSV columns (from :class:`CompareRow`'s fields) without multi-token
#: prediction; with it, :meth:`CompareRow.columns` (its :func:`~netmodel.study.rows.when_set`
#: fields too, after ``packed_fraction``).
COMPARE_COLUMNS = tuple(c for c in CompareRow.columns() if c not in CompareRow.when_set_fields())


@dataclass(frozen=True, eq=False)
class CompareResult(RowsResult):
    """Rows (model-major within each phase), the scenarios compared and the settings."""

    rows: tuple[CompareRow, ...] = ()
    settings: dict = field(default_factory=dict)
    scenarios: tuple = ()
    baseline: str | None = None        #: label of the baseline scenario
    searches: tuple = field(default=(), repr=False)

    ROW = CompareRow

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.scenarios)

    def row(self, model: str, label: str, phase: str) -> CompareRow:
        """The row of one model x scenario label (``name@gpu``) x phase."""
        for r in self.rows:
            if (r.model, r.label, r.phase) == (model, label, phase):
                return r
        raise UserError(f"the comparison has no row for {model} x {label} x {phase}")

    def to_json(self, indent: int | None = 2) -> str:
        """``{"comparison", "baseline", "settings", "scenarios", "rows"}`` (see README)."""
        set_as = self.circuits_set()
        scen = [{"label": s.label, "name": s.name, "gpu": s.gpu,
                 "description": s.description, "fabric": s.fabric_spec(),
                 "placement": s.placement, "algorithm": s.algorithm, "links": s.links,
                 "calibration": s.calibration, "circuits": s.circuits,
                 **({"circuits_set": {str(k): v for k, v in set_as[s.label].items()}}
                    if s.label in set_as else {}),
                 "adjust": asdict(s.adjust), "sources": s.sources,
                 **({"instances": s.instances} if s.instances != "alone" else {})}
                for s in self.scenarios]
        return json.dumps({"comparison": "fabrics", "baseline": self.baseline,
                           "settings": self.settings, "scenarios": scen,
                           "rows": self.to_dicts()}, indent=indent)

    def circuits_set(self) -> dict[str, dict[int, str]]:
        """``{label: {instance GPUs: layout}}``: the layout the best instances of each
        scenario with ``circuits = "best"`` (which chooses it per size) had their circuits
        set as (:attr:`~netmodel.study.fabric_search.FabricSearch.circuits`); a scenario
        of one layout says it in its ``circuits``."""
        out: dict[str, dict[int, str]] = {}
        for f in self.searches:
            if f.circuits and f.best is not None and f.scenario.circuits == BEST:
                out.setdefault(f.scenario.label, {})[int(f.best.gpus)] = f.circuits
        return {lab: dict(sorted(d.items())) for lab, d in out.items()}

    def _slo_heading(self, phase: str) -> str:
        """`` (TBT <= 50 ms)``: the SLO the phase's searches met (:func:`slo_text`; TPOT with
        multi-token prediction in decode), or nothing where the settings hold none."""
        slo = self.settings.get("slo") or {}
        limit = slo.get(f"{latency_name(phase)}_s")
        if limit is None:
            return ""
        mtp = phase == DECODE and bool((self.settings.get("options") or {}).get("mtp_tokens"))
        return f" ({slo_text(phase, limit, mtp=mtp)})"

    def table(self) -> str:
        """A plain-text table, one block per phase and model, its heading the SLO."""
        width = max([len(lab) for lab in self.labels] + [8]) + 2
        base = self.baseline or "-"
        vs = max(12, len(base) + 4)  # the "vs BASELINE" column fits the baseline's label
        lines = []
        rel_head = f"{'avail':>9}{'SMs/GPUf':>9}" if any(
            r.availability is not None for r in self.rows) else ""
        for phase in self.phases:
            lat = latency_name(phase).upper()
            for model in self.models:
                block = [r for r in self.rows if r.phase == phase and r.model == model]
                # with every instance at once a row's tokens/s are the cluster's
                together = [r for r in block if r.feasible and r.instances]
                every = bool(together) and len(together) == sum(r.feasible for r in block)
                lines.append(f"{phase} {model}{self._slo_heading(phase)}")
                lines.append(f"  {'scenario':<{width}}{'tp':>3}{'batch':>6}{lat + ' ms':>9}"
                             f"{'tok/s all' if every else 'tok/s/inst':>12}{'tok/s/SM':>10}"
                             f"{'vs ' + base:>{vs}}{'vs ideal':>9}"
                             f"{'net%':>6}{'tok/s/W':>9}{'$/Mtok':>8}" + rel_head)
                for r in block:
                    if not r.feasible:
                        lines.append(f"  {r.label:<{width}}{'-':>3}{'-':>6}{'-':>9}"
                                     f"{'infeasible':>13}")
                        continue
                    lines.append(
                        f"  {r.label:<{width}}{r.tp:>3}{column(str(r.batch), 6)}"
                        f"{column(f'{r.latency_s * 1e3:.2f}', 9)}"
                        f"{column(f'{r.tokens_per_s:,.0f}', 12)}"
                        f"{column(f'{r.tokens_per_s_per_sm:.3f}', 10)}"
                        f"{column(ratio_text(r.vs_baseline), vs)}{column(ratio_text(r.vs_ideal), 9)}"
                        f"{column(f'{r.network_share:.0%}', 6)}{_num(r.tokens_per_s_per_w, 9, 3)}"
                        f"{_num(r.usd_per_mtoken, 8, 3)}" + (
                            f"{_num(r.availability, 9, 5)}"
                            f"{_num(r.sms_down_per_gpu_failure_sw, 9, 0)}" if rel_head else ""))
                if together:   # instances = all: which rows count how many instances
                    counts = ", ".join(f"{r.label} {r.instances:,}" for r in together)
                    lines.append(f"  tok/s all: every instance together ({counts})" if every
                                 else "  tok/s/inst of " + ", ".join(
                                     f"{r.label}: its {r.instances:,} instances together"
                                     for r in together) + " (instances = all)")
                spread = [r for r in block
                          if r.feasible and (r.pp, r.ep, r.attention_dp) != (1, 1, 1)]
                if spread:   # the tp column alone would misread these as tp GPUs
                    lines.append("  beyond TP: " + "; ".join(
                        f"{r.label} {Parallelism.of(r).label} ({r.instance_gpus} GPUs)"
                        for r in spread))
        # in the tables' order (lite-ocs@Lite, @Lite+NetBW, @Lite+MemBW, ...), not sorted
        reconf = list(dict.fromkeys((r.label, r.reconfiguration_s) for r in self.rows
                                    if r.reconfiguration_s > 0))
        if reconf:
            set_as = self.circuits_set()
            # the same time and circuits said once for every label that has them (five
            # Lites on lite-ocs repeated one text five times)
            said: dict[str, list[str]] = {}
            for lab, t in reconf:
                said.setdefault(f"{t * 1e3:g} ms" + _layouts(set_as.get(lab)), []).append(lab)
            lines.append("circuit reconfiguration (once per re-provisioning, not per token): "
                         + "; ".join(f"{and_list(labs)} {text}" if len(labs) == 1 else
                                     f"{and_list(labs)} {text.replace(' ms', ' ms each', 1)}"
                                     for text, labs in said.items()))
        capped = self.batch_limit_line()
        if capped:
            lines.append(capped)
        lines += two_batch_lines(self.searches)
        lines += mtp_lines(self.rows, self.settings.get("options", {}))
        # every note: a fallback schedule, and why a row's cost (tok/s/W, $/Mtok) or
        # reliability columns are '-' (a GPU file without a die table)
        lines += [f"note: {k}: {v}" for k, v in self.settings.get("not_computed", {}).items()]
        lines += fallback_lines(self.rows)
        lines += threshold_low_lines(self.rows)
        bad = [f"  {r.model} x {r.label} x {r.phase}: {r.reason}" for r in self.rows
               if not r.feasible]
        if bad:
            lines += ["infeasible:"] + bad
        return "\n".join(lines)


def fallback_lines(rows: Iterable[FabricRow]) -> list[str]:
    """A note for each set of closed-form fallbacks past the spare chain's limit that
    rows' reliability figures took (``analytic_fallback``), naming the rows; none where
    no row took one.

    >>> row = CompareRow(model="Llama-3-8B", gpu="Lite", phase="decode", feasible=True,
    ...                  scenario="lite-flat", label="lite-flat@Lite", latency_name="tbt",
    ...                  latency_limit_s=0.05, analytic_fallback=("one repair time",))
    >>> print(fallback_lines([row])[0])
    note: the reliability columns' closed form passed the spare chain's limit (30,000 states) and fell back to one repair time for lite-flat@Lite Llama-3-8B decode: an approximation
    """
    said: dict = {}
    for r in rows:
        if r.analytic_fallback:
            said.setdefault(tuple(r.analytic_fallback), []).append(
                f"{r.label} {r.model} {r.phase}")
    if not said:
        return []
    from netmodel.study.availability_busy import fallback_words

    return [f"note: the reliability columns' closed form {fallback_words(fell)} for "
            f"{', '.join(names)}: an approximation" for fell, names in said.items()]


def threshold_low_lines(rows: Iterable[FabricRow]) -> list[str]:
    """A note naming the rows whose ``spares_needed`` rests on a closed-form time below
    the threshold in the regime where it reads low (``threshold_low``); none where no
    row's does.

    >>> row = CompareRow(model="Llama-3-8B", gpu="Lite", phase="decode", feasible=True,
    ...                  scenario="lite-flat", label="lite-flat@Lite", latency_name="tbt",
    ...                  latency_limit_s=0.05, threshold_low=True)
    >>> print(threshold_low_lines([row])[0])
    note: spares_needed of lite-flat@Lite Llama-3-8B decode rests on a closed-form time below the threshold that may read low (a busy pool refuses failures together): netmodel availability --spares N tells by Monte Carlo (pod or global --spare-placement; N is enough where its time below 99% capacity is at most 0.001)
    """
    names = [f"{r.label} {r.model} {r.phase}" for r in rows if r.threshold_low]
    if not names:
        return []
    return [f"note: spares_needed of {', '.join(names)} rests on a closed-form time below "
            f"the threshold that may read low (a busy pool refuses failures together): "
            f"netmodel availability --spares N tells by Monte Carlo (pod or global "
            f"--spare-placement; N is enough where its time below 99% capacity is at most "
            f"0.001)"]


def _layouts(set_as: dict[int, str] | None) -> str:
    """`` (circuits: torus at 16, 32 GPUs, ring at 8)``: the layouts of
    :meth:`CompareResult.circuits_set`'s entry, or nothing.

    >>> _layouts({8: "ring", 16: "torus", 32: "torus"})
    ' (circuits: ring at 8 GPUs, torus at 16, 32 GPUs)'
    """
    if not set_as:
        return ""
    by: dict[str, list[int]] = {}
    for size, lay in set_as.items():
        by.setdefault(lay, []).append(size)
    return " (circuits: " + ", ".join(
        f"{lay} at {', '.join(map(str, sizes))} GPUs" for lay, sizes in by.items()) + ")"


def two_batch_lines(searches: Iterable[FabricSearch]) -> list[str]:
    """With two-batch overlap allowed: which rows' best steps run as two micro-batches
    (their latency the overlapped step's, ``network_s`` the collectives it leaves
    exposed) and which stay serial; none without the option."""
    said = {}
    for f in searches:
        b = f.best
        if b is not None and b.two_batch_hidden is not None:
            said.setdefault(b.two_batch_hidden > 0, []).append(
                f"{f.scenario.label} {b.model} {b.phase}" + (
                    f" ({b.two_batch_hidden * 1e3:.4g} ms hidden)" if b.two_batch_hidden > 0
                    else ""))
    return [f"two-batch overlap {'taken' if used else 'not taken (the serial step is faster)'}"
            f": {', '.join(rows)}" for used, rows in sorted(said.items(), reverse=True)]


def mtp_lines(rows: Iterable[CompareRow], options: Mapping) -> list[str]:
    """With multi-token prediction (``options``: a RooflineOptions dict with
    ``mtp_tokens``): :func:`~netmodel.study.rows.mtp_note` and each feasible decode row's
    time per output token, which the TBT SLO checks; none without it.

    >>> row = CompareRow(model="DeepSeek-V3", gpu="H100-SXM", phase="decode", feasible=True,
    ...                  scenario="h100-dgx", label="h100-dgx@H100-SXM", latency_name="tbt",
    ...                  latency_s=0.038, latency_limit_s=0.05, tpot_s=0.02,
    ...                  mtp_expected_tokens=1.9, mtp_draft_s=0.0012)
    >>> print(mtp_lines([row], {"mtp_tokens": 1, "mtp_acceptance": 0.9})[1])
      TPOT: h100-dgx@H100-SXM DeepSeek-V3 20 ms (step 38 ms, draft passes 1.2 ms)
    """
    note = mtp_note(options)
    if note is None:
        return []
    decode = [r for r in rows if r.feasible and r.tpot_s is not None]
    return [note] + (["  TPOT: " + ", ".join(
        f"{r.label} {r.model} {r.tpot_s * 1e3:.4g} ms (step {r.latency_s * 1e3:.4g} ms, "
        f"draft passes {r.mtp_draft_s * 1e3:.4g} ms)" for r in decode)] if decode else [])


def run_compare(models: Iterable[str | ModelSpec], scenarios: Collection[str | Scenario],
                phases: Iterable[str] = PHASES, *, gpus: Collection[str | GpuSpec] | None = None,
                options: RooflineOptions | None = None,
                slo: Slo | None = None, prompt: int | None = None, context: int | None = None,
                max_batch: int = DEFAULT_MAX_BATCH, baseline: str | None = BASELINE_SCENARIO,
                instances: str | None = None, progress: ProgressLike = NO_PROGRESS,
                collectives: dict | None = None, reliability: bool = False,
                parallelism: str = "auto", workers: int | None = None,
                scheduler: str | None = None, executor: Executor | None = None) -> CompareResult:
    """Best configuration of every model x scenario x phase (a pure function of its
    arguments; ``progress.advance`` is called once per search).

    ``baseline`` names the scenario (by name or label) whose tokens/s/SM the others are
    divided by; when it is not among ``scenarios`` the first scenario is the baseline.
    With ``gpus``, the baseline scenario also runs as given (``h100-dgx`` on its H100, just
    before its copies on the other GPUs: the rule of
    :func:`~netmodel.study.scenario_catalog.expand_scenarios`, which ``run_sweep`` follows
    too) and that row is the baseline.
    ``instances``: ``"alone"`` or ``"all"`` for every scenario (None: each scenario's own
    ``instances`` setting; see :mod:`netmodel.study.scenario_collectives`). ``collectives``: a dict
    ``{label: ScenarioCollectives}`` shared between calls, so a second comparison of the same
    scenarios (other options) routes nothing again. Every feasible row carries its power
    and cost (:func:`netmodel.study.cost.cost_summary`); with ``reliability`` also its
    blast radius and availability (:func:`netmodel.study.reliability_summary.reliability_summary`,
    closed forms: about 0.1-1 s per row). ``parallelism``: how models are spread
    (:data:`~netmodel.study.defaults.PARALLELISM`; default tensor parallelism for dense
    models, every dimension for mixture-of-experts ones).

    ``workers`` (a local Dask cluster of that many processes), ``scheduler`` (a running
    one's address) or ``executor`` (an open :class:`~netmodel.study.distributed.Executor`)
    run one task per scenario (its fabric built once) on Dask; the result is identical to
    the in-process run's. ``collectives`` is then filled only when given.
    """
    reliability = flag("", "reliability", reliability)   # "no" or 0.0 was its truth
    from netmodel.study.distributed import executor_for
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from netmodel.study.scenario_fabric import network_key, scenario_calibration
    from netmodel.study.search_options import check_fabric_options

    # lists, not text ('decode' was read letter by letter: "unknown phase 'd'")
    models = distinct_models(get_model(m) for m in listed("models", models,
                                                          "model names or ModelSpec objects"))
    phases = [check_phase(p) for p in listed("phases", phases, "phases")]
    gpus = None if gpus is None else listed("gpus", gpus, "GPU names or GpuSpec objects")
    if gpus is not None and not gpus:   # it ran each scenario's own GPU, as None does
        raise UserError("gpus is empty: give at least one GPU name or GpuSpec, or gpus=None "
                        "to run each scenario on its own GPU")
    scens = expand_scenarios(scenarios, gpus, baseline)
    if instances is not None:
        scens = [s.with_instances(instances) for s in scens]
    base = _baseline_label(scens, baseline)
    if collectives is not None and not isinstance(collectives, dict):
        raise UserError(f"collectives must be a dict {{label: ScenarioCollectives}} shared "
                        f"between calls, or None; got {describe(collectives)}")
    if not (models and phases):
        raise UserError("the comparison needs at least one model and one phase")
    check_fabric_options(models, options, parallelism, phases)
    options = check_options(options)
    slo = check_slo(slo)
    max_batch = check_max_batch(max_batch)
    # counted before any fabric is built or searched, as sweep counts its searches: 300
    # scenario files x 8 models x 10 GPUs x 2 phases (48,000 searches) ran on for minutes
    check("compare", "searches", len(scens) * len(models) * len(phases), MAX_SEARCHES,
          "NETMODEL_MAX_COMPARE_SEARCHES", "compare fewer scenarios, GPUs, models or phases")
    shared = _CompareSettings(options, slo, prompt, context, max_batch, parallelism,
                              reliability)
    pairs = [(phase, model) for phase in phases for model in models]
    with executor_for(executor, workers, scheduler) as ex:
        colls = collectives if collectives is not None else {}
        if collectives is not None or not ex.distributed:
            for s in scens:
                if s.label not in colls or colls[s.label].scenario != s:
                    colls[s.label] = ScenarioCollectives(s)
        affinity = None
        if ex.distributed:  # one task per scenario: its fabric is built once
            cells = [_CompareCell(s, None, tuple(pairs), shared, None) for s in scens]
            labels = [s.label for s in scens]
            # scenarios of one network go to one worker, which compiles its costs once
            affinity = [network_key(s, scenario_calibration(s)) for s in scens]
        else:               # one cell per search, sharing the fabrics and ideal searches
            # the collectives may come from an earlier comparison (the study's parts share
            # them): its charges past the schedule's budget are not this one's
            marks = {s.label: colls[s.label].budget_mark() for s in scens}
            cells = [_CompareCell(s, colls[s.label], (pair,), shared, marks[s.label])
                     for pair in pairs for s in scens]
            labels = [f"{c.scenario.label} {c.work[0][1].name} {c.work[0][0]}"
                      for c in cells]
        done = ex.map(_compare_cell, cells, progress=progress, labels=labels,
                      weights=[len(c.work) for c in cells], affinity=affinity)
        found = [done[j][i] for i in range(len(pairs)) for j in range(len(scens))] \
            if ex.distributed else [d[0] for d in done]
    notes: dict = {}
    for _, _, cell_notes in found:
        for k, v in cell_notes.items():
            if k.startswith("schedule of "):   # a scenario's later searches say it all
                notes[k] = v
            else:
                notes.setdefault(k, v)
    searches = [r for r, _, _ in found]
    rows = [row for _, row, _ in found]
    rows = _with_ratios(rows, base)
    settings = {"slo": slo.to_dict(),
                "prompt_tokens": make_workload("prefill", prompt, context).prompt,
                "context_tokens": make_workload("decode", prompt, context).context,
                "options": options.to_dict(), "max_batch": max_batch,
                "instances": instances_note(scens), "parallelism": parallelism}
    if notes:
        settings["not_computed"] = notes
    settings = noted_settings(settings, options, rows)
    return CompareResult(rows=tuple(rows), scenarios=tuple(scens), baseline=base,
                         settings=settings, searches=tuple(searches))


class _CompareSettings(NamedTuple):
    """What every search of a comparison shares (picklable)."""

    options: RooflineOptions
    slo: Slo
    prompt: int | None
    context: int | None
    max_batch: int
    parallelism: str
    reliability: bool


class _CompareCell(NamedTuple):
    """Searches of one scenario: ``work`` is ``((phase, model), ...)``. ``collectives``
    is shared in-process and None on Dask (built on the worker); the searches with an
    ideal network are kept process-wide (:func:`_ideal_search`)."""

    scenario: Scenario
    collectives: ScenarioCollectives | None
    work: tuple
    settings: _CompareSettings
    #: :meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.budget_mark` of
    #: ``collectives`` when the comparison began (None on Dask: fresh collectives)
    budget_mark: dict | None


def _compare_cell(cell: _CompareCell) -> list[tuple]:
    """``[(FabricSearch, CompareRow without ratios, notes), ...]``, one per ``cell.work``
    item, in order (the body of :func:`run_compare`, a pure function of the cell)."""
    from netmodel.study.fabric_search import fabric_search
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from netmodel.study.search_options import parallel_dimensions

    s, st = cell.scenario, cell.settings
    coll = cell.collectives if cell.collectives is not None else ScenarioCollectives(s)
    out = []
    for phase, model in cell.work:
        workload = make_workload(phase, st.prompt, st.context)
        r = fabric_search(model, s, workload, options=st.options, slo=st.slo,
                          max_batch=st.max_batch, collectives=coll,
                          parallelism=st.parallelism)
        dims = parallel_dimensions(model, st.parallelism, coll.gpus,
                                   two_batch_overlap=st.options.two_batch_overlap)
        ideal = _ideal_search(model, s.gpu_spec, workload, dims, st)
        notes = coll.schedule_notes(cell.budget_mark)
        out.append((r, _row(r, ideal, notes, reliability=st.reliability,
                            slo=st.slo, options=st.options), notes))
    return out


#: The searches of :func:`_ideal_search`, by everything they read, the oldest dropped
#: first: the study's comparisons of one GPU's scenarios, and its later comparisons (the
#: packed one, of the same options), search the same GPU with an ideal network again.
_IDEAL = Lru(1024)


def _ideal_search(model: ModelSpec, gpu: GpuSpec, workload, dims: dict,
                  st: _CompareSettings):
    """compute's search of ``model`` on ``gpu`` with free collectives (what the fabric
    costs is measured against it), its grid dropped; kept (:data:`_IDEAL`) by the model
    and GPU (their specs, not their names), the workload, the parallel dimensions, the
    options, the SLO and the largest batch: what the search reads. A key that does not
    hash is searched afresh."""
    def run():
        return replace(search(model, gpu, workload, comm=NoCommunication(),
                              options=st.options, slo=st.slo, max_batch=st.max_batch,
                              **dims), grid=None)

    try:
        key = (model, gpu, workload, repr(dims), st.options, st.slo, st.max_batch)
        hash(key)
    except TypeError:
        return run()
    hit = _IDEAL.recall(key)
    if hit is None:
        hit = _IDEAL.put(key, run())
    return hit


def _baseline_label(scens, baseline) -> str:
    """The label of the scenario ``baseline`` names (by name or label); the first
    scenario's where it is None or the default (:data:`BASELINE_SCENARIO`, compared or
    not). Any other name that matches no scenario is refused: the ratios would have been
    to the first scenario without a word."""
    for s in scens:
        if baseline in (s.name, s.label):
            return s.label
    if baseline is not None and baseline != BASELINE_SCENARIO:
        known = and_list(repr(n) for n in dict.fromkeys(s.name for s in scens))
        raise UserError(f"baseline {baseline!r} is none of the scenarios compared ({known}): "
                        "name one of them (or its NAME@GPU label), or give None for the "
                        "first")
    return scens[0].label


def _row(r, ideal, notes: dict, *, reliability: bool = False, slo=None,
         options=None) -> CompareRow:
    s, res = r.scenario, r.search
    ideal_v = ideal.best.tokens_per_s_per_sm if ideal.best else None
    # the row's fields set at once, one row made (a row is some 50 fields: each copy made
    # by replace, four a row, was a tenth of a comparison's rows' time)
    values = {**CompareRow.search_fields(res), "scenario": s.name, "label": s.label,
              "ideal_tokens_per_s_per_sm": ideal_v, "fabric": s.fabric_spec()}
    if values["feasible"]:
        values.update(reconfiguration_s=r.reconfiguration_s, **r.charged())
        if r.packed_fraction is not None and ideal_v:  # the same GPU, free network, packed
            ideal_v *= r.packed_fraction
            values["ideal_tokens_per_s_per_sm"] = ideal_v
        values["vs_ideal"] = values["tokens_per_s_per_sm"] / ideal_v if ideal_v else None
    row = CompareRow(**values)
    if not row.feasible:
        return row
    return with_extras(row, r, notes, reliability=reliability, slo=slo, options=options)


_Row = TypeVar("_Row", bound=FabricRow)


def with_extras(row: _Row, found: FabricSearch, notes: dict, *, reliability: bool = False,
                slo: Slo | None = None, options: RooflineOptions | None = None) -> _Row:
    """``row`` (a :class:`~netmodel.study.rows.FabricRow` of ``found``, a
    :class:`~netmodel.study.fabric_search.FabricSearch`) with its power and cost columns
    and, when asked, its reliability columns. A GPU the cost or reliability model cannot
    price (no die data) leaves them empty and says why in ``notes``."""
    from netmodel.study.cost import cost_summary

    s = found.scenario
    try:   # a GPU without a price (no die data) still has its power: tok/s/W, tok/J
        cost = cost_summary(s, row.model, row.phase, found.best, without_price=True)
        row = row.with_group("cost", cost.to_dict())
        if not cost.priced:
            notes.setdefault(f"cost of {s.label}", cost.unpriced_note())
    except UserError as exc:
        notes.setdefault(f"cost of {s.label}", str(exc))
    if reliability:
        from netmodel.study.reliability_summary import reliability_summary

        try:
            rel = reliability_summary(s, row.model, row.phase, search=found,
                                      method="analytic", slo=slo, options=options)
            row = row.with_group("reliability", rel.to_dict())
        except UserError as exc:
            notes.setdefault(f"reliability of {s.label} {row.model} {row.phase}", str(exc))
    return row


def _with_ratios(rows, base_label: str) -> list[CompareRow]:
    ref = {(r.model, r.phase): r.tokens_per_s_per_sm for r in rows
           if r.label == base_label and r.feasible}
    return [r.with_ratio(ref.get((r.model, r.phase))) for r in rows]


def compare_files(result: CompareResult, *, plot: bool = True) -> dict:
    """The comparison's files: ``compare.csv``, ``compare.json`` and (with ``plot``)
    ``compare_tokens_per_sm.png`` and ``compare_time_split.png``."""
    flag("", "plot", plot)   # "no" drew the figures
    files = {"compare.csv": result.to_csv().encode(), "compare.json": result.to_json().encode()}
    if plot:
        from netmodel.study import compare_plots

        files["compare_tokens_per_sm.png"] = \
            lambda path: compare_plots.plot_compare_tokens(result, path)
        files["compare_time_split.png"] = \
            lambda path: compare_plots.plot_compare_split(result, path)
    return files


def write_compare(result: CompareResult, out_dir: str | PathLike[str], *,
                  plot: bool = True, run: Mapping | None = None) -> list[Path]:
    """Write :func:`compare_files` into ``out_dir`` atomically; ``run`` (what produced
    them) goes into the manifest."""
    from compute.outputs import write_outputs

    return write_outputs(out_dir, compare_files(result, plot=plot), run=run)
