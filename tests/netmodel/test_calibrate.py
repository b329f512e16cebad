"""`netmodel calibrate` and the calibrated mode against measured serving latencies
(../shared/reference/inference_vllm_llama2_70b_dgx_h100.csv: vLLM, Llama-2-70B, DGX-H100)."""

import csv
import json
import re

import pytest
from click.testing import CliRunner

from compute.measurements import read_measurements
from compute.profile_fit import fit_profile, leave_one_out, predict, roofline
from compute.profiles import PARAMETERS, get_profile, read_profile
from compute.roofline_options import RooflineOptions
from netmodel.cli import main as cli_main
from netmodel.study.scenario_collectives import ScenarioCollectives
from tests.netmodel.cli_helpers import one_line_error

REFERENCE_FILE = "inference_vllm_llama2_70b_dgx_h100.csv"


@pytest.fixture(autouse=True)
def _registered(monkeypatch):
    """``calibrate`` in the command registry (netmodel.cli.main lists it)."""
    monkeypatch.setitem(cli_main._COMMANDS, "calibrate",
                        ("netmodel.cli.calibrate", "calibrate",
                         "Fit an engine profile to measured latencies."))


def run(*args):
    return CliRunner().invoke(cli_main.cli, list(args))


COLUMNS = ("model", "gpu", "tp", "batch", "phase", "prompt", "context", "latency_s", "source")


def write_csv(path, measurements):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for m in measurements:
            d = m.to_dict()
            w.writerow(["" if d.get(c) is None else d.get(c) for c in COLUMNS])
    return path


SHIPPED = get_profile("vllm-dgx-h100")


def dgx(_m):
    return ScenarioCollectives("h100-dgx")


# ---- the command -----------------------------------------------------------------------

def test_calibrate_fits_prints_every_point_and_writes_the_profile(tmp_path):
    f = write_csv(tmp_path / "m.csv", SHIPPED.measurements)
    out = tmp_path / "mine.toml"
    r = run("calibrate", "--measurements", str(f), "-o", str(out), "--scenario", "h100-dgx",
            "--engine", "vLLM", "--system", "DGX-H100")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("fitted gemm_efficiency, attention_efficiency, "
                               "layer_overhead_s, decode_sequence_overhead_s to 6 measurements")
    for m in SHIPPED.measurements:      # every point with its error
        assert any(line.startswith(m.label()) and line.rstrip().endswith("%")
                   for line in lines), m.label()
    assert any(line.startswith("fit error: rms ") for line in lines)
    p = read_profile(out)
    want = fit_profile(read_measurements(f), comm_for=dgx, name="mine").profile
    assert p.values() == pytest.approx(want.values(), rel=1e-12)
    assert p.name == "mine" and p.engine == "vLLM" and p.collectives.startswith(
        "scenario h100-dgx")
    assert p.measurements == read_measurements(f) and p.fit[1] == 6
    assert all(p.source(n) for n in PARAMETERS)
    # the written profile runs the calibrated mode
    m = next(m for m in p.measurements if m.phase == "decode" and m.batch == 32)
    i = run("infer", "--model", "Llama-2-70B", "--scenario", "h100-dgx", "--tp", "8",
            "--batch", "32", "--context", str(m.context), "--profile", str(out), "--json")
    assert json.loads(i.stdout)["latency_s"] == pytest.approx(predict(p, m, dgx(m)),
                                                              rel=1e-12)


