"""``netmodel hardware | models | infer | search``: a thin click layer over :mod:`compute`.

Only click and the standard library are imported at module level; numpy and the compute
modules are imported inside the command functions so ``netmodel --help`` stays fast.
Numbers are taken as text and checked by compute's parsers, so a bad value (``--batch nan``)
is one ``error:`` line with exit status 2, like every other user mistake.
"""

from __future__ import annotations

import json
from typing import Any

import click

from netmodel.cli.options import (
    InputPath,
    RegistryHelp,
    choice_metavar,
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
    describe_collectives,
    mode_lines,
    mtp_settings,
    resolve_collectives,
    resolve_gpu,
    resolve_model,
    resolve_profile,
    whole_option,
)
from netmodel.study.summary_words import sig3

__all__ = ["hardware", "infer", "models", "search"]


# ---- infer's and search's options (those other commands share: netmodel.cli.resolve) ----

def _pp_rule() -> str:
    """The pipeline degrees allowed, as compute checks them (for --help)."""
    from compute.parallel_rules import PP_RULE

    return PP_RULE


def _fraction(what: str, text, *, upper_open: bool = False) -> float:
    from compute.errors import UserError
    from compute.validate import ZeroAllowed, read_number

    rule = "a fraction in " + ("[0, 1)" if upper_open else "(0, 1]")
    v = read_number(what, str(text),   # the one number grammar ('0_5e-1' refused)
                    allowed=ZeroAllowed(rule) if upper_open else rule)
    if v is None:
        v = float("nan")
    ok = (0 <= v < 1) if upper_open else (0 < v <= 1)
    if not ok:
        raise UserError(f"{what} must be {rule}, got {text!r}")
    return v


