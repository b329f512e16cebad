"""A pipelined prefill under attention data parallelism runs one prompt an attention group a
micro-batch (compute.parallel.micro_batch): every group its own prompt in each micro-batch,
as data-parallel attention ranks run their own batches in step. It ran one prompt a
micro-batch, the other groups' GPUs idle in attention: DeepSeek-V3 at TP 16 x PP 2 x EP 16
x DP-attention 16 on h100-dgx, 32 prompts of 1500, prefilled at 14.3 tokens/s/SM where one
stage of 16 GPUs gives 89.5 (83.9 now).

Llama-3-70B on H100-SXM (the default collective bound), TP 4 x PP 2 x DP-attention 2, a
batch of 4 prompts of 1500 tokens, checked by hand:

* a micro-batch is 2 prompts, one in each group of 2 GPUs; the batch is 2 micro-batches;
* attention, per GPU: its group's one prompt over 64 / 2 = 32 heads, 4 x 32 x 128 FLOPs per
  (query, key) pair, 1500 x 1501 / 2 causal pairs: 18,444,288,000 FLOPs (as before);
* the MLP, per GPU: the micro-batch's 3000 tokens over TP 4, mlp_up 2 x 3000 x 8192 x (2 x
  28672 / 4) = 704,643,072,000 FLOPs (a micro-batch of one prompt: half);
* a stage holds 40 layers and the embedding or the LM head; the period is the slower
  stage's, a micro-batch's own pass that of one stage of 4 GPUs x 2 groups at batch 2;
* TTFT = (2 - 1) x period + pass + send; a new batch every 2 periods, tokens/s/SM = 4 x
  1500 / (2 x period) / (8 GPUs x 132 SMs): within the stages' imbalance of the one-stage
  instance's 46.12 (one prompt a micro-batch gave 39.46, every other group idle in
  attention).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.evaluate_one import evaluate
from compute.parallel import micro_batch

P = 1500
HIDDEN, FFN, HEADS, HEAD_DIM, LAYERS = 8192, 28672, 64, 128, 80
PER_LAYER = ("qkv", "attention", "out_proj", "allreduce_attn", "attn_scatter", "dp_gather",
             "mlp_up", "mlp_down", "allreduce_mlp", "dp_scatter", "attn_gather",
             "dp_regather")


def _stages(result):
    return {s.name: s for s in result.stages}


def test_micro_batch_one_prompt_an_attention_group():
    assert micro_batch(4, 2, 2, "prefill").item() == 2.0
    assert micro_batch(4, 2, 1, "prefill").item() == 1.0     # GPipe, as before
    assert micro_batch(4, 1, 2, "prefill").item() == 4.0     # one stage: the whole batch
    assert micro_batch(33, 2, 16, "prefill").item() == 16.0  # 3 micro-batches, last of 1
    assert micro_batch(64, 4, 16, "decode").item() == 16.0   # decode unchanged


def test_llama_prefill_pp2_dp_attention2_by_hand():
    r = evaluate("Llama-3-70B", "H100-SXM", 4, 4, "prefill", pp=2, attention_dp=2)
    one = evaluate("Llama-3-70B", "H100-SXM", 4, 2, "prefill", pp=1, attention_dp=2)
    assert r.micro_batch == 2
    st, st1 = _stages(r), _stages(one)
    # the work of one micro-batch, per GPU
    assert st["attention"].flops == 4 * (HEADS // 2) * HEAD_DIM * P * (P + 1) / 2
    assert st["attention"].flops == 18_444_288_000
    assert st["mlp_up"].flops == 2 * (2 * P) * HIDDEN * (2 * FFN // 4) == 704_643_072_000
    # the same micro-batch through one stage of every layer: the same stage times
    for name in ("qkv", "attention", "out_proj", "mlp_up", "mlp_down", "dp_gather"):
        assert st[name].time == pytest.approx(st1[name].time, rel=1e-12)
    layer = sum(st1[n].time * st1[n].count / LAYERS for n in PER_LAYER if n in st1)
    first = 40 * layer + st1["embedding"].time
    last = 40 * layer + st1["lm_head"].time
    send = st["pp_send"].time
    period = max(first, last, send)
    # each GPU sends its group's rows, one prompt's 1500 x 8192 bf16, to its peer of the
    # next stage: the scale-up bound's 0.6 us + 24.576 MB / 450 GB/s = 55.21 us
    assert st["pp_send"].collective_bytes == P * HIDDEN * 2
    assert send == pytest.approx(0.6e-6 + P * HIDDEN * 2 / 450e9, rel=1e-9)
    assert r.interval == pytest.approx(2 * period, rel=1e-9)
    assert r.latency == pytest.approx(period + one.latency + send, rel=1e-9)
    assert r.tokens_per_s_per_sm == pytest.approx(4 * P / (2 * period) / (8 * 132), rel=1e-9)
    # no better than the one-stage instance's rate, and within 1% of it (the stages hold
    # the embedding and the LM head apart)
    assert r.tokens_per_s_per_sm <= one.tokens_per_s_per_sm
    assert r.tokens_per_s_per_sm == pytest.approx(one.tokens_per_s_per_sm, rel=0.01)


def test_without_attention_dp_a_prompt_a_micro_batch_as_before():
    # TP 4 x PP 2 on one group: 4 micro-batches of one prompt, TTFT 3 periods + a pass
    r = evaluate("Llama-3-70B", "H100-SXM", 4, 4, "prefill", pp=2)
    one = evaluate("Llama-3-70B", "H100-SXM", 4, 1, "prefill")
    assert r.micro_batch == 1
    st1 = _stages(one)
    layer = sum(st1[n].time * st1[n].count / LAYERS for n in PER_LAYER if n in st1)
    period = max(40 * layer + st1["embedding"].time, 40 * layer + st1["lm_head"].time,
                 _stages(r)["pp_send"].time)
    assert r.latency == pytest.approx(3 * period + one.latency + _stages(r)["pp_send"].time,
                                      rel=1e-9)
    assert r.interval == pytest.approx(4 * period, rel=1e-9)


def test_a_partial_last_micro_batch_counts_whole():
    # 5 prompts over 2 groups: micro-batches of 2, 2 and 1, each timed as 2
    r4 = evaluate("Llama-3-70B", "H100-SXM", 4, 4, "prefill", pp=2, attention_dp=2)
    r5 = evaluate("Llama-3-70B", "H100-SXM", 4, 5, "prefill", pp=2, attention_dp=2)
    assert r5.micro_batch == 2
    assert r5.interval == pytest.approx(r4.interval * math.ceil(5 / 2) / 2, rel=1e-12)
    assert np.isfinite(r5.latency) and r5.latency > r4.latency


def test_deepseek_v3_serve_pipelines_its_prefill_pool_within_servers():
    """``serve`` DeepSeek-V3 on h100-dgx (16 GPUs a pool at most): the prefill pool takes TP 8
    x PP 2 x EP 8 x DP-attention 8, each stage one DGX server (its all-to-alls on NVLink),
    at batch 8: one micro-batch, a prompt in each group, so a new batch every period and
    the TTFT a pass (84.59 ms). One prompt a micro-batch made that cell 8 periods a batch,
    and the pool was TP 16 x EP 16 x DP-attention 16 at batch 112 (145.7 requests/s, TTFT
    768.94 ms, every all-to-all across the 400G NICs); now 181.8 requests/s. By hand:
    rate = 8 / interval; each of the 8 prefill groups holds one request's whole MLA cache,
    61 x (512 + 64) x 2 B x 1500 = 105.408 MB, sent on 8 streams (the decode instance's 16
    groups hold the 8 requests), each over its GPU's NIC at 50 GB/s x 0.94: 2.243 ms plus
    NCCL Simple's start-up (8.4 us), a network step (14 us) and the hops (0.53 us)."""
    from netmodel.study.serving import serve

    r = serve("DeepSeek-V3", "h100-dgx")
    pre = r.prefill
    assert (pre.tp, pre.pp, pre.ep, pre.attention_dp, pre.batch) == (8, 2, 8, 8, 8)
    assert pre.micro_batch == 8
    assert r.prefill_rate == pytest.approx(8 / pre.interval, rel=1e-12)
    assert r.prefill_rate == pytest.approx(181.8, abs=0.05)
    assert r.kv_bytes_per_request == 61 * (512 + 64) * 2 * 1500 == 105_408_000
    assert r.transfer_streams == 8
    assert r.transfer_s == pytest.approx(105_408_000 / 47e9 + 8.4e-6 + 14e-6 + 0.53e-6,
                                         rel=1e-3)
    assert pre.latency == pytest.approx(0.08459, abs=5e-6)
