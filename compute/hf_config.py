"""HuggingFace ``config.json`` files read offline into a :class:`~compute.model_spec.ModelSpec`:
where each figure is found in each family's config (:data:`HF_ALIASES`, :data:`HF_FAMILIES`),
mixture-of-experts and latent-attention layouts, sliding windows, and quantized checkpoints
(fp8, AWQ, GPTQ, compressed-tensors, bitsandbytes; any other method is refused).
:func:`compute.models.get_model` reads a ``.json`` path through it.
"""

from __future__ import annotations

import os
import re
from os import PathLike
from pathlib import Path
from typing import Any

from compute import validate
from compute.config_files import parse_table, read_text
from compute.errors import UserError, known
from compute.model_spec import QUANT_GROUPS, ModelSpec, _model_from_entry

__all__ = ["HF_ALIASES", "HF_FAMILIES", "load_hf_config"]

# ---- HuggingFace config.json -----------------------------------------------------------------

#: Where each number is found in a HuggingFace ``config.json``: the keys of each family, the
#: first present and not null wins (GPT-2 ``n_*``, BLOOM ``n_layer``/``n_head``, Falcon
#: ``num_kv_heads``/``n_head_kv``, Llama/Mistral/Qwen2 ``num_*``, Mixtral
#: ``num_local_experts``, Qwen-MoE ``num_experts``, DeepSeek ``n_routed_experts``).
HF_ALIASES: dict[str, tuple[str, ...]] = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
    "hidden": ("hidden_size", "n_embd", "n_embed", "d_model"),
    "heads": ("num_attention_heads", "n_head", "n_heads"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "kv_n_heads"),
    "head_dim": ("head_dim",),
    "ffn": ("intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"),  # dense MLP
    "vocab": ("vocab_size", "padded_vocab_size"),
    "max_context": ("max_position_embeddings", "n_positions", "n_ctx", "seq_length",
                    "max_seq_len"),
    "learned_positions": ("n_positions",),               # only families with learned positions
    "tied_embeddings": ("tie_word_embeddings",),
    "experts": ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"),
    # gpt-oss: both of the first two; DBRX: moe_top_k
    "experts_per_token": ("num_experts_per_tok", "experts_per_token", "moe_top_k"),
    "expert_ffn": ("moe_intermediate_size",),           # per routed expert (Mixtral: ffn)
    "shared_ffn": ("shared_expert_intermediate_size",),  # Qwen-MoE: all shared experts
    "shared_experts": ("n_shared_experts",),             # DeepSeek: x moe_intermediate_size
    "first_dense": ("first_k_dense_replace",),           # DeepSeek, GLM-4.5: leading dense
    # every k-th layer is MoE (Llama-4 Maverick: interleave_moe_layer_step 2)
    "moe_every": ("moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step"),
    "moe_list": ("moe_layers",),                         # Llama-4: the MoE layers' indices
    "dense_mlp_ffn": ("intermediate_size_mlp",),         # Llama-4: its dense layers' MLP
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
    "attention_chunk": ("attention_chunk_size",),       # Llama-4: chunked local attention
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
    # gpt-oss (HF transformers models/gpt_oss): biases on Q, K, V and O (attention_bias
    # true), on every expert's gate_up and down projections and on the router; SwiGLU
    # with a clamp; attention sinks (one learned logit per head and layer, 64 x 36 = 2,304
    # parameters in gpt-oss-120b, and one more softmax term: left out); sliding-window and
    # full layers alternate through layer_types
    "gpt_oss": dict(bias=True),
    # Llama-4 (HF transformers models/llama4, Llama4TextConfig and Llama4TextMoe): every
    # MoE layer adds to its routed experts one shared expert as wide as a routed one
    # (intermediate_size); the dense layers of Maverick (interleave_moe_layer_step 2) are
    # intermediate_size_mlp wide; chunked local attention (attention_chunk_size, default
    # 8192) on the RoPE layers, full attention on the NoPE ones (no_rope_layers 0, by
    # default every no_rope_layer_interval-th = 4th layer); its q/k norm (use_qk_norm) is
    # an L2 norm without weights; "llama4" is the multimodal wrapper (text_config), whose
    # vision encoder is not counted
    "llama4_text": dict(llama4=True), "llama4": dict(llama4=True),
    # Phi-3.5-MoE (HF transformers models/phimoe): LayerNorm (scale and shift), Mixtral-style
    # experts; its attention_bias also puts a bias on O and lm_head_bias one on the LM head
    # (4,096 x 32 + 32,064 parameters in Phi-3.5-MoE: left out)
    "phimoe": dict(norm="layernorm"),
    # DBRX (HF transformers models/dbrx): the shape is split into attn_config (kv_n_heads)
    # and ffn_config (ffn_hidden_size, moe_num_experts, moe_top_k), read flattened; GLU
    # experts; LayerNorms without bias (a scale only, counted as an RMSNorm's); untied
    "dbrx": {},
}
#: Model types whose layers are not the decoder-only attention + MLP blocks netmodel
#: models (what each is instead): refused with one line rather than read Llama-style.
HF_UNMODELLED: dict[str, str] = {
    **dict.fromkeys(("qwen3_next", "kimi_linear"),
                    "a hybrid of linear attention (Gated DeltaNet) and full attention layers"),
    **dict.fromkeys(("jamba", "zamba", "zamba2", "bamba", "falcon_h1", "nemotron_h",
                     "granitemoehybrid", "plamo2"),
                    "a hybrid of Mamba state-space and attention layers"),
    **dict.fromkeys(("mamba", "mamba2", "falcon_mamba"), "a Mamba state-space model"),
    **dict.fromkeys(("rwkv", "rwkv5", "rwkv6", "rwkv7"), "an RWKV recurrent model"),
    **dict.fromkeys(("minimax", "minimax_m1", "minimax_text_01"),
                    "a hybrid of lightning (linear) attention and softmax attention layers"),
    **dict.fromkeys(("recurrent_gemma", "xlstm", "lfm2", "lfm2_moe"),
                    "a recurrent or convolution hybrid"),
    **dict.fromkeys(("t5", "mt5", "umt5", "longt5", "switch_transformers", "bart", "mbart",
                     "pegasus", "marian", "whisper", "encoder-decoder", "t5gemma"),
                    "an encoder-decoder model"),
    "mpt": "a model whose shape is in nested attn_config / ffn_config tables, not read",
}
#: Config keys (exact, or prefixes ending in "_") of structures the reader does not model:
#: state-space, linear-attention and hybrid-layout settings.
_UNMODELLED_KEYS = ("ssm_", "mamba_", "linear_", "attn_type_list", "hybrid_override_pattern",
                    "layers_block_type", "attn_layer_period", "block_types", "ffn_config",
                    "attn_config")
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
                    shared_expert_gate=False, window="all", llama4=False)
