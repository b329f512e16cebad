"""A wafer yields whole dies: good dies per wafer, the cost per good die, per good SM and a
package's logic come from the floor of Hennessy & Patterson's gross dies, in every
consumer (die_cost, yield_curve, package_cost, `netmodel yield`)."""

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.die_yield import die_cost, gross_dies_per_wafer, yield_curve
from compute.yield_model import gpu_die_cost, package_cost
from netmodel.cli.main import cli

MM2 = 1e-6


def test_814mm2_poisson_by_hand():
    # pi 150^2 / 814 - pi 300 / sqrt(1628) = 86.836 - 23.358 = 63.48 gross: 63 whole;
    # Poisson yield exp(-0.1 /cm^2 x 8.14 cm^2) = 0.44307
    c = die_cost(814 * MM2, defect_density=1000.0, model="poisson", wafer_price=18000.0)
    y = math.exp(-0.814)
    assert c.dies_per_wafer == 63
    assert c.good_dies == pytest.approx(63 * y, rel=1e-12)            # 27.91, not 28.13
    assert c.cost_per_good_die == pytest.approx(18000 / (63 * y), rel=1e-12)   # $644.83
    assert c.cost_per_good_die == pytest.approx(644.83, abs=0.01)


def test_h100_cli_text_and_json():
    r = CliRunner().invoke(cli, ["yield", "--gpu", "H100-SXM", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["dies_per_wafer"] == 63
    assert d["good_dies_per_wafer"] == pytest.approx(63 * d["yield"], rel=1e-12)
    assert d["cost_per_good_die_usd"] == pytest.approx(
        d["wafer_price_usd"] / (63 * d["yield"]), rel=1e-12)
    assert d["cost_per_good_sm_usd"] == pytest.approx(d["cost_per_good_die_usd"] / 132)
    text = CliRunner().invoke(cli, ["yield", "--gpu", "H100-SXM"]).output
    good = 63 * d["yield"]
    assert f"good dies           {good:.1f} per wafer" in text   # 58.2, not 58.6


def test_package_logic_and_curve_use_whole_dies():
    die = gpu_die_cost("H100-SXM")
    assert package_cost("H100-SXM").logic == pytest.approx(
        die.wafer_price / (die.dies_per_wafer * die.yield_), rel=1e-12)
    c = yield_curve()
    whole = np.floor(c["gross_dies"])
    assert c["cost_per_good_sm"] == pytest.approx(
        18000.0 / (whole * c["yield"]) / c["sms_enabled"], rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=1.0, max_value=800.0))
def test_good_dies_are_whole_dies_times_yield(area_mm2):
    c = die_cost(area_mm2 * MM2)
    assert c.dies_per_wafer == math.floor(gross_dies_per_wafer(area_mm2 * MM2))
    assert c.good_dies == pytest.approx(c.dies_per_wafer * c.yield_, rel=1e-12)
    assert c.good_dies <= c.gross_dies * c.yield_
