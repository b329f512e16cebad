"""HuggingFace ``config.json`` files read offline into a :class:`~compute.model_spec.ModelSpec`:
loading, key resolution and checks, mixture-of-experts and latent-attention layouts, sliding
and chunked windows, with each family's facts from :mod:`compute.hf_families` (where each
figure is found, :data:`HF_ALIASES`; what each ``model_type`` builds, :data:`HF_FAMILIES`);
the ``quantization_config`` of a quantized checkpoint is read by :mod:`compute.hf_quant`, a
vision-language wrapper's vision tower counted by :mod:`compute.hf_vision`.
:func:`compute.models.get_model` reads a ``.json`` path through it.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any

from compute import validate
from compute.config_files import parse_table, read_text
from compute.errors import UserError, known, lookalike
from compute.hf_families import (
    ARCHITECTURE_FAMILIES,
    BASE_FAMILY,
    EXPERT_FIELDS,
    EXPERT_LIMITS,
    FAMILY_ALIASES,
    GATED_ACTIVATIONS,
    GATED_TYPES,
    HF_ALIASES,
    HF_FAMILIES,
    HF_UNMODELLED,
    KEYED_TYPES,
    LAYER_TYPES,
    LLAMA4_LAYER_TYPES,
    NESTED_DEFAULTS,
    TABLE_POSITIONS,
    TABLELESS_POSITIONS,
    TEXT_MODEL_KEYS,
    UNMODELLED_KEYS,
    UNMODELLED_LAYERS,
    WINDOW_OPT_IN,
    WINDOWLESS_TYPES,
    WRAPPED_TEXT_TYPES,
    ZERO_EXPERTS,
    family_layout,
    softmax_only,
)
from compute.hf_layouts import (
    chatglm_layout,
    falcon_norms,
    flatten_dbrx,
    gpt_neo_windows,
    multi_query,
    uniform_per_layer,
)
from compute.hf_quant import read_quantization, with_sidecar
from compute.hf_vision import VISION_TOWERS, vision_tower
from compute.model_spec import ModelSpec, model_from_entry

__all__ = ["HF_ALIASES", "HF_FAMILIES", "load_hf_config"]

#: HuggingFace ``torch_dtype`` values (torch's dtype names and their aliases) -> netmodel's
#: dtypes; any other value is refused with this list.
_HF_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
              "float": "fp32", "float64": "fp32", "double": "fp32", "float8_e4m3fn": "fp8",
              "float8_e4m3fnuz": "fp8", "float8_e5m2": "fp8", "float8_e5m2fnuz": "fp8"}


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
        if k is None and default is not None:
            return default
        if k is None:   # a required key written null: its range refuses it ('got null')
            k = next((k for k in HF_ALIASES[field] if k in self.cfg), None)
            if k is None:
                keys = " or ".join(map(repr, HF_ALIASES[field]))
                raise UserError(f"{self.where}: config.json lacks {keys}")
        r = validate.limits("model")[limit or field]
        lo = r.minimum if minimum is None else minimum
        return validate.number(self.where, k, self.cfg[k], minimum=lo, maximum=r.maximum,
                               integer=True)

    def flag(self, field: str, default: bool) -> bool:
        k = self.key(field)
        return default if k is None else validate.flag(self.where, k, self.cfg[k])

    def option(self, key: str, default: bool | None) -> bool | None:
        """The true/false config key ``key`` itself (no aliases), checked; ``default`` when
        absent or null."""
        v = self.cfg.get(key)
        return default if v is None else validate.flag(self.where, key, v)

    def text(self, key: str, default: str = "") -> str:
        v = self.cfg.get(key)
        return default if v is None else validate.string(self.where, key, v, max_length=200)


def _architectures(c: _Config) -> list[str]:
    """The config's ``architectures``: HuggingFace writes a list of class names; any other
    shape (a bare string, numbers, nested lists, a table) is refused naming the key, since the
    family of a model type of its own is read from its first entry."""
    arch = c.cfg.get("architectures")
    if arch is None:
        return []
    if not isinstance(arch, list) or not all(isinstance(a, str) for a in arch):
        raise UserError(f"{c.where}: architectures must be a list of class names (strings, "
                        f"e.g. [\"LlamaForCausalLM\"]), got {validate.describe(arch)}")
    return arch


def _hf_family(c: _Config) -> tuple[str, dict]:
    """The model type and its architecture defaults (:data:`HF_FAMILIES`). An unknown type
    whose first ``architectures`` entry names a known architecture
    (:data:`ARCHITECTURE_FAMILIES`: Grok-2's model_type "git" with Grok1ForCausalLM) takes
    that family's; any other is read GPT-2-style if it has ``n_embd``, else Llama-style,
    with a gated MLP for the gated families and ``silu``/``swish``/``swiglu`` activations."""
    model_type = c.text("model_type").lower()
    model_type = FAMILY_ALIASES.get(model_type, model_type)
    # a wrapper whose language model's keys sit at its own top level (DeepSeek-OCR's
    # config.json repeats its language_config there): the language model's family
    model_type = WRAPPED_TEXT_TYPES.get(model_type, model_type)
    if model_type in HF_FAMILIES:
        return model_type, family_layout(model_type)
    arch = _architectures(c)
    family = ARCHITECTURE_FAMILIES.get(arch[0]) if arch else None
    if family is not None:   # a model type of its own naming a known architecture
        return model_type, family_layout(family)
    if "n_embd" in c.cfg and model_type not in GATED_TYPES:
        return model_type, family_layout("gpt2")
    act = (c.text("hidden_act") or c.text("activation_function")).lower()
    gated = model_type in GATED_TYPES or act in ("silu", "swish", "swiglu")
    return model_type, {**BASE_FAMILY, "gated_mlp": gated}


def _keyed_architecture(c: _Config, fam: dict) -> dict:
    """The family's defaults with what the config's own architectural keys say, in any
    family: ``use_gated_activation`` (Cohere) or a gated activation (``swiglu``) makes the
    MLP gated; a ``position_embedding_type`` of ``alibi``, ``rope`` or ``nope`` means no
    learned position table (a GPT-2-style Jais config keeps ``n_positions`` as its context)."""
    act = (c.text("activation_function") or c.text("hidden_act")).lower()
    gated = c.flag("gated_mlp", fam["gated_mlp"] or act in GATED_ACTIVATIONS)
    positions = c.text("position_embedding_type").lower()
    if positions and positions not in TABLELESS_POSITIONS + TABLE_POSITIONS:
        asked = lookalike(positions, TABLELESS_POSITIONS + TABLE_POSITIONS)
        raise UserError(f"{c.where}: position_embedding_type {positions!r} is unknown{asked}; "
                        f"known: {', '.join(TABLE_POSITIONS)} (a learned table), "
                        f"{', '.join(TABLELESS_POSITIONS)} (no table)")
    learned = fam["learned_positions"] and positions not in TABLELESS_POSITIONS
    return {**fam, "gated_mlp": gated, "learned_positions": learned}


#: What the reader takes, said in the refusal of a model_type it does not (derived from the
#: registries: the families, the types read from their keys, the architectures read as a
#: family, the tables a multimodal wrapper keeps its language model in and the wrappers
#: whose vision tower is counted).
_TYPES_READ = (
    f"read: {', '.join(sorted({*HF_FAMILIES, *KEYED_TYPES}))}; a config whose "
    f"architectures begins with {', '.join(sorted(ARCHITECTURE_FAMILIES))}; and a "
    f"multimodal wrapper through its language model's table "
    f"({', '.join(TEXT_MODEL_KEYS)}), whose model_type must be one of the above "
    f"(its vision tower counted for {', '.join(sorted({*VISION_TOWERS, *WRAPPED_TEXT_TYPES}))})")


def _refuse_unmodelled(c: _Config, model_type: str, whose: str = "") -> None:
    """One-line refusal of a model whose layers are not what the reader models: a type of
    :data:`HF_UNMODELLED`, a ``layer_types`` listing layers that are not attention
    (:data:`UNMODELLED_LAYERS`: GraniteMoeHybrid's "mamba"), an encoder-decoder
    (``is_encoder_decoder``), or keys of state-space, linear-attention or hybrid layouts
    (:data:`UNMODELLED_KEYS`; those of a layer kind ``layer_types`` does not list are
    inert); and a ``model_type`` that is neither a family (:data:`HF_FAMILIES`) nor one
    read from its keys (:data:`KEYED_TYPES`), unless its ``architectures`` names a known
    one (:data:`ARCHITECTURE_FAMILIES`). A config without a ``model_type`` is read from
    its keys. ``whose``, in that refusal, says the type is the wrapper's when the text
    table names none."""
    what = HF_UNMODELLED.get(model_type)
    types = c.cfg.get("layer_types")
    types = types if isinstance(types, list) else None
    inert = ()   # settings of a layer kind layer_types does not list
    if types is not None:
        inert = tuple(p for kind, (_, p) in UNMODELLED_LAYERS.items() if kind not in types)
        kind = next((t for t in types if isinstance(t, str) and t in UNMODELLED_LAYERS), None)
        if what is None and kind is not None:
            what = (f"a hybrid with {types.count(kind)} {UNMODELLED_LAYERS[kind][0]} "
                    f"layers of {len(types)} (layer_types entries {kind!r})")
    if what is None and c.option("is_encoder_decoder", False):
        what = "an encoder-decoder model (is_encoder_decoder)"
    if what is None:  # a key set to null, false or empty says the structure is absent
        key = next((k for k, v in c.cfg.items() for p in UNMODELLED_KEYS
                    if (k.startswith(p) if p.endswith("_") else k == p)
                    and v not in (None, False, [], {}) and not softmax_only(k, v)
                    and not k.startswith(inert)), None)
        if key is not None:
            what = f"a layout netmodel does not model (its config has {key!r})"
    if what is not None:
        raise UserError(f"{c.where}: model_type {model_type!r} is {what}; netmodel reads "
                        f"decoder-only transformers with full, sliding-window or chunked "
                        f"attention")
    arch = _architectures(c)
    if model_type and model_type not in HF_FAMILIES and model_type not in KEYED_TYPES and (
            not arch or arch[0] not in ARCHITECTURE_FAMILIES):
        raise UserError(f"{c.where}: model_type {model_type!r}{whose} is not a family netmodel "
                        f"reads (its layers would be guessed); {_TYPES_READ}")


def _layer_types(c: _Config, layers: int, allowed: tuple[str, ...] = LAYER_TYPES
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
    types = _layer_types(c, layers, LLAMA4_LAYER_TYPES)
    flags = _layer_flags(c, "no_rope_layers", layers)
    if types is not None:
        full = {i for i, t in enumerate(types) if t != "chunked_attention"}
    elif flags is not None:
        full = {i for i, f in enumerate(flags) if not f}
    else:
        every = c.cfg.get("no_rope_layer_interval")
        every = 4 if every is None else validate.number(
            c.where, "no_rope_layer_interval", every, minimum=1, maximum=layers, integer=True)
        full = {i for i in range(layers) if (i + 1) % every == 0}
    k = layers - len(full)
    if chunk == 0 or k == 0:
        return {}
    return {"sliding_window": chunk, "sliding_layers": k, "window_kind": "chunked",
            **_full_layer_step(full, layers)}


def _full_layer_step(full: set[int], layers: int) -> dict:
    """``{"full_layer_step": k}`` when the full-attention layers ``full`` are exactly those
    ``i`` with ``i + 1`` a multiple of ``k`` (HF transformers' rule for gpt-oss and Gemma-2,
    k = 2, Gemma-3's and Cohere2's sliding_window_pattern, Llama-4's no_rope_layer_interval;
    :attr:`~compute.models.ModelSpec.full_layer_step`), else ``{}`` (none, or another
    placement, such as Qwen2's full layers first: taken as spread evenly, which only a
    pipeline's split of the layers sees)."""
    if not full or len(full) == layers:
        return {}
    k = min(full) + 1                   # the first full layer is layer k - 1
    if k >= 2 and full == set(range(k - 1, layers, k)):
        return {"full_layer_step": k}
    return {}


def _moe_layer_set(c: _Config, layers: int) -> set[int]:
    """The MoE layers' indices: DeepSeek's ``first_k_dense_replace`` and ``moe_layer_freq``,
    Qwen-MoE's ``decoder_sparse_step`` and ``mlp_only_layers``, Llama-4's ``moe_layers``
    (indices) or ``interleave_moe_layer_step``."""
    listed = c.raw("moe_list")
    if listed is not None:  # HF: a given list, even empty, is the MoE layers
        c.count("moe_every", limit="layers", default=1)   # unused then, still checked
        if not isinstance(listed, list) or len(listed) > layers:
            raise UserError(f"{c.where}: moe_layers must be a list of at most {layers} layer "
                            f"indices, got {validate.describe(listed)}")
        return {validate.number(c.where, "moe_layers", i, minimum=0, maximum=layers - 1,
                                integer=True) for i in listed}
    first = c.count("first_dense", limit="dense_layers", default=0)
    every = c.count("moe_every", limit="layers", default=1)
    only = c.raw("dense_only")
    only = [] if only is None else only   # null: none; 0, false, "" or {} are not a list
    if not isinstance(only, list) or len(only) > layers:
        raise UserError(f"{c.where}: mlp_only_layers must be a list of at most {layers} layer "
                        f"indices, got {validate.describe(only)}")
    dense = {validate.number(c.where, "mlp_only_layers", i, minimum=0, maximum=layers - 1,
                             integer=True) for i in only}
    if c.key("moe_every") == "moe_layer_interval" or "moe_layer_start_index" in c.cfg:
        # ERNIE-4.5 (HF Ernie4_5_MoeConfig): MoE on layer i when (i + 1) % interval == 0
        # and start <= i <= end (defaults 1 and -1); end null or -1 is the last layer
        start = c.cfg.get("moe_layer_start_index")
        start = 1 if start is None else validate.number(
            c.where, "moe_layer_start_index", start, minimum=0, maximum=layers - 1, integer=True)
        end = c.cfg.get("moe_layer_end_index")
        end = layers - 1 if end is None or end == -1 else validate.number(
            c.where, "moe_layer_end_index", end, minimum=0, maximum=layers - 1, integer=True)
        return {i for i in range(layers) if i not in dense and (i + 1) % every == 0
                and start <= i <= end}
    if c.key("moe_every") in ("decoder_sparse_step", "interleave_moe_layer_step",
                              "moe_layer_frequency"):
        # Qwen-MoE, Llama-4, Arctic: layer i if (i + 1) % step == 0
        return {i for i in range(layers) if i not in dense and (i + 1) % every == 0}
    return {i for i in range(layers) if i >= first and i not in dense and i % every == 0}


def _expert_groups(c: _Config) -> dict:
    """``expert_groups`` and ``groups_per_token`` from DeepSeek's ``n_group`` and
    ``topk_group`` (``{}`` without groups: ``n_group`` absent, null, 0 or 1). Either key,
    when given, is checked even where it does not take effect (Kimi-K2's n_group 1,
    topk_group 1): a whole number, ``topk_group`` at most a given ``n_group`` (a token
    picks that many of the groups; DeepseekV3's router takes the top ``topk_group`` of the
    ``n_group`` group scores), and ``n_group`` > 1 needs ``topk_group``."""
    g = c.count("expert_groups", limit="experts", minimum=0, default=0)
    t = c.count("groups_per_token", limit="experts", minimum=0, default=0)
    if g and t > g:
        raise UserError(f"{c.where}: topk_group {t} exceeds n_group {g}; allowed: 1 to {g} "
                        f"(the groups a token's experts are picked from)")
    if g <= 1:
        return {}
    if not t:
        raise UserError(f"{c.where}: n_group {g} needs topk_group, the groups a token picks "
                        f"its experts from; allowed: 1 to {g}")
    return {"expert_groups": g, "groups_per_token": t}


def _moe_layer_step(moe: set[int], layers: int) -> int:
    """Where the dense layers sit, as :attr:`~compute.models.ModelSpec.moe_layer_step`: 0
    when they are the first layers (first_k_dense_replace, ERNIE-4.5's start index), ``k``
    when exactly every ``k``-th layer is MoE (Llama-4's interleave_moe_layer_step, Qwen-MoE's
    decoder_sparse_step); any other placement (mlp_only_layers in the middle) is taken as
    dense-first, which only a pipeline's split of the layers sees."""
    dense = layers - len(moe)
    if not dense or moe == set(range(dense, layers)):
        return 0
    for k in range(2, layers + 1):
        if moe == {i for i in range(layers) if (i + 1) % k == 0}:
            return k
    return 0


def _sliding_window(c: _Config, model_type: str, fam: dict, layers: int) -> dict:
    """``sliding_window`` and ``sliding_layers`` from a config.json (``{}`` when no layer is
    windowed), as HF transformers builds the layers:

    * ``layer_types`` (newer configs of every family): the ``"sliding_attention"`` entries;
    * Gemma-2: every other layer, starting with the first (21 of 42);
    * Gemma-3, Cohere2 and any config naming a ``sliding_window_pattern``: all but every
      pattern-th layer (default 6, Cohere2 4);
    * Qwen2 / Qwen2-MoE / Qwen3: only with ``use_sliding_window`` true, and then the layers
      from ``max_window_layers`` on;
    * a family whose attention has no window (:data:`WINDOWLESS_TYPES`: Llama, DeepSeek,
      OLMo-2, Cohere, ...): refused;
    * any other family (Mistral, Mixtral, Phi-3, ...): every layer when ``sliding_window`` is
      not null.
    """
    if not c.has("sliding_window"):
        return {}
    use = c.option("use_sliding_window", None)
    if use is False:
        return {}
    if use is None and model_type in WINDOW_OPT_IN:
        return {}
    window = c.count("sliding_window")
    if window == 0:  # no window, as null (ModelSpec's 0)
        return {}
    types = _layer_types(c, layers)
    if types is not None:
        full = {i for i, t in enumerate(types) if t != "sliding_attention"}
    elif model_type in WINDOWLESS_TYPES or (fam["window"] == "none"
                                            and model_type not in KEYED_TYPES):
        # (a type of no family: its family is its architecture's, Kimi-K2's DeepSeek-V3)
        who = f"model_type {model_type!r}" if model_type else \
            f"architecture {_architectures(c)[0]!r}"
        raise UserError(f"{c.where}: sliding_window {window} is not read by {who}, whose "
                        f"attention spans the whole context; allowed: null (no window), or a "
                        f"layer_types list naming the windowed layers")
    elif fam["window"] == "alternate":   # Gemma-2: layer i full when i + 1 is even
        full = set(range(1, layers, 2))
    elif fam["window"] == "pattern" or c.has("window_pattern"):
        # Gemma-3, Cohere2, EXAONE-4 and other families naming a sliding_window_pattern:
        # layer i is full attention when (i + 1) % pattern == 0
        every = c.count("window_pattern", limit="layers", default=fam["window_every"])
        full = set(range(every - 1, layers, every))
    elif model_type in WINDOW_OPT_IN or fam["window"] == "after_max_window_layers":
        # Qwen2, dots.llm1: the first max_window_layers are full
        full = set(range(min(layers, c.count("max_window_layers", limit="layers", minimum=0,
                                             default=layers))))
    else:
        full = set()
    k = layers - len(full)
    if k == 0:
        return {}
    return {"sliding_window": window, "sliding_layers": k, **_full_layer_step(full, layers)}


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
    * MLA (``kv_lora_rank``, unless ``use_mla`` is false: DeepSeek-VL2-Tiny's plain
      attention): ``head_dim`` = ``qk_nope_head_dim + qk_rope_head_dim``, ``v_head_dim``,
      ``q_lora_rank`` (null: full rank).
    * ``tie_word_embeddings`` when given; otherwise the family's default.

    A float32 checkpoint is taken as served in bf16; an fp8 ``quantization_config`` gives fp8
    weights, or, when its ``modules_to_not_convert`` lists attention modules (Meta's FP8
    Llama-3.1), fp8 MLPs only, less those of the layers it lists. AWQ, GPTQ,
    compressed-tensors and bitsandbytes configs give the linear layers' dtype
    (:mod:`compute.hf_quant`; compressed-tensors w8a8 fp8 or int8 also the GEMMs' compute
    dtype) and keep the embedding and LM head (``embedding_dtype``) in ``torch_dtype``;
    ``mxfp4`` (gpt-oss) stores only the routed experts in MXFP4; ``modelopt`` (in
    config.json, or an ``hf_quant_config.json`` beside it) FP8 or NVFP4; any other method
    is refused. The name defaults to the file's ``_name_or_path``, else its folder's name for
    a ``config.json``, else the file's own name (``llama.json``: ``llama``). Every
    number is checked for type and range (``compute/data/limits.toml``); an error names the
    config key.

    Parameters
    ----------
    path : path
        A ``config.json`` file, or the folder that holds one.
    name : str, optional
        The model's name; default as said above.

    Returns
    -------
    ModelSpec

    Raises
    ------
    UserError
        A missing or unreadable file, a value of the wrong type or out of range (naming
        its key), a ``model_type`` or quantization method that is not modelled.

    Examples
    --------
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.json")
    >>> json.dump({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
    ...            "num_attention_heads": 4, "num_key_value_heads": 2,
    ...            "intermediate_size": 512, "vocab_size": 1000}, open(path, "w"))
    >>> m = load_hf_config(path)
    >>> m.name, m.layers, m.hidden, m.kv_heads, m.ffn
    ('tiny', 2, 256, 2, 512)
    """
    path = Path(path)
    try:
        folder = path.is_dir()
    except OSError:   # a name over the file system's limit: read_text says so in one line
        folder = False
    if folder:
        path = path / "config.json"
    cfg = parse_table(read_text(path, "config.json"), "json", str(path))
    return hf_from_dict(cfg, path, name)


def _text_model(cfg: dict, where: str) -> tuple[dict, str]:
    """The language model of a config.json and the key it was read from ("" for the file
    itself, whose errors then name it): the file itself, or, for a multimodal wrapper that
    keeps it in one of :data:`TEXT_MODEL_KEYS` and names no layers at its top level, that
    table, with the wrapper's ``torch_dtype``, ``quantization_config`` and
    ``tie_word_embeddings`` where it gives none and its model type's defaults
    (:data:`NESTED_DEFAULTS`) for the keys it leaves out. Its vision tower is
    :func:`compute.hf_vision.vision_tower`'s."""
    keys = [k for k in TEXT_MODEL_KEYS if cfg.get(k) is not None]
    if not keys or any(cfg.get(k) is not None for k in HF_ALIASES["layers"]):
        return cfg, ""
    if len(keys) > 1:   # which is the language model is not ours to guess
        raise UserError(f"{where}: the config holds {' and '.join(keys)}; a "
                        f"wrapper keeps its language model in one of "
                        f"{', '.join(TEXT_MODEL_KEYS)}")
    key = keys[0]
    text = validate.table(f"{where}: {key}", cfg[key])
    inner = dict(text)
    for k in ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings"):
        if inner.get(k) is None and cfg.get(k) is not None:
            inner[k] = cfg[k]
    if inner.get("model_type") is None:   # the wrapper's language model type, else its own
        wrapper = str(cfg.get("model_type", "")).lower()
        inner["model_type"] = WRAPPED_TEXT_TYPES.get(wrapper, cfg.get("model_type"))
    for k, v in NESTED_DEFAULTS.get(str(inner.get("model_type", "")).lower(), {}).items():
        inner.setdefault(k, v)
    return inner, key


def _speaks(c: _Config, field: str) -> bool:
    """Whether the config's ``field`` (one of :data:`EXPERT_FIELDS`) speaks of experts: a
    list that is not empty, or a count other than 0. Anything else is refused naming the
    key (a false, 0.0, -0.0 or '' was read as 0, a NaN or a table as a count)."""
    v = c.raw(field)
    if isinstance(v, list):
        return bool(v)
    if field == "moe_list":   # Llama-4's moe_layers: indices
        raise UserError(f"{c.where}: {c.key(field)} must be a list of layer indices, got "
                        f"{validate.describe(v)}")
    top = validate.limits("model")[EXPERT_LIMITS[field]].maximum
    return validate.number(c.where, c.key(field), v, minimum=0, maximum=top,
                           integer=True) != 0


def _zero_experts(c: _Config, model_type: str) -> int:
    """1 (a dense MLP) for a config whose experts key is 0 where its family's code reads 0
    so (:data:`ZERO_EXPERTS`), or, in a family the table does not name, where no other
    key speaks of experts (:data:`EXPERT_FIELDS`); refused in one line otherwise."""
    key = c.key("experts")
    known_type = model_type in ZERO_EXPERTS
    if known_type and ZERO_EXPERTS[model_type] == key:
        return 1
    always = known_type and ZERO_EXPERTS[model_type] is None
    other = next((c.key(f) for f in EXPERT_FIELDS if c.has(f) and _speaks(c, f)), None)
    if always or other:
        why = (f"its {other} is for experts" if other else
               f"model_type {model_type!r} always builds experts")
        raise UserError(f"{c.where}: {key} is 0 but {why}; a mixture of experts needs "
                        f"{key} >= 2 (a dense model omits {key}, or gives 1)")
    return 1


def _latent_attention(c: _Config) -> bool:
    """Whether the attention is MLA: the config's ``use_mla`` where it gives one (DeepSeek-VL2's
    DeepseekV2 code builds ``LlamaAttention``, heads x hidden / heads Q, K and V, when it is
    false, whatever ``kv_lora_rank`` says: deepseek-vl2-tiny's MHA), else a ``kv_lora_rank``
    that is not null. ``use_mla`` true without a ``kv_lora_rank`` is refused."""
    use = c.option("use_mla", None)
    if use and not c.has("kv_lora_rank"):
        raise UserError(f"{c.where}: use_mla is true but kv_lora_rank is null or absent; "
                        f"allowed: a kv_lora_rank >= 1 (the latent's width), or use_mla "
                        f"false (plain attention)")
    return c.has("kv_lora_rank") if use is None else use


def _refuse_projected_embedding(c: _Config, hidden: int) -> None:
    """A ``word_embed_proj_dim`` other than the hidden size (OPT-350m: the embedding
    projected in and out) is refused, in any family."""
    proj = c.cfg.get("word_embed_proj_dim")
    widest = validate.limits("model")["hidden"].maximum
    if proj is not None and validate.number(c.where, "word_embed_proj_dim", proj, minimum=1,
                                            maximum=widest, integer=True) != hidden:
        raise UserError(f"{c.where}: word_embed_proj_dim {proj} differs from hidden_size "
                        f"{hidden} (an embedding projected in and out, OPT-350m) and is not "
                        f"modelled; allowed: null or {hidden}")


def hf_from_dict(cfg, path: Path, name: str | None = None) -> ModelSpec:
    """:func:`load_hf_config` on a parsed config.json read from ``path``; a value refused
    is said as the file spells it (``got null``: a config.json is JSON whatever its name)."""
    with validate.file_values("config.json"):
        return _hf_from_dict(cfg, path, name)


def _hf_from_dict(cfg, path: Path, name: str | None) -> ModelSpec:
    if not isinstance(cfg, dict):
        raise UserError(f"{path}: a HuggingFace config.json must hold a JSON object, got "
                        f"{validate.describe(cfg)}")
    where = str(path)
    cfg = with_sidecar(cfg, path)
    # a checkpoint's config.json is named by its folder; a config saved under another name
    # by that name (two configs of one folder are two models)
    name = name or _Config(cfg, where).text("_name_or_path") or (
        path.parent.name if path.name == "config.json" else "") or path.stem
    top = cfg
    cfg, nested = _text_model(cfg, where)
    where = f"{where}: {nested}" if nested else where   # errors name the nested table
    cfg = uniform_per_layer(flatten_dbrx(cfg, where), where)
    cfg = gpt_neo_windows(cfg, where)
    c = _Config(cfg, where)
    validate.name(where, "model", name)
    model_type, fam = _hf_family(c)
    fam = _keyed_architecture(c, fam)
    # a nested table without a model_type of its own took the wrapper's (_text_model)
    inherited = nested and isinstance(top.get(nested), dict) and \
        top[nested].get("model_type") is None
    _refuse_unmodelled(c, model_type, f" (the wrapper's: {nested} names none)"
                       if inherited else "")
    for key, value in fam["config_defaults"].items():  # the family's own defaults
        if cfg.get(key) is None:
            cfg[key] = value

    layers, hidden, heads = c.count("layers"), c.count("hidden"), c.count("heads")
    kv_heads = c.count("kv_heads", default=heads)
    if fam["multi_query"] and multi_query(c):   # Falcon, GPT-BigCode
        kv_heads = 1
    if fam["chatglm"]:
        kv_heads, fam = chatglm_layout(c, heads, fam)
    entry: dict = {"layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads}
    if fam["ffn_halved"]:   # Qwen v1: intermediate_size is both halves of its SwiGLU
        dense_ffn = c.count("ffn") // 2
    elif fam["gated_mlp"]:
        dense_ffn = c.count("ffn")
    else:  # GPT-2, BLOOM, Falcon: n_inner / ffn_hidden_size null means 4 x hidden
        dense_ffn = c.count("ffn", default=4 * hidden)

    # attention: MLA or plain
    if _latent_attention(c):
        rope, nope = c.count("qk_rope_head_dim"), c.count("qk_nope_head_dim", limit="head_dim")
        entry.update(kv_lora_rank=c.count("kv_lora_rank", minimum=1),
                     q_lora_rank=c.count("q_lora_rank", default=0),
                     qk_rope_head_dim=rope, head_dim=nope + rope, kv_heads=heads,
                     # absent: head_dim's; 0 is no width (the model file's 'as head_dim')
                     v_head_dim=c.count("v_head_dim", default=0, minimum=1))
    elif c.has("head_dim"):
        entry["head_dim"] = c.count("head_dim")

    # MLP: dense, or experts (with shared experts and dense layers)
    experts = c.count("experts", minimum=0, default=1) or _zero_experts(c, model_type)
    entry["experts"] = experts
    if experts > 1:
        entry["experts_per_token"] = c.count("experts_per_token")
        entry["ffn"] = c.count("expert_ffn", limit="ffn") if c.has("expert_ffn") else dense_ffn
        moe_set = _moe_layer_set(c, layers)
        moe = len(moe_set)
        if moe == 0:
            raise UserError(f"{where}: the config names {experts} experts but no layer is a "
                            f"mixture of experts")
        entry["dense_layers"] = layers - moe
        if _moe_layer_step(moe_set, layers):
            entry["moe_layer_step"] = _moe_layer_step(moe_set, layers)
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
        elif fam["residual_mlp"] and c.flag("residual_mlp", False):   # Arctic
            entry["shared_ffn"] = hidden
        elif c.flag("residual_moe", False):   # Grok-2: the dense MLP, run on every token
            entry["shared_ffn"] = dense_ffn
        if entry.get("shared_ffn") and fam["shared_expert_gate"]:
            entry["shared_expert_gate"] = True
        entry.update(_expert_groups(c))
    elif c.key("shared_ffn") == "shared_intermediate_size":
        # GraniteMoeHybrid without experts (granite-4.0-micro): its shared_mlp is the MLP
        entry["ffn"] = c.count("shared_ffn", limit="ffn")
    else:
        entry["ffn"] = dense_ffn

    if fam["llama4"]:
        entry.update(_chunked_attention(c, layers))
    else:
        entry.update(_sliding_window(c, model_type, fam, layers))
    _layer_types(c, layers, LLAMA4_LAYER_TYPES if fam["llama4"] else LAYER_TYPES)
    # (checked even where no window is read)

    # embeddings, biases, norms
    entry["vocab"] = c.count("vocab")
    entry["tied_embeddings"] = c.flag("tied_embeddings", fam["tied_embeddings"])
    if fam["learned_positions"]:   # OPT's table has position_offset (2) rows more
        entry["learned_positions"] = c.count("learned_positions", default=0) + \
            fam["position_offset"]
    _refuse_projected_embedding(c, hidden)
    entry["max_context"] = c.count("max_context", default=0)
    if c.has("mtp_modules"):
        entry["mtp_modules"] = c.count("mtp_modules", minimum=0)
    entry["layer_norms"] = falcon_norms(c) if model_type == "falcon" else fam["layer_norms"]
    head_dim = entry.get("head_dim", hidden // heads)
    # the Q and K norms: over head_dim each ("head"), or over all the heads' widths
    # ("heads"), where the family builds them (and its qk_norm_key, if any, is true)
    qk = fam["qk_norm"] and not entry.get("kv_lora_rank") and (
        not fam["qk_norm_key"] or c.option(fam["qk_norm_key"], False))
    if qk:
        entry["qk_norm"] = 2 * head_dim if fam["qk_norm"] == "head" else \
            (heads + kv_heads) * head_dim
    bias = c.flag("bias", fam["bias"])
    o_mlp_bias = False
    if fam["bias_o_mlp"]:   # InternLM3: its bias key biases O and the MLP, not Q, K, V
        o_mlp_bias, bias = bias, False
    qkv_bias = fam["qkv_bias"] or c.flag("attention_bias", False)
    # HF's attention_bias (Llama, Phi-3.5-MoE, ...) biases O too; ChatGLM's add_qkv_bias,
    # StableLM's use_qkv_bias and InternLM3's qkv_bias Q, K and V only; Seed-OSS has a key
    # of its own for O's (o_bias_key)
    o_bias = (fam["attention_bias_o"] and c.key("attention_bias") == "attention_bias"
              and c.flag("attention_bias", False)) or o_mlp_bias or (
        bool(fam["o_bias_key"]) and bool(c.option(fam["o_bias_key"], False)))
    entry.update(gated_mlp=fam["gated_mlp"], norm=fam["norm"], bias=bias,
                 qkv_bias=qkv_bias and not bias, o_bias=o_bias and not bias,
                 embedding_norm=fam["embedding_norm"],
                 mlp_bias=(c.flag("mlp_bias", fam["mlp_bias"]) or o_mlp_bias) and not bias,
                 lm_head_bias=c.flag("lm_head_bias", fam["lm_head_bias"]))

    # dtypes
    torch_dtype = cfg.get("torch_dtype", cfg.get("dtype"))
    torch_dtype = "bfloat16" if torch_dtype is None else validate.string(
        where, "torch_dtype", torch_dtype, max_length=100)
    dtype = _HF_DTYPES.get(torch_dtype.removeprefix("torch."))
    if dtype is None:
        raise UserError(f"{where}: torch_dtype {torch_dtype!r} is unknown"
                        f"{lookalike(torch_dtype.removeprefix('torch.'), _HF_DTYPES)}; known: "
                        f"{known(_HF_DTYPES)}")
    if dtype == "fp32":
        dtype = "bf16"  # a 32/64-bit checkpoint is served in 16-bit, as inference servers do
    weight_dtype = dtype
    act_dtype = "bf16" if dtype == "fp8" else dtype
    weight_dtype, kv = read_quantization(cfg.get("quantization_config"), entry, layers,
                                         dtype, act_dtype, where)
    kv_dtype = kv or act_dtype
    entry.setdefault("weight_dtype", weight_dtype)
    note = ""
    if top.get("vision_config") is not None or nested:
        entry["vision_parameters"], words = vision_tower(top, hidden, str(path))
        note = f"; parameters are the language model's{f' ({nested})' if nested else ''}: {words}"
    entry.update(kv_dtype=kv_dtype, act_dtype=act_dtype,
                 source=f"HuggingFace config.json at {path}{note}")
    return model_from_entry(name, entry, where)
