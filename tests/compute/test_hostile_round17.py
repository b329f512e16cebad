"""Hostile input, round 17 (compute): compute.parallel.stage_layers, public beside
check_parallelism, took any layers and PP degree: pp=10**12 built a list of 10**12 stages
(MemoryError), pp=0 raised ZeroDivisionError, None TypeError, np.timedelta64 numpy's
UFuncTypeError, and pp above the layers made empty stages (the module says 1 to the
layers). Now one line naming the parameter and the range."""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from compute.parallel import stage_layers


@pytest.mark.parametrize("pp", [10**12, 0, -1, None, 2.5, "2", True, np.timedelta64(2, "s"),
                                81])
def test_stage_layers_refuses_a_pp_degree_outside_1_to_the_layers(pp):
    with pytest.raises(UserError, match=r"^pp must be a whole number from 1 to 80 "):
        stage_layers(80, pp)


@pytest.mark.parametrize("layers", [None, 0, 10**12, float("nan"), "80"])
def test_stage_layers_refuses_a_layer_count_outside_the_model_limits(layers):
    with pytest.raises(UserError, match=r"^layers must be a whole number from 1 to 10,000"):
        stage_layers(layers, 2)


def test_stage_layers_of_valid_counts():
    # vLLM's split: 80 // 3 = 26 each, the 80 mod 3 = 2 left over one each to the two
    # stages before the last: 27, 27, 26
    assert stage_layers(80, 3) == ((0, 27), (27, 54), (54, 80))
    assert stage_layers(np.int64(80), np.int64(80))[-1] == (79, 80)


@pytest.mark.parametrize("options", [1.0, "overlap", [1], np.array(5)])
def test_evaluate_grid_refuses_options_of_the_wrong_type_by_name(options):
    # evaluate and evaluate_many refused them (round 17); the grid beneath them, public in
    # compute.roofline, raised AttributeError ('float' object has no attribute
    # 'dense_mlp_tp') or numpy's ValueError
    from compute.roofline import evaluate_grid

    with pytest.raises(UserError, match=r"^options must be a compute\.roofline_options\."
                                        r"RooflineOptions .* or None for the defaults, got "):
        evaluate_grid("Llama-3-8B", "H100-SXM", [1], [1], "decode", options=options)


@pytest.mark.parametrize("options", [1.0, "overlap", [1]])
def test_evaluate_two_batch_refuses_options_of_the_wrong_type_by_name(options):
    # compute.two_batch.evaluate_two_batch read options.profile before evaluate's check:
    # AttributeError ('float' object has no attribute 'profile')
    from compute.two_batch import evaluate_two_batch

    with pytest.raises(UserError, match=r"^options must be a compute\.roofline_options\."
                                        r"RooflineOptions .* or None for the defaults, got "):
        evaluate_two_batch("Llama-3-8B", "H100-SXM", 1, 8, "decode", options=options)
