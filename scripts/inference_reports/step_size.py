"""The step-size report: what the measured prefill steps cost per token as a step holds more
tokens, on both systems, and the candidates for why it rises, each with its numbers.
"""

from __future__ import annotations

import csv
from itertools import pairwise

from inference_reports.common import PROFILE, REFERENCE, ROOT, held_out, scenario_comm
from inference_reports.second_system import a100_rows
from inference_reports.tables import render

#: Tokens a prefill step holds in :func:`step_size`: the Splitwise sweeps run each as one
#: prompt (batch 1) and as prompts of :data:`SHORT_PROMPT` tokens (batch tokens / 512).
STEP_TOKENS = (1024, 2048, 4096, 8192)
SHORT_PROMPT = 512
#: 2023 vLLM's prefill path for ALiBi models (BLOOM): ``PagedAttentionWithALiBi.set_attn_bias``
#: builds the bias as a tensor of prompts x heads x L x (L rounded up to 8) in the model's
#: dtype once a step (arange, copy, multiply by the slopes) and every layer passes it to
#: xFormers' ``memory_efficient_attention_forward`` as a ``LowerTriangularMaskWithTensorBias``
#: (vllm-project/vllm, vllm/model_executor/layers/attention.py, the v0.2 releases); Llama's
#: prompts run the same kernel with a ``BlockDiagonalCausalMask`` and no tensor.
ALIBI_SOURCE = ("vllm-project/vllm vllm/model_executor/layers/attention.py (v0.2): "
                "PagedAttentionWithALiBi.set_attn_bias, xFormers "
                "LowerTriangularMaskWithTensorBias")
#: Which attention kernel 2023 vLLM's prompts ran: it hands them to xFormers'
#: ``memory_efficient_attention_forward``, which runs FlashAttention-2 where it can and falls
#: back to its own CUTLASS kernel with a custom (tensor) bias, as ALiBi's is (the xFormers
#: maintainer in vllm-project/vllm pull request 877, 2023-08, which let xFormers choose); a
#: tensor bias is read tile by tile beside Q and K (facebookresearch/xformers issue 700).
KERNEL_SOURCE = ("vllm-project/vllm pull request 877: xFormers runs FlashAttention-2 and "
                 "falls back to its CUTLASS kernel with a tensor bias")
#: The one published H100 rate found for that kernel family: PyTorch's memory-efficient
#: attention (xFormers' CUTLASS kernel, upstreamed into PyTorch) against its FlashAttention,
#: FP16, batch 16, 256 tokens, 32 heads of 128, no mask or bias: 144.8 and 229.5 TFLOP/s
#: (microsoft/onnxruntime pull request 21629, "[CUDA] cuDNN Flash Attention", its H100
#: benchmark table, rows torch:efficient and torch:flash).
CUTLASS_VS_FLASH = (144.8, 229.5, "microsoft/onnxruntime pull request 21629: H100, FP16, "
                    "batch 16, 256 tokens, 32 heads of 128, no mask or bias, PyTorch's "
                    "memory-efficient kernel 144.8 and its FlashAttention 229.5 TFLOP/s")
#: xFormers runs that bias as a causal mask: ``LowerTriangularMaskWithTensorBias`` is a
#: ``LowerTriangularMask``, which its CUTLASS op launches with ``CausalFromTopLeft``, so the
#: kernel stops each block of queries at the diagonal and reads only the bias's tiles on and
#: below it (facebookresearch/xformers, xformers/ops/fmha/attn_bias.py and cutlass.py,
#: ``_custom_mask_type``).
CAUSAL_SOURCE = ("facebookresearch/xformers xformers/ops/fmha/cutlass.py: _custom_mask_type "
                 "runs a LowerTriangularMask (ALiBi's tensor-bias mask is one) causal from "
                 "the top left")
#: 2023 vLLM's sampler computes logits for the last token of each prompt only (its
#: ``_prune_hidden_states``; vllm-project/vllm, vllm/model_executor/layers/sampler.py).
LM_HEAD_SOURCE = "vllm-project/vllm vllm/model_executor/layers/sampler.py: _prune_hidden_states"
#: L2 cache of the two GPUs, bytes: H100 SXM5 50 MB (NVIDIA, "NVIDIA H100 Tensor Core GPU
#: Architecture" whitepaper, 2022, its A100/H100 comparison table), A100 40 MB (NVIDIA,
#: "NVIDIA A100 Tensor Core GPU Architecture" whitepaper, 2020). Read as 10^6 bytes; read as
#: MiB every crossing :func:`l2_crossings` gives moves by 5% and stays between the same two
#: of :data:`STEP_TOKENS` (or 512 and 1,024).
L2_BYTES = {"H100-SXM": 50e6, "A100-SXM-80GB": 40e6}
L2_SOURCE = ("NVIDIA's H100 and A100 architecture whitepapers: 50 MB and 40 MB")


