"""A step's transfers spread together (netmodel/collectives/route_joint.py): the split of a
step's traffic over its transfers' shortest paths with the least busy link, where each
transfer routed on its own leaves a busier one.

The hand case, a ring of four GPUs drawn as two paths from gpu0 to gpu3 (gpu0 - gpu1 -
gpu3 and gpu0 - gpu2 - gpu3), with gpu0-gpu1 and gpu1-gpu3 at 2B and the other two
cables at B; the step: gpu0 -> gpu3 and gpu1 -> gpu3, n each.

* Each on its own: gpu1 -> gpu3 has one shortest path, its cable (n on gpu1 -> gpu3).
  gpu0 -> gpu3 splits over its next hops by what each can carry on, min(its bandwidth,
  the capacity behind it): gpu1 min(2B, 2B) = 2B, gpu2 min(B, B) = B, so 2/3 by gpu1 and
  1/3 by gpu2 (a maximum flow already: 3B). gpu1 -> gpu3 carries n + 2n/3 = 5n/3 over
  2B: 5/6 n/B, the busiest (gpu0 -> gpu1 2/3 over 2B = 1/3, gpu0 -> gpu2 and gpu2 -> gpu3
  1/3 over B).
* Together: no split beats what gpu3 must take in, 2n over 2B + B: 2/3 n/B. Sending a
  share x of gpu0's by gpu1 loads gpu1 -> gpu3 with (1 + x) n over 2B and gpu2 -> gpu3
  with (1 - x) n over B, equal at x = 1/3: 2/3 n/B on both, gpu1 -> gpu3 carrying 4n/3,
  gpu0 -> gpu1 n/3, gpu0 -> gpu2 and gpu2 -> gpu3 2n/3.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netmodel.collectives.route_joint import joint_flows
from netmodel.collectives.routing import Router
from topologies import build

B = 1e9


def _ring4(fast: float = 2.0) -> nx.Graph:
    g = nx.Graph(name="theta", spec="", gpus=4)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    for (a, b), bw in {(0, 1): fast * B, (1, 3): fast * B, (0, 2): B, (2, 3): B}.items():
        g.add_edge(f"gpu{a}", f"gpu{b}", bandwidth=bw, latency=0.0, medium="copper", lanes=1)
    return g


STEP = (("gpu0", "gpu3", 1.0), ("gpu1", "gpu3", 1.0))


def _per_link(r: Router, links, load) -> dict:
    out: dict = {}
    for k, x in zip(links.tolist(), load.tolist(), strict=True):
        out[r.link_name(k)] = out.get(r.link_name(k), 0.0) + x
    return out


def _busiest(r: Router, links, load) -> float:
    """The busiest link's load over its bandwidth (``links`` may repeat: summed)."""
    total = np.bincount(links, load, minlength=r.n_links)
    return float((total / r.bandwidth).max())


def test_hand_case_own_routes():
    """Each transfer on its own (Router.loads, no joint split): 5/6 n/B on gpu1 -> gpu3."""
    r = Router(_ring4())
    links, load = r.loads(STEP)[:2]
    got = _per_link(r, links, load)
    assert got[("gpu1", "gpu3")] == pytest.approx(5 / 3, rel=1e-12)
    assert got[("gpu0", "gpu1")] == pytest.approx(2 / 3, rel=1e-12)
    assert got[("gpu0", "gpu2")] == pytest.approx(1 / 3, rel=1e-12)
    assert _busiest(r, links, load) * B == pytest.approx(5 / 6, rel=1e-12)


def test_hand_case_together():
    """The step's loads (Router.link_loads, what a step is costed with): 2/3 n/B, the
    bound at gpu3, met on both links into it."""
    r = Router(_ring4())
    links, load = r.link_loads(STEP)[:2]
    got = _per_link(r, links, load)
    want = {("gpu1", "gpu3"): 4 / 3, ("gpu0", "gpu1"): 1 / 3, ("gpu0", "gpu2"): 2 / 3,
            ("gpu2", "gpu3"): 2 / 3}
    assert got == pytest.approx(want, rel=1e-9)
    assert _busiest(r, links, load) * B == pytest.approx(2 / 3, rel=1e-9)


def test_uniform_ring_together():
    """All four cables at B: on its own gpu0's halves, gpu1 -> gpu3 carries 3n/2; together
    gpu3 takes 2n over 2B, 1 n/B, gpu0's all by gpu2."""
    r = Router(_ring4(fast=1.0))
    assert _busiest(r, *r.loads(STEP)[:2]) * B == pytest.approx(3 / 2, rel=1e-12)
    links, load = r.link_loads(STEP)[:2]
    assert _per_link(r, links, load) == pytest.approx(
        {("gpu1", "gpu3"): 1.0, ("gpu0", "gpu2"): 1.0, ("gpu2", "gpu3"): 1.0}, rel=1e-9)


