"""SGLang's DP-attention gather (:mod:`compute.moe_dp_gather`) on a grid's rows, formed from
the all-to-all grid's own stage times instead of a grid of those rows evaluated again
(:func:`compute.moe_exchange.cheaper_exchange`).

Under that exchange an EP layer's rows differ from the all-to-alls' in six stages only
(:data:`DP_STAGES`): the four slots hold the dense layers' collectives
(:func:`compute.moe_dp_gather.dp_gather_slots`) and ``mlp_up`` and ``mlp_down`` run the
router on every token and the shared experts split over ``tp``
(:func:`compute.stage_mlp._mlp_work_ep`, ``replicated``); the weights hold the shared
experts split, so the memory fit differs too. Every other stage's work, collective and
time is the all-to-all grid's, and the four slots' are the dense layers' ``allreduce_attn``,
``dp_gather``, ``dp_scatter`` and ``attn_gather`` (:data:`SLOT_SOURCES`), which the grid has
made and costed already wherever the rows have dense layers. So the MLP's two stages are
formed as the grid forms its own (:func:`compute.grid_parts.mlp_subset`: the same work, rates
and profile; each stage's time by :func:`compute.grid_parts.stage_times`' rule), the slots
taken from those stages (else formed alike, :func:`compute.grid_parts.stage_subset`, their
collectives costed by the grid's ``costs``), and a cell's step is the grid's stage times
by their counts summed in the grid's order with those six replaced; a pipelined row's
latency and interval from the pass and each resource's busy time so summed
(:func:`compute.pipeline_time.pipeline_latency`, its slowest stage from the six stages'
times and the exchange's own MoE-to-dense gap), bit for bit what evaluating those rows
again gives (tests/compute/test_moe_dp_cells.py). Evaluating them again cost the
16,384-GPU compare of bench_collectives 8 s of its 27 s of CPU.

The all-reduce exchange (``Shards.ep_allreduce``, no DP attention) changes the same six
stages (:func:`compute.moe_exchange.exchange_slots`: two all-reduces of the layer's output
among ``tp`` in ``attn_scatter`` and ``dp_regather``, no dispatch or combine; the MLP's work
that of every GPU holding every token) and the weights where the model has shared experts
(:func:`compute.memory.splits_shared`): its rows are formed here too, those stages' work from
the functions :func:`compute.stages.stage_work` calls for them
(:func:`compute.grid_parts.exchange_subset`), else from the grid's fit
(tests/compute/test_moe_allreduce_cells.py).

Not formed (the caller evaluates them whole): cells fitting in memory under this exchange
only, where the grid did not time its own collectives (``time_unfit`` off: their stage
times are NaN there), returned as ``extra``; grids with ``overlap_collectives`` (an
all-reduce hidden behind ``mlp_down``, whose time moves here).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from compute.comm import NoCommunication
from compute.dp_collectives import CellOps
from compute.parallel import micro_batch

__all__ = ["DP_STAGES", "GRID_OWN", "GridRows", "Lazy", "dp_gather_cells"]

#: The stages SGLang's DP-attention gather changes on a grid's rows, in
#: :data:`compute.stages.EXTENDED_STAGES`' order.
DP_STAGES = ("attn_scatter", "mlp_up", "mlp_down", "moe_dispatch", "moe_combine",
             "dp_regather")
#: :data:`compute.stages.PIPELINE_STAGES` (that module imports compute.moe_exchange, which
#: imports this one).
_PIPELINE_STAGES = ("pp_send", "pipeline_wait")
#: Each slot's collective under SGLang's gather: the dense layers' stage whose entry it is
#: (:func:`compute.moe_dp_gather.dp_gather_slots`).
SLOT_SOURCES = {"attn_scatter": "allreduce_attn", "moe_dispatch": "dp_gather",
                "moe_combine": "dp_scatter", "dp_regather": "attn_gather"}


class _GridOwn:
    """A stage's figure that is the grid's own in every cell an exchange's figures cover
    (the same field, stage and cells): :func:`compute.exchange_take.take_faster` leaves
    those cells as they are (writing them would change nothing), so they are not copied
    out of the grid to be written back."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "GRID_OWN"


#: The one :class:`_GridOwn`.
GRID_OWN = _GridOwn()