def l2_crossings(model, tp: int, l2_bytes: float) -> tuple[float, float]:
    """Tokens a prefill step holds when one GPU's copy of an activation outgrows an L2 cache
    of ``l2_bytes``: the residual stream (hidden x 2 bytes a token, the same at every TP) and
    the MLP's intermediate (up, and gate, output: ffn / TP x 2 bytes each, a token).

    >>> from compute.models import get_model
    >>> [round(x) for x in l2_crossings(get_model("Llama-2-70B"), 8, 50e6)]  # 8192 x 2; 2 x 3584 x 2
    [3052, 3488]
    >>> [round(x) for x in l2_crossings(get_model("BLOOM-176B"), 8, 50e6)]   # 14336 x 2; 7168 x 2
    [1744, 3488]
    """
    mlp = (2 if model.gated_mlp else 1) * model.ffn / tp * 2
    return l2_bytes / (model.hidden * 2), l2_bytes / mlp


def activation_vectors(model, tp: int) -> float:
    """Hidden-sized vectors (hidden x 2 bytes) one token's activations move through one GPU's
    HBM in one layer as 2023 vLLM runs it, kernel by kernel, outside the GEMMs' weights: each
    of the two norms reads and writes one, each of the two residual additions reads two and
    writes one; the GEMMs read their inputs and write their outputs (QKV, output projection,
    up (and gate), down); attention reads Q, K, V and writes its output; the activation
    function reads the up (and gate) output and writes the intermediate; each of the two
    all-reduces reads its input, writes its output, and writes and reads the 2 (TP - 1) / TP
    its ring receives. Every such byte missing the L2 at the HBM's peak is the most an L2
    that stops holding them can add.

    >>> from compute.models import get_model
    >>> activation_vectors(get_model("Llama-2-70B"), 8)  # 10 + 5.59375 + 0.28125 + 1.3125 + 11
    28.1875
    """
    h, gate = model.hidden, 2 if model.gated_mlp else 1
    qkv = (model.heads + 2 * model.kv_heads) * model.head_dim / tp / h
    out = model.heads * model.head_dim / tp / h
    ffn = model.ffn / tp / h
    norms_adds = 2 * 2 + 2 * 3
    gemms = (1 + qkv) + (out + 1) + (1 + gate * ffn) + (ffn + 1)
    return (norms_adds + gemms + (qkv + out) + (gate * ffn + ffn)
            + 2 * (2 + 2 * 2 * (tp - 1) / tp))


