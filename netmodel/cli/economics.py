"""``netmodel yield`` and ``netmodel cost``: thin click commands over
:mod:`compute.yield_model` and :mod:`netmodel.study.cost`.

Only click and the standard library are imported at module level. Numbers are taken as
text and converted to SI once here (mm^2, /cm^2, mm on the command line); a bad value is
one ``error:`` line with exit status 2.
"""

from __future__ import annotations

import contextlib
import json
import math

import click

from netmodel.cli.options import (
    RegistryHelp,
    json_option,
    max_batch_option,
    model_option,
    parallelism_option,
    phase_option,
    registry_metavar,
    scenario_help,
    slo_of,
    slo_option,
)
from netmodel.cli.refusals import value_refused_as

__all__ = ["cost", "yield_cmd"]

_AREA_UNITS = {"": 1e-6, "mm2": 1e-6, "mm^2": 1e-6, "cm2": 1e-4, "cm^2": 1e-4}
_DENSITY_UNITS = {"": 1e4, "/cm2": 1e4, "/cm^2": 1e4, "/mm2": 1e6, "/mm^2": 1e6}
_LENGTH_UNITS = {"": 1e-3, "mm": 1e-3, "cm": 1e-2, "m": 1.0}
_PLAIN = {"": 1.0}


def _qty(text, units, what, *, allow_zero=False, rule=None):
    from compute.units import parse_quantity

    return parse_quantity(text, units, what, allow_zero=allow_zero, rule=rule)


def _clock(text) -> float:
    """``--clock``: a ratio to the nominal clock, checked by the clock-power law
    (:meth:`compute.power.ClockPowerLaw.check`) before any search (the law is asked again
    after it, by which time the flag was lost), its refusal said with the flag and the text
    as typed."""
    from compute.power import ClockPowerLaw
    from compute.validate import read_number

    law = ClockPowerLaw()
    # a ratio below the smallest float is told the law's range (0 is outside it); any
    # other text is the quantity reader's to refuse
    read_number("--clock", text, allowed=law.allowed())
    with value_refused_as("--clock", text, "clock "):   # 0 and -1 told the law's range too
        return law.check(_qty(text, _PLAIN, "--clock", rule=f"a clock ratio {law.allowed()}"))


def _sms(text):
    from compute.errors import UserError
    from compute.validate import number_text, read_number

    parts = number_text("--sms", str(text)).split("/")   # a refusal names all of it
    try:
        n, k = (read_number("--sms", p, whole=True) for p in parts)   # the one grammar
        if n is None or k is None:
            raise ValueError
    except ValueError as exc:
        if isinstance(exc, UserError):
            raise
        raise UserError(f"--sms {text!r} must be PHYSICAL/ENABLED, e.g. 144/132") from None
    if not 1 <= k <= n:
        raise UserError(f"--sms {text!r}: need 1 <= enabled <= physical (PHYSICAL/ENABLED, e.g. "
                        f"144/132 for an H100), got {k:,} enabled of {n:,} physical")
    return n, k


def _economics_help(text: str):
    """A help writer: ``text`` with its ``{name}`` fields filled by the rows of
    compute/data/economics.toml as the file writes them (:func:`compute.rows.economics`'
    ``raw``: 300 for the wafer diameter in mm), read when help is shown."""
    def write() -> str:
        from compute.rows import economics

        return text.format_map({name: row.raw for name, row in economics().items()})

    return write


@click.command("yield")
@click.option("--area", "area_text", default=None, metavar="MM2", cls=RegistryHelp,
              help_from=_economics_help("Die area in mm^2 ({reference_die_area:g} for an "
                                        "H100; suffix cm2 also taken)."))
@click.option("--gpu", "gpu_name", default=None, metavar="NAME|FILE",
              help="A GPU's logic die instead of --area and --sms: its area, SMs and "
                   "process's wafer price (catalog name or GPU file).")
@click.option("--defect-density", "density_text", default=None, metavar="D", cls=RegistryHelp,
              help_from=_economics_help("Defects per cm^2 (default {defect_density:g}: "
                                        "TSMC N5)."))
@click.option("--model", "model", default=None, cls=RegistryHelp,
              metavar_from=registry_metavar("compute.dies", "YIELD_MODELS"),
              help_from=_economics_help("Yield model (default {yield_model}, Patterson & "
                                        "Hennessy)."))
@click.option("--alpha", "alpha_text", default=None, metavar="A", cls=RegistryHelp,
              help_from=_economics_help("Clustering of the negative binomial (default "
                                        "{clustering_alpha:g})."))
@click.option("--wafer-diameter", "diameter_text", default=None, cls=RegistryHelp,
              metavar_from=_economics_help("{wafer_diameter:g}mm"),
              help_from=_economics_help("Wafer diameter (default {wafer_diameter:g}mm)."))
@click.option("--wafer-price", "price_text", default=None, metavar="USD", cls=RegistryHelp,
              help_from=_economics_help("Price of one processed wafer (default "
                                        "{wafer_price:g}: TSMC N4/N5, an estimate)."))
