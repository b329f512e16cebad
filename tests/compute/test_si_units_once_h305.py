"""The SI unit of a data row's value is said once (h305): compute.units.ROW_UNIT_INPUTS names
it for the unit's inputs (a bare number is read in it) and compute.rows.SI_UNITS, what an
output names beside the SI value (a sweep's params[].unit), is read from it. Before, the two
were separate tables that disagreed: USD/GB and USD/GiB "USD/B" vs "USD/byte", USD/(Gb/s)
"USD per bit/s" vs "USD/(bit/s)", and the per-port rows "USD" / "W" vs "USD/port" /
"W/port" (so a refused ``cost.ocs_power`` said a bare number was in W, where sweep.json said
its values were W/port)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.rows import SI_UNITS, UNITS
from compute.units import ROW_UNIT_INPUTS, parse_in_unit

# A data file's unit, its SI unit and the factor to it, stated by hand (h316: the test here
# repeated SI_UNITS's own expression, which could not fail unless the tables split again):
# a Julian year is 365.25 * 86400 = 31,557,600 s; a kWh 3.6e6 J; a kW-month 1/12 of a kW-year.
SI_BY_HAND = [
    ("mm", "m", 1e-3), ("mm^2", "m^2", 1e-6), ("year", "s", 31_557_600.0),
    ("USD/kWh", "USD/J", 1 / 3.6e6), ("pJ/bit", "J/bit", 1e-12),
    ("USD/mm^2", "USD/m^2", 1e6), ("USD/kW/month", "USD/(W s)", 12 / (1e3 * 31_557_600)),
]


@pytest.mark.parametrize(("unit", "si", "factor"), SI_BY_HAND)
def test_outputs_and_inputs_name_the_hand_stated_si_unit(unit, si, factor):
    # what an output names (SI_UNITS), what a refusal names for a bare number
    # (ROW_UNIT_INPUTS), and what the unit's own suffix is read as (parse_in_unit)
    assert SI_UNITS[unit] == ROW_UNIT_INPUTS[unit][0] == si
    assert parse_in_unit(f"2{unit}", unit, "p") == pytest.approx(2 * factor, rel=1e-12)
    assert UNITS[unit] == pytest.approx(factor, rel=1e-12)


def test_the_si_units_of_reciprocal_rows():
    for unit, si in (("1/year", "1/s"), ("1/cm^2", "1/m^2"), ("1/mm^2", "1/m^2")):
        assert SI_UNITS[unit] == ROW_UNIT_INPUTS[unit][0] == si


def test_the_si_units_of_per_byte_and_per_port_rows():
    # a GDDR6 price of 3.364 USD/GiB is 3.364 / 2**30 = 3.1330e-9 USD a byte
    assert parse_in_unit("3.364USD/GiB", "USD/GiB", "p") == pytest.approx(3.364 / 2**30)
    assert SI_UNITS["USD/GiB"] == SI_UNITS["USD/GB"] == "USD/byte"
    assert (SI_UNITS["USD/port"], SI_UNITS["W/port"]) == ("USD/port", "W/port")
    assert SI_UNITS["USD/(Gb/s)"] == "USD/(bit/s)" and SI_UNITS["1"] == SI_UNITS["name"] == ""


def test_a_refusal_names_the_per_port_si_unit():
    with pytest.raises(UserError) as e:
        parse_in_unit("1USD", "W/port", "cost.ocs_power", "0.5W/port")
    assert "a bare number in W/port (SI)" in str(e.value), str(e.value)
