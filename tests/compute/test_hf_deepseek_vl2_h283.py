"""DeepSeek-VL2's ``use_mla`` and experts keys of 0 (helper h283).

* ``use_mla``: DeepSeek-VL2's own DeepseekV2 code (deepseek_vl2/models/modeling_deepseek.py)
  builds ``LlamaAttention`` (Q, K, V and O of heads x hidden / heads) when ``use_mla`` is
  false, whatever ``kv_lora_rank`` says (deepseek-vl2-tiny: MHA, arXiv 2412.10302 Table 1;
  Small and the base model: MLA of rank 512). The reader looked only at ``kv_lora_rank``:
  a config with ``use_mla`` false beside a rank (HF's DeepseekV2Config writes 512 by
  default) was read as MLA, 576 KV elements a token and layer for 2,560; ``use_mla`` true
  without a rank was read as plain attention with no word said. Both fixed in
  compute/hf_config.py (_latent_attention).
* An experts key of 0 is read dense only where the family's code does so (one table,
  ``compute.hf_families.ZERO_EXPERTS``); gpt-oss, GraniteMoE, DBRX and Llama-4 (which
  build their MoE block whatever the count) and a config naming shared experts beside 0
  routed ones were read dense with no word said.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.models import load_hf_config
from tests.compute.hf_helpers import LLAMA3_8B, fixture, read, write, write_config
from tests.netmodel.cli_helpers import one_line_error, run_cli

# DeepSeek-OCR's language model (deepseek-vl2-tiny's shape): 12 layers, hidden 1280, 10
# heads of 128 (MHA), layer 0 dense (6,848 wide), 11 MoE layers of 64 routed experts 896
# wide, 2 shared (1,792), top-6, untied vocabulary 129,280, RMSNorms
LM = (2 * 129280 * 1280                                   # embedding and LM head
      + 12 * (4 * 1280 * 1280 + 2 * 1280)                 # q, k, v, o, two norms
      + 3 * 1280 * 6848                                   # layer 0's dense MLP
      + 11 * (64 * 3 * 1280 * 896 + 64 * 1280 + 3 * 1280 * 1792)   # experts, router, shared
      + 1280)                                             # final norm
# the rest of DeepSeek-OCR's safetensors, tensor by tensor as published: SAM ViT-B (12
# blocks, relative positions 27 x 64 or, on its 4 global blocks, 127 x 64, neck and two
# downsampling convolutions), CLIP ViT-L/14-224 (24 layers), the linear projector 2048 ->
# 1280, image_newline and view_seperator
SAM = (12 * ((768 * 768 + 768) + (2304 * 768 + 2304) + 2 * (3072 * 768) + 3072 + 768
             + 4 * 768)
       + 8 * 2 * 27 * 64 + 4 * 2 * 127 * 64 + 256 * 768 + 4 * 256 + 256 * 256 * 9
       + 512 * 256 * 9 + 1024 * 512 * 9 + 768 * 3 * 16 * 16 + 768 + 64 * 64 * 768)
CLIP = (1024 + 1024 * 3 * 14 * 14 + 257 * 1024 + 2 * 1024
        + 24 * (4 * 1024 + 2 * 4096 * 1024 + 4096 + 1024 + 1024 * 1024 + 1024
                + 3072 * 1024 + 3072))
REST = 1280 * 2048 + 1280 + 2 * 1280
#: DeepseekV2Config's defaults for the MLA keys (what a config saved with them carries).
MLA_DEFAULTS = {"kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
                "qk_rope_head_dim": 64, "v_head_dim": 128}


def test_deepseek_ocr_language_model_is_exact():
    """Guard (passes before and after): the hand count of the language model plus the
    published tensors of the vision side is the checkpoint's 3,336,106,240."""
    assert LM == 2_934_734_080
    assert LM + SAM + CLIP + REST == 3_336_106_240
    m = read("deepseek-ocr")
    assert m.parameters == LM
    assert not m.is_mla and (m.heads, m.kv_heads, m.head_dim) == (10, 10, 128)
    assert m.kv_elements_per_token == 2 * 10 * 128
    # one token: its 6 routed experts of 64, the shared ones, the rest
    assert m.active_parameters == LM - 11 * 58 * 3 * 1280 * 896 == 739_605_760
    # arXiv 2412.10302: 0.57B activated in the 3B language model, the input embedding
    # (165,478,400) left out
    assert round((m.active_parameters - 129280 * 1280) / 1e9, 2) == 0.57


def test_language_keys_repeated_at_the_top_level(tmp_path):
    """DeepSeek-OCR's published config.json repeats its language_config's keys at its top
    level (model_type deepseek_vl_v2 there): read as the DeepseekV2 family, the same count.
    Before: the top level read as an unknown family with a plain MLP, 2,093,333,760."""
    cfg = fixture("deepseek-ocr")
    flat = {**cfg, **{k: v for k, v in cfg["language_config"].items()
                      if k not in ("architectures", "torch_dtype")}}
    m = write(tmp_path, flat)
    assert m.gated_mlp and m.parameters == LM


