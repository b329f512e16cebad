"""Does a configuration fit in HBM? Bytes per GPU, vectorised over TP degrees x batches.

Needed per GPU = weights (the GPU's shard; norms, biases and learned positions replicated;
replicated KV heads counted on every GPU holding them; a vision-language model's vision tower
split over the attention's TP group) + KV cache for ``batch`` sequences at
the longest context of the step (prefill: the prompt; decode: the context) + activation
workspace. Usable = HBM capacity x (1 - reserve).

The activation workspace is, for every token of the step, the two residual-stream buffers
(``2 x hidden``) plus the widest intermediate of a layer (QKV output, the MLP's up/gate
output, or the attention output), in the activation dtype; plus fp32 logits of the
vocabulary shard for each sequence (with attention data parallelism, for each of the
busiest attention group's ``ceil(batch / attention_dp)`` sequences, whose LM head holds
``vocab / (tp / attention_dp)`` rows per GPU: :func:`compute.parallel.layout`). Prefill is not chunked, so huge prefill batches run out
of memory here, as they would in a server without chunked prefill.

The default **reserve is 10%** of HBM, the share vLLM leaves outside its memory pool by
default (``gpu_memory_utilization=0.9``): CUDA context, NCCL buffers, CUDA graphs and
fragmentation.

>>> import numpy as np
>>> from compute.models import get_model
>>> from compute.phases import Workload
>>> from compute.sharding import shards
>>> m = get_model("Llama-3-8B")
>>> w = weight_bytes(m, shards(m, [1]))
>>> float(w[0, 0]) == m.parameters * 2      # bf16, TP 1: every parameter once
True
>>> kv = kv_cache_bytes(m, shards(m, [1]), np.array([[1.0]]), Workload("decode", context=1000))
>>> float(kv[0, 0]) == 32 * 2 * 8 * 128 * 2 * 1000   # layers x (K,V) x heads x dim x bytes x tokens
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from compute.parallel import stage_mix
from compute.results import MemoryFit
from compute.roofline_options import DEFAULT_RESERVE, check_reserve
from compute.sharding import Shards
from compute.stage_mlp import dispatch_bytes

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Workload

__all__ = ["activation_bytes", "activation_bytes_per_token",
           "kv_cache_bytes", "memory_fit", "stage_kv_layers", "stage_weight_bytes",
           "weight_bytes"]

def _mla_attention_weights(model: ModelSpec, sh: Shards):
    """MLA weights of one layer per GPU: the down-projections (query and latent) and their
    norms replicated, the up-projections and the output split by heads."""
    h, d, c, r, ql, v = (model.hidden, model.head_dim, model.kv_lora_rank,
                         model.qk_rope_head_dim, model.q_lora_rank, model.v_dim)
    a = sh.heads
    q = (h * ql + model.norm_elements(ql) + ql * a * d) if ql else h * a * d
    kv = h * (c + r) + model.norm_elements(c) + c * a * (d - r + v)
    return q + kv + a * v * h


def weight_bytes(model: ModelSpec, sh: Shards) -> np.ndarray:
    """Weight bytes per GPU, shape ``(nt, 1)`` (the MLPs in ``model.mlp_weight_bytes``, the
    rest in ``model.weight_bytes``). With pipeline stages, those of the stage with the most
    weights (:func:`stage_weight_bytes`; :func:`memory_fit` takes the fullest stage, weights
    and KV cache together)."""
    layer, dense, embed, _, _, total = _weight_terms(model, sh)
    body = model.layers * layer
    if model.dense_layers:
        body = model.moe_layers * layer + model.dense_layers * dense
    whole = total(body, embed) + _vision_bytes(model, sh)
    if sh.plain or not np.any(sh.pp > 1):
        return whole
    stages = stage_weight_bytes(model, sh)
    return np.where(sh.pp > 1, np.nanmax(stages, axis=1, keepdims=True), whole)


def splits_shared(model: ModelSpec) -> bool:
    """True where the exchanges that split the shared experts over ``tp`` (the all-reduce,
    SGLang's DP-attention gather: ``Shards.ep_allreduce``, ``Shards.ep_dp_gather``) change
    ``model``'s weights per GPU: it has shared experts. The only term of
    :func:`memory_fit` those flags change (:func:`_weight_terms` reads them here alone)."""
    return bool(model.shared_ffn)


def _weight_terms(model: ModelSpec, sh: Shards) -> tuple:
    """``(moe layer, dense layer, embed, row, head_bias, total)``: the bytes per GPU of one
    layer (an MoE one in an MoE model) and of one of an MoE model's dense layers, the token
    embedding and LM head's elements (one matrix when tied, with the head's bias), one such
    matrix's elements (``sh.vocab x hidden``), the LM head bias's elements (``sh.vocab``,
    split and stored with the head, as :func:`compute.stages.stage_work` reads it; 0
    without :attr:`~compute.model_spec.ModelSpec.lm_head_bias`), and ``total(body,
    elements)``: ``body`` bytes of layers plus that many embedding elements, the positions
    and the norms outside the layers."""
    h, d = model.hidden, model.head_dim
    if model.is_mla:
        attn = _mla_attention_weights(model, sh)
    else:
        qkv_cols = (sh.heads + 2 * sh.kv_heads) * d
        # the query and key norms taken as replicated: 2 x head_dim over head_dim (Qwen3,
        # Gemma-3), (heads + kv_heads) x head_dim over the heads' widths (OLMo-2, 8,192
        # a layer); Command R+'s per-head scales (13,312 a layer) may be split by head
        # under TP: over-counted by at most that a layer
        attn = h * qkv_cols + sh.heads * d * h + model.qk_norm
        attn = attn + (qkv_cols if model.qkv_biased else 0) + (h if model.o_biased else 0)

    def mlp(cols: np.ndarray | int) -> np.ndarray | int:
        up = (2 if model.gated_mlp else 1) * cols
        return h * up + cols * h + ((up + h) if model.mlp_biased else 0)

    # bytes: the MLPs (experts, shared experts, dense MLPs) in their own dtype, the rest in
    # the weights' dtype
    wb, mb = model.weight_bytes, model.mlp_weight_bytes
    gate = h * wb if model.shared_expert_gate else 0
    router = h * model.experts * wb if model.is_moe else 0
    shared = mlp(sh.shared_ffn) * mb + gate if model.shared_ffn else 0
    norms = model.layer_norms * model.norm_parameters * wb
    attn = attn * wb
    layer = attn + model.experts * mlp(sh.ffn) * mb + router + shared + norms  # dense, or MoE
    if not sh.plain and model.is_moe:  # EP: a group's ceil(experts / ep) expert slots per GPU
        # (redundant copies included, compute.parallel.expert_slots), shared replicated, or
        # split over tp where the layer's exchange is the all-reduce (compute.moe_exchange)
        # or SGLang's DP-attention gather (compute.moe_dp_gather)
        full_shared = mlp(model.shared_ffn) * mb + gate if model.shared_ffn else 0
        split = np.asarray(sh.ep_allreduce) + np.asarray(sh.ep_dp_gather)
        if splits_shared(model) and np.any(split):
            full_shared = np.where(split > 0, shared, full_shared)
        ep_layer = attn + sh.expert_slots * mlp(sh.expert_ffn) * mb + router \
            + full_shared + norms
        layer = np.where(sh.ep > 1, ep_layer, layer)
    dense = (attn + mlp(sh.dense_ffn) * mb + norms) if model.dense_layers else 0
    row = sh.vocab * h
    head_bias = sh.vocab if model.lm_head_bias else 0
    embed = row * (1 if model.tied_embeddings else 2) + head_bias
    other = model.learned_positions * h + model.norm_parameters
    if model.embedding_norm:
        other += model.norm_parameters
    eb = model.embedding_bytes  # the token embedding, positions and LM head

    def total(body, elements):
        if eb == wb:
            return body + (elements + other) * wb
        norms = other - model.learned_positions * h
        return body + (elements + model.learned_positions * h) * eb + norms * wb

    return layer, dense, embed, row, head_bias, total


def _vision_bytes(model: ModelSpec, sh: Shards):
    """Bytes per GPU of the vision tower (:attr:`~compute.models.ModelSpec.vision_bytes`)
    split over the attention's TP group, as vLLM shards a vision
    encoder's linear layers by default (its patch embedding and norms, under 0.5% of
    Qwen2-VL's and CLIP's towers, taken as split too); 0 without a tower."""
    if not model.vision_parameters:
        return 0.0
    return model.vision_bytes * sh.attention_dp / sh.tp


def stage_weight_bytes(model: ModelSpec, sh: Shards) -> np.ndarray:
    """Weight bytes per GPU of each pipeline stage, shape ``(nt, max pp)`` (NaN past a
    row's stages): the layers the stage holds (:func:`compute.parallel.stage_mix`: an MoE
    model's dense layers where they sit), the token embedding on the first stage and the
    LM head on the last (each ``sh.vocab x hidden``; both on a single stage, one matrix
    when tied), the positions and the norms outside the layers counted on every stage; a
    vision tower (:func:`_vision_bytes`) on the first."""
    layer, dense, embed, row, head_bias, total = _weight_terms(model, sh)
    pps = np.asarray(sh.pp, dtype=float).reshape(-1)
    n = max(len(np.atleast_1d(sh.tp)), len(pps))
    pps = np.broadcast_to(pps, (n,))
    width = int(pps.max())
    out = np.full((n, width), np.nan)
    layer, dense, embed, row, head_bias = (
        np.broadcast_to(np.asarray(x, dtype=float).reshape(-1, 1), (n, 1))
        for x in (layer, dense, embed, row, head_bias))
    for p in np.unique(pps).astype(int).tolist():
        rows = np.flatnonzero(pps == p)
        mix = stage_mix(model, p)                 # (p, 3): layers, dense, windowed
        ends = np.zeros(p)
        ends[0] += 1.0
        ends[-1] += 1.0                           # embedding on the first, LM head on the last
        last = np.zeros(p)
        last[-1] = 1.0                            # the LM head's bias with the head
        elements = row[rows] * ends + head_bias[rows] * last if p > 1 \
            else embed[rows] * np.ones(1)
        out[rows, :p] = total((mix[:, 0] - mix[:, 1]) * layer[rows] + mix[:, 1] * dense[rows],
                              elements)
    if model.vision_parameters:
        vision = np.broadcast_to(np.asarray(_vision_bytes(model, sh), dtype=float)
                                 .reshape(-1, 1), (n, 1))
        out[:, :1] += vision
    return out


def kv_cache_bytes(model: ModelSpec, sh: Shards, batch: np.ndarray, workload: Workload
                  ) -> np.ndarray:
    """KV-cache bytes per GPU for ``batch`` sequences at ``workload.kv_tokens`` each (in
    decode a sliding-window layer keeps only the last ``sliding_window`` of them; a prefill
    step holds the whole prompt in every layer while it runs:
    :meth:`~compute.models.ModelSpec.kv_tokens_in_step`). With
    MLA every GPU of an attention group holds the whole latent of the group's sequences
    (``kv_lora_rank + qk_rope_head_dim`` per token and layer, not split by TP). A pipeline
    stage holds the cache of its own layers for every sequence in flight (here the stage
    with the most; :func:`memory_fit` takes the fullest stage, weights and cache
    together: :func:`stage_kv_layers`); with attention data parallelism a GPU holds only
    its group's ``ceil(batch / attention_dp)`` sequences."""
    layers, seqs = model.layers, batch
    if not sh.plain:
        layers, seqs = model.layers / sh.pp, np.ceil(batch / sh.attention_dp)
    held = model.kv_tokens_in_step(workload)  # less in windowed layers in decode
    if not sh.plain and np.any(sh.pp > 1):    # a stage's layers x tokens, over the layers
        most = np.nanmax(stage_kv_layers(model, sh, workload), axis=1, keepdims=True)
        held = np.where(sh.pp > 1, most / layers, held)
    if model.is_mla:
        per_token = layers * model.kv_elements_per_token * model.kv_bytes
        if type(batch) is float:  # one configuration and batch
            return per_token * seqs * held
        return np.broadcast_to(per_token * seqs * held,
                               np.broadcast_shapes(sh.tp.shape, batch.shape))
    per_token = layers * 2 * sh.kv_heads * model.head_dim * model.kv_bytes
    return per_token * seqs * held


def _kv_per_layer_token(model: ModelSpec, sh: Shards):
    """KV-cache bytes per GPU one token adds to one layer."""
    if model.is_mla:
        return model.kv_elements_per_token * model.kv_bytes
    return 2 * sh.kv_heads * model.head_dim * model.kv_bytes


def stage_kv_layers(model: ModelSpec, sh: Shards, workload: Workload) -> np.ndarray:
    """KV-cache entries one sequence keeps on each pipeline stage, summed over the stage's
    layers, shape ``(nt, max pp)`` (NaN past a row's stages): the stage's full-attention
    layers hold the step's tokens, its windowed layers (:func:`compute.parallel.stage_mix`)
    what a windowed layer holds (:meth:`~compute.models.ModelSpec.kv_tokens_in_step` of a
    model all of whose layers are windowed: ``min(context, window)`` in decode, the prompt
    in prefill)."""
    full_t = workload.kv_tokens
    win_t = min(full_t, model.sliding_window) if (model.sliding_window
                                                  and workload.phase == "decode") else full_t
    pps = np.asarray(sh.pp, dtype=float).reshape(-1)
    n = max(len(np.atleast_1d(sh.tp)), len(pps))
    pps = np.broadcast_to(pps, (n,))
    out = np.full((n, int(pps.max())), np.nan)
    for p in np.unique(pps).astype(int).tolist():
        mix = stage_mix(model, p)
        out[pps == p, :p] = (mix[:, 0] - mix[:, 2]) * full_t + mix[:, 2] * win_t
    return out


def activation_bytes(model: ModelSpec, sh: Shards, batch: np.ndarray, workload: Workload
                    ) -> np.ndarray:
    """Activation workspace bytes per GPU (see the module docstring)."""
    tokens = batch * workload.tokens_per_sequence
    seqs = batch if sh.plain else np.ceil(batch / sh.attention_dp)  # the group's, for logits
    out = tokens * activation_bytes_per_token(model, sh) + seqs * sh.vocab * 4.0
    if not sh.plain and np.any(sh.ep_gather) and workload.phase == "decode":
        # the gather exchange (compute.moe_exchange) holds every group's rows, padded to the
        # busiest group's: the n rows within the residual-stream buffers counted above for
        # every token, the padding's in the gathered input and the experts' output besides
        pad = (seqs * sh.attention_dp - batch) * workload.tokens_per_sequence
        out = out + np.where(np.asarray(sh.ep_gather) > 0, pad, 0.0) * float(model.hidden) \
            * (dispatch_bytes(model) + model.act_bytes)
    return out


def activation_bytes_per_token(model: ModelSpec, sh: Shards) -> np.ndarray:
    """Activation workspace bytes per GPU and token of the step, without the logits (which
    :func:`activation_bytes` adds per sequence); shape ``(nt, 1)``, or a float for a
    :class:`Shards` of floats."""
    up = 2 if model.gated_mlp else 1
    if model.is_mla:  # queries and the new latent; prefill's decompressed keys and values
        r = model.qk_rope_head_dim
        attn = np.maximum(sh.heads * model.head_dim + model.kv_elements_per_token,
                          sh.heads * (model.head_dim - r + model.v_dim))
    else:
        attn = (sh.heads + 2 * sh.kv_heads) * model.head_dim
    mlp = up * sh.ffn * model.experts_per_token
    if not sh.plain and model.is_moe:  # EP: the token copies routed to this GPU's experts
        mlp = np.where(sh.ep > 1, up * sh.expert_ffn * model.experts_per_token / sh.ep, mlp)
    if model.shared_ffn:
        mlp = mlp + up * sh.shared_ffn
    if model.dense_layers:   # data-parallel dense MLPs: the GPU's own n / tp of the n tokens
        dense = up * sh.dense_ffn
        if np.any(sh.dense_dp):
            dense = np.where(sh.dense_dp > 0, dense / sh.tp, dense)
        mlp = np.maximum(mlp, dense)
    widest = np.maximum(attn, mlp)
    return (2 * model.hidden + widest) * model.act_bytes


def memory_fit(model: ModelSpec, gpu: GpuSpec, sh: Shards, batch: np.ndarray, workload: Workload,
               reserve: float = DEFAULT_RESERVE, micro_batch: np.ndarray | None = None,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, np.ndarray]:
    """Weights, KV cache and activations per GPU (arrays broadcast to ``(nt, nb)``), the
    usable bytes, and the mask of configurations that fit. The KV cache holds ``batch``
    sequences; the activation workspace is that of one micro-batch of ``micro_batch``
    sequences (default ``batch``: no pipeline). With pipeline stages, the weights and the
    KV cache are those of the fullest stage (the most weights plus cache at that batch:
    :func:`stage_weight_bytes`, :func:`stage_kv_layers`), which must fit; the activation
    workspace is taken as the same on every stage."""
    reserve = check_reserve(reserve)
    shape = np.broadcast_shapes(sh.tp.shape, batch.shape)
    w = np.broadcast_to(weight_bytes(model, sh), shape)
    kv = kv_cache_bytes(model, sh, batch, workload)
    if not sh.plain and np.any(sh.pp > 1):
        w, kv = _fullest_stage(model, sh, batch, workload, w, kv, shape)
    act = activation_bytes(model, sh, batch if micro_batch is None else micro_batch, workload)
    usable = gpu.hbm_capacity * (1.0 - reserve)
    fits = (w + kv + act) <= usable
    return w, kv, act, usable, fits


def _fullest_stage(model, sh, batch, workload, w, kv, shape):
    """``(w, kv)`` with the pipelined rows' weights and KV cache those of the stage holding
    the most of both together at each batch."""
    rows = np.flatnonzero(np.broadcast_to(np.asarray(sh.pp, dtype=float).reshape(-1, 1),
                                          (shape[0], 1))[:, 0] > 1)
    stage_w = stage_weight_bytes(model, sh)[rows]                  # (r, S)
    per_seq = stage_kv_layers(model, sh, workload)[rows]           # (r, S)
    unit = np.broadcast_to(np.asarray(_kv_per_layer_token(model, sh), dtype=float)
                           .reshape(-1, 1), (shape[0], 1))[rows]   # (r, 1)
    seqs = np.ceil(batch / sh.attention_dp)
    seqs = np.broadcast_to(seqs, shape)[rows]                      # (r, nb)
    per_kv = unit * per_seq                                        # (r, S)
    # the fullest stage, one stage at a time (no (r, S, nb) arrays: at cluster scale those
    # were hundreds of MB of fresh pages), as argmax picks it over the stages: the first of
    # the largest, or the first NaN
    for s in range(per_kv.shape[1]):
        kv_s = per_kv[:, s:s + 1] * seqs                           # (r, nb)
        need = stage_w[:, s:s + 1] + kv_s
        need[np.isnan(kv_s)] = -np.inf
        if s == 0:
            top, w_top, kv_top = need, np.repeat(stage_w[:, :1], need.shape[1], axis=1), kv_s
            continue
        better = need > top
        better |= np.isnan(need) & ~np.isnan(top)
        np.copyto(top, need, where=better)
        np.copyto(w_top, stage_w[:, s:s + 1], where=better)
        np.copyto(kv_top, kv_s, where=better)
    w, kv = np.array(w, dtype=float), np.array(np.broadcast_to(kv, shape), dtype=float)
    w[rows] = w_top
    kv[rows] = kv_top
    return w, kv


def describe_fit(model: ModelSpec, gpu: GpuSpec, tp: int, batch: int, weights: float, kv: float,
                 act: float, reserve: float, label: str | None = None) -> MemoryFit:
    """A :class:`MemoryFit` for one configuration, with the reason when it does not fit
    (``label`` names the configuration, default ``TP {tp}``)."""
    label = label or f"TP {tp}"
    fit = MemoryFit(weights=float(weights), kv_cache=float(kv), activations=float(act),
                    capacity=gpu.hbm_capacity, reserve_fraction=reserve)
    if fit.fits:
        return fit
    gb = 1e9
    if fit.weights > fit.usable:
        why = (f"{model.name} weights alone need {fit.weights / gb:.1f} GB per GPU at {label} "
               f"> {fit.usable / gb:.1f} GB usable on {gpu.name} ({gpu.hbm_capacity / gb:.3g} GB "
               f"less {reserve:.0%} reserve)")
    else:
        why = (f"needs {fit.total / gb:.1f} GB per GPU at {label}, batch {batch} (weights "
               f"{fit.weights / gb:.1f} + KV cache {fit.kv_cache / gb:.1f} + activations "
               f"{fit.activations / gb:.1f} GB) > {fit.usable / gb:.1f} GB usable on {gpu.name}")
    return MemoryFit(weights=fit.weights, kv_cache=fit.kv_cache, activations=fit.activations,
                     capacity=fit.capacity, reserve_fraction=reserve, reason=why)
