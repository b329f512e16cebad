"""Review of the NIC classes (0e66280, 0d50dc4, 7087d52): bills worked out by hand from the
data rows, the failure model's NICs against the bill's on random small fabrics, and the
host's own NIC taken pro rata as the links' are (h489).

The rows (compute/data/economics.toml): a DGX H100 host $4,001 and 535 W a GPU at the max
(host_cost_per_h100, host_power_per_h100), 75 % of it on average (host_load_fraction); the
400G class $1,599 / 24.9 W (nic_price, nic_power), the 800G class $1,779 / 49.8 W
(nic_price_800g, nic_power_800g).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from importlib import resources

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.hardware import load_gpu_file
from compute.yield_model import parameter
from netmodel.study.cost import cost_summary
from netmodel.study.host_bill import NIC_CLASSES, nic_charge, nic_class
from netmodel.study.scenario_catalog import get_scenario
from topologies import build
from topologies.failure_domains import components
from topologies.inventory import bill_of_materials
from topologies.nics import NIC_MEDIA, nic_gpus, nic_ports
from topologies.optical import realize

MODEL = "Llama-3-70B"


def test_the_rows_these_bills_are_worked_from():
    assert parameter("host_cost_per_h100") == 4001
    assert parameter("host_power_per_h100") == 535
    assert parameter("host_load_fraction") == 0.75
    assert (parameter("nic_price"), parameter("nic_power")) == (1599, 24.9)
    assert (parameter("nic_price_800g"), parameter("nic_power_800g")) == (1779, 49.8)


def test_h100_dgx_is_the_reference_bill_as_before():
    # 32 H100, each with its own 400G ConnectX-7: every host is its DGX H100 figure, the NIC
    # it holds taken off and the same NIC put back: $4,001 and 535 W a GPU, as before the
    # classes (when a GPU with a NIC took nothing off)
    s = cost_summary("h100-dgx", MODEL, "decode")
    assert s.gpus == 32 and s.nics == 32 and s.nic_classes == ((400e9, 32.0),)
    assert s.capex_host == pytest.approx(32 * 4001)                 # $128,032
    assert s.power_host == pytest.approx(32 * 535 * 0.75)           # 12,840 W
    assert s.capex_nics == pytest.approx(32 * 1599)                 # $51,168
    assert s.power_nics == pytest.approx(32 * 24.9 * 0.75)          # 597.6 W


def _scenario(tmp_path, name: str, edit) -> object:
    text = resources.files("netmodel").joinpath(f"data/scenarios/{name}.toml").read_text()
    path = tmp_path / f"{name}-h489.toml"
    path.write_text(edit(text).replace(f'name = "{name}"', f'name = "{name}-h489"'))
    return get_scenario(str(path))


def test_two_servers_rail_optimized_400g_half_the_gpus_with_a_nic(tmp_path):
    # h100-dgx cut to 2 servers of 8 H100 with 4 NICs a server (GPUs 0, 2, 4, 6): 8 NIC
    # ports at 400 Gb/s. Every host is charged without its own NIC, the 8 ports their NIC:
    # 16 x (4,001 - 1,599) + 8 x 1,599 = $51,224; at the max 16 x (535 - 24.9) + 8 x 24.9
    # = 8,360.8 W, 6,270.6 W on average. (The rule before the classes took the 8 missing
    # NICs off the 16 hosts: 16 x 4,001 - 8 x 1,599 = $51,224, 16 x 535 - 8 x 24.9 W: the
    # same, so nothing is subtracted twice.)
    def edit(text):
        text = re.sub(r"(?m)^domains = 4$", "domains = 2\nnics_per_server = 4", text)
        return text

    s = cost_summary(_scenario(tmp_path, "h100-dgx", edit), MODEL, "decode")
    assert s.gpus == 16 and s.nics == 8
    assert s.nic_classes == ((400e9, 8.0),)
    assert s.capex_host == pytest.approx(51_224)
    assert s.capex_host == pytest.approx(16 * 4001 - 8 * 1599)
    assert s.power_host == pytest.approx(8_360.8 * 0.75)
    assert s.capex_nics == pytest.approx(8 * 1599)
    assert s.power_nics == pytest.approx(8 * 24.9 * 0.75)


def test_lite_direct_at_800g_a_quarter_connectx8_a_lite(tmp_path):
    # lite-direct with Lite+NetBW (200 Gb/s scale-out a Lite, 175 W): the group's cable is
    # 4 x 200 = 800 Gb/s, each Lite a quarter of it, so a quarter of an 800G NIC: 128 Lites,
    # 32 ConnectX-8s' worth, 32 x $1,779 = $56,928 and 32 x 49.8 = 1,593.6 W at the max.
    # Hosts by the TDP rule at 175 / 700 = a quarter of a DGX H100 host: $4,001 / 4 and
    # 535 / 4 = 133.75 W a Lite, each holding a quarter of a ConnectX-7 ($1,599 / 4,
    # 24.9 / 4 = 6.225 W) which it is charged without:
    # 128 x (4,001 - 1,599) / 4 + 56,928 = $133,792;
    # 128 x (133.75 - 6.225) + 1,593.6 = 17,916.8 W at the max, 13,437.6 W on average.
    def edit(text):
        return text.replace('gpu = "Lite"', 'gpu = "Lite+NetBW"', 1)

    sc = _scenario(tmp_path, "lite-direct", edit)
    s = cost_summary(sc, MODEL, "decode")
    assert s.gpus == 128 and s.nics == 128
    assert s.nic_classes == ((800e9, 32.0),)
    assert s.nic_share == pytest.approx(0.25)
    assert s.capex_nics == pytest.approx(56_928)
    assert s.capex_host == pytest.approx(133_792)
    assert s.power_host == pytest.approx(17_916.8 * 0.75)
    assert s.power_nics == pytest.approx(1_593.6 * 0.75)


def test_plain_lite_direct_nets_to_the_quarter_host():
    # the plain Lite's 400G cable, a quarter ConnectX-7 a Lite: what a Lite's host is charged
    # without is what its link is charged, so a quarter DGX H100 host a Lite, as before
    s = cost_summary("lite-direct", MODEL, "decode")
    assert s.nic_classes == ((400e9, 32.0),)
    assert s.capex_host == pytest.approx(128 * 4001 / 4)
    assert s.power_host == pytest.approx(128 * 535 / 4 * 0.75)


_GPU_FILE = '''[gpu."B300-1600G"]
derive_from = "B300-HGX"
network_bandwidth_multiplier = 2.0
host_power_W = {value = 632, unit = "W", source = "DGX B300, as economics.toml", confidence = "derived"}
source = "test: a B300 with 1,600 Gb/s of scale-out a GPU"
'''


def test_a_host_holds_its_own_nic_pro_rata_above_the_fastest_class(tmp_path):
    # A GPU whose published host (632 W a GPU) holds a 1,600 Gb/s NIC port: its link is
    # charged the 800G class pro rata, 2 x 49.8 W, so its host must be charged without the
    # same 2 x 49.8 W: on its own 1,600 Gb/s links the host is its published 632 W, not
    # 632 - 49.8 + 99.6 = 681.8 W (the old code took one 800G NIC off).
    (tmp_path / "g.toml").write_text(_GPU_FILE)
    gpu = load_gpu_file(tmp_path / "g.toml")["B300-1600G"]
    assert gpu.scaleout_bandwidth * 8 == pytest.approx(1600e9)

    def edit(text):
        text = re.sub(r"(?m)^domains = 4$", "domains = 2", text)
        return text.replace('gpu = "H100-SXM"', f'gpu = "{tmp_path / "g.toml"}"', 1)

    s = cost_summary(_scenario(tmp_path, "h100-dgx", edit), MODEL, "decode")
    assert s.nic_classes == ((800e9, 32.0),)                     # 16 ports x 2 CX-8s
    assert s.power_nics == pytest.approx(32 * 49.8 * 0.75)
    assert s.power_host == pytest.approx(16 * 632 * 0.75)        # 7,584 W, the row's


# --- the bill's NICs against the failure model's, on random small fabrics ---------------

_MEDIA = st.sampled_from(["pluggable-optics", "copper", "co-packaged-optics", "fibre"])


@st.composite
def _specs(draw):
    kind = draw(st.sampled_from(["leaf-spine", "rail", "fat-tree", "lite-groups", "ocs"]))
    bw = draw(st.sampled_from([12.5, 25, 50, 100, 200]))
    if kind == "leaf-spine":
        return (f"leaf-spine:leaves={draw(st.integers(2, 4))},radix={draw(st.sampled_from([4, 8]))},"
                f"bandwidth={bw}GB/s,medium={draw(_MEDIA)}")
    if kind == "rail":
        nics = draw(st.sampled_from([8, 4, 2]))
        return (f"rail-optimized:domains={draw(st.integers(1, 3))},nics_per_server={nics},"
                f"medium={draw(_MEDIA)}")
    if kind == "fat-tree":
        return f"fat-tree:k=4,bandwidth={bw}GB/s,medium={draw(_MEDIA)}"
    if kind == "ocs":
        gpus, ports = draw(st.sampled_from([4, 8])), draw(st.integers(1, 2))
        medium = draw(st.sampled_from(["pluggable-optics", "fibre", "co-packaged-optics"]))
        return f"ocs:gpus={gpus},ports={ports},ocs_ports={gpus},medium={medium}"
    lites = draw(st.sampled_from([2, 4]))
    return (f"lite-groups:lites={lites},base=[rail-optimized:domains={draw(st.integers(1, 2))},"
            f"medium={draw(_MEDIA)}]")


def _gpu_ends(g, comp):
    if comp.fibres or "ocs_cabling" in g.graph:
        # a realized OCS fabric's NIC is a fibre's, named by its GPU (None: a fibre whose
        # ends are not known), the circuit it cuts or not (h506)
        yield from (gpu for gpu, _ in comp.fibres) if comp.fibres else (None,)
        return
    for u, v in (*comp.edges, *(e for e, _ in comp.scaled)):
        for n in (u, v):
            if g.nodes[n]["kind"] == "gpu":
                yield n


@st.composite
def _realized_ocs(draw):
    """An ocs fabric realized: as a ring, or as one to three random circuits between GPU
    pairs (each GPU a port on every OCS), so most ports have no circuit set (h506)."""
    gpus, ports = draw(st.sampled_from([4, 8])), draw(st.integers(1, 3))
    medium = draw(st.sampled_from(["pluggable-optics", "fibre", "co-packaged-optics"]))
    spec = f"ocs:gpus={gpus},ports={ports},ocs_ports={gpus},medium={medium}"
    names = [f"gpu{i}" for i in range(gpus)]
    pair = st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True).map(tuple)
    logical = draw(st.one_of(st.just("ring"), st.lists(pair, min_size=1, max_size=3)))
    try:
        return f"{spec} as {logical}", realize(build(spec), logical)
    except UserError:   # more circuits at a GPU than its ports
        assume(False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_specs())
def test_the_bill_has_a_nic_where_the_failure_model_has_one(spec):
    _agree(spec, build(spec))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_realized_ocs())
def test_a_realized_ocs_fabric_has_a_nic_where_the_failure_model_has_one(fabric):
    # every fibre of the cabling holds its NIC in the bill and fails in the failure model,
    # a circuit set on it or not (h506)
    spec, g = fabric
    _agree(spec, g)
    cabling = g.graph["ocs_cabling"]
    held = cabling["medium"] in NIC_MEDIA
    assert len(nic_ports(g)) == cabling["cables"] * held, spec
    assert bill_of_materials(g).nics == g.graph["gpus"] * held, spec


def _agree(spec, g):
    ports = nic_ports(g)
    charged = Counter(gpu for gpu, _, _ in ports)
    failing = Counter(n for comp in components(g, classes=["nic"])["nic"]
                      for n in _gpu_ends(g, comp))
    assert charged == failing, spec
    assert set(charged) - {None} == set(nic_gpus(g)), spec
    # the charge is the sum over ports of the class's rows, a breakout share its share,
    # above the fastest class pro rata
    usd = watts = 0.0
    for _, rate, cables in ports:
        cls, price, power = nic_class(rate * 8)
        assert rate * 8 <= cls * (1 + 1e-9) or cls == NIC_CLASSES[-1][0]
        worth = cables * max(1.0, rate * 8 / cls)
        usd += worth * parameter(price)
        watts += worth * parameter(power)
    got_usd, got_w, classes = nic_charge(g)
    assert got_usd == pytest.approx(usd) and got_w == pytest.approx(watts), spec
    assert sum(u for _, u in classes) == pytest.approx(
        sum(c * max(1.0, r * 8 / nic_class(r * 8)[0]) for _, r, c in ports))
    # a co-packaged fabric has no NIC at all
    if "co-packaged" in spec and "lite-groups" not in spec:
        assert not ports


@pytest.mark.parametrize("gbps, cls", [(100, 200e9), (200, 200e9), (300, 400e9),
                                       (400, 400e9), (401, 800e9), (800, 800e9),
                                       (1200, 800e9)])
def test_the_class_is_the_slowest_at_least_the_rate(gbps, cls):
    got = nic_class(gbps * 1e9)[0]
    assert got == cls
    faster = [c for c, _, _ in NIC_CLASSES if c >= gbps * 1e9]
    assert got == (min(faster) if faster else NIC_CLASSES[-1][0])
    assert math.isfinite(got)


def test_a_host_refuses_its_own_nic_pro_rata_by_name(tmp_path):
    # 2 x 320 W = 640 W of 800G-class NICs' worth above the 632 W host: refused, and the line
    # says the row, its value and the worth it was taken at
    (tmp_path / "g.toml").write_text(_GPU_FILE)

    def edit(text):
        text = re.sub(r"(?m)^domains = 4$", "domains = 2", text)
        return text.replace('gpu = "H100-SXM"', f'gpu = "{tmp_path / "g.toml"}"', 1)

    from compute.errors import UserError

    with pytest.raises(UserError, match=r"^nic_power_800g \(320 W x 2 NICs' worth, the GPU's "
                                        r"scale-out rate\) must be at most the host power of "
                                        r"B300-1600G \(632 W a GPU\)"):
        cost_summary(_scenario(tmp_path, "h100-dgx", edit), MODEL, "decode",
                     nic_power_800g=320.0)
