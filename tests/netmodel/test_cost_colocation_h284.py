"""The facility a cluster occupies (space, power delivery, cooling), rented per kW of IT power
a month (``colocation_rent``, compute/data/economics.toml: CBRE's $184.06/kW/month), counted
in the cost per year and per token as its own line; and a held-out check of the cost per
GPU-hour against SemiAnalysis's H200 figures (../shared/reference/power_cost_yield.csv P31).

Before this, the model counted no facility: the rent's tests fail on the old code (no
``colocation_rent`` parameter, no ``colocation_per_year``); the P31 capital checks, which
read only the capex, pass there too (4f3441b: the defect was the old check's accounting)."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.units import SECONDS_PER_YEAR
from compute.yield_model import parameter
from netmodel.cli.main import cli
from netmodel.study.cost import cost_summary, parameter_rows, parameters
from netmodel.study.sweep import parse_param

HOURS = SECONDS_PER_YEAR / 3600   # 8,766 h: a Julian year


def test_the_default_rent_is_cbres_rate_per_kw_month():
    # 1 kW of IT power for a year at $184.06 per kW a month: 184.06 x 12 = $2,208.72
    assert parameter("colocation_rent") * 1000 * SECONDS_PER_YEAR == pytest.approx(2208.72,
                                                                                    rel=1e-12)
    row = parameter_rows()["colocation_rent"]
    assert (row.unit, row.raw, row.confidence) == ("USD/kW/month", 184.06, "read-estimate")
    assert "colocation_rent" in parameters(numeric=True)


def test_colocation_line_by_hand():
    # 128 Lites: 175 W rated + 133.75 W host at max (a quarter of the DGX H100's 535 W) less
    # a quarter of a 24.9 W NIC (co-packaged optics, no NIC: test_cost_nics_cpo_h452.py) each,
    # plus the network as powered; at $100 per kW a month, 12 months
    s = cost_summary("lite-flat", "Llama-3-70B", "decode",
                     colocation_rent=parse_param("cost.colocation_rent=100USD/kW/month",
                                                 ["lite-flat"]).values[0])
    assert s.power_provisioned == pytest.approx(128 * (175 + 133.75 - 24.9 / 4)
                                                + s.power_network)
    assert s.colocation_per_year == pytest.approx(s.power_provisioned / 1e3 * 100 * 12,
                                                  rel=1e-12)
    assert s.cost_per_year == pytest.approx(s.capex_per_year + s.energy_per_year
                                            + s.colocation_per_year, rel=1e-12)
    assert s.usd_per_mtoken == pytest.approx(
        s.cost_per_year / (s.tokens_per_s * SECONDS_PER_YEAR) * 1e6, rel=1e-12)
    d = s.to_dict()
    assert d["colocation_per_year_usd"] == s.colocation_per_year
    assert d["power_w"]["provisioned"] == s.power_provisioned
    # no rent: the cost per year is capex and energy alone, as before the facility was counted
    free = cost_summary("lite-flat", "Llama-3-70B", "decode", colocation_rent=0)
    assert free.colocation_per_year == 0
    assert free.cost_per_year == free.capex_per_year + free.energy_per_year
    assert free.usd_per_mtoken < s.usd_per_mtoken


def test_rent_is_for_the_power_provisioned_not_drawn():
    # an idle cluster pays the same rent: the lease is for capacity
    busy = cost_summary("h100-dgx", "Llama-3-70B", "decode")
    idle = cost_summary("h100-dgx", "Llama-3-70B", "decode", utilization=0.0)
    assert idle.colocation_per_year == busy.colocation_per_year
    assert idle.power_it < busy.power_it < busy.power_provisioned


def test_a_slower_clock_provisions_less():
    # H100 at 0.7 x clock: idle 0.115 x 700 = 80.5 W; above idle x (0.75 x 0.7 x 0.7^2 + 0.25)
    # = 619.5 x 0.50725 (clock-power law, compute/power.py); rated 394.74 W
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode", clock=0.7)
    rated = 80.5 + 619.5 * (0.75 * 0.7 * 0.7 ** 2 + 0.25)
    assert rated == pytest.approx(394.741, abs=1e-3)
    assert s.power_provisioned == pytest.approx(32 * (rated + 535) + s.power_network)


@pytest.mark.parametrize(("bad", "allowed"), [(-1.0, "a finite number >= 0, got -1"),
                                               (math.nan, "a finite number >= 0, got nan"),
                                               (math.inf, "a finite number >= 0, got inf"),
                                               ("150", "must be a number, got '150'")])
def test_bad_rent_refused_in_one_line(bad, allowed):
    # (the old code refused the name itself: 'unknown cost parameter(s) colocation_rent')
    with pytest.raises(UserError) as e:
        cost_summary("h100-dgx", "Llama-3-70B", "decode", colocation_rent=bad)
    msg = str(e.value)
    assert msg.startswith("colocation_rent ") and allowed in msg and "\n" not in msg, msg


@pytest.mark.parametrize(("text", "allowed"), [
    ("cost.colocation_rent=-1USD/kW/month", "outside the range a sweep takes, from 0 to "
     "1.8406e+08USD/kW/month"),
    ("cost.colocation_rent=nanUSD/kW/month", "outside the range a sweep takes, from 0 to "
     "1.8406e+08USD/kW/month"),
    ("cost.colocation_rent=150W", "not a number in a unit of USD/kW/month"),
    ("cost.colocation_rent=1e12USD/kW/month", "outside the range a sweep takes, from 0 to "
     "1.8406e+08USD/kW/month")])
def test_bad_rent_on_the_command_line_exits_2_in_one_line(text, allowed):
    r = CliRunner().invoke(cli, ["sweep", "--scenario", "lite-flat", "--param", text,
                                 "--models", "Llama-3-8B"])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert f"value '{text.split('=')[1]}'" in r.output and allowed in r.output, r.output


def test_rent_typed_per_month_or_per_year_is_the_same_si_value():
    # $150 per kW a month = $1,800 per kW a year = 150 / (1000 W x 2,629,800 s) USD/(W s)
    p, y, w = (parse_param(f"cost.colocation_rent={t}", ["lite-flat"])
               for t in ("150USD/kW/month", "1800$/kW/year", "0.15USD/W/month"))
    assert p.values[0] == pytest.approx(150 / (1000 * SECONDS_PER_YEAR / 12), rel=1e-15)
    assert p.values == y.values == w.values   # exact unit factors: one value, not three
    assert p.show(p.values[0]) == "cost.colocation_rent=150USD/kW/month"


def test_cost_table_shows_the_colocation_line():
    r = CliRunner().invoke(cli, ["cost", "--scenario", "h100-dgx", "--model", "Llama-3-70B",
                                 "--phase", "decode"])
    assert r.exit_code == 0, r.output
    lines = {ln[:21].strip(): ln[21:].strip() for ln in r.output.splitlines() if ln}
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode")
    assert lines["colocation"].startswith(f"${s.colocation_per_year / 1e3:,.1f}k a year: "
                                          f"{s.power_provisioned / 1e3:,.2f} kW")
    assert f"colocation ${s.colocation_per_year / 1e3:,.1f}k" in lines["cost per year"]


# ------------------------------------------------------------------ held-out: P31

#: SemiAnalysis (Nov 2025, P31, read-estimate): an H200's capital cost ~$1.06 per GPU-hour,
#: "to which we add electricity and colocation costs for a complete TCO of $1.41". It names
#: three parts, capital, electricity and colocation; no maintenance. The model's DGX-shaped
#: H200 cluster (h100-dgx's fabric with H200s, 32 GPUs) serving Llama-3-70B decode at every
#: hour of the year is split the same way: capital is the capex over the lifetime (the
#: model's capex_per_year less its maintenance), operating is energy and rent, and the 5% of
#: capex a year of maintenance (economics.toml maintenance_fraction) is a line P31 does not
#: name; it is checked on its own.
P31_CAPITAL, P31_TOTAL = 1.06, 1.41
#: Tolerance, from the inputs, not from the result: the H200 has no published price (street
#: estimates $30-40k, +-15% about their middle; the model prices it at the H100's margin on
#: its own package, $37,997), the lifetime 4-6 years against our 5 (+-20% on the amortized
#: part) and P31's assumptions (cost of capital, lifetime, rent) are not published: 25%.
#: The operating part (total less capital, $0.35) rests on the rent (CBRE's $184.06 is an
#: asking rate for 250-500 kW; CBRE's H2 2024 report says volume discounts for larger
#: tenants have been significantly reduced or eliminated), the PUE (1.1 here, colocation
#: 1.5-1.6, P81: +-40% of the energy's ~$0.09) and two figures each rounded to a cent
#: (+-3%): 25% too.
TOLERANCE = 0.25


def _h200_per_gpu_hour():
    """The model's H200 cluster a GPU-hour: (summary, capital, maintenance, total)."""
    s = cost_summary("h100-dgx@H200-SXM", "Llama-3-70B", "decode")
    per_h = s.gpus * HOURS
    capex = s.capex_gpu + s.capex_host + s.capex_network
    capital = capex / 5 / per_h                     # 5 years: economics.toml lifetime
    maintenance = s.capex_per_year / per_h - capital
    return s, capital, maintenance, s.cost_per_year / per_h


