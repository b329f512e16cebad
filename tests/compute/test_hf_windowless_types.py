"""A ``sliding_window`` in the config.json of a family whose attention has no window is
refused in one line, not read as a window on every layer.

Before, any family but Gemma, Cohere2, Qwen2/3 and the others with a rule of their own took
Mistral's rule: a sliding_window not null windows every layer. HF transformers builds
LlamaAttention, DeepseekV3Attention, Olmo2Attention, ... with no window whatever the key
says (vLLM's Llama windows only the layers a layer_types calls sliding), so Llama-3.1-8B's
config with a stray "sliding_window": 4096 read as 32 layers windowed at 4096 (a decode at
32k context reading 4,096 of 32,768 tokens a layer). The families are
:data:`compute.hf_families.WINDOWLESS_TYPES`; Mistral, Mixtral, Phi-3, Starcoder2 and a
config of no known family keep the rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from tests.compute.hf_helpers import write, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

DATA = Path(__file__).parent / "data"
LLAMA31_8B = json.loads((DATA / "hf_configs" / "llama-3.1-8b.json").read_text())


@pytest.mark.parametrize("model_type", ["llama", "olmo2", "cohere", "deepseek_v3", "granite",
                                        "glm4_moe", "falcon", "gemma"])
def test_a_window_on_a_windowless_family_is_refused(tmp_path, model_type):
    # before (llama): sliding_window 4096 on all 32 layers
    cfg = {**LLAMA31_8B, "model_type": model_type, "sliding_window": 4096}
    with pytest.raises(UserError, match=f"sliding_window 4096 is not read by model_type "
                                        f"'{model_type}', whose attention spans the whole"):
        write(tmp_path, cfg)


def test_the_family_named_by_architectures_decides_too(tmp_path):
    # Kimi-K2's type names DeepseekV3ForCausalLM; a config with no model_type, its class
    kimi = json.loads((DATA / "hf_families" / "kimi-k2-instruct.json").read_text())
    with pytest.raises(UserError, match="not read by model_type 'kimi_k2'"):
        write(tmp_path, {**kimi, "sliding_window": 4096})
    bare = {k: v for k, v in LLAMA31_8B.items() if k != "model_type"}
    with pytest.raises(UserError, match="not read by architecture 'LlamaForCausalLM'"):
        write(tmp_path, {**bare, "sliding_window": 4096})


def test_no_window_layer_types_or_use_false_still_read(tmp_path):
    for extra in ({"sliding_window": None}, {"sliding_window": 0},
                  {"sliding_window": 131072, "use_sliding_window": False}):
        m = write(tmp_path, {**LLAMA31_8B, **extra})
        assert (m.parameters, m.sliding_window) == (8_030_261_248, 0)
    # a layer_types naming the windowed layers is read (vLLM's Llama windows those)
    types = ["sliding_attention", "full_attention"] * 16
    m = write(tmp_path, {**LLAMA31_8B, "sliding_window": 4096, "layer_types": types})
    assert (m.sliding_window, m.windowed_layers, m.full_layer_step) == (4096, 16, 2)


def test_windowing_families_keep_mistrals_rule(tmp_path):
    for model_type in ("mistral", "mixtral", "phi3", "starcoder2"):
        cfg = {**LLAMA31_8B, "model_type": model_type, "sliding_window": 4096}
        if model_type == "mixtral":
            cfg.update(num_local_experts=8, num_experts_per_tok=2)
        m = write(tmp_path, cfg)
        assert (m.sliding_window, m.windowed_layers) == (4096, 32)
    # no model_type and no architectures: read from its keys, Mistral's rule
    bare = {k: v for k, v in LLAMA31_8B.items() if k not in ("model_type", "architectures")}
    assert write(tmp_path, {**bare, "sliding_window": 4096}).windowed_layers == 32


def test_the_refusal_is_one_line_and_exit_2(tmp_path):
    path = write_config(tmp_path, {**LLAMA31_8B, "sliding_window": 4096})
    one_line_error(run_cli(["infer", "--hf-config", path, "--gpu", "H100-SXM", "--tp", "1",
                            "--batch", "1"]),
                   "sliding_window 4096 is not read by model_type 'llama'",
                   "allowed: null (no window), or a layer_types list")
