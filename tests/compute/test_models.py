"""Model catalog and loaders: parameter counts against published sizes, HF config.json."""

import json
import re

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.models import (
    ModelSpec,
    _parse_model_table,
    get_model,
    load_hf_config,
    load_model_file,
    model_catalog,
    model_names,
    published_counts,
)

# Published parameter counts (model cards / papers), beside each model in
# compute/data/models.toml (published_parameters, with its source): every catalog model has
# one, required where the catalog is read
PUBLISHED = published_counts()


def test_every_catalog_model_has_a_published_count():
    assert set(model_names()) == set(PUBLISHED)
    assert all(c.source.strip() and 0 < c.active <= c.total for c in PUBLISHED.values())


def test_published_counts_as_the_sources_give_them():
    # a few read by hand from the sources the rows cite
    assert (PUBLISHED["Llama-3-8B"].total, PUBLISHED["Llama-3-8B"].active) == (8.03e9, 8.03e9)
    assert (PUBLISHED["DeepSeek-V3"].total, PUBLISHED["DeepSeek-V3"].active) == (671e9, 37e9)
    # gpt-oss's card leaves out the 201088 x 2880 embedding table, counted active here
    assert PUBLISHED["gpt-oss-120b"].active == pytest.approx(5.13e9 + 201088 * 2880, rel=1e-3)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_count_within_2_percent_of_published(name):
    m = get_model(name)
    published = PUBLISHED[name]
    assert m.parameters == pytest.approx(published.total, rel=0.02)
    assert m.active_parameters == pytest.approx(published.active, rel=0.02)


_ENTRY = 'layers = 2\nhidden = 64\nheads = 4\nffn = 256\nvocab = 1000\nsource = "test"\n'


def test_a_model_file_may_give_published_counts_checked_as_the_catalogs(tmp_path):
    # a catalog table copied into a file keeps its row: taken; a bad one refused alike
    f = tmp_path / "m.toml"
    f.write_text('[model.Mine]\n' + _ENTRY
                 + 'published_parameters = {total = 1e6, active = 1e6, source = "x"}\n')
    assert load_model_file(f)["Mine"].layers == 2
    f.write_text('[model.Mine]\n' + _ENTRY
                 + 'published_parameters = {total = 1e6, active = 2e6, source = "x"}\n')
    with pytest.raises(UserError, match=r"^.*m\.toml: model 'Mine': published_parameters"):
        load_model_file(f)


@pytest.mark.parametrize("row, words", [
    (None, "model 'Mine' lacks published_parameters = {total, active, source}, its "
           "published parameter counts"),
    ({"total": 1e6, "active": 2e6, "source": "x"}, "active"),
    ({"total": 1e6, "active": 1e6, "source": " "}, "source must say where"),
    ({"total": 1e6, "active": 1e6}, "source"),
])
def test_a_catalog_entry_without_a_sound_published_row_is_refused(row, words):
    import tomllib

    entry = tomllib.loads(_ENTRY)
    if row is not None:
        entry["published_parameters"] = row
    with pytest.raises(UserError, match=re.escape(words)):
        _parse_model_table({"model": {"Mine": entry}}, "models.toml", {})


def test_llama3_8b_parameters_from_architecture_by_hand():
    # embed + head 2 x 128256 x 4096; per layer q,o 4096^2 each, k,v 4096 x 1024 each,
    # MLP 3 x 4096 x 14336, two RMSNorms of 4096; final norm 4096.
    layer = 2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    total = 2 * 128256 * 4096 + 32 * layer + 4096
    assert get_model("Llama-3-8B").parameters == total == 8_030_261_248


def test_catalog_has_the_study_models_with_sources():
    names = model_names()
    for n in ("Llama-3-8B", "Llama-3-70B", "Llama-3.1-405B", "GPT-3-175B", "Llama-2-70B",
              "Mixtral-8x7B", "Qwen1.5-MoE-A2.7B", "DeepSeek-V3"):
        assert n in names
        assert model_catalog()[n].source


