"""``netmodel sweep --param cost.NAME=...`` reads a value in its data row's unit family
(``0.1USD/kWh``, ``5y``, ``1.2kW``, ``75%``) and converts it to SI once; a bare number is SI;
a unit of another family is refused. Before, every cost value was a bare SI number:
``0.1USD/kWh`` was 'not a number' and 0.1 (meant as $/kWh) was 0.1 USD per joule."""

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.sweep import parse_param, run_sweep

SCEN = ["lite-flat"]


def _values(text):
    return parse_param(text, SCEN).values


def test_electricity_price_in_usd_per_kwh_costs_as_the_bare_si_value():
    # 0.1 USD/kWh = 0.1 / 3.6e6 J = 2.7778e-8 USD/J
    assert _values("cost.electricity_price=0.1USD/kWh")[0] == pytest.approx(2.7778e-8, rel=1e-4)
    assert _values("cost.electricity_price=0.1$/kWh") == _values(
        "cost.electricity_price=100USD/MWh")
    a = run_sweep(SCEN, ["cost.electricity_price=0.1USD/kWh"], ["Llama-3-8B"], ["decode"])
    b = run_sweep(SCEN, [f"cost.electricity_price={0.1 / 3.6e6!r}"], ["Llama-3-8B"],
                  ["decode"])
    ua, ub = a.rows[0].usd_per_mtoken, b.rows[0].usd_per_mtoken
    assert ua is not None and ua == pytest.approx(ub, rel=1e-12)


def test_lifetime_in_years_is_seconds_inside():
    # the row is 5 year; inside, lifetime is seconds: 5 x 365.25 x 86400 = 157,788,000 s
    assert _values("cost.lifetime=5y") == _values("cost.lifetime=157788000") == (157788000.0,)
    assert _values("cost.lifetime=5year,3years") == (94672800.0, 157788000.0)


def test_power_fraction_and_price_suffixes():
    assert _values("cost.host_power_per_h100=700W,1.2kW") == (700.0, 1200.0)
    assert _values("cost.utilization=75%") == (0.75,)
    assert _values("cost.wafer_price=18000USD,9346$") == (9346.0, 18000.0)
    # 1.5625 USD per Gb/s = 1.5625e-9 USD per bit/s; 12.5 USD per GB/s (8 Gb/s) likewise
    assert _values("cost.cpo_price=1.5625USD/(Gb/s)")[0] == pytest.approx(1.5625e-9)
    assert _values("cost.cpo_price=12.5$/(GB/s)")[0] == pytest.approx(1.5625e-9)
    assert _values("cost.cpo_energy=6.9pJ/bit")[0] == pytest.approx(6.9e-12)
    assert _values("cost.maintenance_fraction=5%/year")[0] == pytest.approx(0.05 / 31557600)


def test_bare_number_unchanged():
    assert _values("cost.electricity_price=2.2944e-8") == (2.2944e-8,)
    assert _values("cost.pue=1.1,1.5") == (1.1, 1.5)
    assert _values("cost.cpo_price=0.4e-9,1.5625e-9") == (0.4e-9, 1.5625e-9)


@pytest.mark.parametrize("text, words", [
    ("cost.electricity_price=700W", ["cost.electricity_price value '700W'", "USD/kWh",
                                     "cost.electricity_price=0.0826USD/kWh", "USD/J"]),
    ("cost.lifetime=5kW", ["cost.lifetime value '5kW'", "year", "cost.lifetime=5year"]),
    ("cost.pue=110W", ["cost.pue value '110W'", "a plain number", "allowed units: %"]),
    ("cost.cpo_price=1USD/kWh", ["cost.cpo_price", "USD/(Gb/s)", "1.5625USD/(Gb/s)"]),
])
def test_wrong_family_refused_in_one_line(text, words):
    with pytest.raises(UserError) as e:
        parse_param(text, SCEN)
    msg = str(e.value)
    assert "\n" not in msg and all(w in msg for w in words), msg
    r = CliRunner().invoke(cli, ["sweep", "--scenario", "lite-flat", "--param", text,
                                 "--models", "Llama-3-8B"])
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "Traceback" not in r.output


def test_every_row_unit_takes_its_own_suffix_at_the_row_factor():
    # the data file's unit, typed on the command line, converts as the loader converts it
    from compute.rows import UNITS
    from compute.units import ROW_UNIT_INPUTS

    for unit, factor in UNITS.items():
        if unit in ("name", "1"):
            continue
        own = ROW_UNIT_INPUTS[unit][1].get(unit)
        assert own == pytest.approx(factor), unit


def test_cost_values_are_shown_in_the_unit_they_are_typed_in():
    # before: the table's header said 'by cost.electricity_price' over the SI values
    # 1.39e-08 2.78e-08 5.56e-08 (USD/J) where 0.05, 0.1 and 0.2 USD/kWh were typed;
    # 0.05 USD/kWh / 3.6e6 J/kWh = 1.389e-8 USD/J
    out = CliRunner().invoke(cli, ["sweep", "--scenario", "lite-flat", "-q", "--param",
                                   "cost.electricity_price=0.05USD/kWh,0.1USD/kWh,0.2USD/kWh"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].endswith("by cost.electricity_price (USD/kWh)")
    assert lines[1].split() == ["0.05", "0.1", "0.2"]
    # a year is 3.15576e7 s inside and shown as the years typed; a fraction bare
    p = parse_param("cost.lifetime=3y,5y", SCEN)
    assert [p.show(v) for v in p.values] == ["cost.lifetime=3year", "cost.lifetime=5year"]
    assert parse_param("cost.utilization=75%", SCEN).display() == (1.0, "")
    # a row whose default is 0 (copper's energy, pJ/bit) still has its unit's scale: 1e12
    k, unit = parse_param("cost.copper_energy=1pJ/bit", SCEN).display()
    assert (round(k * 1e-12, 9), unit) == (1.0, "pJ/bit")


def test_a_cost_parameters_unit_is_the_si_unit_its_values_are_in():
    # sweep.json's params[].unit names the unit of params[].values and of the CSV column,
    # which are SI: 0.05 USD/kWh is written 1.3889e-08, in USD/J. Before, every cost
    # parameter's unit was "" (a pure number) whatever its row's unit.
    from compute.rows import SI_UNITS, UNITS

    assert set(SI_UNITS) == set(UNITS)
    p = parse_param("cost.electricity_price=0.05USD/kWh", SCEN)
    assert p.values[0] == pytest.approx(0.05 / 3.6e6) and p.unit == "USD/J"
    life = parse_param("cost.lifetime=3y,5y", SCEN)   # 'y' still read as a year, not refused
    assert life.values == (3 * 31_557_600.0, 5 * 31_557_600.0) and life.unit == "s"
    assert parse_param("cost.wafer_diameter=300mm", SCEN).values == (0.3,)
    assert parse_param("cost.switch_price=3.9USD/(Gb/s)", SCEN).unit == "USD/(bit/s)"
    assert parse_param("cost.pue=1.2", SCEN).unit == ""
    r = run_sweep(SCEN, ["cost.electricity_price=0.05USD/kWh"], ["Llama-3-8B"], ["decode"])
    assert r.params[0].unit == "USD/J"
