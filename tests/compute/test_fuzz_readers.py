"""Fuzzing the readers of user documents: a GPU file, a model file and a HuggingFace
config.json, each taken from a valid document with random values put in random places
(random types, random magnitudes including integers of thousands of digits, NaN and
infinities, random nesting including thousands of levels). Every reader must either succeed
with finite, positive numbers or raise a UserError whose message is one line; nothing else
(no TypeError, RecursionError, OverflowError, ValueError traceback)."""

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.gpu_ranges import spec_ranges
from compute.hardware import load_gpu_file
from compute.models import load_hf_config, load_model_file

FUZZ = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class Huge:
    """An integer of ``digits`` digits, written straight into the JSON text (Python itself
    refuses to convert it to a string)."""

    def __init__(self, digits):
        self.digits = digits


def dump(value) -> str:
    """JSON text of ``value``, with :class:`Huge` integers and NaN/Infinity literals."""
    if isinstance(value, Huge):
        return "9" * value.digits
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value)


scalars = st.one_of(
    st.none(), st.booleans(), st.text(max_size=12),
    st.integers(-5, 300),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([0, -1, 2**31, 2**63, 2**64 + 1, 10**300, 1e30, 1e-30, -0.0, 1e308]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.builds(Huge, st.integers(1, 6000)),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6)


@st.composite
def mutated(draw, doc: dict, path: tuple):
    """``doc`` with the table at ``path`` changed: some keys set to random values, some
    removed, some added; and sometimes the whole document wrapped in deep nesting."""
    doc = json.loads(json.dumps(doc))
    table = doc
    for key in path:
        table = table[key]
    keys = sorted(table)
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["set", "set", "set", "drop", "add", "replace-table"]))
        if action == "set":
            table[draw(st.sampled_from(keys))] = draw(values)
        elif action == "drop" and table:
            table.pop(draw(st.sampled_from(sorted(table))), None)
        elif action == "add":
            table[draw(st.text(max_size=8))] = draw(values)
        elif action == "replace-table" and path:
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = draw(values)
            break
    text = dump(doc)
    depth = draw(st.sampled_from([0, 0, 0, 3, 40, 5000]))
    if depth:
        wrap = draw(st.sampled_from(["list", "table"]))
        text = ("[" * depth + text + "]" * depth if wrap == "list"
                else '{"a":' * depth + text + "}" * depth)
    return text


def assert_clean(call):
    """The reader succeeds, or raises a one-line UserError; returns the result or None."""
    try:
        return call()
    except UserError as exc:
        msg = str(exc)
        assert "\n" not in msg and "\r" not in msg and msg
        assert len(msg) < 2000, msg[:200]
        return None


GPU_DOC = {"gpu": {"X": {"sms": 132, "bf16_dense_TFLOPs": 989.4, "fp8_dense_TFLOPs": 1978.9,
                         "hbm_capacity_GB": 80, "hbm_bandwidth_TBps": 3.35,
                         "scaleup_GBps_per_direction": 450, "scaleout_Gbps": 400,
                         "tdp_W": 700, "max_instance": 8, "source": "fuzz"},
                   "Y": {"derive_from": "H100-SXM", "fraction": 0.25,
                         "network_bandwidth_multiplier": 2.0, "max_instance": 32,
                         "source": "fuzz"}}}


@FUZZ
@given(st.data())
def test_gpu_file_fuzz(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("gpu") / "gpus.json"
    gpu = data.draw(st.sampled_from(["X", "Y"]))
    path.write_text(data.draw(mutated(GPU_DOC, ("gpu", gpu))))
    gpus = assert_clean(lambda: load_gpu_file(path))
    for g in (gpus or {}).values():
        for key in ("flops_bf16", "hbm_capacity", "hbm_bandwidth", "scaleup_bandwidth",
                    "scaleout_bandwidth", "tdp"):
            v = getattr(g, key)
            # 0 where limits.toml allows it (or_zero): scaleout_Gbps 0 is a GPU with no NIC
            # of its own (hypothesis drew it: seed 11), every other figure above 0
            floor_ok = v > 0 or (v == 0 and spec_ranges()[key][3])
            assert isinstance(v, float) and math.isfinite(v) and floor_ok, (key, v)
        assert isinstance(g.sms, int) and 1 <= g.sms <= 100_000


def test_gpu_file_scaleout_zero_is_no_nic(tmp_path):
    """scaleout_Gbps 0 reads as a GPU without a NIC of its own (limits.toml's or_zero),
    0.0 B/s; the other figures as typed (450 GB/s = 4.5e11 B/s)."""
    doc = json.loads(json.dumps(GPU_DOC))
    doc["gpu"]["X"]["scaleout_Gbps"] = 0
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps(doc))
    x = load_gpu_file(path)["X"]
    assert (x.scaleout_bandwidth, x.scaleup_bandwidth) == (0.0, 450e9)
    assert spec_ranges()["scaleout_bandwidth"][3] and not spec_ranges()["tdp"][3]