def test_h200_cost_per_gpu_hour_by_hand():
    # capex a GPU (the GPU, its host share $4,001, its network slice) over 5 years and 8,766 h;
    # maintenance 5% of it a year; the operating part: energy x PUE and the rent
    s, capital, maintenance, total = _h200_per_gpu_hour()
    per_gpu = s.gpu_price + 4001 + s.capex_network / s.gpus
    assert capital == pytest.approx(per_gpu / 5 / HOURS, rel=1e-9)
    assert maintenance == pytest.approx(per_gpu * 0.05 / HOURS, rel=1e-9)
    assert capital + maintenance == pytest.approx(s.capex_per_year / s.gpus / HOURS, rel=1e-12)
    rent = s.power_provisioned / s.gpus / 1e3 * 184.06 * 12 / HOURS
    energy = s.power_it / s.gpus / 1e3 * 1.1 * 0.0826
    assert total - capital - maintenance == pytest.approx(rent + energy, rel=1e-6)


def test_h200_operating_cost_per_gpu_hour_matches_p31():
    # energy and colocation, P31's two added lines: $0.424 vs P31's $0.35, +21%
    _, capital, maintenance, total = _h200_per_gpu_hour()
    assert total - capital - maintenance == pytest.approx(P31_TOTAL - P31_CAPITAL,
                                                          rel=TOLERANCE)


