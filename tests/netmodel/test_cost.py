"""Cluster cost of ownership and cost per token: hand-derived values, the host power rows
and bad input (the network's bill alone: test_network_bill.py)."""

from __future__ import annotations

import math

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu, gpu_names
from compute.power import gpu_power
from compute.rows import read_host_powers
from compute.yield_model import gpu_price
from netmodel.study.cost import SECONDS_PER_YEAR, _best, cost_summary, parameters
from netmodel.study.fabric_search import fabric_search
from netmodel.study.host_bill import host_power, host_powers
from netmodel.study.network_bill import network_bill, network_costs
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from topologies import build

GBPS = 1e9  # bits/s


def test_dgx_h100_max_power_is_the_published_10_2_kw():
    # NVIDIA DGX H100 max system power 10.2 kW (P60): 8 GPUs at TDP, the NVSwitch board,
    # the host at full load and 8 NIC-side 400G optics of one server of the superpod (4
    # twin-port 800G modules, 17 W each: 8.5 W a NIC end, 400 Gb/s x 21.25 pJ/bit)
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode", host_load_fraction=1.0)
    b = network_bill(build("superpod"))
    per_server = {i.what: i.power / i.count for i in b.items}
    server = (8 * 700 + per_server["tier-0 switch 144 of 256 x 200 Gb/s"]
              + 8 * s.power_host / s.gpus + 8 * 400 * GBPS * 21.25e-12)
    assert server == pytest.approx(10_200, rel=0.005)   # 10,201 W; 10,390 W before


def test_an_idle_cluster_draws_idle_power():
    s = cost_summary("lite-flat", "Llama-3-70B", "decode", utilization=0.0)
    assert s.power_gpu == pytest.approx(128 * gpu_power("Lite", "idle"))
    assert s.power_gpu == pytest.approx(128 * 0.115 * 175)
    assert s.tokens_per_s == 0
    assert s.tokens_per_s_per_w is None and s.usd_per_mtoken is None


def test_tco_by_hand():
    best = fabric_search("Llama-3-70B", "h100-dgx", "decode").best
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode", best)
    instances = 32 // best.tp
    stranded = 32 - instances * best.tp
    assert s.instances == instances
    assert s.tokens_per_s == pytest.approx(instances * best.tokens_per_s)
    # the served GPUs draw idle + (TDP - idle) x a, a the time average over the step's
    # stages of min(1, u_c / 0.7 + 0.354 u_m), u_c and u_m the stage's compute and HBM
    # (or, in a collective, link) busy shares at peak rate
    a = sum(x.count * min(x.time, x.compute_time / 0.7
                                + 0.354 * min(x.time, x.memory_time + x.network_time))
            for x in best.stages) / best.latency
    assert 0.3 < a < 1
    assert s.power_gpu == pytest.approx(instances * best.tp * (80.5 + 619.5 * a)
                                        + stranded * 0.115 * 700)
    assert s.power_host == pytest.approx(32 * 535 * 0.75)
    assert s.capex_gpu == pytest.approx(32 * 27500)
    assert s.capex_host == pytest.approx(32 * 4001)
    capex = s.capex_gpu + s.capex_host + s.capex_network
    assert s.capex_per_year == pytest.approx(capex / 5 + 0.05 * capex)
    kwh = s.power_it * 1.1 * 8766 / 1e3
    assert s.energy_per_year == pytest.approx(kwh * 0.0826, rel=1e-4)
    # the facility rented for 32 x (700 W GPU + 535 W host at max) + the network, at
    # $184.06 per kW a month (CBRE H2 2024), 12 months a year
    assert s.power_provisioned == pytest.approx(32 * (700 + 535) + s.power_network)
    assert s.colocation_per_year == pytest.approx(s.power_provisioned / 1e3 * 184.06 * 12)
    tokens_per_year = s.tokens_per_s * SECONDS_PER_YEAR
    assert s.usd_per_mtoken == pytest.approx((s.capex_per_year + s.energy_per_year
                                              + s.colocation_per_year)
                                             / tokens_per_year * 1e6)
    assert s.tokens_per_s_per_w == pytest.approx(s.tokens_per_s / s.power_it)
    assert s.tokens_per_j == pytest.approx(s.tokens_per_s / (1.1 * s.power_it))
    d = s.to_dict()
    assert d["capex_usd"]["total"] == pytest.approx(capex)
    assert d["network_share_capex"] == pytest.approx(s.capex_network / capex)
    assert sum(d["power_w"]["network_by_category"].values()) == pytest.approx(s.power_network)