def test_calibrate_json_and_a_chosen_parameter_set(tmp_path):
    f = write_csv(tmp_path / "m.csv", SHIPPED.measurements)
    out = tmp_path / "p.toml"
    r = run("calibrate", "--measurements", str(f), "-o", str(out), "--fit",
            "gemm_efficiency,layer_overhead_s", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["fitted"] == ["gemm_efficiency", "layer_overhead_s"]
    assert d["collectives"] == "ring alpha-beta over scale-up bandwidth"
    assert len(d["points"]) == 6 and d["parameters"]["attention_efficiency"] == 1.0
    assert max(abs(p["error"]) for p in d["points"]) == pytest.approx(
        d["max_relative_error"])
    for p in d["points"]:
        assert p["error"] == pytest.approx(p["predicted_s"] / p["latency_s"] - 1)
        assert p["roofline_s"] < p["latency_s"]


def test_calibrate_refuses_in_one_line_and_writes_nothing(tmp_path):
    ms = SHIPPED.measurements
    f = write_csv(tmp_path / "m.csv", ms)
    few = write_csv(tmp_path / "few.csv", ms[:3])
    out = tmp_path / "p.toml"
    args = ["calibrate", "-o", str(out), "--measurements"]
    one_line_error(run(*args, str(few), "--fit", "gemm_efficiency,attention_efficiency,"
                       "layer_overhead_s,decode_sequence_overhead_s"),
                   "cannot fit 4 parameters", "to 3 measurements")
    one_line_error(run(*args, str(f), "--fit", ",".join(PARAMETERS)),
                   f"cannot fit {len(PARAMETERS)} parameters", "to 6 measurements")
    six = [n for n in PARAMETERS if n != "token_overhead_s"]
    one_line_error(run(*args, str(f), "--fit", ",".join(six)),
                   "cannot tell layer_overhead_s from step_overhead_s")
    # one model at one TP degree: GEMM time and the per-token overhead both follow tokens
    one_line_error(run(*args, str(f), "--fit", "gemm_efficiency,token_overhead_s,"
                       "layer_overhead_s,decode_sequence_overhead_s"),
                   "cannot tell apart the parameters gemm_efficiency, token_overhead_s")
    prefill = write_csv(tmp_path / "prefill.csv", [m for m in ms if m.phase == "prefill"])
    one_line_error(run(*args, str(prefill), "--fit", "decode_sequence_overhead_s"),
                   "no measurement moves decode_sequence_overhead_s")
    one_line_error(run(*args, str(f), "--fit", "speed"), "unknown profile parameter(s) speed")
    (tmp_path / "cols.csv").write_text("model,gpu,tp,batch,phase,latency_ms\n"
                                       "Llama-2-70B,H100-SXM,8,1,decode,29.8\n")
    one_line_error(run(*args, str(tmp_path / "cols.csv")), "missing column(s) latency_s")
    one_line_error(run(*args, str(tmp_path / "absent.csv")), "does not exist")
    # latencies in ms (or us) under latency_s: a unit slip, not a slow engine
    from dataclasses import replace as _replace
    ms_file = write_csv(tmp_path / "ms.csv", [_replace(m, latency_s=m.latency_s * 1e3)
                                               for m in ms])
    one_line_error(run(*args, str(ms_file)), "ms.csv: row 2 (Llama-2-70B TP 8",
                   "x the roofline's", "latency_s is in seconds (a value in ms?)")
    us_file = write_csv(tmp_path / "us.csv", [_replace(m, latency_s=m.latency_s * 1e-3)
                                               for m in ms])
    one_line_error(run(*args, str(us_file)), "a value in a smaller unit than seconds?")
    one_line_error(run(*args, str(f), "--base", "nope"), "unknown profile 'nope'")
    assert not out.exists()
    one_line_error(run("calibrate", "--measurements", str(f), "-o",
                       str(tmp_path / "no" / "p.toml")), "does not exist")
    one_line_error(run("calibrate", "--measurements", str(f), "-o", str(tmp_path / "p.txt")),
                   "must end in one of: .toml")
    assert not list(tmp_path.glob("*.toml"))


def test_calibrate_refuses_a_step_that_cannot_fit_in_the_gpus_hbm(tmp_path):
    """Llama-2-70B at TP 1: 68.98e9 params x 2 bytes = 137.95 GB of weights on one H100-SXM of
    85.52 GB (81,559 MiB) could not have run; the old fit took it and exited 0. A step that
    fits only in the reserve the roofline leaves to the runtime (TP 2, batch 64 at context
    1,000: 68.98 + 64 x 1,000 x 80 x 2 x 4 x 128 x 2 B = 10.49 GB = 79.47 GB > 76.97 GB
    usable, < 85.52 GB) was measured, so it is kept."""
    head = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
    tp1 = tmp_path / "tp1.csv"
    tp1.write_text(head + "Llama-2-70B,H100-SXM,1,1,decode,,576,0.09\n"
                   "Llama-2-70B,H100-SXM,1,2,decode,,576,0.1\n")
    one_line_error(run("calibrate", "--measurements", str(tp1), "-o", str(tmp_path / "a.toml"),
                       "--fit", "layer_overhead_s"),
                   "tp1.csv: row 2 (Llama-2-70B TP 1 decode batch 1 context 576 on H100-SXM) "
                   "cannot have run", "weights alone need 138.0 GB per GPU at TP 1 > 85.5 GB")
    assert not (tmp_path / "a.toml").exists()
    full = tmp_path / "full.csv"
    full.write_text(head + "Llama-2-70B,H100-SXM,2,64,decode,,1000,0.06\n"
                    "Llama-2-70B,H100-SXM,2,1,decode,,1000,0.05\n")
    r = run("calibrate", "--measurements", str(full), "-o", str(tmp_path / "b.toml"),
            "--fit", "layer_overhead_s")
    assert r.exit_code == 0, r.output


def test_calibrate_on_several_gpus_names_each_ones_collectives_and_row(tmp_path):
    """Rows on two GPUs with --scenario are costed on the scenario swapped to each GPU; the
    old header and profile named only the first GPU in sorted order ('collectives: scenario
    h100-dgx@B200-HGX' for B200 and H100 rows) and the table printed the two rows under one
    label. The H100 row's roofline is the same step alone on h100-dgx@H100-SXM."""
    f = tmp_path / "two.csv"
    f.write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
                 "Llama-3-70B,H100-SXM,8,1,decode,,1000,0.025\n"
                 "Llama-3-70B,B200-HGX,8,1,decode,,1000,0.015\n")
    out = tmp_path / "two.toml"
    r = run("calibrate", "--measurements", str(f), "-o", str(out), "--fit",
            "layer_overhead_s", "--scenario", "h100-dgx")
    assert r.exit_code == 0, r.output
    both = "scenario h100-dgx@B200-HGX, scenario h100-dgx@H100-SXM"
    assert r.output.splitlines()[0].endswith(f"collectives: {both}")
    assert read_profile(out).collectives == both
    rows = [ln for ln in r.output.splitlines() if ln.startswith("Llama-3-70B TP 8")]
    assert [ln.split(" on ")[1].split()[0] for ln in rows] == ["H100-SXM", "B200-HGX"]
    alone = run("calibrate", "--measurements", str(f), "-o", str(tmp_path / "one.toml"),
                "--fit", "layer_overhead_s", "--scenario", "h100-dgx@H100-SXM")
    assert alone.exit_code == 0
    assert rows[0].split()[-3] == [ln for ln in alone.output.splitlines()
                                   if ln.startswith("Llama-3-70B")][0].split()[-3]


