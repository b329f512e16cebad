"""evaluate()'s scalar path and evaluate_many() against the grid path they replace.

The numbers must not change: ``evaluate`` on a plain TP configuration used to run a one-cell
:func:`evaluate_grid`; its scalar path must give the same :class:`InferenceResult` to the
last bit (dataclass equality compares every float exactly), and every entry of
``evaluate_many`` must equal ``evaluate`` of its pair.
"""

import copy
import dataclasses
import pickle
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.comm import NoCommunication, RingAlphaBeta
from compute.errors import UserError
from compute.evaluate_many import evaluate_many
from compute.evaluate_one import evaluate
from compute.hardware import catalog, get_gpu
from compute.models import get_model, model_catalog
from compute.parallel import Parallelism, configurations
from compute.phases import Slo
from compute.results import MemoryFit, StageResult, unchecked
from compute.roofline import evaluate_grid, make_workload, stage_sum
from compute.roofline_options import RooflineOptions
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
    # a count given in code is an int: a float is refused, a whole one too (h741)
    for tp, batch, said in ((8.0, 4, "TP degree must be a whole number >= 1 (an int), got 8.0"),
                            (8, 4.0, "batch must be a whole number of sequences >= 1 (an int), "
                                     "got 4.0")):
        with pytest.raises(UserError, match=re.escape(said)):
            evaluate("Llama-3-70B", "H100-SXM", tp, batch)
    assert evaluate("Llama-3-70B", "H100-SXM", np.int64(8), np.int64(4)) == \
        evaluate("Llama-3-70B", "H100-SXM", 8, 4)


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
def test_stage_sum_adds_as_a_grid_of_many_cells(n):
    """The stages one after another, as numpy's sum over the outer axis of a grid of many
    cells adds them (and unlike its pairwise sum of a one-cell grid's, n >= 8)."""
    rng = np.random.default_rng(n)
    for _ in range(200):
        xs = rng.random((n, 1, 3)) * 10.0 ** rng.uniform(-9, 0, (n, 1, 1))
        assert np.array_equal(stage_sum(np.ones((n, 1, 1)), xs), xs.sum(axis=0))
        one = xs[:, :, :1].tolist()
        seq = one[0][0][0]
        for row in one[1:]:
            seq = seq + row[0][0]
        assert float(stage_sum(np.ones((n, 1, 1)), xs[:, :, :1])[0, 0]) == seq


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
            # evaluate refuses a skew nothing reads (EP 1); the grid records 1 there
            r = evaluate(model, g, c.tp, b, phase, pp=c.pp, ep=c.ep,
                         attention_dp=c.attention_dp, options=o,
                         expert_skew=1.5 if c.ep > 1 else 1.0)
            assert (e.latency[i], e.weights[i], e.kv_cache[i], e.activations[i], e.fits[i]) \
                == (r.latency, r.memory.weights, r.memory.kv_cache, r.memory.activations,
                    r.memory.fits)
            assert (e.tokens_per_s_per_sm[i], e.feasible[i]) == (r.tokens_per_s_per_sm,
                                                                 r.feasible)
            assert e.interval[i] == (r.interval or r.latency)
            split = r.time_split()
            assert e.network_s[i] == pytest.approx(split["network"], rel=1e-12, abs=1e-18)
            assert e.configs[i] == c and e.batch[i] == b
        assert np.allclose(e.compute_s + e.memory_s + e.network_s, e.latency, rtol=1e-12)
    assert e.result(3) == evaluate(model, g, pairs[3][0].tp, pairs[3][1], phase,
                                   pp=pairs[3][0].pp, ep=pairs[3][0].ep,
                                   attention_dp=pairs[3][0].attention_dp, options=o,
                                   expert_skew=1.5 if pairs[3][0].ep > 1 else 1.0)


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
    ([[8, 81, 1, 1]], [1], "PP degree 81 exceeds the 80 layers"),
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


# ---- the lazily built breakdown and the kept plans ------------------------------------------

def _same(a, b, where=""):
    """``a`` and ``b`` equal with the same types, floats to the last bit (repr tells
    every float apart, -0.0 from 0.0 included), recursing into dataclasses and tuples."""
    assert type(a) is type(b), (where, type(a), type(b))
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert repr(a) == repr(b), (where, a, b)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(sorted(model_catalog())), st.sampled_from(sorted(catalog())),
       st.integers(1, 100_000), st.sampled_from(["prefill", "decode"]),
       st.integers(0, len(OPTIONS) - 1), st.integers(0, len(COMMS) - 1),
       st.sampled_from([1.0, 1.7, 4]), st.booleans(), st.data())
