"""topology compare's rows print rates on the rungs every other table uses
(compute.units.RATE_RUNGS, as format_quantity and topology show), the unit chosen after
rounding: its own ladder (TB/s, GB/s, MB/s, then B/s) printed a 999.96 GB/s link as
'1,000.0' GB/s (the unit chosen before rounding to four figures), a 125 kB/s link as
'125,000' B/s (no kB/s rung) where topology show says '125 kB/s', and 1 PB/s as '1,000' TB/s.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.units import format_quantity
from netmodel.study.topology_compare import row_unit
from tests.netmodel.cli_helpers import run_cli


@pytest.mark.parametrize(("values", "fmt", "want"), [
    ([999.96e9], "bandwidth", ("TB/s", 1e12, 3)),     # 0.99996 TB/s to 4 figures: 1.000
    ([999.94e9, 1e9], "bandwidth", ("GB/s", 1e9, 1)),  # 999.9
    ([99.996e9], "bandwidth", ("GB/s", 1e9, 1)),       # 100.0, not 100.00
    ([125e3, 5e5], "bandwidth", ("kB/s", 1e3, 1)),     # link_bandwidth's least: 500.0 kB/s
    ([1e15], "bandwidth", ("PB/s", 1e15, 3)),          # link_bandwidth's most: 1.000
    ([0.5], "bandwidth", ("B/s", 1.0, 4)),
    ([999_960.0], "usd", ("M$", 1e6, 3)),
    ([999.96], "watts", ("kW", 1e3, 3)),
    ([None, float("nan")], "usd", ("$", 1.0, 3)),      # nothing to show: the bottom rung
])
def test_row_units_by_hand(values, fmt, want):
    assert row_unit(values, fmt) == want


@given(st.floats(min_value=1.0, max_value=9.99e17, allow_nan=False))
def test_a_rate_row_reads_as_format_quantity_does(top):
    unit, scale, digits = row_unit([top, top / 7], "bandwidth")
    assert unit == format_quantity(top, "B/s").split()[1]   # the one ladder, one rule
    cell = f"{top / scale:,.{digits}f}"
    number = float(cell.replace(",", ""))
    assert 1 <= number < 1000 or unit == "PB/s"
    assert len(re.sub(r"\D", "", cell).lstrip("0")) == 4 or number >= 1000, cell


def _row(output: str, label: str) -> list[str]:
    (line,) = [ln for ln in output.splitlines() if ln.startswith(label + "  ")]
    return line[len(label):].split()


def test_the_table_says_what_topology_show_says():
    # a single switch: each GPU injects its link's rate
    r = run_cli(["topology", "compare", "single-switch:n=8,bandwidth=999.96GB/s",
                 "single-switch:n=8,bandwidth=125kB/s"])
    assert r.exit_code == 0, r.output
    assert _row(r.output, "injection per GPU (TB/s)") == ["1.000", "0.000"]
    r = run_cli(["topology", "compare", "single-switch:n=8,bandwidth=125kB/s",
                 "single-switch:n=8,bandwidth=200kB/s"])
    assert r.exit_code == 0, r.output
    assert _row(r.output, "injection per GPU (kB/s)") == ["125.0", "200.0"]
