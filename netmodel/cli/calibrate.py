"""``netmodel calibrate``: fit an engine profile (the calibrated inference mode) to measured
step latencies; a thin click layer over :mod:`compute.profile_fit`.

Only click and the standard library are imported at module level.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from netmodel.cli.options import InputPath
from netmodel.cli.refusals import output_refused_as, value_refused_as
from netmodel.cli.resolve import COLLECTIVE_OPTIONS

if TYPE_CHECKING:
    from compute.comm import CollectiveCostModel
    from compute.measurements import Measurement

__all__ = ["calibrate"]


def _comm_for(scenario_ref, fabric_ref, gpu_file):
    """Each measurement's collective model: on a scenario, one per GPU type (the scenario
    swapped to the measurement's GPU); on a fabric, the fabric's; None (the calibrated
    mode's ring, :func:`compute.roofline.ring_comm`) otherwise."""
    from compute.errors import UserError
    from netmodel.cli.resolve import resolve_collectives

    if scenario_ref is None and fabric_ref is None:
        return None
    cache: dict = {}

    def comm_for(m: Measurement) -> CollectiveCostModel | None:
        if m.gpu not in cache:
            cache[m.gpu] = resolve_collectives(scenario_ref, fabric_ref, m.gpu, gpu_file,
                                                profiled=True)
        _, comm, desc, gpus = cache[m.gpu]
        n = m.tp * m.pp        # the instance: tp x pp GPUs
        if n > gpus:   # named by its flag and value, as typed: 'the fabric' was which?
            flag, ref = ("--scenario", scenario_ref) if scenario_ref is not None else \
                ("--fabric", fabric_ref)
            raise UserError(f"{m.named()}: an instance of {n} GPUs does not fit {flag} "
                            f"{ref!r} ({gpus} GPUs); give a {desc['model']} of {n} GPUs "
                            f"or more")
        return comm

    return comm_for


def _refuse_an_input_out(out_path: str, inputs) -> None:
    """Refuse ``--out`` naming the file one of ``inputs`` (flag, text typed; a scenario's
    ``NAME@GPU``, either) reads, before any work, both flags named: the profile written would
    replace it. ``calibrate --base p.toml -o p.toml`` fitted, then said 'profile file
    'p.toml' is a file this command reads', naming neither flag."""
    import os

    for flag, typed in inputs:
        if not isinstance(typed, str):
            continue
        base, _, gpu = typed.rpartition("@")   # a scenario's NAME@GPU: either a file
        for path in dict.fromkeys((typed, typed.strip(), base.strip(), gpu.strip())):
            try:
                same = bool(path) and os.path.samefile(path, out_path)
            except (OSError, ValueError):
                continue
            if same:
                from compute.errors import UserError

                raise UserError(f"--out {out_path!r} is the file {flag} {typed!r} reads; the "
                                f"profile written would replace it: give another path")


def _fit_names(text):
    from compute.profiles import PARAMETERS
    from compute.validate import comma_list

    if text is None:
        return None
    return comma_list("--fit", text, f"e.g. gemm_efficiency,layer_overhead_s (known: "
                      f"{', '.join(PARAMETERS)})")


def _refuse_shipped_name(name: str | None, stem: str) -> None:
    """Refuse a profile to be written under a shipped profile's name (case aside): every
    command refuses such a file whose values are not the shipped one's
    (:func:`compute.profiles.check_not_shipped`), and a fit's are not. ``name`` is
    ``--name``'s (None: the name is ``--out``'s file stem ``stem``)."""
    from compute import validate
    from compute.errors import UserError, looks_like, odd_character
    from compute.profiles import profile_names, shipped_name

    # a name the profile's reader refuses said with its flag, before the fit
    validate.name("--name" if name is not None else
                  f"--out's file stem {stem!r} (with no --name)", "profile",
                  stem if name is None else name)
    said = (f"--name {name!r}" if name is not None else
            f"the profile's name {stem!r} (--out's file stem, with no --name)")
    like = looks_like(stem if name is None else name, profile_names())
    if like is not None:   # 'vllm-dgx-h1О0', a Cyrillic O: read as the shipped one
        raise UserError(f"{said} prints as the shipped profile {like!r} but is another name "
                        f"(it has {odd_character(stem if name is None else name, like)}); "
                        f"give yours a name of its own with --name")
    shipped = shipped_name(stem if name is None else name)
    if shipped is None:
        return
    raise UserError(f"{said} already names the shipped profile {shipped!r}; give yours another "
                    f"name with --name (its figures would be reported as the shipped "
                    f"profile's)")


@click.command("calibrate")
@click.option("--measurements", "measurements_path", required=True, metavar="FILE.csv",
              type=InputPath(dir_okay=False),
              help="Measured step latencies: columns model, gpu, tp, batch, phase, latency_s "
              "(seconds), prompt (prefill rows), context (decode rows); optional pp, ep, "
              "attention_dp, expert_skew (the step's configuration as infer's --pp, --ep, "
              "--attention-dp, --expert-skew take it; default 1 each), source, note; lines "
              "starting with # are comments.")
@click.option("-o", "--out", "out_path", required=True, metavar="FILE.toml",
              help="The profile to write (use it with --profile).")
@click.option("--fit", "fit_text", default=None, metavar="LIST",
              help="Parameters to fit, comma-separated (default gemm_efficiency, "
              "attention_efficiency, layer_overhead_s, decode_sequence_overhead_s, those the "
              "measurements move); the others keep --base's values.")
@click.option("--base", "base_ref", default=None, metavar="NAME|FILE",
              help="Profile whose values the parameters not fitted keep (default: the "
              "roofline's: efficiencies 1, no overhead).")
@click.option("--name", default=None, metavar="NAME",
              help="The profile's name (default: the output file's stem).")
@click.option("--engine", default=None, metavar="NAME",
              help="The serving engine measured (e.g. 'vLLM 0.6.3').")
@click.option("--system", default=None, metavar="DESCRIPTION",
              help="The system measured on (e.g. 'DGX H100, 8 GPUs').")
@click.option("--gpu-file", type=InputPath(dir_okay=False), metavar="FILE",
              help="TOML/JSON file of [gpu.NAME] tables for GPUs the measurements name.")
@click.option("--json", "as_json", is_flag=True, help="Print the fit as JSON.")
@COLLECTIVE_OPTIONS[0]
@COLLECTIVE_OPTIONS[1]
def calibrate(measurements_path: str, out_path: str, fit_text: str | None, base_ref: str | None,
              name: str | None, engine: str | None, system: str | None, gpu_file: str | None,
              as_json: bool,
              scenario_ref: str | None, fabric_ref: str | None) -> None:
    """Fit an engine profile to measured latencies (the calibrated inference mode).

    Prints every point's error and the overall fit; refuses to fit more parameters than
    measurements; warns (stderr) of measurements under their roofline, which no profile
    reaches. Collectives are costed as in infer with --profile: --scenario, --fabric,
    or the ring (the shipped profiles were fitted with it).
    """
    from pathlib import Path

    from compute import validate
    from compute.errors import UserError
    from compute.hardware import load_gpu_file
    from compute.measurements import read_measurements
    from compute.output_paths import check_file_path
    from compute.outputs import atomic_write
    from compute.profile_fit import fit_profile, gpu_of
    from compute.profiles import PARAMETERS
    from netmodel.cli.resolve import (
        describe_collectives,
        resolve_collectives,
        resolve_gpu,
        resolve_profile,
    )

    for option, text, example in (("--engine", engine, "vLLM 0.6.3"),
                                  ("--system", system, "DGX H100, 8 GPUs")):
        if text is not None and not text.strip():   # as --name: an empty name is refused
            raise UserError(f"{option} {text!r} is empty; give a name such as {example!r} or "
                            f"leave {option} out")
        if text is not None:   # one line of text, as the profile's reader takes it
            validate.string("", option, text, max_length=2000)
    engine, system = engine or "", system or ""
    with value_refused_as("--out", out_path, "profile file"):
        out = check_file_path(out_path, "profile file", suffixes=(".toml",))
    _refuse_an_input_out(out_path, (("--measurements", measurements_path), ("--base", base_ref),
                                    ("--gpu-file", gpu_file), ("--scenario", scenario_ref),
                                    ("--fabric", fabric_ref)))
    _refuse_shipped_name(name, Path(out).stem)
    ms = read_measurements(measurements_path)
    fit = _fit_names(fit_text)
    base = resolve_profile(base_ref, "--base")
    comm_for = _comm_for(scenario_ref, fabric_ref, gpu_file)
    gpus = sorted({m.gpu for m in ms})
    if gpu_file:   # the file's own errors first, not as a row's
        load_gpu_file(gpu_file)
    firsts = {m.gpu: m for m in reversed(ms)}   # an unknown GPU named with its first row
    specs = {g: gpu_of(firsts[g], lambda name: resolve_gpu(name, gpu_file)) for g in gpus}
    # each GPU's rows are costed on its own swap of the scenario: name every one
    said = list(dict.fromkeys(
        describe_collectives(resolve_collectives(scenario_ref, fabric_ref, g, gpu_file,
                                                 profiled=True)[2])
        .split(" (")[0] for g in gpus))
    # a profile's texts hold 2,000 characters (read_profile): past that, the first and how
    # many more; the GPUs none (their measurements name them: EngineProfile.fitted_gpus).
    # Ten GPUs of a GPU file named in 195 characters each were refused as 'gpu must be
    # text of at most 2,000 characters', a text no option gives.
    collectives = ", ".join(said)
    if len(collectives) > 2000:
        collectives = f"{said[0]} ({len(said):,} collective models, {len(said) - 1:,} more)"
    gpu_text = ", ".join(gpus) if len(", ".join(gpus)) <= 2000 else ""
    # a GPU file's GPUs by name (the catalog's stay names)
    specs = specs if gpu_file else None
    # a fit the rows cannot carry is the measurements file's (or --fit's) to mend: said so
    with value_refused_as("--measurements", measurements_path, "cannot fit",
                          "the measurements cannot"), \
            value_refused_as("--fit", fit_text or "", "unknown profile parameter",
                             "give each parameter to fit once"):
        result = fit_profile(ms, fit=fit, base=base, comm_for=comm_for, gpus=specs,
                             name=Path(out).stem if name is None else name, engine=engine,
                             system=system, gpu=gpu_text, collectives=collectives)
    with output_refused_as("--out", out_path, "profile file"):
        atomic_write(out, result.profile.to_toml().encode(), "profile file")
    if as_json:
        click.echo(json.dumps({
            "profile": result.profile.name, "out": str(out), "collectives": collectives,
            "fitted": list(result.fitted), "notes": list(result.notes),
            "parameters": result.profile.values(),
            "rms_relative_error": result.rms_relative_error,
            "max_relative_error": result.max_relative_error,
            "below_roofline": [{"point": k - 1, "origin": p.measurement.origin,
                                "ratio": p.measurement.latency_s / p.roofline_s}
                               for k, p in result.below_roofline],
            "points": [{**p.measurement.to_dict(), "roofline_s": p.roofline_s,
                        "predicted_s": p.predicted_s, "error": p.error}
                       for p in result.points]}, indent=2))
        _warn_below(result)
        return
    click.echo(f"fitted {', '.join(result.fitted)} to {len(ms)} measurements; collectives: "
               f"{collectives}")
    for note in result.notes:
        click.echo(f"note: {note}")
    def label(m):            # several GPUs: say which each step ran on
        return f"{m.label()} on {m.gpu}" if len(gpus) > 1 else m.label()

    width = max(len(label(p.measurement)) for p in result.points)
    click.echo(f"\n{'measurement':<{width}}{'measured':>11}{'roofline':>11}{'calibrated':>12}"
               f"{'error':>8}")
    for p in result.points:
        # a blank before each column, however wide its value (a 17.99 s roofline,
        # '1.799e+04ms', and an error of +5895.4% ran into the column before)
        click.echo(f"{label(p.measurement):<{width}} {p.measurement.latency_s * 1e3:>8.4g}ms"
                   f" {p.roofline_s * 1e3:>8.4g}ms {p.predicted_s * 1e3:>9.4g}ms"
                   f" {p.error:>+7.1%}")
    click.echo(f"fit error: rms {result.rms_relative_error:.1%}, worst "
               f"{result.max_relative_error:.1%}\n")
    for n, p in PARAMETERS.items():
        v = getattr(result.profile, n)
        # times in ms; a per-unit rate too small for ms (token_overhead_s) in seconds
        shown = (f"{v * 1e3:.4g} ms" if p.scale >= 1e-6 else f"{v:.4g} s") \
            if p.unit == "s" else f"{v:.4g}"
        tag = "fitted" if n in result.fitted else "kept"
        click.echo(f"  {n:<28}{shown:>12}  {tag}: {p.what}")
    click.echo(f"wrote {out}")
    _warn_below(result)


def _warn_below(result) -> None:
    """The fit's warning on measurements under their roofline, on stderr (the profile is
    written: a step run in FP8 against a bf16 model may be what the user meant)."""
    warning = result.below_roofline_warning()
    if warning:
        click.echo(warning, err=True)
