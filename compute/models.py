"""LLM model specifications: the catalog in ``compute/data/models.toml``, user files, and
HuggingFace ``config.json`` files (read offline).

A :class:`ModelSpec` describes a decoder-only transformer: its shape, how its attention, MLP
and embeddings are built, and the dtypes its weights, KV cache and activations are stored in.
Besides plain multi-head and grouped-query attention it knows

* **mixture of experts** (``experts``, ``experts_per_token``; Mixtral, Qwen-MoE, DeepSeek):
  routed experts of ``ffn`` columns each, optional always-active shared experts
  (``shared_ffn``), and dense MLP layers among the MoE ones (``dense_layers`` of
  ``dense_ffn`` columns: DeepSeek-V3's first three);
* **multi-head latent attention** (MLA, DeepSeek-V2/V3: ``kv_lora_rank`` > 0): keys and values
  are compressed into a latent of ``kv_lora_rank`` elements per token plus one rotary key of
  ``qk_rope_head_dim`` shared by all heads; queries go through a low-rank projection of
  ``q_lora_rank``. See :attr:`ModelSpec.attention_parameters` for how its parameters are
  counted and :mod:`compute.roofline` for its KV cache and FLOPs;
* **sliding-window attention** (``sliding_window``, ``sliding_layers``; Mistral-7B-v0.1,
  Gemma-2, Gemma-3): a windowed layer keeps and attends to only the last
  ``sliding_window`` tokens (:meth:`ModelSpec.kv_tokens_held`,
  :meth:`ModelSpec.attention_span`), as an engine that frees the blocks leaving the
  window does (vLLM's hybrid KV-cache manager); the figures are averages over the layers.

Parameter counts are exact for the catalog's families (checked against published counts in
the tests); what is left out is said where it is (e.g. DeepSeek-V3's multi-token-prediction
module, which its published 671B also excludes).

>>> m = get_model("Llama-3-70B")
>>> m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim
(80, 8192, 64, 8, 128)
>>> round(m.parameters / 1e9, 2)
70.55
>>> round(get_model("GPT-3-175B").parameters / 1e9, 1)
174.6
>>> ds = get_model("DeepSeek-V3")
>>> round(ds.parameters / 1e9, 1), round(ds.active_parameters / 1e9, 1), ds.kv_elements_per_token
(671.0, 37.6, 576)
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import asdict, dataclass, fields
from functools import cache, cached_property
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compute import validate
from compute.config_files import check_keys, parse_table, read_table, read_text
from compute.errors import UserError, known

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DTYPE_BYTES",
    "HF_ALIASES",
    "HF_FAMILIES",
    "ModelSpec",
    "PLAIN_DTYPES",
    "get_model",
    "load_hf_config",
    "load_model_file",
    "model_catalog",
    "model_names",
]

#: Dtypes of activations and of the KV cache (and of a checkpoint's unquantized tensors).
PLAIN_DTYPES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
#: Group sizes of the group-quantized integer weight formats below.
QUANT_GROUPS = (32, 64, 128)


def _grouped_bytes(bits: int, group: int, zero: bool) -> float:
    """Bytes per weight of ``bits``-bit integers quantized in groups of ``group`` input
    elements, each group with one 16-bit scale and, when ``zero``, one ``bits``-bit zero
    point: AWQ (AutoAWQ ``WQLinear_GEMM``: int32-packed ``qweight`` and ``qzeros``, fp16
    ``scales``), GPTQ (AutoGPTQ/GPTQModel: ``qweight``, ``qzeros``, fp16 ``scales``, stored
    even when ``sym``) and compressed-tensors' ``pack-quantized`` symmetric ``group``
    strategy (a ``weight_scale`` in the model's 16-bit dtype, no zero point). GPTQ's
    ``g_idx`` (one int32 per input row: 32 / out_features bits per weight, under 0.01
    bits at out_features >= 4096) is left out.

    >>> _grouped_bytes(4, 128, True) * 8     # AWQ / GPTQ int4, group 128
    4.15625
    """
    return (bits + (16 + (bits if zero else 0)) / group) / 8


#: Bytes per element of each storage dtype: the plain ones; ``int4`` / ``int8`` with one
#: scale (and zero) per output channel (per-channel, GPTQ group_size -1, compressed-tensors
#: ``channel`` strategy: under 0.01 bits per weight at 4096 input columns); ``intB-gG``
#: with one 16-bit scale and one B-bit zero per group of G weights, ``intB-gG-sym`` with
#: the scale only (:func:`_grouped_bytes`); bitsandbytes 4-bit (NF4 or FP4: one fp32
#: absmax per block of 64, bitsandbytes ``Params4bit`` default blocksize) and ``bnb4-dq``
#: with double quantization (the absmax stored in 8 bits, one fp32 scale per 256 of them:
#: QLoRA, Dettmers et al. 2023, arXiv 2305.14314, Section 3, 'Double Quantization').
DTYPE_BYTES = {**PLAIN_DTYPES, "int4": 0.5,
               **{f"int{b}-g{g}{'' if z else '-sym'}": _grouped_bytes(b, g, z)
                  for b in (4, 8) for g in QUANT_GROUPS for z in (True, False)},
               "bnb4": (4 + 32 / 64) / 8, "bnb4-dq": (4 + 8 / 64 + 32 / (64 * 256)) / 8}
#: Tensor-core dtypes the GEMMs may run at (the GPU catalog has peaks for these).
COMPUTE_DTYPES = ("bf16", "fp8")
#: The weights a GEMM multiplies, as :meth:`ModelSpec.fp8_gemm_share` names them.
GEMM_WEIGHTS = ("attention", "mlp", "embedding")
NORMS = ("rmsnorm", "layernorm")


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer. Counts are plain integers; dtypes name storage formats.
    Ranges of every count: ``compute/data/limits.toml``."""

    name: str
    layers: int              #: transformer layers
    hidden: int              #: width of the residual stream (d_model)
    heads: int               #: query heads
    kv_heads: int            #: key/value heads (== heads for multi-head attention and MLA)
    head_dim: int            #: query/key width per head (MLA: rotary + non-rotary parts)
    ffn: int                 #: MLP intermediate size (of each routed expert in an MoE model)
    vocab: int               #: vocabulary size (rows of the embedding and the LM head)
    gated_mlp: bool = True   #: SwiGLU: gate and up projections, then down
    tied_embeddings: bool = False  #: the LM head shares the embedding matrix
    learned_positions: int = 0     #: rows of a learned position table (0: rotary or ALiBi)
    bias: bool = False       #: every linear layer carries a bias (GPT-2/3, BLOOM)
    qkv_bias: bool = False   #: only the Q, K and V projections carry biases (Qwen2, Qwen-MoE)
    embedding_norm: bool = False   #: a norm right after the token embedding (BLOOM)
    norm: str = "rmsnorm"    #: ``"rmsnorm"`` (scale) or ``"layernorm"`` (scale and shift)
    weight_dtype: str = "bf16"     #: storage dtype of the weights
    #: storage dtype of the MLP weights (dense MLPs, routed and shared experts) where it
    #: differs from ``weight_dtype`` ("": the same); Meta's FP8 Llama-3.1 keeps attention,
    #: embeddings and the LM head in bf16 and stores only the MLPs in fp8
    mlp_weight_dtype: str = ""
    #: layers whose MLP is stored in ``mlp_weight_dtype`` (0: every layer); the others keep
    #: ``weight_dtype`` (Meta's FP8 recipe leaves the first and last layers' MLPs in bf16)
    mlp_dtype_layers: int = 0
    #: storage dtype of the token embedding, learned positions and the LM head where it
    #: differs from ``weight_dtype`` ("": the same); a 4-bit checkpoint quantizes only the
    #: linear layers and keeps these in its 16-bit dtype
    embedding_dtype: str = ""
    kv_dtype: str = "bf16"         #: storage dtype of the KV cache
    act_dtype: str = "bf16"        #: dtype of activations and of the TP collectives
    #: ``"fp8"``: the checkpoint is w8a8 fp8, its GEMMs whose weights are stored in fp8 take
    #: their input quantized to fp8 and run at the fp8 peak on a GPU with fp8 tensor cores
    #: (:meth:`fp8_gemm_share`); ``"bf16"``: every GEMM runs at the bf16 peak
    compute_dtype: str = "bf16"
    max_context: int = 0     #: the longest context the model supports, tokens (0: unknown)
    experts: int = 1         #: routed MLP experts per MoE layer (1: a dense model)
    experts_per_token: int = 1     #: routed experts each token goes through
    shared_ffn: int = 0      #: intermediate size of the always-active shared expert(s) of
    #: each MoE layer, all shared experts together (0: none)
    shared_expert_gate: bool = False  #: a sigmoid gate (hidden -> 1) on the shared expert (Qwen-MoE)
    dense_layers: int = 0    #: layers of an MoE model whose MLP is dense (DeepSeek-V3: 3)
    dense_ffn: int = 0       #: intermediate size of those dense MLPs (0: ``ffn``)
    kv_lora_rank: int = 0    #: MLA: width of the compressed KV latent (0: no MLA)
    q_lora_rank: int = 0     #: MLA: rank of the low-rank query projection (0: full rank)
    qk_rope_head_dim: int = 0  #: MLA: rotary part of each query/key head (its key is shared)
    v_head_dim: int = 0      #: MLA: value width per head (0: ``head_dim``)
    #: sliding-window attention: a windowed layer's query attends to (and its KV cache
    #: keeps) only the last ``sliding_window`` tokens (0: every layer attends to all)
    sliding_window: int = 0
    #: how many layers use the window (0: every layer); the others attend to the whole
    #: context (Gemma-2: 21 of 42 alternate; Gemma-3: 5 of every 6)
    sliding_layers: int = 0
    source: str = ""         #: where the figures come from

    def __post_init__(self):
        where = f"model {self.name!r}"
        validate.name("", "model", self.name)
        for f in fields(self):
            if f.type == "int" or f.type is int:
                validate.in_range(where, "model", f.name, getattr(self, f.name))
            elif f.type == "bool" or f.type is bool:
                validate.flag(where, f.name, getattr(self, f.name))
        validate.choice(where, "weight_dtype", self.weight_dtype, DTYPE_BYTES)
        for key in ("kv_dtype", "act_dtype"):
            validate.choice(where, key, getattr(self, key), PLAIN_DTYPES)
        for key in ("mlp_weight_dtype", "embedding_dtype"):  # "": weight_dtype
            if getattr(self, key) != "":
                validate.choice(where, key, getattr(self, key), DTYPE_BYTES)
        if self.mlp_weight_dtype == "" and self.mlp_dtype_layers:
            raise UserError(f"{where}: mlp_dtype_layers ({self.mlp_dtype_layers}) needs "
                            f"mlp_weight_dtype")
        if self.mlp_dtype_layers > self.layers:
            raise UserError(f"{where}: mlp_dtype_layers ({self.mlp_dtype_layers}) exceeds "
                            f"layers ({self.layers})")
        validate.choice(where, "compute_dtype", self.compute_dtype, COMPUTE_DTYPES)
        if self.compute_dtype == "fp8" and not any(
                self.fp8_gemm_share(w) for w in GEMM_WEIGHTS):
            raise UserError(f"{where}: compute_dtype 'fp8' (w8a8) needs weights stored in fp8 "
                            f"(weight_dtype, mlp_weight_dtype or embedding_dtype); a 16-bit "
                            f"model runs its GEMMs in fp8 only under the compute_dtype option")
        validate.choice(where, "norm", self.norm, NORMS)
        validate.string(where, "source", self.source)
        if self.heads % self.kv_heads:
            raise UserError(f"{where}: heads ({self.heads}) must be a multiple of kv_heads "
                            f"({self.kv_heads})")
        if self.experts_per_token > self.experts:
            raise UserError(f"{where}: experts_per_token ({self.experts_per_token}) exceeds "
                            f"experts ({self.experts})")
        self._check_moe(where)
        self._check_mla(where)
        if self.sliding_layers and not self.sliding_window:
            raise UserError(f"{where}: sliding_layers ({self.sliding_layers}) needs "
                            f"sliding_window")
        if self.sliding_layers > self.layers:
            raise UserError(f"{where}: sliding_layers ({self.sliding_layers}) exceeds layers "
                            f"({self.layers})")

    def _check_moe(self, where: str) -> None:
        if not self.is_moe:
            extra = [k for k in ("shared_ffn", "dense_layers", "dense_ffn", "shared_expert_gate")
                     if getattr(self, k)]
            if extra:
                raise UserError(f"{where}: {', '.join(extra)} describe an MoE model; this one "
                                f"has experts = 1")
            return
        if self.dense_layers >= self.layers:
            raise UserError(f"{where}: dense_layers ({self.dense_layers}) must be below layers "
                            f"({self.layers}) in an MoE model")
        if self.dense_ffn and not self.dense_layers:
            raise UserError(f"{where}: dense_ffn ({self.dense_ffn}) is given but dense_layers "
                            f"is 0")
        if self.shared_expert_gate and not self.shared_ffn:
            raise UserError(f"{where}: shared_expert_gate needs a shared expert (shared_ffn > 0)")

    def _check_mla(self, where: str) -> None:
        if not self.is_mla:
            extra = [k for k in ("q_lora_rank", "qk_rope_head_dim") if getattr(self, k)]
            if self.v_head_dim not in (0, self.head_dim):
                extra.append("v_head_dim")
            if extra:
                raise UserError(f"{where}: {', '.join(extra)} describe multi-head latent "
                                f"attention; give kv_lora_rank too")
            return
        if self.kv_heads != self.heads:
            raise UserError(f"{where}: with multi-head latent attention kv_heads "
                            f"({self.kv_heads}) must equal heads ({self.heads})")
        if self.qk_rope_head_dim >= self.head_dim:
            raise UserError(f"{where}: qk_rope_head_dim ({self.qk_rope_head_dim}) must be "
                            f"below head_dim ({self.head_dim}), its rotary part")
        if self.bias or self.qkv_bias:
            raise UserError(f"{where}: biases with multi-head latent attention are not modelled")

    # ---- bytes per element ------------------------------------------------------------
    @cached_property
    def weight_bytes(self) -> float:
        """Bytes per weight element."""
        return DTYPE_BYTES[self.weight_dtype]

    @cached_property
    def mlp_weight_bytes(self) -> float:
        """Bytes per MLP weight element (dense MLPs, routed and shared experts), on average
        over the layers when only ``mlp_dtype_layers`` of them store their MLP in
        ``mlp_weight_dtype`` (exact for the sum over a dense model's layers).

        >>> get_model("Llama-3.1-405B").mlp_weight_bytes == (124 * 1 + 2 * 2) / 126
        True
        """
        if not self.mlp_weight_dtype:
            return self.weight_bytes
        low = DTYPE_BYTES[self.mlp_weight_dtype]
        k = self.mlp_dtype_layers or self.layers
        return (k * low + (self.layers - k) * self.weight_bytes) / self.layers

    @cached_property
    def embedding_bytes(self) -> float:
        """Bytes per element of the token embedding, learned positions and LM head."""
        return DTYPE_BYTES[self.embedding_dtype or self.weight_dtype]

    def fp8_gemm_share(self, weights: str) -> float:
        """The share of the GEMMs multiplying ``weights`` (one of :data:`GEMM_WEIGHTS`:
        ``"attention"`` the attention projections, ``"mlp"`` the dense MLPs and experts,
        ``"embedding"`` the LM head) that are fp8 x fp8 on a GPU with fp8 tensor cores: the
        one rule of the compute dtype. A GEMM runs in fp8 where its weights are stored in
        fp8 *and* its input is quantized to fp8 (``compute_dtype = "fp8"``: a w8a8
        checkpoint; a weight-only format, w8a16 or w4a16, dequantizes to bf16); the GPU's
        part (``flops_fp8 > 0``) is :func:`compute.stages.stage_peaks`'. The MLPs' share is
        over the layers (exact for the sum over a dense model's layers, as
        :attr:`mlp_weight_bytes`).

        >>> from dataclasses import replace
        >>> m = replace(get_model("Llama-3.1-405B"), compute_dtype="fp8")   # MLPs 124 of 126
        >>> m.fp8_gemm_share("mlp") == 124 / 126, m.fp8_gemm_share("attention")
        (True, 0.0)
        """
        if self.compute_dtype != "fp8":
            return 0.0
        fp8 = self.weight_dtype == "fp8"
        if weights == "attention":
            return float(fp8)
        if weights == "embedding":
            return float((self.embedding_dtype or self.weight_dtype) == "fp8")
        if weights != "mlp":
            raise UserError(f"unknown GEMM weights {weights!r}; known: {known(GEMM_WEIGHTS)}")
        if not self.mlp_weight_dtype:
            return float(fp8)
        k = self.mlp_dtype_layers or self.layers
        return (k * (self.mlp_weight_dtype == "fp8") + (self.layers - k) * fp8) / self.layers

    @property
    def weight_storage_bytes(self) -> float:
        """Bytes of every weight of the model, each in its storage dtype."""
        mlp = self.parameters - self.non_mlp_parameters
        emb = self.token_parameters
        return ((self.non_mlp_parameters - emb) * self.weight_bytes + emb * self.embedding_bytes
                + mlp * self.mlp_weight_bytes)

    @cached_property
    def kv_bytes(self) -> float:
        """Bytes per KV-cache element."""
        return DTYPE_BYTES[self.kv_dtype]

    @cached_property
    def act_bytes(self) -> float:
        """Bytes per activation element (also the dtype of TP collectives)."""
        return DTYPE_BYTES[self.act_dtype]

    # ---- shape -------------------------------------------------------------------------
    @cached_property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return self.experts > 1

    @cached_property
    def is_mla(self) -> bool:
        """True for multi-head latent attention."""
        return self.kv_lora_rank > 0

    @cached_property
    def v_dim(self) -> int:
        """Value width per head (``head_dim`` unless MLA sets ``v_head_dim``)."""
        return self.v_head_dim or self.head_dim

    @cached_property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (0 for a dense model)."""
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def kv_elements_per_token(self) -> int:
        """KV-cache elements one token adds to one layer: ``2 kv_heads head_dim`` (K and V),
        or with MLA the latent and the shared rotary key, ``kv_lora_rank + qk_rope_head_dim``
        (the compressed form DeepSeek serves from; every head reads the same latent)."""
        if self.is_mla:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    # ---- sliding-window attention -----------------------------------------------------
    @cached_property
    def windowed_layers(self) -> int:
        """Layers whose attention is limited to the last ``sliding_window`` tokens."""
        return (self.sliding_layers or self.layers) if self.sliding_window else 0

    def kv_tokens_held(self, tokens: int) -> float:
        """KV-cache entries one sequence of ``tokens`` tokens keeps per layer, on average
        over the layers: ``tokens`` in a full-attention layer, ``min(tokens, window)`` in a
        windowed one (its cache is a ring of the last ``window`` tokens). It is also what a
        decode step's new token reads and attends to. Exactly ``tokens`` without a window.

        >>> m = ModelSpec("g", 42, 3584, 16, 8, 256, 14336, 256000, sliding_window=4096,
        ...               sliding_layers=21)
        >>> m.kv_tokens_held(8192), m.kv_tokens_held(1000)
        (6144.0, 1000)
        """
        w = self.sliding_window
        if not w or tokens <= w:
            return tokens
        k = self.windowed_layers
        return ((self.layers - k) * tokens + k * w) / self.layers

    def prefill_pairs(self, prompt: int) -> float:
        """(query, key) pairs of causal attention over a prompt of ``prompt`` tokens, per
        sequence and layer on average over the layers: ``P (P + 1) / 2`` in a full-attention
        layer; in a windowed one token ``i`` attends to ``min(i, w)`` keys, ``w (w + 1) / 2 +
        (P - w) w`` once ``P`` exceeds ``w``.

        >>> m = ModelSpec("m", 2, 64, 4, 4, 16, 128, 100, sliding_window=2, sliding_layers=1)
        >>> m.prefill_pairs(4)   # full: 1+2+3+4 = 10; windowed: 1+2+2+2 = 7
        8.5
        """
        full = prompt * (prompt + 1) / 2.0
        w = self.sliding_window
        if not w or prompt <= w:
            return full
        k = self.windowed_layers
        windowed = w * (w + 1) / 2.0 + (prompt - w) * w
        return ((self.layers - k) * full + k * windowed) / self.layers

    def attention_span(self, workload) -> tuple[float, float]:
        """``(pairs, kv_read)`` of one sequence of ``workload`` per layer, on average over the
        layers: the (query, key) pairs its attention computes and the cached tokens whose K
        and V it reads. Without a window, the workload's own figures
        (:attr:`~compute.phases.Workload.attention_pairs_per_sequence`,
        :attr:`~compute.phases.Workload.kv_read_tokens`). A windowed layer's decode step
        attends to and reads ``min(context, window)`` tokens; prefill computes
        :meth:`prefill_pairs` pairs and reads each prompt token's K and V once, as without
        a window."""
        pairs, kv_read = workload.attention_pairs_per_sequence, workload.kv_read_tokens
        if not self.sliding_window:
            return pairs, kv_read
        if workload.phase == "decode":
            held = float(self.kv_tokens_held(workload.context))
            return held, held
        return self.prefill_pairs(workload.prompt), kv_read

    # ---- parameter counts -------------------------------------------------------------
    def norm_elements(self, width: int) -> int:
        """Elements of one norm over ``width`` (scale, and shift for layernorm)."""
        return width * (2 if self.norm == "layernorm" else 1)

    def mlp_parameters(self, width: int) -> int:
        """One MLP of ``width`` intermediate columns: up (and gate) and down, with biases."""
        up = (2 if self.gated_mlp else 1) * width
        n = self.hidden * up + width * self.hidden
        return n + ((up + self.hidden) if self.bias else 0)

    @property
    def attention_parameters(self) -> int:
        """Attention of one layer, with biases where the model has them.

        Q, K, V and output projections; with MLA (DeepSeek-V2/V3, as in its reference code):
        the query down-projection ``hidden x q_lora_rank``, its norm and up-projection
        ``q_lora_rank x heads head_dim`` (or one ``hidden x heads head_dim`` when
        ``q_lora_rank`` is 0); the KV down-projection ``hidden x (kv_lora_rank +
        qk_rope_head_dim)`` and the latent's norm; the KV up-projection ``kv_lora_rank x
        heads (head_dim - qk_rope_head_dim + v_head_dim)`` (keys' non-rotary part and
        values); the output ``heads v_head_dim x hidden``.
        """
        h, a, d = self.hidden, self.heads, self.head_dim
        if self.is_mla:
            c, r, ql = self.kv_lora_rank, self.qk_rope_head_dim, self.q_lora_rank
            q = (h * ql + self.norm_elements(ql) + ql * a * d) if ql else h * a * d
            kv = h * (c + r) + self.norm_elements(c) + c * a * (d - r + self.v_dim)
            return q + kv + a * self.v_dim * h
        q, kv = a * d, self.kv_heads * d
        n = h * (q + 2 * kv) + q * h
        if self.bias:
            return n + q + 2 * kv + h
        return n + ((q + 2 * kv) if self.qkv_bias else 0)

    @property
    def expert_parameters(self) -> int:
        """One routed expert (the MLP of a dense layer when the model is dense)."""
        return self.mlp_parameters(self.ffn)

    @property
    def shared_parameters(self) -> int:
        """The shared expert(s) of one MoE layer and their gate (0 when there are none)."""
        if not self.shared_ffn:
            return 0
        return self.mlp_parameters(self.shared_ffn) + (self.hidden if self.shared_expert_gate else 0)

    @property
    def norm_parameters(self) -> int:
        """Elements of one normalisation layer (scale, and shift for layernorm)."""
        return self.norm_elements(self.hidden)

    @property
    def dense_layer_parameters(self) -> int:
        """One layer with a dense MLP: attention, the MLP, two norms."""
        width = self.dense_ffn or self.ffn
        return self.attention_parameters + self.mlp_parameters(width) + 2 * self.norm_parameters

    @property
    def moe_layer_parameters(self) -> int:
        """One MoE layer: attention, every routed expert, the router, shared experts, two
        norms (0 for a dense model)."""
        if not self.is_moe:
            return 0
        return (self.attention_parameters + self.experts * self.expert_parameters
                + self.hidden * self.experts + self.shared_parameters + 2 * self.norm_parameters)

    @property
    def embedding_parameters(self) -> int:
        """Token embedding, learned positions, the embedding norm if any, and the LM head
        unless tied to the embedding."""
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        norm = self.norm_parameters if self.embedding_norm else 0
        return (self.vocab + self.learned_positions) * self.hidden + head + norm

    @property
    def token_parameters(self) -> int:
        """The token embedding, learned positions and the LM head unless tied (the
        tensors stored in ``embedding_dtype``)."""
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        return (self.vocab + self.learned_positions) * self.hidden + head

    @property
    def parameters(self) -> int:
        """Total parameters (every expert counted)."""
        dense = self.layers - self.moe_layers
        return (dense * self.dense_layer_parameters + self.moe_layers * self.moe_layer_parameters
                + self.embedding_parameters + self.norm_parameters)

    @property
    def non_mlp_parameters(self) -> int:
        """Parameters outside the MLPs (attention, norms, routers, embeddings, the LM head,
        the shared experts' gates): those stored in ``weight_dtype`` when the MLPs use
        ``mlp_weight_dtype``."""
        mlp = (self.layers - self.moe_layers) * self.mlp_parameters(self.dense_ffn or self.ffn)
        if self.is_moe:
            mlp += self.moe_layers * (self.experts * self.expert_parameters
                                      + (self.mlp_parameters(self.shared_ffn)
                                         if self.shared_ffn else 0))
        return self.parameters - mlp

    @property
    def active_parameters(self) -> int:
        """Parameters one token passes through (only its routed experts; embeddings, the LM
        head, shared experts and routers included)."""
        idle = (self.experts - self.experts_per_token) * self.expert_parameters
        return self.parameters - self.moe_layers * idle

    def to_dict(self) -> dict:
        """Fields plus parameter counts (the shape of ``netmodel models NAME --json``)."""
        d = asdict(self)
        d["parameters"] = self.parameters
        d["active_parameters"] = self.active_parameters
        d["weight_storage_bytes"] = self.weight_storage_bytes
        return d


_FIELDS = {f.name for f in fields(ModelSpec)} - {"name"}
_REQUIRED = ("layers", "hidden", "heads", "ffn", "vocab")


def _model_from_entry(name: str, entry, where: str) -> ModelSpec:
    validate.name(where, "model", name)
    here = f"{where}: model {name!r}"
    check_keys(here, entry, _REQUIRED, sorted(_FIELDS - set(_REQUIRED)))
    entry = dict(entry)
    for key in ("layers", "hidden", "heads"):
        validate.in_range(here, "model", key, entry[key])
    entry.setdefault("kv_heads", entry["heads"])
    if "head_dim" not in entry:
        if entry["hidden"] % entry["heads"]:
            raise UserError(f"{here}: hidden ({entry['hidden']}) is not a multiple of heads "
                            f"({entry['heads']}); give head_dim")
        entry["head_dim"] = entry["hidden"] // entry["heads"]
    try:
        return ModelSpec(name=name, **entry)
    except UserError as exc:  # say which file it came from
        msg = str(exc)
        raise UserError(msg if msg.startswith(where) else f"{where}: {msg}") from None


def _parse_model_table(data, where: str) -> dict[str, ModelSpec]:
    if not isinstance(data, dict) or set(data) != {"model"} or not isinstance(data["model"], dict):
        raise UserError(f"{where}: expected a top-level table 'model' of model entries "
                        f"([model.NAME] in TOML, {{\"model\": {{NAME: {{...}}}}}} in JSON)")
    if not data["model"]:
        raise UserError(f"{where}: the 'model' table is empty")
    return {name: _model_from_entry(name, entry, where) for name, entry in data["model"].items()}


@cache
def model_catalog() -> dict[str, ModelSpec]:
    """The shipped model catalog, by name (read once)."""
    text = resources.files("compute").joinpath("data/models.toml").read_text()
    return _parse_model_table(tomllib.loads(text), "compute/data/models.toml")


def model_names() -> tuple[str, ...]:
    """Names of the shipped models, in catalog order."""
    return tuple(model_catalog())


def load_model_file(path: str | PathLike[str]) -> dict[str, ModelSpec]:
    """Models from a TOML or JSON file with the catalog's keys (``[model.NAME]`` tables)."""
    path = Path(path)
    models = _parse_model_table(read_table(path, "model file"), str(path))
    _refuse_catalog_names(models, model_catalog(), str(path), "model")
    return models


def _refuse_catalog_names(entries: dict, table: dict, where: str, kind: str) -> None:
    """A user file may not redefine a catalog entry: its figures would be reported under
    the catalog's name (a 2-layer 'Llama-3-8B')."""
    taken = [n for n in entries if n in table]
    if taken:
        raise UserError(f"{where}: {', '.join(repr(n) for n in taken)} already name(s) a "
                        f"catalog {kind}; give yours another name")


# ---- HuggingFace config.json -----------------------------------------------------------------

#: Where each number is found in a HuggingFace ``config.json``: the keys of each family, the
#: first present and not null wins (GPT-2 ``n_*``, BLOOM ``n_layer``/``n_head``, Falcon
#: ``num_kv_heads``/``n_head_kv``, Llama/Mistral/Qwen2 ``num_*``, Mixtral
#: ``num_local_experts``, Qwen-MoE ``num_experts``, DeepSeek ``n_routed_experts``).
HF_ALIASES: dict[str, tuple[str, ...]] = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden": ("hidden_size", "n_embd", "n_embed", "d_model"),
    "heads": ("num_attention_heads", "n_head"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv"),
    "head_dim": ("head_dim",),
    "ffn": ("intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"),  # dense MLP
    "vocab": ("vocab_size", "padded_vocab_size"),
    "max_context": ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"),
    "learned_positions": ("n_positions",),               # only families with learned positions
    "tied_embeddings": ("tie_word_embeddings",),
    "experts": ("num_local_experts", "num_experts", "n_routed_experts"),
    "experts_per_token": ("num_experts_per_tok",),
    "expert_ffn": ("moe_intermediate_size",),           # per routed expert (Mixtral: ffn)
    "shared_ffn": ("shared_expert_intermediate_size",),  # Qwen-MoE: all shared experts
    "shared_experts": ("n_shared_experts",),             # DeepSeek: x moe_intermediate_size
    "first_dense": ("first_k_dense_replace",),           # DeepSeek: leading dense layers
    "moe_every": ("moe_layer_freq", "decoder_sparse_step"),  # every k-th layer is MoE
    "dense_only": ("mlp_only_layers",),                  # Qwen-MoE: layers kept dense
    "kv_lora_rank": ("kv_lora_rank",),
    "q_lora_rank": ("q_lora_rank",),
    "qk_nope_head_dim": ("qk_nope_head_dim",),
    "qk_rope_head_dim": ("qk_rope_head_dim",),
    "v_head_dim": ("v_head_dim",),
    "bias": ("bias",),                                  # Falcon: every linear layer
    "attention_bias": ("attention_bias",),              # Llama family: Q, K, V (and O)
    "sliding_window": ("sliding_window",),              # tokens a windowed layer attends to
    "window_pattern": ("sliding_window_pattern", "_sliding_window_pattern"),  # Gemma-3
    "max_window_layers": ("max_window_layers",),        # Qwen2: the first ones are full
}

#: What each ``model_type`` builds where its config.json does not say (the defaults of the
#: family's code in HF transformers): MLP gating, norm, biases, tied embeddings (HF's default
#: for configs that omit the key), learned positions, an embedding norm.
HF_FAMILIES: dict[str, dict] = {
    "gpt2": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True,
                 learned_positions=True),
    "bloom": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True,
                  embedding_norm=True),
    "falcon": dict(gated_mlp=False, norm="layernorm", tied_embeddings=True),
    # GPT-NeoX / Pythia: rotary (no position table), biases on every linear layer,
    # layernorms, an untied LM head (HF GPTNeoXConfig); GPT-J: rotary too (its n_positions
    # is the context, not a table), layernorm, untied
    "gpt_neox": dict(gated_mlp=False, norm="layernorm", bias=True),
    "gptj": dict(gated_mlp=False, norm="layernorm", bias=True),
    "llama": {}, "mistral": {}, "mixtral": {},
    "qwen2": dict(qkv_bias=True),
    "qwen2_moe": dict(qkv_bias=True, shared_expert_gate=True),
    "deepseek_v2": {}, "deepseek_v3": {},
    # GemmaConfig / Gemma2Config default tie_word_embeddings=True and Google's config.json
    # files omit the key (HF transformers models/gemma*/configuration_gemma*.py)
    "gemma": dict(tied_embeddings=True),
    "gemma2": dict(tied_embeddings=True, window="alternate"),
    # Gemma-3 (HF transformers models/gemma3): GeGLU, tied embeddings, 5 windowed layers of
    # every 6; "gemma3" is the multimodal wrapper whose text model is in text_config
    "gemma3_text": dict(tied_embeddings=True, window="pattern"),
    "gemma3": dict(tied_embeddings=True, window="pattern"),
}
_FAMILY_ALIASES = {"refinedweb": "falcon", "refinedwebmodel": "falcon", "rw": "falcon"}
# Other model types whose MLP is gated (SwiGLU / GeGLU), read Llama-style.
_GATED_TYPES = {"qwen3", "qwen3_moe", "phi3", "olmo", "olmo2", "olmoe",
                "granite", "granitemoe", "cohere", "internlm2", "yi", "deepseek"}
