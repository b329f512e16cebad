"""``netmodel blast-radius`` and ``netmodel availability``: thin click commands over
:mod:`netmodel.study.blast_radius` and :mod:`netmodel.study.availability`, their inputs
read and checked by :mod:`netmodel.cli.reliability_inputs`.

Only click is imported at module level. Every input is checked, and the output folder too,
before the work starts; the files are written all or nothing.
"""

from __future__ import annotations

import click

from netmodel.cli import run_record, say_written
from netmodel.cli.options import (
    AsciiNumber,
    OutputFolder,
    ReadAs,
    RegistryChoice,
    RegistryHelp,
    max_batch_option,
    model_option,
    no_plot_option,
    parallelism_option,
    phase_option,
    quiet_option,
    registry_metavar,
    registry_names,
    scenario_help,
    slo_option,
    table_json_option,
    with_options,
)
from netmodel.cli.refusals import output_refused_as, value_refused_as
from netmodel.cli.reliability_inputs import (
    _absent,
    _check_placement_used,
    _checked_inputs,
    _gpus,
    _horizon,
    _parameters_as_flags,
    _seconds,
    _seed,
    _settings,
    _share,
    _storage_bandwidth,
    _trials,
    _work_as_flags,
)

__all__ = ["availability", "blast_radius"]


#: Where the registries of this module's choice options live (read when help is shown).
_CHOICES = "netmodel.study.choice_names"   # light: --help loads no numpy
_SPARE_PLACEMENTS = registry_metavar(_CHOICES, "SPARE_PLACEMENTS")


def _area_share_allowed() -> str:
    """The range ``--area-share`` takes (:meth:`~netmodel.study.reliability_catalog.
    Catalog.area_share_allowed`), said where a value below the smallest float is refused."""
    from netmodel.study.reliability_catalog import catalog

    return catalog().area_share_allowed()


def _data(table: str) -> dict:
    """The failure catalog's ``table`` as its data file holds it
    (:func:`netmodel.study.choice_names.failure_data`, no numpy): the defaults the help
    states, read when help is shown."""
    from netmodel.study.choice_names import failure_data

    return failure_data()[table]

