"""The per-stage roofline model of one inference step: the checks of its inputs, and the
grid of every configuration (TP degree, or a :class:`~compute.parallel.Parallelism`) x batch
(:func:`evaluate_grid`); its options are :mod:`compute.roofline_options`'.

Each stage's work per GPU (FLOPs, HBM bytes, collective bytes) is counted in
:mod:`compute.stages`, whose docstring lists the stages and how each is counted. Then:

* compute time = FLOPs / (peak FLOP/s of the compute dtype x ``flops_efficiency``)
* memory time  = HBM bytes / (HBM bandwidth x ``memory_efficiency``)
* network time = the collective-cost model's answer (:mod:`compute.comm`)
* stage time   = max of the three (``overlap`` mode, the Lite-GPU paper's assumption) or
  their sum (``serial`` mode); the step's time is the sum over stages.

Communication goes only through ``comm.collective_time(op, nbytes, group_size)``: once
per (operation, group size), with a numpy array of every message size of the grid.

The grid's network-independent parts (stage work, compute and memory times, memory fit)
are formed and kept in :mod:`compute.grid_parts`; the grid's result (:class:`Grid`, one
cell of it as an InferenceResult) is :mod:`compute.grid_result`'s. One configuration is
:func:`compute.evaluate_one.evaluate` (plain floats, the same numbers as a one-cell grid);
a list of (configuration, batch) pairs is :func:`compute.evaluate_many.evaluate_many`.
A pipelined step's time (each row's slowest stage, the micro-batches flowing through the
stages) is :mod:`compute.pipeline_time`'s.

>>> from compute.results import RESOURCES
>>> g = evaluate_grid("Llama-3-70B", "H100-SXM", [8], [1, 64], make_workload("decode"))
>>> g.stages[1:5], [RESOURCES[k] for k in g.bound[1:5, 0, 0]]
(('qkv', 'attention', 'out_proj', 'allreduce_attn'), ['memory', 'memory', 'memory', 'network'])
>>> [round(float(t) * 1e3, 2) for t in g.latency[0]], bool(g.feasible[0, 1])
([5.31, 6.98], True)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from compute import buffers
from compute.comm import (
    CommLike,
    NoCommunication,
    RingAlphaBeta,
    ScaleUpLowerBound,
    as_comm,
    as_times,
)
from compute.dp_collectives import running, stage_ops
from compute.errors import UserError
from compute.grid_parts import (
    attention_kind_times,
    exchange_subset,
    mlp_kind_gap,
    mlp_subset,
    stage_subset,
    stage_times,
    static_parts,
)
from compute.grid_result import Grid, GridRates, stage_sum
from compute.hardware import GpuSpec, get_gpu
from compute.limits import check as check_size
from compute.micro_batches import grid_two_batch_time, halves_options, rank_halves, splits
from compute.models import ModelSpec, get_model
from compute.moe_exchange import cheaper_exchange
from compute.moe_routing import moe_comm
from compute.mtp import mtp_grid
from compute.parallel import (
    MAX_EXPERT_SKEW,
    Parallelism,
    check_parallelism,
    dense_data_parallel,
    layout,
)
from compute.phases import Workload
from compute.pipeline_time import pipeline_latency, slowest_stage
from compute.roofline_options import RooflineOptions
from compute.sharding import check_tp, shards
from compute.stages import EXTENDED_STAGES, STAGES
from compute.units import counted
from compute.validate import (
    MAX_WHOLE,
    an_int,
    describe,
    flag,
    holds_flag,
    is_finite,
    is_whole,
    of_type,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["EXTENDED_STAGES", "STAGES", "Grid", "GridRates", "MAX_BATCH", "MAX_CONFIGURATIONS",
           "check_batch", "check_batches", "check_latency_limit", "check_options", "check_skew",
           "bound_comm", "default_comm", "evaluate_grid", "make_workload", "ring_comm",
           "stage_sum"]

#: Most configurations x batches one grid (and so one SLO search) evaluates, about 1 kB
#: each while it runs; ``NETMODEL_MAX_SEARCH_CONFIGURATIONS`` overrides. Counted before
#: any array of the grid is made.
MAX_CONFIGURATIONS = 2_000_000


def default_comm(gpu: GpuSpec, options: RooflineOptions | None = None) -> CommLike:
    """The collective-cost model when none is given: the roofline's lower bound
    (:func:`bound_comm`); in the calibrated mode (``options.profile`` set) NCCL's ring
    (:func:`ring_comm`), the model the shipped engine profiles were fitted with, so that a
    profile's numbers do not move with the roofline's.

    >>> from compute.hardware import get_gpu
    >>> from compute.profiles import get_profile
    >>> gpu = get_gpu("H100-SXM")
    >>> type(default_comm(gpu)).__name__
    'ScaleUpLowerBound'
    >>> type(default_comm(gpu, RooflineOptions(profile=get_profile("vllm-dgx-h100")))).__name__
    'RingAlphaBeta'
    """
    if options is not None and options.profile is not None:
        return ring_comm(gpu)
    return bound_comm(gpu)


def ring_comm(gpu: GpuSpec) -> RingAlphaBeta:
    """NCCL's ring over the GPU's scale-up bandwidth (:class:`~compute.comm.RingAlphaBeta`:
    1.9 us a step, 92% link efficiency): the calibrated mode's collectives
    (:func:`default_comm`) and the study's ``ring`` network. No bound: engines' one-shot
    and two-shot all-reduces take fewer steps and NCCL's NVLS moves fewer bytes.

    >>> from compute.hardware import get_gpu
    >>> r = ring_comm(get_gpu("H100-SXM"))   # 14 x 1.9 us + 1.75 x 16 KiB / (0.92 x 450 GB/s)
    >>> round(float(r.collective_time("all-reduce", 16384.0, 8)) * 1e6, 4)
    26.6693
    """
    return RingAlphaBeta(bandwidth=gpu.scaleup_bandwidth)


def bound_comm(gpu: GpuSpec) -> ScaleUpLowerBound:
    """A lower bound on the GPU's collectives inside its scale-up domain, as the roofline
    is on the rest (:func:`default_comm`'s model): the least time of the ring, one-shot,
    two-shot and (where its switches reduce, ``scaleup_reduction``) in-switch algorithms
    over its scale-up bandwidth (:class:`~compute.comm.ScaleUpLowerBound`).

    >>> from compute.hardware import get_gpu
    >>> b = bound_comm(get_gpu("B200-HGX"))
    >>> round(float(b.collective_time("all-reduce", 5760.0, 8)) * 1e6, 4)  # 0.6 + 0.0064 us
    0.6064
    """
    return ScaleUpLowerBound(bandwidth=gpu.scaleup_bandwidth,
                             in_switch=bool(gpu.scaleup_reduction))


#: Largest batch (sequences a step) evaluated (:data:`compute.validate.MAX_WHOLE`).
MAX_BATCH = MAX_WHOLE


def check_batch(batch: object) -> int:
    """Return ``batch`` as an int if it is a Python or numpy integer from 1 to
    :data:`MAX_BATCH`, else raise :class:`UserError` (1e308 sequences overflowed the step's
    token count to inf; a float, 8.0 too, is no count given in code:
    :func:`compute.validate.an_int`)."""
    raw = batch
    if is_finite(batch) and batch > MAX_BATCH:   # a float too: past the range either way
        raise UserError(f"batch must be a whole number of sequences from 1 to {MAX_BATCH:,}, "
                        f"got {describe(raw)}")
    if not (is_whole(batch) and batch >= 1):   # is_whole: no bool
        # a float is refused, 8.0 too: a count given in code is an int (compute.validate.an_int)
        raise UserError(f"batch must be a whole number of sequences >= 1{an_int(raw)}, got "
                        f"{describe(raw)}")
    return int(batch)


def make_workload(phase: str | Workload, prompt: int | None = None,
                  context: int | None = None) -> Workload:
    """A :class:`Workload` from a phase name (or a Workload, returned as is) and token counts.

    A Workload already holds its token counts: ``prompt`` or ``context`` beside one is
    refused rather than ignored.

    >>> make_workload(Workload("decode", context=100), context=5)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: context=5 given beside a Workload, which holds its own token counts (context 100); give the phase name instead, or the Workload alone
    """
    if isinstance(phase, Workload):
        given = [f"{k}={describe(v)}" for k, v in (("prompt", prompt), ("context", context))
                 if v is not None]
        if given:
            held = f"prompt {phase.prompt}" if phase.phase == "prefill" else \
                f"context {phase.context}"
            raise UserError(f"{', '.join(given)} given beside a Workload, which holds its own "
                            f"token counts ({held}); give the phase name instead, or the "
                            f"Workload alone")
        return phase
    try:
        return _workload(phase, prompt, context)
    except TypeError:  # an unhashable value: let Workload say what is wrong with it
        return _new_workload(phase, prompt, context)


def _new_workload(phase, prompt, context) -> Workload:
    kw = {k: v for k, v in (("prompt", prompt), ("context", context)) if v is not None}
    return Workload(phase, **kw)


#: Workloads by (phase, prompt, context): frozen, so one object serves every call.
_workload = lru_cache(maxsize=1024, typed=True)(_new_workload)


def _as_configs(model, configs, max_instance) -> tuple[Parallelism, ...]:
    out = []
    for c in configs:
        if isinstance(c, Parallelism):
            out.append(check_parallelism(model, c, max_instance))
        else:
            out.append(Parallelism(check_tp(model, c, max_instance)))
    if not out:
        raise UserError("no configuration given to evaluate")
    return tuple(out)


def check_skew(skew: object) -> float:
    """``skew`` if it is a finite number >= 1 (the busiest EP group's share of routed
    tokens over the mean; 1 is uniform routing), else a :class:`UserError`."""
    if not (is_finite(skew) and 1 <= skew <= MAX_EXPERT_SKEW):
        raise UserError(f"expert_skew must be a number from 1 (uniform routing) to "
                        f"{MAX_EXPERT_SKEW:,.0f}, got {describe(skew)}")
    return float(skew)


def evaluate_grid(model: str | ModelSpec, gpu: str | GpuSpec, tps: Iterable[int | Parallelism],
                  batches: ArrayLike, workload: Workload | str, *, comm: CommLike | None = None,
                  options: RooflineOptions | None = None, latency_limit: float = math.inf,
                  expert_skew: float = 1.0, time_unfit: bool = True) -> Grid:
    """Evaluate every (configuration, batch) pair at once.

    ``workload``: a :class:`~compute.phases.Workload` or a phase name (default tokens).
    ``tps`` lists TP degrees (plain tensor parallelism) or
    :class:`~compute.parallel.Parallelism` configurations. ``comm`` implements
    ``collective_time(op, nbytes, group_size)`` (default: :func:`default_comm`, the
    scale-up lower bound, or with an engine profile the ring); it is
    called once per (operation, group size > 1) with an array of every message size of
    the grid that needs it. ``expert_skew`` (>= 1): under expert parallelism the busiest
    GPU receives ``expert_skew`` times the mean share of routed tokens (1: uniform).
    ``latency_limit``: seconds > 0 (``math.inf``: no limit) a feasible cell meets. At most
    :data:`MAX_CONFIGURATIONS` configurations x batches, refused before any work.

    Pipeline parallelism (``pp`` stages; see :mod:`compute.parallel`): the stage arrays
    describe one pass of a micro-batch through the layers, per GPU; the memory fit is that
    of the fullest stage (:func:`compute.memory.memory_fit`: each stage's own layers, the
    embedding on the first and the LM head on the last), and so is the time: the period
    ``T_c`` is the slowest stage's (:func:`slowest_stage`: its own layers, an MoE
    model's dense and MoE layers and a windowed model's windowed and full-attention layers
    each timed as such, the embedding on the first, the LM head on the last), and each
    stage boundary costs a
    ``send-recv`` of the micro-batch's activations
    (``T_s``, ``comm.collective_time("send-recv", bytes, 2)``), which overlaps the next
    micro-batch's work in ``overlap`` mode (period ``max(T_c, T_s)``; ``T_c + T_s`` in
    ``serial`` mode).

    * decode: the batch is cut into ``k = min(batch, pp)`` micro-batches, one per stage in
      flight, each timed as the largest, ``ceil(batch / pp)`` sequences (vLLM's virtual
      engines hold ``floor`` or ``ceil`` of them: an upper bound; counting only the
      ``ceil(batch / micro)`` full micro-batches would let a step shorten as sequences are
      added, 4 micro-batches of 1 outlasting 3 of 2 behind the slowest stage); each
      sequence gets its next token when its micro-batch has gone round the pipeline:
      TBT = ``max(pass + (pp - 1) T_s, k period)``.
    * prefill: a micro-batch holds one prompt an attention group (GPipe's one prompt
      without attention DP; :func:`compute.parallel.micro_batch`), ``k = ceil(batch /
      attention_dp)`` of them; the batch's TTFT is ``(k - 1) period + pass + (pp - 1)
      T_s``: the fill and drain bubble is paid once per batch. That latency is what the
      TTFT SLO checks; tokens/s are those of an instance serving a stream of batches,
      whose next batch's first micro-batch enters the first stage one period after this
      one's last: a batch every ``interval = k x period`` (plus a profile's fixed
      overhead, once per batch), so ``tokens_per_s = batch x prompt / interval``, without
      the bubble's ``(pp - 1)`` periods.

    The difference between the latency and the pass (a micro-batch waiting behind the
    others) is the stage ``pipeline_wait``. With ``pp = 1`` the latency is the pass itself.

    ``time_unfit=False`` times the collectives of the cells that fit in memory only: the
    others' network and stage times and latency are NaN, and ``comm`` is never asked about
    a group size that only such cells use. A search passes it: a cell that does not fit
    is never feasible, and on a fabric-aware ``comm`` each new (operation, group size)
    compiles the fabric (about 40% of a Lite study's collective costing is for instances
    too small to hold the model).
    """
    model, gpu = get_model(model), get_gpu(gpu)
    workload = make_workload(workload)   # a phase name too, as evaluate takes it
    options = check_options(options)
    skew = check_skew(expert_skew)
    comm = as_comm(comm) if comm is not None else default_comm(gpu, options)
    comm = moe_comm(comm, model, workload.phase)
    check_context(model, workload)
    latency_limit = check_latency_limit(latency_limit)
    time_unfit = flag("", "time_unfit", time_unfit)   # 'no' was read as true
    if isinstance(tps, (str, bytes)) or not isinstance(tps, Iterable) \
            or isinstance(tps, np.ndarray) and tps.ndim == 0:   # np.array(4): no list
        raise UserError(f"tps must be a list of TP degrees or Parallelism configurations "
                        f"(e.g. [1, 2, 4, 8]), got {describe(tps)}")
    tps = list(tps)
    if isinstance(batches, np.ndarray):   # the grid's size, before any of its arrays is made
        _check_cells(len(tps), batches.size)
    configs = _as_configs(model, tps, None)
    plain = all(c.is_plain for c in configs)
    sh = shards(model, [c.tp for c in configs]) if plain else layout(model, configs)
    if options.dense_mlp_tp is not None:
        sh = dense_data_parallel(model, configs, sh, options.dense_mlp_tp)
    tps = tuple(c.tp for c in configs)
    batches = check_batches(batches)
    _check_cells(len(configs), batches.size)
    if options.mtp_tokens and workload.phase == "decode":   # prefill: as without MTP
        return mtp_grid(grid_body, model, gpu, configs, sh, plain, batches,
                        batches.astype(float).reshape(1, -1), workload, comm, options, skew,
                        latency_limit, time_unfit=time_unfit)
    return grid_body(model, gpu, configs, sh, plain, batches,
                     batches.astype(float).reshape(1, -1), workload, comm, options, skew,
                     latency_limit, time_unfit=time_unfit)


def grid_body(model, gpu, configs, sh, plain: bool, batches, b, workload, comm, options,
              skew, latency_limit, paired: bool = False, time_unfit: bool = True,
              busiest=None) -> Grid:
    """The body of :func:`evaluate_grid` (:func:`_one_exchange`), each cell of an
    expert-parallel row taking the cheapest of the MoE layers' exchanges: the all-to-alls,
    the all-reduce (without DP attention) or the gather (with it)
    (:func:`compute.moe_exchange.cheaper_exchange`)."""
    grid = _one_exchange(model, gpu, configs, sh, plain, batches, b, workload, comm, options,
                         skew, latency_limit, paired, time_unfit, busiest)
    pipeline = (slowest_stage, pipeline_latency, mlp_kind_gap, attention_kind_times)
    return cheaper_exchange(_one_exchange, model, configs, sh, plain, batches, b, paired,
                            busiest, grid, costs=_network_times, pipeline=pipeline,
                            subset=(stage_subset, mlp_subset, exchange_subset), gpu=gpu,
                            workload=workload,
                            comm=comm, options=options, skew=skew,
                            latency_limit=latency_limit, time_unfit=time_unfit)


def _one_exchange(model, gpu, configs, sh, plain: bool, batches, b, workload, comm, options,
                  skew, latency_limit, paired: bool = False, time_unfit: bool = True,
                  busiest=None, known=None) -> Grid:
    """The body of :func:`evaluate_grid` for one MoE exchange (``sh.ep_allreduce``): ``b`` is a row of batches (every configuration x
    every batch) or, ``paired``, a column (row ``i``: configuration ``i`` at batch ``b[i]``;
    a plain row's stages then add up in the order of a one-cell grid's, so each row equals
    :func:`~compute.evaluate_one.evaluate` of its configuration to the last bit).
    ``busiest``: the busiest attention group's sequences where not ``ceil(b / a)``
    (two-batch overlap's micro-batches, :func:`_two_batch`; ``b`` then one row per
    configuration, fractional where a rank's sequence is cut in two). ``known``: a function
    of the stages' names giving their collective times where the caller has them (the
    gather exchange's rows: :func:`compute.moe_exchange.cheaper_exchange`), not costed
    again."""
    tps = tuple(sh.tp.ravel().astype(int).tolist()) if paired else tuple(c.tp for c in configs)
    if options.two_batch_overlap:
        _check_two_batch(configs, paired)
    if paired and options.mtp_tokens:
        raise UserError("MTP decode is not modelled by evaluate_many; use evaluate or "
                        "evaluate_grid")
    if paired and options.dense_mlp_tp is not None:
        raise UserError("a dense MLP TP degree is not modelled by evaluate_many; use evaluate "
                        "or evaluate_grid")
    (micro, shape, counts, names, groups, ops, works, flops, hbm, net, compute_t, memory_t,
     fit, fill) = static_parts(model, gpu, configs, sh, plain, b, workload, options, skew,
                               paired, lazy=True, busiest=busiest)
    # an ideal network (the search's memory probe) costs nothing: not asked
    fits = None if time_unfit else np.broadcast_to(fit[4], net.shape[1:])
    if type(comm) is NoCommunication:
        network_t = np.zeros(net.shape)
        if fits is not None and not fits.all():
            network_t[:, ~fits] = np.nan  # as _network_times leaves them: untimed
    elif known is not None:
        network_t = known(names)
    else:
        network_t = _network_times(comm, ops, groups, counts, net, fits,
                                   np.array([c.gpus for c in configs]),
                                   np.array([c.tp for c in configs]))
    profile = options.profile
    c3 = counts[:, :, None]
    piped = not plain and bool(np.any(sh.pp > 1))
    # a pass, stage after stage (bit for bit where rows are plain), summed as each stage
    # is formed; a pipelined grid's busy times too, but for evaluate_many's single column
    # (the einsum's order there: pipeline_latency)
    stage_t, bound, latency, busy = stage_times(
        names, ops, works, compute_t, memory_t, network_t, options,
        c3=None if plain else c3, busy=piped and not paired and b.shape[1] > 1, fill=fill)
    interval = None
    if plain:
        latency = stage_sum(c3, stage_t)
    elif piped:
        gap = mlp_kind_gap(model, gpu, sh, micro, workload, options, skew)
        kinds = attention_kind_times(model, gpu, sh, micro, workload, options)
        slowest = slowest_stage(model, sh, stage_t, c3, names, gap, kinds)
        latency, interval = pipeline_latency(latency, sh.pp, b, micro, stage_t, bound, c3,
                                             names, options, workload,
                                             (compute_t, memory_t, network_t),
                                             busy=busy, slowest=slowest)
    tbo = hidden = halves = None
    if options.two_batch_overlap:
        tbo, halves = _two_batch(model, gpu, configs, sh, plain, batches, workload, comm,
                                 options, skew, latency_limit, time_unfit, latency)
        faster = tbo < latency          # NaN (batch 1, an untimed cell): the serial step
        hidden = np.where(faster, latency - tbo, 0.0)
        latency = np.where(faster, tbo, latency)
    overhead = None
    if profile is not None:  # fixed overheads, once per step
        overhead = np.broadcast_to(profile.overhead(model.layers, b, workload.phase,
                                                    workload.tokens_per_sequence,
                                                    model.hidden), latency.shape)
        latency = latency + overhead
        if interval is not None:
            interval = interval + overhead
    w, kv, act, usable, fits = fit
    return Grid(model=model, gpu=gpu, workload=workload, options=options, tps=tps,
                batches=batches, counts=counts, ops=ops, flops=flops, hbm_bytes=hbm,
                net_bytes=net, compute_time=compute_t, memory_time=memory_t,
                network_time=network_t, stage_time=stage_t, bound=bound, latency=latency,
                weights=np.broadcast_to(w, shape), kv_cache=np.broadcast_to(kv, shape),
                activations=np.broadcast_to(act, shape), usable=usable, fits=fits,
                latency_limit=float(latency_limit), configs=configs, stages=names,
                groups=groups,   # a micro-batch of a cut prompt: its batch, the ceiling
                micro_batches=np.ceil(np.broadcast_to(micro, shape)).astype(np.int64),
                expert_skew=skew, overhead=overhead, interval=interval,
                two_batch_latency=tbo, two_batch_hidden=hidden, two_batch_halves=halves)


def _check_two_batch(configs, paired: bool) -> None:
    """Refuse two-batch overlap where it is not modelled: a pipeline, and
    :func:`~compute.evaluate_many.evaluate_many`'s pairs."""
    if paired:
        raise UserError("two-batch overlap is not modelled by evaluate_many; use evaluate "
                        "or evaluate_grid")
    pp = max(c.pp for c in configs)
    if pp > 1:
        raise UserError(f"two-batch overlap models one pipeline stage; got PP {pp}; "
                        f"allowed: PP 1")


def _two_batch(model, gpu, configs, sh, plain, batches, workload, comm, options, skew,
               latency_limit, time_unfit, serial) -> tuple:
    """Every cell's step run as two micro-batches, each attention data-parallel rank's
    sequences cut in two (:func:`compute.micro_batches.rank_halves`, :mod:`compute.two_batch`),
    timed by the two-stream schedule of every cell at once
    (:func:`compute.micro_batches.grid_two_batch_time`): NaN where the batch does not
    split (:func:`compute.micro_batches.splits`: batch 1, a decode rank of one sequence) and
    where the ``serial`` step is untimed. Returned with ``(grid, larger, smaller,
    sequences)`` (None where no cell splits): the grid of the micro-batches those cells need
    (a column per distinct micro-batch, a row per configuration, as what a micro-batch
    holds depends on its attention DP), each batch's column of its larger and of its
    smaller micro-batch there (0 where unused), and their sequences over every rank,
    ``(larger, smaller)``, arrays (nc, nb)."""
    batches = np.asarray(batches, dtype=np.int64)
    out = np.full(serial.shape, np.nan)
    adp = np.array([float(c.attention_dp) for c in configs]).reshape(-1, 1)
    cells = splits(workload.phase, batches[None, :], adp) & np.isfinite(serial)
    if not cells.any():
        return out, None
    rows, cols = np.nonzero(cells)
    used = np.flatnonzero(cells.any(axis=0))
    (big, big_busy), (small, small_busy) = rank_halves(
        workload.phase, batches[used].astype(float).reshape(1, -1), adp,
        workload.tokens_per_sequence)
    b = np.concatenate([big, small], axis=1)
    busiest = np.concatenate([big_busy, small_busy], axis=1)
    if (b == b[:1]).all() and (busiest == busiest[:1]).all():   # one attention DP
        b, busiest = b[:1], busiest[:1]
    # each micro-batch once (batch 2k's halves are batch 2k + 1's smaller one, ...)
    both, which = np.unique(np.concatenate([b, busiest]), axis=1, return_inverse=True)
    b, busiest, which = both[:len(b)], both[len(b):], np.ravel(which)
    # the halves' collectives in full (halves_options): the other micro-batch's
    # compute hides them, not their own producer GEMM
    g = grid_body(model, gpu, configs, sh, plain, np.ceil(b.max(axis=0)).astype(np.int64), b,
                  workload, comm, halves_options(options), skew, latency_limit,
                  time_unfit=time_unfit, busiest=None if plain else busiest)
    g = replace(g, sequences=b)   # a half counts a cut prompt half, not whole
    halves, columns, seqs = [], [], []
    for k, h in enumerate((big, small)):
        column = np.zeros(batches.size, dtype=np.int64)
        column[used] = which[k * used.size:(k + 1) * used.size]
        halves.append((g.stage_time, g.counts, g.stages, column))
        columns.append(column)
        full = np.zeros((len(configs), batches.size))
        full[:, used] = h
        seqs.append(full)
    out[rows, cols] = grid_two_batch_time(model, configs, halves, rows, cols,
                                          options.dense_mlp_tp)
    return out, (g, columns[0], columns[1], tuple(seqs))


def check_context(model, workload: Workload) -> None:
    """Refuse a prompt or context longer than the model's ``max_context``."""
    if model.max_context and workload.kv_tokens > model.max_context:
        what = "prompt" if workload.phase == "prefill" else "context"
        raise UserError(f"{workload.phase} with a {what} of {workload.kv_tokens} tokens exceeds "
                        f"{model.name}'s max_context of "
                        f"{counted(model.max_context, 'token')}; use a shorter {what}, or a "
                        f"model file with a larger max_context")


def check_latency_limit(limit: object) -> float:
    """``limit`` as a float if it is a number of seconds > 0 (``math.inf``: no limit), else
    a :class:`UserError` (NaN, 0 or a negative limit made every cell infeasible, silently).

    >>> check_latency_limit(0.05), check_latency_limit(math.inf)
    (0.05, inf)
    >>> check_latency_limit(float("nan"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: latency_limit must be a number of seconds > 0 (inf: no limit), got nan
    """
    if isinstance(limit, bool) or not isinstance(limit, (int, float, np.integer, np.floating)) \
            or not limit > 0:
        raise UserError(f"latency_limit must be a number of seconds > 0 (inf: no limit), got "
                        f"{describe(limit)}")
    return float(limit)


def _check_cells(configs: int, batches: int) -> None:
    check_size("evaluate_grid", "configurations x batches", configs * batches,
               MAX_CONFIGURATIONS, "NETMODEL_MAX_SEARCH_CONFIGURATIONS",
               "give fewer configurations or batches")


def check_batches(batches) -> np.ndarray:
    """``batches`` as a 1-D int64 array if every entry is a Python or numpy integer from 1
    to :data:`MAX_BATCH` (a batch of 2.9 sequences is refused, not truncated to 2), else
    raise :class:`UserError`. A float, 2.0 too (a numpy float array's alike), is no count
    given in code (:func:`compute.validate.an_int`, as :func:`check_batch`).

    >>> check_batches([1, np.int64(2), 8]).tolist()
    [1, 2, 8]
    >>> check_batches([1, 2.0])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: batches must be whole numbers >= 1 (an int), got 2.0
    >>> check_batches([1e300])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: batches must be whole numbers from 1 to 1,000,000,000, got 1e+300
    """
    raw = np.asarray(batches).reshape(-1)
    if raw.size == 0:
        raise UserError("batches is empty; give whole numbers >= 1")
    # a list holding True is read by numpy as numbers ([True, 8]: a batch of 1)
    if raw.dtype == bool or raw.dtype.kind not in "iuf" or holds_flag(batches):
        raise UserError(f"batches must be whole numbers >= 1, got {batches!r}")
    bad = ~np.isfinite(raw) | (raw < 1) | (raw != np.floor(raw))
    if bad.any():
        raise UserError(f"batches must be whole numbers >= 1, got {float(raw[bad][0]):g}")
    over = raw > MAX_BATCH   # 1e300 cast to int64 wrapped to -9.2e18
    if over.any():
        raise UserError(f"batches must be whole numbers from 1 to {MAX_BATCH:,}, got "
                        f"{float(raw[over][0]):g}")
    if raw.dtype.kind == "f":   # whole floats: the first entry given as one, else the first
        given = np.asarray(batches, dtype=object).reshape(-1)
        first = next((x for x in given if an_int(x)), raw[0])
        raise UserError(f"batches must be whole numbers >= 1{an_int(first)}, got "
                        f"{describe(first)}")
    return raw.astype(np.int64)


def _network_times(comm, ops, groups, counts, net, fits=None, gpus=None,
                   stage=None) -> np.ndarray:
    """Collective times, calling ``comm`` once per (op, group size > 1) with every size of
    the stages and rows that run that collective in groups of that size; with ``fits``
    (configurations x batches), only the cells that fit are timed and the others are NaN
    (a group size no fitting cell uses is never asked). ``gpus`` and ``stage`` (one per
    row: its instance's GPUs and a pipeline stage's, ``tp``): where ``comm`` has
    ``for_instance`` (:class:`~compute.comm.CollectiveCostModel`), groups smaller than
    their row's instance are asked of ``comm.for_instance(gpus, stage)``, once per (op,
    group size, instance GPUs, stage GPUs)."""
    out = buffers.empty(net.shape)
    out[...] = 0.0 if fits is None or fits.all() else np.where(fits, 0.0, np.nan)
    placed = None if gpus is None else getattr(comm, "for_instance", None)
    if stage is None:
        stage = gpus
    for op in sorted({o for x in ops for o in stage_ops(x)}):
        ks = np.array([k for k, x in enumerate(ops) if op in stage_ops(x)])
        g, active = groups[ks], (counts[ks] > 0) & (groups[ks] > 1)
        # a stage that chooses its collective cell by cell: only the cells that run op
        runs = running(ops, ks, op, net.shape[1:])
        if runs is not None and fits is not None:
            runs = runs & fits
        if runs is not None:
            active = active & runs.any(axis=2)
        elif fits is not None:
            active = active & fits.any(axis=1)
        # each row's (instance, stage) where its group is smaller and comm places it, as
        # one key (instance x (gpus + 1) + stage); else 0 (any)
        inst = np.zeros(g.shape, dtype=np.int64) if placed is None else \
            np.where(g < gpus[None, :], gpus[None, :] * (gpus[None, :] + 1)
                     + stage[None, :], 0)
        for size in np.unique(g[active]):
            for n in np.unique(inst[active & (g == size)]):
                kk, rr = np.nonzero(active & (g == size) & (inst == n))
                cells = net[ks[kk], rr]
                keep = runs[kk, rr] if runs is not None else None if fits is None else fits[rr]
                sizes = cells.reshape(-1) if keep is None else cells[keep]
                who = comm if n == 0 else placed(int(gpus[rr[0]]), int(stage[rr[0]]))
                times = as_times(who.collective_time(op, sizes, int(size)), op)
                times = np.broadcast_to(times, sizes.shape)
                if times.size and not (times.min() >= 0 and times.max() < np.inf):  # NaN too
                    ok = np.isfinite(times) & (times >= 0)
                    check_time(float(times[~ok][0]), op, int(size))   # raises
                if keep is None:
                    out[ks[kk], rr] = times.reshape(len(kk), net.shape[2])
                else:   # the other cells untimed, or (runs) the other collective's
                    block = np.full(cells.shape, np.nan) if runs is None else out[ks[kk], rr]
                    block[keep] = times
                    out[ks[kk], rr] = block
    return out


#: The default options of evaluate_grid(), evaluate() and evaluate_many() (one object: a
#: plan is kept by the options object it was made with); the default SLO is
#: compute.phases.check_slo's.
_DEFAULT_OPTIONS = RooflineOptions()


def check_options(options: object) -> RooflineOptions:
    """``options``, or the default :class:`RooflineOptions` for None; anything else is
    refused by name (a float raised AttributeError deep inside).

    >>> check_options("overlap")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: options must be a compute.roofline_options.RooflineOptions (e.g. RooflineOptions(mode='overlap')) or None for the defaults, got 'overlap'
    """
    return of_type("options", options, RooflineOptions,
                   "RooflineOptions(mode='overlap')") or _DEFAULT_OPTIONS


def check_time(t: float, op: str, group: int) -> None:
    """Refuse a collective model's time ``t`` for ``op`` among ``group`` GPUs unless it is
    finite and >= 0 seconds."""
    if not (math.isfinite(t) and t >= 0):   # a UserError: the model is the caller's input
        raise UserError(f"collective model returned a negative or non-finite time for "
                        f"{op} among {group} GPUs ({t!r} s); it must give seconds >= 0 (a "
                        f"fabric gives inf where no path joins the group, as on an OCS "
                        f"whose circuits are not set up)")
