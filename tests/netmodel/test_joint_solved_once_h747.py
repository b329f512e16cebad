"""A joint split's linear programme is solved once per router (route_joint._solve keeps it
by everything it reads of the step): checked as flows (joint_flows) and then costed
(link_loads on a list, which the router does not keep), or costed alone and again as one
group of instances at once, the same programme gave HiGHS the same work twice.

The hand case of tests/netmodel/test_joint_routing_h478.py: a ring of 4 GPUs, links 0-1
and 1-3 at ``k B``, 0-2 and 2-3 at ``B``, gpu0 and gpu1 both sending ``n`` to gpu3: spread
together, a share ``x`` of gpu0's by gpu1 loads 1-3 with ``(1 + x) n`` over ``k B`` and
2-3 with ``(1 - x) n`` over ``B``, equal at ``x = (k - 1) / (k + 1)``: ``2 n / ((k + 1)
B)``, 2/3 n/B at ``k = 2`` and 1/2 n/B at ``k = 3`` (what gpu3 must take in over its two
links: no split beats it).
"""

import numpy as np
import pytest

import netmodel.collectives.route_joint as rj
from netmodel.collectives.route_joint import joint_flows
from netmodel.collectives.routing import Router
from tests.netmodel.test_joint_routing_h478 import B, _ring4

STEP = [("gpu0", "gpu3", 1.0), ("gpu1", "gpu3", 1.0)]   # a list: link_loads keeps none


@pytest.fixture
def solves(monkeypatch):
    asked = []
    solve = rj._solve_programme

    def spy(*args):
        asked.append(args)
        return solve(*args)

    monkeypatch.setattr(rj, "_solve_programme", spy)
    return asked


def _busiest(r, links, load):
    return float((load / r.bandwidth[links]).max())


def test_flows_then_loads_one_solve_h747(solves):
    r = Router(_ring4())
    flows = joint_flows(r, STEP)
    assert flows is not None and len(solves) == 1
    links, load = r.link_loads(STEP)[:2]
    links2, load2 = r.link_loads(list(STEP))[:2]
    assert len(solves) == 1   # the same programme: kept
    assert _busiest(r, links, load) == pytest.approx(2 / 3 / B, rel=1e-9)
    # the same numbers as a router that solves it afresh, and each call its own arrays
    fresh = Router(_ring4())
    f_links, f_load = fresh.link_loads(STEP)[:2]
    assert len(solves) == 2
    for got in ((links, load), (links2, load2)):
        assert np.array_equal(got[0], f_links) and np.array_equal(got[1], f_load)
    assert load is not load2 and load.flags.writeable


def test_another_step_or_fabric_solves_again_h747(solves):
    r = Router(_ring4())
    r.link_loads(STEP)
    # other fractions: another programme
    r.link_loads([("gpu0", "gpu3", 0.5), ("gpu1", "gpu3", 1.0)])
    assert len(solves) == 2
    # links 0-1 and 1-3 three times as fast: another router, another answer
    r3 = Router(_ring4(3.0))
    links, load = r3.link_loads(STEP)[:2]
    assert len(solves) == 3
    assert _busiest(r3, links, load) == pytest.approx(1 / 2 / B, rel=1e-9)
