"""Hostile round 14 (compute): the one value-describer (compute.validate.describe, abb5f0e)
given hostile objects, and the number checks of the functions 2dfdf04..241f7fd and 21db010
touched (yield_model's package cost, price and margin; power's clock and idle share; MTP's
draft tokens and acceptance). Each test fails on the code before its fix: a RuntimeError,
TypeError or OverflowError raised through, a line of megabytes, a price of inf, or a value
in range refused with a message that names it as if it were out of range."""

from __future__ import annotations

import re
import warnings
from fractions import Fraction

import numpy as np
import pytest

from compute import power, yield_model
from compute.errors import UserError
from compute.roofline_options import RooflineOptions
from compute.validate import describe

#: numpy's own repr of the duration the messages show: np.timedelta64(5,'s') from
#: numpy 2, numpy.timedelta64(5,'s') before
TD5 = repr(np.timedelta64(5, "s"))


class RaisingRepr:
    def __repr__(self):
        raise RuntimeError("repr")


class MegabyteRepr:
    def __repr__(self):
        return "y " * 500_000


class RaisingDict(dict):
    def __repr__(self):
        raise RuntimeError("repr")


class RaisingFloat(float):
    def __float__(self):
        raise RuntimeError("float")


class RaisingShape:
    @property
    def shape(self):
        raise RuntimeError("shape")


class RaisingGetattr:
    def __getattr__(self, name):
        raise RuntimeError(name)


class RaisingLenStr(str):
    def __len__(self):
        raise RuntimeError("len")


class HugeShape:
    shape = (10**100,)
    dtype = "float64"


class NamedOddly:
    pass


NamedOddly.__name__ = "x\n" * 1000


def _short_line(text: str) -> None:
    assert isinstance(text, str) and text
    assert len(text) <= 70, len(text)
    assert not any(ord(c) < 0x20 or c in "\u2028\u2029\x85" for c in text), text


# -- describe: never raises, never more than one short line -------------------------------

@pytest.mark.parametrize("value,expected", [
    ([RaisingRepr()], "a list of 1 item"),         # RuntimeError from inside the list's repr
    ({RaisingRepr(): 1}, "a table of 1 key"),
    (RaisingDict(a=1), "a table of 1 key"),
    (RaisingFloat(2.0), "a RaisingFloat"),
    (RaisingShape(), "a RaisingShape"),
    (RaisingGetattr(), "a RaisingGetattr"),
    (RaisingLenStr("ab"), "a RaisingLenStr"),
    (HugeShape(), "an array of 1 dimension"),      # was 'an array of shape (1000...0,)'
    (NamedOddly(), "an object"),                   # was 2,002 characters of 'x\nx\n...'
    ("\u2028" * 100, "'" + "\\u2028" * 5 + "...'"),  # was 347 characters of escapes
], ids=["list", "table", "dict-repr", "float", "shape", "getattr", "str-len", "huge-shape",
        "type-name", "u2028"])
def test_describe_a_hostile_object_in_one_short_line(value, expected):
    shown = describe(value)
    assert shown == expected
    _short_line(shown)


@pytest.mark.parametrize("value,expected", [
    # a float that is not the value: a long double past a float's range is no 'inf', a
    # positive fraction below the smallest float no '0.0'
    # (numpy's own repr: np.longdouble('1e+4000') from numpy 2, 1e+4000 on 1.26)
    (np.longdouble("1e4000"), repr(np.longdouble("1e4000"))),
    (Fraction(3, 10**5000), "a Fraction"),
])
def test_describe_never_shows_a_float_that_is_not_the_value(value, expected):
    assert describe(value) == expected


def test_describe_a_long_container_without_its_repr():
    # a tuple of 10 million items: its whole repr (68 MB) was made to be measured
    assert describe(tuple(range(10_000_000))) == "a list of 10,000,000 items"
    assert describe([list(range(10**6))]) == "a list of 1 item"


# -- numbers of the package cost, price, margin and clock: refused by name ---------------

PACKAGE = [lambda v: yield_model.package_cost("Lite", packaging_cost=v),
           lambda v: yield_model.gpu_price("Lite", test_cost=v),
           lambda v: yield_model.margin("Lite", reference_price=v)]
CLOCK = [lambda v: power.gpu_at_clock("Lite", v),
         lambda v: power.gpu_at_clock("Lite", 1.2, idle_fraction=v),
         lambda v: power.overclocked_lite(v)]
AREA = [lambda v: yield_model.die_yield(v)]


def _one_short_line(call, value) -> None:
    with pytest.raises(UserError) as e:
        call(value)
    assert len(str(e.value)) < 200, len(str(e.value))


@pytest.mark.parametrize("call", PACKAGE + CLOCK + AREA)
@pytest.mark.parametrize("value", [RaisingRepr(), MegabyteRepr(), list(range(100_000))],
                         ids=["raising-repr", "megabyte-repr", "long-list"])