#: HuggingFace ``torch_dtype`` values (torch's dtype names and their aliases) -> netmodel's
#: dtypes; any other value is refused with this list.
_HF_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
              "float": "fp32", "float64": "fp32", "double": "fp32", "float8_e4m3fn": "fp8",
              "float8_e4m3fnuz": "fp8", "float8_e5m2": "fp8", "float8_e5m2fnuz": "fp8"}
#: Architecture defaults of a Llama-like model, the base every family entry changes.
_BASE_FAMILY = dict(gated_mlp=True, norm="rmsnorm", bias=False, qkv_bias=False,
                    tied_embeddings=False, learned_positions=False, embedding_norm=False,
                    shared_expert_gate=False, window="all")
#: Entries of a config.json's ``layer_types`` the reader models (HF transformers' names).
_LAYER_TYPES = ("full_attention", "sliding_attention")
#: Model types whose ``sliding_window`` applies only when ``use_sliding_window`` is true
#: (HF Qwen2Config and its kin default it to false; their configs name a window anyway).
_WINDOW_OPT_IN = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}


class _Config:
    """A config.json being read: ``get(field)`` follows :data:`HF_ALIASES` and checks the
    value's type and range, naming the config key in any error."""

    def __init__(self, cfg: dict, where: str):
        self.cfg, self.where = cfg, where

    def key(self, field: str) -> str | None:
        return next((k for k in HF_ALIASES[field] if self.cfg.get(k) is not None), None)

    def has(self, field: str) -> bool:
        return self.key(field) is not None

    def raw(self, field: str) -> Any:
        k = self.key(field)
        return None if k is None else self.cfg[k]

    def count(self, field: str, *, limit: str | None = None, default: int | None = None,
              minimum: int | None = None) -> int:
        """An integer from the config, checked against the range of ``limit`` (default
        ``field``) in limits.toml; ``default`` when absent (required when it is None)."""
        k = self.key(field)
        if k is None:
            if default is None:
                keys = " or ".join(map(repr, HF_ALIASES[field]))
                raise UserError(f"{self.where}: config.json lacks {keys}")
            return default
        r = validate.limits("model")[limit or field]
        lo = r.minimum if minimum is None else minimum
        return validate.number(self.where, k, self.cfg[k], minimum=lo, maximum=r.maximum,
                               integer=True)

    def flag(self, field: str, default: bool) -> bool:
        k = self.key(field)
        return default if k is None else validate.flag(self.where, k, self.cfg[k])

    def text(self, key: str, default: str = "") -> str:
        v = self.cfg.get(key)
        return default if v is None else validate.string(self.where, key, v, max_length=200)


