"""``netmodel serve``: disaggregated serving (prefill and decode pools, the KV cache sent
between them over the fabric) of one model on one scenario, a thin layer over
:func:`netmodel.study.serving.serve`.

Only click and the standard library are imported at module level.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

from netmodel.cli.options import (
    RegistryHelp,
    gpu_help,
    json_option,
    max_batch_option,
    model_option,
    mtp_options,
    profile_option,
    roofline_flag,
    roofline_option,
    scenario_help,
    slo_of,
    slo_option,
    with_options,
)

__all__ = ["serve"]


def _rate(text: str) -> float | str:
    """The number ``--rate`` spells (the one number grammar), or the text itself where it
    spells none, for the workload to refuse as typed: its range (``MIN_RATE`` to
    ``MAX_RATE`` requests/s) is :class:`~netmodel.study.serving.ServingWorkload`'s to
    check, its refusal said with the flag (:func:`serve`)."""
    from compute.validate import read_number
    from netmodel.study.serving import number_allowed

    v = read_number("--rate", str(text), allowed=number_allowed("rate"))
    return text if v is None else v


def _load(text: str) -> float | str:
    """The number ``--load`` spells, or the text itself where it spells none, for the
    workload to refuse as typed with its range
    (:func:`netmodel.study.queueing.check_load`), as :func:`_rate`."""
    from compute.validate import read_number
    from netmodel.study.serving import number_allowed

    v = read_number("--load", str(text), allowed=number_allowed("load"))
    return text if v is None else v


def _kv_ports_read(text: str) -> int | str:
    """The whole number ``--kv-ports`` spells, or the text itself where it spells none (for
    :func:`_kv_ports` to refuse as typed; two spellings of one number given twice are one)."""
    from compute.validate import read_number

    v = read_number("--kv-ports", str(text), whole=True)
    return text if v is None else v


def _kv_ports(scenario, text: str) -> int:
    """The ports ``--kv-ports`` sets aside on ``scenario``
    (:func:`netmodel.study.serving_transfer.check_kv_ports`: its range, or its refusal off an
    optical circuit switch), the refusal said with the flag and the text typed."""
    from compute.errors import UserError
    from netmodel.study.serving_transfer import check_kv_ports

    try:
        return check_kv_ports(scenario, _kv_ports_read(text))
    except UserError as exc:
        if str(exc).startswith("--kv-ports "):   # the number grammar's own line names it
            raise
        said = str(exc).removeprefix("kv_ports: ").removeprefix("kv_ports ")
        raise UserError(f"--kv-ports {text!r}: {said}") from None


def _kv_ports_help() -> str:
    from netmodel.study.serving_transfer import kv_ports_help

    return kv_ports_help()


def _load_help() -> str:
    from netmodel.study.queueing import LOAD_HELP

    return LOAD_HELP + " Overrides the workload's."


@click.command("serve")
@click.option("--scenario", required=True, metavar="S", cls=RegistryHelp,
              help_from=lambda: f"The scenario: {scenario_help()}.")
@model_option
@click.option("--workload", default="coding", show_default=True, metavar="NAME|FILE",
              help="coding or conversation (Splitwise medians: prompt 1500 / output 13, "
                   "1020 / 129 tokens), or a TOML/JSON file with prompt, output and rate.")
@click.option("--rate", "rate_text", default=None, metavar="R",
              help="Requests/s to size whole pools for (overrides the workload's); exit "
                   "status 3 when the pools it needs do not fit the fabric.")
@click.option("--load", "load_text", default=None, metavar="RHO", cls=RegistryHelp,
              help_from=_load_help)
@click.option("--prefill-gpu", default=None, metavar="NAME|FILE", cls=RegistryHelp,
              help_from=lambda: f"GPU of the prefill pool (default the scenario's): "
              f"{gpu_help()}.")
@click.option("--decode-gpu", default=None, metavar="NAME|FILE", cls=RegistryHelp,
              help_from=lambda: f"GPU of the decode pool (default the scenario's): "
              f"{gpu_help()}.")
@click.option("--kv-ports", "kv_ports_text", default=None, metavar="N", cls=RegistryHelp,
              help_from=_kv_ports_help, reads=_kv_ports_read)
@click.option("--tp-only", is_flag=True,
              help="Search plain tensor parallelism only (default TP x PP x EP x DP-attention).")
@max_batch_option("Largest batch tried in each pool.")
@slo_option("prefill", " with the KV cache transfer")
@slo_option("decode")
@profile_option
@roofline_flag("two_batch_overlap")
@roofline_option("dense_mlp_tp", "D")
@with_options(mtp_options)
@json_option
def serve(scenario: str, model: str, workload: str, rate_text: str | None,
          load_text: str | None, prefill_gpu: str | None, decode_gpu: str | None,
          kv_ports_text: str | None, tp_only: bool, max_batch: int,
          ttft: float, tbt: float, profile_ref: str | None, two_batch_overlap: bool,
          dense_mlp_tp: str | None, mtp_tokens: str | None, mtp_acceptance: str | None,
          as_json: bool) -> None:
    """Disaggregated serving: the prefill and decode pools' best configurations, the KV
    cache transfer between them, the pool ratio, TTFT, TBT and tokens/s/SM. With --profile
    both pools' step times are the engine profile's (as compare's); the KV transfer stays
    the fabric's. Exit status 3 when no configuration meets the SLOs, when the pools a
    rate (--rate or the workload file's) needs do not fit the fabric, or when the TTFT
    reported at their loads (the decode slot's wait simulated) misses the SLO the
    configuration met at the stated load (the table is still printed). With
    --two-batch-overlap each pool's step is the lesser of the serial one and two
    micro-batches overlapped (roofline only; the pools then search PP 1)."""
    from compute.roofline_options import RooflineOptions
    from netmodel.cli.main import NOTHING_FEASIBLE
    from netmodel.cli.refusals import value_refused_as
    from netmodel.cli.resolve import dense_mlp_tp as dense_degree
    from netmodel.cli.resolve import mtp_settings, profile_line, resolve_profile
    from netmodel.study.collective_setup import routing_description
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.serving import get_workload, with_load, with_rate
    from netmodel.study.serving import serve as run_serve

    with value_refused_as("--workload", workload, "unknown workload", "cannot read workload",
                          "workload file"):
        wl = get_workload(workload)
    if rate_text is not None:
        with value_refused_as("--rate", rate_text, f"workload {wl.name!r}: rate "):
            wl = with_rate(wl, _rate(rate_text))
    if load_text is not None:
        with value_refused_as("--load", load_text, f"workload {wl.name!r}: load "):
            wl = with_load(wl, _load(load_text))
    slo = slo_of(ttft, tbt)
    profile = resolve_profile(profile_ref)
    scen = get_scenario(scenario)
    kv_ports = None if kv_ports_text is None else _kv_ports(scen, kv_ports_text)
    options = RooflineOptions(profile=profile, two_batch_overlap=two_batch_overlap,
                              dense_mlp_tp=dense_degree(dense_mlp_tp),
                              **mtp_settings(mtp_tokens, mtp_acceptance))
    # a workload past the model's context: said with --workload (the file or name typed)
    with value_refused_as("--workload", workload, f"workload {wl.name!r}: prompt "), \
            _gpus_said_as(scenario, prefill_gpu, decode_gpu), _dense_beside_tp_only(tp_only):
        r = run_serve(model, scen, wl, prefill_gpu=prefill_gpu, decode_gpu=decode_gpu,
                      slo=slo, options=options, dimensions="tp" if tp_only else "all",
                      max_batch=max_batch, kv_ports=kv_ports)
    click.echo(r.to_json() if as_json else r.table())
    if profile is not None and not as_json:
        # the pools' collectives (and the transfer) are the scenario's, as compare's
        desc = {"model": "scenario", "scenario": scen.label,
                **routing_description(scen.placement, scen.algorithm, tuner=scen.tuner,
                                      instances=scen.instances)}
        click.echo(profile_line(profile, desc,
                                 [x.gpu for x in (r.prefill, r.decode) if x is not None]
                                 or [scen.gpu], [r.model]))
    if not r.feasible:
        click.echo(f"nothing feasible: no configuration meets the SLO (exit status "
                   f"{NOTHING_FEASIBLE})", err=True)
        raise click.exceptions.Exit(NOTHING_FEASIBLE)
    if r.fits_fabric is False:
        click.echo(f"nothing feasible: {r.gpus_used} GPUs serve {wl.rate:g} requests/s, the "
                   f"fabric has {r.fabric_gpus} (exit status {NOTHING_FEASIBLE})", err=True)
    if r.ttft_within_slo is False:   # the sized pools' waits, which chose no configuration
        click.echo(f"TTFT SLO not met: {r.ttft_s * 1e3:.2f} ms > {r.ttft_limit_s * 1e3:g} ms; "
                   f"{r.why_ttft_unmet()} (exit status {NOTHING_FEASIBLE})", err=True)
    if r.fits_fabric is False or r.ttft_within_slo is False:
        raise click.exceptions.Exit(NOTHING_FEASIBLE)


@contextlib.contextmanager
def _dense_beside_tp_only(tp_only: bool) -> Iterator[None]:
    """The refusal of a dense MLP TP degree where no configuration searched has attention
    DP said as serve's cause, --tp-only: 'give attention DP > 1' named no option of serve's
    (its pools search attention DP unless --tp-only)."""
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        if not (tp_only and str(exc).startswith("dense MLP TP ")
                and "runs beside attention DP; no configuration searched" in str(exc)):
            raise
        degree = str(exc).split()[3].rstrip(";")
        raise UserError(f"--dense-mlp-tp {degree} runs the dense MLP layers beside attention "
                        f"DP, which --tp-only does not search (plain tensor parallelism): drop "
                        f"--tp-only or leave --dense-mlp-tp unset") from None


@contextlib.contextmanager
def _gpus_said_as(scenario: str, prefill_gpu: str | None,
                  decode_gpu: str | None) -> Iterator[None]:
    """The library's refusal of two different GPUs of one name among the scenario's and the
    pools' (``prefill_gpu and decode_gpu are two different GPUs named ...``) said with the
    flags and the values typed."""
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        text = str(exc)
        if " are two different GPUs named " not in text:
            raise
        head, rest = text.split(" are two different GPUs named ", 1)
        for word, said in (("the scenario's GPU", f"the GPU of --scenario {scenario!r}"),
                           ("prefill_gpu", f"--prefill-gpu {prefill_gpu!r}"),
                           ("decode_gpu", f"--decode-gpu {decode_gpu!r}")):
            head = head.replace(word, said)
        raise UserError(f"{head} are two different GPUs named {rest}") from None
