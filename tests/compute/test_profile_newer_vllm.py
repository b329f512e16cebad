"""The shipped profile for newer vLLM, ``vllm-h100-2024``: fitted on vLLM's performance-CI
latency tests on H100 (build 9555, autumn 2024; compute/data/vllm_h100_2024_measurements.csv),
its per-layer overhead the one parameter those rows identify. What it was fitted on, its fit,
each model held out against the issue's 30% target (the measured errors, pinned), that
``netmodel calibrate`` fits the same from the data file, and that it is selectable by name.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from compute.measurements import read_measurements
from compute.profiles import get_profile, profile_names, read_profile
from netmodel.cli import main as cli_main
from tests.compute.report_helpers import inference_reports

NAME = "vllm-h100-2024"
TARGET = 0.30


@pytest.fixture(scope="module")
def report():
    """scripts/inference_reports/newer_vllm.py."""
    return inference_reports("newer_vllm")[0]


@pytest.fixture(scope="module")
def rows(report):
    return read_measurements(report.NEWER)


@pytest.fixture(scope="module")
def held(report, rows):
    return report.hold_one_model_out(rows)


def test_the_data_file_is_the_three_published_rows_divided_by_128(report, rows):
    """Each fitted row is the published end-to-end latency / 128 (the prefill of 8 x 32 tokens
    and 127 decode steps: 128 steps) as a decode step of batch 8 at context 32 + 64."""
    published = {r["id"]: r for r in inference_reports("published")[0].published_rows()}
    assert len(rows) == 3 and {m.model for m in rows} == {"Llama-3-8B", "Llama-3-70B",
                                                          "Mixtral-8x7B"}
    assert sorted(m.tp for m in rows) == [1, 2, 4]
    for m, i in zip(rows, report.FITTED_IDS, strict=True):
        r = published[i]
        assert (m.model, m.tp, m.batch, m.gpu) == (r["model"], int(r["tp"]), 8, "H100-SXM")
        assert m.phase == "decode" and m.context == 32 + 128 // 2
        assert m.latency_s == pytest.approx(float(r["measured"]) / 128, rel=1e-12)
        assert "builds/9555" in m.source
        assert f"mean latency {float(r['measured']) * 1e3:g} ms" in m.source
        assert f"mean latency {float(r['measured']) * 1e3:g} ms" in r["source"]


def test_the_shipped_profile_is_the_fit_of_the_data_file(report, rows):
    """Refitting the data file gives back the shipped profile (the script writes it:
    `python scripts/accuracy_inference.py --write-newer-profile PATH`)."""
    shipped = get_profile(NAME)
    fit = report.newer_fit(rows)
    assert shipped.to_toml() == fit.profile.to_toml()
    assert shipped.fit[:2] == (("layer_overhead_s",), 3)
    assert shipped.gpu == "H100-SXM" and shipped.collectives == "scenario h100-dgx"
    assert "9555" in shipped.engine and "9555" in shipped.fitted_on


def test_the_fitted_values(rows):
    """Measured 2026-12: 0.1018 ms a layer a step (2023 vLLM's, vllm-dgx-h100: 0.268 ms, plus
    0.262 ms a decode sequence); the published H100 GEMM and attention ceilings kept; no other
    overhead. Fit error on the three converted rows: rms 6.7%, worst -10.1% (Mixtral-8x7B)."""
    p = get_profile(NAME)
    assert p.layer_overhead_s == pytest.approx(1.0179e-4, rel=1e-3)
    assert p.gemm_efficiency == pytest.approx(792.1 / 989)
    assert p.attention_efficiency == pytest.approx(333 / 989)
    assert (p.hbm_fraction, p.step_overhead_s, p.decode_sequence_overhead_s,
            p.token_overhead_s) == (1.0, 0.0, 0.0, 0.0)
    assert p.fit[2:] == pytest.approx((0.0667, 0.1009), abs=5e-4)


def test_each_model_held_out_is_within_the_target(held):
    """Each model's published end-to-end latency predicted by the per-layer overhead fitted on
    the other two models' rows. Measured 2026-12: Llama-3-70B +10.4% (TP 4, 80 layers, fitted
    on the two 32-layer models), Llama-3-8B -0.3%, Mixtral-8x7B -11.1%: all three within the
    issue's 30% (three rows of one workload: the form is tested across models and TP degrees,
    not across workloads; docs/accuracy.md)."""
    errors = {model: e for model, (_, e) in held.items()}
    assert errors == pytest.approx({"Llama-3-70B": 0.104, "Llama-3-8B": -0.003,
                                    "Mixtral-8x7B": -0.111}, abs=0.002)
    assert all(abs(e) <= TARGET for e in errors.values())


def test_a_per_step_overhead_held_out_misses(report, rows):
    """The form is not free: a fixed time per step (the same three rows, the same recipe)
    held out misses Llama-3-8B by +36.5% (measured 2026-12), where the per-layer form is
    within 11% for every model: the fixed time a decode step costs grows with the layers."""
    step = report.hold_one_model_out(rows, fit=("step_overhead_s",))
    assert step["Llama-3-8B"][1] == pytest.approx(0.365, abs=0.002)
    assert abs(step["Llama-3-8B"][1]) > TARGET


def test_it_replaces_the_2023_profile_on_these_rows(report):
    """vllm-dgx-h100 (2023 vLLM) is +95%, +88% and +31% on these rows (docs/accuracy.md);
    this profile is within its fit error."""
    published = {r["id"]: r for r in inference_reports("published")[0].published_rows()}
    for i in report.FITTED_IDS:
        r = published[i]
        old = report._e2e(get_profile("vllm-dgx-h100"), r) / float(r["measured"]) - 1
        new = report._e2e(get_profile(NAME), r) / float(r["measured"]) - 1
        assert old > 0.30 and abs(new) < 0.11


def test_calibrate_fits_the_same_from_the_data_file(report, rows, tmp_path, monkeypatch):
    """As a user: `netmodel calibrate --measurements compute/data/vllm_h100_2024_measurements.csv
    --base <the published ceilings, no overheads> --fit layer_overhead_s --scenario h100-dgx`
    writes the shipped value."""
    monkeypatch.setitem(cli_main._COMMANDS, "calibrate",
                        ("netmodel.cli.calibrate", "calibrate", "Fit an engine profile."))
    # a name of its own: a file calling itself the shipped profile with other values is
    # refused (compute.profiles.check_not_shipped)
    base = report.newer_base().with_values({}, name="ceilings")
    (tmp_path / "base.toml").write_text(base.to_toml())
    r = CliRunner().invoke(cli_main.cli, [
        "calibrate", "--measurements", str(report.NEWER), "-o", str(tmp_path / "mine.toml"),
        "--scenario", "h100-dgx", "--base", str(tmp_path / "base.toml"), "--fit",
        "layer_overhead_s"])
    assert r.exit_code == 0, r.output
    mine = read_profile(tmp_path / "mine.toml")
    assert mine.layer_overhead_s == pytest.approx(get_profile(NAME).layer_overhead_s, rel=1e-6)


def test_selectable_by_name():
    assert NAME in profile_names()
    r = CliRunner().invoke(cli_main.cli, [
        "infer", "--model", "Llama-3-8B", "--tp", "1", "--batch", "8", "--phase", "decode",
        "--context", "96", "--scenario", "h100-dgx", "--profile", NAME])
    assert r.exit_code == 0, r.output
    assert f"calibrated mode: engine profile {NAME}, fitted on 3 vLLM decode steps" in r.output
