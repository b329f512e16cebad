"""The peak FLOP/s each stage of one inference step runs at on one GPU: the compute dtype's
where one is asked for, else bf16's, but for the share of its FLOPs in weight GEMMs whose
weights and input are both in the model's low-precision compute dtype (w8a8 fp8 or int8,
NVFP4 W4A4), which runs at that dtype's tensor-core peak. A stage's compute time is its FLOPs
(:func:`compute.stages.stage_work`) over this peak (:mod:`compute.roofline`).

Attention's QK^T and PV multiply activations, not weights, and run at the bf16 peak, but
for multi-head latent attention's prefill (:mod:`compute.stage_attention`): its KV
decompression is a weight GEMM (the checkpoint's ``kv_b_proj``, applied through the
quantized linear layer: vLLM's ``_forward_prefill``, SGLang's ``forward_normal``), so its
share of the prefill ``attention`` stage's FLOPs runs at the compute dtype's peak as the
other projections do (:func:`attention_gemm_share`, :func:`stage_peaks`); the absorbed
decode multiplies by ``W_UK`` and ``W_UV`` copies dequantized to bf16 at load (vLLM's
``process_weights_after_loading``: "we currently do not have quantized bmm's ... perform the
bmm's in 16-bit"; SGLang's ``block_quant_dequant`` to bf16 on CUDA), at the bf16 peak.
"""

from __future__ import annotations

from compute.phases import Workload

__all__ = ["GEMM_WEIGHTS_OF", "attention_gemm_share", "stage_peaks"]

#: The weights each weight GEMM stage multiplies (:meth:`~compute.models.ModelSpec.low_gemm_share`);
#: the other stages (attention's QK^T and PV among them) run at the bf16 peak, but for the
#: weight GEMM inside multi-head latent attention's prefill (:func:`attention_gemm_share`).
GEMM_WEIGHTS_OF = {"qkv": "attention", "out_proj": "attention", "mlp_up": "mlp",
                   "mlp_down": "mlp", "lm_head": "embedding"}


def attention_gemm_share(model, w: Workload) -> float:
    """The share of the ``attention`` stage's FLOPs that multiply the attention weights: the
    KV decompression of multi-head latent attention's prefill (``2 a c (d - r + v)`` per
    token against ``2 a (d + v)`` per (query, key) pair: ``P c (d - r + v) / (P c (d - r +
    v) + pairs (d + v))`` for ``P`` tokens and ``pairs`` pairs a sequence, the heads and
    the batch cancelling); 0 in decode (the absorbed ``W_UK`` and ``W_UV`` are bf16 copies)
    and for a model without MLA (no weights inside attention).

    >>> from compute.models import get_model
    >>> from compute.phases import Workload
    >>> m = get_model("DeepSeek-V3")      # c 512, d 192, r 64, v 128; 1,500 x 1,501 / 2 pairs
    >>> round(attention_gemm_share(m, Workload("prefill", 1500)), 6)
    0.353073
    >>> [attention_gemm_share(x, Workload(phase, 1500))
    ...  for x, phase in ((m, "decode"), (get_model("Llama-3-70B"), "prefill"))]
    [0.0, 0.0]
    """
    if not model.is_mla or w.phase == "decode":
        return 0.0
    c, r = float(model.kv_lora_rank), float(model.qk_rope_head_dim)
    d, v = float(model.head_dim), float(model.v_dim)
    pairs, _ = model.attention_span(w)
    up = w.tokens_per_sequence * c * (d - r + v)
    return up / (up + pairs * (d + v))


def stage_peaks(model, gpu, names, compute_dtype: str | None = None,
                workload: Workload | None = None) -> tuple:
    """The peak FLOP/s each stage of ``names`` runs at on ``gpu``: ``compute_dtype``'s peak
    for every stage when given (``"fp8"`` or ``"int8"`` on a GPU without such tensor cores
    is refused), else per stage the bf16 peak, but for the share ``f`` of a weight GEMM
    whose weights and input are both in the model's low-precision ``compute_dtype`` (w8a8
    fp8 or int8, NVFP4 W4A4: :meth:`~compute.models.ModelSpec.low_gemm_share`) on a GPU
    with tensor cores of that dtype (its ``flops_fp8``, ``flops_int8`` or ``flops_fp4``,
    above 0): ``1 / (f / low peak + (1 - f) / bf16 peak)``, the time of its FLOPs split
    between the two peaks. Weight-only formats (w4a16, w8a16, mxfp4) run at bf16. The
    ``attention`` stage's weight GEMM is the share :func:`attention_gemm_share` of its
    FLOPs in ``workload`` (MLA prefill's KV decompression) times the attention weights'
    share; without a ``workload`` the stage runs at bf16.

    >>> from dataclasses import replace
    >>> from compute.hardware import get_gpu
    >>> from compute.models import get_model
    >>> m = replace(get_model("DeepSeek-V3"), compute_dtype="fp8")    # w8a8, bf16 LM head
    >>> h100 = get_gpu("H100-SXM")
    >>> [p / 1e12 for p in stage_peaks(m, h100, ("qkv", "attention", "mlp_up", "lm_head"))]
    [1978.9, 989.4, 1978.9, 989.4]
    >>> from compute.stages import STAGES
    >>> {p / 1e12 for p in stage_peaks(m, get_gpu("A100-SXM-80GB"), STAGES)}
    {312.0}
    >>> w8a8 = replace(get_model("Llama-3-70B"), weight_dtype="int8", embedding_dtype="bf16",
    ...                compute_dtype="int8")
    >>> [p / 1e12 for p in stage_peaks(w8a8, get_gpu("A100-SXM-80GB"), ("qkv", "lm_head"))]
    [624.0, 312.0]
    >>> from compute.phases import Workload
    >>> [round(p / 1e12, 1) for p in stage_peaks(m, h100, ("attention",), None,
    ...                                            Workload("prefill", 1500))]   # 35.3% fp8
    [1201.5]
    """
    if compute_dtype is not None:
        return (gpu.peak_flops(compute_dtype),) * len(names)
    bf16 = gpu.peak_flops("bf16")
    low = model.compute_dtype
    if low == "bf16" or getattr(gpu, f"flops_{low}") <= 0:
        return (bf16,) * len(names)
    fast = gpu.peak_flops(low)
    peaks = []
    for name in names:
        if name in GEMM_WEIGHTS_OF:
            f = model.low_gemm_share(GEMM_WEIGHTS_OF[name])
        elif name == "attention" and workload is not None:
            f = attention_gemm_share(model, workload) * model.low_gemm_share("attention")
        else:
            f = 0.0
        peaks.append(bf16 if f == 0.0 else fast if f == 1.0 else
                     1.0 / (f / fast + (1.0 - f) / bf16))
    return tuple(peaks)
