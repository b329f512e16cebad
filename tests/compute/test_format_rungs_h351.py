"""The readable formats of compute.units: a number under 1000 once rounded, on every rung
but the top one, and the round-trip format read back to the same float.

Before: the rung was chosen by the value before rounding, so 999.96e9 B/s printed
'1000 GB/s' and 999.96e-6 s '1000 us'; and the ladder stopped at TB/s, so 1e15 B/s (the
plausible range's top) printed '1000 TB/s' rather than '1 PB/s'.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from compute.units import format_bandwidth, format_quantity, format_time, parse_bandwidth

SCALES = {"PB/s": 1e15, "TB/s": 1e12, "GB/s": 1e9, "MB/s": 1e6, "kB/s": 1e3, "B/s": 1.0,
          "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
SHOWN = re.compile(r"^(-?[0-9.e+-]+) (\S+)$")


def _read(text: str) -> tuple[float, str]:
    m = SHOWN.match(text)
    assert m, text
    return float(m[1]), m[2]


@pytest.mark.parametrize(("value", "unit", "shown"), [
    (1e15, "B/s", "1 PB/s"),             # the top of link_bandwidth's plausible range
    (999.95e12, "B/s", "1 PB/s"),        # 999.95 rounds to 4 digits as 1000 (half-even on
    (999.96e9, "B/s", "1 TB/s"),         # the binary float 999.950000000000045...)
    (999.94e9, "B/s", "999.9 GB/s"),
    (999.96e3, "B/s", "1 MB/s"),
    (999.96, "B/s", "1 kB/s"),
    (2.5e15, "B/s", "2.5 PB/s"),
    (999.96e-6, "s", "1 ms"),
    (0.99996, "s", "1 s"),
    (999.96e-9, "s", "1 us"),
    (5e-10, "s", "0.5 ns"),
    (5000.0, "s", "5000 s"),             # seconds are the top rung of a time
])
def test_boundaries_by_hand(value, unit, shown):
    assert format_quantity(value, unit) == shown


@given(st.floats(min_value=1e-3, max_value=9.99e17, allow_nan=False))
@example(999.96e9)
@example(999.9999e3)
def test_rate_mantissa_under_1000_after_rounding(value):
    shown = format_quantity(value, "B/s")
    number, unit = _read(shown)
    assert 1 <= number < 1000 or unit == "B/s" and number < 1000, shown
    # the text is the value to 4 significant digits: within half a unit of the 4th digit
    assert abs(number * SCALES[unit] - value) <= 5e-4 * abs(number * SCALES[unit]) * 1.0000001


@given(st.floats(min_value=1e-12, max_value=999.0, allow_nan=False))
@example(999.96e-6)   # the boundaries a random float rarely hits: '1000 us' before
@example(999.9999e-9)
def test_time_mantissa_under_1000_after_rounding(value):
    number, unit = _read(format_time(value))
    assert number < 1000
    assert number >= 1 or unit == "ns"
    assert abs(number * SCALES[unit] - value) <= 5e-4 * abs(number * SCALES[unit]) * 1.0000001


@given(st.floats(min_value=1e-3, max_value=1e20, allow_nan=False))
def test_format_bandwidth_round_trips(value):
    assert parse_bandwidth(format_bandwidth(value)) == value


@given(st.integers(1, 999), st.sampled_from(["kB/s", "MB/s", "GB/s", "TB/s", "PB/s"]),
       st.sampled_from(["", ".5", ".25"]))
def test_a_short_rate_prints_as_written(whole, unit, frac):
    # a rate a person writes (1-999 and a short fraction, in one decimal prefix) comes back
    # in that prefix: the largest rung it reaches, the mantissa under 1000
    text = f"{whole}{frac}{unit}"
    assert format_bandwidth(parse_bandwidth(text)) == text


def test_format_bandwidth_rungs():
    assert format_bandwidth(1e15) == "1PB/s"
    assert format_bandwidth(2.5e15) == "2.5PB/s"
    assert format_bandwidth(125e3) == "125kB/s"   # link_bandwidth's least, 1 Mb/s
