"""Mixture of experts and multi-head latent attention in the roofline and the memory fit:
stage FLOPs, HBM bytes, weights and KV cache per GPU derived by hand (DeepSeek-V3 at TP 8 on
H200, Qwen1.5-MoE at TP 1), and the latent KV cache replicated on every TP rank."""

import math

import numpy as np
import pytest

from compute.evaluate_one import evaluate
from compute.memory import kv_cache_bytes, weight_bytes
from compute.models import get_model, model_names
from compute.phases import Workload
from compute.roofline import STAGES
from compute.search import search
from compute.sharding import kv_replication, shards, valid_tp_degrees

DS = "DeepSeek-V3"


def stage(result, name):
    return next(s for s in result.stages if s.name == name)


def test_deepseek_decode_attention_absorbed_by_hand():
    # TP 8: 16 heads per GPU; latent c = 512, rotary r = 64, query/key d = 192 (nope 128),
    # value v = 128; one sequence at a context of 1513.
    r = evaluate(DS, "H200-SXM", tp=8, batch=1, phase="decode", context=1513)
    a, c, rope, nope, v, ctx = 16, 512, 64, 128, 128, 1513
    per_token = 2 * a * c * (nope + v)            # W_UK absorbed into q, W_UV into the output
    per_pair = a * (2 * (c + rope) + 2 * c)       # scores on the latent + weighted latent sum
    assert stage(r, "attention").flops == per_token + ctx * per_pair == 56_870_912
    # HBM: KV up-projection (fp8), q in (bf16), the latent of 1513 tokens read once and the
    # new one written (bf16), the per-head output written.
    hbm = c * a * (nope + v) * 1 + a * 192 * 2 + ctx * 576 * 2 + 576 * 2 + a * v * 2
    assert stage(r, "attention").hbm_bytes == hbm == 3_851_520


def test_deepseek_prefill_attention_decompressed_by_hand():
    r = evaluate(DS, "H200-SXM", tp=8, batch=1, phase="prefill", prompt=1500)
    a, c, n = 16, 512, 1500
    decompress = 2 * n * a * c * (128 + 128)          # K (non-rotary) and V for every token
    pairs = n * (n + 1) / 2                           # causal
    assert stage(r, "attention").flops == decompress + pairs * a * 2 * (192 + 128)
    assert stage(r, "attention").flops == 17_819_136_000


def test_latent_kv_cache_is_replicated_on_every_tp_rank():
    m = get_model(DS)
    w = Workload("decode", context=1000)
    per_token = 61 * (512 + 64) * 2                   # layers x latent x bf16
    b = np.array([[3.0]])
    kv = [float(kv_cache_bytes(m, shards(m, [t]), b, w)[0, 0]) for t in (1, 8, 32)]
    assert kv == [per_token * 3 * 1000] * 3
    assert [kv_replication(m, t) for t in (1, 8, 32)] == [1.0, 8.0, 32.0]
    # a GQA model splits its cache until TP reaches its KV heads
    llama = get_model("Llama-3-70B")
    g = [float(kv_cache_bytes(llama, shards(llama, [t]), b, w)[0, 0]) for t in (1, 8, 16)]
    assert g[0] == 8 * g[1] == 8 * g[2]


