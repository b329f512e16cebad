"""LLM model specifications: the catalog in ``compute/data/models.toml``, user files, and
HuggingFace ``config.json`` files (read offline, :mod:`compute.hf_config`). The spec itself
and its dtypes are :mod:`compute.model_spec`, re-exported here.

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
  window does (vLLM's hybrid KV-cache manager), though a prefill step holds the whole
  prompt while it runs (:meth:`ModelSpec.kv_tokens_in_step`); the figures are averages
  over the layers;
* **chunked local attention** (``window_kind = "chunked"``; Llama-4): a chunked layer
  attends only within its chunk of ``sliding_window`` tokens, so it keeps at most one chunk
  and a long decode reads on average half of one (:meth:`ModelSpec.decode_tokens_read`).

Parameter counts are exact for the catalog's families (checked against published counts in
the tests); what is left out is said where it is (e.g. DeepSeek-V3's multi-token-prediction
module, which its published 671B also excludes; MTP decode costs it, ``mtp_modules`` and
:mod:`compute.mtp`).

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

import tomllib
from dataclasses import dataclass
from functools import cache, partial
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from compute import validate
from compute.config_files import (
    check_keys,
    missing_named_file,
    parse_table,
    read_table,
    read_text,
)
from compute.errors import UserError, find_name, known, lookalike, refuse_lookalike_names
from compute.hf_config import HF_ALIASES, HF_FAMILIES, hf_from_dict, load_hf_config
from compute.model_parameters import NORMS
from compute.model_spec import (
    COMPUTE_DTYPES,
    DTYPE_BYTES,
    GEMM_WEIGHTS,
    PLAIN_DTYPES,
    QUANT_GROUPS,
    ModelSpec,
    model_from_entry,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COMPUTE_DTYPES",
    "DTYPE_BYTES",
    "GEMM_WEIGHTS",
    "HF_ALIASES",
    "HF_FAMILIES",
    "NORMS",
    "PLAIN_DTYPES",
    "PUBLISHED_KEY",
    "QUANT_GROUPS",
    "ModelSpec",
    "PublishedCount",
    "expected_experts_touched",
    "get_model",
    "load_hf_config",
    "load_model_file",
    "model_catalog",
    "model_names",
    "published_counts",
]


#: What a model file's key must be where its range leaves out 0 (a number below the
#: smallest a file holds is told so): limits.toml's [model] ranges.
_ALLOWED = partial(validate.limit_allowed, "model")


#: A catalog model's published parameter counts, a sourced row beside its figures in
#: ``compute/data/models.toml``: ``{total, active, source}``, in parameters (active: per token;
#: a dense model's equals its total). The tests hold the counts the model's shape gives to
#: them (within 2%). Every catalog entry gives one; a model file may (a catalog table copied
#: into a file keeps it): checked there as in the catalog, as its ``source`` is, and not
#: otherwise used.
PUBLISHED_KEY = "published_parameters"


@dataclass(frozen=True)
class PublishedCount:
    """A catalog model's published parameter counts (:data:`PUBLISHED_KEY`)."""

    total: float
    active: float
    source: str


def _published(here: str, row) -> PublishedCount:
    """The :data:`PUBLISHED_KEY` row of the catalog entry ``here``, checked."""
    here = f"{here}: {PUBLISHED_KEY}"
    row = validate.table(here, row)
    check_keys(here, row, ("total", "active", "source"))
    total = validate.number(here, "total", row["total"], minimum=1, maximum=1e15)
    active = validate.number(here, "active", row["active"], minimum=1, maximum=total)
    if not isinstance(row["source"], str) or not row["source"].strip():
        raise UserError(f"{here}: source must say where the counts are published, got "
                        f"{validate.describe(row['source'])}")
    return PublishedCount(float(total), float(active), row["source"])


def _parse_model_table(data, where: str,
                       published: dict[str, PublishedCount] | None = None
                       ) -> dict[str, ModelSpec]:
    """The models of a parsed ``{"model": {NAME: entry}}`` table. ``published``: the
    catalog's, into which each entry's :data:`PUBLISHED_KEY` row goes (every entry must give
    one); None for a user's file, whose rows are checked alone."""
    if isinstance(data, dict) and isinstance(data.get("model"), dict):   # beside it, a stray key
        check_keys(f"{where} (top level)", data, ("model",))   # (told 'expected a table model')
    if not isinstance(data, dict) or set(data) != {"model"} or not isinstance(data["model"], dict):
        got = f", got model {validate.describe(data['model'])}" if isinstance(data, dict) \
            and "model" in data else ""
        raise UserError(f"{where}: expected a top-level table 'model' of model entries "
                        f"([model.NAME] in TOML, {{\"model\": {{NAME: {{...}}}}}} in JSON)"
                        f"{got}")
    if not data["model"]:
        raise UserError(f"{where}: the 'model' table is empty")
    out = {}
    for name, entry in data["model"].items():
        if isinstance(entry, dict) and (published is not None or PUBLISHED_KEY in entry):
            here = f"{where}: model {name!r}"
            if PUBLISHED_KEY not in entry:
                raise UserError(f"{here} lacks {PUBLISHED_KEY} = {{total, active, source}}, "
                                "its published parameter counts")
            count = _published(here, entry[PUBLISHED_KEY])   # a file's checked, as `source`
            if published is not None:
                published[name] = count
            entry = {k: v for k, v in entry.items() if k != PUBLISHED_KEY}
        # a name is typed back (--models A,B): it holds none of validate.NAME_MARKS
        out[name] = model_from_entry(validate.typed_name(where, "model", name), entry, where,
                                     read_by_caller=(PUBLISHED_KEY,))
    return out