def _hf_family(c: _Config) -> tuple[str, dict]:
    """The model type and its architecture defaults (:data:`HF_FAMILIES`). An unknown type is
    read GPT-2-style if it has ``n_embd``, else Llama-style, with a gated MLP for the gated
    families and ``silu``/``swish`` activations."""
    model_type = c.text("model_type").lower()
    model_type = _FAMILY_ALIASES.get(model_type, model_type)
    if model_type in HF_FAMILIES:
        return model_type, {**_BASE_FAMILY, **HF_FAMILIES[model_type]}
    if "n_embd" in c.cfg and model_type not in _GATED_TYPES:
        return model_type, {**_BASE_FAMILY, **HF_FAMILIES["gpt2"]}
    act = (c.text("hidden_act") or c.text("activation_function")).lower()
    gated = model_type in _GATED_TYPES or act in ("silu", "swish", "swiglu")
    return model_type, {**_BASE_FAMILY, "gated_mlp": gated}


def _moe_layer_count(c: _Config, layers: int) -> int:
    """How many layers are MoE: DeepSeek's ``first_k_dense_replace`` and ``moe_layer_freq``,
    Qwen-MoE's ``decoder_sparse_step`` and ``mlp_only_layers``."""
    first = c.count("first_dense", limit="dense_layers", default=0)
    every = c.count("moe_every", limit="layers", default=1)
    only = c.raw("dense_only") or []
    if not isinstance(only, list) or len(only) > layers:
        raise UserError(f"{c.where}: mlp_only_layers must be a list of at most {layers} layer "
                        f"indices, got {validate.describe(only)}")
    dense = {validate.number(c.where, "mlp_only_layers", i, minimum=0, maximum=layers - 1,
                             integer=True) for i in only}
    if c.key("moe_every") == "decoder_sparse_step":  # Qwen-MoE: layer i if (i + 1) % step == 0
        return sum(1 for i in range(layers) if i not in dense and (i + 1) % every == 0)
    return sum(1 for i in range(layers) if i >= first and i not in dense and i % every == 0)


