"""The study's two harder models worked out by hand, stage by stage, on 32 Lite GPUs.

GPT-3-175B is multi-head (no KV replication) with biases, layernorm, tied embeddings and
learned positions; Llama-3.1-405B has 8 KV heads over 32 GPUs (each KV head held 4 times)
and fp8 weights with a bf16 KV cache. Every figure below is written out from the published
architectures (Brown et al. 2020, Table 2.1; meta-llama/Llama-3.1-405B config.json), not
taken from the code. Also: whole-number checks on the grid's batches and token counts.
"""

import numpy as np
import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.models import get_model
from compute.phases import Workload
from compute.roofline import evaluate_grid, make_workload
from compute.sharding import kv_replication

C = 1513  # decode context


def stage(r, name):
    return next(s for s in r.stages if s.name == name)


def test_gpt3_175b_tp32_decode_by_hand():
    # Per GPU at TP 32: 96/32 = 3 query heads and 3 KV heads of 128 (MHA: no replication),
    # FFN 49152/32 = 1536 columns, vocab rows ceil(50257/32) = 1571. bf16 everywhere.
    r = evaluate("GPT-3-175B", "Lite", tp=32, batch=1, phase="decode")
    qkv_cols = 9 * 128                                   # (3 + 2 x 3) heads x 128
    qkv = stage(r, "qkv")
    assert qkv.flops == 2 * 12288 * 1152
    assert qkv.hbm_bytes == (12288 * 1152 + 1152) * 2 + 12288 * 2 + qkv_cols * 2  # W + b, x, qkv
    att = stage(r, "attention")
    assert att.flops == 4 * 3 * 128 * C
    assert att.hbm_bytes == 2 * (3 * 128 * 2) + C * 2 * 3 * 128 * 2 + 2 * 3 * 128 * 2
    up, down = stage(r, "mlp_up"), stage(r, "mlp_down")     # plain GELU MLP, not gated
    assert up.flops == down.flops == 2 * 12288 * 1536
    assert up.hbm_bytes == (12288 * 1536 + 1536) * 2 + 12288 * 2 + 1536 * 2
    emb = stage(r, "embedding")   # 1/32 of a token row + its learned position row + output
    assert emb.hbm_bytes == pytest.approx(12288 * 2 / 32 + 12288 * 2 + 12288 * 2)
    head = stage(r, "lm_head")    # the tied embedding matrix, read as the LM head
    assert head.flops == 2 * 12288 * 1571
    assert head.collective_bytes == 1571 * 32 * 2
    # Weights per GPU: per layer Q,K,V,O (4 x 12288 x 384) + MLP (2 x 12288 x 1536), biases
    # (1152 + 12288 + 1536 + 12288), two layernorms (scale and shift); once: the embedding
    # shard (tied), the 2048 x 12288 position table and the final layernorm.
    layer = 4 * 12288 * 384 + 2 * 12288 * 1536 + 1152 + 12288 + 1536 + 12288 + 2 * 2 * 12288
    weights = (96 * layer + 1571 * 12288 + 2048 * 12288 + 2 * 12288) * 2
    assert r.memory.weights == weights
    assert weights / 1e9 == pytest.approx(10.975, abs=1e-3)
    assert r.memory.kv_cache == 96 * 2 * 3 * 128 * 2 * C
    assert kv_replication(get_model("GPT-3-175B"), 32) == 1.0


def test_llama31_405b_tp32_replicates_kv_heads_and_reads_fp8_mlp_weights():
    # 128/32 = 4 query heads per GPU, all in one KV group of 16: one KV head per GPU, so the
    # 8 KV heads are held 32/8 = 4 times over. As Meta's FP8 release: MLP weights of layers
    # 1-124 fp8 (1 B), the first and last layers' MLPs and every other weight bf16 (2 B),
    # the MLPs' bytes averaged over the 126 layers; KV and activations bf16.
    r = evaluate("Llama-3.1-405B", "Lite", tp=32, batch=1, phase="decode")
    qkv = stage(r, "qkv")
    assert qkv.flops == 2 * 16384 * 6 * 128
    assert qkv.hbm_bytes == 16384 * 768 * 2 + 16384 * 2 + 768 * 2
    att = stage(r, "attention")
    assert att.hbm_bytes == 4 * 128 * 2 * 2 + C * 2 * 1 * 128 * 2 + 2 * 128 * 2
    mlp_b = (124 * 1 + 2 * 2) / 126
    up = stage(r, "mlp_up")
    assert up.hbm_bytes == pytest.approx(2 * 16384 * 1664 * mlp_b + 16384 * 2 + 1664 * 2,
                                         rel=1e-12)
    # The instance's KV cache is 4x the model's unique 126 x 2 x 8 x 128 x 2 B per token.
    unique = 126 * 2 * 8 * 128 * 2 * C
    assert 32 * r.memory.kv_cache == 4 * unique
    # Weights per GPU: Q (16384 x 512), K and V (16384 x 128 each, replicated), O (512 x
    # 16384), two RMSNorms in bf16; SwiGLU (3 x 16384 x 1664) at the MLP bytes; embedding
    # and LM head shards of 4008 rows and the final norm in bf16.
    attn = 16384 * 768 + 512 * 16384 + 2 * 16384
    mlp = 3 * 16384 * 1664
    weights = 126 * (attn * 2 + mlp * mlp_b) + (2 * 4008 * 16384 + 16384) * 2
    assert r.memory.weights == pytest.approx(weights, rel=1e-12)
    assert r.memory.weights / 1e9 == pytest.approx(16.02, abs=0.01)   # all-fp8 gave 13.08
    # Decode at batch 1 is memory-bound: each GPU reads its weights (not the embedding
    # table) and its KV head once.
    read = 126 * ((attn - 2 * 16384) * 2 + mlp * mlp_b) + 4008 * 16384 * 2 \
        + 126 * C * 2 * 128 * 2
    memory_time = sum(s.total_time for s in r.stages if s.bound == "memory")
    assert memory_time == pytest.approx(read / (3.35e12 / 4), rel=0.002)


def test_grid_refuses_fractional_and_nan_batches_instead_of_truncating():
    w = make_workload("decode")
    # np.asarray(..., int64) used to turn 2.9 into 2 and a NaN into a bare ValueError.
    for bad in ([2.9], [float("nan")], [0], [], [True]):
        with pytest.raises(UserError, match="batches"):
            evaluate_grid("Llama-3-8B", "H100-SXM", [1], bad, w)
    # a whole float too: a count given in code is an int (h744; test_whole_counts_h744)
    with pytest.raises(UserError, match=r"batches must be whole numbers >= 1 \(an int\), "
                                        r"got 2\.0"):
        evaluate_grid("Llama-3-8B", "H100-SXM", [1], [1, 2.0], w)
    g = evaluate_grid("Llama-3-8B", "H100-SXM", [1], [1, np.int64(2)], w)
    assert g.batches.tolist() == [1, 2]


def test_token_counts_may_be_numpy_integers():
    w = Workload("decode", context=np.int64(1000), prompt=np.int64(700))
    assert (w.context, w.prompt) == (1000, 700) and type(w.context) is type(w.prompt) is int
    # a float, a whole one too, is no count given in code (h741)
    with pytest.raises(UserError, match=r"prompt must be a whole number of tokens >= 1 "
                                        r"\(an int\), got 700\.0"):
        Workload("decode", prompt=np.float64(700.0))
    with pytest.raises(UserError, match="context"):
        Workload("decode", context=np.float64(10.5))
