"""The calibrated mode on a second system: 8x A100-SXM-80GB (a DGX-A100), from
tests/compute/data/splitwise_perf_model_medians_a100.csv (medians of the same Splitwise data
file as the H100 file, derived the same way; source and method in its header).

A profile is fitted as vllm-dgx-h100 is (scripts/accuracy_inference.py: published GEMM and
attention ceilings of the A100, the per-token, per-layer and per-decode-sequence overheads
fitted on the six Llama-2-70B TP 8 configurations vllm-dgx-h100 is fitted on, collectives of
h100-dgx swapped to the A100: no in-switch reduction). The issue's target: fitted on one model,
it predicts another's measured latencies on the same system within 30%. It is met in decode
(every held-out set) and in prefill at TP 2; it is missed in prefill for BLOOM-176B (its two
8,192-token steps) and at TP 4 and 8 (steps of 8,192 tokens and more), where the measured
throughput falls by 41% from its peak: marked as expected failures, so that a change which
meets them is noticed. The roofline, a bound, stays below every row.
"""

import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from compute.measurements import read_measurements
from compute.profile_fit import predict, roofline
from compute.profiles import read_profile
from netmodel.cli import main as cli_main
from tests.compute.report_helpers import inference_reports

DATA = Path(__file__).parent / "data" / "splitwise_perf_model_medians_a100.csv"
TARGET = 0.30


@pytest.fixture(scope="module")
def script():
    """The second-system report (scripts/inference_reports/second_system.py)."""
    return inference_reports("second_system")[0]


@pytest.fixture(scope="module")
def common():
    """What the reports share (scripts/inference_reports/common.py): the recipe's FIT."""
    return inference_reports("common")[0]


@pytest.fixture(scope="module")
def rows():
    return read_measurements(DATA)


@pytest.fixture(scope="module")
def fitted(script, rows):
    return script.a100_fit(rows).profile


@pytest.fixture(scope="module")
def comm(common):
    return common.scenario_comm()


def test_the_data_file_holds_the_configurations_named_in_its_header(rows):
    sets = {}
    for m in rows:
        sets[(m.model, m.tp)] = sets.get((m.model, m.tp), 0) + 1
    # as the H100 file: 13 configurations x 2 phases; Llama-2-70B TP 2 at batch 64 left out
    assert sets == {("BLOOM-176B", 8): 26, ("Llama-2-70B", 2): 24, ("Llama-2-70B", 4): 26,
                    ("Llama-2-70B", 8): 26}
    assert all(m.gpu == "A100-SXM-80GB" and "hardware a100-80gb" in m.source for m in rows)
    assert {m.context for m in rows if m.phase == "decode"} == \
        {p + 64 for p in (128, 256, 512, 1024, 2048, 4096, 8192)}


@pytest.mark.parametrize("model,tp,phase,batch,prompt,five", [
    # Mutinifni/splitwise-sim data/perf_model.csv (commit 3780880), hardware a100-80gb,
    # token_size 128: the five prompt_time / token_time values (ms) of the configuration
    ("Llama-2-70B", 8, "prefill", 1, 2048, (274.3628730531782, 274.2223530076444,
                                             273.8796330522746, 273.75831990502775,
                                             274.5757189113647)),
    ("BLOOM-176B", 8, "decode", 64, 512, (96.91415043679748, 96.40627946176632,
                                          96.58297453273646, 96.38672798146004,
                                          96.86901416138224)),
    ("Llama-2-70B", 4, "prefill", 4, 512, (571.4330729097128, 450.43743203859776,
                                           586.8643099674955, 475.1812149770558,
                                           574.7047640616074)),
])
def test_a_row_is_the_median_of_its_five_repeats(rows, model, tp, phase, batch, prompt, five):
    """latency_s is the median of the source's 5 repeats in seconds, to 0.1 ms (the last: two
    modes, 450-475 and 571-587 ms; the median is 571.4)."""
    got = [m for m in rows if (m.model, m.tp, m.phase, m.batch) == (model, tp, phase, batch)
           and (m.prompt if phase == "prefill" else m.context - 64) == prompt]
    assert len(got) == 1
    assert got[0].latency_s == round(statistics.median(five) / 1e3, 4)


def test_the_fit_uses_the_h100_profiles_six_configurations(script, rows):
    keys = script.a100_fit_keys()
    mine = [m for m in rows if script.config_key(m) in keys]
    assert len(keys) == 6 and len(mine) == 6
    assert {(m.phase, m.batch, m.prompt or m.context) for m in mine} == {
        ("prefill", 1, 2048), ("prefill", 4, 512), ("prefill", 1, 8192),
        ("decode", 1, 576), ("decode", 32, 576), ("decode", 64, 576)}


