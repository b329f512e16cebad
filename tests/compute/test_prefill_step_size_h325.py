"""Why the calibrated mode misses BLOOM-176B's long prefills (issue 11, h325): what the
measured prefill steps cost per token as a step holds more tokens, and the candidates the
accuracy report rules out, each checked on numbers derived by hand here.

The Splitwise rows (tests/compute/data/splitwise_perf_model_medians.csv, source in its
header) show the cost per token of a prefill step rising between 2,048 and 4,096 tokens a
step for Llama-2-70B (the model the profile is fitted on) as for BLOOM-176B, whether the step
is one prompt or prompts of 512; the rise scales with layers x hidden, not with GEMM FLOPs,
and grows with TP. scripts/accuracy_inference.py (step_size) prints it in docs/accuracy.md.
"""

import pytest

from compute.models import get_model
from tests.compute.report_helpers import inference_reports


@pytest.fixture(scope="module")
def script():
    """The step-size report (scripts/inference_reports/step_size.py)."""
    return inference_reports("step_size")[0]


@pytest.fixture(scope="module")
def costs(script):
    return script.prefill_cost(inference_reports("common")[0].held_out())


def test_alibi_bias_bytes_by_hand(script):
    """vLLM 0.2's ALiBi bias: prompts x heads/TP x L x (L rounded up to 8) x 2 bytes."""
    bloom = get_model("BLOOM-176B")
    assert script.alibi_bias_bytes(bloom, 8, 1, 8192) == 14 * 8192 * 8192 * 2 == 1_879_048_192
    # 100 tokens pad to 104; 112 / 4 = 28 heads a GPU at TP 4
    assert script.alibi_bias_bytes(bloom, 4, 2, 100) == 2 * 28 * 100 * 104 * 2 == 1_164_800


def test_cost_per_token_of_a_step_by_hand(costs):
    """The measured medians over the tokens of the step (seconds per token)."""
    llama = costs[("H100-SXM", "Llama-2-70B", 8, False)]
    assert llama[2048] == pytest.approx(0.1368 / 2048)
    assert llama[4096] == pytest.approx(0.3903 / 4096)
    batched = costs[("H100-SXM", "BLOOM-176B", 8, True)]
    assert sorted(batched) == [1024, 2048, 4096, 8192]          # 2, 4, 8, 16 x 512
    assert batched[8192] == pytest.approx(1.3133 / 8192)


def test_the_rise_goes_with_layers_times_hidden_not_flops(script, costs):
    """From 2,048 to 4,096 tokens a step (one prompt), Llama-2-70B's cost rises by 95.29 -
    66.80 = 28.49 us a token and BLOOM-176B's by 168.14 - 123.58 = 44.56: a ratio of 1.564,
    within 3% of their layers x hidden (70 x 14336 / (80 x 8192) = 1.531) and far from their
    GEMM FLOPs a token (2.52)."""
    llama = script.rise(costs[("H100-SXM", "Llama-2-70B", 8, False)])
    bloom = script.rise(costs[("H100-SXM", "BLOOM-176B", 8, False)])
    assert llama == pytest.approx(0.3903 / 4096 - 0.1368 / 2048)
    assert (llama * 1e6, bloom * 1e6) == pytest.approx((28.49, 44.56), abs=0.01)
    assert bloom / llama == pytest.approx(70 * 14336 / (80 * 8192), rel=0.03)
    b, m = get_model("BLOOM-176B"), get_model("Llama-2-70B")
    flops = b.layers * b.dense_layer_parameters / (m.layers * m.dense_layer_parameters)
    assert flops == pytest.approx(2.522, abs=1e-3) and bloom / llama < 0.65 * flops
    # a slowdown of everything alike would make the ratio that of the 2,048-token costs:
    # 253.1 / 136.8 = 1.850 (one prompt), 238.8 / 132.6 = 1.801 (4 x 512); measured nearer
    # layers x hidden
    uniform = [costs[("H100-SXM", "BLOOM-176B", 8, s)][2048]
               / costs[("H100-SXM", "Llama-2-70B", 8, s)][2048] for s in (False, True)]
    assert uniform == pytest.approx([253.1 / 136.8, 238.8 / 132.6])
    assert uniform == pytest.approx([1.850, 1.801], abs=1e-3)
    assert abs(bloom / llama - 1.531) < abs(bloom / llama - uniform[0])


def test_prompts_of_512_rise_as_one_long_prompt(script, costs):
    """Not attention: steps of 512-token prompts (attention a few % of the step) rise by at
    least 3/4 of what one prompt of the same tokens does, for both models at TP 8."""
    for model in ("Llama-2-70B", "BLOOM-176B"):
        one = script.rise(costs[("H100-SXM", model, 8, False)])
        short = script.rise(costs[("H100-SXM", model, 8, True)])
        assert 0.75 * one < short <= one, model


def test_the_rise_grows_with_tp(script, costs):
    """Llama-2-70B, one prompt, 4,096 tokens less 2,048: TP 2 642.7/4096 - 310.3/2048 = 5.40
    us a token, TP 4 463.5/4096 - 200.7/2048 = 15.16, TP 8 390.3/4096 - 136.8/2048 = 28.49
    (work divided among the GPUs would shrink instead)."""
    rises = [script.rise(costs[("H100-SXM", "Llama-2-70B", tp, False)]) * 1e6
             for tp in (2, 4, 8)]
    assert rises == pytest.approx([5.40, 15.16, 28.49], abs=0.02)


def test_the_report_rules_out_bloom_specific_parts_by_hand(script, reference_dir):
    """BLOOM-176B's 8,192-token prompt at TP 8 on the H100, against the 477 ms by which the
    profile falls short (1,535 ms measured): the ALiBi bias, 38.004 passes of 1.879 GB (built:
    3; each of 70 layers reads it on and below the diagonal, 8193 / 16384) at 3.35 TB/s =
    21.3 ms; attention, 4 x 8192 x 8193 / 2 x 128 x 14 x 70 =
    1.684e13 FLOP at 989.4 x 333/989 TFLOP/s = 50.6 ms; the LM head over all 8,192 tokens,
    2 x 8192 x 14336 x 250880 / 8 = 7.369e12 FLOP at 989.4 x 0.8009 TFLOP/s = 9.3 ms."""
    text = "\n".join(script.step_size(False))
    assert (3 + 70 * 8193 / 16384) * 1_879_048_192 / 3.35e12 == pytest.approx(0.0213, abs=1e-4)
    flops = 4 * 8192 * 8193 / 2 * 128 * 14 * 70
    assert flops / (989.4e12 * 333 / 989) == pytest.approx(0.0506, abs=1e-4)
    assert 2 * 8192 * 14336 * 250880 / 8 / (989.4e12 * 792.1 / 989) == \
        pytest.approx(0.0093, abs=1e-4)
    for piece in ("1,535 ms measured, 477 ms more", "1.88 GB a GPU", "21 ms at the HBM", "read on and below its diagonal",
                  "FlashAttention-2 rate 51 ms", "would take 9.3 ms",
                  "1.56 (one prompt)", "their layers x hidden: 1.53",
                  "TP 2 5.4 and 1.6; TP 4 15.2 and 12.6; TP 8 28.5 and 26.0",
                  "2,048 tokens (1.85 and 1.80); measured 1.56 and 1.39"):
        assert piece in text, piece
