"""Engine profiles (the calibrated mode) and their fit: by hand, round trips, bad input."""

import math

import numpy as np
import pytest

from compute.errors import UserError
from compute.evaluate_many import evaluate_many
from compute.evaluate_one import evaluate
from compute.grid_parts import GEMM_STAGES
from compute.hardware import get_gpu
from compute.measurements import Measurement, read_measurements
from compute.profile_fit import (
    DEFAULT_FIT,
    _Components,
    fit_profile,
    leave_one_out,
    neutral_with,
    predict,
    roofline,
)
from compute.profiles import (
    PARAMETERS,
    EngineProfile,
    get_profile,
    neutral,
    profile_names,
    read_profile,
)
from compute.roofline import ring_comm
from compute.roofline_options import RooflineOptions
from compute.search import search


def calibrated_by_hand(r, p: EngineProfile, layers: int, hidden: int, tokens: int) -> float:
    """A calibrated step from the roofline's stages, written out: GEMM compute / gemm
    efficiency, attention compute / attention efficiency, every memory time / HBM fraction,
    collectives as they are, the largest of the three per stage, plus the overheads (the
    per-token one for ``tokens`` per sequence)."""
    total = 0.0
    for s in r.stages:
        ct = s.compute_time
        if s.name in GEMM_STAGES:
            ct /= p.gemm_efficiency
        elif s.name == "attention":
            ct /= p.attention_efficiency
        total += s.count * max(ct, s.memory_time / p.hbm_fraction, s.network_time)
    total += p.step_overhead_s + layers * p.layer_overhead_s
    total += r.batch * tokens * layers * hidden * p.token_overhead_s
    if r.phase == "decode":
        total += r.batch * p.decode_sequence_overhead_s
    return total


P = EngineProfile("hand", gemm_efficiency=0.5, attention_efficiency=0.25, hbm_fraction=0.8,
                  layer_overhead_s=1e-4, step_overhead_s=2e-3, decode_sequence_overhead_s=3e-5,
                  token_overhead_s=2e-11)


@pytest.mark.parametrize("model,gpu,tp,batch,phase", [
    ("Llama-3-8B", "H100-SXM", 1, 16, "decode"),
    ("Llama-3-70B", "H100-SXM", 8, 64, "decode"),
    ("Llama-3-70B", "Lite", 8, 4, "prefill"),
    ("Mixtral-8x7B", "H100-SXM", 4, 8, "prefill"),
])
def test_calibrated_step_by_hand(model, gpu, tp, batch, phase):
    """A profile's collectives are NCCL's ring (the calibrated mode's default, the model
    profiles are fitted with), not the roofline's lower bound, which is no slower."""
    base = evaluate(model, gpu, tp, batch, phase, comm=ring_comm(get_gpu(gpu)))
    cal = evaluate(model, gpu, tp, batch, phase, options=RooflineOptions(profile=P))
    from compute.models import get_model
    from compute.phases import DEFAULT_PROMPT

    mod = get_model(model)
    tokens = DEFAULT_PROMPT if phase == "prefill" else 1
    want = calibrated_by_hand(base, P, mod.layers, mod.hidden, tokens)
    assert cal.latency == pytest.approx(want, rel=1e-12)
    assert cal.profile == "hand" and cal.overhead == pytest.approx(
        2e-3 + mod.layers * 1e-4 + (batch * 3e-5 if phase == "decode" else 0)
        + batch * tokens * mod.layers * mod.hidden * 2e-11)
    split = cal.time_split()
    assert set(split) == {"compute", "memory", "network", "overhead"}
    assert sum(split.values()) == pytest.approx(cal.latency, rel=1e-12)
    assert cal.latency > base.latency   # the roofline stays below
    assert evaluate(model, gpu, tp, batch, phase).latency <= base.latency   # the bound too
    d = cal.to_dict()
    assert d["profile"] == "hand" and d["overhead_s"] == cal.overhead
    assert "profile" not in base.to_dict() and set(base.time_split()) == {"compute", "memory",
                                                                          "network"}


