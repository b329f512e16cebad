"""A decode step's FLOPs against the model's active parameters: every weight a token
multiplies costs 2 FLOPs, so one sequence's step at a context of one token (attention's
score and weighted-sum FLOPs taken out) is ``2 x`` the active parameters less the token
embedding (a lookup; an untied model's LM head is a GEMM and counts) and the learned
positions. What is left are the norms and biases, element-wise and fused into the GEMMs,
not counted as FLOPs: at most 3.4e-4 of the active parameters (gpt-oss's expert biases).
The MoE router's GEMM (hidden x experts a token and MoE layer) is counted: left out, it
was 2.9e-3 of DeepSeek-V3's and gpt-oss-120b's.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.evaluate_one import evaluate
from compute.models import get_model, model_catalog
from compute.phases import Workload

MODELS = tuple(model_catalog())


def _pair_flops(m, context: int) -> float:
    """Attention's per-(query, key) FLOPs of one sequence's decode step, over the layers."""
    pairs = m.attention_span(Workload("decode", context=context))[0]
    if m.is_mla:   # absorbed: scores over the latent and rotary key, the sum over the latent
        return m.layers * m.heads * (4 * m.kv_lora_rank + 2 * m.qk_rope_head_dim) * pairs
    return m.layers * 4 * m.heads * m.head_dim * pairs


def _gemm_flops(name: str, batch: int, context: int) -> float:
    r = evaluate(name, "GB200-NVL72", 1, batch, "decode", context=context)
    return sum(s.flops * s.count for s in r.stages) - batch * _pair_flops(get_model(name),
                                                                          context)


@pytest.mark.parametrize("name", MODELS)
def test_decode_flops_are_twice_the_active_parameters(name):
    m = get_model(name)
    multiplied = (m.active_parameters - (0 if m.tied_embeddings else m.vocab * m.hidden)
                  - m.learned_positions * m.hidden)
    half = _gemm_flops(name, 1, 1) / 2
    assert half <= multiplied
    assert half == pytest.approx(multiplied, rel=3.5e-4)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(MODELS), batch=st.integers(1, 512),
       context=st.integers(1, 2048))
def test_decode_gemm_flops_grow_with_the_batch_alone(name, batch, context):
    # one token a sequence: every weight GEMM's FLOPs (the router's too) is linear in the
    # batch and independent of the context
    assert _gemm_flops(name, batch, context) == pytest.approx(
        batch * _gemm_flops(name, 1, 1), rel=1e-9)