class _DtypeOption(click.Option):
    """``--compute-dtype``: its help names compute's dtypes
    (:data:`compute.hardware.DTYPES`), read only when the help is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from compute.hardware import DTYPES

        self.help = f"Tensor cores to run at: {', '.join(DTYPES)} (default: the model's)."
        self.metavar = choice_metavar(DTYPES)
        return super().get_help_record(ctx)


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
        click.option("--compute-dtype", cls=_DtypeOption, default=None),
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
                                                        kw["gpu_name"], kw["gpu_file"])
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
    from compute.hardware import catalog, load_gpu_file

    if name is not None:
        gpu = resolve_gpu(name, gpu_file)
        if as_json:
            click.echo(json.dumps(gpu.to_dict(), indent=2))
            return
        rows = [("SMs", gpu.sms), ("bf16 dense", f"{gpu.flops_bf16 / 1e12:g} TFLOP/s"),
                ("fp8 dense", f"{gpu.flops_fp8 / 1e12:g} TFLOP/s" if gpu.flops_fp8 else "none"),
                ("int8 dense", f"{gpu.flops_int8 / 1e12:g} TOP/s" if gpu.flops_int8 else "none"),
                ("fp4 dense", f"{gpu.flops_fp4 / 1e12:g} TFLOP/s" if gpu.flops_fp4 else "none"),
                ("HBM", f"{gpu.hbm_capacity / 1e9:.4g} GB ({gpu.hbm_capacity / 2**30:.1f} GiB) at "
                        f"{gpu.hbm_bandwidth / 1e12:g} TB/s"),
                # its links by count, not brand: a GPU file's nvlinks = 7 may be an
                # MI300X's Infinity Fabric links
                ("scale-up", f"{gpu.scaleup_bandwidth / 1e9:g} GB/s per direction"
                             + (f" over {gpu.nvlinks} links" if gpu.nvlinks else "")),
                ("scale-out", f"{gpu.scaleout_bandwidth * 8 / 1e9:g} Gb/s per direction"),
                ("TDP", f"{gpu.tdp:g} W"), ("largest instance", f"{gpu.max_instance} GPUs"),
                ("source", gpu.source)]
        click.echo(gpu.name)
        for k, v in rows:
            click.echo(f"  {k:<17} {v}".rstrip())
        return
    gpus = {**catalog(), **(load_gpu_file(gpu_file) if gpu_file else {})}
    if as_json:
        click.echo(json.dumps({"gpus": [g.to_dict() for g in gpus.values()]}, indent=2))
        return
    click.echo(f"{'name':<15}{'SMs':>5}{'bf16 TF/s':>11}{'fp8 TF/s':>10}{'HBM GB':>8}"
               f"{'HBM TB/s':>10}{'up GB/s':>9}{'out Gb/s':>10}{'TDP W':>7}{'max TP':>8}")
    for g in gpus.values():
        click.echo(f"{g.name:<15}{g.sms:>5}{g.flops_bf16 / 1e12:>11.1f}{g.flops_fp8 / 1e12:>10.1f}"
                   f"{g.hbm_capacity / 1e9:>8.1f}{g.hbm_bandwidth / 1e12:>10.3f}"
                   f"{g.scaleup_bandwidth / 1e9:>9.1f}{g.scaleout_bandwidth * 8 / 1e9:>10.0f}"
                   f"{g.tdp:>7.0f}{g.max_instance:>8}")


@click.command("models")
@click.argument("name", required=False)
@click.option("--model-file", type=InputPath(dir_okay=False), metavar="FILE",
              help="Also list models from a TOML/JSON file.")
@click.option("--hf-config", type=InputPath(), metavar="PATH",
              help="Show the model read from a HuggingFace config.json.")
@_json_option
def models(name: str | None, model_file: str | None, hf_config: str | None, as_json: bool) -> None:
    """List LLM models, or show one (with parameter counts)."""
    from compute.models import load_model_file, model_catalog

    if name is not None or hf_config:
        m = resolve_model(name, model_file, hf_config)
        if as_json:
            click.echo(json.dumps(m.to_dict(), indent=2))
            return
        click.echo(f"{m.name}: {m.parameters / 1e9:.2f}B parameters"
                   + (f" ({m.active_parameters / 1e9:.2f}B active, mixture of {m.experts} "
                      f"experts, {m.experts_per_token} per token)" if m.is_moe else "")
                   + f"; {_attention_kind(m)} attention, KV cache "
                   f"{m.layers * m.kv_elements_per_token * m.kv_bytes / 1e3:.4g} kB per token"
                   + (f" ({_WINDOW_WORDS[m.window_kind]} of {m.sliding_window:,} tokens on "
                      f"{m.windowed_layers} of {m.layers} layers)" if m.windowed_layers else "")
                   + f"; weights {_weights(m)}")
        if m.vision_parameters:
            click.echo(f"vision tower: {m.vision_parameters / 1e9:.3g}B parameters, "
                       f"{m.vision_bytes / 1e9:.3g} GB "
                       f"{m.embedding_dtype or m.weight_dtype}, counted in the weights' memory "
                       f"above, not in the parameters or per-token FLOPs (the encoder's "
                       f"compute of image tokens is not modelled)")
        for k, v in m.to_dict().items():
            if k not in ("name", "parameters", "active_parameters"):
                click.echo(f"  {k:<18} {v}".rstrip())   # "" (unset): no padding after
        return
    table = {**model_catalog(), **(load_model_file(model_file) if model_file else {})}
    if as_json:
        click.echo(json.dumps({"models": [m.to_dict() for m in table.values()]}, indent=2))
        return
    width = max(16, *(len(m.name) + 1 for m in table.values()))
    click.echo(f"{'name':<{width}}{'params':>9}{'active':>9}{'layers':>7}{'hidden':>7}"
               f"{'heads':>6}{'kv':>4}{'attn':>5}{'ffn':>7}{'experts':>9}{'vocab':>8}  "
               f"{'mlp':<6}weights")
    for m in table.values():
        experts = f"{m.experts_per_token}/{m.experts}" if m.is_moe else "-"
        click.echo(f"{m.name:<{width}}{m.parameters / 1e9:>8.2f}B"
                   f"{m.active_parameters / 1e9:>8.2f}B{m.layers:>7}{m.hidden:>7}"
                   f"{m.heads:>6}{m.kv_heads:>4}{_attention_kind(m):>5}{m.ffn:>7}{experts:>9}"
                   f"{m.vocab:>8}  {'gated' if m.gated_mlp else 'plain':<6}{_weights(m)}")


def _weights(m) -> str:
    """``141 GB bf16``, or with the MLPs stored apart ``487 GB bf16, MLP fp8 (124 layers)``."""
    from compute.units import counted

    kind = m.weight_dtype
    if m.mlp_weight_dtype:
        n = m.mlp_dtype_layers
        kind += f", MLP {m.mlp_weight_dtype}" + (f" ({counted(n, 'layer')})"
                                                  if n else "")
    gb = m.weight_storage_bytes / 1e9
    return f"{gb:.0f} GB {kind}" if gb >= 9.5 else f"{gb:.3g} GB {kind}"  # small: not '0 GB'



#: How the one-line model summary names each kind of windowed layer
#: (compute.model_spec.WINDOW_KINDS).
_WINDOW_WORDS = {"sliding": "sliding window", "chunked": "chunked attention, chunks"}


def _attention_kind(m) -> str:
    """MLA (latent), MHA (a KV head per query head), MQA (one KV head) or GQA."""
    if m.is_mla:
        return "MLA"
    return "MHA" if m.kv_heads == m.heads else "MQA" if m.kv_heads == 1 else "GQA"


# ---- infer and search ----------------------------------------------------------------------

def _label(r) -> str:
    """``TP 8 x PP 2 x EP 8 x DP-attention 2`` of a result or front point; an EP holding
    redundant expert copies says how many (``EP 144 (32 redundant experts)``)."""
    from compute.parallel import Parallelism

    return Parallelism.of(r).describe(getattr(r, "redundant_experts", 0))


def _degrees(what: str, text, allow_all: bool = False):
    """A comma-separated list of whole numbers (or ``all`` where allowed), None if absent."""
    if text is None:
        return None
    if allow_all and str(text).strip().lower() == "all":
        return True
    from compute.validate import comma_list, refuse_repeats

    items = comma_list(what, text, "e.g. 1,2,4")
    values = [whole_option(what, t) for t in items]   # 8 and 08 are one degree
    refuse_repeats(what, items, dict(zip(items, values, strict=True)).__getitem__, text=str(text))
    return values


def _skew_note(model, ep: int, skew: float) -> list[str]:
    """A note when ``--expert-skew`` asks more than ``ep`` groups allow (it is costed at
    the ceiling, compute.stages.skew_ceiling)."""
    if getattr(model, "experts", 0) <= 1 or ep <= 1:
        return []
    from compute.stages import skew_ceiling

    top = skew_ceiling(model, ep)
    if skew <= top:
        return []
    return [f"note: --expert-skew {skew:g} exceeds what EP {ep} allows for {model.name} (the "
            f"busiest of {ep} groups receives at most every routed copy it holds an expert "
            f"for: {top:g}x the mean); costed at {top:g}"]


def _check_skew_used(skew: float, model, eps) -> None:
    """Refuse an ``--expert-skew`` above 1 that is never used: on a dense model (no routed
    experts), or when every EP degree ``eps`` is 1 (one EP group receives every routed
    token, so the skew is costed at 1: compute.stages.skew_ceiling)."""
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


def _stage_table(result) -> list[str]:
    from compute.units import format_time as _ft

    def format_time(t: float) -> str:
        return _ft(t) if t > 0 else "-"

    lines = [f"{'stage':<15}{'x':>4}{'GFLOP':>10}{'HBM MB':>10}{'coll MB':>9}{'compute':>11}"
             f"{'memory':>11}{'network':>11}{'step share':>11}  bound"]
    for s in result.stages:
        share = s.total_time / result.latency if result.latency else 0.0
        lines.append(f"{s.name:<15}{s.count:>4}{s.flops / 1e9:>10.4g}{s.hbm_bytes / 1e6:>10.4g}"
                     f"{s.collective_bytes / 1e6:>9.4g}{format_time(s.compute_time):>11}"
                     f"{format_time(s.memory_time):>11}{format_time(s.network_time):>11}"
                     f"{share:>10.1%}  {s.bound}")
    if result.profile:
        share = result.overhead / result.latency if result.latency else 0.0
        lines.append(f"{'overhead':<15}{1:>4}{'':>10}{'':>10}{'':>9}{'':>11}{'':>11}{'':>11}"
                     f"{share:>10.1%}  fixed (profile {result.profile})")
    return lines


#: The time split's keys in words, where the key is not one (``time_split_s`` keeps the keys).
_SPLIT_WORDS = {"two_batch_hidden": "hidden by two-batch overlap",
                "mtp_draft": "MTP draft passes"}


def _summary(r) -> list[str]:
    from compute.units import format_time

    m = r.memory
    split = r.time_split()
    verdict = "met" if r.meets_slo else "MISSED"
    where = f"{r.tp} x {r.gpu}" if (r.pp, r.ep, r.attention_dp) == (1, 1, 1) else \
        f"{r.gpus} x {r.gpu} ({_label(r)}" + (
            f", dense MLP TP {r.dense_mlp_tp})" if getattr(r, "dense_mlp_tp", None) else ")")
    micro = f" in micro-batches of {r.micro_batch}" if r.pp > 1 else ""
    return [
        f"{r.model} on {where}, {r.phase}, batch {r.batch}{micro}, "
        + (f"prompt {r.prompt_tokens} tokens" if r.phase == "prefill"
           else f"context {r.context_tokens} tokens") + f", {r.mode} mode"
        + (f", engine profile {r.profile}" if r.profile else ", roofline (a lower bound)"),
        (f"TPOT {format_time(r.tpot)} (step {format_time(r.latency)} / {r.mtp_expected:.4g} "
         f"tokens; SLO {format_time(r.latency_limit)}: " if getattr(r, "mtp_tokens", 0) else
         f"{r.latency_name.upper()} {format_time(r.latency)} (SLO {format_time(r.latency_limit)}: ")
        + f"{verdict}); {r.tokens_per_s:.5g} tokens/s"
        + (f" (a batch every {format_time(r.interval)}, steady state)" if r.interval else "")
        + f"; {sig3(r.tokens_per_s_per_sm)} tokens/s/SM ({r.sms} SMs)",
        f"memory per GPU: weights {m.weights / 1e9:.2f} + KV cache {m.kv_cache / 1e9:.2f} + "
        f"activations {m.activations / 1e9:.2f} = {m.total / 1e9:.2f} GB of "
        f"{m.usable / 1e9:.2f} GB usable ({'fits' if m.fits else 'does NOT fit'})",
        "time split: " + ", ".join(f"{_SPLIT_WORDS.get(k, k.replace('_', ' '))} "
                                   f"{v / r.latency:.1%}" for k, v in split.items()),
    ] + ([] if not getattr(r, "mtp_tokens", 0) else [
        f"MTP: {r.mtp_tokens} draft token(s) a step, {r.mtp_expected:.4g} expected tokens a "
        f"sequence; the MTP module's passes {format_time(r.mtp_time)} of the step (the "
        f"stages below are the verification pass's, {r.mtp_tokens + 1} tokens a sequence)"]
    ) + ([] if r.two_batch_hidden is None else [
        f"two-batch overlap: {'taken' if r.two_batch_hidden > 0 else 'not taken'} (serial "
        f"step {format_time(r.latency + r.two_batch_hidden)}; the stages are the serial "
        f"step's)"])


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
    from compute.evaluate_one import evaluate

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
    pp, ep, skew = whole_option("--pp", pp_text), whole_option("--ep", ep_text), _skew(skew_text)
    _check_skew_used(skew, model, [ep])
    _fits_fabric(tp * pp, fabric_gpus, desc)
    args = dict(pp=pp, ep=ep, attention_dp=whole_option("--attention-dp", adp_text),
                expert_skew=skew, options=options, slo=slo, comm=comm)
    tbo = None
    if two_batch:
        from compute.two_batch import evaluate_two_batch

        tbo = evaluate_two_batch(model, gpu, tp, batch, workload, **args)
        r = tbo.serial
    else:
        r = evaluate(model, gpu, tp, batch, workload, **args)
    if options.dense_mlp_tp is not None and pp == ep == args["attention_dp"] == 1:
        # plain TP's scalar paths leave dense_mlp_tp unread: refuse it as the grid does
        from compute.parallel import Parallelism, dense_data_parallel, layout

        c = [Parallelism(tp)]
        dense_data_parallel(model, c, layout(model, c), options.dense_mlp_tp)
    notes = _schedule_notes(comm)   # as search and compare say it (not in --csv's table)
    if as_json:
        # the entry search's best and serve's pools carry too, and the overlapped schedule
        extra_json = {"two_batch_overlap": tbo.to_dict(),
                      "two_batch_schedule": tbo.schedule_dict()} if tbo is not None else {}
        click.echo(json.dumps({**r.to_dict(), "collectives": desc, **extra_json,
                               **({"not_computed": notes} if notes else {})}, indent=2))
    elif as_csv:
        click.echo(r.to_csv(), nl=False)
    else:
        extra = mode_lines(options, desc, [gpu.name])
        extra += _skew_note(model, ep, skew)
        extra += _two_batch_lines(r, tbo) if tbo is not None else []
        click.echo("\n".join(_summary(r) + (["reason: " + r.reason] if r.reason else [])
                             + ["collectives: " + describe_collectives(desc)] + extra
                             + [""] + _stage_table(r)
                             + [f"note: {k}: {v}" for k, v in notes.items()]))


def _two_batch_lines(r, tbo) -> list[str]:
    """What ``--two-batch-overlap`` adds to ``infer``'s text."""
    from compute.units import format_time

    a, b = tbo.micro_batches   # sequences; a prompt cut in two counts half in each
    return [f"two-batch overlap: {r.latency_name.upper()} {format_time(tbo.latency)} "
            f"({tbo.latency / r.latency:.1%} of the serial step); {tbo.tokens_per_s:.5g} "
            f"tokens/s; micro-batches of {a} + {b}: compute {format_time(tbo.compute)}, "
            f"network {format_time(tbo.network)}, neither hidden {format_time(tbo.fill)} "
            f"(the stages below are the serial step's)"]