_common = [
    click.option("--scenario", "scenario", default=None, metavar="S", cls=RegistryHelp,
                 help_from=lambda: f"The scenario: {scenario_help()} (or --fabric)."),
    # the help names no builder: listing them imports networkx (netmodel topology list)
    click.option("--fabric", "fabric", default=None, metavar="FILE|SPEC",
                 help="Or your own fabric: a saved .json/.graphml file (netmodel topology "
                 "export), a spec NAME[:KEY=VALUE,...] of a builder (netmodel topology "
                 "list) or a scenario's fabric; the GPU is the fabric's own, placement "
                 "contiguous, algorithm auto, default calibration (as infer --fabric); "
                 "an OCS fabric's circuits (logical=ring or torus:AxB) set per instance "
                 "and re-set on recovery, as the lite-ocs scenario's; "
                 "hosts and racks from its GPUs' server and rack labels (without server "
                 "labels a host is a block of consecutive GPUs, the failure catalog's host "
                 "size)."),
    model_option,
    phase_option(default="decode", takes="one"),
    click.option("--cluster-gpus", "cluster_gpus", default=None, metavar="N",
                 cls=RegistryHelp, aliases=("--gpus",), type=ReadAs(_gpus),
                 help="Cluster size in GPUs: a multiple of the scenario's fabric (copies of "
                 "it), up to 131,072 (default: one copy; also --gpus N). The GPU itself is "
                 "the scenario's: NAME@GPU."),
    click.option("--area-share", type=AsciiNumber(click.FLOAT, allowed=_area_share_allowed),
                 default=None, metavar="X", cls=RegistryHelp,
                 help_from=lambda: "Share of the GPU failure rate that grows with silicon "
                 "area (default {area_share:g}; plausible {area_share_low:g}-"
                 "{area_share_high:g}).".format_map(_data("gpu"))),
    click.option("--repair", type=RegistryChoice(registry_names(_CHOICES, "REPAIRS")),
                 default="local",
                 show_default=True, help="Repair from a local pool of parts, or the vendor's "
                 "RMA."),
    click.option("--rate", "rates", multiple=True, metavar="CLASS=R",
                 help="Failure rate of one part of CLASS per hour (repeat); gpu=R: the "
                 "reference GPU's whole rate, split into gpu-die and gpu-package."),
    click.option("--repair-time", "repair_times", multiple=True, metavar="CLASS=T",
                 help="Repair time of CLASS: a duration with a unit (s, min, h, d, w, y; a "
                 "bare number is seconds, where --rate's is per hour), e.g. gpu-die=7d or "
                 "host=36h (repeat)."),
    click.option("--detection", default=None, metavar="T", cls=RegistryHelp,
                 help_from=lambda: "Failure detection time (default "
                 "{detection_s:g}s).".format_map(_data("recovery")),
                 type=ReadAs(lambda t: _seconds(t, "--detection"))),
    click.option("--warmup", default=None, metavar="T", cls=RegistryHelp,
                 help_from=lambda: "Spare warm-up time (default "
                 "{warmup_s:g}s).".format_map(_data("recovery")),
                 type=ReadAs(lambda t: _seconds(t, "--warmup"))),
    click.option("--load-from", default=None, cls=RegistryHelp,
                 type=RegistryChoice(registry_names(_CHOICES, "LOAD_SOURCES")),
                 help_from=lambda: "Where a spare loads its weight shard (fabric: a peer "
                 "instance at the GPU's scale-up bandwidth; default "
                 "{load_from}).".format_map(_data("recovery"))),
    click.option("--load-bandwidth", default=None, metavar="BW", cls=RegistryHelp,
                 help_from=lambda: "Storage bandwidth of a host for --load-from storage, "
                 "shared by its GPUs (default "
                 "{storage_GBps_per_host:g}GB/s).".format_map(_data("recovery")),
                 type=ReadAs(_storage_bandwidth), parameters=["host_storage_bandwidth"]),
    slo_option("prefill"),
    slo_option("decode"),
    max_batch_option(),
    table_json_option,
    click.option("--out", "out_dir", default=None, type=OutputFolder(),
                 metavar="DIR", help="Folder for the JSON, CSV and figures."),
    no_plot_option,
    parallelism_option,
]


@click.command("blast-radius")
@with_options(_common)
@click.option("--spare-placement", "placement", default="pod", show_default=True,
              cls=RegistryHelp, metavar_from=_SPARE_PLACEMENTS,
              help="Where the hot spare of the recovery "
              "column sits.")
def blast_radius(scenario: str, model: str, phase: str,
                 cluster_gpus: int | None,
                 area_share: float | None, repair: str, rates: tuple[str, ...],
                 repair_times: tuple[str, ...], detection: float | None, warmup: float | None,
                 load_from: str | None, load_bandwidth: float | None, ttft: float, tbt: float,
                 max_batch: int, as_json: bool, out_dir: str | None, no_plot: bool,
                 parallelism: str, placement: str, fabric: str | None = None) -> None:
    """What one failure of each component class takes down: count, rate, hardware radius
    (GPUs, SMs lost or cut off), instances down, tokens/s lost, and the recovery path and
    time without and with a hot spare."""
    from netmodel.study.blast_radius import blast_files
    from netmodel.study.blast_radius import blast_radius as run

    cat, placement, scenario, phase = _checked_inputs(
        (area_share, repair, rates, repair_times, detection, warmup, load_from,
         load_bandwidth), placement, out_dir, scenario, fabric, phase)
    gpus, limit = cluster_gpus, max_batch
    with _parameters_as_flags(), value_refused_as("--spare-placement", placement,
                                                  "spare placement"):
        result = run(scenario, model, phase, gpus=gpus, slo=_settings(ttft, tbt, phase),
                     catalog_=cat, placement=placement, parallelism=parallelism,
                     max_batch=limit)
    _report(result, blast_files, out_dir, no_plot, as_json, rates, repair_times)


