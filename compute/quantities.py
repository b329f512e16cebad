"""A number with its unit, read exactly: split as typed, times its unit's exact factor, rounded once.

:func:`split_number` is the one reading of ``'<number><unit>'``; a unit's factor keeps its
exact ratio (:class:`ExactFactor`, :func:`exact_value`), and :func:`scaled` multiplies by it
exactly and rounds once, so one quantity written two ways is one float;
:func:`parse_quantity` reads a value with a unit from a dict of suffixes into SI. The
parsers of sizes, times and bandwidths are :mod:`compute.units`', which re-exports these
names.

>>> parse_quantity("1000ns", {"s": 1.0, "ns": 1e-9}, "t") == parse_quantity("1us", {"us": 1e-6}, "t")
True
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from fractions import Fraction
from functools import lru_cache

from compute.errors import UserError
from compute.validate import (
    NONFINITE_WORDS,
    NUMBER_PATTERN,
    NUMBER_RULE,
    ZeroAllowed,
    describe,
    is_flag,
    not_below_smallest,
    number_text,
    read_number,
)

__all__ = ["GREEK_MU", "MICRO_SIGN", "NUMBER_WITH_UNIT", "ExactFactor", "check_finite_positive",
           "exact_value", "parse_quantity", "scaled", "split_number"]

#: The micro of ``µs`` as the units are keyed (U+00B5 MICRO SIGN), and the Greek small
#: letter mu (U+03BC) that Unicode folds it to, which a Greek keyboard or the SI brochure's
#: text types: a unit written with the second is read as with the first (they look alike,
#: and '1μs' was refused as an unknown unit beside an allowed 'µs').
MICRO_SIGN, GREEK_MU = "\u00b5", "\u03bc"
#: A number (the one grammar, or a word of NONFINITE_WORDS, the longest tried first) and
#: its unit.
_NONFINITE = "|".join(rf"[-+]?{w}" for w in sorted(NONFINITE_WORDS, key=len, reverse=True))
NUMBER_WITH_UNIT = re.compile(rf"^\s*({NUMBER_PATTERN}|{_NONFINITE})"
                               r"\s*(\S*)\s*$",
                               re.IGNORECASE)


class ExactFactor(float):
    """A unit factor that is not a short decimal (1/3,600,000 USD/J per USD/kWh): the float
    nearest it, carrying the exact ratio (``exact``) that :func:`scaled` multiplies by.

    >>> f = ExactFactor(1, 3_600_000)
    >>> f == 1 / 3.6e6, f.exact
    (True, Fraction(1, 3600000))
    """

    exact: Fraction

    def __new__(cls, numerator: int | Fraction, denominator: int | Fraction = 1):
        exact = Fraction(numerator) / Fraction(denominator)
        self = super().__new__(cls, float(exact))
        self.exact = exact
        return self


def exact_value(factor: float) -> Fraction:
    """The exact value a unit factor stands for: an :class:`ExactFactor`'s ratio, else the
    decimal a float is written as (its repr: 1e-09 is 1/10**9, not the binary float nearest
    it; 2.0**30 and 0.125 are exact either way)."""
    exact = getattr(factor, "exact", None)
    return exact if exact is not None else Fraction(repr(float(factor)))


@lru_cache(maxsize=256)
def _factor_ratio(value: float, exact: Fraction | None) -> tuple[int, int]:
    """``(numerator, denominator)`` of a unit factor's exact value, once per factor."""
    q = exact if exact is not None else Fraction(repr(value))
    return q.numerator, q.denominator


#: A number of the one grammar, spaces around it taken (:func:`scaled` splits it).
_DECIMAL = re.compile(rf"^\s*({NUMBER_PATTERN})\s*$")


def scaled(number: str | int | float, factor: float) -> float:
    """``number`` (a decimal as typed, or a number read from a file) times a unit ``factor``,
    computed exactly and rounded once: the same quantity written with two prefixes is the
    same float (``1us``, ``1000ns`` and ``0.001ms`` are all 1e-06; ``1000 * 1e-9`` is
    1.0000000000000002e-06). A float ``number`` is read as its repr (the decimal a file
    wrote); non-finite numbers and ones too long to read exactly multiply as floats. The
    decimal and the factor become integer ratios and one integer division rounds (Python's
    int / int is correctly rounded), about 3 us a value.

    >>> scaled("1000", 1e-9), 1000 * 1e-9
    (1e-06, 1.0000000000000002e-06)
    >>> scaled("0.1", ExactFactor(1, 3_600_000)) == float(Fraction(1, 36_000_000))
    True
    """
    if isinstance(number, bool):
        raise TypeError("a unit's number is not a bool")
    approx = float(number) * float(factor)
    if not math.isfinite(approx) or approx == 0 or factor == 0:
        return approx   # refused by the caller, or 0 as typed: no rounding to repair
    text = number if isinstance(number, str) else \
        (str(number) if isinstance(number, int) else repr(float(number)))
    m = _DECIMAL.match(text)
    if not m:
        return approx
    mantissa, _, exp = m[1].lower().partition("e")
    sign = mantissa[0] if mantissa[0] in "+-" else ""
    whole, _, frac = mantissa.lstrip("+-").partition(".")
    try:   # past int's digit limit (4,300 digits), or rounding past the largest float
        num = int((whole or "0") + frac)
        shift = int(exp or 0) - len(frac)   # bounded: the float product is finite, not 0
        p, q = _factor_ratio(float(factor), getattr(factor, "exact", None))
        if shift >= 0:
            value = num * 10**shift * p / q
        else:
            value = num * p / (q * 10**-shift)
    except (ValueError, OverflowError):
        return approx   # as a float
    return -value if sign == "-" else value


