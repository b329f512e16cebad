"""Which exchange an expert-parallel MoE layer's tokens take, cell by cell: the dispatch and
combine all-to-alls; where every GPU already holds every token, one all-reduce of the
layer's output; under DP attention, an all-gather of every group's tokens to every GPU and
a reduce-scatter of the experts' outputs back (vLLM's), or SGLang's gather around experts
split over TP (:mod:`compute.moe_dp_gather`); a step takes the cheapest
(:func:`cheaper_exchange`), and a cell's ``moe_exchange`` names it (:data:`EXCHANGES`).

**Where every GPU holds every token.** In a stage of ``tp`` GPUs, EP ``e`` places the
routed experts on ``e`` groups of ``tp / e`` GPUs (each expert split over its group,
MoE-TP), so the EP x MoE-TP group is the stage's ``tp`` GPUs, and EP never exceeds TP
(:func:`compute.parallel.check_parallelism`). Before an MoE layer the attention output is
all-reduced among its attention group, ``tp / a`` GPUs for ``a`` attention DP groups:

* ``a = 1`` (no DP attention): the group is the whole stage, so every GPU of the EP x
  MoE-TP group holds every token of the (micro-)batch, whatever ``e`` (``e = tp`` too);
* ``a > 1``: each group holds its own sequences only, and the tokens must move to their
  experts: the dispatch and combine, or the gather exchange (below);
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

**The gather exchange under DP attention** (``a > 1``, ``Shards.ep_gather``): vLLM's
default all2all backend, ``allgather_reducescatter`` ("Default backend ... works with any
EP+DP configuration": docs.vllm.ai, 'Expert Parallel Deployment'; vllm-project/vllm,
vllm/distributed/device_communicators/all2all.py, ``AgRsAll2AllManager``): ``dispatch``
all-gathers (``all_gatherv``) every rank's hidden states with their top-k weights and ids,
``combine`` reduce-scatters (``reduce_scatterv``) the experts' outputs. As it runs:

* padding: the sizes are ``dp_metadata``'s tokens per DP rank, every rank padded to the
  largest count across DP where CUDA graphs (or micro-batching) run, else each its own
  (vllm/v1/worker/dp_utils.py, ``_post_process_dp_padding``): ``G = a n_a`` rows in decode,
  ``n`` in prefill (eager beyond the captured sizes; the lesser);
* bytes: the input is quantized before the dispatch, the scales gathered beside it, and the
  combine is in the activations' dtype (vllm/model_executor/layers/fused_moe/
  prepare_finalize/naive_dp_ep.py, ``_quantize_and_setup_dispatch``): ``G x hidden`` in
  :func:`compute.stage_mlp.dispatch_bytes` and in activation bytes, the top-k ids and
  weights (8 B a copy) left out as the all-to-alls' routing metadata is;
* attention groups of several GPUs (``tp / a > 1``): ``use_sequence_parallel_moe``
  (vllm/config/parallel.py: this backend, EP, TP > 1, DP > 1) reduce-scatters the attention
  output within the group instead of all-reducing it (``o_proj`` with
  ``reduce_results=False``, then ``tensor_model_parallel_reduce_scatter``), gathers over
  the EP group (every GPU of the stage) and all-gathers the group's rows before the next
  layer's attention (vllm/model_executor/models/deepseek_v2.py,
  ``DeepseekV2DecoderLayer``): no extra all-reduce within the group, the all-to-all
  schedule's ``attn_scatter`` and ``dp_regather`` (vLLM leaves it off with PP > 1, an
  all-reduce and a chunk in its place: a lower bound there);
* shared experts and router: replicated (``DeepseekV2MLP(disable_tp=is_sequence_parallel)``;
  TP 1 within a group of one GPU) and run on the layer's own input before the dispatch
  (vllm/model_executor/layers/fused_moe/modular_kernel.py, ``shared_experts_input``), the
  top-k chosen before it: the all-to-all schedule's MLP work and weights, bit for bit;
* no two-batch overlap: the naive prepare/finalize is not asynchronous, and vLLM's dual
  batch overlap asserts it off there; SGLang's two-batch overlap needs DeepEP.

So only ``moe_dispatch`` and ``moe_combine`` differ, an all-gather and a reduce-scatter
among ``tp`` (a cell's breakdown names them ``allgather_moe_ep`` and
``reducescatter_moe_ep``): on a ring ``(tp-1)/tp G x hidden`` bytes each against the
all-to-alls' ``(tp-1)/tp A x hidden``, ``A = n k s / e`` copies (``s`` the skew, at least
the busiest sender's ``a n_a k / e``), the latency terms equal (``tp - 1`` steps each), so
the gather is cheaper exactly where ``G < A``: top-k above the EP degree, ``k s / e > 1``
(DeepSeek-V3's top-8 at EP 4 of TP 8 x DP-attention 8, decode batch 64: 20.37 -> 20.20 ms
on 8 H200; at EP 8 with skew 1.5, 20.28 -> 20.19 ms; SGLang's gather, its shared expert
split over ``tp``, is cheaper still in those cells); at ``k = e`` they tie and the
all-to-alls stay (DeepSeek-V3 at EP 8), below it the all-to-alls win (Mixtral-8x7B's top-2
at EP 8: a quarter of the rows). With ``e < tp`` each GPU runs its group's MoE-TP shards
on the tokens routed to the group, as the all-to-all schedule generalises (vLLM's EP spans
the stage; SGLang gathers so with ``--moe-a2a-backend none``, its shared experts split
over ``tp``: :mod:`compute.moe_dp_gather`, the third exchange, evaluated last since the
gather's cells are formed from the all-to-alls' stages). The padding rows are extra
activation memory in decode (:func:`compute.memory.activation_bytes`); the ``G`` rows
otherwise sit within the residual-stream buffers it counts for every token of the step.
"""

