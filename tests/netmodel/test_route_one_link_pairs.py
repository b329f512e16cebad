"""A transfer between two GPUs that share a cable is routed as that cable, all of it, without
an entry of its own in the router's table of routes (``_rt_id``): a direct all-gather over a
full mesh of 4,000 GPUs kept 16 million such entries, some 7 GB. The plan a step gets is
the one the table gave (a ring's farther pairs still come from it)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.algo_direct import direct_all_gather
from netmodel.collectives.routing import MAX_ROUTER_LINKS, Router
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import build


def _plan_routes(r: Router, plan, i: int) -> tuple:
    k = int(np.searchsorted(plan.routed, i))
    assert plan.routed[k] == i
    lo, hi = int(plan.route_ptr[k]), int(plan.route_ptr[k + 1])
    return (plan.route_links[lo:hi].tolist(), plan.route_weights[lo:hi].tolist(),
            int(plan.route_hops[k]), float(plan.latency[i]))


def test_full_mesh_all_gather_keeps_no_route_per_pair():
    g = build("full-mesh:n=64")
    r = Router(g)
    step, = direct_all_gather(tuple(f"gpu{i}" for i in range(64)), g)
    plan = r.plan(step.transfers)
    t = step.transfers
    assert len(plan.routed) == 64 * 63 and not r._rt_id   # none in the table
    src, dst = r.node_numbers(t.nodes)[t.src], r.node_numbers(t.nodes)[t.dst]
    # each transfer its own cable, all of it, one hop; 2 m of copper at 5 ns/m: 10 ns
    assert plan.route_links.tolist() == r._lids(src, dst).tolist()
    assert plan.route_ptr.tolist() == list(range(64 * 63 + 1))
    assert (plan.route_weights == 1.0).all() and (plan.route_hops == 1).all()
    assert plan.latency == pytest.approx(np.full(64 * 63, 10e-9), rel=1e-12)
    assert not plan.scaleout.any()


def test_ring_pairs_near_and_far_as_their_routes():
    """All 56 ordered pairs of a ring of 8 in one plan (past the 32 routed with plain loops):
    neighbours one link; gpu0 -> gpu2 two hops through gpu1, all of it; gpu0 -> gpu4 two
    paths of 4 hops, half each. Every transfer's route is :meth:`Router.route`'s."""
    g = build("ring:n=8")
    r = Router(g)
    a, b = np.divmod(np.arange(64), 8)
    keep = a != b
    nid = r.node_numbers([f"gpu{i}" for i in range(8)])
    src, dst = nid[a[keep]], nid[b[keep]]
    plan = r.plan_nodes(src, dst, np.ones(len(src)))
    assert len(r._rt_id) == 56 - 16   # the 40 farther pairs in the table, no neighbour
    nodes = r._nodes
    one = Router(g)
    for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
        want = one.route(nodes[s], nodes[d])
        links, weights, hops, latency = _plan_routes(r, plan, i)
        assert links == want.links.tolist() and weights == want.weights.tolist()
        assert hops == want.hops and latency == want.latency
    i2 = int(np.flatnonzero((src == nid[0]) & (dst == nid[2]))[0])
    i4 = int(np.flatnonzero((src == nid[0]) & (dst == nid[4]))[0])
    assert _plan_routes(r, plan, i2)[1:3] == ([1.0, 1.0], 2)
    assert sorted(_plan_routes(r, plan, i4)[1]) == [0.5] * 8
    assert _plan_routes(r, plan, i4)[2] == 4


def test_a_fabric_past_the_router_links_is_refused_in_one_line(monkeypatch):
    """A full mesh of 100 GPUs has 4,950 cables, 9,900 directed links: under
    NETMODEL_MAX_ROUTER_LINKS=9899 its collective is refused in one line naming the count,
    the fabric and the setting, exit 2 (a full mesh of 4,000 GPUs, 15,996,000 links past the
    default 10,000,000, died building the index under 4 GB); since 69b79a71 by the builder's
    estimate before the fabric is built (4,950 edges over half the setting, 4,949), and a
    router handed the built fabric refuses it itself; at 9900 it is routed."""
    assert MAX_ROUTER_LINKS == 10_000_000
    argv = ["collective", "all-gather", "--fabric", "full-mesh:n=100", "--group", "100",
            "--size", "1GiB"]
    r = run_cli(argv, env={"NETMODEL_MAX_ROUTER_LINKS": "9899"})
    assert one_line_error(r) == (
        "error: full-mesh: the fabric would have about 100 nodes and 4,950 edges, over the "
        "limit of 2,000,000 nodes and 4,949 edges; routing it would index two directed links "
        "an edge, over the 9,899 a router indexes: use a smaller fabric, or raise "
        "NETMODEL_MAX_ROUTER_LINKS")
    graph = build("full-mesh:n=100")
    monkeypatch.setenv("NETMODEL_MAX_ROUTER_LINKS", "9899")
    with pytest.raises(UserError) as err:
        Router(graph)
    assert str(err.value) == (
        "routing full mesh of 100: about 9,900 directed links (two a cable, about 75 "
        "bytes each in the router's index beside some 200 of the fabric's), over the limit "
        "of 9,899; use a smaller fabric, or raise NETMODEL_MAX_ROUTER_LINKS")
    monkeypatch.setenv("NETMODEL_MAX_ROUTER_LINKS", "9900")
    assert len(Router(build("full-mesh:n=100"))._src) == 9900
