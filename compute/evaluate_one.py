"""One configuration's per-stage breakdown (:func:`evaluate`), with the numbers of a
one-cell grid to the last bit.

Plain tensor parallelism without a profile runs a scalar path: plain floats, with what
depends only on the model, GPU, workload, options and TP degree formed once and kept
(:class:`_Plan`), and the operations of :func:`compute.roofline.evaluate_grid` on a
one-cell grid in the same order. The other configurations run that one-cell grid.

>>> r = evaluate("Llama-3-70B", "H100-SXM", tp=8, batch=1, phase="decode")
>>> r.tp, r.batch, r.latency_name, [(s.name, s.bound) for s in r.stages][1:5]
(8, 1, 'tbt', [('qkv', 'memory'), ('attention', 'memory'), ('out_proj', 'memory'), ('allreduce_attn', 'network')])
>>> round(r.latency * 1e3, 2), {k: round(v * 1e3, 2) for k, v in r.time_split().items()}
(5.31, {'compute': 0.0, 'memory': 5.21, 'network': 0.1})
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from compute.comm import (
    CommLike,
    RingAlphaBeta,
    ScaleUpLowerBound,
    as_comm,
    as_times,
    least_time,
)
from compute.errors import UserError
from compute.hardware import GpuSpec, catalog, get_gpu
from compute.memo import Memo
from compute.memory import (
    activation_bytes_per_token,
    describe_fit,
    kv_cache_bytes,
    weight_bytes,
)
from compute.models import ModelSpec, get_model, model_catalog
from compute.parallel import Parallelism, check_parallelism
from compute.phases import Slo, Workload, check_slo
from compute.results import (
    RESOURCES,
    InferenceResult,
    MemoryFit,
    StageResult,
    field_defaults,
    unchecked,
)
from compute.roofline import (
    MAX_BATCH,
    check_batch,
    check_context,
    check_options,
    check_skew,
    check_time,
    default_comm,
    evaluate_grid,
    make_workload,
)
from compute.roofline_options import RooflineOptions, check_reserve
from compute.sharding import Shards, check_tp, shards
from compute.stage_peaks import stage_peaks
from compute.stages import PRODUCERS, STAGES, plain_step_work, stage_work
from compute.validate import is_whole

__all__ = ["check_skew_read", "evaluate"]


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

    ``expert_skew`` other than 1 is refused where nothing reads it (:func:`check_skew_read`:
    a dense model, or ``ep`` 1), as ``netmodel infer`` refuses ``--expert-skew`` there: one
    configuration asked for by name should not return the uniform-routing numbers under
    a skew the caller believes was costed. A grid or a search (:func:`evaluate_grid`,
    :func:`~compute.search.search`) applies one skew to every configuration it holds,
    costed where ``ep > 1`` and recorded as 1 elsewhere.

    Examples
    --------
    >>> evaluate("Llama-3-70B", "H100-SXM", 8, 8, expert_skew=2.0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: expert_skew 2 weighs the busiest expert-parallel group's routed tokens; Llama-3-70B is dense (no routed experts): leave expert_skew at 1
    """
    plan = None
    # plain TP: degrees equal to 1 that are not True (a bool is no degree: the check says so)
    plain = all(is_whole(d) and not isinstance(d, bool) and d == 1
                for d in (pp, ep, attention_dp))   # an array of degrees is checked later
    if plain and type(tp) is int and type(model) is str \
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
        options = check_options(options)
        if plain and options.profile is None and not options.two_batch_overlap \
                and not options.mtp_tokens:
            plan = _plan(model, gpu, workload, options, tp)
            _keep_named(names, plan)
    if plan is not None:
        # the common valid values pass straight; the checks give the others' errors
        if not (type(batch) is int and 1 <= batch <= MAX_BATCH):
            batch = check_batch(batch)
        if not (type(expert_skew) is float and 1.0 <= expert_skew <= 1e6):
            expert_skew = check_skew(expert_skew)
        if expert_skew != 1.0:   # plain TP: EP 1
            check_skew_read(expert_skew, plan.model, 1)
        limit = plan.limit if slo is None else float(check_slo(slo).limit(workload.phase))
        return _evaluate_plain(plan, batch, comm, limit)
    limit = check_slo(slo).limit(workload.phase)
    if plain:
        tp = check_tp(model, tp, gpu.max_instance)
    par = check_parallelism(model, Parallelism(tp, pp, ep, attention_dp), gpu.max_instance)
    batch = check_batch(batch)
    check_skew_read(check_skew(expert_skew), model, par.ep)
    grid = evaluate_grid(model, gpu, [par], [batch], workload, comm=comm, options=options,
                         latency_limit=limit, expert_skew=expert_skew)
    return grid.result(0, 0)


