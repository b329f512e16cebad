"""Valid-input fuzz of stop 23's surfaces (hypothesis): the LM head and embedding per
attention group, the grid's stage-by-stage path, evaluate_many, the Blackwell Ultra GPUs and
the API's evaluate with every parallel dimension.

Random (model, GPU, TP x PP x EP x DP-attention the model allows, batch, phase) from the
catalogs, including the MoE, MLA and sliding-window models and B300-HGX / GB300-NVL72:

* compute's evaluate, a one-cell evaluate_grid and evaluate_many give the same numbers, to
  the last bit, and netmodel.api.evaluate gives compute's;
* every latency and stage time is finite, the latency > 0;
* memory per GPU does not grow when TP doubles at fixed PP, EP and DP-attention;
* with attention DP 1 the extended stages (embedding, LM head) equal plain TP's;
* the LM head all-gathers ceil(s / a) x vocabulary rows x act bytes among its tp / a GPUs
  (the vocabulary padded to whole shards), costing nothing where tp / a = 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.evaluate_many import evaluate_many
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import get_model, model_names
from compute.parallel import Parallelism, check_parallelism, configurations
from compute.phases import Workload
from compute.roofline import evaluate_grid
from compute.search import _pareto_sorted, pareto_front

FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
GPUS = ("H100-SXM", "B200-HGX", "B300-HGX", "GB300-NVL72", "Lite", "A100-SXM-80GB")


def _configs(model, gpu):
    """Every configuration the search could try on ``gpu`` (wide stages up to 4 domains)."""
    layers = [p for p in (1, 2, 3, 4) if model.layers % p == 0]
    moe = model.is_moe
    return configurations(model, gpu.max_instance, pp=layers, ep=True if moe else None,
                          attention_dp=True, max_gpus=4 * gpu.max_instance * max(layers))


@st.composite
def cases(draw):
    model = get_model(draw(st.sampled_from(model_names())))
    gpu = get_gpu(draw(st.sampled_from(GPUS)))
    par = draw(st.sampled_from(_configs(model, gpu)))
    batch = draw(st.integers(1, 600))
    phase = draw(st.sampled_from(["prefill", "decode"]))
    skew = draw(st.sampled_from([1.0, 1.3])) if par.ep > 1 else 1.0
    return model, gpu, par, batch, phase, skew


def _kw(par, skew):
    return dict(pp=par.pp, ep=par.ep, attention_dp=par.attention_dp, expert_skew=skew)


def _same(a, b):
    """Two InferenceResults equal to the last bit: latency, stages, memory."""
    assert a.latency == b.latency or (math.isnan(a.latency) and math.isnan(b.latency))
    assert [s.name for s in a.stages] == [s.name for s in b.stages]
    for x, y in zip(a.stages, b.stages, strict=True):
        assert (x.count, x.flops, x.hbm_bytes, x.collective_bytes, x.time, x.bound) == \
            (y.count, y.flops, y.hbm_bytes, y.collective_bytes, y.time, y.bound), x.name
    assert (a.memory.weights, a.memory.kv_cache, a.memory.activations) == \
        (b.memory.weights, b.memory.kv_cache, b.memory.activations)


@FAST
@given(cases())
def test_evaluate_grid_many_and_api_agree_and_are_finite(case):
    from netmodel import api

    model, gpu, par, batch, phase, skew = case
    r = evaluate(model, gpu, par.tp, batch, phase, **_kw(par, skew))
    w = Workload(phase)
    g = evaluate_grid(model, gpu, [par], [batch], w, expert_skew=skew, latency_limit=r.latency_limit)
    _same(r, g.result(0, 0))
    e = evaluate_many(model, gpu, [par], [batch], phase, expert_skew=skew)
    assert float(e.latency[0]) == r.latency
    assert float(e.weights[0]) == r.memory.weights
    assert math.isclose(float(e.compute_s[0] + e.memory_s[0] + e.network_s[0]), r.latency,
                        rel_tol=1e-9)
    _same(r, api.evaluate(model, gpu, phase, tp=par.tp, batch=batch, **_kw(par, skew)))
    # finite, positive; every stage's times finite and >= 0
    assert math.isfinite(r.latency) and r.latency > 0
    for s in r.stages:
        for t in (s.compute_time, s.memory_time, s.network_time, s.time):
            assert math.isfinite(t) and t >= 0, (s.name, t)
    split = sum(r.time_split().values())
    assert math.isclose(split, r.latency, rel_tol=1e-9)


@FAST
@given(cases())
def test_memory_per_gpu_does_not_grow_with_tp(case):
    model, gpu, par, batch, phase, skew = case
    wider = Parallelism(2 * par.tp, par.pp, par.ep, par.attention_dp)
    try:
        wider = check_parallelism(model, wider, None)
    except Exception:   # noqa: BLE001 - 2 x TP's groups do not divide the heads
        return
    w = Workload(phase)
    g = evaluate_grid(model, gpu, [par, wider], [batch], w, expert_skew=skew)
    for part in ("weights", "kv_cache", "activations"):
        a, b = getattr(g, part)[:, 0]
        assert b <= a, (part, par.label, a, b)


@FAST
@given(cases())
def test_attention_dp_1_extended_stages_equal_plain_tp(case):
    model, gpu, par, batch, phase, skew = case
    if par.pp != 1 or par.attention_dp != 1:
        par = Parallelism(par.tp, 1, par.ep, 1)
        try:
            par = check_parallelism(model, par, None)
        except Exception:  # noqa: BLE001 - TP alone does not divide the heads
            return
    w = Workload(phase)
    plain = evaluate_grid(model, gpu, [par.tp], [batch], w).result(0, 0)
    # the plain row inside an extended grid (another row forces the extended stages)
    pp = next(p for p in range(2, model.layers + 1) if model.layers % p == 0)
    other = Parallelism(par.tp, 1, par.ep, 1) if par.ep > 1 else Parallelism(par.tp, pp=pp)
    ext = evaluate_grid(model, gpu, [Parallelism(par.tp), other], [batch], w)
    r0 = ext.result(0, 0)
    assert math.isclose(r0.latency, plain.latency, rel_tol=1e-12)
    by = {s.name: s for s in plain.stages}
    for s in r0.stages:
        p = by[s.name]
        assert (s.count, s.flops, s.hbm_bytes, s.collective_bytes) == \
            (p.count, p.flops, p.hbm_bytes, p.collective_bytes), s.name
    # an EP row's embedding and LM head are plain TP's too (attention DP 1)
    if par.ep == 1:
        return
    re = ext.result(1, 0)
    for name in ("embedding", "lm_head"):
        x = next(s for s in re.stages if s.name == name)
        p = by[name]
        assert (x.flops, x.hbm_bytes, x.collective_bytes, x.network_time) == \
            (p.flops, p.hbm_bytes, p.collective_bytes, p.network_time), name


@FAST
@given(cases())
def test_lm_head_gathers_the_groups_logits_among_its_gpus(case):
    model, gpu, par, batch, phase, skew = case
    r = evaluate(model, gpu, par.tp, batch, phase, **_kw(par, skew))
    lm = next(s for s in r.stages if s.name == "lm_head")
    group = par.tp // par.attention_dp
    micro = r.micro_batch
    seqs = -(-micro // par.attention_dp)
    rows = -(-model.vocab // group)                # the GPU's vocabulary shard
    assert lm.count == 1
    assert lm.flops == 2 * seqs * model.hidden * rows
    if group == 1:   # a collective among one GPU does not run (compute.stages)
        assert (lm.collective, lm.collective_bytes, lm.network_time) == ("", 0, 0.0)
    else:
        assert lm.collective == "all-gather"
        assert lm.collective_bytes == seqs * rows * group * model.act_bytes
        assert lm.network_time > 0.0
    emb = next(s for s in r.stages if s.name == "embedding")
    assert (emb.network_time == 0.0) == (group == 1)


@pytest.mark.parametrize(("lat", "score"), [((100,), (200,)), ((200,), (100,)), ((10,), (9,)),
                                            ((10, 10), (10, 10)), ((), ())])
def test_pareto_front_refuses_arrays_of_other_shapes(lat, score):
    # above 64 points the pre-filter indexed score by latency's order: 100 latencies and
    # 200 scores gave a front from the first 100 scores, silently
    rng = np.random.default_rng(0)
    with pytest.raises(UserError, match=r"latency and score must be 1-D arrays of one length"):
        pareto_front(rng.random(lat), rng.random(score))


@FAST
@given(st.lists(st.tuples(st.sampled_from([0.5, 1.0, 2.0, -0.0, 0.0, np.inf]),
                          st.sampled_from([1.0, 2.0, 3.0, -np.inf])), min_size=65, max_size=300))
def test_pareto_front_prefilter_keeps_the_full_sorts_answer(points):
    lat, score = (np.array(x, dtype=float) for x in zip(*points, strict=True))
    assert pareto_front(lat, score).tolist() == _pareto_sorted(lat, score).tolist()
