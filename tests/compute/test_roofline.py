"""Per-stage roofline: hand-derived checks against closed forms written out here."""

import numpy as np
import pytest

from compute.comm import NoCommunication, RingAlphaBeta
from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import ModelSpec, get_model
from compute.roofline import STAGES, evaluate_grid, make_workload
from compute.roofline_options import RooflineOptions
from compute.sharding import kv_heads_per_gpu, kv_replication

H100_BW = 3.35e12       # bytes/s
H100_PEAK = 989.4e12    # dense bf16 FLOP/s
NVLINK = 450e9          # bytes/s per direction

# Llama-3-70B by hand: L=80, hidden 8192, 64 heads, 8 KV heads of 128, FFN 28672, vocab 128256.
L, H, FFN, V = 80, 8192, 28672, 128256
LAYER_LINEAR = H * (8192 + 2 * 1024) + 8192 * H + 3 * H * FFN  # Q,K,V,O and SwiGLU MLP


def ring(n, p, op="all-reduce", alpha=1.9e-6, eff=0.92):
    """Textbook ring costs, written out independently of compute.comm."""
    beta = 1 / (NVLINK * eff)
    if op == "all-reduce":
        return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta
    return (p - 1) * alpha + (p - 1) / p * n * beta


def bound(n, p, op="all-reduce", alpha=0.6e-6):
    """The default collectives on H100 (its switch reduces), written out independently of
    compute.comm: an all-reduce one step and n bytes (in the switch), the others one step
    and (p-1)/p of n (direct), at the whole link rate."""
    if op == "all-reduce":
        return alpha + n / NVLINK
    return alpha + (p - 1) / p * n / NVLINK


def test_llama3_70b_decode_batch1_tp8_is_weights_over_bandwidth_plus_collectives():
    r = evaluate("Llama-3-70B", "H100-SXM", tp=8, batch=1, phase="decode")
    # Published-size estimate of the issue: weight bytes / (8 x 3.35 TB/s) + collectives.
    collectives = (2 * L + 1) * bound(H * 2, 8) + bound(V * 2, 8, "all-gather")
    rough = 70.6e9 * 2 / (8 * H100_BW) + collectives
    assert r.latency == pytest.approx(rough, rel=0.03)
    # Exact by hand: each GPU reads 1/8 of every layer's weights and of the LM head, one
    # KV head's cache (1513 tokens), and a few activations; embedding rows gathered.
    weights = (L * LAYER_LINEAR + V * H) * 2 / 8
    kv = L * 1513 * 2 * 128 * 2
    assert r.latency == pytest.approx((weights + kv) / H100_BW + collectives, rel=0.005)
    assert {s.bound for s in r.stages if s.name in ("qkv", "out_proj", "mlp_up", "mlp_down",
                                                      "attention")} == {"memory"}
    split = r.time_split()
    assert split["compute"] == 0.0
    assert sum(split.values()) == pytest.approx(r.latency, rel=1e-12)


def test_prefill_many_tokens_is_two_flops_per_parameter_per_token_plus_attention():
    b, p, t = 8, 1500, 8
    r = evaluate("Llama-3-70B", "H100-SXM", tp=t, batch=b, phase="prefill", prompt=p,
                 comm=NoCommunication())
    n = b * p
    gemm = 2 * L * LAYER_LINEAR * n / t                    # QKV, O, MLP
    attention = L * 4 * (64 // t) * 128 * b * p * (p + 1) / 2  # causal QK^T and PV
    lm_head = 2 * b * H * V / t                            # last token of each prompt
    assert r.latency == pytest.approx((gemm + attention + lm_head) / H100_PEAK, rel=0.01)
    assert [s.bound for s in r.stages if s.name in ("qkv", "attention", "mlp_up")] == \
        ["compute"] * 3
    assert r.tokens_per_step == n


def test_causal_attention_counts_half_the_square_plus_diagonal():
    r = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="prefill", prompt=1000)
    att = next(s for s in r.stages if s.name == "attention")
    assert att.flops == 4 * 32 * 128 * 1000 * 1001 / 2


