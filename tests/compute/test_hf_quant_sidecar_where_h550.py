"""A bad value in an ``hf_quant_config.json`` is said as that file's
(scripts/hostile_round18.py). Before: ``quant_algo`` NaN or 'MAGIC' there was refused as
'DIR/config.json: quantization_config (modelopt): quant_algo nan is not modelled', naming
the config.json, which holds no such key; now 'DIR/hf_quant_config.json: quantization:
quant_algo nan is not modelled; allowed: 'FP8', 'NVFP4''. The same value written in the
config.json's own quantization_config is said as before."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.hf_config import load_hf_config

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
          "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
          "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize("quant, said", [
    ('{"quant_algo": NaN}', "quant_algo nan is not modelled; allowed: 'FP8', 'NVFP4'"),
    ('{"quant_algo": "MAGIC"}', "quant_algo 'MAGIC' is not modelled; allowed: 'FP8', 'NVFP4'"),
    ('{"quant_algo": "FP8", "kv_cache_quant_algo": "INT4"}',
     "kv_cache_quant_algo 'INT4' is not modelled; allowed: 'FP8', null"),
    ('{"quant_algo": "NVFP4", "group_size": 32}',
     "NVFP4 group_size 32 is not modelled; allowed: 16"),
])
def test_the_sidecar_is_named(tmp_path, quant, said):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "hf_quant_config.json").write_text('{"quantization": ' + quant + "}")
    with pytest.raises(UserError) as err:
        load_hf_config(tmp_path / "config.json")
    assert str(err.value) == f"{tmp_path}/hf_quant_config.json: quantization: {said}"


def test_the_config_json_s_own_is_said_as_before(tmp_path):
    cfg = dict(CONFIG, quantization_config={"quant_method": "modelopt", "quant_algo": "MAGIC"})
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(UserError) as err:
        load_hf_config(tmp_path / "config.json")
    assert str(err.value) == (f"{tmp_path}/config.json: quantization_config (modelopt): "
                              "quant_algo 'MAGIC' is not modelled; allowed: 'FP8', 'NVFP4'")


def test_a_good_sidecar_is_still_read(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "hf_quant_config.json").write_text(
        '{"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}')
    m = load_hf_config(tmp_path / "config.json")
    assert (m.weight_dtype, m.compute_dtype, m.kv_dtype) == ("fp8", "fp8", "fp8")
