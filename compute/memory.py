"""Does a configuration fit in HBM? Bytes per GPU, vectorised over TP degrees x batches.

Needed per GPU = weights (the GPU's shard; norms, biases and learned positions replicated;
replicated KV heads counted on every GPU holding them) + KV cache for ``batch`` sequences at
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

from compute.errors import UserError
from compute.results import MemoryFit
from compute.sharding import Shards

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Workload

__all__ = ["DEFAULT_RESERVE", "activation_bytes", "activation_bytes_per_token", "check_reserve",
           "kv_cache_bytes", "memory_fit", "weight_bytes"]

#: Fraction of HBM left to the runtime (vLLM's default gpu_memory_utilization = 0.9).
DEFAULT_RESERVE = 0.10


def check_reserve(reserve: float) -> float:
    """Return ``reserve`` if it is a fraction in [0, 1), else raise :class:`UserError`."""
    if not (isinstance(reserve, int | float) and not isinstance(reserve, bool)
            and 0 <= reserve < 1):
        raise UserError(f"memory reserve must be a fraction in [0, 1), got {reserve!r}")
    return float(reserve)


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
    rest in ``model.weight_bytes``)."""
    h, d = model.hidden, model.head_dim
    if model.is_mla:
        attn = _mla_attention_weights(model, sh)
    else:
        qkv_cols = (sh.heads + 2 * sh.kv_heads) * d
        attn = h * qkv_cols + sh.heads * d * h
        if model.bias:
            attn = attn + qkv_cols + h
        elif model.qkv_bias:
            attn = attn + qkv_cols

    def mlp(cols: np.ndarray | int) -> np.ndarray | int:
        up = (2 if model.gated_mlp else 1) * cols
        return h * up + cols * h + ((up + h) if model.bias else 0)

    # bytes: the MLPs (experts, shared experts, dense MLPs) in their own dtype, the rest in
    # the weights' dtype
    wb, mb = model.weight_bytes, model.mlp_weight_bytes
    gate = h * wb if model.shared_expert_gate else 0
    router = h * model.experts * wb if model.is_moe else 0
    shared = mlp(sh.shared_ffn) * mb + gate if model.shared_ffn else 0
    norms = 2 * model.norm_parameters * wb
    attn = attn * wb
    layer = attn + model.experts * mlp(sh.ffn) * mb + router + shared + norms  # dense, or MoE
    plain = sh.plain
    if not plain and model.is_moe:  # EP: a group's ceil(experts / ep) expert slots per GPU
        # (redundant copies included, compute.parallel.expert_slots), shared replicated
        full_shared = mlp(model.shared_ffn) * mb + gate if model.shared_ffn else 0
        ep_layer = attn + sh.expert_slots * mlp(sh.expert_ffn) * mb + router \
            + full_shared + norms
        layer = np.where(sh.ep > 1, ep_layer, layer)
    body = model.layers * layer
    if model.dense_layers:
        body = model.moe_layers * layer + model.dense_layers * (attn + mlp(sh.dense_ffn) * mb
                                                                + norms)
    embed = sh.vocab * h * (1 if model.tied_embeddings else 2)
    if not plain:  # a pipeline stage holds its layers and the embedding or the LM head
        body = body / sh.pp
        embed = np.where(sh.pp > 1, sh.vocab * h, embed)
    other = model.learned_positions * h + model.norm_parameters
    if model.embedding_norm:
        other += model.norm_parameters
    eb = model.embedding_bytes  # the token embedding, positions and LM head
    if eb == wb:
        return body + (embed + other) * wb
    norms = other - model.learned_positions * h
    return body + (embed + model.learned_positions * h) * eb + norms * wb


def kv_cache_bytes(model: ModelSpec, sh: Shards, batch: np.ndarray, workload: Workload
                  ) -> np.ndarray:
    """KV-cache bytes per GPU for ``batch`` sequences at ``workload.kv_tokens`` each (in
    decode a sliding-window layer keeps only the last ``sliding_window`` of them; a prefill
    step holds the whole prompt in every layer while it runs:
    :meth:`~compute.models.ModelSpec.kv_tokens_in_step`; with pipeline stages the windowed
    layers are taken as spread evenly over the stages). With
    MLA every GPU of an attention group holds the whole latent of the group's sequences
    (``kv_lora_rank + qk_rope_head_dim`` per token and layer, not split by TP). A pipeline
    stage holds the cache of its ``layers / pp`` layers for every sequence in flight; with
    attention data parallelism a GPU holds only its group's ``ceil(batch /
    attention_dp)`` sequences."""
    layers, seqs = model.layers, batch
    if not sh.plain:
        layers, seqs = model.layers / sh.pp, np.ceil(batch / sh.attention_dp)
    held = model.kv_tokens_in_step(workload)  # less in windowed layers in decode
    if model.is_mla:
        per_token = layers * model.kv_elements_per_token * model.kv_bytes
        if type(batch) is float:  # one configuration and batch
            return per_token * seqs * held
        return np.broadcast_to(per_token * seqs * held,
                               np.broadcast_shapes(sh.tp.shape, batch.shape))
    per_token = layers * 2 * sh.kv_heads * model.head_dim * model.kv_bytes
    return per_token * seqs * held


def activation_bytes(model: ModelSpec, sh: Shards, batch: np.ndarray, workload: Workload
                    ) -> np.ndarray:
    """Activation workspace bytes per GPU (see the module docstring)."""
    tokens = batch * workload.tokens_per_sequence
    seqs = batch if sh.plain else np.ceil(batch / sh.attention_dp)  # the group's, for logits
    return tokens * activation_bytes_per_token(model, sh) + seqs * sh.vocab * 4.0


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
    if model.dense_layers:
        mlp = np.maximum(mlp, up * sh.dense_ffn)
    widest = np.maximum(attn, mlp)
    return (2 * model.hidden + widest) * model.act_bytes


def memory_fit(model: ModelSpec, gpu: GpuSpec, sh: Shards, batch: np.ndarray, workload: Workload,
               reserve: float = DEFAULT_RESERVE, micro_batch: np.ndarray | None = None,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, np.ndarray]:
    """Weights, KV cache and activations per GPU (arrays broadcast to ``(nt, nb)``), the
    usable bytes, and the mask of configurations that fit. The KV cache holds ``batch``
    sequences; the activation workspace is that of one micro-batch of ``micro_batch``
    sequences (default ``batch``: no pipeline)."""
    reserve = check_reserve(reserve)
    shape = np.broadcast_shapes(sh.tp.shape, batch.shape)
    w = np.broadcast_to(weight_bytes(model, sh), shape)
    kv = kv_cache_bytes(model, sh, batch, workload)
    act = activation_bytes(model, sh, batch if micro_batch is None else micro_batch, workload)
    usable = gpu.hbm_capacity * (1.0 - reserve)
    fits = (w + kv + act) <= usable
    return w, kv, act, usable, fits


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