def test_neutral_profile_is_the_roofline_and_no_profile_changes_nothing():
    """A neutral profile is the roofline with the calibrated mode's collectives, NCCL's
    ring; without a profile the roofline's default collectives (the lower bound) are
    below it where the step all-reduces (TP 8)."""
    ring = ring_comm(get_gpu("H100-SXM"))
    for phase, batch in (("decode", 7), ("prefill", 2)):
        r = evaluate("Llama-3-70B", "H100-SXM", 8, batch, phase, comm=ring)
        n = evaluate("Llama-3-70B", "H100-SXM", 8, batch, phase,
                     options=RooflineOptions(profile=neutral()))
        assert n.latency == r.latency and n.stages == r.stages and n.overhead == 0.0
        plain = evaluate("Llama-3-70B", "H100-SXM", 8, batch, phase)
        assert evaluate("Llama-3-70B", "H100-SXM", 8, batch, phase,
                        options=RooflineOptions(profile=None)) == plain
        assert plain.latency < r.latency
    assert neutral().is_neutral and not P.is_neutral


def test_the_token_overhead_is_per_token_per_layer_per_hidden_unit_and_not_split_by_tp():
    """Llama-2-70B (80 layers, hidden 8192) at 1e-10 s per token-layer-hidden unit: 4
    prompts of 512 tokens add 2048 x 80 x 8192 x 1e-10 = 134.217728 ms, one decode step of
    4 sequences 4 x 80 x 8192 x 1e-10 = 0.262144 ms, at any TP degree (work every GPU
    does whole)."""
    p = EngineProfile("tok", token_overhead_s=1e-10)
    for tp in (2, 8):
        for phase, batch, want in (("prefill", 4, 0.134217728), ("decode", 4, 0.000262144)):
            kw = {"prompt": 512} if phase == "prefill" else {"context": 576}
            roof = evaluate("Llama-2-70B", "H100-SXM", tp, batch, phase, **kw,
                            comm=ring_comm(get_gpu("H100-SXM")))   # the calibrated mode's
            cal = evaluate("Llama-2-70B", "H100-SXM", tp, batch, phase, **kw,
                           options=RooflineOptions(profile=p))
            assert cal.overhead == pytest.approx(want, rel=1e-12)
            assert cal.latency == pytest.approx(roof.latency + want, rel=1e-12)
    # the same tokens in one prompt or in many cost the same
    assert p.overhead(80, 16, "prefill", 512, 8192) == p.overhead(80, 1, "prefill", 8192, 8192)


def test_gemm_efficiency_by_intensity_is_interpolated_in_log_intensity():
    p = EngineProfile("curve", gemm_curve=((1.0, 0.1), (100.0, 0.5), (10_000.0, 0.7)))
    assert p.gemm_efficiency_at(np.array([0.1, 1.0, 10.0, 100.0, 1000.0, 1e9])).tolist() == \
        pytest.approx([0.1, 0.1, 0.3, 0.5, 0.6, 0.7])
    # decode GEMMs (intensity ~ batch) run at the low end, prefill ones at the high end
    r = evaluate("Llama-3-8B", "H100-SXM", 1, 1, "prefill", prompt=2048,
                 options=RooflineOptions(profile=p))
    base = evaluate("Llama-3-8B", "H100-SXM", 1, 1, "prefill", prompt=2048)
    for s, b in zip(r.stages, base.stages, strict=True):
        if s.name in GEMM_STAGES:
            eff = float(p.gemm_efficiency_at(b.flops / b.hbm_bytes))
            assert s.compute_time == pytest.approx(b.compute_time / eff, rel=1e-12)
        elif s.name == "attention":
            assert s.compute_time == b.compute_time    # attention keeps its own efficiency


