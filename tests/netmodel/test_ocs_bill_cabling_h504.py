"""A realized OCS fabric is priced as its cabling: every port's optics, fibre, OCS port and
NIC, whether its circuit is set or not (h504).

An optical circuit switch only steers light: every GPU port cabled to it holds its own
transceiver and fibre from the day the fabric is built, and circuits are re-set per job on
those same fibres, so a port without a circuit now still holds its optics (the bill of
materials already counted them so: ``topologies.inventory``, ``ocs_cabling``; TPU v4 counts
"OCS and optics" of the whole fabric in its < 5 % of system cost, ISCA 2023). The bill
priced a realized fabric by its circuits instead: two optics ends a circuit, no fibre, and
in ``ports-used`` no OCS port at all; the cost model charged a NIC only at a circuit's end.

Hand-derived: 8 H100 x 4 pluggable ports on 4 OCSes of 8 ports, one port 450 / 4 = 112.5
GB/s = 900 Gb/s, fibres of 10 m (the builder's default). Prices and power are the rows of
netmodel/data/network_costs.toml and compute/data/economics.toml:

* optics: 32 ends x 900 Gb/s x 1.5625 USD/(Gb/s) = 45,000 USD; 32 x 900e9 x 21.25 pJ/bit
  = 612 W (the ring set 8 circuits, 16 ends: 22,500 USD and 306 W before);
* fibre: 32 x (50 + 10 x 1) USD = 1,920 USD (0 before);
* OCS: 32 ports x 300 USD = 9,600 USD, x 0.5 W = 16 W (0 in ports-used before);
* NICs: 900 Gb/s is over the 800G class, charged pro rata: 32 x 900 / 800 = 36 NICs'
  worth x 1,779 USD = 64,044 USD, x 49.8 W = 1,792.8 W (18 NICs' worth before).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.yield_model import parameter
from netmodel.study.host_bill import nic_charge, scale_out_nics
from netmodel.study.network_bill import network_bill, network_costs, ocs_cabling_ports
from topologies import build
from topologies.optical import ocs, realize

CABLING = "ocs:gpus=8,ports=4,ocs_ports=8,medium=pluggable-optics"
PORTS, GBPS, METRES = 32, 900, 10


def _graph(circuits):
    """The cabling (None), its ring of 8 circuits, or one circuit gpu0-gpu1 alone (the
    other 30 ports unset)."""
    if circuits is None:
        return build(CABLING)
    if circuits == "ring":
        return build(CABLING + ",logical=ring")
    return realize(build(CABLING), [("gpu0", "gpu1")])


def _row(name):
    return network_costs()[name].value


def _hand():
    """category -> (USD, W) of the 32 ports, from the data files' rows."""
    bits = GBPS * 1e9
    return {
        "optics": (PORTS * bits * _row("pluggable_price"),
                   PORTS * bits * _row("pluggable_energy")),
        "cable": (PORTS * (_row("fibre_cable_price") + METRES * _row("fibre_price_per_m")),
                  0.0),
        "ocs": (PORTS * _row("ocs_price"), PORTS * _row("ocs_power")),
    }


def test_the_hand_figures_are_the_rows():
    assert _hand() == {"optics": (45_000.0, 612.0), "cable": (1_920.0, 0.0),
                       "ocs": (9_600.0, 16.0)}


@pytest.mark.parametrize("circuits", [None, "ring", "one"])
@pytest.mark.parametrize("share", ["as-built", "ports-used"])
def test_every_cabled_port_is_priced_set_or_not(circuits, share):
    bill = network_bill(_graph(circuits), share=share)
    got = {k: (v["capex"], v["power"]) for k, v in bill.by_category().items()}
    assert sorted(got) == sorted(_hand())
    for k, want in _hand().items():
        assert got[k] == pytest.approx(want), k
    optics = [i for i in bill.items if i.category == "optics"]
    assert [(i.what, i.count) for i in optics] == [("pluggable-optics end 900 Gb/s", 32)]


@pytest.mark.parametrize("circuits", [None, "ring", "one"])
def test_every_cabled_port_holds_its_nic(circuits):
    usd, watts, classes = nic_charge(_graph(circuits))
    worth = PORTS * GBPS / 800                                         # 36
    assert classes == ((800e9, worth),)
    assert usd == pytest.approx(worth * parameter("nic_price_800g"))   # 64,044 USD
    assert watts == pytest.approx(worth * parameter("nic_power_800g"))  # 1,792.8 W
    assert (usd, watts) == pytest.approx((64_044, 1_792.8))
    assert scale_out_nics(_graph(circuits)) == 8


def test_co_packaged_cabling_has_no_nic_but_its_engines():
    # lite-ocs's cabling: 128 Lites x 4 CPO ports of 225 Gb/s, fibres of 10 m (55 ns: 10 m
    # at 5 ns/m and the Lite's one engine, 5 ns; the OCS end is mirrors). It read 9 m,
    # two engines taken off, before h511
    spec = "ocs:gpus=128,gpu=Lite,bandwidth=112.5GB/s"
    for g in (build(spec), build(spec + ",logical=torus:8x16")):
        assert nic_charge(g)[0] == 0 and scale_out_nics(g) == 0
        cats = network_bill(g).by_category()
        assert cats["optics"]["capex"] == pytest.approx(512 * 225e9 * _row("cpo_price"))
        assert cats["cable"]["capex"] == pytest.approx(512 * (50 + 10))
        assert cats["ocs"]["capex"] == pytest.approx(512 * 300)


def test_the_cabling_ports_are_read_back():
    assert ocs_cabling_ports(build(CABLING)) is None      # its fibres are edges
    assert ocs_cabling_ports(build(CABLING + ",logical=ring")) == (
        "pluggable-optics", 32, 112.5e9, 10.0)


def test_a_realized_fabric_without_circuits_is_refused():
    # priced as its cabling from realize's record of its fibres (h508): 8 ports of 1,800
    # Gb/s at 1.5625 USD a Gb/s; a fabric file written before that record has no rate
    out = realize(ocs(gpus=4, ports=2, ocs_ports=4, medium="pluggable-optics"), [])
    assert network_bill(out, share="as-built").by_category()["optics"]["capex"] == \
        pytest.approx(8 * 1800 * 1.5625)
    out.graph["ocs_cabling"] = {k: v for k, v in out.graph["ocs_cabling"].items()
                                if k != "fibres"}
    with pytest.raises(UserError, match="no circuit set"):
        network_bill(out)
