"""A faster link never makes a collective slower (for a fixed algorithm; ``auto`` takes the
fastest, so it follows).

Routes split a transfer over its shortest paths; where each node split by its next hops'
bandwidth alone, a faster link drew traffic onto the slower links behind it: a Lite on a
4-plane flat fabric with one plane port doubled sent 2/5 of its traffic down one 28 GB/s
port of its peer, and the ring all-reduce of 8 GPUs took 1.59x as long (17.98 ms ->
28.64 ms at 1 GiB). Each next hop is now weighted by what it can carry on to the
destination, min(its bandwidth, the capacity behind it), on every fabric. Where paths
that split merge again (tori, three switch tiers) that capacity counts the merge more than
once; a route that carries less than the maximum flow over its shortest paths takes a
maximum flow's shares instead, so a single transfer of n bytes takes n / max flow, which
no faster link makes longer (4x4 torus, gpu0 -> gpu6, gpu0-gpu4 doubled: was 1.12x).
"""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import zero_latency
from topologies import build

# small fabrics: switched (one and two tiers, oversubscribed), Lite groups (a mesh and a
# switch), a physical ring; for single transfers also fat trees, a rail-optimized fabric and
# tori. Collectives not where shortest paths merge again after they split (three switch
# tiers, tori): there each transfer's split is a maximum flow of its own, and a faster link
# still draws the traffic of many transfers onto the links where they merge
# (docs/collectives.md, limits)
FABRICS = [
    "flat:n=8,gpu=Lite,bandwidth=112.5GB/s",
    "leaf-spine:leaves=4,radix=8",
    "leaf-spine:leaves=4,radix=8,oversubscription=2",
    "lite-groups:base=[single-switch:n=2],lites=4",
    "ring:n=6",
]
TORI = ["torus:dims=4x4", "torus:dims=3x4", "torus:dims=2x3x4",
        "lite-groups:base=[torus:dims=3x3],lites=2"]
FAT_TREES = ["fat-tree:k=4", "fat-tree:k=4,oversubscription=2"]
TRANSFER_FABRICS = [*FABRICS, *FAT_TREES, *TORI,
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


def _sp_max_flow(g: nx.Graph, a, b) -> float:
    """The maximum flow from ``a`` to ``b`` over the links on their shortest paths, each
    direction of a cable carrying its bandwidth (networkx, from the graph alone). Paths
    cross switches where there are any (GPUs do not forward on switched fabrics), else
    GPUs (tori, Lite groups of a torus)."""
    switched = any(k == "switch" for _, k in g.nodes(data="kind"))
    h = g.subgraph([x for x, k in g.nodes(data="kind")
                    if x in (a, b) or k == ("switch" if switched else "gpu")])
    da = nx.single_source_shortest_path_length(h, a)
    db = nx.single_source_shortest_path_length(h, b)
    dag = nx.DiGraph()
    for u, v, bw in h.edges(data="bandwidth"):
        for x, y in ((u, v), (v, u)):
            if x in da and y in db and da[x] + 1 + db[y] == da[b]:
                dag.add_edge(x, y, capacity=bw)
    return nx.maximum_flow_value(dag, a, b)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(TORI + FAT_TREES), pair=st.tuples(st.integers(0, 10**6),
                                                               st.integers(1, 10**6)),
       changes=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from([0.5, 1.25, 2.0, 4.0])),
                        max_size=6))
# test_fat_tree_two_links_halved: leaf5-spine4 and leaf0-spine1 halved, gpu0 -> gpu10
@example(spec="fat-tree:k=4", pair=(0, 1), changes=[(170, 0.5), (14417, 0.5)])
def test_a_transfer_takes_n_over_its_max_flow(spec, pair, changes):
    """A single transfer takes alpha + n / (the maximum flow over its shortest paths), with
    any links made faster or slower: the split is a maximum flow. The capacity split alone
    was up to 1.5x slower on a 2x3x4 torus as built, and after a few links changed on
    fat-tree:k=4 up to 1.33x."""
    g = _graph(spec).copy()
    edges = sorted(g.edges(), key=str)
    for e, factor in changes:
        u, v = edges[e % len(edges)]
        g.edges[u, v]["bandwidth"] *= factor
    gpus = sorted((x for x, d in g.nodes(data=True) if d["kind"] == "gpu"), key=str)
    a = gpus[pair[0] % len(gpus)]
    b = gpus[(pair[0] + pair[1] % (len(gpus) - 1) + 1) % len(gpus)]
    n = 2.0**30
    assert _time(g, "send-recv", "direct", [a, b], n) == pytest.approx(
        1e-6 + n / _sp_max_flow(g, a, b), rel=1e-9), (spec, a, b, changes)