def test_the_lazy_breakdown_reads_exactly_as_the_grids(name, gpu, batch, phase, oi, ci, skew,
                                                       read_first, data):
    """Every field, type and output of evaluate()'s result (breakdown, and the memory
    fit of a batch that does not fit, built on first read) equals the one-cell grid's
    (built at once), whichever is read first, through pickle and copy too."""
    model, g = get_model(name), get_gpu(gpu)
    tp = data.draw(st.sampled_from(valid_tp_degrees(model, g.max_instance)))
    w = make_workload(phase, prompt=data.draw(st.sampled_from([None, 1, 77, 512])),
                      context=data.draw(st.sampled_from([None, 1, 4000])))
    if model.max_context and w.kv_tokens > model.max_context:
        return
    o, c = OPTIONS[oi], COMMS[ci]
    grid = evaluate_grid(model, g, [tp], [batch], w, options=o, comm=c, expert_skew=skew,
                         latency_limit=Slo().limit(phase)).result(0, 0)
    # by names where the catalogs have them (the plans kept by name), else by spec; at
    # TP alone (EP 1) the grid records the skew as 1 and evaluate refuses one it would not read
    new = evaluate(name, gpu, tp, batch, phase, prompt=w.prompt, context=w.context,
                   options=o, comm=c, expert_skew=1.0)
    if read_first:   # the breakdown built by reading it, else by pickle and copy
        assert new.stages == grid.stages
    copies = [pickle.loads(pickle.dumps(new)), copy.copy(new), copy.deepcopy(new)]
    assert new.to_json() == grid.to_json() and new.to_csv() == grid.to_csv()
    assert repr(new) == repr(grid) and new == grid and hash(new) == hash(grid)
    _same(new, grid)
    for other in copies + [dataclasses.replace(new, latency_limit=grid.latency_limit)]:
        _same(other, grid)
    assert not {"_lazy_stages", "_lazy_memory"} & set(vars(new))
    assert (vars(new)["stages"], vars(new)["memory"]) == (grid.stages, grid.memory)


def test_stage_work_of_one_float_batch_is_plain_floats():
    """The scalar path's numbers are Python floats (the MoE models' distinct experts
    touched included), equal to the grid's array elements."""
    from compute.models import expected_experts_touched
    from compute.stages import stage_work

    for model in model_catalog().values():
        for n in (1.0, 3.0, 1500.0, 12345.0):
            t = expected_experts_touched(model, n)
            assert type(t) is float
            assert t == expected_experts_touched(model, np.array([[n, 2.0]]))[0, 0]
        for phase in ("prefill", "decode"):
            w = make_workload(phase, prompt=min(512, model.max_context or 512))
            r = evaluate(model, "H100-SXM", 1, 7, w)
            assert type(r.latency) is float and all(
                type(getattr(s, f)) is float for s in r.stages
                for f in ("flops", "hbm_bytes", "collective_bytes", "time"))
            sh = evaluate_grid(model, "H100-SXM", [1], [7], w)
            for x, k in zip(stage_work(model, _float_shards(model), 7.0, w),
                            range(len(sh.stages)), strict=True):
                assert all(type(v) in (int, float, str) for v in x)
                if k not in (4, 7):   # the grid's collective stages carry no work
                    assert (x[2], x[3]) == (sh.flops[k, 0, 0], sh.hbm_bytes[k, 0, 0])


def _float_shards(model):
    from compute.sharding import Shards, shards

    s = shards(model, [1])
    return Shards(**{f: float(getattr(s, f)[0, 0]) for f in
                     ("tp", "heads", "kv_heads", "ffn", "vocab", "shared_ffn", "dense_ffn")})


