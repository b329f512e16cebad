"""A GPU whose network links are co-packaged optics on its own package holds no NIC (h452).

The hosts' figures hold one scale-out NIC a GPU (a DGX H100's eight ConnectX-7; a Lite's
host a quarter of one), and a GPU without one in the graph takes its share off
(``nic_price`` $1,599, ``nic_power`` 24.9 W, the ConnectX-7's datasheet figure since h486;
tests/netmodel/test_cost_nics_h427.py). The NIC
rule was a link to a switch of tier >= 1 or an OCS, so every Lite on lite-flat, lite-hier
and lite-ocs kept a quarter of a ConnectX-7 in its host, though its one network port is a
co-packaged optical engine driven by the Lite die's own (scale-up) I/O, already priced and
powered as optics by the network bill. Now a NIC drives only links of pluggable optics,
fibre or copper (``topologies.nics.NIC_MEDIA``).

Hand-derived, Llama-3-70B decode (the study's scenario), rows of economics.toml: a Lite's
host is a quarter of a DGX H100 host by TDP (175 / 700 W), so 128 Lites held
128 x 0.25 = 32 NICs: $51,168 and 128 x 0.25 x 24.9 W = 796.8 W at the hosts' max (597.6 W
at the 75 % average). Off lite-flat's cost a year: capex x (1/5 + 0.05) = $12,792, energy
597.6 W x PUE 1.1 x a year at $0.0826/kWh = $475.98, rent 796.8 W x $184.06/kW/month x 12 =
$1,759.91. h100-dgx holds a NIC a GPU on pluggable optics: unchanged.
"""

from __future__ import annotations

import pytest

from compute.units import SECONDS_PER_YEAR
from compute.yield_model import parameter
from netmodel.study.cost import cost_summary
from netmodel.study.host_bill import scale_out_nics
from netmodel.study.scenario_fabric import build_fabric
from topologies import build
from topologies.analysis import summary
from topologies.inventory import bill_of_materials
from topologies.nics import nic_gpus
from topologies.optical import realize

MODEL = "Llama-3-70B"
LITES = 128
QUARTER = 0.25          # a Lite's host: 175 W / 700 W of a DGX H100 host


@pytest.mark.parametrize(("scenario", "nics"), [
    ("h100-dgx", 32), ("lite-direct", 128), ("lite-flat", 0), ("lite-flat-inr", 0),
    ("lite-hier", 0), ("lite-ocs", 0)])
def test_shipped_scenarios_nics(scenario, nics):
    # h100-dgx: a ConnectX-7 a GPU on pluggable optics; lite-direct: each Lite its quarter
    # of its H100's NIC port (pluggable breakout); the other Lites: co-packaged optics only
    g = build_fabric(scenario)
    assert scale_out_nics(g) == len(nic_gpus(g)) == bill_of_materials(g).nics == nics


@pytest.mark.parametrize(("spec", "nics"), [
    ("leaf-spine:leaves=2,radix=4", 4),                              # pluggable optics
    ("leaf-spine:leaves=2,radix=4,medium=co-packaged-optics", 0),
    ("leaf-spine:leaves=2,radix=4,medium=copper", 4),
    ("ocs:gpus=4,ports=2,ocs_ports=4", 0),                            # CPO by default
    ("ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics", 4),
    ("rail-optimized:domains=1", 0),                                  # tier-0 only
])
def test_the_medium_at_the_gpu_says_whether_a_nic_drives_it(spec, nics):
    assert len(nic_gpus(build(spec))) == nics


def test_a_realized_ocs_fabric_counts_the_nics_its_optics_need():
    # circuits between GPUs: a NIC where a circuit's optics are pluggable
    spec = "ocs:gpus=16,ports=2,ocs_ports=16"
    assert len(nic_gpus(realize(build(spec), "ring"))) == 0
    assert len(nic_gpus(realize(build(spec + ",medium=pluggable-optics"), "ring"))) == 16


