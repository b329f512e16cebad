"""compare --reliability names its tokens/s/SM figures by the SMs they divide by, as
availability does.

Its rows held ``tokens_per_s_per_sm`` (over the SMs serving: an instance's tokens/s over
its own SMs) next to ``goodput_tokens_per_s_per_sm_with_spares`` (over every SM bought),
with nothing to tell where the two part: lite-hier GPT-3-175B prefill holds 5 instances
of TP 24 on 128 Lites, 120 GPUs serving and 8 idle. Now the reliability columns carry
``healthy_tokens_per_s_per_sm``, availability's name for the healthy tokens/s over every
SM of the cluster's GPUs: compare's figure x 120 / 128 by hand, and the columns come from
the reliability summary's fields (one home for the names)."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.reliability_summary import ReliabilitySummary
from netmodel.study.rows import FabricRow


@pytest.fixture(scope="module")
def row():
    out = CliRunner().invoke(cli, ["compare", "--scenarios", "lite-hier", "--models",
                                   "GPT-3-175B", "--phases", "prefill", "--reliability",
                                   "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    (r,) = [r for r in rows if r["scenario"].startswith("lite-hier")]
    return r


def test_healthy_over_every_sm_is_the_serving_share_of_compares_figure(row):
    assert row["tp"] == 24 and row["instance_gpus"] == 24
    assert 128 // 24 * 24 == 120          # 5 instances serve on 120 of the 128 Lites
    assert row["healthy_tokens_per_s_per_sm"] == pytest.approx(
        row["tokens_per_s_per_sm"] * 120 / 128, rel=1e-12)
    # goodput with the reference pool (1% of 128: 2 spares) over 130 GPUs' SMs, at the
    # mean delivered capacity with them
    assert row["goodput_tokens_per_s_per_sm_with_spares"] < row["healthy_tokens_per_s_per_sm"]


def test_the_reliability_columns_are_the_summarys_fields():
    mine = set(FabricRow.group_fields("reliability"))
    theirs = {f.name for f in fields(ReliabilitySummary)}
    assert mine <= theirs
    assert {"healthy_tokens_per_s_per_sm", "goodput_tokens_per_s_per_sm_with_spares"} <= mine
