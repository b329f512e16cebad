"""The biases h321 added (``o_bias``, ``mlp_bias``, ``lm_head_bias``) in every consumer of a
model's weights (helper h331): the parameter count, the weight memory
(:mod:`compute.memory`) and the bytes each step's stages read (:mod:`compute.stages`),
which must agree with each other. Before: stages read a bias on the output projection and
the MLPs only for ``bias`` (every linear layer) and never the LM head's, so a GPT-J or
Phi-2 step read fewer weight bytes than its memory held; memory kept the LM head's bias
whole on every GPU and every pipeline stage; and a multi-head-latent-attention model
with ``o_bias`` was taken with the bias silently dropped (the MLA count has no such term).

Every figure below is derived by hand from the tiny model's sizes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from compute.errors import UserError
from compute.memory import stage_weight_bytes, weight_bytes
from compute.model_spec import ModelSpec
from compute.models import get_model
from compute.parallel import Parallelism, layout
from compute.phases import Workload
from compute.sharding import shards
from compute.stages import plain_step_work, stage_work

# 2 layers, hidden 256, 4 heads of 64, SwiGLU 512, vocabulary 1,000, untied, bf16
PLAIN = ModelSpec(name="tiny", layers=2, hidden=256, heads=4, kv_heads=4, head_dim=64,
                  ffn=512, vocab=1000, source="what-if: test")
BIASED = dataclasses.replace(PLAIN, o_bias=True, mlp_bias=True, lm_head_bias=True)
# the biases' elements: O 256, gate and up 2 x 512, down 256 a layer; the LM head 1,000
WHOLE = 2 * (256 + 2 * 512 + 256) + 1000                       # 4,072
# at TP 2: O's and down's biases whole on each GPU (row-parallel), gate/up's and the LM
# head's split with their columns and rows
HALF = 2 * (256 + 512 + 256) + 500                              # 2,548
DECODE = Workload("decode", context=100)


def test_parameters_count_the_biases_by_hand():
    assert BIASED.parameters - PLAIN.parameters == WHOLE


def _stage_weight_gap(tp: int) -> float:
    """Bytes a decode step of one sequence reads more for the biased model, over every
    stage (count x bytes)."""
    total = 0.0
    for m, sign in ((BIASED, 1.0), (PLAIN, -1.0)):
        for _name, count, _, hbm, *_ in stage_work(m, shards(m, [tp]), np.array([[1.0]]),
                                                   DECODE):
            total += sign * float(np.ravel(count)[0]) * float(np.ravel(hbm)[0])
    return total


@pytest.mark.parametrize(("tp", "elements"), [(1, WHOLE), (2, HALF)])
def test_a_step_reads_the_bias_bytes_memory_holds(tp, elements):
    # bf16: 2 bytes an element, in the stages and in memory alike
    assert _stage_weight_gap(tp) == 2 * elements
    gap = float(weight_bytes(BIASED, shards(BIASED, [tp]))[0, 0]
                - weight_bytes(PLAIN, shards(PLAIN, [tp]))[0, 0])
    assert gap == 2 * elements


def test_the_plain_step_path_reads_them_too():
    sh = shards(BIASED, [1])
    sh = type(sh)(**{f: float(getattr(sh, f)[0, 0]) for f in
                     ("tp", "heads", "kv_heads", "ffn", "vocab", "shared_ffn", "dense_ffn")})
    _, hbm, _ = plain_step_work(BIASED, sh, DECODE)(1.0)
    assert hbm == [float(x[3]) for x in stage_work(BIASED, sh, 1.0, DECODE)]
    _, plain, _ = plain_step_work(PLAIN, sh, DECODE)(1.0)
    # out_proj: 256 a layer; mlp_up 1,024; mlp_down 256; lm_head 1,000 (once), 2 bytes each
    gaps = [b - a for a, b in zip(plain, hbm, strict=True)]
    assert gaps == [0.0, 0.0, 0.0, 512.0, 0.0, 2048.0, 512.0, 0.0, 2000.0]


def test_pipeline_stages_hold_the_lm_head_bias_on_the_last_only():
    # PP 2, TP 1: one layer a stage; the first holds the embedding, the last the LM head
    # and its bias (before: the bias counted on both stages)
    gaps = [stage_weight_bytes(m, layout(m, [Parallelism(1, pp=2)]))[0]
            for m in (BIASED, PLAIN)]
    assert list(gaps[0] - gaps[1]) == [2 * 1536, 2 * (1536 + 1000)]


def test_mla_with_an_output_bias_is_refused():
    # DeepSeek-V3's MLA count has no output-projection bias: it would be dropped silently
    with pytest.raises(UserError, match="o_bias"):
        dataclasses.replace(get_model("DeepSeek-V3"), o_bias=True)


@pytest.mark.parametrize("suffix", ["toml", "json"])
def test_a_model_file_carries_the_bias_keys(tmp_path, suffix):
    # a guard (passes on the old code too): the keys round-trip through both file kinds
    from compute.models import load_model_file
    keys = {"layers": 2, "hidden": 256, "heads": 4, "ffn": 512, "vocab": 1000,
            "o_bias": True, "mlp_bias": True, "lm_head_bias": True, "source": "what-if: t"}
    path = tmp_path / f"m.{suffix}"
    if suffix == "json":
        import json
        path.write_text(json.dumps({"model": {"tiny-b": keys}}))
    else:
        path.write_text('[model.tiny-b]\nlayers = 2\nhidden = 256\nheads = 4\nffn = 512\n'
                        'vocab = 1000\no_bias = true\nmlp_bias = true\n'
                        'lm_head_bias = true\nsource = "what-if: t"\n')
    m = load_model_file(path)["tiny-b"]
    assert (m.o_bias, m.mlp_bias, m.lm_head_bias) == (True, True, True)
    assert m.parameters == BIASED.parameters


@pytest.mark.parametrize("value", ["yes", 1, 0, None, [True]])
def test_a_bias_key_takes_only_true_or_false(tmp_path, value):
    # a guard: the fields' bool type is checked (ModelSpec.__post_init__), one line
    import json

    from compute.models import load_model_file
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"model": {"tiny-b": {
        "layers": 2, "hidden": 256, "heads": 4, "ffn": 512, "vocab": 1000,
        "lm_head_bias": value, "source": "what-if: t"}}}))
    with pytest.raises(UserError, match="lm_head_bias must be true or false") as e:
        load_model_file(path)
    assert "\n" not in str(e.value)


def test_the_lm_head_bias_is_stored_with_the_head():
    # fp8 weights, the embedding and LM head in bf16 (as a quantized checkpoint keeps
    # them): the head's 1,000 bias elements take 2 bytes in memory and in the model's own
    # storage count alike (before this change to memory both said 1 byte; after it, until
    # token_parameters counted the bias, memory said 2 and storage 1)
    m = dataclasses.replace(BIASED, weight_dtype="fp8", embedding_dtype="bf16")
    plain = dataclasses.replace(m, lm_head_bias=False)
    assert m.weight_storage_bytes - plain.weight_storage_bytes == 2 * 1000
    assert float(weight_bytes(m, shards(m, [1]))[0, 0]) == m.weight_storage_bytes
