"""``netmodel hardware | models | infer | search``: a thin click layer over :mod:`compute`.

Each command parses its options, makes one library call and prints the result object's
``to_dict()`` (``--json``) or ``table()``: :mod:`compute.listings` for hardware and models,
:mod:`netmodel.study.roofline_report` for infer and search.

Only click and the standard library are imported at module level; numpy and the compute
modules are imported inside the command functions so ``netmodel --help`` stays fast.
Numbers are taken as text and checked by compute's parsers, so a bad value (``--batch nan``)
is one ``error:`` line with exit status 2, like every other user mistake.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any

import click

from netmodel.cli.options import (
    InputPath,
    RegistryHelp,
    gpu_help,
    max_batch_option,
    model_help,
    mtp_options,
    phase_option,
    profile_option,
    registry_metavar,
    roofline_flag,
    roofline_option,
    slo_of,
    slo_option,
)
from netmodel.cli.resolve import (
    COLLECTIVE_OPTIONS,
    check_phase_options,
    dense_mlp_tp,
    mtp_settings,
    resolve_collectives,
    resolve_gpu,
    resolve_model,
    resolve_profile,
    whole_option,
)

__all__ = ["hardware", "infer", "models", "search"]


# ---- infer's and search's options (those other commands share: netmodel.cli.resolve) ----

def _pp_rule() -> str:
    """The pipeline degrees allowed, as compute checks them (for --help)."""
    from compute.parallel_rules import PP_RULE

    return PP_RULE


def _fraction(what: str, text, *, upper_open: bool = False) -> float:
    """``--reserve`` (``upper_open``: a fraction in [0, 1)) or an efficiency factor, a
    fraction from the floor engine profiles put on their efficiencies to 1, the range
    compute.roofline_options.RooflineOptions checks (said here with the flag, below it
    and above alike)."""
    from compute.errors import UserError
    from compute.validate import ZeroAllowed, read_number

    if upper_open:
        rule, least = "a fraction in [0, 1)", 0.0
    else:   # the profiles' module imports numpy: read once a value is, not for --help
        from compute.profiles import PARAMETERS

        least = PARAMETERS["gemm_efficiency"].minimum
        rule = f"a fraction from {least:g} to 1"
    v = read_number(what, str(text),   # the one number grammar ('0_5e-1' refused)
                    allowed=ZeroAllowed(rule) if upper_open else rule)
    if v is None:
        v = float("nan")
    ok = (0 <= v < 1) if upper_open else (least <= v <= 1)
    if not ok:
        raise UserError(f"{what} must be {rule}, got {text!r}")
    return v


def _dtype_help() -> str:
    """``--compute-dtype``'s help: it names compute's dtypes (:data:`compute.hardware.DTYPES`),
    read only when the help is shown (its placeholder too, and what completion offers)."""
    from compute.hardware import DTYPES

    return f"Tensor cores to run at: {', '.join(DTYPES)} (default: the model's)."


#: ``--json`` of infer, search, hardware and models.
_json_option = click.option("--json", "as_json", is_flag=True,
                            help="Print JSON (shape in docs/output-formats.md).")

#: ``--expert-skew X``, infer's and search's alike.
_expert_skew_option = click.option(
    "--expert-skew", "skew_text", default="1", show_default=True, metavar="X",
    help="Busiest EP group's share of routed tokens over the mean (1: uniform).")


def _model_gpu_options(f):
    for opt in reversed([
        click.option("--model", "model_name", metavar="NAME|FILE", cls=RegistryHelp,
                     help_from=lambda: f"The model: {model_help()}; with --model-file, one "
                     f"of its models by name (left out: the file's only one)."),
        click.option("--gpu", "gpu_name", metavar="NAME|FILE", cls=RegistryHelp,
                     help_from=lambda: f"The GPU: {gpu_help()}; with --gpu-file, one of "
                     f"its GPUs by name (left out: the file's only one)."),
        click.option("--model-file", type=InputPath(dir_okay=False), metavar="FILE",
                     help="TOML/JSON file of [model.NAME] tables (catalog keys)."),
        click.option("--hf-config", type=InputPath(), metavar="PATH",
                     help="A HuggingFace config.json (or its folder) to use as the model."),
        click.option("--gpu-file", type=InputPath(dir_okay=False), metavar="FILE",
                     help="TOML/JSON file of [gpu.NAME] tables (catalog keys or derive_from)."),
        phase_option(default="decode", takes="one"),
        click.option("--prompt", default="1500", show_default=True, metavar="TOKENS",
                     help="Prompt length for prefill (median of the Splitwise coding trace)."),
        click.option("--context", default="1513", show_default=True, metavar="TOKENS",
                     help="Context of a decode step (median coding prompt + median output)."),
        click.option("--mode", default="overlap", show_default=True, cls=RegistryHelp,
                     metavar_from=registry_metavar("compute.roofline_options", "MODES"),
                     help="overlap: stage time = max(compute, memory, network); serial: sum."),
        roofline_flag("overlap_collectives"),
        roofline_flag("two_batch_overlap"),
        roofline_option("dense_mlp_tp", "D"),
        *mtp_options,
        click.option("--flops-efficiency", default="1.0", show_default=True, metavar="F",
                     help="Achievable fraction of peak FLOP/s."),
        click.option("--memory-efficiency", default="1.0", show_default=True, metavar="F",
                     help="Achievable fraction of HBM bandwidth."),
        click.option("--compute-dtype", cls=RegistryHelp, default=None, help_from=_dtype_help,
                     metavar_from=registry_metavar("compute.hardware", "DTYPES")),
        click.option("--reserve", default="0.1", show_default=True, metavar="F",
                     help="Fraction of HBM left to the runtime."),
        slo_option("prefill"),
        slo_option("decode"),
        _json_option,
        *COLLECTIVE_OPTIONS,
        profile_option,
    ]):
        f = opt(f)
    return f


def _setup(kw):
    """Model, GPU, workload, options, SLO and the collectives (model, description, the
    fabric's GPUs) from the shared options."""
    from compute.phases import check_phase
    from compute.roofline import make_workload
    from compute.roofline_options import RooflineOptions

    model = resolve_model(kw["model_name"], kw["model_file"], kw["hf_config"])
    gpu, comm, desc, fabric_gpus = resolve_collectives(kw["scenario_ref"], kw["fabric_ref"],
                                                        kw["gpu_name"], kw["gpu_file"],
                                                        gpu_typed=True,
                                                        profiled=kw["profile_ref"] is not None)
    workload = make_workload(check_phase(kw["phase"]), whole_option("--prompt", kw["prompt"]),
                             whole_option("--context", kw["context"]))
    options = RooflineOptions(
        mode=kw["mode"], overlap_collectives=kw["overlap_collectives"],
        flops_efficiency=_fraction("--flops-efficiency", kw["flops_efficiency"]),
        memory_efficiency=_fraction("--memory-efficiency", kw["memory_efficiency"]),
        compute_dtype=kw["compute_dtype"],
        memory_reserve=_fraction("--reserve", kw["reserve"], upper_open=True),
        profile=resolve_profile(kw["profile_ref"]),
        two_batch_overlap=kw.get("two_batch_overlap", False),
        dense_mlp_tp=dense_mlp_tp(kw.get("dense_mlp_tp")),
        **mtp_settings(kw.get("mtp_tokens"), kw.get("mtp_acceptance")))
    slo = slo_of(kw["ttft"], kw["tbt"])
    check_phase_options(workload.phase, kw)   # after the values: a bad one is named first
    return model, gpu, workload, options, slo, (comm, desc, fabric_gpus)


# ---- hardware and models -----------------------------------------------------------------

@click.command("hardware")
@click.argument("name", required=False)
@click.option("--gpu-file", type=InputPath(dir_okay=False), metavar="FILE",
              help="Also list GPUs from a TOML/JSON file.")
@_json_option
def hardware(name: str | None, gpu_file: str | None, as_json: bool) -> None:
    """List GPU types, or show one (SI units in --json)."""
    from compute.listings import gpu_card, gpu_listing

    shown = gpu_listing(gpu_file) if name is None else gpu_card(resolve_gpu(name, gpu_file))
    click.echo(json.dumps(shown.to_dict(), indent=2) if as_json else shown.table())


@click.command("models")
@click.argument("name", required=False)
@click.option("--model-file", type=InputPath(dir_okay=False), metavar="FILE",
              help="Also list models from a TOML/JSON file.")
@click.option("--hf-config", type=InputPath(), metavar="PATH",
              help="Show the model read from a HuggingFace config.json.")
@_json_option
def models(name: str | None, model_file: str | None, hf_config: str | None, as_json: bool) -> None:
    """List LLM models, or show one (with parameter counts)."""
    from compute.listings import model_card, model_listing

    shown = model_listing(model_file) if name is None and not hf_config else \
        model_card(resolve_model(name, model_file, hf_config))
    click.echo(json.dumps(shown.to_dict(), indent=2) if as_json else shown.table())


# ---- infer and search ----------------------------------------------------------------------

#: The top of a pipeline degree, as --pp's help says it (the model is read later).
_PP_TOP = "the model's layers"


def _degrees(what: str, text, allow_all: bool = False, up_to: str | None = None):
    """A comma-separated list of whole numbers (or ``all`` where allowed), None if absent."""
    if text is None:
        return None
    if allow_all and str(text).strip().lower() == "all":
        return True
    from compute.validate import comma_list, refuse_repeats

    items = comma_list(what, text, "e.g. 1,2,4")
    if allow_all and any(t.strip().lower() == "all" for t in items):   # 'all,2': all of them
        from compute.errors import UserError

        raise UserError(f"{what} {str(text)!r} names 'all' in a list; give 'all' alone (every "
                        f"divisor) or whole numbers, e.g. 1,2,4")
    values = [whole_option(what, t, up_to=up_to) for t in items]   # 8 and 08: one degree
    refuse_repeats(what, items, dict(zip(items, values, strict=True)).__getitem__, text=str(text))
    return values


#: The library's words for each degree refused (compute.parallel, compute.sharding,
#: compute.roofline's two-batch check of PP, compute.mtp's), by the flag that gave it.
_DEGREE_WORDS = {"--tp": ("TP degree",), "--pp": ("PP degree", "two-batch overlap models one "
                                                  "pipeline stage", "MTP decode models one "
                                                  "pipeline stage"),
                 "--ep": ("EP degree",), "--attention-dp": ("attention DP degree",),
                 # a step longer than the model's max_context (compute.roofline.check_context)
                 "--prompt": ("prefill with a prompt of",),
                 "--context": ("decode with a context of",)}


def _degrees_as_flags(**typed: str | None):
    """A context in which a library refusal of a degree (``TP degree 5 does not divide the
    32 attention heads ...``) is said with the flag that gave it and its text as typed in
    front (``--tp '5.0': TP degree 5 ...``): the library names its parameter, the command
    line its flag, whatever spelling of the number was typed (+5, 5.0, 1e3); so is a step
    past the model's context, by ``--prompt`` or ``--context`` (its default where not
    typed: the flag to change). ``typed``: the text of each option (``tp``, ``pp``, ``ep``,
    ``attention_dp``, ``prompt``, ``context``), None where not given.

    >>> from compute.errors import UserError
    >>> try:
    ...     with _degrees_as_flags(tp="1e3", attention_dp=None):
    ...         raise UserError("TP degree 1000 does not divide the 32 attention heads")
    ... except UserError as exc:
    ...     print(exc)
    --tp '1e3': TP degree 1000 does not divide the 32 attention heads
    """
    import contextlib

    from netmodel.cli.refusals import value_refused_as

    stack = contextlib.ExitStack()
    given = {"--" + n.replace("_", "-"): str(t) for n, t in typed.items()
             if t is not None and n not in ("prompt", "context")}
    if given:   # no degree of the lists typed together: said with every list typed
        stack.enter_context(_none_together(given))
    for name, text in typed.items():
        flag = "--" + name.replace("_", "-")
        if text is not None:
            stack.enter_context(value_refused_as(flag, str(text), *_DEGREE_WORDS[flag]))
    return stack


@contextmanager
def _none_together(given: dict[str, str]):
    """A search's ``no configuration to search: ...`` (the degrees typed leave none: every
    EP or attention DP degree divides no TP) said with each degree flag typed (``given``,
    flag -> text) in front."""
    from compute.errors import UserError

    try:
        yield
    except UserError as exc:
        if not str(exc).startswith("no configuration to search"):
            raise
        flags = ", ".join(f"{f} {t!r}" for f, t in given.items())
        raise type(exc)(f"{flags}: {exc}") from None


def _check_skew_used(skew: float, model, eps) -> None:
    """Refuse an ``--expert-skew`` above 1 that is never used: on a dense model (no routed
    experts), or when every EP degree ``eps`` is 1 (one EP group receives every routed
    token, so the skew is costed at 1: compute.stage_mlp.skew_ceiling)."""
    from compute.errors import UserError

    if skew != 1 and getattr(model, "experts", 0) <= 1:
        raise UserError(f"--expert-skew {skew:g} weighs the busiest EP group's routed tokens; "
                        f"{model.name} is dense (no routed experts): drop --expert-skew")
    if skew != 1 and all(e == 1 for e in eps):
        raise UserError(f"--expert-skew {skew:g} weighs the busiest of the EP groups; with "
                        f"--ep 1 there is one group, costed at 1: give --ep N > 1, or drop "
                        f"--expert-skew")


def _skew(text) -> float:
    from compute.errors import UserError
    from compute.parallel import MAX_EXPERT_SKEW
    from compute.roofline import check_skew
    from compute.validate import read_number

    rule = f"a number from 1 (uniform routing) to {MAX_EXPERT_SKEW:,.0f}"
    v = read_number("--expert-skew", str(text), allowed=rule)   # the one number grammar
    try:
        return check_skew(float("nan") if v is None else v)
    except (ValueError, UserError):
        raise UserError(f"--expert-skew must be {rule}, got {text!r}") from None


@click.command("infer")
@_model_gpu_options
@click.option("--tp", "tp_text", required=True, metavar="N",
              help="Tensor-parallel degree (GPUs per pipeline stage).")
@click.option("--batch", "batch_text", required=True, metavar="B", help="Sequences per step.")
@click.option("--pp", "pp_text", default="1", show_default=True, metavar="N",
              cls=RegistryHelp, help_from=lambda: f"Pipeline stages, {_pp_rule()}.")
@click.option("--ep", "ep_text", default="1", show_default=True, metavar="N",
              help="Expert-parallel degree (divides --tp; one that does not divide the "
                   "experts holds redundant copies).")
@click.option("--attention-dp", "adp_text", default="1", show_default=True, metavar="N",
              help="Attention data-parallel groups per stage (divides --tp).")
@_expert_skew_option
@click.option("--csv", "as_csv", is_flag=True, help="Print the per-stage breakdown as CSV.")
def infer(tp_text: str, batch_text: str, pp_text: str, ep_text: str, adp_text: str,
          skew_text: str, as_csv: bool, as_json: bool, **kw: Any) -> None:
    """Per-stage roofline of one configuration (per GPU of the instance)."""
    from compute.errors import UserError
    from netmodel.study.roofline_report import infer_report

    # the serial step with its stages, and (--two-batch-overlap) the overlapped one beside
    two_batch = kw.pop("two_batch_overlap")

    if as_json and as_csv:   # one document on stdout: a script gets what it asked for or a no
        raise UserError("give --json or --csv, not both (each prints the whole result)")
    if two_batch and as_csv:
        raise UserError("--csv prints the serial step's stages only; give --two-batch-overlap "
                        "with the text or --json")
    model, gpu, workload, options, slo, (comm, desc, fabric_gpus) = _setup(kw)
    if two_batch and options.mtp_tokens:
        raise UserError("MTP decode with two-batch overlap is not modelled; give one of "
                        "--mtp-tokens and --two-batch-overlap")
    tp, batch = whole_option("--tp", tp_text), whole_option("--batch", batch_text)
    # --ep's range is the divisors of --tp, read above (the model's refusal lists them)
    pp, ep, skew = (whole_option("--pp", pp_text, up_to=_PP_TOP),
                    whole_option("--ep", ep_text, up_to=f"{tp:,} that divides --tp {tp:,}"),
                    _skew(skew_text))
    _check_skew_used(skew, model, [ep])
    adp = whole_option("--attention-dp", adp_text)
    with _degrees_as_flags(tp=tp_text, pp=pp_text, ep=ep_text, attention_dp=adp_text,
                           prompt=kw["prompt"], context=kw["context"]):
        report = infer_report(model, gpu, tp, batch, workload, pp=pp, ep=ep, attention_dp=adp,
                              expert_skew=skew, options=options, slo=slo, comm=comm,
                              collectives=desc, fabric_gpus=fabric_gpus, two_batch=two_batch)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    elif as_csv:
        click.echo(report.csv(), nl=False)
    else:
        click.echo(report.table())


@click.command("search")
@_model_gpu_options
@max_batch_option()
@click.option("--tp", "tp_text", default=None, metavar="LIST",
              help="TP degrees to try, comma-separated (default: all dividing the heads).")
@click.option("--pp", "pp_text", default=None, metavar="LIST", cls=RegistryHelp,
              help_from=lambda: "Pipeline stages to try, comma-separated (default 1: no "
                                f"pipeline), each {_pp_rule()}.")
@click.option("--ep", "ep_text", default=None, metavar="LIST",
              help="Expert-parallel degrees to try, comma-separated (one that does not divide "
                   "the experts holds redundant copies), or 'all': the divisors of the "
                   "experts (default 1).")
@click.option("--attention-dp", "adp_text", default=None, metavar="LIST",
              help="Attention data-parallel degrees to try, comma-separated, or 'all' "
                   "(default 1).")
@_expert_skew_option
@click.option("--max-gpus", "max_gpus_text", default=None, metavar="N",
              help="Largest instance (TP x PP) tried; with EP, stages wider than the GPU's "
                   "largest instance up to N.")
@click.option("--front", "show_front", is_flag=True,
              help="Also print the latency / tokens-per-s-per-SM Pareto front (text output: "
                   "--json always carries it, as 'front').")
def search(max_batch: int, tp_text: str | None, pp_text: str | None, ep_text: str | None,
           adp_text: str | None, skew_text: str, max_gpus_text: str | None, show_front: bool,
           as_json: bool, **kw: Any) -> None:
    """Best TP degree and batch under the SLO (most tokens/s/SM)."""
    from compute.errors import UserError
    from netmodel.cli.main import exit_if_nothing_feasible
    from netmodel.study.roofline_report import search_report

    if show_front and as_json:   # the flag would do nothing: say so rather than ignore it
        raise UserError("--front adds the Pareto front to the text output; --json always "
                        "carries it (its 'front' list): give one of --front and --json")
    model, gpu, workload, options, slo, (comm, desc, fabric_gpus) = _setup(kw)
    tps = _degrees("--tp", tp_text)
    max_gpus = None if max_gpus_text is None else whole_option("--max-gpus", max_gpus_text)
    eps, skew = _degrees("--ep", ep_text, True), _skew(skew_text)
    _check_skew_used(skew, model, [1] if eps is None else [2] if eps is True else eps)  # all: EP > 1
    pps, adps = (_degrees("--pp", pp_text, up_to=_PP_TOP),
                 _degrees("--attention-dp", adp_text, True))
    with _degrees_as_flags(tp=tp_text, pp=pp_text, ep=ep_text, attention_dp=adp_text,
                           prompt=kw["prompt"], context=kw["context"]):
        report = search_report(model, gpu, workload, options=options, slo=slo, comm=comm,
                               collectives=desc, fabric_gpus=fabric_gpus, tp=tps, pp=pps,
                               ep=eps, attention_dp=adps, expert_skew=skew,
                               max_gpus=max_gpus, max_batch=max_batch)
    click.echo(json.dumps(report.to_dict(), indent=2) if as_json else report.table(show_front))
    exit_if_nothing_feasible([report.result])
