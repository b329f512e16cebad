"""LLM model specifications: the catalog in ``compute/data/models.toml``, user files, and
HuggingFace ``config.json`` files (read offline).

A :class:`ModelSpec` describes a decoder-only transformer: its shape, how its MLP and
embeddings are built, and the dtypes its weights, KV cache and activations are stored in.
Mixture-of-experts fields (``experts``, ``experts_per_token``) default to a dense model.

>>> m = get_model("Llama-3-70B")
>>> m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim
(80, 8192, 64, 8, 128)
>>> round(m.parameters / 1e9, 2)
70.55
>>> round(get_model("GPT-3-175B").parameters / 1e9, 1)
174.6
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, fields
from functools import cache
from importlib import resources
from pathlib import Path

from compute.config_files import check_keys, parse_table, read_table, read_text
from compute.errors import UserError, known

__all__ = [
    "DTYPE_BYTES",
    "ModelSpec",
    "get_model",
    "load_hf_config",
    "load_model_file",
    "model_catalog",
    "model_names",
]

#: Bytes per element of each storage dtype.
DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
#: Tensor-core dtypes the GEMMs may run at (the GPU catalog has peaks for these).
COMPUTE_DTYPES = ("bf16", "fp8")
NORMS = ("rmsnorm", "layernorm")


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer. Counts are plain integers; dtypes name storage formats."""

    name: str
    layers: int
    hidden: int
    heads: int               #: query heads
    kv_heads: int            #: key/value heads (== heads for multi-head attention)
    head_dim: int
    ffn: int                 #: MLP intermediate size (per expert)
    vocab: int
    gated_mlp: bool = True   #: SwiGLU: gate and up projections, then down
    tied_embeddings: bool = False
    learned_positions: int = 0
    bias: bool = False
    norm: str = "rmsnorm"
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    act_dtype: str = "bf16"
    compute_dtype: str = "bf16"
    max_context: int = 0
    experts: int = 1            #: MLP experts per layer (1: dense)
    experts_per_token: int = 1  #: experts each token is routed to
    source: str = ""

    def __post_init__(self):
        where = f"model {self.name!r}"
        for key in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                    "experts", "experts_per_token"):
            _check_int(where, key, getattr(self, key), minimum=1)
        for key in ("learned_positions", "max_context"):
            _check_int(where, key, getattr(self, key), minimum=0)
        for key in ("gated_mlp", "tied_embeddings", "bias"):
            if not isinstance(getattr(self, key), bool):
                raise UserError(f"{where}: {key} must be true or false, got "
                                f"{getattr(self, key)!r}")
        for key in ("weight_dtype", "kv_dtype", "act_dtype"):
            if not isinstance(getattr(self, key), str) or getattr(self, key) not in DTYPE_BYTES:
                raise UserError(f"{where}: {key} {getattr(self, key)!r} is unknown; "
                                f"known: {known(DTYPE_BYTES)}")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise UserError(f"{where}: compute_dtype {self.compute_dtype!r} is unknown; "
                            f"known: {known(COMPUTE_DTYPES)}")
        if self.norm not in NORMS:
            raise UserError(f"{where}: norm {self.norm!r} is unknown; known: {known(NORMS)}")
        if self.heads % self.kv_heads:
            raise UserError(f"{where}: heads ({self.heads}) must be a multiple of kv_heads "
                            f"({self.kv_heads})")
        if self.experts_per_token > self.experts:
            raise UserError(f"{where}: experts_per_token ({self.experts_per_token}) exceeds "
                            f"experts ({self.experts})")

    # ---- bytes per element ------------------------------------------------------------
    @property
    def weight_bytes(self) -> float:
        """Bytes per weight element."""
        return DTYPE_BYTES[self.weight_dtype]

    @property
    def kv_bytes(self) -> float:
        """Bytes per KV-cache element."""
        return DTYPE_BYTES[self.kv_dtype]

    @property
    def act_bytes(self) -> float:
        """Bytes per activation element (also the dtype of TP collectives)."""
        return DTYPE_BYTES[self.act_dtype]

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model."""
        return self.experts > 1

    # ---- parameter counts -------------------------------------------------------------
    @property
    def attention_parameters(self) -> int:
        """Q, K, V and output projections of one layer (with biases where the model has them)."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        n = self.hidden * (q + 2 * kv) + q * self.hidden
        return n + ((q + 2 * kv + self.hidden) if self.bias else 0)

    @property
    def expert_parameters(self) -> int:
        """One MLP (one expert): up (and gate) and down projections, with biases if any."""
        up = (2 if self.gated_mlp else 1) * self.ffn
        n = self.hidden * up + self.ffn * self.hidden
        return n + ((up + self.hidden) if self.bias else 0)

    @property
    def norm_parameters(self) -> int:
        """Elements of one normalisation layer (scale, and shift for layernorm)."""
        return self.hidden * (2 if self.norm == "layernorm" else 1)

    @property
    def layer_parameters(self) -> int:
        """One transformer layer: attention, every expert, the router, two norms."""
        router = self.hidden * self.experts if self.is_moe else 0
        return (self.attention_parameters + self.experts * self.expert_parameters + router
                + 2 * self.norm_parameters)

    @property
    def embedding_parameters(self) -> int:
        """Token embedding, learned positions, and the LM head unless tied to the embedding."""
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        return (self.vocab + self.learned_positions) * self.hidden + head

    @property
    def parameters(self) -> int:
        """Total parameters (every expert counted)."""
        return (self.layers * self.layer_parameters + self.embedding_parameters
                + self.norm_parameters)

    @property
    def active_parameters(self) -> int:
        """Parameters one token passes through (only its routed experts)."""
        idle = (self.experts - self.experts_per_token) * self.expert_parameters
        return self.parameters - self.layers * idle

    def to_dict(self) -> dict:
        """Fields plus parameter counts (the shape of ``netmodel models NAME --json``)."""
        d = asdict(self)
        d["parameters"] = self.parameters
        d["active_parameters"] = self.active_parameters
        return d


