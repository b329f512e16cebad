"""evaluate()'s scalar path and evaluate_many() against the grid path they replace.

The numbers must not change: ``evaluate`` on a plain TP configuration used to run a one-cell
:func:`evaluate_grid`; its scalar path must give the same :class:`InferenceResult` to the
last bit (dataclass equality compares every float exactly), and every entry of
``evaluate_many`` must equal ``evaluate`` of its pair.
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.comm import NoCommunication, RingAlphaBeta
from compute.errors import UserError
from compute.hardware import catalog, get_gpu
from compute.models import get_model, model_catalog
from compute.parallel import Parallelism, configurations
from compute.phases import Slo
from compute.results import MemoryFit, StageResult, unchecked
from compute.roofline import (
    RooflineOptions,
    _pairwise_sum,
    evaluate,
    evaluate_grid,
    evaluate_many,
    make_workload,
)
from compute.sharding import valid_tp_degrees

OPTIONS = [None, RooflineOptions(mode="serial"), RooflineOptions(overlap_collectives=True),
           RooflineOptions(flops_efficiency=0.6, memory_efficiency=0.8, memory_reserve=0.2,
                           compute_dtype="bf16")]
COMMS = [None, NoCommunication(), RingAlphaBeta(bandwidth=100e9, step_latency=3e-6),
         lambda op, n, p: 2e-6 * p + n / 80e9]


def _one_cell(model, gpu, tp, batch, workload, options, comm, slo=None):
    """What evaluate() computed before its scalar path: a grid of one cell."""
    limit = (slo or Slo()).limit(workload.phase)
    return evaluate_grid(model, gpu, [tp], [batch], workload, options=options, comm=comm,
                         latency_limit=limit).result(0, 0)


def test_scalar_path_equals_the_one_cell_grid_for_every_model_and_gpu():
    rng = random.Random(11)
    n = 0
    for model in model_catalog().values():
        for gpu in catalog().values():
            for tp in valid_tp_degrees(model, gpu.max_instance):
                for phase in ("prefill", "decode"):
                    w = make_workload(phase, prompt=rng.choice([None, 64, 1000]),
                                      context=rng.choice([None, 9, 2000]))
                    b = rng.choice([1, 2, 3, 17, 256, 1024, 5000])
                    o, c = rng.choice(OPTIONS), rng.choice(COMMS)
                    new = evaluate(model, gpu, tp, b, w, options=o, comm=c)
                    old = _one_cell(model, gpu, tp, b, w, o, c)
                    assert new == old, (model.name, gpu.name, tp, phase, b, o)
                    n += 1
    assert n > 500      # every catalog model on every catalog GPU, both phases


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(model_catalog())), st.sampled_from(["H100-SXM", "Lite", "B200-HGX"]),
       st.integers(1, 4096), st.sampled_from(["prefill", "decode"]),
       st.integers(0, len(OPTIONS) - 1), st.integers(0, len(COMMS) - 1), st.data())
def test_scalar_path_equals_the_grid_on_random_configurations(name, gpu, batch, phase, oi, ci,
                                                             data):
    model, g = get_model(name), get_gpu(gpu)
    tp = data.draw(st.sampled_from(valid_tp_degrees(model, g.max_instance)))
    w = make_workload(phase, prompt=min(512, model.max_context or 512))
    slo = Slo(ttft=0.3, tbt=0.02)
    new = evaluate(model, g, tp, batch, w, options=OPTIONS[oi], comm=COMMS[ci], slo=slo)
    assert new == _one_cell(model, g, tp, batch, w, OPTIONS[oi], COMMS[ci], slo)
    assert new.latency == pytest.approx(sum(s.total_time for s in new.stages), rel=1e-14)


def test_scalar_path_checks_what_evaluate_checked():
    evaluate("Llama-3-70B", "H100-SXM", 8, 1)             # cached plan for TP 8
    for tp, what in ((True, "TP degree"), (8.5, "TP degree"), (3, "does not divide"),
                     (64, "exceeds the largest instance")):
        with pytest.raises(UserError, match=what):
            evaluate("Llama-3-70B", "H100-SXM", tp, 1)
    with pytest.raises(UserError, match="batch"):
        evaluate("Llama-3-70B", "H100-SXM", 8, 0)
    with pytest.raises(UserError, match="max_context"):
        evaluate("Llama-2-70B", "H100-SXM", 8, 1, "decode", context=5000)
    with pytest.raises(UserError, match="expert_skew"):
        evaluate("Llama-3-70B", "H100-SXM", 8, 1, expert_skew=0.5)
    with pytest.raises(ValueError, match="negative"):
        evaluate("Llama-3-70B", "H100-SXM", 8, 1, comm=lambda op, n, p: -n)
    assert evaluate("Llama-3-70B", "H100-SXM", 8.0, 4.0) == evaluate("Llama-3-70B",
                                                                    "H100-SXM", 8, 4)


def test_a_comm_function_is_asked_once_per_operation_with_every_size():
    calls = []

    def comm(op, n, p):
        calls.append((op, p, np.shape(n)))
        return 1e-6 + n / 1e11

    r = evaluate("Llama-3-70B", "H100-SXM", 4, 3, comm=comm)
    assert calls == [("all-gather", 4, (1,)), ("all-reduce", 4, (3,))]  # sorted, as the grid
    by = {s.name: s for s in r.stages}
    assert by["allreduce_mlp"].network_time == 1e-6 + 3 * 8192 * 2 / 1e11


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 100, 128])
def test_pairwise_sum_adds_in_numpys_order(n):
    rng = np.random.default_rng(n)
    for _ in range(200):
        xs = rng.random(n) * 10.0 ** rng.uniform(-9, 0, n)
        want = float(xs.reshape(n, 1, 1).sum(axis=0)[0, 0])
        assert _pairwise_sum(xs.tolist()) == want


def test_unchecked_builds_what_the_constructor_builds():
    values = dict(name="qkv", count=80, flops=1.0, hbm_bytes=2.0, collective="",
                  collective_bytes=0.0, compute_time=3.0, memory_time=4.0, network_time=0.0,
                  time=4.0, bound="memory")
    s = unchecked(StageResult, values)
    assert s == StageResult(**values) and s.total_time == 320.0
    m = unchecked(MemoryFit, dict(weights=5.0, kv_cache=1.0, activations=1.0, capacity=10.0,
                                  reserve_fraction=0.5))
    assert m == MemoryFit(5.0, 1.0, 1.0, 10.0, 0.5) and not m.fits and m.reason == ""


# ---- evaluate_many ------------------------------------------------------------------------

@pytest.mark.parametrize("name,gpu,kw", [
    ("Llama-3-70B", "Lite", dict(pp=(1, 2, 4), attention_dp=True)),
    ("Mixtral-8x7B", "Lite", dict(pp=(1, 2), ep=True, attention_dp=True)),
    ("DeepSeek-V3", "H100-SXM", dict(ep=True, attention_dp=True)),
    ("GPT-3-175B", "H100-SXM", {}),
])
@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_every_entry_of_evaluate_many_equals_evaluate(name, gpu, kw, phase):
    model, g = get_model(name), get_gpu(gpu)
    configs = configurations(model, g.max_instance, max_gpus=64, **kw)
    rng = random.Random(f"{name}{phase}")
    pairs = [(rng.choice(configs), rng.choice([1, 2, 5, 33, 256, 1000])) for _ in range(40)]
    for o in OPTIONS[:3]:
        e = evaluate_many(model, g, [c for c, _ in pairs], [b for _, b in pairs], phase,
                          options=o, expert_skew=1.5)
        assert len(e) == len(pairs) and e.latency.shape == (len(pairs),)
        for i, (c, b) in enumerate(pairs):
            r = evaluate(model, g, c.tp, b, phase, pp=c.pp, ep=c.ep,
                         attention_dp=c.attention_dp, options=o, expert_skew=1.5)
            assert (e.latency[i], e.weights[i], e.kv_cache[i], e.activations[i], e.fits[i]) \
                == (r.latency, r.memory.weights, r.memory.kv_cache, r.memory.activations,
                    r.memory.fits)
            assert (e.tokens_per_s_per_sm[i], e.feasible[i]) == (r.tokens_per_s_per_sm,
                                                                 r.feasible)
            split = r.time_split()
            assert e.network_s[i] == pytest.approx(split["network"], rel=1e-12, abs=1e-18)
            assert e.configs[i] == c and e.batch[i] == b
        assert np.allclose(e.compute_s + e.memory_s + e.network_s, e.latency, rtol=1e-12)
    assert e.result(3) == evaluate(model, g, pairs[3][0].tp, pairs[3][1], phase,
                                   pp=pairs[3][0].pp, ep=pairs[3][0].ep,
                                   attention_dp=pairs[3][0].attention_dp, options=o,
                                   expert_skew=1.5)


def test_evaluate_many_takes_tp_degrees_rows_and_one_batch_for_all():
    rows = np.array([[8, 1, 1, 1], [4, 2, 1, 1], [8, 1, 1, 1]])
    e = evaluate_many("Llama-3-70B", "H100-SXM", rows, 16, "decode")
    assert [c.label for c in e.configs] == ["TP 8", "TP 4 x PP 2", "TP 8"]
    assert e.latency[0] == e.latency[2] == evaluate("Llama-3-70B", "H100-SXM", 8, 16).latency
    assert e.gpus.tolist() == [8.0, 8.0, 8.0]
    t = evaluate_many("Llama-3-70B", "H100-SXM", [1, 2, 8], [4, 4, 4], "prefill", prompt=100)
    assert t.tokens_per_step.tolist() == [400.0] * 3


def test_evaluate_many_asks_the_collective_model_once_per_operation_and_group():
    calls = []

    def comm(op, n, p):
        calls.append((op, p, np.shape(n)))
        return 1e-6 + n / 1e11

    evaluate_many("Llama-3-70B", "H100-SXM", [8, 4, 8, 2, 1] * 100, np.arange(1, 501),
                  "decode", comm=comm)
    assert sorted((op, p) for op, p, _ in calls) == [
        ("all-gather", 2), ("all-gather", 4), ("all-gather", 8),
        ("all-reduce", 2), ("all-reduce", 4), ("all-reduce", 8)]
    assert {(op, p): s for op, p, s in calls}[("all-reduce", 8)] == (3 * 200,)


@pytest.mark.parametrize("configs,batches,what", [
    ([], [1], "no configuration"),
    ([8, 4], [1, 2, 3], "one batch per configuration"),
    ([8, 0], [1, 1], "tp degree must be a whole number"),
    ([8.5], [1], "tp degree must be a whole number"),
    ([3], [1], "does not divide"),
    ([[8, 3, 1, 1]], [1], "PP degree 3 does not divide"),
    ([[8, 1]], [1], "rows of"),
    (["8"], [1], "TP degrees"),
    ([8], [0], "batches must be whole numbers"),
])
def test_evaluate_many_refuses_bad_input_in_one_line(configs, batches, what):
    with pytest.raises(UserError, match=what) as exc:
        evaluate_many("Llama-3-70B", "H100-SXM", configs, batches, "decode")
    assert "\n" not in str(exc.value)


def test_evaluate_many_on_plain_parallelism_objects_matches_tp_degrees():
    a = evaluate_many("Llama-3-8B", "Lite", [Parallelism(4), Parallelism(8)], [3, 9])
    b = evaluate_many("Llama-3-8B", "Lite", [4, 8], [3, 9])
    assert a.latency.tolist() == b.latency.tolist()
