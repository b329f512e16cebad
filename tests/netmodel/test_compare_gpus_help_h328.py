"""``compare --gpus``'s help said every scenario runs with the listed GPUs "instead of its
own", but h100-dgx, the baseline, also runs on its own H100 beside its copies (the ratio
column divides by ``h100-dgx@H100-SXM``); the help now says so (h328). ``sweep --gpus``
swaps the baseline too, and its help keeps "instead of its own" alone."""

from __future__ import annotations

import json

from netmodel.study.defaults import BASELINE_SCENARIO
from tests.netmodel.cli_helpers import run_cli


def _gpus_help(command: str) -> str:
    r = run_cli([command, "--help"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    return text.split("--gpus LIST", 1)[1].split(" --", 1)[0]


def test_compare_help_says_the_baseline_keeps_its_gpu():
    assert f"({BASELINE_SCENARIO}, the baseline, when named, also runs on its own GPU" \
        in _gpus_help("compare")
    assert "the baseline" not in _gpus_help("sweep")


def test_compare_runs_the_baseline_on_its_own_gpu_and_sweep_does_not():
    r = run_cli(["compare", "--models", "Llama-3-8B", "--scenarios", BASELINE_SCENARIO,
                 "--gpus", "Lite+BW", "--phases", "decode", "--json", "-q"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    labels = {row["label"] for row in doc["rows"]}
    assert labels == {"h100-dgx@H100-SXM", "h100-dgx@Lite+BW"}, labels
    assert doc["baseline"] == "h100-dgx@H100-SXM"
    r = run_cli(["sweep", "--models", "Llama-3-8B", "--scenarios", BASELINE_SCENARIO,
                 "--gpus", "Lite+BW", "--param", "adjust.hop_latency=1us", "--json", "-q"])
    assert r.exit_code == 0, r.output
    assert "h100-dgx@H100-SXM" not in r.output and "h100-dgx@Lite+BW" in r.output
