"""A GPU at another clock (compute.power.gpu_at_clock, ``NAME@0.8x``) runs in its own system:
its host power is the row of the GPU it was made from, as its price keeps that GPU's dies
(h269 review of df96157 / 6b9f0e3). Before, host_power_row looked the clocked spec up by its
own name, found none, and the TDP rule from the DGX H100 (534 W x TDP / 700, capped at
716 W) replaced the published row: a GB300 NVL72 at 0.8x drew 716 W of host a GPU, not 186,
so cost_summary(scenario.with_gpu(clocked)) and cost_summary(scenario, clock=0.8) disagreed
(32 GPUs at host_load_fraction 0.75: 17,184 W vs 4,464 W)."""

from __future__ import annotations

import pytest

from compute.power import gpu_at_clock, nominal_spec
from netmodel.study.host_bill import host_power, host_power_row


@pytest.mark.parametrize("name, watts", [
    # economics.toml [host_power_per_gpu]: GB300 NVL72 (~120 kW rack less GPUs, switches,
    # optics) / 72 = 186 W; DGX A100 (6.5 kW - 8 x 400 W - 169 W - 8 x 5 W) / 8 = 386 W
    ("GB300-NVL72", 186.0),
    ("A100-SXM-80GB", 386.0),
])
@pytest.mark.parametrize("ratio", [0.8, 1.2])
def test_a_clocked_catalog_gpu_keeps_its_systems_row(name, watts, ratio):
    clocked = gpu_at_clock(name, ratio)
    assert clocked.name == f"{name}@{ratio!r}x"
    assert host_power(clocked) == watts
    assert host_power_row(clocked).value == watts


def test_a_clocked_file_gpu_keeps_its_host_power_w(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('[gpu."B200-Liquid"]\nderive_from = "B200-HGX"\nsource = "test"\n'
                    'host_power_W = {value = 395, unit = "W", source = "GB200 NVL72 rack"}\n')
    from compute.hardware import load_gpu_file

    g = load_gpu_file(path)["B200-Liquid"]
    assert host_power(gpu_at_clock(g, 0.8)) == 395.0   # the TDP rule's cap gave 716


def test_a_gpu_without_a_row_keeps_the_tdp_rule_at_its_nominal_tdp():
    # H100-SXM has no row: 535 W x 700 / 700 at any clock (the clocked TDP is not nominal)
    assert host_power(gpu_at_clock("H100-SXM", 0.8)) == 535.0
    assert nominal_spec(gpu_at_clock("H100-SXM", 0.8)).name == "H100-SXM"
