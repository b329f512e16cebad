"""The network-independent parts of a grid (:func:`compute.roofline.evaluate_grid`): each
stage's work per GPU, its compute and memory times and the memory fit.

With an engine profile the times are what the engine reaches (:data:`GEMM_STAGES`,
:mod:`compute.profiles`). The parts of recent grids are kept: a search evaluates the same
grid again under other networks.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from compute import buffers
from compute.memo import Lru
from compute.memory import memory_fit, splits_shared
from compute.moe_exchange import EXCHANGE_PRODUCERS
from compute.parallel import micro_batch
from compute.sharding import Shards
from compute.stage_attention import attention_kinds, attention_work_by_kind
from compute.stage_peaks import stage_peaks
from compute.stages import (
    EXTENDED_STAGES,
    PIPELINE_STAGES,
    PRODUCERS,
    STAGES,
    _within_one_gpu,
    allreduce_exchange_work,
    attention_group_ops,
    dp_gather_exchange_work,
    mlp_work_by_kind,
    replicated_mlp_work,
    stage_work,
)

#: At most this many grids' parts, and this many of their array elements, are kept.
_STATIC_MAX = 64
_STATIC_ELEMENTS = 1_000_000
#: The network-independent parts of recent grids (:func:`static_parts`), the least
#: recently used dropped first, sized by their stage arrays' elements.
_STATIC = Lru(_STATIC_MAX, size=lambda parts: parts[7].size, most=_STATIC_ELEMENTS)
#: At most this many grids' work, and this many array elements of it, are kept (more
#: grids than :data:`_STATIC_MAX`: a fit's pipelined groups, each a grid, are asked in
#: turn, and a turn longer than the cache would never hit).
_WORK_MAX = 1024
_WORK_ELEMENTS = 1_000_000
#: Under an engine profile, the parts of recent grids that no profile changes (each
#: stage's work, the collective bytes, the memory fit: :func:`_work_frame`), by the key of
#: :func:`static_parts` less the efficiencies and the profile, the least recently used
#: dropped first: a fit's trial profiles evaluate the same grids again and again under
#: other efficiencies. Sized by the collective bytes and the work's FLOPs and HBM bytes.
_WORK = Lru(_WORK_MAX, size=lambda work: work[8].size * 3, most=_WORK_ELEMENTS)


def static_parts(model, gpu, configs, sh, plain: bool, b, workload, options, skew,
                 paired: bool, lazy: bool = False, busiest=None) -> tuple:
    """What :func:`compute.roofline.grid_body` computes before the collectives, which does not depend on them:
    ``(micro, shape, counts, names, groups, ops, works, flops, hbm, net, compute_t,
    memory_t, memory_fit, fill)``. A search evaluates the same model, GPU, configurations
    and batches again and again under other networks (the scenarios of one GPU, a
    crossover's root finding), so the parts of recent grids are kept (by value: model, GPU,
    configurations, batches, workload, options, skew) and handed out as copies: a grid may
    be changed by its user. Under an engine profile what no profile changes (each stage's
    work, the collective bytes, the memory fit) is kept apart, also for ``paired`` grids
    (:func:`_kept_work`): a fit's trial profiles ask for the same grids under other
    efficiencies.

    ``lazy``: a grid too large to keep (or not keepable) comes with its stage arrays
    ``flops, hbm, compute_t, memory_t`` empty and ``fill(k)`` filling stage ``k`` of them,
    so that the caller forms each stage's times while that stage is in cache; else (and
    always for a kept grid) ``fill`` is None. ``busiest``: the busiest attention group's
    sequences of each cell where not ``ceil(b / a)`` (:func:`compute.stages.stage_work`'s;
    two-batch overlap's micro-batches)."""
    key = None
    if not paired:
        try:
            key = (model, gpu, tuple(configs), plain, b.tobytes(), b.shape, workload, skew,
                   options.compute_dtype, options.flops_efficiency, options.memory_efficiency,
                   options.memory_reserve, options.profile,
                   options.dense_mlp_tp,  # the options the parts use
                   None if busiest is None else (busiest.tobytes(), busiest.shape),
                   bool(np.any(sh.ep_allreduce)),   # the exchange (compute.moe_exchange)
                   bool(np.any(sh.ep_gather)), bool(np.any(sh.ep_dp_gather)))
            hash(key)
        except TypeError:  # an unhashable field: not kept
            key = None
    hit = _STATIC.recall(key) if key is not None else None
    if hit is None:
        work = _kept_work(model, gpu, configs, sh, plain, b, workload, options, skew,
                          paired, busiest) if options.profile is not None else None
        frame = _static_frame(model, gpu, configs, sh, plain, b, workload, options, skew,
                              busiest, work)
        kept = key is not None and frame[7].size <= _STATIC_ELEMENTS // 8  # not the largest
        if lazy and not kept:
            return frame
        hit = _filled(frame)
        if not kept:
            return hit + (None,)
        _STATIC.put(key, hit)
    (micro, shape, counts, names, groups, ops, works, flops, hbm, net, compute_t, memory_t,
     fit) = hit
    return (micro, shape, counts.copy(), names, groups.copy(), ops, works, flops.copy(),
            hbm.copy(), net.copy(), compute_t.copy(), memory_t.copy(),
            tuple(x.copy() if isinstance(x, np.ndarray) else x for x in fit), None)


def _filled(frame: tuple) -> tuple:
    """The parts of ``frame`` (:func:`_static_frame`) with every stage filled."""
    fill = frame[-1]
    for k in range(len(frame[3])):
        fill(k)
    return frame[:-1]


def _kept_work(model, gpu, configs, sh, plain: bool, b, workload, options, skew,
               paired: bool, busiest=None) -> tuple:
    """:func:`_work_frame`, kept (:data:`_WORK`) by value and handed out with copies of
    the arrays a grid's user may change; made afresh where the key cannot be hashed."""
    try:
        key = (model, gpu, tuple(configs), plain, paired, b.tobytes(), b.shape, workload,
               skew, options.compute_dtype, options.memory_reserve, options.dense_mlp_tp,
               None if busiest is None else (busiest.tobytes(), busiest.shape),
               bool(np.any(sh.ep_allreduce)), bool(np.any(sh.ep_gather)),
               bool(np.any(sh.ep_dp_gather)))
        hash(key)
    except TypeError:  # an unhashable field: not kept
        return _work_frame(model, gpu, configs, sh, plain, b, workload, options, skew,
                           busiest)
    hit = _WORK.recall(key)
    if hit is None:
        hit = _work_frame(model, gpu, configs, sh, plain, b, workload, options, skew,
                          busiest)
        if _WORK.size(hit) > _WORK_ELEMENTS // 8:   # not the largest
            return hit
        hit = _WORK.put(key, _copied(hit))
    return _copied(hit)


def _copied(work: tuple) -> tuple:
    """``work`` (:func:`_work_frame`) with copies of the arrays a grid hands its user."""
    micro, shape, counts, names, groups, ops, works, stages, net, fit = work
    return (micro, shape, counts.copy(), names, groups.copy(), ops, works, stages, net.copy(),
            tuple(x.copy() if isinstance(x, np.ndarray) else x for x in fit))


def _static_frame(model, gpu, configs, sh, plain: bool, b, workload, options, skew,
                  busiest=None, work=None) -> tuple:
    """:func:`static_parts` but for the stage arrays ``flops, hbm, compute_t, memory_t``,
    allocated and not filled, and ``fill(k)``, which fills stage ``k`` of them (each
    stage's slice written once, while it is in cache: a pass over whole ``(stages, nc,
    nb)`` arrays costs more than the arithmetic). ``work``: the grid's
    :func:`_work_frame`, where already made."""
    (micro, shape, counts, names, groups, ops, works, work, net, fit) = work or _work_frame(
        model, gpu, configs, sh, plain, b, workload, options, skew, busiest)
    # large ones made from kept buffers (compute.buffers: no fresh pages to fault and zero)
    flops, hbm, compute_t, memory_t = (buffers.empty((len(work),) + shape) for _ in range(4))
    peaks = stage_peaks(model, gpu, names, options.compute_dtype, workload)
    bandwidth = gpu.hbm_bandwidth * options.memory_efficiency

    work = list(work)   # each stage's work let go once filled (a grid's are hundreds of MB)

    def fill(k: int) -> None:
        x, work[k] = work[k], None
        _fill_stage(names[k], works[k], x, peaks[k], bandwidth, options, flops[k], hbm[k],
                    compute_t[k], memory_t[k])

    return (micro, shape, counts, names, groups, ops, works, flops, hbm, net, compute_t,
            memory_t, fit, fill)


def _fill_stage(name, works, work, peak, bandwidth, options, flops, hbm, compute_t,
                memory_t) -> None:
    """Stage ``name``'s FLOPs, HBM bytes, compute and memory times written into the arrays
    given (its :func:`~compute.stages.stage_work` entry ``work``; zeros where it does no
    ``works``), at ``peak`` FLOP/s and ``bandwidth``, a profile's efficiencies applied."""
    if not works:
        flops[...] = hbm[...] = compute_t[...] = memory_t[...] = 0.0
        return
    flops[...], hbm[...] = work[2], work[3]
    np.divide(flops, peak * options.flops_efficiency, out=compute_t)
    np.divide(hbm, bandwidth, out=memory_t)
    if options.profile is not None:  # the calibrated mode: what the engine reaches
        _apply_profile(options.profile, name, flops, hbm, compute_t, memory_t)


def stage_subset(model, gpu, configs, sh, b, workload, options, skew, want) -> tuple:
    """``(stages, fit)``: the stages of ``want`` that the rows of ``sh`` (not plain, one row
    of batches ``b``) run, each as :func:`static_parts` forms it (the same work, collective
    bytes, rates and profile, bit for bit), without the others': ``stages`` maps a name to
    ``(count, group, op, works, flops, hbm, net, compute_t, memory_t)`` (counts and groups
    a row each); ``fit`` :func:`~compute.memory.memory_fit`'s ``(weights, kv, activations,
    usable, fits)``. For an exchange whose grid differs from another's in those stages
    only (:mod:`compute.moe_dp_cells`)."""
    micro = micro_batch(b, sh.pp, sh.attention_dp, workload.phase)
    work = stage_work(model, sh, micro, workload, skew)
    nc = len(configs)
    shape = np.broadcast_shapes((nc, b.shape[1]), micro.shape)
    return _formed(model, gpu, [x for x in work if x[0] in want], nc, shape, options,
                   workload), memory_fit(model, gpu, sh, b, workload, options.memory_reserve,
                                         micro_batch=micro)


def exchange_subset(model, gpu, configs, sh, b, workload, options, skew, counts) -> tuple:
    """:func:`stage_subset` of the stages the all-reduce exchange or SGLang's DP-attention
    gather changes (:data:`compute.moe_dp_cells.DP_STAGES`) on rows of ``sh`` flagged
    ``Shards.ep_allreduce`` or ``Shards.ep_dp_gather``, their work from the functions
    :func:`~compute.stages.stage_work` calls for them
    (:func:`compute.stages.allreduce_exchange_work`,
    :func:`compute.stages.dp_gather_exchange_work`) without the other stages', their
    ``counts`` (``{stage: a count per row}``) the grid's (the all-to-all schedule's, the
    same); ``fit`` None where the exchange leaves the memory fit as it is
    (:func:`compute.memory.splits_shared`: no shared experts), else
    :func:`~compute.memory.memory_fit`'s."""
    micro = micro_batch(b, sh.pp, sh.attention_dp, workload.phase)
    nc = len(configs)
    shape = np.broadcast_shapes((nc, b.shape[1]), micro.shape)
    exchange = allreduce_exchange_work if np.any(sh.ep_allreduce) else dp_gather_exchange_work
    work = exchange(model, sh, micro, workload, skew)
    mine = _within_one_gpu([(s, counts[s], *work[s]) for s in EXTENDED_STAGES if s in counts],
                           counted=True)
    fit = memory_fit(model, gpu, sh, b, workload, options.memory_reserve,
                     micro_batch=micro) if splits_shared(model) else None
    return _formed(model, gpu, mine, nc, shape, options, workload), fit


def _formed(model, gpu, mine, nc, shape, options, workload) -> dict:
    """The stages of ``mine`` (:func:`~compute.stages.stage_work`'s entries) that some row
    runs, each as :func:`static_parts` forms it, for :func:`stage_subset`."""
    counts = [np.broadcast_to(np.asarray(x[1], float).reshape(-1), (nc,)) for x in mine]
    peaks = stage_peaks(model, gpu, tuple(x[0] for x in mine), options.compute_dtype,
                        workload)
    bandwidth = gpu.hbm_bandwidth * options.memory_efficiency
    out = {}
    for x, count, peak in zip(mine, counts, peaks, strict=True):
        if not count.any():   # no row runs it: not a stage of the grid
            continue
        works = not x[4] or x[0] in ("embedding", "lm_head")
        net = np.empty(shape)
        if x[4]:   # as _work_frame: no collective where the stage does not occur
            net[...] = x[5]
            net *= (count > 0)[:, None]
        else:
            net[...] = 0.0
        f, h, c, m = (np.empty(shape) for _ in range(4))
        _fill_stage(x[0], works, x, peak, bandwidth, options, f, h, c, m)
        out[x[0]] = (count, np.broadcast_to(np.asarray(x[6], float).reshape(-1), (nc,)), x[4],
                     works, f, h, net, c, m)
    return out


def mlp_subset(model, gpu, configs, sh, b, workload, options, skew) -> tuple:
    """:func:`stage_subset` of ``mlp_up`` and ``mlp_down`` alone, on rows that all run
    expert parallelism with every GPU holding every token
    (:func:`compute.stages.replicated_mlp_work`: their work without the other stages'),
    bit for bit; the counts every row's layers, the groups 1. Also the collectives of an
    attention group's output and of its rows after the MLP on those rows under DP
    attention (:func:`compute.stages.attention_group_ops`): ``(stages, fit, ops)``."""
    micro = micro_batch(b, sh.pp, sh.attention_dp, workload.phase)
    nc = len(configs)
    shape = np.broadcast_shapes((nc, b.shape[1]), micro.shape)
    names = ("mlp_up", "mlp_down")
    peaks = stage_peaks(model, gpu, names, options.compute_dtype, workload)
    bandwidth = gpu.hbm_bandwidth * options.memory_efficiency
    out = {}
    for name, (flops, hbm), peak in zip(names, replicated_mlp_work(
            model, sh, micro, workload, skew), peaks, strict=True):
        f, h, c, m = (np.empty(shape) for _ in range(4))
        _fill_stage(name, True, (name, None, flops, hbm), peak, bandwidth, options, f, h, c, m)
        out[name] = (np.full(nc, float(model.layers)), np.ones(nc), "", True, f, h,
                     np.zeros(shape), c, m)
    return out, memory_fit(model, gpu, sh, b, workload, options.memory_reserve,
                           micro_batch=micro), attention_group_ops(sh, micro, workload)


def _work_frame(model, gpu, configs, sh, plain: bool, b, workload, options, skew,
                busiest=None) -> tuple:
    """What no efficiency or profile changes of :func:`_static_frame`: ``(micro, shape,
    counts, names, groups, ops, works, work, net, fit)``, ``work`` each stage's
    :func:`~compute.stages.stage_work` and ``net`` its collective bytes."""
    # decode: as many micro-batches in flight as stages; prefill: one prompt an attention
    # group a micro-batch (compute.parallel.micro_batch)
    micro = b if plain else micro_batch(b, sh.pp, sh.attention_dp, workload.phase)
    work = stage_work(model, sh, micro, workload, skew, busiest)
    nc = len(configs)
    shape = np.broadcast_shapes((nc, b.shape[1]), micro.shape)
    assert tuple(x[0] for x in work) == (STAGES if plain else EXTENDED_STAGES)
    counts = np.stack([np.broadcast_to(np.asarray(x[1], float).reshape(-1), (nc,))
                       for x in work])
    if not plain:  # only the stages some row runs
        keep = counts.any(axis=1)
        work, counts = [x for x, k in zip(work, keep, strict=True) if k], counts[keep]
    names = tuple(x[0] for x in work)
    groups = np.stack([np.broadcast_to(np.asarray(x[6], float).reshape(-1), (nc,))
                       for x in work])
    ops = tuple(x[4] for x in work)
    # stage arrays: a collective stage has no FLOPs or HBM bytes (but the embedding and the
    # LM head, which do both), a compute stage no collective bytes
    works = [not x[4] or x[0] in ("embedding", "lm_head") for x in work]
    net = buffers.empty((len(work),) + shape)
    occurs = None if plain else (counts > 0)[:, :, None]
    for k, x in enumerate(work):
        if x[4]:
            net[k] = x[5]
            if occurs is not None:  # no collective where a stage does not occur
                net[k] *= occurs[k]
        else:
            net[k] = 0.0
    fit = memory_fit(model, gpu, sh, b, workload, options.memory_reserve, micro_batch=micro)
    return (micro, shape, counts, names, groups, ops, works, work, net, fit)


#: Stages that are GEMMs (the profile's gemm_efficiency applies to their FLOPs).
GEMM_STAGES = ("qkv", "out_proj", "mlp_up", "mlp_down", "lm_head")


def _apply_profile(profile, name, flops, hbm, compute_t, memory_t) -> None:
    """Scale a working stage's compute and memory times (in place) by what ``profile``
    says the engine reaches (:mod:`compute.profiles`)."""
    if name in GEMM_STAGES:
        if profile.gemm_curve:
            with np.errstate(divide="ignore", invalid="ignore"):
                intensity = np.where(hbm > 0, flops / hbm, np.inf)
            compute_t /= profile.gemm_efficiency_at(intensity)
        else:
            compute_t /= profile.gemm_efficiency
    elif name == "attention":
        compute_t /= profile.attention_efficiency
    memory_t /= profile.hbm_fraction


def pipeline_period(pass_t: np.ndarray | float, send: np.ndarray | float,
                    pp: np.ndarray | float, mode: str,
                    slowest: np.ndarray | float | None = None) -> np.ndarray:
    """Seconds between two micro-batches entering a pipeline of ``pp`` stages: the slowest
    stage's time (``slowest``; default: balanced stages, ``pass_t / pp``), and the send to
    the next stage, overlapped (``mode`` ``"overlap"``: the larger) or one after the other
    (``"serial"``: the sum).

    Examples
    --------
    >>> float(pipeline_period(0.8, 0.05, 4, "overlap")), float(pipeline_period(0.8, 0.05, 4, "serial"))
    (0.2, 0.25)
    """
    stage = np.divide(pass_t, pp) if slowest is None else slowest
    return np.maximum(stage, send) if mode == "overlap" else stage + send


#: :func:`mlp_kind_gap` forms the work of at most about this many cells at a time.
_GAP_CELLS = 1 << 16


def mlp_kind_gap(model, gpu, sh, micro, workload, options, skew) -> np.ndarray | None:
    """For an MoE model with dense layers, each configuration and batch's ``sum over mlp_up
    and mlp_down of (an MoE layer's time - a dense layer's time)``, each timed as those
    stages are (the roofline at the stage's peak, a profile's efficiencies; overlap: the
    larger of compute and memory, serial: their sum): what a pipeline stage's time moves
    by per MoE layer it holds beyond the pass's share (:func:`compute.pipeline_time.
    slowest_stage`), on the pipelined rows (0 on the others); None for other models."""
    if not (model.is_moe and model.dense_layers):
        return None
    rows, piped, m = _pipelined_rows(sh, micro)
    nb = np.shape(micro)[1]
    width = max(1, _GAP_CELLS // max(rows.size, 1))
    if width >= nb:
        return _kind_gap(model, gpu, mlp_work_by_kind(model, piped, m, workload, skew), sh,
                         rows, micro, options)
    # a block of batches at a time (each cell's work is its own batch's): the work's
    # arrays, a dozen of the grid's rows x batches each, never made whole
    gap = np.empty((sh.tp.shape[0], nb))
    for j in range(0, nb, width):
        cols = slice(j, j + width)
        gap[:, cols] = _kind_gap(model, gpu, mlp_work_by_kind(model, piped, m[:, cols],
                                                              workload, skew),
                                 sh, rows, m[:, cols], options)
    return gap


def attention_kind_times(model, gpu, sh, micro, workload, options) -> tuple | None:
    """For a model that mixes windowed and full-attention layers, ``(full, windowed)``: each
    configuration and batch's ``attention`` time of one full-attention layer and of one
    windowed layer, each timed as that stage is (the roofline at its peak, a profile's
    efficiencies; overlap: the larger of compute and memory, serial: their sum), on the
    pipelined rows (0 on the others): what a pipeline stage runs for its own layers of
    each kind (:func:`compute.pipeline_time.slowest_stage`); None for other models."""
    if attention_kinds(model) is None:
        return None
    rows, piped, m = _pipelined_rows(sh, micro)
    (name, pair), = attention_work_by_kind(model, piped, m, workload).items()
    nt = sh.tp.shape[0]
    shape = (len(rows), np.shape(micro)[1])
    out = []
    for kind, (f, h) in zip(attention_kinds(model), pair, strict=True):
        peak, = stage_peaks(kind, gpu, (name,), options.compute_dtype, workload)  # its own pairs
        t = np.zeros((nt, shape[1]))
        t[rows] = _kind_time(name, peak, f, h, shape, gpu, options)
        out.append(t)
    return tuple(out)


def _pipelined_rows(sh, micro) -> tuple:
    """``(rows, shards, micro)``: the rows of ``sh`` with more than one pipeline stage, and
    ``sh`` and the micro-batches cut to them."""
    nt = sh.tp.shape[0]
    rows = np.flatnonzero(np.broadcast_to(np.asarray(sh.pp, dtype=float).reshape(-1, 1),
                                          (nt, 1))[:, 0] > 1)
    cut = lambda v: v[rows] if isinstance(v, np.ndarray) and v.shape[:1] == (nt,) else v  # noqa: E731
    piped = Shards(**{f.name: cut(getattr(sh, f.name)) for f in fields(Shards)})
    return rows, piped, cut(np.asarray(micro, dtype=float))


def _kind_gap(model, gpu, kinds: dict, sh, rows, micro, options) -> np.ndarray:
    """``sum over the stages of kinds ({stage: (work of one kind, work of the other)}, each
    (flops, hbm) on the rows ``rows``) of (the first's time - the second's)``, shape
    ``(configurations, batches)``, 0 off ``rows``."""
    nt = sh.tp.shape[0]
    shape = (len(rows), np.shape(micro)[1])
    peaks = stage_peaks(model, gpu, tuple(kinds), options.compute_dtype)
    gap = np.zeros((nt, shape[1]))
    for peak, (name, pair) in zip(peaks, kinds.items(), strict=True):
        times = [_kind_time(name, peak, f, h, shape, gpu, options) for f, h in pair]
        gap[rows] += times[0] - times[1]
    return gap


def _kind_time(name, peak, flops, hbm, shape, gpu, options) -> np.ndarray:
    """Stage ``name``'s time for ``flops`` and ``hbm`` bytes, shape ``shape``, as the grid
    times it (:func:`_static_frame` and :func:`stage_times`, no network)."""
    f, h = (np.broadcast_to(np.asarray(x, dtype=float), shape) for x in (flops, hbm))
    c, m = f / (peak * options.flops_efficiency), h / (gpu.hbm_bandwidth
                                                       * options.memory_efficiency)
    if options.profile is not None:
        _apply_profile(options.profile, name, f, h, c, m)
    return np.maximum(c, m) if options.mode == "overlap" else c + m


def stage_times(names, ops, works, compute_t, memory_t, network_t, options, c3=None,
                busy=False, fill=None):
    """Each stage's time (overlap: the largest of compute, memory and network; serial:
    their sum) and what bounds it: the index of the largest of (compute, memory, network),
    the first on ties (argmax); a collective stage is network-bound. Stage by stage, each
    slice while it is in cache; a collective stage has no compute or memory time (zeros:
    not compared), a compute stage no network time (zero, or NaN where untimed: never the
    largest).

    With ``c3`` (the counts, ``(stages, nc, 1)``), also a pass's time, the sum of
    ``count x time`` over the stages outside :data:`PIPELINE_STAGES` in their order, and
    with ``busy`` each resource's such sum (compute, memory, network; only the stages
    where that resource's time is not zero, which adds nothing), for :func:`compute.pipeline_time.pipeline_latency`;
    else those are None. The sums are formed while each stage is in cache. ``fill(k)``
    (optional) fills stage ``k`` of the compute and memory arrays first
    (:func:`compute.grid_parts.static_parts`)."""
    stage_t = buffers.empty(compute_t.shape)
    bound = buffers.empty(compute_t.shape, dtype=np.int8)
    overlap = options.mode == "overlap"
    hide = {}   # each all-reduce's stage and its producer's (overlap_collectives)
    if overlap and options.overlap_collectives:
        hide = {names.index(c): names.index(p) for c, p in PRODUCERS.items() if c in names}
        # an EP layer's slots where they hold the all-reduce exchange's all-reduces (its
        # own grid: every cell), hidden by the same rule
        hide.update({names.index(c): names.index(p) for c, p in EXCHANGE_PRODUCERS.items()
                     if c in names and isinstance(ops[names.index(c)], str)
                     and ops[names.index(c)] == "all-reduce"})
    pass_t, sums = None, [None, None, None]
    # one stage's temporaries (its busiest resource, a sum's term), reused stage to stage
    scratch = np.empty((2,) + stage_t.shape[1:])
    for k, name in enumerate(names):
        if fill is not None:
            fill(k)
        c, m, t = compute_t[k], memory_t[k], network_t[k]
        network_bound = ops[k] and name not in ("embedding", "lm_head")
        if network_bound and not works[k]:   # compute and memory times are zeros: the
            np.add(t, 0.0, out=stage_t[k])  # network's (max(0, t) and (0 + 0) + t)
            bound[k] = 2
        else:
            busiest = np.maximum(c, m, out=scratch[0])
            if overlap:
                np.maximum(busiest, t, out=stage_t[k])
            else:
                np.add(c + m, t, out=stage_t[k])
            if network_bound:
                bound[k] = 2
            else:
                np.greater(m, c, out=bound[k], casting="unsafe")
                if ops[k]:
                    bound[k][t > busiest] = 2
        if k in hide:  # hidden behind its producer GEMM (which comes before it)
            stage_t[k] = np.maximum(0.0, t - stage_t[hide[k]])
        if c3 is None or name in PIPELINE_STAGES:
            continue
        # each term count x time added in the stages' order, in place (a term's buffer)
        if pass_t is None:
            pass_t = c3[k] * stage_t[k]
        else:
            np.add(pass_t, np.multiply(c3[k], stage_t[k], out=scratch[1]), out=pass_t)
        if busy:
            for r, (part, used) in enumerate(((c, works[k]), (m, works[k]), (t, ops[k]))):
                if used:
                    if sums[r] is None:
                        sums[r] = c3[k] * part
                    else:
                        sums[r] += np.multiply(c3[k], part, out=scratch[1])
    return stage_t, bound, pass_t, (sums if busy else None)