def wave_efficiency(tiles: int, sms: int) -> float:
    """Fraction of a GEMM's waves of ``sms`` tiles that its ``tiles`` fill. Doubling a step's
    tokens doubles the tiles along M, and ceil(2 n / s) <= 2 ceil(n / s): it never falls.

    >>> wave_efficiency(80, 132), wave_efficiency(160, 132), wave_efficiency(320, 132)
    (0.6060606060606061, 0.6060606060606061, 0.8080808080808081)
    """
    return tiles / (-(-tiles // sms) * sms)


def prefill_cost(rows) -> dict:
    """Measured seconds per token of the prefill rows of ``rows`` whose step holds one of
    :data:`STEP_TOKENS`: ``{(gpu, model, tp, short): {tokens: s/token}}``, ``short`` False for
    one prompt of ``tokens``, True for prompts of :data:`SHORT_PROMPT`."""
    out: dict = {}
    for m in rows:
        if m.phase != "prefill" or m.batch * m.prompt not in STEP_TOKENS:
            continue
        if m.batch == 1 or m.prompt == SHORT_PROMPT:
            out.setdefault((m.gpu, m.model, m.tp, m.batch != 1), {})[m.batch * m.prompt] = \
                m.latency_s / (m.batch * m.prompt)
    return out


def rise(costs: dict, at: int = 4096, base_tokens: int = 2048) -> float:
    """Seconds per token a step of ``at`` tokens costs beyond one of ``base_tokens``."""
    return costs[at] - costs[base_tokens]


def alibi_bias_bytes(model, tp: int, batch: int, prompt: int, dtype_bytes: int = 2) -> int:
    """Bytes of the ALiBi bias one GPU holds for a prefill step of ``batch`` prompts of
    ``prompt`` tokens (:data:`ALIBI_SOURCE`): prompts x heads/tp x prompt x prompt rounded up
    to 8.

    >>> from compute.models import get_model
    >>> alibi_bias_bytes(get_model("BLOOM-176B"), 8, 1, 8192)  # 14 x 8192 x 8192 x 2
    1879048192
    """
    return batch * (model.heads // tp) * prompt * (-(-prompt // 8) * 8) * dtype_bytes


def alibi_bias_seconds(model, tp: int, batch: int, prompt: int, hbm_bandwidth: float) -> float:
    """Seconds one GPU's HBM spends on the ALiBi bias of a prefill step at its peak
    ``hbm_bandwidth`` (bytes/s): built once (written, then read and written to scale it by
    the slopes: 3 passes of :func:`alibi_bias_bytes`) and read by every layer's attention on
    and below its diagonal only, ``(prompt + 1) / (2 prompt)`` of it (:data:`CAUSAL_SOURCE`;
    the kernel's tiles of 64 keys add under 1% at 8,192 tokens, not counted).

    >>> from compute.models import get_model
    >>> round(alibi_bias_seconds(get_model("BLOOM-176B"), 8, 1, 8192, 3.35e12) * 1e3, 2)
    21.32
    """
    passes = 3 + model.layers * (prompt + 1) / (2 * prompt)
    return passes * alibi_bias_bytes(model, tp, batch, prompt) / hbm_bandwidth


def long_prompt_excess(costs: dict, gpu: str, model, tp: int, tokens: int) -> tuple:
    """What one prompt of ``tokens`` costs beyond ``tokens`` / :data:`SHORT_PROMPT` prompts
    of :data:`SHORT_PROMPT` tokens in a step of the same tokens (``costs`` of
    :func:`prefill_cost`), and the attention FLOPs a GPU does more for it (causal: 4 x the
    (query, key) pairs x head dimension x heads / TP x layers): ``(seconds, FLOPs)``. The
    GEMMs, collectives and per-token work are the same in both steps, so their ratio is the
    rate the long prompt's extra attention ran at.

    >>> from compute.models import get_model
    >>> c = {("G", "Llama-2-70B", 8, False): {8192: 2e-4},
    ...      ("G", "Llama-2-70B", 8, True): {8192: 1e-4}}
    >>> s, f = long_prompt_excess(c, "G", get_model("Llama-2-70B"), 8, 8192)
    >>> round(s, 4), f"{f:.4e}"  # 8192 x 1e-4 s; 4 x 31,457,280 pairs x 128 x 64/8 x 80
    (0.8192, '1.0308e+13')
    """
    one = costs[(gpu, model.name, tp, False)][tokens]
    short = costs[(gpu, model.name, tp, True)][tokens]
    pairs = model.prefill_pairs(tokens) - tokens // SHORT_PROMPT * model.prefill_pairs(
        SHORT_PROMPT)
    return tokens * (one - short), 4 * pairs * model.head_dim * model.heads / tp * model.layers


def step_size(markdown: bool) -> list[str]:
    """What the measured prefill steps cost per token as a step holds more tokens, on both
    systems; then the candidates for why it rises, each with its numbers."""
    from compute.hardware import get_gpu
    from compute.models import get_model
    from compute.profile_fit import predict
    from compute.profiles import get_profile

    h100, a100 = held_out(), a100_rows()
    costs = prefill_cost(h100) | prefill_cost(a100)
    head = ["GPU", "model", "TP", "prompts", *(f"{n:,} tok us/tok" for n in STEP_TOKENS),
            "2,048 -> 4,096"]
    rows = []
    # the H100 (the shipped profile's system) first
    for (gpu, model, tp, short), c in sorted(costs.items(), key=lambda kv: (
            kv[0][0] != "H100-SXM", kv[0])):
        rows.append([gpu, model, str(tp), f"of {SHORT_PROMPT}" if short else "one",
                     *(f"{c[n] * 1e6:.1f}" if n in c else "" for n in STEP_TOKENS),
                     f"{c[4096] / c[2048] - 1:+.0%}"])
    out = render(head, rows, markdown)
    llama, bloom = get_model("Llama-2-70B"), get_model("BLOOM-176B")
    gpu = "H100-SXM"

    def pair(model, tp):
        return [rise(costs[(gpu, model, tp, s)]) for s in (False, True)]

    tp = 8   # the only degree the source ran BLOOM-176B at
    l8, b8 = pair("Llama-2-70B", tp), pair("BLOOM-176B", tp)
    width = bloom.layers * bloom.hidden / (llama.layers * llama.hidden)
    flops = (bloom.layers * bloom.dense_layer_parameters
             / (llama.layers * llama.dense_layer_parameters))
    by_tp = {n: pair("Llama-2-70B", n) for n in (2, 4, 8)}
    uniform = [(costs[(gpu, "BLOOM-176B", tp, s)][2048],
                costs[(gpu, "Llama-2-70B", tp, s)][2048])
               for s in (False, True)]
    # the rise over the bytes each GPU sends in a step's ring all-reduces, per token
    sent = [r / (m.layers * 2 * 2 * (tp - 1) / tp * m.hidden * 2) * 1e12
            for r, m in ((l8[0], llama), (b8[0], bloom))]
    bw0 = _busbw()[0][1][2 ** 25] * 1e9   # the H100's at 32 MiB
    summary = [
        "At TP 8 the measured prefill cost per token rises once a step holds more than "
        "2,048 tokens, on both GPUs, for both models, whether the step is one prompt or "
        f"prompts of {SHORT_PROMPT}: on the H100 by {l8[0] * 1e6:.1f} and {l8[1] * 1e6:.1f} us "
        f"a token (Llama-2-70B, one prompt and prompts of {SHORT_PROMPT}), "
        f"{b8[0] * 1e6:.1f} and {b8[1] * 1e6:.1f} (BLOOM-176B). The shipped profile has one "
        "cost per token, fitted on steps of 2,048 and 8,192 tokens, so it comes out slow "
        "below the rise and fast above it, for the model it was fitted on as for BLOOM-176B.",
        f"BLOOM-176B's rise over Llama-2-70B's: {b8[0] / l8[0]:.2f} (one prompt), "
        f"{b8[1] / l8[1]:.2f} (prompts of {SHORT_PROMPT}); their layers x hidden: "
        f"{width:.2f}; their GEMM FLOPs a token (layer weights): {flops:.2f}. The rise goes "
        "with what a token carries through a layer (the activations: all-reduces, norms, "
        "element-wise kernels), not with its GEMM FLOPs: not the GEMM efficiency; the "
        "profile's is one number at every shape ("
        f"{get_profile(PROFILE).gemm_efficiency:.3f}, no curve by intensity), so BLOOM's "
        "14,336-wide GEMMs extrapolate nothing.",
        "A slowdown of everything alike (clocks held down by a power or thermal limit) "
        "would raise both by the same fraction, BLOOM-176B's rise over Llama-2-70B's then "
        "being their costs' ratio at 2,048 tokens ("
        + " and ".join(f"{bl / ll:.2f}" for bl, ll in uniform) + "); measured "
        f"{b8[0] / l8[0]:.2f} and {b8[1] / l8[1]:.2f}: nearer the activations' "
        f"{width:.2f}, though not far enough to rule it out.",
        f"Prompts of {SHORT_PROMPT} rise nearly as one long prompt does, though attention's "
        "FLOPs per token grow with the prompt, not the step: the rise is not attention "
        "(what one long prompt costs beyond the rise is: below).",
        "The rise grows with TP (Llama-2-70B on the H100, one prompt and prompts of "
        f"{SHORT_PROMPT}, us a token: "
        + "; ".join(f"TP {n} {a * 1e6:.1f} and {b * 1e6:.1f}" for n, (a, b) in by_tp.items())
        + "), where work divided among the GPUs would shrink and work each GPU repeats "
        "would stay: of the work that grows with the tokens of a step, only the "
        "collectives grow with TP (so does how many of the server's 8 GPUs run, were a "
        "power or cooling limit shared by the server the cause). No published all-reduce measurement falls at these sizes "
        "(the messages are tokens x hidden x 2 bytes: 2,048 to 4,096 tokens are "
        f"{2048 * llama.hidden * 2 / 1e6:.1f} to {4096 * llama.hidden * 2 / 1e6:.1f} MB for "
        f"Llama-2-70B, {2048 * bloom.hidden * 2 / 1e6:.1f} to "
        f"{4096 * bloom.hidden * 2 / 1e6:.1f} MB for BLOOM-176B; "
        + _busbw_note() + "). Were the all-reduces the cause, each byte a GPU sends in "
        "their rings (2 a layer, 2 (TP - 1) / TP x tokens x hidden x 2 bytes each) would "
        "cost " + " and ".join(f"{ps:.1f} ps" for ps in sent) + " more above 2,048 tokens "
        "(Llama-2-70B and BLOOM-176B at TP 8, one prompt): alike, as a cause there would "
        f"be; from the H100's {bw0 / 1e9:.0f} GB/s at 32 MiB, a fall to "
        + " and ".join(f"{1 / (1 / bw0 + ps * 1e-12) / 1e9:.0f}" for ps in sent)
        + " GB/s. Nothing published shows such a fall, so nothing supports a model of it.",
    ]
    summary.insert(1, _left_per_unit(h100, (llama, bloom), tp))
    peak = get_gpu(gpu).peak_flops("bf16")
    # a clock that falls once a step runs long (a GPU's power limit averaged over a window)
    # would show at every TP: step lengths and costs per token, one prompt
    t2, t8 = costs[(gpu, "Llama-2-70B", 2, False)], costs[(gpu, "Llama-2-70B", 8, False)]
    summary.append(
        "Nor is it a GPU's clock falling once a step runs long (a power limit averaged over "
        "a window): at TP 8 Llama-2-70B's steps of 2,048 and 4,096 tokens last "
        f"{t8[2048] * 2048 * 1e3:.0f} and {t8[4096] * 4096 * 1e3:.0f} ms and cost "
        f"{t8[2048] * 1e6:.1f} and {t8[4096] * 1e6:.1f} us a token, but at TP 2 its steps of "
        f"1,024 and 4,096 tokens, {t2[1024] * 1024 * 1e3:.0f} and "
        f"{t2[4096] * 4096 * 1e3:.0f} ms, cost {t2[1024] * 1e6:.1f} and "
        f"{t2[4096] * 1e6:.1f} us a token: a step's length alone does not raise its cost "
        "(a limit shared by the server's GPUs, 2 of 8 busy at TP 2, is not ruled out).")
    summary += _not_l2_gemms_or_ring(h100 + a100, costs, (llama, bloom), by_tp)
    # what one long prompt costs beyond prompts of 512 of the same tokens: its attention
    rate = peak * get_profile(PROFILE).attention_efficiency
    excess = {(mm.name, n): long_prompt_excess(costs, gpu, mm, tp, n)
              for mm in (llama, bloom) for n in (4096, 8192)}

    def beyond(key):   # seconds of the excess beyond attention at the profile's rate
        return excess[key][0] - excess[key][1] / rate

    lx, bx = excess[("Llama-2-70B", 8192)], excess[("BLOOM-176B", 8192)]
    summary.append(
        f"One prompt of 8,192 tokens against {8192 // SHORT_PROMPT} of {SHORT_PROMPT} at TP "
        f"{tp} on the H100 (the same GEMMs, collectives and per-token work; only attention "
        f"differs): Llama-2-70B {lx[0] * 1e3:.1f} ms more for {lx[1]:.3g} FLOP more of "
        f"attention a GPU, {lx[1] / lx[0] / 1e12:.0f} TFLOP/s, near the "
        f"{rate / 1e12:.0f} TFLOP/s (FlashAttention-2) {PROFILE} takes; BLOOM-176B "
        f"{bx[0] * 1e3:.1f} ms more for {bx[1]:.3g} FLOP, {bx[1] / bx[0] / 1e12:.0f} "
        f"TFLOP/s, {lx[1] / lx[0] / (bx[1] / bx[0]):.1f}x slower (at 4,096 tokens, where "
        "the differences are smaller, "
        + " and ".join(f"{excess[(n, 4096)][0] * 1e3:.1f} ms" for n in ("Llama-2-70B",
                                                                         "BLOOM-176B"))
        + ": " + " and ".join(f"{excess[(n, 4096)][1] / excess[(n, 4096)][0] / 1e12:.0f}"
                              for n in ("Llama-2-70B", "BLOOM-176B"))
        + " TFLOP/s). BLOOM's ALiBi is the cause the engine's code shows: its bias is a "
        f"tensor, which sends the prompts from FlashAttention-2 to xFormers' CUTLASS "
        f"kernel ({KERNEL_SOURCE}) and adds the bias's reads; Llama-2-70B's causal mask "
        "is no tensor. Not built into the profile: no published rate of that kernel with "
        "a tensor bias on the H100 was found, and setting one from these rows would fit "
        "the held-out model.")
    # BLOOM-176B's 8,192-token prompt: the profile's miss, and what is left of it without
    # the attention beyond the profile's rate
    m = next(m for m in h100 if m.model == "BLOOM-176B" and m.phase == "prefill"
             and m.batch == 1 and m.prompt == 8192)
    g = get_gpu(gpu)
    bias = alibi_bias_bytes(bloom, m.tp, m.batch, m.prompt)
    bias_s = alibi_bias_seconds(bloom, m.tp, m.batch, m.prompt, g.hbm_bandwidth)
    predicted = predict(get_profile(PROFILE), m, scenario_comm()(m))
    gap = m.latency_s - predicted
    attn_s = (4 * bloom.prefill_pairs(m.prompt) * bloom.head_dim * bloom.heads / m.tp
              * bloom.layers / rate)
    head_s = (2 * m.prompt * bloom.hidden * bloom.vocab / m.tp
              / (peak * get_profile(PROFILE).gemm_efficiency))
    kept = m.latency_s - beyond(("BLOOM-176B", 8192))
    batched = next(x for x in h100 if x.model == "BLOOM-176B" and x.phase == "prefill"
                   and x.batch == 8192 // SHORT_PROMPT and x.prompt == SHORT_PROMPT)
    summary.append(
        f"BLOOM-176B's 8,192-token prompt, {m.latency_s * 1e3:,.0f} ms measured, "
        f"{gap * 1e3:,.0f} ms more than {PROFILE} predicts ({predicted / m.latency_s - 1:+.1%})."
        f" Of that, {beyond(('BLOOM-176B', 8192)) * 1e3:.0f} ms is the long prompt's "
        f"attention beyond the {rate / 1e12:.0f} TFLOP/s above (Llama-2-70B's: "
        f"{beyond(('Llama-2-70B', 8192)) * 1e3:.0f} ms); without it the row would read "
        f"{predicted / kept - 1:+.1%}, as its {batched.batch} prompts of {SHORT_PROMPT} read "
        f"{predict(get_profile(PROFILE), batched, scenario_comm()(batched)) / batched.latency_s - 1:+.1%}"
        ": the rest is the rise above 2,048 tokens a step that Llama-2-70B's own rows show. "
        f"Its ALiBi bias ({ALIBI_SOURCE}): {bias / 1e9:.2f} GB a GPU, built once a step "
        f"and read on and below its diagonal by each of its {bloom.layers} layers (the kernel "
        f"runs it as a causal mask: {CAUSAL_SOURCE}), {bias_s * 1e3:.0f} ms at the HBM's "
        f"peak, part of that attention (vLLM builds the {m.prompt:,} x {m.prompt:,} "
        "differences on the host and copies them to the GPU each step, a cost neither mode "
        f"counts); its attention at {PROFILE}'s FlashAttention-2 rate "
        f"{attn_s * 1e3:.0f} ms. Its LM head "
        f"(250,880 words) over every token of the prompt, not only the last ({LM_HEAD_SOURCE}"
        f" computes the last only), would take {head_s * 1e3:.1f} ms at {PROFILE}'s GEMM "
        "efficiency. Nor do the norm after the embeddings or the GELU come near "
        "(element-wise, part of the per-token cost both models share).")
    # what a term built from the one published figure for the fallback kernel would give
    slow = CUTLASS_VS_FLASH[0] / CUTLASS_VS_FLASH[1]
    added = attn_s * (1 / slow - 1) + bias_s
    summary.append(
        f"Were {PROFILE} to charge an ALiBi model's prefill attention at the one published "
        f"H100 rate found for the fallback kernel, {slow:.2f} of FlashAttention's "
        f"({CUTLASS_VS_FLASH[2]}), and the bias's reads at the HBM's peak, BLOOM-176B's "
        f"8,192-token prompt would gain {attn_s * (1 / slow - 1) * 1e3:.0f} + "
        f"{bias_s * 1e3:.0f} ms and read {(predicted + added) / m.latency_s - 1:+.1%}: "
        f"{added / beyond(('BLOOM-176B', 8192)):.0%} of the "
        f"{beyond(('BLOOM-176B', 8192)) * 1e3:.0f} ms. Not built: that figure is a later "
        "copy of the kernel at another shape, without a bias, and the model catalog does "
        "not say which models use ALiBi; what would be built is a kernel rate measured at "
        "these shapes with a tensor bias.")
    # on the A100 prompts of 512 carry a cost of their own: the comparison does not hold there
    a = long_prompt_excess(costs, "A100-SXM-80GB", llama, tp, 8192)[0]
    summary.append(
        f"On the A100 the comparison does not separate attention: there Llama-2-70B's "
        f"{8192 // SHORT_PROMPT} prompts of {SHORT_PROMPT} take {-a * 1e3:.0f} ms more than "
        "its one prompt of 8,192 tokens, a cost of batched prompts the H100 rows do not show.")
    return out + ([f"- {s}" for s in summary] if markdown else summary)


def _not_l2_gemms_or_ring(rows, costs: dict, models, by_tp: dict) -> list[str]:
    """Three candidates for the rise above 2,048 tokens a step, each against the rows: the
    activations outgrowing the L2 cache (:func:`l2_crossings`, :func:`activation_vectors`),
    the GEMMs (:func:`wave_efficiency`; the efficiency the rise would need) and a ring
    all-reduce that slows above some size (the rise per byte a GPU sends, by TP)."""
    from compute.hardware import get_gpu
    from compute.profiles import get_profile

    llama, bloom = models
    h, a = "H100-SXM", "A100-SXM-80GB"

    def marginal(gpu, model, tp, lo, hi, short):   # us a token more, from lo to hi tokens
        def at(n):
            return next(m.latency_s for m in rows if m.gpu == gpu and m.model == model.name
                        and m.tp == tp and m.phase == "prefill" and m.batch * m.prompt == n
                        and (m.batch == 1 if not short else m.prompt == SHORT_PROMPT))
        return (at(hi) - at(lo)) / (hi - lo) * 1e6

    def steps(gpu, model, tp, bounds):
        return ", ".join(" and ".join(f"{marginal(gpu, model, tp, lo, hi, s):.0f}"
                                      for s in (False, True))
                         + f" from {lo:,} to {hi:,}" for lo, hi in pairwise(bounds))

    cross = {(g, m.name, tp): l2_crossings(m, tp, L2_BYTES[g])
             for g in (h, a) for m in models for tp in (2, 4, 8)}
    need = {(g, m.name): rise(costs[(g, m.name, 8, False)]) * get_gpu(g).hbm_bandwidth
            / (m.layers * m.hidden * 2) for g in (h, a) for m in models}
    moved = {tp: activation_vectors(llama, tp) for tp in (2, 8)}
    share = {g: max(activation_vectors(m, 8) / need[(g, m.name)] for m in models)
             for g in (h, a)}
    # of those vectors, the MLP intermediate's: written by up (and gate), read and written
    # by the activation function, read by down
    mlp_share = {g: max((2 * (2 if m.gated_mlp else 1) + 2) * m.ffn / 8 / m.hidden
                        / need[(g, m.name)] for m in models) for g in (h, a)}
    mlp_bytes = {(2 if m.gated_mlp else 1) * m.ffn // 8 * 2 for m in models}
    (mlp8,) = mlp_bytes   # the same for both models at TP 8
    bounds = (512, 1024, 2048, 4096)
    l2 = [
        f"Nor is it the activations outgrowing the L2 cache ({L2_SOURCE}), so that norms and "
        "element-wise kernels read them from HBM. A GPU's residual stream (the same at "
        f"every TP) outgrows it at {cross[(h, llama.name, 8)][0]:,.0f} tokens for "
        f"Llama-2-70B but {cross[(h, bloom.name, 8)][0]:,.0f} for BLOOM-176B on the H100 "
        f"({cross[(a, llama.name, 8)][0]:,.0f} and {cross[(a, bloom.name, 8)][0]:,.0f} on "
        "the A100), so BLOOM-176B's cost would rise a doubling earlier; but what a token "
        "more costs it (the marginal cost, in which fixed costs cancel; one prompt and "
        f"prompts of {SHORT_PROMPT}, us) is {steps(h, bloom, 8, bounds)} tokens on the H100 "
        f"({steps(a, bloom, 8, bounds)} on the A100): it rises where Llama-2-70B's does. "
        f"The MLP's intermediate ({mlp8:,} bytes a token for both models at TP 8) outgrows "
        f"it within the step ({cross[(h, llama.name, 8)][1]:,.0f} and "
        f"{cross[(a, llama.name, 8)][1]:,.0f} tokens), but its reads and writes are at most "
        f"{mlp_share[h]:.0%} of the rise on the H100 ({mlp_share[a]:.0%} on the A100; "
        "counted below), and at TP 4, twice as large, it outgrows the H100's at "
        f"{cross[(h, llama.name, 4)][1]:,.0f} tokens, where Llama-2-70B's marginal cost does "
        f"not rise ({steps(h, llama, 4, bounds)}). And the L2 holds too "
        "little of what rises: at the HBM's peak the rise is "
        f"{need[(h, llama.name)]:.0f} and {need[(h, bloom.name)]:.0f} hidden-sized vectors a "
        f"token and layer on the H100 ({need[(a, llama.name)]:.0f} and "
        f"{need[(a, bloom.name)]:.0f} on the A100; Llama-2-70B and BLOOM-176B at TP 8, one "
        f"prompt), where a token's activations move {moved[8]:.1f} through a layer "
        f"(Llama-2-70B; BLOOM-176B {activation_vectors(bloom, 8):.1f}; 2023 "
        "vLLM's kernels: every norm, residual addition, GEMM input and output, attention, "
        "activation function and all-reduce buffer): were all of them read from the L2 "
        f"below 2,048 tokens and from HBM above, {share[h]:.0%} of the rise at most on the "
        f"H100, {share[a]:.0%} on the A100; and at "
        f"TP 2, where nothing rises, they are more ({moved[2]:.1f})."]
    gpu, prof = get_gpu(h), get_profile(PROFILE)
    gemm = {m.name: 2 * m.dense_layer_parameters * m.layers / 8
            / (gpu.peak_flops("bf16") * prof.gemm_efficiency) for m in models}
    needed = {n: prof.gemm_efficiency * t / (t + rise(costs[(h, n, 8, False)]))
              for n, t in gemm.items()}
    l2.append(
        "Nor is it the GEMMs: doubling a step's tokens doubles a GEMM's tiles along M and "
        "never lowers the fraction of its last wave they fill (ceil(2 n / s) <= "
        "2 ceil(n / s) for n tiles on s SMs), so wave quantization cannot make a token cost "
        f"more at 4,096 tokens than at 2,048; and at {PROFILE}'s GEMM efficiency "
        f"({prof.gemm_efficiency:.3f}) a token's GEMMs take "
        + " and ".join(f"{t * 1e6:.1f}" for t in gemm.values())
        + " us at TP 8 on the H100 (Llama-2-70B and BLOOM-176B), so the rise (one prompt) "
        "would have them at " + " and ".join(f"{e:.2f}" for e in needed.values())
        + " of peak above 2,048 tokens.")
    comm = scenario_comm()(None)
    busbw = {tp: 2 ** 26 * 2 * (tp - 1) / tp
             / float(comm.collective_time("all-reduce", float(2 ** 26), tp)) / 1e9
             for tp in by_tp}
    per_byte = {tp: [r / (llama.layers * 2 * 2 * (tp - 1) / tp * llama.hidden * 2) * 1e12
                     for r in pair] for tp, pair in by_tp.items()}
    growth = [per_byte[8][i] / per_byte[2][i] for i in (0, 1)]
    l2.append(
        "Nor a ring all-reduce that slows above some size: over a switch each GPU's ring "
        "bytes cross its own links at a rate that barely depends on TP (the h100-dgx "
        "scenario at 64 MiB: " + ", ".join(f"{b:.0f}" for b in busbw.values())
        + " GB/s at TP " + ", ".join(str(t) for t in busbw) + "), so its slowing would "
        "cost the same per byte at every TP, but per byte a GPU sends in its rings the rise "
        "is " + "; ".join(f"{a_:.2f} and {b_:.2f} ps at TP {tp}"
                         for tp, (a_, b_) in per_byte.items())
        + f" (Llama-2-70B on the H100, one prompt and prompts of {SHORT_PROMPT}), "
        f"{min(growth):.0f} to {max(growth):.0f} times more at TP 8 than at TP 2, growing "
        "nearer in proportion to TP - 1 (the rise per token over TP - 1: "
        + "; ".join(f"{a_ / (tp - 1) * 1e6:.2f} and {b_ / (tp - 1) * 1e6:.2f} us at TP {tp}"
                    for tp, (a_, b_) in by_tp.items())
        + "). And a size above which it slowed would lie between BLOOM-176B's 2,048-token "
        f"message ({2048 * bloom.hidden * 2 / 1e6:.1f} MB, before the rise) and "
        f"Llama-2-70B's 4,096-token one ({4096 * llama.hidden * 2 / 1e6:.1f} MB, after), "
        "where nccl-tests' bus bandwidth grows (32 and 64 MiB above).")
    return l2


def _left_per_unit(rows, models, tp: int) -> str:
    """The prefill steps of prompts of :data:`SHORT_PROMPT` at ``tp`` on the H100 in the
    profile's own form: seconds a token costs a layer and a unit of hidden size beyond what
    the shipped profile charges for its GEMMs, attention, collectives and fixed overheads
    (the measured step less the profile's prediction, over tokens x layers x hidden, plus
    its ``token_overhead_s``), for each model and step size."""
    from compute.profile_fit import predict
    from compute.profiles import get_profile

    prof, comm = get_profile(PROFILE), scenario_comm()
    left: dict = {}
    for m in rows:
        model = next((x for x in models if x.name == m.model), None)
        if model is None or m.tp != tp or m.phase != "prefill" or m.prompt != SHORT_PROMPT:
            continue
        n, predicted = m.batch * m.prompt, predict(prof, m, comm(m))
        left.setdefault(model.name, {})[n] = (
            (m.latency_s - predicted) / (n * model.layers * model.hidden)
            + prof.token_overhead_s, predicted / m.latency_s - 1)
    (a, la), (b, lb) = ((x.name, left[x.name]) for x in models)
    steps = sorted(set(la) & set(lb))
    ratio = [lb[n][0] / la[n][0] for n in steps]
    low = [v[0] for d in (la, lb) for n, v in d.items() if n <= 2048]
    high = [v[0] for d in (la, lb) for n, v in d.items() if n > 2048]

    def says(d):
        return ", ".join(f"{d[n][0] * 1e11:.1f}" for n in sorted(d))

    return (f"The same steps in the profile's own form, what a token costs a layer and a "
            "unit of hidden size beyond the GEMMs, attention, collectives and fixed "
            f"overheads {PROFILE} charges (prompts of {SHORT_PROMPT} at TP {tp} on the H100, "
            f"steps of {min(steps):,} to {max(steps):,} tokens, 1e-11 s): {a} {says(la)}; "
            f"{b} {says(lb)}; {PROFILE}'s one value {prof.token_overhead_s * 1e11:.1f}. The "
            f"held-out model costs what the fitted one does at every step size ({b} over {a} "
            f"{min(ratio):.2f} to {max(ratio):.2f}): the form carries from one model to the "
            f"other. What it lacks is the step: {min(low) * 1e11:.1f} to "
            f"{max(low) * 1e11:.1f} up to 2,048 tokens a step, {min(high) * 1e11:.1f} to "
            f"{max(high) * 1e11:.1f} above, and one value fitted on steps of 2,048 and 8,192 "
            f"tokens falls between. So {b}'s prefill misses are the fitted model's own: its "
            f"{8192 // SHORT_PROMPT} prompts of {SHORT_PROMPT} read {lb[8192][1]:+.1%}, "
            f"{a}'s {la[8192][1]:+.1%}.")


#: Published all-reduce bus bandwidth on the two systems, 8 GPUs: (label, file, which rows).
NCCL_ALLREDUCE = (
    ("8xH100-SXM (Azure ND H100 v5, NCCL 2.18.5)",
     ROOT / "tests" / "netmodel" / "data" / "nccl_allreduce_published.csv",
     lambda r: r["case"] == "h100-8"),
    ("8xA100-SXM-80GB (NCCL 2.18.5)", REFERENCE / "nccl_allreduce_busbw_8gpu.csv",
     lambda r: r["system"].startswith("8xA100-SXM-80GB")),
)


def _busbw() -> list[tuple[str, dict]]:
    """nccl-tests' all-reduce bus bandwidth (GB/s) by message bytes on 8 H100 and 8 A100
    (:data:`NCCL_ALLREDUCE`): ``[(system, {bytes: GB/s})]``."""
    out = []
    for label, path, pick in NCCL_ALLREDUCE:
        with open(path) as fh:
            rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
        out.append((label, {int(r["bytes"]): float(r["busbw_GBps"]) for r in rows if pick(r)}))
    return out


def _busbw_note() -> str:
    """nccl-tests' bus bandwidth at 32, 64 and 128 MiB on 8 H100 and 8 A100."""
    parts = [f"{label} {bw[2 ** 25]:.0f}, {bw[2 ** 26]:.0f} and {bw[2 ** 27]:.0f} GB/s"
             for label, bw in _busbw()]
    return "nccl-tests' all-reduce bus bandwidth at 32, 64 and 128 MiB: " + "; ".join(parts)