def test_a_hostile_object_is_one_short_line(call, value):
    # RuntimeError from the value's repr; lines of 1 MB and 600 kB
    _one_short_line(call, value)


@pytest.mark.parametrize("call", PACKAGE + AREA)
def test_a_timedelta_is_no_number(call):
    # TypeError from float(timedelta64) (numpy calls it an integer); an area of 5 s taken
    _one_short_line(call, np.timedelta64(5, "s"))


@pytest.mark.parametrize("call", CLOCK + AREA)
def test_an_integer_past_a_float_is_refused_by_name(call):
    # OverflowError from math.isfinite(10**400) (clock, idle share) and from numpy (area)
    _one_short_line(call, 10**400)


@pytest.mark.parametrize("kw", ["packaging_cost", "test_cost"])
def test_a_price_that_overflows_is_refused_not_inf(kw):
    # 1e308 USD of packaging: the package and its price were inf
    with pytest.raises(UserError, match=f"^the (package cost|price) of Lite overflows to "
                                        f"infinity at {kw}=1e\\+308; give values nearer"):
        yield_model.gpu_price("Lite", **{kw: 1e308})


@pytest.mark.parametrize("area", ["1e-4", np.timedelta64(5, "s"), [1e-4, "2"]],
                         ids=["text", "timedelta64", "list-with-text"])
def test_a_die_area_of_text_or_time_is_refused(area):
    # numpy cast them to floats: die_yield('1e-4') was 0.907, a 5 s area 1.6e-07
    with pytest.raises(UserError, match="^die area must be numbers, got "):
        yield_model.die_yield(area)


def test_an_area_past_any_wafer_has_yield_zero_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # numpy's 'overflow encountered in multiply'
        assert yield_model.die_yield(1e308) == 0.0
        with pytest.raises(UserError, match="die area must be finite and > 0, got " +
                           re.escape(repr(np.longdouble("1e4000")))):
            yield_model.gross_dies_per_wafer(np.longdouble("1e4000"))


@pytest.mark.parametrize("call,value,same", [
    # numpy's and fractions' numbers in range were refused as 'must be a finite number >= 0,
    # got np.int64(0)' (a value that is >= 0)
    (lambda v: power.gpu_at_clock("Lite", 1.2, idle_fraction=v).tdp, np.int64(0), 0),
    (lambda v: power.gpu_at_clock("Lite", v).tdp, Fraction(6, 5), 1.2),
    (lambda v: power.gpu_at_clock("Lite", v).tdp, np.float32(1.25), 1.25),
    (lambda v: power.overclocked_lite(v).name, Fraction(6, 5), 1.2),
    (lambda v: yield_model.package_cost("Lite", packaging_cost=v).total, Fraction(750), 750),
])
def test_a_number_in_range_of_another_type_is_taken(call, value, same):
    assert call(value) == call(same)


# -- MTP: draft tokens and acceptance -----------------------------------------------------

@pytest.mark.parametrize("value,expected", [(np.int32(2), 2), (np.uint8(1), 1)])
def test_mtp_tokens_of_another_type(value, expected):
    # 'must be a whole number from 0 (off) to 16, got 2.0'
    assert RooflineOptions(mtp_tokens=value).mtp_tokens == expected


@pytest.mark.parametrize("value", [np.float32(2.0), np.float16(1.0), Fraction(2)])
def test_mtp_tokens_whole_but_no_int(value):
    # taken before h744; a count given in code is an int (test_whole_counts_h744)
    with pytest.raises(UserError, match=r"to 16 \(an int\), got "):
        RooflineOptions(mtp_tokens=value)


@pytest.mark.parametrize("value,expected", [
    (np.int64(1), 1.0), (np.int64(0), 0.0), (Fraction(1, 2), 0.5), (np.uint8(1), 1.0)])
def test_mtp_acceptance_of_another_type(value, expected):
    # 'must be a probability from 0 to 1, got 1'
    o = RooflineOptions(mtp_tokens=1, mtp_acceptance=value)
    assert o.mtp_acceptance == expected and type(o.mtp_acceptance) is float


def test_mtp_tokens_timedelta_is_refused_by_name():
    # numpy registers timedelta64 as an integer; int() of it raised TypeError
    with pytest.raises(UserError, match=r"mtp_tokens\) must be a whole number from 0 \(off\) "
                                        r"to 16, got " + re.escape(TD5) + "$"):
        RooflineOptions(mtp_tokens=np.timedelta64(5, "s"))


@pytest.mark.parametrize("call,match", [
    (lambda v: power.gpu_power("Lite", v), "^unknown power state an array of shape"),
    (lambda v: yield_model.die_yield(1e-4, model=v), "^unknown yield model an array of shape"),
], ids=["power-state", "yield-model"])
def test_a_name_given_as_an_array_is_refused_by_name(call, match):
    # 'state not in POWER_STATES' asked numpy's ambiguous truth of the array: ValueError
    with pytest.raises(UserError, match=match):
        call(np.array(["idle", "decode"]))
