"""``netmodel study lite-gpu``, ``netmodel compare`` and ``netmodel sweep``: thin click
commands over :mod:`netmodel.study.lite_gpu`, :mod:`netmodel.study.compare` and :mod:`netmodel.study.sweep`.

Only click and the standard library are imported at module level. Every result is computed
before anything is written, and the files are written all or nothing, so a mistake leaves
no partial output.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from typing import Any

import click

from netmodel.cli import run_record, say_written
from netmodel.cli.help_format import SummaryGroup
from netmodel.cli.options import (
    WHOLE,
    OutputFolder,
    RegistryHelp,
    as_typed,
    given_on_command_line,
    gpu_help,
    list_option,
    max_batch_option,
    model_help,
    mtp_options,
    no_plot_option,
    parallelism_option,
    phase_option,
    profile_option,
    quiet_option,
    registry_metavar,
    roofline_flag,
    roofline_option,
    scenario_help,
    slo_of,
    slo_option,
    table_json_option,
    with_options,
)
from netmodel.study.defaults import (  # light: constants only
    BASELINE,
    BASELINE_SCENARIO,
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    MOE_MODEL,
)

__all__ = ["compare", "study", "sweep"]


def _check_out(out_dir: str | None) -> None:
    """``--out`` checked before any work: '' is refused, not taken as no folder; a refusal
    names the flag (``--out 'loop': output folder 'loop' is a symbolic link that loops``)."""
    if out_dir is not None:
        from compute.output_paths import check_folder_path
        from netmodel.cli.refusals import output_refused_as

        with output_refused_as("--out", out_dir):
            check_folder_path(out_dir)


def _gpus_help() -> str:
    """``--gpus``'s help, one rule for ``compare`` and ``sweep``
    (:func:`~netmodel.study.scenario_catalog.expand_scenarios`)."""
    return (f"Run every scenario with each of these GPUs instead of its own (the baseline "
            f"{BASELINE_SCENARIO}, when named, also runs on its own GPU, just before its "
            f"copies, so the reference stays today's cluster): {gpu_help(many=True)}.")


def _names(what: str, *texts: str) -> list[str]:
    """The comma-separated names of ``texts`` (an option's value, or each of its repeats),
    none twice however spelled (:func:`netmodel.cli.resolve.distinct_names`)."""
    from netmodel.cli.resolve import distinct_names

    return distinct_names(what, texts)


def _phases(text: str, option: str = "--phases") -> list[str]:
    from compute.phases import BOTH, PHASES, check_phase

    if text.strip() == BOTH:
        return list(PHASES)
    names = _names(option, text)   # 'both' stands alone: in a list it is refused as a phase
    return [check_phase(p, both=len(names) == 1) for p in names]


def _settings(ttft: float, tbt: float, overlap_collectives: bool, profile_ref=None, *,
              two_batch_overlap: bool = False, dense_mlp_tp: str | None = None,
              mtp_tokens: str | None = None, mtp_acceptance: str | None = None):
    from compute.roofline_options import RooflineOptions
    from netmodel.cli.resolve import dense_mlp_tp as dense_degree
    from netmodel.cli.resolve import mtp_settings, resolve_profile

    slo = slo_of(ttft, tbt)
    return slo, RooflineOptions(overlap_collectives=overlap_collectives,
                                profile=resolve_profile(profile_ref),
                                two_batch_overlap=two_batch_overlap,
                                dense_mlp_tp=dense_degree(dense_mlp_tp),
                                **mtp_settings(mtp_tokens, mtp_acceptance))


#: The engine options compare and sweep cost as search does (the study does not take
#: them: its crossovers, serving and reliability parts are not wired for them): two-batch
#: overlap, data-parallel dense MLPs and multi-token prediction (the options infer, search
#: and serve take, declared once in netmodel.cli.options).
_engine_options = [roofline_flag("two_batch_overlap"), roofline_option("dense_mlp_tp", "D"),
                   *mtp_options]


def _instances(text: str | None) -> str | None:
    from compute.errors import UserError, chosen, known, lookalike
    from netmodel.study.scenarios import INSTANCES

    if text is None:
        return None
    if chosen(text, INSTANCES) is not None:   # ' all' is 'all', as every choice
        return chosen(text, INSTANCES)
    raise UserError(f"--instances {text!r} is not allowed{lookalike(text, INSTANCES)}; "
                    f"allowed: {known(INSTANCES)}")


_instances_option = click.option(
    "--instances", "instances_text", default=None, cls=RegistryHelp,
    metavar_from=registry_metavar("netmodel.study.scenarios", "INSTANCES"),
    help="alone: cost each instance by itself; all: every instance of the cluster runs its "
    "collectives at the same time, sharing links (default: each scenario's own setting, "
    "alone unless its TOML says otherwise).")


def _progress(total: int, label: str, quiet: bool):
    from netmodel.study.progress import Progress

    return Progress(total, label, quiet=quiet)


_slo_options = [
    slo_option("prefill"),
    slo_option("decode"),
    roofline_flag("overlap_collectives"),
    profile_option,
    no_plot_option,
    quiet_option,
]


_dask_options = [
    click.option("--workers", type=WHOLE, default=None, metavar="N",
                 help="Run the independent cells on a local Dask cluster of N worker "
                 "processes (needs: pip install 'netmodel[distributed]'). Same results."),
    click.option("--scheduler", default=None, metavar="ADDRESS",
                 help="Run the independent cells on a running Dask cluster "
                 "(tcp://HOST:8786; its workers need the same netmodel). Same results."),
]


#: The options compare and sweep search with, after their own: instances, parallelism, the
#: engine options, max batch, the SLOs and roofline options, and where the cells run.
_search_options = [_instances_option, parallelism_option, *_engine_options, max_batch_option(),
                   *_slo_options, *_dask_options]


#: How :func:`netmodel.study.rows.distinct_models` starts its refusal of two different
#: models of one name (two files of --models defining one), said with --models.
_TWO_MODELS = "two different models are named"
#: And :func:`netmodel.study.rows.distinct_gpus`'s, said with --gpus.
_TWO_GPUS = "two different GPUs are named"


@contextlib.contextmanager
def _cost_params_said(texts: list[str]) -> Iterator[None]:
    """The pricing's refusal of cost parameters whose product overflows (``cost parameters
    lifetime=1e-300 (SI) make ...``) said with the ``--param`` of each (``texts``)."""
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        if not (texts and str(exc).startswith("cost parameters ")):
            raise
        said = " and ".join(f"--param {t!r}" for t in texts)
        raise UserError(f"{said}: {exc}") from None


@contextlib.contextmanager
def _gpus_beside_swaps() -> Iterator[None]:
    """:func:`~netmodel.study.scenario_catalog.expand_scenarios`' refusal of a scenario
    ``NAME@GPU`` beside ``gpus`` said with ``--scenarios`` and ``--gpus``."""
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        text = str(exc)
        if not (text.startswith("scenarios ") and " runs every scenario on each " in text):
            raise
        raise UserError("--" + text.replace(", and gpus (", ", and --gpus (").replace(
            " in gpus", " in --gpus").replace(" leave out gpus", " leave out --gpus")) from None


@contextlib.contextmanager
def _parallelism_said() -> Iterator[None]:
    """The search options' refusals of the options beside ``parallelism``
    (:func:`netmodel.study.search_options.check_fabric_options`: ``parallelism 'all'
    searches pipeline stages, ...; give parallelism 'auto' or 'tp' with ...``) said with
    --parallelism: the library names its parameter, a word without an underscore that
    :func:`~netmodel.cli.refusals.flags_for_parameters` leaves to prose (compare's line named
    no flag where the values it quoted were typed for two: ``--instances all``)."""
    import re

    from compute.errors import UserError

    said = r"(?<![\w.-])parallelism '"
    try:
        yield
    except UserError as exc:
        if not re.search(said, str(exc)):
            raise
        raise type(exc)(re.sub(said, "--parallelism '", str(exc))) from None


def _search_settings(models_text: str, phase_text: str,
                     kw: dict) -> tuple[list[str], list[str], dict]:
    """What compare and sweep search with, from their command line (``kw``: the options of
    :data:`_search_options`): ``(models, phases, keywords)``, the keywords ``options``,
    ``slo``, ``instances``, ``parallelism`` and ``max_batch`` that ``run_compare`` and
    ``run_sweep`` both take."""
    from netmodel.cli.resolve import check_phase_options

    models = _names("--models", models_text)
    phases = _phases(phase_text)
    instances = _instances(kw["instances_text"])
    batch_limit = kw["max_batch"]
    slo, options = _settings(kw["ttft"], kw["tbt"], kw["overlap_collectives"], kw["profile_ref"],
                             two_batch_overlap=kw["two_batch_overlap"],
                             dense_mlp_tp=kw["dense_mlp_tp"], mtp_tokens=kw["mtp_tokens"],
                             mtp_acceptance=kw["mtp_acceptance"])
    check_phase_options(phases, kw, "--phases")   # after the values: a bad one first
    return models, phases, dict(options=options, slo=slo, instances=instances,
                                parallelism=kw["parallelism"], max_batch=batch_limit)


def _executor(workers: int | None, scheduler: str | None):
    """Where the cells run (in-process unless --workers or --scheduler; Dask imported only
    then). Executor's refusals name its parameters as a call writes them (``workers=0``,
    ``scheduler=ADDRESS``): here they are the flags (``--workers 0``), which
    :func:`~netmodel.cli.refusals.flags_for_parameters` leaves to plain words."""
    import re

    from compute.errors import UserError
    from netmodel.study.distributed import Executor

    try:
        return Executor(workers, scheduler)
    except UserError as exc:
        raise UserError(re.sub(r"(?<![\w-])(workers|scheduler)=", r"--\1 ", str(exc))) \
            from None


def _refuse_fabric_inputs(parallelism: str, moe: str | None,
                          scenarios: list[str] | None) -> None:
    """With --no-fabric, refuse --parallelism, --moe-model and --scenarios where typed: only
    the fabric parts read them (the GPUs alone search the TP degree only), so each was
    taken, never used, exit 0. Each is checked first (a bad name says so); --moe-model
    none, which skips the part --no-fabric skips, stays."""
    from compute.errors import UserError
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.summary_words import and_list

    for ref in scenarios or ():
        get_scenario(ref)
    spread = bool(given_on_command_line("parallelism"))
    typed = [text for text, given in (
        (f"--parallelism {parallelism}", spread),
        (f"--moe-model {moe}", moe is not None and bool(given_on_command_line("moe_text"))),
        (f"--scenarios {','.join(scenarios or ())}", scenarios is not None)) if given]
    if typed:
        it = "it" if len(typed) == 1 else "them"
        raise UserError(f"{and_list(typed)} with --no-fabric: only the fabric parts read {it}"
                        + (" (the GPUs alone search the TP degree only)" if spread else "")
                        + f"; drop {it} or --no-fabric")


def _few_collections(fn: Callable) -> Callable:
    """Decorator: the whole command under the study's raised youngest threshold
    (:func:`netmodel.study.collector.few_collections`, imported when the command runs),
    not only its run and its writing: the first collection at the default threshold after
    either walked everything either made (0.1 s of CPU each, the run's caches)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from netmodel.study.collector import few_collections

        return few_collections(fn)(*args, **kwargs)

    return wrapper


def _cpu_seconds() -> float:
    """CPU seconds, user and system, of this process and of the children it has waited for
    (the study's forked parts, each reaped before its result is taken)."""
    try:
        import resource
    except ImportError:   # no fork there either: this process did all the work
        import time

        return time.process_time()
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def _dask_summary(ex, quiet: bool) -> None:
    """Print where the cells ran and the scheduling overhead (stderr; not with --quiet)."""
    line = ex.summary()
    if line and not quiet:
        click.echo(line, err=True)


def _run_and_report(label: str, total: int, kw: dict, run: Callable[..., Any],
                    write: Callable[..., list], out_dir: str | None, as_json: bool,
                    options=None) -> None:
    """compare's and sweep's run and report: ``run(progress=, executor=)`` over ``total``
    cells (a progress bar named ``label``, the cells where ``kw``'s --workers and
    --scheduler say), ``write(result, out_dir, ...)`` with --out, the result printed (JSON or
    its table, under :func:`_modes`' lines of ``options``), what was written said, and
    exit status 3 when nothing is feasible."""
    quiet = kw["quiet"]
    with _executor(kw["workers"], kw["scheduler"]) as ex, \
            _progress(total, label, quiet) as bar:
        result = run(progress=bar, executor=ex)
    _dask_summary(ex, quiet)
    written = []
    if out_dir is not None:
        from netmodel.cli.refusals import output_refused_as

        with output_refused_as("--out", out_dir):
            written = write(result, out_dir, plot=not kw["no_plot"], run=run_record())
    _modes(options, result, as_json)
    click.echo(result.to_json() if as_json else result.table())
    say_written(written, as_json)
    _feasible_or_exit(result)


def _rows(result) -> list:
    """The rows of a comparison or sweep, or of a study's parts 1 and 2."""
    return list(result.rows) if hasattr(result, "rows") else \
        [r for part in (result.ideal, result.fabric) if part is not None for r in part.rows]


def _modes(options, result, as_json: bool) -> None:
    """Say the modes of ``options`` above the text's tables as infer and search say them
    (:func:`~netmodel.cli.resolve.mode_lines`: the calibrated mode, ``--profile``, with its
    note when a row's model or GPU is not one the profile was fitted on, and
    ``--overlap-collectives``); the JSON carries them as ``settings.options``. The profile's
    note on collectives is the study's first part's (its ``--networks``, the JSON's
    ``settings.profile_collectives_note``), not a comparison's: that runs many fabrics'
    collectives by design, the fitted one among them at most."""
    if options is not None and not as_json:
        from netmodel.cli.resolve import mode_lines

        rows = _rows(result)
        for line in mode_lines(options, gpus=[r.gpu for r in rows],
                               models=[r.model for r in rows]):
            click.echo(line)
        note = getattr(getattr(result, "ideal", None), "settings", {}).get(
            "profile_collectives_note")
        if note:
            click.echo(f"note: {note}")


def _feasible_or_exit(result) -> None:
    from netmodel.cli.main import exit_if_nothing_feasible

    exit_if_nothing_feasible(_rows(result))


# ------------------------------------------------------------------ study

@click.group("study", cls=SummaryGroup)
def study() -> None:
    """Run a packaged study."""


def _check_study_slos(phases: list[str], ttft: float, tbt: float, *, serving: bool) -> None:
    """Refuse an SLO typed on the command line that no part of the study reads (it would
    be ignored, the study going ahead with the default), as check_phase_options does for
    the other commands. The serving part reads both (its prefill pool the TTFT, its decode
    pool the TBT) but serves only scenarios with decode rows: with ``--phases prefill``
    nothing reads ``--tbt``; with ``--phases decode`` only serving reads ``--ttft``."""
    from compute.errors import UserError
    from compute.validate import describe

    if set(phases) == {"prefill"} and given_on_command_line("tbt"):
        raise UserError(f"--tbt {describe(as_typed('tbt'))} is the decode SLO; with --phases prefill no "
                        f"part reads it (serving serves the decode rows' scenarios): give "
                        f"--ttft or add decode to --phases")
    if set(phases) == {"decode"} and not serving and given_on_command_line("ttft"):
        raise UserError(f"--ttft {describe(as_typed('ttft'))} is the prefill SLO; with --phases decode "
                        f"only the serving part reads it (its prefill pool), which "
                        f"--no-serving/--no-fabric skip: give --tbt or run the serving part")


@study.command("lite-gpu", short_help="The H100 against the Lite family: alone, then on every "
               "fabric.")
@click.option("--out", "out_dir", required=True, type=OutputFolder(),
              metavar="DIR", help="Folder for every CSV, JSON, figure and summary.md.")
@list_option("--models", "models_text", default=None, metavar="LIST",
             help_from=lambda: f"The models: {model_help(many=True)} (default the "
             f"study's: {', '.join(DEFAULT_MODELS)}).")
@list_option("--gpus", "gpus_text", default=None, metavar="LIST",
             help_from=lambda: f"The GPUs: {gpu_help(many=True)} (default "
             f"{', '.join(DEFAULT_GPUS)}); {BASELINE}, the baseline every ratio divides by, "
             f"is always added.")
@phase_option(default="prefill,decode", takes="list", dest="phases_text")
@list_option("--networks", "networks_text", default="ring,ideal", show_default=True,
             metavar="LIST", help="Networks of the first part: ring (alpha-beta rings over "
             "scale-up bandwidth), bound (the least time of the ring, one-shot, two-shot and "
             "in-switch algorithms on the scale-up switch, a lower bound) and/or ideal (free "
             "collectives); the first is plotted.")
@list_option("--scenarios", "scenarios_text", default=None, metavar="LIST",
             help_from=lambda: f"Fabric scenarios of the second part (default every shipped "
             f"one): {scenario_help(many=True)}. {BASELINE_SCENARIO} runs with the H100, the "
             f"others with every other GPU of --gpus. {BASELINE_SCENARIO}, the baseline every "
             f"fabric ratio divides by, is always added.")
@click.option("--no-fabric", is_flag=True,
              help="Stop after the first part (the GPUs alone): no fabric comparison, "
              "paper's assumption, crossovers, packed comparison, sweep, blast radius, "
              "power and cost, serving or MoE part.")
@click.option("--no-sweep", is_flag=True, help="Skip the per-hop latency sweep.")
@click.option("--no-paper", is_flag=True,
              help="Skip the fabric comparison under the paper's assumption.")
@click.option("--no-reliability", is_flag=True, help="Skip the blast-radius part.")
@click.option("--no-cost", is_flag=True, help="Skip the power-and-cost part.")
@click.option("--no-crossovers", is_flag=True, help="Skip the co-design crossovers.")
@click.option("--no-serving", is_flag=True, help="Skip the disaggregated-serving part.")
@click.option("--no-packed", is_flag=True,
              help="Skip the fabric comparison packed into the cluster (every instance at "
              "once, stranded GPUs charged).")
@click.option("--moe-model", "moe_text", default=None, metavar="MODEL",
              help=f"The mixture-of-experts model of the MoE part (default {MOE_MODEL}; "
              "'none' skips the part).")
@parallelism_option(note="The fabric parts read it; the first part (the GPUs alone) searches "
                    "the TP degree only.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the study as JSON instead of the tables: one key per part (study, "
                   "fabric, paper, sweep, reliability, cost, crossovers, serving, moe, "
                   "packed; null for a part skipped).")
@with_options(_slo_options)
@with_options(_dask_options)
@_few_collections
def lite_gpu(out_dir: str, models_text: str | None, gpus_text: str | None, phases_text: str,
             networks_text: str, scenarios_text: str | None, no_fabric: bool, no_sweep: bool,
             no_paper: bool, no_reliability: bool, no_cost: bool, no_crossovers: bool,
             no_serving: bool, no_packed: bool, moe_text: str | None, parallelism: str,
             as_json: bool, ttft: float, tbt: float, overlap_collectives: bool,
             profile_ref: str | None, no_plot: bool, quiet: bool, workers: int | None,
             scheduler: str | None) -> None:
    """H100 versus the Lite family: first with ideal (and ring) networks, then on every
    fabric scenario (also under the paper's overlap, at the co-design crossovers and packed
    into the cluster), the decode throughput as per-hop latency grows, blast radius and
    availability, power and cost, disaggregated serving and a mixture of experts. Writes CSV,
    JSON, figures and summary.md (the findings, stated from the numbers); prints the tables.

    The serving part reads both SLOs (its prefill pool --ttft, its decode pool --tbt) for
    the scenarios with decode rows, so --ttft counts with --phases decode while it runs;
    an SLO no part reads (--tbt with --phases prefill) is refused."""
    import time

    from compute.errors import UserError, known, lookalike
    from compute.validate import describe

    start = time.perf_counter(), _cpu_seconds()
    if no_fabric and (workers is not None or scheduler is not None):
        # only the fabric parts run on Dask: the option was taken, never used, exit 0
        given = f"--workers {describe(workers)}" if workers is not None else \
            f"--scheduler {describe(scheduler)}"
        raise UserError(f"{given} with --no-fabric: nothing would run on Dask (only the "
                        "fabric parts do); drop one of them")
    from netmodel.cli.refusals import output_refused_as, value_refused_as
    from netmodel.study.lite_gpu import (
        DEFAULT_GPUS,
        DEFAULT_MODELS,
        NETWORKS,
        run_full_study,
        write_full_study,
    )

    models = _names("--models", models_text) if models_text is not None else \
        list(DEFAULT_MODELS)
    gpus = _names("--gpus", gpus_text) if gpus_text is not None else list(DEFAULT_GPUS)
    phases = _phases(phases_text, "--phases")
    networks = list(dict.fromkeys(_names("--networks", networks_text)))
    for n in networks:
        if n not in NETWORKS:
            raise UserError(f"unknown network {n!r}{lookalike(n, NETWORKS)}; known: "
                            f"{known(NETWORKS)}")
    scenarios = _names("--scenarios", scenarios_text) if scenarios_text is not None \
        else None
    slo, options = _settings(ttft, tbt, overlap_collectives, profile_ref)
    _check_study_slos(phases, ttft, tbt, serving=not (no_fabric or no_serving))
    _check_out(out_dir)
    moe = MOE_MODEL if moe_text is None else \
        None if moe_text.strip().lower() == "none" else moe_text
    if moe is not None:   # the library's check says moe=None; here it is 'none'
        from compute.models import get_model

        if get_model(moe).experts <= 1:
            raise UserError(f"--moe-model {moe_text!r} is not a mixture of experts (one MLP "
                            f"per layer); give one with experts, e.g. {MOE_MODEL!r}, or "
                            f"'none' to skip the part")
    if no_fabric:
        _refuse_fabric_inputs(parallelism, moe, scenarios)
    with _executor(workers, scheduler) as ex, _gpus_beside_swaps(), \
            value_refused_as("--models", models_text or "", _TWO_MODELS), \
            value_refused_as("--gpus", gpus_text or "", _TWO_GPUS):
        # run_full_study hands the executor to its comparisons and sweep
        result = run_full_study(models, gpus, phases, networks=networks, scenarios=scenarios,
                                fabric=not no_fabric, sweep=not (no_fabric or no_sweep),
                                paper=not no_paper, reliability=not no_reliability,
                                cost=not no_cost, crossovers=not no_crossovers,
                                serving=not no_serving, packed=not no_packed,
                                moe=moe,
                                parallelism=parallelism, options=options, slo=slo,
                                quiet=quiet, executor=ex if ex.distributed else None,
                                figures=not no_plot, plot=not no_plot)
    _dask_summary(ex, quiet)
    t0 = time.perf_counter()
    with output_refused_as("--out", out_dir):
        written = write_full_study(result, out_dir, plot=not no_plot, run=run_record())
    timings = {**result.timings, "writing files": time.perf_counter() - t0}
    if not quiet:   # the parts beside ran at the same time as those here: the total says
        # what the run took (the parts add up to more)
        wall, cpu = time.perf_counter() - start[0], _cpu_seconds() - start[1]
        click.echo("time per part: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
                   + f"; in all {wall:.1f} s wall, {cpu:.1f} s CPU (forked parts included"
                   + ("; not Dask's workers)" if ex.distributed else ")"), err=True)
    _modes(options, result, as_json)
    click.echo(result.to_json() if as_json else result.table())
    say_written(written, as_json)
    # the study's caches live until the process ends: spare the collector walking them
    # again at exit (0.1-0.2 s of a full collection; nothing of them is garbage), and
    # (frozen before _few_collections restores the threshold) at the next allocation
    import gc
    gc.freeze()
    _feasible_or_exit(result)


# ------------------------------------------------------------------ compare

def _scenario_listing(list_: bool, show: str | None, as_json: bool) -> bool:
    """compare's --list and --show: each prints and exits, taking no option but --json
    (the listing, or the scenario, as JSON); with each other, or with an option that would
    run a comparison (``--list --models nosuch`` listed and exited 0, ignoring the bad
    name; ``--list --json`` printed the table), one line refuses them. True when one ran."""
    if not list_ and show is None:
        return False
    from click.core import ParameterSource

    from compute.errors import UserError

    ctx = click.get_current_context()
    asked = "--list and --show" if list_ and show is not None else \
        "--list" if list_ else "--show"
    given = [p.opts[0] for p in ctx.command.params
             if p.name not in ("list_", "show", "as_json") and ctx.get_parameter_source(
                 p.name) not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)]
    if list_ and show is not None:
        raise UserError("--list and --show each print and exit: give one of them")
    if given:
        one = len(given) == 1
        raise UserError(f"{asked} prints and exits, taking no option but --json; "
                        f"{', '.join(given)} {'is an option' if one else 'are options'} of "
                        f"a comparison: drop {'it' if one else 'them'} or {asked}")
    if list_:
        _list_scenarios(as_json)
    else:
        _show_scenario(show, as_json)
    return True


