"""The shipped profile on measurements it was not fitted on: another model (BLOOM-176B) and
other tensor-parallel degrees (Llama-2-70B at TP 2 and 4) on the same 8x H100-SXM server,
from tests/compute/data/splitwise_perf_model_medians.csv (medians of the Splitwise data file,
source in its header). The issue's target: a profile fitted on one model predicts another's
measured latencies on the same system within 30%.

The roofline is a bound and must stay below every row. The calibrated mode meets the target in
decode and misses it in prefill by one row, the 8192-token prompt (scripts/accuracy_inference.py
reports every row); the tests assert what holds and mark the miss as an expected failure, so
that a change which meets it is noticed. The profile is never fitted on these rows here.

The shipped profile was fitted with the collectives of the h100-dgx scenario, so its
predictions are checked with them (netmodel.study); the roofline with both that and the
GPU-only ring.
"""

import math
from pathlib import Path

import pytest

from compute.measurements import read_measurements
from compute.models import get_model
from compute.profile_fit import predict, roofline
from compute.profiles import get_profile

DATA = Path(__file__).parent / "data" / "splitwise_perf_model_medians.csv"
SHIPPED = get_profile("vllm-dgx-h100")
TARGET = 0.30          # the cross-model target
REFERENCE_FILE = "inference_vllm_llama2_70b_dgx_h100.csv"


@pytest.fixture(scope="module")
def rows():
    return read_measurements(DATA)


@pytest.fixture(scope="module")
def dgx():
    from netmodel.study.scenario_collectives import ScenarioCollectives

    return ScenarioCollectives("h100-dgx")


def held_out(rows, model, tp):
    return [m for m in rows if m.model == model and m.tp == tp and m.source != "fitted"]


def test_bloom_176b_is_in_the_catalog_as_published():
    m = get_model("BLOOM-176B")
    assert m.parameters == 176_247_271_424     # the bigscience/bloom model card, exactly
    h = 14336
    assert (m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, m.vocab) == \
        (70, h, 112, 112, 4 * h, 250880)
    # ALiBi (no position table), a plain GELU MLP, biases, layernorms, tied LM head
    assert (m.learned_positions, m.gated_mlp, m.bias, m.norm, m.embedding_norm,
            m.tied_embeddings) == (0, False, True, "layernorm", True, True)
    # multi-head attention: the KV cache is 2 x 70 x 14336 x 2 bytes = 4.01 MB per token,
    # 12x Llama-2-70B's (grouped, 8 KV heads)
    kv = get_model("Llama-2-70B")
    assert 2 * m.layers * m.kv_heads * m.head_dim * 2 == 4_014_080
    assert 2 * kv.layers * kv.kv_heads * kv.head_dim * 2 == 327_680


def test_the_data_file_holds_the_configurations_named_in_its_header(rows):
    sets = {(m.model, m.tp): 0 for m in rows}
    for m in rows:
        sets[(m.model, m.tp)] += 1
    # 13 configurations (batch 1-64 at prompt 512, prompt 128-8192 at batch 1) x 2 phases;
    # Llama-2-70B TP 2 at batch 64 left out (its header says why)
    assert sets == {("BLOOM-176B", 8): 26, ("Llama-2-70B", 2): 24, ("Llama-2-70B", 4): 26,
                    ("Llama-2-70B", 8): 26}
    assert all(m.gpu == "H100-SXM" for m in rows)
    # decode rows at the mean context of the 128 generated tokens: prompt + 64
    assert {m.context for m in rows if m.phase == "decode"} == \
        {p + 64 for p in (128, 256, 512, 1024, 2048, 4096, 8192)}


def test_the_fitted_rows_are_the_shipped_profiles_measurements(rows):
    """The six rows noted "fitted" are the medians the profile was fitted on (it carries
    them), at the same decode context (prompt 512 + 64)."""
    fitted = sorted((m.phase, m.batch, m.prompt, m.context or 0, m.latency_s) for m in rows
                    if m.source == "fitted")
    assert all(m.model == "Llama-2-70B" and m.tp == 8 for m in rows if m.source == "fitted")
    assert fitted == sorted((m.phase, m.batch, m.prompt, m.context or 0, m.latency_s)
                            for m in SHIPPED.measurements)


def test_the_fitted_rows_match_the_shared_reference(rows, reference_dir):
    import csv

    with open(reference_dir / REFERENCE_FILE) as fh:
        ref = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    want = sorted((r["phase"], int(r["batch"]), int(r["prompt_tokens"] or 0),
                   float(r["time_ms"]) / 1e3) for r in ref)
    got = sorted((m.phase, m.batch, m.prompt or 0, m.latency_s) for m in rows
                 if m.source == "fitted")
    assert [g[:3] for g in got] == [w[:3] for w in want]
    assert [g[3] for g in got] == pytest.approx([w[3] for w in want], rel=1e-12)


