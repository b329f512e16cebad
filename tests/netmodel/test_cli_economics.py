"""`netmodel yield` and `netmodel cost`: values, JSON shapes and one-line errors."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.cost import cost_summary
from tests.netmodel.cli_helpers import one_line_error


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_yield_text_for_an_h100_sized_die():
    r = run("yield", "--area", "814", "--model", "poisson")
    assert r.exit_code == 0, r.output
    assert "63.48 per wafer (63 whole)" in r.output
    assert "defect-free yield   44.3%" in r.output
    # a wafer yields whole dies: 63, not 63.48
    assert 18000 / (63 * math.exp(-0.814)) == pytest.approx(644.83, abs=0.005)
    assert "cost per good die   $644.83" in r.output


def test_yield_json_and_units_at_the_boundary():
    r = run("yield", "--area", "8.14cm2", "--defect-density", "0.001/mm2", "--model",
            "negative-binomial", "--alpha", "2", "--wafer-diameter", "30cm",
            "--wafer-price", "20000", "--sms", "144/132", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["area_mm2"] == pytest.approx(814) and d["wafer_diameter_mm"] == pytest.approx(300)
    assert d["defect_density_per_cm2"] == pytest.approx(0.1)
    assert d["defect_free_yield"] == pytest.approx(1 / (1 + 0.1 * 8.14 / 2) ** 2)
    assert d["sms_enabled"] == 132 and d["yield"] > d["defect_free_yield"]
    assert d["dies_per_wafer"] == 63
    assert d["cost_per_good_die_usd"] == pytest.approx(20000 / (63 * d["yield"]))
    assert d["cost_per_good_sm_usd"] == pytest.approx(d["cost_per_good_die_usd"] / 132)


@pytest.mark.parametrize("args, needles", [
    (("--area", "80000"), ("larger than the usable wafer",)),
    (("--area", "-814"), ("--area must be a finite number > 0",)),
    (("--area", "nan"), ("--area",)),
    (("--area", "814", "--model", "seeds"), ("unknown yield model 'seeds'",)),
    (("--area", "814", "--defect-density", "-0.1"), ("--defect-density",)),
    (("--area", "814", "--defect-density", "inf"), ("--defect-density",)),
    (("--area", "814", "--wafer-price", "-1"), ("--wafer-price",)),
    (("--area", "814", "--alpha", "0"), ("--alpha",)),
    (("--area", "814", "--wafer-diameter", "12in"), ("unknown unit 'in'",)),
    (("--area", "814", "--sms", "132/144"), ("enabled <= physical",)),
    (("--area", "814", "--critical-fraction", "0.2"), ("only with --sms",)),
    (("--area", "814", "--sms", "144/132", "--critical-fraction", "2"), ("--critical-fraction",)),
])
def test_yield_bad_input(args, needles):
    one_line_error(run("yield", *args), *needles)


def test_cost_json_matches_the_library():
    r = run("cost", "--scenario", "lite-ocs", "--model", "Llama-3-70B", "--phase", "decode",
            "--json")
    assert r.exit_code == 0, r.output
    (d,) = json.loads(r.output)["summaries"]
    s = cost_summary("lite-ocs", "Llama-3-70B", "decode")
    assert d["usd_per_mtoken"] == pytest.approx(s.usd_per_mtoken)
    assert d["tokens_per_s_per_w"] == pytest.approx(s.tokens_per_s_per_w)
    assert set(d["capex_usd"]) >= {"gpu", "host", "network", "total"}
    assert d["bill_of_materials"]["ocs_ports"] == 4 * 136


def test_cost_text_both_phases():
    r = run("cost", "--scenario", "h100-dgx", "--model", "Llama-3-70B")
    assert r.exit_code == 0, r.output
    assert "h100-dgx@H100-SXM, Llama-3-70B, prefill" in r.output
    assert "h100-dgx@H100-SXM, Llama-3-70B, decode" in r.output
    assert "$ per M tokens" in r.output and "tokens/s/W" in r.output


@pytest.mark.parametrize("args, needles", [
    (("--scenario", "nope", "--model", "Llama-3-70B"), ("unknown scenario 'nope'",)),
    (("--scenario", "lite-flat", "--model", "nope"), ("nope",)),
    (("--scenario", "lite-flat", "--model", "Llama-3-70B", "--phase", "train"), ("train",)),
    (("--scenario", "lite-flat", "--model", "Llama-3-70B", "--clock", "9"),
     ("outside the modelled range",)),
    (("--scenario", "lite-flat", "--model", "Llama-3-70B", "--clock", "nan"), ("--clock",)),
    (("--scenario", "lite-flat", "--model", "Llama-3-70B", "--share", "half"),
     ("unknown network share 'half'",)),
])
def test_cost_bad_input(args, needles):
    one_line_error(run("cost", *args), *needles)


@pytest.mark.parametrize("scenario, price, basis", [
    ("h100-dgx", "$27.5k", "reference price"),            # economics.toml reference_price
    ("h100-dgx@B200-HGX", "$35.0k", "list price"),        # gpus.toml B200 die.list_price
    ("h100-dgx@A100-SXM-80GB", "$12.5k", "list price"),   # gpus.toml A100 die.list_price
    ("lite-flat", None, "margin of H100-SXM"),            # package cost x the H100's margin
])
def test_cost_says_where_the_gpu_price_comes_from(scenario, price, basis):
    """Every catalog GPU is priced (A100 and B200 had no die data) and the output says
    whether the price is a published list price or the H100's margin applied to a package
    cost; the JSON carries the same basis."""
    r = run("cost", "--scenario", scenario, "--model", "Llama-3-70B", "--phase", "decode")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if x.startswith("GPU price"))
    assert f"({basis}; package $" in line, line
    if price is not None:
        assert price in line, line
    j = json.loads(run("cost", "--scenario", scenario, "--model", "Llama-3-70B", "--phase",
                       "decode", "--json").output)
    assert {row["gpu_price_basis"] for row in j["summaries"]} == {basis}


def test_yield_of_a_gpus_die():
    """`yield --gpu` takes a GPU's die (area, SMs, its process's wafer price) instead of
    --area/--sms: the H100 is the 814 mm^2 reference die harvested 132 of 144; a B200 die
    is 800 mm^2 (H&P: pi 150^2 / 800 - pi 300 / sqrt(1600) = 64.80 gross dies), 74 of 80
    SMs, two of them a package; the A100 is on N7 wafers ($9,346). The first line names
    the GPU and its dies; the rest is what --area/--sms print."""
    same = run("yield", "--area", "814", "--sms", "144/132")
    r = run("yield", "--gpu", "H100-SXM")
    first, rest = r.output.split("\n", 1)
    assert r.exit_code == 0 and rest == same.output, r.output
    assert first.split() == ["gpu", "H100-SXM:", "1", "logic", "die", "per", "package,", "N4"]
    b = run("yield", "--gpu", "B200-HGX", "--json")
    assert b.exit_code == 0, b.output
    d = json.loads(b.output)
    gross = math.pi * 150**2 / 800 - math.pi * 300 / math.sqrt(1600)
    assert d["gross_dies"] == pytest.approx(gross, rel=1e-12) and round(gross, 2) == 64.80
    assert (d["sms_physical"], d["sms_enabled"]) == (80, 74)
    assert (d["gpu"], d["dies_per_package"]) == ("B200-HGX", 2)
    assert (d["area_mm2"], d["wafer_diameter_mm"]) == (800, 300)   # not 799.9999999999999
    a = json.loads(run("yield", "--gpu", "A100-SXM-80GB", "--json").output)
    assert a["area_mm2"] == 826
    assert d["good_dies_per_package_usd"] == pytest.approx(2 * d["cost_per_good_die_usd"],
                                                           rel=1e-15)
    # the text says the JSON's figure ($601.16 when written; h356: was a pin of it)
    # labelled as the dollars it is, in the 19-character label column of every row
    assert f"die cost/package    ${d['good_dies_per_package_usd']:,.2f} (2 known-good dies)" \
        in run("yield", "--gpu", "B200-HGX").output.splitlines()
    a = run("yield", "--gpu", "A100-SXM-80GB")
    assert "300 mm, $9,346" in a.output and "108 of 128 SMs" in a.output, a.output


@pytest.mark.parametrize("args, needles", [
    ((), ("give --area", "or --gpu")),
    (("--area", "814", "--gpu", "H100-SXM"), ("one of them",)),
    (("--gpu", "Lite", "--sms", "36/33"), ("--sms applies only with --area",)),
    (("--gpu", "Nope"), ("unknown GPU 'Nope'", "'B200-HGX'")),
])
def test_yield_gpu_bad_input(args, needles):
    one_line_error(run("yield", *args), *needles)


def test_cost_with_nothing_feasible_exits_3_as_compare_does():
    # before: tokens/s 0 and 'nothing feasible under the SLO' in the table, exit 0, so a
    # script could not tell it from an answer; now exit 3 (NOTHING_FEASIBLE) with the
    # table or JSON still printed. Llama-3-70B decode on an H100 at batch 1 takes 6.5 ms at
    # TP 8 (docs/units-and-errors.md), so a 1 ms TBT is met by nothing
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import NOTHING_FEASIBLE, cli

    args = ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--phase", "decode",
            "--tbt", "1ms"]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == NOTHING_FEASIBLE == 3, out.output
    assert "nothing feasible under TBT <= 1 ms" in out.output
    out = CliRunner().invoke(cli, args + ["--json"])
    assert out.exit_code == 3
    doc = json.loads(out.output.split("\nnothing feasible:")[0])
    assert doc["summaries"][0]["tp"] is None and doc["summaries"][0]["tokens_per_s"] == 0
    # one phase feasible is an answer: exit 0
    ok = CliRunner().invoke(cli, ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-70B",
                                  "--tbt", "1ms"])
    assert ok.exit_code == 0, ok.output