def test_calibrate_takes_the_gpus_of_its_gpu_file(tmp_path):
    """--gpu-file was read for the collectives only; the fit looked the measurements' GPU up
    in the catalog and stopped at "unknown GPU 'MyGPU'" (exit 2). MyGPU is an H100-SXM with
    1.2x its HBM bandwidth (4.02 TB/s): Llama-3-70B at TP 8, batch 1, decode reads its
    141.1 GB of weights / 8 = 17.64 GB per GPU in 4.39 ms there (5.27 ms on 3.35 TB/s); the
    roofline is infer's for the same step with the calibrated mode's collectives (NCCL's
    ring, as infer --profile costs them) and the fitted profile reproduces its fit."""
    from compute.evaluate_one import evaluate
    from compute.hardware import load_gpu_file
    from compute.roofline import ring_comm

    gf = tmp_path / "g.toml"
    gf.write_text('[gpu.MyGPU]\nderive_from = "H100-SXM"\nsource = "test"\nhbm_bandwidth_multiplier = 1.2\n')
    f = tmp_path / "my.csv"
    f.write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
                 "Llama-3-70B,MyGPU,8,1,decode,,1000,0.025\n"
                 "Llama-3-70B,MyGPU,8,8,decode,,1000,0.03\n")
    out = tmp_path / "my.toml"
    r = run("calibrate", "--measurements", str(f), "-o", str(out), "--gpu-file", str(gf),
            "--fit", "layer_overhead_s", "--json")
    assert r.exit_code == 0, r.output
    points = json.loads(r.output)["points"]
    spec = load_gpu_file(gf)["MyGPU"]
    assert spec.hbm_bandwidth == pytest.approx(1.2 * 3.35e12, rel=1e-3)
    step = evaluate("Llama-3-70B", spec, 8, 1, "decode", context=1000, comm=ring_comm(spec))
    assert points[0]["roofline_s"] == step.latency
    weights = step.memory.weights
    assert weights == pytest.approx(70.55e9 * 2 / 8, rel=1e-3)
    assert step.latency > weights / spec.hbm_bandwidth == pytest.approx(4.39e-3, rel=1e-2)
    for p, batch in zip(points, (1, 8), strict=True):
        again = evaluate("Llama-3-70B", spec, 8, batch, "decode", context=1000,
                         options=RooflineOptions(profile=read_profile(out)))
        assert again.latency == pytest.approx(p["predicted_s"], rel=1e-12)