@pytest.mark.parametrize("comm", ["ring", "h100-dgx"])
def test_the_roofline_stays_below_every_held_out_row(rows, dgx, comm):
    margins = []
    for m in rows:
        t = roofline(m, dgx if comm == "h100-dgx" else None)
        assert t < m.latency_s, m.label()
        margins.append(m.latency_s / t)
    assert min(margins) > 1.5        # measured: 1.75x (ring), 1.70x (h100-dgx) at the least


@pytest.mark.parametrize("model,tp", [("BLOOM-176B", 8), ("Llama-2-70B", 2),
                                      ("Llama-2-70B", 4), ("Llama-2-70B", 8)])
def test_decode_of_a_model_or_tp_not_fitted_is_within_the_target(rows, dgx, model, tp):
    """Fitted on Llama-2-70B at TP 8 only; decode steps of BLOOM-176B (the held-out model)
    and of Llama-2-70B at TP 2 and 4 come out within 30% (measured: BLOOM-176B 7.9%,
    TP 2 17.4%, TP 4 19.4%, TP 8 rows not fitted 10.0% at the worst)."""
    errors = [predict(SHIPPED, m, dgx) / m.latency_s - 1 for m in held_out(rows, model, tp)
              if m.phase == "decode"]
    assert len(errors) >= 6 and max(abs(e) for e in errors) <= TARGET


def test_the_held_out_model_is_closer_calibrated_than_with_the_roofline(rows, dgx):
    """On every BLOOM-176B row the profile fitted on Llama-2-70B is nearer the measurement
    than the roofline (in ratio): what it learned of the engine carries over."""
    for m in held_out(rows, "BLOOM-176B", 8):
        cal = abs(math.log(predict(SHIPPED, m, dgx) / m.latency_s))
        roof = abs(math.log(roofline(m, dgx) / m.latency_s))
        assert cal < roof, m.label()


@pytest.mark.parametrize("tp,worst", [(2, 0.13), (4, 0.20)])
def test_prefill_at_other_tp_degrees_is_within_the_target(rows, dgx, tp, worst):
    """The per-token overhead is work every GPU does whole (not divided by TP), as vLLM's
    prefills show (4x the GPUs make a 16,384-token step 1.5x faster): prefill of Llama-2-70B
    at TP 2 and 4, none fitted, comes out within 30% (measured: 12.0% and 18.2% at the
    worst; with GEMM and attention efficiencies alone, +120% and +62%)."""
    errors = [predict(SHIPPED, m, dgx) / m.latency_s - 1
              for m in held_out(rows, "Llama-2-70B", tp) if m.phase == "prefill"]
    assert len(errors) >= 12 and max(abs(e) for e in errors) <= worst <= TARGET


def test_batched_prefill_follows_the_tokens_of_a_step(rows, dgx):
    """16 prompts of 512 tokens take about what one of 8192 takes (measured 812 and 845 ms for
    Llama-2-70B TP 8); so does the calibrated mode (within 5%; measured 2.5%), where a profile whose
    prefill cost grew through its attention efficiency predicted the batched steps 41-50%
    fast."""
    by = {(m.batch, m.prompt): m for m in rows if m.model == "Llama-2-70B" and m.tp == 8
          and m.phase == "prefill"}
    for many, one in (((16, 512), (1, 8192)), ((8, 512), (1, 4096)), ((4, 512), (1, 2048))):
        measured = by[many].latency_s / by[one].latency_s
        model = predict(SHIPPED, by[many], dgx) / predict(SHIPPED, by[one], dgx)
        assert 0.9 < measured < 1.0 and abs(model / measured - 1) < 0.05


@pytest.mark.xfail(strict=True, reason=(
    "the issue's 30% target is missed in prefill by one row: BLOOM-176B's 8192-token prompt "
    "comes out 31.1% fast: 175 ms of its 477 ms miss is its attention running 4.4x "
    "slower than Llama-2-70B's (ALiBi's tensor bias sends vLLM's prompts from "
    "FlashAttention-2 to xFormers' CUTLASS kernel; no published rate of that kernel to "
    "build it from: test_long_prompt_attention.py), the rest the rise of vLLM's "
    "cost per token by 31-40% at TP 8 between 2048 and 4096 tokens a step, for "
    "Llama-2-70B as for BLOOM-176B, for a cause not established (not BLOOM's LM head or "
    "GEMM shapes: test_prefill_step_size_h325.py); batched prompts of 16-64 x 512 tokens "
    "come out 21-23% fast): see docs/accuracy.md"))
def test_prefill_of_the_held_out_model_is_within_the_target(rows, dgx):
    errors = [predict(SHIPPED, m, dgx) / m.latency_s - 1
              for m in held_out(rows, "BLOOM-176B", 8) if m.phase == "prefill"]
    assert max(abs(e) for e in errors) <= TARGET
