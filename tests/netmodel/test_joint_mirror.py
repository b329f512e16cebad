"""A joint split's programme solved once for it and its mirror image
(netmodel/collectives/route_joint.py ``_whole``, ``_mirror_keys``): a pairwise all-to-all's
shift ``p - k`` sends each of shift ``k``'s transfers back, over the same links the other
way round, so its programme is shift ``k``'s mirrored (each node's balance changes sign,
each link carries what its mirror did) and its flows are shift ``k``'s mirrored, in any
ring order and with any cable failed (neither leaves a rotation to fold,
``_symmetry``). Each shift's busiest link is compared with the whole programme solved
afresh for it (to HiGHS's 1e-10; an optimum's flows may tie another's busiest link), and
the solves are counted: a shift whose mirror was solved first runs none.
"""

from __future__ import annotations

import numpy as np
import pytest

import netmodel.collectives.route_joint as rj
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.degraded import degrade, degraded_cost
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_sharing import clear_shared_routes
from netmodel.collectives.routing import Router
from topologies import build


def _fresh(monkeypatch):
    """Every programme solved afresh: no mirror kept."""
    monkeypatch.setattr(rj, "_mirror_keys", lambda *a: None)


def _solved(monkeypatch) -> list:
    """The whole programmes solved from now on (their number of variables): on one side,
    by the primal simplex (a folded one, ``_folded``, by the dual: not counted)."""
    calls = []
    linprog = rj._linprog

    def counted(a_eq, b_eq, a_ub, primal=False):
        if primal:
            calls.append(a_eq.shape[1])
        return linprog(a_eq, b_eq, a_ub, primal)

    monkeypatch.setattr(rj, "_linprog", counted)
    return calls


def _busiest(r, links, load):
    return float((np.bincount(links, load, minlength=r.n_links) / r.bandwidth).max())


def _shifts(g, order, calls):
    """Each shift's busiest link over bandwidth on a fresh router, and the shifts that
    solved a programme (``calls``: :func:`_solved`'s)."""
    r = Router(g)
    p = len(order)
    out, solved = [], []
    for k in range(1, p):
        before = len(calls)
        step = tuple((order[i], order[(i + k) % p], 1.0) for i in range(p))
        out.append(_busiest(r, *r.link_loads(step)[:2]))
        if len(calls) > before:
            solved.append(k)
    return out, solved


CASES = [("torus:dims=4x4", [("gpu0", "gpu4")]),
         ("torus:dims=4x2x2", [("gpu0", "gpu1")]),
         ("torus:dims=6x4", [("gpu0", "gpu4"), ("gpu9", "gpu10")]),
         ("torus:dims=4x6", []),
         ("torus:dims=3x5", [("gpu2", "gpu7")])]


@pytest.mark.parametrize(("spec", "links"), CASES)
@pytest.mark.parametrize("ring", ["given", "greedy"])
def test_a_shift_and_its_mirror_solve_once(monkeypatch, spec, links, ring):
    g = degrade(build(spec), links=links)
    group = tuple(x for x, k in g.nodes(data="kind") if k == "gpu")
    if ring == "greedy":
        group = FabricCostModel(g, ring_order="greedy")._ordered(group)
    if not links and ring == "given":   # a healthy torus in its own order: 23 of 24 GPUs
        group = group[:-1]
    p = len(group)
    calls = _solved(monkeypatch)
    got, solved = _shifts(g, group, calls)
    calls = list(calls)   # the fresh run's solves count on both lists
    with monkeypatch.context() as m:
        _fresh(m)
        calls0 = _solved(m)
        want, solved0 = _shifts(g, group, calls0)
    assert got == pytest.approx(want, rel=1e-9, abs=0)
    # the shifts solved: each solved afresh but those whose mirror (p - k) was solved first
    assert solved == [k for k in solved0 if not (p - k < k and p - k in solved0)]
    assert len(calls) < len(calls0)
    assert sorted(calls) == sorted(calls0[i] for i, k in enumerate(solved0) if k in solved)


def test_the_keys_refuse_what_is_no_mirror():
    # a step whose destination takes two transfers (two commodities' worth in one): no key
    g = build("torus:dims=4x4")
    r = Router(g)
    src = np.array([0, 1, 2]) + 0
    dst = np.array([5, 5, 6])
    com = np.array([0, 0, 1])
    lk = np.array([0, 2, 4])
    assert rj._mirror_keys(r, src, dst, np.ones(3), com, com[[0, 2, 2]], lk) is None
    # one transfer a destination: each key's variables sorted, the mirror's the links back
    src, dst, com = np.array([0, 1]), np.array([5, 6]), np.array([0, 1])
    c_of, lk = np.array([0, 1]), np.array([0, 2])
    (fd, fo), (md, mo) = rj._mirror_keys(r, src, dst, np.ones(2), com, c_of, lk)
    assert fd != md and sorted(fo.tolist()) == sorted(mo.tolist()) == [0, 1]
    # the same step the other way round keys as the first's mirror
    back = rj._mirror_keys(r, dst, src, np.ones(2), com, c_of, lk ^ 1)
    assert back[1][0] == fd and back[0][0] == md