def test_infer_says_when_a_profile_was_fitted_with_other_collectives(tmp_path):
    """A profile fitted with the collectives of h100-dgx reproduces its own points only
    there: its overheads absorbed that fabric's all-reduces. Llama-2-70B TP 8 decode batch 32
    at 576: 39.56 ms on h100-dgx (the fit's point), 41.34 ms on the default ring, where the
    old output gave no hint that the run differs from the fit."""
    f = write_csv(tmp_path / "m.csv", SHIPPED.measurements)
    out = tmp_path / "mine.toml"
    assert run("calibrate", "--measurements", str(f), "-o", str(out), "--scenario",
               "h100-dgx").exit_code == 0
    step = ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch",
            "32", "--phase", "decode", "--context", "576", "--profile", str(out)]
    same = run(*step, "--scenario", "h100-dgx")
    ring = run(*step)
    # each the roofline under the fitted profile with its own collectives (39.56 and 41.34
    # ms when written; h356: was a pin of both)
    from compute.evaluate_one import evaluate
    from compute.units import format_time

    def tbt(**comm):
        return evaluate("Llama-2-70B", "H100-SXM", 8, 32, "decode", context=576,
                        options=RooflineOptions(profile=read_profile(out)), **comm).latency

    fit, other = tbt(comm=ScenarioCollectives("h100-dgx")), tbt()
    assert format_time(fit) != format_time(other)
    assert f"TBT {format_time(fit)} " in same.output and "note:" not in same.output
    assert f"TBT {format_time(other)} " in ring.output
    assert ("note: profile mine was fitted with collectives scenario h100-dgx@H100-SXM, not "
            "this run's ring alpha-beta over scale-up bandwidth") in ring.output
    # the shipped profile says "scenario h100-dgx": the same scenario, whatever its GPU (no
    # note of other collectives; one of the GPU it was fitted on). --gpu H100-SXM beside
    # NAME@H200-SXM, refused since, had run the H100 without a word
    on_h200 = [a for a in step[:-2] if a not in ("--gpu", "H100-SXM")]
    shipped = run(*on_h200, "--profile", "vllm-dgx-h100", "--scenario", "h100-dgx@H200-SXM")
    assert shipped.exit_code == 0 and "on 8 x H200-SXM" in shipped.output
    assert "fitted with collectives" not in shipped.output


def test_bad_profile_files_are_one_line_on_infer(tmp_path):
    good = SHIPPED.to_toml()
    cases = [(good.replace("[fit]", "[fit]\ncolour = 1"), "unknown key(s) colour"),
             (good.replace("value = 0.0\n", "value = -0.001\n", 1),
              "step_overhead_s]: value must be a number from 0 to 10 s, got -0.001"),
             (good.replace("value = 0.0\n", "value = nan\n", 1), "got nan")]
    for text, needle in cases:
        f = tmp_path / "p.toml"
        f.write_text(text)
        one_line_error(run("infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8",
                           "--batch", "1", "--profile", str(f)), needle)