@click.command("availability")
@with_options(_common)
@click.option("--spares", default="0", show_default=True, metavar="N|P%",
              help="Spare GPUs: a count or a percentage of the cluster's GPUs.")
@click.option("--spare-placement", "placement", default="pod", show_default=True,
              cls=RegistryHelp, metavar_from=_SPARE_PLACEMENTS,
              help="Where spares sit: in the failed GPU's group, "
              "in its pod (copy of the fabric), or anywhere (whole instances re-created).")
@click.option("--horizon", default="1y", show_default=True, metavar="T",
              help="Simulated time (s, min, h, d, w, y): 1 h to 100 y.",
              type=ReadAs(lambda t: _horizon(t)))
@click.option("--trials", default="1000", show_default=True, metavar="N",
              help="Monte Carlo trials.", type=ReadAs(lambda t: _trials(t)))
@click.option("--seed", default="0", show_default=True, metavar="N",
              help="Random seed (a whole number >= 0).", type=ReadAs(lambda t: _seed(t)))
@click.option("--threshold", default="99%", show_default=True, metavar="SHARE",
              help="Capacity threshold for the time-below figure (99% or 0.99).",
              type=ReadAs(lambda t: _share(t)))
@quiet_option
def availability(scenario: str, model: str, phase: str,
                 cluster_gpus: int | None,
                 area_share: float | None, repair: str, rates: tuple[str, ...],
                 repair_times: tuple[str, ...], detection: float | None, warmup: float | None,
                 load_from: str | None, load_bandwidth: float | None, ttft: float, tbt: float,
                 max_batch: int, as_json: bool, out_dir: str | None, no_plot: bool,
                 parallelism: str, spares: str, placement: str, horizon: float, trials: int,
                 seed: int, threshold: float, quiet: bool, fabric: str | None = None) -> None:
    """Delivered capacity over time with failures, repairs and hot spares: a seeded Monte
    Carlo and the closed forms side by side (mean, p1/p50/p99, time below a threshold,
    instance-down events, goodput per SM bought)."""
    from netmodel.study.availability import availability as run
    from netmodel.study.availability import availability_files
    from netmodel.study.progress import Progress

    cat, placement, scenario, phase = _checked_inputs(
        (area_share, repair, rates, repair_times, detection, warmup, load_from,
         load_bandwidth), placement, out_dir, scenario, fabric, phase)
    _check_placement_used(placement, spares)   # after the placement's own refusal
    gpus, limit = cluster_gpus, max_batch
    slo = _settings(ttft, tbt, phase)
    with _parameters_as_flags(), Progress(trials, "availability", quiet=quiet) as bar, \
            value_refused_as("--spare-placement", placement, "spare placement"), \
            _work_as_flags():
        result = run(scenario, model, phase, gpus=gpus, spares=spares,
                     placement=placement, horizon=horizon, trials=trials, seed=seed,
                     threshold=threshold, slo=slo, catalog_=cat, progress=bar,
                     parallelism=parallelism, max_batch=limit)
    _report(result, availability_files, out_dir, no_plot, as_json, rates, repair_times)


def _report(result, files, out_dir: str | None, no_plot: bool, as_json: bool,
            rates: tuple[str, ...], repair_times: tuple[str, ...]) -> None:
    """Write ``files(result, plot=...)`` to ``out_dir`` (when given, all or nothing), print
    the result (JSON or its table and the classes asked of that the cluster lacks), and say
    what was written."""
    from compute.outputs import write_outputs

    written = []
    if out_dir is not None:
        with output_refused_as("--out", out_dir):
            written = write_outputs(out_dir, files(result, plot=not no_plot), run=run_record())
    click.echo(result.to_json() if as_json else "\n".join(
        [result.table(), *_absent(result.cluster, rates, repair_times)]))
    say_written(written, as_json)
