"""Shortest-path spreads on a torus of one bandwidth walked without kept arrays
(``route_dags.DagRoutes._spread_rows_torus``: each row's next hops read from node 0's where
the walk is) against the pair-by-pair walk over the dict of shortest paths
(``SearchedRoutes._from_dag``, plain Python) and against the same rows walked over the
searched arrays (``_searched_dags``, the fabric's torus form switched off): the same links
in the same order, shares, latency and hops, to the bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives import route_sampling
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_sharing import clear_shared_routes
from netmodel.collectives.routing import Router
from topologies import build


def _pairs(r: Router, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` random node pairs, distinct and not neighbours (those are one link each,
    not spread)."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, r._n, 4 * count)
    d = rng.integers(0, r._n, 4 * count)
    keep = (s != d) & (r._lids(s, d) < 0)
    return s[keep][:count], d[keep][:count]


def _check(r: Router, src: np.ndarray, dst: np.ndarray) -> int:
    """Assert the torus walk equals the reference walks; returns how many routes split."""
    assert r._torus_steps() is not None   # the path under test
    ok, sizes, links, weights, latency, hops = r._spread_many(src, dst)
    assert not r._dag_np   # nothing kept per destination
    assert ok.all() and len(sizes) == len(src)
    ends = np.cumsum(sizes).tolist()
    nodes, split = r._nodes, 0
    for k, (a, b) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
        want = r._from_dag(nodes[a], nodes[b])
        lo = ends[k] - int(sizes[k])
        assert links[lo:ends[k]].tolist() == want[0]
        assert weights[lo:ends[k]].tolist() == want[1]   # floats compared exactly
        assert float(latency[k]) == want[2] and int(hops[k]) == want[3]
        split += len(want[0]) > want[3]
    searched = Router(r.graph)
    searched._torus_walk = ()   # no torus form: the arrays of a breadth-first search
    got = searched._spread_many(src, dst)
    assert searched._dag_np   # that path keeps them
    for x, y in zip(got, (ok, sizes, links, weights, latency, hops), strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    return split


@pytest.mark.parametrize("dims", ["4x4x4", "3x4x5", "2x2x2", "7"])
def test_named_tori(dims):
    r = Router(build(f"torus:dims={dims}"))
    src, dst = _pairs(r, 150, 7)
    split = _check(r, src, dst)
    assert split > 0 or dims in ("7", "2x2x2")   # a ring has one shortest path


# 1 to 3 sides of 3 to 6, or all of 2 (a side of 2 beside longer ones is no torus form)
DIMS = st.one_of(st.lists(st.integers(3, 6), min_size=1, max_size=3),
                 st.integers(1, 3).map(lambda k: [2] * k))


@settings(max_examples=25, deadline=None)
@given(sides=DIMS, seed=st.integers(0, 2**32 - 1))
def test_chosen_tori(sides, seed):
    r = Router(build(f"torus:dims={'x'.join(map(str, sides))}"))
    src, dst = _pairs(r, 80, seed)
    if len(src):
        _check(r, src, dst)


def test_whole_torus_curves_equal_with_the_searched_arrays(monkeypatch):
    """Every algorithm's curve of an all-reduce on all 60 GPUs of a 3x4x5 torus is the
    same to the bit with or without the torus walk."""
    g = build("torus:dims=3x4x5")
    try:   # each model a router of its own: none shared by shape (route_sharing)
        clear_shared_routes()
        fast = FabricCostModel(g, validated=True).curves("all-reduce", [1e3, 2.0 ** 26], 60)
        clear_shared_routes()
        monkeypatch.setattr(Router, "_torus_steps", lambda self: None)
        slow = FabricCostModel(g, validated=True).curves("all-reduce", [1e3, 2.0 ** 26], 60)
    finally:
        clear_shared_routes()
    assert "direct" in fast and sorted(fast) == sorted(slow)
    for k in fast:
        assert np.array_equal(fast[k], slow[k]), k


def _refusal(graph, transfers, early: bool, monkeypatch) -> str:
    """The refusal of ``transfers`` by a fresh router that routed ``transfers[:300]``
    first, with the sample taken before the batch is described (``early``) or where
    ``_learn_routes`` takes it."""
    r = Router(graph)
    r.loads(transfers[:300])
    if not early:
        monkeypatch.setattr(Router, "_sample_before_describing", lambda self, s, d: False)
    else:
        def no_describe(self, src, dst):
            raise AssertionError("described before the estimate")
        monkeypatch.setattr(Router, "_describe", no_describe)
    with pytest.raises(route_sampling.TooManyRouteLinks) as err:
        r.loads(transfers)
    monkeypatch.undo()
    return str(err.value)


# 100 GPUs: 9,900 pairs, a mark per possible pair (216 x 216); 60: 3,540, sorted keys
@pytest.mark.parametrize("p", [100, 60])
@pytest.mark.parametrize("repeat", [False, True])
def test_a_refused_batch_is_refused_before_it_is_described(monkeypatch, repeat, p):
    """A batch past the limit on a fabric of GPUs only is refused from its keys alone, with
    the same figures (pairs not routed before, each once; the same sample) as when the
    table's lookups find the sample."""
    graph = build("torus:dims=6x6x6")
    gpus = [f"gpu{i}" for i in range(0, 2 * p, 2)]
    transfers = [(a, b, 1.0) for a in gpus for b in gpus if a != b]
    if repeat:   # a pair twice, and the batch's first pairs again at its end
        transfers = transfers + transfers[:2000]
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM", 1000)
    monkeypatch.setattr(route_sampling, "_SEARCH_LINKS", 1)
    early = _refusal(graph, transfers, True, monkeypatch)
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM", 1000)
    monkeypatch.setattr(route_sampling, "_SEARCH_LINKS", 1)
    late = _refusal(graph, transfers, False, monkeypatch)
    assert early == late
    pairs = p * (p - 1)
    linked = sum(1 for a, b, _ in transfers[300:pairs] if graph.has_edge(a, b))
    assert f"routing {pairs - 300 - linked:,} transfers" in early
