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
    assert parse_bytes("1KB") == parse_bytes("1kB") == 1000
    assert parse_bytes("1KiB") == 1024
    assert parse_bytes("1PiB") == 2**50 and parse_bytes("0.5PiB") == 2**49  # 1 PiB: the most
    assert parse_bytes("8M") == 8 * 2**20  # nccl-tests -b 8M is binary
    assert parse_bytes("1K") == 1024 and parse_bytes("1G") == 2**30 and parse_bytes("1T") == 2**40
    assert parse_bytes("1P") == 2**50 and parse_bytes("0.5P") == 2**49  # the most, as 1PiB
    assert parse_bytes("512") == parse_bytes("512B") == 512
    assert parse_time("50ms") == pytest.approx(0.05)
    assert parse_bandwidth("400Gb/s") == 50e9  # bits per second to bytes per second
    assert parse_bandwidth("400Gbps") == 50e9
    assert parse_bandwidth("3.35TB/s") == pytest.approx(3.35e12)
    assert parse_bandwidth("50GBps") == parse_bandwidth("50GB/s") == 50e9
    assert parse_bandwidth("1GiB/s") == 2**30
    assert parse_bandwidth("100Kb/s") == parse_bandwidth("100kb/s") == 100e3 / 8


@pytest.mark.parametrize("bits", ["8b", "1Gb", "64Mb", "1kb", "1Kib", "8 bits"])
def test_a_size_in_bits_is_refused_not_read_as_bytes(bits):
    # 8b used to be 8 bytes while Gb/s was bits
    with pytest.raises(UserError, match="bits.*bytes: write B"):
        parse_bytes(bits)


@pytest.mark.parametrize("bad, why", [
    ("0.5B", "whole number of bytes from 1 B"), ("0.1", "whole number of bytes from 1 B"), ("1.5B", "whole number of bytes"),
    ("1.1KiB", "whole number of bytes"), ("8m", "unknown unit 'm'"), ("1k", "unknown unit"),
    ("1gb", "unknown unit"),
])
def test_sub_byte_fractional_and_ambiguous_sizes_are_refused(bad, why):
    with pytest.raises(UserError, match=why):
        parse_bytes(bad)


@pytest.mark.parametrize("bad", ["-1MiB", "0", "nan", "inf", "12 parsecs", "MiB", "",
                                 "1e400B", True, [1]])
def test_bad_sizes_name_the_value(bad):
    with pytest.raises(UserError) as exc:
        parse_bytes(bad)
    assert "size" in str(exc.value)


@pytest.mark.parametrize("bad", ["1GB", "8", "400Gbit/s", "1G/s", "1gb/s"])
def test_bandwidth_needs_a_rate_unit_it_knows(bad):
    if bad == "8":  # a bare number is bytes/s
        assert parse_bandwidth(bad) == 8.0
        return
    with pytest.raises(UserError, match="unknown unit"):
        parse_bandwidth(bad)


def test_huge_integers_and_booleans_are_user_errors():
    with pytest.raises(UserError, match="integer of 401 digits"):
        parse_bandwidth(10**400)
    with pytest.raises(UserError):
        parse_time(True)


def test_size_range_is_powers_of_two_inclusive():
    sizes = parse_size_range("1KiB:1GiB")
    assert len(sizes) == 21
    assert sizes[0] == 1024 and sizes[-1] == 2**30
    with pytest.raises(UserError, match="empty"):
        parse_size_range("1GiB:1KiB")


def test_size_range_with_a_tiny_factor_is_refused_before_it_is_built():
    # log(2**30 / 1) / log(1.000001) = 20.8 million sizes
    with pytest.raises(UserError, match="20,794,.* sizes, more than the limit of 100,000"):
        parse_size_range("1:1GiB:1.000001")
    # the limit is settable: floor(log(1024) / log(1.5)) + 1 = 18 sizes
    assert len(parse_size_range("1:1024:1.5")) == 18
    with pytest.raises(UserError, match="makes 18 sizes, more than the limit of 17"):
        parse_size_range("1:1024:1.5", max_sizes=17)


@given(st.integers(min_value=0, max_value=50))
def test_format_then_parse_roundtrips_powers_of_two(k):
    n = 2.0**k
    text = format_bytes(n).replace(" ", "")
    assert math.isclose(parse_bytes(text), n)


@given(st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False))
def test_format_bandwidth_reads_back_to_the_same_float(b):
    # spec strings are for people (450GB/s) and for cache keys: the float must survive
    from compute.units import format_bandwidth

    assert parse_bandwidth(format_bandwidth(b)) == b


def test_format_bandwidth_spells_catalog_rates_with_a_prefix():
    from compute.units import format_bandwidth

    assert [format_bandwidth(x) for x in (450e9, 112.5e9, 50e9, 4 * 450e9, 12.5e6)] == \
        ["450GB/s", "112.5GB/s", "50GB/s", "1.8TB/s", "12.5MB/s"]