class GridRows:
    """Stage ``k`` of a grid's stage field ``x`` (stages x rows x batches) on the rows
    ``idx``, ``x[k][idx]``: taken where asked, into a buffer where given (a stage taken from
    the grid is not copied whole for each of its fields, its pages faulted in anew)."""

    __slots__ = ("idx", "k", "x")

    def __init__(self, x, k, idx) -> None:
        self.x, self.k, self.idx = x, k, idx

    def take(self, out=None) -> np.ndarray:
        """``x[k][idx]``, in ``out`` where given (of its shape and dtype)."""
        if out is None:
            return np.take(self.x[self.k], self.idx, axis=0)
        return np.take(self.x[self.k], self.idx, axis=0, out=out, mode="clip")  # "raise": a copy

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = self.take()
        return a if dtype is None else a.astype(dtype)

    @property
    def shape(self) -> tuple:
        """The shape of ``x[k][idx]``."""
        return (len(self.idx),) + self.x.shape[2:]

    def __getitem__(self, rows) -> np.ndarray:
        """``x[k][idx][rows]``, taken in one step (rows of rows: one copy, not two)."""
        return np.take(self.x[self.k], self.idx[rows], axis=0)


def _taken(v):
    """``v``, a :class:`GridRows` taken."""
    return v.take() if isinstance(v, GridRows) else v


class Lazy:
    """Stage arrays ``get(keep[j])`` for ``[j]``, each formed where asked (no cycle of
    references to hold a grid's buffers past its use)."""

    __slots__ = ("get", "keep", "shape")

    def __init__(self, get, keep, shape) -> None:
        self.get, self.keep, self.shape = get, keep, (len(keep),) + tuple(shape)

    def __getitem__(self, j):
        return self.get(self.keep[j])


def _stage_time(name, op, works, c, m, t, overlap: bool):
    """``(time, bound)`` of a stage as :func:`compute.grid_parts.stage_times` forms them
    (without ``overlap_collectives``)."""
    network_bound = op and name not in ("embedding", "lm_head")
    if network_bound and not works:
        return t + 0.0, np.full(t.shape, 2, dtype=np.int8)
    busiest = np.maximum(c, m)
    st = np.maximum(busiest, t) if overlap else np.add(c + m, t)
    if network_bound:
        return st, np.full(t.shape, 2, dtype=np.int8)
    bound = np.greater(m, c).astype(np.int8)
    if op:
        bound[t > busiest] = 2
    return st, bound