def _sliding_window(c: _Config, model_type: str, fam: dict, layers: int) -> dict:
    """``sliding_window`` and ``sliding_layers`` from a config.json (``{}`` when no layer is
    windowed), as HF transformers builds the layers:

    * ``layer_types`` (newer configs of every family): the ``"sliding_attention"`` entries;
    * Gemma-2: every other layer, starting with the first (21 of 42);
    * Gemma-3: all but every ``sliding_window_pattern``-th layer (default 6);
    * Qwen2 / Qwen2-MoE / Qwen3: only with ``use_sliding_window`` true, and then the layers
      from ``max_window_layers`` on;
    * any other family (Mistral, Mixtral, Phi-3, ...): every layer when ``sliding_window`` is
      not null.
    """
    if not c.has("sliding_window"):
        return {}
    use = c.cfg.get("use_sliding_window")
    if use is not None and not validate.flag(c.where, "use_sliding_window", use):
        return {}
    if use is None and model_type in _WINDOW_OPT_IN:
        return {}
    window = c.count("sliding_window")
    if window == 0:  # no window, as null (ModelSpec's 0)
        return {}
    types = c.cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers or not all(
                isinstance(t, str) for t in types):
            raise UserError(f"{c.where}: layer_types must be a list of {layers} strings (one "
                            f"per layer), got {validate.describe(types)}")
        other = next((t for t in types if t not in _LAYER_TYPES), None)
        if other is not None:  # chunked, linear (Qwen3-Next), ...: not modelled
            raise UserError(f"{c.where}: layer_types entry {validate.describe(other)} is not "
                            f"modelled; known: {known(_LAYER_TYPES)}")
        k = sum(1 for t in types if t == "sliding_attention")
    elif fam["window"] == "alternate":
        k = (layers + 1) // 2
    elif fam["window"] == "pattern":
        every = c.count("window_pattern", limit="layers", default=6)
        k = layers - layers // every
    elif model_type in _WINDOW_OPT_IN:
        k = layers - min(layers, c.count("max_window_layers", limit="layers", minimum=0,
                                         default=layers))
    else:
        k = layers
    if k == 0:
        return {}
    return {"sliding_window": window, "sliding_layers": k}