@click.option("--sms", "sms_text", default=None, metavar="N/K", cls=RegistryHelp,
              help_from=_economics_help("Harvest: N physical SMs, good when K work "
                                        "({reference_sms_physical:g}/"
                                        "{reference_sms_enabled:g} for an H100)."))
@click.option("--critical-fraction", "critical_text", default=None, metavar="F",
              cls=RegistryHelp,
              help_from=_economics_help("With --sms: share of the die no spare covers "
                                        "(default {critical_fraction:g})."))
@click.option("--json", "as_json", is_flag=True, help="Print JSON (units in the keys).")
def yield_cmd(area_text: str | None, gpu_name: str | None, density_text: str | None,
              model: str | None, alpha_text: str | None, diameter_text: str | None,
              price_text: str | None, sms_text: str | None, critical_text: str | None,
              as_json: bool) -> None:
    """Dies per wafer (Hennessy & Patterson), yield and cost per good die of one die."""
    from compute.die_yield import die_cost
    from compute.dies import check_yield_model
    from compute.errors import UserError
    from compute.hardware import get_gpu
    from compute.yield_model import gpu_die_cost, gpu_dies

    if (area_text is None) == (gpu_name is None):
        raise UserError("give --area (a die's area) or --gpu (a GPU's die), one of them")
    if gpu_name is not None and sms_text is not None:
        raise UserError("--sms applies only with --area (a GPU's die has its own SMs)")
    from compute.die_yield import MAX_DEFECT_DENSITY, MAX_WAFER_DIAMETER, MAX_WAFER_PRICE
    from compute.rows import number_words

    # each value refused below its range as above it: the range said (the library's
    # bounds), where 0 and -1 were told only '>= 0' or '> 0'
    kw = {}
    if density_text is not None:
        kw["defect_density"] = _qty(
            density_text, _DENSITY_UNITS, "--defect-density", allow_zero=True,
            rule=f"a finite number from 0 to {MAX_DEFECT_DENSITY / 1e4:g} per cm^2")
    if model is not None:
        kw["model"] = check_yield_model(model)
    if alpha_text is not None:
        if kw.get("model", "negative-binomial") != "negative-binomial":
            raise UserError(f"--alpha applies only with --model negative-binomial, not "
                            f"{kw['model']}")
        from compute.die_yield import MAX_ALPHA, MIN_ALPHA
        from compute.validate import read_number

        # below the smallest float: told alpha's range (0 is outside it), as the library
        # refuses a value past it
        allowed = number_words(MIN_ALPHA, MAX_ALPHA)   # 0 and -1 told the range too
        read_number("--alpha", alpha_text, allowed=allowed)
        kw["alpha"] = _qty(alpha_text, _PLAIN, "--alpha", rule=allowed)
    if diameter_text is not None:
        kw["wafer_diameter"] = _qty(
            diameter_text, _LENGTH_UNITS, "--wafer-diameter",
            rule=f"a finite number > 0 and at most {MAX_WAFER_DIAMETER * 1e3:g} mm")
    if price_text is not None:
        kw["wafer_price"] = _qty(price_text, _PLAIN, "--wafer-price", allow_zero=True,
                                 rule=number_words(0, MAX_WAFER_PRICE))
    if critical_text is not None:
        if sms_text is None and gpu_name is None:
            raise UserError("--critical-fraction applies only with --sms or --gpu")
        kw["critical_fraction"] = _qty(critical_text, _PLAIN, "--critical-fraction",
                                       allow_zero=True, rule=number_words(0, 1))
    # the library's range of alpha (a plain word: no flag is read from it) said with --alpha
    alpha_refused = value_refused_as("--alpha", alpha_text, "alpha ") \
        if alpha_text is not None else contextlib.nullcontext()
    if gpu_name is not None:
        spec = get_gpu(gpu_name)
        # its die not fitting the wafer typed: said with --wafer-diameter (the die is the
        # GPU's, where its area was read: compute.yield_model.gpu_die_cost)
        wafer_refused = value_refused_as("--wafer-diameter", diameter_text,
                                         f"{gpu_dies(spec).basis}: die area ") \
            if diameter_text is not None else contextlib.nullcontext()
        # a GPU (a file's) without a die table: said with the --gpu typed
        with alpha_refused, wafer_refused, value_refused_as("--gpu", gpu_name, "no die data"):
            c = gpu_die_cost(spec, **kw)
    else:
        if sms_text is not None:
            kw["sms_physical"], kw["sms_enabled"] = _sms(sms_text)
        # the library names its SM counts (sms_physical, sms_enabled): --sms gave both
        sms_refused = value_refused_as("--sms", sms_text, "sms_physical", "sms_enabled") \
            if sms_text is not None else contextlib.nullcontext()
        # a die that does not fit the wafer typed: said with both (the wafer too small)
        area_flag = "--area" if diameter_text is None else \
            f"--wafer-diameter {diameter_text!r} and --area"
        with value_refused_as(area_flag, area_text, "die area"), alpha_refused, sms_refused:
            c = die_cost(_qty(area_text, _AREA_UNITS, "--area"), **kw)
    if as_json:
        click.echo(json.dumps(c.to_dict(), indent=2))
        return
    alpha = f" (alpha {c.alpha:g})" if c.model == "negative-binomial" else ""
    rows = [("gpu", f"{c.gpu}: {c.dies_per_package} logic "
                    f"{'die' if c.dies_per_package == 1 else 'dies'} per package, {c.process}")
            ] if c.gpu is not None else []
    rows += [
        ("die area", f"{c.area * 1e6:g} mm^2"),
        ("wafer", f"{c.wafer_diameter * 1e3:g} mm, ${c.wafer_price:,.0f}"),
        ("gross dies", f"{c.gross_dies:.2f} per wafer ({c.dies_per_wafer} whole)"),
        ("yield model", f"{c.model}{alpha}, {c.defect_density / 1e4:g} defects/cm^2"),
        ("defect-free yield", f"{c.defect_free_yield:.1%}"),
    ]
    if c.sms_enabled:
        rows.append(("harvested yield", f"{c.yield_:.1%} ({c.sms_enabled} of {c.sms_physical} "
                                        f"SMs; {c.critical_fraction:g} of the area critical)"))
    rows += [("good dies", f"{c.good_dies:.1f} per wafer"),
             ("cost per good die", _usd(c.cost_per_good_die))]
    if c.sms_enabled:
        rows.append(("cost per good SM", _usd(c.cost_per_good_sm)))
    if c.gpu is not None and c.dies_per_package > 1:
        per_package = c.good_dies_per_package_cost
        # what a package's known-good dies cost (dollars, not a count of dies)
        rows.append(("die cost/package", _usd(per_package) + (
            f" ({c.dies_per_package} known-good dies)" if math.isfinite(per_package) else "")))
    for k, v in rows:
        click.echo(f"{k:<19} {v}")