def test_flash_attention_reads_kv_once_and_never_materialises_scores():
    p = 4000
    r = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="prefill", prompt=p)
    att = next(s for s in r.stages if s.name == "attention")
    # q in, out back (32 heads x 128 x 2 B), K and V read once and written to the cache
    # (8 heads x 128 x 2 B each): linear in p, no p^2 term.
    assert att.hbm_bytes == p * (2 * 32 * 128 * 2 + 2 * 2 * 8 * 128 * 2)


def test_decode_attention_reads_the_whole_kv_cache_per_step():
    r = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=4, phase="decode", context=2000)
    att = next(s for s in r.stages if s.name == "attention")
    kv_read = 4 * 2000 * 2 * 8 * 128 * 2
    assert att.hbm_bytes == pytest.approx(kv_read + 4 * (2 * 32 * 128 * 2 + 2 * 8 * 128 * 2))
    assert att.flops == 4 * 32 * 128 * 4 * 2000


def test_kv_heads_replicate_beyond_the_kv_head_count():
    m = get_model("Llama-3-70B")
    assert [kv_heads_per_gpu(m, t) for t in (1, 4, 8, 16, 32)] == [8, 2, 1, 1, 1]
    r8 = evaluate(m, "Lite", tp=8, batch=2, phase="decode")
    r16 = evaluate(m, "Lite", tp=16, batch=2, phase="decode")
    att8 = next(s for s in r8.stages if s.name == "attention")
    att16 = next(s for s in r16.stages if s.name == "attention")
    # Each GPU still reads a whole KV head at TP 16: the KV bytes per GPU do not halve.
    kv8 = 2 * 1513 * 2 * 1 * 128 * 2
    assert att16.hbm_bytes - kv8 == pytest.approx(att8.hbm_bytes - kv8 - 2 * 2 * 128 * 2 * 4)
    assert r16.memory.kv_cache == r8.memory.kv_cache == 80 * kv8
    assert kv_replication(m, 16) == 2.0


def test_kv_heads_when_query_blocks_straddle_kv_groups():
    # 12 query heads in 3 KV groups of 4; TP 4 gives GPU 1 heads 3,4,5 -> KV heads 0 and 1.
    m = ModelSpec("straddle", 1, 768, 12, 3, 64, 1024, 1000)
    assert kv_heads_per_gpu(m, 4) == 2
    assert kv_heads_per_gpu(m, 3) == 1
    assert kv_heads_per_gpu(m, 12) == 1


def test_serial_mode_sums_and_overlap_takes_the_max():
    kw = dict(model="Llama-3-8B", gpu="H100-SXM", tp=2, batch=64, phase="decode")
    over = evaluate(**kw)
    ser = evaluate(**kw, options=RooflineOptions(mode="serial"))
    for a, b in zip(over.stages, ser.stages, strict=True):
        assert a.time == max(a.compute_time, a.memory_time, a.network_time)
        assert b.time == pytest.approx(b.compute_time + b.memory_time + b.network_time)
    assert ser.latency > over.latency
    assert sum(ser.time_split().values()) == pytest.approx(ser.latency)


def test_efficiency_factors_scale_the_bound_resource():
    base = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="decode")
    half = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=1, phase="decode",
                    options=RooflineOptions(memory_efficiency=0.5))
    assert half.latency == pytest.approx(2 * base.latency)  # TP 1 decode: all memory-bound
    pre = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=4, phase="prefill",
                   options=RooflineOptions(flops_efficiency=0.5))
    pre1 = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=4, phase="prefill")
    gemm = [s for s in pre.stages if s.name == "mlp_up"][0]
    gemm1 = [s for s in pre1.stages if s.name == "mlp_up"][0]
    assert gemm.compute_time == pytest.approx(2 * gemm1.compute_time)


def test_fp8_compute_runs_at_the_fp8_peak():
    a = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=8, phase="prefill")
    b = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=8, phase="prefill",
                 options=RooflineOptions(compute_dtype="fp8"))
    sa, sb = (next(s for s in r.stages if s.name == "mlp_down") for r in (a, b))
    assert sb.compute_time == pytest.approx(sa.compute_time * 989.4 / 1978.9)  # dense peaks
    with pytest.raises(UserError, match="no fp8"):
        evaluate("Llama-3-8B", "A100-SXM-80GB", tp=1, batch=8, phase="prefill",
                 options=RooflineOptions(compute_dtype="fp8"))