#: Entries of a config.json's ``layer_types`` the reader models (HF transformers' names).
_LAYER_TYPES = ("full_attention", "sliding_attention")
#: ... and of Llama-4's, whose local layers are chunked.
_LLAMA4_LAYER_TYPES = ("full_attention", "chunked_attention")
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


def _refuse_unmodelled(c: _Config, model_type: str) -> None:
    """One-line refusal of a model whose layers are not what the reader models: a type of
    :data:`HF_UNMODELLED`, an encoder-decoder (``is_encoder_decoder``), or keys of
    state-space, linear-attention or hybrid layouts (:data:`_UNMODELLED_KEYS`)."""
    what = HF_UNMODELLED.get(model_type)
    enc_dec = c.cfg.get("is_encoder_decoder")
    if what is None and enc_dec is not None and validate.flag(
            c.where, "is_encoder_decoder", enc_dec):
        what = "an encoder-decoder model (is_encoder_decoder)"
    if what is None:  # a key set to null, false or empty says the structure is absent
        key = next((k for k, v in c.cfg.items() for p in _UNMODELLED_KEYS
                    if (k.startswith(p) if p.endswith("_") else k == p)
                    and v not in (None, False, [], {})), None)
        if key is not None:
            what = f"a layout netmodel does not model (its config has {key!r})"
    if what is not None:
        raise UserError(f"{c.where}: model_type {model_type!r} is {what}; netmodel reads "
                        f"decoder-only transformers with full, sliding-window or chunked "
                        f"attention")


def _layer_types(c: _Config, layers: int, allowed: tuple[str, ...] = _LAYER_TYPES
                 ) -> list[str] | None:
    """The config's ``layer_types`` (None when absent), checked: one entry per layer, each
    one of ``allowed`` (linear attention, Qwen3-Next, and others are refused)."""
    types = c.cfg.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or len(types) != layers or not all(
            isinstance(t, str) for t in types):
        raise UserError(f"{c.where}: layer_types must be a list of {layers} strings (one "
                        f"per layer), got {validate.describe(types)}")
    other = next((t for t in types if t not in allowed), None)
    if other is not None:  # linear (Qwen3-Next), ...: not modelled
        raise UserError(f"{c.where}: layer_types entry {validate.describe(other)} is not "
                        f"modelled; known: {known(allowed)}")
    return types


