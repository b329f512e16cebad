"""A sweep parameter made in Python is checked as one read from text (netmodel.study.sweep_params,
check_param), and a sweep's size is said before its values are made.

Before, ``run_sweep`` took a :class:`SweepParam` as given: NaN values ran (two rows of a
NaN axis), no values gave an empty result, 1.5 planes were built, a unit of another kind
was drawn and tabled in it, a text value raised ValueError from a format, a bare number
TypeError, a ``None`` path AttributeError, and 10^7 values were sorted (a second and
hundreds of MB) before the searches they make were counted.
"""

from __future__ import annotations

import math
import tracemalloc

import pytest

from compute.errors import UserError
from netmodel.study.sweep import SweepParam, parse_param, run_sweep

KW = {"models": ["Llama-3-8B"], "phases": ["decode"], "max_batch": 8}


def _refused(param, *, scenarios=("lite-flat",)) -> str:
    with pytest.raises(UserError) as e:
        run_sweep(list(scenarios), [param], **KW)
    return str(e.value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -1e-6, "1us", None, True, 10**400])
def test_a_value_that_is_no_finite_non_negative_number_is_refused(value):
    msg = _refused(SweepParam("adjust.hop_latency", (value, 1e-6), "s"))
    assert msg.startswith("sweep parameter adjust.hop_latency value ")
    assert msg.endswith("must be a finite number >= 0 (in SI, s)")


def test_a_param_without_values_or_with_a_bare_number_is_refused():
    assert _refused(SweepParam("adjust.hop_latency", (), "s")) == \
        "sweep parameter adjust.hop_latency has no values"
    assert _refused(SweepParam("adjust.hop_latency", 1e-6, "s")) == \
        "sweep parameter adjust.hop_latency values must be a list of numbers, got 1e-06"


def test_a_fractional_count_is_refused_and_a_count_is_whole():
    assert _refused(SweepParam("fabric.planes", (1.5, 2.0))) == \
        "sweep parameter fabric.planes takes whole numbers, got 1.5"
    r = run_sweep(["lite-flat"], [SweepParam("fabric.planes", (16, 8))], **KW)
    # as parse_param reads it: whole, ordered, its unit and kind filled in
    assert r.params == (parse_param("fabric.planes=8,16", ["lite-flat"]),)
    assert r.params[0].integer and {row.x for row in r.rows} == {8.0, 16.0}


def test_a_unit_of_another_kind_is_refused_and_a_missing_one_filled():
    assert _refused(SweepParam("adjust.hop_latency", (1e-6,), "bytes/s")) == (
        "sweep parameter adjust.hop_latency is in s (SI), not 'bytes/s': give its values in s")
    p = run_sweep(["lite-flat"], [SweepParam("adjust.hop_latency", (1e-6,))], **KW).params[0]
    assert (p.unit, p.show(1e-6)) == ("s", "adjust.hop_latency=1us")


def test_a_path_that_is_no_name_is_refused():
    assert _refused(SweepParam(None, (1.0,))) == \
        "sweep parameter path must be a name such as adjust.hop_latency, got None"
    assert _refused(SweepParam("fabric.bogus", (1.0,))).startswith(
        "unknown parameter 'fabric.bogus' for scenario 'lite-flat'; known: "
        "'adjust.bandwidth_scale', 'adjust.hop_latency'")


def test_a_value_past_the_parameter_s_range_is_refused_not_a_sweep_of_dashes():
    # before: 'no point of the sweep can be built: ...', and a range across it ran with
    # '-' at the points past it
    assert _refused(SweepParam("adjust.hop_latency", (1e-6, 1.0), "s")) == \
        "adjust.hop_latency must be a number from 0 to 0.001 s, got 1.0"


def test_ten_million_values_are_refused_by_their_count_before_they_are_read():
    tracemalloc.start()
    try:
        msg = _refused(SweepParam("fabric.planes", range(1, 10**7 + 1)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert msg.startswith("sweep parameter fabric.planes: about 10,000,000 values, over the "
                          "limit of 1,000")
    assert peak < 20e6   # before: every value sorted first, about 1 GB


def test_a_comma_list_is_counted_before_it_is_split():
    text = "adjust.latency_scale=" + ",".join(["1"] * 10**6)
    tracemalloc.start()
    try:
        with pytest.raises(UserError, match="about 1,000,000 values, over the limit of 1,000"):
            parse_param(text, ["lite-flat"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6   # before: a million strings first, about 60 MB
