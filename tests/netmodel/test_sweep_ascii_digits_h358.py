"""A sweep's unitless values and its LO:HI:N count take the ASCII digits 0-9 only
(compute.validate.ascii_digits): sweep._value read a plain parameter with float() and N with
int(), which read any script's decimal digits ('1,٢' swept 1 and 2)."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.study.sweep import parse_param
from tests.netmodel.cli_helpers import one_line_error, run_cli

OTHER_DIGITS = [chr(c) for c in range(sys.maxunicode + 1)
                if unicodedata.category(chr(c)) == "Nd" and c > 127]


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(OTHER_DIGITS))
def test_plain_values_and_n_refuse_every_other_digit(d):
    for text, named in ((f"adjust.latency_scale=1,{d}", "adjust.latency_scale value"),
                        (f"fabric.radix=6{d}", "fabric.radix value"),
                        (f"adjust.latency_scale=1:2:{d}",
                         "sweep parameter adjust.latency_scale: N")):
        with pytest.raises(UserError, match=f"{named} '.*' has the digit '{d}'"):
            parse_param(text, ["lite-flat"])


def test_ascii_values_by_hand():
    assert parse_param("adjust.latency_scale=1,2", ["lite-flat"]).values == (1.0, 2.0)
    # 3 log-spaced points from 1 to 4: 1, 2, 4
    assert parse_param("adjust.latency_scale=1:4:3", ["lite-flat"]).values == \
        pytest.approx((1.0, 2.0, 4.0))


@pytest.mark.parametrize("digit", ["２", "٢"])
def test_command_line(digit):
    r = run_cli(["sweep", "--scenarios", "lite-flat", "--model", "Llama-3-70B", "--param",
                 f"adjust.latency_scale=1,{digit}", "-q", "--no-plot"])
    one_line_error(r, f"adjust.latency_scale value '{digit}' has the digit '{digit}'",
                   "a number is written with the ASCII digits 0-9")
