"""Which layers of a HuggingFace ``config.json`` attend through a window, as model keys:
sliding windows (:func:`sliding_window`: ``layer_types``, else each family's rule) and
Llama-4's chunked attention (:func:`chunked_attention`), with where the full-attention layers
sit (``full_layer_step``); and the check of a config's ``layer_types``
(:func:`layer_types`). :mod:`compute.hf_config` calls them.
"""

from __future__ import annotations

from compute import validate
from compute.errors import UserError, known
from compute.hf_families import (
    KEYED_TYPES,
    LAYER_TYPES,
    LLAMA4_LAYER_TYPES,
    WINDOW_OPT_IN,
    WINDOWLESS_TYPES,
)
from compute.hf_reader import ConfigReader, architectures

__all__ = ["chunked_attention", "layer_types", "sliding_window"]


def sliding_window(c: ConfigReader, model_type: str, fam: dict, layers: int) -> dict:
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
    types = layer_types(c, layers)
    if types is not None:
        full = {i for i, t in enumerate(types) if t != "sliding_attention"}
    elif model_type in WINDOWLESS_TYPES or (fam["window"] == "none"
                                            and model_type not in KEYED_TYPES):
        # (a type of no family: its family is its architecture's, Kimi-K2's DeepSeek-V3)
        who = f"model_type {model_type!r}" if model_type else \
            f"architecture {architectures(c)[0]!r}"
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


def chunked_attention(c: ConfigReader, layers: int) -> dict:
    """Llama-4's chunked local attention as model keys (``{}`` when none):
    ``attention_chunk_size`` (HF default 8192; null: none) on the layers that
    ``layer_types`` calls ``chunked_attention``, else those whose ``no_rope_layers`` entry
    is 1 (RoPE layers), else all but every ``no_rope_layer_interval``-th (default 4), as
    HF's Llama4TextConfig derives them."""
    if "attention_chunk_size" in c.cfg and c.cfg["attention_chunk_size"] is None:
        return {}
    chunk = c.count("attention_chunk", limit="sliding_window", default=8192)
    types = layer_types(c, layers, LLAMA4_LAYER_TYPES)
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


def layer_types(c: ConfigReader, layers: int, allowed: tuple[str, ...] = LAYER_TYPES
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


def _layer_flags(c: ConfigReader, key: str, layers: int) -> list[int] | None:
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