def test_profile_flows_through_search_and_evaluate_many():
    opts = RooflineOptions(profile=P)
    s = search("Llama-3-8B", "H100-SXM", "decode", options=opts, max_batch=64)
    b = s.best
    assert b.profile == "hand"
    assert b.latency == pytest.approx(evaluate("Llama-3-8B", "H100-SXM", b.tp, b.batch,
                                               options=opts).latency, rel=1e-12)
    e = evaluate_many("Llama-3-70B", "H100-SXM", [8, 4, 8], [1, 9, 64], options=opts)
    for i, (tp, batch) in enumerate(((8, 1), (4, 9), (8, 64))):
        r = evaluate("Llama-3-70B", "H100-SXM", tp, batch, options=opts)
        assert e.latency[i] == r.latency and e.overhead_s[i] == r.overhead
    roof = search("Llama-3-8B", "H100-SXM", "decode", max_batch=64).best
    assert roof.tokens_per_s_per_sm > b.tokens_per_s_per_sm


def test_profile_and_efficiency_factors_are_exclusive():
    with pytest.raises(UserError, match=rf"^give profile {P.name!r} or efficiency factors "
                                        r"\(flops_efficiency 0.5\), not both"):
        RooflineOptions(profile=P, flops_efficiency=0.5)
    with pytest.raises(UserError, match="EngineProfile"):
        RooflineOptions(profile="vllm-dgx-h100")


# ---- files -------------------------------------------------------------------------------

def test_shipped_profile_says_what_it_was_fitted_on():
    assert "vllm-dgx-h100" in profile_names()
    p = get_profile("vllm-dgx-h100")
    assert p.gpu == "H100-SXM" and "Llama-2-70B" in p.fitted_on and "h100-dgx" in p.collectives
    for n in PARAMETERS:                       # every number with its source
        assert p.source(n), n
    for n in p.fit[0]:
        assert p.source(n).startswith("fitted on")
    # the overheads fitted; the kernel efficiencies from published measurements (a fit on
    # one model at one TP degree cannot tell GEMM time from per-token time)
    assert p.fit[0] == ("token_overhead_s", "layer_overhead_s", "decode_sequence_overhead_s")
    assert p.gemm_efficiency == 792.1 / 989 and "792.1" in p.source("gemm_efficiency")
    assert p.attention_efficiency == 333 / 989 and "2407.08608" in p.source(
        "attention_efficiency")
    assert len(p.measurements) == 6 and all("Splitwise" in m.source for m in p.measurements)
    # decode rows at the context they were run with: 512-token prompts + 64 (mean of 128)
    assert {m.context for m in p.measurements if m.phase == "decode"} == {576}
    assert "context 576" in p.fitted_on
    # fitted: rms 17.9%, worst 30.1% (the 8192-token prompt)
    assert p.fit[1] == 6 and p.fit[2] < 0.20 and p.fit[3] < 0.35
    # the profile carries its data: the fit can be redone without ../shared
    assert {m.phase for m in p.measurements} == {"prefill", "decode"}


def test_profile_toml_round_trips(tmp_path):
    p = P.with_values({}, {n: f"{n} by hand" for n in PARAMETERS}, measurements=(
        Measurement("Llama-3-8B", "H100-SXM", 1, "decode", 4, 0.01, context=100, source="x"),))
    f = tmp_path / "p.toml"
    f.write_text(p.to_toml())
    assert read_profile(f) == p
    c = EngineProfile("c", gemm_curve=((10.0, 0.2), (1000.0, 0.6)))
    f.write_text(c.to_toml())    # a number without a source is written as "not given"
    assert read_profile(f).source("hbm_fraction") == "not given"
    assert read_profile(f).gemm_curve == c.gemm_curve
    assert get_profile(str(f)) == read_profile(f)


GOOD = """[profile]
name = "t"
[parameters.gemm_efficiency]
value = 0.5
source = "s"
"""


