"""On ideal fabrics the model equals the textbook alpha-beta formulas exactly.

Ideal: one switch of zero latency, every GPU wired to it at B bytes/s per direction, the
calibration reduced to a per-step latency alpha (Calibration.ideal). Formulas: Thakur,
Rabenseifner & Gropp, "Optimization of collective communication operations in MPICH"
(IJHPCA 2005), and the pipelined-tree cost of Sanders, Speck & Traeff (2009).
"""

from __future__ import annotations

import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel


def star(p, bandwidth=100e9, *, tier=1, latency=0.0, switch_latency=0.0, capable=False):
    """``p`` GPUs on one switch (tier 1: every GPU its own domain; tier 0: one domain)."""
    g = nx.Graph(name="star", spec="", gpus=p)
    g.add_node("sw", kind="switch", tier=tier, radix=p, latency=switch_latency,
               in_network_reduction=capable)
    for i in range(p):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        g.add_edge(f"gpu{i}", "sw", bandwidth=bandwidth, latency=latency, medium="copper",
                   lanes=1)
    return g


def cost(graph, op, algorithm, p, n, alpha, **cal):
    m = FabricCostModel(graph, algorithm=algorithm, calibration=Calibration.ideal(alpha, **cal))
    return float(m.collective_time(op, n, p))


sizes = st.floats(min_value=1.0, max_value=1e10)
alphas = st.floats(min_value=0.0, max_value=1e-4)
groups = st.integers(min_value=2, max_value=24)
B = 100e9
beta = 1 / B

FORMULAS = {
    ("ring", "all-reduce"): lambda p, n, a: 2 * (p - 1) * a + 2 * (p - 1) / p * n * beta,
    ("ring", "reduce-scatter"): lambda p, n, a: (p - 1) * a + (p - 1) / p * n * beta,
    ("ring", "all-gather"): lambda p, n, a: (p - 1) * a + (p - 1) / p * n * beta,
    ("ring", "broadcast"): lambda p, n, a: (p - 1) * a + n * beta,
    ("ring", "reduce"): lambda p, n, a: (p - 1) * a + n * beta,
    # two counter-rotating rings, half the data each: a switch port carries the same bytes
    ("bidirectional-ring", "all-reduce"): lambda p, n, a: 2 * (p - 1) * a
    + 2 * (p - 1) / p * n * beta,
    ("bidirectional-ring", "reduce-scatter"): lambda p, n, a: (p - 1) * a
    + (p - 1) / p * n * beta,
    ("bidirectional-ring", "all-gather"): lambda p, n, a: (p - 1) * a + (p - 1) / p * n * beta,
    ("direct", "all-reduce"): lambda p, n, a: a + (p - 1) * n * beta,
    ("direct", "reduce-scatter"): lambda p, n, a: a + (p - 1) / p * n * beta,
    ("direct", "all-gather"): lambda p, n, a: a + (p - 1) / p * n * beta,
    ("direct", "all-to-all"): lambda p, n, a: a + (p - 1) / p * n * beta,
    ("direct", "broadcast"): lambda p, n, a: a + (p - 1) * n * beta,
    ("direct", "reduce"): lambda p, n, a: a + (p - 1) * n * beta,
    ("direct", "send-recv"): lambda p, n, a: a + n * beta,
    ("pairwise", "all-to-all"): lambda p, n, a: (p - 1) * a + (p - 1) / p * n * beta,
    # every GPU its own domain: NCCL's double binary tree, reduce and broadcast pipelined at
    # once (each tree on n/2; a GPU's port carries, each way, n/2 per tree edge it has,
    # parent or child, summed over both trees): two GPUs, one edge in each tree: n; three,
    # NCCL's two chains 0 <- 2 <- 1 and 1 <- 0 <- 2, three edges at the busiest: 1.5 n;
    # four and more, a GPU interior in one tree (a parent, two children) and a leaf in the
    # other: 2 n
    ("tree", "all-reduce"): lambda p, n, a: 2 * math.floor(math.log2(p)) * a
    + {2: 1, 3: 1.5}.get(p, 2) * n * beta,
    # one pipelined binary tree: an interior GPU forwards to two children
    ("tree", "broadcast"): lambda p, n, a: math.floor(math.log2(p)) * a
    + (2 if p > 2 else 1) * n * beta,
    ("tree", "reduce"): lambda p, n, a: math.floor(math.log2(p)) * a
    + (2 if p > 2 else 1) * n * beta,
}


