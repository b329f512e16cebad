"""The per-stage roofline model of one inference step, vectorised over configuration (TP
degree, or a :class:`~compute.parallel.Parallelism`) x batch.

Each stage's work per GPU (FLOPs, HBM bytes, collective bytes) is counted in
:mod:`compute.stages`, whose docstring lists the stages and how each is counted. Then:

* compute time = FLOPs / (peak FLOP/s of the compute dtype x ``flops_efficiency``)
* memory time  = HBM bytes / (HBM bandwidth x ``memory_efficiency``)
* network time = the collective-cost model's answer (:mod:`compute.comm`)
* stage time   = max of the three (``overlap`` mode, the Lite-GPU paper's assumption) or
  their sum (``serial`` mode); the step's time is the sum over stages.

Communication goes only through ``comm.collective_time(op, nbytes, group_size)``: once
per (operation, group size), with a numpy array of every message size of the grid.

>>> r = evaluate("Llama-3-70B", "H100-SXM", tp=8, batch=1, phase="decode")
>>> r.tp, r.batch, r.latency_name, [(s.name, s.bound) for s in r.stages][1:5]
(8, 1, 'tbt', [('qkv', 'memory'), ('attention', 'memory'), ('out_proj', 'memory'), ('allreduce_attn', 'network')])
>>> round(r.latency * 1e3, 2), {k: round(v * 1e3, 2) for k, v in r.time_split().items()}
(9.5, {'compute': 0.0, 'memory': 5.21, 'network': 4.29})
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from compute.comm import CommLike, NoCommunication, RingAlphaBeta, as_comm
from compute.errors import UserError, known
from compute.grid_parts import _static_parts
from compute.hardware import GpuSpec, catalog, get_gpu
from compute.memory import (
    DEFAULT_RESERVE,
    activation_bytes_per_token,
    check_reserve,
    describe_fit,
    kv_cache_bytes,
    weight_bytes,
)
from compute.models import COMPUTE_DTYPES, ModelSpec, get_model, model_catalog
from compute.parallel import Parallelism, check_parallelism, layout
from compute.phases import Slo, Workload
from compute.profiles import EngineProfile
from compute.results import (
    RESOURCES,
    InferenceResult,
    MemoryFit,
    StageResult,
    _defaults,
    unchecked,
)
from compute.sharding import Shards, check_tp, shards
from compute.stages import (
    EXTENDED_STAGES,
    PIPELINE_STAGES,
    PRODUCERS,
    STAGES,
    plain_step_work,
    stage_work,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["EXTENDED_STAGES", "MODES", "STAGES", "Grid", "RooflineOptions", "check_batch",
           "check_skew", "default_comm", "evaluate", "evaluate_grid", "make_workload"]

MODES = ("overlap", "serial")


@dataclass(frozen=True)
class RooflineOptions:
    """How stage times are formed.

    ``mode``: ``"overlap"`` (stage time = max of compute, memory, network) or ``"serial"``
    (their sum). ``flops_efficiency`` and ``memory_efficiency``: achievable fractions of
    peak FLOP/s and HBM bandwidth, in (0, 1] (default 1.0). ``compute_dtype``: ``"bf16"`` or
    ``"fp8"`` tensor cores; ``None`` takes the model's. ``memory_reserve``: fraction of HBM
    left to the runtime (:data:`compute.memory.DEFAULT_RESERVE`).

    ``overlap_collectives`` (``overlap`` mode only; default False): each per-layer all-reduce
    is pipelined with the GEMM that produces its input (chunked, as async tensor parallelism
    does), so only the part of it longer than that GEMM shows: the collective stage's time
    becomes ``max(0, network - producer time)``. By default the collectives are stages of
    their own and add to the step in full.

    ``profile`` (default None: the roofline): an
    :class:`~compute.profiles.EngineProfile`, the calibrated mode (GEMM and attention
    efficiencies, achievable HBM bandwidth, fixed overheads; see :mod:`compute.profiles`).
    It replaces the two efficiency factors, which must then stay 1.
    """

    mode: str = "overlap"
    flops_efficiency: float = 1.0
    memory_efficiency: float = 1.0
    compute_dtype: str | None = None
    memory_reserve: float = DEFAULT_RESERVE
    overlap_collectives: bool = False
    profile: EngineProfile | None = None

    def to_dict(self) -> dict:
        """JSON-ready settings: the fields, ``profile`` left out without one (so the
        roofline's settings read as before profiles existed) and named with one.

        >>> RooflineOptions().to_dict()["mode"], "profile" in RooflineOptions().to_dict()
        ('overlap', False)
        """
        d = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "profile"}
        if self.profile is not None:
            d["profile"] = {"name": self.profile.name, "fitted_on": self.profile.fitted_on,
                            **self.profile.values()}
        return d

    def __post_init__(self):
        if self.mode not in MODES:
            raise UserError(f"unknown mode {self.mode!r}; known: {known(MODES)}")
        for key in ("flops_efficiency", "memory_efficiency"):
            v = getattr(self, key)
            if not (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                    and 0 < v <= 1):
                raise UserError(f"{key} must be a fraction in (0, 1], got {v!r}")
        if self.compute_dtype is not None and self.compute_dtype not in COMPUTE_DTYPES:
            raise UserError(f"unknown compute dtype {self.compute_dtype!r}; "
                            f"known: {known(COMPUTE_DTYPES)}")
        check_reserve(self.memory_reserve)
        if not isinstance(self.overlap_collectives, bool):
            raise UserError(f"overlap_collectives must be true or false, got "
                            f"{self.overlap_collectives!r}")
        if self.overlap_collectives and self.mode != "overlap":
            raise UserError("overlap_collectives needs mode 'overlap' (serial mode sums every "
                            "stage's compute, memory and network time)")
        if self.profile is not None:
            if not isinstance(self.profile, EngineProfile):
                raise UserError(f"profile must be an EngineProfile (compute.profiles."
                                f"get_profile), got {type(self.profile).__name__}")
            if self.flops_efficiency != 1 or self.memory_efficiency != 1:
                raise UserError("give a profile or flops/memory efficiency factors, not both "
                                "(the profile holds the engine's efficiencies)")


def default_comm(gpu: GpuSpec) -> RingAlphaBeta:
    """The default collective-cost model: rings over the GPU's scale-up bandwidth."""
    return RingAlphaBeta(bandwidth=gpu.scaleup_bandwidth)


def check_batch(batch: object) -> int:
    """Return ``batch`` as an int if it is a whole number >= 1, else raise :class:`UserError`."""
    if isinstance(batch, float) and batch.is_integer():
        batch = int(batch)
    if not (isinstance(batch, int | np.integer) and not isinstance(batch, bool) and batch >= 1):
        raise UserError(f"batch must be a whole number of sequences >= 1, got {batch!r}")
    return int(batch)


def make_workload(phase: str | Workload, prompt: int | None = None,
                  context: int | None = None) -> Workload:
    """A :class:`Workload` from a phase name (or a Workload, returned as is) and token counts."""
    if isinstance(phase, Workload):
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


class _Rates:
    """What :class:`Grid` and :class:`Evaluations` derive from their latencies alike:
    tokens/s, tokens/s per SM, whether each point meets the SLO and is feasible."""

    tokens_per_step: np.ndarray
    latency: np.ndarray
    latency_limit: float
    gpus: np.ndarray
    gpu: GpuSpec
    fits: np.ndarray

    @property
    def tokens_per_s(self) -> np.ndarray:
        return self.tokens_per_step / self.latency

    @property
    def tokens_per_s_per_sm(self) -> np.ndarray:
        return self.tokens_per_s / (self.gpus * self.gpu.sms)

    @property
    def meets_slo(self) -> np.ndarray:
        return self.latency <= self.latency_limit

    @property
    def feasible(self) -> np.ndarray:
        return self.fits & self.meets_slo


@dataclass(frozen=True, eq=False)
class Grid(_Rates):
    """Every configuration (rows: TP degrees, or :class:`~compute.parallel.Parallelism`
    configurations) x batch (columns) evaluated at once.

    Stage arrays have shape ``(stages, nc, nb)`` and are per GPU, per occurrence; ``counts``
    and ``groups`` ``(stages, nc)``; the others ``(nc, nb)``. ``result(i, j)`` gives the
    :class:`InferenceResult` of one cell. ``stages`` names the stages: :data:`STAGES` for
    plain tensor parallelism, :data:`EXTENDED_STAGES` when a row uses another dimension.
    """

    model: ModelSpec
    gpu: GpuSpec
    workload: Workload
    options: RooflineOptions
    tps: tuple[int, ...]      #: TP degree of each row
    batches: np.ndarray
    counts: np.ndarray        #: occurrences per step of each stage, shape (stages, nc)
    ops: tuple[str, ...]      #: collective of each stage ("" for none)
    flops: np.ndarray
    hbm_bytes: np.ndarray
    net_bytes: np.ndarray
    compute_time: np.ndarray
    memory_time: np.ndarray
    network_time: np.ndarray
    stage_time: np.ndarray
    bound: np.ndarray         #: index into RESOURCES, shape (stages, nc, nb)
    latency: np.ndarray       #: step time, seconds
    weights: np.ndarray
    kv_cache: np.ndarray
    activations: np.ndarray
    usable: float
    fits: np.ndarray
    latency_limit: float
    configs: tuple = ()       #: the :class:`~compute.parallel.Parallelism` of each row
    stages: tuple[str, ...] = STAGES
    groups: np.ndarray | None = None  #: GPUs in each stage's collective, shape (stages, nc)
    micro_batches: np.ndarray | None = None  #: sequences per micro-batch, shape (nc, nb)
    expert_skew: float = 1.0
    #: with a profile: the step's fixed overheads (in ``latency``), shape (nc, nb)
    overhead: np.ndarray | None = None

    @property
    def gpus(self) -> np.ndarray:
        """GPUs of each row's instance (``tp x pp``), shape (nc, 1)."""
        return np.asarray([c.gpus for c in self.configs], dtype=float).reshape(-1, 1)

    @property
    def tokens_per_step(self) -> np.ndarray:
        """Tokens a step produces or consumes, shape (1, nb)."""
        return (self.batches * self.workload.tokens_per_sequence).reshape(1, -1).astype(float)

    def time_split(self) -> dict[str, np.ndarray]:
        """Step time split into compute, memory and network seconds, arrays ``(nc, nb)``
        that add up to ``latency`` (see :func:`compute.results.time_split`)."""
        c = self.counts[:, :, None]
        if self.options.mode == "serial":
            parts = (self.compute_time, self.memory_time, self.network_time)
            out = {r: (c * p).sum(0) for r, p in zip(RESOURCES, parts, strict=True)}
        else:
            total = c * self.stage_time
            out = {r: np.where(self.bound == k, total, 0.0).sum(0)
                   for k, r in enumerate(RESOURCES)}
        if self.overhead is not None:  # a profile's fixed overheads
            out["overhead"] = np.broadcast_to(self.overhead, self.latency.shape)
        return out

    def result(self, i: int, j: int) -> InferenceResult:
        """The configuration of row ``i`` and batch index ``j``, with its breakdown (a
        stage another dimension adds is listed where it occurs)."""
        stages = tuple(
            StageResult(name=name, count=int(self.counts[k, i]),
                        flops=float(self.flops[k, i, j]),
                        hbm_bytes=float(self.hbm_bytes[k, i, j]), collective=self.ops[k],
                        collective_bytes=float(self.net_bytes[k, i, j]),
                        compute_time=float(self.compute_time[k, i, j]),
                        memory_time=float(self.memory_time[k, i, j]),
                        network_time=float(self.network_time[k, i, j]),
                        time=float(self.stage_time[k, i, j]),
                        bound=RESOURCES[int(self.bound[k, i, j])])
            for k, name in enumerate(self.stages) if self.counts[k, i] > 0)
        par, batch = self.configs[i], int(self.batches[j])
        fit = describe_fit(self.model, self.gpu, par.tp, batch, self.weights[i, j],
                           self.kv_cache[i, j], self.activations[i, j],
                           self.options.memory_reserve, label=par.label)
        return InferenceResult(
            model=self.model.name, gpu=self.gpu.name, phase=self.workload.phase, tp=par.tp,
            batch=batch, prompt_tokens=self.workload.prompt,
            context_tokens=self.workload.context, mode=self.options.mode,
            latency=float(self.latency[i, j]),
            tokens_per_step=float(self.tokens_per_step[0, j]), sms=par.gpus * self.gpu.sms,
            stages=stages, memory=fit, latency_limit=self.latency_limit, pp=par.pp,
            ep=par.ep, attention_dp=par.attention_dp,
            micro_batch=int(self.micro_batches[i, j]) if self.micro_batches is not None
            else batch, expert_skew=self.expert_skew if par.ep > 1 else 1.0,
            **({} if self.overhead is None else
               {"overhead": float(self.overhead[i, j]), "profile": self.options.profile.name}))


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
    if not (isinstance(skew, int | float | np.floating) and not isinstance(skew, bool)
            and math.isfinite(skew) and 1 <= skew <= 1e6):
        raise UserError(f"expert_skew must be a number from 1 (uniform routing) to 1e6, got "
                        f"{skew!r}")
    return float(skew)


def evaluate_grid(model: str | ModelSpec, gpu: str | GpuSpec, tps: Iterable[int | Parallelism],
                  batches: ArrayLike, workload: Workload, *, comm: CommLike | None = None,
                  options: RooflineOptions | None = None, latency_limit: float = math.inf,
                  expert_skew: float = 1.0, time_unfit: bool = True) -> Grid:
    """Evaluate every (configuration, batch) pair at once.

    ``tps`` lists TP degrees (plain tensor parallelism) or
    :class:`~compute.parallel.Parallelism` configurations. ``comm`` implements
    ``collective_time(op, nbytes, group_size)`` (default: :func:`default_comm`); it is
    called once per (operation, group size > 1) with an array of every message size of
    the grid that needs it. ``expert_skew`` (>= 1): under expert parallelism the busiest
    GPU receives ``expert_skew`` times the mean share of routed tokens (1: uniform).

    Pipeline parallelism (``pp`` stages; see :mod:`compute.parallel`): the stage arrays
    describe one pass of a micro-batch through the layers, per GPU; stages are taken as
    balanced (each holds ``layers / pp`` layers and ``1 / pp`` of a pass's time, ``T_c``),
    and each stage boundary costs a ``send-recv`` of the micro-batch's activations
    (``T_s``, ``comm.collective_time("send-recv", bytes, 2)``), which overlaps the next
    micro-batch's work in ``overlap`` mode (period ``max(T_c, T_s)``; ``T_c + T_s`` in
    ``serial`` mode).

    * decode: the batch is cut into micro-batches of ``ceil(batch / pp)`` sequences, one per
      stage in flight; each sequence gets its next token when its micro-batch has gone
      round the pipeline: TBT = ``max(pass + (pp - 1) T_s, k period)`` for ``k`` micro-batches.
    * prefill: each prompt is a micro-batch (GPipe); the batch's TTFT is ``(batch - 1)
      period + pass + (pp - 1) T_s``: the fill and drain bubble is paid once per batch.

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
    options = options or RooflineOptions()
    skew = check_skew(expert_skew)
    comm = as_comm(comm) if comm is not None else default_comm(gpu)
    _check_context(model, workload)
    configs = _as_configs(model, tps, None)
    plain = all(c.is_plain for c in configs)
    sh = shards(model, [c.tp for c in configs]) if plain else layout(model, configs)
    tps = tuple(c.tp for c in configs)
    batches = _check_batches(batches)
    return _grid(model, gpu, configs, sh, plain, batches, batches.astype(float).reshape(1, -1),
                 workload, comm, options, skew, latency_limit, time_unfit=bool(time_unfit))


def _grid(model, gpu, configs, sh, plain: bool, batches, b, workload, comm, options, skew,
          latency_limit, paired: bool = False, time_unfit: bool = True) -> Grid:
    """The body of :func:`evaluate_grid`: ``b`` is a row of batches (every configuration x
    every batch) or, ``paired``, a column (row ``i``: configuration ``i`` at batch ``b[i]``;
    a plain row's stages then add up in the order of a one-cell grid's, so each row equals
    :func:`evaluate` of its configuration to the last bit)."""
    tps = tuple(sh.tp.ravel().astype(int).tolist()) if paired else tuple(c.tp for c in configs)
    (micro, shape, counts, names, groups, ops, works, flops, hbm, net, compute_t, memory_t,
     fit) = _static_parts(model, gpu, configs, sh, plain, b, workload, options, skew, paired)
    # an ideal network (the search's memory probe) costs nothing: not asked
    fits = None if time_unfit else np.broadcast_to(fit[4], net.shape[1:])
    if type(comm) is NoCommunication:
        network_t = np.zeros(net.shape)
        if fits is not None and not fits.all():
            network_t[:, ~fits] = np.nan  # as _network_times leaves them: untimed
    else:
        network_t = _network_times(comm, ops, groups, counts, net, fits)
    profile = options.profile
    busiest = np.maximum(compute_t, memory_t)
    if options.mode == "overlap":
        stage_t = np.maximum(busiest, network_t)
        if options.overlap_collectives:  # hide each all-reduce behind its producer GEMM
            for coll, producer in PRODUCERS.items():
                if coll in names:
                    k, p = names.index(coll), names.index(producer)
                    stage_t[k] = np.maximum(0.0, network_t[k] - stage_t[p])
    else:
        stage_t = compute_t + memory_t + network_t
    # the index of the largest of (compute, memory, network), the first on ties (argmax);
    # a collective stage is network-bound
    bound = (memory_t > compute_t).astype(np.int8)
    bound[network_t > busiest] = 2
    for k, o in enumerate(ops):
        if o and names[k] not in ("embedding", "lm_head"):
            bound[k] = 2
    c3 = counts[:, :, None]
    if plain and paired:
        latency = _pairwise_sum([c3[k] * stage_t[k] for k in range(len(names))])
    elif plain:
        latency = (c3 * stage_t).sum(axis=0)
    else:  # the same sum, stage after stage (bit for bit where rows are plain)
        passes = [k for k, nm in enumerate(names) if nm not in PIPELINE_STAGES]
        latency = c3[passes[0]] * stage_t[passes[0]]
        for k in passes[1:]:
            latency = latency + c3[k] * stage_t[k]
        if np.any(sh.pp > 1):
            latency = _pipeline(latency, sh.pp, b, micro, stage_t, bound, c3, names, options,
                                workload, (compute_t, memory_t, network_t))
    overhead = None
    if profile is not None:  # fixed overheads, once per step
        overhead = np.broadcast_to(profile.overhead(model.layers, b, workload.phase,
                                                    workload.tokens_per_sequence,
                                                    model.hidden), latency.shape)
        latency = latency + overhead
    w, kv, act, usable, fits = fit
    return Grid(model=model, gpu=gpu, workload=workload, options=options, tps=tps,
                batches=batches, counts=counts, ops=ops, flops=flops, hbm_bytes=hbm,
                net_bytes=net, compute_time=compute_t, memory_time=memory_t,
                network_time=network_t, stage_time=stage_t, bound=bound, latency=latency,
                weights=np.broadcast_to(w, shape), kv_cache=np.broadcast_to(kv, shape),
                activations=np.broadcast_to(act, shape), usable=usable, fits=fits,
                latency_limit=float(latency_limit), configs=configs, stages=names,
                groups=groups, micro_batches=np.broadcast_to(micro, shape).astype(np.int64),
                expert_skew=skew, overhead=overhead)



def _check_context(model, workload: Workload) -> None:
    """Refuse a prompt or context longer than the model's ``max_context``."""
    if model.max_context and workload.kv_tokens > model.max_context:
        what = "prompt" if workload.phase == "prefill" else "context"
        raise UserError(f"{workload.phase} with a {what} of {workload.kv_tokens} tokens exceeds "
                        f"{model.name}'s max_context of {model.max_context} tokens; use a "
                        f"shorter {what}, or a model file with a larger max_context")


def _pipeline(pass_t, pp, b, micro, stage_t, bound, c3, names, options, workload, parts):
    """Latency of the pipelined rows (see :func:`evaluate_grid`); fills the
    ``pipeline_wait`` stage (in place) with what the latency adds to the micro-batch's own
    pass (the other micro-batches' work on the same stages), charged to the resource
    busiest over the pass."""
    ks, kw = names.index("pp_send"), names.index("pipeline_wait")
    rows = np.flatnonzero(pp.ravel() > 1)         # only the pipelined rows change
    p = pp[rows]
    if b.shape[0] > 1:                            # a batch per row (evaluate_many)
        b = b[rows]
    mine = pass_t[rows]
    send = stage_t[ks, rows]
    stage = mine / p
    period = np.maximum(stage, send) if options.mode == "overlap" else stage + send
    own = mine + (p - 1) * send                  # a micro-batch through every stage
    if workload.phase == "decode":
        k = np.ceil(b / micro[rows] if micro.shape[0] > 1 else b / micro)  # in flight
        piped = np.maximum(own, k * period)
    else:
        piped = (b - 1) * period + own
    latency = pass_t.copy()
    latency[rows] = piped
    wait = np.maximum(piped - own, 0.0)
    n = len(names) - len(PIPELINE_STAGES)             # the pipeline's stages come last
    assert names[n:] == PIPELINE_STAGES
    busy = np.stack([np.einsum("kc,kcb->cb", c3[:n, :, 0], part[:n])[rows]
                     for part in parts])         # each resource's busy time over the pass
    dominant = np.argmax(busy, axis=0).astype(np.int8)
    stage_t[kw, rows] = wait
    bound[kw, rows] = dominant
    for r, part in enumerate(parts):
        part[kw, rows] = np.where(dominant == r, wait, 0.0)
    return latency


def _check_batches(batches) -> np.ndarray:
    """``batches`` as a 1-D int64 array if every entry is a whole number >= 1 (a batch of
    2.9 sequences is refused, not truncated to 2), else raise :class:`UserError`."""
    raw = np.asarray(batches).reshape(-1)
    if raw.size == 0:
        raise UserError("batches is empty; give whole numbers >= 1")
    if raw.dtype == bool or raw.dtype.kind not in "iuf":
        raise UserError(f"batches must be whole numbers >= 1, got {batches!r}")
    bad = ~np.isfinite(raw) | (raw < 1) | (raw != np.floor(raw))
    if bad.any():
        raise UserError(f"batches must be whole numbers >= 1, got {float(raw[bad][0]):g}")
    return raw.astype(np.int64)


def _network_times(comm, ops, groups, counts, net, fits=None) -> np.ndarray:
    """Collective times, calling ``comm`` once per (op, group size > 1) with every size of
    the stages and rows that run that collective in groups of that size; with ``fits``
    (configurations x batches), only the cells that fit are timed and the others are NaN
    (a group size no fitting cell uses is never asked)."""
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
                _check_time(float(times[~ok][0]), op, int(size))   # raises
            if keep is None:
                out[ks[kk], rr] = times.reshape(len(kk), net.shape[2])
            else:
                block = np.full(cells.shape, np.nan)
                block[keep] = times
                out[ks[kk], rr] = block
    return out


def evaluate(model: str | ModelSpec, gpu: str | GpuSpec, tp: int, batch: int,
             phase: str | Workload = "decode", *, pp: int = 1, ep: int = 1,
             attention_dp: int = 1, expert_skew: float = 1.0, prompt: int | None = None,
             context: int | None = None, comm: CommLike | None = None,
             options: RooflineOptions | None = None, slo: Slo | None = None) -> InferenceResult:
    """The per-stage breakdown of one configuration.

    ``phase`` is ``"prefill"``, ``"decode"`` or a :class:`Workload`; ``prompt`` and
    ``context`` override the defaults (1500 and 1513 tokens). ``pp``, ``ep`` and
    ``attention_dp`` add pipeline, expert and attention data parallelism to the TP degree
    (:mod:`compute.parallel`). The result carries the SLO verdict against ``slo`` (default
    TTFT <= 1 s, TBT <= 50 ms) and the memory fit.

    Plain tensor parallelism without a profile runs a scalar path (plain floats, what
    depends only on the model, GPU, workload, options and TP degree computed once and
    kept): the same operations in the same order as a one-cell :func:`evaluate_grid`, so
    the same numbers to the last bit; the other configurations run that one-cell grid.
    That path computes the stage times it needs for the latency and builds the per-stage
    breakdown (``stages``), and the memory fit of a batch that does not fit (with its
    reason), when the result's field is first read.
    """
    plan = None
    if pp == ep == attention_dp == 1 and type(tp) is int and type(model) is str \
            and type(gpu) is str and type(phase) is str \
            and (prompt is None or type(prompt) is int) \
            and (context is None or type(context) is int):   # catalog names: one look-up
        plan = _NAMED.get((model, gpu, phase, prompt, context, id(options), tp))
        if plan is not None and options is not None and plan.options is not options:
            plan = None
    if plan is not None:
        workload = plan.workload
    else:
        names = model, gpu, phase, prompt, context, id(options)
        model, gpu = get_model(model), get_gpu(gpu)
        workload = make_workload(phase, prompt, context)
        options = options or _DEFAULT_OPTIONS
        if pp == ep == attention_dp == 1 and options.profile is None:
            plan = _plan(model, gpu, workload, options, tp)
            _keep_named(names, plan)
    if plan is not None:
        # the common valid values pass straight; the checks give the others' errors
        if not (type(batch) is int and batch >= 1):
            batch = check_batch(batch)
        if not (type(expert_skew) is float and 1.0 <= expert_skew <= 1e6):
            expert_skew = check_skew(expert_skew)
        limit = plan.limit if slo is None else float(slo.limit(workload.phase))
        return _evaluate_plain(plan, batch, comm, limit)
    limit = (slo or _DEFAULT_SLO).limit(workload.phase)
    if pp == ep == attention_dp == 1:
        tp = check_tp(model, tp, gpu.max_instance)
    par = check_parallelism(model, Parallelism(tp, pp, ep, attention_dp), gpu.max_instance)
    batch = check_batch(batch)
    grid = evaluate_grid(model, gpu, [par], [batch], workload, comm=comm, options=options,
                         latency_limit=limit, expert_skew=expert_skew)
    return grid.result(0, 0)


_DEFAULT_SLO = Slo()
_DEFAULT_OPTIONS = RooflineOptions()


@dataclass(frozen=True, eq=False)
class _Plan:
    """What a plain-TP evaluation of one (model, GPU, workload, options, TP degree) needs
    that does not depend on the batch, the skew or the collective model."""

    model: ModelSpec
    gpu: GpuSpec
    workload: Workload
    options: RooflineOptions
    par: Parallelism
    sh: Shards                 #: :class:`~compute.sharding.Shards` of floats
    peak: float
    bandwidth: float
    weights: float
    kv_per_token: float        #: KV-cache bytes per GPU per sequence and KV token
    act_per_token: float       #: activation bytes per GPU per token (without the logits)
    usable: float
    #: per stage: (name, count, count as float, kind), kind 0 for a compute stage, 1 for
    #: one with work and a collective (embedding, LM head), 2 for a collective alone
    meta: tuple
    counts: tuple              #: each stage's count as a float
    ops: tuple                 #: each stage's collective ("" for none)
    #: a float batch -> (flops, hbm bytes, collective bytes) per stage, as
    #: :func:`~compute.stages.stage_work` gives them (:func:`_step_work`)
    work: object
    #: the collectives to ask for, ops sorted as the grid asks them: (op, stage indices)
    colls: tuple
    #: the same with the GPU's default ring: (stage index, fixed, share, beta) of
    #: :meth:`~compute.comm.RingAlphaBeta.terms`
    ring: tuple
    #: (collective stage, producer stage) indices whose collective hides behind the
    #: producer (``overlap_collectives``), else empty
    hidden: tuple
    overlap: bool              #: overlap mode (else serial)
    #: why no batch fits when the weights alone exceed the usable HBM, else ""
    heavy: str
    limit: float               #: the default SLO's latency limit of the phase
    tokens: int                #: tokens per sequence of the workload
    kv_tokens: int             #: KV entries per sequence of the workload
    base: dict                 #: the result's fields that do not depend on the batch


#: Plans by (id(model), id(gpu), workload, id(options), tp); each holds its objects, so
#: an id is not reused while its entry lives.
_PLANS: dict = {}
_PLANS_MAX = 4096


def _plan(model, gpu, workload, options, tp) -> _Plan:
    if type(tp) is not int:  # 8.0 is 8; True and 8.5 are refused
        tp = check_tp(model, tp, gpu.max_instance)
    key = (id(model), id(gpu), workload, id(options), tp)
    plan = _PLANS.get(key)
    if plan is not None and plan.model is model and plan.gpu is gpu \
            and plan.options is options:
        return plan
    tp = check_tp(model, tp, gpu.max_instance)
    _check_context(model, workload)
    sh = shards(model, [tp])
    sh = Shards(**{f: float(getattr(sh, f)[0, 0]) for f in _SHARD_FIELDS})
    dtype = options.compute_dtype or model.compute_dtype
    kv = kv_cache_bytes(model, sh, 1.0, Workload(workload.phase, 1, 1))
    work = stage_work(model, sh, 1.0, workload)
    meta, colls = _layout(tp, work)
    comm = default_comm(gpu)
    names = [m[0] for m in meta]
    overlap = options.mode == "overlap"
    par = Parallelism(tp)
    weights = float(weight_bytes(model, sh))
    usable = gpu.hbm_capacity * (1.0 - check_reserve(options.memory_reserve))
    plan = _Plan(model=model, gpu=gpu, workload=workload, options=options,
                 par=par, sh=sh,
                 peak=gpu.peak_flops(dtype) * options.flops_efficiency,
                 bandwidth=gpu.hbm_bandwidth * options.memory_efficiency,
                 weights=weights, kv_per_token=kv,
                 act_per_token=float(activation_bytes_per_token(model, sh)),
                 usable=usable, meta=meta, colls=colls,
                 counts=tuple(m[2] for m in meta), ops=tuple(x[4] for x in work),
                 work=_step_work(model, sh, workload),
                 ring=tuple((k, *comm.terms(op, tp)) for op, ks in colls for k in ks),
                 hidden=tuple((names.index(c), names.index(p)) for c, p in PRODUCERS.items())
                 if overlap and options.overlap_collectives else (),
                 overlap=overlap, limit=float(_DEFAULT_SLO.limit(workload.phase)),
                 tokens=workload.tokens_per_sequence, kv_tokens=workload.kv_tokens,
                 heavy="" if weights <= usable else
                 describe_fit(model, gpu, tp, 1, weights, 0.0, 0.0, options.memory_reserve,
                              label=par.label).reason,
                 base={**_defaults(InferenceResult), "model": model.name, "gpu": gpu.name,
                       "phase": workload.phase, "tp": tp, "prompt_tokens": workload.prompt,
                       "context_tokens": workload.context, "mode": options.mode,
                       "sms": par.gpus * gpu.sms})
    if len(meta) != len(STAGES):   # _evaluate_plain adds the stages' times as 9 terms
        raise AssertionError("a plain-TP step has the stages of STAGES")
    if len(_PLANS) >= _PLANS_MAX:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def _step_work(model, sh, workload):
    """A float batch -> (flops, hbm bytes, collective bytes), a list per stage, of a plain-TP
    step: :func:`~compute.stages.plain_step_work` where it covers the model, else
    :func:`~compute.stages.stage_work`'s figures (the same numbers)."""
    fast = plain_step_work(model, sh, workload)
    if fast is not None:
        return fast

    def work(b: float) -> tuple:
        xs = stage_work(model, sh, b, workload)
        return [x[2] for x in xs], [x[3] for x in xs], [x[5] for x in xs]

    return work


#: Plans by the names :func:`evaluate` was given: (model, GPU, phase, prompt, context,
#: id(options), TP degree), only for a model and a GPU of the catalogs (a path is read
#: each time, as :func:`~compute.models.get_model` reads it) and an int TP degree.
_NAMED: dict = {}


def _keep_named(names: tuple, plan: _Plan) -> None:
    model, gpu = names[:2]
    if type(model) is str and type(gpu) is str and type(names[2]) is str \
            and model_catalog().get(model) is plan.model and catalog().get(gpu) is plan.gpu \
            and all(x is None or type(x) is int for x in names[3:5]):
        if len(_NAMED) >= _PLANS_MAX:
            _NAMED.clear()
        _NAMED[(*names, plan.par.tp)] = plan


#: The fields of a plain-TP :class:`~compute.sharding.Shards`.
_SHARD_FIELDS = ("tp", "heads", "kv_heads", "ffn", "vocab", "shared_ffn", "dense_ffn")
_COLLECTIVE_STAGES = ("embedding", "lm_head")   # stages with work and a collective
_COMPUTE, _MEMORY, _NETWORK = RESOURCES


def _pairwise_sum(xs: list) -> float:
    """``xs`` summed in the order numpy's ``add.reduce`` sums a contiguous run of fewer
    than 129 numbers (8 running sums combined pairwise, then the rest one by one), so
    that the scalar path adds a step's stages exactly as the one-cell grid does.

    >>> import numpy as np
    >>> xs = [0.1 * 3 ** k for k in range(9)]
    >>> _pairwise_sum(xs) == float(np.array(xs).reshape(9, 1, 1).sum(axis=0)[0, 0])
    True
    """
    n = len(xs)
    if n < 8:
        total = xs[0] if n else 0.0
        for x in xs[1:]:
            total = total + x
        return total
    if n < 16:   # the 8 running sums are the first 8 numbers
        total = ((xs[0] + xs[1]) + (xs[2] + xs[3])) + ((xs[4] + xs[5]) + (xs[6] + xs[7]))
        for i in range(8, n):
            total = total + xs[i]
        return total
    if n > 128:
        raise ValueError("pairwise sums of more than 128 numbers are not emulated")
    r = xs[:8]
    i = 8
    while i + 8 <= n:
        for j in range(8):
            r[j] = r[j] + xs[i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for x in xs[i:]:
        total = total + x
    return total


def _scalar_times(comm, op: str, sizes: list, group: int) -> list:
    """Collective times of ``sizes`` among ``group`` GPUs, in one call with an array as
    the grid makes (plain floats straight through the default ring's formula)."""
    if type(comm) is RingAlphaBeta:
        times = [float(comm.time(op, n, group)) for n in sizes]
    else:
        t = np.asarray(comm.collective_time(op, np.array(sizes, dtype=float), group),
                       dtype=float)
        times = np.broadcast_to(t, (len(sizes),)).tolist()
    for t in times:
        _check_time(t, op, group)
    return times


def _check_time(t: float, op: str, group: int) -> None:
    if not (math.isfinite(t) and t >= 0):
        raise ValueError(f"collective model returned a negative or non-finite time for "
                         f"{op} among {group} GPUs")


def _layout(tp: int, work) -> tuple:
    """Per stage: (name, count, count as float, kind) with kind 0 for a compute stage, 1
    for one with work and a collective (embedding, LM head), 2 for a collective alone; and
    the collectives to ask for: (op, stage indices), ops sorted as the grid asks."""
    stages = tuple((x[0], x[1], float(x[1]),
                    0 if not x[4] else 1 if x[0] in _COLLECTIVE_STAGES else 2) for x in work)
    colls = tuple((op, tuple(k for k, x in enumerate(work) if x[4] == op and x[6] > 1))
                  for op in sorted({x[4] for x in work if x[4]})) if tp > 1 else ()
    return stages, tuple(c for c in colls if c[1])


def _evaluate_plain(plan: _Plan, batch: int, comm, limit: float) -> InferenceResult:
    """One plain-TP configuration and batch with plain floats: the operations of
    :func:`evaluate_grid` on a one-cell grid, in the same order. Only the stage times are
    formed here; the result builds its ``stages`` from them when first read
    (:func:`_stage_results`), and its ``memory`` too where it says why it does not fit."""
    b = float(batch)
    flops, hbm, coll = plan.work(b)
    net = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    if comm is None:   # the GPU's default ring: its formula, with the terms of the plan
        for k, fixed, share, beta in plan.ring:
            t = fixed + share * coll[k] * beta
            if not 0.0 <= t < math.inf:
                _check_time(t, plan.ops[k], plan.par.tp)
            net[k] = t
    else:
        comm = as_comm(comm)
        for op, ks in plan.colls:
            for k, t in zip(ks, _scalar_times(comm, op, [coll[k] for k in ks],
                                              plan.par.tp), strict=True):
                net[k] = t
    # a collective stage's FLOPs and HBM bytes are 0.0: its compute and memory times too
    peak, bandwidth = plan.peak, plan.bandwidth
    if plan.overlap:
        times = []
        for f, m, nt in zip(flops, hbm, net, strict=False):   # 9 each
            ct, mt = f / peak, m / bandwidth
            busiest = mt if mt > ct else ct
            times.append(nt if nt > busiest else busiest)
        for k, p in plan.hidden:  # hide each all-reduce behind its producer
            d = net[k] - times[p]
            times[k] = d if d > 0.0 else 0.0
    else:
        times = [f / peak + m / bandwidth + nt for f, m, nt in
                 zip(flops, hbm, net, strict=False)]
    # the 9 stages' terms added as numpy adds them (_pairwise_sum)
    c0, c1, c2, c3, c4, c5, c6, c7, c8 = plan.counts
    t0, t1, t2, t3, t4, t5, t6, t7, t8 = times
    latency = (((c0 * t0 + c1 * t1) + (c2 * t2 + c3 * t3))
               + ((c4 * t4 + c5 * t5) + (c6 * t6 + c7 * t7))) + c8 * t8
    kv = plan.kv_per_token * b * plan.kv_tokens
    act = b * plan.tokens * plan.act_per_token + b * plan.sh.vocab * 4.0
    weights = plan.weights
    fields = plan.base.copy()   # every field with a default is there (unchecked's check)
    fields["batch"] = fields["micro_batch"] = batch
    fields["latency"] = latency
    fields["tokens_per_step"] = float(batch * plan.tokens)
    fields["latency_limit"] = limit
    # (builder, *arguments) of a field built when first read (InferenceResult)
    fields["_lazy_stages"] = (_stage_results, plan, flops, hbm, coll, net, times)
    if weights + kv + act <= plan.usable or plan.heavy:
        fields["memory"] = unchecked(MemoryFit, {
            "weights": weights, "kv_cache": kv, "activations": act,
            "capacity": plan.gpu.hbm_capacity, "reserve_fraction": plan.options.memory_reserve,
            "reason": plan.heavy})
    else:   # what does not fit at this batch, said when first read
        fields["_lazy_memory"] = (describe_fit, plan.model, plan.gpu, plan.par.tp, batch,
                                  weights, kv, act, plan.options.memory_reserve,
                                  plan.par.label)
    result = _new(InferenceResult)
    _set(result, "__dict__", fields)
    return result


_new, _set = object.__new__, object.__setattr__


def _stage_results(plan: _Plan, flops_: list, hbm_: list, coll: list, net: list,
                   times: list) -> tuple:
    """The :class:`StageResult` of each stage of :func:`_evaluate_plain`'s step: FLOPs,
    HBM and collective bytes from :attr:`_Plan.work`, ``net`` the collective times and
    ``times`` the stage times it formed, the other figures formed again as it formed them."""
    peak, bandwidth = plan.peak, plan.bandwidth
    stages = []
    for (name, count, _, kind), op, f, m, c, nt, st in zip(
            plan.meta, plan.ops, flops_, hbm_, coll, net, times, strict=True):
        if kind < 2:
            flops, hbm = float(f), float(m)
            ct, mt = flops / peak, hbm / bandwidth
        else:
            flops = hbm = ct = mt = 0.0
        busiest = mt if mt > ct else ct
        stages.append(unchecked(StageResult, {
            "name": name, "count": count, "flops": flops, "hbm_bytes": hbm,
            "collective": op, "collective_bytes": float(c) if kind else 0.0,
            "compute_time": ct, "memory_time": mt, "network_time": nt, "time": st,
            "bound": _NETWORK if kind == 2 or nt > busiest else
            _MEMORY if mt > ct else _COMPUTE}))
    return tuple(stages)
