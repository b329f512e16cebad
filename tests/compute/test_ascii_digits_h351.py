"""Numbers from text take the ASCII digits 0-9 only (compute.validate.ascii_digits).

Python's ``int``, ``float`` and ``re``'s ``\\d`` read every script's decimal digits, so
'１００GB/s' (fullwidth) and '١٠٠GB/s' (Arabic-Indic) were read as 100 GB/s, a fabric spec
'fat-tree:k=８' built k=8, and a CSV cell '٢' was 2. Every parser of numbers at the boundary
now refuses them in one line naming the value and the allowed digits.
"""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from compute.units import (
    check_finite_positive,
    parse_bandwidth,
    parse_bytes,
    parse_in_unit,
    parse_size_range,
    parse_time,
)

#: Every decimal digit (Unicode category Nd) that is not ASCII: what int() and float() read.
OTHER_DIGITS = [chr(c) for c in range(sys.maxunicode + 1)
                if unicodedata.category(chr(c)) == "Nd" and c > 127]


def _parsers():
    return [
        lambda t: parse_bandwidth(f"{t}00GB/s"),
        lambda t: parse_bytes(f"{t}MiB"),
        lambda t: parse_time(f"{t}ms"),
        lambda t: parse_in_unit(f"{t}USD/kWh", "USD/kWh", "cost.electricity_price"),
        lambda t: parse_size_range(f"1KiB:{t}MiB"),
        lambda t: parse_size_range(f"1KiB:8KiB:{t}"),
        lambda t: check_finite_positive("factor", t),
    ]


@pytest.mark.parametrize("parse", _parsers())
@given(digit=st.sampled_from(OTHER_DIGITS))
def test_every_other_scripts_digit_refused(parse, digit):
    # the digit's value is 1..9 or 0: all were read as that ASCII digit before
    with pytest.raises(UserError, match=r"has the digit .* a number is written with the ASCII "
                                        r"digits 0-9"):
        parse(digit)


def test_ascii_digits_still_read():
    # each parser above with the ASCII '2', by hand
    expected = [200e9, 2 * 2**20, 2e-3, 2 / 3.6e6, [2.0**k for k in range(10, 22)],
                [1024.0, 2048.0, 4096.0, 8192.0], 2.0]
    for parse, want in zip(_parsers(), expected, strict=True):
        assert parse("2") == want


def test_the_message_names_the_value_and_the_digit():
    with pytest.raises(UserError) as e:
        parse_bandwidth("１００GB/s", "fabric.bandwidth")
    assert str(e.value) == ("fabric.bandwidth '１００GB/s' has the digit '１' (FULLWIDTH DIGIT "
                            "ONE); a number is written with the ASCII digits 0-9")
    with pytest.raises(UserError, match=r"'٢' \(ARABIC-INDIC DIGIT TWO\)"):
        parse_bytes("٢MiB")


def test_only_decimal_digits_are_the_rule():
    from compute.validate import ascii_digits

    # a superscript is no digit int() reads: the parser's own refusal names it, as before
    assert ascii_digits("x", "2²") == "2²"
    with pytest.raises(UserError, match="unknown unit '²'"):
        parse_time("2²")
    assert parse_time("50µs") == 50e-6   # µ is not a digit: the unit stays
    assert ascii_digits("x", "1e-3") == "1e-3"


def test_environment_limits(monkeypatch):
    from compute.limits import setting
    from compute.workers import jobs

    monkeypatch.setenv("NETMODEL_H351", "１０")
    with pytest.raises(UserError, match="environment variable NETMODEL_H351 '１０' has the digit"):
        setting("NETMODEL_H351", 5)
    monkeypatch.setenv("NETMODEL_JOBS", "２")
    with pytest.raises(UserError, match="NETMODEL_JOBS '２' has the digit"):
        jobs()
    monkeypatch.setenv("NETMODEL_JOBS", "2")
    assert jobs() == 2


def test_measurement_csv_cell(tmp_path):
    from compute.measurements import read_measurements

    head = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
    path = tmp_path / "m.csv"
    path.write_text(head + "Llama-2-70B,H100-SXM,８,1,prefill,2048,,0.1368\n")
    with pytest.raises(UserError, match=r"tp '８' has the digit '８'"):
        read_measurements(path)
    path.write_text(head + "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368\n")
    assert read_measurements(path)[0].tp == 8
