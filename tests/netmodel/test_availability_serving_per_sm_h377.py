"""Availability's healthy tokens/s/SM and compare's are two figures for two questions.

``netmodel availability`` printed lite-hier GPT-3-175B prefill at 17.249 tokens/s/SM where
``netmodel compare`` printed 18.398 for the same configuration. Not a bug in either:
availability divides the cluster's tokens/s by every SM of its GPUs, and a cell of 128
Lites holds floor(128 / 24) = 5 instances of TP 24, 120 GPUs, leaving 8 idle; compare
divides an instance's tokens/s by its own SMs. So availability's figure is compare's
times the serving share, 120 / 128 = 15 / 16 (17.249 ~ 18.398 x 0.9375, the printed figures rounded). Availability
now prints and writes both, named: ``healthy_tokens_per_s_per_sm`` over every SM of the
cluster's GPUs (idle included; goodput is over those and the spares) and
``serving_tokens_per_s_per_sm`` over the SMs serving, compare's figure.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.availability import availability


@pytest.fixture(scope="module")
def hier():
    return availability("lite-hier", "GPT-3-175B", "prefill", trials=20)


def test_the_ratio_is_the_serving_share_by_hand(hier):
    c = hier.cluster
    assert (c.gpus, c.cells, c.instance_gpus) == (128, 1, 24)
    assert c.instances_total == 128 // 24 == 5     # 5 x 24 = 120 GPUs serve, 8 idle
    assert hier.serving_gpus == 120
    assert hier.healthy_per_sm / hier.serving_per_sm == pytest.approx(120 / 128, rel=1e-12)
    # goodput: the Monte Carlo's mean over every SM bought (no spares here: the cluster's)
    assert hier.goodput_per_sm == pytest.approx(hier.mc.mean * hier.healthy_per_sm,
                                                rel=1e-12)


def test_serving_per_sm_is_compares_figure(hier):
    out = CliRunner().invoke(cli, ["compare", "--scenarios", "lite-hier", "--models",
                                   "GPT-3-175B", "--phases", "prefill", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    (row,) = [r for r in rows if r["scenario"].startswith("lite-hier")]
    assert row["tp"] == 24
    assert hier.serving_per_sm == pytest.approx(row["tokens_per_s_per_sm"], rel=1e-12)


def test_the_json_and_the_table_name_both(hier):
    d = hier.to_dict()
    assert d["serving_gpus"] == 120
    assert d["healthy_tokens_per_s_per_sm"] == pytest.approx(
        d["serving_tokens_per_s_per_sm"] * 120 / 128, rel=1e-12)
    text = hier.table()
    assert "spares and idle GPUs included" in text
    assert "over the SMs serving (120 of 128 GPUs in instances" in text
