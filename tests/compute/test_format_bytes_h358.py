"""compute.units.format_bytes: the rung is chosen after rounding, up to PiB, so the number is
in [1, 1024) on every rung but the top (as format_quantity/format_time have it for 1000)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.units import format_bytes, parse_bytes

# the binary prefixes by hand: 2**(10 k)
SCALES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


def _read(text: str) -> tuple[float, str]:
    number, unit = text.split(" ")
    return float(number), unit


@pytest.mark.parametrize(("n", "shown"), [
    (2**50, "1 PiB"),                  # was '1024 TiB': no PiB rung
    (3 * 2**50, "3 PiB"),              # was '3072 TiB'
    (2**60, "1024 PiB"),               # the top rung takes any mantissa
    (1048575, "1023.999 KiB"),         # 2**20 - 1: was '1024 KiB' (6 digits rounded up)
    (2**30 - 1, "1 GiB"),              # 0.999999999 GiB reads 1 at 6 digits: the rung above
    (1023, "1023 B"),
    (1024, "1 KiB"),
    (1536, "1.5 KiB"),
    (0, "0 B"),
    (1023.999, "1023.999 B"),          # KiB reads 0.999999: 7 digits, not '1024 B'
])
def test_boundaries_by_hand(n, shown):
    assert format_bytes(n) == shown


@given(st.floats(min_value=1.0, max_value=2.0**62, allow_nan=False))
def test_mantissa_under_1024_on_every_rung_but_the_top(n):
    m, unit = _read(format_bytes(n))
    assert m >= 1
    assert m < 1024 or unit == "PiB"
    # and it is the size, to the 6 (7 just under a rung) significant digits shown
    assert math.isclose(m * SCALES[unit], n, rel_tol=5e-6)


@given(st.integers(min_value=1, max_value=1023), st.sampled_from(list(SCALES)))
def test_whole_multiples_of_a_prefix_print_as_written_and_read_back(m, unit):
    n = m * SCALES[unit]
    text = format_bytes(n)
    assert text == f"{m} {unit}"
    if n <= 2**50:   # parse_bytes' largest message, 1 PiB
        assert parse_bytes(text.replace(" ", "")) == n


@given(st.integers(min_value=1, max_value=2**20))
def test_pib_multiples_print_on_the_top_rung(m):
    assert format_bytes(m * 2**50) == f"{m:g} PiB"