def test_torus_cable_doubled():
    """The reproducer of docs/collectives.md: 4x4 torus (gpu r*4 + c at row r, column c,
    each row and column a ring), gpu0 (0, 0) -> gpu6 (1, 2) with the gpu0-gpu4 cable
    doubled. The shortest paths take one step down and two along a row, either way round:
    gpu0's three links out (to gpu4, gpu1, gpu3) start three link-disjoint paths, 0-4-5-6,
    0-1-2-6, 0-3-7-6, and gpu6's three links in (from gpu5, gpu2, gpu7) end them, so the
    maximum flow is 3 B (B the torus cable) before the upgrade and after it (gpu0's side
    grows to 4 B, gpu6's stays 3 B): n / 3 B both times. The capacity split counted 2 B
    behind gpu4 (to gpu5 and to gpu7, both also fed by gpu1 or gpu3), so after the upgrade
    it sent gpu0's traffic 2 : 1 : 1, and 3/8 of it over gpu5 -> gpu6 (1/4 from gpu4, 1/8
    from gpu1): 1.125x."""
    g = _graph("torus:dims=4x4").copy()
    b = g.edges["gpu5", "gpu6"]["bandwidth"]
    assert all(g.edges[e]["bandwidth"] == b for e in g.edges)
    n = 2.0**30
    hand = 1e-6 + n / (3 * b)
    assert _time(g, "send-recv", "direct", ["gpu0", "gpu6"], n) == pytest.approx(hand,
                                                                               rel=1e-12)
    g.edges["gpu0", "gpu4"]["bandwidth"] *= 2
    assert _time(g, "send-recv", "direct", ["gpu0", "gpu6"], n) == pytest.approx(hand,
                                                                               rel=1e-12)


def test_fat_tree_uplink_quartered():
    """A merge on the way down a fat tree (k=4: 2 GPUs a leaf, 2 leaves and 2 spines a pod,
    spine s of every pod cabled to cores 2s and 2s + 1), leaf0's link to spine0 at B / 4 (B
    every other cable): send-recv gpu0 (leaf0, pod 0) <-> gpu10 (leaf5, pod 2). Each way the
    GPU's own port, B, is the least cut (into leaf0: B / 4 from spine0 + B from spine1), so
    each transfer's maximum flow is B and the time n / B. The capacity split sent gpu10's
    traffic 1/3 to spine4, which it counted as carrying on B / 2 (B / 4 through core0 and
    again through core1, both ending in the one spine0 -> leaf0 link) against spine5's 2 B,
    and so 1/3 of it down the B / 4 link: (4/3) n / B."""
    g = _graph("fat-tree:k=4").copy()
    b = g.edges["gpu0", "leaf0"]["bandwidth"]
    assert all(g.edges[e]["bandwidth"] == b for e in g.edges)
    assert g.has_edge("gpu10", "leaf5") and g.has_edge("leaf5", "spine4")
    assert {c for c in g["spine4"] if c.startswith("core")} == {"core0", "core1"}
    g.edges["leaf0", "spine0"]["bandwidth"] = b / 4
    n = 2.0**30
    assert _time(g, "send-recv", "direct", ["gpu0", "gpu10"], n) == pytest.approx(
        1e-6 + n / b, rel=1e-12)


def test_fat_tree_two_links_halved():
    """A fat tree (k=4, as in test_fat_tree_uplink_quartered) with leaf0's link to spine1
    and leaf5's link to spine4 at B / 2: send-recv gpu0 (leaf0) -> gpu10 (leaf5). The paths
    up through spine0 all end in spine4 -> leaf5 (B / 2), those through spine1 start with
    leaf0 -> spine1 (B / 2), so the maximum flow is B / 2 + B / 2 = B (gpu0's port) and the
    time n / B. The capacity split counted spine0 as carrying on B (B / 2 through core0
    and again through core1, both into the one spine4 -> leaf5 link) against spine1's
    B / 2; that split is also the split by bandwidth, so the routes of tiered fabrics took
    it without a check and sent 2/3 of the transfer down the B / 2 link: (4/3) n / B."""
    g = _graph("fat-tree:k=4").copy()
    b = g.edges["gpu0", "leaf0"]["bandwidth"]
    assert all(g.edges[e]["bandwidth"] == b for e in g.edges)
    assert g.has_edge("gpu10", "leaf5") and g.has_edge("leaf0", "spine1")
    assert {c for c in g["spine4"] if c.startswith("core")} == {"core0", "core1"}
    assert {c for c in g["spine0"] if c.startswith("core")} == {"core0", "core1"}
    g.edges["leaf0", "spine1"]["bandwidth"] = b / 2
    g.edges["leaf5", "spine4"]["bandwidth"] = b / 2
    n = 2.0**30
    assert _time(g, "send-recv", "direct", ["gpu0", "gpu10"], n) == pytest.approx(
        1e-6 + n / b, rel=1e-12)