def _fits_fabric(gpus: int, fabric_gpus, desc) -> None:
    """Refuse an instance larger than the fabric it is placed on."""
    from compute.errors import UserError

    if fabric_gpus is not None and gpus > fabric_gpus:
        where = desc.get("scenario") or desc.get("fabric")
        raise UserError(f"an instance of {gpus} GPUs does not fit {desc['model']} {where!r} "
                        f"({fabric_gpus} GPUs)")


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
    from compute.search import search as run_search
    from netmodel.cli.main import exit_if_nothing_feasible

    if show_front and as_json:   # the flag would do nothing: say so rather than ignore it
        raise UserError("--front adds the Pareto front to the text output; --json always "
                        "carries it (its 'front' list): give one of --front and --json")
    model, gpu, workload, options, slo, (comm, desc, fabric_gpus) = _setup(kw)
    tps = _degrees("--tp", tp_text)
    max_gpus = None if max_gpus_text is None else whole_option("--max-gpus", max_gpus_text)
    if fabric_gpus is not None:  # instances within the fabric, as compare searches them
        for t in tps or ():                      # (TP left to the search: with EP, stages
            _fits_fabric(t, fabric_gpus, desc)   # wider than one server are tried too)
        max_gpus = fabric_gpus if max_gpus is None else min(max_gpus, fabric_gpus)
    eps, skew = _degrees("--ep", ep_text, True), _skew(skew_text)
    _check_skew_used(skew, model, [1] if eps is None else [2] if eps is True else eps)  # all: EP > 1
    r = run_search(model, gpu, workload, options=options, slo=slo, tp=tps, comm=comm,
                   pp=_degrees("--pp", pp_text), ep=eps,
                   attention_dp=_degrees("--attention-dp", adp_text, True),
                   expert_skew=skew, max_gpus=max_gpus,
                   max_batch=max_batch)
    notes = _schedule_notes(comm)
    if as_json:
        out = r.to_dict()
        if r.best is not None:
            out["best"] = r.best.to_dict()
        click.echo(json.dumps({**out, "collectives": desc,
                               **({"not_computed": notes} if notes else {})}, indent=2))
        exit_if_nothing_feasible([r])
        return
    _print_search(r, show_front, desc, options, gpu.name)
    for k, v in notes.items():
        click.echo(f"note: {k}: {v}")
    if getattr(model, "experts", 0) > 1 and ep_text is None and adp_text is None:
        click.echo(f"note: plain tensor parallelism only; {model.name} is a mixture of experts, "
                   f"which compare (--parallelism auto) also spreads by expert and attention "
                   f"data parallelism: add --ep all --attention-dp all to search that too")
    exit_if_nothing_feasible([r])


