"""``netmodel sweep``: tokens/s/SM of scenarios while one or two fabric parameters vary, to
see where one fabric overtakes another (or their cost per token while a cost parameter
varies).

A parameter is a dotted path into the scenario (:func:`parameters` lists them):

* ``fabric.KEY`` (or ``fabric.base.KEY``): a numeric keyword of the fabric's builder, e.g.
  ``fabric.latency`` (switch traversal, s), ``fabric.bandwidth`` (bytes/s per direction),
  ``fabric.radix``, ``fabric.ports`` and ``fabric.reconfiguration_time`` (OCS);
* ``adjust.hop_latency`` (s added to every link: the per-hop latency, for any fabric),
  ``adjust.latency_scale`` and ``adjust.bandwidth_scale`` (multipliers, for any fabric);
* ``cost.NAME``: a power, cost or yield default of :mod:`netmodel.study.cost`, its value in
  a unit of its data row's unit (:func:`netmodel.study.cost.parameter_rows`,
  :data:`compute.units.ROW_UNIT_INPUTS`: ``0.1USD/kWh``, ``5y``, ``1.2kW``, ``75%``,
  ``1.5USD/(Gb/s)``, ``6.9pJ/bit``) or a bare SI number (``cost.defect_density`` per m^2,
  ``cost.wafer_price`` USD, ``cost.pluggable_price`` and ``cost.cpo_price`` USD per bit/s,
  ``cost.cpo_energy`` J per bit, ``cost.electricity_price`` USD/J, ``cost.lifetime`` s); a
  unit of another kind is refused. Each point is then
  scored by USD per million tokens (lower is better) instead of tokens/s/SM; the searches
  run once, since these change what a configuration costs, not which one is best.

Values are ``LO:HI`` (``points`` log-spaced values, default 7; ``LO:HI:N`` for N) or a comma
list (swept in increasing order; one value given twice, in any units, is refused); they take units (``0.1us:10us``, ``100GB/s``). A range of a whole-number parameter
takes the nearest whole numbers of its log-spaced values (repeats dropped); a listed value
of one must be whole, and a whole-number ``fabric.*`` value (a count) from 1 to what a
fabric within :mod:`topologies.limits` holds (10,000,000 by default). A range must be positive and
not empty. At most
:data:`MAX_POINTS` values per parameter, :data:`MAX_SEARCHES` searches per sweep and
:data:`MAX_LINKS` links in the fabric of a point (a point over it is refused, as one the
builder refuses) (settable, :mod:`compute.limits`).

>>> p = parse_param("adjust.hop_latency=0.1us:10us:3", ["lite-flat"])
>>> p.path, [round(v * 1e6, 6) for v in p.values]
('adjust.hop_latency', [0.1, 1.0, 10.0])
>>> r = run_sweep(["lite-flat", "lite-ocs"], [p], ["Llama-3-8B"], ["decode"])
>>> len(r.rows)
6
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from os import PathLike
from typing import TYPE_CHECKING, NamedTuple

from compute.errors import UserError
from compute.limits import check, setting
from compute.models import get_model
from compute.phases import Slo, check_phase, check_slo, latency_name
from compute.roofline import check_options, make_workload
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH, check_max_batch
from compute.validate import describe, flag, listed
from netmodel.study.progress import NO_PROGRESS
from netmodel.study.rows import distinct_models
from netmodel.study.run_words import noted_settings

# the parts of a sweep, imported from here by other modules and tests: its parameters and
# values, its result, the curves' crossings and the table's notes, its pricing
from netmodel.study.sweep_curves import COINCIDENT, _crossings  # noqa: F401
from netmodel.study.sweep_notes import _COST_AT, _METRIC_NAMES  # noqa: F401
from netmodel.study.sweep_params import (  # noqa: F401
    DEFAULT_POINTS,
    MAX_POINTS,
    MAX_SEARCHES,
    SweepParam,
    _check_count,
    _check_searches,
    _written,
    check_param,
    parse_param,
)
from netmodel.study.sweep_paths import _kind, _unset_word, parameters  # noqa: F401
from netmodel.study.sweep_pricing import _NIC_IN_HOST, _row, unpriced_refusal  # noqa: F401
from netmodel.study.sweep_result import SweepResult, SweepRow, _example  # noqa: F401
from netmodel.study.sweep_values import (  # noqa: F401
    ABSURD_COST_FACTOR,
    COST,
    _cost_value,
    _in_row_unit,
    _is_bare,
    _value,
)

if TYPE_CHECKING:
    from pathlib import Path

    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from netmodel.study.distributed import Executor
    from netmodel.study.progress import ProgressLike
    from netmodel.study.scenarios import Scenario

__all__ = ["DEFAULT_POINTS", "SweepParam", "SweepResult", "parameters", "parse_param",
           "run_sweep", "sweep_files", "write_sweep"]

#: Most links of the fabric at one point of a sweep (``NETMODEL_MAX_SWEEP_LINKS``
#: overrides). Costing a point takes about 30 us per link on one core (its searches'
#: collectives and its bill of materials: lite-flat with 1,000 planes, 128,000 links, 4 s;
#: 10,000 planes, 1,280,000 links, 35-75 s), so 200,000 links is about 6 s a point.
MAX_LINKS = 200_000


def run_sweep(scenarios: Iterable[str | Scenario], params: Iterable[SweepParam | str],
              models: Iterable[str | ModelSpec] = ("Llama-3-70B",),
              phases: Iterable[str] = ("decode",), *,
              gpus: Collection[str | GpuSpec] | None = None,
              options: RooflineOptions | None = None, slo: Slo | None = None,
              prompt: int | None = None, context: int | None = None,
              max_batch: int = DEFAULT_MAX_BATCH, instances: str | None = None,
              progress: ProgressLike = NO_PROGRESS, parallelism: str = "auto",
              workers: int | None = None, scheduler: str | None = None,
              executor: Executor | None = None) -> SweepResult:
    """Best tokens/s/SM of every scenario x model x phase at every point of the sweep.

    ``params``: a list of one or two :class:`SweepParam` (checked as text is,
    :func:`~netmodel.study.sweep_params.check_param`) or ``PATH=RANGE`` strings; ``models``
    and ``phases`` lists too (a lone name is refused, not read letter by letter). ``gpus``:
    every scenario with each of those GPUs instead of its own, ``h100-dgx`` also on its
    H100, just before its copies (:func:`~netmodel.study.scenario_catalog.expand_scenarios`,
    as :func:`~netmodel.study.compare.run_compare` reads it); the first scenario is the
    baseline (a scenario that never crosses it gets a note). ``instances``:
    ``"alone"`` or ``"all"`` for every scenario (None: each scenario's own setting).
    ``workers`` (a local Dask cluster of that many processes), ``scheduler`` (a running
    one's address) or ``executor`` (an open :class:`~netmodel.study.distributed.Executor`)
    run the points on Dask, a run of neighbouring points per task; the result is identical
    to the in-process run's.
    """
    from netmodel.study.distributed import executor_for
    from netmodel.study.scenario_catalog import expand_scenarios, instances_note
    from netmodel.study.search_options import check_fabric_options, check_parallelism_name

    scens = expand_scenarios(scenarios, gpus)
    if instances is not None:
        scens = [s.with_instances(instances) for s in scens]
    # a lone text or SweepParam is no list: 'adjust.hop_latency=1us' was read letter by
    # letter ('a' must be PATH=LO:HI), a model name 'Llama-3-8B' as model 'L'
    what = "sweep parameters (SweepParam or 'PATH=LO:HI' text)"
    if isinstance(params, SweepParam):
        raise UserError(f"params must be a list of {what}, got the SweepParam of "
                        f"{describe(params.path)} alone: give [param]")
    params = listed("params", params, what)
    if not 1 <= len(params) <= 2:   # before any is read
        raise UserError(f"sweep one or two parameters, got {len(params)}")
    # one made in Python is checked as text is (NaN, no values, 1.5 planes ran before)
    params = [check_param(p, scens) if isinstance(p, SweepParam) else parse_param(p, scens)
              for p in params]
    if len(params) == 2 and params[0].path == params[1].path:
        raise UserError(f"parameter {params[0].path!r} is given twice")
    models = distinct_models(get_model(m) for m in listed(
        "models", models, "model names, files or ModelSpec objects"))
    phases = [check_phase(p) for p in listed("phases", phases, "phases (prefill, decode)")]
    if not (models and phases):
        raise UserError("the sweep needs at least one model and one phase")
    # said once here, not as every point refused ('no point of the sweep can be built: ...')
    # a string first: an array compared with the names raised numpy's ambiguous-truth error
    parallelism = check_parallelism_name(parallelism)   # blanks at either end dropped
    check_fabric_options(models, options, parallelism, phases)
    max_batch = check_max_batch(max_batch)
    options = check_options(options)
    slo = check_slo(slo)
    ys = params[1].values if len(params) > 1 else (None,)
    _check_host_power_moves(params, scens)
    _check_searches(len(scens) * len(params[0].values) * len(ys) * len(models) * len(phases))
    setting("NETMODEL_MAX_SWEEP_LINKS", MAX_LINKS)  # a bad value said now, not as refused points
    shared = _SweepSettings(tuple(params), tuple(models), tuple(phases), options, slo,
                            prompt, context, max_batch, parallelism)
    points = [(s, x, y) for s in scens for y in ys for x in params[0].values]

    # points differing only in cost parameters share searches
    def searched_key(point: tuple[Scenario, float, float | None]) -> tuple:
        s, x, y = point
        return (s.label, *(v for p, v in zip(params, (x, y), strict=False)
                           if not p.path.startswith(COST)))

    with executor_for(executor, workers, scheduler) as ex:
        # in-process every point is a cell and all share the caches, as one loop would;
        # on Dask each task is a run of points with caches of its own
        caches = (None, None) if ex.distributed else ({}, {})
        cells = [_SweepCell(c, shared, *caches) for c in ex.chunks(points, searched_key)]
        done = ex.map(_sweep_cell, cells, progress=progress,
                      labels=[f"{c.points[-1][0].label} {params[0].path}={c.points[-1][1]:g}"
                              for c in cells],
                      weights=[len(c.points) for c in cells])
    rows = []
    refused: list[str] = []
    notes: dict = {}
    for point_rows, why, point_notes in (point for cell in done for point in cell):
        rows.extend(point_rows)
        if why is not None:
            refused.append(why)
        for k, v in point_notes.items():
            notes.setdefault(k, v)
    if refused and all(r.reason.startswith("fabric refused") for r in rows):
        # the parameters named (a shipped scenario's builder refusal names none of them;
        # the command line then says the --param typed)
        swept = " and ".join(p.path for p in params)
        raise UserError(f"no point of the sweep can be built: {refused[0]} (at every value of "
                        f"{swept})")
    unpriced = unpriced_refusal(rows, params, notes)
    if unpriced is not None:   # no point priced: what left each unpriced, in one line
        raise UserError(unpriced)
    settings = {"slo": slo.to_dict(), "options": options.to_dict(),
                "max_batch": max_batch, "parallelism": parallelism}
    if notes:
        settings["not_computed"] = notes
    if any(s.instances != "alone" for s in scens):
        settings["instances"] = instances_note(scens)
    settings = noted_settings(settings, options, rows)
    return SweepResult(rows=tuple(rows), params=tuple(params),
                       labels=tuple(s.label for s in scens), settings=settings)


def _check_host_power_moves(params, scens) -> None:
    """Refuse a sweep of ``cost.host_power_per_h100`` that moves no scenario: it sets the
    host power of GPUs with no ``[host_power_per_gpu]`` row only (docs/economics.md), so
    where every scenario's GPU has one, each point would cost the same without a word."""
    path = f"{COST}host_power_per_h100"
    if not any(p.path == path for p in params):
        return
    from compute.hardware import catalog
    from netmodel.study.host_bill import host_power_row, host_powers

    rows = [(s, host_power_row(s.gpu_spec)) for s in scens]
    if all(row is not None for _, row in rows):
        own = ", ".join(dict.fromkeys(f"{s.gpu_spec.name} {row.value:g} W" for s, row in rows))
        raise UserError(f"sweep parameter {path} moves no scenario of this sweep: each one's "
                        f"GPU has its own host power row in compute/data/economics.toml "
                        f"[host_power_per_gpu] or its GPU file's host_power_W ({own} per GPU); "
                        f"it sets the host power of "
                        f"{', '.join(n for n in catalog() if n not in host_powers())} and GPU "
                        f"files' GPUs without host_power_W only")


class _SweepSettings(NamedTuple):
    """What every point of a sweep shares (picklable)."""

    params: tuple
    models: tuple
    phases: tuple
    options: RooflineOptions
    slo: Slo
    prompt: int | None
    context: int | None
    max_batch: int
    parallelism: str


class _SweepCell(NamedTuple):
    """A run of points ``((scenario, x, y), ...)``; ``searched`` and ``rescored`` are the
    caches of :func:`run_sweep` (shared in-process, None on Dask: the task's own)."""

    points: tuple
    settings: _SweepSettings
    searched: dict | None
    rescored: dict | None


def _sweep_cell(cell: _SweepCell) -> list[tuple]:
    """``[(rows, refused reason or None, notes), ...]``, one per point of ``cell``, in
    order (the body of :func:`run_sweep`, a pure function of the cell)."""
    from netmodel.study.fabric_search import fabric_search

    st = cell.settings
    params, models, phases, slo = st.params, st.models, st.phases, st.slo
    searched = cell.searched if cell.searched is not None else {}
    rescored = cell.rescored if cell.rescored is not None else {}
    out = []
    for s, x, y in cell.points:
        values = [(params[0], x)] + ([(params[1], y)] if y is not None else [])
        costs = {p.path[len(COST):]: v for p, v in values if p.path.startswith(COST)}
        notes: dict = {}
        try:
            point = s
            for p, v in values:
                if not p.path.startswith(COST):
                    point = point.with_param(p.path, _typed(p, v))
            key = (point.label, point.fabric_spec(), point.adjust, point.instances)
            if key not in searched:
                _check_links(point, values)
                coll, comm = _collectives(point, rescored)
                searched[key] = [(phase, model, fabric_search(
                    model, point, make_workload(phase, st.prompt, st.context),
                    options=st.options, slo=slo, max_batch=st.max_batch, collectives=coll,
                    comm=comm, parallelism=st.parallelism))
                    for phase in phases for model in models]
                # instances = all charged in lockstep past the schedule's budget, at the
                # values the search depends on: points differing only in cost parameters
                # share it (and its charge), so it holds at each of them
                at = ", ".join(f"{p.path}={v:g}" for p, v in values
                               if not p.path.startswith(COST))
                for k, v in coll.schedule_notes(at=f" at {at}" if at else "").items():
                    notes.setdefault(k, v)
            found = searched[key]
        except UserError as exc:
            # a point the fabric cannot be built at (a radix below the GPU count, a
            # ring on too few ports...) is an infeasible point, not the end of the sweep
            out.append(([_refused_row(s, model.name, phase, x, y, f"fabric refused: {exc}",
                                      slo) for phase in phases for model in models],
                        str(exc), notes))
        else:
            out.append(([_row(s, x, y, r, costs, notes) for _, _, r in found], None, notes))
    return out


def _typed(param: SweepParam, v: float):
    return int(v) if param.integer else float(v)

def _check_links(point: Scenario, values: list) -> None:
    """Refuse a point whose fabric has more than :data:`MAX_LINKS` links, before any search
    or bill of materials is run on it (its build is bounded by :mod:`topologies.limits`;
    the work after it grows with the links)."""
    from netmodel.study.scenario_fabric import build_fabric

    at = ", ".join(f"{p.path}={v:g}" for p, v in values)
    check(f"sweep point {point.label} at {at}", "links", build_fabric(point).number_of_edges(),
          MAX_LINKS, "NETMODEL_MAX_SWEEP_LINKS", "sweep smaller fabrics")


#: Parameters a sweep re-scores from the fabric's compiled costs instead of routing it
#: again at every value (exact: :mod:`netmodel.study.adjusted_comm`).
RESCORED = ("adjust.hop_latency", "adjust.bandwidth_scale")


def _collectives(point, cache: dict):
    """``(collectives, comm)`` for one point: where only :data:`RESCORED` adjustments
    differ from the scenario's (instances alone), the base fabric's compiled costs and a
    re-scoring comm (:class:`~netmodel.study.adjusted_comm.AdjustedComm`, which also costs a
    mixture of experts' prefill all-to-all once a server on the adjusted links, as
    ``compare`` and ``search --scenario`` do); else the point's own collectives and None."""
    from netmodel.study.adjusted_comm import AdjustedComm, hop_latency_slopes
    from netmodel.study.scenario_collectives import ScenarioCollectives

    if point.instances != "alone":
        return ScenarioCollectives(point), None
    base = point.with_param("adjust.hop_latency", 0.0) \
        .with_param("adjust.bandwidth_scale", 1.0)
    key = (base.label, base.fabric_spec(), base.adjust)
    if key not in cache:
        coll = ScenarioCollectives(base)
        cache[key] = (coll, hop_latency_slopes(base, coll, {}))
    coll, slopes = cache[key]
    return coll, AdjustedComm(coll, point.adjust.bandwidth_scale, point.adjust.hop_latency,
                              slopes)


def _refused_row(s, model, phase, x, y, reason, slo: Slo) -> SweepRow:
    return SweepRow(label=s.label, scenario=s.name, gpu=s.gpu, model=model, phase=phase, x=x,
                    y=y, feasible=False, latency_name=latency_name(phase),
                    latency_limit_s=slo.limit(phase), reason=reason)


def sweep_files(result: SweepResult, *, plot: bool = True) -> dict:
    """``sweep.csv``, ``sweep.json`` and (with ``plot``) ``sweep.png``."""
    flag("", "plot", plot)   # "no" drew the figure
    files = {"sweep.csv": result.to_csv().encode(), "sweep.json": result.to_json().encode()}
    if plot:
        from netmodel.study import compare_plots

        files["sweep.png"] = lambda path: compare_plots.plot_sweep(result, path)
    return files


def write_sweep(result: SweepResult, out_dir: str | PathLike[str], *,
                plot: bool = True, run: Mapping | None = None) -> list[Path]:
    """Write :func:`sweep_files` into ``out_dir`` atomically; ``run`` (what produced them)
    goes into the manifest."""
    from compute.outputs import write_outputs

    return write_outputs(out_dir, sweep_files(result, plot=plot), run=run)