# ---- against the measurements ------------------------------------------------------------

@pytest.fixture(scope="module")
def reference(reference_dir):
    """The reference rows as the shipped profile holds them (decode context 576: the
    512-token prompts they were run with, + 64)."""
    with open(reference_dir / REFERENCE_FILE) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    assert len(rows) == len(SHIPPED.measurements)
    for r, m in zip(rows, SHIPPED.measurements, strict=True):   # copied with their source
        assert (m.model, m.tp, m.phase, m.batch) == ("Llama-2-70B", int(r["tp"]), r["phase"],
                                                     int(r["batch"]))
        assert m.latency_s == pytest.approx(float(r["time_ms"]) / 1e3, rel=1e-15)
        assert m.prompt == (int(r["prompt_tokens"]) if r["phase"] == "prefill" else None)
        assert r["note"] in m.source and "Splitwise" in m.source
    return SHIPPED.measurements


@pytest.mark.parametrize("comm", [None, "h100-dgx"])
def test_the_roofline_stays_below_every_measured_latency(reference, comm):
    margins = []
    for m in reference:
        t = roofline(m, dgx(m) if comm else None)
        assert t < m.latency_s, m.label()
        margins.append(m.latency_s / t)
    # the roofline is a bound 2-5x below vLLM (the issue: decode batch 1 is 29.8 ms measured
    # against 9.4 ms with the ring)
    assert min(margins) > 2.0
    if comm is None:   # (9.4 ms when written; h363: was a pin of it) by hand:
        assert roofline(reference[3]) == pytest.approx(_llama2_70b_tp8_decode_b1(), rel=1e-3)


def _llama2_70b_tp8_decode_b1() -> float:
    """Llama-2-70B decode, batch 1, context 576, TP 8 on H100s with the default ring, by
    hand: each GPU reads its eighth of the weights and KV cache at 3.35 TB/s (the
    activations, a few MB, left out: under 0.1%), then 161 all-reduces of the 8,192-wide
    BF16 activation (the embedding's and 2 a layer; the LM head's all-gather hides behind
    its read) on the ring, 2 x 7 steps of 1.9 us and 2 x 7/8 x 16 KiB over NVLink's
    450 GB/s x 0.92 (compute.comm.RingAlphaBeta's defaults)."""
    h, kv, ffn, layers, vocab, tp, bf16 = 8192, 8 * 128, 28672, 80, 32000, 8, 2
    layer = (h * (h + 2 * kv) + h * h + 3 * h * ffn) * bf16 / tp   # qkv, out, gate/up/down
    cache = 576 * 2 * kv * bf16 / tp                               # K and V, 576 tokens
    read = (layers * (layer + cache) + vocab * h * bf16 / tp) / 3.35e12
    ring = 2 * 7 * 1.9e-6 + 2 * 7 / 8 * h * bf16 / (450e9 * 0.92)
    return read + (1 + 2 * layers) * ring


def test_the_shipped_profile_fits_the_measurements(reference):
    """Three overheads fitted to six rows: decode within 6%, prefill within 31% (a cost per
    token cannot follow both the 2048-token steps, +21% and +23%, and the 8192-token one,
    -30%: vLLM's measured cost per token nearly doubles between 2048 and 4096 tokens per
    step)."""
    errors = [predict(SHIPPED, m, dgx(m)) / m.latency_s - 1 for m in reference]
    assert max(abs(e) for m, e in zip(reference, errors, strict=True)
               if m.phase == "decode") < 0.06              # fitted: worst 5.5%
    assert max(abs(e) for e in errors) < 0.31              # fitted: worst 30.1%
    assert (sum(e * e for e in errors) / len(errors)) ** 0.5 < 0.18   # rms 17.9%
    # from the package's own copy, the same recipe: its fitted parameters, the others kept
    again = fit_profile(reference, fit=SHIPPED.fit[0], base=SHIPPED, comm_for=dgx)
    assert again.max_relative_error < 0.31
    # fitted with h100-dgx's collectives as they are: if their model moved, fit it again
    assert again.profile.values() == pytest.approx(SHIPPED.values(), rel=0.10, abs=1e-7), \
        ("h100-dgx's collectives moved: run python scripts/accuracy_inference.py "
         "--write-profile compute/data/profiles/vllm-dgx-h100.toml")


