"""netmodel/study's and the CLI's remaining parsers of numbers from text take the ASCII
digits 0-9 only (compute.validate.ascii_digits), as d7bce4c made every other boundary:
int(), float() and ``\\d`` read any script's decimal digits, so a spare count '٨' was 8
spares, a horizon '٢y' two years, ``--rate host=٠.١`` 0.1 per hour, ``costs --groups 2,٤``
a group of 4, and ``Scenario.with_param('adjust.latency_scale', '２')`` a scale of 2."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.study.availability import parse_spares
from netmodel.study.reliability_catalog import HOUR, parse_duration
from netmodel.study.scenario_catalog import get_scenario
from tests.netmodel.cli_helpers import one_line_error, run_cli

#: Every decimal digit (Unicode category Nd) but ASCII's: what int() and float() read.
OTHER_DIGITS = [chr(c) for c in range(sys.maxunicode + 1)
                if unicodedata.category(chr(c)) == "Nd" and c > 127]


def _refused(call, digit):
    with pytest.raises(UserError, match=f"has the digit '{digit}'.*ASCII digits 0-9"):
        call()


@given(st.sampled_from(OTHER_DIGITS))
def test_study_parsers_refuse_every_other_digit(d):
    _refused(lambda: parse_spares(d, 128), d)
    _refused(lambda: parse_spares(f"1{d}%", 128), d)
    _refused(lambda: parse_duration(f"{d}y"), d)
    _refused(lambda: parse_duration(f"9{d}min", "--detection", allow_zero=True), d)
    _refused(lambda: get_scenario("lite-flat").with_param("adjust.latency_scale", d), d)


def test_ascii_spellings_still_read_by_hand():
    # 2% of 16,384 GPUs is 327.68, rounded up: 328 spares
    assert parse_spares("8", 128) == 8 and parse_spares("2%", 16384) == 328
    # a Julian year is 8,766 h; a unit's case is free (as before: 1Y, 90MIN)
    assert parse_duration("1y") == parse_duration("1Y") == 8766 * HOUR
    assert parse_duration("90MIN") == parse_duration("1.5 h") == 5400.0
    assert parse_duration(" .5d ") == 43200.0
    with pytest.raises(UserError, match=r"'3 fortnights' is not a duration \(a number with "
                                        r"one of the units s, min, h, d, w, y\)"):
        parse_duration("3 fortnights")
    with pytest.raises(UserError, match="not a duration"):
        parse_duration("²y")   # not a digit int() reads: refused as before
    s = get_scenario("lite-flat")
    assert s.with_param("adjust.latency_scale", "2").adjust.latency_scale == 2.0
    with pytest.raises(UserError, match="adjust.latency_scale value 'x' is not a number"):
        s.with_param("adjust.latency_scale", "x")   # was a ValueError from float()


AVAIL = "availability --scenario lite-flat --model Llama-3-70B --spares 8 -q --trials 10"
CASES = [
    # (command line with {d} where the odd digit goes, the name, the value shown)
    (AVAIL.replace("--spares 8", "--spares {d}"), "spares", "{d}"),
    (AVAIL.replace("--spares 8", "--spares {d}%"), "spares", "{d}%"),
    (f"{AVAIL} --horizon {{d}}y", "horizon", "{d}y"),
    (f"{AVAIL} --detection {{d}}min", "--detection", "{d}min"),
    (f"{AVAIL} --warmup {{d}}s", "--warmup", "{d}s"),
    (f"{AVAIL} --repair-time host={{d}}d", "--repair-time host", "{d}d"),
    (f"{AVAIL} --rate host=0.{{d}}", "--rate host", "0.{d}"),
    (f"{AVAIL} --rate host={{d}}e-5/h", "--rate host", "{d}e-5/h"),
    ("costs --fabric single-switch:n=8 --groups 2,{d} --sizes 1KiB", "--groups", "2,{d}"),
]


@pytest.mark.parametrize("digit", ["２", "٢"])
@pytest.mark.parametrize(("line", "name", "shown"), CASES)
def test_command_line_refuses_other_scripts_digits(line, name, shown, digit):
    r = run_cli(line.format(d=digit).split())
    one_line_error(r, f"{name} '{shown.format(d=digit)}' has the digit '{digit}'",
                   "a number is written with the ASCII digits 0-9")


def test_command_line_ascii_run():
    r = run_cli(f"{AVAIL} --horizon 1y --detection 2min --rate host=2e-5/h".split())
    assert r.exit_code == 0, r.output
    r = run_cli("costs --fabric single-switch:n=8 --groups 2,4 --sizes 1KiB".split())
    assert r.exit_code == 0, r.output
    # a header and one row per group size (LL at 1 KiB)
    assert [line.split(",")[3] for line in r.output.splitlines()[1:]] == ["2", "4"]
