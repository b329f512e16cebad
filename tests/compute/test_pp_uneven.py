"""Pipeline degrees that do not divide the layers: vLLM takes any PP up to the layers and
splits them ``layers // pp`` each, the rest one each to the stages before the last
(``get_pp_indices``, vllm/distributed/utils.py); the memory fit is the fullest stage's and
the period the slowest stage's. DeepSeek-V3's 61 layers (a prime) could not be pipelined
at all before. Every figure below is derived by hand."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from compute.evaluate_one import evaluate
from compute.models import get_model
from compute.parallel import Parallelism as P
from compute.parallel import check_parallelism, search_pp, stage_layers
from compute.search import search
from netmodel.cli.main import cli

# DeepSeek-V3 at TP 8 (fp8 weights, bf16 embedding and LM head; hidden 7168, 128 heads: 16
# a GPU; MLA with q_lora 1536, kv_lora 512, rope 64, qk head 192, v head 128), bytes per GPU:
H = 7168
ATTN = (H * 1536 + 1536 + 1536 * 16 * 192            # query down (+ norm), up by heads
        + H * (512 + 64) + 512 + 512 * 16 * (128 + 128)   # latent down (+ norm), up
        + 16 * 128 * H)                               # output: 36,636,672
MOE = ATTN + 256 * 3 * H * 256 + H * 256 + 3 * H * 256 + 2 * H  # 256 experts of 2048 / 8
DENSE = ATTN + 3 * H * 2304 + 2 * H                   # dense MLP 18432 / 8
VOCAB = 129280 // 8 * H * 2                           # one bf16 matrix, 16160 rows
NORM = H                                              # the final norm, on each stage
KV = 576 * 2 * 1513                                   # latent per sequence and layer


def test_vllm_takes_any_pp_up_to_the_layers():
    m = get_model("DeepSeek-V3")
    assert stage_layers(61, 2) == ((0, 31), (31, 61))
    assert stage_layers(61, 4) == ((0, 15), (15, 30), (30, 46), (46, 61))   # 15 15 16 15
    assert check_parallelism(m, P(8, 61)).pp == 61
    assert check_parallelism(get_model("Llama-3-70B"), P(8, 3)).pp == 3     # 27 27 26
    # a search over every dimension tries 1, 2, 4, 8 whether they divide or not
    assert search_pp(m) == (1, 2, 4, 8)
    assert search_pp(get_model("Llama-3.1-405B")) == (1, 2, 4, 8)          # 126 layers


def test_deepseek_v3_pp2_memory_is_the_last_stages():
    # stage 0: layers 0-30, 3 dense + 28 MoE + the embedding; stage 1: layers 31-60, 30 MoE
    # + the LM head: 41.18 GB and 43.83 GB of weights a GPU
    first = 28 * MOE + 3 * DENSE + VOCAB + NORM
    last = 30 * MOE + VOCAB + NORM
    assert (MOE, DENSE) == (1_453_277_184, 86_196_224)
    assert (first, last) == (41_182_026_752, 43_829_992_448)
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 64, "decode", pp=2)
    # the fullest stage, weights and cache together: the last (30 layers of cache)
    assert last + 30 * KV * 64 > first + 31 * KV * 64
    assert r.memory.weights == last
    assert r.memory.kv_cache == 30 * KV * 64 == 3_346_513_920
    assert r.memory.fits


def test_deepseek_v3_pp2_decode_period_is_the_slower_stages():
    # Batch 64 in 2 micro-batches of 32 tokens: the TBT is the larger of a micro-batch's
    # round trip and 2 periods of the slower stage. The MLPs are memory-bound (4.8 TB/s):
    # an MoE layer reads the 163.3 expected experts touched by 32 x top-8 of 256 (256 x (1
    # - (1 - 8/256)^32)), 3 x 7168 x 256 fp8 bytes each, the router (7168 x 256) and the
    # shared expert; a dense layer its 3 x 7168 x 2304; plus bf16 activations.
    n, touched = 32, 256 * (1 - (1 - 8 / 256) ** 32)
    moe_up = touched * H * 512 + H * 256 + n * H * 2 + n * 256 * 8 * 2 + H * 512 + n * 256 * 2
    moe_down = touched * 256 * H + n * 256 * 8 * 2 + n * H * 2 + 256 * H + n * 256 * 2
    dense = H * 2 * 2304 + n * H * 2 + n * 2304 * 2 + 2304 * H + n * 2304 * 2 + n * H * 2
    t_moe, t_dense = (moe_up + moe_down) / 4.8e12, dense / 4.8e12     # 189.1 us, 10.57 us
    r = evaluate("DeepSeek-V3", "H200-SXM", 8, 64, "decode", pp=2)
    t = {s.name: s for s in r.stages}
    # the pass's per-layer MLP time averages 58 MoE and 3 dense layers
    mlp = t["mlp_up"].time + t["mlp_down"].time
    assert mlp == pytest.approx((58 * t_moe + 3 * t_dense) / 61, rel=1e-12)
    per_layer = [s for s in r.stages if s.count == 61]
    assert {s.name for s in per_layer} == {"qkv", "attention", "out_proj", "allreduce_attn",
                                           "mlp_up", "mlp_down", "allreduce_mlp"}
    rest = sum(s.time for s in per_layer) - mlp   # attention and the all-reduces
    stage0 = 31 * rest + 28 * t_moe + 3 * t_dense + t["embedding"].time     # 7.733 ms
    stage1 = 30 * rest + 30 * t_moe + t["lm_head"].time                     # 8.023 ms
    assert stage1 > stage0
    assert r.latency == pytest.approx(2 * stage1, rel=1e-12)
    # 16.045 ms; a layer's average time said stage 0 (31 layers) was the slower: 15.992 ms
    # (16.0450 ms when written; h356: was a pin of it, the two stages are derived above)
    assert r.tokens_per_s == pytest.approx(64 / r.latency, rel=1e-12)
    # the stages' sum is the pass: the dense layers' share moves, it is not added
    own = 61 * rest + 58 * t_moe + 3 * t_dense + t["embedding"].time + t["lm_head"].time
    assert stage0 + stage1 == pytest.approx(own, rel=1e-12)


def test_search_and_cli_take_an_uneven_pipeline():
    r = search("DeepSeek-V3", "H200-SXM", "decode", tp=8, pp=[1, 2], max_batch=64)
    assert {c.pp for c in r.grid.configs} == {1, 2}
    out = CliRunner().invoke(cli, ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM",
                                   "--tp", "8", "--pp", "2", "--batch", "64", "--json"])
    assert out.exit_code == 0, out.output
    d = json.loads(out.output)
    assert d["pp"] == 2 and d["memory"]["weights_bytes"] == 30 * MOE + VOCAB + NORM


@pytest.mark.parametrize("config", [P(8, 2), P(8, 4, 8, 1), P(16, 2, 16, 2)])
def test_the_mlp_by_kind_averages_to_the_pass(config):
    """The MoE and dense layers' MLP work a stage is timed with weigh to the pass's
    per-layer average (58 MoE and 3 dense layers of 61), under TP, EP and attention DP."""
    import numpy as np

    from compute.parallel import layout
    from compute.roofline import make_workload
    from compute.stages import mlp_work_by_kind, stage_work

    m, w = get_model("DeepSeek-V3"), make_workload("decode")
    sh = layout(m, [config])
    batch = np.array([[1.0, 7.0, 64.0]])
    work = {x[0]: x for x in stage_work(m, sh, batch, w, 1.5)}
    for name, (moe, dense) in mlp_work_by_kind(m, sh, batch, w, 1.5).items():
        for j in (0, 1):   # flops, HBM bytes
            want = np.broadcast_to(work[name][2 + j], (1, 3))
            got = (58 * np.asarray(moe[j]) + 3 * np.asarray(dense[j])) / 61
            np.testing.assert_allclose(got, want, rtol=1e-12)
