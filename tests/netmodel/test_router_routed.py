"""Transfers routed on their own (not by template: a node to itself, direct neighbours,
GPU-forwarded paths, switch endpoints) are looked up in the router's table by pair of node
numbers and kept in a :class:`~netmodel.collectives.routing.Plan` as flat arrays. Checked
against the code they replaced, kept below verbatim (as of cbda34c): the per-transfer loop
of ``Router.plan_nodes`` over ``Router._resolve`` (``_old_routes``) and the concurrent
model's ``_loads`` that read the routes one :class:`Route` at a time (``_old_loads``; it
reads ``Plan.routes``, rebuilt from the arrays, which ``_old_routes`` checks)."""

from __future__ import annotations

from collections import defaultdict
from itertools import chain

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives import route_plans
from netmodel.collectives.concurrent_loads import _loads
from netmodel.collectives.routing import NoPath, Router
from topologies import build

SPECS = ["ocs:gpus=8,ports=2", "ocs:gpus=16,ports=4", "torus:dims=4x2x3", "ring:n=8",
         "full-mesh:n=4,gpu=Lite", "rail-optimized:domains=2", "leaf-spine:leaves=2,radix=4",
         "single-switch:n=8"]
_GRAPHS: dict = {}


def _graph(spec: str) -> nx.Graph:
    if spec not in _GRAPHS:
        _GRAPHS[spec] = build(spec)
    return _GRAPHS[spec]


def _old_routes(router, src, dst, kind):
    """``Router.plan_nodes``'s routes of the transfers not templated, as of cbda34c."""
    routes = {}
    nodes = router._nodes
    latency, scaleout = np.zeros(len(src)), np.zeros(len(src), dtype=bool)
    for i in np.flatnonzero(kind < 0).tolist():
        s, t = nodes[src[i]], nodes[dst[i]]
        r = router._resolve(s, t)
        if r is None:
            raise NoPath(s, t)
        routes[i] = r
        latency[i], scaleout[i] = r.latency, r.scaleout
    return routes, latency, scaleout


def _plain_loads(router, rate, pl, gid, G):
    """``_loads``' figures worked out transfer by transfer: every transfer's links with its
    bytes on each (its template hops, its route, the pieces it crosses expanded), summed in
    dictionaries per link and per (group, link); together, a group's busiest link it
    touches over everyone's bytes; alone, over its own; latency, scale-up latency and
    scale-out by group; the links' utilisations and users."""
    f = pl.frac
    on = [[] for _ in f]   # (link, bytes) of each transfer
    for i, link, w in zip(pl.hop_index.tolist(), pl.hop_links.tolist(), pl.hop_weights.tolist(),
                          strict=True):
        on[i].append((link, w * f[i]))
    for i, r in pl.routes.items():
        on[i] += [(link, w * f[i]) for link, w in zip(r.links.tolist(), r.weights.tolist(),
                                                     strict=True)]
    for i, piece in zip(pl.pieces.tolist(), pl.piece_of.tolist(), strict=True):
        _, links, w = router.expand(np.array([piece]), np.array([f[i]]))
        on[i] += list(zip(links.tolist(), w.tolist(), strict=True))
    total, own, users = defaultdict(float), defaultdict(float), defaultdict(set)
    for i, pairs in enumerate(on):
        for link, b in pairs:
            total[link] += b
            own[gid[i], link] += b
            users[link].add(int(gid[i]))
    util = {link: total[link] / rate[link] for link in total}
    together, alone = np.zeros(G), np.zeros(G)
    for (g, link), b in own.items():
        together[g] = max(together[g], util[link])
        alone[g] = max(alone[g], b / rate[link])
    latency, lat_up, scaleout = np.zeros(G), np.zeros(G), np.zeros(G, dtype=bool)
    up = np.zeros(G, dtype=bool)
    for i, g in enumerate(gid.tolist()):
        latency[g] = max(latency[g], pl.latency[i])
        scaleout[g] |= pl.scaleout[i]
        if not pl.scaleout[i]:
            lat_up[g], up[g] = max(lat_up[g], pl.latency[i]), True
    lat_up[~up] = latency[~up]
    return together, alone, latency, lat_up, scaleout, util, users


