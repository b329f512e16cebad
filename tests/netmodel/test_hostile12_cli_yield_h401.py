"""Hostile round 12 on the command line (h401): ``netmodel yield`` where no die is good
(the defect-free yield 0 to a float's precision) wrote ``Infinity`` into its JSON (not JSON)
and ``$inf`` into its table."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import run_cli


def test_yield_where_no_die_is_good_writes_json_and_no_inf():
    # 99 defects/cm^2 (under the 100 allowed) on 800 mm^2, Poisson: exp(-8 x 99) = exp(-792)
    # is below a float's range, so no die is good and the cost is infinite. Before: the JSON
    # held 'Infinity' (not JSON: a strict reader refuses it) and the table '$inf'.
    import json
    import math

    args = ["yield", "--area", "800", "--defect-density", "99", "--model", "poisson",
            "--sms", "144/132"]
    assert math.exp(-800e-2 * 99) == 0.0
    r = run_cli([*args, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert doc["yield"] == 0.0 and doc["good_dies_per_wafer"] == 0.0
    assert doc["cost_per_good_die_usd"] is None and doc["cost_per_good_sm_usd"] is None
    r = run_cli(args)
    assert r.exit_code == 0 and "inf" not in r.output
    assert "cost per good die   none (no good die)" in r.output
    assert "cost per good SM    none (no good die)" in r.output
    r = run_cli(["yield", "--gpu", "GB200-NVL72", "--defect-density", "99", "--model",
                 "poisson"])
    assert r.exit_code == 0 and r.output.rstrip().endswith("die cost/package    none (no good die)")
    # a good die still costs its wafer share: 18,000 USD over 63 x exp(-0.1 x 8.14) good dies
    # (Poisson, 814 mm^2, 0.1/cm^2; the whole of Hennessy & Patterson's 63.48 on 300 mm)
    r = run_cli(["yield", "--area", "814", "--model", "poisson", "--json"])
    doc = json.loads(r.output)
    assert doc["cost_per_good_die_usd"] == pytest.approx(
        18000 / (doc["dies_per_wafer"] * math.exp(-0.1 * 8.14)), rel=1e-12)
    assert doc["dies_per_wafer"] == 63
