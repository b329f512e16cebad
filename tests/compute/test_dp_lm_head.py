"""The embedding and the LM head under attention data parallelism run per attention group
(SGLang's --enable-dp-lm-head; compute/stages.py's docstring): the busiest group's
sequences through a vocabulary split over the group's tp / a GPUs, the logits all-gathered
among those GPUs only. Every figure below is derived by hand from the models' sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.memory import activation_bytes, activation_bytes_per_token, weight_bytes
from compute.models import get_model
from compute.parallel import Parallelism, layout
from compute.phases import Workload
from compute.stages import stage_work

DECODE = Workload("decode", context=1513)
H, VOCAB = 7168, 129280                   # DeepSeek-V3: hidden, vocabulary
TP, EP, BATCH = 128, 128, 1024            # lite-flat's wide-EP decode, batch 1024


def _stages(a: int, batch: float = BATCH, w: Workload = DECODE) -> dict:
    m = get_model("DeepSeek-V3")
    sh = layout(m, [Parallelism(TP, ep=EP, attention_dp=a)])
    work = stage_work(m, sh, np.array([[batch]]), w)
    return {x[0]: x for x in work}


# (a, group GPUs tp / a, the busiest group's sequences ceil(1024 / a), vocabulary rows a GPU
# ceil(129280 / (tp / a)))
CASES = [(1, 128, 1024, 1010), (4, 32, 256, 4040), (32, 4, 32, 32320)]


@pytest.mark.parametrize(("a", "group", "seqs", "rows"), CASES)
def test_lm_head_runs_the_groups_sequences_over_its_vocabulary_shard(a, group, seqs, rows):
    name, count, flops, hbm, op, coll, g = _stages(a)["lm_head"]
    assert count == 1 and op == "all-gather"
    assert float(np.ravel(g)[0]) == group
    # seqs x 7168 . 7168 x rows, 2 FLOPs a multiply-add
    assert float(np.ravel(flops)[0]) == 2 * seqs * H * rows
    # bf16 weights read once, the hidden states read and the logits written once
    assert float(np.ravel(hbm)[0]) == H * rows * 2 + seqs * H * 2 + seqs * rows * 2
    # all-gather output, nccl-tests convention: seqs x the group's whole vocabulary x 2 B
    assert float(np.ravel(coll)[0]) == seqs * rows * group * 2


def test_lm_head_gather_at_dp_attention_32_by_hand():
    # The audit's figure: across the whole stage of 128, 1024 x 1010 x 128 x 2 B =
    # 264.8 MB a GPU; per attention group of 4, 32 x 32320 x 4 x 2 B = 8.27 MB (32x less:
    # 1/32 of the sequences, the group's 129,280 rows are the stage's 129,280).
    old, new = _stages(1)["lm_head"][5], _stages(32)["lm_head"][5]
    assert float(np.ravel(old)[0]) == 264_765_440 == 1024 * 1010 * 128 * 2
    assert float(np.ravel(new)[0]) == 8_273_920 == 32 * 32320 * 4 * 2
    # the FLOPs per GPU move the other way: 32 sequences x 32320 rows against 1024 x 1010
    f1, f32 = (float(np.ravel(_stages(a)["lm_head"][2])[0]) for a in (1, 32))
    assert f32 / f1 == pytest.approx(32 * 32320 / (1024 * 1010))


@pytest.mark.parametrize(("a", "group", "seqs", "rows"), CASES)
def test_embedding_looks_up_the_groups_tokens_and_all_reduces_among_the_group(
        a, group, seqs, rows):
    name, count, flops, hbm, op, coll, g = _stages(a)["embedding"]
    assert count == 1 and op == "all-reduce"
    assert float(np.ravel(g)[0]) == group
    assert float(np.ravel(flops)[0]) == 0.0
    # decode: a token a sequence; the GPU's share of the lookups (bf16 rows), the output
    assert float(np.ravel(hbm)[0]) == seqs * H * 2 / group + seqs * H * 2
    assert float(np.ravel(coll)[0]) == seqs * H * 2


def test_prefill_lm_head_takes_the_last_token_of_the_groups_prompts():
    # prefill of 10 prompts of 1000 tokens at DP-attention 4: the busiest group has
    # ceil(10 / 4) = 3 prompts, 3000 tokens to embed, 3 logits rows
    w = Workload("prefill", prompt=1000)
    st = _stages(4, batch=10.0, w=w)
    assert float(np.ravel(st["lm_head"][2])[0]) == 2 * 3 * H * 4040
    assert float(np.ravel(st["embedding"][5])[0]) == 3000 * H * 2


def test_deepseek_v3_weights_per_lite_at_tp128_ep128_dp_attention_32_by_hand():
    # Per GPU: 2 of the 256 routed experts of each of the 58 MoE layers, the shared expert
    # whole, 18432 / 128 = 144 columns of the 3 dense MLPs, MLA attention with 128 / 4 = 32
    # heads (its group is 4 GPUs: the down-projections and norms whole), routers, norms,
    # fp8 (1 B); the embedding and the LM head 32,320 rows each in bf16.
    m = get_model("DeepSeek-V3")
    expert = 3 * H * 2048
    attn = (H * 1536 + 1536 + 1536 * 32 * 192              # query down, norm, up
            + H * (512 + 64) + 512 + 512 * 32 * (128 + 128)  # latent down, norm, K/V up
            + 32 * 128 * H)                                  # output
    body = (58 * 2 * expert + 58 * expert + 3 * 3 * H * 144 + 61 * attn + 58 * H * 256
            + 61 * 2 * H + H)
    per_gpu = body + 32320 * H * 2 * 2
    sh = layout(m, [Parallelism(TP, ep=EP, attention_dp=a) for a in (1, 32)])
    w = weight_bytes(m, sh).ravel()
    assert float(w[1]) == per_gpu == 12_252_355_584
    # 0.90 GB more than with the vocabulary over all 128 GPUs (1010 rows each), which the
    # attention would not change (a = 1 has 1 head a GPU: not the same body)
    assert per_gpu - (body + 1010 * H * 2 * 2) == (32320 - 1010) * H * 4 == 897_720_320
    # still fits a Lite (21.38 GB, 19.24 GB usable at the 10% reserve)
    assert per_gpu < get_gpu("Lite").hbm_capacity * 0.9
    assert float(w[0]) < float(w[1])


def test_logits_workspace_is_the_groups_sequences_over_its_vocabulary_shard():
    m = get_model("DeepSeek-V3")
    sh = layout(m, [Parallelism(TP, ep=EP, attention_dp=32)])
    b = np.array([[1000.0]])
    act = float(activation_bytes(m, sh, b, DECODE)[0, 0])
    per_token = float(activation_bytes_per_token(m, sh)[0, 0])
    # fp32 logits of ceil(1000 / 32) = 32 sequences x 32320 rows
    assert act == 1000 * per_token + 32 * 32320 * 4.0


def test_a_group_of_one_gpu_gathers_nothing():
    # Mixtral-8x7B, TP 4 x EP 4 x DP-attention 4 on H100s: each GPU is its own attention
    # group: it runs its ceil(64 / 4) = 16 sequences through the whole 32000-token LM head
    # and gathers nothing; the embedding all-reduces nothing either
    r = evaluate("Mixtral-8x7B", "H100-SXM", 4, 64, ep=4, attention_dp=4)
    lm = next(s for s in r.stages if s.name == "lm_head")
    emb = next(s for s in r.stages if s.name == "embedding")
    assert lm.flops == 2 * 16 * 4096 * 32000
    assert lm.network_time == 0.0 and emb.network_time == 0.0
    assert lm.time == max(lm.compute_time, lm.memory_time) > 0.0
    tp4 = evaluate("Mixtral-8x7B", "H100-SXM", 4, 64)
    assert next(s for s in tp4.stages if s.name == "lm_head").network_time > 0.0
    assert math.isclose(lm.hbm_bytes, 4096 * 32000 * 2 + 16 * 4096 * 2 + 16 * 32000 * 2)
