"""The routes through the stand-ins of GPUs without a NIC of their own, worked out for
many pairs at once (route_dags.DagRoutes._stand_in_many; _routes_many leaves their
spread out), equal the pair-by-pair ones
(route_search.SearchedRoutes._one_forwarder for each pair, which the many-pair form
replaced): the same times to the last bit and the same bottleneck, on rail-optimized
fabrics with 1, 2, 4 and 8 NICs for 8 GPUs a server, healthy or with a NIC link or a rail
leaf failed, for direct all-to-all (with and without PXN), all-gather and broadcast."""
import numpy as np
import pytest

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.degraded import degrade
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from topologies import build

CALIBRATIONS = {"default": None, "ideal": Calibration.ideal(),
                "no-pxn": Calibration.ideal().with_(pxn=False)}
OPS = (("all-to-all", "direct"), ("all-gather", "direct"), ("all-gather", None),
       ("broadcast", None))


def _none_at_once(self, src, dst):
    """Every pair left to _one_forwarder, one by one (the code before the many-pair form)."""
    z = np.zeros(0, dtype=np.int64)
    return np.zeros(len(src), dtype=bool), z, z, np.zeros(0), np.zeros(0), z


def _times(graph, calibration):
    kw = {} if calibration is None else {"calibration": calibration}
    gpus = [x for x, k in graph.nodes(data="kind") if k == "gpu"]
    out = []
    for op, algorithm in OPS:
        r = FabricCostModel(graph, validated=True, **kw).cost(op, 2 ** 26, gpus, algorithm)
        out.append((op, algorithm, repr(r.time), str(r.bottleneck)))
    return out


@pytest.mark.parametrize("servers", [2, 4, 16])
@pytest.mark.parametrize("nics", [1, 2, 4, 8])
@pytest.mark.parametrize("failed", [None, "link", "leaf"])
def test_stand_in_routes_at_once_equal_one_by_one(monkeypatch, servers, nics, failed):
    g = build(f"rail-optimized:domains={servers},nics_per_server={nics}")
    if failed == "link":
        g = degrade(g, links=[("gpu0", "leaf0")])
    elif failed == "leaf":
        g = degrade(g, nodes=["leaf0"])
    seen = []
    many = Router._stand_in_many

    def counted(self, src, dst):
        got = many(self, src, dst)
        seen.append(int(got[0].sum()))
        return got

    monkeypatch.setattr(Router, "_stand_in_many", counted)
    at_once = {c: _times(g, cal) for c, cal in CALIBRATIONS.items()}
    # many pairs with an end without a NIC (past route_plans._WALK_MANY): some routed at
    # once (a failed leaf with one NIC a server leaves no stand-in at all)
    if (failed is None and nics < 8) or (failed == "link" and servers == 16):
        assert sum(seen) > 0
    monkeypatch.setattr(Router, "_stand_in_many", _none_at_once)
    one_by_one = {c: _times(g, cal) for c, cal in CALIBRATIONS.items()}
    assert at_once == one_by_one
