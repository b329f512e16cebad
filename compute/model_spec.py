"""One LLM's shape and storage (:class:`ModelSpec`) and the dtypes it may be stored and
computed in; its parameter counts are :mod:`compute.model_parameters`', what its windowed
attention layers hold and read :mod:`compute.attention_windows`' (bases of
:class:`ModelSpec`). The catalog and model files that make them are :mod:`compute.models`, the
HuggingFace ``config.json`` reader :mod:`compute.hf_config`; :mod:`compute.models`
re-exports every public name here.

>>> m = ModelSpec("tiny", 2, 64, 4, 4, 16, 128, 100)
>>> m.kv_elements_per_token, DTYPE_BYTES["bf16"]
(128, 2.0)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import cached_property

from compute import validate
from compute.attention_windows import AttentionWindows
from compute.config_files import check_keys
from compute.errors import UserError, known
from compute.hardware import DTYPES
from compute.model_parameters import NORMS, ParameterCounts

__all__ = ["COMPUTE_DTYPES", "DTYPE_BYTES", "FP4_BLOCKS", "GEMM_WEIGHTS", "PLAIN_DTYPES",
           "QUANT_GROUPS", "ModelSpec"]

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


#: 4-bit e2m1 floats with one 8-bit scale per block of elements: ``mxfp4`` (OCP
#: Microscaling Formats v1.0: an e8m0 power-of-two scale per 32, 4.25 bits a weight;
#: OpenAI's gpt-oss experts) and ``nvfp4`` (NVIDIA: an fp8 e4m3 scale per 16, 4.5 bits;
#: the one fp32 scale per tensor is left out, under 1e-6 bits a weight).
FP4_BLOCKS = {"mxfp4": 32, "nvfp4": 16}

#: Bytes per element of each storage dtype: the plain ones; ``int4`` / ``int8`` with one
#: scale (and zero) per output channel (per-channel, GPTQ group_size -1, compressed-tensors
#: ``channel`` strategy: under 0.01 bits per weight at 4096 input columns); ``intB-gG``
#: with one 16-bit scale and one B-bit zero per group of G weights, ``intB-gG-sym`` with
#: the scale only (:func:`_grouped_bytes`); bitsandbytes 4-bit (NF4 or FP4: one fp32
#: absmax per block of 64, bitsandbytes ``Params4bit`` default blocksize) and ``bnb4-dq``
#: with double quantization (the absmax stored in 8 bits, one fp32 scale per 256 of them:
#: QLoRA, Dettmers et al. 2023, arXiv 2305.14314, Section 3, 'Double Quantization');
#: the block-scaled 4-bit floats of :data:`FP4_BLOCKS`.
DTYPE_BYTES = {**PLAIN_DTYPES, "int4": 0.5,
               **{f"int{b}-g{g}{'' if z else '-sym'}": _grouped_bytes(b, g, z)
                  for b in (4, 8) for g in QUANT_GROUPS for z in (True, False)},
               "bnb4": (4 + 32 / 64) / 8, "bnb4-dq": (4 + 8 / 64 + 32 / (64 * 256)) / 8,
               **{k: (4 + 8 / block) / 8 for k, block in FP4_BLOCKS.items()}}
#: Tensor-core dtypes the GEMMs may run at: those a GPU has a peak for
#: (:data:`compute.hardware.DTYPES`, its ``flops_DTYPE`` fields); a w8a8 checkpoint's
#: ``compute_dtype`` is the dtype its quantized GEMMs take both inputs in.
COMPUTE_DTYPES = DTYPES
#: The weights a GEMM multiplies, as :meth:`ModelSpec.fp8_gemm_share` names them.
GEMM_WEIGHTS = ("attention", "mlp", "embedding")
#: What limits the attention of a windowed layer (:attr:`ModelSpec.window_kind`).
WINDOW_KINDS = ("sliding", "chunked")
#: What weights a w8a8 ``compute_dtype`` needs stored (in words, for its error).
_STORED_AS = {"fp8": "fp8", "int8": "int8 (int8 or int8-gG)", "fp4": "nvfp4"}


@dataclass(frozen=True)
class ModelSpec(ParameterCounts, AttentionWindows):
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
    #: the attention's output projection carries a bias too (with ``qkv_bias``: HF's
    #: ``attention_bias`` in Llama, Phi-3.5-MoE and their kin biases Q, K, V and O)
    o_bias: bool = False
    #: the MLPs' linear layers (dense MLPs and experts) carry biases where ``bias`` does not
    #: say so: GPT-J (fc_in and fc_out, its attention without), a Llama-style ``mlp_bias``
    mlp_bias: bool = False
    #: the LM head carries a bias, ``vocab`` elements (Phi-1/1.5/2, GPT-J)
    lm_head_bias: bool = False
    embedding_norm: bool = False   #: a norm right after the token embedding (BLOOM)
    #: ``"rmsnorm"`` (scale), ``"layernorm"`` (scale and shift) or ``"weightless"`` (neither:
    #: OLMo v1), :data:`~compute.model_parameters.NORM_ELEMENTS`
    norm: str = "rmsnorm"
    #: norms over the hidden width in each layer: 2, before attention and before the MLP
    #: (Llama); 4, before and after each (Gemma-2, Gemma-3); 1, one norm feeding attention
    #: and the MLP run in parallel (Falcon-7B)
    layer_norms: int = 2
    #: elements of each layer's query and key norms, a scale per element (Qwen3, Gemma-3: an
    #: RMSNorm over head_dim each, shared by the heads, 2 x head_dim); 0: none
    qk_norm: int = 0
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
    #: (:meth:`fp8_gemm_share`); ``"int8"`` likewise for int8 weights (w8a8 int8) at the
    #: int8 peak, ``"fp4"`` for nvfp4 weights (NVFP4 W4A4) at the fp4 peak (Blackwell);
    #: ``"bf16"``: every GEMM runs at the bf16 peak
    compute_dtype: str = "bf16"
    max_context: int = 0     #: the longest context the model supports, tokens (0: unknown)
    experts: int = 1         #: routed MLP experts per MoE layer (1: a dense model)
    experts_per_token: int = 1     #: routed experts each token goes through
    shared_ffn: int = 0      #: intermediate size of the always-active shared expert(s) of
    #: each MoE layer, all shared experts together (0: none)
    shared_expert_gate: bool = False  #: a sigmoid gate (hidden -> 1) on the shared expert (Qwen-MoE)
    #: group-limited routing (DeepSeek-V3/R1's ``n_group`` and ``topk_group``): the routed
    #: experts fall in ``expert_groups`` equal groups, a token first picks
    #: ``groups_per_token`` of them and then its ``experts_per_token`` among theirs (0 and
    #: 0: no groups); it bounds the servers a token's experts sit on
    #: (:mod:`compute.moe_routing`)
    expert_groups: int = 0
    groups_per_token: int = 0
    dense_layers: int = 0    #: layers of an MoE model whose MLP is dense (DeepSeek-V3: 3)
    dense_ffn: int = 0       #: intermediate size of those dense MLPs (0: ``ffn``)
    #: where the dense layers sit (what a pipeline stage holds depends on it): 0, the first
    #: ``dense_layers`` layers (DeepSeek-V3/R1 and Kimi-K2's first_k_dense_replace, GLM-4.5,
    #: ERNIE-4.5's moe_layer_start_index); k >= 2, layer i is MoE when i + 1 is a multiple
    #: of k and dense otherwise (Llama-4 Maverick's interleave_moe_layer_step 2, Qwen-MoE's
    #: decoder_sparse_step), so ``dense_layers`` is ``layers - layers // k``
    moe_layer_step: int = 0
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
    #: where the full-attention layers sit among the windowed ones (what a pipeline stage
    #: holds depends on it): k >= 2, layer i has full attention when i + 1 is a multiple of
    #: k and a window otherwise, so ``sliding_layers`` is ``layers - layers // k`` (HF
    #: transformers' rule for every such family: gpt-oss and Gemma-2 alternate, k = 2;
    #: Gemma-3's sliding_window_pattern 6; Cohere2's 4; Llama-4's no_rope_layer_interval 4,
    #: full attention on its NoPE layers); 0, not known: taken as spread evenly
    #: (:meth:`layer_mix`)
    full_layer_step: int = 0
    #: what limits a windowed layer (:data:`WINDOW_KINDS`): ``"sliding"``, the last
    #: ``sliding_window`` tokens; ``"chunked"`` (Llama-4's chunked local attention,
    #: ``attention_chunk_size``): the context is cut into chunks of ``sliding_window``
    #: tokens and a token attends only to the tokens of its own chunk
    window_kind: str = "sliding"
    #: multi-token-prediction modules (DeepSeek-V3's num_nextn_predict_layers 1: one more
    #: transformer layer sharing the embedding and output head), used only by MTP decode
    #: (:mod:`compute.mtp`); not in :attr:`parameters` (DeepSeek's published 671B excludes it)
    mtp_modules: int = 0
    #: weights of a vision encoder and its projector held beside the language model (a
    #: vision-language model's vision tower): resident in GPU memory, stored in the dtype of
    #: the token embedding (``embedding_dtype``, else ``weight_dtype``: a quantized
    #: checkpoint keeps its vision tower in 16-bit, as its embedding) and split like it over
    #: the attention's TP group, on the first pipeline stage; not in :attr:`parameters` nor
    #: the per-token FLOPs, which are the language model's (the encoder's compute of image
    #: tokens is not modelled). 0: none
    vision_parameters: int = 0
    source: str = ""         #: where the figures come from

    def __post_init__(self):
        where = f"model {self.name!r}"
        validate.name("", "model", self.name)
        for f in fields(self):
            if f.type == "int" or f.type is int:
                v = getattr(self, f.name)
                validate.in_range(where, "model", f.name, v)
                if type(v) is not int and validate.is_whole(v):
                    # numpy's integer kept as Python's: np.int64 layers made numpy's bools
                    # downstream, which failed the result's JSON
                    object.__setattr__(self, f.name, int(v))
            elif f.type == "bool" or f.type is bool:   # numpy's bool kept as Python's
                object.__setattr__(self, f.name, validate.flag(where, f.name,
                                                               getattr(self, f.name)))
        # each choice kept as its list spells it (validate.choice takes another case and
        # blanks at either end: 'FP8' in a model file is fp8, which DTYPE_BYTES is keyed by)
        choices = {"weight_dtype": DTYPE_BYTES, "kv_dtype": PLAIN_DTYPES,
                   "act_dtype": PLAIN_DTYPES, "mlp_weight_dtype": DTYPE_BYTES,
                   "embedding_dtype": DTYPE_BYTES, "compute_dtype": COMPUTE_DTYPES,
                   "norm": NORMS, "window_kind": WINDOW_KINDS}
        for key, allowed in choices.items():
            if getattr(self, key) != "" or key not in ("mlp_weight_dtype", "embedding_dtype"):
                object.__setattr__(self, key, validate.choice(where, key, getattr(self, key),
                                                              allowed))   # "": weight_dtype
        if self.mlp_weight_dtype == "" and self.mlp_dtype_layers:
            raise UserError(f"{where}: mlp_dtype_layers ({self.mlp_dtype_layers}) needs "
                            f"mlp_weight_dtype")
        if self.mlp_dtype_layers > self.layers:
            raise UserError(f"{where}: mlp_dtype_layers ({self.mlp_dtype_layers}) exceeds "
                            f"layers ({self.layers})")
        low = self.compute_dtype
        if low != "bf16" and not any(self.low_gemm_share(w) for w in GEMM_WEIGHTS):
            raise UserError(f"{where}: compute_dtype {low!r} (w8a8) needs weights stored in "
                            f"{_STORED_AS[low]} (weight_dtype, mlp_weight_dtype or "
                            f"embedding_dtype); a 16-bit model runs its GEMMs in {low} only "
                            f"under the compute_dtype option")
        validate.string(where, "source", self.source)
        if self.heads % self.kv_heads:
            raise UserError(f"{where}: heads ({self.heads}) must be a multiple of kv_heads "
                            f"({self.kv_heads})")
        widths = (self.heads + self.kv_heads) * self.head_dim
        if self.qk_norm > widths:   # a scale per element of the queries' and keys' widths
            raise UserError(f"{where}: qk_norm ({self.qk_norm:,}) exceeds the queries' and "
                            f"keys' widths, (heads + kv_heads) x head_dim = {widths:,}; "
                            f"allowed: 0 to {widths:,} (2 x head_dim for a norm over "
                            f"head_dim shared by the heads)")
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
        if self.window_kind != "sliding" and not self.sliding_window:
            raise UserError(f"{where}: window_kind {self.window_kind!r} needs sliding_window "
                            f"(the chunk size)")
        self._check_full_layer_step(where)

    def _check_full_layer_step(self, where: str) -> None:
        step = self.full_layer_step
        if not step:
            return
        if not (self.sliding_window and self.sliding_layers):
            raise UserError(f"{where}: full_layer_step {step} places full-attention layers "
                            f"among windowed ones; it needs sliding_window and sliding_layers "
                            f"(some layers windowed, the others full)")
        if step == 1 or step > self.layers:
            raise UserError(f"{where}: full_layer_step {step} would make "
                            f"{'every' if step == 1 else 'no'} layer full attention; allowed: "
                            f"0 (spread evenly) or 2 to {self.layers} (every k-th layer full)")
        if self.sliding_layers != self.layers - self.layers // step:
            raise UserError(f"{where}: full_layer_step {step} (layer i full attention when i "
                            f"+ 1 is a multiple of {step}) windows "
                            f"{self.layers - self.layers // step} of the {self.layers} layers, "
                            f"but sliding_layers is {self.sliding_layers}; give sliding_layers "
                            f"{self.layers - self.layers // step} or full_layer_step 0")

    def _check_moe(self, where: str) -> None:
        if not self.is_moe:
            extra = [k for k in ("shared_ffn", "dense_layers", "dense_ffn", "shared_expert_gate",
                                 "moe_layer_step", "expert_groups", "groups_per_token")
                     if getattr(self, k)]
            if extra:
                raise UserError(f"{where}: {', '.join(extra)} describe an MoE model; this one "
                                f"has experts = 1")
            return
        if self.dense_layers >= self.layers:
            raise UserError(f"{where}: dense_layers ({self.dense_layers}) must be below layers "
                            f"({self.layers}) in an MoE model")
        step = self.moe_layer_step
        if step == 1 or step > self.layers:
            raise UserError(f"{where}: moe_layer_step {step} would make "
                            f"{'every' if step == 1 else 'no'} layer MoE; allowed: 0 (the "
                            f"dense layers first) or 2 to {self.layers} (every k-th layer "
                            f"MoE)")
        if step and self.dense_layers != self.layers - self.layers // step:
            raise UserError(f"{where}: moe_layer_step {step} (layer i MoE when i + 1 is a "
                            f"multiple of {step}) leaves {self.layers - self.layers // step} "
                            f"of the {self.layers} layers dense, but dense_layers is "
                            f"{self.dense_layers}; give dense_layers "
                            f"{self.layers - self.layers // step} or moe_layer_step 0")
        if self.dense_ffn and not self.dense_layers:
            raise UserError(f"{where}: dense_ffn ({self.dense_ffn}) is given but dense_layers "
                            f"is 0")
        if self.shared_expert_gate and not self.shared_ffn:
            raise UserError(f"{where}: shared_expert_gate needs a shared expert (shared_ffn > 0)")
        self._check_groups(where)

    def _check_groups(self, where: str) -> None:
        g, t = self.expert_groups, self.groups_per_token
        if not (g or t):
            return
        if not (g and t):
            raise UserError(f"{where}: group-limited routing needs both expert_groups and "
                            f"groups_per_token, got {g} and {t}")
        if self.experts % g:
            raise UserError(f"{where}: expert_groups ({g}) must divide the experts "
                            f"({self.experts})")
        if t > g:
            raise UserError(f"{where}: groups_per_token ({t}) exceeds expert_groups ({g})")
        if self.experts_per_token > t * (self.experts // g):
            raise UserError(f"{where}: experts_per_token ({self.experts_per_token}) exceeds "
                            f"the {t * (self.experts // g)} experts of groups_per_token ({t}) "
                            f"groups")

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
        if self.qkv_biased or self.o_biased:   # neither counted by the MLA formulas
            raise UserError(f"{where}: biases with multi-head latent attention are not "
                            f"modelled (bias, qkv_bias and o_bias must be false)")
        if self.qk_norm:   # neither attention_parameters nor weight memory would count it
            raise UserError(f"{where}: qk_norm ({self.qk_norm:,}) with multi-head latent "
                            f"attention is not modelled (its latents' norms are counted from "
                            f"kv_lora_rank and q_lora_rank); allowed: 0")

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

        >>> from compute.models import get_model
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
        part (``flops_fp8 > 0``) is :func:`compute.stage_peaks.stage_peaks`'. The MLPs' share is
        over the layers (exact for the sum over a dense model's layers, as
        :attr:`mlp_weight_bytes`).

        >>> from dataclasses import replace
        >>> from compute.models import get_model
        >>> m = replace(get_model("Llama-3.1-405B"), compute_dtype="fp8")   # MLPs 124 of 126
        >>> m.fp8_gemm_share("mlp") == 124 / 126, m.fp8_gemm_share("attention")
        (True, 0.0)
        """
        return self.low_gemm_share(weights) if self.compute_dtype == "fp8" else 0.0

    def low_gemm_share(self, weights: str) -> float:
        """The share of the GEMMs multiplying ``weights`` (one of :data:`GEMM_WEIGHTS`) that
        run in ``compute_dtype`` on a GPU with tensor cores of that dtype: those whose
        weights are stored in it (fp8: ``fp8``; int8: ``int8`` per channel or any
        ``int8-gG`` group format; fp4: ``nvfp4``) when the checkpoint quantizes their
        input too; 0 for a bf16 ``compute_dtype``. :meth:`fp8_gemm_share` is this share for an fp8 model.

        >>> from dataclasses import replace
        >>> m = ModelSpec("w8a8", 2, 64, 4, 4, 16, 128, 100, weight_dtype="int8",
        ...               embedding_dtype="bf16", compute_dtype="int8")
        >>> m.low_gemm_share("mlp"), m.low_gemm_share("embedding"), m.fp8_gemm_share("mlp")
        (1.0, 0.0, 0.0)
        """
        low = self.compute_dtype
        if weights not in GEMM_WEIGHTS:
            raise UserError(f"unknown GEMM weights {weights!r}; known: {known(GEMM_WEIGHTS)}")
        if low == "bf16":
            return 0.0

        def stored(dtype: str) -> bool:
            return dtype == low or (low == "int8" and dtype.startswith("int8-")) or (
                low == "fp4" and dtype == "nvfp4")

        main = stored(self.weight_dtype)
        if weights == "attention":
            return float(main)
        if weights == "embedding":
            return float(stored(self.embedding_dtype or self.weight_dtype))
        if not self.mlp_weight_dtype:
            return float(main)
        k = self.mlp_dtype_layers or self.layers
        return (k * stored(self.mlp_weight_dtype) + (self.layers - k) * main) / self.layers

    @property
    def vision_bytes(self) -> float:
        """Bytes of the vision tower (:attr:`vision_parameters`), stored in the token
        embedding's dtype (:attr:`embedding_bytes`); 0 without one."""
        return self.vision_parameters * self.embedding_bytes

    @property
    def weight_storage_bytes(self) -> float:
        """Bytes of every weight of the model, each in its storage dtype, the vision tower's
        (:attr:`vision_bytes`) too."""
        mlp = self.parameters - self.non_mlp_parameters
        return ((self.non_mlp_parameters - self.token_parameters) * self.weight_bytes
                + self.token_parameters * self.embedding_bytes + self.vision_bytes
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

    # ---- layers -----------------------------------------------------------------------
    def layer_mix(self, start: int, end: int) -> tuple[int, int]:
        """``(dense, windowed)``: how many of layers ``start .. end - 1`` (a pipeline
        stage's, :func:`compute.parallel.stage_layers`) have a dense MLP in an MoE model
        (:attr:`moe_layer_step` says where they sit) and a windowed attention
        (:attr:`full_layer_step` says where the full-attention layers sit: with a step
        ``k``, the layers ``i`` with ``i + 1`` a multiple of ``k``, ``floor(end / k) -
        floor(start / k)`` of them). Without a step the ``F`` full-attention layers of the
        ``L`` are taken as spread evenly, ``floor(end F / L) - floor(start F / L)``: the
        same count when ``F`` divides ``L`` and the step is ``L / F``, within a layer of it
        otherwise.

        >>> m = ModelSpec("d", 61, 64, 4, 4, 16, 128, 100, experts=8, dense_layers=3)
        >>> m.layer_mix(0, 31), m.layer_mix(31, 61)
        ((3, 0), (0, 0))
        >>> m = ModelSpec("g", 36, 64, 4, 4, 16, 128, 100, sliding_window=128, sliding_layers=18,
        ...               full_layer_step=2)
        >>> m.layer_mix(0, 9), m.layer_mix(9, 18)   # windowed layers 0, 2, 4, ...
        ((0, 5), (0, 4))
        >>> m = ModelSpec("g3", 26, 64, 4, 4, 16, 128, 100, sliding_window=512,
        ...               sliding_layers=22, full_layer_step=6)   # full: layers 5, 11, 17, 23
        >>> [m.layer_mix(a, b)[1] for a, b in ((0, 6), (6, 13), (13, 20), (20, 26))]
        [5, 6, 6, 5]
        """
        n = end - start
        dense = 0
        if self.is_moe and self.dense_layers:
            k = self.moe_layer_step
            dense = (n - (end // k - start // k)) if k else \
                max(0, min(end, self.dense_layers) - start)
        w = self.windowed_layers
        if not w:
            return dense, 0
        k = self.full_layer_step
        if k:
            return dense, n - (end // k - start // k)
        full = self.layers - w
        return dense, n - (end * full // self.layers - start * full // self.layers)

    def to_dict(self) -> dict:
        """Fields plus parameter counts (the shape of ``netmodel models NAME --json``)."""
        d = asdict(self)
        d["parameters"] = self.parameters
        d["active_parameters"] = self.active_parameters
        d["weight_storage_bytes"] = self.weight_storage_bytes
        return d


_FIELDS = {f.name for f in fields(ModelSpec)} - {"name"}
_REQUIRED = ("layers", "hidden", "heads", "ffn", "vocab")


def model_from_entry(name: str, entry, where: str, *, read_by_caller: tuple = ()) -> ModelSpec:
    """The :class:`ModelSpec` named ``name`` of one model's keys ``entry`` (as a model file's
    ``[model.NAME]`` table holds them), its keys and values checked (errors name ``where``).
    ``read_by_caller``: keys the file may hold that the caller reads and takes out of
    ``entry`` before this call; named among the allowed keys when a key is unknown."""
    validate.name(where, "model", name)
    here = f"{where}: model {name!r}"
    check_keys(here, entry, _REQUIRED, sorted(_FIELDS - set(_REQUIRED)) + list(read_by_caller))
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