@cache
def _catalog() -> tuple[dict[str, ModelSpec], dict[str, PublishedCount]]:
    """The shipped models and their published counts, read once."""
    text = resources.files("compute").joinpath("data/models.toml").read_text(encoding="utf-8")
    published: dict[str, PublishedCount] = {}
    models = _parse_model_table(tomllib.loads(text), "compute/data/models.toml", published)
    return models, published


def model_catalog() -> dict[str, ModelSpec]:
    """The shipped model catalog, by name (read once)."""
    return _catalog()[0]


def published_counts() -> dict[str, PublishedCount]:
    """Each catalog model's published parameter counts (:data:`PUBLISHED_KEY`), by name.

    >>> c = published_counts()["Mixtral-8x7B"]
    >>> c.total, c.active
    (46700000000.0, 12900000000.0)
    """
    return _catalog()[1]


def model_names() -> tuple[str, ...]:
    """Names of the shipped models, in catalog order."""
    return tuple(model_catalog())


def load_model_file(path: str | PathLike[str]) -> dict[str, ModelSpec]:
    """Models from a TOML or JSON file with the catalog's keys (``[model.NAME]`` tables)."""
    path = Path(path)
    with validate.file_values(path):   # a JSON file's null said as null
        return _user_models(_parse_model_table(read_table(path, "model file",
                                                          allowed=_ALLOWED), str(path)),
                            str(path))


def _user_models(models: dict[str, ModelSpec], where: str) -> dict[str, ModelSpec]:
    """``models`` of a user's catalog-format file (TOML, or JSON by :func:`get_model`),
    checked as the shipped catalog's entries are: no catalog name, and each with its
    ``source`` (every figure read from a file carries it, as a GPU file's entry, a
    scenario file's ``[sources]`` and an engine profile's parameters do)."""
    _refuse_catalog_names(models, model_catalog(), where, "model")
    for name, m in models.items():
        if not m.source.strip():
            raise UserError(f"{where}: model {name!r} "
                            + ("lacks key source" if m.source == "" else "has a blank source")
                            + " (where its figures come from: a config.json, a paper, or "
                            "'what-if: ...' for a model of your own)")
    return models


def _refuse_catalog_names(entries: dict, table: dict, where: str, kind: str) -> None:
    """A user file may not redefine a catalog entry: its figures would be reported under
    the catalog's name (a 2-layer 'Llama-3-8B')."""
    taken = [n for n in entries if find_name(table, n) is not None]   # case too
    if taken:
        raise UserError(f"{where}: {', '.join(repr(n) for n in taken)} already name(s) a "
                        f"catalog {kind}; give yours another name")
    refuse_lookalike_names(entries, table, where, kind)


def get_model(name: str | ModelSpec) -> ModelSpec:
    """A model by catalog name, or the spec itself if given one; a path to a ``.toml``
    catalog-format file holding one model also works, and so does a ``.json`` file of
    either kind, whatever its name: one with a top-level ``model`` table is read as the
    catalog format, one with HuggingFace keys (``model_type``, ``num_hidden_layers``,
    ``n_layer``, ...) as a HuggingFace config.json.

    >>> get_model("Llama-2-70B").vocab
    32000
    >>> get_model("Llama-9")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compute.errors.UserError: unknown model 'Llama-9'; known: ...; or the path of a model file (.toml or .json) or of a HuggingFace config (.json)
    """
    if isinstance(name, ModelSpec):
        return name
    if not isinstance(name, str):
        raise UserError(f"a model is a name or a path, got {validate.describe(name)}")
    table = model_catalog()
    key = find_name(table, name)
    if key is not None:
        return table[key]
    missing = missing_named_file(name, "model file", table, "the catalog's model")
    if missing is not None:
        raise missing
    if name.lower().endswith(".json"):
        return _model_from_json(Path(name))
    if name.lower().endswith(".toml"):
        models = load_model_file(name)
        if len(models) != 1:
            raise UserError(f"{name} holds {len(models)} models; give a file with one model")
        return next(iter(models.values()))
    raise UserError(f"unknown model {validate.describe(name)}{lookalike(name, table)}; known: "
                    f"{known(table)}; or the "
                    f"path of a model file (.toml or .json) or of a HuggingFace config (.json)")


