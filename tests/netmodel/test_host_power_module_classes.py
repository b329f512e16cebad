"""A host's power is its system's published maximum less what netmodel counts elsewhere: the
GPUs at TDP, the NVSwitch chips (or an NVL72 rack's nine NVLink switch trays) at
switch_energy x the GPUs' NVLink bits, and the NIC-side pluggable modules the system ships,
each at its module class's power as the network bill charges it
(netmodel/data/network_costs.toml [pluggable_module_power]: 200G 5 W, 400G 9 W, 800G 17 W).
Each row of compute/data/economics.toml's [host_power_per_gpu] (and host_power_per_h100) is
derived so, to the watt; here the derivation is redone from the module class table and the
catalog, so a change of a class's power that moves a host says so.

Which modules each system ships (the rows' sources): DGX A100, 8 single-port ConnectX-6 HDR
200G (QSFP56), 8 200G modules; DGX H100 and DGX B200, four OSFP cages serving eight
single-port ConnectX-7 (NVIDIA DGX BasePOD reference architecture; DGX H100 User Guide,
Table 6), 4 twin-port 800G modules; DGX B300, 8 ConnectX-8 800G, 8 800G modules; GB200
NVL72, a ConnectX-7 400G a GPU taken as a single-port 400G module (an assumption); GB300
NVL72, a ConnectX-8 800G a GPU, 72 800G modules.
"""

from __future__ import annotations

import pytest

from compute.hardware import get_gpu
from compute.yield_model import parameter
from netmodel.study.host_bill import host_powers
from netmodel.study.network_bill import network_costs
from netmodel.study.optic_classes import module_classes

#: row: (system max W, GPUs, NIC-side modules, their class)
SYSTEMS = {
    "A100-SXM-80GB": (6500, 8, 8, "200G"),      # DGX A100
    "B200-HGX": (14300, 8, 4, "800G"),          # DGX B200
    "B300-HGX": (14500, 8, 8, "800G"),          # DGX B300
    "GB200-NVL72": (120000, 72, 72, "400G"),    # GB200 NVL72 rack
    "GB300-NVL72": (120000, 72, 72, "800G"),    # GB300 NVL72 rack (estimate)
}


def derived(gpu_name: str, system: float, gpus: int, modules: int, cls: str) -> float:
    """W a GPU of the host: (system - GPUs x TDP - NVSwitch - NIC modules) / GPUs."""
    gpu = get_gpu(gpu_name)
    power = {c.name: c.power for c in module_classes()}
    nvswitch = gpus * gpu.scaleup_bandwidth * 8 * network_costs()["switch_energy"].value
    return (system - gpus * gpu.tdp - nvswitch - modules * power[cls]) / gpus


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_each_host_row_is_its_system_less_the_bills_modules(name):
    assert host_powers()[name].value == round(derived(name, *SYSTEMS[name]))


def test_the_rows_moved_by_the_module_classes():
    # DGX A100: 8 x 5 W (200G class) where 8 x 4.25 W (21.25 pJ/bit) stood: 387.1 -> 386.4
    assert derived("A100-SXM-80GB", *SYSTEMS["A100-SXM-80GB"]) == pytest.approx(386.38)
    # GB200 NVL72: 72 x 9 W (400G class) where 72 x 8.5 W stood: 394.8 -> 394.3
    assert derived("GB200-NVL72", *SYSTEMS["GB200-NVL72"]) == pytest.approx(394.3067, abs=1e-4)
    # DGX B200: 4 twin-port 800G modules, 68 W, as 8 x 8.5 W at 21.25 pJ/bit: unchanged
    assert derived("B200-HGX", *SYSTEMS["B200-HGX"]) == pytest.approx(715.64)


def test_host_power_per_h100_is_the_dgx_h100_less_its_twin_port_modules():
    # 4 twin-port 800G modules (4 OSFP cages, 8 NICs), 8.5 W a NIC as the bill charges
    # h100-dgx, where 8 x 9 W (single-port 400G) stood: 534.3 -> 534.8, 534 -> 535 W
    assert derived("H100-SXM", 10200, 8, 4, "800G") == pytest.approx(534.82)
    assert parameter("host_power_per_h100") == round(derived("H100-SXM", 10200, 8, 4, "800G"))