def check_skew_read(skew: float, model: ModelSpec, ep: int) -> None:
    """Refuse an expert skew ``skew`` (already :func:`~compute.roofline.check_skew`'d)
    other than 1 that no stage would read: ``model`` dense (no routed experts) or ``ep`` 1
    (one EP group takes every routed token, so the grid costs the skew at 1), as
    ``netmodel infer`` refuses ``--expert-skew`` there.

    >>> from compute.models import get_model
    >>> check_skew_read(2.0, get_model("Mixtral-8x7B"), 1)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: expert_skew 2 weighs the busiest of the expert-parallel groups; with ep 1 there is one group, costed at 1: give ep > 1, or leave expert_skew at 1
    """
    if skew == 1:
        return
    if getattr(model, "experts", 0) <= 1:
        raise UserError(f"expert_skew {skew:g} weighs the busiest expert-parallel group's "
                        f"routed tokens; {model.name} is dense (no routed experts): leave "
                        f"expert_skew at 1")
    if ep == 1:
        raise UserError(f"expert_skew {skew:g} weighs the busiest of the expert-parallel "
                        f"groups; with ep 1 there is one group, costed at 1: give ep > 1, "
                        f"or leave expert_skew at 1")


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
    peaks: tuple               #: each stage's peak FLOP/s times the flops efficiency
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
    #: the same with the GPU's default model (:func:`~compute.roofline.default_comm`, the
    #: bound): (stage index, pairs, beta) of :meth:`~compute.comm.ScaleUpLowerBound.terms`,
    #: each pair (fixed, share)
    ring: tuple
    #: (collective stage, producer stage) indices whose collective hides behind the
    #: producer (``overlap_collectives``), else empty
    hidden: tuple
    overlap: bool              #: overlap mode (else serial)
    #: why no batch fits when the weights alone exceed the usable HBM, else ""
    heavy: str
    limit: float               #: the default SLO's latency limit of the phase
    tokens: int                #: tokens per sequence of the workload
    kv_tokens: float           #: KV entries per sequence and layer the cache holds
    base: dict                 #: the result's fields that do not depend on the batch


#: Plans by (id(model), id(gpu), workload, id(options), tp); each holds its objects, so
#: an id is not reused while its entry lives.
_PLANS = Memo(4096)


def _plan(model, gpu, workload, options, tp) -> _Plan:
    if type(tp) is not int:  # 8.0 is 8; True and 8.5 are refused
        tp = check_tp(model, tp, gpu.max_instance)
    key = (id(model), id(gpu), workload, id(options), tp)
    plan = _PLANS.get(key)
    if plan is not None and plan.model is model and plan.gpu is gpu \
            and plan.options is options:
        return plan
    tp = check_tp(model, tp, gpu.max_instance)
    check_context(model, workload)
    sh = shards(model, [tp])
    sh = Shards(**{f: float(getattr(sh, f)[0, 0]) for f in _SHARD_FIELDS})
    kv = kv_cache_bytes(model, sh, 1.0, Workload(workload.phase, 1, 1))
    work = stage_work(model, sh, 1.0, workload)
    meta, colls = _layout(tp, work)
    comm = default_comm(gpu, options)   # the bound: a plan is never profiled
    names = [m[0] for m in meta]
    overlap = options.mode == "overlap"
    par = Parallelism(tp)
    weights = float(weight_bytes(model, sh))
    usable = gpu.hbm_capacity * (1.0 - check_reserve(options.memory_reserve))
    plan = _Plan(model=model, gpu=gpu, workload=workload, options=options,
                 par=par, sh=sh,
                 peaks=tuple(p * options.flops_efficiency for p in
                             stage_peaks(model, gpu, names, options.compute_dtype,
                                         workload)),
                 bandwidth=gpu.hbm_bandwidth * options.memory_efficiency,
                 weights=weights, kv_per_token=kv,
                 act_per_token=float(activation_bytes_per_token(model, sh)),
                 usable=usable, meta=meta, colls=colls,
                 counts=tuple(m[2] for m in meta), ops=tuple(x[4] for x in work),
                 work=_step_work(model, sh, workload),
                 ring=tuple((k, *comm.terms(op, tp)) for op, ks in colls for k in ks),
                 hidden=tuple((names.index(c), names.index(p)) for c, p in PRODUCERS.items())
                 if overlap and options.overlap_collectives else (),
                 overlap=overlap, limit=float(check_slo(None).limit(workload.phase)),
                 tokens=workload.tokens_per_sequence,
                 kv_tokens=model.kv_tokens_in_step(workload),
                 heavy="" if weights <= usable else
                 describe_fit(model, gpu, tp, 1, weights, 0.0, 0.0, options.memory_reserve,
                              label=par.label).reason,
                 base={**field_defaults(InferenceResult), "model": model.name, "gpu": gpu.name,
                       "phase": workload.phase, "tp": tp, "prompt_tokens": workload.prompt,
                       "context_tokens": workload.context, "mode": options.mode,
                       "overlap_collectives": options.overlap_collectives,
                       "sms": par.gpus * gpu.sms})
    if len(meta) != len(STAGES):   # _evaluate_plain adds the stages' times as 9 terms
        raise AssertionError("a plain-TP step has the stages of STAGES")
    return _PLANS.put(key, plan)


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
_NAMED = Memo(_PLANS.limit)