def test_deepseek_weights_per_gpu_at_tp8_by_hand():
    m = get_model(DS)
    h = 7168
    attn = (h * 1536 + 1536 + 1536 * 16 * 192      # q down (replicated), its norm, q up / 8
            + h * 576 + 512 + 512 * 16 * 256        # kv down (replicated), its norm, kv up / 8
            + 16 * 128 * h)                         # output / 8
    expert = 3 * h * (2048 // 8)
    moe = attn + 256 * expert + 256 * h + 3 * h * (2048 // 8) + 2 * h
    dense = attn + 3 * h * (18432 // 8) + 2 * h
    # fp8: one byte each, but the embedding and output head stay bf16 (DeepSeek-V3
    # Technical Report, Section 3.3.1): two bytes each of their 2 x 129,280 / 8 x h
    total = 58 * moe + 3 * dense + (129280 // 8) * h * 2 * 2 + h
    assert float(weight_bytes(m, shards(m, [8]))[0, 0]) == total == 85_012_012_032


def test_moe_mlp_averages_dense_and_moe_layers_by_hand():
    r = evaluate(DS, "H200-SXM", tp=8, batch=1, phase="decode")
    h = 7168
    touched = 8                                     # one token routes to 8 distinct experts
    moe = (touched * h * 512 + h * 256 + h * 512    # 8 experts' up+gate, router, shared (fp8)
           + h * 2 + 256 * 8 * 2 + 256 * 2)         # activations in (bf16) and out
    dense = h * 2 * 2304 + h * 2 + 2304 * 2
    assert stage(r, "mlp_up").hbm_bytes == pytest.approx((58 * moe + 3 * dense) / 61, rel=1e-12)
    # FLOPs: 8 routed experts + the shared one = the dense layer's 18432 columns (9 x 2048),
    # and in the 58 MoE layers the router's GEMM of hidden x 256 experts (replicated)
    assert 2 * h * 512 * 8 + 2 * h * 512 == 2 * h * 4608
    assert stage(r, "mlp_up").flops == pytest.approx(2 * h * 4608 + 58 * 2 * h * 256 / 61,
                                                     rel=1e-12)


def test_qwen_moe_shared_expert_and_gate_by_hand():
    r = evaluate("Qwen1.5-MoE-A2.7B", "H100-SXM", tp=1, batch=1, phase="decode")
    h = 2048
    # 4 experts' up+gate, the shared expert's up+gate, the router (60 experts) and the
    # shared expert's sigmoid gate (hidden -> 1)
    assert stage(r, "mlp_up").flops == (2 * h * 2 * 1408 * 4 + 2 * h * 2 * 5632 + 2 * h * 60
                                        + 2 * h)
    assert stage(r, "mlp_down").flops == 2 * 1408 * h * 4 + 2 * 5632 * h
    # weights read: 4 experts' up+gate, router (60 x 2048), shared up+gate and its gate
    up = (4 * h * 2 * 1408 + 60 * h + h * 2 * 5632 + h) * 2 + h * 2 + 1408 * 4 * 2 + 5632 * 2
    assert stage(r, "mlp_up").hbm_bytes == up


@pytest.mark.parametrize("name", model_names())
@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_every_catalog_model_evaluates_at_every_tp(name, phase):
    m = get_model(name)
    for tp in valid_tp_degrees(m, 8):
        r = evaluate(name, "H200-SXM", tp=tp, batch=4, phase=phase)
        assert math.isfinite(r.latency) and r.latency > 0
        # a collective among one GPU does not run: TP 1 lists no all-reduce
        assert [s.name for s in r.stages] == [x for x in STAGES
                                             if tp > 1 or not x.startswith("allreduce")]
        assert all(s.flops >= 0 and s.hbm_bytes >= 0 for s in r.stages)


@pytest.mark.parametrize("name", ["Mixtral-8x7B", "Qwen1.5-MoE-A2.7B", DS])
def test_moe_models_search_without_crashing(name):
    r = search(name, "H200-SXM", "decode", max_batch=64)
    assert r.best is not None and r.best.feasible
    assert r.best.memory.total <= r.best.memory.usable


def test_moe_decode_reads_fewer_weights_than_all_experts():
    # batch 1 touches 2 of Mixtral's 8 experts: the MLP weight bytes read are a quarter of
    # the expert weights (plus the router)
    r = evaluate("Mixtral-8x7B", "H100-SXM", tp=1, batch=1, phase="decode")
    h, f = 4096, 14336
    assert stage(r, "mlp_down").hbm_bytes == 2 * f * h * 2 + 2 * f * 2 + h * 2