def test_held_out_batches_and_phases(reference):
    """Each measurement predicted by a profile fitted on the other five (the shipped recipe).
    The reference has one model, so batches and phases are held out instead of a model.
    Decode at batch 32 and 64 comes out within 3% from the rest; the others miss: with
    three prefill rows that a cost per token fits to +-30% at best, leaving one out moves the
    overheads (measured: prefill +31%, +36%, -45%; decode batch 1 -51%, its per-layer
    overhead then set by the prefill rows). tests/compute/test_profile_crossmodel.py holds
    the larger held-out check (76 rows of another model and other TP degrees)."""
    held = leave_one_out(reference, fit=SHIPPED.fit[0], base=SHIPPED, comm_for=dgx)
    by = {(h.measurement.phase, h.measurement.batch, h.measurement.prompt): h.error
          for h in held}
    assert abs(by[("decode", 32, None)]) < 0.03 and abs(by[("decode", 64, None)]) < 0.03
    assert -0.60 < by[("decode", 1, None)] < -0.40                  # measured -51.2%
    assert 0.25 < by[("prefill", 1, 2048)] < 0.40 and 0.25 < by[("prefill", 4, 512)] < 0.45
    assert -0.55 < by[("prefill", 1, 8192)] < -0.35                 # measured -44.7%


# ---- measurements at other configurations than plain TP (pp, ep, attention_dp columns) ----

MOE_HEAD = "model,gpu,tp,batch,phase,prompt,context,latency_s,pp,ep,attention_dp,expert_skew\n"


def test_calibrate_evaluates_each_row_at_its_own_configuration(tmp_path):
    """Mixtral-8x7B at TP 8 x EP 8 (and x DP-attention 2, and EP 8 with a routing skew of
    1.5): each row's roofline is what `netmodel infer --ep 8 ...` gives, not the TP-only
    time every row got before (5.706 ms for the first row, 5.645 ms at EP 8: the
    old code had no ep column and refused the file)."""
    from compute.evaluate_one import evaluate
    from compute.hardware import get_gpu
    from compute.roofline import ring_comm

    RING = ring_comm(get_gpu("H100-SXM"))   # noqa: N806 (the calibrated mode's collectives)

    rows = [("decode", 64, "", 1000, 1, 8, 1, 1.0, 0.020),
            ("prefill", 1, 2048, "", 1, 8, 1, 1.0, 0.050),
            ("decode", 16, "", 1000, 1, 8, 2, 1.0, 0.015),
            ("decode", 32, "", 1000, 1, 8, 1, 1.5, 0.018),
            ("decode", 1, "", 1000, 2, 1, 1, 1.0, 0.020)]
    f = tmp_path / "moe.csv"
    f.write_text(MOE_HEAD + "".join(
        f"Mixtral-8x7B,H100-SXM,{4 if pp > 1 else 8},{b},{ph},{pr},{cx},{lat},{pp},{ep},{adp},"
        f"{sk}\n" for ph, b, pr, cx, pp, ep, adp, sk, lat in rows))
    r = run("calibrate", "--measurements", str(f), "-o", str(tmp_path / "moe.toml"), "--json",
            "--fit", "layer_overhead_s,gemm_efficiency")
    assert r.exit_code == 0, r.output
    points = json.loads(r.output)["points"]
    for p, (ph, b, pr, cx, pp, ep, adp, sk, _) in zip(points, rows, strict=True):
        tp = 4 if pp > 1 else 8
        tokens = {"prompt": pr} if ph == "prefill" else {"context": cx}
        want = evaluate("Mixtral-8x7B", "H100-SXM", tp, b, ph, pp=pp, ep=ep, attention_dp=adp,
                        expert_skew=sk, **tokens, comm=RING).latency   # the calibrated mode's
        plain = evaluate("Mixtral-8x7B", "H100-SXM", tp, b, ph, **tokens, comm=RING).latency
        assert p["roofline_s"] == pytest.approx(want, rel=1e-12)
        assert abs(p["roofline_s"] / plain - 1) > 1e-4          # not the TP-only time
        assert (p.get("pp", 1), p.get("ep", 1), p.get("attention_dp", 1),
                p.get("expert_skew", 1)) == (pp, ep, adp, sk)
    # (5.645 ms for the first row when written; h356: was a pin of it, the loop above
    # checks every row against infer's costing)
    # the profile keeps each row's configuration, and reads back
    prof = read_profile(tmp_path / "moe.toml")
    assert [(m.pp, m.ep, m.attention_dp, m.expert_skew) for m in prof.measurements] == \
        [(pp, ep, adp, sk) for _, _, _, _, pp, ep, adp, sk, _ in rows]
    assert "TP 4 x PP 2, TP 8 x EP 8, TP 8 x EP 8 x DP-attention 2" in prof.fitted_on
    # and the table names each row's configuration
    r = run("calibrate", "--measurements", str(f), "-o", str(tmp_path / "moe2.toml"),
            "--fit", "layer_overhead_s,gemm_efficiency")
    assert "Mixtral-8x7B TP 8 x EP 8 x DP-attention 2 decode batch 16 context 1000" in r.output
    assert "Mixtral-8x7B TP 8 x EP 8 decode batch 32 context 1000 expert skew 1.5" in r.output


