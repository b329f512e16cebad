"""A large joint split solved over paths (netmodel/collectives/route_joint_paths.py): the
programme's least busiest link as HiGHS finds it solving the whole programme (flows per
commodity and link), to 1e-9 relative, on pairwise shifts of degraded tori in both ring
orders (no rotation left to fold, ``route_joint._symmetry``); the flows keep every
commodity's traffic; and a programme the paths cannot prove within their rounds, or whose
links are not levelled towards their destinations, is left to the whole solve.
"""

from __future__ import annotations

import numpy as np
import pytest

import netmodel.collectives.route_joint as rj
import netmodel.collectives.route_joint_paths as rjp
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from topologies import build


def _counted(monkeypatch) -> list:
    """The programmes path_flows solves from now on (None: left to the whole solve)."""
    calls = []
    flows = rjp.path_flows

    def counted(*a):
        got = flows(*a)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(rjp, "path_flows", counted)
    return calls


def _busiest(g, group):
    """Each pairwise shift's busiest link over bandwidth on a fresh router."""
    r = Router(g)
    p, out = len(group), []
    for k in range(1, p):
        step = tuple((group[i], group[(i + k) % p], 1.0) for i in range(p))
        links, load = r.link_loads(step)[:2]
        out.append(float((np.bincount(links, load, minlength=r.n_links) / r.bandwidth).max()))
    return out


CASES = [("torus:dims=4x4", [("gpu0", "gpu4")]),
         ("torus:dims=4x4x2", [("gpu0", "gpu8")]),
         ("torus:dims=6x4", [("gpu0", "gpu4"), ("gpu9", "gpu10")])]


@pytest.mark.parametrize(("spec", "links"), CASES)
@pytest.mark.parametrize("ring", ["given", "greedy"])
def test_paths_give_the_whole_solves_busiest_link(monkeypatch, spec, links, ring):
    from netmodel.collectives.degraded import degrade

    g = degrade(build(spec), links=links)
    group = tuple(x for x, k in g.nodes(data="kind") if k == "gpu")
    if ring == "greedy":
        group = FabricCostModel(g, ring_order="greedy")._ordered(group)
    monkeypatch.setattr(rjp, "JOINT_PATHS_FROM", 10 ** 9)   # every programme whole
    want = _busiest(g, group)
    monkeypatch.setattr(rjp, "JOINT_PATHS_FROM", 0)   # every one on one side over paths
    calls = _counted(monkeypatch)
    got = _busiest(g, group)
    assert sum(calls) >= 3 and all(calls)
    assert got == pytest.approx(want, rel=1e-9, abs=0)
    # no proof within one round of paths from one draw: the whole solve, the same answers
    monkeypatch.setattr(rjp, "JOINT_PATH_DRAWS", 1)
    monkeypatch.setattr(rjp, "PATH_ROUNDS", 1)
    calls.clear()
    assert _busiest(g, group) == pytest.approx(want, rel=1e-9, abs=0)
    assert not all(calls)


def test_the_flows_keep_each_commoditys_traffic(monkeypatch):
    # a shift of the greedy order on a 4x4x2 torus with gpu0/gpu8 failed, over paths: at
    # every node of every commodity, what leaves less what enters is what its transfers
    # send there less what they receive
    from netmodel.collectives.degraded import degrade

    monkeypatch.setattr(rjp, "JOINT_PATHS_FROM", 0)
    calls = _counted(monkeypatch)
    g = degrade(build("torus:dims=4x4x2"), links=[("gpu0", "gpu8")])
    group = FabricCostModel(g, ring_order="greedy")._ordered(
        tuple(f"gpu{i}" for i in range(32)))
    step = tuple((group[i], group[(i + 5) % 32], 1.0 / 32) for i in range(32))
    flows = rj.joint_flows(Router(g), step)
    assert flows is not None and calls == [True]
    for ts, fl in flows:
        net = {}
        for (u, v), f in fl.items():
            net[u] = net.get(u, 0.0) + f
            net[v] = net.get(v, 0.0) - f
        for t in ts:
            net[step[t][0]] -= step[t][2]
            net[step[t][1]] += step[t][2]
        assert max(abs(x) for x in net.values()) < 1e-12


def test_links_not_levelled_are_left_to_the_whole_solve():
    # a ring of 4, one commodity towards node 2 whose links include 2 -> 3 (away from it):
    # its links do not lie on shortest paths towards the destination, no path solve
    rs = np.array([0, 1, 1, 2, 2, 3, 3, 0])
    rd = np.array([1, 0, 2, 1, 3, 2, 0, 3])
    lk = np.array([0, 2, 7, 5, 4])
    got = rjp.path_flows(np.array([0]), np.array([2]), np.array([1.0]), np.array([0]),
                         np.zeros(5, dtype=np.int64), lk, rs, rd, lk, np.ones(8))
    assert got is None
    # without it, the two ways round carry half each: 0.5 of the bandwidth at most
    z, x = rjp.path_flows(np.array([0]), np.array([2]), np.array([1.0]), np.array([0]),
                          np.zeros(4, dtype=np.int64), lk[:4], rs, rd, lk[:4], np.ones(8))
    assert z == pytest.approx(0.5, rel=1e-12) and x.tolist() == pytest.approx([0.5] * 4)