def dp_gather_cells(grid, model, gpu, configs, sh, idx, b, options, workload, skew, comm,
                    costs, subset, pipeline, time_unfit: bool) -> tuple:
    """``(alt, stages, extra)``: SGLang's DP-attention gather on ``grid``'s rows ``idx``
    (every batch of ``b``, one row of them; ``sh`` those rows'
    :class:`~compute.sharding.Shards`, flagged ``ep_dp_gather``; or the all-reduce
    exchange's, flagged ``ep_allreduce``: ``subset``'s third function), ``alt`` its figures for
    :func:`compute.exchange_take.take_faster` (of the ``stages`` named, the others the
    grid's own), ``extra`` a bool array (rows x batches) of the cells to evaluate whole
    (fitting here only, untimed in ``grid``), or None. ``options`` without two-batch
    overlap; ``costs`` the grid's collective costing
    (:func:`compute.roofline._network_times`); ``subset``
    (:func:`compute.grid_parts.stage_subset`, :func:`compute.grid_parts.mlp_subset`,
    :func:`compute.grid_parts.exchange_subset`);
    ``pipeline`` as :func:`compute.moe_exchange._piped_gather` takes it.

    The four slots hold the dense layers' collectives (:data:`SLOT_SOURCES`): where every
    row runs those stages in ``grid`` they are that stage's figures there, bit for bit (the
    same entries of :func:`~compute.stages.stage_work`, costed alike; a collective that the
    rows' cells run one of is named so, as :func:`compute.dp_collectives.dp_ops` names it),
    else formed as the MLP's are."""
    names = grid.stages
    shape = (len(idx), b.shape[1])
    configs_i = tuple(configs[i] for i in idx)
    allreduce = bool(np.any(sh.ep_allreduce))
    # the dense layers' gather and scatter run in every row (the rows have dense layers;
    # the other two sources run nowhere only where they move nothing, here as there: where
    # no row of the grid runs one, a stage of no work under the collective it names)
    reuse = not allreduce and all(s in names for s in SLOT_SOURCES) and all(
        d in names and grid.counts[names.index(d), idx].all()
        for d in ("dp_gather", "dp_scatter"))
    if reuse:
        parts, fit, group_ops = subset[1](model, gpu, configs_i, sh, b, workload, options,
                                          skew)
        absent = {s: op for (s, d), op in zip(
            (("attn_scatter", "allreduce_attn"), ("dp_regather", "attn_gather")), group_ops,
            strict=True) if d not in names}
        reuse = all(isinstance(op, str) for op in absent.values())
    if not reuse and len(subset) > 2:   # its own six stages alone (the counts the grid's)
        parts, fit = subset[2](model, gpu, configs_i, sh, b, workload, options, skew,
                               {s: grid.counts[names.index(s), idx] for s in DP_STAGES
                                if s in names})
    elif not reuse:
        parts, fit = subset[0](model, gpu, configs_i, sh, b, workload, options, skew,
                               DP_STAGES)
    if fit is None:   # the grid's own fit (weights, KV cache, activations)
        fit = (grid.weights[idx], grid.kv_cache[idx], grid.activations[idx], None,
               grid.fits[idx])
    w, kv, act, _, fits = fit
    fits = np.broadcast_to(fits, shape)
    timed = None if time_unfit else fits
    overlap = options.mode == "overlap"
    formed = {}
    costed = [s for s in names if s in parts and s not in ("mlp_up", "mlp_down")]
    if costed and type(comm) is NoCommunication:   # as compute.roofline._one_exchange
        network = np.zeros((len(costed),) + shape)
        if timed is not None and not timed.all():
            network[:, ~timed] = np.nan
    elif costed:
        network = costs(comm, tuple(parts[s][2] for s in costed),
                        np.stack([parts[s][1] for s in costed]),
                        np.stack([parts[s][0] for s in costed]),
                        np.stack([parts[s][6] for s in costed]), timed,
                        np.array([c.gpus for c in configs_i]),
                        np.array([c.tp for c in configs_i]))
    for s in (x for x in names if x in parts):
        _, _, op, works, f, h, nb, c, m = parts[s]
        t = network[costed.index(s)] if s in costed else (
            np.zeros(shape) if timed is None else np.where(timed, 0.0, np.nan))
        st, bound = _stage_time(s, op, works, c, m, t, overlap)
        formed[names.index(s)] = SimpleNamespace(op=op, flops=f, hbm=h, net=nb, compute=c,
                                                 memory=m, network=t, stage=st, bound=bound)
    if reuse:
        for s, d in SLOT_SOURCES.items():
            if s in absent:
                zero = np.zeros(shape)
                t = zero if timed is None else np.where(timed, 0.0, np.nan)
                st, bound = _stage_time(s, absent[s], not absent[s], zero, zero, t, overlap)
                formed[names.index(s)] = SimpleNamespace(
                    op=absent[s], flops=zero, hbm=zero, net=zero, compute=zero, memory=zero,
                    network=t, stage=st, bound=bound)
            else:
                formed[names.index(s)] = _from_grid(grid, names.index(d), idx)
        formed = dict(sorted(formed.items()))
    # the grid's other stages are timed where it fits under the all-to-alls
    ok = fits if time_unfit else fits & grid.fits[idx]
    extra = None if time_unfit or not (fits & ~ok).any() else fits & ~ok
    cell = tuple(np.broadcast_to(x, shape) for x in (w, kv, act, ok))
    if any(c.pp > 1 for c in configs_i):   # as _one_exchange: every row so
        alt = _piped(grid, model, gpu, sh, idx, b, formed, options, workload, skew, pipeline,
                     cell)
        return alt, tuple(names[k] for k in formed) + ("pipeline_wait",), extra
    return _one_stage(grid, idx, formed, cell), tuple(names[k] for k in formed), extra