def test_symmetric_steps_keep_their_routes():
    """Where no split beats the own routes (a ring's neighbour steps; an all-to-all on a
    uniform torus, every byte crossing as many links, spread evenly) the step's loads are
    the own routes' sums, bit for bit."""
    g = build("torus:dims=3x4,bandwidth=100e9")
    r = Router(g)
    gpus = [f"gpu{i}" for i in range(12)]
    for step in ([(a, b, 1 / 11) for a in gpus for b in gpus if a != b],
                 [(gpus[i], gpus[(i + 1) % 4 + i // 4 * 4], 0.5) for i in range(12)]):
        links, coef = r.loads(step)[:2]
        own = np.bincount(links, coef, minlength=r.n_links)
        got_l, got = r.link_loads(step)[:2]
        assert np.array_equal(got_l, np.flatnonzero(own))
        assert np.array_equal(got, own[got_l])


def _check_flows(r: Router, transfers, flows, busiest: float) -> None:
    """``flows`` a split of ``transfers`` over their shortest paths: each commodity's
    flow leaves its sources and reaches its destinations, every link on a shortest path
    of its transfers, no link busier than ``busiest`` (load over bandwidth, per byte)."""
    g = r.graph
    total: dict = {}
    for idx, fl in flows:
        supply: dict = {}
        for i in idx:
            s, d, f = transfers[i]
            supply[s] = supply.get(s, 0.0) + f
            supply[d] = supply.get(d, 0.0) - f
        dests = {transfers[i][1] for i in idx}
        dist = {d: nx.single_source_shortest_path_length(g, d) for d in dests}
        net: dict = {}
        for (u, v), f in fl.items():
            assert f >= 0
            # the link is on a shortest path towards (one of) its destinations
            assert any(dist[d][v] == dist[d][u] - 1 for d in dests)
            net[u] = net.get(u, 0.0) + f
            net[v] = net.get(v, 0.0) - f
            total[(u, v)] = total.get((u, v), 0.0) + f
        for node in set(net) | set(supply):
            assert net.get(node, 0.0) == pytest.approx(supply.get(node, 0.0), abs=1e-9)
    for (u, v), x in total.items():
        assert x / g.edges[u, v]["bandwidth"] <= busiest * (1 + 1e-9)


def test_hand_case_flows():
    """The split as flows: gpu0's n, a third by gpu1, two thirds by gpu2."""
    r = Router(_ring4())
    flows = joint_flows(r, STEP)
    assert flows is not None
    _check_flows(r, STEP, flows, 2 / 3 / B)
    assert len(flows) == 1   # one destination, one commodity
    assert flows[0][1][("gpu0", "gpu1")] == pytest.approx(1 / 3, rel=1e-9)


# ------------------------------------------------------------------ the invariant
_FABRICS = ["torus:dims=2x3", "torus:dims=3x3", "torus:dims=3x4", "torus:dims=4x4",
            "fat-tree:k=4", "leaf-spine:leaves=4,radix=8,oversubscription=2"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# found by hypothesis on the own routes (each transfer its own maximum flow): 1.5556e-11
# -> 1.5704e-11 s/B with one cable of the 3x4 torus 1.5 times faster
@example(spec="torus:dims=3x4", seed=35563871, times=1.5, count=21)
@given(spec=st.sampled_from(_FABRICS), seed=st.integers(0, 2**32 - 1),
       times=st.sampled_from([1.5, 2.0, 4.0]), count=st.integers(2, 24))
def test_more_bandwidth_never_busier(spec, seed, times, count):
    """A step of random transfers between a fabric's GPUs: one cable faster (``times``;
    in a graph of single edges a parallel cable is a faster one) never makes the step's
    busiest link busier (load over bandwidth), the time a step's bytes take."""
    g0 = build(spec)
    rng = np.random.default_rng(seed)
    gpus = [v for v, d in g0.nodes(data=True) if d.get("kind") == "gpu"]
    pick = rng.integers(0, len(gpus), size=(count, 2))
    step = tuple((gpus[a], gpus[b], float(f)) for (a, b), f in
                 zip(pick.tolist(), rng.choice([0.25, 0.5, 1.0], size=count), strict=True)
                 if a != b)
    edges = sorted(g0.edges())
    g1 = g0.copy()
    e = edges[int(rng.integers(len(edges)))]
    g1.edges[e]["bandwidth"] *= times
    r0, r1 = Router(g0), Router(g1)
    before = _busiest(r0, *r0.link_loads(step)[:2]) if step else 0.0
    after = _busiest(r1, *r1.link_loads(step)[:2]) if step else 0.0
    assert after <= before * (1 + 1e-9)


@pytest.mark.parametrize("spec, edge, op, algorithm, gpus", [
    ("fat-tree:k=4", ("leaf0", "spine0"), "all-to-all", "pairwise", 8),
    ("torus:dims=3x4", ("gpu0", "gpu3"), "all-reduce", "direct", 6),
    ("torus:dims=4x4", ("gpu7", "gpu11"), "all-reduce", "ring", 12),
])
def test_documented_upgrades_no_longer_slow(spec, edge, op, algorithm, gpus):
    """docs/collectives.md's cases where a faster link drew one transfer's traffic onto
    links other transfers use (each transfer on its own: 1.14x, 1.02x and 1.05x slower
    with the link doubled, ideal calibration, 1 GiB): spread together, never slower."""
    from netmodel.collectives.calibration import Calibration
    from netmodel.collectives.model import FabricCostModel
    from netmodel.collectives.route_sharing import clear_shared_routes
    from tests.netmodel.fabric_helpers import zero_latency

    times = []
    for factor in (1, 2):
        clear_shared_routes()
        g = zero_latency(build(spec))
        g.edges[edge]["bandwidth"] *= factor
        group = [v for v, d in g.nodes(data=True) if d.get("kind") == "gpu"][:gpus]
        m = FabricCostModel(g, calibration=Calibration.ideal(1e-6))
        times.append(m.cost(op, 2**30, group, algorithm).time)
    assert times[1] <= times[0] * (1 + 1e-9)
