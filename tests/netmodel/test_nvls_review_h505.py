"""Review of the tuner's NVLS/NVLSTree pricing (issue 11): the cache key and the Arm-host
rule of NVLSTree's size correction.

NCCL multiplies NVLSTree's algbw by ``treeCorrectionFactor`` on compute capability 10.0 or
more when the host is x86 (NVIDIA/nccl src/tuning/nvls.cc, ncclTuningNvlsModelSim); the data
file leaves it off on the Arm-hosted GPUs it lists (GB200, GB300). That rule reads the GPU's
name, which :func:`netmodel.study.scenario_fabric.network_key` left out: a GB200 and a B200
scenario of equal fabric parameters with tuner ``nccl`` shared one key, so one cached cost
model, and whichever ran first decided the correction for both.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.tuner_plugin import arm_hosted
from netmodel.study.scenario_fabric import network_key, scenario_calibration
from netmodel.study.scenarios import get_scenario
from topologies import build


def _key(gpu: str, tuner: str = "nccl") -> str:
    s = replace(get_scenario(f"h100-dgx@{gpu}"), tuner=tuner)
    return network_key(s, scenario_calibration(s))


@pytest.mark.parametrize("x86, arm", [("B200-HGX", "GB200-NVL72"),
                                      ("B300-HGX", "GB300-NVL72")])
def test_the_key_tells_an_arm_hosted_gpu_from_its_x86_twin(x86, arm):
    # same generation (blackwell), same fabric parameters: before, equal keys
    assert _key(x86) != _key(arm)
    assert _key(arm).endswith("'Arm host')")
    assert "Arm host" not in _key(x86)


def test_the_key_is_unchanged_without_a_tuner():
    # no tuner: the correction is never read, and the shipped keys stay as they were
    assert "Arm host" not in _key("GB200-NVL72", tuner="none")


def test_arm_hosted_follows_the_data_file_and_derivations():
    assert arm_hosted("GB200-NVL72") and arm_hosted("GB300-NVL72")
    assert not arm_hosted("B200-HGX") and not arm_hosted("H100-SXM")
    assert not arm_hosted("no-such-gpu")


def test_the_models_nvls_tree_correction_by_gpu():
    # 2 nodes of 8 Blackwell GPUs on a rail-optimized fabric: the x86 B200 takes NCCL's
    # NVLSTree correction, the Arm-hosted GB200 (same NVLink, same NICs) does not
    def correction(gpu: str) -> bool:
        m = FabricCostModel(build(f"rail-optimized:domains=2,gpu={gpu}"), tuner="nccl",
                            validated=True)
        g = m.nccl_graph(m.group(16))
        assert g.nvls_channels == 8
        return g.nvls_tree_correction

    assert correction("B200-HGX") is True
    assert correction("GB200-NVL72") is False
