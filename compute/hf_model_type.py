"""What a HuggingFace ``config.json`` is before its figures are read: the table that holds its
language model (a multimodal wrapper's nested one, :func:`text_model`), its family and that
family's defaults (:func:`hf_family`, with what the config's own architectural keys say,
:func:`keyed_architecture`), and the one-line refusal of a model whose layers netmodel does
not model (:func:`refuse_unmodelled`). The families' facts are :mod:`compute.hf_families`'
tables; :mod:`compute.hf_config` reads the rest.
"""

from __future__ import annotations

from compute import validate
from compute.errors import UserError, lookalike
from compute.hf_families import (
    ARCHITECTURE_FAMILIES,
    BASE_FAMILY,
    FAMILY_ALIASES,
    GATED_ACTIVATIONS,
    GATED_TYPES,
    HF_ALIASES,
    HF_FAMILIES,
    HF_UNMODELLED,
    KEYED_TYPES,
    NESTED_DEFAULTS,
    TABLE_POSITIONS,
    TABLELESS_POSITIONS,
    TEXT_MODEL_KEYS,
    UNMODELLED_KEYS,
    UNMODELLED_LAYERS,
    WRAPPED_TEXT_TYPES,
    family_layout,
    softmax_only,
)
from compute.hf_reader import ConfigReader, architectures
from compute.hf_vision import VISION_TOWERS

__all__ = ["hf_family", "keyed_architecture", "refuse_unmodelled", "text_model"]


def text_model(cfg: dict, where: str) -> tuple[dict, str]:
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


def hf_family(c: ConfigReader) -> tuple[str, dict]:
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
    arch = architectures(c)
    family = ARCHITECTURE_FAMILIES.get(arch[0]) if arch else None
    if family is not None:   # a model type of its own naming a known architecture
        return model_type, family_layout(family)
    if "n_embd" in c.cfg and model_type not in GATED_TYPES:
        return model_type, family_layout("gpt2")
    act = (c.text("hidden_act") or c.text("activation_function")).lower()
    gated = model_type in GATED_TYPES or act in ("silu", "swish", "swiglu")
    return model_type, {**BASE_FAMILY, "gated_mlp": gated}


def keyed_architecture(c: ConfigReader, fam: dict) -> dict:
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


def refuse_unmodelled(c: ConfigReader, model_type: str, whose: str = "") -> None:
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
    arch = architectures(c)
    if model_type and model_type not in HF_FAMILIES and model_type not in KEYED_TYPES and (
            not arch or arch[0] not in ARCHITECTURE_FAMILIES):
        raise UserError(f"{c.where}: model_type {model_type!r}{whose} is not a family netmodel "
                        f"reads (its layers would be guessed); {_TYPES_READ}")