def _fp8_exceptions(quant: dict, layers: int, dtype: str, where: str) -> dict:
    """Model keys for an fp8 checkpoint whose ``modules_to_not_convert`` keeps attention
    in ``dtype`` (Meta's FP8 Llama-3.1: only the MLPs are fp8, and not those of the layers
    it lists, ``model.layers.{i}.mlp...``). When it keeps no attention module, every linear
    layer is fp8 (``{}``) but the MLPs of the layers it lists, which stay in ``dtype``."""
    skip = quant.get("modules_to_not_convert")
    skip = [] if skip is None else skip  # null: convert every module
    if not isinstance(skip, list) or len(skip) > 100 * layers or not all(
            isinstance(x, str) for x in skip):
        raise UserError(f"{where}: quantization_config.modules_to_not_convert must be a list "
                        f"of at most {100 * layers:,} module names (or null), got "
                        f"{validate.describe(skip)}")
    kept = set()
    for x in skip:
        parts = x.split(".")
        if "mlp" in parts:
            i = parts.index("mlp")
            index = parts[i - 1] if i >= 1 else ""
            if not (index.isascii() and index.isdigit()):
                continue  # not a decoder layer's MLP (e.g. a vision tower's)
            if len(index) > 6 or int(index) >= layers:
                raise UserError(f"{where}: quantization_config.modules_to_not_convert names "
                                f"{validate.describe(x)}, but the model's layers are 0 to "
                                f"{layers - 1}")
            kept.add(int(index))
    if not any(".self_attn" in x for x in skip):
        return {"mlp_weight_dtype": dtype, "mlp_dtype_layers": len(kept)} if kept else {}
    return {"weight_dtype": dtype, "mlp_weight_dtype": "fp8",
            "mlp_dtype_layers": layers - len(kept)} if len(kept) < layers else \
        {"weight_dtype": dtype}


