"""How tensor parallelism splits a model over ``t`` GPUs (Megatron-style).

* Attention: each GPU holds ``heads / t`` query heads (``t`` must divide the heads) and the
  key/value heads those query heads use. With grouped-query attention a query head uses
  KV head ``q // (heads / kv_heads)``; when ``t`` exceeds the KV-head count a GPU still
  needs one whole KV head, so KV heads are **replicated**: their weights, their cache and
  the bytes attention reads are counted on every GPU that holds a copy.
* MLP: the intermediate dimension is split column-wise (``ceil(ffn / t)`` on the largest
  shard); the down projection row-wise, followed by an all-reduce.
* Embedding and LM head: split over the vocabulary (``ceil(vocab / t)`` rows per GPU; with
  attention data parallelism over each attention group's GPUs, :func:`compute.parallel.layout`).
* Mixture of experts (without expert parallelism, :mod:`compute.parallel`): every routed
  expert, the shared experts and the dense MLPs are split like the MLP above; the router is
  replicated.
* Multi-head latent attention: the query up-projection, the KV up-projection and the output
  projection are split by heads; the KV down-projection (and the query down-projection) is
  replicated, and so is the **latent KV cache**: every head reads the same latent, so each GPU
  of the instance holds all of it (:func:`kv_replication` is ``t``), as tensor-parallel
  engines (vLLM, SGLang) hold it.

>>> from compute.models import get_model
>>> m = get_model("Llama-3-70B")        # 64 query heads, 8 KV heads
>>> [kv_heads_per_gpu(m, t) for t in (1, 2, 8, 16, 32)]
[8, 4, 1, 1, 1]
>>> [kv_replication(m, t) for t in (8, 16, 32)]
[1.0, 2.0, 4.0]
>>> valid_tp_degrees(get_model("GPT-3-175B"), 32)
(1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from compute.validate import an_int, describe, is_whole

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from compute.models import ModelSpec

__all__ = ["Shards", "check_tp", "kv_heads_per_gpu", "kv_replication", "shards",
           "valid_tp_degrees"]


def check_tp(model: ModelSpec, tp: object, max_instance: int | None = None) -> int:
    """Return ``tp`` as an int if it is a valid TP degree for ``model`` (a Python or numpy
    integer >= 1, not a float, 8.0 neither, that divides the attention heads, and at most
    ``max_instance``)."""
    if not (is_whole(tp) and not isinstance(tp, bool) and tp >= 1):   # 1.0 too: an int
        raise UserError(f"TP degree must be a whole number >= 1{an_int(tp)}, got {describe(tp)}")
    tp = int(tp)
    if model.heads % tp:
        top = model.heads if max_instance is None else min(model.heads, int(max_instance))
        divisors = [d for d in range(1, top + 1) if model.heads % d == 0]
        upto = "" if top == model.heads else f" (up to this GPU's largest instance, {top})"
        raise UserError(f"TP degree {tp} does not divide the {model.heads} attention heads of "
                        f"{model.name}; allowed: {', '.join(map(str, divisors))}{upto}")
    if max_instance is not None and tp > max_instance:
        raise UserError(f"TP degree {tp} exceeds the largest instance of this GPU "
                        f"({max_instance}); allowed: 1..{max_instance} dividing {model.heads}")
    return tp


def valid_tp_degrees(model: ModelSpec, max_instance: int) -> tuple[int, ...]:
    """Every TP degree from 1 to ``max_instance`` that divides the attention heads."""
    return tuple(t for t in range(1, int(max_instance) + 1) if model.heads % t == 0)


def kv_heads_per_gpu(model: ModelSpec, tp: int) -> int:
    """KV heads the busiest GPU must hold at TP degree ``tp`` (at least one; exact for
    query-head blocks that straddle KV groups). With MLA: the heads whose keys and values
    it decompresses from the latent (its query heads)."""
    a = model.heads // tp
    if model.is_mla:
        return a
    group = model.heads // model.kv_heads
    return max((r * a + a - 1) // group - (r * a) // group + 1 for r in range(tp))


def kv_replication(model: ModelSpec, tp: int) -> float:
    """How many copies of the KV cache the instance holds (1.0 without replication; ``tp``
    with MLA, whose latent every GPU holds whole).

    >>> from compute.models import get_model
    >>> kv_replication(get_model("DeepSeek-V3"), 8)
    8.0
    """
    if model.is_mla:
        return float(tp)
    return kv_heads_per_gpu(model, tp) * tp / model.kv_heads


@dataclass(frozen=True, eq=False)
class Shards:
    """Per-GPU sizes for an array of TP degrees (each a column vector, shape ``(nt, 1)``)."""

    tp: np.ndarray          #: TP degree
    heads: np.ndarray       #: query heads per GPU
    kv_heads: np.ndarray    #: KV heads per GPU (replicated when tp > kv_heads)
    ffn: np.ndarray         #: MLP (each routed expert's) intermediate columns per GPU
    vocab: np.ndarray       #: vocabulary rows per GPU (largest shard; of an attention group's)
    shared_ffn: np.ndarray  #: shared-expert intermediate columns per GPU (0 when none)
    dense_ffn: np.ndarray   #: intermediate columns of a dense MLP layer of an MoE model
    # the other dimensions of :class:`compute.parallel.Parallelism` (1 for plain TP)
    pp: np.ndarray | float = 1.0            #: pipeline stages
    ep: np.ndarray | float = 1.0            #: expert-parallel groups per stage
    attention_dp: np.ndarray | float = 1.0  #: attention data-parallel groups per stage
    expert_ffn: np.ndarray | None = None    #: each routed expert's columns per GPU under EP
    #: routed-expert slots per EP group, ceil(experts / ep) (compute.parallel.expert_slots)
    expert_slots: np.ndarray | float | None = None
    #: 1.0 where an MoE model's dense MLP layers run data-parallel (each GPU the whole dense
    #: MLP on its own tokens; ``dense_ffn`` then the whole width), 0.0 tensor-parallel over
    #: ``tp`` (:func:`compute.parallel.dense_data_parallel`)
    dense_dp: np.ndarray | float = 0.0
    #: 1.0 where an expert-parallel MoE layer's exchange is costed as the all-reduce of
    #: every token (attention tensor-parallel over the stage: every GPU holds every token
    #: before the MoE layer), 0.0 as the dispatch and combine all-to-alls
    #: (:mod:`compute.moe_exchange`)
    ep_allreduce: np.ndarray | float = 0.0
    #: 1.0 where an expert-parallel MoE layer under attention DP is costed as the all-gather
    #: of every attention group's tokens to every GPU and the reduce-scatter of the experts'
    #: outputs back (vLLM's ``allgather_reducescatter``), 0.0 as the dispatch and combine
    #: all-to-alls (:mod:`compute.moe_exchange`)
    ep_gather: np.ndarray | float = 0.0
    #: 1.0 where an expert-parallel MoE layer under attention DP is costed as SGLang runs
    #: it with ``--moe-a2a-backend none``: every group's tokens gathered to the stage's
    #: ``tp`` GPUs as for a tensor-parallel MLP (``dp_gather``, ``dp_scatter``), the experts
    #: and the shared experts split over ``tp`` (:mod:`compute.moe_dp_gather`)
    ep_dp_gather: np.ndarray | float = 0.0

    @cached_property
    def plain(self) -> bool:
        """True when every row is plain tensor parallelism."""
        return bool(np.all(np.asarray(self.pp) == 1) and np.all(np.asarray(self.ep) == 1)
                    and np.all(np.asarray(self.attention_dp) == 1))


def shards(model: ModelSpec, tps: ArrayLike) -> Shards:
    """Per-GPU sizes of ``model`` for each TP degree in ``tps`` (each must divide the heads)."""
    tps = [check_tp(model, t) for t in np.atleast_1d(tps).tolist()]
    col = lambda xs: np.asarray(xs, dtype=float).reshape(-1, 1)  # noqa: E731
    return Shards(
        tp=col(tps),
        heads=col([model.heads // t for t in tps]),
        kv_heads=col([kv_heads_per_gpu(model, t) for t in tps]),
        ffn=col([-(-model.ffn // t) for t in tps]),
        vocab=col([-(-model.vocab // t) for t in tps]),
        shared_ffn=col([-(-model.shared_ffn // t) for t in tps]),
        dense_ffn=col([-(-(model.dense_ffn or model.ffn) // t) for t in tps]),
    )
