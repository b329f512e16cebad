"""Which exchange an expert-parallel MoE layer's tokens take, cell by cell: the dispatch and
combine all-to-alls, or, where every GPU already holds every token, one all-reduce of the
layer's output; a step takes the cheaper (:func:`cheaper_exchange`).

**Where every GPU holds every token.** In a stage of ``tp`` GPUs, EP ``e`` places the
routed experts on ``e`` groups of ``tp / e`` GPUs (each expert split over its group,
MoE-TP), so the EP x MoE-TP group is the stage's ``tp`` GPUs, and EP never exceeds TP
(:func:`compute.parallel.check_parallelism`). Before an MoE layer the attention output is
all-reduced among its attention group, ``tp / a`` GPUs for ``a`` attention DP groups:

* ``a = 1`` (no DP attention): the group is the whole stage, so every GPU of the EP x
  MoE-TP group holds every token of the (micro-)batch, whatever ``e`` (``e = tp`` too);
* ``a > 1``: each group holds its own sequences only, and the tokens must move to their
  experts (the dispatch and combine, or gathers): the all-to-all schedule alone;
* pipeline parallelism does not change this: each stage's ``tp`` GPUs run their own layers
  as above, the micro-batch's activations sent to the next stage in full.

**The two schedules** of an EP MoE layer with ``a = 1``, per GPU, ``n`` tokens of
``hidden`` elements (``b = n x hidden x`` activation bytes):

* all-to-all (SGLang's ``--moe-a2a-backend deepep``, which scatters the attention output
  and dispatches each GPU's own tokens; the stage table of :mod:`compute.stages`): a
  reduce-scatter of ``b`` among ``tp``, the dispatch and combine all-to-alls, an
  all-gather of ``b`` among ``tp``; the router and the replicated shared experts on the
  GPU's own ``n / tp`` tokens.
* all-reduce: the attention output all-reduced among ``tp`` (every GPU keeps every token),
  each GPU runs its expert slots' MoE-TP shards on the tokens routed to them and the
  shared experts' ``1 / tp`` share on every token, and one all-reduce of ``b`` among ``tp``
  sums the partial outputs, as a tensor-parallel dense MLP's; no dispatch, no combine.
  vLLM with ``--enable-expert-parallel`` and no data parallelism: the all-to-all backends
  run only beside data parallelism, the EP group is the TP group and FusedMoE reduces the
  experts' partial outputs with the TP all-reduce (docs.vllm.ai, 'Expert Parallel
  Deployment': "EP is typically coupled with Data Parallelism", the ``all2all`` backends
  "any EP+DP configuration"); TensorRT-LLM's MoE runs ``moe_tp_size x moe_ep_size =
  tp_size`` over the TP group (nvidia.github.io/TensorRT-LLM, 'Expert Parallelism in
  TensorRT-LLM'), with attention tensor-parallel by default (``enable_attention_dp``
  false; 'Parallelism in TensorRT LLM'), each rank computing its experts' or shards' part
  of every token's output; SGLang's default ``--moe-a2a-backend none``, "Uses All-Reduce or
  All-Gather for token dispatch ... Hybrid EP and TP setups" (docs.sglang.io, 'Expert
  Parallelism').

The all-reduce schedule moves ``2 x 2 (tp-1)/tp b`` on a ring against ``2 (tp-1)/tp b``
plus the two all-to-alls (``(tp-1)/tp x n k / e x hidden`` elements each way for top-k
``k`` over ``e`` groups); the latency terms tie on a ring (an all-reduce's ``2 (tp-1)``
steps are a reduce-scatter's and an all-gather's, each all-to-all ``tp - 1``), a fabric's
own costs decide elsewhere. At a small batch the all-reduce schedule gains by the shared
experts split over ``tp`` (DeepSeek-V3 on 8 H200, decode batch 1: 4.94 -> 4.47 ms at EP
8, EP 1's step); at a large one the all-to-alls carry fewer bytes where ``k / e`` is small
(Mixtral-8x7B's top-2 of 8 at EP 8 keeps them). Both are what engines run, so the roofline, a lower bound,
takes the cheaper per cell: both grids are evaluated through the same stage work,
collective costs (``comm``) and stage times, and each cell keeps the faster one's figures.
In the all-reduce cells the slots ``attn_scatter`` and ``dp_regather`` hold the two
all-reduces (the same counts, one per EP layer), and a cell's breakdown names them
``allreduce_attn_ep`` and ``allreduce_mlp_ep`` (:data:`SHOWN_AS`, :func:`shown_name`: the
table of ``infer``, its JSON and CSV alike); ``moe_dispatch`` and ``moe_combine`` take no
time and are not listed. ``overlap_collectives`` hides those all-reduces behind the GEMMs
producing their inputs (``out_proj``, ``mlp_down``: :data:`EXCHANGE_PRODUCERS`) as it hides
the dense layers' (:data:`compute.stages.PRODUCERS`), and the cheaper schedule is chosen on
the steps so formed.

The all-reduce schedule holds the shared experts split over ``tp`` (the all-to-all one
replicates them: :func:`compute.memory.weight_bytes`), so its weights are smaller
(DeepSeek-V3 at TP 8: 58 layers x 7/8 of 44 MB in fp8, 2.2 GB a GPU); a cell takes the
schedule that fits where only one does, else the faster. Rows with DP-attention's
data-parallel dense MLPs (``Shards.dense_dp``) keep the all-to-all schedule.
"""

