"""Model types checked against published parameter totals (helper h355): Ministral 3
(model_type ministral3, before refused as 'not a family netmodel reads') now reads as
Mistral's layers and matches its checkpoint's count to the parameter; Phi-4-multimodal and
Llama-3.2-Vision stay refused, each for a reason its published total shows.

Published figures, each a count of the checkpoint's safetensors tensors:

- mistralai/Ministral-3-3B-Instruct-2512-BF16 (revision b6d637bef239): 3,849,090,048
  parameters, 3,429,006,336 of the language model and 420,083,712 of the vision tower and
  projector, as a public third-party replication study's preflight test pins them (read
  in the stored index of public repositories, 2026-12-04).
- microsoft/Phi-4-multimodal-instruct: 5,574,460,384 parameters, 4,666,493,952 of the
  language model (with its LoRA adapters), 441,550,016 of the image encoder and
  466,416,416 of the audio encoder, from the same study's Phi-4 preflight test.
- meta-llama/Llama-3.2-11B-Vision-Instruct: 10,670,220,835 parameters
  (github.com/floschne/gimmick, src/gimmick/models/__init__.py, get_model_sizes: the hub's
  safetensors metadata parameter_count).
"""

from __future__ import annotations

import pytest

from compute.validate import UserError
from tests.compute.hf_helpers import fixture, read, write

# Ministral-3-3B's language model (NVIDIA-NeMo/Megatron-Bridge,
# src/megatron/bridge/models/ministral3/ministral3_provider.py, Ministral3ModelProvider3B:
# hidden 3072, ffn 9216, 26 layers, 32 heads and 8 KV groups of 128, tied embeddings;
# vLLM's recipe Mistral/Ministral-3-Instruct.md: "3B: tied embeddings"): Q and O 3072 x
# 4096, K and V 3072 x 1024, SwiGLU 3 x 3072 x 9216, two RMSNorms; one 131072 x 3072 table
MINISTRAL3_3B_LAYER = 2 * 3072 * 4096 + 2 * 3072 * 1024 + 3 * 3072 * 9216 + 2 * 3072
# Pixtral (24 layers of 1024: two RMSNorms, Q, K, V, O 1024^2, SwiGLU 3 x 1024 x 4096, no
# biases; a 14 x 14 patch convolution without bias and ln_pre) and Mistral3's projector
# (an RMSNorm, the 2 x 2 patch merger 4096 -> 1024, then 1024 -> 3072 -> 3072, no biases)
PIXTRAL = (24 * (2 * 1024 + 4 * 1024**2 + 3 * 1024 * 4096) + 3 * 14 * 14 * 1024 + 1024
           + 1024 + 4 * 1024 * 1024 + 1024 * 3072 + 3072 * 3072)


def test_ministral3_3b_matches_its_checkpoint_to_the_parameter():
    # before: refused, text_config model_type 'ministral3' not a family
    assert MINISTRAL3_3B_LAYER == 116_398_080
    m = read("ministral-3-3b-instruct-2512")
    assert m.parameters == 26 * MINISTRAL3_3B_LAYER + 3072 + 131072 * 3072 == 3_429_006_336
    assert m.vision_parameters == PIXTRAL == 420_083_712
    assert m.parameters + m.vision_parameters == 3_849_090_048
    assert (m.layers, m.heads, m.kv_heads, m.head_dim) == (26, 32, 8, 128)
    assert m.tied_embeddings and m.sliding_window == 0


def test_ministral3_flat_reads_as_its_text_config(tmp_path):
    # Devstral-2's layout: a flat Ministral3ForCausalLM config of the same keys, no tower
    text = fixture("ministral-3-3b-instruct-2512")["text_config"]
    m = write(tmp_path, {**text, "architectures": ["Ministral3ForCausalLM"]})
    assert (m.parameters, m.vision_parameters) == (3_429_006_336, 0)


def test_ministral3_untied_by_default(tmp_path):
    # Ministral3Config's tie_word_embeddings default false (the 8B and 14B): a second
    # 131072 x 3072 matrix, the LM head
    text = {k: v for k, v in fixture("ministral-3-3b-instruct-2512")["text_config"].items()
            if k != "tie_word_embeddings"}
    assert write(tmp_path, text).parameters == 3_429_006_336 + 131072 * 3072


# Phi-4-multimodal's language model as Phi-3 layers (microsoft/Phi-4-multimodal-instruct's
# text dims, Phi-4-mini's: 32 layers of 3072, 24 heads and 8 KV heads of 128, SwiGLU 8192,
# tied 200064 x 3072)
PHI4_TEXT = {"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
             "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8,
             "vocab_size": 200064, "max_position_embeddings": 131072,
             "tie_word_embeddings": True}


def test_phi4mm_refused_as_its_published_split_shows(tmp_path):
    # Phi-3's layers count 3,836,021,760; the published language model holds 830,472,192
    # more, the two LoRA adapters (vision r 256, speech r 320) on every layer's qkv_proj
    # (3072 -> 5120), o_proj (3072 -> 3072), gate_up_proj (3072 -> 16384) and down_proj
    # (8192 -> 3072), r x (in + out) each; and the two encoders 908 M more, the image
    # encoder sized by the remote code. Read as Phi-3, 31% of the checkpoint would be
    # missing: refused
    phi3 = write(tmp_path, PHI4_TEXT).parameters
    assert phi3 == 32 * (2 * 3072**2 + 2 * 3072 * 1024 + 3 * 3072 * 8192 + 2 * 3072) \
        + 3072 + 200064 * 3072 == 3_836_021_760
    lora = 32 * (256 + 320) * ((3072 + 5120) + (3072 + 3072) + (3072 + 16384) + (8192 + 3072))
    assert phi3 + lora == 4_666_493_952
    assert phi3 + lora + 441_550_016 + 466_416_416 == 5_574_460_384
    cfg = {**PHI4_TEXT, "model_type": "phi4mm", "architectures": ["Phi4MMForCausalLM"],
           "vision_lora": {"r": 256, "lora_alpha": 512}, "speech_lora": {"r": 320}}
    with pytest.raises(UserError, match="phi4mm.*sized by its remote code") as e:
        write(tmp_path, cfg)
    assert "\n" not in str(e.value)


def test_mllama_refusal_names_the_per_image_cache():
    # its weights count exactly from config.json (the README beside the fixture: the 11B's
    # 10,670,220,835), but 8 of its 40 text layers attend to the image through a cache per
    # image, which ModelSpec's per-token KV cache does not describe
    with pytest.raises(UserError, match="cache per image, not per token") as e:
        read("llama-3.2-11b-vision-instruct")
    assert "\n" not in str(e.value)
