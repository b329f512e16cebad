"""compute.validate.read_number on exponents past Decimal's range.

A whole-number reader took ``Decimal(text)``, which raises ``decimal.InvalidOperation``
for an exponent beyond about 10**18: ``--group 1e99999999999999999999``,
``ring:n=1e99999999999999999999`` and ``torus:dims=1e99999999999999999999x2`` ended in a
traceback (exit 1) instead of the parser's own one-line refusal. The value of such a
spelling is known without Decimal: zero when its digits are all 0, else a number of more
than 4,300 digits or a fraction, neither a whole number read.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.validate import read_number

HUGE = "99999999999999999999"   # 20 digits: past Decimal's largest exponent (999,999,999,999,999,999)


@pytest.mark.parametrize("text", [f"1e{HUGE}", f"1e+{HUGE}", f"-1e{HUGE}", f"1e-{HUGE}",
                                  f"1.5e{HUGE}", f".1e-{HUGE}", f"{'9' * 50}e{HUGE}"])
def test_a_huge_exponent_is_not_a_whole_number(text):
    assert read_number("n", text, whole=True) is None


@pytest.mark.parametrize("text", [f"0e{HUGE}", f"-0.0e-{HUGE}", f"+.0E{HUGE}", f"00.e{HUGE}"])
def test_zero_with_a_huge_exponent_is_zero(text):
    assert read_number("n", text, whole=True) == 0


def test_a_huge_exponent_is_a_float_for_the_callers_range():
    assert read_number("x", f"1e{HUGE}") == float("inf")
    with pytest.raises(UserError, match="below the smallest number netmodel reads"):
        read_number("x", f"1e-{HUGE}")   # not zero typed: not read as 0.0
    assert read_number("x", f"0e-{HUGE}") == 0.0


def test_the_fabric_builders_refuse_a_huge_exponent_in_one_line():
    from topologies import build

    for spec in (f"ring:n=1e{HUGE}", f"torus:dims=1e{HUGE}x2"):
        with pytest.raises(UserError) as err:
            build(spec)
        assert "\n" not in str(err.value) and f"1e{HUGE}" in str(err.value)


@pytest.mark.parametrize("text", ["1.5.5GiB", "1-2GB", "1+2GB", "2..5GB", "1e5.GB"])
def test_a_second_number_without_a_space_is_not_called_a_space(text):
    """compute.units.split_number said 'has a space inside its number' of every number
    followed by another, spaced or not: '1.5.5GiB' has no space."""
    from compute.units import parse_bytes

    with pytest.raises(UserError) as err:
        parse_bytes(text)
    assert "space" not in str(err.value).split(" (")[0]
    assert "is not one number before its unit" in str(err.value)


@pytest.mark.parametrize("text", ["1 000MiB", "1\t.5GB", "1 +2GB"])
def test_a_spaced_number_is_named_so(text):
    from compute.units import parse_bytes

    with pytest.raises(UserError, match="has a space inside its number"):
        parse_bytes(text)


@pytest.mark.parametrize("spec, message", [
    ("ring:n=gpu_8", "ring: n must be an integer, got 'gpu_8'"),
    ("torus:dims=a_4x4", "dims 'a_4x4' must be sides joined by 'x'"),
])
def test_a_name_with_an_underscore_is_not_called_grouped_digits(spec, message):
    """compute.validate.number_text refused any '_' beside a digit as a number's grouping:
    'ring:n=gpu_8' was told 'groups its digits with '_'; write gpu8, not gpu_8', advice
    that is still no number. The grouping message is for a text that starts with a number
    once its '_' are dropped ('1_000MiB', '16_'); a name gets its parser's own refusal."""
    from topologies import build

    with pytest.raises(UserError) as err:
        build(spec)
    assert message in str(err.value) and "groups its digits" not in str(err.value)


@pytest.mark.parametrize("text", ["x_1", "GB_1", "t_0"])
def test_a_unit_reader_calls_a_name_no_number(text):
    from compute.units import parse_time

    with pytest.raises(UserError) as err:
        parse_time(text)
    assert "is not a number with a unit" in str(err.value)


@pytest.mark.parametrize("text", ["1_000MiB", "16_", "_16", "1__6", "0_5e-1"])
def test_a_grouped_number_keeps_its_message(text):
    from compute.units import parse_bytes

    with pytest.raises(UserError, match="groups its digits with '_'; write "):
        parse_bytes(text)
