"""``--gpus`` means one thing on ``compare`` and ``sweep``: every scenario runs with each
listed GPU instead of its own, and the baseline scenario (``h100-dgx``), when named, also
runs on its own GPU, just before its copies, so the reference every ratio and crossing is
measured against stays today's H100 cluster. ``sweep --gpus`` used to move the baseline
onto the swept GPU too, while ``compare --gpus`` kept it; the rule is now said once
(``scenario_catalog.expand_scenarios``) and both help texts say it."""

from __future__ import annotations

import json

import pytest

from netmodel.study.defaults import BASELINE, BASELINE_SCENARIO
from netmodel.study.scenario_catalog import expand_scenarios
from tests.netmodel.cli_helpers import run_cli

OWN = f"{BASELINE_SCENARIO}@{BASELINE}"   # h100-dgx@H100-SXM
GPU = "Lite+BW"


def _gpus_help(command: str) -> str:
    r = run_cli([command, "--help"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    return text.split("--gpus LIST", 1)[1].split(" --", 1)[0]


def test_both_helps_say_the_one_rule():
    said = (f"(the baseline {BASELINE_SCENARIO}, when named, also runs on its own GPU, just "
            f"before its copies, so the reference stays today's cluster)")
    assert said in _gpus_help("compare")
    assert _gpus_help("sweep") == _gpus_help("compare")


@pytest.mark.parametrize("gpus, labels", [
    ([GPU], ["lite-flat@Lite+BW", OWN, "h100-dgx@Lite+BW"]),
    # the baseline's own GPU among --gpus: one h100-dgx@H100-SXM, in the baseline's place
    ([GPU, BASELINE], ["lite-flat@Lite+BW", "lite-flat@H100-SXM", OWN, "h100-dgx@Lite+BW"]),
    (None, ["lite-flat@Lite", OWN]),
])
def test_the_rule(gpus, labels):
    got = expand_scenarios(["lite-flat", BASELINE_SCENARIO], gpus)
    assert [s.label for s in got] == labels
    assert all(s.gpu == BASELINE for s in got if s.label == OWN)


def _compare(scenarios: str, gpus: str | None) -> dict:
    r = run_cli(["compare", "--models", "Llama-3-8B", "--scenarios", scenarios,
                 *(["--gpus", gpus] if gpus else []), "--phases", "decode", "--json", "-q"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_compare_and_sweep_keep_the_baseline_on_its_own_gpu():
    scenarios = f"{BASELINE_SCENARIO},lite-flat"
    doc = _compare(scenarios, GPU)
    rows = {row["label"]: row for row in doc["rows"]}
    assert list(rows) == [OWN, "h100-dgx@Lite+BW", "lite-flat@Lite+BW"]
    assert doc["baseline"] == OWN
    # the reference does not move with --gpus: the same row as h100-dgx run alone
    alone = _compare(BASELINE_SCENARIO, None)["rows"][0]
    base = rows[OWN]
    assert alone["label"] == OWN and alone["gpu"] == BASELINE
    assert base["tokens_per_s_per_sm"] == alone["tokens_per_s_per_sm"]
    for row in rows.values():   # every ratio divides by the H100's row
        assert row["vs_baseline"] == pytest.approx(
            row["tokens_per_s_per_sm"] / base["tokens_per_s_per_sm"], rel=1e-12)
    # the Lite+BW copy is not the reference: 4 Lite+BW, a quarter H100 each, differ
    assert rows["h100-dgx@Lite+BW"]["vs_baseline"] != pytest.approx(1.0, rel=1e-3)

    # sweep: the same scenarios, the same order, the baseline first; a point at the
    # scenarios' own values (latency x1) is compare's row
    r = run_cli(["sweep", "--models", "Llama-3-8B", "--scenarios", scenarios, "--gpus", GPU,
                 "--param", "adjust.latency_scale=1", "--json", "-q"])
    assert r.exit_code == 0, r.output
    swept = json.loads(r.output)
    assert swept["scenarios"] == list(rows)
    for row in swept["rows"]:
        assert row["tokens_per_s_per_sm"] == pytest.approx(
            rows[row["label"]]["tokens_per_s_per_sm"], rel=1e-9), row["label"]