def test_lite_flat_hosts_lose_their_quarter_nics():
    s = cost_summary("lite-flat", MODEL, "decode")
    host, host_w = parameter("host_cost_per_h100"), parameter("host_power_per_h100")
    nic, nic_w = parameter("nic_price"), parameter("nic_power")
    assert (host, host_w, nic, nic_w) == (4001, 535, 1599, 24.9)
    assert s.nics == 0 and s.capex_nics == 0 and s.power_nics == 0
    # 128 x (4001 - 1599) x 0.25 = $76,864 (was 128 x 4001 x 0.25 = $128,032)
    assert s.capex_host == pytest.approx(76_864)
    # 128 x (535 - 24.9) x 0.25 x 0.75 = 12,242.4 W (was 12,840 W with the NICs in)
    assert s.power_host == pytest.approx(12_242.4)


def test_lite_flat_cost_per_token_falls_by_the_nics_hand_derived():
    # the same cluster with the NICs left in its hosts: nic_price and nic_power 0 take
    # nothing off, which is what the model charged before
    s = cost_summary("lite-flat", MODEL, "decode")
    kept = cost_summary("lite-flat", MODEL, "decode", nic_price=0.0, nic_power=0.0)
    assert s.tokens_per_s == kept.tokens_per_s > 0
    nics = LITES * QUARTER                                   # 32 NICs' worth
    usd, w_max = nics * 1599, nics * 24.9                    # $51,168; 796.8 W
    assert kept.capex_total - s.capex_total == pytest.approx(usd)
    assert kept.power_provisioned - s.power_provisioned == pytest.approx(w_max)
    capex_year = usd * (1 / 5 + 0.05)                        # $12,792
    energy_year = w_max * 0.75 * 1.1 * SECONDS_PER_YEAR * 0.0826 / 3.6e6   # $475.98
    rent_year = w_max / 1e3 * 184.06 * 12                    # $1,759.91
    assert capex_year == pytest.approx(12_792)
    assert energy_year == pytest.approx(475.98, abs=0.01)
    assert rent_year == pytest.approx(1_759.91, abs=0.01)
    assert kept.cost_per_year - s.cost_per_year == pytest.approx(
        capex_year + energy_year + rent_year)
    per_mtok = (capex_year + energy_year + rent_year) / (s.tokens_per_s * SECONDS_PER_YEAR) * 1e6
    assert kept.usd_per_mtoken - s.usd_per_mtoken == pytest.approx(per_mtok)


def test_the_h100_baseline_is_unchanged():
    s = cost_summary("h100-dgx", MODEL, "decode")
    assert s.nics == 32 and s.nic_share == 1.0
    assert s.capex_host == pytest.approx(32 * 4001)          # nothing taken off
    assert s.capex_nics == pytest.approx(32 * 1599)          # $51,168 of it the NICs
    assert s.power_nics == pytest.approx(32 * 24.9 * 0.75)   # 597.6 W of its average
    kept = cost_summary("h100-dgx", MODEL, "decode", nic_price=0.0, nic_power=0.0)
    assert s.usd_per_mtoken == pytest.approx(kept.usd_per_mtoken, rel=1e-12)


def test_the_bill_and_the_table_say_the_nics():
    dgx = cost_summary("h100-dgx", MODEL, "decode")
    assert dgx.to_dict()["nics"] == {"count": 32, "worth": 32,
                                     "capex_usd": pytest.approx(51_168),
                                     "power_w": pytest.approx(597.6)}
    assert dgx.to_dict()["bill_of_materials"]["nics"] == 32
    row = [r for r in dgx.table().splitlines() if r.startswith("NICs")]
    assert row == ["NICs                  32 GPUs with a NIC port, 32 NICs' worth (32 x 400G): "
                   "$51.2k, 598 W (in the hosts' figures)"]
    # lite-direct: 128 Lites on their H100's NIC ports, a quarter of a NIC each in its host
    direct = cost_summary("lite-direct", MODEL, "decode")
    assert direct.nic_share == QUARTER
    assert "128 GPUs with a NIC port, 32 NICs' worth (32 x 400G): $51.2k, 598 W" \
        in direct.table()
    flat = cost_summary("lite-flat", MODEL, "decode")
    assert "NICs                  none" in flat.table()
    assert flat.to_dict()["nics"] == {"count": 0, "worth": 0, "capex_usd": 0.0, "power_w": 0.0}


def test_the_inventory_says_the_nics():
    assert summary(build_fabric("h100-dgx")).to_dict()["bom"]["nics"] == 32
    assert summary(build_fabric("lite-flat")).to_dict()["bom"]["nics"] == 0