def test_lite_hosts_and_price_scale_from_the_h100():
    s = cost_summary("lite-ocs", "Llama-3-70B", "prefill")
    # a quarter of a DGX H100 host each, less its quarter of a NIC: a Lite's OCS ports are
    # co-packaged optics, no NIC (tests/netmodel/test_cost_nics_cpo_h452.py)
    assert s.capex_host == pytest.approx(128 * (4001 - 1599) / 4)
    assert s.gpu_price == pytest.approx(gpu_price("Lite"))


def test_sweep_parameters_move_the_right_terms():
    base = cost_summary("lite-flat", "Llama-3-70B", "decode")
    best = fabric_search("Llama-3-70B", "lite-flat", "decode").best
    dear_cpo = cost_summary("lite-flat", "Llama-3-70B", "decode", best,
                            cpo_price=2 * network_costs()["cpo_price"].value)
    assert dear_cpo.capex_network > base.capex_network
    assert dear_cpo.capex_gpu == base.capex_gpu
    dirty = cost_summary("lite-flat", "Llama-3-70B", "decode", best,
                         defect_density=0.5e4, reference_price=None)
    # every GPU keeps the H100's margin: a Lite's price moves with its package's share
    assert dirty.gpu_package_cost > base.gpu_package_cost
    cheap_power = cost_summary("lite-flat", "Llama-3-70B", "decode", best,
                               electricity_price=0.0)
    assert cheap_power.energy_per_year == 0 and cheap_power.usd_per_mtoken < base.usd_per_mtoken
    dgx = cost_summary("h100-dgx", "Llama-3-70B", "decode",
                       cpo_price=2 * network_costs()["cpo_price"].value)
    assert dgx.capex_network == pytest.approx(cost_summary("h100-dgx", "Llama-3-70B",
                                                           "decode").capex_network)


def test_kept_prices_are_the_yield_models_for_each_gpu_and_parameters():
    """cost_summary keeps each GPU's price per parameters: a row priced with other
    parameters between two default ones gets its own price, and the kept ones are
    compute.yield_model's, to the last bit."""
    from compute.yield_model import package_cost
    from netmodel.study.cost import warm_prices

    warm_prices(["H100-SXM", "Lite"])
    best = fabric_search("Llama-3-70B", "lite-flat", "decode").best
    runs = [cost_summary("lite-flat", "Llama-3-70B", "decode", best, **kw)
            for kw in ({}, {"defect_density": 0.5e4, "reference_price": None},
                       {"reference_price": 30000.0}, {})]
    assert [r.gpu_price for r in runs] == [
        gpu_price("Lite"), gpu_price("Lite", defect_density=0.5e4),
        gpu_price("Lite", reference_price=30000.0), gpu_price("Lite")]
    assert [r.gpu_package_cost for r in runs] == [
        package_cost("Lite").total, package_cost("Lite", defect_density=0.5e4).total,
        package_cost("Lite").total, package_cost("Lite").total]
    assert len({r.gpu_price for r in runs[:3]}) == 3   # each parameter set its own price


def test_clock_scales_gpu_power():
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode", clock=0.7)
    assert s.gpu.endswith("@0.7x")
    active = s.instances * s.tp
    best = _best(get_scenario("h100-dgx"), "Llama-3-70B", "decode", 0.7)
    assert (best.gpu, best.tp, best.batch) == (s.gpu, s.tp, s.batch)
    assert s.power_gpu == pytest.approx(active * gpu_power("H100-SXM", "decode", best, clock=0.7)
                                        + (32 - active) * gpu_power("H100-SXM", "idle"))
    assert s.gpu_price == pytest.approx(27500)  # same die, same price


