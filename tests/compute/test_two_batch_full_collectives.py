"""Two-batch overlap with ``overlap_collectives``: each micro-batch's collectives go on the
communication stream in full (the other micro-batch's compute hides them), so the
overlapped step never ends before that stream's work, and more FLOP/s or HBM bandwidth
never makes it slower.

Before the fix the halves were evaluated with ``overlap_collectives`` too, so each
collective's segment was only its part longer than its producer GEMM: gpt-oss-20b prefill
on GB200-NVL72 at TP 32 x DP-attention 2, batch 128 of 1500-token prompts, took 98.87 ms
overlapped while its collectives alone take 99.18 ms on the one communication stream; and
with 1.5x the HBM bandwidth (a shorter GEMM, so a longer visible collective) 99.31 ms.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.evaluate_one import evaluate
from compute.hardware import derive_gpu, get_gpu
from compute.models import get_model
from compute.parallel import configurations
from compute.roofline_options import RooflineOptions
from compute.two_batch import evaluate_two_batch

CASE = dict(model="gpt-oss-20b", tp=32, batch=128, phase="prefill", attention_dp=2,
            prompt=1500)
HIDE = RooflineOptions(overlap_collectives=True)


def _two(gpu, options, attention_dp=CASE["attention_dp"]):
    c = CASE
    return evaluate_two_batch(c["model"], gpu, c["tp"], c["batch"], c["phase"],
                              attention_dp=attention_dp, prompt=c["prompt"],
                              options=options)


@pytest.mark.parametrize("attention_dp", [2, 1])
def test_overlapped_step_carries_every_collective_in_full(attention_dp):
    gpu = get_gpu("GB200-NVL72")
    hidden, plain = (_two(gpu, o, attention_dp) for o in (HIDE, RooflineOptions()))
    # the communication stream's work does not depend on how the serial step hides it
    assert hidden.network == pytest.approx(plain.network, rel=1e-12)
    assert hidden.latency >= hidden.network
    assert hidden.latency == pytest.approx(plain.latency, rel=1e-12)
    if attention_dp == 1:   # the serial step still hides each all-reduce behind its producer
        assert hidden.serial.latency < plain.serial.latency
    else:   # a prefill under DP attention with groups of 16 GPUs (SUM_LEN) all-reduces no
        # GEMM's output before the gather: the gather's all-reduce among the 32 sums the
        # groups' partial sums (compute.dp_collectives), so the serial step hides nothing
        assert hidden.serial.latency == plain.serial.latency


def test_more_hbm_bandwidth_never_slows_the_overlapped_step():
    gpu = get_gpu("GB200-NVL72")
    faster = derive_gpu(gpu, "faster", flops_multiplier=1.5, hbm_bandwidth_multiplier=1.5)
    opts = RooflineOptions(overlap_collectives=True, two_batch_overlap=True)
    c = CASE
    base, fast = (evaluate(c["model"], g, c["tp"], c["batch"], c["phase"],
                           attention_dp=c["attention_dp"], prompt=c["prompt"], options=opts)
                  for g in (gpu, faster))
    assert fast.latency <= base.latency


MODELS = ["gpt-oss-20b", "Mixtral-8x7B", "Llama-3-70B", "DeepSeek-V3"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(["H100-SXM", "GB200-NVL72", "Lite"]),
       phase=st.sampled_from(["prefill", "decode"]), pick=st.integers(0, 10**6),
       batch=st.integers(2, 256), mf=st.floats(1.0, 4.0), mh=st.floats(1.0, 4.0),
       mn=st.floats(1.0, 4.0))
def test_faster_gpu_never_slower_with_both_overlaps(model, gpu, phase, pick, batch, mf, mh,
                                                     mn):
    m, g = get_model(model), get_gpu(gpu)
    cfgs = configurations(m, g.max_instance, ep=True, attention_dp=True)
    c = cfgs[pick % len(cfgs)]
    opts = RooflineOptions(overlap_collectives=True, two_batch_overlap=True)
    kw = dict(ep=c.ep, attention_dp=c.attention_dp, options=opts)
    base = evaluate(m, g, c.tp, batch, phase, **kw)
    fast = evaluate(m, derive_gpu(g, "faster", flops_multiplier=mf,
                                  hbm_bandwidth_multiplier=mh,
                                  network_bandwidth_multiplier=mn), c.tp, batch, phase, **kw)
    assert fast.latency <= base.latency * (1 + 1e-12), (model, gpu, phase, c, batch)