def test_dense_models_have_no_experts_and_405b_ships_fp8_weights():
    for m in model_catalog().values():
        if m.name in ("Mixtral-8x7B", "Qwen1.5-MoE-A2.7B", "DeepSeek-V3", "gpt-oss-120b",
                      "gpt-oss-20b"):
            assert m.is_moe and m.active_parameters < m.parameters
            continue
        assert (m.experts, m.experts_per_token) == (1, 1) and not m.is_moe
        assert m.active_parameters == m.parameters
    assert get_model("Llama-3-70B").weight_bytes == 2.0


def test_405b_stores_only_the_mlps_of_layers_1_to_124_in_fp8_as_meta_does():
    # Meta's FP8 recipe (llama-stack quantization/loader.py, convert_to_quantized_model)
    # quantizes the feed-forward w1, w3, w2 of every layer but the first and the last;
    # attention, the embedding and the LM head stay bf16. By hand: one MLP is 3 x 16384 x
    # 53248 = 2,617,245,696 weights; 124 of them at 1 B, every other weight at 2 B.
    m = get_model("Llama-3.1-405B")
    mlp = 3 * 16384 * 53248
    assert mlp == 2_617_245_696
    assert m.weight_bytes == 2.0 and m.mlp_weight_dtype == "fp8"
    assert m.weight_storage_bytes == 124 * mlp + 2 * (m.parameters - 124 * mlp)
    assert m.weight_storage_bytes / 1e9 == pytest.approx(487.17, abs=0.01)   # not 405.9
    # 8 x H100 (85.5 GB, 10% reserve: 77.0 GB usable each): 60.9 GB of weights per GPU
    # leave about 16 GB for the KV cache (the release's purpose: one node); all-fp8 left 26.
    r = evaluate(m, "H100-SXM", tp=8, batch=1, phase="decode")
    assert r.memory.weights / 1e9 == pytest.approx(60.9, abs=0.05)
    assert r.memory.fits
    # a mixed-precision model file must say both keys sensibly
    with pytest.raises(UserError, match="mlp_weight_dtype"):
        ModelSpec("x", 2, 64, 4, 4, 16, 128, 100, mlp_dtype_layers=1)
    with pytest.raises(UserError, match="mlp_dtype_layers"):
        ModelSpec("x", 2, 64, 4, 4, 16, 128, 100, mlp_weight_dtype="fp8", mlp_dtype_layers=3)


def test_unknown_model_lists_known_ones():
    with pytest.raises(UserError, match="unknown model 'GPT-5'.*'Llama-3-70B'"):
        get_model("GPT-5")


LLAMA3_8B_CONFIG = {  # the fields of meta-llama/Meta-Llama-3-8B/config.json that matter
    "architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "vocab_size": 128256,
}


def test_hf_config_llama3_8b_matches_catalog(tmp_path):
    path = tmp_path / "Meta-Llama-3-8B" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(LLAMA3_8B_CONFIG))
    m = load_hf_config(path)
    ref = get_model("Llama-3-8B")
    for key in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                "gated_mlp", "tied_embeddings", "weight_dtype", "max_context"):
        assert getattr(m, key) == getattr(ref, key), key
    assert m.parameters == ref.parameters
    assert m.name == "Meta-Llama-3-8B"
    assert get_model(str(path)).parameters == ref.parameters  # a path works as a name


def test_hf_config_gpt2_small_has_124m_parameters(tmp_path):
    # openai-community/gpt2: 124,439,808 parameters (tied embeddings, learned positions).
    cfg = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
           "n_positions": 1024, "n_ctx": 1024, "vocab_size": 50257,
           "activation_function": "gelu_new"}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    m = load_hf_config(tmp_path / "config.json", name="gpt2")
    assert not m.gated_mlp and m.tied_embeddings and m.bias and m.norm == "layernorm"
    assert m.parameters == 124_439_808


def test_hf_config_mixtral_moe_counts_total_and_active(tmp_path):
    # mistralai/Mixtral-8x7B-v0.1: 46.7B parameters, 12.9B active per token (Mistral AI,
    # "Mixtral of experts", 2023).
    cfg = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2,
           "tie_word_embeddings": False, "torch_dtype": "bfloat16", "hidden_act": "silu"}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    m = load_hf_config(tmp_path, name="Mixtral-8x7B")
    assert m.is_moe
    assert m.parameters / 1e9 == pytest.approx(46.7, rel=0.01)
    assert m.active_parameters / 1e9 == pytest.approx(12.9, rel=0.01)


