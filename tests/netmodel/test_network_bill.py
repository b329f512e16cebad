"""The network's bill (netmodel.study.network_bill): hand-derived prices and power of
shipped fabrics, consistency with topologies.analysis, invariants (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study.network_bill import SHARES, NetworkPrices, network_bill, network_costs
from netmodel.study.scenario_catalog import scenario_names
from netmodel.study.scenario_fabric import build_fabric
from topologies import build
from topologies.optic_modules import module_ports

GBPS = 1e9  # bits/s
#: HGX H100 NVSwitch baseboard, USD per wired Gb/s: ($5,875 GPU + board - $3,320 GPU) x 8 GPUs
#: over 144 NVLink4 x 200 Gb/s (network_costs.toml scaleup_switch_price; P27, P20)
BOARD = (5875 - 3320) * 8 / (144 * 200)
GB300_RACKS = "docs/examples/gb300-nvl72.toml"


def test_leaf_spine_bill_by_hand():
    # 2 leaves of radix 4 (2 GPUs down, 2 up), 2 spines; 400 Gb/s per port (H100 NIC)
    b = network_bill(build("leaf-spine:leaves=2,radix=4"), share="as-built")
    switches = 4 * 4 * 400 * 3.9                     # 4 switches x 4 ports x 400 Gb/s x $3.9
    # 8 cables, 2 pluggable ends each: 16 single-port 400G modules at $700 and 9 W (P46,
    # P41; per end of the 800G class, 1.5625 USD/(Gb/s) and 21.25 pJ/bit: $625 and 8.5 W)
    optics = 16 * 700
    cables = 4 * (50 + 1 * 20) + 4 * (50 + 1 * 50)   # GPU-leaf 20 m, leaf-spine 50 m
    assert b.capex == pytest.approx(switches + optics + cables) == 36_840
    watts_switch = 4 * 4 * 400 * GBPS * 8.8e-12 * 2.0  # ASIC pJ/bit x overhead 2
    watts_optics = 16 * 9
    assert b.power == pytest.approx(watts_switch + watts_optics)
    assert b.fill == 1.0


def test_h100_dgx_slice_of_a_superpod_by_hand():
    # 32 H100 on 8 rail leaves (4 GPUs each of 32 down ports) and 4 spines: fill 1/8
    b = network_bill(build_fabric("h100-dgx"))
    assert b.fill == pytest.approx(32 / (8 * 32))
    items = {i.what: i for i in b.items}
    assert items["tier-1 switch 64 x 400 Gb/s"].count == pytest.approx(8 * (4 + 32 / 8) / 64)
    assert items["tier-2 switch 64 x 400 Gb/s"].count == pytest.approx(4 * (64 / 8) / 64)
    nvs = items["tier-0 switch 144 x 200 Gb/s"]
    assert nvs.count == 4 and nvs.capex == pytest.approx(4 * 20_440, rel=1e-6)
    # GPU-leaf ends whole (64), leaf-spine ends an eighth of 512; twin-port (P40), priced
    # by the end: modules 32 NIC ends in 16, 8 leaves' 4 down in 2 each (16), an eighth of
    # 8 leaves' 16 up modules and 4 spines' 32 (256 / 8 = 32): 64, half the ends
    optics = items["pluggable-optics end 400 Gb/s (twin-port modules, 2 ends a module)"]
    assert optics.count == pytest.approx(64 + 512 / 8)
    assert optics.modules == pytest.approx(16 + 8 * 2 + (8 * 16 + 4 * 32) / 8) == 64
    assert optics.to_dict()["modules"] == optics.modules
    # baseboard NVLink (copper to tier 0) is not priced as cables
    assert not any(i.what.startswith("copper") for i in b.items)


def test_h100_dgx_board_traces_are_in_the_bill_but_not_priced():
    # the 32 x 18 = 576 NVLinks are traces of each DGX's HGX baseboard (the bill said
    # 'copper 576' cables); no cable is priced for them, so the network is as before:
    # 4 boards x 144 x 200 Gb/s x $0.7097 + (1 + 1/2) leaf/spine of 64 x 400 Gb/s x $3.9 +
    # 128 optics ends x 400 Gb/s x $1.5625 + 32 GPU-leaf cables of 20 m ($50 + 20 x $1) +
    # 256 leaf-spine cables of 50 m charged at the fill 1/8 (32 x ($50 + 50 x $1))
    b = network_bill(build_fabric("h100-dgx"))
    assert b.counts["cables"] == {"pluggable-optics": 288}
    assert b.counts["traces"] == {"board": 576}
    assert not any("board" in i.what for i in b.items)
    assert b.capex == pytest.approx(4 * 144 * 200 * BOARD + 1.5 * 64 * 400 * 3.9
                                    + 128 * 400 * 1.5625 + 32 * 70 + 32 * 100, rel=1e-6)
    assert b.capex == pytest.approx(316_960.0, rel=1e-6)   # $422,976 at the $47k board


def test_nvl72_spine_is_copper_in_the_bill_and_priced_with_its_switch():
    # two GB300 NVL72 racks: 2 x 72 x 18 = 2,592 NVLink cables from the compute trays to
    # the switch trays (the rack's copper spine: real cables, copper ends in the failure
    # model), priced with the tier-0 switch as the HGX board's traces are (no separate
    # cable item): the example's network capex stays 2 x 1296 x 400 Gb/s x $0.7097 + ...
    b = network_bill(build_fabric(GB300_RACKS))
    assert b.counts["cables"]["copper"] == 2592 and b.counts["traces"] == {}
    assert not any(i.category == "cable" and "copper" in i.what for i in b.items)
    nvs = next(i for i in b.items if i.what.startswith("tier-0"))
    assert nvs.capex == pytest.approx(2 * 1296 * 400 * BOARD, rel=1e-6)
    assert b.capex == pytest.approx(3_782_304.0 - 2 * 1296 * 400 * (1.63 - BOARD), rel=1e-6)


@pytest.mark.parametrize("share", SHARES)
def test_superpod_baseboard_priced_by_its_144_wired_nvlinks(share):
    # superpod builds a DGX H100's four NVSwitch3 chips with their 4 x 64 = 256 ports, of
    # which 144 (8 GPUs x 18 NVLinks) are wired; the baseboard price ($47k, P27) and the
    # 253 W the host power is derived with are over those 144 x 200 Gb/s = 28.8 Tb/s.
    # Before the fix the radix was charged: $83,456 and 450.6 W per server.
    b = network_bill(build("superpod"), share=share)
    nvs = next(i for i in b.items if i.what.startswith("tier-0"))
    assert nvs.count == 31
    assert nvs.capex / 31 == pytest.approx(20_440, rel=1e-6)          # $46,944 before h253
    assert nvs.power / 31 == pytest.approx(144 * 200 * GBPS * 8.8e-12)  # 253.4 W


@pytest.mark.parametrize("name", scenario_names())
def test_optics_counts_match_topologies_bill_of_materials(name):
    g = build_fabric(name)
    b = network_bill(g, share="as-built")
    optics = sum(i.count for i in b.items if i.category == "optics")
    # the bill prices optics by the end, the bill of materials counts modules and ends:
    # h100-dgx's are twin-port (module_ports 2, two ends a module, P40; every node's
    # count even), the others a module an end
    assert optics == pytest.approx(b.counts["pluggable_ends"] + b.counts["cpo_ports"])
    assert b.counts["pluggable_ends"] == b.counts["pluggable_transceivers"] * module_ports(g)
    modules = sum(i.modules or 0 for i in b.items if i.category == "optics")
    assert modules == (b.counts["pluggable_transceivers"] if module_ports(g) > 1 else 0)
    ports_used = network_bill(build_fabric(name))
    assert ports_used.capex <= b.capex + 1e-6 and ports_used.power <= b.power + 1e-6


def test_every_network_default_has_a_source():
    table = network_costs()
    assert {f for f in NetworkPrices.__dataclass_fields__} == set(table)
    for p in table.values():
        assert p.source.strip() and p.confidence


# ------------------------------------------------------------------ invariants

@settings(max_examples=25, deadline=None)
@given(st.integers(2, 30), st.integers(2, 30), st.integers(1, 4),
       st.sampled_from(["co-packaged-optics", "pluggable-optics"]), st.sampled_from(SHARES))
def test_more_optics_ports_never_lower_network_power(n1, n2, planes, medium, share):
    lo, hi = sorted((n1, n2))
    spec = "flat:n={n},planes={p},radix=32,gpu=Lite,medium={m}"
    p_lo = network_bill(build(spec.format(n=lo, p=planes, m=medium)), share=share).power
    p_hi = network_bill(build(spec.format(n=hi, p=planes, m=medium)), share=share).power
    assert p_hi >= p_lo - 1e-9
    if hi > lo:
        assert p_hi > p_lo  # more GPU ports on optics draw more


@settings(max_examples=25, deadline=None)
@given(st.floats(0, 50), st.floats(0, 50), st.sampled_from(["lite-flat", "h100-dgx",
                                                            "lite-ocs", "lite-direct"]))
def test_network_power_grows_with_energy_per_bit(e1, e2, scenario):
    lo, hi = sorted((e1 * 1e-12, e2 * 1e-12))
    g = build_fabric(scenario)
    p = [network_bill(g, prices=NetworkPrices(pluggable_energy=e, cpo_energy=e)).power
         for e in (lo, hi)]
    assert p[1] >= p[0] - 1e-9


def test_twin_port_optics_line_states_modules_and_ends():
    # superpod:sus=1 as built: 1,008 ends (248 NIC cables and 256 leaf-spine, two ends
    # each) in 508 modules: 124 at the servers, a leaf's 31 down in 16 (one half used) and
    # 32 up in 16, a spine's 64 in 32; each an 800G module (2 x 400G), $1,250 and 17 W, the
    # half-used ones whole: 508 x $1,250 = $635,000 and 508 x 17 = 8,636 W. Single-port:
    # 1,008 400G modules at $700 and 9 W, $705,600 and 9,072 W (P46, P40, P41)
    twin = network_bill(build("superpod:sus=1"), share="as-built")
    single = network_bill(build("superpod:sus=1,module_ports=1"), share="as-built")
    (t,) = [i for i in twin.items if i.category == "optics"]
    (s,) = [i for i in single.items if i.category == "optics"]
    assert t.what == "pluggable-optics end 400 Gb/s (twin-port modules, 2 ends a module)"
    assert (t.count, t.modules) == (1008, 124 + 8 * (16 + 16) + 4 * 32) == (1008, 508)
    assert (s.what, s.count, s.modules) == ("pluggable-optics end 400 Gb/s", 1008, None)
    assert "modules" not in s.to_dict()
    assert (t.capex, t.power) == (508 * 1250, 508 * 17) == (635_000, 8_636)
    assert (s.capex, s.power) == (1008 * 700, 1008 * 9) == (705_600, 9_072)
    assert single.capex - twin.capex == pytest.approx(705_600 - 635_000)
    assert (twin.counts["pluggable_transceivers"], twin.counts["pluggable_ends"]) == (508, 1008)
