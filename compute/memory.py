"""Does a configuration fit in HBM? Bytes per GPU, vectorised over TP degrees x batches.

Needed per GPU = weights (the GPU's shard; norms, biases and learned positions replicated;
replicated KV heads counted on every GPU holding them) + KV cache for ``batch`` sequences at
the longest context of the step (prefill: the prompt; decode: the context) + activation
workspace. Usable = HBM capacity x (1 - reserve).

The activation workspace is, for every token of the step, the two residual-stream buffers
(``2 x hidden``) plus the widest intermediate of a layer (QKV output, the MLP's up/gate
output, or the attention output), in the activation dtype; plus fp32 logits of the
vocabulary shard for each sequence. Prefill is not chunked, so huge prefill batches run out
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

import numpy as np

from compute.errors import UserError
from compute.results import MemoryFit
from compute.sharding import Shards

__all__ = ["DEFAULT_RESERVE", "activation_bytes", "check_reserve", "kv_cache_bytes",
           "memory_fit", "weight_bytes"]

#: Fraction of HBM left to the runtime (vLLM's default gpu_memory_utilization = 0.9).
DEFAULT_RESERVE = 0.10


def check_reserve(reserve: float) -> float:
    """Return ``reserve`` if it is a fraction in [0, 1), else raise :class:`UserError`."""
    if not (isinstance(reserve, int | float) and not isinstance(reserve, bool)
            and 0 <= reserve < 1):
        raise UserError(f"memory reserve must be a fraction in [0, 1), got {reserve!r}")
    return float(reserve)


def weight_bytes(model, sh: Shards) -> np.ndarray:
    """Weight bytes per GPU, shape ``(nt, 1)``."""
    h, d = model.hidden, model.head_dim
    qkv_cols = (sh.heads + 2 * sh.kv_heads) * d
    up = (2 if model.gated_mlp else 1) * sh.ffn
    attn = h * qkv_cols + sh.heads * d * h
    expert = h * up + sh.ffn * h
    if model.bias:
        attn = attn + qkv_cols + h
        expert = expert + up + h
    router = h * model.experts if model.is_moe else 0
    layer = attn + model.experts * expert + router + 2 * model.norm_parameters
    embed = sh.vocab * h * (1 if model.tied_embeddings else 2)
    other = model.learned_positions * h + model.norm_parameters
    return (model.layers * layer + embed + other) * model.weight_bytes


def kv_cache_bytes(model, sh: Shards, batch: np.ndarray, workload) -> np.ndarray:
    """KV-cache bytes per GPU for ``batch`` sequences at ``workload.kv_tokens`` each."""
    per_token = model.layers * 2 * sh.kv_heads * model.head_dim * model.kv_bytes
    return per_token * batch * workload.kv_tokens


def activation_bytes(model, sh: Shards, batch: np.ndarray, workload) -> np.ndarray:
    """Activation workspace bytes per GPU (see the module docstring)."""
    tokens = batch * workload.tokens_per_sequence
    widest = np.maximum((sh.heads + 2 * sh.kv_heads) * model.head_dim,
                        (2 if model.gated_mlp else 1) * sh.ffn * model.experts_per_token)
    per_token = (2 * model.hidden + widest) * model.act_bytes
    return tokens * per_token + batch * sh.vocab * 4.0


def memory_fit(model, gpu, sh: Shards, batch: np.ndarray, workload,
               reserve: float = DEFAULT_RESERVE):
    """Weights, KV cache and activations per GPU (arrays broadcast to ``(nt, nb)``), the
    usable bytes, and the mask of configurations that fit."""
    reserve = check_reserve(reserve)
    w = np.broadcast_to(weight_bytes(model, sh), np.broadcast_shapes(sh.tp.shape, batch.shape))
    kv = kv_cache_bytes(model, sh, batch, workload)
    act = activation_bytes(model, sh, batch, workload)
    usable = gpu.hbm_capacity * (1.0 - reserve)
    fits = (w + kv + act) <= usable
    return w, kv, act, usable, fits


def describe_fit(model, gpu, tp: int, batch: int, weights: float, kv: float, act: float,
                 reserve: float) -> MemoryFit:
    """A :class:`MemoryFit` for one configuration, with the reason when it does not fit."""
    fit = MemoryFit(weights=float(weights), kv_cache=float(kv), activations=float(act),
                    capacity=gpu.hbm_capacity, reserve_fraction=reserve)
    if fit.fits:
        return fit
    gb = 1e9
    if fit.weights > fit.usable:
        why = (f"{model.name} weights alone need {fit.weights / gb:.1f} GB per GPU at TP {tp} "
               f"> {fit.usable / gb:.1f} GB usable on {gpu.name} ({gpu.hbm_capacity / gb:g} GB "
               f"less {reserve:.0%} reserve)")
    else:
        why = (f"needs {fit.total / gb:.1f} GB per GPU at TP {tp}, batch {batch} (weights "
               f"{fit.weights / gb:.1f} + KV cache {fit.kv_cache / gb:.1f} + activations "
               f"{fit.activations / gb:.1f} GB) > {fit.usable / gb:.1f} GB usable on {gpu.name}")
    return MemoryFit(weights=fit.weights, kv_cache=fit.kv_cache, activations=fit.activations,
                     capacity=fit.capacity, reserve_fraction=reserve, reason=why)
