"""A number typed that is not zero but reads as zero (or as a subnormal float that has lost
its digits) is refused in one line naming it; zero spelt any way stays zero."""

import pytest

from compute.errors import UserError
from compute.units import parse_bandwidth, parse_bytes, parse_time
from compute.validate import SMALLEST_NUMBER, read_number


@pytest.mark.parametrize("text", ["1e-400", "-1e-400", "1e-310", "0.000001e-305"])
def test_read_number_refuses_underflow(text):
    with pytest.raises(UserError, match=rf"^x '{text}' is below the smallest number netmodel "
                                        r"reads \(2\.225e-308\)"):
        read_number("x", text)


@pytest.mark.parametrize("text", ["1e-400s", "1e-300ps", "5e-320"])
def test_parse_time_refuses_underflow(text):
    # 1e-300 ps is 1e-312 s: a subnormal, not the value typed
    with pytest.raises(UserError, match=rf"^time '{text}' is below the smallest number"):
        parse_time(text)


def test_other_parsers_refuse_underflow():
    with pytest.raises(UserError, match="below the smallest number"):
        parse_bandwidth("1e-400GB/s")
    with pytest.raises(UserError, match="below the smallest number"):
        parse_bytes("1e-400GB")


@pytest.mark.parametrize("text", ["0", "0e0", "-0", "0.0e-400", "+.0", "0e999"])
def test_zero_spelt_stays_zero(text):
    assert read_number("x", text) == 0.0
    assert parse_time(text) == 0.0
    assert parse_time(text + "us") == 0.0


def test_smallest_normal_is_read():
    assert SMALLEST_NUMBER == 2.0**-1022
    assert read_number("x", "2.2250738585072014e-308") == 2.0**-1022
    assert parse_time("1e-300s") == 1e-300
