"""Invariants of one configuration beyond plain tensor parallelism (pipeline stages, expert
and attention data parallelism), under each way of forming a step (hypothesis):

* a step never gets faster with more sequences (while DP attention's ``dp_gather`` keeps
  its collective: SGLang chooses between an all-reduce and an all-gather by bytes, not by
  time, so a decode step can get faster where a larger batch turns the one into the
  other, a case checked by hand below), or with a longer context (decode) or prompt
  (prefill), with the default ring's collectives;
* serial mode (sum of each stage's times) is never faster than overlap (their max), and
  hiding collectives (``overlap_collectives``, ``two_batch_overlap``) never slower;
* the calibrated mode (an engine profile) and efficiency factors below 1 never beat the
  roofline, and change neither the work each stage does (FLOPs, HBM bytes, collective
  bytes) nor the memory a GPU needs.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from compute.comm import RingAlphaBeta
from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.exchange_names import EXCHANGES
from compute.hardware import get_gpu
from compute.models import get_model, model_names
from compute.profiles import get_profile
from compute.roofline import bound_comm
from compute.roofline_options import RooflineOptions
from tests.compute.step_helpers import dp_gather_ops

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: (tp, pp, ep, attention_dp): plain TP, pipelines, expert and attention DP, and mixes
LAYOUTS = ((1, 1, 1, 1), (8, 1, 1, 1), (8, 2, 1, 1), (2, 5, 1, 1), (8, 1, 8, 1),
           (8, 1, 8, 8), (8, 1, 2, 4), (8, 1, 1, 8), (4, 3, 4, 2), (32, 1, 32, 8),
           (16, 1, 16, 16), (72, 1, 72, 72))
GPUS = ("H100-SXM", "GB200-NVL72", "Lite", "A100-SXM-80GB")
#: the stages outside an MoE layer, whose work no exchange changes
OUTSIDE_MOE = ("embedding", "qkv", "attention", "out_proj", "lm_head")


def _run(model, gpu, layout, batch, phase, options=None, **kw):
    tp, pp, ep, adp = layout
    try:
        return evaluate(model, gpu, tp, batch, phase, pp=pp, ep=ep, attention_dp=adp,
                        options=options, **kw)
    except UserError:   # a layout the model or GPU refuses (a dense model's EP, TP 72 ...)
        assume(False)


cells = dict(model=st.sampled_from(model_names()), gpu=st.sampled_from(GPUS),
             layout=st.sampled_from(LAYOUTS), batch=st.integers(1, 300),
             phase=st.sampled_from(["prefill", "decode"]))


@FAST
@given(**cells, more=st.integers(1, 64))
def test_more_sequences_never_make_a_step_faster(model, gpu, layout, batch, phase, more):
    a = _run(model, gpu, layout, batch, phase)
    b = _run(model, gpu, layout, batch + more, phase)
    assume(dp_gather_ops(a) == dp_gather_ops(b))
    assert b.latency >= a.latency * (1 - 1e-12)


def test_sglangs_padding_mode_can_make_a_larger_decode_batch_faster():
    """Llama-3-8B (hidden 4,096, bf16: 8,192 B a row) on 8 H100s, TP 8 x DP-attention 8:
    3 sequences take SUM_LEN (2 x 3 < 8 groups x 1 row) and all-reduce their 3 rows
    (24,576 B) among 8, ring latency 2 x 7 steps; 4 take MAX_LEN (2 x 4 >= 8 x 1) and
    all-gather 8 groups' padded row (65,536 B), 7 steps: more bytes, fewer steps, a
    faster step (SGLang's rule weighs bytes only, python/sglang/srt/layers/dp_attention.py
    ``DpPaddingMode.get_dp_padding_mode``). On the ring, passed by name (RingAlphaBeta:
    1.9 us a step); the scale-up bound (compute.roofline.bound_comm) charges one step
    either way (the all-reduce 0.6 us + 24,576 B / 450 GB/s in the switch, 0.655 us; the
    all-gather 0.6 us + 7/8 x 65,536 B / 450 GB/s, 0.727 us): there the larger batch is
    the slower."""
    ring = RingAlphaBeta(bandwidth=450e9)
    small = _run("Llama-3-8B", "H100-SXM", (8, 1, 1, 8), 3, "decode", comm=ring)
    large = _run("Llama-3-8B", "H100-SXM", (8, 1, 1, 8), 4, "decode", comm=ring)
    gathers = {r.batch: next(s for s in r.stages if s.name == "dp_gather")
               for r in (small, large)}
    assert (gathers[3].collective, gathers[3].collective_bytes) == ("all-reduce", 3 * 8192)
    assert (gathers[4].collective, gathers[4].collective_bytes) == ("all-gather", 8 * 8192)
    assert gathers[4].network_time < gathers[3].network_time
    assert large.latency < small.latency
    scale_up = bound_comm(get_gpu("H100-SXM"))
    bound = {b: next(s for s in _run("Llama-3-8B", "H100-SXM", (8, 1, 1, 8), b, "decode",
                                     comm=scale_up).stages if s.name == "dp_gather")
             for b in (3, 4)}
    assert bound[3].network_time == pytest.approx(0.6e-6 + 24576 / 450e9, rel=1e-12)
    assert bound[4].network_time == pytest.approx(0.6e-6 + 7 / 8 * 65536 / 450e9, rel=1e-12)


@FAST
@given(**cells, tokens=st.integers(1, 2000), more=st.integers(1, 2000))
def test_a_longer_context_never_makes_a_step_faster(model, gpu, layout, batch, phase,
                                                   tokens, more):
    key = "context" if phase == "decode" else "prompt"
    a = _run(model, gpu, layout, batch, phase, **{key: tokens})
    b = _run(model, gpu, layout, batch, phase, **{key: tokens + more})
    assert b.latency >= a.latency * (1 - 1e-12)


@FAST
@given(**cells)
def test_serial_is_slowest_and_hiding_collectives_never_slower(model, gpu, layout, batch,
                                                               phase):
    base = _run(model, gpu, layout, batch, phase)
    serial = _run(model, gpu, layout, batch, phase, RooflineOptions(mode="serial"))
    hidden = _run(model, gpu, layout, batch, phase,
                  RooflineOptions(overlap_collectives=True))
    assert serial.latency >= base.latency * (1 - 1e-12)
    assert hidden.latency <= base.latency * (1 + 1e-12)
    if layout[1] == 1:   # two-batch overlap runs one pipeline stage
        two = _run(model, gpu, layout, batch, phase, RooflineOptions(two_batch_overlap=True))
        assert two.latency <= base.latency * (1 + 1e-12)


def _floor(base, options, comm, *cell):
    """The roofline a step under ``options`` is never faster than: ``base`` (the roofline's
    step), or, where ``base`` takes an MoE exchange the engine profile does not run (its
    ``moe_exchanges``), the roofline of the profile's exchanges only (``cell``: the
    configuration, :func:`_run`'s first arguments): a profile of efficiencies 1 and no
    overheads naming them, which is the roofline itself (naming every exchange, it gives
    the roofline's step to the last bit: below, 1.2008 s under the bound, 1.9627 s on the
    ring). A cell takes the exchange that
    fits where another does not (compute.exchange_take), so the roofline may take a slower
    exchange the profile cannot run because the profile's own do not fit: Qwen1.5-MoE-A2.7B
    on Lites, TP 16 x EP 16 x DP-attention 16, 279 prompts of prefill, the all-to-alls (4
    redundant experts) need 19.3 GB a GPU of 19.2 GB usable and SGLang's gather fits; the
    ring roofline takes the gather, 1.963 s, vLLM's profile the all-to-alls, 1.835 s (not
    fitting), the ring roofline of the all-to-alls 0.659 s."""
    if options.profile is None or base.moe_exchange in (options.profile.moe_exchanges
                                                        or EXCHANGES):
        return base
    roofline = dataclasses.replace(
        options.profile, gemm_efficiency=1.0, attention_efficiency=1.0, hbm_fraction=1.0,
        layer_overhead_s=0.0, step_overhead_s=0.0, decode_sequence_overhead_s=0.0,
        token_overhead_s=0.0, gemm_curve=())
    return _run(*cell, RooflineOptions(profile=roofline), comm=comm)


@FAST
@given(**cells, slower=st.sampled_from(["profile", "efficiency"]))
@example(model="Qwen1.5-MoE-A2.7B", gpu="H100-SXM", layout=(8, 1, 8, 8), batch=4,
         phase="decode", slower="profile")   # vLLM's exchanges where the bound takes SGLang's
@example(model="Mixtral-8x7B", gpu="H100-SXM", layout=(8, 1, 2, 4), batch=106,
         phase="prefill", slower="efficiency")   # another exchange the faster at 0.5/0.7
@example(model="Qwen1.5-MoE-A2.7B", gpu="Lite", layout=(16, 1, 16, 16), batch=279,
         phase="prefill", slower="profile")   # the roofline's exchange the only one that fits
def test_a_profile_or_efficiency_never_beats_the_roofline_nor_changes_the_work(
        model, gpu, layout, batch, phase, slower):
    base = _run(model, gpu, layout, batch, phase)
    options = (RooflineOptions(profile=get_profile("vllm-dgx-h100")) if slower == "profile"
               else RooflineOptions(flops_efficiency=0.5, memory_efficiency=0.7))
    r = _run(model, gpu, layout, batch, phase, options)
    cell = (model, gpu, layout, batch, phase)
    assert r.latency >= _floor(base, options, bound_comm(get_gpu(gpu)), *cell).latency * (
        1 - 1e-12)
    if slower == "profile":   # the calibrated mode's collectives: NCCL's ring, not the bound
        ring = RingAlphaBeta(bandwidth=get_gpu(gpu).scaleup_bandwidth)
        base = _run(model, gpu, layout, batch, phase, comm=ring)
        assert r.latency >= _floor(base, options, ring, *cell).latency * (1 - 1e-12)
        # the engine's own MoE exchanges (the profile's moe_exchanges) may change an MoE
        # layer's work by design; the rest of a profile never does
        r = _run(model, gpu, layout, batch, phase, RooflineOptions(
            profile=dataclasses.replace(options.profile, moe_exchanges=())))
    work, base_work = ({s.name: (s.count, s.flops, s.hbm_bytes, s.collective_bytes)
                        for s in x.stages} for x in (r, base))
    if r.moe_exchange != base.moe_exchange:
        # an MoE layer's exchange is the one whose step is the faster (compute.exchange_take),
        # so slower compute or memory may pick another (Mixtral TP 8 x EP 2 x DP-attention 4,
        # 106 prompts: the all-to-alls under the bound, SGLang's gather at half the FLOP/s),
        # which moves the MoE layer's work (its stages, padded rows) and the weights held;
        # the layers outside it do the same work
        assert get_model(model).is_moe
        work, base_work = ({k: v for k, v in w.items() if k in OUTSIDE_MOE}
                           for w in (work, base_work))
        assert set(work) == set(OUTSIDE_MOE)
    else:
        assert r.memory == base.memory
    assert work == base_work