def _layer_flags(c: _Config, key: str, layers: int) -> list[int] | None:
    """A per-layer list of 0/1 (Llama-4 ``no_rope_layers``), or None when absent or empty
    (HF then derives it)."""
    v = c.cfg.get(key)
    if v is None or v == []:
        return None
    if not isinstance(v, list) or len(v) != layers or any(x not in (0, 1) or isinstance(
            x, bool) for x in v):
        raise UserError(f"{c.where}: {key} must be a list of {layers} entries 0 or 1 (one "
                        f"per layer), got {validate.describe(v)}")
    return v


def _chunked_attention(c: _Config, layers: int) -> dict:
    """Llama-4's chunked local attention as model keys (``{}`` when none):
    ``attention_chunk_size`` (HF default 8192; null: none) on the layers that
    ``layer_types`` calls ``chunked_attention``, else those whose ``no_rope_layers`` entry
    is 1 (RoPE layers), else all but every ``no_rope_layer_interval``-th (default 4), as
    HF's Llama4TextConfig derives them."""
    if "attention_chunk_size" in c.cfg and c.cfg["attention_chunk_size"] is None:
        return {}
    chunk = c.count("attention_chunk", limit="sliding_window", default=8192)
    types = _layer_types(c, layers, _LLAMA4_LAYER_TYPES)
    flags = _layer_flags(c, "no_rope_layers", layers)
    if types is not None:
        k = sum(1 for t in types if t == "chunked_attention")
    elif flags is not None:
        k = sum(flags)
    else:
        every = c.cfg.get("no_rope_layer_interval")
        every = 4 if every is None else validate.number(
            c.where, "no_rope_layer_interval", every, minimum=1, maximum=layers, integer=True)
        k = layers - layers // every
    if chunk == 0 or k == 0:
        return {}
    return {"sliding_window": chunk, "sliding_layers": k, "window_kind": "chunked"}


def _moe_layer_count(c: _Config, layers: int) -> int:
    """How many layers are MoE: DeepSeek's ``first_k_dense_replace`` and ``moe_layer_freq``,
    Qwen-MoE's ``decoder_sparse_step`` and ``mlp_only_layers``, Llama-4's ``moe_layers``
    (indices) or ``interleave_moe_layer_step``."""
    listed = c.raw("moe_list")
    if listed is not None:  # HF: a given list, even empty, is the MoE layers
        if not isinstance(listed, list) or len(listed) > layers:
            raise UserError(f"{c.where}: moe_layers must be a list of at most {layers} layer "
                            f"indices, got {validate.describe(listed)}")
        return len({validate.number(c.where, "moe_layers", i, minimum=0, maximum=layers - 1,
                                    integer=True) for i in listed})
    first = c.count("first_dense", limit="dense_layers", default=0)
    every = c.count("moe_every", limit="layers", default=1)
    only = c.raw("dense_only") or []
    if not isinstance(only, list) or len(only) > layers:
        raise UserError(f"{c.where}: mlp_only_layers must be a list of at most {layers} layer "
                        f"indices, got {validate.describe(only)}")
    dense = {validate.number(c.where, "mlp_only_layers", i, minimum=0, maximum=layers - 1,
                             integer=True) for i in only}
    if c.key("moe_every") in ("decoder_sparse_step", "interleave_moe_layer_step"):
        # Qwen-MoE, Llama-4: layer i if (i + 1) % step == 0
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
    types = _layer_types(c, layers)
    if types is not None:
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


def _is_int(value: object, wanted: int) -> bool:
    """Whether ``value`` is the JSON integer ``wanted`` (not ``16.0``, not ``true``)."""
    return type(value) is int and value == wanted


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
    if kind == "float" and _is_int(bits, 8):
        dtype = "fp8"
    elif kind == "float" and _is_int(bits, 4):  # llm-compressor's NVFP4 (nvfp4-pack-quantized)
        if w.get("strategy") != "tensor_group" or not _is_int(w.get("group_size"), 16):
            raise UserError(f"{where}: float 4-bit weights with strategy "
                            f"{validate.describe(w.get('strategy'))} and group_size "
                            f"{validate.describe(w.get('group_size'))} are not modelled; "
                            f"allowed: 'tensor_group' with group_size 16 (NVFP4)")
        dtype = "nvfp4"
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
                        f"float 4 (NVFP4), int 4, int 8")
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


