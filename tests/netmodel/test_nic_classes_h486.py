"""NICs are priced and powered by their link's rate, each figure sourced (h486).

Every NIC was charged one ConnectX-7 400G price ($1,599) and a 16 W estimate whatever its
generation. Now a GPU's link a NIC drives is charged the slowest NIC class at least its cable
rate (``netmodel.study.host_bill.NIC_CLASSES``: 200, 400 and 800 Gb/s; rows of
compute/data/economics.toml), one a cable, a breakout share its share; the hosts are
charged without the NIC they hold (the DGX H100's ConnectX-7: ``nic_price``, ``nic_power``,
24.9 W typical with passive cables from NVIDIA's ConnectX-7 manual; a published system's
host power row without its own NIC class). Every number below is worked out by hand from the
data rows, not read from the model.

2 servers x 8 H100 on rail leaves with 800 Gb/s NICs (h100-dgx cut to 2 servers, its
``nic_bandwidth`` 100 GB/s): 16 ConnectX-8, $1,779 and 49.8 W each (the 800G class's rows).
Hosts: 16 x ($4,001 - $1,599) + 16 x $1,779 = $66,896 (the old model: 16 x $4,001 =
$64,016); at the max 16 x (535 - 24.9) + 16 x 49.8 = 8,958.4 W, 6,718.8 W at the 75 %
average (old: 16 x 535 x 0.75 = 6,420 W).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from importlib import resources

import pytest

from compute.errors import UserError
from compute.rows import economics
from compute.yield_model import parameter
from netmodel.study.cost import cost_summary
from netmodel.study.host_bill import NIC_CLASSES, nic_charge, nic_class
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from topologies import build
from topologies.failure_domains import components
from topologies.nics import nic_gpus, nic_ports

MODEL = "Llama-3-70B"
GPUS = 16


def _dgx(tmp_path, nic_bandwidth: str, gpu: str = "H100-SXM"):
    """h100-dgx cut to 2 servers, its NICs at ``nic_bandwidth``."""
    text = resources.files("netmodel").joinpath("data/scenarios/h100-dgx.toml").read_text()
    text = re.sub(r"(?m)^domains = 4$", "domains = 2", text)
    text = re.sub(r'(?m)^nic_bandwidth = "\$scaleout"', f'nic_bandwidth = "{nic_bandwidth}"',
                  text)
    text = text.replace('gpu = "H100-SXM"', f'gpu = "{gpu}"')
    text = text.replace('name = "h100-dgx"', f'name = "dgx-{nic_bandwidth.replace("/", "")}"')
    path = tmp_path / "dgx.toml"
    path.write_text(text)
    return get_scenario(str(path))


def test_every_nic_class_row_has_its_source_and_no_datasheet_is_an_estimate():
    rows = economics()
    for _, price, power in NIC_CLASSES:
        for name in (price, power):
            row = rows[name]
            assert row.source.strip() and row.confidence, name
    # the 400G and 200G cards' power are NVIDIA's manual's figures (read second-hand), no
    # longer the 16 W estimate; the 800G card's is an estimate and says so
    assert rows["nic_power"].value == 24.9 and rows["nic_power"].confidence == "read-secondary"
    assert "ConnectX-7" in rows["nic_power"].source and "ESTIMATE" not in rows["nic_power"].source
    assert rows["nic_power_200g"].value == 16.7
    assert rows["nic_power_800g"].source.startswith("ESTIMATE")
    # 49.8 W: the ConnectX-7's 24.9 W per 400 Gb/s taken per bit at 800 Gb/s
    assert rows["nic_power_800g"].value == pytest.approx(24.9 * 800 / 400)
    assert rows["nic_price_800g"].value == 1779 and "ConnectX-8" in rows["nic_price_800g"].source


@pytest.mark.parametrize(("gbps", "row", "units"), [
    (100, "nic_price_200g", 1.0), (200, "nic_price_200g", 1.0), (201, "nic_price", 1.0),
    (400, "nic_price", 1.0), (800, "nic_price_800g", 1.0), (1600, "nic_price_800g", 2.0),
])
def test_a_cable_takes_the_slowest_class_at_least_its_rate(gbps, row, units):
    assert nic_class(gbps * 1e9)[1] == row
    # one leaf-spine GPU link at that rate: its NIC's worth and price (pro rata above 800G)
    g = build(f"leaf-spine:leaves=2,radix=4,bandwidth={gbps / 8}GB/s")
    usd, w, classes = nic_charge(g)
    per = units * parameter(row)
    assert classes == ((nic_class(gbps * 1e9)[0], 4 * units),)
    assert usd == pytest.approx(4 * per)
    assert w == pytest.approx(4 * units * parameter(nic_class(gbps * 1e9)[2]))


def test_two_servers_of_800g_nics_hand_derived(tmp_path):
    s = cost_summary(_dgx(tmp_path, "100GB/s"), MODEL, "decode")
    price, watts = parameter("nic_price_800g"), parameter("nic_power_800g")
    assert (price, watts) == (1779, 49.8)
    assert s.gpus == GPUS and s.nics == GPUS and s.nic_share == 1.0
    assert s.nic_classes == ((800e9, 16.0),)
    assert s.capex_nics == pytest.approx(16 * 1779)                      # $28,464
    assert s.capex_host == pytest.approx(16 * (4001 - 1599) + 16 * 1779)  # $66,896
    assert s.capex_host == pytest.approx(66_896)
    host_max = 16 * (535 - 24.9) + 16 * 49.8                              # 8,958.4 W
    assert host_max == pytest.approx(8_958.4)
    assert s.power_host == pytest.approx(host_max * 0.75)                 # 6,718.8 W
    assert s.power_nics == pytest.approx(16 * 49.8 * 0.75)                # 597.6 W
    assert "16 x 800G" in s.table()


def test_the_same_servers_at_400g_keep_the_dgx_figures(tmp_path):
    s = cost_summary(_dgx(tmp_path, "50GB/s"), MODEL, "decode")
    assert s.nic_classes == ((400e9, 16.0),)
    assert s.capex_host == pytest.approx(16 * 4001)          # the host holds its own NIC
    assert s.power_host == pytest.approx(16 * 535 * 0.75)
    assert s.power_nics == pytest.approx(16 * 24.9 * 0.75)


def test_a_published_host_holds_its_own_nic_class(tmp_path):
    # B300-HGX's host row (632 W, DGX B300) holds its ConnectX-8 (the GPU's 800 Gb/s):
    # on 800G links the host is its row; on 400G links 632 - 49.8 + 24.9 = 607.1 W a GPU.
    # Its price is the DGX H100 host's less its ConnectX-7, scaled by TDP (1,100 / 700 W),
    # plus the NIC of its link.
    share = 1100 / 700
    at800 = cost_summary(_dgx(tmp_path, "100GB/s", "B300-HGX"), MODEL, "decode")
    assert at800.power_host == pytest.approx(16 * 632 * 0.75)
    assert at800.capex_host == pytest.approx(16 * ((4001 - 1599) * share + 1779))
    at400 = cost_summary(_dgx(tmp_path, "50GB/s", "B300-HGX"), MODEL, "decode")
    assert at400.power_host == pytest.approx(16 * (632 - 49.8 + 24.9) * 0.75)
    assert at400.capex_host == pytest.approx(16 * ((4001 - 1599) * share + 1599))


def test_a_nic_hungrier_than_its_published_host_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"^nic_power_800g \(700 W\) must be at most the "
                                        r"host power of B300-HGX \(632 W a GPU\)"):
        cost_summary(_dgx(tmp_path, "100GB/s", "B300-HGX"), MODEL, "decode",
                     nic_power_800g=700.0)


def test_lite_direct_lites_share_a_400g_nic_a_quarter_each():
    g = build_fabric(get_scenario("lite-direct"))
    ports = nic_ports(g)
    assert len(ports) == 128
    assert {(r, c) for _, r, c in ports} == {(50e9, 0.25)}   # a quarter of a 400G cable
    usd, w, classes = nic_charge(g)
    assert classes == ((400e9, 32.0),)
    assert (usd, w) == pytest.approx((32 * 1599, 32 * 24.9))


@pytest.mark.parametrize("spec", [
    "ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics",
    "ocs:gpus=4,ports=2,ocs_ports=4",
    "leaf-spine:leaves=2,radix=4",
    "leaf-spine:leaves=2,radix=4,medium=co-packaged-optics",
    "rail-optimized:domains=2,nics_per_server=4",
    "lite-groups:base=[rail-optimized:domains=2]",
    "fat-tree:k=4",
])
def test_a_nic_is_charged_where_the_failure_model_has_one(spec):
    # one NIC port a GPU end of a link, as the failure model's nic class has one component
    # a GPU end; a breakout share (cables < 1) is one failing part, charged its share
    g = build(spec)
    charged = Counter(gpu for gpu, _, _ in nic_ports(g))
    failing = Counter()
    parts = Counter()
    for comp in components(g, classes=["nic"])["nic"]:
        for u, v in (*comp.edges, *(e for e, _ in comp.scaled)):
            for n in (u, v):
                if g.nodes[n]["kind"] == "gpu":
                    failing[n] += 1
                    parts[n] += comp.parts
    assert charged == failing
    assert set(charged) == set(nic_gpus(g))
    cables = Counter()
    for gpu, _, c in nic_ports(g):
        cables[gpu] += math.ceil(c - 1e-9)
    assert cables == parts


@pytest.mark.parametrize("spec", ["ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics",
                                  "ocs:gpus=16,ports=2,ocs_ports=16,medium=pluggable-optics"])
def test_a_realized_ocs_fabric_is_charged_a_nic_a_fibre_as_it_fails(spec):
    # realized as a ring, each GPU's two circuits ride one fibre each (one on each OCS):
    # the failure model has a NIC a fibre at the GPU's end, the bill a NIC a circuit end.
    # A port is the GPU's 900 GB/s scale-up over its 2 ports: 225 GB/s = 1,800 Gb/s, above
    # the fastest class, so 1,800 / 800 = 2.25 ConnectX-8s' worth a port.
    from topologies.optical import realize

    g = realize(build(spec), "ring")
    charged = Counter(gpu for gpu, _, _ in nic_ports(g))
    failing = Counter(gpu for comp in components(g, classes=["nic"])["nic"]
                      for gpu, _ in comp.fibres)
    assert charged == failing and set(charged.values()) == {2}
    gpus = len(charged)
    usd, w, classes = nic_charge(g)
    assert classes == ((800e9, 2 * gpus * 2.25),)
    assert usd == pytest.approx(2 * gpus * 2.25 * 1779)
