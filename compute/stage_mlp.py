"""The MLP stages of one inference step on one GPU (``mlp_up`` and ``mlp_down``): FLOPs and
HBM bytes of a dense MLP, of an MoE layer's routed experts split by TP or spread over
expert-parallel groups (the busiest group's share of token copies, :func:`busiest_share`),
its router and shared experts, and the bytes per element its dispatch all-to-all sends
(:func:`dispatch_bytes`). :mod:`compute.stages` puts them beside the other stages.
"""

from __future__ import annotations

import numpy as np

from compute.model_spec import DTYPE_BYTES

__all__ = ["FP8_TILE_BYTES", "busiest_share", "dispatch_bytes", "skew_ceiling"]


def _add_shared_experts(model, up: list, down: list, sfs, tokens) -> None:
    """Add to ``up`` and ``down`` ([flops, hbm bytes]) the shared experts of ``sfs``
    columns per GPU run on ``tokens`` tokens."""
    h = float(model.hidden)
    wb, mb, ab = model.weight_bytes, model.mlp_weight_bytes, model.act_bytes
    bias = 1.0 if model.mlp_biased else 0.0
    s_cols = (2 if model.gated_mlp else 1) * sfs
    gate = h if model.shared_expert_gate else 0.0
    up[0] = up[0] + 2 * tokens * h * s_cols + 2 * tokens * gate
    up[1] = up[1] + (h * s_cols + bias * s_cols) * mb + gate * wb + tokens * sfs * ab
    down[0] = down[0] + 2 * tokens * sfs * h
    down[1] = down[1] + (sfs * h + bias * h) * mb + tokens * sfs * ab


def _dense_mlp(model, sh, n, own=None) -> tuple[list, list]:
    """``(up, down)`` ([flops, hbm bytes]) per GPU of one of an MoE model's dense layers:
    a tensor-parallel MLP of ``sh.dense_ffn`` columns per GPU on ``n`` tokens, or with
    ``sh.dense_dp`` the whole MLP on the GPU's own tokens (``own``, default ``n / tp``:
    :func:`~compute.stages.own_tokens`; SGLang's ``--moe-dense-tp-size 1``)."""
    if np.any(sh.dense_dp):
        n = np.where(sh.dense_dp > 0, n / sh.tp if own is None else own, n)
    h = float(model.hidden)
    mb, ab = model.mlp_weight_bytes, model.act_bytes
    bias = 1.0 if model.mlp_biased else 0.0
    dfs = sh.dense_ffn
    d_cols = (2 if model.gated_mlp else 1) * dfs
    d_up = [2 * n * h * d_cols, (h * d_cols + bias * d_cols) * mb + n * h * ab + n * dfs * ab]
    d_down = [2 * n * dfs * h, (dfs * h + bias * h) * mb + n * dfs * ab + n * h * ab]
    return d_up, d_down


def _with_dense_layers(model, sh, n, up: list, down: list, own=None) -> tuple[list, list]:
    """``(up, down)`` per layer on average over the MoE layers (given) and the dense ones
    of an MoE model (tensor-parallel MLPs of ``sh.dense_ffn`` columns per GPU; ``own``:
    :func:`_dense_mlp`'s)."""
    if not model.dense_layers:
        return up, down
    d_up, d_down = _dense_mlp(model, sh, n, own)
    fm, fd = model.moe_layers / model.layers, model.dense_layers / model.layers
    return ([fm * x + fd * y for x, y in zip(up, d_up, strict=True)],
            [fm * x + fd * y for x, y in zip(down, d_down, strict=True)])