from __future__ import annotations

from dataclasses import fields, replace

import numpy as np

from compute.dp_collectives import CellOps

__all__ = ["EXCHANGE_PRODUCERS", "SHOWN_AS", "allreduce_rows", "cheaper_exchange", "shown_name", "slot_of"]

#: The name a cell's breakdown gives the slot of an EP layer's stage where it runs an
#: all-reduce (the all-reduce exchange): the grids of both schedules share the slots
#: ``attn_scatter`` and ``dp_regather`` (counts per row, the choice per cell), which then
#: hold the attention output's all-reduce and the experts' partial outputs', the TP
#: layers' ``allreduce_attn`` and ``allreduce_mlp`` on the EP layers.
SHOWN_AS = {"attn_scatter": "allreduce_attn_ep", "dp_regather": "allreduce_mlp_ep"}
_SLOTS = {shown: slot for slot, shown in SHOWN_AS.items()}
#: The GEMM producing the input of each slot's all-reduce under the all-reduce exchange
#: (the attention output's, the experts' partial outputs'): ``overlap_collectives`` hides
#: it behind that GEMM as it hides :data:`compute.stages.PRODUCERS`' all-reduces
#: (:func:`compute.grid_parts.stage_times`); the slots' reduce-scatter and all-gather are
#: not hidden.
EXCHANGE_PRODUCERS = {"attn_scatter": "out_proj", "dp_regather": "mlp_down"}


def shown_name(stage: str, op) -> str:
    """The name a cell's breakdown gives ``stage`` (a grid's stage name) whose collective in
    that cell is ``op``: :data:`SHOWN_AS`'s where an EP layer's slot runs the all-reduce
    exchange's all-reduce (``attn_scatter`` is otherwise a reduce-scatter, ``dp_regather``
    an all-gather), else the stage's own.

    >>> shown_name("attn_scatter", "all-reduce"), shown_name("dp_regather", "all-reduce")
    ('allreduce_attn_ep', 'allreduce_mlp_ep')
    >>> shown_name("attn_scatter", "reduce-scatter"), shown_name("allreduce_attn", "all-reduce")
    ('attn_scatter', 'allreduce_attn')
    """
    return SHOWN_AS.get(stage, stage) if op == "all-reduce" else stage


def slot_of(name: str) -> str:
    """The grid's stage (slot) a breakdown's stage ``name`` is: :func:`shown_name` undone.

    >>> slot_of("allreduce_mlp_ep"), slot_of("dp_regather"), slot_of("qkv")
    ('dp_regather', 'dp_regather', 'qkv')
    """
    return _SLOTS.get(name, name)