def _list_scenarios(as_json: bool) -> None:
    from netmodel.study.scenario_catalog import shipped_scenarios

    rows = [{"name": name, "gpu": s.gpu, "description": s.description}
            for name, s in shipped_scenarios().items()]
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    for r in rows:
        click.echo(f"{r['name']:<15}{r['gpu']:<11}{r['description']}")


def _show_scenario(ref: str, as_json: bool) -> None:
    import tomllib

    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_fabric import build_fabric

    scenario = get_scenario(ref)
    # the loader checks a [fabric] table's builder and keys, the builder its values:
    # build it (milliseconds for the shipped ones), so a file --show prints is one that
    # --scenarios runs (leaves = -1, bandwidth = "x" were printed back as if valid)
    build_fabric(scenario)
    text = scenario.to_toml()
    click.echo(json.dumps(tomllib.loads(text), indent=1) if as_json else text,
               nl=as_json)


@click.command("compare")
@click.option("--list", "list_", is_flag=True,
              help="List the shipped scenarios and exit (with --json as JSON; no other "
              "option).")
@click.option("--show", metavar="SCENARIO",
              help="Print a scenario as TOML (edit it, pass the file to --scenarios) and exit "
              "(with --json as JSON; no other option).")
@list_option("--models", "models_text", default=",".join(DEFAULT_MODELS),
             show_default=True, metavar="LIST",
             help_from=lambda: f"The models: {model_help(many=True)}.")