def _mlp_work(model, sh, n, touched, average: bool = True, own=None):
    """(flops, hbm bytes) of mlp_up and mlp_down per GPU, per layer on average over the MoE
    and dense layers (``average=False``: of an MoE layer; ``own``: :func:`_dense_mlp`'s)."""
    h = float(model.hidden)
    wb, mb, ab = model.weight_bytes, model.mlp_weight_bytes, model.act_bytes
    bias = 1.0 if model.mlp_biased else 0.0
    fs = sh.ffn
    up_cols = (2 if model.gated_mlp else 1) * fs
    k = model.experts_per_token
    router = h * model.experts if model.is_moe else 0.0
    # the router: a GEMM of every token against the experts' logits, replicated on each GPU
    routing = 2 * n * h * float(model.experts) if model.is_moe else 0.0
    up = [2 * n * h * up_cols * k + routing,
          touched * (h * up_cols + bias * up_cols) * mb + router * wb + n * h * ab
          + n * fs * k * ab]
    down = [2 * n * fs * h * k, touched * (fs * h + bias * h) * mb + n * fs * k * ab + n * h * ab]
    if model.shared_ffn:  # always active, split by TP like the experts
        _add_shared_experts(model, up, down, sh.shared_ffn, n)
    return _with_dense_layers(model, sh, n, up, down, own) if average else (up, down)


def busiest_share(model, sh, skew: float):
    """The busiest EP group's share of routed token copies over the mean, ``skew`` as
    asked but at most what one group can take: a token sends at most ``min(k, slots)`` of
    its ``k`` copies to one group of ``slots`` expert slots, so the share is at most ``ep x
    min(k, slots) / k`` (every token's copies on one group; Mixtral-8x7B at EP 2: 2)."""
    return np.minimum(skew, _skew_ceiling(float(model.experts_per_token), sh.ep,
                                          sh.expert_slots))


def _skew_ceiling(k, ep, slots):
    """``ep x min(k, slots) / k`` (arrays or numbers): :func:`busiest_share`'s bound."""
    return ep * np.minimum(k, slots) / k


def skew_ceiling(model, ep: int) -> float:
    """The largest expert skew ``ep`` expert-parallel groups allow ``model``
    (:func:`busiest_share`'s bound, with :func:`compute.parallel.expert_slots`' slots): a
    larger ``--expert-skew`` is costed at this.

    >>> from compute.models import get_model
    >>> skew_ceiling(get_model("Mixtral-8x7B"), 2), skew_ceiling(get_model("DeepSeek-V3"), 32)
    (2.0, 32.0)
    """
    from compute.parallel import expert_slots

    return float(_skew_ceiling(float(model.experts_per_token), ep,
                               expert_slots(model.experts, ep)[0]))


def _mlp_work_ep(model, sh, n, touched, skew: float, average: bool = True, own=None,
                 replicated: bool = False):
    """(flops, hbm bytes) of mlp_up and mlp_down per GPU under expert parallelism: the
    busiest GPU processes ``skew x n k / ep`` token copies (``skew`` at most
    :func:`busiest_share`'s bound) with its ``slots = ceil(experts /
    ep)`` expert slots (``expert_ffn`` columns of each; redundant copies spread the load, so
    the copies per group do not change), reads the weights of its share ``touched x slots /
    experts`` of the distinct experts touched (``touched / ep`` when ``ep`` divides the
    experts), and runs the router and the replicated shared experts on its own tokens
    (``own``, default ``n / tp``: :func:`~compute.stages.own_tokens`); dense layers of an MoE model stay
    tensor-parallel (averaged as in :func:`_mlp_work`). ``replicated``: every GPU holds
    every one of the ``n`` tokens (attention tensor-parallel over the stage, the exchange an
    all-reduce: :mod:`compute.moe_exchange`), so the router runs on all ``n`` and the shared
    experts are split over the stage's ``tp`` GPUs (``sh.shared_ffn`` columns) as a
    tensor-parallel MLP, as vLLM and TensorRT-LLM run them there."""
    h = float(model.hidden)
    wb, mb, ab = model.weight_bytes, model.mlp_weight_bytes, model.act_bytes
    bias = 1.0 if model.mlp_biased else 0.0
    fs = sh.expert_ffn
    up_cols = (2 if model.gated_mlp else 1) * fs
    copies = n * model.experts_per_token * busiest_share(model, sh, skew) / sh.ep
    local = touched / (model.experts / sh.expert_slots)   # exactly touched / ep when ep divides
    own = n if replicated else n / sh.tp if own is None else own
    router = h * model.experts
    # the router runs on the GPU's own tokens, before they are dispatched
    up = [2 * copies * h * up_cols + 2 * own * h * float(model.experts),
          local * (h * up_cols + bias * up_cols) * mb + router * wb + copies * h * ab
          + copies * fs * ab]
    down = [2 * copies * fs * h, local * (fs * h + bias * h) * mb + copies * fs * ab
            + copies * h * ab]
    if model.shared_ffn:  # replicated on every GPU, run on the GPU's own tokens
        _add_shared_experts(model, up, down, sh.shared_ffn if replicated else
                            float(model.shared_ffn), own)
    return _with_dense_layers(model, sh, n, up, down, own) if average else (up, down)