def _from_grid(grid, k, idx):
    """Stage ``k`` of ``grid`` on its rows ``idx``, as a formed stage: its collective as
    those rows' cells run it (one name where they all run one, as
    :func:`compute.dp_collectives.dp_ops` gives it; a stage running none is then no
    collective stage, bound by its memory: :func:`compute.grid_parts.stage_times`)."""
    op = grid.ops[k]
    bound = grid.bound[k][idx]
    if isinstance(op, CellOps):
        which = np.broadcast_to(op.which, grid.latency.shape)[idx]
        first = which.flat[0]
        if (which == first).all():   # one collective in every cell (no sort: np.unique's)
            op = op.ops[int(first)]
            if not op:   # no collective in any cell: a stage of no work
                bound = np.zeros(bound.shape, dtype=np.int8)
        else:
            op = CellOps(op.ops, which)

    def rows(x):   # stage k's rows idx (``x[k, idx]``), taken where asked
        return GridRows(x, k, idx)

    return SimpleNamespace(op=op, flops=rows(grid.flops), hbm=rows(grid.hbm_bytes),
                           net=rows(grid.net_bytes), compute=rows(grid.compute_time),
                           memory=rows(grid.memory_time), network=rows(grid.network_time),
                           stage=rows(grid.stage_time), bound=bound)


def _fields(grid, at, mine, three, extra=None):
    """The stage fields of the stages ``three`` (grid indices), a list of arrays each:
    ``mine``'s where formed, else ``extra``'s (a dict of field -> {k: array}), else the
    grid's own (:data:`GRID_OWN`: nothing to take)."""
    extra = extra or {}
    pick = {"flops": "flops", "hbm_bytes": "hbm", "net_bytes": "net",
            "compute_time": "compute", "memory_time": "memory",
            "network_time": "network", "stage_time": "stage", "bound": "bound"}
    out = {}
    for field, attr in pick.items():
        out[field] = [getattr(mine[k], attr) if k in mine else
                      extra[field][k] if k in extra.get(field, {}) else
                      GRID_OWN for k in three]
    return out


def _one_stage(grid, rows, mine, cell):
    """The exchange's figures on ``grid``'s rows ``rows`` of one pipeline stage: the step
    the stages' times by their counts summed in the grid's order (the pipeline's own
    stages left out), ``mine``'s stages formed here, plus the grid's fixed overhead."""
    step = None
    for k, name in enumerate(grid.stages):
        if name in _PIPELINE_STAGES:
            continue
        st = _taken(mine[k].stage) if k in mine else grid.stage_time[k][rows]
        term = grid.counts[k, rows][:, None] * st
        step = term if step is None else step + term
    overhead = None if grid.overhead is None else grid.overhead[rows]
    latency = step if overhead is None else step + overhead
    w, kv, act, fits = cell
    ks = tuple(mine)
    return SimpleNamespace(
        stages=tuple(grid.stages[k] for k in ks), ops=tuple(mine[k].op for k in ks),
        **_fields(grid, (rows, slice(None)), mine, ks),
        latency=latency, overhead=overhead, two_batch_latency=None, two_batch_hidden=None,
        interval=None if grid.interval is None else latency,   # one stage: the step
        weights=w, kv_cache=kv, activations=act, fits=fits)