@list_option("--scenarios", "scenarios_text", default=None, metavar="LIST",
             help_from=lambda: f"The scenarios (default every shipped one): "
             f"{scenario_help(many=True)}.")
@list_option("--gpus", "gpus_text", default=None, metavar="LIST", help_from=_gpus_help)
@phase_option(default="both", takes="list", dest="phase_text")
@click.option("--out", "out_dir", default=None, type=OutputFolder(),
              metavar="DIR", help="Also write compare.csv, compare.json and the figures there "
              "(all or nothing).")
@table_json_option
@click.option("--reliability", is_flag=True,
              help="Also the blast radius and availability of every row (closed forms, "
              "netmodel/data/failures.toml; 0.1-1 s per row).")
@with_options(_search_options)
def compare(list_: bool, show: str | None, models_text: str, scenarios_text: str | None,
            gpus_text: str | None, phase_text: str, out_dir: str | None, as_json: bool,
            reliability: bool, **kw: Any) -> None:
    """Best TP degree and batch of each model on each scenario's fabric, per phase:
    TTFT/TBT, tokens/s, tokens/s/SM, the share of time bound by the network, tokens/s/W and
    $ per million tokens (with --reliability also availability and SMs lost a GPU failure)."""
    if _scenario_listing(list_, show, as_json):
        return
    from netmodel.study.compare import run_compare, write_compare
    from netmodel.study.scenario_catalog import expand_scenarios, scenario_names

    scenarios = _names("--scenarios", scenarios_text) if scenarios_text is not None else \
        list(scenario_names())
    gpus = _names("--gpus", gpus_text) if gpus_text is not None else None
    models, phases, settings = _search_settings(models_text, phase_text, kw)
    _check_out(out_dir)
    # the searches run_compare makes: the scenarios as --gpus expands them, the baseline too
    with _gpus_beside_swaps():
        total = len(models) * len(phases) * len(expand_scenarios(scenarios, gpus))
    from netmodel.cli.refusals import value_refused_as

    with value_refused_as("--models", models_text, _TWO_MODELS), _parallelism_said():
        _run_and_report("compare", total, kw, functools.partial(
            run_compare, models, scenarios, phases, gpus=gpus, reliability=reliability,
            **settings), write_compare, out_dir, as_json, settings["options"])