def _schedule_notes(comm) -> dict[str, str]:
    """compare's ``settings.not_computed`` note for a scenario whose ``instances = "all"``
    charge fell back to the lockstep past the schedule in time's budget
    (:attr:`~netmodel.study.scenario_collectives.ScenarioCollectives.past_budget`), keyed as
    compare keys it (``schedule of SCENARIO``); empty for anything else."""
    from netmodel.study.scenario_collectives import ScenarioCollectives

    return comm.schedule_notes() if isinstance(comm, ScenarioCollectives) else {}


def _print_search(r, show_front: bool, desc: dict, options, gpu_name: str = "") -> None:
    from compute.units import format_time

    lat = "TTFT" if r.phase == "prefill" else "TBT"
    mtp = bool(getattr(r.best, "mtp_tokens", 0))   # tables: the step; the SLO: TPOT
    plain = all(c == {**c, "pp": 1, "ep": 1, "attention_dp": 1} for c in r.configurations)
    space = f"TP {', '.join(map(str, r.tp_degrees))}"
    if not plain:
        space = f"{len(r.configurations)} configurations of {space}, " + ", ".join(
            f"{name} {', '.join(map(str, sorted({c[key] for c in r.configurations})))}"
            for name, key in (("PP", "pp"), ("EP", "ep"), ("DP-attention", "attention_dp")))
    click.echo(f"searched {r.evaluated} configurations ({space} x batch 1..{r.max_batch}): "
               f"{r.fitting} fit in memory, {r.feasible} also meet "
               f"{'TPOT' if mtp else lat} <= {format_time(r.latency_limit)}")
    if mtp:
        lat = "step"
    click.echo("collectives: " + describe_collectives(desc))
    for line in mode_lines(options, desc, [gpu_name]):
        click.echo(line)
    if r.best is None:
        click.echo(f"no feasible configuration: {r.reason}")
        return
    click.echo("best: " + "\n      ".join(_summary(r.best)))
    if r.best.batch == r.max_batch:   # the best sits at the largest batch searched
        from netmodel.study.rows import batch_limit_note

        click.echo(f"      {batch_limit_note(r.max_batch)}")
    click.echo("")
    if plain:
        click.echo(f"best per TP degree:\n{'tp':>4}{'batch':>7}{lat + ' ms':>10}"
                   f"{'tokens/s':>11}{'tokens/s/SM':>13}")
        for p in r.by_tp:
            click.echo(f"{p.tp:>4}{p.batch:>7}{p.latency * 1e3:>10.2f}{p.tokens_per_s:>11.5g}"
                       f"{sig3(p.tokens_per_s_per_sm):>13}")
    else:
        click.echo(f"best per configuration:\n{'tp':>4}{'pp':>4}{'ep':>5}{'dp-attn':>8}"
                   f"{'batch':>7}{lat + ' ms':>10}{'tokens/s':>11}{'tokens/s/SM':>13}")
        for p in r.by_config:
            click.echo(f"{p.tp:>4}{p.pp:>4}{p.ep:>5}{p.attention_dp:>8}{p.batch:>7}"
                       f"{p.latency * 1e3:>10.2f}{p.tokens_per_s:>11.5g}"
                       f"{sig3(p.tokens_per_s_per_sm):>13}")
    if show_front:
        click.echo(f"\nPareto front ({len(r.front)} points):\n{'tp':>4}{'batch':>7}"
                   f"{lat + ' ms':>10}{'tokens/s/SM':>13}")
        for p in r.front:
            click.echo(f"{p.tp:>4}{p.batch:>7}{p.latency * 1e3:>10.2f}"
                       f"{p.tokens_per_s_per_sm:>13.4g}")
