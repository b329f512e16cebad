"""The number-then-unit reader and the plain reader take the same words for a number that is
not finite: split_number read 'inf' but not 'infinity' ('infinity' had an unknown unit
'inity'), while read_number read both. Then the callers' finite-number refusal applies."""

import math

import pytest

from compute.errors import UserError
from compute.units import parse_bandwidth, parse_bytes, parse_time, split_number
from compute.validate import read_number

WORDS = [f"{sign}{word}" for sign in ("", "+", "-")
         for word in ("nan", "inf", "infinity", "Infinity", "INF", "NaN")]


@pytest.mark.parametrize("text", WORDS)
def test_both_readers_take_the_same_words(text):
    v = read_number("x", text)
    assert v is not None and not math.isfinite(v)
    assert split_number(text, "x") == (text, "")
    assert split_number(f"{text}GB", "x") == (text, "GB")


@pytest.mark.parametrize("parse, what", [(parse_bytes, "size"), (parse_time, "time"),
                                         (parse_bandwidth, "bandwidth")])
@pytest.mark.parametrize("text", ["infinity", "-Infinity", "infinity GB"])
def test_infinity_is_refused_as_not_finite(parse, what, text):
    if parse is not parse_bytes:
        text = text.replace("GB", "s" if parse is parse_time else "GB/s")
    # a size states its whole range (1 B to 1 PiB) as every other refusal of a size does
    said = ("a whole number of bytes from 1 B to 1 PiB" if parse is parse_bytes
            else "a finite number")
    with pytest.raises(UserError, match=rf"^{what} must be {said} .*got '{text}'$"):
        parse(text)