def test_overlapped_collectives_hide_behind_their_producer():
    kw = dict(model="Llama-3-70B", gpu="Lite", tp=8, batch=2, phase="prefill")
    plain = evaluate(**kw)
    hidden = evaluate(**kw, options=RooflineOptions(overlap_collectives=True))
    by = {s.name: s for s in plain.stages}
    expect = plain.latency - L * (min(by["allreduce_attn"].time, by["out_proj"].time)
                                  + min(by["allreduce_mlp"].time, by["mlp_down"].time))
    assert hidden.latency == pytest.approx(expect)
    with pytest.raises(UserError, match="needs mode 'overlap'"):
        RooflineOptions(mode="serial", overlap_collectives=True)


def test_collective_bytes_follow_nccl_convention():
    r = evaluate("Llama-3-70B", "H100-SXM", tp=8, batch=3, phase="decode")
    by = {s.name: s for s in r.stages}
    assert by["allreduce_attn"].collective == "all-reduce"
    assert by["allreduce_mlp"].collective_bytes == 3 * H * 2
    assert by["lm_head"].collective == "all-gather"
    assert by["lm_head"].collective_bytes == 3 * (V // 8) * 8 * 2
    assert by["allreduce_mlp"].network_time == pytest.approx(bound(3 * H * 2, 8))


class CountingComm:
    """A collective model that records its calls (and answers like a ring)."""

    def __init__(self):
        self.calls = []
        self.ring = RingAlphaBeta(bandwidth=NVLINK)

    def collective_time(self, op, nbytes, group_size):
        self.calls.append((op, group_size, np.shape(nbytes)))
        return self.ring.collective_time(op, nbytes, group_size)


def test_comm_is_called_once_per_operation_and_tp_degree_with_arrays():
    comm = CountingComm()
    batches = np.arange(1, 101)
    evaluate_grid("Llama-3-70B", "H100-SXM", [1, 2, 4, 8], batches, make_workload("decode"),
                  comm=comm)
    keys = [(op, t) for op, t, _ in comm.calls]
    assert len(keys) == len(set(keys)) == 2 * 3  # all-reduce and all-gather x TP 2, 4, 8
    assert all(t > 1 for _, t in keys)
    shapes = {op: shape for op, _, shape in comm.calls}
    assert shapes["all-reduce"] == (3 * 100,)   # embedding + 2 per-layer all-reduces
    assert shapes["all-gather"] == (100,)


def test_grid_cells_equal_single_evaluations():
    g = evaluate_grid("GPT-3-175B", "Lite", [8, 24], [1, 7, 300], make_workload("decode"))
    for i, t in enumerate((8, 24)):
        for j, b in enumerate((1, 7, 300)):
            one = evaluate("GPT-3-175B", "Lite", tp=t, batch=b, phase="decode")
            assert g.result(i, j).latency == pytest.approx(one.latency, rel=1e-12)
            assert g.latency[i, j] == pytest.approx(sum(s.total_time for s in one.stages))
    split = g.time_split()
    assert np.allclose(split["compute"] + split["memory"] + split["network"], g.latency)


def test_stages_are_the_documented_ones_in_order():
    r = evaluate("Llama-3-8B", "H100-SXM", tp=2, batch=1, phase="decode")
    assert tuple(s.name for s in r.stages) == STAGES
    assert [s.count for s in r.stages] == [1] + [32] * 7 + [1]


def test_tp1_has_no_network_time():
    r = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=16, phase="decode")
    assert r.time_split()["network"] == 0.0