@pytest.mark.parametrize("text, match", [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "JSON object"),
    (json.dumps({"hidden_size": 4096}), "lacks"),
    (json.dumps({**LLAMA3_8B_CONFIG, "num_hidden_layers": 0}), "num_hidden_layers"),
    (json.dumps({**LLAMA3_8B_CONFIG, "hidden_size": "4096"}),
     "hidden_size must be a whole number from 1 to 1,048,576, got '4096'"),
    (json.dumps({**LLAMA3_8B_CONFIG, "vocab_size": 1e30}), "vocab_size must be a whole number"),
    (json.dumps({**LLAMA3_8B_CONFIG, "num_hidden_layers": True}), "num_hidden_layers"),
    (json.dumps({**LLAMA3_8B_CONFIG, "num_hidden_layers": 10**6}),
     "num_hidden_layers must be a whole number from 1 to 10,000, got 1000000"),
    (json.dumps({**LLAMA3_8B_CONFIG, "tie_word_embeddings": "no"}), "tie_word_embeddings must"),
    (json.dumps({**LLAMA3_8B_CONFIG, "quantization_config": [1]}), "quantization_config must"),
    (json.dumps({**LLAMA3_8B_CONFIG, "model_type": ["llama"]}), "model_type must be text"),
    ('{"num_hidden_layers": ' + "9" * 5000 + "}", "more than 4300 digits"),
    ('{"a": ' + "[" * 5000 + "]" * 5000 + "}", "nests deeper than 32 levels"),
    (json.dumps({**LLAMA3_8B_CONFIG, "num_key_value_heads": 5}), "multiple of kv_heads"),
])
def test_bad_hf_config_is_a_user_error(tmp_path, text, match):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(UserError, match=match):
        load_hf_config(path)


def test_missing_hf_config_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_hf_config(tmp_path / "nope" / "config.json")


def test_model_file_toml_and_json(tmp_path):
    toml = tmp_path / "m.toml"
    toml.write_text('[model.tiny]\nlayers = 2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\n'
                    'source = "test"\n')
    m = load_model_file(toml)["tiny"]
    assert (m.kv_heads, m.head_dim, m.gated_mlp) == (4, 16, True)
    js = tmp_path / "m.json"
    js.write_text(json.dumps({"model": {"tiny": {"layers": 2, "hidden": 64, "heads": 4,
                                                 "ffn": 128, "vocab": 100,
                                                 "source": "test"}}}))
    assert load_model_file(js)["tiny"] == m


@pytest.mark.parametrize("body, match", [
    ('[model.x]\nlayers = 2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\ncolour = 1\n',
     "unknown key.*colour"),
    ('[model.x]\nlayers = 2\nhidden = 64\nheads = 4\nvocab = 100\n', "missing key.*ffn"),
    ('[model.x]\nlayers = 2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\n'
     'weight_dtype = "fp4"\n', "weight_dtype 'fp4' is unknown"),
    # a list where a dtype name belongs used to escape as "TypeError: unhashable type"
    ('[model.x]\nlayers = 2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\n'
     'kv_dtype = ["bf16"]\n', "kv_dtype \\['bf16'\\] is unknown"),
    ('[model.x]\nlayers = -2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\n', "layers"),
    ('[model.x]\nlayers = 2\nhidden = 60\nheads = 7\nffn = 128\nvocab = 100\n', "head_dim"),
    ('[model.x\nlayers = 2\n', "malformed"),
    ('[gpu.x]\nsms = 2\n', "top-level table 'model'"),
])
def test_bad_model_file_is_a_user_error(tmp_path, body, match):
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(UserError, match=match):
        load_model_file(path)


def test_spec_rejects_more_routed_experts_than_experts():
    with pytest.raises(UserError, match="experts_per_token"):
        ModelSpec("x", 1, 64, 4, 4, 16, 128, 100, experts=2, experts_per_token=3)


