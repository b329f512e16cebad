"""Family layouts of a HuggingFace ``config.json`` that :mod:`compute.hf_config` rewrites or
decides before reading its keys: DBRX's nested ``attn_config`` / ``ffn_config`` tables
flattened, per-layer lists of one value (Hunyuan) made that value, GPT-Neo's
``attention_layers`` written as ``layer_types``, Falcon's decoder architecture, multi-query
rule and norms a layer, and ChatGLM's KV heads and norm.
"""

from __future__ import annotations

from compute import validate
from compute.errors import UserError
from compute.hf_families import DBRX_DEFAULTS, PER_LAYER_KEYS
from compute.hf_reader import ConfigReader

__all__ = ["chatglm_layout", "falcon_norms", "flatten_dbrx", "gpt_neo_windows", "multi_query",
           "new_decoder", "uniform_per_layer"]


def flatten_dbrx(cfg: dict, where: str) -> dict:
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
    for key, default in DBRX_DEFAULTS.items():  # what HF builds where the file is silent
        if flat.get(key) is None:
            flat[key] = default
    return flat


def uniform_per_layer(cfg: dict, where: str) -> dict:
    """The config with each per-layer list of :data:`PER_LAYER_KEYS` (Hunyuan-A13B's
    ``moe_topk`` [8] x 32) replaced by its one value; lists whose values differ from layer
    to layer are refused (netmodel's layers are alike). Hunyuan's shared expert exists only
    with ``use_mixed_mlp_moe`` true (HF HunYuanMoEV1)."""
    out = dict(cfg)
    for key in PER_LAYER_KEYS:
        v = out.get(key)
        if isinstance(v, list):
            if not v or any(x != v[0] or isinstance(x, bool) for x in v):
                raise UserError(f"{where}: {key} must be one value, or the same value for "
                                f"every layer (layers that differ are not modelled), got "
                                f"{validate.describe(v)}")
            layers = out.get("num_hidden_layers")
            if isinstance(layers, int) and not isinstance(layers, bool) and len(v) != layers:
                raise UserError(f"{where}: {key} lists {len(v)} values for "
                                f"{layers} layers (num_hidden_layers): a per-layer list "
                                f"has one value per layer")
            out[key] = v[0]
    mixed = out.get("use_mixed_mlp_moe")
    if mixed is not None and not validate.flag(where, "use_mixed_mlp_moe", mixed):
        out.pop("num_shared_expert", None)
    return out


def new_decoder(c: ConfigReader) -> bool:
    """Falcon's new decoder architecture (grouped KV heads, two LayerNorms a layer):
    ``new_decoder_architecture``, or RW's ``n_head_kv`` (tiiuae's remote RefinedWeb code for
    Falcon-40B, the layer TGI calls ``FlashRWLargeLayer``, before HF's ``falcon`` configs
    spelled it ``new_decoder_architecture``)."""
    return c.option("new_decoder_architecture", False) or c.key("kv_heads") == "n_head_kv"


def multi_query(c: ConfigReader) -> bool:
    """Whether a family whose ``multi_query`` defaults to true (Falcon, GPT-BigCode: their HF
    configs') builds one K and one V head: ``multi_query`` (default true) unless the config's
    own KV-head count decides, with Falcon's new decoder architecture (:func:`new_decoder`).
    Another KV-head key beside a true ``multi_query`` does not make the attention multi-head
    (HF's FalconAttention and GPTBigCodeAttention take one head then)."""
    if new_decoder(c):
        return False
    return c.option("multi_query", True)


def falcon_norms(c: ConfigReader) -> int:
    """Falcon's LayerNorms a layer, in HF FalconDecoderLayer's order: two
    (``input_layernorm``, ``post_attention_layernorm``) unless ``parallel_attn`` (default
    true); with it, ``num_ln_in_parallel_attn`` of them (``ln_attn`` and ``ln_mlp`` when 2,
    else one ``input_layernorm``), None meaning 2 under the new decoder architecture
    (:func:`new_decoder`; Falcon-40B/180B) and 1 otherwise (Falcon-7B)."""
    if not c.option("parallel_attn", True):
        return 2
    n = c.cfg.get("num_ln_in_parallel_attn")
    if n is None:
        return 2 if new_decoder(c) else 1
    return int(validate.number(c.where, "num_ln_in_parallel_attn", n, minimum=1, maximum=2,
                               integer=True))


def chatglm_layout(c: ConfigReader, heads: int, fam: dict) -> tuple[int, dict]:
    """ChatGLM's KV heads and norm: ``multi_query_group_num`` KV heads when
    ``multi_query_attention`` is true, else one per query head (ChatGLMConfig's defaults:
    false, 1 group; THUDM's SelfAttention builds K and V of ``kv_channels`` x that many);
    an RMSNorm unless ``rmsnorm`` is false (then a LayerNorm)."""
    kv_heads = c.count("kv_heads", default=1) if c.option("multi_query_attention", False) \
        else heads
    if c.key("kv_heads") not in (None, "multi_query_group_num"):
        kv_heads = c.count("kv_heads")    # a num_key_value_heads of its own decides
    return kv_heads, {**fam, "norm": "rmsnorm" if c.option("rmsnorm", True) else "layernorm"}


def gpt_neo_windows(cfg: dict, where: str) -> dict:
    """A GPT-Neo config with its ``attention_layers`` (or ``attention_types``, expanded as
    HF's GPTNeoConfig does: ``[[["global", "local"], 12]]`` is 12 x global, local) written as
    ``layer_types`` and its ``window_size`` (HF default 256) as ``sliding_window``; other
    families' configs are returned as they are."""
    if str(cfg.get("model_type", "")).lower() != "gpt_neo" or cfg.get("layer_types") is not None:
        return cfg
    kinds = cfg.get("attention_layers")
    if kinds is None and cfg.get("attention_types") is not None:
        kinds = []
        types = cfg["attention_types"]
        if not isinstance(types, list) or not all(
                isinstance(t, list) and len(t) == 2 and isinstance(t[0], list)
                and isinstance(t[1], int) and not isinstance(t[1], bool) and 0 <= t[1] <= 10_000
                for t in types):
            raise UserError(f"{where}: attention_types must be a list of [kinds, repeats] "
                            f"pairs, as [[[\"global\", \"local\"], 12]], got "
                            f"{validate.describe(types)}")
        for pattern, repeats in types:
            kinds.extend(pattern * repeats)
    if kinds is None:
        return cfg
    if not isinstance(kinds, list) or any(k not in ("global", "local") for k in kinds):
        raise UserError(f"{where}: attention_layers must list 'global' or 'local' for each "
                        f"layer, got {validate.describe(kinds)}")
    out = {k: v for k, v in cfg.items() if k not in ("attention_layers", "attention_types")}
    out["layer_types"] = ["sliding_attention" if k == "local" else "full_attention"
                          for k in kinds]
    if "local" in kinds:
        out["sliding_window"] = 256 if cfg.get("window_size") is None else cfg["window_size"]
    return out