def test_a_pipelined_row_holds_what_its_stages_hold(tmp_path):
    """Llama-3.1-405B (FP8) on H100-SXM: 60.90 GB of weights per GPU at TP 8, so 121.8 GB at
    TP 4, above the 85.52 GB of HBM: a TP 4 row is refused as it was; at TP 4 x PP 2 each
    stage holds half the layers, 121.8 / 2 = 60.9 GB, and the row is taken (the old code had
    no pp column). TP 2 x PP 2 holds 121.8 GB again and is refused, naming it."""
    head = "model,gpu,tp,batch,phase,prompt,context,latency_s,pp\n"
    ok = tmp_path / "pp.csv"
    ok.write_text(head + "Llama-3.1-405B,H100-SXM,4,1,decode,,576,0.1,2\n"
                  "Llama-3.1-405B,H100-SXM,4,8,decode,,576,0.12,2\n")
    r = run("calibrate", "--measurements", str(ok), "-o", str(tmp_path / "a.toml"), "--json",
            "--fit", "layer_overhead_s")
    assert r.exit_code == 0, r.output
    from compute.evaluate_one import evaluate
    from compute.hardware import get_gpu
    from compute.roofline import ring_comm

    got = json.loads(r.output)["points"][0]
    want = evaluate("Llama-3.1-405B", "H100-SXM", 4, 1, "decode", pp=2, context=576,
                    comm=ring_comm(get_gpu("H100-SXM")))   # the calibrated mode's collectives
    assert got["roofline_s"] == pytest.approx(want.latency, rel=1e-12)
    assert want.memory.weights == pytest.approx(60.90e9, rel=1e-3)
    bad = tmp_path / "pp2.csv"
    bad.write_text(head + "Llama-3.1-405B,H100-SXM,2,1,decode,,576,0.1,2\n"
                   "Llama-3.1-405B,H100-SXM,4,1,decode,,576,0.1,\n")
    one_line_error(run("calibrate", "--measurements", str(bad), "-o", str(tmp_path / "b.toml"),
                       "--fit", "layer_overhead_s"),
                   "pp2.csv: row 2 (Llama-3.1-405B TP 2 x PP 2 decode batch 1 context 576 on "
                   "H100-SXM) cannot have run", "121.8 GB per GPU", "check its model, gpu and "
                   "configuration")
    assert not (tmp_path / "b.toml").exists()


