"""evaluate_grid takes a phase name as evaluate and evaluate_many do."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.roofline import evaluate_grid


def test_evaluate_grid_takes_a_phase_name():
    # "decode" raised AttributeError: 'str' object has no attribute 'kv_tokens'
    g = evaluate_grid("Llama-3-70B", "H100-SXM", [4, 8], [1, 128], "decode")
    assert g.result(1, 1).latency == evaluate("Llama-3-70B", "H100-SXM", 8, 128).latency
    with pytest.raises(UserError, match="unknown phase 'decod'; known: 'decode', 'prefill'"):
        evaluate_grid("Llama-3-70B", "H100-SXM", [8], [1], "decod")