def _assert_loads_as_worked_out(router, rate, pl, gid, G, disjoint):
    """``_loads`` (with and without ``alone``) within 1e-12 of :func:`_plain_loads`; its hot
    spots the busiest links, their utilisations and users."""
    together, alone, latency, lat_up, scaleout, util, users = _plain_loads(
        router, rate, pl, gid, G)
    for alone_too in (True, False):
        have = _loads(router, rate, pl, gid, G, disjoint, alone_too)
        np.testing.assert_allclose(have[0], together, rtol=1e-12, atol=0)
        np.testing.assert_allclose(have[1], alone if alone_too else 0, rtol=1e-12, atol=0)
        assert _same(have[2], latency) and _same(have[3], lat_up) and _same(have[4], scaleout)
        if not alone_too:
            assert have[5] == []
            continue
        busy = sorted((u for u in util.values() if u > 0), reverse=True)[:5]
        assert len(have[5]) == len(busy)
        for (u, link, n), want in zip(have[5], busy, strict=True):
            assert u == pytest.approx(want, rel=1e-12) == util[link]
            assert n == len(users[link])


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _transfers(router, rng, T, gpus_only):
    pool = router._gpu_n if gpus_only else np.arange(len(router._nodes))
    src, dst = rng.choice(pool, T), rng.choice(pool, T)
    same = rng.random(T) < 0.1
    dst[same] = src[same]
    return src, dst, rng.uniform(0.1, 2.0, T)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SPECS), st.integers(0, 2**31), st.sampled_from([3, 20, 32, 33, 200]),
       st.booleans(), st.sampled_from([1, route_plans._WALK_MANY]))
def test_routed_as_before(spec, seed, T, gpus_only, walk_many):
    """Both plan paths (up to 32 transfers and more) give the routes, latencies and
    scale-out flags the per-transfer loop gave, whether the walks are done together or
    one by one; the loads read from them are the same to the last bit; the router's table
    answers again (a second plan) with the same arrays."""
    keep = route_plans._WALK_MANY
    route_plans._WALK_MANY = walk_many
    try:
        _routed_as_before(spec, seed, T, gpus_only)
    finally:
        route_plans._WALK_MANY = keep


def _routed_as_before(spec, seed, T, gpus_only):
    graph = _graph(spec)
    rng = np.random.default_rng(seed)
    # each transfer through its own GPU's ports (PXN's legs: tests/netmodel/test_pxn.py)
    new, old = Router(graph, pxn=False), Router(graph, pxn=False)
    src, dst, frac = _transfers(new, rng, T, gpus_only)
    d = old._describe(src, dst)
    try:
        routes, lat, so = _old_routes(old, src, dst, d["kind"])
    except NoPath as cut:  # the same first pair cut apart
        with pytest.raises(NoPath) as exc:
            new.plan_nodes(src, dst, frac)
        assert exc.value.pair == cut.pair
        return
    pl = new.plan_nodes(src, dst, frac)
    assert _same(pl.template, d["kind"])
    assert pl.routed.tolist() == list(routes)
    assert len(pl.route_ptr) == len(pl.routed) + 1 and pl.route_ptr[0] == 0
    got = pl.routes
    for i, r in routes.items():
        g = got[i]
        assert _same(g.links, r.links.astype(np.int64)) and _same(g.weights, r.weights)
        assert (g.latency, g.hops, g.scaleout) == (r.latency, r.hops, r.scaleout)
    on = d["kind"] >= 0
    lat[on], so[on] = d["latency"][on], d["scaleout"][on]
    assert _same(pl.latency, lat) and _same(pl.scaleout, so)
    again = new.plan_nodes(src, dst, frac)
    for f in ("routed", "route_ptr", "route_links", "route_weights", "route_hops", "latency"):
        assert _same(getattr(again, f), getattr(pl, f)), f
    rate = new.bandwidth * rng.uniform(0.5, 1.0, new.n_links)
    # five groups at random (GPUs in several); one group, so no GPU is in two (disjoint)
    _assert_loads_as_worked_out(new, rate, pl, rng.integers(0, 5, T), 5, False)
    _assert_loads_as_worked_out(new, rate, pl, np.zeros(T, np.int64), 1, True)


