"""Pipeline, attention data and expert parallelism: the degenerate cases equal plain tensor
parallelism exactly, message sizes and step times derived by hand, the memory-bound limit a
Lite reaches without KV replication, the vectorised search against single evaluations, and
one-line errors for impossible degrees."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.comm import NoCommunication, RingAlphaBeta
from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import get_model
from compute.parallel import Parallelism, check_parallelism, configurations, kv_copies
from compute.phases import Workload
from compute.roofline import EXTENDED_STAGES, STAGES, evaluate_grid
from compute.search import search
from tests.compute.step_helpers import dp_gather_ops

P = Parallelism
FREE = NoCommunication()


def stage(result, name):
    return next(s for s in result.stages if s.name == name)


def same_row(ext, i, plain, j=0):
    """Row ``i`` of an extended grid equals row ``j`` of a plain grid, bit for bit."""
    for f in ("latency", "weights", "kv_cache", "activations", "fits"):
        assert np.array_equal(getattr(ext, f)[i], getattr(plain, f)[j]), f
    for b in range(len(plain.batches)):
        assert ext.result(i, b).to_dict() == plain.result(j, b).to_dict()


@pytest.mark.parametrize("phase", ["prefill", "decode"])
@pytest.mark.parametrize("model, gpu, other", [
    ("Llama-3-70B", "Lite", P(8, pp=2)),              # PP with one stage is no PP
    ("Llama-3-70B", "Lite", P(16, attention_dp=2)),   # DP attention of 1 is TP
    ("DeepSeek-V3", "H200-SXM", P(8, attention_dp=8)),  # ... with latent attention too
    ("Mixtral-8x7B", "Lite", P(8, ep=8)),             # EP of 1 is the dense expert path
    ("DeepSeek-V3", "H200-SXM", P(8, ep=4, attention_dp=2)),
])
def test_degree_one_equals_plain_tensor_parallelism_exactly(model, gpu, other, phase):
    w = Workload(phase)
    ring = RingAlphaBeta(get_gpu(gpu).scaleup_bandwidth)
    batches = [1, 2, 7, 64]
    ext = evaluate_grid(model, gpu, [P(other.tp), other], batches, w, comm=ring)
    plain = evaluate_grid(model, gpu, [other.tp], batches, w, comm=ring)
    assert plain.stages == STAGES and set(ext.stages) > set(STAGES)   # extra stages run
    assert list(ext.stages) == [n for n in EXTENDED_STAGES if n in ext.stages]
    same_row(ext, 0, plain)


def test_all_to_all_bytes_per_gpu_for_one_moe_layer_by_hand():
    # Mixtral (hidden 4096, top-2, bf16) decoding 64 sequences on 8 Lites, EP 8: each GPU owns
    # 64 / 8 = 8 tokens and sends each of them to its 2 experts' GPUs: 8 x 2 x 4096 x 2 B.
    ring = RingAlphaBeta(bandwidth=100e9, step_latency=1e-6, efficiency=1.0)
    r = evaluate("Mixtral-8x7B", "Lite", 8, 64, "decode", ep=8, comm=ring)
    for name in ("moe_dispatch", "moe_combine"):
        s = stage(r, name)
        assert (s.collective, s.count, s.collective_bytes) == ("all-to-all", 32, 131_072)
        assert s.network_time == pytest.approx(7e-6 + 7 / 8 * 131_072 / 100e9, rel=1e-12)
    # EP 4 on 8 GPUs: each expert is split over 2 GPUs, so every copy goes to both
    r4 = evaluate("Mixtral-8x7B", "Lite", 8, 64, "decode", ep=4, comm=ring)
    assert stage(r4, "moe_dispatch").collective_bytes == 8 * 2 * 2 * 4096 * 2 == 262_144
    # a skew of 1.5: the busiest GPU receives half as much again as the mean
    rs = evaluate("Mixtral-8x7B", "Lite", 8, 64, "decode", ep=8, expert_skew=1.5, comm=ring)
    assert stage(rs, "moe_combine").collective_bytes == 1.5 * 131_072
    # prefill: every prompt token is routed (8 prompts of 1500 tokens)
    p = evaluate("Mixtral-8x7B", "Lite", 8, 8, "prefill", ep=8, comm=ring)
    assert stage(p, "moe_dispatch").collective_bytes == 8 * 1500 / 8 * 2 * 4096 * 2
    # around the experts, attention output is reduce-scattered and re-gathered over the 8 GPUs
    assert stage(r, "attn_scatter").collective == "reduce-scatter"
    assert stage(r, "dp_regather").collective_bytes == 64 * 4096 * 2
    assert "allreduce_mlp" not in [s.name for s in r.stages]


def test_expert_parallel_mlp_work_by_hand():
    # EP 8: each GPU holds 1 of Mixtral's 8 experts whole (14336 columns) and processes the
    # 64 x 2 / 8 = 16 token copies routed to it; with 64 tokens every expert is touched.
    # Before dispatching, it routes its own 64 / 8 = 8 tokens: the router's GEMM of hidden
    # x 8 experts.
    r = evaluate("Mixtral-8x7B", "Lite", 8, 64, "decode", ep=8, comm=FREE)
    h, f = 4096, 14336
    up = stage(r, "mlp_up")
    assert up.flops == 2 * 16 * h * 2 * f + 2 * 8 * h * 8
    touched = 8 * (1 - (1 - 2 / 8) ** 64)                 # expected distinct experts, / 8 each
    assert up.hbm_bytes == pytest.approx(touched / 8 * h * 2 * f * 2 + h * 8 * 2
                                         + 16 * h * 2 + 16 * f * 2, rel=1e-12)
    # a skew makes the busiest GPU compute more
    rs = evaluate("Mixtral-8x7B", "Lite", 8, 64, "decode", ep=8, expert_skew=2.0, comm=FREE)
    assert stage(rs, "mlp_down").flops == 2 * stage(r, "mlp_down").flops


def test_expert_parallel_weights_per_gpu_by_hand():
    m = get_model("Mixtral-8x7B")
    h, f, layers = 4096, 14336, 32
    r = evaluate(m, "Lite", 8, 1, "decode", ep=8)
    attn = h * (4 + 2) * 128 + 4 * 128 * h                # 32/8 query heads, 1 KV head
    layer = attn + 1 * 3 * h * f + h * 8 + 2 * h          # one whole expert, router, norms
    total = layers * layer + (32000 // 8) * h * 2 + h     # embedding and LM head shards
    assert r.memory.weights == total * 2


def test_pipeline_memory_per_stage_by_hand():
    # Llama-3-70B, TP 8 x PP 2: a GPU holds 40 layers at TP 8 and the embedding or the LM
    # head; its KV cache is that of its 40 layers (one KV head) for every sequence in flight.
    r = evaluate("Llama-3-70B", "Lite", 8, 10, "decode", pp=2, context=1000)
    h = 8192
    layer = h * (8 + 2) * 128 + 8 * 128 * h + 3 * h * 3584 + 2 * h
    assert r.memory.weights == (40 * layer + 16032 * h + h) * 2 == 8_820_375_552
    assert r.memory.kv_cache == 40 * 2 * 1 * 128 * 2 * 1000 * 10
    assert (r.gpus, r.sms, r.micro_batch) == (16, 16 * 33, 5)


def test_pipeline_step_times_by_hand():
    lite = get_gpu("Lite")
    ring = RingAlphaBeta(lite.scaleup_bandwidth)
    send = lambda m: 1.9e-6 + m * 8192 * 2 / (lite.scaleup_bandwidth * 0.92)  # noqa: E731
    # Each stage of a pipeline runs its own layers (80 / pp each), the first also the
    # embedding, the last the LM head; the period is the slowest stage's, from a TP-8
    # pass's stage times: layers / pp + the larger of the two (decode: the LM head;
    # prefill of 1500 tokens: the embedding and its 24.6 MB all-reduce)
    def slowest(pass_r, pp):
        head, emb = stage(pass_r, "lm_head").total_time, stage(pass_r, "embedding").total_time
        return (pass_r.latency - emb - head) / pp + max(head, emb)

    # decode: 64 sequences in 2 micro-batches of 32; each goes through both stages (a
    # TP-8 pass of 32 sequences) and crosses one stage boundary: the TBT is the larger of
    # that round trip (29.106 ms) and the last stage running both micro-batches (2 x
    # 14.689 ms = 29.379 ms: its 40 layers and the 0.315 ms LM head, twice; balanced
    # stages said 29.106 ms)
    one = evaluate("Llama-3-70B", "Lite", 8, 32, "decode", comm=ring)
    r = evaluate("Llama-3-70B", "Lite", 8, 64, "decode", pp=2, comm=ring)
    assert stage(r, "pp_send").collective_bytes == 32 * 8192 * 2
    assert 2 * slowest(one, 2) > one.latency + send(32)
    assert r.latency == pytest.approx(2 * slowest(one, 2), rel=1e-12)
    # (29.3787 ms when written; h356: was a pin of it)
    assert r.tokens_per_step == 64
    # four stages, 10 sequences: micro-batches of 3, four of them in flight, the last
    # stage (20 layers and the LM head) runs all four: 21.936 ms (balanced: 20.995 ms)
    r4 = evaluate("Llama-3-70B", "Lite", 8, 10, "decode", pp=4, comm=FREE)
    three = evaluate("Llama-3-70B", "Lite", 8, 3, "decode", comm=FREE)
    assert r4.latency == pytest.approx(4 * slowest(three, 4), rel=1e-12)
    # (21.9359 ms when written; h356: was a pin of it)
    # 5 sequences on 4 stages: micro-batches of up to 2 (vLLM's 2 + 1 + 1 + 1), four in
    # flight, each timed as the largest; counting only ceil(5 / 2) = 3 full micro-batches
    # made 5 sequences (3 x 5.463 ms = 16.39 ms) faster than 4 (4 x 5.443 ms = 21.77 ms)
    four = evaluate("Llama-3-70B", "Lite", 8, 4, "decode", pp=4, comm=FREE)
    five = evaluate("Llama-3-70B", "Lite", 8, 5, "decode", pp=4, comm=FREE)
    two = evaluate("Llama-3-70B", "Lite", 8, 2, "decode", comm=FREE)
    assert (four.micro_batch, five.micro_batch) == (1, 2)
    assert five.latency == pytest.approx(4 * slowest(two, 4), rel=1e-12)
    assert five.latency >= four.latency
    # (21.8532 ms when written; h356: was a pin of it)
    # prefill: one prompt per micro-batch (GPipe): (b - 1) periods + one prompt's pass
    single_r = evaluate("Llama-3-70B", "Lite", 8, 1, "prefill", comm=ring)
    single, period = single_r.latency, slowest(single_r, 2)
    p = evaluate("Llama-3-70B", "Lite", 8, 6, "prefill", pp=2, comm=ring)
    s = send(1500)
    assert p.latency == pytest.approx(5 * max(period, s) + single + s, rel=1e-12)
    assert stage(p, "pipeline_wait").time == pytest.approx(5 * max(period, s), rel=1e-9)
    for x in (r, p):   # the stages add up to the step and so does the time split
        assert sum(st_.total_time for st_ in x.stages) == pytest.approx(x.latency, rel=1e-12)
        assert sum(x.time_split().values()) == pytest.approx(x.latency, rel=1e-12)


def _limit(weights, kv_per_gpu_seq, groups, act, gpu, pp=1):
    """Hand-derived memory-bound decode limit: the largest batch whose KV cache (each byte
    held once) fits beside the weights, every step reading the weights (once per
    micro-batch with a pipeline) and that KV cache once."""
    fit = math.floor((gpu.hbm_capacity * 0.9 - weights - act) / kv_per_gpu_seq)
    batch = fit * groups
    step = (pp * weights + fit * kv_per_gpu_seq) / gpu.hbm_bandwidth
    return batch, batch / step


def test_lite_llama70b_decode_memory_bound_limit_without_kv_replication():
    # Free network, long context (8192: KV reads dominate, every stage is memory-bound).
    # Plain TP 16 holds each of the 8 KV heads twice; DP attention (TP 16 = 2 groups of 8,
    # one KV head per GPU) and PP (TP 8 x PP 2) hold it once and reach their
    # memory-bound limit.
    lite, ctx, h = get_gpu("Lite"), 8192, 8192
    kv_seq = 80 * 2 * 8 * 128 * 2 * ctx               # the model's KV bytes per sequence
    attn = h * 80 * 128 + 64 * 128 * h
    mlp = 3 * h * 28672

    def best(**kw):
        return search("Llama-3-70B", lite, "decode", comm=FREE, context=ctx, **kw).best

    tp16 = best(tp=[16])
    assert tp16.memory.kv_cache * 16 == 2 * tp16.batch * kv_seq
    assert kv_copies(get_model("Llama-3-70B"), P(16)) == 2.0

    dp = best(tp=[16], attention_dp=[2])
    # the embedding and the LM head split over each attention group's 8 GPUs
    w_dp = (80 * (attn / 8 + mlp / 16 + 2 * h) + 2 * (128256 // 8) * h + h) * 2
    assert dp.memory.weights == w_dp
    assert dp.memory.kv_cache * 16 == dp.batch * kv_seq        # held once
    batch, limit = _limit(w_dp, kv_seq / 8, 2, dp.memory.activations, lite)
    assert dp.batch == batch == 50
    assert dp.tokens_per_s_per_sm == pytest.approx(limit / (16 * 33), rel=0.01)
    assert all(s.bound == "memory" for s in dp.stages if s.total_time > 0)

    pp = best(tp=[8], pp=[2])
    w_pp = (40 * (attn / 8 + mlp / 8 + 2 * h) + (128256 // 8) * h + h) * 2
    assert pp.memory.weights == w_pp
    assert pp.memory.kv_cache * 16 == pp.batch * kv_seq
    # a stage's weights are read once per micro-batch, two micro-batches per step
    batch, limit = _limit(w_pp, kv_seq / 16, 1, pp.memory.activations, lite, pp=2)
    assert pp.batch == batch == 62
    assert pp.tokens_per_s_per_sm == pytest.approx(limit / (16 * 33), rel=0.01)

    # with the replication removed, both beat plain TP 16 (its limit would need KV once)
    assert dp.tokens_per_s_per_sm > 1.6 * tp16.tokens_per_s_per_sm
    assert pp.tokens_per_s_per_sm > 1.3 * tp16.tokens_per_s_per_sm


def _llama3_70b_decode_per_sm(gpu: str, tp: int, b: int, ctx: int = 1513) -> float:
    """Tokens/s/SM of Llama-3-70B's BF16 decode at TP ``tp``, batch ``b``, context ``ctx``
    (the default 1513, compute.phases) on a free network, by hand: every stage the longer of
    its math at the GPU's dense BF16 rate and its HBM traffic (its weight shard, BF16
    activations in and out; attention the K and V of every sequence's context, read, and of
    its new token, written); past TP 8 the 8 KV heads are copied, one a GPU."""
    h, ffn, layers, vocab, heads, kv_heads, hd = 8192, 28672, 80, 128256, 64, 8, 128
    g = get_gpu(gpu)
    q, kv = heads / tp * hd, max(kv_heads / tp, 1) * hd    # a GPU's Q and K (or V) width

    def stage(flops, traffic):
        return max(flops / g.flops_bf16, 2 * traffic / g.hbm_bandwidth)   # 2 bytes each

    embedding = stage(0, b * (h / tp + h))     # a row's shard read, the whole row written
    qkv = stage(2 * b * h * (q + 2 * kv), h * (q + 2 * kv) + b * (h + q + 2 * kv))
    attention = stage(4 * (heads / tp) * hd * b * ctx, b * (ctx * 2 * kv + 2 * q + 2 * kv))
    out = stage(2 * b * q * h, q * h + b * (q + h))
    up = stage(2 * b * h * 2 * ffn / tp, 2 * h * ffn / tp + b * (h + ffn / tp))
    down = stage(2 * b * ffn / tp * h, ffn / tp * h + b * (ffn / tp + h))
    head = stage(2 * b * h * vocab / tp, h * vocab / tp + b * (h + vocab / tp))
    latency = embedding + layers * (qkv + attention + out + up + down) + head
    return b / latency / (tp * g.sms)


def test_default_context_lite_recovers_most_of_the_h100_with_dp_attention():
    h100 = search("Llama-3-70B", "H100-SXM", "decode", comm=FREE).best
    plain = search("Llama-3-70B", "Lite", "decode", comm=FREE).best
    dp = search("Llama-3-70B", "Lite", "decode", comm=FREE, attention_dp=True).best
    assert (plain.tp, plain.batch) == (16, 165)
    # plain TP 16 reaches about half the H100's tokens/s/SM (0.497 when written; h363: was
    # a pin of it): each the hand-derived figure at the configuration the search chose
    assert plain.tokens_per_s_per_sm == pytest.approx(
        _llama3_70b_decode_per_sm("Lite", 16, 165), rel=1e-9)
    assert h100.tokens_per_s_per_sm == pytest.approx(
        _llama3_70b_decode_per_sm("H100-SXM", h100.tp, h100.batch), rel=1e-9)
    assert plain.tokens_per_s_per_sm < 0.55 * h100.tokens_per_s_per_sm
    assert dp.tokens_per_s_per_sm / h100.tokens_per_s_per_sm > 0.9
    assert kv_copies(get_model("Llama-3-70B"), P(dp.tp, attention_dp=dp.attention_dp)) == 1.0


def test_mla_latent_is_held_once_per_attention_group():
    # DeepSeek-V3 at TP 8: the latent (576 elements per token and layer) is on every GPU;
    # with DP attention 8 each GPU holds only its own sequence's
    m = get_model("DeepSeek-V3")
    tp = evaluate(m, "H200-SXM", 8, 8, "decode", context=1000)
    dp = evaluate(m, "H200-SXM", 8, 8, "decode", context=1000, attention_dp=8)
    assert tp.memory.kv_cache == 61 * 576 * 2 * 1000 * 8
    assert dp.memory.kv_cache == 61 * 576 * 2 * 1000 * 1


@pytest.mark.parametrize("model, gpu, phase, kw", [
    ("Llama-3-70B", "Lite", "decode", dict(tp=[8, 16], pp=[1, 2, 4], attention_dp=True)),
    ("Mixtral-8x7B", "Lite", "prefill", dict(tp=[4, 8], ep=True, attention_dp=[1, 2])),
])
def test_search_matches_a_loop_over_single_evaluations(model, gpu, phase, kw):
    ring = RingAlphaBeta(get_gpu(gpu).scaleup_bandwidth)
    r = search(model, gpu, phase, comm=ring, max_batch=24, **kw)
    best = None
    for c in configurations(get_model(model), get_gpu(gpu).max_instance, **kw):
        for b in range(1, 25):
            e = evaluate(model, gpu, c.tp, b, phase, pp=c.pp, ep=c.ep,
                         attention_dp=c.attention_dp, comm=ring)
            if e.feasible and (best is None or e.tokens_per_s_per_sm > best.tokens_per_s_per_sm):
                best = e
    got = (r.best.tp, r.best.pp, r.best.ep, r.best.attention_dp, r.best.batch)
    assert got == (best.tp, best.pp, best.ep, best.attention_dp, best.batch)
    assert r.best.tokens_per_s_per_sm == pytest.approx(best.tokens_per_s_per_sm, rel=1e-12)
    assert len(r.by_config) <= len(r.configurations) == len(r.grid.configs)
    assert r.evaluated == len(r.configurations) * 24


def test_default_search_space_is_plain_tp_and_wider_stages_need_ep():
    r = search("Llama-3-70B", "Lite", "decode", max_batch=4)
    assert [c["pp"] for c in r.configurations] == [1] * len(r.tp_degrees)
    assert "configurations" not in r.to_dict()
    # DeepSeek-V3 fits no 8-GPU TP instance of H100s; DP attention and EP over 16 do
    m = get_model("DeepSeek-V3")
    with pytest.raises(UserError, match="TP degree 16 exceeds the largest instance"):
        check_parallelism(m, P(16), 8)
    wide = check_parallelism(m, P(16, ep=16, attention_dp=2), 8)
    assert (wide.attention_tp, wide.expert_tp) == (8, 1)
    cs = configurations(m, 8, ep=True, attention_dp=True, max_gpus=32)
    assert max(c.tp for c in cs) == 32 and all(c.attention_tp <= 8 and c.expert_tp <= 8
                                               for c in cs)


@pytest.mark.parametrize("call, match", [
    # any PP up to the layers is taken (vLLM's uneven split); one past them is not
    (lambda: search("Llama-3-70B", "Lite", pp=[81]),
     r"PP degree 81 exceeds the 80 layers of Llama-3-70B; allowed: 1 to 80 \(a stage holds "
     r"at least one layer\)$"),
    # EP 3 places redundant experts now (test_redundant_experts), but divides no TP here
    (lambda: search("Mixtral-8x7B", "Lite", ep=[3]),
     r"no configuration to search: TP 1, 2, 4, 8, 16, 32, PP 1, EP 3 \(EP and attention DP "
     r"must divide TP\)$"),
    (lambda: search("Llama-3-70B", "Lite", ep=[2]),
     "EP degree 2 needs a mixture-of-experts model; Llama-3-70B is dense"),
    (lambda: evaluate("Mixtral-8x7B", "Lite", 4, 1, ep=8),
     "EP degree 8 does not divide TP degree 4"),
    (lambda: evaluate("Llama-3-70B", "Lite", 8, 1, attention_dp=3),
     "attention DP degree 3 does not divide TP degree 8"),
    (lambda: evaluate("Llama-3-70B", "Lite", 8, 1, pp=0), "PP degree must be a whole number"),
    (lambda: evaluate("Mixtral-8x7B", "Lite", 8, 1, ep=8, expert_skew=float("nan")),
     "expert_skew must be a number from 1"),
    (lambda: evaluate("Mixtral-8x7B", "Lite", 8, 1, ep=8, expert_skew=0.5),
     "expert_skew must be a number from 1"),
    (lambda: search("Mixtral-8x7B", "Lite", tp=[2], ep=[4]),
     "no configuration to search"),
    (lambda: search("Llama-3-70B", "Lite", pp=[1, 2], max_batch=2_000_000),
     "search: about 24,000,000 configurations, over the limit"),
])
def test_impossible_degrees_are_one_line_errors(call, match):
    with pytest.raises(UserError, match=match) as e:
        call()
    assert "\n" not in str(e.value)


_CASES = [("Llama-3-70B", "Lite", P(8, pp=2)), ("Llama-3-70B", "Lite", P(16, 2, 1, 2)),
          ("Mixtral-8x7B", "Lite", P(8, 2, 8, 4)), ("DeepSeek-V3", "Lite", P(64, 1, 64, 8)),
          ("Qwen1.5-MoE-A2.7B", "H100-SXM", P(4, 4, 4, 1)), ("GPT-3-175B", "Lite", P(24, 4, 1, 3))]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_CASES), st.sampled_from(["prefill", "decode"]), st.integers(1, 300),
       st.sampled_from(["overlap", "serial"]), st.floats(1.0, 3.0))
def test_stage_totals_and_time_split_add_up_to_the_step(case, phase, batch, mode, skew):
    from compute.roofline_options import RooflineOptions

    model, gpu, c = case
    if get_model(model).experts <= 1 or c.ep == 1:
        skew = 1.0   # nothing reads it there, and evaluate refuses it (check_skew_read)
    r = evaluate(model, gpu, c.tp, batch, phase, pp=c.pp, ep=c.ep, attention_dp=c.attention_dp,
                 expert_skew=skew, options=RooflineOptions(mode=mode))
    assert sum(s.total_time for s in r.stages) == pytest.approx(r.latency, rel=1e-9)
    assert sum(r.time_split().values()) == pytest.approx(r.latency, rel=1e-9)
    assert r.sms == c.gpus * get_gpu(gpu).sms
    # more sequences never make a step shorter (while DP attention's padding mode holds:
    # dp_gather_ops)
    r2 = evaluate(model, gpu, c.tp, batch + 1, phase, pp=c.pp, ep=c.ep,
                  attention_dp=c.attention_dp, expert_skew=skew,
                  options=RooflineOptions(mode=mode))
    if dp_gather_ops(r2) == dp_gather_ops(r):
        assert r2.latency >= r.latency * (1 - 1e-12)


def test_fp8_experts_dispatch_in_fp8_and_combine_in_bf16_deepep_volume():
    # DeepSeek-V3 (fp8 experts) at DeepEP's low-latency setting: 128 tokens per GPU, top-8,
    # hidden 7168, EP 32 on 32 GPUs (one attention group per GPU). DeepEP dispatches FP8
    # with one fp32 scale per 128 elements and combines in BF16 (DeepEP README; DeepSeek-V3
    # report, Section 3.3.3): 128 x 8 x 7168 x (1 + 4/128) = 7.569 MB and 14.68 MB per GPU;
    # the README's EP 8 dispatch, 77 us at 98 GB/s, is that same 7.57 MB.
    ring = RingAlphaBeta(bandwidth=50e9, step_latency=0.0, efficiency=1.0)
    r = evaluate("DeepSeek-V3", "H200-SXM", 32, 32 * 128, "decode", ep=32, attention_dp=32,
                 comm=ring)
    d, c = stage(r, "moe_dispatch"), stage(r, "moe_combine")
    assert d.collective_bytes == 128 * 8 * 7168 * 1.03125 == 7_569_408
    assert c.collective_bytes == 128 * 8 * 7168 * 2 == 14_680_064
    assert d.network_time == pytest.approx(31 / 32 * 7_569_408 / 50e9, rel=1e-12)
    # a bf16 MoE (Mixtral) dispatches and combines the same bf16 bytes
    m = evaluate("Mixtral-8x7B", "H100-SXM", 8, 64, "decode", ep=8, comm=ring)
    assert stage(m, "moe_dispatch").collective_bytes == stage(m, "moe_combine").collective_bytes \
        == 8 * 2 * 4096 * 2


def test_maverick_bf16_fits_16_h100s_once_attention_groups_divide_the_heads():
    # Llama-4-Maverick in bf16 is 801 GB: at least 11 H100s (77 GB usable each). Its 40
    # heads are divided by no TP degree from 9 to 16 but 10, yet TP 16 with attention DP 4
    # runs attention in groups of 4 GPUs (10 heads, 2 KV heads each) and EP 16 puts 8 of
    # the 128 experts on each GPU. Per GPU by hand: experts 8 x 24 x 3 x 5120 x 8192 x 2,
    # the shared expert (replicated under EP) 24 x 3 x 5120 x 8192 x 2, routers 24 x 5120 x
    # 128 x 2, attention 48 x (5120 x 14 x 128 + 1280 x 5120) x 2, the 24 dense MLPs' 1,024
    # columns 24 x 3 x 5120 x 1024 x 2, norms 48 x 2 x 5120 x 2, embedding and LM head
    # split over the attention group's 4 GPUs, 202,048 / 4 = 50,512 rows each x 5120 x 2,
    # and the final norm: 57,690,040,320 bytes (56,914,176,000 when they were split over
    # all 16 GPUs, 12,628 rows each); and the vision tower, 871,932,416 x 2 bytes split
    # like the embedding over the attention group's 4 GPUs (counted since h283): 435,966,208
    # more. The search
    # found nothing before ("nothing fits ... up to 10 GPUs").
    from pathlib import Path

    from compute.hf_config import load_hf_config

    m = load_hf_config(Path(__file__).parent / "data" / "hf_families"
                       / "llama-4-maverick-17b-128e-instruct.json")
    h100 = get_gpu("H100-SXM")
    assert Parallelism(16, 1, 16, 4) in configurations(m, 8, ep=True, attention_dp=True,
                                                       max_gpus=16)
    from compute.memory import weight_bytes
    from compute.parallel import layout
    w = float(weight_bytes(m, layout(m, [Parallelism(16, 1, 16, 4)]))[0, 0])
    assert w == 57_690_040_320 + 871_932_416 * 2 // 4 == 58_126_006_528
    # the cell takes SGLang's DP-attention gather, which splits the shared expert over the
    # stage's 16 GPUs (512 of its 8,192 columns each, compute.moe_dp_gather): 24 x 3 x
    # 5120 x (8192 - 512) x 2 bytes less
    r = evaluate(m, h100, 16, 1, ep=16, attention_dp=4)
    assert r.moe_exchange == "sglang-dp-gather"
    assert r.memory.weights == 58_126_006_528 - 24 * 3 * 5120 * (8192 - 512) * 2 \
        == 52_463_696_128
    with pytest.raises(UserError, match="attention groups of 16 GPUs"):
        check_parallelism(m, Parallelism(32, 1, 16, 2), 64)
    best = search(m, h100, ep=True, attention_dp=True, max_gpus=16).best
    assert best is not None and best.memory.fits and best.gpus == 16


def test_wide_stages_beyond_the_heads_spread_experts_in_whole_domains():
    # Beyond the widths dividing the heads, the default search widens a stage only in a
    # power of two of whole scale-up domains with at most one routed expert a GPU: Mixtral
    # (32 heads, 8 experts) on H100 (domain 8) stays at the divisors of 32 (a 24-, 40- or
    # 64-GPU stage is never tried: all of them made the study's MoE part 2.8 -> 32.9 s);
    # DeepSeek-V3 (128 heads, 256 experts) also at 64 and 128 (divisors of 128 anyway);
    # Llama-4-Maverick's 40 heads: 16 = 2 domains (its attention groups of 4 divide 40)
    from compute.parallel import configurations

    def widths(name, max_gpus=128):
        m = get_model(name)
        return sorted({c.tp for c in configurations(m, 8, ep=True, attention_dp=True,
                                                    max_gpus=max_gpus)})

    assert widths("Mixtral-8x7B") == [1, 2, 4, 8, 16, 32]
    from dataclasses import replace

    m = replace(get_model("Mixtral-8x7B"), heads=40, kv_heads=8, head_dim=128, experts=128,
                name="maverick-shaped")
    got = sorted({c.tp for c in configurations(m, 8, ep=True, attention_dp=True,
                                               max_gpus=16)})
    assert got == [1, 2, 4, 5, 8, 10, 16], got   # divisors of 40 up to 10, and 2 domains
