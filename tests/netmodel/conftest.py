"""Fixtures shared by the collective tests of tests/netmodel."""

import pytest


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
        g = build(spec)
        for _, _, d in g.edges(data=True):
            d["latency"] = 0.0
        for _, d in g.nodes(data=True):
            if "latency" in d:
                d["latency"] = 0.0
        return FabricCostModel(g, calibration=Calibration.ideal(alpha), **kw)

    return make