def allreduce_rows(model, sh) -> np.ndarray:
    """Bool per row of ``sh``: an MoE model's expert-parallel configuration without DP
    attention (every GPU holds every token before the MoE layer), whose EP layers may take
    the all-reduce exchange; False for a plain-TP grid, DP attention and rows whose dense
    MLPs run data-parallel.

    >>> from compute.models import get_model
    >>> from compute.parallel import Parallelism, layout
    >>> m = get_model("DeepSeek-V3")
    >>> allreduce_rows(m, layout(m, [Parallelism(8), Parallelism(8, ep=2), Parallelism(8,
    ...     ep=8, attention_dp=8), Parallelism(8, pp=2, ep=8)])).tolist()
    [False, True, False, True]
    """
    if not model.is_moe or sh.plain or np.any(sh.ep_allreduce):   # flagged: evaluated so
        return np.zeros(np.asarray(sh.tp).shape[0], dtype=bool)
    ep, adp, dd = (np.broadcast_to(np.asarray(x, dtype=float).reshape(-1, 1),
                                   np.asarray(sh.tp).shape).ravel()
                   for x in (sh.ep, sh.attention_dp, sh.dense_dp))
    return (ep > 1) & (adp == 1) & (dd == 0)


def _rows_of(sh, rows: np.ndarray):
    """``sh`` with only ``rows`` (indices), flagged for the all-reduce exchange."""
    nc = np.asarray(sh.tp).shape[0]
    out = {}
    for f in fields(sh):
        v = getattr(sh, f.name)
        if isinstance(v, np.ndarray) and v.ndim and v.shape[0] == nc:
            v = v[rows]
        out[f.name] = v
    out["ep_allreduce"] = 1.0
    return replace(sh, **out)


def _subset(x, rows, nc):
    """``x`` (an array with a row per configuration, or one row for every row) at
    ``rows``."""
    if x is None or not isinstance(x, np.ndarray) or x.ndim < 2 or x.shape[0] != nc or nc == 1:
        return x
    return x[rows]


#: The Grid fields with a stage axis first, then configurations x batches.
_STAGE_FIELDS = ("flops", "hbm_bytes", "net_bytes", "compute_time", "memory_time",
                 "network_time", "stage_time", "bound")
#: The Grid fields of configurations x batches the two schedules may differ in (the
#: weights: the shared experts split over ``tp`` or replicated).
_CELL_FIELDS = ("latency", "overhead", "interval", "two_batch_latency", "two_batch_hidden",
                "weights", "kv_cache", "activations", "fits")


