"""The grid's fast path (stage slices written once, in cache: :func:`compute.grid_parts.
_static_frame`, :func:`compute.grid_parts.stage_times`, :func:`compute.roofline.
_network_times`, :func:`compute.roofline.pipeline_latency`, :func:`compute.search.pareto_front`)
gives every number of the whole-array formulation it replaced, bit for bit: the old
formulation is kept here as the reference, and every stage array, latency, interval and
search answer is compared as raw bits (NaNs where untimed, the sign of zeros included).
Cases cover plain TP, pipeline, attention DP and expert parallelism, MLA with fp8 and
shared experts and dense layers (DeepSeek-V3), sliding windows (gpt-oss: each pipeline
stage timed with its own full-attention and windowed layers), shared experts
(Qwen1.5-MoE), an engine profile, serial mode, overlapped collectives and expert skew."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.dp_collectives import CellOps
from compute.grid_parts import GEMM_STAGES
from compute.hardware import get_gpu
from compute.memory import memory_fit
from compute.models import get_model
from compute.moe_dp_gather import dp_gather_rows
from compute.moe_exchange import allreduce_rows, gather_rows
from compute.parallel import Parallelism, layout
from compute.profiles import get_profile
from compute.roofline import (
    check_time,
    default_comm,
    evaluate_grid,
    make_workload,
)
from compute.roofline_options import RooflineOptions
from compute.search import pareto_front, search
from compute.sharding import shards
from compute.stage_peaks import stage_peaks
from compute.stages import PIPELINE_STAGES, PRODUCERS, stage_work


def _old_network_times(comm, ops, groups, counts, net, fits=None):
    split = [(k, i, o) for k, o in enumerate(ops) if isinstance(o, CellOps)
             for i in range(1, len(o.ops))]
    if split:   # a collective chosen per cell: each one over every cell, then picked
        ks = [k for k, _, _ in split]
        both = tuple(o.ops[0] if isinstance(o, CellOps) else o for o in ops) \
            + tuple(o.ops[i] for _, i, o in split)
        out = _old_network_times(comm, both, np.concatenate([groups, groups[ks]]),
                                 np.concatenate([counts, counts[ks]]),
                                 np.concatenate([net, net[ks]]), fits)
        for m, (k, i, o) in enumerate(split):   # "" (no collective in the cell): 0
            out[k] = np.where(o.which == i, out[len(ops) + m], out[k])
        return out[:len(ops)]
    out = np.zeros(net.shape)
    if fits is not None and not fits.all():
        out[:, ~fits] = np.nan
    for op in sorted({o for o in ops if o}):
        ks = np.array([k for k, o in enumerate(ops) if o == op])
        g, active = groups[ks], (counts[ks] > 0) & (groups[ks] > 1)
        if fits is not None:
            active = active & fits.any(axis=1)
        for size in np.unique(g[active]):
            kk, rr = np.nonzero(active & (g == size))
            cells = net[ks[kk], rr]
            keep = None if fits is None else fits[rr]
            sizes = cells.reshape(-1) if keep is None else cells[keep]
            times = np.asarray(comm.collective_time(op, sizes, int(size)), dtype=float)
            times = np.broadcast_to(times, sizes.shape)
            ok = np.isfinite(times) & (times >= 0)
            if not ok.all():
                check_time(float(times[~ok][0]), op, int(size))
            if keep is None:
                out[ks[kk], rr] = times.reshape(len(kk), net.shape[2])
            else:
                block = np.full(cells.shape, np.nan)
                block[keep] = times
                out[ks[kk], rr] = block
    return out


def _ref_attention_kinds(model, gpu, sh, micro, workload, options, skew):
    """``(full, windowed)``: one full-attention layer's and one windowed layer's
    ``attention`` time, the whole-array way: the stage's work of the model with every layer
    full (no window) and with every layer windowed, timed as the grid times that stage;
    None for a model that does not mix the two."""
    w = model.windowed_layers
    if not w or w == model.layers:
        return None
    out = []
    for kind in (replace(model, sliding_window=0, sliding_layers=0, full_layer_step=0,
                         window_kind="sliding"),
                 replace(model, sliding_layers=0, full_layer_step=0)):
        (x,) = [x for x in stage_work(kind, sh, micro, workload, skew) if x[0] == "attention"]
        (peak,) = stage_peaks(kind, gpu, ("attention",), options.compute_dtype, workload)
        flops, hbm = (np.broadcast_to(np.asarray(v, dtype=float), np.broadcast_shapes(
            np.shape(x[2]), np.shape(x[3]), np.shape(micro)))[None].copy() for v in x[2:4])
        c = flops / (peak * options.flops_efficiency)
        m = hbm / (gpu.hbm_bandwidth * options.memory_efficiency)
        if options.profile is not None:
            _old_apply_profile(options.profile, ("attention",), [True], flops, hbm, c, m)
        out.append((np.maximum(c, m) if options.mode == "overlap" else c + m)[0])
    return tuple(out)


def _ref_slowest(model, sh, counts, stage_t, c3, names, kinds=None):
    """Each pipelined row's slowest stage, by hand: stage ``s`` holds vLLM's ``n_s`` layers
    (``L // p`` each, ``L mod p`` left over one each to the stages just before the last;
    get_pp_indices, vllm/distributed/utils.py), ``m_s`` of them MoE, the first also the
    embedding and the last the LM head. A per-layer stage of the pass that runs (count >
    0) runs on every layer (attention and MLP; without EP every collective too), on the
    MoE layers (under EP: the all-to-alls, the reduce-scatter before them and the regather
    after) or on the others (under EP the all-reduces, the DP gathers and scatters and the
    attention group's gather after the scatter): ``n_s``, ``m_s`` or ``n_s - m_s`` times on stage ``s``; so
    ``T_s = n_s A + m_s B + E + H``, ``A`` the sum of the first and third kinds' times and
    ``B`` of the second's less the third's (summed in the stages' order). A model mixing
    windowed and full-attention layers (``kinds``: one layer's attention time of each,
    :func:`_ref_attention_kinds`) runs its stage's own: ``f_s`` full-attention layers (layer
    ``i`` full when ``i + 1`` is a multiple of ``full_layer_step``) and ``n_s - f_s``
    windowed ones in place of ``n_s`` times the pass's average attention."""
    L = model.layers
    ep = (sh.ep.ravel() > 1) & model.is_moe
    on_moe = {"attn_scatter", "moe_dispatch", "moe_combine", "dp_regather"}
    on_rest = {"allreduce_attn", "dp_gather", "allreduce_mlp", "dp_scatter", "attn_gather"}
    per_layer = [k for k, nm in enumerate(names)
                 if nm not in ("embedding", "lm_head", *PIPELINE_STAGES)]
    out = np.full(stage_t.shape[1:], np.nan)
    for p in sorted(set(sh.pp.ravel().astype(int).tolist()) - {1}):
        rows = np.flatnonzero(sh.pp.ravel() == p)
        a = np.zeros((len(rows), stage_t.shape[2]))
        m = np.zeros(a.shape)
        for k in per_layer:
            nm, runs, e = names[k], counts[k, rows] > 0, ep[rows]
            moe_kind = e & (nm in on_moe)
            rest_kind = e & (nm in on_rest)
            ca = np.where(runs & ~moe_kind, 1.0, 0.0)
            cb = np.where(runs & moe_kind, 1.0, np.where(runs & rest_kind, -1.0, 0.0))
            a += np.where(ca[:, None] != 0, ca[:, None] * stage_t[k, rows], 0.0)
            m += np.where(cb[:, None] != 0, cb[:, None] * stage_t[k, rows], 0.0)
        sizes = [L // p + (1 if p - 1 - (L % p) <= s < p - 1 else 0) for s in range(p)]
        starts = np.cumsum([0, *sizes])
        ke, kh = names.index("embedding"), names.index("lm_head")
        worst = None
        for s in range(p):
            n_s = float(sizes[s])
            m_s = n_s - model.layer_mix(int(starts[s]), int(starts[s + 1]))[0] \
                if model.is_moe else 0.0
            t = n_s * a + m_s * m
            if kinds is not None:
                k = model.full_layer_step
                f_s = float(sum(1 for i in range(starts[s], starts[s + 1]) if (i + 1) % k == 0))
                ka = names.index("attention")
                t = t + (f_s * kinds[0][rows] + (n_s - f_s) * kinds[1][rows]
                         - n_s * stage_t[ka, rows])
            if s == 0:
                t = t + c3[ke, rows] * stage_t[ke, rows]
            if s == p - 1:
                t = t + c3[kh, rows] * stage_t[kh, rows]
            worst = t if worst is None else np.maximum(worst, t)
        out[rows] = worst
    return out


def _old_pipeline(pass_t, pp, b, micro, stage_t, bound, c3, names, options, workload, parts,
                  slowest):
    ks, kw = names.index("pp_send"), names.index("pipeline_wait")
    rows = np.flatnonzero(pp.ravel() > 1)
    mine = pass_t[rows]
    p = pp[rows]
    send = stage_t[ks, rows]
    stage = slowest[rows]
    period = np.maximum(stage, send) if options.mode == "overlap" else stage + send
    own = mine + (p - 1) * send
    interval = None
    if workload.phase == "decode":
        k = np.minimum(b, p)
        piped = np.maximum(own, k * period)
    else:   # micro-batches of one prompt an attention group, one after another
        m = np.broadcast_to(micro, pass_t.shape)[rows]
        n_micro = np.ceil(b / m)
        piped = (n_micro - 1) * period + own
        interval = pass_t.copy()
        interval[rows] = n_micro * period
    latency = pass_t.copy()
    latency[rows] = piped
    wait = np.maximum(piped - own, 0.0)
    n = len(names) - len(PIPELINE_STAGES)
    busy = np.stack([np.einsum("kc,kcb->cb", c3[:n, :, 0], part[:n])[rows] for part in parts])
    dominant = np.argmax(busy, axis=0).astype(np.int8)
    stage_t[kw, rows] = wait
    bound[kw, rows] = dominant
    for r, part in enumerate(parts):
        part[kw, rows] = np.where(dominant == r, wait, 0.0)
    return latency, interval


def _old_apply_profile(profile, names, works, flops, hbm, compute_t, memory_t):
    for k, name in enumerate(names):
        if not works[k]:
            continue
        if name in GEMM_STAGES:
            if profile.gemm_curve:
                with np.errstate(divide="ignore", invalid="ignore"):
                    intensity = np.where(hbm[k] > 0, flops[k] / hbm[k], np.inf)
                compute_t[k] /= profile.gemm_efficiency_at(intensity)
            else:
                compute_t[k] /= profile.gemm_efficiency
        elif name == "attention":
            compute_t[k] /= profile.attention_efficiency
        memory_t[k] /= profile.hbm_fraction


def _old_pareto_front(latency, score):
    order = np.lexsort((-score, latency))
    best = np.maximum.accumulate(score[order])
    prev = np.concatenate([[-np.inf], best[:-1]])
    return order[score[order] > prev]


def old_grid(model, gpu, configs, batches, workload, options, skew=1.0, time_unfit=True):
    """Every array of a grid, the whole-array way (the formulation before the fast path):
    each schedule of the EP layers' exchange so (the all-to-alls, on the rows without DP
    attention the all-reduce, on those with it vLLM's gather and SGLang's), each cell
    taking the one that
    fits where one alone does, else the faster (compute.moe_exchange)."""
    ref = _old_one(model, gpu, configs, batches, workload, options, skew, time_unfit)
    m = get_model(model)
    if all(c.is_plain for c in configs):
        return ref
    for flag, rows in (("ep_allreduce", allreduce_rows), ("ep_gather", gather_rows),
                       ("ep_dp_gather", dp_gather_rows)):
        idx = np.flatnonzero(rows(m, layout(m, configs)))
        if idx.size:
            _take(ref, idx, _old_one(model, gpu, [configs[i] for i in idx], batches, workload,
                                     options, skew, time_unfit, flag=flag))
    return ref


def _take(ref, idx, alt):
    """``ref`` with its rows ``idx`` taking ``alt``'s figures where ``alt`` fits where
    ``ref`` does not, or fits as it does and is faster."""
    fits_a, fits_m = alt["fits"], ref["fits"][idx]
    faster = (fits_a & ~fits_m) | ((fits_a == fits_m) & (alt["latency"] < ref["latency"][idx]))
    ref["fits"] = np.array(ref["fits"], copy=True)
    ref["fits"][idx] = np.where(faster, fits_a, fits_m)
    for key in ("flops", "hbm_bytes", "net_bytes", "compute_time", "memory_time",
                "network_time", "stage_time", "bound"):
        for ka, stage in enumerate(alt["stages"]):
            k = ref["stages"].index(stage)
            ref[key][k, idx] = np.where(faster, alt[key][ka], ref[key][k, idx])
    for key in ("latency", "interval"):
        if ref[key] is not None:   # rows of one stage (no interval of their own): the step
            a = alt[key] if alt[key] is not None else alt["latency"]
            ref[key][idx] = np.where(faster, a, ref[key][idx])


def _old_one(model, gpu, configs, batches, workload, options, skew=1.0, time_unfit=True,
             flag=None):
    """:func:`old_grid` of one exchange (``flag``: the Shards field flagging every row's EP
    layers for the all-reduce or the gather exchange; None: the all-to-alls)."""
    model, gpu = get_model(model), get_gpu(gpu)
    comm = default_comm(gpu, options)
    plain = all(c.is_plain for c in configs)
    sh = shards(model, [c.tp for c in configs]) if plain else layout(model, configs)
    if flag is not None:
        sh = replace(sh, **{flag: 1.0})
    b = np.asarray(batches, dtype=float).reshape(1, -1)
    if plain:
        micro = b
    elif workload.phase == "decode":
        micro = np.ceil(b / sh.pp)
    else:   # one prompt an attention group a micro-batch
        micro = np.where(sh.pp > 1, np.minimum(b, sh.attention_dp), b)
    work = stage_work(model, sh, micro, workload, skew)
    nc = len(configs)
    shape = np.broadcast_shapes((nc, b.shape[1]), micro.shape)
    counts = np.stack([np.broadcast_to(np.asarray(x[1], float).reshape(-1), (nc,))
                       for x in work])
    if not plain:
        keep = counts.any(axis=1)
        work, counts = [x for x, k in zip(work, keep, strict=True) if k], counts[keep]
    names = tuple(x[0] for x in work)
    groups = np.stack([np.broadcast_to(np.asarray(x[6], float).reshape(-1), (nc,))
                       for x in work])
    ops = tuple(x[4] for x in work)
    works = [not x[4] or x[0] in ("embedding", "lm_head") for x in work]
    flops, hbm, net = (np.zeros((len(work),) + shape) for _ in range(3))
    compute_t, memory_t = np.zeros(flops.shape), np.zeros(flops.shape)
    peaks = stage_peaks(model, gpu, names, options.compute_dtype, workload)
    bandwidth = gpu.hbm_bandwidth * options.memory_efficiency
    for k, x in enumerate(work):
        if works[k]:
            flops[k], hbm[k] = x[2], x[3]
            np.divide(flops[k], peaks[k] * options.flops_efficiency, out=compute_t[k])
            np.divide(hbm[k], bandwidth, out=memory_t[k])
        if x[4]:
            net[k] = x[5]
    if not plain:
        net *= (counts > 0)[:, :, None]
    if options.profile is not None:
        _old_apply_profile(options.profile, names, works, flops, hbm, compute_t, memory_t)
    fit = memory_fit(model, gpu, sh, b, workload, options.memory_reserve, micro_batch=micro)
    fits = None if time_unfit else np.broadcast_to(fit[4], net.shape[1:])
    network_t = _old_network_times(comm, ops, groups, counts, net, fits)
    busiest = np.maximum(compute_t, memory_t)
    if options.mode == "overlap":
        stage_t = np.maximum(busiest, network_t)
        if options.overlap_collectives:
            # each all-reduce behind its producer: the dense layers', and the EP layers'
            # where their slots hold the all-reduce exchange's
            for coll, producer in (*PRODUCERS.items(), ("attn_scatter", "out_proj"),
                                   ("dp_regather", "mlp_down")):
                if coll in names and (coll in PRODUCERS
                                      or ops[names.index(coll)] == "all-reduce"):
                    k, p = names.index(coll), names.index(producer)
                    stage_t[k] = np.maximum(0.0, network_t[k] - stage_t[p])
    else:
        stage_t = compute_t + memory_t + network_t
    bound = (memory_t > compute_t).astype(np.int8)
    bound[network_t > busiest] = 2
    for k, o in enumerate(ops):
        if o and names[k] not in ("embedding", "lm_head"):
            bound[k] = 2
    c3 = counts[:, :, None]
    interval = None
    if plain:
        latency = (c3 * stage_t).sum(axis=0)
    else:
        passes = [k for k, nm in enumerate(names) if nm not in PIPELINE_STAGES]
        latency = c3[passes[0]] * stage_t[passes[0]]
        for k in passes[1:]:
            latency = latency + c3[k] * stage_t[k]
        if np.any(sh.pp > 1):
            kinds = _ref_attention_kinds(model, gpu, sh, micro, workload, options, skew)
            slowest = _ref_slowest(model, sh, counts, stage_t, c3, names, kinds)
            latency, interval = _old_pipeline(latency, sh.pp, b, micro, stage_t, bound, c3,
                                              names, options, workload,
                                              (compute_t, memory_t, network_t), slowest)
    if options.profile is not None:
        overhead = np.broadcast_to(options.profile.overhead(
            model.layers, b, workload.phase, workload.tokens_per_sequence, model.hidden),
            latency.shape)
        latency = latency + overhead
        if interval is not None:
            interval = interval + overhead
    return dict(stages=names, counts=counts, flops=flops, hbm_bytes=hbm, net_bytes=net,
                compute_time=compute_t, memory_time=memory_t, network_time=network_t,
                stage_time=stage_t, bound=bound, latency=latency, interval=interval,
                fits=np.broadcast_to(fit[4], shape))


def bits(x):
    """``x`` as raw bits: equal arrays of equal bits (NaN == NaN, 0.0 != -0.0)."""
    x = np.ascontiguousarray(x)
    return x.view(np.int64) if x.dtype == np.float64 else x


def assert_same(grid, ref):
    assert grid.stages == ref["stages"]
    for name, want in ref.items():
        if name == "stages":
            continue
        got = getattr(grid, name)
        if want is None:
            assert got is None, name
            continue
        assert got.shape == want.shape and got.dtype == want.dtype, name
        assert np.array_equal(bits(got), bits(want)), f"{name} differs"


PROFILE = RooflineOptions(profile=get_profile("vllm-dgx-h100"))
CASES = [  # model, gpu, phase, search keywords
    ("Llama-3-70B", "Lite", "prefill", dict(max_gpus=64, pp=(1, 2, 4), attention_dp=True)),
    ("Llama-3-70B", "Lite", "decode", dict(max_gpus=64, pp=(1, 2, 4), attention_dp=True)),
    ("Mixtral-8x7B", "Lite", "prefill", dict(max_gpus=64, pp=(1, 2, 4), ep=True,
                                             attention_dp=True)),
    ("Mixtral-8x7B", "Lite", "decode", dict(max_gpus=64, pp=(1, 2, 4), ep=True,
                                            attention_dp=True)),
    ("DeepSeek-V3", "Lite", "decode", dict(max_gpus=64, ep=True, attention_dp=True)),
    ("DeepSeek-V3", "H100-SXM", "prefill", dict(max_gpus=64, ep=True, attention_dp=True)),
    ("gpt-oss-20b", "Lite", "decode", dict(max_gpus=32, pp=(1, 2), ep=True,
                                           attention_dp=True)),
    ("gpt-oss-120b", "H100-SXM", "prefill", dict(pp=(1, 2), ep=True)),
    ("Qwen1.5-MoE-A2.7B", "H100-SXM", "decode", dict(max_gpus=16, pp=(1, 2), ep=True,
                                                     options=PROFILE, expert_skew=1.5)),
    ("Llama-3.1-405B", "H100-SXM", "prefill", dict(pp=(1, 2, 3), attention_dp=True)),
    ("Llama-3-70B", "H100-SXM", "decode", dict(options=PROFILE)),
    ("Llama-3-8B", "Lite", "prefill", {}),
    ("Mixtral-8x7B", "H100-SXM", "prefill", dict(pp=(1, 2), ep=True, attention_dp=True,
                                                 options=RooflineOptions(mode="serial"))),
    ("Llama-3-70B", "H100-SXM", "decode", dict(
        pp=(1, 2), attention_dp=True, options=RooflineOptions(overlap_collectives=True))),
    # the EP layers' all-reduces hidden too, where a cell takes that exchange
    ("DeepSeek-V3", "H200-SXM", "decode", dict(
        max_gpus=16, ep=True, attention_dp=True,
        options=RooflineOptions(overlap_collectives=True))),
    ("Mixtral-8x7B", "H100-SXM", "decode", dict(
        max_gpus=16, pp=(1, 2), ep=True, attention_dp=True,
        options=RooflineOptions(overlap_collectives=True))),
    # one batch (a single column: the pipeline's busy times by the einsum) and a few (no
    # memory cap), grids small enough to be kept and handed out again as copies
    ("Mixtral-8x7B", "H100-SXM", "prefill", dict(pp=(1, 2, 4), ep=True, max_batch=1)),
    ("Mixtral-8x7B", "H100-SXM", "decode", dict(pp=(1, 2, 4), ep=True, max_batch=6)),
    ("Mixtral-8x7B", "H100-SXM", "decode", dict(pp=(1, 2, 4), ep=True, max_batch=6)),
]


@pytest.mark.parametrize("model, gpu, phase, kw", CASES)
def test_search_grid_is_the_whole_array_formulation_bit_for_bit(model, gpu, phase, kw):
    kw = dict(kw)
    options = kw.pop("options", RooflineOptions())
    skew = kw.get("expert_skew", 1.0)
    r = search(model, gpu, phase, options=options, max_batch=kw.pop("max_batch", 512), **kw)
    g = r.grid
    ref = old_grid(model, gpu, g.configs, g.batches, make_workload(phase), options, skew,
                   time_unfit=False)
    assert_same(g, ref)
    # the answer, read off the reference: the best feasible score, ties to the first cell
    # (a pipelined prefill's equal rates: the lowest latency; see search._picks)
    rate = g.tokens_per_step / (ref["latency"] if ref["interval"] is None else ref["interval"])
    score = rate / (g.gpus * get_gpu(gpu).sms)
    feasible = ref["fits"] & (ref["latency"] <= r.latency_limit)
    assert r.feasible == int(feasible.sum())
    if not feasible.any():
        assert r.best is None
        return
    masked = np.where(feasible, score, -np.inf)
    pick = int(np.argmax(masked))
    if ref["interval"] is not None:  # rates equal within 1e-12: the lowest latency
        near = feasible & (masked >= masked.max() - abs(masked.max()) * 1e-12)
        pick = int(np.argmax(np.where(near, -ref["latency"], -np.inf)))
    i, j = np.unravel_index(pick, masked.shape)
    assert r.best.tokens_per_s_per_sm == masked[i, j]
    assert r.best.latency == ref["latency"][i, j]
    assert (Parallelism.of(r.best), r.best.batch) == (g.configs[i], int(g.batches[j]))
    # the front: the feasible points no other beats on both latency and score
    lat, sc = ref["latency"][feasible], score[feasible]
    k = _old_pareto_front(lat, sc)
    assert [(p.latency, p.tokens_per_s_per_sm) for p in r.front] == \
        list(zip(lat[k].tolist(), sc[k].tolist(), strict=True))
    assert all(not ((lat < a) & (sc > s)).any() for a, s in zip(lat[k], sc[k], strict=True))


@pytest.mark.parametrize("phase", ["prefill", "decode"])
@pytest.mark.parametrize("model, configs", [
    ("Mixtral-8x7B", [Parallelism(8, 2, 4, 2), Parallelism(4, 1, 2, 1), Parallelism(8),
                      Parallelism(2, 4, 1, 2)]),
    ("DeepSeek-V3", [Parallelism(8, 1, 8, 8), Parallelism(8, 1, 8, 1), Parallelism(8)]),
    ("Llama-3-70B", [Parallelism(t) for t in (1, 2, 4, 8)]),
])
def test_a_grid_that_times_every_cell_is_the_whole_array_formulation(model, configs, phase):
    """``time_unfit=True`` (every cell's collectives timed, no NaNs)."""
    batches = np.arange(1, 300, 7)
    w = make_workload(phase)
    g = evaluate_grid(model, "H100-SXM", configs, batches, w)
    assert_same(g, old_grid(model, "H100-SXM", configs, batches, w, RooflineOptions()))



@settings(max_examples=300, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 40), st.integers(0, 2**32 - 1),
       st.sampled_from([0.0, 0.25, 1e-9]))
def test_pareto_front_is_the_sort_by_latency_then_score(n, distinct, seed, jitter):
    """Few distinct values: many ties in latency and in score (signed zeros, duplicate
    points); above 64 points the front is found among the points that beat every lower
    latency, and must be the same points, the first index of duplicates."""
    rng = np.random.default_rng(seed)
    lat = rng.integers(0, distinct, n) + jitter * rng.integers(0, 3, n)
    sc = rng.integers(0, distinct, n) * rng.choice([1.0, -1.0], n)  # -0.0 among them
    for latency in (lat, -lat, lat[::-1].copy()):
        assert pareto_front(latency, sc).tolist() == _old_pareto_front(latency, sc).tolist()