@pytest.mark.parametrize("text,needle", [
    (GOOD + "[extra]\na = 1\n", "unknown key(s) extra"),
    (GOOD.replace('name = "t"', 'name = "t"\ncolour = "red"'), "unknown key(s) colour"),
    (GOOD + "[parameters.speedup]\nvalue = 2\nsource = \"s\"\n", "unknown key(s) speedup"),
    (GOOD.replace("source", "sauce"), "unknown key(s) sauce"),
    (GOOD.replace('source = "s"\n', ""), "missing key(s) source"),
    (GOOD + "[parameters.layer_overhead_s]\nvalue = -1e-4\nsource = \"s\"\n",
     "[parameters.layer_overhead_s]: value must be a number from 0 to 1 s, got -0.0001"),
    (GOOD + "[parameters.step_overhead_s]\nvalue = nan\nsource = \"s\"\n",
     "value must be a number from 0 to 10 s, got nan"),
    (GOOD + "[parameters.token_overhead_s]\nvalue = -1e-11\nsource = \"s\"\n",
     "[parameters.token_overhead_s]: value must be a number from 0 to"),
    (GOOD + "[parameters.token_overhead_s]\nvalue = nan\nsource = \"s\"\n",
     "token_overhead_s]: value must be a number from 0 to"),
    (GOOD + "[parameters.token_overhead_s]\nvalue = 0.5\nsource = \"s\"\n",
     "got 0.5"),
    (GOOD.replace("0.5", "1.5"), "value must be a number from 0.0001 to 1, got 1.5"),
    (GOOD.replace("value = 0.5", "value = 0.5\nintensity = [1, 2]\nefficiency = [0.1, 0.2]"),
     "not both"),
    (GOOD.replace("value = 0.5", "intensity = [10, 1]\nefficiency = [0.1, 0.2]"),
     "intensities must increase"),
    (GOOD.replace("value = 0.5", "intensity = [1, 10]\nefficiency = [0.1]"),
     "lists of the same length"),
    (GOOD + '[[measurement]]\nmodel = "m"\ngpu = "g"\ntp = 1\nphase = "decode"\nbatch = 1\n'
     'latency_s = 0.1\n', "a decode measurement needs context"),
    ('[profile]\nname = "t"\n', "missing key(s) parameters"),
    ("[profile\n", "malformed TOML"),
])
def test_bad_profiles_are_one_line(tmp_path, text, needle):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(UserError) as exc:
        read_profile(f)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_unknown_profile_names_the_shipped_ones():
    with pytest.raises(UserError, match="unknown profile 'vllm'; known: 'vllm-dgx-h100', 'vllm-h100-2024'"):
        get_profile("vllm")


HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s,source\n"