def _keep_named(names: tuple, plan: _Plan) -> None:
    model, gpu = names[:2]
    if type(model) is str and type(gpu) is str and type(names[2]) is str \
            and model_catalog().get(model) is plan.model and catalog().get(gpu) is plan.gpu \
            and all(x is None or type(x) is int for x in names[3:5]):
        _NAMED.put((*names, plan.par.tp), plan)


#: The fields of a plain-TP :class:`~compute.sharding.Shards`.
_SHARD_FIELDS = ("tp", "heads", "kv_heads", "ffn", "vocab", "shared_ffn", "dense_ffn")
_COLLECTIVE_STAGES = ("embedding", "lm_head")   # stages with work and a collective
_COMPUTE, _MEMORY, _NETWORK = RESOURCES


def _scalar_times(comm, op: str, sizes: list, group: int) -> list:
    """Collective times of ``sizes`` among ``group`` GPUs, in one call with an array as
    the grid makes (plain floats straight through the formula of the ring,
    :class:`~compute.comm.RingAlphaBeta`, or of the bound,
    :class:`~compute.comm.ScaleUpLowerBound`)."""
    if type(comm) is RingAlphaBeta or type(comm) is ScaleUpLowerBound:
        times = [float(comm.time(op, n, group)) for n in sizes]
    else:
        t = as_times(comm.collective_time(op, np.array(sizes, dtype=float), group), op)
        times = np.broadcast_to(t, (len(sizes),)).tolist()
    for t in times:
        check_time(t, op, group)
    return times


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
    if comm is None:   # the GPU's default model: its formula, with the terms of the plan
        for k, pairs, beta in plan.ring:
            t = least_time(pairs, coll[k], beta)
            if not 0.0 <= t < math.inf:
                check_time(t, plan.ops[k], plan.par.tp)
            net[k] = t
    else:
        comm = as_comm(comm)
        for op, ks in plan.colls:
            for k, t in zip(ks, _scalar_times(comm, op, [coll[k] for k in ks],
                                              plan.par.tp), strict=True):
                net[k] = t
    # a collective stage's FLOPs and HBM bytes are 0.0: its compute and memory times too
    bandwidth = plan.bandwidth
    if plan.overlap:
        times = []
        for f, m, nt, peak in zip(flops, hbm, net, plan.peaks, strict=False):   # 9 each
            ct, mt = f / peak, m / bandwidth
            busiest = mt if mt > ct else ct
            times.append(nt if nt > busiest else busiest)
        for k, p in plan.hidden:  # hide each all-reduce behind its producer
            d = net[k] - times[p]
            times[k] = d if d > 0.0 else 0.0
    else:
        times = [f / peak + m / bandwidth + nt for f, m, nt, peak in
                 zip(flops, hbm, net, plan.peaks, strict=False)]
    # the 9 stages' terms added one after another, as every grid adds them
    # (compute.roofline.stage_sum)
    c0, c1, c2, c3, c4, c5, c6, c7, c8 = plan.counts
    t0, t1, t2, t3, t4, t5, t6, t7, t8 = times
    latency = ((((((((c0 * t0 + c1 * t1) + c2 * t2) + c3 * t3) + c4 * t4) + c5 * t5)
                 + c6 * t6) + c7 * t7) + c8 * t8)
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
    ``times`` the stage times it formed, the other figures formed again as it formed them;
    a stage that does not run (a collective among one GPU) is not listed, as
    :meth:`~compute.roofline.Grid.result` lists only the stages that occur."""
    bandwidth = plan.bandwidth
    stages = []
    for (name, count, _, kind), op, f, m, c, nt, st, peak in zip(
            plan.meta, plan.ops, flops_, hbm_, coll, net, times, plan.peaks, strict=True):
        if not count:
            continue
        if kind < 2:
            flops, hbm = float(f), float(m)
            ct, mt = flops / peak, hbm / bandwidth
        else:
            flops = hbm = ct = mt = 0.0
        busiest = mt if mt > ct else ct
        stages.append(unchecked(StageResult, {
            "name": name, "count": count, "flops": flops, "hbm_bytes": hbm,
            "collective": op if plan.par.tp > 1 else "",   # none among one GPU
            "collective_bytes": float(c) if kind else 0.0,
            "compute_time": ct, "memory_time": mt, "network_time": nt, "time": st,
            "bound": _NETWORK if kind == 2 or nt > busiest else
            _MEMORY if mt > ct else _COMPUTE}))
    return tuple(stages)
