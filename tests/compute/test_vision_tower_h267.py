"""A vision-language model's vision tower, counted in weight memory (h267).

Before: the HuggingFace reader read Qwen2-VL, Qwen2.5-VL and LLaVA-1.5 for their language
model alone; the vision tower's weights, resident in GPU memory beside it, were in no byte
count, and a model file could not give them. Now ``ModelSpec.vision_parameters`` holds them:
counted in the weights' bytes (the embedding's dtype, split over the attention's TP group,
on the first pipeline stage), not in ``parameters`` nor the per-token FLOPs.

The tower counts are derived by hand below, module by module as HF transformers builds them,
and their sums with the language model equal the publishers' safetensors totals exactly.
"""

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.memory import memory_fit, stage_weight_bytes, weight_bytes
from compute.models import get_model, load_hf_config, load_model_file, model_catalog
from compute.parallel import Parallelism, layout
from compute.phases import Workload
from compute.sharding import shards

DATA = Path(__file__).parent / "data" / "hf_families"


def read(name: str):
    return load_hf_config(DATA / f"{name}.json")


def lm(layers, hidden, heads, kv_heads, ffn, vocab, *, qkv_bias=False):
    """A Llama-style language model: Q, K, V, O, SwiGLU, two RMSNorms a layer, a final
    one, untied embedding and head."""
    kv = kv_heads * hidden // heads
    attn = 2 * hidden * hidden + 2 * hidden * kv + (hidden + 2 * kv if qkv_bias else 0)
    return layers * (attn + 3 * hidden * ffn + 2 * hidden) + 2 * vocab * hidden + hidden


def linear(i, o):
    return i * o + o     # with bias


# Qwen2-VL-7B's tower (vision_config: embed_dim 1280, depth 32, mlp_ratio 4, 16 heads,
# patch 14, temporal patch 2, merge 2, in_chans 3, hidden_size 3584):
QWEN2_VL_TOWER = (
    3 * 2 * 14 * 14 * 1280                     # Conv3d patch embedding, no bias: 1,505,280
    + 32 * (2 * 2 * 1280                       # two LayerNorms
            + linear(1280, 3 * 1280)           # fused QKV
            + linear(1280, 1280)               # output projection
            + linear(1280, 5120) + linear(5120, 1280))   # MLP 4 x 1280 wide
    + 2 * 1280 + linear(5120, 5120) + linear(5120, 3584))  # merger: LN, 4 x 1280 -> 3584
# Qwen2.5-VL-7B's (hidden_size 1280, intermediate_size 3420 SwiGLU, RMSNorms, out 3584):
QWEN2_5_VL_TOWER = (
    3 * 2 * 14 * 14 * 1280
    + 32 * (2 * 1280 + linear(1280, 3 * 1280) + linear(1280, 1280)
            + 2 * linear(1280, 3420) + linear(3420, 1280))
    + 1280 + linear(5120, 5120) + linear(5120, 3584))
