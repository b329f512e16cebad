"""The ``quantization_config`` of a HuggingFace checkpoint (and modelopt's
``hf_quant_config.json`` beside it) read into the weight, compute and KV dtypes of a model
entry: fp8 (and Meta's FP8 Llama-3.1 keeping attention in 16-bit), AWQ, GPTQ,
compressed-tensors (int4/int8 weight-only, w8a8 fp8/int8, nvfp4), bitsandbytes, MXFP4
(gpt-oss) and modelopt FP8/NVFP4; any other method is refused in one line.
:mod:`compute.hf_config` calls :func:`read_quantization` and :func:`with_sidecar`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from compute import validate
from compute.config_files import parse_table, read_text
from compute.errors import UserError, chosen, known
from compute.model_spec import QUANT_GROUPS

__all__ = ["read_quantization", "with_sidecar"]


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


def _module_names(quant: dict, key: str, where: str) -> list[str]:
    """``quant[key]``: a list of module names (or null: none), checked."""
    kept = quant.get(key)
    kept = [] if kept is None else kept
    if not isinstance(kept, list) or len(kept) > 100_000 or not all(
            isinstance(x, str) for x in kept):
        raise UserError(f"{where}: {key} must be a list of module names (or null), got "
                        f"{validate.describe(kept)}")
    return kept


def _check_kept(quant: dict, key: str, where: str) -> list[str]:
    """The module names (or compressed-tensors ``re:`` patterns) of ``quant[key]`` that
    stay unquantized. One that keeps part of a decoder layer's attention or MLP (other than
    the MoE router) is refused: a partly quantized layer is not modelled."""
    kept = _module_names(quant, key, where)
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
    """The :data:`compute.model_spec.DTYPE_BYTES` name of ``bits``-bit integer weights in groups of ``group``
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
    kept = _module_names(quant, "modules_to_not_convert", where)
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
    algo = chosen(quant.get("quant_algo"), _MODELOPT_ALGOS)   # blanks at either end dropped
    if algo is None:
        raise UserError(f"{where}: quant_algo {validate.describe(quant.get('quant_algo'))} "
                        f"is not modelled; allowed: {known(_MODELOPT_ALGOS)}")
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
#: linear layers' dtype (:data:`compute.model_spec.DTYPE_BYTES`) and the KV cache's ("": unchanged).
_QUANT_READERS = {"awq": _awq, "gptq": _gptq, "bitsandbytes": _bitsandbytes,
                  "compressed-tensors": _compressed_tensors}


def read_quantization(quant: Any, entry: dict, layers: int, dtype: str, act_dtype: str,
                      where: str) -> tuple[str, str]:
    """Read a config.json's ``quantization_config`` (``quant``; None: not quantized) into
    the model entry being built (``entry``: the keys it sets, e.g. ``compute_dtype``,
    ``embedding_dtype``, ``mlp_weight_dtype``) for a model of ``layers`` layers stored in
    ``dtype`` and computing in ``act_dtype``. Returns (the linear layers' weight dtype, the
    KV cache's dtype or "" for unchanged). Any method not listed is refused in one line."""
    weight_dtype, kv_dtype = dtype, ""
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
    return weight_dtype, kv_dtype


def with_sidecar(cfg: dict, path: Path) -> dict:
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
    # its values checked here, where they are said as this file's (read later as the
    # config.json's quantization_config, a bad quant_algo was blamed on config.json)
    _modelopt(quant, f"{side}: quantization")
    return {**cfg, "quantization_config": {**quant, "quant_method": "modelopt"}}