def _check_int(where, key, v, *, minimum):
    if not (isinstance(v, int) and not isinstance(v, bool) and v >= minimum):
        raise UserError(f"{where}: {key} must be an integer >= {minimum}, got {v!r}")


_FIELDS = {f.name for f in fields(ModelSpec)} - {"name"}
_REQUIRED = ("layers", "hidden", "heads", "ffn", "vocab")


def _model_from_entry(name: str, entry, where: str) -> ModelSpec:
    check_keys(f"{where}: model {name!r}", entry, _REQUIRED,
               sorted(_FIELDS - set(_REQUIRED)))
    entry = dict(entry)
    for key in ("layers", "hidden", "heads"):
        _check_int(f"{where}: model {name!r}", key, entry[key], minimum=1)
    entry.setdefault("kv_heads", entry["heads"])
    if "head_dim" not in entry:
        if entry["hidden"] % entry["heads"]:
            raise UserError(f"{where}: model {name!r}: hidden ({entry['hidden']}) is not a "
                            f"multiple of heads ({entry['heads']}); give head_dim")
        entry["head_dim"] = entry["hidden"] // entry["heads"]
    return ModelSpec(name=name, **entry)


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


def load_model_file(path) -> dict[str, ModelSpec]:
    """Models from a TOML or JSON file with the catalog's keys (``[model.NAME]`` tables)."""
    path = Path(path)
    return _parse_model_table(read_table(path, "model file"), str(path))


# HuggingFace config.json: model types whose MLP is gated (SwiGLU / GeGLU).
_GATED_TYPES = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "gemma", "gemma2",
                "phi3", "olmo", "olmo2", "granite", "cohere", "internlm2", "yi", "deepseek"}
_HF_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float8_e4m3fn": "fp8"}