from __future__ import annotations

from dataclasses import fields, replace
from types import SimpleNamespace

import numpy as np

from compute.dp_collectives import gathered_tokens
from compute.exchange_names import EXCHANGES
from compute.exchange_take import serial_step, take_faster
from compute.memory import activation_bytes
from compute.moe_dp_cells import GRID_OWN, dp_gather_cells, pipelined
from compute.moe_dp_gather import dp_gather_rows, dp_gather_slots
from compute.stage_mlp import dispatch_bytes

__all__ = ["EXCHANGES", "EXCHANGE_PRODUCERS", "SHOWN_AS", "allreduce_rows", "cheaper_exchange",
           "exchange_slots", "flagged", "gather_rows", "shown_name", "slot_of"]

#: The :class:`~compute.sharding.Shards` field flagging rows for each exchange but the
#: first, and its code in :data:`EXCHANGES`.
_FLAGS = {"ep_allreduce": 1, "ep_gather": 2, "ep_dp_gather": 3}
#: The names SGLang's DP-attention gather gives its two collectives among ``tp`` (the
#: dense layers' ``dp_gather`` and ``dp_scatter`` run in the EP layers' slots).
_DP_GATHER_AS = {"moe_dispatch": "dp_gather_moe_ep", "moe_combine": "dp_scatter_moe_ep"}

#: The name a cell's breakdown gives the slot of an EP layer's stage where it runs an
#: all-reduce (the all-reduce exchange): the grids of both schedules share the slots
#: ``attn_scatter`` and ``dp_regather`` (counts per row, the choice per cell), which then
#: hold the attention output's all-reduce and the experts' partial outputs', the TP
#: layers' ``allreduce_attn`` and ``allreduce_mlp`` on the EP layers.
SHOWN_AS = {"attn_scatter": "allreduce_attn_ep", "dp_regather": "allreduce_mlp_ep",
            "moe_dispatch": "allgather_moe_ep", "moe_combine": "reducescatter_moe_ep"}
#: The collective each slot of :data:`SHOWN_AS` runs where it takes its shown name: the
#: all-reduce exchange's two all-reduces, the gather exchange's all-gather of every token
#: and reduce-scatter of the experts' outputs (the slots run other collectives, or none,
#: under the all-to-alls).
SHOWN_OP = {"attn_scatter": "all-reduce", "dp_regather": "all-reduce",
            "moe_dispatch": "all-gather", "moe_combine": "reduce-scatter"}
_SLOTS = {shown: slot for slot, shown in (*SHOWN_AS.items(), *_DP_GATHER_AS.items())}
#: :data:`compute.stages.PIPELINE_STAGES` (that module imports this one): the stages a
#: pass through the layers does not sum.
_PIPELINE_STAGES = ("pp_send", "pipeline_wait")
#: The GEMM producing the input of each slot's all-reduce under the all-reduce exchange
#: (the attention output's, the experts' partial outputs'): ``overlap_collectives`` hides
#: it behind that GEMM as it hides :data:`compute.stages.PRODUCERS`' all-reduces
#: (:func:`compute.grid_parts.stage_times`); the slots' reduce-scatter and all-gather are
#: not hidden.
EXCHANGE_PRODUCERS = {"attn_scatter": "out_proj", "dp_regather": "mlp_down"}


