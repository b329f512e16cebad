"""Hostile input, round 11 (h380): numbers in data files read by the one number grammar.

A float in a TOML or JSON data file (profile, scenario, GPU, model, workload) or in a JSON
or GraphML fabric that is not zero but below the smallest normal float was read as 0.0
(``1e-400``) or as a subnormal that has lost its digits (``1e-310``), where the same text
typed on the command line is refused (:func:`compute.validate.read_number`, c048980): a
profile's ``layer_overhead_s = 1e-400`` ran as no overhead, exit 0. Now each is refused in
one line naming the file and the number, as typed.
"""

from __future__ import annotations

import math

import pytest

from compute.config_files import FloatOverflow, finite_float, parse_table
from compute.errors import UserError
from compute.validate import SMALLEST_NUMBER, below_smallest

BELOW = ("below the smallest number netmodel reads (2.225e-308); write 0 for zero")


@pytest.mark.parametrize("text", ["1e-400", "1E-400", "-1e-400", "1e-310", "4.9e-324",
                                  "2.2e-308", "0.000001e-303"])
def test_a_float_below_the_smallest_is_refused_as_typed(text):
    assert 0 <= abs(float(text)) < SMALLEST_NUMBER   # what Python reads: 0 or a subnormal
    with pytest.raises(FloatOverflow) as err:
        finite_float(text)
    assert err.value.message("f.toml") == f"f.toml holds the number {text}, {BELOW}"


@pytest.mark.parametrize("text, value", [("0.0", 0.0), ("-0.0", -0.0), ("0e-400", 0.0),
                                         ("0.000e99999", 0.0), ("2.2250738585072014e-308",
                                                                SMALLEST_NUMBER),
                                         ("1e-300", 1e-300), ("nan", math.nan),
                                         ("-inf", -math.inf)])
def test_zero_spelt_and_normal_floats_are_read(text, value):
    got = finite_float(text)
    assert got == value or (math.isnan(value) and math.isnan(got))
    assert math.copysign(1, got) == math.copysign(1, value)


def test_the_rule_is_the_command_lines():
    for text in ["1e-400", "1e-310", "0e0", "1e-300", "-0.0"]:
        assert below_smallest(text, float(text)) == (text in ("1e-400", "1e-310"))


@pytest.mark.parametrize("fmt, text, number", [
    ("toml", "x = 1e-400\n", "1e-400"), ("toml", "x = 1_0e-310\n", "1_0e-310"),
    ("json", '{"x": 1e-400}', "1e-400"), ("json", '{"x": [1, 5e-324]}', "5e-324")])
def test_a_data_file_names_the_number(fmt, text, number):
    """Before: {'x': 0.0} or a subnormal, read without a word."""
    with pytest.raises(UserError) as err:
        parse_table(text, fmt, "f")
    assert str(err.value) == f"f holds the number {number}, {BELOW}"