def _fold(p, core):
    """Rabenseifner / recursive doubling on p GPUs: the power-of-two core ``core(q)`` plus
    two whole-vector steps for the ranks beyond the largest power of two q <= p."""
    q = 1 << (p.bit_length() - 1)
    return lambda n, a: core(q, n, a) + (0 if q == p else 2 * (a + n * beta))


@settings(max_examples=40, deadline=None)
@given(p=groups, n=sizes, a=alphas)
def test_closed_forms_on_one_switch(p, n, a):
    g = star(p)
    for (alg, op), formula in FORMULAS.items():
        assert cost(g, op, alg, p, n, a) == pytest.approx(formula(p, n, a), rel=1e-9), (alg, op)


@settings(max_examples=30, deadline=None)
@given(p=groups, n=sizes, a=alphas)
def test_rabenseifner_and_recursive_doubling(p, n, a):
    g = star(p)
    hd = _fold(p, lambda q, n, a: 2 * math.log2(q) * a + 2 * (q - 1) / q * n * beta)
    rd = _fold(p, lambda q, n, a: math.log2(q) * (a + n * beta))
    assert cost(g, "all-reduce", "halving-doubling", p, n, a) == pytest.approx(hd(n, a),
                                                                                 rel=1e-9)
    assert cost(g, "all-reduce", "recursive-doubling", p, n, a) == pytest.approx(rd(n, a),
                                                                                   rel=1e-9)


@settings(max_examples=20, deadline=None)
@given(k=st.integers(min_value=1, max_value=5), n=sizes, a=alphas)
def test_recursive_halving_and_doubling_powers_of_two(k, n, a):
    p = 2 ** k
    g = star(p)
    want = k * a + (p - 1) / p * n * beta
    assert cost(g, "reduce-scatter", "halving-doubling", p, n, a) == pytest.approx(want, rel=1e-9)
    assert cost(g, "all-gather", "halving-doubling", p, n, a) == pytest.approx(want, rel=1e-9)