def shown_name(stage: str, op, exchange: int = 0) -> str:
    """The name a cell's breakdown gives ``stage`` (a grid's stage name) whose collective in
    that cell is ``op``: :data:`SHOWN_AS`'s where an EP layer's slot runs the all-reduce
    exchange's all-reduce (``attn_scatter`` is otherwise a reduce-scatter, ``dp_regather``
    an all-gather) or the gather exchange's all-gather or reduce-scatter (``moe_dispatch``
    and ``moe_combine`` otherwise all-to-alls): :data:`SHOWN_OP`; where the cell takes
    SGLang's DP-attention gather (``exchange`` 3, :data:`EXCHANGES`), ``dp_gather_moe_ep``
    and ``dp_scatter_moe_ep`` for those two, whichever collective they run; else the
    stage's own.

    >>> shown_name("attn_scatter", "all-reduce"), shown_name("dp_regather", "all-reduce")
    ('allreduce_attn_ep', 'allreduce_mlp_ep')
    >>> shown_name("moe_dispatch", "all-gather"), shown_name("moe_combine", "reduce-scatter")
    ('allgather_moe_ep', 'reducescatter_moe_ep')
    >>> shown_name("attn_scatter", "reduce-scatter"), shown_name("allreduce_attn", "all-reduce")
    ('attn_scatter', 'allreduce_attn')
    >>> shown_name("moe_dispatch", "all-to-all")
    'moe_dispatch'
    >>> shown_name("moe_dispatch", "all-gather", 3), shown_name("moe_combine", "all-reduce", 3)
    ('dp_gather_moe_ep', 'dp_scatter_moe_ep')
    """
    if exchange == 3 and stage in _DP_GATHER_AS and op:
        return _DP_GATHER_AS[stage]
    return SHOWN_AS[stage] if SHOWN_OP.get(stage) == op else stage