# ------------------------------------------------------------------ sweep

@click.command("sweep")
@list_option("--scenarios", "scenario_texts", multiple=True, required=True, metavar="LIST",
             help_from=lambda: f"The scenarios, several on one plot: "
             f"{scenario_help(many=True)}; the option may be repeated.")
@click.option("--param", "param_texts", multiple=True, required=True, metavar="PATH=RANGE",
              help="Parameter and values, e.g. adjust.hop_latency=0.1us:10us, "
              "fabric.latency=100ns,1us or fabric.ports=2:8; one or two. A cost.NAME value "
              "takes a unit of its data row's unit, e.g. cost.electricity_price=50USD/MWh:200USD/MWh "
              "(0.05 to 0.2 USD/kWh), cost.lifetime=3y,5y, cost.utilization=75%, 1.2kW, "
              "1.5USD/(Gb/s); a bare "
              "number is SI (USD/J, s). Under a cost.* sweep a GPU with a published list price "
              "keeps it, the others (the H100 too) follow their own package cost at their "
              "price/cost margin at the defaults; cost.wafer_price is the N4-class wafer "
              "(docs/economics.md).")
@click.option("--points", default="7", show_default=True, metavar="N",
              help="Values of a LO:HI range (log-spaced).")
@list_option("--models", "models_text", default="Llama-3-70B", show_default=True,
             metavar="LIST",
             help_from=lambda: f"The models: {model_help(many=True)}.")
