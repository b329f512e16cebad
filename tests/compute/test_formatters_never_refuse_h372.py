"""A formatter prints any value; only the parsers refuse. format_bandwidth(-1536) raised a
UserError naming '-1.536kB/s', a spelling nobody typed (it read its own text back through
parse_bandwidth, which refuses a negative or infinite rate)."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.units import (
    format_bandwidth,
    format_bytes,
    format_quantity,
    format_time,
    parse_bandwidth,
)

FORMATTERS = [format_bandwidth, format_bytes, format_time,
              lambda v: format_quantity(v, "B/s"), lambda v: format_quantity(v, "s")]


@pytest.mark.parametrize("value, text", [(-1536, "-1.536kB/s"), (-112.5e9, "-112.5GB/s"),
                                         (math.inf, "inf"), (-math.inf, "-inf"),
                                         (math.nan, "nan"), (-0.5, "-0.5"), (0.0, "0.0")])
def test_format_bandwidth_prints_any_value(value, text):
    assert format_bandwidth(value) == text


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_no_formatter_raises(value):
    for fmt in FORMATTERS:
        assert isinstance(fmt(value), str)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1e300))
def test_a_negative_rate_is_its_size_with_a_minus(value):
    assert format_bandwidth(-value) == "-" + format_bandwidth(value)
    assert parse_bandwidth(format_bandwidth(value)) == value   # the positive one reads back