#: Names of decoder-layer parts (attention, MLP, experts, their projections) in module names.
_LAYER_PARTS = {"layers", "h", "blocks", "self_attn", "attn", "attention", "mlp", "experts",
                "block_sparse_moe", "feed_forward", "shared_expert", "shared_experts",
                "w1", "w2", "w3", "qkv", "dense", "fc1", "fc2", "c_attn", "c_proj", "c_fc",
                "query_key_value", "dense_h_to_4h", "dense_4h_to_h"}
#: Last names of modules that stay unquantized without changing the weight bytes this
#: model counts: MoE routers (``mlp.gate``, ``block_sparse_moe.gate``; under 0.1% of the
#: parameters, counted with the linear layers), the LM head and embedding (kept in the
#: 16-bit dtype anyway).
_HARMLESS = {"gate", "router", "shared_expert_gate", "lm_head", "embed_tokens", "wte", "wpe"}


def _check_kept(quant: dict, key: str, where: str) -> list[str]:
    """The module names (or compressed-tensors ``re:`` patterns) of ``quant[key]`` that
    stay unquantized. One that keeps part of a decoder layer's attention or MLP (other than
    the MoE router) is refused: a partly quantized layer is not modelled."""
    kept = quant.get(key)
    kept = [] if kept is None else kept
    if not isinstance(kept, list) or len(kept) > 100_000 or not all(
            isinstance(x, str) for x in kept):
        raise UserError(f"{where}: {key} must be a list of module names (or null), got "
                        f"{validate.describe(kept)}")
    for x in kept:
        words = [w for w in re.split(r"[^A-Za-z0-9_]+", x.removeprefix("re:")) if w]
        if not words or words[-1] in _HARMLESS:
            continue
        if any(w in _LAYER_PARTS or w.endswith("_proj") or w.endswith("_proj_with_mqa")
               for w in words):
            raise UserError(f"{where}: {key} keeps {validate.describe(x)} unquantized; a "
                            f"partly quantized decoder layer is not modelled")
    return kept


def _int_dtype(bits, group, zero: bool, where: str, keys: str) -> str:
    """The :data:`DTYPE_BYTES` name of ``bits``-bit integer weights in groups of ``group``
    (-1 or None: per output channel), with a ``bits``-bit zero point when ``zero``."""
    bits = validate.number(where, keys[0], bits, minimum=1, maximum=64, integer=True)
    if bits not in (4, 8):
        raise UserError(f"{where}: {keys[0]} {bits} is not modelled; allowed: 4, 8")
    if group is None:
        return f"int{bits}"
    group = validate.number(where, keys[1], group, minimum=-1, maximum=2**20, integer=True)
    if group == -1:
        return f"int{bits}"
    if group not in QUANT_GROUPS:
        raise UserError(f"{where}: {keys[1]} {group} is not modelled; allowed: -1 (per "
                        f"channel), {', '.join(map(str, QUANT_GROUPS))}")
    return f"int{bits}-g{group}{'' if zero else '-sym'}"


def _awq(quant: dict, where: str) -> tuple[str, str]:
    """AutoAWQ (``quant_method: awq``; hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4,
    Qwen/Qwen2.5-72B-Instruct-AWQ): ``bits`` (``w_bit``), ``group_size``
    (``q_group_size``); every linear layer of the decoder, zero points stored whatever
    ``zero_point`` says (``WQLinear_GEMM`` keeps its ``qzeros`` buffer)."""
    _check_kept(quant, "modules_to_not_convert", where)
    bits = quant.get("bits", quant.get("w_bit", 4))
    group = quant.get("group_size", quant.get("q_group_size", 128))
    return _int_dtype(bits, group, True, where, ("bits", "group_size")), ""


def _gptq(quant: dict, where: str) -> tuple[str, str]:
    """GPTQ (``quant_method: gptq``; TheBloke/*-GPTQ, AutoGPTQ / GPTQModel / optimum):
    ``bits``, ``group_size`` (-1: per channel); ``qzeros`` are stored even when ``sym``;
    ``lm_head: true`` (a quantized LM head) is not modelled."""
    if quant.get("lm_head") not in (None, False):
        raise UserError(f"{where}: lm_head {validate.describe(quant.get('lm_head'))}: a "
                        f"quantized LM head is not modelled")
    _check_kept(quant, "modules_to_not_convert", where)
    return _int_dtype(quant.get("bits", 4), quant.get("group_size", 128), True, where,
                      ("bits", "group_size")), ""


def _bitsandbytes(quant: dict, where: str) -> tuple[str, str]:
    """bitsandbytes (``load_in_4bit``: NF4 or FP4 with ``bnb_4bit_use_double_quant``;
    ``load_in_8bit``: LLM.int8() int8 rows, one fp32 scale each)."""
    _check_kept(quant, "llm_int8_skip_modules", where)
    four = quant.get("load_in_4bit") is True or quant.get("_load_in_4bit") is True
    eight = quant.get("load_in_8bit") is True or quant.get("_load_in_8bit") is True
    if four == eight:
        raise UserError(f"{where}: exactly one of load_in_4bit and load_in_8bit must be true")
    if eight:
        return "int8", ""
    kind = quant.get("bnb_4bit_quant_type", "fp4")
    if kind not in ("nf4", "fp4"):
        raise UserError(f"{where}: bnb_4bit_quant_type {validate.describe(kind)} is not "
                        f"modelled; allowed: 'nf4', 'fp4'")
    dq = validate.flag(where, "bnb_4bit_use_double_quant",
                       quant.get("bnb_4bit_use_double_quant", False))
    return ("bnb4-dq" if dq else "bnb4"), ""


def _compressed_tensors(quant: dict, where: str) -> tuple[str, str]:
    """compressed-tensors (``quant_method: compressed-tensors``; llm-compressor's FP8,
    W8A8, W4A16 releases: neuralmagic/*-FP8, RedHatAI/*-quantized.w4a16 / w8a8): one
    config group targeting ``Linear`` whose ``weights`` are fp8 (any strategy: per-tensor,
    channel or 128 x 128 block scales, under 0.1% of a byte a weight), int8 or int4 (per
    channel, or symmetric groups); ``ignore`` must keep the LM head (a quantized LM head
    is not modelled); ``kv_cache_scheme`` of 8 bits gives an fp8 or int8 KV cache. The
    input activations (``input_activations``) are quantized just before each GEMM: the
    activations stored and exchanged stay 16-bit."""
    if quant.get("sparsity_config") not in (None, {}):
        raise UserError(f"{where}: sparsity_config (sparse weights) is not modelled")
    groups = quant.get("config_groups")
    validate.table(f"{where}: config_groups", groups)
    if len(groups) != 1:
        raise UserError(f"{where}: config_groups holds {len(groups)} groups; only one "
                        f"(every Linear layer alike) is modelled")
    group = next(iter(groups.values()))
    validate.table(f"{where}: config_groups", group)
    if group.get("targets") != ["Linear"]:
        raise UserError(f"{where}: config_groups targets {validate.describe(group.get('targets'))}"
                        f" is not modelled; allowed: ['Linear']")
    kept = _check_kept(quant, "ignore", where)
    if "lm_head" not in kept:
        raise UserError(f"{where}: ignore does not name lm_head: a quantized LM head is not "
                        f"modelled")
    w = group.get("weights")
    validate.table(f"{where}: config_groups weights", w)
    kind, bits = w.get("type"), w.get("num_bits")
    if kind == "float" and bits == 8:
        dtype = "fp8"
    elif kind == "int":
        strategy = w.get("strategy")
        if strategy not in ("channel", "group", "tensor"):
            raise UserError(f"{where}: weights strategy {validate.describe(strategy)} is not "
                            f"modelled for int weights; allowed: 'channel', 'group', 'tensor'")
        sym = validate.flag(where, "symmetric", w.get("symmetric", True))
        if not sym and strategy == "group":
            raise UserError(f"{where}: asymmetric group-quantized weights are not modelled")
        size = w.get("group_size") if strategy == "group" else None
        dtype = _int_dtype(bits, size, False, where, ("num_bits", "group_size"))
    else:
        raise UserError(f"{where}: weights of type {validate.describe(kind)} with "
                        f"{validate.describe(bits)} bits are not modelled; allowed: float 8, "
                        f"int 4, int 8")
    kv = quant.get("kv_cache_scheme")
    if kv is None:
        return dtype, ""
    validate.table(f"{where}: kv_cache_scheme", kv)
    kv_type, kv_bits = kv.get("type"), kv.get("num_bits")
    kv_kind = {"float": "fp8", "int": "int8"}.get(kv_type) if (
        isinstance(kv_type, str) and type(kv_bits) is int and kv_bits == 8) else None
    if kv_kind is None:
        raise UserError(f"{where}: kv_cache_scheme of type {validate.describe(kv.get('type'))} "
                        f"with {validate.describe(kv.get('num_bits'))} bits is not modelled; "
                        f"allowed: float 8, int 8")
    return dtype, kv_kind