def _w8a8(quant: dict, weight_dtype: str, where: str) -> str:
    """The dtype a compressed-tensors config's GEMMs take both inputs in where it quantizes
    their input (``input_activations``) to the dtype of its weights: ``"fp8"`` (float 8
    over fp8 weights: W8A8, vLLM's CUTLASS fp8 GEMM on GPUs with fp8 tensor cores),
    ``"int8"`` (int 8 over int8 weights: RedHatAI's ``*-quantized.w8a8``, vLLM's CUTLASS
    int8 GEMM, 'INT8 W8A8' on Turing, Ampere, Ada and Hopper in vLLM's supported-hardware
    table, docs.vllm.ai/en/v0.14.0/features/quantization/); ``""`` where the input stays
    16-bit (weight-only: W8A16, W4A16, NVFP4A16) or its dtype differs from the weights'
    (W4A8: weight-only rates); ``"fp4"`` for NVFP4 weights with float 4 inputs (W4A4).
    The quant_method ``fp8`` (``activation_scheme`` dynamic or
    static) and ``fbgemm_fp8`` (rowwise dynamic) configs are w8a8 by definition (vLLM docs,
    'FP8 W8A8': W8A8 on Ada Lovelace, Hopper and Blackwell; W8A16 through FP8 Marlin on
    Turing and Ampere)."""
    act = next(iter(quant["config_groups"].values())).get("input_activations")
    if act is None:
        return ""
    validate.table(f"{where}: config_groups input_activations", act)
    kind, bits = act.get("type"), act.get("num_bits")
    if kind not in ("int", "float") or type(bits) is not int or not 1 <= bits <= 32:
        raise UserError(f"{where}: input_activations of type {validate.describe(kind)} with "
                        f"{validate.describe(bits)} bits is not modelled; allowed: type 'int' or "
                        f"'float' with 1 to 32 bits (float 8, int 8 and float 4 run at their "
                        f"peaks), or none (weight-only)")
    if kind == "float" and bits == 4 and weight_dtype == "nvfp4":
        return "fp4"
    if bits != 8:
        return ""
    if kind == "float" and weight_dtype == "fp8":
        return "fp8"
    if kind == "int" and weight_dtype.split("-")[0] == "int8":
        return "int8"
    return ""


def _mxfp4(quant: dict, entry: dict, where: str) -> None:
    """MXFP4 (``quant_method: mxfp4``; openai/gpt-oss-20b and -120b): the routed experts'
    weights in 4-bit e2m1 with an e8m0 scale per 32 (4.25 bits a weight), everything else
    (attention, router, embeddings, LM head: ``modules_to_not_convert``) in the 16-bit
    dtype, as HF transformers' Mxfp4HfQuantizer converts only the experts and OpenAI's
    gpt-oss model card (2025-08-05) describes. Served weight-only: vLLM dequantizes in its
    MoE kernels (Marlin, Triton) on Hopper and Ampere, and its Blackwell kernels (FlashInfer
    MXFP4 x MXFP8 or x BF16) are not modelled; the GEMMs run at the bf16 rate. A model
    without routed experts, or with dense layers or shared experts, is refused."""
    kept = quant.get("modules_to_not_convert")
    kept = [] if kept is None else kept
    if not isinstance(kept, list) or len(kept) > 100_000 or not all(
            isinstance(x, str) for x in kept):
        raise UserError(f"{where}: modules_to_not_convert must be a list of module names "
                        f"(or null), got {validate.describe(kept)}")
    expert = next((x for x in kept if "experts" in x.split(".")), None)
    if expert is not None:
        raise UserError(f"{where}: modules_to_not_convert keeps {validate.describe(expert)} "
                        f"unquantized; mxfp4 is modelled on every routed expert")
    if entry["experts"] == 1 or entry.get("dense_layers") or entry.get("shared_ffn"):
        raise UserError(f"{where}: mxfp4 is modelled on the routed experts of an MoE model "
                        f"whose every layer is MoE without shared experts (gpt-oss); this "
                        f"model has {entry['experts']} expert(s), "
                        f"{entry.get('dense_layers', 0)} dense layer(s)")
    entry["mlp_weight_dtype"] = "mxfp4"