@pytest.mark.parametrize("scenario", [False, True])
def test_the_roofline_stays_below_every_a100_row(rows, comm, scenario):
    margins = [m.latency_s / roofline(m, comm(m) if scenario else None) for m in rows]
    assert min(margins) > 1.4     # measured: 1.44x (ring), 1.43x (h100-dgx@A100-SXM-80GB)


def _errors(profile, rows, comm, pick):
    return [predict(profile, m, comm(m)) / m.latency_s - 1 for m in rows if pick(m)]


@pytest.mark.parametrize("model,tp", [("BLOOM-176B", 8), ("Llama-2-70B", 2),
                                      ("Llama-2-70B", 4), ("Llama-2-70B", 8)])
def test_decode_on_the_a100_is_within_the_target(script, rows, fitted, comm, model, tp):
    """Measured: BLOOM-176B 9.1%, TP 2 26.5%, TP 4 23.1%, TP 8 rows not fitted 7.8% at the
    worst."""
    keys = script.a100_fit_keys()
    errors = _errors(fitted, rows, comm, lambda m: m.model == model and m.tp == tp
                     and m.phase == "decode" and script.config_key(m) not in keys)
    assert len(errors) >= 10 and max(abs(e) for e in errors) <= TARGET


def test_prefill_at_tp2_on_the_a100_is_within_the_target(rows, fitted, comm):
    """Measured: 19.7% at the worst (batch 32 x 512)."""
    errors = _errors(fitted, rows, comm, lambda m: m.model == "Llama-2-70B" and m.tp == 2
                     and m.phase == "prefill")
    assert len(errors) == 12 and max(abs(e) for e in errors) <= TARGET


def test_the_misses_are_the_steps_of_8192_tokens(rows, fitted, comm):
    """BLOOM-176B's prefill rows outside the target are exactly its two steps of 8,192
    tokens (one prompt of 8,192, 16 of 512), which take the same time (3,593 and 3,510 ms);
    every other BLOOM-176B prefill is within 22%."""
    out = {(m.batch, m.prompt): predict(fitted, m, comm(m)) / m.latency_s - 1 for m in rows
           if m.model == "BLOOM-176B" and m.phase == "prefill"}
    assert {k for k, e in out.items() if abs(e) > TARGET} == {(1, 8192), (16, 512)}
    assert max(abs(e) for k, e in out.items() if k[0] * k[1] != 8192) < 0.22


@pytest.mark.xfail(strict=True, reason=(
    "the 30% target is missed in prefill on the A100: BLOOM-176B's two 8,192-token steps come "
    "out 34-35% fast; measured prefill throughput falls 41% from its peak (4 x 512 tokens) at "
    "8,192 tokens a step, which a cost per token cannot follow: see docs/accuracy.md"))
def test_prefill_of_the_held_out_model_on_the_a100_is_within_the_target(rows, fitted, comm):
    errors = _errors(fitted, rows, comm, lambda m: m.model == "BLOOM-176B"
                     and m.phase == "prefill")
    assert max(abs(e) for e in errors) <= TARGET


def test_calibrate_fits_what_the_script_fits(script, common, rows, fitted, tmp_path,
                                              monkeypatch):
    """As a user: the six A100 rows as a measurements CSV, the A100's published efficiencies as
    a --base profile, `netmodel calibrate --scenario h100-dgx --fit <the three overheads>`.
    The profile written is the script's (same overheads), names the A100 and the scenario
    swapped to it, and predicts the same."""
    monkeypatch.setitem(cli_main._COMMANDS, "calibrate",
                        ("netmodel.cli.calibrate", "calibrate", "Fit an engine profile."))
    keys = script.a100_fit_keys()
    lines = ["model,gpu,tp,batch,phase,prompt,context,latency_s"]
    lines += [f"{m.model},{m.gpu},{m.tp},{m.batch},{m.phase},{m.prompt or ''},"
              f"{m.context or ''},{m.latency_s}" for m in rows if script.config_key(m) in keys]
    (tmp_path / "a100.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "base.toml").write_text(script.a100_base().to_toml())
    r = CliRunner().invoke(cli_main.cli, [
        "calibrate", "--measurements", str(tmp_path / "a100.csv"), "-o",
        str(tmp_path / "a100.toml"), "--scenario", "h100-dgx", "--base",
        str(tmp_path / "base.toml"), "--fit", ",".join(common.FIT)])
    assert r.exit_code == 0, r.output
    assert "collectives: scenario h100-dgx@A100-SXM-80GB" in r.output
    mine = read_profile(tmp_path / "a100.toml")
    assert mine.gpu == "A100-SXM-80GB"
    for name in common.FIT:
        assert getattr(mine, name) == pytest.approx(getattr(fitted, name), rel=1e-6)
    m = next(m for m in rows if m.model == "BLOOM-176B" and m.phase == "decode")
    assert predict(mine, m, common.scenario_comm()(m)) == \
        pytest.approx(predict(fitted, m, common.scenario_comm()(m)), rel=1e-6)
