import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from compute.units import (
    format_bytes,
    parse_bandwidth,
    parse_bytes,
    parse_size_range,
    parse_time,
)


def test_binary_and_decimal_prefixes():
    assert parse_bytes("1GiB") == 2**30
    assert parse_bytes("1GB") == 1e9
    assert parse_bytes("8M") == 8 * 2**20  # nccl-tests -b 8M is binary
    assert parse_time("50ms") == pytest.approx(0.05)
    assert parse_bandwidth("400Gb/s") == 50e9  # bits per second to bytes per second
    assert parse_bandwidth("3.35TB/s") == pytest.approx(3.35e12)


@pytest.mark.parametrize("bad", ["-1MiB", "0", "nan", "inf", "12 parsecs", "MiB", ""])
def test_bad_sizes_name_the_value(bad):
    with pytest.raises(UserError) as exc:
        parse_bytes(bad)
    assert "size" in str(exc.value)


def test_size_range_is_powers_of_two_inclusive():
    sizes = parse_size_range("1KiB:1GiB")
    assert len(sizes) == 21
    assert sizes[0] == 1024 and sizes[-1] == 2**30
    with pytest.raises(UserError, match="empty"):
        parse_size_range("1GiB:1KiB")


@given(st.integers(min_value=0, max_value=50))
def test_format_then_parse_roundtrips_powers_of_two(k):
    n = 2.0**k
    text = format_bytes(n).replace(" ", "")
    assert math.isclose(parse_bytes(text), n)
