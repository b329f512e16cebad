"""Quantized checkpoints read from their HuggingFace config.json: the weight bytes of each
common ``quant_method`` (AWQ, GPTQ, compressed-tensors fp8 / w4a16 / w8a8, bitsandbytes
4-bit), derived by hand from the format's definition, on trimmed copies of published
configs (``tests/compute/data/hf_quantized/``, sources in its README); a method or layout
that cannot be modelled is refused in one line. Before this reader, every one of them but
fp8 was read as a 16-bit checkpoint (e.g. the 70B AWQ model as 141.1 GB of weights)."""

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.memory import weight_bytes
from compute.models import DTYPE_BYTES, get_model, load_hf_config
from compute.sharding import shards

DATA = Path(__file__).parent / "data" / "hf_quantized"

# Llama-3.1-70B: 80 layers of attention 8192 x (8192 + 2 x 1024) + 8192 x 8192 and a
# SwiGLU MLP 3 x 8192 x 28672; the embedding and the untied LM head 128256 x 8192 each;
# 2 norms a layer and the final one, 8192 each.
L70_LINEAR = 80 * (8192 * (8192 + 2 * 1024) + 8192 * 8192 + 3 * 8192 * 28672)
L70_TOKENS = 2 * 128256 * 8192
L70_NORMS = (2 * 80 + 1) * 8192
# Llama-3.1-8B: 32 layers, 4096 wide, 8 KV heads, MLP 14336; the same vocabulary.
L8_LINEAR = 32 * (4096 * (4096 + 2 * 1024) + 4096 * 4096 + 3 * 4096 * 14336)
L8_TOKENS = 2 * 128256 * 4096
L8_NORMS = (2 * 32 + 1) * 4096
# AWQ / GPTQ int4 in groups of 128: 4 bits + one fp16 scale + one 4-bit zero per group.
INT4_G128 = (4 + 16 / 128 + 4 / 128) / 8


def read(name: str):
    return get_model(str(DATA / name))


def test_awq_70b_weight_bytes_by_hand():
    m = read("llama-3.1-70b-instruct-awq-int4.json")
    assert (m.weight_dtype, m.embedding_dtype, m.act_dtype, m.kv_dtype) == \
        ("int4-g128", "fp16", "fp16", "fp16")
    assert m.weight_bytes == INT4_G128 == 0.51953125
    # linear layers at 4.15625 bits, embedding and LM head in fp16; the norms (1.3M
    # parameters) are counted with the linear layers, 2 MB (0.005%) under their fp16 bytes
    assert m.weight_storage_bytes == L70_LINEAR * INT4_G128 + L70_TOKENS * 2 \
        + L70_NORMS * INT4_G128 == 39_765_832_864
    exact = L70_LINEAR * INT4_G128 + (L70_TOKENS + L70_NORMS) * 2
    assert m.weight_storage_bytes == pytest.approx(exact, rel=1e-4)
    # was read as fp16: 2 bytes for each of the 70.55B parameters
    assert m.parameters * 2 / m.weight_storage_bytes > 3.5


def test_awq_weight_bytes_per_gpu_sum_to_the_model():
    # memory.weight_bytes (what max batch is computed from) stores the same tensors: at TP 1
    # it is the model's bytes; at TP 8 each GPU holds 1/8 of every split matrix and every
    # norm whole
    m = read("llama-3.1-70b-instruct-awq-int4.json")
    assert float(weight_bytes(m, shards(m, [1]))[0, 0]) == m.weight_storage_bytes
    per8 = float(weight_bytes(m, shards(m, [8]))[0, 0])
    assert per8 == (L70_LINEAR * INT4_G128 + L70_TOKENS * 2) / 8 + L70_NORMS * INT4_G128


def test_qwen_72b_awq():
    # Qwen2.5-72B: 80 layers, 8192 wide, 8 KV heads with Q/K/V biases, MLP 29568, vocab
    # 152064 untied; biases are linear-layer parameters too (stored fp16 by AWQ: 0.003%)
    m = read("qwen2.5-72b-instruct-awq.json")
    linear = 80 * (8192 * 10240 + 10240 + 8192 * 8192 + 3 * 8192 * 29568)
    tokens, norms = 2 * 152064 * 8192, 161 * 8192
    assert m.parameters == linear + tokens + norms
    assert m.weight_storage_bytes == (linear + norms) * INT4_G128 + tokens * 2


def test_gptq_7b_matches_the_published_file_size():
    m = read("llama-2-7b-chat-gptq.json")
    assert (m.weight_dtype, m.embedding_dtype) == ("int4-g128", "fp16")
    linear = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)
    tokens, norms = 2 * 32000 * 4096, 65 * 4096
    assert m.weight_storage_bytes == (linear + norms) * INT4_G128 + tokens * 2
    # TheBloke's model card lists 3.90 GB for the main branch's model.safetensors (the
    # g_idx rows, 4.6 MB, are left out here)
    assert m.weight_storage_bytes / 1e9 == pytest.approx(3.90, rel=0.01)


