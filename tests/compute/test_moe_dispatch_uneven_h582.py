"""The MoE dispatch and combine all-to-alls under uneven attention data parallelism: a
GPU's all-to-all sends its own tokens' top-k copies and receives its experts' share, so
the bytes per GPU are the larger of the busiest sender's (the busiest attention group's
ceil(s / a) sequences, scattered over its tp / a GPUs) and the busiest receiver's
(n top-k / ep x skew), as attention already takes the busiest group."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.models import get_model
from compute.parallel import Parallelism, layout
from compute.phases import Workload
from compute.stages import stage_work

PROMPT = 1500
W = Workload("prefill", prompt=PROMPT)


def _a2a(name, tp, ep, a, batch, skew=1.0):
    m = get_model(name)
    sh = layout(m, [Parallelism(tp, ep=ep, attention_dp=a)])
    work = {x[0]: x for x in stage_work(m, sh, np.array([[float(batch)]]), W, skew)}
    return (float(np.ravel(work["moe_dispatch"][5])[0]),
            float(np.ravel(work["moe_combine"][5])[0]))


def test_deepseek_batch_3_attention_dp_32_by_hand():
    # one group holds 1 prompt of 1500 tokens, and tp / a = 1 GPU owns them all: 1500 x
    # top-8 copies of 7168 elements, fp8 with 1 x 128 tile scales (1 + 4/128 bytes) out,
    # bf16 back; the mean GPU owns 3 x 1500 / 32 = 140.6 tokens (10.7x fewer)
    dispatch, combine = _a2a("DeepSeek-V3", 32, 32, 32, 3)
    assert dispatch == pytest.approx(1500 * 8 * 7168 * (1 + 4 / 128))   # 88.70 MB
    assert combine == pytest.approx(1500 * 8 * 7168 * 2)                # 172.0 MB
    assert dispatch / (3 * 1500 / 32 * 8 * 7168 * (1 + 4 / 128)) == pytest.approx(32 / 3)


def test_gpt_oss_batch_3_by_hand():
    # gpt-oss-120b: top-4 of hidden 2880, bf16 both ways
    dispatch, combine = _a2a("gpt-oss-120b", 32, 32, 32, 3)
    assert dispatch == combine == pytest.approx(1500 * 4 * 2880 * 2)   # 34.56 MB


def test_expert_groups_wider_than_one_gpu():
    # EP 8 of TP 32: each copy goes to the tp / ep = 4 GPUs of its expert group
    dispatch, _ = _a2a("gpt-oss-120b", 32, 8, 32, 3)
    assert dispatch == pytest.approx(1500 * 4 * 4 * 2880 * 2)


def test_skewed_receiver_wins():
    # skew 32 (the ceiling at EP 32): the busiest receiver takes every copy, 4500 x 8
    dispatch, _ = _a2a("DeepSeek-V3", 32, 32, 32, 3, skew=32.0)
    assert dispatch == pytest.approx(4500 * 8 * 7168 * (1 + 4 / 128))


@pytest.mark.parametrize("batch", [32, 64, 96])
def test_even_split_is_the_mean(batch):
    # whole prompts per group: every GPU sends and receives n top-k / ep copies
    dispatch, combine = _a2a("DeepSeek-V3", 32, 32, 32, batch)
    n = batch * PROMPT
    assert dispatch == n * 8 * 7168 * 1.0 / 32 * (1 + 4 / 128)
    assert combine == n * 8 * 7168 * 1.0 / 32 * 2


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 200), a=st.sampled_from([1, 2, 4, 8, 16, 32]),
       skew=st.floats(1.0, 40.0))
def test_larger_of_busiest_sender_and_receiver(batch, a, skew):
    dispatch, combine = _a2a("gpt-oss-120b", 32, 32, a, batch, skew)
    share = min(skew, 32 * 4 / 4)
    sender = math.ceil(batch / a) * PROMPT / (32 / a) * 4 * 2880 * 2
    receiver = batch * PROMPT * 4 * 2880 * share / 32 * 2
    assert dispatch == combine == pytest.approx(max(sender, receiver))
    if batch % a == 0:
        assert dispatch == pytest.approx(receiver)
