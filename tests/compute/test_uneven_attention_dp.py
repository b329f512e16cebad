"""MoE stages under uneven attention data parallelism, and two-batch overlap split rank by
rank.

With ``a`` attention groups and a batch of ``s`` sequences, ``s mod a`` groups hold
``ceil(s / a)`` sequences and attention already takes that busiest group. A step waits on
its slowest GPU, so the stages that run on a GPU's own tokens take the busiest group's too:
the MoE dispatch and combine all-to-alls send at least the busiest sender's copies
(its own tokens x top-k, to the ``tp / ep`` GPUs of each expert group), and the router, the
shared experts and a data-parallel dense MLP run on those tokens. Where ``a`` divides the
batch nothing moves, bit for bit.

Two-batch overlap cuts each rank's own sequences in two (SGLang's two_batch_overlap.py runs
on each DP rank's batch: decode by sequences, prefill by sequences unless a side would hold
under 0.48 of the rank's tokens, then at half its tokens, one prompt cut in two), so a rank
holding one prompt puts half its tokens in each micro-batch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.micro_batches import rank_halves
from compute.models import get_model
from compute.parallel import Parallelism, dense_data_parallel, layout
from compute.phases import Workload
from compute.stages import mlp_work_by_kind, stage_work
from compute.two_batch import evaluate_two_batch

PROMPT = 1500
W = Workload("prefill", prompt=PROMPT)
FP8 = 1 + 4 / 128           # DeepSeek-V3's dispatch: fp8 and a fp32 scale per 128


def _sh(name, tp, ep, a, dense_dp=False):
    m = get_model(name)
    configs = [Parallelism(tp, ep=ep, attention_dp=a)]
    sh = layout(m, configs)
    return m, dense_data_parallel(m, configs, sh, 1) if dense_dp else sh


def _a2a(name, tp, ep, a, batch, skew=1.0):
    m, sh = _sh(name, tp, ep, a)
    work = {x[0]: x for x in stage_work(m, sh, np.array([[float(batch)]]), W, skew)}
    return (float(np.ravel(work["moe_dispatch"][5])[0]),
            float(np.ravel(work["moe_combine"][5])[0]))


# ---- the plain step: the busiest sender ------------------------------------------------

def test_deepseek_batch_3_attention_dp_32_by_hand():
    # one group holds 1 prompt of 1500 tokens on its tp / a = 1 GPU: 1500 x top-8 copies of
    # 7168 elements out in fp8 with tile scales, back in bf16; the mean GPU owns
    # 3 x 1500 / 32 = 140.6 tokens (10.7x fewer): 8.316 MB
    dispatch, combine = _a2a("DeepSeek-V3", 32, 32, 32, 3)
    assert dispatch == pytest.approx(1500 * 8 * 7168 * FP8)   # 88.70 MB
    assert combine == pytest.approx(1500 * 8 * 7168 * 2)      # 172.0 MB
    assert dispatch / (3 * 1500 / 32 * 8 * 7168 * FP8) == pytest.approx(32 / 3)


def test_expert_groups_wider_than_one_gpu():
    # gpt-oss-120b (top-4 of hidden 2880, bf16), EP 8 of TP 32: each copy to the tp / ep = 4
    # GPUs of its expert group; DP-attention 32: one GPU holds a whole prompt
    dispatch, combine = _a2a("gpt-oss-120b", 32, 8, 32, 3)
    assert dispatch == combine == pytest.approx(1500 * 4 * 4 * 2880 * 2)


def test_skewed_receiver_wins():
    # skew 32 (the ceiling at EP 32): the busiest receiver takes every copy, 4500 x 8
    dispatch, _ = _a2a("DeepSeek-V3", 32, 32, 32, 3, skew=32.0)
    assert dispatch == pytest.approx(4500 * 8 * 7168 * FP8)


@pytest.mark.parametrize("batch", [32, 64, 96])
def test_even_split_is_the_mean_bit_for_bit(batch):
    dispatch, combine = _a2a("DeepSeek-V3", 32, 32, 32, batch)
    n = batch * PROMPT
    assert dispatch == n * 8 * 7168 * 1.0 / 32 * FP8
    assert combine == n * 8 * 7168 * 1.0 / 32 * 2


def test_router_and_shared_experts_by_hand():
    # an MoE layer's mlp_up on the busiest GPU, DeepSeek-V3 TP = EP = DP-attention 32, 3
    # prompts: 4500 x 8 / 32 = 1125 routed copies through 2 x 2048 columns, and the router
    # (256 experts) and the shared expert (2 x 2048 columns) on its own 1500 tokens (the
    # mean GPU's 140.6 before)
    m, sh = _sh("DeepSeek-V3", 32, 32, 32)
    moe, _ = mlp_work_by_kind(m, sh, np.array([[3.0]]), W)["mlp_up"]
    h = 7168
    want = 2 * 1125 * h * 4096 + 2 * 1500 * h * 256 + 2 * 1500 * h * 4096
    assert float(np.ravel(moe[0])[0]) == pytest.approx(want, rel=1e-12)


def test_dense_mlp_data_parallel_by_hand():
    # --dense-mlp-tp 1: a dense layer's whole MLP (2 x 18432 columns up) on the busiest
    # GPU's own 1500 tokens, not the mean 140.6
    m, sh = _sh("DeepSeek-V3", 32, 32, 32, dense_dp=True)
    _, dense = mlp_work_by_kind(m, sh, np.array([[3.0]]), W)["mlp_up"]
    assert float(np.ravel(dense[0])[0]) == pytest.approx(2 * 1500 * 7168 * 2 * 18432,
                                                         rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 200), a=st.sampled_from([1, 2, 4, 8, 16, 32]),
       skew=st.floats(1.0, 40.0))
def test_larger_of_busiest_sender_and_receiver(batch, a, skew):
    dispatch, combine = _a2a("gpt-oss-120b", 32, 32, a, batch, skew)
    share = min(skew, 32 * 4 / 4)
    sender = math.ceil(batch / a) * PROMPT / (32 / a) * 4 * 2880 * 2
    receiver = batch * PROMPT * 4 * 2880 * share / 32 * 2
    assert dispatch == combine == pytest.approx(max(sender, receiver))
    assert dispatch >= receiver * (1 - 1e-12)        # never below the even split's
    if batch % a == 0:
        assert dispatch == pytest.approx(receiver)


# ---- two-batch overlap: each rank's own sequences in two --------------------------------

@pytest.mark.parametrize("phase,batch,a,want", [
    ("prefill", 32, 32, ((16.0, 0.5), (16.0, 0.5))),   # a prompt a rank: cut in two
    ("prefill", 64, 32, ((32.0, 1.0), (32.0, 1.0))),   # two a rank: one each
    ("prefill", 23, 1, ((11.5, 11.5), (11.5, 11.5))),  # 12 of 23 > 0.52: cut
    ("prefill", 25, 1, ((13.0, 13.0), (12.0, 12.0))),  # 13 of 25 = 0.52: by prompts
    ("prefill", 33, 32, ((16.5, 1.0), (16.5, 1.0))),   # 31 ranks cut, one of 2 splits
    ("decode", 33, 32, ((32.0, 1.0), (1.0, 1.0))),     # decode: whole sequences
    ("decode", 63, 8, ((32.0, 4.0), (31.0, 4.0))),
    ("decode", 7, 1, ((4.0, 4.0), (3.0, 3.0))),
])
def test_rank_halves_by_hand(phase, batch, a, want):
    assert rank_halves(phase, batch, a, PROMPT if phase == "prefill" else 1) == want


def test_one_prompt_a_rank_halves_its_attention_and_dispatch():
    """DeepSeek-V3 prefill of 4096-token prompts at TP = EP = DP-attention 32, batch 32 (the
    case that halving the whole batch got wrong: each micro-batch kept a whole prompt on a
    rank): each micro-batch carries half of every rank's tokens, so half the attention and
    half the dispatch of the serial step, and the overlap pays."""
    tb = evaluate_two_batch("DeepSeek-V3", "H100-SXM", 32, 32, "prefill", ep=32,
                            attention_dp=32, prompt=4096)
    assert tb.micro_batches == (16, 16)
    serial = {s.name: s for s in tb.serial.stages}
    for h in tb.halves:
        st_ = {s.name: s for s in h.stages}
        assert st_["attention"].flops == pytest.approx(serial["attention"].flops / 2,
                                                       rel=1e-12)
        assert st_["moe_dispatch"].collective_bytes == pytest.approx(
            serial["moe_dispatch"].collective_bytes / 2, rel=1e-12)
        assert st_["moe_dispatch"].collective_bytes == pytest.approx(
            2048 * 8 * 7168 * FP8, rel=1e-12)
    assert tb.to_dict()["used"] and tb.latency < 0.75 * tb.serial.latency


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(2, 80), a=st.sampled_from([2, 4, 8, 16]),
       phase=st.sampled_from(["prefill", "decode"]))
def test_two_batch_invariants(batch, a, phase):
    """The two micro-batches hold the batch and the busiest rank's attention between them
    (a cut prompt half in each); each micro-batch's dispatch is at least its even split's;
    the overlapped step is never slower than the two micro-batches run one after the
    other. A decode rank of one sequence does not split (refused in one line)."""
    args = ("gpt-oss-120b", "H100-SXM", 16, batch, phase)
    kw = dict(ep=16, attention_dp=a, prompt=512)
    if phase == "decode" and batch < 2 * a:
        with pytest.raises(UserError, match=f"at least {2 * a}"):
            evaluate_two_batch(*args, **kw)
        return
    tb = evaluate_two_batch(*args, **kw)
    assert sum(tb.micro_batches) == batch
    assert tb.micro_batches[0] >= tb.micro_batches[1] > 0
    attn = [{s.name: s for s in r.stages}["attention"].flops for r in tb.halves]
    serial = {s.name: s for s in tb.serial.stages}["attention"].flops
    assert sum(attn) == pytest.approx(serial, rel=1e-12)
    assert tb.latency <= sum(h.latency for h in tb.halves) * (1 + 1e-12)
    tokens = 512 if phase == "prefill" else 1
    for seqs, h in zip(tb.micro_batches, tb.halves, strict=True):
        d = {s.name: s for s in h.stages}["moe_dispatch"].collective_bytes
        assert d >= seqs * tokens * 4 * 2880 * 2 / 16 * (1 - 1e-12)


def test_grid_and_evaluate_agree_on_an_uneven_batch():
    """The search's grid times the same micro-batches as evaluate_two_batch, cell by cell."""
    from compute.roofline import evaluate_grid
    from compute.roofline_options import RooflineOptions

    g = evaluate_grid("DeepSeek-V3", "H100-SXM", [Parallelism(32, ep=32, attention_dp=32)],
                      [3, 33], Workload("prefill", prompt=1500),
                      options=RooflineOptions(two_batch_overlap=True))
    for j, b in enumerate((3, 33)):
        tb = evaluate_two_batch("DeepSeek-V3", "H100-SXM", 32, b, "prefill", ep=32,
                                attention_dp=32, prompt=1500)
        assert g.two_batch_latency[0, j] == tb.latency
        assert evaluate("DeepSeek-V3", "H100-SXM", 32, b, "prefill", ep=32, attention_dp=32,
                        prompt=1500).latency == tb.serial.latency