def _w8a8_fp8(quant: dict, where: str) -> bool:
    """Whether a compressed-tensors config with fp8 weights quantizes the input of its GEMMs
    to fp8 too (``input_activations`` of type float, 8 bits: W8A8, vLLM's CUTLASS fp8 GEMM
    on GPUs with fp8 tensor cores) rather than leaving it 16-bit (none: W8A16, weight-only).
    The quant_method ``fp8`` (``activation_scheme`` dynamic or static) and ``fbgemm_fp8``
    (rowwise dynamic) configs are w8a8 by definition (vLLM docs, 'FP8 W8A8': W8A8 on Ada
    Lovelace, Hopper and Blackwell; W8A16 through FP8 Marlin on Turing and Ampere)."""
    act = next(iter(quant["config_groups"].values())).get("input_activations")
    if act is None:
        return False
    validate.table(f"{where}: config_groups input_activations", act)
    kind, bits = act.get("type"), act.get("num_bits")
    if not isinstance(kind, str) or type(bits) is not int:
        raise UserError(f"{where}: input_activations of type {validate.describe(kind)} with "
                        f"{validate.describe(bits)} bits is not modelled; allowed: float 8, "
                        f"int 8, or none (weight-only)")
    return kind == "float" and bits == 8


#: Readers of the weight-quantizing ``quant_method`` values besides fp8: each gives the
#: linear layers' dtype (:data:`DTYPE_BYTES`) and the KV cache's ("": unchanged).
_QUANT_READERS = {"awq": _awq, "gptq": _gptq, "bitsandbytes": _bitsandbytes,
                  "compressed-tensors": _compressed_tensors}


