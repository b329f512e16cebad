"""The ``attention`` stage of one inference step on one GPU: FLOPs and HBM bytes of fused
attention and of multi-head latent attention (with its ``qkv`` projection), a model's
full-attention and windowed layers apart, and the busiest attention group's share of a
batch that attention runs on. :mod:`compute.stages` puts them beside the other stages.

Attention FLOPs are ``4 a d`` per (query, key) pair (QK^T and PV; ``a`` query heads and
``d`` the head dimension per GPU); prefill is causal and counts ``P (P + 1) / 2`` pairs per
sequence (:class:`~compute.phases.Workload`). A sliding-window layer attends to at most
``window`` keys per query, and a decode step reads only that many cached tokens; the
``attention`` stage counts pairs and reads on average over the layers
(:meth:`compute.models.ModelSpec.attention_span`), and :func:`attention_work_by_kind` gives
each kind of layer's apart.

**Multi-head latent attention** (DeepSeek-V2/V3; ``c`` = ``kv_lora_rank``, ``r`` =
``qk_rope_head_dim``, ``d`` = query/key head width, ``v`` = value head width): the KV cache
holds, per token and layer, only the latent and the shared rotary key, ``c + r`` elements,
and every GPU of the instance holds all of it (:func:`compute.sharding.kv_replication`).
The ``qkv`` stage computes the (low-rank) query and the new tokens' latent (the latent's
projection is replicated on every GPU). The ``attention`` stage is counted as it is served:

* **decode, absorbed weights**: the key up-projection is folded into the query and the value
  up-projection into the output (``2 a c (d - r + v)`` FLOPs per token), so attention runs
  on the latent itself: ``2 (c + r)`` FLOPs per (query, key) pair and head for the scores
  and ``2 c`` for the weighted sum, ``a (4 c + 2 r)`` per pair; HBM reads the latent once
  (``c + r`` elements per cached token, shared by every head) and the up-projection weights.
* **prefill, decompressed**: keys and values are decompressed from the latent for every
  token (the same ``2 a c (d - r + v)`` FLOPs per token), written and read once, then
  attention costs ``2 (d + v)`` FLOPs per pair and head.

The decompression is a weight GEMM, at the compute dtype's peak; the absorbed decode's
multiplications run at bf16 (:mod:`compute.stage_peaks`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from compute.memo import Memo
from compute.phases import Workload

__all__ = ["attention_kinds", "attention_work_by_kind", "busiest_group"]


def _mla_work(model, sh, s, n, w: Workload):
    """(flops, hbm bytes) of the qkv and attention stages with multi-head latent attention
    (see the module docstring), per GPU."""
    h, d, v = float(model.hidden), float(model.head_dim), float(model.v_dim)
    c, r, ql = float(model.kv_lora_rank), float(model.qk_rope_head_dim), float(model.q_lora_rank)
    wb, kvb, ab = model.weight_bytes, model.kv_bytes, model.act_bytes
    a, latent, nope = sh.heads, c + r, d - r
    if ql:   # low-rank query: down-projection (replicated), then up-projection by heads
        q_flops, q_weights, q_act = 2 * n * h * ql + 2 * n * ql * a * d, h * ql + ql * a * d, \
            2 * n * ql * ab
    else:
        q_flops, q_weights, q_act = 2 * n * h * a * d, h * a * d, 0.0
    qkv = (q_flops + 2 * n * h * latent,
           (q_weights + h * latent) * wb + n * h * ab + q_act + n * (a * d + latent) * ab)
    pairs_per_seq, kv_read = model.attention_span(w)   # a sliding window shortens both
    pairs = s * pairs_per_seq
    up_weights = c * a * (nope + v) * wb       # the KV up-projection, split by heads
    latent_io = s * kv_read * latent * kvb + n * latent * kvb
    per_token = 2 * n * a * c * (nope + v)     # absorb W_UK and W_UV, or decompress K and V
    if w.phase == "decode":  # absorbed: scores and the weighted sum over the latent itself
        flops = per_token + pairs * a * (4 * c + 2 * r)
        hbm = up_weights + n * a * d * ab + latent_io + n * a * v * ab
    else:                    # prefill: keys and values decompressed, then attention as usual
        flops = per_token + pairs * a * 2 * (d + v)
        hbm = up_weights + n * a * d * ab + latent_io + 2 * n * a * (nope + v) * ab \
            + n * a * v * ab
    return qkv, (flops, hbm)


def _attention_work(model, sh, s, n, w: Workload):
    """(flops, hbm bytes) per GPU of the ``attention`` stage of a model without multi-head
    latent attention, for ``s`` sequences and ``n`` tokens (the attention group's), per
    layer on average over its windowed and full-attention layers
    (:meth:`~compute.models.ModelSpec.attention_span`)."""
    a, g, d = sh.heads, sh.kv_heads, float(model.head_dim)
    ab, kvb = model.act_bytes, model.kv_bytes
    pairs, kv_read = model.attention_span(w)   # a sliding window shortens both
    flops = 4 * a * d * s * pairs
    hbm = (n * a * d * ab + s * kv_read * 2 * g * d * kvb + n * 2 * g * d * kvb + n * a * d * ab)
    return flops, hbm


def attention_kinds(model):
    """``(full, windowed)``: ``model`` with every layer's attention full, and with every
    layer's windowed (its window and kind), or None when it does not mix the two (no window,
    or every layer windowed). What one layer of each kind runs
    (:func:`attention_work_by_kind`)."""
    w = model.windowed_layers
    if not w or w == model.layers:
        return None
    # kept by value: a pipelined grid asks per evaluation, and replace validates every
    # field of the spec (a fit's trial profiles: 8,000); an unhashable field: made afresh
    return _KINDS.get_or_make(model, lambda: (
        replace(model, sliding_window=0, sliding_layers=0, full_layer_step=0,
                window_kind="sliding"),
        replace(model, sliding_layers=0, full_layer_step=0)))


#: :func:`attention_kinds` of recent models, by value.
_KINDS = Memo(64)


def attention_work_by_kind(model, sh, batch, w: Workload) -> dict | None:
    """``{"attention": ((flops, hbm) of a full-attention layer, (flops, hbm) of a windowed
    layer)}`` per GPU for a model that mixes the two (gpt-oss, Gemma-2/3, Llama-4; None for
    another), the ``attention`` stage's work as :func:`compute.stages.stage_work` counts it
    (its average weighs them by the layers of each kind): what a pipeline stage's own mix of
    layers runs (:func:`compute.pipeline_time.slowest_stage`)."""
    kinds = attention_kinds(model)
    if kinds is None:
        return None
    s_att, n_att = busiest_group(sh, batch, w)
    if model.is_mla:
        work = [_mla_work(k, sh, s_att, n_att, w)[1] for k in kinds]
    else:
        work = [_attention_work(k, sh, s_att, n_att, w) for k in kinds]
    return {"attention": (tuple(work[0]), tuple(work[1]))}


def busiest_group(sh, batch, w: Workload, busiest=None):
    """``(sequences, tokens)`` of the busiest attention group's share of a (micro-)batch of
    ``batch`` sequences: ``ceil(batch / a)`` sequences (every sequence where ``a`` is 1 or
    the layout plain TP), or ``busiest`` where given (two-batch overlap's micro-batch, split
    rank by rank: :func:`compute.micro_batches.rank_halves`; fractional where a rank's
    sequence is cut in two). ``tokens`` is ``batch x tokens_per_sequence`` itself where the
    group holds every sequence."""
    if sh.plain or np.all(sh.attention_dp == 1):
        return batch, batch * w.tokens_per_sequence
    s_att = np.ceil(batch / sh.attention_dp) if busiest is None else busiest
    return s_att, s_att * w.tokens_per_sequence