@settings(max_examples=20, deadline=None)
@given(p=groups, n=sizes, a=alphas)
def test_tree_inside_one_domain_is_a_chain(p, n, a):
    # NCCL's tree inside a node is a chain: 2(p-1) pipeline stages; reduce (towards the
    # head) and broadcast (away from it) run at once, so a GPU inside the chain sends n to
    # each neighbour through its one port: 2 n; on two GPUs each sends n to the other: n,
    # a ring's bytes
    g = star(p, tier=0)
    assert cost(g, "all-reduce", "tree", p, n, a) == pytest.approx(
        2 * (p - 1) * a + (2 if p > 2 else 1) * n * beta, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(p=groups, n=sizes, a=alphas)
def test_in_network_reduction(p, n, a):
    # NVLS: (1 + 1/p) n per direction on each GPU link for all-reduce; n for the others
    g = star(p, capable=True)
    assert cost(g, "all-reduce", "in-network", p, n, a) == pytest.approx(
        a + (1 + 1 / p) * n * beta, rel=1e-9)
    for op in ("reduce-scatter", "all-gather", "broadcast", "reduce"):
        assert cost(g, op, "in-network", p, n, a) == pytest.approx(a + n * beta, rel=1e-9), op


@settings(max_examples=20, deadline=None)
@given(p=groups, n=sizes, a=alphas, gamma=st.floats(min_value=1e9, max_value=1e13))
def test_reduction_cost_gamma(p, n, a, gamma):
    # ring all-reduce reduces (p-1)/p n bytes per GPU
    g = star(p)
    want = 2 * (p - 1) * a + 2 * (p - 1) / p * n * beta + (p - 1) / p * n / gamma
    assert cost(g, "all-reduce", "ring", p, n, a, reduction_rate=gamma) == pytest.approx(
        want, rel=1e-9)


@settings(max_examples=20, deadline=None)
@given(p=groups, n=sizes, a=alphas, lat=st.floats(min_value=0, max_value=1e-5),
       sw=st.floats(min_value=0, max_value=1e-5))
def test_route_latency_adds_per_step(p, n, a, lat, sw):
    # every ring step crosses GPU -> switch -> GPU: two cables and one switch traversal
    g = star(p, latency=lat, switch_latency=sw)
    want = 2 * (p - 1) * (a + 2 * lat + sw) + 2 * (p - 1) / p * n * beta
    assert cost(g, "all-reduce", "ring", p, n, a) == pytest.approx(want, rel=1e-9)


@settings(max_examples=20, deadline=None)
@given(p=groups, n=sizes, a=alphas, lat=st.floats(min_value=0, max_value=1e-5),
       sw=st.floats(min_value=0, max_value=1e-5))
def test_in_network_route_latency_is_up_and_down(p, n, a, lat, sw):
    # NVLS: the data goes GPU -> switch (reduced there) -> GPU: two cables and one switch
    # traversal, as a unicast GPU-to-GPU route through the same switch
    g = star(p, latency=lat, switch_latency=sw, capable=True)
    want = a + 2 * lat + sw + (1 + 1 / p) * n * beta
    assert cost(g, "all-reduce", "in-network", p, n, a) == pytest.approx(want, rel=1e-9)


def test_in_network_two_level_route_latency():
    # leaf-spine with SHARP in both tiers, 8 GPUs on 2 leaves: the data climbs
    # GPU -(100 ns)- leaf (330 ns) -(250 ns)- spine (330 ns) and comes back down the same way:
    # 2 (100 + 330 + 250) + 330 = 1690 ns, as a unicast route between the leaves; two alphas.
    # SHARP's flow: each GPU sends its n up once and gets the result once
    from topologies.switched import leaf_spine

    n, a = 1e9, 1e-6
    g = leaf_spine(leaves=4, radix=8, in_network_reduction=True)
    want = 2 * a + 1690e-9 + n / 50e9
    assert cost(g, "all-reduce", "in-network", 8, n, a) == pytest.approx(want, rel=1e-12)


def two_level(domains, m, b_in, b_out):
    """``domains`` scale-up switches (tier 0) of ``m`` GPUs at ``b_in``; GPU j of every
    domain also on rail leaf j (tier 1) at ``b_out``, as in a rail-optimized fabric."""
    g = nx.Graph(name="two-level", spec="", gpus=domains * m)
    for d in range(domains):
        g.add_node(f"nvs{d}", kind="switch", tier=0, radix=m, latency=0.0,
                   in_network_reduction=False)
    for j in range(m):
        g.add_node(f"leaf{j}", kind="switch", tier=1, radix=domains, latency=0.0,
                   in_network_reduction=False)
    for d in range(domains):
        for j in range(m):
            gpu = f"gpu{d * m + j}"
            g.add_node(gpu, kind="gpu", gpu="H100-SXM")
            g.add_edge(gpu, f"nvs{d}", bandwidth=b_in, latency=0.0, medium="copper", lanes=1)
            g.add_edge(gpu, f"leaf{j}", bandwidth=b_out, latency=0.0, medium="fibre", lanes=1)
    return g


@settings(max_examples=20, deadline=None)
@given(D=st.integers(2, 6), m=st.integers(2, 6), n=sizes, a=alphas)
def test_hierarchical_two_level(D, m, n, a):
    # the three phases pipeline (no fill under the ideal calibration): every latency, and
    # the slower of the in-domain rings and the rail rings across
    b_in, b_out = 400e9, 50e9
    g = two_level(D, m, b_in, b_out)
    want = (2 * (m - 1) * a + 2 * (D - 1) * a
            + max(2 * (m - 1) / m * n / b_in, 2 * (D - 1) / (D * m) * n / b_out))
    assert cost(g, "all-reduce", "hierarchical", D * m, n, a) == pytest.approx(want, rel=1e-9)


def test_auto_is_the_minimum_of_the_algorithms():
    g = star(8, capable=True)
    cal = Calibration.ideal(1e-6, in_network_alpha=5e-6)
    auto = FabricCostModel(g, calibration=cal)
    names = ("ring", "tree", "halving-doubling", "recursive-doubling", "direct", "in-network")
    for n in (1e3, 1e6, 1e9):
        each = [float(FabricCostModel(g, algorithm=a, calibration=cal)
                      .collective_time("all-reduce", n, 8)) for a in names]
        assert float(auto.collective_time("all-reduce", n, 8)) == pytest.approx(min(each))
    # alpha 1 us (5 us in the switch), B = 100 GB/s: one-shot wins 1 kB (1.07 us against
    # 5.01 us), in-network reduction wins 1 GB (11.25 ms against ring's 17.5 ms)
    assert auto.cost("all-reduce", 1e3, 8).algorithm == "direct"
    assert auto.cost("all-reduce", 1e9, 8).algorithm == "in-network"


def test_in_network_over_parallel_switch_planes():
    # an NVSwitch domain as 4 switch chips, each GPU wired to all of them at B/4: the
    # reduction is striped over the planes and costs what one logical switch costs
    p, n, a = 8, 1e9, 1e-6
    g = nx.Graph(name="planes", spec="", gpus=p)
    for c in range(4):
        g.add_node(f"nvs{c}", kind="switch", tier=0, radix=p, latency=0.0,
                   in_network_reduction=True)
    for i in range(p):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        for c in range(4):
            g.add_edge(f"gpu{i}", f"nvs{c}", bandwidth=B / 4, latency=0.0, medium="copper",
                       lanes=1)
    assert cost(g, "all-reduce", "in-network", p, n, a) == pytest.approx(
        cost(star(p, capable=True), "all-reduce", "in-network", p, n, a))
    assert cost(g, "all-reduce", "in-network", p, n, a) == pytest.approx(a + 9 / 8 * n * beta)


@pytest.mark.parametrize("uplink", [B, B / 2])
def test_in_network_two_levels(uplink):
    # SHARP: two capable leaves of 2 GPUs under one capable spine. The GPU links carry n
    # each way (the data up, the result down), each leaf-spine link its leaf's partial n:
    # two levels, two alphas.
    n, a = 1e9, 1e-6
    g = nx.Graph(name="sharp", spec="", gpus=4)
    for s, tier in (("leaf0", 1), ("leaf1", 1), ("spine", 2)):
        g.add_node(s, kind="switch", tier=tier, radix=4, latency=0.0, in_network_reduction=True)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        g.add_edge(f"gpu{i}", f"leaf{i // 2}", bandwidth=B, latency=0.0, medium="copper",
                   lanes=1)
    for s in ("leaf0", "leaf1"):
        g.add_edge(s, "spine", bandwidth=uplink, latency=0.0, medium="copper", lanes=1)
    want = 2 * a + max(n / B, n / uplink)
    assert cost(g, "all-reduce", "in-network", 4, n, a) == pytest.approx(want)


@pytest.mark.parametrize("p", [8, 16])
def test_in_network_across_pods_of_a_fat_tree(p):
    # SHARP in every switch of a k=4 fat tree, the group spanning pods (p/4 pods). No switch
    # is common to every spine: spine a of each pod reaches only core group a. Each leaf
    # splits its partial over its pod's 2 spines (n/2 each), each spine over its 2 cores
    # (n/4 each), and core c of group a ends up with slice c reduced over all the pods that
    # are in the group: a three-level tree (3 alphas). The GPU links carry n each way, the
    # leaf-spine links n/2, the spine-core links n/4, all at 50 GB/s.
    from topologies.switched import fat_tree

    n, a, bw = 1e9, 1e-6, 50e9
    g = fat_tree(4, in_network_reduction=True)
    for _, _, d in g.edges(data=True):
        d["latency"] = 0.0
    for x in g:
        if g.nodes[x]["kind"] == "switch":
            g.nodes[x]["latency"] = 0.0
    assert cost(g, "all-reduce", "in-network", p, n, a) == pytest.approx(
        3 * a + n / bw)


def physical_ring(p, bandwidth=B):
    """``p`` GPUs wired in a ring, each link ``bandwidth`` per direction, no switch."""
    g = nx.Graph(name="ring", spec="", gpus=p)
    for i in range(p):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    for i in range(p):
        g.add_edge(f"gpu{i}", f"gpu{(i + 1) % p}", bandwidth=bandwidth, latency=0.0,
                   medium="copper", lanes=1)
    return g


@settings(max_examples=20, deadline=None)
@given(p=st.integers(min_value=3, max_value=24), n=sizes, a=alphas)
def test_bidirectional_ring_halves_transfer_time_on_a_physical_ring(p, n, a):
    # A unidirectional ring leaves each link's reverse direction idle; sending half the data
    # each way round uses both: 2(p-1) alpha + (p-1)/p n beta for all-reduce.
    g = physical_ring(p)
    one_way = cost(g, "all-reduce", "ring", p, n, a)
    both_ways = cost(g, "all-reduce", "bidirectional-ring", p, n, a)
    assert one_way == pytest.approx(2 * (p - 1) * a + 2 * (p - 1) / p * n * beta, rel=1e-9)
    assert both_ways == pytest.approx(2 * (p - 1) * a + (p - 1) / p * n * beta, rel=1e-9)
