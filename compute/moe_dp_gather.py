"""SGLang's DP-attention MoE layer without an all-to-all backend, one of the exchanges an
EP layer may take (:func:`compute.moe_exchange.cheaper_exchange`): every group's tokens
gathered to the stage's GPUs as for a tensor-parallel MLP, the experts and the shared
experts split over them.

With ``--moe-a2a-backend none`` (SGLang's default where DeepEP is not chosen) every
attention group's tokens are gathered to the stage's ``tp`` GPUs, the routed experts run
over the TP group (EP within it, each expert split over ``tp / e`` GPUs), the shared
experts split over ``tp``, and the output is reduce-scattered (or, for small decode
batches, all-reduced) back (``Shards.ep_dp_gather``; a cell's ``moe_exchange`` names it
``sglang-dp-gather``).

**What SGLang runs**, per MoE layer (sgl-project/sglang, python/sglang/srt):

* layers/communicator.py, ``LayerScatterModes._compute_mlp_mode``: a sparse layer's MLP
  runs ``SCATTERED`` (each GPU its own tokens, the dispatch outside the communicator)
  where ``get_moe_a2a_backend()`` is not ``none`` (DeepEP, Mooncake) or flashinfer's
  fp4 all-gather runs, else ``FULL``, as a dense layer's (``moe_dense_tp_size`` 1 aside):
  ``ScatterMode.FULL`` is the whole TP group, ``CommunicateContext.process_group_sizes``.
* before the MLP, ``CommunicateWithAllReduceAndLayerNormFn._gather_hidden_states_and_residual``:
  ``dp_gather_partial`` (layers/dp_attention.py) in the padding mode of the step
  (``DpPaddingMode.get_dp_padding_mode``: :func:`compute.dp_collectives.sum_len`):
  ``SUM_LEN`` (every prefill; decode where ``2 n < a n_a``) one all-reduce of the ``n``
  rows among ``tp``, ``MAX_LEN`` every group padded to the busiest's ``n_a`` and
  all-gathered among ``tp`` (``a n_a`` rows; with attention groups of ``tp / a > 1`` GPUs
  a reduce-scatter among the group first): :func:`compute.dp_collectives.dp_ops`,
  ``attn_tp_ops``, the dense layers' ``dp_gather`` and ``allreduce_attn``. The rows are the
  hidden states in the activations' dtype (bf16): nothing is quantized before the gather
  (the fp8 MoE kernel quantizes its own input), no scales travel.
* models/deepseek_v2.py, ``DeepseekV2MoE.forward_normal``: the router and top-k on every
  gathered row, the routed experts (``FusedMoE``: ``moe_ep_size x moe_tp_size = tp``), the
  shared experts (``DeepseekV2MLP`` with the TP group's rank and size, ``tp_size=1`` only
  for DeepEP, Mooncake or the fp4 all-gather; ``reduce_results=False``), then
  ``tensor_model_parallel_all_reduce`` of the sum unless ``use_reduce_scatter``
  (``LayerCommunicator.should_use_reduce_scatter``: ``MAX_LEN``).
* after it, ``CommunicateSummableTensorPairFn._scatter_hidden_states``:
  ``dp_reduce_scatter_tensor`` among ``tp`` (``MAX_LEN``; with groups of several GPUs an
  all-gather among the group after it) or ``dp_scatter``, a copy of the group's rows
  (``SUM_LEN``, after the all-reduce): the dense layers' ``dp_scatter`` and ``attn_gather``.
* no two-batch overlap: server_args.py refuses ``--enable-two-batch-overlap`` where
  ``moe_a2a_backend`` is ``none`` ("When enabling two batch overlap, moe_a2a_backend cannot
  be 'none'"); the LM head per group (``--enable-dp-lm-head``) as under the other
  exchanges.

So the EP layers' slots hold the dense layers' collectives (:func:`dp_gather_slots`):
``attn_scatter`` the group's reduce-scatter (``MAX_LEN``, groups of several GPUs; none in
``SUM_LEN`` cells), ``moe_dispatch`` the gather, ``moe_combine`` the scatter, ``dp_regather``
the group's all-gather; a cell's breakdown names the two among ``tp`` ``dp_gather_moe_ep``
and ``dp_scatter_moe_ep`` (:func:`compute.moe_exchange.shown_name`). The MLP work is the
all-reduce exchange's: the routed experts' copies of every one of the ``n`` tokens over
``e`` groups, the router on all ``n`` and the shared experts' ``1 / tp`` share on all ``n``
(:func:`compute.stage_mlp._mlp_work_ep`, ``replicated``), the dense layers'; the weights
hold the shared experts split over ``tp`` (:func:`compute.memory.weight_bytes`). The
padded rows' compute and buffers are not counted, as the dense layers' ``dp_gather``'s are
not (a lower bound). Rows whose dense MLPs run data-parallel (``Shards.dense_dp``) are
left to the other exchanges (their dense layers share the EP layers' slots).

**Where it is the cheaper** (per MoE layer and GPU, ``k = 1`` GPU a group, ``b`` the
bytes of a row of ``hidden`` activations, ``d`` the dispatch's bytes an element,
``G = a n_a`` the padded rows): on a ring SGLang's ``MAX_LEN`` sends ``2 (tp-1)/tp G b``,
vLLM's gather ``(tp-1)/tp G (d/2 + 1) b``, so never fewer bytes (equal where the experts
are bf16, ``d = 2``; DeepSeek-V3's fp8 ``d = 1.03125`` sends ``0.48 (tp-1)/tp G b`` less
with vLLM); ``SUM_LEN`` sends ``4 (tp-1)/tp n b`` in ``4 (tp - 1)`` steps against the
gather's ``(tp-1)/tp G (d/2 + 1) b`` in ``2 (tp - 1)``: fewer bytes only where ``4 n < (d/2
+ 1) G``, ``2 n < G`` in bf16 (exactly where SGLang takes ``SUM_LEN``), ``n < 0.38 G`` in
DeepSeek-V3's fp8. What it saves is HBM: each GPU reads ``1 / tp`` of the
shared experts where the other exchanges replicate them, ``(tp-1)/tp`` of DeepSeek-V3's
44.04 MB a layer in fp8 at TP 8, 38.54 MB: 8.03 us at 4.8 TB/s, 466 us over 58 layers
(decode, memory-bound); the router on every token costs ``2 n hidden experts`` FLOPs
more. So with shared experts it is taken in decode, the larger batches too
(DeepSeek-V3 on 8 H200, TP 8 x DP-attention 8 x EP 8, decode batch 64:
18.62 -> 18.20 ms); without them (Mixtral) its ``MAX_LEN`` cells never beat vLLM's gather
(the same bytes, a larger router), and only the unpadded ``SUM_LEN`` rows may gain, where
the collectives' latency terms allow (not on a ring). Prefill (``SUM_LEN``) mostly keeps
the others (DeepSeek-V3 at TP 8 x EP 4 x DP-attention 8, 8 prompts: vLLM's gather); a
large shared expert may outweigh its bytes there too (Llama-4-Maverick's 8,192 columns at
TP 16 x EP 16 x DP-attention 4, one prompt).
"""