def pipelined(grid, model, gpu, sh, at, b, keep, c3, pass_t, busy, stage, options, workload,
              skew, pipeline) -> tuple:
    """The pipeline's figures of an exchange's rows formed from ``grid``'s stages, as
    :func:`_piped` and :func:`compute.moe_exchange._piped_gather` take them: the
    micro-batch, the slowest pipeline stage (:func:`compute.pipeline_time.slowest_stage`,
    ``stage(k)`` stage ``k``'s times, ``keep`` the stages the rows run, ``c3`` their counts),
    the pipeline's latency and wait (:func:`compute.pipeline_time.pipeline_latency`, from
    the pass ``pass_t`` and the resources' ``busy`` times) and the grid's fixed overhead at
    ``at``. Returns ``(micro, st, bound, parts, latency, interval, overhead)``: ``st``,
    ``bound`` and ``parts`` the pipeline's two stages (``pp_send``, ``pipeline_wait``)."""
    slowest_stage, pipeline_latency, mlp_kind_gap, attention_kind_times = pipeline
    names = grid.stages
    ks = names.index(_PIPELINE_STAGES[0])
    kept = tuple(names[k] for k in keep)
    micro = micro_batch(b, sh.pp, sh.attention_dp, workload.phase)
    slowest = slowest_stage(model, sh, Lazy(stage, keep, pass_t.shape), c3, kept,
                            mlp_kind_gap(model, gpu, sh, micro, workload, options, skew),
                            attention_kind_times(model, gpu, sh, micro, workload, options))
    shape = pass_t.shape
    st = np.stack([grid.stage_time[ks][at], np.zeros(shape)])   # pp_send, pipeline_wait
    bound = np.zeros((2,) + shape, dtype=np.int8)
    parts = tuple(np.zeros((2,) + shape) for _ in range(3))
    latency, interval = pipeline_latency(pass_t, sh.pp, b, micro, st, bound, None,
                                         _PIPELINE_STAGES, options, workload, parts,
                                         busy=busy, slowest=slowest)
    overhead = None if grid.overhead is None else grid.overhead[at]
    if overhead is not None:
        latency = latency + overhead
        if interval is not None:
            interval = interval + overhead
    return micro, st, bound, parts, latency, interval, overhead


def _piped(grid, model, gpu, sh, idx, b, mine, options, workload, skew, pipeline, cell):
    """The exchange's figures on ``grid``'s pipelined rows ``idx`` (``sh`` theirs), as
    :func:`compute.moe_exchange._piped_gather` forms the vLLM gather's, ``mine``'s stages
    formed here (their compute, memory and network times in the busy sums)."""
    at = (idx, slice(None))
    names = grid.stages
    kw = names.index(_PIPELINE_STAGES[1])
    keep = [k for k in range(len(names)) if grid.counts[k, idx].any()]   # the body's stages
    c3 = grid.counts[keep][:, idx][:, :, None]

    def stage(k):   # taken where asked (compute.pipeline_time.slowest_stage: only its rows)
        return mine[k].stage if k in mine else GridRows(grid.stage_time, k, idx)

    # the pass and the busy times, each term count x time added in the stages' order (the
    # sums as the grid forms them), in place: one buffer for the grid's rows taken
    pass_t, busy = None, [None, None, None]
    fields = (grid.compute_time, grid.memory_time, grid.network_time)
    buf = None

    def add(total, j, k, x, attr):
        """``total`` plus ``c3[j]`` x stage ``k``'s ``attr`` (``x`` the grid's field), in
        place (the term in ``buf``); the first term a new array."""
        v = getattr(mine[k], attr) if k in mine else GridRows(x, k, idx)
        if total is None:
            return c3[j] * _taken(v)
        if isinstance(v, GridRows):
            v = v.take(buf)
        return np.add(total, np.multiply(c3[j], v, out=buf), out=total)

    for j, k in enumerate(keep):
        if names[k] in _PIPELINE_STAGES:
            continue
        pass_t = add(pass_t, j, k, grid.stage_time, "stage")
        if buf is None:
            buf = np.empty(pass_t.shape)
        op = mine[k].op if k in mine else grid.ops[k]
        works = not op or names[k] in ("embedding", "lm_head")
        for r, used in enumerate((works, works, op)):
            if used:
                busy[r] = add(busy[r], j, k, fields[r], ("compute", "memory", "network")[r])

    micro, st, bound, parts, latency, interval, overhead = pipelined(
        grid, model, gpu, sh, at, b, keep, c3, pass_t, busy, stage, options, workload, skew,
        pipeline)
    w, kv, act, fits = cell
    three = tuple(mine) + (kw,)
    wait = {"compute_time": {kw: parts[0][1]}, "memory_time": {kw: parts[1][1]},
            "network_time": {kw: parts[2][1]}, "stage_time": {kw: st[1]},
            "bound": {kw: bound[1]}}
    return SimpleNamespace(
        stages=tuple(names[k] for k in three),
        ops=tuple(mine[k].op for k in mine) + (grid.ops[kw],),
        **_fields(grid, at, mine, three, wait),
        latency=latency, overhead=overhead, two_batch_latency=None, two_batch_hidden=None,
        interval=interval, weights=w, kv_cache=kv, activations=act, fits=fits)