def test_plans_kept_by_name_follow_every_argument():
    """Results by catalog name equal those by spec, and a change of any argument (options
    object, prompt, context, phase, TP degree) gives that argument's result (a prompt
    changes prefill only)."""
    serial = RooflineOptions(mode="serial")
    cases = [dict(), dict(options=serial), dict(options=RooflineOptions(mode="serial")),
             dict(context=100), dict(phase="prefill"),
             dict(phase="prefill", prompt=100), dict(tp=4)]
    for _ in range(2):   # the second round finds the kept plans
        got = []
        for kw in cases:
            kw = {"tp": 8, "phase": "decode", **kw}
            tp, phase = kw.pop("tp"), kw.pop("phase")
            by_name = evaluate("Llama-3-70B", "H100-SXM", tp, 16, phase, **kw)
            by_spec = evaluate(get_model("Llama-3-70B"), get_gpu("H100-SXM"), tp, 16,
                               make_workload(phase, kw.pop("prompt", None),
                                             kw.pop("context", None)), **kw)
            assert by_name == by_spec
            got.append(by_name.latency)
        assert got[1] == got[2] and len(set(got)) == len(got) - 1
    with pytest.raises(UserError, match="prompt"):   # True is no prompt, kept plans or not
        evaluate("Llama-3-70B", "H100-SXM", 8, 16, "prefill", prompt=True)


@pytest.mark.parametrize("op", ["all-reduce", "reduce-scatter", "all-gather", "all-to-all",
                                "broadcast", "reduce", "send-recv"])
def test_ring_terms_are_its_formula(op):
    """``fixed + share * n * beta`` from :meth:`RingAlphaBeta.terms` is the textbook cost
    (hand-derived below) and the same number for a float as for an array's element."""
    ring = RingAlphaBeta(bandwidth=100e9, step_latency=1e-6, efficiency=0.5)
    p, n = 8, 8e9
    fixed, share, beta = ring.terms(op, p)
    want = {"all-reduce": (14e-6, 1.75), "broadcast": (7e-6, 1.0), "reduce": (7e-6, 1.0),
            "send-recv": (1e-6, 1.0)}.get(op, (7e-6, 0.875))
    assert (fixed, share) == pytest.approx(want, rel=1e-15) and beta == 1 / 50e9
    assert ring.time(op, n, p) == pytest.approx(want[0] + want[1] * n / 50e9, rel=1e-15)
    sizes = np.array([0.0, 1.0, 3e5, n])
    assert ring.time(op, sizes, p).tolist() == [ring.time(op, float(x), p) for x in sizes]


def _tp_shards(model, tp):
    from compute.sharding import Shards, shards

    s = shards(model, [tp])
    return Shards(**{f: float(getattr(s, f)[0, 0]) for f in
                     ("tp", "heads", "kv_heads", "ffn", "vocab", "shared_ffn", "dense_ffn")})


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(model_catalog())), st.sampled_from(["prefill", "decode"]),
       st.sampled_from([None, 1, 77, 512]), st.sampled_from([None, 1, 4000]),
       st.integers(1, 100_000), st.data())
def test_plain_step_work_is_stage_work_bit_for_bit(name, phase, prompt, context, batch,
                                                   data):
    """The scalar path's stage figures with the batch-independent parts formed once equal
    stage_work's, float for float (compared by their bits), for every catalog model it
    covers; it declines the others (MLA, shared experts, dense layers among MoE ones)."""
    from compute.stages import STAGES, plain_step_work, stage_work

    model = get_model(name)
    if model.max_context and (prompt or 0) + (context or 0) > model.max_context:
        prompt, context = 1, 1
    tp = data.draw(st.sampled_from(valid_tp_degrees(model, 64)))
    sh, w = _tp_shards(model, tp), make_workload(phase, prompt, context)
    fast = plain_step_work(model, sh, w)
    if model.is_mla or model.shared_ffn or model.dense_layers:
        assert fast is None
        return
    b = float(batch)
    flops, hbm, coll = fast(b)
    ref = stage_work(model, sh, b, w)
    assert [x[0] for x in ref] == list(STAGES)
    for got, k in ((flops, 2), (hbm, 3), (coll, 5)):
        assert all(type(v) is float for v in got)
        assert [v.hex() for v in got] == [float(x[k]).hex() for x in ref], (name, k)


def test_plain_step_work_covers_the_dense_and_plain_moe_models():
    from compute.stages import plain_step_work

    covered = {n for n, m in model_catalog().items()
               if plain_step_work(m, _tp_shards(m, 1), make_workload("decode")) is not None}
    assert {"Llama-3-70B", "Llama-3-8B", "Mixtral-8x7B"} <= covered
    assert not any(model_catalog()[n].is_mla for n in covered)