from __future__ import annotations

import numpy as np

from compute.dp_collectives import _none_where

__all__ = ["dp_gather_rows", "dp_gather_slots"]


def dp_gather_rows(model, sh) -> np.ndarray:
    """Bool per row of ``sh``: an MoE model's expert-parallel configuration with DP
    attention and tensor-parallel dense MLPs (``Shards.dense_dp`` 0), whose EP layers may
    take SGLang's DP-attention gather; False for a plain-TP grid, without DP attention,
    and where ``sh`` is already flagged for an exchange.

    >>> from compute.models import get_model
    >>> from compute.parallel import Parallelism, layout
    >>> m = get_model("DeepSeek-V3")
    >>> dp_gather_rows(m, layout(m, [Parallelism(8, ep=8), Parallelism(8, ep=8,
    ...     attention_dp=8), Parallelism(8, attention_dp=8), Parallelism(16, ep=4,
    ...     attention_dp=2)])).tolist()
    [False, True, False, True]
    """
    nc = np.asarray(sh.tp).shape[0]
    if not model.is_moe or sh.plain or any(np.any(getattr(sh, f)) for f in (
            "ep_allreduce", "ep_gather", "ep_dp_gather")):
        return np.zeros(nc, dtype=bool)
    shape = np.asarray(sh.tp).shape
    ep, adp, dd = (np.broadcast_to(np.asarray(x, dtype=float).reshape(-1, 1), shape).ravel()
                   for x in (sh.ep, sh.attention_dp, sh.dense_dp))
    return (ep > 1) & (adp > 1) & (dd == 0)


def dp_gather_slots(dense: dict, attn: tuple) -> dict:
    """The EP layers' slots (:func:`compute.stages.stage_work`'s ``extra`` entries,
    ``(count, flops, hbm, op, bytes, group)``) under SGLang's DP-attention gather: the
    dense layers' ``dp_gather``, ``dp_scatter`` and ``attn_gather`` entries of ``dense``
    as ``moe_dispatch``, ``moe_combine`` and ``dp_regather``, and ``attn`` (the dense
    layers' ``allreduce_attn`` as SGLang runs it under DP attention: ``(op, bytes,
    group)``) as ``attn_scatter``, each op a name or a per-cell
    :class:`~compute.dp_collectives.CellOps`; the counts the all-to-all schedule's.

    >>> z = 0.0
    >>> dense = {"dp_gather": (None, z, z, "all-reduce", 14336.0, 8.0),
    ...          "dp_scatter": (None, z, z, "all-reduce", 14336.0, 8.0),
    ...          "attn_gather": (None, z, z, "all-gather", 14336.0, 1.0)}
    >>> s = dp_gather_slots(dense, ("all-reduce", 14336.0, 1.0))
    >>> [(k, s[k][3], s[k][4], s[k][5]) for k in sorted(s)]   # doctest: +NORMALIZE_WHITESPACE
    [('attn_scatter', 'all-reduce', 14336.0, 1.0), ('dp_regather', 'all-gather', 14336.0, 1.0),
     ('moe_combine', 'all-reduce', 14336.0, 8.0), ('moe_dispatch', 'all-reduce', 14336.0, 8.0)]
    """
    op, size, group = attn
    zero = dense["dp_gather"][1]
    return {"attn_scatter": (None, zero, zero, op, _none_where(op, size), group),
            "moe_dispatch": dense["dp_gather"], "moe_combine": dense["dp_scatter"],
            "dp_regather": dense["attn_gather"]}
