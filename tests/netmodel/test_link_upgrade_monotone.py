"""A faster link never makes a collective slower (for a fixed algorithm; ``auto`` takes the
fastest, so it follows).

Routes split a transfer over its shortest paths; where each node split by its next hops'
bandwidth alone, a faster link drew traffic onto the slower links behind it: a Lite on a
4-plane flat fabric with one plane port doubled sent 2/5 of its traffic down one 28 GB/s
port of its peer, and the ring all-reduce of 8 GPUs took 1.59x as long (17.98 ms ->
28.64 ms at 1 GiB). Each next hop is now weighted by what it can carry on to the
destination, min(its bandwidth, the capacity behind it), on every fabric.
"""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import zero_latency
from topologies import build

# small fabrics: switched (one and two tiers, oversubscribed), Lite groups (a mesh and a
# switch), a physical ring; for single transfers also a fat tree and a rail-optimized fabric.
# Not where shortest paths merge again after they split (three switch tiers, tori): there a
# faster link still draws the traffic of many transfers onto the links where they merge
# (docs/collectives.md, limits)
FABRICS = [
    "flat:n=8,gpu=Lite,bandwidth=112.5GB/s",
    "leaf-spine:leaves=4,radix=8",
    "leaf-spine:leaves=4,radix=8,oversubscription=2",
    "lite-groups:base=[single-switch:n=2],lites=4",
    "ring:n=6",
]
TRANSFER_FABRICS = [*FABRICS, "fat-tree:k=4",
                    "rail-optimized:domains=2,domain_size=4,gpus_per_server=4"]
CASES = [  # (op, algorithm)
    ("all-reduce", "ring"),
    ("all-reduce", "bidirectional-ring"),
    ("all-reduce", "tree"),
    ("all-reduce", "halving-doubling"),
    ("all-reduce", "direct"),
    ("reduce-scatter", "ring"),
    ("all-gather", "halving-doubling"),
    ("broadcast", "ring"),
    ("all-to-all", "direct"),
    ("all-to-all", "pairwise"),
]
_GRAPHS: dict = {}


def _graph(spec: str) -> nx.Graph:
    """The fabric ``spec`` with every link's and switch's latency 0 (costs are then the
    closed forms: ``alpha`` per step plus bytes over bandwidth)."""
    if spec not in _GRAPHS:
        _GRAPHS[spec] = zero_latency(build(spec))
    return _GRAPHS[spec]


def _time(g: nx.Graph, op: str, algorithm: str, group, size: float) -> float:
    model = FabricCostModel(g, algorithm=algorithm, calibration=Calibration.ideal(1e-6))
    return float(model.collective_time(op, [size], group)[0])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(FABRICS), case=st.sampled_from(CASES),
       edge=st.integers(0, 10**6), factor=st.sampled_from([1.25, 2.0, 4.0]),
       group=st.sampled_from([4, 6, 8]), size=st.sampled_from([2.0**20, 2.0**30]))
def test_faster_link_never_slower(spec, case, edge, factor, group, size):
    g = _graph(spec)
    op, algorithm = case
    group = min(group, g.graph["gpus"])
    try:
        before = _time(g, op, algorithm, group, size)
    except UserError:
        return  # the algorithm does not run on this fabric or group
    fast = g.copy()
    u, v = sorted(fast.edges(), key=str)[edge % fast.number_of_edges()]
    fast.edges[u, v]["bandwidth"] *= factor
    after = _time(fast, op, algorithm, group, size)
    assert after <= before * (1 + 1e-9), (spec, op, algorithm, group, size, (u, v), factor,
                                          after / before)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(TRANSFER_FABRICS), pair=st.tuples(st.integers(0, 10**6),
                                                              st.integers(1, 10**6)),
       edge=st.integers(0, 10**6), factor=st.sampled_from([1.25, 2.0, 4.0]))
def test_faster_link_never_slows_a_transfer(spec, pair, edge, factor):
    g = _graph(spec)
    gpus = sorted((x for x, d in g.nodes(data=True) if d["kind"] == "gpu"), key=str)
    a = gpus[pair[0] % len(gpus)]
    b = gpus[(pair[0] + pair[1] % (len(gpus) - 1) + 1) % len(gpus)]
    before = _time(g, "send-recv", "direct", [a, b], 2.0**30)
    fast = g.copy()
    u, v = sorted(fast.edges(), key=str)[edge % fast.number_of_edges()]
    fast.edges[u, v]["bandwidth"] *= factor
    after = _time(fast, "send-recv", "direct", [a, b], 2.0**30)
    assert after <= before * (1 + 1e-9), (spec, a, b, (u, v), factor, after / before)


def test_flat_plane_port_doubled():
    """The reproducer: ring all-reduce of 8 Lites on a 4-plane flat fabric, gpu0's port to
    plane0 doubled. gpu1's four 28.125 GB/s ports still bound gpu0 -> gpu1, so the time is
    the same; the bandwidth split sent 2/5 of it down plane0 -> gpu1: 1.6x the transfer."""
    g = _graph("flat:n=8,gpu=Lite,bandwidth=112.5GB/s").copy()
    before = _time(g, "all-reduce", "ring", 8, 2.0**30)
    g.edges["gpu0", "plane0"]["bandwidth"] *= 2
    after = _time(g, "all-reduce", "ring", 8, 2.0**30)
    # ideal ring: 2(p-1) steps of alpha + (n/p) / (4 x 28.125 GB/s), the NIC ports of a GPU
    b = 4 * 28.125e9
    hand = 14 * (1e-6 + 2.0**30 / 8 / b)
    assert before == pytest.approx(hand, rel=1e-9)
    assert after == pytest.approx(hand, rel=1e-9)


def test_leaf_spine_uplink_doubled():
    """docs/collectives.md's remainder on switched fabrics: leaf-spine of 4 leaves, 4 GPUs
    and 2 uplinks (to spine0, spine1) on each, leaf0's uplink to spine0 doubled. Direct
    all-to-all of the 8 GPUs on leaf0 and leaf1: each GPU sends n/8 to each of 4 GPUs across,
    16 transfers of n/8 = 2 n over each leaf's two 50 GB/s uplinks, n / 50 GB/s; the
    bandwidth split sent 2/3 of leaf0's up through spine0 and on down its one link into
    leaf1, (4/3) n / 50 GB/s."""
    g = _graph("leaf-spine:leaves=4,radix=8,oversubscription=2").copy()
    n = 2.0**30
    before = _time(g, "all-to-all", "direct", 8, n)
    g.edges["leaf0", "spine0"]["bandwidth"] *= 2
    after = _time(g, "all-to-all", "direct", 8, n)
    hand = 1e-6 + n / 50e9
    assert before == pytest.approx(hand, rel=1e-9)
    assert after == pytest.approx(hand, rel=1e-9)