def test_h200_capital_per_gpu_hour_matches_p31():
    # the capex over 5 years: $1.184 vs P31's $1.06, +12% (H200 at $37,997 by the H100's
    # margin, host $4,001, network slice $9,905 a GPU). Before, the check counted the
    # maintenance as capital ($1.48, +40%) and was a strict xfail
    s, capital, _, _ = _h200_per_gpu_hour()
    # (1.1843 when written; h363: was a pin of it) the capex a GPU over economics.toml's
    # lifetime: the GPU's price, its host share (DGX H100's $32,010 / 8 = $4,001, the H200's
    # 700 W TDP the H100's) and its network slice
    lifetime = parameter("lifetime") / SECONDS_PER_YEAR
    assert lifetime == 5
    assert s.capex_gpu == pytest.approx(s.gpus * s.gpu_price, rel=1e-12)
    assert s.capex_host == pytest.approx(s.gpus * parameter("host_cost_per_h100"), rel=1e-12)
    assert capital == pytest.approx(
        (s.gpu_price + 4001 + s.capex_network / s.gpus) / lifetime / HOURS, rel=1e-12)
    assert capital == pytest.approx(P31_CAPITAL, rel=TOLERANCE)


def test_capital_with_maintenance_misses_p31s_capital():
    # were P31's capital to hold the maintenance too, the model's would read $1.48, +40%:
    # outside the tolerance, the reading the earlier strict xfail encoded
    _, capital, maintenance, _ = _h200_per_gpu_hour()
    # (0.2961 and +39.7% when written; h363: were pins) economics.toml's 5% of the capex a
    # year against its 1/5 a year of capital: maintenance is a quarter of the capital
    share = parameter("maintenance_fraction") * SECONDS_PER_YEAR
    assert share == pytest.approx(0.05, rel=1e-12)
    assert maintenance == pytest.approx(share * 5 * capital, rel=1e-9)
    assert (capital + maintenance) / P31_CAPITAL - 1 > TOLERANCE


@pytest.mark.xfail(strict=True, reason="known miss (reported, not tuned): the model's H200 "
                   "total is $1.90/GPU-h, +35% over P31's $1.41: capital +12% and energy and "
                   "rent +21% (each within 25%), and the 5%/year maintenance, $0.30/GPU-h, "
                   "a line P31 does not name (without it $1.61, +14%)")
def test_h200_total_per_gpu_hour_matches_p31():
    _, _, _, total = _h200_per_gpu_hour()
    assert total == pytest.approx(P31_TOTAL, rel=TOLERANCE)