def load_hf_config(path, name: str | None = None) -> ModelSpec:
    """A model from a local HuggingFace ``config.json`` (no network access).

    Reads Llama-style keys (``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
    ``num_key_value_heads``, ``head_dim``, ``intermediate_size``, ``vocab_size``,
    ``tie_word_embeddings``, ``torch_dtype``, ``max_position_embeddings``, Mixtral's
    ``num_local_experts`` / ``num_experts_per_tok``) or GPT-2-style keys (``n_embd``,
    ``n_layer``, ``n_head``, ``n_inner``, ``n_positions``). The MLP is gated for Llama-family
    ``model_type``s or a ``silu`` activation. A float32 checkpoint is taken as served in
    bf16; an fp8 ``quantization_config`` gives fp8 weights. The name defaults to the file's
    ``_name_or_path``, else its folder's name.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    cfg = parse_table(read_text(path, "config.json"), "json", str(path))
    if not isinstance(cfg, dict):
        raise UserError(f"{path}: a HuggingFace config.json must hold a JSON object")
    where = str(path)
    name = name or str(cfg.get("_name_or_path") or path.parent.name or path.stem)

    def get(*keys, default=None, required=True):
        for k in keys:
            if k in cfg and cfg[k] is not None:
                return cfg[k]
        if required and default is None:
            raise UserError(f"{where}: config.json lacks {' or '.join(map(repr, keys))}")
        return default

    gpt2_style = "n_embd" in cfg
    hidden = get("hidden_size", "n_embd", "d_model")
    heads = get("num_attention_heads", "n_head")
    layers = get("num_hidden_layers", "n_layer")
    for key, v in (("hidden_size", hidden), ("num_attention_heads", heads),
                   ("num_hidden_layers", layers)):
        _check_int(where, key, v, minimum=1)
    model_type = str(cfg.get("model_type", "")).lower()
    act = str(cfg.get("hidden_act", cfg.get("activation_function", ""))).lower()
    dtype = _HF_DTYPES.get(str(cfg.get("torch_dtype", cfg.get("dtype", "bfloat16"))), "bf16")
    if dtype == "fp32":
        dtype = "bf16"  # a float32 checkpoint is served in 16-bit, as inference servers do
    weight_dtype = dtype
    quant = cfg.get("quantization_config")
    if isinstance(quant, dict) and str(quant.get("quant_method", "")).lower() in ("fp8",
                                                                                    "fbgemm_fp8"):
        weight_dtype = "fp8"
    act_dtype = "bf16" if dtype == "fp8" else dtype
    entry = {
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": get("num_key_value_heads", default=heads),
        "ffn": get("intermediate_size", "n_inner", "ffn_dim", default=4 * hidden)
        if gpt2_style else get("intermediate_size", "ffn_dim"),
        "vocab": get("vocab_size"),
        "gated_mlp": (not gpt2_style) and (model_type in _GATED_TYPES or act in ("silu", "swish")),
        "tied_embeddings": bool(cfg.get("tie_word_embeddings", gpt2_style)),
        "learned_positions": int(get("n_positions", default=0, required=False)) if gpt2_style
        else 0,
        "bias": bool(cfg.get("attention_bias", gpt2_style)),
        "norm": "layernorm" if gpt2_style else "rmsnorm",
        "weight_dtype": weight_dtype,
        "kv_dtype": act_dtype,
        "act_dtype": act_dtype,
        "max_context": int(get("max_position_embeddings", "n_positions", "n_ctx", default=0,
                               required=False)),
        "experts": get("num_local_experts", default=1, required=False),
        "experts_per_token": get("num_experts_per_tok", default=1, required=False),
        "source": f"HuggingFace config.json at {path}",
    }
    hd = cfg.get("head_dim")
    if hd is not None:
        entry["head_dim"] = hd
    return _model_from_entry(name, entry, where)


def get_model(name) -> ModelSpec:
    """A model by catalog name, or the spec itself if given one; a path to a ``.toml`` or
    ``.json`` catalog-format file holding one model, or to a HuggingFace ``config.json``,
    also works.

    >>> get_model("Llama-2-70B").vocab
    32000
    >>> get_model("Llama-9")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: unknown model 'Llama-9'; known: 'GPT-3-175B', 'Llama-2-70B', 'Llama-3-70B', 'Llama-3-8B', 'Llama-3.1-405B'
    """
    if isinstance(name, ModelSpec):
        return name
    table = model_catalog()
    if name in table:
        return table[name]
    if isinstance(name, str) and Path(name).name == "config.json":
        return load_hf_config(name)
    if isinstance(name, str) and name.lower().endswith((".toml", ".json")):
        models = load_model_file(name)
        if len(models) != 1:
            raise UserError(f"{name} holds {len(models)} models; give a file with one model")
        return next(iter(models.values()))
    raise UserError(f"unknown model {name!r}; known: {known(table)}")


def expected_experts_touched(model: ModelSpec, tokens):
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
        return np.ones_like(np.asarray(tokens, dtype=float))
    n = np.asarray(tokens, dtype=float)
    return e * (1.0 - np.power(1.0 - k / e, n)) if k < e else np.full_like(n, float(e))