def test_use_mla_false_is_plain_attention_whatever_the_rank(tmp_path):
    """Before: read as MLA (kv_lora_rank 512 + rope 64 = 576 KV elements, 2,934,734,080
    less the 1280 x 1280 K and V projections plus the latent's), now 2,560 and the exact
    count."""
    cfg = fixture("deepseek-ocr")
    cfg["language_config"] = {**cfg["language_config"], **MLA_DEFAULTS}
    m = write(tmp_path, cfg)
    assert not m.is_mla
    assert m.kv_elements_per_token == 2560
    assert m.parameters == LM


def test_use_mla_true_reads_the_latent(tmp_path):
    """Guard: DeepSeek-V2-Lite's shape (DeepSeek-VL2-Small's language model) with use_mla
    true in a language_config: HF's safetensors total, 15,706,484,224, and 576 KV elements."""
    lite = {"model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944,
            "moe_intermediate_size": 1408, "num_hidden_layers": 27,
            "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512,
            "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
            "v_head_dim": 128, "n_routed_experts": 64, "n_shared_experts": 2,
            "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
            "vocab_size": 102400, "use_mla": True}
    m = write(tmp_path, {"model_type": "deepseek_vl_v2", "language_config": lite})
    assert m.is_mla and m.kv_elements_per_token == 576
    assert m.parameters == 15_706_484_224


@pytest.mark.parametrize("rank", [None, "absent"])
def test_use_mla_true_without_a_rank_is_refused(tmp_path, rank):
    """Before: read as plain attention, exit 0."""
    cfg = fixture("deepseek-ocr")
    inner = {**cfg["language_config"], "use_mla": True}
    if rank == "absent":
        del inner["kv_lora_rank"]
    path = write_config(tmp_path, {**cfg, "language_config": inner})
    with pytest.raises(UserError, match="use_mla is true but kv_lora_rank is null or absent"):
        load_hf_config(path)
    one_line_error(run_cli(["models", path]), "use_mla is true", "kv_lora_rank")


def test_use_mla_must_be_true_or_false(tmp_path):
    cfg = fixture("deepseek-ocr")
    path = write_config(tmp_path, {**cfg, "language_config": {**cfg["language_config"],
                                                             "use_mla": "yes"}})
    one_line_error(run_cli(["models", path]), "use_mla")


# ---- experts key of 0 ---------------------------------------------------------------------
@pytest.mark.parametrize("model_type, key", [
    ("gpt_oss", "num_local_experts"),      # GptOssMLP on every layer
    ("granitemoe", "num_local_experts"),   # GraniteMoeMoE on every layer
    ("llama4_text", "num_local_experts"),  # Llama4TextMoe on its moe_layers
    ("dbrx", "moe_num_experts"),           # DbrxFFN on every layer
])
def test_zero_experts_in_a_family_that_always_builds_them_is_refused(tmp_path, model_type,
                                                                      key):
    """Before: read as the dense Llama-3-8B shape, exit 0 (no num_experts_per_tok given)."""
    cfg = {**LLAMA3_8B, "model_type": model_type, key: 0}
    if model_type == "dbrx":   # DBRX nests its MoE keys; moe_top_k 0: no routing either
        cfg["ffn_config"] = {key: 0, "moe_top_k": 0, "ffn_hidden_size": 14336}
        del cfg[key]
    path = write_config(tmp_path, cfg)
    with pytest.raises(UserError, match=f"{key} is 0 but model_type '{model_type}' always "
                                        f"builds experts"):
        load_hf_config(path)
    one_line_error(run_cli(["models", path]), f"{key} is 0")


def test_zero_routed_experts_beside_shared_ones_is_refused(tmp_path):
    """Before: an n_routed_experts 0 with n_shared_experts 2, in a family the table does not
    name (Llama's; h321: an unknown model type is refused as such), read dense, the shared
    experts dropped, exit 0."""
    path = write_config(tmp_path, {**LLAMA3_8B, "n_routed_experts": 0,
                                   "n_shared_experts": 2})
    one_line_error(run_cli(["models", path]),
                   "n_routed_experts is 0 but its n_shared_experts is for experts")


def test_bare_zero_in_an_unknown_family_is_dense(tmp_path):
    """Guard: in a family ZERO_EXPERTS does not name (Llama's), with no other key speaking
    of experts (or one of 0), a bare 0 is the dense model, as before: 32 layers of
    Llama-3-8B, 8,030,261,248 parameters."""
    for extra in ({"num_experts": 0}, {"n_routed_experts": 0, "n_shared_experts": 0},
                  {"num_local_experts": 0, "num_experts_per_tok": 0, "moe_layers": []}):
        m = write(tmp_path, {**LLAMA3_8B, "hidden_act": "silu", **extra})
        assert (m.experts, m.parameters) == (1, 8_030_261_248)