@pytest.mark.parametrize("T", [4, 40])
def test_no_path_names_the_first_cut_pair(T):
    """Two islands: the first transfer (in order) whose ends are cut apart is named, as the
    per-transfer loop named it; a router that raised still routes the rest."""
    g = nx.union(build("ring:n=4"), build("ring:n=4"), rename=("a", "b"))
    r = Router(g)
    nid = r._nid
    a = [nid["agpu0"], nid["agpu1"], nid["agpu0"], nid["bgpu2"]] * (T // 4)
    b = [nid["agpu2"], nid["bgpu1"], nid["bgpu3"], nid["agpu0"]] * (T // 4)
    src, dst = np.array(a), np.array(b)
    with pytest.raises(NoPath) as exc:
        r.plan_nodes(src, dst, np.ones(T))
    assert exc.value.pair == ("agpu1", "bgpu1")
    pl = r.plan_nodes(src[:1], dst[:1], np.ones(1))
    assert pl.route_hops.tolist() == [2]  # agpu0 -> agpu2 round the ring of 4


@pytest.mark.parametrize("spec", ["ocs:gpus=16,ports=4", "torus:dims=4x2x3", "ring:n=8",
                                  "leaf-spine:leaves=2,radix=4", "fat-tree:k=4",
                                  "ocs:gpus=4,ports=2,logical=ring,latency=1us"])
def test_spread_many_is_the_walk(spec):
    """Every source towards a destination at once (:meth:`Router._spread_many`) gives what
    the scalar walk over the same shortest paths (:meth:`Router._from_dag`) gives for each,
    link order, shares and latency to the last bit; switches as ends too."""
    graph = _graph(spec)
    r = Router(graph)
    nodes = [x for x in r._nodes if r.kind[x] in ("gpu", "switch")]
    multi = 0
    for dst in nodes:
        srcs = [x for x in nodes if x != dst and x not in r._adj[dst]]
        ok, sizes, links, weights, latency, hops = r._spread_many(
            np.array([r._nid[x] for x in srcs], dtype=np.int64),
            np.full(len(srcs), r._nid[dst], dtype=np.int64))
        ends = np.cumsum(sizes).tolist()
        k = 0
        for s, good in zip(srcs, ok.tolist(), strict=True):
            want = r._from_dag(s, dst)
            assert good == (want is not None)
            if want is None:
                continue
            lo = ends[k] - int(sizes[k])
            assert links[lo:ends[k]].tolist() == want[0]
            assert _same(weights[lo:ends[k]], np.array(want[1], dtype=float))
            assert float(latency[k]) == want[2] and int(hops[k]) == want[3]
            multi += len(want[0]) > want[3]  # paths split somewhere
            k += 1
        assert k == len(sizes)
    assert multi > 0 or spec.startswith(("ring", "ocs"))


# Router._dag_csr as of d86e10c (one destination at a time, from the dict of Router._dag),
# its caching left out
def _old_dag_csr(self, dst) -> tuple:
    """:meth:`_dag` of ``dst`` as arrays over node numbers (kept per destination): hops
    to ``dst`` (-1: no path), and each node's next hops (``pointer`` per node, then
    per edge: the next node, link id, bandwidth, the sum of the node's next hops'
    bandwidths), in the dag's order."""
    hit = self._dag_np.get(dst)
    if hit is not None:
        return hit
    dag = self._dag(dst)
    nid = self._nid
    n = self._n
    dist = np.full(n, -1, dtype=np.int64)
    us = np.fromiter(map(nid.__getitem__, dag), np.int64, count=len(dag))
    dist[us] = np.fromiter((x[0] for x in dag.values()), np.int64, count=len(dag))
    counts = np.zeros(n, dtype=np.int64)
    counts[us] = np.fromiter((len(x[1]) for x in dag.values()), np.int64, count=len(dag))
    hops = list(chain.from_iterable(x[1] for x in dag.values()))
    m = len(hops)
    ev = np.fromiter((nid[h[0]] for h in hops), np.int64, count=m)
    el = np.fromiter((h[1] for h in hops), np.int64, count=m)
    eb = np.fromiter((h[2] for h in hops), float, count=m)
    et = np.fromiter((h[3] for h in hops), float, count=m)
    # the edges are in dag order (node by node): regroup them by node number
    by = np.argsort(np.repeat(us, counts[us]), kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    hit = (dist, ptr, ev[by], el[by], eb[by], et[by])
    if len(self._dag_np) >= 512:
        self._dag_np.pop(next(iter(self._dag_np)))
    self._dag_np[dst] = hit
    return hit


@pytest.mark.parametrize("spec", ["ocs:gpus=16,ports=4", "torus:dims=4x2x3", "fat-tree:k=4",
                                  "leaf-spine:leaves=2,radix=4", "full-mesh:n=4,gpu=Lite",
                                  "lite-groups:split=gateway", "superpod"])
def test_dag_arrays_as_before(spec):
    """The shortest paths towards every destination, found for all of them at once by one
    breadth-first search with numpy, equal array for array those read one destination at a
    time from :meth:`Router._dag` (every bandwidth sum too)."""
    r = Router(_graph(spec))
    want = [x for x in r._nodes if r.kind[x] in ("gpu", "switch")]
    got = r._dag_csrs(np.array([r._nid[x] for x in want], dtype=np.int64))
    for x, have in zip(want, got, strict=True):
        ref = _old_dag_csr(r, x)
        for a, b in zip(have, ref, strict=True):
            assert _same(a, b), x


@pytest.mark.parametrize("spec", ["lite-groups:split=gateway", "lite-groups",
                                  "lite-groups:base=[fat-tree:k=4],lites=2"])
@pytest.mark.parametrize("count", [40, 70, 300])  # the dict path (<= 64) and the table path
def test_gpus_cabled_to_gpus_route_in_a_batch_as_one_by_one(spec, count):
    # a GPU pair standing for two wirings may be cabled together (a group's gateway Lite and
    # a Lite behind it): its template must still be the switched route, not the cable
    # (raised KeyError in _search_template at cbda34c for more than 32 transfers)
    g = _graph(spec)
    r = Router(g)
    gpus = r.gpu_list
    rng = np.random.default_rng(count)
    pairs = rng.choice(len(gpus), size=(count, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    transfers = [(gpus[a], gpus[b], 1.0) for a, b in pairs.tolist()]
    links, coef, latency, _ = r.loads(transfers)
    got = np.bincount(links, coef, minlength=r.n_links)
    # one route at a time, by search (no batch, no template); a fair reference here because
    # no GPU-forwarded path is as short as a switched one on these fabrics (on rail-optimized
    # fabrics _resolve also spreads over paths through GPUs, which templates leave out)
    fresh = Router(g)
    want = np.zeros(r.n_links)
    worst = 0.0
    for s, t, _ in transfers:
        one = fresh._resolve(s, t)
        np.add.at(want, one.links, one.weights)
        worst = max(worst, one.latency)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert latency == pytest.approx(worst, rel=1e-12)


def test_dag_arrays_past_the_cache_of_512(monkeypatch):
    """More destinations at once than the cache keeps: each still gets its own arrays,
    equal to those read from :meth:`Router._dag` one at a time (raised KeyError at a62200f:
    the arrays built first were dropped from the cache before being returned, as
    ``netmodel collective all-reduce --fabric torus:dims=16x16x16 --group 1024`` did).
    The cache keeps by bytes now, set here to about 100 destinations' arrays, so the 216
    destinations of a 6x6x6 are past it as 576 were past the 512 it kept then (a group of
    more than 512: test_a_group_of_more_than_512_gpus_builds_its_dags_once)."""
    from netmodel.collectives import route_dags

    graph = build("torus:dims=6x6x6")   # 216 GPUs, all transit nodes
    r = Router(graph)
    one = sum(a.nbytes for a in Router(graph)._dag_csrs(np.array([0]))[0])
    monkeypatch.setattr(route_dags, "_DAG_BYTES", 100 * one)  # about 100 kept
    want = list(r._nodes)
    got = r._dag_csrs(np.array([r._nid[x] for x in want], dtype=np.int64))
    assert len(got) == 216 and 50 < len(r._dag_np) < 216
    held = sum(a.nbytes for entry in r._dag_np.values() for a in entry)
    assert r._dag_bytes == held <= route_dags._DAG_BYTES
    fresh = Router(graph)
    for x, have in zip(want, got, strict=True):
        ref = _old_dag_csr(fresh, x)
        assert int(have[0][r._nid[x]]) == 0
        for a, b in zip(have, ref, strict=True):
            assert _same(a, b), x


def test_a_group_of_more_than_512_gpus_builds_its_dags_once(monkeypatch):
    # a step of every GPU of a 576-GPU group asks for 576 destinations' arrays, and the
    # next step for the same again: kept by bytes (576 x 62 kB here), not rebuilt (a cap
    # of 512 dropped each before the next step asked: halving-doubling over 1,024 GPUs of
    # a 16x16x16 torus built 3,552, 13.8 s)
    r = Router(build("torus:dims=8x8x9"))
    built = []
    real = Router._build_dags
    monkeypatch.setattr(Router, "_build_dags",
                        lambda self, dst: built.append(len(dst)) or real(self, dst))
    dst = np.arange(576, dtype=np.int64)
    first = r._dag_csrs(dst)
    assert sum(built) == 576
    again = r._dag_csrs(dst[::-1])
    assert sum(built) == 576 and len(r._dag_np) == 576
    assert all(a is b for a, b in zip(first, again[::-1], strict=True))
