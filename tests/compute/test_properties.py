"""Invariants of the roofline model and the search (hypothesis)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.evaluate_one import evaluate
from compute.hardware import catalog, derive_gpu, get_gpu
from compute.models import get_model, model_names
from compute.phases import Slo
from compute.roofline_options import RooflineOptions
from compute.search import search
from compute.sharding import valid_tp_degrees
from compute.stage_peaks import stage_peaks
from compute.stages import STAGES

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@st.composite
def configs(draw):
    model = get_model(draw(st.sampled_from(model_names())))
    gpu = get_gpu(draw(st.sampled_from(sorted(catalog()))))
    tp = draw(st.sampled_from(valid_tp_degrees(model, gpu.max_instance)))
    batch = draw(st.integers(1, 1024))
    phase = draw(st.sampled_from(["prefill", "decode"]))
    mode = draw(st.sampled_from(["overlap", "serial"]))
    overlap_coll = mode == "overlap" and draw(st.booleans())
    options = RooflineOptions(mode=mode, overlap_collectives=overlap_coll)
    return model, gpu, tp, batch, phase, options


multipliers = st.floats(1.0, 8.0, allow_nan=False)


@FAST
@given(configs(), multipliers, multipliers, multipliers)
def test_more_flops_or_bandwidth_is_never_slower(cfg, mf, mh, mn):
    model, gpu, tp, batch, phase, options = cfg
    faster = derive_gpu(gpu, "faster", flops_multiplier=mf, hbm_bandwidth_multiplier=mh,
                        network_bandwidth_multiplier=mn)
    base = evaluate(model, gpu, tp, batch, phase, options=options)
    fast = evaluate(model, faster, tp, batch, phase, options=options)
    assert fast.latency <= base.latency * (1 + 1e-12)
    for a, b in zip(base.stages, fast.stages, strict=True):
        assert b.compute_time <= a.compute_time * (1 + 1e-12)
        assert b.memory_time <= a.memory_time * (1 + 1e-12)
        assert b.network_time <= a.network_time * (1 + 1e-12)


@FAST
@given(configs())
def test_tokens_per_sm_never_exceed_the_compute_roofline(cfg):
    model, gpu, tp, batch, phase, options = cfg
    r = evaluate(model, gpu, tp, batch, phase, options=options)
    # Every token passes through every layer's Q, K, V, O matrices (MLA: every projection
    # matrix, the up-projections absorbed or used to decompress) and its routed and shared
    # experts' (or dense MLP's) matrices: at least 2 FLOPs per weight (written out from the
    # architecture, no replication, no attention).
    q, kv = model.heads * model.head_dim, model.kv_heads * model.head_dim
    if model.is_mla:
        attn = (model.attention_parameters - model.norm_elements(model.q_lora_rank)
                - model.norm_elements(model.kv_lora_rank))
    else:
        attn = model.hidden * (2 * q + 2 * kv)
    mult = (3 if model.gated_mlp else 2) * model.hidden
    moe = attn + mult * (model.ffn * model.experts_per_token + model.shared_ffn)
    dense = attn + mult * (model.dense_ffn or model.ffn)
    flops_per_token = 2 * (model.moe_layers * moe + (model.layers - model.moe_layers) * dense)
    peak_per_sm = max(stage_peaks(model, gpu, STAGES)) / gpu.sms   # fp8 where w8a8 runs it
    assert r.tokens_per_s_per_sm <= peak_per_sm / flops_per_token * (1 + 1e-9)


@FAST
@given(configs())
def test_time_split_adds_up_and_stages_are_bounded_by_their_max(cfg):
    model, gpu, tp, batch, phase, options = cfg
    r = evaluate(model, gpu, tp, batch, phase, options=options)
    assert sum(r.time_split().values()) == pytest.approx(r.latency, rel=1e-9)
    for s in r.stages:
        assert s.time <= s.compute_time + s.memory_time + s.network_time + 1e-18
        assert s.bound in ("compute", "memory", "network")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(model_names()), st.sampled_from(sorted(catalog())),
       st.sampled_from(["prefill", "decode"]),
       st.floats(1e-4, 5.0), st.floats(0.0, 0.9))
def test_infeasible_is_never_best(model, gpu, phase, limit, reserve):
    slo = Slo(ttft=limit, tbt=limit)
    r = search(model, gpu, phase, slo=slo, options=RooflineOptions(memory_reserve=reserve),
               max_batch=96)
    g = r.grid
    if r.best is None:
        assert not g.feasible.any() and r.reason
        return
    assert r.best.feasible and r.best.memory.fits and r.best.latency <= limit
    i, j = g.tps.index(r.best.tp), r.best.batch - 1
    assert g.feasible[i, j]
    assert r.best.tokens_per_s_per_sm == pytest.approx(
        np.max(np.where(g.feasible, g.tokens_per_s_per_sm, -np.inf)), rel=1e-12)
    assert all(p.latency <= limit for p in r.front + r.by_tp)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(model_names()), st.sampled_from(["H100-SXM", "Lite"]),
       st.integers(1, 512))
def test_decode_latency_grows_with_batch_and_context(model, gpu, batch):
    m = get_model(model)
    tp = valid_tp_degrees(m, get_gpu(gpu).max_instance)[-1]
    a = evaluate(m, gpu, tp, batch, "decode")
    b = evaluate(m, gpu, tp, batch + 1, "decode")
    c = evaluate(m, gpu, tp, batch, "decode", context=min(3000, m.max_context or 3000))
    assert a.latency <= b.latency and a.latency <= c.latency