@pytest.mark.parametrize("column, value, needles", [
    # an EP that does not divide the experts places redundant copies; these divide no TP 8
    ("ep", "3", ["row 3 (Mixtral-8x7B TP 8 x EP 3 decode batch 16 context 1000 on "
                 "H100-SXM): EP degree 3 does not divide TP degree 8"]),
    ("ep", "16", ["EP degree 16 does not divide TP degree 8"]),
    ("ep", "4", []),                          # divides both: taken
    ("pp", "3", []),                          # uneven stages (11 + 11 + 10): taken
    ("pp", "33", ["row 3 (", "PP degree 33 exceeds the 32 layers of Mixtral-8x7B; "
                  "allowed: 1 to 32"]),
    ("attention_dp", "3", ["attention DP degree 3 does not divide TP degree 8"]),
    ("pp", "0", ["row 3: pp must be a whole number from 1 to 1,000,000, got 0"]),
    ("ep", "-1", ["row 3: ep must be a whole number from 1 to 1,000,000, got -1"]),
    ("attention_dp", "nan", ["row 3: attention_dp must be a whole number from 1", "got nan"]),
    ("pp", "1.5", ["row 3: pp must be a whole number from 1 to 1,000,000, got 1.5"]),
    ("ep", "two", ["row 3: ep must be a whole number from 1 to 1,000,000, got 'two'"]),
    ("expert_skew", "0.5", ["row 3: expert_skew must be a number from 1 to 1,000,000, got "
                            "0.5"]),
    ("expert_skew", "nan", ["row 3: expert_skew must be a number from 1", "got nan"]),
])
def test_calibrate_refuses_bad_configuration_values(tmp_path, column, value, needles):
    f = tmp_path / "bad.csv"
    f.write_text(f"model,gpu,tp,batch,phase,prompt,context,latency_s,{column}\n"
                 "Mixtral-8x7B,H100-SXM,8,64,decode,,1000,0.02,\n"
                 f"Mixtral-8x7B,H100-SXM,8,16,decode,,1000,0.015,{value}\n")
    r = run("calibrate", "--measurements", str(f), "-o", str(tmp_path / "p.toml"),
            "--fit", "layer_overhead_s")
    if not needles:
        assert r.exit_code == 0, r.output
        return
    one_line_error(r, *needles)
    assert not (tmp_path / "p.toml").exists()


def test_ep_on_a_dense_model_and_a_stage_wider_than_the_gpus_domain(tmp_path):
    head = "model,gpu,tp,batch,phase,prompt,context,latency_s,ep,attention_dp\n"
    f = tmp_path / "dense.csv"
    f.write_text(head + "Llama-2-70B,H100-SXM,8,1,decode,,576,0.03,2,\n")
    one_line_error(run("calibrate", "--measurements", str(f), "-o", str(tmp_path / "p.toml"),
                       "--fit", "layer_overhead_s"),
                   "EP degree 2 needs a mixture-of-experts model; Llama-2-70B is dense")
    # TP 16 on an 8-GPU NVLink domain without EP: refused as infer refuses it
    f.write_text(head + "Llama-2-70B,H100-SXM,16,1,decode,,576,0.03,,\n")
    one_line_error(run("calibrate", "--measurements", str(f), "-o", str(tmp_path / "p.toml"),
                       "--fit", "layer_overhead_s"), "dense.csv: row 2 (Llama-2-70B TP 16 ",
                   "TP degree 16")


def test_the_columns_are_declared_once():
    """The parser's columns are those the --help, the docs and the errors list."""
    from pathlib import Path

    from compute.measurements import MEASUREMENT_COLUMNS

    root = Path(__file__).resolve().parents[2]
    help_text = " ".join(run("calibrate", "--help").output.split())
    for c in sum(MEASUREMENT_COLUMNS, ()):
        assert c in help_text, c
        for page in ("docs/compute.md", "docs/accuracy.md"):
            text = " ".join((root / page).read_text().split())
            assert re.search(rf"[`\s,/]{c}[`\s,/)]", text), (page, c)
