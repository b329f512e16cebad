"""A prompt cut in two by two-batch overlap: its second chunk attends to the first (reads its
KV cache), so the chunks' attention differs; each micro-batch takes their mean. The bound
documented in docs/compute.md (the layers times the time of the ``P^2/8`` pairs a head the
mean moves per chunk) and its figures, from the chain with each chunk's own attention.
"""

from __future__ import annotations

import pytest

from compute.comm import RingAlphaBeta
from compute.hardware import get_gpu
from compute.models import get_model
from compute.two_batch import evaluate_two_batch, step_segments, two_batch_time

M = get_model("DeepSeek-V3")


def _chunk_pairs(p):
    """(query, key) pairs a head of a prompt of ``p`` tokens cut at half: the first
    chunk's, causal among its own, and the second's, which also attends to the first."""
    half = p // 2
    first = half * (half + 1) / 2
    return first, first + half * half


def test_chunk_pairs_by_hand():
    # 4096 cut in 2048 + 2048: 2,098,176 and 2,098,176 + 2048^2 = 6,292,480; their mean
    # 4,195,328 is half the whole prompt's 4096 x 4097 / 2, P^2/8 = 2,097,152 off each
    first, second = _chunk_pairs(4096)
    assert (first, second) == (2_098_176, 6_292_480)
    assert (first + second) / 2 == 4096 * 4097 / 4 == first + 4096 ** 2 / 8


@pytest.mark.parametrize("prompt, batch, a, mean_ms, exact_ms", [
    (4096, 32, 32, 236.18, 238.89),
    (4096, 3, 8, 59.50, 61.97),   # groups of 4 GPUs: SGLang's gather among 32 (compute.dp_collectives)
])
def test_each_chunk_its_own_attention(prompt, batch, a, mean_ms, exact_ms):
    r = evaluate_two_batch(M, "H100-SXM", 32, batch, phase="prefill", prompt=prompt, ep=32,
                           attention_dp=a, comm=RingAlphaBeta(bandwidth=450e9))  # by name
    assert r.micro_batches == (batch / 2, batch / 2)       # every rank's prompt cut
    att = {s.name: s for s in r.halves[0].stages}["attention"]
    assert att.bound == "compute"
    heads = M.heads // (32 // a)                      # the attention group's, a GPU's
    first, second = _chunk_pairs(prompt)
    moved = (second - first) / 2 * heads * 2 * (M.head_dim + M.v_dim)   # FLOPs a layer
    t = moved / get_gpu("H100-SXM").peak_flops("bf16")   # QK^T and PV: bf16 (the stage's
    # KV decompression, the rest of its FLOPs, runs in fp8: compute.stage_peaks.stage_peaks)
    chains = [[list(x) for x in step_segments(h, M)] for h in r.halves]
    for k in range(1, 1 + 2 * M.layers, 2):           # each layer's attention segment
        chains[0][k][0] -= t                          # the first chunk: fewer pairs
        chains[1][k][0] += t                          # the second: its prefix's too
    exact = two_batch_time([[tuple(x) for x in c] for c in chains])
    assert r.latency * 1e3 == pytest.approx(mean_ms, abs=0.01)
    assert exact * 1e3 == pytest.approx(exact_ms, abs=0.01)
    assert r.latency < exact <= r.latency + M.layers * t    # low, within the bound


@pytest.mark.parametrize("model, tp, batch, a, seqs", [
    # 3 ranks of one prompt, 5 empty: each prompt cut in two, 3 x 0.5 a micro-batch
    ("DeepSeek-V3", 32, 3, 8, 1.5),
    # one rank of 2 prompts split 1 + 1, three of 1 each cut: 1 + 3 x 0.5 a micro-batch
    ("DeepSeek-V3", 32, 5, 4, 2.5),
    # plain TP, an odd batch below 25: the middle prompt cut, 1.5 a side
    ("Llama-3-8B", 1, 3, 1, 1.5),
    # a prompt a rank at DP-attention 32: every prompt cut, 16 a side (whole)
    ("DeepSeek-V3", 32, 32, 32, 16),
])
def test_a_cut_prompt_counts_half_in_each_micro_batch(model, tp, batch, a, seqs):
    # each micro-batch's result counts the prompt cut in two as half of its 4096 tokens,
    # not whole: the two halves' tokens add up to the step's, and its batch is the
    # ceiling of its sequences (a whole number), as is its micro-batch at PP 1
    kw = dict(ep=tp, attention_dp=a) if a > 1 else {}
    r = evaluate_two_batch(model, "H100-SXM", tp, batch, phase="prefill", prompt=4096, **kw)
    assert r.micro_batches == (seqs, seqs)
    for h in r.halves:
        assert h.tokens_per_step == seqs * 4096
        assert h.batch == h.micro_batch == -(-seqs // 1)
    assert sum(h.tokens_per_step for h in r.halves) == r.serial.tokens_per_step == batch * 4096
