"""Two-batch overlap (compute.two_batch): hand-derived schedules and the invariants every
step keeps.

Hand values. A layer whose full batch computes for C and communicates (its all-to-alls) for
A, times linear in the batch: each micro-batch computes c = C / 2, then communicates a =
A / 2. Two streams (compute, network), the micro-batches alternating:

* C >= A: the compute stream never waits (the other micro-batch's communication, a <= c,
  is done before it is needed): 2 L c of compute, then the last micro-batch's last
  communication alone, a: L C + A / 2;
* A > C: the first compute, c, runs alone, then the network never waits: c + 2 L a = L A
  + C / 2.

Both are ``L max(C, A) + min(C, A) / 2``, where the serial step is ``L (C + A)``.
"""

from __future__ import annotations

import itertools

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.roofline_options import RooflineOptions
from compute.two_batch import evaluate_two_batch, step_segments, two_batch_time


@pytest.mark.parametrize("C,A,L", [(4.0, 1.0, 1), (4.0, 1.0, 61), (1.0, 4.0, 58),
                                   (3.0, 3.0, 7), (0.0, 2.0, 3), (2.0, 0.0, 3)])
def test_one_segment_a_layer_is_l_max_plus_half_the_min(C, A, L):
    chain = [(C / 2, A / 2)] * L
    assert two_batch_time([chain, chain]) == pytest.approx(L * max(C, A) + min(C, A) / 2,
                                                           rel=1e-12)
    assert two_batch_time([chain]) == pytest.approx(L * (C + A) / 2, rel=1e-12)   # serial


def test_two_segments_a_layer_by_hand():
    """Attention 3 then dispatch 1, MLP 2 then combine 4 (each micro-batch), one layer:
    first A.attn [0,3], A.dispatch [3,4], B.attn [3,6], B.dispatch [6,7]; A.mlp waits for
    B.attn: [6,8], A.combine [8,12]; B.mlp [8,10], B.combine waits for the network: [12,16]."""
    chain = [(3.0, 1.0), (2.0, 4.0)]
    assert two_batch_time([chain, chain]) == 16.0
    # a second layer: A.attn waits for A.combine: [12,15]; A.dispatch waits for the
    # network: [16,17]; B.attn waits for B.combine: [16,19]; B.dispatch [19,20]; A.mlp
    # [19,21]; A.combine [21,25]; B.mlp [21,23]; B.combine [25,29]
    assert two_batch_time([chain * 2, chain * 2]) == 29.0
    assert two_batch_time([chain * 2]) == 20.0      # one micro-batch: its chain, serial


def test_uneven_chains_are_refused():
    with pytest.raises(ValueError):
        two_batch_time([[(1.0, 1.0)], [(1.0, 1.0)] * 2])


CASES = [
    # (model, gpu, tp, batch, phase, kwargs)
    ("DeepSeek-V3", "H100-SXM", 32, 128, "prefill", dict(ep=32, attention_dp=32, prompt=4096)),
    ("DeepSeek-V3", "H100-SXM", 32, 8192, "decode", dict(ep=32, attention_dp=32, context=2000)),
    ("DeepSeek-V3", "H200-SXM", 8, 63, "decode", dict(ep=8, attention_dp=8)),
    ("Mixtral-8x7B", "H100-SXM", 8, 64, "prefill", dict(ep=8, attention_dp=4, prompt=1000)),
    ("Mixtral-8x7B", "Lite", 16, 936, "decode", dict(ep=8, attention_dp=4)),
    ("Llama-3-70B", "H100-SXM", 8, 64, "decode", {}),
    ("Llama-3-70B", "H100-SXM", 8, 5, "prefill", dict(prompt=1500)),
    ("Qwen1.5-MoE-A2.7B", "A100-SXM-80GB", 4, 33, "decode", dict(ep=4)),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[4]}-{c[3]}" for c in CASES])
