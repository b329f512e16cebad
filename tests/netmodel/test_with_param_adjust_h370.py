"""Scenario.with_param on an adjust parameter: the value is checked by Adjust, as one
clear UserError naming the parameter (True was read as 1.0; None, a list and an integer
past a float's range raised float()'s TypeError/OverflowError)."""

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.scenario_catalog import get_scenario


@pytest.mark.parametrize("value", [True, False, None, [1], 10 ** 400],
                         ids=["True", "False", "None", "list", "10**400"])
def test_not_a_number_is_refused_naming_the_parameter(value):
    with pytest.raises(UserError, match=r"^adjust\.latency_scale must be a number"):
        get_scenario("lite-flat").with_param("adjust.latency_scale", value)


@pytest.mark.parametrize(("value", "expected"), [
    (2, 2.0), (2.5, 2.5), ("2.5", 2.5), ("1e1", 10.0), (np.float64(0.25), 0.25),
    (np.int64(3), 3.0), ("-0", 0.0)])
def test_numbers_are_set_as_floats(value, expected):
    adjust = get_scenario("lite-flat").with_param("adjust.latency_scale", value).adjust
    assert adjust.latency_scale == expected
    assert type(adjust.latency_scale) is float
    assert (adjust.hop_latency, adjust.bandwidth_scale) == (0.0, 1.0)