def test_compressed_tensors_fp8_w4a16_w8a8():
    fp8 = read("llama-3.1-8b-instruct-fp8-compressed-tensors.json")
    assert (fp8.weight_dtype, fp8.embedding_dtype, fp8.act_dtype, fp8.kv_dtype) == \
        ("fp8", "bf16", "bf16", "bf16")
    assert fp8.weight_storage_bytes == (L8_LINEAR + L8_NORMS) * 1 + L8_TOKENS * 2
    w4 = read("llama-3.1-8b-instruct-quantized.w4a16.json")
    # symmetric: a bf16 scale per group of 128, no zero point: 4.125 bits
    assert w4.weight_dtype == "int4-g128-sym" and DTYPE_BYTES["int4-g128-sym"] * 8 == 4.125
    assert w4.weight_storage_bytes == (L8_LINEAR + L8_NORMS) * 4.125 / 8 + L8_TOKENS * 2
    w8 = read("llama-3.1-8b-instruct-quantized.w8a8.json")
    assert (w8.weight_dtype, w8.act_dtype) == ("int8", "bf16")
    assert w8.weight_storage_bytes == L8_LINEAR + L8_NORMS + L8_TOKENS * 2
    # w8a8 fp8 runs its GEMMs in fp8 and int8 w8a8 in int8 (where the GPU can); weight-only
    # w4a16 stays bf16: tests/compute/test_fp8_compute.py, tests/compute/test_quant_formats.py
    assert (fp8.compute_dtype, w4.compute_dtype, w8.compute_dtype) == ("fp8", "bf16", "int8")
    # were read as bf16: 2 bytes a parameter
    assert fp8.parameters * 2 / fp8.weight_storage_bytes > 1.6


def test_bitsandbytes_nf4_double_quant():
    m = read("llama-3-8b-bnb-4bit.json")
    # 4 bits + an 8-bit absmax per 64 + an fp32 scale per 256 absmax (QLoRA Section 3)
    per = (4 + 8 / 64 + 32 / (64 * 256)) / 8
    assert m.weight_dtype == "bnb4-dq" and m.weight_bytes == per
    assert m.weight_storage_bytes == (L8_LINEAR + L8_NORMS) * per + L8_TOKENS * 2


def test_mixtral_awq_keeps_only_the_router():
    m = read("mixtral-8x7b-instruct-awq.json")   # modules_to_not_convert: ["gate"]
    assert m.weight_dtype == "int4-g128"
    ref = get_model("Mixtral-8x7B")
    assert m.parameters == ref.parameters
    tokens = 2 * 32000 * 4096
    assert m.weight_storage_bytes == (m.parameters - tokens) * INT4_G128 + tokens * 2


def _write(tmp_path, quant, **extra):
    cfg = json.loads((DATA / "llama-3.1-8b-instruct-quantized.w4a16.json").read_text())
    cfg.update(quantization_config=quant, **extra)
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    return p


def test_kv_cache_scheme_fp8(tmp_path):
    cfg = json.loads((DATA / "llama-3.1-8b-instruct-fp8-compressed-tensors.json").read_text())
    q = cfg["quantization_config"]
    q["kv_cache_scheme"] = {"dynamic": False, "num_bits": 8, "strategy": "tensor",
                            "symmetric": True, "type": "float"}
    m = load_hf_config(_write(tmp_path, q))
    assert (m.kv_dtype, m.act_dtype, m.kv_bytes) == ("fp8", "bf16", 1.0)


@pytest.mark.parametrize("quant, message", [
    ({"quant_method": "mxfp4"}, "mxfp4 is modelled on the routed experts of an MoE model"),
    ({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}, "quant_algo 'W4A8_AWQ' is not"),
    ({"quant_method": "hqq"}, "quant_method 'hqq' is not modelled"),
    ({"quant_method": "awq", "bits": 3, "group_size": 128}, "bits 3 is not modelled"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 100}, "group_size 100 is not modelled"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "lm_head": True},
     "quantized LM head is not modelled"),
    ({"quant_method": "awq", "bits": 4, "group_size": 128,
      "modules_to_not_convert": ["model.layers.0.self_attn.q_proj"]},
     "keeps 'model.layers.0.self_attn.q_proj' unquantized"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": True},
     "exactly one of load_in_4bit"),
    ({"quant_method": "compressed-tensors", "ignore": [], "config_groups": {"g": {
        "targets": ["Linear"], "weights": {"type": "int", "num_bits": 4, "strategy": "group",
                                           "group_size": 128}}}}, "ignore does not name lm_head"),
    ({"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {"g": {
        "targets": ["Linear"], "weights": {"type": "float", "num_bits": 4,
                                           "strategy": "group", "group_size": 32}}}},
     "float 4-bit weights with strategy 'group' and group_size 32 are not modelled"),
    ({"quant_method": "compressed-tensors", "ignore": ["re:.*self_attn.*", "lm_head"],
      "config_groups": {"g": {"targets": ["Linear"], "weights": {
          "type": "float", "num_bits": 8, "strategy": "channel"}}}}, "partly quantized"),
])
def test_unmodelled_quantization_refused_in_one_line(tmp_path, quant, message):
    with pytest.raises(UserError, match=message) as exc:
        load_hf_config(_write(tmp_path, quant))
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("quant", [
    {"quant_method": "awq", "bits": "4", "group_size": 128},
    {"quant_method": "gptq", "bits": 4, "group_size": True},
    {"quant_method": "awq", "modules_to_not_convert": "lm_head"},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": ["nf4"]},
    {"quant_method": "compressed-tensors", "config_groups": [1]},
    {"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {"g": {
        "targets": ["Linear"], "weights": {"type": "float", "num_bits": 8}}},
     "kv_cache_scheme": {"type": ["float"], "num_bits": 8}},
    {"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {"g": {
        "targets": ["Linear"], "weights": {"type": "float", "num_bits": 8}}},
     "kv_cache_scheme": {"type": "float", "num_bits": 8.0}},
])
def test_malformed_quantization_config_refused(tmp_path, quant):
    with pytest.raises(UserError) as exc:
        load_hf_config(_write(tmp_path, quant))
    assert "\n" not in str(exc.value)