def slot_of(name: str) -> str:
    """The grid's stage (slot) a breakdown's stage ``name`` is: :func:`shown_name` undone.

    >>> slot_of("allreduce_mlp_ep"), slot_of("dp_regather"), slot_of("qkv")
    ('dp_regather', 'dp_regather', 'qkv')
    >>> slot_of("allgather_moe_ep"), slot_of("reducescatter_moe_ep"), slot_of("dp_gather_moe_ep")
    ('moe_dispatch', 'moe_combine', 'moe_dispatch')
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
    if not model.is_moe or sh.plain or _any_flag(sh):
        return np.zeros(np.asarray(sh.tp).shape[0], dtype=bool)   # flagged: evaluated so
    ep, adp, dd = _per_row(sh, sh.ep, sh.attention_dp, sh.dense_dp)
    return (ep > 1) & (adp == 1) & (dd == 0)


def gather_rows(model, sh) -> np.ndarray:
    """Bool per row of ``sh``: an MoE model's expert-parallel configuration with DP
    attention, whose EP layers may take the gather exchange (every attention group's tokens
    all-gathered to every GPU of the stage, the experts' outputs reduce-scattered back);
    False for a plain-TP grid and without DP attention (:func:`allreduce_rows`' rows). The
    dense layers' own schedule (TP MLPs with ``dp_gather``, or ``Shards.dense_dp``) is the
    same under either exchange.

    >>> from compute.models import get_model
    >>> from compute.parallel import Parallelism, layout
    >>> m = get_model("DeepSeek-V3")
    >>> gather_rows(m, layout(m, [Parallelism(8, ep=8), Parallelism(8, ep=8, attention_dp=8),
    ...     Parallelism(8, attention_dp=8), Parallelism(16, ep=4, attention_dp=2)])).tolist()
    [False, True, False, True]
    """
    if not model.is_moe or sh.plain or _any_flag(sh):
        return np.zeros(np.asarray(sh.tp).shape[0], dtype=bool)
    ep, adp = _per_row(sh, sh.ep, sh.attention_dp)
    return (ep > 1) & (adp > 1)


def _any_flag(sh) -> bool:
    """True where ``sh`` is flagged for an exchange other than the all-to-alls."""
    return any(np.any(getattr(sh, f)) for f in _FLAGS)


def _per_row(sh, *xs):
    """Each of ``xs`` (a field of ``sh``: one value a row, or one for every row) as a flat
    float array of one value a row."""
    shape = np.asarray(sh.tp).shape
    return [np.broadcast_to(np.asarray(x, dtype=float).reshape(-1, 1), shape).ravel()
            for x in xs]


def flagged(sh, flag: str) -> bool:
    """True where ``sh``'s rows are evaluated under the exchange its field ``flag`` names
    (``"ep_allreduce"``, ``"ep_gather"``; every row or none: :func:`cheaper_exchange`
    evaluates such rows as a grid of their own)."""
    v = getattr(sh, flag, 0.0)
    if sh.plain or not np.any(v):
        return False
    if not np.all(v):
        raise AssertionError(f"an exchange's grid has every row so ({flag})")
    return True


def exchange_slots(model, sh, zero, n, n_att, phase: str, ar_bytes, dense=None,
                   attn=None) -> dict:
    """The EP layers' slots of :func:`compute.stages.stage_work` (its ``extra`` entries:
    ``(count, flops, hbm, op, bytes, group)``, the count None, the all-to-all schedule's)
    that another exchange changes, for ``n`` tokens of which the busiest attention group
    holds ``n_att``; ``{}`` where ``sh`` is flagged for none (the all-to-alls):

    * all-reduce (``Shards.ep_allreduce``): ``attn_scatter`` the attention output's
      all-reduce of ``ar_bytes`` (``n x hidden``) among ``tp`` (every GPU keeps every
      token), ``dp_regather`` the partial outputs' all-reduce of it, no dispatch or combine;
    * gather (``Shards.ep_gather``): ``moe_dispatch`` an all-gather among ``tp`` of ``G x
      hidden`` in the dispatch's bytes (:func:`compute.stage_mlp.dispatch_bytes`: vLLM
      quantizes before it), ``moe_combine`` a reduce-scatter among ``tp`` of ``G x hidden``
      in the activations' dtype, ``G`` the rows gathered: every group padded to the
      busiest's ``n_att`` in decode (CUDA graphs), ``n`` in prefill
      (:func:`compute.dp_collectives.gathered_tokens` without SGLang's ``SUM_LEN``);
      ``attn_scatter`` and ``dp_regather`` as under the all-to-alls;
    * SGLang's DP-attention gather (``Shards.ep_dp_gather``): the dense layers' entries of
      ``dense`` (stage_work's) and ``attn`` (their ``allreduce_attn``'s op, bytes and
      group) in the four slots (:func:`compute.moe_dp_gather.dp_gather_slots`).

    The counts are the all-to-all schedule's, so the grids line up stage by stage."""
    if flagged(sh, "ep_allreduce"):
        return {"attn_scatter": (None, zero, zero, "all-reduce", ar_bytes, sh.tp),
                "moe_dispatch": (None, zero, zero, "", zero, 1.0),
                "moe_combine": (None, zero, zero, "", zero, 1.0),
                "dp_regather": (None, zero, zero, "all-reduce", ar_bytes, sh.tp)}
    if flagged(sh, "ep_dp_gather"):
        return dp_gather_slots(dense, attn)
    if flagged(sh, "ep_gather"):
        rows = gathered_tokens(sh, n, n_att, phase, False) * float(model.hidden)
        return {"moe_dispatch": (None, zero, zero, "all-gather", rows * dispatch_bytes(model),
                                 sh.tp),
                "moe_combine": (None, zero, zero, "reduce-scatter", rows * model.act_bytes,
                                sh.tp)}
    return {}


def _rows_of(sh, rows: np.ndarray, flag: str):
    """``sh`` with only ``rows`` (indices), flagged (its field ``flag``) for an exchange."""
    nc = np.asarray(sh.tp).shape[0]
    out = {}
    for f in fields(sh):
        v = getattr(sh, f.name)
        if isinstance(v, np.ndarray) and v.ndim and v.shape[0] == nc:
            v = v[rows]
        out[f.name] = v
    out[flag] = 1.0
    return replace(sh, **out)


def _subset(x, rows, nc):
    """``x`` (an array with a row per configuration, or one row for every row) at
    ``rows``."""
    if x is None or not isinstance(x, np.ndarray) or x.ndim < 2 or x.shape[0] != nc or nc == 1:
        return x
    return x[rows]


def cheaper_exchange(body, model, configs, sh, plain: bool, batches, b, paired: bool,
                     busiest, grid, *, costs, pipeline=None, subset=None, **kw):
    """``grid`` (the all-to-all schedule's, from ``body``, :func:`compute.roofline.
    grid_body`) with each cell of the rows :func:`allreduce_rows`, :func:`gather_rows` and
    :func:`~compute.moe_dp_gather.dp_gather_rows` give taking the all-reduce, vLLM's gather
    or SGLang's gather where its step is faster: those rows evaluated again by ``body``
    with ``Shards.ep_allreduce``, ``Shards.ep_gather`` or ``Shards.ep_dp_gather`` (or formed
    from the grid's stages, below; the same stage work, collective model and stage times),
    every stage's figures taken from the faster one, cell by cell; the stages whose collective differs carry a
    :class:`~compute.dp_collectives.CellOps`. Each is chosen on the serial steps, so the
    stages are those of the faster serial step with two-batch overlap as without; the
    all-reduce exchange's overlapped step is then its own, but the gather runs no two-batch
    overlap (vLLM's ``allgather_reducescatter`` prepare/finalize is not asynchronous, and
    its dual-batch overlap asserts so; SGLang's two-batch overlap needs DeepEP): it is
    evaluated without, never for two-batch overlap's micro-batches (``busiest`` given), and
    a cell taking it keeps the all-to-alls' overlapped step where that is faster still.
    Under an engine profile naming its engine's exchanges (``moe_exchanges``,
    :mod:`compute.profiles`), only those are evaluated.
    ``grid`` itself where no cell changes, else ``grid`` with its stage arrays updated in
    place (``grid`` is ``body``'s, made for this call, and owns them). ``costs``: the
    grid's collective costing (:func:`compute.roofline._network_times`); ``pipeline``: the
    functions :func:`_piped_gather` forms pipelined rows with (None: those rows evaluated
    by ``body``); ``subset``: :func:`compute.grid_parts.stage_subset` and ``mlp_subset``,
    with which SGLang's gather is formed from the grid's stages (:mod:`compute.moe_dp_cells`),
    and ``exchange_subset``, with which the all-reduce's is, and SGLang's where its slots
    are not the dense layers' stages (where :func:`_formable`; None, or without the third:
    the all-reduce's rows evaluated by ``body``);
    ``kw``: the rest of ``body``'s arguments."""
    if plain:
        return grid
    gpu = kw.pop("gpu")
    options = kw.pop("options")
    # an engine profile's exchanges (compute.profiles: the engine's own), else every one
    runs = (options.profile.moe_exchanges if options.profile is not None else ()) or EXCHANGES
    # SGLang's gather last: the vLLM gather's cells are formed from the all-to-alls' stages
    for flag, rows in (("ep_allreduce", allreduce_rows(model, sh)),
                       ("ep_gather", None if busiest is not None else gather_rows(model, sh)),
                       ("ep_dp_gather", None if busiest is not None else
                        dp_gather_rows(model, sh))):
        if rows is None or not rows.any() or EXCHANGES[_FLAGS[flag]] not in runs:
            continue
        if flag == "ep_allreduce":   # dense_mlp_tp: for attention DP rows, which these are not
            opts = options if options.dense_mlp_tp is None else replace(options,
                                                                          dense_mlp_tp=None)
        else:                        # no two-batch overlap (above)
            opts = options if not options.two_batch_overlap else replace(
                options, two_batch_overlap=False)
        idx, cols, nc, known, slots = np.flatnonzero(rows), None, len(configs), {}, None
        if _formable(flag, subset, pipeline, paired, b, opts):
            # formed from the grid's own stages (a grid of SGLang's rows evaluated again
            # cost the 16,384-GPU compare 8 s of CPU), but the cells fitting under this
            # exchange only, which the grid did not time
            alt, stages, extra = dp_gather_cells(
                grid, model, gpu, configs, _rows_of(sh, idx, flag), idx, b, opts,
                kw["workload"], kw["skew"], kw["comm"], costs, subset, pipeline,
                kw["time_unfit"])
            grid = take_faster(grid, alt, idx, None, stages, _FLAGS[flag])
            del alt
            if extra is None:
                continue
            # those rows and batches, and a row running each stage the rows run (a grid's
            # stages are those its rows run: the same as evaluating every row)
            cols, keep = np.flatnonzero(extra.any(axis=0)), extra.any(axis=1)
            ran = grid.counts[:, idx] > 0
            for k in range(ran.shape[0]):
                if ran[k].any() and not ran[k, keep].any():
                    keep[np.argmax(ran[k])] = True
            idx, extra = idx[keep], extra[keep][:, cols]
        if flag == "ep_gather":   # only the pipelined rows and batches where it may be faster
            grid, idx, cols, known, slots = _gather_cells(grid, model, configs, sh, idx, paired,
                                                          costs, kw)
            if not idx.size:
                continue
        bs, bb = batches[idx] if paired else batches, _subset(b, idx, nc)
        if cols is not None:
            bs, bb = bs[cols], bb[:, cols]
        if slots is not None and pipeline is not None and not paired and bb.shape[1] > 1:
            # the pipelined rows from the grid's own stage times (a grid of them evaluated
            # again cost the 16,384-GPU compare 2.4 s of CPU and its peak 0.2 GB)
            alt = _piped_gather(grid, model, gpu, _rows_of(sh, idx, flag), idx, cols, bb,
                                slots, opts, kw["workload"], kw["skew"], pipeline)
        else:
            alt = body(model, gpu, tuple(configs[i] for i in idx), _rows_of(sh, idx, flag),
                       False, bs, bb, paired=paired, busiest=_subset(busiest, idx, nc),
                       options=opts, **known, **kw)
        if flag != "ep_gather" and cols is not None:   # only the cells left above
            alt = replace(alt, fits=np.broadcast_to(alt.fits, extra.shape) & extra)
        # the gather's other stages are the grid's own but for the pipeline's wait
        grid = take_faster(grid, alt, idx, cols, None if flag != "ep_gather" else (
            "moe_dispatch", "moe_combine", "pp_send", "pipeline_wait"), _FLAGS[flag])
    return grid


def _formable(flag: str, subset, pipeline, paired: bool, b, options) -> bool:
    """True where the cells of exchange ``flag`` are formed from the grid's own stages
    (:func:`compute.moe_dp_cells.dp_gather_cells`) rather than its rows evaluated again:
    SGLang's DP-attention gather (``subset``'s first two functions) and the all-reduce
    (its third, :func:`compute.grid_parts.exchange_subset`), on a grid of one row of
    batches, not ``paired``, without ``overlap_collectives`` (an all-reduce hidden behind
    ``mlp_down``, whose time changes) and for the all-reduce without two-batch overlap (its
    overlapped step is its own: that grid's halves evaluated)."""
    if subset is None or pipeline is None or paired or b.shape[0] != 1 or (
            options.mode == "overlap" and options.overlap_collectives):
        return False
    if flag == "ep_allreduce":
        return len(subset) > 2 and not options.two_batch_overlap
    return flag == "ep_dp_gather"


def _gather_cells(grid, model, configs, sh, idx, paired: bool, costs, kw) -> tuple:
    """The gather exchange on ``grid``'s rows ``idx`` (the all-to-alls'): its all-gather
    and reduce-scatter costed by the same ``comm`` on the same groups as the all-to-alls
    they stand for. Nothing else differs (the same stage work, the other collectives, the
    weights; the padding's activations only add), so the rows of one pipeline stage take
    it here, their steps the grid's stage times by their counts summed in the grid's
    order with the two slots' replaced (bit for bit what evaluating them again gives);
    of the pipelined rows, only the cells where either is faster may gain (a step grows
    with every stage's time), returned for evaluation as ``(grid, rows, columns, known,
    slots)`` (``columns`` None: every batch, for ``paired`` grids; ``known`` the body's
    argument giving the collective times; ``slots`` the two slots' ops, bytes and times
    in those cells, for :func:`_piped_gather`). Evaluating every row again
    cost the 16,384-GPU compare of bench_collectives 45% more CPU. ``costs``: the grid's
    collective costing (:func:`compute.roofline._network_times`)."""
    names = grid.stages
    kd, kc = names.index("moe_dispatch"), names.index("moe_combine")
    w = kw["workload"]
    sub = _rows_of(sh, idx, "ep_gather")
    micro = grid.micro_batches[idx].astype(float)    # whole: no cut prompts here
    adp = np.asarray(_per_row(sub, sub.attention_dp)[0]).reshape(-1, 1)
    n, n_att = micro * w.tokens_per_sequence, np.ceil(micro / adp) * w.tokens_per_sequence
    slots = exchange_slots(model, sub, 0.0, n, n_att, w.phase, None)
    at = (np.array([kd, kc])[:, None], idx[None, :])
    net = np.stack([np.broadcast_to(slots[k][4], micro.shape)
                    for k in ("moe_dispatch", "moe_combine")])
    ops = (slots["moe_dispatch"][3], slots["moe_combine"][3])
    fits = None if kw["time_unfit"] else np.broadcast_to(grid.fits[idx], micro.shape)
    times = costs(kw["comm"], ops, grid.groups[at], grid.counts[at], net, fits,
                           np.array([configs[i].gpus for i in idx]),
                           np.array([configs[i].tp for i in idx]))
    piped = np.array([configs[i].pp > 1 for i in idx])
    one = np.flatnonzero(~piped)
    if one.size:
        alt = _one_stage_gather(grid, idx[one], kd, kc, ops, net[:, one], times[:, one],
                                activation_bytes(model, _rows_of(sh, idx[one], "ep_gather"),
                                                 micro[one], w))
        grid = take_faster(grid, alt, idx[one], code=2)
    many = np.flatnonzero(piped)
    # dispatch and combine run as often in every pipeline stage (once an EP layer): a step
    # no faster where the two together are not (a near tie evaluated, the rounding of the
    # sums left to it; equal times change nothing)
    ta, tb = times[:, many], grid.network_time[np.array([kd, kc])][:, idx[many]]
    gain = (tb[0] + tb[1]) - (ta[0] + ta[1])
    may = (grid.counts[kd, idx[many]][:, None] * gain > -1e-9 * np.abs(
        serial_step(grid)[idx[many]])) & ((ta[0] != tb[0]) | (ta[1] != tb[1]))
    keep = may.any(axis=1)
    rows = many[keep]
    cols = None if paired else np.flatnonzero(may[keep].any(axis=0))
    at = (idx[rows], slice(None)) if cols is None else np.ix_(idx[rows], cols)
    slot = {"moe_dispatch": times[0, rows], "moe_combine": times[1, rows]}

    def known(stages):
        """The evaluated cells' collective times: the two slots' as costed here, the other
        stages' the grid's own (the same collectives, costed cell by cell), but the
        pipeline's wait (no collective; the grid's holds its share of the wait)."""
        out = []
        for s in stages:
            if s in slot:
                out.append(slot[s] if cols is None else slot[s][:, cols])
            elif s == "pipeline_wait":
                out.append(np.zeros(grid.network_time[0][at].shape))
            else:
                out.append(grid.network_time[names.index(s)][at])
        return np.stack(out)

    sel = (lambda x: x) if cols is None else (lambda x: x[:, cols])
    slots = (ops, tuple(sel(net[j, rows]) for j in (0, 1)),
             tuple(sel(times[j, rows]) for j in (0, 1)))
    return grid, idx[rows], cols, {"known": known}, slots


def _piped_gather(grid, model, gpu, sh, idx, cols, b, slots, options, workload, skew,
                  pipeline):
    """The gather exchange's figures on ``grid``'s pipelined rows ``idx`` (columns ``cols``,
    None: every one; ``b`` their batches, ``sh`` their :class:`~compute.sharding.Shards` flagged
    ``ep_gather``) formed from the grid's own stage times as
    :func:`compute.roofline._one_exchange` forms them evaluating those cells again, bit for
    bit (every other stage the same there): ``slots`` (:func:`_gather_cells`) the two
    slots' ops, bytes and times; the pass and each resource's busy time summed over the
    stages these rows run, in order (:func:`compute.grid_parts.stage_times`), the slowest
    pipeline stage (:func:`compute.pipeline_time.slowest_stage`), the pipeline's latency
    and wait (:func:`compute.pipeline_time.pipeline_latency`), the grid's fixed overhead and
    the micro-batch's activations (the padding's in decode). For a grid of several batches,
    not ``paired`` (where stage_times forms those busy times). What
    :func:`~compute.exchange_take.take_faster` asks: the two slots and ``pipeline_wait``
    (the other stages are the grid's own).
    ``pipeline``: :func:`compute.pipeline_time.slowest_stage` and ``pipeline_latency``,
    :func:`compute.grid_parts.mlp_kind_gap` and ``attention_kind_times`` (modules that
    import this one)."""
    ops, net, times = slots
    at = (idx, slice(None)) if cols is None else np.ix_(idx, cols)
    names = grid.stages
    kd, kc, kw = (names.index(s) for s in ("moe_dispatch", "moe_combine", _PIPELINE_STAGES[1]))
    slot_n = {kd: times[0], kc: times[1]}
    slot_t = {kd: times[0] + 0.0, kc: times[1] + 0.0}   # network-bound, as stage_times forms
    slot_op = {kd: ops[0], kc: ops[1]}
    keep = [k for k in range(len(names)) if grid.counts[k, idx].any()]   # the body's stages
    c3 = grid.counts[keep][:, idx][:, :, None]

    def stage(k):
        return slot_t[k] if k in slot_t else grid.stage_time[k][at]

    pass_t, busy = None, [None, None, None]
    for j, k in enumerate(keep):
        if names[k] in _PIPELINE_STAGES:
            continue
        term = c3[j] * stage(k)
        pass_t = term if pass_t is None else pass_t + term
        op = slot_op.get(k, grid.ops[k])
        works = not op or names[k] in ("embedding", "lm_head")
        for r, used in enumerate((works, works, op)):
            if used:
                part = (slot_n[k] if k in slot_n else grid.network_time[k][at]) if r == 2 \
                    else (grid.compute_time, grid.memory_time)[r][k][at]
                term = c3[j] * part
                busy[r] = term if busy[r] is None else busy[r] + term

    micro, st, bound, parts, latency, interval, overhead = pipelined(
        grid, model, gpu, sh, at, b, keep, c3, pass_t, busy, stage, options, workload, skew,
        pipeline)
    shape = pass_t.shape
    w, kv = grid.weights[at], grid.kv_cache[at]
    act = activation_bytes(model, sh, micro, workload)
    three = (kd, kc, kw)

    def of(mine):   # the three stages' figures: ``mine``, else the grid's own
        return [mine.get(k, GRID_OWN) for k in three]

    return SimpleNamespace(
        stages=tuple(names[k] for k in three), ops=(ops[0], ops[1], grid.ops[kw]),
        flops=of({}), hbm_bytes=of({}), net_bytes=of({kd: net[0], kc: net[1]}),
        compute_time=of({kw: parts[0][1]}), memory_time=of({kw: parts[1][1]}),
        network_time=of({kd: times[0], kc: times[1], kw: parts[2][1]}),
        stage_time=of({kd: slot_t[kd], kc: slot_t[kc], kw: st[1]}),
        bound=np.stack([np.full(shape, 2, dtype=np.int8), np.full(shape, 2, dtype=np.int8),
                        bound[1]]),
        latency=latency, overhead=overhead, two_batch_latency=None, two_batch_hidden=None,
        interval=interval, weights=w, kv_cache=kv,
        activations=np.broadcast_to(act, shape), fits=(w + kv + act) <= grid.usable)


def _one_stage_gather(grid, rows, kd, kc, ops, net, times, act):
    """The gather exchange's figures on ``grid``'s rows ``rows`` (one pipeline stage each):
    the slots ``moe_dispatch`` and ``moe_combine`` running ``ops`` on ``net`` bytes in
    ``times`` (network-bound, their stage times ``times + 0.0`` as
    :func:`compute.grid_parts.stage_times` forms them), the step the stages' times by their
    counts summed in order (the pipeline's own stages left out) plus the grid's fixed
    overhead, the activations ``act`` (the padding's) and the fit so formed; what the
    :func:`~compute.exchange_take.take_faster` of a grid asks of them (the other stages
    are the grid's own)."""
    slot_t = times + 0.0
    step = None
    for k, name in enumerate(grid.stages):
        if name in _PIPELINE_STAGES:
            continue
        st = slot_t[0] if k == kd else slot_t[1] if k == kc else grid.stage_time[k][rows]
        term = grid.counts[k, rows][:, None] * st
        step = term if step is None else step + term
    overhead = None if grid.overhead is None else grid.overhead[rows]
    latency = step if overhead is None else step + overhead
    w, kv = grid.weights[rows], grid.kv_cache[rows]
    shape = latency.shape
    own = [GRID_OWN, GRID_OWN]   # the slots' work and its times: the grid's own
    return SimpleNamespace(
        stages=(grid.stages[kd], grid.stages[kc]), ops=ops,
        flops=own, hbm_bytes=own, net_bytes=net, compute_time=own, memory_time=own,
        network_time=times, stage_time=slot_t, bound=np.full(times.shape, 2, dtype=np.int8),
        latency=latency, overhead=overhead, two_batch_latency=None, two_batch_hidden=None,
        interval=None if grid.interval is None else latency,   # one stage: the step
        weights=w, kv_cache=kv, activations=np.broadcast_to(act, shape),
        fits=(w + kv + act) <= grid.usable)