@phase_option(default="decode", takes="list", dest="phase_text")
@list_option("--gpus", "gpus_text", default=None, metavar="LIST", help_from=_gpus_help)
@click.option("--out", "out_dir", default=None, type=OutputFolder(),
              metavar="DIR", help="Also write sweep.csv, sweep.json and sweep.png there (all or "
              "nothing).")
@table_json_option
@with_options(_search_options)
def sweep(scenario_texts: tuple[str, ...], param_texts: tuple[str, ...], points: str,
          models_text: str, phase_text: str, gpus_text: str | None, out_dir: str | None,
          as_json: bool, **kw: Any) -> None:
    """Tokens/s/SM of scenarios as one or two parameters vary (a fabric's link bandwidth,
    per-hop latency, OCS ports, ...; a cost.* price or power, scored by $ per million tokens
    instead), marking where one scenario overtakes another."""
    from compute.errors import UserError
    from netmodel.cli.resolve import whole_option
    from netmodel.study.scenario_catalog import expand_scenarios
    from netmodel.study.sweep import parse_param, run_sweep, write_sweep
    from netmodel.study.sweep_params import refuse_unread_points

    refs = _names("--scenarios", *scenario_texts)
    gpus = _names("--gpus", gpus_text) if gpus_text is not None else None
    with _gpus_beside_swaps():
        scens = expand_scenarios(refs, gpus)
    if len(param_texts) > 2:
        raise UserError(f"sweep one or two parameters, got {len(param_texts)} --param")
    n = whole_option("--points", points)
    refuse_unread_points(points if given_on_command_line("points") else None, param_texts,
                         points_name="--points", param_name="--param", drop="drop --points")
    asked = n if given_on_command_line("points") else None   # 7 by default, not asked
    params = []
    for text in param_texts:
        try:
            params.append(parse_param(text, scens, asked, points_name="--points"))
        except UserError as exc:
            if "fewer points" in str(exc) and given_on_command_line("points"):
                raise type(exc)(f"--points {points!r}: {exc}") from None   # --points' count
            if str(exc).startswith("--"):
                raise
            # which --param: 'unknown parameter ...' quoted the scenario, not the flag
            raise type(exc)(f"--param {text!r}: {exc}") from None
    if len(params) == 2 and params[0].path == params[1].path:
        raise UserError(f"--param {param_texts[0]!r} and --param {param_texts[1]!r} both "
                        f"sweep {params[0].path}; give each parameter once (one axis each)")
    models, phases, settings = _search_settings(models_text, phase_text, kw)
    _check_out(out_dir)
    total = len(scens) * len(params[0].values) * (len(params[1].values) if len(params) > 1
                                                  else 1)
    from netmodel.cli.refusals import value_refused_as

    # a GPU's die comes with --scenarios (NAME@GPU, a scenario file's gpu): said with it
    # cost parameters whose product overflows: said with the --param that set them
    costs = [t for t in param_texts if t.strip().startswith("cost.")]
    with value_refused_as("--scenarios", ",".join(scenario_texts), "no die data"), \
            value_refused_as("--models", models_text, _TWO_MODELS), \
            _cost_params_said(costs), _parallelism_said():
        _run_and_report("sweep", total, kw, functools.partial(
            run_sweep, scens, params, models, phases, **settings), write_sweep, out_dir,
            as_json, settings["options"])