def cheaper_exchange(body, model, configs, sh, plain: bool, batches, b, paired: bool,
                     busiest, grid, **kw):
    """``grid`` (the all-to-all schedule's, from ``body``, :func:`compute.roofline.
    grid_body`) with each cell of the rows :func:`allreduce_rows` gives taking the
    all-reduce exchange where its step is faster: those rows evaluated again by ``body``
    with ``Shards.ep_allreduce`` (the same stage work, collective model and stage times),
    every stage's figures taken from the one whose serial step is the faster (two-batch
    overlap's step then that one's), cell by cell; the stages whose
    collective differs carry a :class:`~compute.dp_collectives.CellOps`. ``grid`` itself
    where no row qualifies, else ``grid`` with its stage arrays updated in place (``grid``
    is ``body``'s, made for this call, and owns them). ``kw``: the rest of ``body``'s
    arguments."""
    rows = allreduce_rows(model, sh)
    if plain or not rows.any():
        return grid
    idx = np.flatnonzero(rows)
    nc = len(configs)
    if kw["options"].dense_mlp_tp is not None:   # for attention DP rows, which these are not
        kw["options"] = replace(kw["options"], dense_mlp_tp=None)
    alt = body(model, kw.pop("gpu"), tuple(configs[i] for i in idx), _rows_of(sh, idx),
               False, batches[idx] if paired else batches, _subset(b, idx, nc),
               paired=paired, busiest=_subset(busiest, idx, nc), **kw)
    faster = np.zeros(grid.latency.shape, dtype=bool)
    # the schedule that fits where one alone does, else the faster serial step (two-batch
    # overlap then hides what it can of the chosen one's, and the stages stay the serial
    # step's); NaN (untimed, unfit): the all-to-all's
    fits_a, fits_m = np.broadcast_to(alt.fits, alt.latency.shape), grid.fits[idx]
    faster[idx] = (fits_a & ~fits_m) | ((fits_a == fits_m) & (_serial(alt) < _serial(grid)[idx]))
    if not faster.any():
        return grid
    sub = faster[idx]
    changes = {}
    for name in _STAGE_FIELDS:
        # written in place (the grid is body's, fresh, its stage arrays its own: copies of
        # what compute.grid_parts keeps): a copy of a cluster-scale grid's 61-111 MB stage
        # array cost 3-5 s of the 16,384-GPU compare (bench_collectives), its pages faulted in
        out = getattr(grid, name)
        if not (isinstance(out, np.ndarray) and out.flags.writeable):
            out = np.array(out, copy=True)
        a = getattr(alt, name)
        for ka, stage in enumerate(alt.stages):
            k = grid.stages.index(stage)
            out[k, idx] = np.where(sub, a[ka], out[k, idx])
        changes[name] = out
    for name in _CELL_FIELDS:
        g, a = getattr(grid, name), getattr(alt, name)
        if g is None or a is None:
            continue
        out = np.array(np.broadcast_to(g, grid.latency.shape), copy=True)
        out[idx] = np.where(sub, np.broadcast_to(a, sub.shape), out[idx])
        changes[name] = out
    ops = list(grid.ops)
    for ka, stage in enumerate(alt.stages):
        k = grid.stages.index(stage)
        if alt.ops[ka] != grid.ops[k]:
            ops[k] = _merged_op(grid.ops[k], alt.ops[ka], idx, sub, grid.latency.shape)
    changes["ops"] = tuple(ops)
    return replace(grid, **changes)


def _serial(grid) -> np.ndarray:
    """``grid``'s step without two-batch overlap: its latency plus what the overlap hid."""
    hidden = grid.two_batch_hidden
    return grid.latency if hidden is None else grid.latency + np.nan_to_num(hidden)


def _indexed(op, shape) -> tuple[list, np.ndarray]:
    """``(names, index)``: a stage's collective ``op`` (a name or a
    :class:`~compute.dp_collectives.CellOps`) as its names and each cell's index among them,
    an int array of ``shape``."""
    if isinstance(op, CellOps):
        return list(op.ops), np.broadcast_to(op.which.astype(np.intp), shape)
    return [op], np.zeros(shape, dtype=np.intp)


def _merged_op(main, alt, idx, sub, shape):
    """The collective of a stage whose all-to-all grid runs ``main`` and whose all-reduce
    rows ``idx`` run ``alt`` (names or :class:`~compute.dp_collectives.CellOps`): ``alt``'s
    in the cells ``sub`` of those rows, ``main``'s elsewhere, a :class:`CellOps`.

    >>> op = _merged_op("reduce-scatter", "all-reduce", np.array([1]),
    ...                 np.array([[True, False]]), (2, 2))
    >>> op, [op.at(i, j) for i in (0, 1) for j in (0, 1)]
    (CellOps('reduce-scatter', 'all-reduce'), ['reduce-scatter', 'reduce-scatter', 'all-reduce', 'reduce-scatter'])
    """
    names, which = _indexed(main, shape)
    which = np.array(which, copy=True)
    alt_names, alt_which = _indexed(alt, sub.shape)
    lut = []
    for name in alt_names:
        if name not in names:
            names.append(name)
        lut.append(names.index(name))
    which[idx] = np.where(sub, np.asarray(lut, dtype=np.intp)[alt_which], which[idx])
    return CellOps(tuple(names), which)