@pytest.mark.parametrize("kw, match", [
    (dict(tp=3), "does not divide the 64 attention heads"),
    (dict(tp=16), "exceeds the largest instance"),
    (dict(tp=0), "TP degree must be a whole number"),
    (dict(batch=0), "batch must be a whole number"),
    (dict(batch=-4), "batch must be a whole number"),
    (dict(batch=float("nan")), "batch must be a whole number"),
    (dict(batch=2.5), "batch must be a whole number"),
    (dict(phase="train"), "unknown phase 'train'"),
    (dict(context=0), "context must be"),
    (dict(prompt=float("nan")), "prompt must be"),
])
def test_bad_configuration_is_a_user_error(kw, match):
    args = dict(model="Llama-3-70B", gpu="H100-SXM", tp=8, batch=1, phase="decode") | kw
    with pytest.raises(UserError, match=match):
        evaluate(**args)


@pytest.mark.parametrize("kw, match", [
    (dict(mode="parallel"), "unknown mode"),
    (dict(flops_efficiency=0.0), "flops_efficiency"),
    (dict(memory_efficiency=1.5), "memory_efficiency"),
    (dict(memory_efficiency=float("nan")), "memory_efficiency"),
    (dict(flops_efficiency=1e-300), r"flops_efficiency must be a fraction from 0.0001 to 1"),
    (dict(memory_efficiency=9.9e-5), r"memory_efficiency must be a fraction from 0.0001"),
    (dict(compute_dtype="fp6"), "unknown compute dtype"),
    (dict(memory_reserve=1.0), "reserve"),
])
def test_bad_options_are_user_errors(kw, match):
    with pytest.raises(UserError, match=match):
        RooflineOptions(**kw)


def test_efficiency_floor_is_the_profiles_and_is_taken():
    # the floor itself is allowed: at 1e-4 of peak FLOP/s a
    # compute-bound stage takes 10,000x its time at full efficiency
    floor = RooflineOptions(flops_efficiency=1e-4)
    full = evaluate("Llama-3-70B", "H100-SXM", 8, 256, "prefill", prompt=2048)
    slow = evaluate("Llama-3-70B", "H100-SXM", 8, 256, "prefill", prompt=2048, options=floor)
    gemm = [s for s in full.stages if s.name == "mlp_up"][0]
    gemm_slow = [s for s in slow.stages if s.name == "mlp_up"][0]
    assert gemm.bound == "compute"
    assert gemm_slow.compute_time == pytest.approx(gemm.compute_time * 1e4, rel=1e-12)


def test_moe_reads_only_the_experts_its_tokens_touch():
    dense = ModelSpec("d", 2, 1024, 8, 8, 128, 4096, 1000)
    moe = ModelSpec("m", 2, 1024, 8, 8, 128, 4096, 1000, experts=8, experts_per_token=2)
    gpu = get_gpu("H100-SXM")
    d = {s.name: s for s in evaluate(dense, gpu, 1, 1, "decode").stages}
    m1 = {s.name: s for s in evaluate(moe, gpu, 1, 1, "decode").stages}
    m_many = {s.name: s for s in evaluate(moe, gpu, 1, 512, "decode").stages}
    down_w = 4096 * 1024 * 2  # one expert's down projection, bf16
    # One token reads its 2 experts (expected 8 (1 - (6/8)^1) = 2) and writes a second
    # expert's intermediate activations (4096 bf16); 512 tokens read all 8 experts.
    assert m1["mlp_down"].hbm_bytes - d["mlp_down"].hbm_bytes == pytest.approx(down_w + 4096 * 2)
    assert m_many["mlp_down"].hbm_bytes == pytest.approx(8 * down_w + 512 * (2 * 4096 + 1024) * 2)
    assert m1["mlp_down"].flops == 2 * d["mlp_down"].flops


def test_context_beyond_the_models_max_context_is_refused():
    # GPT-3 has 2048 learned position embeddings: a 3000-token context does not exist for it
    from compute.errors import UserError
    from compute.evaluate_one import evaluate

    with pytest.raises(UserError, match="max_context of 2,048"):
        evaluate("GPT-3-175B", "H100-SXM", 8, 1, "decode", context=3000)
    with pytest.raises(UserError, match="prompt of 9000 tokens"):
        evaluate("Llama-3-70B", "H100-SXM", 8, 1, "prefill", prompt=9000)
    assert evaluate("GPT-3-175B", "H100-SXM", 8, 1, "decode", context=2048).feasible