def test_measurements_csv_reads_and_refuses_in_one_line(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("# a comment\n" + HEADER + "Llama-3-8B,H100-SXM,1,4,prefill,512,,0.05,me\n"
                 "Llama-3-8B,H100-SXM,1,4,decode,,900,0.011,\n")
    ms = read_measurements(f)
    assert [m.label() for m in ms] == ["Llama-3-8B TP 1 prefill batch 4 prompt 512",
                                       "Llama-3-8B TP 1 decode batch 4 context 900"]
    assert ms[0].latency_s == 0.05 and ms[0].source == "me" and ms[1].prompt is None
    cases = [
        ("model,gpu,tp,batch,phase,prompt,latency_ms\n", "missing column(s) latency_s"),
        (HEADER.replace("source", "colour"), "unknown column(s) colour"),
        (HEADER, "a header but no measurements"),
        ("", "holds no measurements"),
        (HEADER + "Llama-3-8B,H100-SXM,1,4,decode,,,0.01,\n", "needs context"),
        (HEADER + "Llama-3-8B,H100-SXM,1,4,prefil,512,,0.01,\n", "phase 'prefil' is unknown"),
        (HEADER + "Llama-3-8B,H100-SXM,one,4,prefill,512,,0.01,\n",
         "tp must be a whole number from 1 to 1,000,000, got 'one'"),
        (HEADER + "Llama-3-8B,H100-SXM,1,4,prefill,512,,-0.01,\n", "latency_s must be"),
        (HEADER + "Llama-3-8B,H100-SXM,1,4,prefill,512,,nan,\n", "latency_s must be"),
        (HEADER + "Llama-3-8B,H100-SXM,1,4,prefill,512,,0.01,x,y\n", "more cells"),
    ]
    for text, needle in cases:
        f.write_text(text)
        with pytest.raises(UserError) as exc:
            read_measurements(f)
        assert needle in str(exc.value) and "\n" not in str(exc.value), (text, exc.value)


# ---- fitting -----------------------------------------------------------------------------

def synthetic(truth: EngineProfile):
    """Steps of two models with different layer counts in both phases, 'measured' as the
    calibrated mode with ``truth`` gives them."""
    ms = []
    for model, tp in (("Llama-3-8B", 1), ("Llama-3-70B", 4)):
        for b in (1, 32, 128):
            ms.append(Measurement(model, "H100-SXM", tp, "decode", b, 1.0, context=1000))
        for prompt in (256, 4096):
            ms.append(Measurement(model, "H100-SXM", tp, "prefill", 1, 1.0, prompt=prompt))
    return [Measurement(**{**m.__dict__, "latency_s": predict(truth, m)}) for m in ms]


def test_fit_recovers_the_profile_that_made_the_measurements():
    truth = neutral_with(gemm_efficiency=0.6, attention_efficiency=0.3, hbm_fraction=0.85,
                         layer_overhead_s=5e-5, step_overhead_s=2e-3,
                         decode_sequence_overhead_s=4e-5, token_overhead_s=3e-11)
    ms = synthetic(truth)
    # two models (layer counts, widths, FLOPs per token): all seven can be told apart
    r = fit_profile(ms, fit=list(PARAMETERS))
    for n in PARAMETERS:
        assert getattr(r.profile, n) == pytest.approx(getattr(truth, n), rel=1e-4), n
    assert r.max_relative_error < 1e-8 and len(r.points) == len(ms)
    assert all(p.roofline_s < p.measurement.latency_s for p in r.points)
    assert r.profile.fit[0] == tuple(PARAMETERS) and r.profile.measurements == tuple(ms)


def test_components_give_what_evaluate_gives():
    for m in synthetic(P):
        c = _Components(m)
        for p in (P, neutral(), EngineProfile("c", gemm_curve=((1.0, 0.2), (1e3, 0.7)),
                                              layer_overhead_s=1e-4)):
            assert c.latency(p) == pytest.approx(predict(p, m), rel=1e-12)


def test_fit_refuses_what_the_measurements_cannot_support():
    ms = synthetic(P)
    one_model = [m for m in ms if m.model == "Llama-3-8B"]
    with pytest.raises(UserError, match=rf"cannot fit {len(PARAMETERS)} parameters .* to 5 "
                                        "measurements"):
        fit_profile(one_model, fit=list(PARAMETERS))
    with pytest.raises(UserError, match="cannot tell layer_overhead_s from step_overhead_s"):
        fit_profile(one_model, fit=["layer_overhead_s", "step_overhead_s"])
    # one model at one TP degree, every prefill step compute-bound: a GEMM's time and the
    # per-token overhead both grow with the tokens, and the per-token and per-sequence
    # overheads with the batch in decode
    with pytest.raises(UserError, match="cannot tell apart the parameters gemm_efficiency, "
                                        "token_overhead_s, decode_sequence_overhead_s"):
        fit_profile([m for m in one_model if m.phase == "decode" or m.prompt > 1000],
                    fit=["gemm_efficiency", "token_overhead_s", "decode_sequence_overhead_s"])
    prefill = [m for m in ms if m.phase == "prefill"]
    with pytest.raises(UserError, match="no measurement moves decode_sequence_overhead_s "
                                        r"\(it needs decode measurements\)"):
        fit_profile(prefill, fit=["gemm_efficiency", "decode_sequence_overhead_s"])
    r = fit_profile(prefill)         # the default set leaves it out, and says so
    assert "decode_sequence_overhead_s" not in r.fitted and r.notes
    assert set(r.fitted) < set(DEFAULT_FIT)
    with pytest.raises(UserError, match="unknown profile parameter"):
        fit_profile(ms, fit=["speed"])
    with pytest.raises(UserError, match="no measurements"):
        fit_profile([])


def test_leave_one_out_predicts_each_point_from_the_others():
    ms = synthetic(neutral_with(gemm_efficiency=0.5, attention_efficiency=0.25,
                                layer_overhead_s=1e-4, decode_sequence_overhead_s=3e-5))
    held = leave_one_out(ms)
    assert len(held) == len(ms)
    # the truth is in the default fit's family: each held-out point is predicted closely
    assert max(abs(h.error) for h in held) < 1e-3
    assert all(h.roofline_s == roofline(h.measurement) for h in held)
    assert all(math.isfinite(h.predicted_s) for h in held)


def test_components_give_what_evaluate_gives_at_other_configurations():
    """Rows with expert parallelism, data-parallel attention, a routing skew or a pipeline:
    the fit's fast path (or, pipelined, the whole evaluation) is what evaluate gives at
    that configuration, which is not the TP-only time."""
    from compute.evaluate_one import evaluate

    ms = [Measurement("Mixtral-8x7B", "H100-SXM", 8, "decode", 64, 0.02, context=1000, ep=8),
          Measurement("Mixtral-8x7B", "H100-SXM", 8, "prefill", 2, 0.05, prompt=1024, ep=4,
                      attention_dp=2, expert_skew=1.5),
          Measurement("Mixtral-8x7B", "H100-SXM", 4, "decode", 16, 0.02, context=1000, pp=2),
          Measurement("DeepSeek-V3", "H200-SXM", 8, "decode", 32, 0.05, context=1000, ep=8,
                      attention_dp=8)]
    for m in ms:
        c = _Components(m)
        for p in (P, neutral()):
            assert c.latency(p) == pytest.approx(predict(p, m), rel=1e-12)
        tokens = {"prompt": m.prompt} if m.phase == "prefill" else {"context": m.context}
        want = evaluate(m.model, m.gpu, m.tp, m.batch, m.phase, pp=m.pp, ep=m.ep,
                        attention_dp=m.attention_dp, expert_skew=m.expert_skew, **tokens)
        assert predict(None, m) == want.latency
        assert want.latency != evaluate(m.model, m.gpu, m.tp, m.batch, m.phase,
                                        **tokens).latency


def test_plain_measurements_keep_their_columns():
    """A plain-TP row writes the keys it wrote before (the shipped profile's tables)."""
    m = Measurement("Llama-2-70B", "H100-SXM", 8, "decode", 1, 0.0298, context=576)
    assert list(m.to_dict()) == ["model", "gpu", "tp", "phase", "batch", "context",
                                 "latency_s"]
    assert m.label() == "Llama-2-70B TP 8 decode batch 1 context 576"
    e = Measurement("Mixtral-8x7B", "H100-SXM", 8, "decode", 1, 0.01, context=576, ep=8)
    assert list(e.to_dict())[:4] == ["model", "gpu", "tp", "ep"]


def test_a_base_gemm_curve_is_not_fitted_over():
    """Hostile pass 219: over a base profile with a gemm_efficiency curve, --fit
    gemm_efficiency said 'no measurement moves gemm_efficiency (it needs measurements where
    GEMMs are compute-bound (prefill))' on prefill rows (the curve wins over the scalar, so
    nothing moved), and the default fit left it out with that note."""
    curve = ((1.0, 0.2), (1e3, 0.7))
    base = EngineProfile("c", gemm_curve=curve)
    ms = synthetic(P)
    assert any(m.phase == "prefill" for m in ms)
    with pytest.raises(UserError, match=r"^fit: gemm_efficiency cannot be fitted over base's "
                                        r"gemm_efficiency curve \(by arithmetic intensity\)"):
        fit_profile(ms, fit=["gemm_efficiency", "layer_overhead_s"], base=base)
    r = fit_profile(ms, base=base)
    assert "gemm_efficiency" not in r.fitted
    assert r.notes[0] == ("gemm_efficiency not fitted: the base profile gives it as a curve "
                          "by arithmetic intensity (kept)")
    assert r.profile.gemm_curve == curve
