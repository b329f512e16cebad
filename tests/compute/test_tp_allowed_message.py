"""A TP degree that does not divide the heads lists only degrees the GPU can run.

Before: 'netmodel infer --model Llama-3-70B --gpu H100-SXM --tp 3' answered 'allowed: 1, 2,
4, 8, 16, 32, 64', and each of 16, 32 and 64 was then refused as exceeding the H100's
largest instance (8). The divisors of the heads listed now stop at the largest instance.
"""

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.models import get_model
from compute.sharding import check_tp


@pytest.mark.parametrize("model, gpu, tp, allowed", [
    ("Llama-3-70B", "H100-SXM", 3, "1, 2, 4, 8"),          # 64 heads, 8 GPUs at most
    ("Mixtral-8x7B", "H100-SXM", 64, "1, 2, 4, 8"),        # 32 heads
    ("Llama-3-70B", "Lite", 3, "1, 2, 4, 8, 16, 32"),      # a Lite instance: up to 32
    ("GPT-3-175B", "Lite", 5, "1, 2, 3, 4, 6, 8, 12, 16, 24, 32"),   # 96 heads
])
def test_allowed_degrees_stop_at_the_largest_instance(model, gpu, tp, allowed):
    with pytest.raises(UserError) as e:
        evaluate(model, gpu, tp, 1)
    msg = str(e.value)
    top = 32 if gpu == "Lite" else 8
    assert msg.endswith(f"allowed: {allowed} (up to this GPU's largest instance, {top})"), msg


def test_without_a_gpu_every_divisor_is_listed():
    with pytest.raises(UserError, match=r"allowed: 1, 2, 4, 8, 16, 32, 64$"):
        check_tp(get_model("Llama-3-70B"), 3)
