"""The mixture-of-experts layout of a HuggingFace ``config.json``: which layers are MoE
(:func:`moe_layer_set`, and where the dense ones sit, :func:`moe_layer_step`), DeepSeek's
expert groups (:func:`expert_groups`), and an experts count of 0 read as a dense MLP or
refused (:func:`zero_experts`). :mod:`compute.hf_config` calls them.
"""

from __future__ import annotations

from compute import validate
from compute.errors import UserError
from compute.hf_families import EXPERT_FIELDS, EXPERT_LIMITS, ZERO_EXPERTS
from compute.hf_reader import ConfigReader

__all__ = ["expert_groups", "moe_layer_set", "moe_layer_step", "zero_experts"]


def moe_layer_set(c: ConfigReader, layers: int) -> set[int]:
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


def moe_layer_step(moe: set[int], layers: int) -> int:
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


def expert_groups(c: ConfigReader) -> dict:
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


def zero_experts(c: ConfigReader, model_type: str) -> int:
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


def _speaks(c: ConfigReader, field: str) -> bool:
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
