"""An EP degree that does not divide the routed experts places redundant expert copies, as
DeepSeek's serving does (DeepSeek-V3/R1 Inference System Overview, Feb 2025,
github.com/deepseek-ai/open-infra-index: prefill EP32 with 32 redundant routed experts,
9 a GPU; decode EP144 with 32 redundant routed experts, 2 a GPU). Each of the ``ep`` groups
holds ceil(experts / ep) slots; the weights per GPU count them. Numbers by hand below; the
old code refused every such EP ('EP degree 3 does not divide the 8 experts ...')."""

from __future__ import annotations

import re

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.models import get_model
from compute.parallel import Parallelism, check_parallelism, configurations, expert_slots
from compute.search import search

# Mixtral-8x7B: one expert = 3 x hidden 4,096 x ffn 14,336 weights x 2 bytes (bf16)
MIXTRAL_EXPERT = 3 * 4096 * 14336 * 2            # 352,321,536 bytes
# DeepSeek-V3: one routed expert = 3 x 7,168 x 2,048 weights x 1 byte (fp8), 58 MoE layers
DSV3_EXPERT, DSV3_MOE_LAYERS = 3 * 7168 * 2048, 58     # 44,040,192 bytes


def test_slots_and_redundant_copies():
    assert expert_slots(256, 144) == (2, 32)     # DeepSeek's decode: 2 a GPU, 32 redundant
    # its prefill EP32 holds 32 copies by choice (9 a GPU); the model places only those an
    # EP that does not divide the experts needs
    assert expert_slots(256, 32) == (8, 0)
    assert expert_slots(8, 3) == (3, 1)
    assert expert_slots(8, 16) == (1, 8)         # more groups than experts: copies of each
    assert expert_slots(8, 8) == (1, 0)


def test_mixtral_ep3_holds_three_slots_a_gpu():
    # TP 3 x EP 3 x DP-attention 3: one GPU a group, 3 slots (9 slots for 8 experts)
    ep3 = evaluate("Mixtral-8x7B", "H100-SXM", 3, 8, ep=3, attention_dp=3)
    ep4 = evaluate("Mixtral-8x7B", "H100-SXM", 4, 8, ep=4, attention_dp=4)
    # attention (replicated a group), router, norms and embeddings alike (1 GPU a group):
    # only the experts differ, 3 slots against 2, in each of 32 layers
    assert ep3.memory.weights - ep4.memory.weights == 32 * (3 - 2) * MIXTRAL_EXPERT \
        == 11_274_289_152
    assert (ep3.redundant_experts, ep4.redundant_experts) == (1, 0)
    assert ep3.to_dict()["redundant_experts"] == 1 and "redundant_experts" not in ep4.to_dict()
    par = check_parallelism(get_model("Mixtral-8x7B"), Parallelism(3, ep=3, attention_dp=3))
    assert par.describe(1) == "TP 3 x EP 3 (1 redundant expert) x DP-attention 3"
    assert par.label == "TP 3 x EP 3 x DP-attention 3"


def test_deepseek_v3_decode_ep144_on_two_gb300_racks():
    # TP 144 x EP 144 x DP-attention 144 (DeepSeek's decode EP, here on GB300-NVL72 racks:
    # attention groups and experts of one GPU each fit the 72-GPU domain), on a ring: the
    # all-to-alls (under the lower bound SGLang's DP-attention gather takes batch 64, its
    # shared expert split over the 144 GPUs: tests/compute/test_moe_dp_gather.py)
    from compute.comm import RingAlphaBeta
    from compute.hardware import get_gpu

    kw = dict(attention_dp=144,
              comm=RingAlphaBeta(bandwidth=get_gpu("GB300-NVL72").scaleup_bandwidth))
    ep144 = evaluate("DeepSeek-V3", "GB300-NVL72", 144, 64, ep=144, **kw)
    ep72 = evaluate("DeepSeek-V3", "GB300-NVL72", 144, 64, ep=72, **kw)
    ep16 = evaluate("DeepSeek-V3", "GB300-NVL72", 144, 64, ep=16, **kw)   # divides 256
    # expert bytes per GPU = ceil(256 / ep) x per-expert bytes / expert_tp, x 58 layers:
    # EP 144: 2 x 44,040,192; EP 72: 4 x 44,040,192 / 2; EP 16: 16 x 3 x 7,168 x ceil(2,048 / 9)
    per_gpu = {144: 2 * DSV3_EXPERT, 72: 4 * DSV3_EXPERT // 2, 16: 16 * 3 * 7168 * 228}
    assert per_gpu == {144: 88_080_384, 72: 88_080_384, 16: 78_446_592}
    assert ep144.memory.weights == ep72.memory.weights
    assert ep144.memory.weights - ep16.memory.weights == \
        DSV3_MOE_LAYERS * (per_gpu[144] - per_gpu[16]) == 558_759_936
    assert (ep144.redundant_experts, ep72.redundant_experts, ep16.redundant_experts) == \
        (32, 32, 0)
    # the replicas spread the load: routed token copies per GPU n k / ep, all-to-alls as before
    a2a = {r.ep: next(s.collective_bytes for s in r.stages if s.name == "moe_dispatch")
           for r in (ep144, ep16)}
    assert a2a[144] * 144 == pytest.approx(a2a[16] * 16, rel=1e-12)


def test_explicit_ep_list_may_hold_non_divisors_and_true_stays_divisors():
    m = get_model("DeepSeek-V3")
    cs = configurations(m, 72, tp=(144,), ep=(144,), attention_dp=(144,))
    assert cs == (Parallelism(144, 1, 144, 144),)
    every = configurations(m, 72, ep=True, attention_dp=True, max_gpus=288)
    assert {c.ep for c in every} <= {1, 2, 4, 8, 16, 32, 64, 128, 256}
    r = search(m, "GB300-NVL72", tp=(144,), ep=(144,), attention_dp=(144,), max_batch=64)
    assert r.best is not None and r.best.redundant_experts == 32


@pytest.mark.parametrize("kw, msg", [
    (dict(tp=8, ep=3), "EP degree 3 does not divide TP degree 8"),
    (dict(tp=8, ep=0), "EP degree must be a whole number >= 1, got 0"),
    (dict(tp=8, ep=-2), "EP degree must be a whole number >= 1, got -2"),
    (dict(tp=8, ep=2.5), "EP degree must be a whole number >= 1, got 2.5"),
])
def test_still_refused_in_one_line(kw, msg):
    with pytest.raises(UserError, match=re.escape(msg)) as e:
        evaluate("Mixtral-8x7B", "H100-SXM", batch=8, **kw)
    assert "\n" not in str(e.value)
