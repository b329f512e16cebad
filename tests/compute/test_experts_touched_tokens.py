"""expected_experts_touched refuses a count of tokens that is negative, NaN or infinite
(it returned a negative number of experts, or NaN, which flowed into every stage's bytes)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from compute.models import expected_experts_touched, get_model


@pytest.mark.parametrize("tokens", [-1.0, float("nan"), float("inf"), -np.inf, -5,
                                    np.float64(-0.5), [64, -1], np.array([1.0, np.nan]),
                                    np.array([[2.0], [np.inf]])])
@pytest.mark.parametrize("model", ["DeepSeek-V3", "Llama-3-8B"])
def test_tokens_must_be_finite_and_not_negative(model, tokens):
    with pytest.raises(UserError, match=r"^tokens must be finite numbers of tokens >= 0, got "):
        expected_experts_touched(get_model(model), tokens)


def test_refusal_names_the_first_bad_value():
    with pytest.raises(UserError, match=r"got -3\.0$"):
        expected_experts_touched(get_model("DeepSeek-V3"), np.array([4.0, -3.0, np.nan]))
    with pytest.raises(UserError, match=r"got nan$"):
        expected_experts_touched(get_model("DeepSeek-V3"), float("nan"))


def test_zero_and_valid_counts_by_hand():
    m = get_model("DeepSeek-V3")   # 256 routed experts, 8 a token: E (1 - (1 - k/E)^n)
    assert expected_experts_touched(m, 0.0) == 0.0
    np.testing.assert_allclose(expected_experts_touched(m, np.array([0, 1, 2])),
                               [0.0, 8.0, 256 * (1 - (31 / 32) ** 2)], rtol=1e-15)
    assert expected_experts_touched(m, np.array([])).shape == (0,)
