"""Reading a number a person or a file typed as text: one grammar, ASCII digits only, no
digit groups but the one spelling that asks for them, nothing below the smallest float.

A number typed without a unit (an option, a spec's ``key=value``, a scenario's or a sweep's
string, an environment variable, a CSV cell) is read by :func:`read_number`, by the grammar
:data:`NUMBER_PATTERN`; :func:`compute.units.split_number` reads the same grammar before a
unit. Every reader of numbers from text refuses a digit other than ASCII 0-9 and digits
grouped by ``_`` (:func:`number_text`), and a float below :data:`SMALLEST_NUMBER` that does
not spell zero (:func:`not_below_smallest`); :func:`read_grouped` also reads thousands
grouped by commas (``--cluster-gpus 131,072``). A text that is no such number reads as None,
for the caller to refuse with its own range.

>>> read_number("--rate", "1e3"), read_number("--tp", "16", whole=True), read_number("n", "abc")
(1000.0, 16, None)
>>> read_number("--rate", "1e-400")
Traceback (most recent call last):
...
compute.errors.UserError: --rate '1e-400' is below the smallest number netmodel reads (2.225e-308); write 0 for zero
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from typing import Literal, overload

from compute.describe import describe
from compute.errors import UserError, one_line

__all__ = ["GROUPED_PATTERN", "GROUPED_RULE", "NONFINITE_WORDS", "NUMBER_PATTERN", "NUMBER_RULE",
           "SMALLEST_NUMBER", "ZeroAllowed", "ascii_digits", "below_smallest",
           "below_smallest_words", "not_below_smallest", "number_text", "past_most_digits",
           "read_grouped", "read_number", "spells_zero", "ungrouped"]


def ascii_digits(what: str, text: str) -> str:
    """``text`` (a number as a person or a file typed it) if every decimal digit in it is an
    ASCII ``0``-``9``; else a :class:`UserError` naming ``what``, the value and the first
    other digit. The one rule of every parser of numbers from text (units, fabric specs,
    options, CSV cells, environment variables): Python's ``int``, ``float`` and ``\\d``
    read any script's decimal digits (Unicode category Nd), so ``'١٠٠GB/s'`` and a
    fullwidth ``'１００'`` were read as 100, a number that reads back as something else
    passed unseen. Characters they do not read as digits (a superscript ``'²'``, the
    ``µ`` of ``µs``) are left to the parser, which refuses or reads them as before.

    >>> ascii_digits("size", "64MiB")
    '64MiB'
    >>> ascii_digits("--group", "\uff11\uff16")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --group '１６' has the digit '１' (FULLWIDTH DIGIT ONE); a number is written with the ASCII digits 0-9
    """
    if text.isascii():
        return text
    for c in text:
        if c.isdecimal() and not c.isascii():
            raise UserError(f"{what} {describe(text)} has the digit {c!r} "
                            f"({unicodedata.name(c, f'U+{ord(c):04X}')}); a number is written "
                            f"with the ASCII digits 0-9")
    return text


#: The grammar of a number typed by a person (an option, a spec's ``key=value``, a scenario's
#: or a sweep's string, an environment variable, a CSV cell, a fabric file's string value):
#: ASCII digits with an optional sign, an optional fraction (``.5``, ``5.``) and an optional
#: exponent (``1e3``). The one grammar: :func:`read_number` reads it, and
#: :func:`compute.units.split_number` reads it before a unit.
NUMBER_PATTERN = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_NUMBER_TEXT = re.compile(NUMBER_PATTERN)

#: The words for a number that is not finite, read (any case, an optional sign) by
#: :func:`read_number` and :func:`compute.units.split_number` alike, for the caller's range to
#: refuse by name.
NONFINITE_WORDS = ("nan", "inf", "infinity")

#: The grammar in words, for refusals.
NUMBER_RULE = ("a number is ASCII digits 0-9 with an optional sign, fraction and exponent "
               "(16, +16, -0.5, .5, 1e3), no '_' and no spaces inside")

_UNDERSCORE = re.compile(r"[0-9.]_|_[0-9.]")
#: A text that starts with a number (once its '_' are dropped): the underscore refusal is
#: for one that groups a number's digits ('1_000MiB'), not for a name ('gpu_8').
_LEADING_NUMBER = re.compile(rf"\s*{NUMBER_PATTERN}")


def number_text(what: str, text: str) -> str:
    """``text`` if its digits are ASCII (:func:`ascii_digits`) and no ``_`` groups them;
    else a :class:`UserError` naming ``what`` and the value. Python's ``int`` and ``float``
    read ``'1_000'`` as 1000 and the number-then-unit reader stopped at the ``_`` (``'1_000MiB'``
    had an unknown unit ``'_000MiB'``): a number is written without separators everywhere.

    >>> number_text("size", "64MiB")
    '64MiB'
    >>> number_text("--batch", "1_000")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --batch '1_000' groups its digits with '_'; write 1000, not 1_000 (a number is ASCII digits 0-9 with an optional sign, fraction and exponent (16, +16, -0.5, .5, 1e3), no '_' and no spaces inside)
    """
    ascii_digits(what, text)
    if "_" in text and _UNDERSCORE.search(text) \
            and _LEADING_NUMBER.match(text.replace("_", "")):
        raise UserError(f"{what} {describe(text)} groups its digits with '_'; write "
                        f"{one_line(text.replace('_', ''))[:40]}, not {one_line(text)[:40]} "
                        f"({NUMBER_RULE})")
    return text


#: Most digits a whole number typed may have (Python's int() refuses past 4,300).
_MOST_DIGITS = 4300

#: The smallest magnitude a number other than zero may read as: the smallest normal float
#: (2.2e-308). A float below it has lost digits (a subnormal) or is 0.
SMALLEST_NUMBER = 2.2250738585072014e-308


def spells_zero(text: str) -> bool:
    """Whether a number's text (:data:`NUMBER_PATTERN`) spells zero: no digit other than 0
    before its exponent (``'0'``, ``'-0.0'``, ``'0e5'``; not ``'1e-400'``).

    >>> spells_zero("-0.0e7"), spells_zero("1e-400"), spells_zero(".10")
    (True, False, False)
    """
    return not text.strip().lower().partition("e")[0].strip("+-.0")


def not_below_smallest(what: str, typed: object, number: str, value: float, *,
                       allowed: str | None = None) -> float:
    """``value`` (read from the text ``number``, the number of ``typed``) unless it is below
    :data:`SMALLEST_NUMBER` though ``number`` does not spell zero (``'1e-400'`` reads as 0.0,
    ``'1e-310'`` as a float that has lost its digits): then a :class:`UserError` naming
    ``what`` and ``typed``, said by :func:`below_smallest_words` (``allowed``: the range of
    a value that may not be 0, in its parser's words). Zero spelt (``'0'``, ``'0e0'``,
    ``'-0'``) stays zero.

    >>> not_below_smallest("x", "0e0", "0e0", 0.0)
    0.0
    >>> not_below_smallest("x", "1e-400s", "1e-400", 0.0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: x '1e-400s' is below the smallest number netmodel reads (2.225e-308); write 0 for zero
    >>> not_below_smallest("--tp", "1e-320", "1e-320", 1e-320, allowed="a whole number >= 1")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --tp '1e-320' is below the smallest number netmodel reads (2.225e-308), and --tp may not be 0: it must be a whole number >= 1
    """
    if below_smallest(number, value):
        raise UserError(f"{what} {describe(typed)} is {below_smallest_words(what, allowed)}")
    return value


class ZeroAllowed(str):
    """Words of a range that holds 0 (:func:`compute.validate.range_words` gives them so): a number below
    :data:`SMALLEST_NUMBER` is told the range (:func:`below_smallest_words`), not that it
    may not be 0."""

    __slots__ = ()


def below_smallest_words(what: str, allowed: str | None = None) -> str:
    """What a number below :data:`SMALLEST_NUMBER` is told, after its name and text: what
    the value ``what`` must be (``allowed``: its range in the words of the parser that
    knows it, as its own refusal says it), that it may not be 0 where the range leaves 0
    out; where no range is given, to write 0 for zero.

    >>> below_smallest_words("rate", "a number >= 1e-09 requests/s")
    'below the smallest number netmodel reads (2.225e-308), and rate may not be 0: it must be a number >= 1e-09 requests/s'
    >>> from compute.validate import range_words
    >>> below_smallest_words("step_overhead_s", range_words(0, 1, unit="s"))
    'below the smallest number netmodel reads (2.225e-308); step_overhead_s must be a number from 0 to 1 s'
    """
    head = f"below the smallest number netmodel reads ({SMALLEST_NUMBER:.4g})"
    if allowed is None:
        return f"{head}; write 0 for zero"
    if isinstance(allowed, ZeroAllowed):
        return f"{head}; {what} must be {allowed}"
    return f"{head}, and {what} may not be 0: it must be {allowed}"


def below_smallest(number: str, value: float) -> bool:
    """Whether ``value``, read from the text ``number``, is below :data:`SMALLEST_NUMBER`
    though ``number`` does not spell zero (:func:`spells_zero`): the one test of
    :func:`not_below_smallest` and of the data files' float reader
    (:func:`compute.config_files.finite_float`).

    >>> below_smallest("1e-400", 0.0), below_smallest("0.0e-400", 0.0), below_smallest("1e-300", 1e-300)
    (True, False, False)
    """
    return abs(value) < SMALLEST_NUMBER and not spells_zero(number)


@overload
def read_number(what: str, text: str, *, whole: Literal[True],
                allowed: str | None = ...) -> int | None: ...
@overload
def read_number(what: str, text: str, *, whole: Literal[False] = ...,
                allowed: str | None = ...) -> float | None: ...
def read_number(what: str, text: str, *, whole: bool = False,
                allowed: str | None = None) -> int | float | None:
    """The number ``text`` spells by :data:`NUMBER_PATTERN` (spaces around it taken), a
    float, or with ``whole`` an int (``'1e3'`` and ``'16.0'`` are whole, ``'1.5'`` and
    ``'1e-3'`` are not); None where ``text`` is not such a number (the caller refuses it
    with its own range: ``'abc'``, ``'1 000'``, a whole parser's ``'1.5'``, ``'inf'`` or
    one of more than 4,300 digits, int()'s limit). The words ``nan`` and ``inf`` are floats
    (as :func:`compute.units.split_number` reads them), for the caller's range to refuse. A digit other than ASCII 0-9 and digits grouped by ``'_'`` are refused here
    (:func:`number_text`). A float below :data:`SMALLEST_NUMBER` that does not spell zero
    is refused (:func:`not_below_smallest`; ``allowed``: the caller's range, where 0 is not
    in it). The one reader of numbers typed without a unit: the CLI's options, spec values,
    environment variables, CSV cells, sweep values.

    >>> read_number("n", "+16", whole=True), read_number("n", "1e1", whole=True), read_number("n", "1.5", whole=True)
    (16, 10, None)
    >>> read_number("x", ".5"), read_number("x", "5."), read_number("x", " -2e-1 "), read_number("x", "1e")
    (0.5, 5.0, -0.2, None)
    """
    s = number_text(what, text).strip()
    if not whole and s.lower().lstrip("+-") in NONFINITE_WORDS:
        return float(s)   # not a number to any range: the caller's check names it
    if not _NUMBER_TEXT.fullmatch(s):
        return None
    if not whole:
        return not_below_smallest(what, text, s, float(s), allowed=allowed)
    try:
        d = Decimal(s)
    except InvalidOperation:   # an exponent past Decimal's (10**18): 0, or not a whole number
        return 0 if spells_zero(s) else None   # of <= 4,300 digits
    if (d and d.adjusted() >= _MOST_DIGITS) or d != d.to_integral_value():
        return None
    return int(d)


def past_most_digits(text: str) -> bool:
    """Whether ``text`` spells (by :data:`NUMBER_PATTERN`) a whole number of more digits
    than :func:`read_number` reads (4,300, int()'s limit; an exponent past Decimal's too):
    a whole number, but too large, not ``'not a whole number'``.

    >>> past_most_digits("9" * 5000), past_most_digits("1e5000"), past_most_digits("1e4299")
    (True, True, False)
    >>> past_most_digits("1.5"), past_most_digits("abc"), past_most_digits("1e-5000")
    (False, False, False)
    """
    s = str(text).strip()
    if not _NUMBER_TEXT.fullmatch(s) or spells_zero(s):
        return False
    try:
        d = Decimal(s)
    except InvalidOperation:   # an exponent past Decimal's: whole where positive
        return s.lower().rpartition("e")[2].lstrip("+").isdigit()
    return d.adjusted() >= _MOST_DIGITS


#: A whole number with its thousands grouped by commas (``131,072``, ``1,000,000``): a
#: first group of 1-3 digits not starting with 0, then groups of three. The one grouped
#: spelling, read by :func:`read_grouped` (``--cluster-gpus``); any other reader takes
#: :data:`NUMBER_PATTERN` only. ``3,2`` and ``32,64`` (a list) are no such number, nor is
#: ``0,128`` or ``007,000`` (a first group of zeros: ``0,128`` read as 128 before).
GROUPED_PATTERN = r"[1-9][0-9]{0,2}(?:,[0-9]{3})+"
_GROUPED = re.compile(GROUPED_PATTERN)
#: Groups of three digits after a first of one to three: grouped but for a first 0.
_GROUPED_LOOSE = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")

#: The grouped spelling in words, for refusals.
GROUPED_RULE = "digits, thousands grouped by commas: 131,072"


def ungrouped(text: str) -> str | None:
    """``text`` without the commas grouping its thousands (``'20,000,000'`` ->
    ``'20000000'``) where it is so grouped (:data:`GROUPED_PATTERN`), else None: what a
    refusal of it as no number tells the user to write, every reader but
    :func:`read_grouped` taking :data:`NUMBER_PATTERN` only, though help and messages write
    large numbers grouped (``default 20,000,000``).

    >>> ungrouped("20,000,000"), ungrouped("2,4"), ungrouped("1e3")
    ('20000000', None, None)
    """
    s = str(text).strip()
    return s.replace(",", "") if _GROUPED.fullmatch(s) else None


def read_grouped(what: str, text: str) -> int | None:
    """The whole number ``text`` spells by :data:`NUMBER_PATTERN` (:func:`read_number`) or
    with its thousands grouped by commas (:data:`GROUPED_PATTERN`); None where neither (the
    caller refuses it with its own range). Groups of three after a first group starting
    with 0 (``0,128``, ``007,000``) are refused here, naming ``what``, the value and its
    spelling without the zeros.

    >>> read_grouped("n", "131,072"), read_grouped("n", "1e3"), read_grouped("n", "3,2")
    (131072, 1000, None)
    >>> read_grouped("--cluster-gpus", "0,128")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: --cluster-gpus '0,128' has a first group starting with 0; write 128 (digits, thousands grouped by commas: 131,072; a first group of 1-3 digits not starting with 0)
    """
    s = number_text(what, text).strip()
    if _GROUPED.fullmatch(s):
        return int(s.replace(",", ""))
    if _GROUPED_LOOSE.fullmatch(s):
        raise UserError(f"{what} {describe(text)} has a first group starting with 0; "
                        f"write {int(s.replace(',', '')):,} ({GROUPED_RULE}; a first group "
                        f"of 1-3 digits not starting with 0)")
    return read_number(what, text, whole=True)
