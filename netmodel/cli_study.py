"""``netmodel study ...``: packaged studies (a click group; ``lite-gpu`` for now).

Only click and the standard library are imported at module level.
"""

from __future__ import annotations

import click

__all__ = ["study"]


@click.group("study")
def study():
    """Run a packaged study."""


def _names(what: str, text: str) -> list[str]:
    from compute.errors import UserError

    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise UserError(f"{what} {text!r} is empty; give comma-separated names")
    return names


@study.command("lite-gpu")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              metavar="DIR", help="Folder for study.csv, study.json and tokens_per_sm.png.")
@click.option("--models", "models_text", default=None, metavar="LIST",
              help="Comma-separated models (default Llama-3-70B,GPT-3-175B,Llama-3.1-405B).")
@click.option("--gpus", "gpus_text", default=None, metavar="LIST",
              help="Comma-separated GPU types (default H100-SXM and the Lite family).")
@click.option("--phases", "phases_text", default="prefill,decode", show_default=True,
              metavar="LIST", help="prefill, decode or both.")
@click.option("--networks", "networks_text", default="ring,ideal", show_default=True,
              metavar="LIST", help="ring (alpha-beta rings over scale-up bandwidth) and/or "
              "ideal (free collectives); the first is plotted as bars.")
@click.option("--overlap-collectives", is_flag=True,
              help="Hide each all-reduce behind the GEMM producing its input.")
@click.option("--ttft", default="1s", show_default=True, help="Prefill SLO.")
@click.option("--tbt", default="50ms", show_default=True, help="Decode SLO.")
@click.option("--no-plot", is_flag=True, help="Skip tokens_per_sm.png.")
def lite_gpu(out_dir, models_text, gpus_text, phases_text, networks_text, overlap_collectives,
             ttft, tbt, no_plot):
    """H100 versus the Lite family: the best TP degree and batch of each model x GPU x phase
    under the SLO, scored by tokens/s/SM; writes CSV, JSON and a figure, prints a table."""
    from compute.errors import UserError, known
    from compute.phases import Slo
    from compute.roofline import RooflineOptions
    from compute.units import parse_time
    from netmodel.study import (
        DEFAULT_GPUS,
        DEFAULT_MODELS,
        NETWORKS,
        run_lite_gpu_study,
        write_study,
    )

    models = _names("--models", models_text) if models_text else list(DEFAULT_MODELS)
    gpus = _names("--gpus", gpus_text) if gpus_text else list(DEFAULT_GPUS)
    phases = _names("--phases", phases_text)
    networks = _names("--networks", networks_text)
    for n in networks:
        if n not in NETWORKS:
            raise UserError(f"unknown network {n!r}; known: {known(NETWORKS)}")
    slo = Slo(ttft=parse_time(ttft, "--ttft", allow_zero=False),
              tbt=parse_time(tbt, "--tbt", allow_zero=False))
    options = RooflineOptions(overlap_collectives=overlap_collectives)
    result = None
    for n in dict.fromkeys(networks):
        part = run_lite_gpu_study(models, gpus, phases, comm_factory=NETWORKS[n], network=n,
                                  options=options, slo=slo)
        result = part if result is None else result + part
    written = write_study(result, out_dir, plot=not no_plot)
    click.echo(result.table())
    click.echo("wrote " + ", ".join(str(p) for p in written))
