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



# A profile's [[measurement]] tables had no bound, where a measurements file holds at most
# MAX_MEASUREMENTS rows (calibrate refuses more): a profile of 100,000 copies of one row
# (12 MB, under the 16 MiB and 1,000,000-value file limits) ran infer in 12.0 s and 181 MB
# (exit 0); now refused in one line after parsing (7.6 s, 162 MB, exit 2).

def _profile_of(tmp_path, rows: int):
    from compute.profiles import _shipped

    text = (_shipped() / "vllm-dgx-h100.toml").read_text()
    head = text[:text.index("[[measurement]]")]
    row = ('[[measurement]]\nmodel = "Llama-2-70B"\ngpu = "H100-SXM"\ntp = 8\nphase = '
           '"decode"\nbatch = 1\ncontext = 576\nlatency_s = 0.0298\n')
    path = tmp_path / f"p{rows}.toml"
    path.write_text(head + row * rows)
    return path


def test_a_profile_holds_at_most_the_measurements_a_file_holds(tmp_path):
    from compute.profiles import MAX_MEASUREMENTS, read_profile

    assert len(read_profile(_profile_of(tmp_path, MAX_MEASUREMENTS)).measurements) == 10_000
    path = _profile_of(tmp_path, MAX_MEASUREMENTS + 1)
    with pytest.raises(UserError) as err:
        read_profile(path)
    assert str(err.value) == (f"{path} holds more than 10,000 measurements, the most a "
                              f"measurements file or a profile holds")


def test_a_measurements_file_is_told_alike(tmp_path):
    from compute.profiles import read_measurements

    path = tmp_path / "m.csv"
    path.write_text("model,gpu,tp,batch,phase,context,latency_s\n"
                    + "Llama-2-70B,H100-SXM,8,1,decode,576,0.0298\n" * 10_001)
    with pytest.raises(UserError) as err:
        read_measurements(path)
    assert str(err.value) == (f"{path} holds more than 10,000 measurements, the most a "
                              f"measurements file or a profile holds")