#: modelopt (NVIDIA TensorRT Model Optimizer) ``quant_algo`` values -> weight dtype and
#: the dtype the GEMMs take both inputs in ("": weight-only rates).
_MODELOPT_ALGOS = {"FP8": ("fp8", "fp8"), "NVFP4": ("nvfp4", "fp4")}


def _modelopt(quant: dict, where: str) -> tuple[str, str, str]:
    """modelopt (``quant_method: modelopt`` in config.json, or the ``quantization`` table of
    an ``hf_quant_config.json`` beside it; nvidia/*-FP8, nvidia/*-FP4): ``quant_algo``
    ``FP8`` (per-tensor fp8 weights and activations: w8a8) or ``NVFP4`` (e2m1 weights with
    an fp8 e4m3 scale per 16, ``group_size`` 16: 4.5 bits a weight; its activations are
    NVFP4 too, W4A4: ``compute_dtype`` fp4, at the fp4 peak on a GPU with fp4 tensor
    cores, Blackwell: vLLM's ModelOpt NVFP4 method runs CUTLASS FP4 GEMMs on compute
    capability 10.0 and falls back to weight-only FP4 Marlin below it,
    vllm/model_executor/layers/quantization/modelopt.py); ``exclude_modules`` as compressed-tensors' ``ignore`` (the LM head
    may be kept; a partly quantized layer is refused); ``kv_cache_quant_algo`` ``FP8`` or
    null. Returns (weight dtype, compute dtype, KV dtype)."""
    algo = quant.get("quant_algo")
    if not isinstance(algo, str) or algo not in _MODELOPT_ALGOS:
        raise UserError(f"{where}: quant_algo {validate.describe(algo)} is not modelled; "
                        f"allowed: {known(_MODELOPT_ALGOS)}")
    if algo == "NVFP4" and not _is_int(quant.get("group_size", 16), 16):
        raise UserError(f"{where}: NVFP4 group_size {validate.describe(quant.get('group_size'))}"
                        f" is not modelled; allowed: 16")
    _check_kept(quant, "exclude_modules", where)
    kv = quant.get("kv_cache_quant_algo")
    if kv not in (None, "FP8"):
        raise UserError(f"{where}: kv_cache_quant_algo {validate.describe(kv)} is not "
                        f"modelled; allowed: 'FP8', null")
    weights, compute = _MODELOPT_ALGOS[algo]
    return weights, compute, "fp8" if kv == "FP8" else ""


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
    (:data:`_QUANT_READERS`; compressed-tensors w8a8 fp8 or int8 also the GEMMs' compute
    dtype) and keep the embedding and LM head (``embedding_dtype``) in ``torch_dtype``;
    ``mxfp4`` (gpt-oss) stores only the routed experts in MXFP4; ``modelopt`` (in
    config.json, or an ``hf_quant_config.json`` beside it) FP8 or NVFP4; any other method
    is refused. The name defaults to the file's ``_name_or_path``, else its folder's name. Every
    number is checked for type and range (``compute/data/limits.toml``); an error names the
    config key.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    cfg = parse_table(read_text(path, "config.json"), "json", str(path))
    return _hf_from_dict(cfg, path, name)


def _with_sidecar(cfg: dict, path: Path) -> dict:
    """``cfg`` with the ``quantization`` table of an ``hf_quant_config.json`` beside
    ``path`` as its modelopt ``quantization_config``, where it has none (read whichever way
    the config.json was named: ``--hf-config`` or a model path)."""
    side = path.parent / "hf_quant_config.json"
    if cfg.get("quantization_config") is not None or not os.path.lexists(side):
        return cfg  # (a folder, device or broken link there is refused below)
    # modelopt's own file (TensorRT-LLM checkpoints): {"producer": ..., "quantization":
    # {"quant_algo": ..., "kv_cache_quant_algo": ..., "exclude_modules": ...}}
    doc = parse_table(read_text(side, "hf_quant_config.json"), "json", str(side))
    quant = validate.table(f"{side}: quantization", (doc if isinstance(doc, dict) else {})
                           .get("quantization"))
    return {**cfg, "quantization_config": {**quant, "quant_method": "modelopt"}}


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


