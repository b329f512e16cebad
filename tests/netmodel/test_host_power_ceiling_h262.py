"""The TDP rule for host power stops at the most any published system leaves a GPU (h262).

A GPU with no system row took the DGX H100's 534 W (now 535 W) host per GPU x TDP / 700 W, so a GPU
file's 1,400 W MI355X got 1,068 W: more than any published system. The per-system rows
(economics.toml, each a system's published max less GPUs at TDP and the network) run 186 to
716 W over TDPs of 400 to 1,400 W: A100 386 (DGX A100 6.5 kW), H100 535 (DGX H100 10.2 kW),
B200 716 (DGX B200 14.3 kW), B300 632 (DGX B300 14.5 kW), GB200 NVL72 394 and GB300 NVL72 186
(~120 kW racks). The rule now stops at the largest, DGX B200's 716 W (1.34 DGX H100 hosts)."""

from __future__ import annotations

import pytest

from compute.hardware import get_gpu, load_gpu_file
from netmodel.study.host_bill import host_power, host_power_ceiling

OUTSIDE = "docs/examples/outside-gpus.toml"


def test_the_ceiling_is_dgx_b200s_host():
    # (14,300 - 8 x 1,000 - 507 - 4 x 17) / 8 = 715.6 -> the 716 W row (4 twin-port modules)
    assert host_power_ceiling() == 716.0


@pytest.mark.parametrize("name, watts", [
    ("MI355X", 716.0),             # 534 x 1,400 / 700 = 1,068 before
    ("MI325X", 716.0),             # 534 x 1,000 / 700 = 762.9 before
    ("GH200-144G", 716.0),         # 1,000 W: 762.9 before
    ("Gaudi3", 535 * 900 / 700),   # 687.9, under the ceiling: the rule
    ("L40S", 535 * 350 / 700),     # 267.5
])
def test_a_file_gpu_takes_the_rule_up_to_the_ceiling(name, watts):
    assert host_power(load_gpu_file(OUTSIDE)[name]) == pytest.approx(watts)


def test_every_published_host_is_at_or_under_the_ceiling():
    # the ceiling only ever lowers the rule towards the published figures: no system row
    # exceeds it, and the rule above it (a TDP over 936.8 W) is above every row
    rows = {n: host_power(get_gpu(n)) for n in ("A100-SXM-80GB", "H100-SXM", "B200-HGX",
                                                 "B300-HGX", "GB200-NVL72", "GB300-NVL72")}
    # A100, H100 and GB200 NVL72 with their NIC modules at the bill's class power (200G 5 W,
    # twin-port 800G 17 W for two NICs, 400G 9 W): 387 -> 386, 534 -> 535 and 395 -> 394
    # (tests/netmodel/test_host_power_module_classes.py)
    assert rows == {"A100-SXM-80GB": 386.0, "H100-SXM": 535.0, "B200-HGX": 716.0,
                    "B300-HGX": 632.0, "GB200-NVL72": 394.0, "GB300-NVL72": 186.0}


def test_a_sweep_scales_rule_and_ceiling_alike():
    mi355x = load_gpu_file(OUTSIDE)["MI355X"]
    # 2,000 W a DGX H100 host: 2,000 x 716 / 535 = 2,676.6 for the capped GPU, 2,000 x
    # 0.25 = 500 for a Lite (TDP 175 W)
    assert host_power(mi355x, 2000) == pytest.approx(2000 * 716 / 535)
    assert host_power(get_gpu("Lite"), 2000) == pytest.approx(500.0)
    assert host_power(mi355x, 0) == 0.0
