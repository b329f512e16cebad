"""A few pairs (fewer than route_plans._WALK_MANY) routed on a torus of one bandwidth past
DAG_NODES are walked with numpy from node 0's shortest paths (Router._learn_from_dags), not
searched one by one breadth first in Python (SearchedRoutes._search, which on a 50x50x50
torus walked most of the fabric for each far pair, minutes for one all-reduce over 8 GPUs
placed at random): the same links, shares, latencies and hops as the search gives."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import route_plans
from netmodel.collectives.route_types import DAG_NODES
from netmodel.collectives.routing import Router
from topologies import build


@pytest.mark.parametrize("spec", ["torus:dims=17x17x17", "torus:dims=8x40x16"])
def test_few_far_pairs_walked_as_searched(spec, monkeypatch):
    r = Router(build(spec))
    assert r._n > DAG_NODES and r._torus_steps() is not None
    rng = np.random.default_rng(5)
    src, dst = rng.choice(r._n, 12), rng.choice(r._n, 12)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    assert 1 < len(src) < route_plans._WALK_MANY
    nodes = r._nodes
    want = [Router(r.graph)._compute(nodes[s], nodes[d])
            for s, d in zip(src.tolist(), dst.tolist(), strict=True)]
    assert max(w.hops for w in want) >= 10

    def searched(*_a, **_k):
        raise AssertionError("searched pair by pair in Python")

    monkeypatch.setattr(type(r), "_search", searched)
    ids = r._route_ids(src, dst)
    ptr = r._rt_ptr.a
    for i, w in zip(ids.tolist(), want, strict=True):
        lo, hi = int(ptr[i]), int(ptr[i + 1])
        np.testing.assert_array_equal(r._rt_links.a[lo:hi], w.links)
        np.testing.assert_array_equal(r._rt_weights.a[lo:hi], w.weights)
        assert float(r._rt_latency.a[i]) == w.latency
        assert int(r._rt_hops.a[i]) == w.hops