MODEL_DOC = {"model": {"m": {"layers": 4, "hidden": 256, "heads": 8, "kv_heads": 2,
                             "ffn": 512, "vocab": 1000, "experts": 4, "experts_per_token": 2,
                             "shared_ffn": 256, "dense_layers": 1, "dense_ffn": 1024,
                             "max_context": 4096, "weight_dtype": "bf16", "bias": False,
                             "source": "fuzz"}}}


def check_model(m):
    assert m.parameters > 0 and m.active_parameters > 0
    assert m.heads % m.kv_heads == 0 and m.experts_per_token <= m.experts


@FUZZ
@given(st.data())
def test_model_file_fuzz(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("model") / "models.json"
    path.write_text(data.draw(mutated(MODEL_DOC, ("model", "m"))))
    for m in (assert_clean(lambda: load_model_file(path)) or {}).values():
        check_model(m)


@FUZZ
@given(st.text(alphabet='[]{}="\'.,#\n abcm123-_el', max_size=200))
def test_model_file_toml_text_fuzz(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("toml") / "models.toml"
    path.write_text(text)
    for m in (assert_clean(lambda: load_model_file(path)) or {}).values():
        check_model(m)


HF_DOCS = [
    {"model_type": "llama", "hidden_size": 512, "intermediate_size": 1024,
     "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2,
     "vocab_size": 1000, "tie_word_embeddings": False, "torch_dtype": "bfloat16"},
    {"model_type": "bloom", "hidden_size": 256, "n_head": 4, "n_layer": 2, "n_inner": None,
     "vocab_size": 1000},
    {"model_type": "falcon", "hidden_size": 256, "num_attention_heads": 8,
     "num_hidden_layers": 2, "new_decoder_architecture": True, "num_kv_heads": 2,
     "vocab_size": 1000, "multi_query": True, "bias": False},
    {"model_type": "qwen2_moe", "hidden_size": 256, "intermediate_size": 512,
     "moe_intermediate_size": 128, "shared_expert_intermediate_size": 256, "num_experts": 8,
     "num_experts_per_tok": 2, "num_hidden_layers": 4, "num_attention_heads": 4,
     "num_key_value_heads": 4, "vocab_size": 1000, "decoder_sparse_step": 1,
     "mlp_only_layers": [0]},
    {"model_type": "deepseek_v3", "hidden_size": 256, "intermediate_size": 512,
     "moe_intermediate_size": 64, "n_routed_experts": 8, "n_shared_experts": 1,
     "num_experts_per_tok": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1,
     "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4,
     "kv_lora_rank": 32, "q_lora_rank": 48, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
     "v_head_dim": 16, "vocab_size": 1000,
     "quantization_config": {"quant_method": "fp8"}},
]


@FUZZ
@given(st.data())
def test_hf_config_fuzz(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("hf") / "config.json"
    doc = data.draw(st.sampled_from(HF_DOCS))
    path.write_text(data.draw(mutated(doc, ())))
    m = assert_clean(lambda: load_hf_config(path))
    if m is not None:
        check_model(m)


def test_the_fuzz_documents_are_valid_unchanged(tmp_path):
    # the seeds load, so the fuzz explores around valid documents
    (tmp_path / "g.json").write_text(dump(GPU_DOC))
    assert set(load_gpu_file(tmp_path / "g.json")) == {"X", "Y"}
    (tmp_path / "m.json").write_text(dump(MODEL_DOC))
    check_model(load_model_file(tmp_path / "m.json")["m"])
    for i, doc in enumerate(HF_DOCS):
        (tmp_path / f"{i}").mkdir()
        (tmp_path / f"{i}" / "config.json").write_text(dump(doc))
        check_model(load_hf_config(tmp_path / f"{i}" / "config.json"))
