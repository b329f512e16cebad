"""A user's number of -0.0 (a file's ``-0.0``, a ``-0`` on the command line) is 0 wherever 0
is allowed, at the checks every user number passes: :func:`compute.validate.number` (GPU,
model, profile, scenario files), :func:`compute.rows.check_number` (cost and price
parameters), :mod:`compute.units`' parsers (a sweep's ``--param``, a ``cost.NAME`` value).
It was kept as -0.0 and printed ``-0`` (a sweep's column) or ``-0.0`` (``compare --show``).
Where 0 is refused the message still shows the value as typed. (h247 fixed GPU figures
alone, in compute.hardware; h250 made it the validators' rule.)"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute import rows, units, validate
from compute.errors import UserError
from tests.netmodel.cli_helpers import run_cli


def _plus_zero(x: float) -> bool:
    return x == 0 and math.copysign(1.0, x) == 1.0


bounds = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(lo=bounds, span=st.floats(min_value=0, max_value=1e6), or_zero=st.booleans())
def test_number_reads_minus_zero_as_zero_where_zero_is_allowed(lo, span, or_zero):
    hi = lo + span
    zero_allowed = or_zero or lo <= 0 <= hi
    if zero_allowed:
        got = validate.number("f.toml", "k", -0.0, minimum=lo, maximum=hi, or_zero=or_zero)
        assert _plus_zero(got)
    else:   # refused: the message shows the value as typed
        with pytest.raises(UserError, match=r"got -0\.0$"):
            validate.number("f.toml", "k", -0.0, minimum=lo, maximum=hi, or_zero=or_zero)


@given(x=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_number_keeps_every_other_value(x):
    """The normalization changes -0.0 alone: every other float passes as given."""
    assert validate.number("", "k", x, minimum=-1e6, maximum=1e6) == x
    if x != 0:
        assert math.copysign(1.0, validate.number("", "k", x, minimum=-1e6, maximum=1e6)) == \
            math.copysign(1.0, x)


@pytest.mark.parametrize("read", [
    lambda: rows.check_number("cost.copper_energy", -0.0),
    lambda: units.check_finite_positive("latency", -0.0, allow_zero=True),
    lambda: units.parse_time("-0us", "hop_latency"),
    lambda: units.parse_time(-0.0, "hop_latency"),
    lambda: units.parse_in_unit("-0USD/kWh", "USD/kWh", "cost.electricity_price"),
    lambda: units.parse_in_unit("-0", "USD/kWh", "cost.electricity_price"),
], ids=["check_number", "check_finite_positive", "parse_time text", "parse_time float",
        "parse_in_unit unit", "parse_in_unit bare"])
def test_other_checks_read_minus_zero_as_zero(read):
    assert _plus_zero(read())


def test_minus_zero_refused_where_zero_is_refused_names_it_as_typed():
    with pytest.raises(UserError, match=r"got -0\.0$"):
        rows.check_number("area", -0.0, low_open=True)
    with pytest.raises(UserError, match=r"got '-0us'$"):
        units.parse_time("-0us", "latency", allow_zero=False)


def test_compare_show_prints_a_scenario_files_minus_zero_as_0(tmp_path):
    """A scenario file's ``[adjust] hop_latency = -0.0`` was printed back as ``-0.0``."""
    shipped = run_cli(["compare", "--show", "h100-dgx"])
    assert shipped.exit_code == 0, shipped.output
    path = tmp_path / "neg0.toml"
    path.write_text(shipped.output.replace('name = "h100-dgx"', 'name = "neg0"', 1)
                    .split("[adjust]")[0]
                    + "\n[adjust]\nlatency_scale = -0.0\nhop_latency = -0.0\n")
    r = run_cli(["compare", "--show", path])
    assert r.exit_code == 0, r.output
    adjust = r.output.split("[adjust]\n", 1)[1].splitlines()[:3]
    assert adjust == ["latency_scale = 0.0", "hop_latency = 0.0", "bandwidth_scale = 1.0"]


def test_sweep_column_of_minus_zero_prints_0():
    """``--param adjust.hop_latency=-0,1us`` printed a column headed ``-0``."""
    r = run_cli(["sweep", "--scenarios", "h100-dgx", "--param", "adjust.hop_latency=-0,1us",
                 "--models", "Llama-3-8B"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    header = lines[lines.index("Llama-3-8B, decode: tokens/s/SM by adjust.hop_latency (us)") + 1]
    assert header.split() == ["0", "1"]