#: HF transformers' DbrxAttentionConfig / DbrxFFNConfig defaults for keys a DBRX config.json
#: leaves out (models/dbrx/configuration_dbrx.py): one KV head, 4 experts, top-1, 3,584 wide.
_DBRX_DEFAULTS = {"kv_n_heads": 1, "moe_num_experts": 4, "moe_top_k": 1,
                  "ffn_hidden_size": 3584}


def _flatten_dbrx(cfg: dict, where: str) -> dict:
    """A DBRX config.json with its ``attn_config`` and ``ffn_config`` tables merged into the
    top level (each key once, their ``model_type`` dropped; the other families' configs are
    returned as they are)."""
    if str(cfg.get("model_type", "")).lower() != "dbrx":
        return cfg
    flat = {k: v for k, v in cfg.items() if k not in ("attn_config", "ffn_config")}
    for table in ("attn_config", "ffn_config"):
        inner = cfg.get(table)
        inner = {} if inner is None else validate.table(f"{where}: {table}", inner)
        inner = {k: v for k, v in inner.items() if k != "model_type"}  # HF writes "" there
        twice = next((k for k in inner if k in flat), None)
        if twice is not None:
            raise UserError(f"{where}: {table}.{twice} is also given at the top level")
        flat.update(inner)
    for key, default in _DBRX_DEFAULTS.items():  # what HF builds where the file is silent
        if flat.get(key) is None:
            flat[key] = default
    return flat


def _hf_from_dict(cfg, path: Path, name: str | None = None) -> ModelSpec:
    """:func:`load_hf_config` on a parsed config.json read from ``path``."""
    if not isinstance(cfg, dict):
        raise UserError(f"{path}: a HuggingFace config.json must hold a JSON object, got "
                        f"{validate.describe(cfg)}")
    where = str(path)
    cfg = _with_sidecar(cfg, path)
    # a checkpoint's config.json is named by its folder; a config saved under another name
    # by that name (two configs of one folder are two models)
    name = name or _Config(cfg, where).text("_name_or_path") or (
        path.parent.name if path.name == "config.json" else "") or path.stem
    cfg = _flatten_dbrx(_text_model(cfg, where), where)
    c = _Config(cfg, where)
    validate.name(where, "model", name)
    model_type, fam = _hf_family(c)
    _refuse_unmodelled(c, model_type)

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
            entry["dense_ffn"] = (c.count("dense_mlp_ffn", limit="ffn", default=dense_ffn)
                                  if fam["llama4"] else dense_ffn)
        if fam["llama4"]:  # one shared expert as wide as a routed one (Llama4TextMoe)
            entry["shared_ffn"] = entry["ffn"]
        elif c.has("shared_ffn"):
            entry["shared_ffn"] = c.count("shared_ffn")
        elif c.has("shared_experts"):
            n = c.count("shared_experts", limit="experts", minimum=0)
            entry["shared_ffn"] = n * entry["ffn"]
        if entry.get("shared_ffn") and fam["shared_expert_gate"]:
            entry["shared_expert_gate"] = True
    else:
        entry["ffn"] = dense_ffn

    if fam["llama4"]:
        entry.update(_chunked_attention(c, layers))
    else:
        entry.update(_sliding_window(c, model_type, fam, layers))
    _layer_types(c, layers, _LLAMA4_LAYER_TYPES if fam["llama4"] else _LAYER_TYPES)
    # (checked even where no window is read)

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
            if method == "compressed-tensors":
                entry["compute_dtype"] = _w8a8(quant, weight_dtype, here) or "bf16"
            kv_dtype = kv or kv_dtype
        elif method == "mxfp4":
            _mxfp4(quant, entry, f"{where}: quantization_config (mxfp4)")
            entry["embedding_dtype"] = act_dtype
        elif method == "modelopt":
            weight_dtype, compute, kv = _modelopt(quant, f"{where}: quantization_config "
                                                         f"(modelopt)")
            entry.update(embedding_dtype=act_dtype, compute_dtype=compute or "bf16")
            kv_dtype = kv or kv_dtype
        else:
            raise UserError(f"{where}: quantization_config.quant_method {method!r} is not "
                            f"modelled (its weight bytes are unknown); known: "
                            f"{known(('fp8', 'fbgemm_fp8', *_QUANT_READERS, 'mxfp4', 'modelopt'))}")
    entry.setdefault("weight_dtype", weight_dtype)
    entry.update(kv_dtype=kv_dtype, act_dtype=act_dtype,
                 source=f"HuggingFace config.json at {path}")
    return _model_from_entry(name, entry, where)
