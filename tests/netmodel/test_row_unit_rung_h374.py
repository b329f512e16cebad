"""topology compare's row unit is compute.units' rung choice, said once.

Hand-derived rungs: 999.96e9 B/s rounds to 1.000e12, so TB/s; 999.94e9 to 999.9e9, so
GB/s; 125e3 B/s is 125 kB/s; 0.5 B/s is under every rung, so B/s. Power and money keep
their own ladders (W, kW, MW; $, k$, M$) through the same choice.
"""

import math

from hypothesis import given
from hypothesis import strategies as st

from compute.units import RATE_FLOOR, RATE_RUNGS, format_quantity, rung
from netmodel.study import topology_compare
from netmodel.study.topology_compare import row_unit


def test_rung_by_hand():
    assert rung(999.96e9) == ("TB/s", 1e12)
    assert rung(999.94e9) == ("GB/s", 1e9)
    assert rung(125e3) == ("kB/s", 1e3)
    assert rung(0.5) == ("B/s", 1.0) == RATE_FLOOR
    assert rung(2e18) == ("PB/s", 1e15)   # above every rung: the top one
    assert rung(0.5e3, (("kW", 1e3),), ("W", 1.0)) == ("W", 1.0)


def test_row_unit_by_hand():
    assert row_unit([999.96e9, 1e9], "bandwidth") == ("TB/s", 1e12, 3)
    assert row_unit([125e3], "bandwidth") == ("kB/s", 1e3, 1)
    assert row_unit([2.5e6, None, math.nan], "watts") == ("MW", 1e6, 3)
    assert row_unit([999.96], "usd") == ("k$", 1e3, 3)
    assert row_unit([], "usd") == ("$", 1.0, 3)


def test_bandwidth_ladder_is_units():
    rungs, below = topology_compare._UNITS["bandwidth"]
    assert rungs is RATE_RUNGS and below is RATE_FLOOR


@given(st.floats(min_value=0, max_value=1e20, allow_nan=False))
def test_row_unit_is_the_printed_unit(value):
    unit, scale, _ = row_unit([value, value / 3], "bandwidth")
    assert (unit, scale) == rung(value)
    assert format_quantity(value, "B/s").endswith(" " + unit)
    shown = float(f"{value / scale:.4g}")
    assert shown < 1000 or unit == RATE_RUNGS[0][0]
    assert shown >= 1 or unit == RATE_FLOOR[0]