def test_a_faster_cable_keeps_the_mirror_exact(monkeypatch):
    # one cable of a 6x4 torus twice as fast (both ways): the mirror's programme is the same
    g = build("torus:dims=6x4")
    g.edges["gpu0", "gpu1"]["bandwidth"] *= 2
    group = tuple(f"gpu{i}" for i in range(22))
    calls = _solved(monkeypatch)
    got, solved = _shifts(g, group, calls)
    calls = list(calls)   # the fresh run's solves count on both lists
    with monkeypatch.context() as m:
        _fresh(m)
        want, solved0 = _shifts(g, group, _solved(m))
    assert got == pytest.approx(want, rel=1e-9, abs=0)
    assert len(solved) < len(solved0) and len(calls) == len(solved)


def test_degraded_pairwise_times_as_solved_afresh(monkeypatch):
    # netmodel collective --fail's path: pairwise all-to-all on a 4x4x2 torus, gpu0/gpu8
    # failed, healthy and degraded (each the faster of both ring orders), and the greedy
    # order's alone, each time as with every programme solved afresh
    g = build("torus:dims=4x4x2")

    def times():
        clear_shared_routes()
        r = degraded_cost(g, "all-to-all", 64 * 2 ** 20, 32, links=[("gpu0", "gpu8")],
                          algorithm="pairwise", calibration=Calibration.ideal())
        m = FabricCostModel(g, ring_order="greedy", calibration=Calibration.ideal())
        return r.healthy.time, r.degraded.time, m.cost("all-to-all", 64 * 2 ** 20, 32,
                                                       "pairwise").time

    calls = _solved(monkeypatch)
    got = times()
    calls = list(calls)
    with monkeypatch.context() as m:
        _fresh(m)
        calls0 = _solved(m)
        want = times()
    clear_shared_routes()
    assert got == pytest.approx(want, rel=1e-9, abs=0)
    assert 0 < len(calls) < len(calls0)


def test_nothing_kept_past_the_cap(monkeypatch):
    # a cap of one variable keeps no programme: every shift solves afresh, the same times
    monkeypatch.setattr(rj, "JOINT_KEPT", 1)
    g = degrade(build("torus:dims=4x4"), links=[("gpu0", "gpu4")])
    group = tuple(f"gpu{i}" for i in range(16))
    got, solved = _shifts(g, group, _solved(monkeypatch))
    with monkeypatch.context() as m:
        _fresh(m)
        want, solved0 = _shifts(g, group, _solved(m))
    assert solved == solved0 and len(solved) >= 4
    assert got == pytest.approx(want, rel=1e-9, abs=0)


@pytest.mark.parametrize("spec", ["torus:dims=4x3", "fat-tree:k=4", "rail-optimized:domains=2"])
def test_natural_rank_orders_nodes_as_their_names_sorted(spec):
    # _symmetry's order of a programme's nodes: by name, numbers as numbers (gpu2 < gpu10)
    r = Router(build(spec))
    nodes = np.arange(r._n)
    got = nodes[np.argsort(rj._natural_rank(r)[nodes], kind="stable")].tolist()
    assert got == sorted(nodes.tolist(), key=lambda i: rj._natural(str(r._nodes[i])))
    if spec.startswith("torus"):
        assert [r._nodes[i] for i in got] == [f"gpu{i}" for i in range(12)]


def test_the_walks_kept_give_the_same_loads(monkeypatch):
    # each pair's shortest-path links walked once a router (route_joint._walk, kept by
    # _dag_links): a pairwise all-to-all in the greedy order after the group's order walks
    # the same pairs again; with a cap that keeps almost nothing, the same loads to the bit
    g = degrade(build("torus:dims=4x4x2"), links=[("gpu0", "gpu8")])
    group = tuple(f"gpu{i}" for i in range(32))
    greedy = FabricCostModel(g, ring_order="greedy")._ordered(group)
    steps = [tuple((o[i], o[(i + k) % 32], 1.0) for i in range(32))
             for o in (group, greedy) for k in range(1, 32)]
    walks = []
    walk = rj._walk

    def counted(*a):
        walks.append(a[1])
        return walk(*a)

    monkeypatch.setattr(rj, "_walk", counted)
    r = Router(g)
    got = [r.link_loads(s)[:2] for s in steps]
    once = len(walks)
    assert once == len(r._joint_walks)   # each pair walked once
    monkeypatch.setattr(rj, "JOINT_WALKS_KEPT", 1)
    walks.clear()
    r = Router(g)
    want = [r.link_loads(s)[:2] for s in steps]
    assert len(walks) > once and len(r._joint_walks) <= 1
    for (a, b), (c, d) in zip(got, want, strict=True):
        assert np.array_equal(a, c) and np.array_equal(b, d)