#: Keys whose presence at the top level of a JSON file marks a HuggingFace config.json.
_HF_MARKERS = ("model_type", "architectures", *HF_ALIASES["layers"], *HF_ALIASES["hidden"])


def _model_from_json(path: Path) -> ModelSpec:
    """The one model of a JSON file, whatever its name: a top-level ``model`` table is the
    catalog format (:func:`load_model_file`), HuggingFace keys (``model_type``,
    ``num_hidden_layers``, ``n_layer``, ...) a config.json (:func:`load_hf_config`)."""
    doc = parse_table(read_text(path, "model file"), "json", str(path), allowed=_ALLOWED)
    if isinstance(doc, dict) and "model" in doc:
        with validate.file_values(path):   # its null said as null
            models = _user_models(_parse_model_table(doc, str(path)), str(path))
        if len(models) != 1:
            raise UserError(f"{path} holds {len(models)} models; give a file with one model")
        return next(iter(models.values()))
    if isinstance(doc, dict) and any(k in doc for k in _HF_MARKERS):
        model = hf_from_dict(doc, path)   # named by its _name_or_path: not as a catalog's
        refuse_lookalike_names([model.name], model_catalog(), str(path), "model")
        return model
    raise UserError(f"{path} is neither a model file (a top-level 'model' table) nor a "
                    f"HuggingFace config.json (keys such as model_type, num_hidden_layers, "
                    f"n_layer); got {validate.describe(doc)}")


def _token_counts(tokens: object) -> np.ndarray:
    """``tokens`` (a number or an array of them) as a float array; text, None, complex
    numbers, dates and numbers past a float's range are refused by name."""
    import numpy as np

    try:
        n = np.asarray(tokens)
        if n.dtype.kind in "iuf" or n.dtype.kind == "O" and all(
                validate.is_finite(x) for x in n.flat):
            return n.astype(float, copy=False)
    except (TypeError, ValueError, OverflowError):
        pass
    raise UserError(f"tokens must be a number of tokens or an array of them, got "
                    f"{validate.describe(tokens)}")


_INF = float("inf")


def _refuse_tokens(tokens: object) -> None:
    """Refuse counts of tokens that are negative, NaN or infinite, naming the first."""
    import numpy as np

    flat = np.asarray(tokens, dtype=float).ravel()
    bad = flat[~((flat >= 0.0) & (flat < _INF))][0]
    shown = validate.describe(tokens if np.ndim(tokens) == 0 else float(bad))
    raise UserError(f"tokens must be finite numbers of tokens >= 0, got {shown}")


def expected_experts_touched(model: ModelSpec, tokens: float | np.ndarray,
                             ) -> float | np.ndarray:
    """Expected number of distinct experts that ``tokens`` tokens route to in one layer, with
    uniform top-k routing: ``E (1 - (1 - k/E)^n)``; 1 for a dense model. ``tokens`` must be
    finite and >= 0 (a negative count made a negative number of experts, NaN a NaN one).

    >>> float(expected_experts_touched(get_model("Llama-3-8B"), 100))
    1.0
    >>> mixtral_like = ModelSpec("m", 1, 64, 4, 4, 16, 128, 100, experts=8, experts_per_token=2)
    >>> float(expected_experts_touched(mixtral_like, 1)), float(expected_experts_touched(mixtral_like, 2))
    (2.0, 3.5)
    """
    import numpy as np

    if not isinstance(model, ModelSpec):
        validate.of_type("model", model, ModelSpec, "get_model('DeepSeek-V3')", default=False)
    e, k = model.experts, model.experts_per_token
    if type(tokens) is float:  # a float gives a float: the same operations, same number
        if not 0.0 <= tokens < _INF:   # one comparison: NaN, negatives and infinity fail it
            _refuse_tokens(tokens)
        if e == 1:
            return 1.0
        return e * (1.0 - float(np.power(1.0 - k / e, tokens))) if k < e else float(e)
    n = _token_counts(tokens)
    # two reductions (a NaN makes both NaN: refused), numpy's own, not the methods' wrappers
    if n.size and not (np.minimum.reduce(n, axis=None) >= 0.0
                       and np.maximum.reduce(n, axis=None) < _INF):
        _refuse_tokens(tokens)
    if e == 1:
        return np.ones_like(n)
    return e * (1.0 - np.power(1.0 - k / e, n)) if k < e else np.full_like(n, float(e))