#: Bytes per element of an fp8 activation quantized in 1 x 128 tiles, each with an fp32
#: scale: DeepSeek-V3's fine-grained activation quantization (DeepSeek-AI 2024, 'DeepSeek-V3
#: Technical Report', arXiv 2412.19437, Sections 3.3.2 and 3.3.3), the ``(x, x_scales)``
#: pair with ``hidden / 128`` float scales per token that DeepEP dispatches.
FP8_TILE_BYTES = 1.0 + 4.0 / 128


def dispatch_bytes(model) -> float:
    """Bytes per element of the activations the MoE dispatch all-to-all sends.

    When every routed expert is stored in fp8, the up-projection is an fp8 x fp8 GEMM whose
    input is quantized to fp8 (1 x 128 tiles) anyway; DeepSeek-V3 quantizes it *before* the
    dispatch, so the all-to-all carries fp8 plus the tile scales, while the combine stays in
    the activations' dtype (DeepSeek-V3 Technical Report, Section 3.3.3 'Low-precision
    storage and communication'; DeepEP README, 'FP8 dispatching and BF16 combining': its low-latency
    dispatch of 128 tokens x top-8 x 7168 at EP 8, 77 us at 98 GB/s, is 128 x 8 x 7168 x
    (1 + 4/128) = 7.57 MB). Likewise when every routed expert is stored in ``nvfp4`` and the
    GEMMs run at the fp4 rate (``compute_dtype`` fp4, NVFP4 W4A4: the up-projection's input is
    quantized to nvfp4 anyway), the dispatch carries nvfp4, 4 bits and an fp8 scale per 16
    (0.5625 bytes an element): SGLang's DeepEP quantizes to NVFP4 before dispatching, 'halving
    the required network traffic' against fp8 (The SGLang Team, 'Deploying DeepSeek on GB200
    NVL72 with PD and Large Scale EP (Part II)', LMSYS blog, Sep 25 2025, 'Fusing NVFP4 in
    DeepEP'); the combine stays in the activations' dtype. Otherwise the dispatch carries the
    activations' dtype.

    >>> from dataclasses import replace
    >>> from compute.models import get_model
    >>> dispatch_bytes(get_model("DeepSeek-V3")), dispatch_bytes(get_model("Mixtral-8x7B"))
    (1.03125, 2.0)
    >>> dispatch_bytes(replace(get_model("DeepSeek-V3"), mlp_weight_dtype="nvfp4",
    ...                        compute_dtype="fp4"))
    0.5625
    """
    def every_mlp(dtype: str) -> bool:
        return (model.mlp_weight_dtype == dtype and model.mlp_dtype_layers in (0, model.layers)
                ) or (not model.mlp_weight_dtype and model.weight_dtype == dtype)

    if every_mlp("nvfp4") and model.compute_dtype == "fp4":
        return min(DTYPE_BYTES["nvfp4"], model.act_bytes)
    return min(FP8_TILE_BYTES, model.act_bytes) if every_mlp("fp8") else model.act_bytes