def load_hf_config(path: str | PathLike[str], name: str | None = None) -> ModelSpec:
    """A model from a local HuggingFace ``config.json`` (no network access).

    Keys are found through one alias table, :data:`HF_ALIASES` (GPT-2, BLOOM, Falcon,
    Llama, Mistral, Qwen2, Mixtral, Qwen-MoE and DeepSeek-V2/V3 spell them differently), and
    what a config leaves to its model code comes from :data:`HF_FAMILIES` by ``model_type``:

    * GPT-2 / BLOOM: ``n_inner`` null means ``4 x hidden``; biases on every linear layer,
      layernorm, tied embeddings; GPT-2's ``n_positions`` learned positions; BLOOM's
      embedding layernorm.
    * Falcon: ``new_decoder_architecture`` reads ``num_kv_heads``; otherwise ``multi_query``
      (default true) means one KV head; ``bias`` key; ``ffn_hidden_size`` (default 4 x hidden).
    * Qwen2 / Qwen-MoE: biases on the Q, K and V projections.
    * MoE: ``num_local_experts`` / ``num_experts`` / ``n_routed_experts``,
      ``num_experts_per_tok``, ``moe_intermediate_size`` (per expert; Mixtral uses
      ``intermediate_size``), shared experts (``shared_expert_intermediate_size`` or
      ``n_shared_experts`` x ``moe_intermediate_size``), dense layers
      (``first_k_dense_replace``, ``moe_layer_freq``, ``decoder_sparse_step``,
      ``mlp_only_layers``) whose MLP is ``intermediate_size`` wide.
    * MLA (``kv_lora_rank``): ``head_dim`` = ``qk_nope_head_dim + qk_rope_head_dim``,
      ``v_head_dim``, ``q_lora_rank`` (null: full rank).
    * ``tie_word_embeddings`` when given; otherwise the family's default.

    A float32 checkpoint is taken as served in bf16; an fp8 ``quantization_config`` gives fp8
    weights, or, when its ``modules_to_not_convert`` lists attention modules (Meta's FP8
    Llama-3.1), fp8 MLPs only, less those of the layers it lists. AWQ, GPTQ,
    compressed-tensors and bitsandbytes configs give the linear layers' dtype
    (:data:`_QUANT_READERS`) and keep the embedding and LM head (``embedding_dtype``) in
    ``torch_dtype``; any other method is refused. The name defaults to the file's ``_name_or_path``, else its folder's name. Every
    number is checked for type and range (``compute/data/limits.toml``); an error names the
    config key.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    cfg = parse_table(read_text(path, "config.json"), "json", str(path))
    return _hf_from_dict(cfg, path, name)


def _text_model(cfg: dict, where: str) -> dict:
    """The language model of a config.json: the file itself, or, for a multimodal wrapper
    (Gemma-3 4B-27B, Llava, ...) that keeps it in ``text_config`` and names no layers at
    its top level, that table, with the wrapper's ``torch_dtype`` and
    ``quantization_config`` where it gives none (the vision tower is not counted)."""
    text = cfg.get("text_config")
    if text is None or any(cfg.get(k) is not None for k in HF_ALIASES["layers"]):
        return cfg
    validate.table(f"{where}: text_config", text)
    inner = dict(text)
    for key in ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings"):
        if inner.get(key) is None and cfg.get(key) is not None:
            inner[key] = cfg[key]
    inner.setdefault("model_type", cfg.get("model_type"))
    return inner


def _hf_from_dict(cfg, path: Path, name: str | None = None) -> ModelSpec:
    """:func:`load_hf_config` on a parsed config.json read from ``path``."""
    if not isinstance(cfg, dict):
        raise UserError(f"{path}: a HuggingFace config.json must hold a JSON object, got "
                        f"{validate.describe(cfg)}")
    where = str(path)
    name = name or _Config(cfg, where).text("_name_or_path") or path.parent.name or path.stem
    cfg = _text_model(cfg, where)
    c = _Config(cfg, where)
    validate.name(where, "model", name)
    model_type, fam = _hf_family(c)

    layers, hidden, heads = c.count("layers"), c.count("hidden"), c.count("heads")
    kv_heads = c.count("kv_heads", default=heads)
    if model_type == "falcon":  # HF FalconConfig: multi_query defaults to true
        new_arch = cfg.get("new_decoder_architecture")
        multi_query = cfg.get("multi_query")
        new_arch = False if new_arch is None else validate.flag(
            where, "new_decoder_architecture", new_arch)
        multi_query = True if multi_query is None else validate.flag(
            where, "multi_query", multi_query)
        if not (new_arch or c.key("kv_heads") == "n_head_kv"):
            kv_heads = 1 if multi_query else heads
    entry: dict = {"layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads}
    if fam["gated_mlp"]:
        dense_ffn = c.count("ffn")
    else:  # GPT-2, BLOOM, Falcon: n_inner / ffn_hidden_size null means 4 x hidden
        dense_ffn = c.count("ffn", default=4 * hidden)

    # attention: MLA or plain
    if c.has("kv_lora_rank"):
        rope, nope = c.count("qk_rope_head_dim"), c.count("qk_nope_head_dim", limit="head_dim")
        entry.update(kv_lora_rank=c.count("kv_lora_rank", minimum=1),
                     q_lora_rank=c.count("q_lora_rank", default=0),
                     qk_rope_head_dim=rope, head_dim=nope + rope, kv_heads=heads,
                     v_head_dim=c.count("v_head_dim", default=0))
    elif c.has("head_dim"):
        entry["head_dim"] = c.count("head_dim")

    # MLP: dense, or experts (with shared experts and dense layers)
    experts = c.count("experts", minimum=0, default=1) or 1
    entry["experts"] = experts
    if experts > 1:
        entry["experts_per_token"] = c.count("experts_per_token")
        entry["ffn"] = c.count("expert_ffn", limit="ffn") if c.has("expert_ffn") else dense_ffn
        moe = _moe_layer_count(c, layers)
        if moe == 0:
            raise UserError(f"{where}: the config names {experts} experts but no layer is a "
                            f"mixture of experts")
        entry["dense_layers"] = layers - moe
        if entry["dense_layers"]:
            entry["dense_ffn"] = dense_ffn
        if c.has("shared_ffn"):
            entry["shared_ffn"] = c.count("shared_ffn")
        elif c.has("shared_experts"):
            n = c.count("shared_experts", limit="experts", minimum=0)
            entry["shared_ffn"] = n * entry["ffn"]
        if entry.get("shared_ffn") and fam["shared_expert_gate"]:
            entry["shared_expert_gate"] = True
    else:
        entry["ffn"] = dense_ffn

    entry.update(_sliding_window(c, model_type, fam, layers))

    # embeddings, biases, norms
    entry["vocab"] = c.count("vocab")
    entry["tied_embeddings"] = c.flag("tied_embeddings", fam["tied_embeddings"])
    if fam["learned_positions"]:
        entry["learned_positions"] = c.count("learned_positions", default=0)
    entry["max_context"] = c.count("max_context", default=0)
    bias = c.flag("bias", fam["bias"])
    qkv_bias = fam["qkv_bias"] or c.flag("attention_bias", False)
    entry.update(gated_mlp=fam["gated_mlp"], norm=fam["norm"], bias=bias,
                 qkv_bias=qkv_bias and not bias, embedding_norm=fam["embedding_norm"])

    # dtypes
    torch_dtype = cfg.get("torch_dtype", cfg.get("dtype"))
    torch_dtype = "bfloat16" if torch_dtype is None else validate.string(
        where, "torch_dtype", torch_dtype, max_length=100)
    dtype = _HF_DTYPES.get(torch_dtype.removeprefix("torch."))
    if dtype is None:
        raise UserError(f"{where}: torch_dtype {torch_dtype!r} is unknown; known: "
                        f"{known(_HF_DTYPES)}")
    if dtype == "fp32":
        dtype = "bf16"  # a 32/64-bit checkpoint is served in 16-bit, as inference servers do
    weight_dtype = dtype
    act_dtype = "bf16" if dtype == "fp8" else dtype
    quant = cfg.get("quantization_config")
    kv_dtype = act_dtype
    if quant is not None:
        validate.table(f"{where}: quantization_config", quant)
        method = validate.string(f"{where}: quantization_config", "quant_method",
                                 quant.get("quant_method", ""))
        method = method.lower()
        if method in ("fp8", "fbgemm_fp8"):
            weight_dtype = "fp8"
            entry.update(_fp8_exceptions(quant, layers, dtype, where))
            if "fp8" in (entry.get("weight_dtype", "fp8"), entry.get("mlp_weight_dtype")):
                entry["compute_dtype"] = "fp8"  # w8a8 by definition (_w8a8_fp8)
            # the embedding and LM head stay in 16-bit in fp8 releases (DeepSeek-V3
            # Technical Report, Section 3.3.1; Meta's FP8 405B quantizes only MLPs)
            entry["embedding_dtype"] = act_dtype
        elif method in _QUANT_READERS:
            here = f"{where}: quantization_config ({method})"
            weight_dtype, kv = _QUANT_READERS[method](quant, here)
            entry["embedding_dtype"] = act_dtype
            if weight_dtype == "fp8" and _w8a8_fp8(quant, here):
                entry["compute_dtype"] = "fp8"
            kv_dtype = kv or kv_dtype
        else:
            raise UserError(f"{where}: quantization_config.quant_method {method!r} is not "
                            f"modelled (its weight bytes are unknown); known: "
                            f"{known(('fp8', 'fbgemm_fp8', *_QUANT_READERS))}")
    entry.setdefault("weight_dtype", weight_dtype)
    entry.update(kv_dtype=kv_dtype, act_dtype=act_dtype,
                 source=f"HuggingFace config.json at {path}")
    return _model_from_entry(name, entry, where)


def get_model(name: str | ModelSpec) -> ModelSpec:
    """A model by catalog name, or the spec itself if given one; a path to a ``.toml``
    catalog-format file holding one model also works, and so does a ``.json`` file of
    either kind, whatever its name: one with a top-level ``model`` table is read as the
    catalog format, one with HuggingFace keys (``model_type``, ``num_hidden_layers``,
    ``n_layer``, ...) as a HuggingFace config.json.

    >>> get_model("Llama-2-70B").vocab
    32000
    >>> get_model("Llama-9")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: unknown model 'Llama-9'; known: 'BLOOM-176B', 'DeepSeek-V3', 'GPT-3-175B', 'Llama-2-70B', 'Llama-3-70B', 'Llama-3-8B', 'Llama-3.1-405B', 'Mixtral-8x7B', 'Qwen1.5-MoE-A2.7B'
    """
    if isinstance(name, ModelSpec):
        return name
    if not isinstance(name, str):
        raise UserError(f"a model is a name or a path, got {validate.describe(name)}")
    table = model_catalog()
    if name in table:
        return table[name]
    if name.lower().endswith(".json"):
        return _model_from_json(Path(name))
    if name.lower().endswith(".toml"):
        models = load_model_file(name)
        if len(models) != 1:
            raise UserError(f"{name} holds {len(models)} models; give a file with one model")
        return next(iter(models.values()))
    raise UserError(f"unknown model {name!r}; known: {known(table)}")


#: Keys whose presence at the top level of a JSON file marks a HuggingFace config.json.
_HF_MARKERS = ("model_type", "architectures", *HF_ALIASES["layers"], *HF_ALIASES["hidden"])


def _model_from_json(path: Path) -> ModelSpec:
    """The one model of a JSON file, whatever its name: a top-level ``model`` table is the
    catalog format (:func:`load_model_file`), HuggingFace keys (``model_type``,
    ``num_hidden_layers``, ``n_layer``, ...) a config.json (:func:`load_hf_config`)."""
    doc = parse_table(read_text(path, "model file"), "json", str(path))
    if isinstance(doc, dict) and "model" in doc:
        models = _parse_model_table(doc, str(path))
        if len(models) != 1:
            raise UserError(f"{path} holds {len(models)} models; give a file with one model")
        return next(iter(models.values()))
    if isinstance(doc, dict) and any(k in doc for k in _HF_MARKERS):
        return _hf_from_dict(doc, path)
    raise UserError(f"{path} is neither a model file (a top-level 'model' table) nor a "
                    f"HuggingFace config.json (keys such as model_type, num_hidden_layers, "
                    f"n_layer); got {validate.describe(doc)}")


def expected_experts_touched(model: ModelSpec, tokens: float | np.ndarray,
                             ) -> float | np.ndarray:
    """Expected number of distinct experts that ``tokens`` tokens route to in one layer, with
    uniform top-k routing: ``E (1 - (1 - k/E)^n)``; 1 for a dense model.

    >>> float(expected_experts_touched(get_model("Llama-3-8B"), 100))
    1.0
    >>> mixtral_like = ModelSpec("m", 1, 64, 4, 4, 16, 128, 100, experts=8, experts_per_token=2)
    >>> float(expected_experts_touched(mixtral_like, 1)), float(expected_experts_touched(mixtral_like, 2))
    (2.0, 3.5)
    """
    import numpy as np

    e, k = model.experts, model.experts_per_token
    if e == 1:
        return 1.0 if type(tokens) is float else np.ones_like(np.asarray(tokens, dtype=float))
    if type(tokens) is float:  # a float gives a float: the same operations, same number
        return e * (1.0 - float(np.power(1.0 - k / e, tokens))) if k < e else float(e)
    n = np.asarray(tokens, dtype=float)
    return e * (1.0 - np.power(1.0 - k / e, n)) if k < e else np.full_like(n, float(e))