def check_finite_positive(name: str, value: float, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float if it is finite and > 0 (>= 0 with ``allow_zero``).

    >>> check_finite_positive("size", 3)
    3.0
    >>> check_finite_positive("size", float("nan"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: size must be a finite number > 0, got nan
    """
    rule = ">= 0" if allow_zero else "> 0"
    if isinstance(value, str):
        if read_number(name, value) is None:   # the one grammar: no '1_0', no ' 1 0 '
            raise UserError(f"{name} must be a finite number {rule}, got {describe(value)}")
    elif is_flag(value) or not isinstance(value, numbers.Real):
        # numpy's bool too (float(np.True_) is 1.0); a Decimal, as every reader refuses it
        raise UserError(f"{name} must be a finite number {rule}, got {describe(value)}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise UserError(f"{name} must be a finite number {rule}, got {describe(value)}") from None
    ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        raise UserError(f"{name} must be a finite number {rule}, got {describe(value)}")
    return v + 0.0   # a -0.0 allowed is 0 (printed '-0'), as compute.validate.number has it


def split_number(text: str, what: str) -> tuple[str, str] | None:
    """``(number, unit)`` of ``'<number><unit>'`` as typed (the unit any word after the
    number, ``''`` if none; spaces around either taken), or None where ``text`` does not
    start with a number; a digit other than ASCII 0-9 is refused
    (:func:`compute.validate.ascii_digits`). The one reading of a number with a unit,
    for parsers whose units are not a dict of exact suffixes (:func:`parse_quantity`'s).

    >>> split_number("1.5 GiB", "size"), split_number("90min", "t"), split_number("x", "t")
    (('1.5', 'GiB'), ('90', 'min'), None)
    """
    m = NUMBER_WITH_UNIT.match(number_text(what, text))
    if m is not None and m.group(2)[:1] in (*"0123456789", ".", "+", "-"):
        # a second number after the first: '1 000MiB' spaced, '1.5.5GiB' or '1-2GB' not
        problem = "has a space inside its number" if m.end(1) < m.start(2) else \
            "is not one number before its unit"
        raise UserError(f"{what} {describe(text)} {problem} ({NUMBER_RULE})")
    return None if m is None else (m.group(1), m.group(2))


def parse_quantity(text: str | float, units: dict[str, float], what: str, *,
                   allow_zero: bool = False, rule: str | None = None) -> float:
    """Parse ``'<number><unit>'`` with a unit from ``units`` into SI; numbers pass through.
    ``rule``: what a refusal of a value that is no finite number above 0 (at least 0 with
    ``allow_zero``) says is allowed, where the caller holds a range (``a time from 1 us
    to 10 s``); by default ``a finite number > 0`` (``>= 0``)."""
    if is_flag(text):   # numpy's too
        raise UserError(f"{what} must be a number with a unit, got {describe(text)}")
    if isinstance(text, numbers.Real):   # the number itself (an int, a Fraction, numpy's)
        return check_finite_positive(what, text, allow_zero=allow_zero)
    if not isinstance(text, str):   # a Decimal or None: not read through its text
        raise UserError(f"{what} must be a number or a number with a unit as text, got "
                        f"{describe(text)}")
    m = split_number(text, what)
    named = ", ".join(u for u in units if u)
    if not m:
        if not named:  # a plain number: no unit is taken
            raise UserError(f"{what} {describe(text)} is not a number")
        raise UserError(f"{what} {describe(text)} is not a number with a unit (allowed units: "
                        f"{named})")
    number, unit = m
    if unit not in units and unit.replace(GREEK_MU, MICRO_SIGN) in units:
        unit = unit.replace(GREEK_MU, MICRO_SIGN)   # the same micro, another code point
    if unit not in units:
        allowed = f"allowed: {named}" if named else "it takes a plain number"
        raise UserError(f"{what} {describe(text)} has unknown unit {describe(unit)} ({allowed})")
    rule = rule or ("a finite number >= 0" if allow_zero else "a finite number > 0")
    value = not_below_smallest(what, text, number, scaled(number, units[unit]),
                               allowed=ZeroAllowed(rule) if allow_zero else rule)
    if math.isinf(value) and math.isfinite(float(number)):   # finite as typed, not in SI
        raise UserError(f"{what} {describe(text)} is too large: {number} x {float(units[unit]):g}"
                        f" (in SI units) passes the largest number, {sys.float_info.max:.1e}")
    ok = math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise UserError(f"{what} must be {rule}, got {describe(text)}")
    return value + 0.0   # '-0us' allowed is 0 (printed '-0'), as compute.validate.number has it
