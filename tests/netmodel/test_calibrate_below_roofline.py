"""A measured step under its roofline is one no profile reaches (the calibrated mode only
adds time: efficiencies <= 1, overheads >= 0): the fit says which rows, measured against
roofline, in its result, ``calibrate --json`` and one warning on stderr, and writes the
profile all the same (FP8 steps fitted to a bf16 model may be meant). Before, rows at
0.1-0.16x the roofline were fitted without a word (fit error 778%).

The roofline of Llama-3-8B decode, batch 1, context 1, TP 1 on H100-SXM, by hand: every
weight but the embedding table is read once, per layer q 4096 x 4096, k and v 2 x 4096 x
1024, o 4096 x 4096 and the gated MLP 3 x 4096 x 14336 (218,103,808 parameters) over 32
layers, plus the LM head 128,256 x 4096: 7,504,658,432 bf16 parameters, 15.009 GB at the
H100-SXM's 3.35 TB/s: 4.4804 ms (the model's 4.482 ms adds the norms, one token's KV cache
and activations, 0.03%). Measured at 2.24 ms, as FP8 weights would run it: 0.50x.
"""

import json

import pytest
from click.testing import CliRunner

from compute.measurements import Measurement
from compute.profile_fit import BELOW_ROOFLINE_TOLERANCE, fit_profile
from netmodel.cli import main as cli_main

PARAMS = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 128256 * 4096
BY_HAND_S = 2 * PARAMS / 3.35e12

CSV = ("model,gpu,tp,batch,phase,context,latency_s\n"
       "Llama-3-8B,H100-SXM,1,1,decode,1,0.00224\n"     # 0.50x: below
       "Llama-3-8B,H100-SXM,1,64,decode,1000,0.0150\n"  # 2.1x its 7.07 ms
       "Llama-3-8B,H100-SXM,1,8,decode,1,0.00446\n")    # 0.993x: within rounding


@pytest.fixture(autouse=True)
def _registered(monkeypatch):
    monkeypatch.setitem(cli_main._COMMANDS, "calibrate",
                        ("netmodel.cli.calibrate", "calibrate",
                         "Fit an engine profile to measured latencies."))


def test_hand_roofline():
    assert PARAMS == 7_504_658_432
    assert BY_HAND_S == pytest.approx(4.4804e-3, rel=1e-4)


def _ms(*latencies):
    return [Measurement("Llama-3-8B", "H100-SXM", 1, "decode", b, s, context=c)
            for (b, c), s in zip(((1, 1), (64, 1000), (8, 1)), latencies, strict=False)]


def test_fit_result_names_the_rows_under_the_roofline():
    r = fit_profile(_ms(2.24e-3, 15.0e-3, 4.46e-3), fit=["layer_overhead_s"])
    (k, p), = r.below_roofline
    assert k == 1
    assert p.roofline_s == pytest.approx(BY_HAND_S, rel=1e-3)
    assert p.measurement.latency_s / p.roofline_s == pytest.approx(2.24e-3 / BY_HAND_S,
                                                                   rel=1e-3)
    # batch 8 at 4.46 ms is 0.993x its 4.491 ms: under by less than the tolerance
    assert 1 - BELOW_ROOFLINE_TOLERANCE < 4.46e-3 / r.points[2].roofline_s < 1
    w = r.below_roofline_warning()
    assert w.startswith("warning: 1 of 3 measurements lies below the roofline")
    assert ("measurement 1 (Llama-3-8B TP 1 decode batch 1 context 1 on H100-SXM) 2.24 ms "
            "measured vs 4.482 ms roofline (0.50x)") in w
    assert "smaller dtype than the model's" in w and "\n" not in w
    # at 4.40 ms (0.98x) batch 8 is under too; none under: no warning
    assert [k for k, _ in fit_profile(_ms(2.24e-3, 15.0e-3, 4.40e-3),
                                      fit=["layer_overhead_s"]).below_roofline] == [1, 3]
    ok = fit_profile(_ms(9.0e-3, 15.0e-3), fit=["layer_overhead_s"])
    assert ok.below_roofline == () and ok.below_roofline_warning() == ""


def test_calibrate_warns_on_stderr_and_writes_the_profile(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text(CSV)
    out = tmp_path / "p.toml"
    args = ["calibrate", "--measurements", str(f), "-o", str(out), "--fit",
            "layer_overhead_s"]
    r = CliRunner().invoke(cli_main.cli, args)
    assert r.exit_code == 0, r.output
    assert out.exists()
    assert "warning" not in r.stdout
    line, = r.stderr.splitlines()
    assert line.startswith("warning: 1 of 3 measurements lies below the roofline")
    assert f"{f}: row 2 (Llama-3-8B TP 1 decode batch 1 context 1 on H100-SXM) 2.24 ms " \
           f"measured vs 4.482 ms roofline (0.50x)" in line
    r = CliRunner().invoke(cli_main.cli, args + ["--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    below, = doc["below_roofline"]
    assert below["point"] == 0 and below["origin"] == f"{f}: row 2"
    assert below["ratio"] == pytest.approx(2.24e-3 / BY_HAND_S, rel=1e-3)
    assert r.stderr.startswith("warning: 1 of 3")