@pytest.mark.parametrize("kwargs, fragment", [
    ({"colour": 1}, "unknown cost parameter(s) colour"),
    ({"cpo_price": -1.0}, "cpo_price must be a finite number >= 0"),
    ({"pluggable_energy": math.nan}, "pluggable_energy must be a finite number"),
    ({"utilization": 1.5}, "utilization must be a share of the time serving, from 0 to at most 1"),
    ({"pue": 0.9}, "pue must be >= 1"),
    ({"electricity_price": -0.1}, "electricity_price must be"),
    ({"wafer_price": -1.0}, "wafer_price must be"),
    ({"share": "half"}, "unknown network share 'half'"),
])
def test_bad_input(kwargs, fragment):
    with pytest.raises(UserError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        cost_summary("lite-ocs", "Llama-3-70B", "decode", **kwargs)


def test_parameters_list_is_complete():
    names = parameters()
    assert "wafer_price" in names and "cpo_energy" in names and "pue" in names
    assert len(names) == len(set(names))
    assert set(names) - set(parameters(numeric=True)) == {"yield_model"}


def test_the_yield_model_is_its_own_parameter_not_the_llm():
    """``yield_model`` picks compute.yield_model's model; it once shared the name ``model``
    with the LLM argument and could not be passed at all."""
    best = fabric_search("Llama-3-70B", "h100-dgx", "decode").best
    kw = dict(reference_price=None)  # price from the package cost, so the yield shows
    poisson = cost_summary("h100-dgx", "Llama-3-70B", "decode", best, yield_model="poisson", **kw)
    murphy = cost_summary("h100-dgx", "Llama-3-70B", "decode", best, yield_model="murphy", **kw)
    assert poisson.model == murphy.model == "Llama-3-70B"
    # a big die: Poisson yield exp(-AD) is below Murphy's ((1 - e^-AD) / AD)^2, so it costs more
    assert poisson.gpu_package_cost > murphy.gpu_package_cost
    with pytest.raises(UserError, match="unknown yield model"):
        cost_summary("h100-dgx", "Llama-3-70B", "decode", best, yield_model="gauss")


# ------------------------------------------------------------------ figures

def test_figures_are_written(tmp_path):
    from compute.outputs import atomic_write
    from compute.yield_model import package_cost, yield_curve
    from netmodel.study.cost_plots import plot_cost_per_scenario, plot_yield_vs_area

    curves = {"D = 0.1": yield_curve(), "D = 0.2": yield_curve(defect_density=2000.0)}
    marks = {"H100": package_cost("H100-SXM"), "Lite": package_cost("Lite")}
    y = atomic_write(tmp_path / "yield.png", lambda p: plot_yield_vs_area(curves, p, marks))
    summaries = [cost_summary(n, "Llama-3-70B", "decode") for n in ("h100-dgx", "lite-ocs")]
    c = atomic_write(tmp_path / "cost.svg", lambda p: plot_cost_per_scenario(summaries, p))
    assert open(y, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in open(c, "rb").read(400)
    with pytest.raises(UserError, match="at least one"):
        plot_cost_per_scenario([], tmp_path / "x.png")
    with pytest.raises(UserError, match="must end in one of"):
        plot_yield_vs_area(curves, tmp_path / "x.gif")


def test_a_pipelined_instance_counts_its_tp_x_pp_gpus():
    # Llama-3-70B decode as TP 4 x PP 2 (8 GPUs an instance) on h100-dgx's 32 H100: 4
    # instances, all 32 GPUs serving, tokens/s = 4 x one instance's x utilization. It was
    # 32 // TP = 8 instances (64 GPUs' worth on 32), twice the tokens/s and half the $ per
    # token; the summary names the whole configuration (was 'TP 4 x batch ...').
    from compute.search import search

    best = search("Llama-3-70B", "H100-SXM", "decode", tp=[4], pp=[2]).best
    assert (best.tp, best.pp, best.gpus) == (4, 2, 8)
    u = 0.5
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode", best=best, utilization=u)
    assert (s.gpus, s.instances, s.config) == (32, 4, "TP 4 x PP 2")
    assert s.tokens_per_s == pytest.approx(4 * best.tokens_per_s * u, rel=1e-12)
    serving, idle = (gpu_power("H100-SXM", p, best) for p in ("decode", "idle"))
    assert s.power_gpu == pytest.approx(32 * (u * serving + (1 - u) * idle), rel=1e-12)


# ------------------------------------------------------------------ host power per system

GB300_RACKS = "docs/examples/gb300-nvl72.toml"


def test_h100_host_unchanged_bit_for_bit():
    # the H100 keeps the rule's base row: 535 W x 0.75 and $4,001 a GPU, exactly
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode")
    assert s.power_host == 32 * 535 * 0.75 == 12_840.0
    assert s.capex_host == 32 * 4001.0
    assert host_power(get_gpu("H100-SXM")) == 535.0


def test_lite_host_keeps_the_tdp_rule():
    # a Lite (175 W) has no system of its own: 535 W x 175/700 = 133.75 W, $4,001 / 4, each
    # less its quarter of a NIC (24.9 W, $1,599): lite-flat's Lites hold none (co-packaged
    # optics, tests/netmodel/test_cost_nics_cpo_h452.py)
    s = cost_summary("lite-flat", "Llama-3-70B", "decode")
    assert s.power_host == pytest.approx(128 * (133.75 - 24.9 / 4) * 0.75)
    assert s.capex_host == pytest.approx(128 * (4001 - 1599) / 4)


def test_gb300_nvl72_host_from_the_rack_figure():
    # (120,000 W rack - 72 x 1,400 W GPUs - 4,561.92 W of NVLink switches [72 x 900 GB/s x
    # 8 bit x 8.8 pJ/bit] - 72 x 17 W NIC optics [800G modules]) / 72 = 186.3 W;
    # the TDP rule gave 534 x 1,400 / 700 = 1,068 W (801 W under load: 115,344 W for 144),
    # when host_power_per_h100 was 534 W
    s = cost_summary(GB300_RACKS, "Llama-3-70B", "decode")
    assert s.power_host == 144 * 186 * 0.75 == 20_088.0
    # cost: the TDP rule, the host less its ConnectX-7 ($1,599), plus each GPU's 800 Gb/s
    # link's ConnectX-8 ($1,779; tests/netmodel/test_nic_classes_h486.py): 144 x $6,583
    assert s.capex_host == pytest.approx(144 * ((4001 - 1599) * 2 + 1779))


def test_b200_dgx_host_from_its_14_3_kw():
    # (14,300 - 8 x 1,000 - 506.88 NVSwitches - 4 x 17 W twin-port optics) / 8 = 715.6 -> 716 W
    # (rule: 762.9)
    s = cost_summary("h100-dgx@B200-HGX", "Llama-3-8B", "decode")
    assert s.power_host == 32 * 716 * 0.75 == 17_184.0


@pytest.mark.parametrize(("scenario", "system_max", "gpus", "tdp", "modules", "cls"), [
    # the NIC-side pluggable modules a GPU of the system ships (modules a GPU, their class;
    # tests/netmodel/test_host_power_module_classes.py): DGX A100 a single-port 200G each,
    # DGX B200 half a twin-port 800G (4 cages, 8 NICs), ConnectX-8 an 800G each, GB200 a
    # 400G each (an assumption); the DGX H100 and H200 as the DGX B200
    ("h100-dgx@A100-SXM-80GB", 6_500, 8, 400, 1, "200G"),     # DGX A100
    ("h100-dgx", 10_200, 8, 700, 0.5, "800G"),                # DGX H100
    ("h100-dgx@H200-SXM", 10_200, 8, 700, 0.5, "800G"),       # DGX H200
    ("h100-dgx@B200-HGX", 14_300, 8, 1_000, 0.5, "800G"),     # DGX B200
    ("h100-dgx@B300-HGX", 14_500, 8, 1_100, 1, "800G"),       # DGX B300
    (f"{GB300_RACKS}@GB200-NVL72", 120_000, 72, 1_200, 1, "400G"),  # GB200 NVL72 rack
    (GB300_RACKS, 120_000, 72, 1_400, 1, "800G"),             # GB300 NVL72 rack
])
def test_system_max_power_is_the_published_figure(scenario, system_max, gpus, tdp, modules,
                                                  cls):
    # one system at full load: its GPUs at TDP, the host, its NVSwitches (tier-0 switch
    # power of the fabric's bill, per GPU) and its NIC-side modules at their class's power
    # (netmodel/data/network_costs.toml [pluggable_module_power])
    from netmodel.study.optic_classes import module_classes

    s = cost_summary(scenario, "Llama-3-8B", "decode", host_load_fraction=1.0)
    b = network_bill(build_fabric(scenario))
    nvswitch = sum(i.power for i in b.items if i.what.startswith("tier-0")) / s.gpus
    nic = modules * {c.name: c.power for c in module_classes()}[cls]
    per_gpu = tdp + s.power_host / s.gpus + nvswitch + nic
    # within 0.5 W a GPU: the rows are whole W
    assert gpus * per_gpu == pytest.approx(system_max, abs=gpus * 0.5)


def test_host_power_rows_refuse_bad_values():
    row = {"value": 700, "unit": "W", "source": "s", "ref": "", "confidence": "derived"}
    names = gpu_names()
    for bad, says in ((float("nan"), "got nan"), (-5, "got -5")):
        with pytest.raises(UserError, match=f"B200-HGX.*finite number >= 0, {says}"):
            read_host_powers({"B200-HGX": dict(row, value=bad)}, "t.toml", names)
    with pytest.raises(UserError, match="unit must be 'W'"):
        read_host_powers({"B200-HGX": dict(row, unit="USD")}, "t.toml", names)
    with pytest.raises(UserError, match=r"\[X100\] is not a GPU of the catalog"):
        read_host_powers({"X100": row}, "t.toml", names)


def test_every_host_power_row_is_sourced_and_not_h100():
    rows = host_powers()
    assert "H100-SXM" not in rows   # its figure is host_power_per_h100, said once
    assert set(rows) >= {"A100-SXM-80GB", "B200-HGX", "B300-HGX", "GB200-NVL72",
                         "GB300-NVL72"}
    assert not any(n.startswith("Lite") for n in rows)
    for p in rows.values():
        assert p.unit == "W" and p.source.strip() and p.confidence