def test_hf_config_fp8_release_stores_fp8_weights(tmp_path):
    # meta-llama/Llama-3.1-405B-Instruct-FP8: fbgemm_fp8 quantization, bf16 activations.
    cfg = {"model_type": "llama", "hidden_size": 16384, "intermediate_size": 53248,
           "num_hidden_layers": 126, "num_attention_heads": 128, "num_key_value_heads": 8,
           "vocab_size": 128256, "torch_dtype": "bfloat16",
           "quantization_config": {"quant_method": "fbgemm_fp8"}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    m = load_hf_config(tmp_path / "config.json", name="405B-FP8")
    assert (m.weight_dtype, m.act_dtype, m.kv_dtype) == ("fp8", "bf16", "bf16")
    # every linear layer fp8; the embedding and LM head (untied) stay bf16 in fp8 releases
    assert m.weight_storage_bytes == m.parameters + 2 * 128256 * 16384
    # The release lists what stays bf16: every attention projection, the first and last
    # layers' MLPs, the LM head; read so, it is the catalog's 405B byte for byte.
    skip = [f"model.layers.{i}.self_attn.{p}_proj" for i in range(126) for p in "qkvo"]
    skip += [f"model.layers.{i}.mlp.{p}_proj" for i in (0, 125) for p in ("gate", "up", "down")]
    cfg["quantization_config"]["modules_to_not_convert"] = skip + ["lm_head"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    m = load_hf_config(tmp_path / "config.json", name="405B-FP8")
    ref = get_model("Llama-3.1-405B")
    assert (m.weight_dtype, m.mlp_weight_dtype, m.mlp_dtype_layers) == ("bf16", "fp8", 124)
    assert m.parameters == ref.parameters
    assert m.weight_storage_bytes == ref.weight_storage_bytes


def test_get_model_reads_a_json_file_by_its_content_not_its_name(tmp_path):
    # a HuggingFace config.json saved under another name
    hf = tmp_path / "llama.json"
    hf.write_text(json.dumps(LLAMA3_8B_CONFIG))
    m = get_model(str(hf))
    assert m.parameters == get_model("Llama-3-8B").parameters == 8_030_261_248
    assert m.name == "llama"          # no _name_or_path, not config.json: the file's name
    named = tmp_path / "ckpt" / "config.json"   # a checkpoint's config.json: its folder's
    named.parent.mkdir()
    named.write_text(json.dumps(LLAMA3_8B_CONFIG))
    assert get_model(str(named)).name == "ckpt"
    # a catalog-format file named config.json is read as the catalog format
    cat = tmp_path / "sub" / "config.json"
    cat.parent.mkdir()
    cat.write_text(json.dumps({"model": {"tiny": {"layers": 2, "hidden": 64, "heads": 4,
                                                  "ffn": 256, "vocab": 1000,
                                                  "source": "test"}}}))
    tiny = get_model(str(cat))
    assert (tiny.name, tiny.layers, tiny.head_dim) == ("tiny", 2, 16)
    # GPT-2 style keys (n_layer) also mark a HuggingFace config
    gpt2 = tmp_path / "gpt2-small.json"
    gpt2.write_text(json.dumps({"model_type": "gpt2", "n_embd": 768, "n_layer": 12,
                                "n_head": 12, "n_positions": 1024, "vocab_size": 50257}))
    assert get_model(str(gpt2)).parameters == 124_439_808


def test_get_model_refuses_a_json_file_of_neither_kind(tmp_path):
    odd = tmp_path / "weights.json"
    odd.write_text(json.dumps({"colour": "blue"}))
    with pytest.raises(UserError, match=r"weights.json is neither a model file .* nor a "
                                        r"HuggingFace config.json"):
        get_model(str(odd))
    lst = tmp_path / "list.json"
    lst.write_text("[1, 2]")
    with pytest.raises(UserError, match=r"got \[1, 2\]"):
        get_model(str(lst))


def test_hf_fp8_modules_to_not_convert_must_be_a_list_of_names(tmp_path):
    cfg = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
           "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
           "quantization_config": {"quant_method": "fp8", "modules_to_not_convert": "lm_head"}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(UserError, match="modules_to_not_convert must be a list"):
        load_hf_config(tmp_path / "config.json")
    # every layer's MLP kept and attention kept: nothing is fp8
    cfg["quantization_config"]["modules_to_not_convert"] = [
        f"model.layers.{i}.{m}" for i in range(2) for m in ("mlp", "self_attn")]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    m = load_hf_config(tmp_path / "config.json")
    assert (m.weight_dtype, m.mlp_weight_dtype) == ("bf16", "")
    assert m.weight_storage_bytes == 2 * m.parameters