def _usd(x: float) -> str:
    """A cost per good die (or SM) as the table writes it; where no die is good (the yield
    0 to a float's precision) there is no cost to write: 'none (no good die)', not '$inf'."""
    return f"${x:,.2f}" if math.isfinite(x) else "none (no good die)"


@click.command("cost")
@click.option("--scenario", "scenario", required=True, metavar="S", cls=RegistryHelp,
              help_from=lambda: f"The scenario: {scenario_help()}.")
@model_option
@phase_option(default="both", takes="both")
@click.option("--clock", "clock_text", default="1", show_default=True, metavar="R",
              help="SM clock / nominal (FLOP/s scale with it, power by the clock-power law).")
@click.option("--share", "share", default="ports-used", show_default=True,
              cls=RegistryHelp,
              metavar_from=registry_metavar("netmodel.study.choice_names", "SHARES"),
              help="Charge the network as a slice of a full-size fabric, or whole as built.")
@parallelism_option
@max_batch_option()
@slo_option("prefill")
@slo_option("decode")
@json_option
def cost(scenario: str, model: str, phase: str, clock_text: str, share: str, parallelism: str,
         max_batch: int, ttft: float, tbt: float, as_json: bool) -> None:
    """Capex and power split, tokens/s/W, tokens/J and $ per million tokens of a scenario
    serving a model at its best configuration under the SLO."""
    from compute.phases import BOTH, PHASES, check_phase
    from netmodel.cli.resolve import check_phase_options
    from netmodel.study.cost import cost_summary

    with value_refused_as("--phase", phase, "unknown phase"):   # a blank one quotes ''
        phases = list(PHASES) if phase.strip() == BOTH else [check_phase(phase.strip(),
                                                                         both=True)]
    clock = _clock(clock_text)
    slo = slo_of(ttft, tbt)
    limit = max_batch
    check_phase_options(phases, {"ttft": ttft, "tbt": tbt})   # after the values
    # a GPU's die comes with --scenario (NAME@GPU, a scenario file's gpu): said with it
    with value_refused_as("--share", share, "unknown network share"), \
            value_refused_as("--scenario", scenario, "no die data"):
        summaries = [cost_summary(scenario, model, p, clock=clock, share=share,
                                  parallelism=parallelism, slo=slo, max_batch=limit)
                     for p in phases]
    from netmodel.cli.main import exit_if_nothing_feasible

    if as_json:
        click.echo(json.dumps({"summaries": [s.to_dict() for s in summaries]}, indent=2))
    else:
        for s in summaries:
            _print_summary(s, limit, slo.limit(s.phase))
    exit_if_nothing_feasible(summaries)


def _print_summary(s, limit: int | None = None, latency_limit: float | None = None) -> None:
    """``s``'s block (:meth:`~netmodel.study.cost.CostSummary.table`); its heading names
    the SLO searched under (``latency_limit``, seconds: ``TBT <= 50 ms``)."""
    click.echo(s.table(latency_limit))
    if s.tp and s.batch == limit:   # as compare's and search's note
        from netmodel.study.rows import batch_limit_note

        click.echo(batch_limit_note(limit))
    click.echo("")
