"""network_key keys NCCL's LL128 enabling by GPU type, not only by generation.

The final read of stop 46 found two scenarios of one generation (B200 and B300, fabric
parameters equal, tuner 'nccl', NCCL 2.27) sharing one cached cost model: ll128_off_capabilities
lists the B300's 10.3 (sm_103: NCCL enables LL128 on it from 2.28), so whichever ran first decided
LL128 for both (B300 after B200: ll128 True; alone: False).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import network_key, scenario_calibration


@pytest.mark.parametrize("release, b300_off", [("2.26", True), ("2.27", True),
                                               ("2.28", False), ("2.29", False)])
def test_ll128_off_follows_the_data_file(release, b300_off):
    cal = default_calibration().with_(nccl_release=release)
    assert cal.ll128_off("B300-HGX") is b300_off
    assert cal.ll128_off("B200-HGX") is False
    assert cal.ll128_off("H100-SXM") is False
    # the same flag as the calibration for the GPU sets
    assert cal.for_gpu("B300-HGX").ll128_enabled is not b300_off


@pytest.mark.parametrize("release", ["2.27", "2.28"])
def test_the_key_says_ll128_off_where_nccl_leaves_it_off(release):
    s = replace(get_scenario("h100-dgx@B300-HGX"), nccl_release=release, tuner="nccl")
    key = network_key(s, scenario_calibration(s))
    assert key.endswith("'LL128 off')") is (release == "2.27")
    b200 = replace(get_scenario("h100-dgx@B200-HGX"), nccl_release=release, tuner="nccl")
    assert "LL128 off" not in network_key(b200, scenario_calibration(b200))
