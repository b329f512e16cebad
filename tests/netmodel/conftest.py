"""Fixtures shared by the collective tests of tests/netmodel."""

import pytest

from tests.netmodel.fabric_helpers import zero_latency


@pytest.fixture
def ideal_model():
    """``make(spec, alpha=1e-6, **kw)``: a FabricCostModel of the fabric ``spec`` under the
    ideal calibration (every step ``alpha``, no protocol or efficiency overheads) with every
    link's and switch's latency set to 0, so that costs are the closed forms the tests derive
    by hand (``alpha`` per step plus bytes over bandwidth)."""
    from netmodel.collectives.calibration import Calibration
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    def make(spec: str, alpha: float = 1e-6, **kw) -> FabricCostModel:
        return FabricCostModel(zero_latency(build(spec)), calibration=Calibration.ideal(alpha), **kw)

    return make


@pytest.fixture(scope="module")
def b200_nccl():
    """One 8-B200 NVSwitch server costed with NCCL's algorithms and the shipped calibration
    at NCCL 2.28 (the send/recv protocol tests' hand figures are derived on it: 2.28's LL
    rule, a peer's bytes up to its 32 channels x 16 KiB; from 2.29 one channel's 16 KiB)."""
    from netmodel.collectives.calibration_files import default_calibration
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    return FabricCostModel(build("single-switch:n=8,gpu=B200-HGX"), algorithms="nccl",
                           validated=True,
                           calibration=default_calibration().with_(nccl_release="2.28"))


@pytest.fixture(scope="module")
def lite_pair():
    """``(model, group)`` of two Lites of one lite-direct package (their 37.5 GB/s mesh link;
    the send/recv tests' hand figures, tests.netmodel.lite_direct)."""
    from netmodel.study.scenario_collectives import ScenarioCollectives

    m = ScenarioCollectives("lite-direct").model(2)
    return m, m.group(2)
