"""A server with fewer scale-out NICs than GPUs is charged for the NICs it has (h427).

rail-optimized's ``nics_per_server`` (465ad58) builds such servers, but the hosts were
priced and powered with one NIC a GPU whatever the graph held: a DGX H100 host's $4,001
(SemiAnalysis's non-GPU bill of materials over 8, which holds the DGX H100's eight
ConnectX-7) and 535 W. Now the NICs are counted from the graph (a GPU with a link to a
switch of tier >= 1 or an OCS holds one) and each GPU without one takes ``nic_price`` and
``nic_power`` off its host; the switch ports, optics and cables a missing NIC saves were
already counted from the graph by the network's bill, and are checked here by hand.

2 x 8 H100 (rail-optimized, 400 Gb/s NICs, 2 servers): 8, 4, 2 and 1 NICs a server are
16, 8, 4 and 2 NICs, 0, 8, 12 and 14 missing. Every figure below is worked out by hand from
the data rows (economics.toml, network_costs.toml), not read from the model.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from compute.yield_model import parameter
from netmodel.study.cost import cost_summary
from netmodel.study.host_bill import _nic_power_share, scale_out_nics
from netmodel.study.network_bill import network_costs
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from topologies import build

SERVERS, GPUS_PER_SERVER = 2, 8
GPUS = SERVERS * GPUS_PER_SERVER
NIC_GBPS = 400
MODEL = "Llama-3-8B"


def _row(name: str) -> float:
    return network_costs()[name].value


def _scenario(tmp_path, nics: int):
    """h100-dgx cut to 2 servers with ``nics`` NICs a server (its 400 Gb/s NICs kept)."""
    text = resources.files("netmodel").joinpath("data/scenarios/h100-dgx.toml").read_text()
    text = re.sub(r"(?m)^domains = 4$", f"domains = {SERVERS}\nnics_per_server = {nics}", text)
    text = text.replace('name = "h100-dgx"', f'name = "h100-nics{nics}"')
    path = tmp_path / f"nics{nics}.toml"
    path.write_text(text)
    return get_scenario(str(path))


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nics")
    return {k: cost_summary(_scenario(tmp, k), MODEL, "decode") for k in (8, 4, 2, 1)}


@pytest.mark.parametrize("nics", [8, 4, 2, 1])
def test_nics_are_counted_from_the_graph(nics):
    g = build(f"rail-optimized:domains={SERVERS},nics_per_server={nics}")
    assert scale_out_nics(g) == SERVERS * nics


@pytest.mark.parametrize("nics", [4, 2, 1])
def test_host_capex_and_power_drop_by_the_missing_nics(summaries, nics):
    full, fewer = summaries[8], summaries[nics]
    missing = GPUS - SERVERS * nics                     # 8, 12, 14
    price, watts = parameter("nic_price"), parameter("nic_power")
    assert (price, watts) == (1599, 24.9)               # the rows' values (their sources there)
    # hosts: 16 x $4,001 less the missing NICs: $64,016 -> $51,224 / $44,828 / $41,630
    assert full.capex_host == pytest.approx(GPUS * parameter("host_cost_per_h100"))
    assert fewer.capex_host == pytest.approx(GPUS * parameter("host_cost_per_h100")
                                             - missing * price)
    assert full.capex_host - fewer.capex_host == pytest.approx(missing * price)
    # power at the hosts' max: 24.9 W a NIC (199.2 / 298.8 / 348.6 W); the average at 75%
    load = parameter("host_load_fraction")
    assert full.power_host - fewer.power_host == pytest.approx(missing * watts * load)
    assert fewer.power_host == pytest.approx((GPUS * 535 - missing * watts) * load)
    host_max = missing * watts
    assert full.power_provisioned - fewer.power_provisioned == pytest.approx(
        host_max + full.power_network - fewer.power_network)


@pytest.mark.parametrize("nics", [4, 2, 1])
def test_the_network_parts_a_nic_brings_are_saved_with_it(summaries, nics):
    # Each NIC is one 400 Gb/s GPU-leaf link: 2 optics ends, a leaf port, a 20 m cable; a
    # rail leaf has 32 ports down and 32 up, so at ports-used it is charged one uplink per
    # port used down: 2 more optics ends, a second leaf port, a spine port, a 50 m cable.
    # 4 ends, 3 switch ports and 2 cables a NIC. The ends sit two a module (twin-port 800G,
    # $1,250 and 17 W, P46, P40: the 800G class per bit), so 4 ends are 2 modules, but at
    # 1 NIC a server each server's lone NIC end holds a module alone, charged whole: half a
    # module a server more than the ends' share ($1,250 and 17 W over the 2 servers)
    full, fewer = summaries[8], summaries[nics]
    missing = GPUS - SERVERS * nics
    half_used = SERVERS / 2 if nics == 1 else 0
    bits = NIC_GBPS * 1e9
    optics_usd = 4 * bits * _row("pluggable_price")                   # $2,500
    ports_usd = 3 * bits * _row("switch_price")                        # $4,680
    cables_usd = 2 * _row("fibre_cable_price") + (20 + 50) * _row("fibre_price_per_m")
    assert optics_usd + ports_usd + cables_usd == pytest.approx(2_500 + 4_680 + 170)
    assert full.capex_network - fewer.capex_network == pytest.approx(
        missing * (optics_usd + ports_usd + cables_usd) - half_used * 1_250)
    optics_w = 4 * bits * _row("pluggable_energy")                     # 34 W
    ports_w = 3 * bits * _row("switch_energy") * _row("switch_overhead")   # 21.12 W
    assert full.power_network - fewer.power_network == pytest.approx(
        missing * (optics_w + ports_w) - half_used * 17)
    # the whole cluster: the NIC and what it plugs into
    assert full.capex_total - fewer.capex_total == pytest.approx(
        missing * (parameter("nic_price") + optics_usd + ports_usd + cables_usd)
        - half_used * 1_250)


@pytest.mark.parametrize("nics", [8, 4, 2, 1])
def test_bill_of_materials_counts_nics_transceivers_and_ports(summaries, nics):
    # as built, a rail leaf a NIC of a server (nics leaves), 64 ports: 32 down, 32 uplinks
    # to the spines; ports used: 16 GPUs x 18 NVLinks at the NVSwitches, a leaf port a NIC,
    # 2 an uplink (leaf and spine). Optics: twin-port modules (two ends a module, P40): a
    # server's nics NIC ends in ceil(nics / 2), a leaf's 2 down ends in 1 and 32 up in 16,
    # the spines' 32 x nics ends in 16 x nics (was 2 a GPU-leaf link, 2 an uplink)
    bom = summaries[nics].to_dict()["bill_of_materials"]
    nic_count = SERVERS * nics
    assert bom["pluggable_transceivers"] == SERVERS * -(-nics // 2) + nics * (1 + 16 + 16)
    assert bom["switch_ports_used"] == 16 * 18 + nic_count + 2 * 32 * nics
    # the bill says its NICs whatever their number (a NIC a GPU too)
    assert bom["nics"] == nic_count == summaries[nics].nics


def test_shipped_scenarios_with_a_nic_a_gpu_cost_as_before():
    # h100-dgx and lite-direct (a Lite's quarter of its H100's NIC port) have a NIC a GPU:
    # hosts are n x host_cost_per_h100 x the TDP share, as before this change. The Lites on
    # co-packaged optics hold none (tests/netmodel/test_cost_nics_cpo_h452.py)
    for name in ("h100-dgx", "lite-direct"):
        s = get_scenario(name)
        g = build_fabric(s)
        assert scale_out_nics(g) == g.graph["gpus"], name
        s = cost_summary(name, MODEL, "decode")
        share = get_gpu(s.gpu).tdp / 700      # the host price scaled by TDP (H100: 700 W)
        assert s.capex_host == pytest.approx(s.gpus * parameter("host_cost_per_h100") * share)
        assert s.nics == s.gpus == s.to_dict()["bill_of_materials"]["nics"]


def test_a_nic_share_follows_its_host():
    # a Lite (a quarter of an H100's TDP) has a quarter of a DGX H100 host's power, its
    # NIC's too; a B200's host is the DGX B200's own row (8 ConnectX-7 for 8 GPUs): one
    # NIC a GPU, its whole power (its price is scaled with the host's by TDP, cost_summary)
    per_h100 = parameter("host_power_per_h100")
    assert _nic_power_share(get_gpu("Lite"), per_h100) == pytest.approx(0.25)
    assert _nic_power_share(get_gpu("H100-SXM"), per_h100) == pytest.approx(1.0)
    assert _nic_power_share(get_gpu("B200-HGX"), per_h100) == pytest.approx(1.0)
    assert _nic_power_share(get_gpu("Lite"), 0.0) == 0.0


def test_a_nic_dearer_than_its_host_is_refused(tmp_path):
    s = _scenario(tmp_path, 4)
    with pytest.raises(UserError, match="nic_price .* must be at most host_cost_per_h100"):
        cost_summary(s, MODEL, "decode", nic_price=5000.0)
    with pytest.raises(UserError, match="nic_power .* must be at most"):
        cost_summary(s, MODEL, "decode", nic_power=600.0)
    # with a NIC a GPU nothing is taken off, but the host price still holds that NIC: the
    # same contradiction, refused alike (h469: one rule whatever the fabric, so a sweep of
    # several scenarios is not refused by which ones it holds)
    with pytest.raises(UserError, match="nic_price .* must be at most host_cost_per_h100"):
        cost_summary(_scenario(tmp_path, 8), MODEL, "decode", nic_price=5000.0)


# -- review (h433): one link rule for NICs and shared injection; fabrics with no network --


@pytest.mark.parametrize("nics", [8, 4, 2, 1])
def test_nics_and_shared_injection_read_one_link_rule(nics):
    # a GPU's links to a switch of tier >= 1 or an OCS (topologies.analysis.network_bandwidth)
    # on pluggable optics hold a NIC (topologies.nics.nic_gpus). rail-optimized's NIC is
    # 50 GB/s (400 Gb/s) on H100; nics of a server's 8 GPUs hold one (every 8/nics-th GPU)
    from topologies.analysis import network_bandwidth, scale_out_share

    g = build(f"rail-optimized:domains={SERVERS},nics_per_server={nics}")
    per_gpu = [network_bandwidth(g, f"gpu{i}") for i in range(GPUS)]
    stride = GPUS_PER_SERVER // nics
    assert per_gpu == [50e9 if i % stride == 0 else 0.0 for i in range(GPUS)]
    assert scale_out_nics(g) == sum(bw > 0 for bw in per_gpu) == SERVERS * nics
    # the server's NICs over its GPUs: 25, 12.5, 6.25 GB/s; None with a NIC a GPU
    share = scale_out_share(g)
    if nics == GPUS_PER_SERVER:
        assert share is None
    else:
        assert share == pytest.approx(nics * 50e9 / GPUS_PER_SERVER)


@pytest.mark.parametrize("spec", ["rail-optimized:domains=1", "single-switch:n=8",
                                  "torus:dims=2x4", "nvl72"])
def test_a_fabric_without_a_network_has_no_nics(spec):
    # one scale-up domain (the builders omit the scale-out tier) or GPUs wired to each
    # other: no link to a switch of tier >= 1 or an OCS, so no scale-out NIC
    assert scale_out_nics(build(spec)) == 0


def test_one_server_is_charged_no_nics(tmp_path):
    # h100-dgx on one server: its builder omits the rail leaves, so the 8 H100 hold no NIC
    # and each host is a DGX H100 host less a NIC: 8 x ($4,001 - $1,599) = $19,216; power
    # 8 x (535 - 24.9) W = 4,080.8 W at the max, 3,060.6 W at the 75% average
    text = resources.files("netmodel").joinpath("data/scenarios/h100-dgx.toml").read_text()
    path = tmp_path / "one.toml"
    path.write_text(re.sub(r"(?m)^domains = 4$", "domains = 1", text)
                    .replace('name = "h100-dgx"', 'name = "h100-one"'))
    s = cost_summary(get_scenario(str(path)), MODEL, "decode")
    assert s.gpus == 8 and s.nics == 0
    assert s.capex_host == pytest.approx(8 * (4001 - 1599))
    assert s.power_host == pytest.approx(8 * (535 - 24.9) * 0.75)
    assert s.to_dict()["bill_of_materials"]["nics"] == 0
