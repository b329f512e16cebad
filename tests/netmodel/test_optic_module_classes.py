"""Pluggable optics priced and powered as the modules they are: a module whole, at its
class by rate (netmodel/data/network_costs.toml's pluggable_module_price and _power rows:
200G $350 / 5 W, 400G $700 / 9 W, 800G $1,250 / 17 W; P46, P41, P40), the modules those
topologies.optic_modules makes of the ends; a rate that is no row's per bit of the row
nearest it (by ratio), said in the bill's notes.

Hand-derived on rail-optimized:domains=2 as built: 2 servers of 8 H100, 8 rail leaves of
64 ports (32 down, 32 up), 4 spines of 64; 16 GPU-leaf cables and 8 x 32 = 256 leaf-spine
cables, 544 optical ends of 400 Gb/s.

* module_ports 1: 544 single-port 400G modules, 544 x $700 = $380,800 and 544 x 9 W =
  4,896 W (the 800G class per bit gave $625 and 8.5 W an end: $340,000 and 4,624 W);
* module_ports 2: a server's 8 NIC ends in 4 modules (8), a leaf's 2 GPU ends in 1 (8)
  and its 32 up in 16 (128), a spine's 64 in 32 (128): 272 800G modules, $340,000 and
  4,624 W, what the ends were charged at the 800G class per bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from netmodel.study.network_bill import NetworkPrices, network_bill, network_costs
from netmodel.study.optic_classes import estimate_note, module_classes, module_figures
from netmodel.study.scenario_fabric import build_fabric
from topologies import build


def _optics(graph, **prices):
    (line,) = [i for i in network_bill(graph, share="as-built",
                                       prices=NetworkPrices(**prices)).items
               if i.category == "optics"]
    return line


def test_the_classes_are_the_published_modules():
    assert [(c.name, c.rate, c.price, c.power) for c in module_classes()] == [
        ("200G", 200e9, 350.0, 5.0), ("400G", 400e9, 700.0, 9.0),
        ("800G", 800e9, 1250.0, 17.0)]
    # the per-bit defaults cost.pluggable_price and cost.pluggable_energy set are the 800G
    # class's: $1,250 / 800 Gb/s and 17 W / 800 Gb/s
    table = network_costs()
    assert table["pluggable_price"].value * 800e9 == pytest.approx(1250, rel=1e-12)
    assert table["pluggable_energy"].value * 800e9 == pytest.approx(17, rel=1e-12)
    # a single-port 400G module per bit: 1.12x the 800G class's price, 1.06x its power
    assert (700 / 400) / (1250 / 800) == pytest.approx(1.12)
    assert (9 / 400) / (17 / 800) == pytest.approx(1.0588, rel=1e-4)


def test_single_port_rail_optimized_is_its_400g_modules():
    g = build("rail-optimized:domains=2")
    kinds = [d.get("tier") for _, d in g.nodes(data=True) if d["kind"] == "switch"]
    assert (g.graph["gpus"], kinds.count(1), kinds.count(2)) == (16, 8, 4)
    line = _optics(g)
    assert (line.what, line.count, line.modules) == ("pluggable-optics end 400 Gb/s", 544, None)
    assert (line.capex, line.power) == (544 * 700, 544 * 9) == (380_800, 4_896)


def test_twin_port_rail_optimized_is_its_800g_modules():
    line = _optics(build("rail-optimized:domains=2,module_ports=2"))
    assert line.what == "pluggable-optics end 400 Gb/s (twin-port modules, 2 ends a module)"
    assert (line.count, line.modules) == (544, 2 * 4 + 8 * 1 + 8 * 16 + 4 * 32) == (544, 272)
    assert (line.capex, line.power) == (272 * 1250, 272 * 17) == (340_000, 4_624)
    # what its 544 ends were charged at the 800G class per bit
    assert line.capex == pytest.approx(544 * 400 * 1.5625)
    assert line.power == pytest.approx(544 * 400e9 * 21.25e-12)


def test_a_setting_of_the_per_bit_defaults_scales_every_class():
    # cost.pluggable_price 2 USD/(Gb/s): the 800G class $1,600, the 400G one 700 x 2 /
    # 1.5625 = $896; cost.pluggable_energy 42.5 pJ/bit: twice every class's power
    single = _optics(build("rail-optimized:domains=2"), pluggable_price=2e-9,
                     pluggable_energy=42.5e-12)
    assert (single.capex, single.power) == pytest.approx((544 * 896, 544 * 18))
    twin = _optics(build("rail-optimized:domains=2,module_ports=2"), pluggable_price=2e-9)
    assert twin.capex == pytest.approx(272 * 1600)


def test_a_rate_that_is_no_class_is_priced_per_bit_of_the_nearest():
    # 100G below the slowest: 200G's per bit ($175, 2.5 W); 600G nearer 800G by ratio
    # (4/3 against 3/2): $937.50 and 12.75 W; at the geometric middle of 400G and 800G the
    # faster; 1.6T past the fastest: 800G's per bit ($2,500, 34 W); 400G itself exact
    mid = math.sqrt(400e9 * 800e9)
    usd, w, off = module_figures(np.array([100e9, 600e9, mid, 1600e9, 400e9]))
    assert usd.tolist() == pytest.approx([175, 937.5, 1250 * mid / 800e9, 2500, 700])
    assert w.tolist() == pytest.approx([2.5, 12.75, 17 * mid / 800e9, 34, 9])
    assert [c for _, c in off] == ["200G", "800G", "800G", "800G"]


def test_lite_direct_says_its_100g_breakout_ends_are_an_estimate():
    # ports-used: 96 switch-side 400G ends, single-port ($700, 9 W), and 128 Lite NIC
    # shares of 100 Gb/s (a breakout, a module an end: per bit of 200G, $175 and 2.5 W);
    # before, every end at the 800G class per bit: $506,752 and 3,572.5 W of network
    bill = network_bill(build_fabric("lite-direct"))
    lines = {i.what: (i.count, i.capex, i.power) for i in bill.items if i.category == "optics"}
    assert lines["pluggable-optics end 400 Gb/s"] == (96, 96 * 700, 96 * 9)
    assert lines["pluggable-optics end 100 Gb/s"] == (128, 128 * 175, 128 * 2.5)
    assert bill.notes == (estimate_note("pluggable-optics", 100e9, "200G"),)
    assert bill.capex == pytest.approx(506_751.97 + 7_200 + 2_400, abs=0.01)
    assert bill.power == pytest.approx(3_572.48 + 48 + 48, abs=1e-6)


def test_h100_dgx_is_unchanged():
    # twin-port, every module full: 64 800G modules at the ports-used share, $80,000 and
    # 1,088 W of optics; its network $316,960 and 2,777.6 W as before
    bill = network_bill(build_fabric("h100-dgx"))
    (line,) = [i for i in bill.items if i.category == "optics"]
    assert (line.modules, line.capex, line.power) == (64, 80_000, 1_088)
    assert (bill.capex, bill.power) == pytest.approx((316_959.97, 2_777.6), abs=0.01)
    assert bill.notes == ()


def test_topology_compare_says_what_the_bill_estimated():
    from netmodel.study.topology_compare import compare_topologies

    rows = compare_topologies(["h100-dgx", "lite-direct"]).rows
    said = "network capex and power: " + estimate_note("pluggable-optics", 100e9, "200G")
    assert [said in r.notes for r in rows] == [False, True]
    assert [r.network_capex for r in rows] == pytest.approx([316_959.97, 516_351.97],
                                                             abs=0.01)


_ROW = {"value": 700, "unit": "USD", "source": "s", "ref": "", "confidence": "assumption"}


@pytest.mark.parametrize(("tables", "says"), [
    ({"pluggable_module_price": {"400G": _ROW}},
     r"\[pluggable_module_power\] must be a table of rows by module class"),
    ({"pluggable_module_price": {"400G": _ROW},
      "pluggable_module_power": {"800G": dict(_ROW, unit="W")}},
     r"\[pluggable_module_price\] and \[pluggable_module_power\] must hold the same "
     r"module classes"),
    ({"pluggable_module_price": {"400 G": _ROW},
      "pluggable_module_power": {"400 G": dict(_ROW, unit="W")}},
     r"\[pluggable_module_price.400 G\] must be named by the module's rate in Gb/s"),
    ({"pluggable_module_price": {"400G": dict(_ROW, unit="W")},
      "pluggable_module_power": {"400G": dict(_ROW, unit="W")}},
     r"\[pluggable_module_price.400G\] unit must be 'USD', got 'W'"),
])
def test_a_bad_class_table_is_refused_in_one_line(monkeypatch, tables, says):
    from compute.errors import UserError
    from netmodel.study import optic_classes

    monkeypatch.setattr(optic_classes, "network_costs_data", lambda: tables)
    with pytest.raises(UserError, match=r"^netmodel/data/network_costs.toml: " + says) as e:
        optic_classes.module_rows.__wrapped__()
    assert "\n" not in str(e.value)


def test_a_zero_per_bit_default_is_refused_not_divided_by(monkeypatch):
    import dataclasses

    from compute.errors import UserError
    from netmodel.study import network_bill as nb

    table = dict(nb.network_costs())
    table["pluggable_energy"] = dataclasses.replace(table["pluggable_energy"], value=0.0)
    monkeypatch.setattr(nb, "network_costs", lambda: table)
    with pytest.raises(UserError, match=r"pluggable_price and pluggable_energy must be > 0"):
        NetworkPrices(pluggable_energy=1e-12).modules(np.array([400e9]))