# LLaVA-1.5-7B's CLIP ViT-L/14-336 (1024 wide, 24 layers, MLP 4096) and its projector
CLIP_L_336 = (
    1024                                       # class embedding
    + 3 * 14 * 14 * 1024                       # Conv2d patch embedding, no bias
    + ((336 // 14) ** 2 + 1) * 1024            # 577 learned positions
    + 2 * 2 * 1024                             # pre- and post-LayerNorm
    + 24 * (4 * linear(1024, 1024) + 2 * 2 * 1024 + linear(1024, 4096) + linear(4096, 1024)))
LLAVA_PROJECTOR = linear(1024, 4096) + linear(4096, 4096)
QWEN2_VL_LM = lm(28, 3584, 28, 4, 18944, 152064, qkv_bias=True)
LLAVA_LM = lm(32, 4096, 32, 32, 11008, 32064)


@pytest.mark.parametrize("name, tower, lm_count, total, total_bytes", [
    # Qwen/Qwen2-VL-7B-Instruct: 8,291,375,616 parameters (HF safetensors metadata)
    ("qwen2-vl-7b-instruct", QWEN2_VL_TOWER, QWEN2_VL_LM, 8_291_375_616, 16_582_751_232),
    # Qwen/Qwen2.5-VL-7B-Instruct: model.safetensors.index.json total_size 16,584,333,312 B
    # in bf16 = 8,292,166,656 parameters (HF metadata)
    ("qwen2.5-vl-7b-instruct", QWEN2_5_VL_TOWER, QWEN2_VL_LM, 8_292_166_656, 16_584_333_312),
    # llava-hf/llava-1.5-7b-hf: 7,063,427,072 parameters, 14,126,854,144 B in fp16
    ("llava-1.5-7b-hf", CLIP_L_336 + LLAVA_PROJECTOR, LLAVA_LM, 7_063_427_072,
     14_126_854_144),
])
def test_published_totals(name, tower, lm_count, total, total_bytes):
    # the hand counts: Qwen2-VL 675,759,104, Qwen2.5-VL 676,550,144, CLIP-L/336 303,507,456
    # + projector 20,979,712; Qwen2-7B's LM 7,615,616,512, Vicuna-7B's (32,064 rows) 6.74B
    assert tower in (675_759_104, 676_550_144, 303_507_456 + 20_979_712)
    assert CLIP_L_336 == 303_507_456 and LLAVA_PROJECTOR == 20_979_712
    assert lm_count in (7_615_616_512, 6_738_939_904)
    m = read(name)
    assert m.vision_parameters == tower
    assert m.parameters == lm_count             # the language model's; FLOPs are its
    assert m.parameters + m.vision_parameters == total
    assert m.weight_storage_bytes == total_bytes == 2 * total
    assert f"{tower:,} parameters) is counted in weight memory" in m.source
    assert "compute of image tokens is not modelled" in m.source


def test_per_token_figures_are_the_language_models():
    m = read("qwen2-vl-7b-instruct")
    bare = replace(m, vision_parameters=0)
    assert m.active_parameters == bare.active_parameters == QWEN2_VL_LM
    assert m.weight_storage_bytes - bare.weight_storage_bytes == 2 * QWEN2_VL_TOWER


def test_memory_with_and_without_the_tower():
    m = read("qwen2-vl-7b-instruct")               # bf16
    bare = replace(m, vision_parameters=0)
    sh = shards(m, [1, 2, 4])
    extra = (weight_bytes(m, sh) - weight_bytes(bare, sh)).ravel()
    assert extra.tolist() == [2 * QWEN2_VL_TOWER / t for t in (1, 2, 4)]
    assert float(weight_bytes(m, shards(m, [1]))[0, 0]) == 16_582_751_232
    # the fit counts it: 1,351,518,208 B more on one GPU at any batch
    w, *_ = memory_fit(m, _gpu(), sh, np.array([[1.0]]), Workload("decode", context=1000))
    w0, *_ = memory_fit(bare, _gpu(), sh, np.array([[1.0]]), Workload("decode", context=1000))
    assert float(w[0, 0] - w0[0, 0]) == 1_351_518_208


def test_pipeline_first_stage_holds_the_tower():
    m = read("qwen2-vl-7b-instruct")
    bare = replace(m, vision_parameters=0)
    sh = layout(m, [Parallelism(2, pp=2), Parallelism(4, attention_dp=2)])
    extra = stage_weight_bytes(m, sh) - stage_weight_bytes(bare, sh)
    assert extra[0].tolist() == [2 * QWEN2_VL_TOWER / 2, 0.0]   # TP 2: on stage 1 only
    # attention data-parallel 2 of TP 4: split over the attention's 2 GPUs, as the embedding
    assert (weight_bytes(m, sh) - weight_bytes(bare, sh))[1, 0] == 2 * QWEN2_VL_TOWER / 2


def test_a_quantized_checkpoint_keeps_its_tower_in_16_bit():
    m = read("qwen2.5-vl-7b-instruct")
    q = replace(m, weight_dtype="int4-g128", embedding_dtype="bf16")
    assert q.weight_storage_bytes - replace(q, vision_parameters=0).weight_storage_bytes \
        == 2 * QWEN2_5_VL_TOWER


def test_an_unknown_tower_stays_uncounted():
    # DeepSeek-OCR's SAM and CLIP (DeepSeek-VL2's code): not counted, never guessed
    # (InternViT, Gemma-3's SigLIP, Pixtral and Llama-4's are counted since h283:
    # test_vision_towers_h283.py)
    m = read("deepseek-ocr")
    assert m.vision_parameters == 0
    # (h321: DeepSeek-VL2's encoder is named by model_name, counted for its SigLIP-SO400M)
    assert "'deeplip_b_l': an architecture the reader does not count" in m.source


def test_a_tower_missing_a_key_stays_uncounted(tmp_path):
    cfg = json.loads((DATA / "qwen2-vl-7b-instruct.json").read_text())
    del cfg["vision_config"]["depth"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    m = load_hf_config(path)
    assert m.vision_parameters == 0 and m.parameters == QWEN2_VL_LM
    assert "vision_config lacks 'depth'" in m.source


def test_catalog_models_have_no_tower():
    assert all(m.vision_parameters == 0 for m in model_catalog().values())


MODEL_FILE = """[model.vlm]
layers = 28
hidden = 3584
heads = 28
kv_heads = 4
ffn = 18944
vocab = 152064
qkv_bias = true
vision_parameters = {value}
source = "Qwen2-VL-7B-Instruct config.json; vision tower 675,759,104 counted by hand"
"""


def test_a_model_file_gives_the_tower(tmp_path):
    path = tmp_path / "vlm.toml"
    path.write_text(MODEL_FILE.format(value=QWEN2_VL_TOWER))
    m = load_model_file(path)["vlm"]
    assert m.vision_parameters == QWEN2_VL_TOWER
    assert m.parameters + m.vision_parameters == 8_291_375_616
    assert m.weight_storage_bytes == 16_582_751_232
    from netmodel.cli.main import cli as main
    out = CliRunner().invoke(main, ["models", "vlm", "--model-file", str(path)])
    assert out.exit_code == 0, out.output
    assert ("vision tower: 0.676B parameters, 1.35 GB bf16, counted in the weights' memory "
            "above, not in the parameters or per-token FLOPs") in out.output
    assert "weights 17 GB bf16" in out.output


@pytest.mark.parametrize("value", ["-5", "nan", "1.5", "true", "2000000000000", '"x"'])
def test_bad_tower_values_are_one_line_exit_2(tmp_path, value):
    path = tmp_path / "vlm.toml"
    path.write_text(MODEL_FILE.format(value=value))
    from netmodel.cli.main import cli as main
    out = CliRunner().invoke(main, ["models", "vlm", "--model-file", str(path)])
    assert out.exit_code == 2
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.output
    assert ("vision_parameters must be a whole number from 0 to 1,000,000,000,000, got"
            in lines[0])


@pytest.mark.parametrize("key, value, needle", [
    ("depth", -1, "vision_config: depth must be a whole number"),
    ("embed_dim", 1.5, "vision_config: embed_dim must be a whole number"),
    ("mlp_ratio", "4", "vision_config: mlp_ratio must be a number"),
])
def test_bad_vision_config_values_are_refused(tmp_path, key, value, needle):
    cfg = json.loads((DATA / "qwen2-vl-7b-instruct.json").read_text())
    cfg["vision_config"][key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    from netmodel.cli.main import cli as main
    out = CliRunner().invoke(main, ["models", "--hf-config", str(path)])
    assert out.exit_code == 2
    assert len(out.output.strip().splitlines()) == 1 and needle in out.output


def test_nan_tower_is_refused_in_python():
    m = get_model("Llama-3-8B")
    for bad in (-1, math.nan, 1.5):
        with pytest.raises(UserError, match="vision_parameters must be a whole number "
                                              "from 0 to"):
            replace(m, vision_parameters=bad)


def _gpu():
    from compute.hardware import get_gpu
    return get_gpu("H100-SXM")
