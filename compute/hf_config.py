"""HuggingFace ``config.json`` files read offline into a :class:`~compute.model_spec.ModelSpec`:
loading (:func:`load_hf_config`), and each figure read, checked and written into the model's
entry: sizes and heads, latent attention, the dense MLP or the experts, embeddings, biases,
norms and dtypes. Its parts: each family's facts from :mod:`compute.hf_families` (where each
figure is found, :data:`HF_ALIASES`; what each ``model_type`` builds, :data:`HF_FAMILIES`);
the checked reading of one key, :mod:`compute.hf_reader`; which language model and family a
config is and what is refused, :mod:`compute.hf_model_type`; family layouts rewritten before
the keys are read, :mod:`compute.hf_layouts`; sliding and chunked windows,
:mod:`compute.hf_windows`; the mixture-of-experts layers, :mod:`compute.hf_experts`; the
``quantization_config`` of a quantized checkpoint, :mod:`compute.hf_quant`; a
vision-language wrapper's vision tower, :mod:`compute.hf_vision`.
:func:`compute.models.get_model` reads a ``.json`` path through it.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from compute import validate
from compute.config_files import parse_table, read_text
from compute.errors import UserError, known, lookalike
from compute.hf_experts import expert_groups, moe_layer_set, moe_layer_step, zero_experts
from compute.hf_families import HF_ALIASES, HF_FAMILIES, LAYER_TYPES, LLAMA4_LAYER_TYPES
from compute.hf_layouts import (
    chatglm_layout,
    falcon_norms,
    flatten_dbrx,
    gpt_neo_windows,
    multi_query,
    uniform_per_layer,
)
from compute.hf_model_type import hf_family, keyed_architecture, refuse_unmodelled, text_model
from compute.hf_quant import read_quantization, with_sidecar
from compute.hf_reader import ConfigReader
from compute.hf_vision import vision_tower
from compute.hf_windows import chunked_attention, layer_types, sliding_window
from compute.model_spec import ModelSpec, model_from_entry

__all__ = ["HF_ALIASES", "HF_FAMILIES", "load_hf_config"]

#: HuggingFace ``torch_dtype`` values (torch's dtype names and their aliases) -> netmodel's
#: dtypes; any other value is refused with this list.
_HF_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
              "float": "fp32", "float64": "fp32", "double": "fp32", "float8_e4m3fn": "fp8",
              "float8_e4m3fnuz": "fp8", "float8_e5m2": "fp8", "float8_e5m2fnuz": "fp8"}


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


def _latent_attention(c: ConfigReader) -> bool:
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


def _refuse_projected_embedding(c: ConfigReader, hidden: int) -> None:
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
    name = name or ConfigReader(cfg, where).text("_name_or_path") or (
        path.parent.name if path.name == "config.json" else "") or path.stem
    top = cfg
    cfg, nested = text_model(cfg, where)
    where = f"{where}: {nested}" if nested else where   # errors name the nested table
    cfg = uniform_per_layer(flatten_dbrx(cfg, where), where)
    cfg = gpt_neo_windows(cfg, where)
    c = ConfigReader(cfg, where)
    validate.name(where, "model", name)
    model_type, fam = hf_family(c)
    fam = keyed_architecture(c, fam)
    # a nested table without a model_type of its own took the wrapper's (text_model)
    inherited = nested and isinstance(top.get(nested), dict) and \
        top[nested].get("model_type") is None
    refuse_unmodelled(c, model_type, f" (the wrapper's: {nested} names none)"
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
    experts = c.count("experts", minimum=0, default=1) or zero_experts(c, model_type)
    entry["experts"] = experts
    if experts > 1:
        entry["experts_per_token"] = c.count("experts_per_token")
        entry["ffn"] = c.count("expert_ffn", limit="ffn") if c.has("expert_ffn") else dense_ffn
        moe_set = moe_layer_set(c, layers)
        moe = len(moe_set)
        if moe == 0:
            raise UserError(f"{where}: the config names {experts} experts but no layer is a "
                            f"mixture of experts")
        entry["dense_layers"] = layers - moe
        if moe_layer_step(moe_set, layers):
            entry["moe_layer_step"] = moe_layer_step(moe_set, layers)
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
        entry.update(expert_groups(c))
    elif c.key("shared_ffn") == "shared_intermediate_size":
        # GraniteMoeHybrid without experts (granite-4.0-micro): its shared_mlp is the MLP
        entry["ffn"] = c.count("shared_ffn", limit="ffn")
    else:
        entry["ffn"] = dense_ffn

    if fam["llama4"]:
        entry.update(chunked_attention(c, layers))
    else:
        entry.update(sliding_window(c, model_type, fam, layers))
    layer_types(c, layers, LLAMA4_LAYER_TYPES if fam["llama4"] else LAYER_TYPES)
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