def test_the_invariants(case):
    """The chain of a step adds up to its latency; the overlapped step is never shorter
    than either stream's work or one micro-batch's chain, never longer than the two
    micro-batches one after the other, and lies within the fill of the busier stream."""
    model, gpu, tp, batch, phase, kw = case
    r = evaluate(model, gpu, tp, batch, phase, **kw)
    chain = step_segments(r)
    assert sum(c + a for c, a in chain) == pytest.approx(r.latency, rel=1e-12)
    tb = evaluate_two_batch(model, gpu, tp, batch, phase, **kw)
    h1, h2 = tb.halves
    # each rank's own sequences in two (compute.micro_batches.rank_halves): ceil and floor
    # of half the batch, but Llama-3-70B's 5 prompts at TP 8 (one rank) split at half its
    # tokens, one prompt cut in two (the sequence split's 3 of 5 is above 1 - 0.48 of them)
    assert tb.micro_batches == (((batch + 1) // 2, batch // 2) if batch != 5 else (2.5, 2.5))
    assert (h1.batch, h2.batch) == (((batch + 1) // 2, batch // 2) if batch != 5 else (3, 3))
    assert tb.serial.latency == r.latency
    assert tb.compute + tb.network == pytest.approx(h1.latency + h2.latency, rel=1e-12)
    assert max(tb.compute, tb.network, h1.latency) <= tb.latency * (1 + 1e-12)
    assert tb.latency <= (h1.latency + h2.latency) * (1 + 1e-12)
    # the fill: at least 0, at most the lesser stream's work (the step is at most both)
    assert -1e-12 * tb.latency <= tb.fill <= min(tb.compute, tb.network) + 1e-12 * tb.latency


def test_prefill_near_linear_is_within_the_fill_of_the_serial_step():
    """Where a half batch costs half the step (prefill, compute-bound: two halves' roofline
    times add up to the whole batch's within 1%), two-batch overlap is never slower than
    the serial step by more than its fill (here it is faster: the all-to-alls hide)."""
    kw = dict(ep=32, attention_dp=32, prompt=4096)
    tb = evaluate_two_batch("DeepSeek-V3", "H100-SXM", 32, 128, "prefill", **kw)
    assert sum(h.latency for h in tb.halves) == pytest.approx(tb.serial.latency, rel=1e-2)
    assert tb.latency <= tb.serial.latency + tb.fill
    assert tb.latency < 0.7 * tb.serial.latency


def test_memory_bound_decode_can_be_slower_than_the_serial_step():
    """A half batch reads the same weights: Llama-3-70B decode at TP 8 is memory-bound, so
    the two micro-batches read the weights twice and the overlapped step is slower (an
    engine would not turn it on there); the roofline at half batch says so, no constant."""
    tb = evaluate_two_batch("Llama-3-70B", "H100-SXM", 8, 64, "decode")
    assert tb.latency > tb.serial.latency
    assert sum(h.latency for h in tb.halves) > 1.5 * tb.serial.latency


def test_what_is_refused():
    with pytest.raises(UserError, match="batch of at least 2"):
        evaluate_two_batch("Llama-3-70B", "H100-SXM", 8, 1, "decode")
    with pytest.raises(UserError, match="one pipeline stage"):
        evaluate_two_batch("Llama-3-70B", "H100-SXM", 8, 4, "decode", pp=2)
    from compute.profiles import get_profile, profile_names

    with pytest.raises(UserError, match="roofline"):
        evaluate_two_batch("Llama-3-70B", "H100-SXM", 8, 4, "decode",
                           options=RooflineOptions(profile=get_profile(profile_names()[0])))


def test_chains_follow_the_layer_kinds():
    """DeepSeek-V3 at TP = EP = DP-attention 32: 3 dense layers (gather before, scatter after
    the MLP) then 58 MoE layers (dispatch before, combine after), the embedding first and
    the LM head last."""
    r = evaluate("DeepSeek-V3", "H100-SXM", 32, 128, "prefill", ep=32, attention_dp=32,
                 prompt=4096)
    st = {s.name: s.time for s in r.stages}
    chain = step_segments(r)
    assert len(chain) == 1 + 2 * 61 + 1
    attn = st["qkv"] + st["attention"] + st["out_proj"]
    mlp = st["mlp_up"] + st["mlp_down"]
    assert chain[1] == (attn, st["dp_gather"]) and chain[2] == (mlp, st["dp_scatter"])
    assert chain[7] == (attn, st["moe_dispatch"]) and chain[8] == (mlp, st["moe_combine"])
    assert chain[0] == (st["embedding"], 0.0) and chain[-1] == (st["lm_head"], 0.0)
    assert list(itertools.chain(*chain)).count(st["moe_dispatch"]) == 58


def test_a_step_without_network_hides_nothing_and_leaves_no_negative_fill():
    """Llama-3-8B at TP 1 has no collective: both micro-batches' chains are compute alone,
    so the overlapped step is the compute stream's work and what neither stream hides is
    exactly 0 (the schedule's sum and the streams' sum add the same segments in another
    order, which left -1.4e-17 s, printed as 'neither hidden -1.388e-08 ns')."""
    tb = evaluate_two_batch("Llama-3-8B", "H100-SXM", 1, 3, "prefill")
    assert tb.network == 0.0
    assert tb.micro_batches == (1.5, 1.5)     # 3 prompts on one rank: one cut in two
    assert tb.latency == pytest.approx(tb.compute, rel=1e-12)
    assert tb.fill == 0.0
    assert tb.schedule_dict()["fill_s"] == 0.0          # infer --json's two_batch_schedule
