"""route_joint._dag_links walks the router's shortest-path arrays (DagRoutes._dag_csrs,
built with numpy) instead of the per-node Python search (SearchedRoutes._dag): each pair's
walk and the step's commodities and links are those the Python search gives, in the same
order (so the same programme, the same floats), on tori (translated arrays, and one past
1,024 nodes whose Python search stopped at the farthest source), a degraded torus
(searched arrays), a ring and a full mesh."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import route_joint as rj
from netmodel.collectives.degraded import degrade
from netmodel.collectives.routing import Router
from topologies import build


def _reference_walk(dag: dict, src, depth: int) -> tuple[tuple, tuple]:
    """Every link of every shortest path from ``src`` in the Python search's ``dag``,
    level by level (each level's nodes in the order first reached), and the links alone at
    their level."""
    level, mine, forced = [src], [], []
    for _ in range(depth):
        ahead, here = {}, []
        for u in level:
            for v, lid, *_ in dag[u][1]:
                here.append(lid)
                ahead[v] = None
        if len(here) == 1:
            forced.append(here[0])
        mine += here
        level = list(ahead)
    return tuple(mine), tuple(forced)


def _reference_links(r: Router, src: np.ndarray, dst: np.ndarray) -> tuple:
    """``(commodity, link)`` of :func:`rj._dag_links` from the Python search: a commodity
    per destination (ascending), its links in the order a set fills from the pairs' walks
    (pairs ascending by source)."""
    n, nodes = r._n, r._nodes
    pairs = np.unique(dst * n + src)
    out_c, out_l = [], []
    for c, d in enumerate(np.unique(dst).tolist()):
        dag, links = r._dag(nodes[d]), set()
        for s in (pairs[pairs // n == d] % n).tolist():
            links.update(_reference_walk(dag, nodes[s], dag[nodes[s]][0])[0])
        out_l.append(np.fromiter(links, np.int64, count=len(links)))
        out_c.append(np.full(len(links), c, dtype=np.int64))
    return np.concatenate(out_c), np.concatenate(out_l)


def _fabric(spec: str):
    if spec == "degraded":
        return degrade(build("torus:dims=4x4x2"), links=[("gpu0", "gpu8")])
    return build(spec)


def _pairs(r: Router, seed: int = 3, count: int = 40) -> tuple[np.ndarray, np.ndarray]:
    gpus = np.array([i for i, u in enumerate(r._nodes) if r.kind.get(u) == "gpu"])
    rng = np.random.default_rng(seed)
    src, dst = rng.choice(gpus, count), rng.choice(gpus, count)
    keep = src != dst
    return src[keep], dst[keep]


SPECS = ["torus:dims=4x4x4", "torus:dims=6x6x4", "torus:dims=5x7", "torus:dims=12x12x8",
         "degraded", "ring:n=9", "full-mesh:n=6"]


@pytest.mark.parametrize("spec", SPECS)
def test_each_walk_is_the_python_searchs(spec):
    r = Router(_fabric(spec))
    src, dst = _pairs(r)
    nodes = r._nodes
    dests = np.unique(dst)
    csrs = dict(zip(dests.tolist(), r._dag_csrs(dests), strict=True))
    walked = 0
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        dag = r._dag(nodes[d])
        depth = dag[nodes[s]][0]
        assert int(csrs[d][0][s]) == depth >= 1
        got = rj._walk(csrs[d], s, depth)
        assert got == _reference_walk(dag, nodes[s], depth)
        assert all(type(x) is int for x in got[0] + got[1])
        walked += len(got[0])
    assert walked >= len(src)   # every pair one link at least (a full mesh: one)


@pytest.mark.parametrize("spec", SPECS)
def test_dag_links_are_the_python_searchs_without_it(spec, monkeypatch):
    r = Router(_fabric(spec))
    src, dst = _pairs(r)
    want = _reference_links(r, src, dst)
    r._dags.clear()

    def searched(*_a, **_k):
        raise AssertionError("the per-node Python search was run")

    monkeypatch.setattr(type(r), "_dag", searched)
    c_of, lk, com, (f_t, f_l) = rj._dag_links(r, src, dst)
    np.testing.assert_array_equal(c_of, want[0])
    np.testing.assert_array_equal(lk, want[1])
    np.testing.assert_array_equal(com, np.unique(dst, return_inverse=True)[1])
    # a transfer's forced links lie on its own pair's walk, one a level at most
    assert len(f_t) and (f_t >= 0).all() and (f_t < len(src)).all()
    for t in np.unique(f_t).tolist():
        mine = f_l[f_t == t]
        assert len(np.unique(mine)) == len(mine)
        assert np.isin(mine, lk[c_of == com[t]]).all()


@pytest.mark.parametrize("looped", [0, 1, 10**9])
@pytest.mark.parametrize("spec", ["torus:dims=12x12x8", "degraded", "full-mesh:n=6"])
def test_walk_node_by_node_or_with_numpy_alike(spec, looped, monkeypatch):
    """_walk reads a level of up to _WALK_LOOPED nodes node by node and a wider one with
    numpy: every level one way, the other, or mixed, the Python search's walk."""
    r = Router(_fabric(spec))
    src, dst = _pairs(r)
    nodes = r._nodes
    dests = np.unique(dst)
    csrs = dict(zip(dests.tolist(), r._dag_csrs(dests), strict=True))
    monkeypatch.setattr(rj, "_WALK_LOOPED", looped)
    widest = 0
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        dag = r._dag(nodes[d])
        want = _reference_walk(dag, nodes[s], dag[nodes[s]][0])
        got = rj._walk(csrs[d], s, dag[nodes[s]][0])
        assert got == want
        assert all(type(x) is int for x in got[0] + got[1])
        widest = max(widest, len(got[0]))
    if spec.startswith("torus"):
        assert widest > 2 * 16   # long walks, some of their levels read with numpy by default
