"""NCCL's structure in the model, against hand-derived figures: a ring and a tree per NIC rail
across scale-up domains, NCCL's latency accounting (scale-up vs network steps), pipelines
that fill and drain, in-switch reduction chained into the network, per-generation constants
and the in-switch ceiling; and the split of candidates that makes bandwidth re-scoring exact.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.algorithms import generate
from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.concurrent import concurrent_linear
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.results import bus_factor
from netmodel.collectives.steps import NotApplicable
from topologies import build, single_switch


def two_level(domains, m, b_in, b_out, *, nvls=False, sharp=False):
    """``domains`` scale-up switches of ``m`` GPUs at ``b_in``; GPU j of every domain on
    rail leaf j at ``b_out``; no latency anywhere."""
    g = nx.Graph(name="two-level", spec="", gpus=domains * m)
    for d in range(domains):
        g.add_node(f"nvs{d}", kind="switch", tier=0, radix=m, latency=0.0,
                   in_network_reduction=nvls)
    for j in range(m):
        g.add_node(f"leaf{j}", kind="switch", tier=1, radix=domains, latency=0.0,
                   in_network_reduction=sharp)
    for d in range(domains):
        for j in range(m):
            gpu = f"gpu{d * m + j}"
            g.add_node(gpu, kind="gpu", gpu="H100-SXM", group=d)
            g.add_edge(gpu, f"nvs{d}", bandwidth=b_in, latency=0.0, medium="copper", lanes=1)
            g.add_edge(gpu, f"leaf{j}", bandwidth=b_out, latency=0.0, medium="fibre", lanes=1)
    return g


def star(p, bandwidth, gpu="H100-SXM"):
    """``p`` GPUs on one reducing switch, no latency anywhere."""
    g = nx.Graph(name="star", spec="", gpus=p)
    g.add_node("sw", kind="switch", tier=0, radix=p, latency=0.0, in_network_reduction=True)
    for i in range(p):
        g.add_node(f"gpu{i}", kind="gpu", gpu=gpu)
        g.add_edge(f"gpu{i}", "sw", bandwidth=bandwidth, latency=0.0, medium="copper", lanes=1)
    return g


def two_alphas(up, out, **kw):
    """One protocol at full rate, ``up`` seconds per scale-up payment, ``out`` per network
    one; in-network payments the same."""
    return Calibration(protocols=(Protocol("p", 1.0, 0.0, up, out, **kw),),
                       in_network=Protocol("net", 1.0, 0.0, up, out, **kw))


def test_one_ring_per_rail_across_domains():
    # 4 domains of 8 GPUs, 400 GB/s inside, 50 GB/s NICs: each of the 8 rings carries 1/8
    # of the data through its own NIC, so the NICs limit busbw to 8 x 50 GB/s (one ring
    # through one NIC: 50 GB/s)
    D, m, n = 4, 8, 2.0 ** 33
    g = two_level(D, m, 400e9, 50e9)
    model = FabricCostModel(g, algorithm="ring", calibration=Calibration.ideal())
    r = model.cost("all-reduce", n, D * m)
    assert r.busbw == pytest.approx(m * 50e9, rel=1e-9)
    steps = generate("ring", "all-reduce", model.group(D * m), g)
    # each GPU sends 1/p to the next GPU of its domain and 1/(m p) to its rail peer
    p = D * m
    sent = {}
    for a, _, f in steps[0].transfers:
        sent.setdefault(a, []).append(f)
    assert all(sorted(v) == pytest.approx([1 / (m * p), 1 / p]) for v in sent.values())


def test_latency_payments_follow_nccl():
    # NCCL: ring all-reduce pays (2(p-1) - 2(D-1)) scale-up and 2(D-1) network latencies;
    # a tree 2 ((m-1) scale-up + log2(D) network)
    D, m, up, out = 4, 8, 1e-6, 10e-6
    g = two_level(D, m, 400e9, 50e9)
    cal = two_alphas(up, out)
    p = D * m
    ring = FabricCostModel(g, algorithm="ring", calibration=cal).cost("all-reduce", 1.0, p)
    assert ring.time == pytest.approx((2 * (p - 1) - 2 * (D - 1)) * up + 2 * (D - 1) * out
                                      + 1.0 * 2 * (p - 1) / (m * p) / 50e9, rel=1e-9)
    tree = FabricCostModel(g, algorithm="tree", calibration=cal).cost("all-reduce", 1.0, p)
    lat = 2 * ((m - 1) * up + 2 * out)
    assert tree.time == pytest.approx(lat, rel=1e-3)


def test_in_switch_pipeline_fills_then_streams():
    # NVLS on one switch, p GPUs at B: its two phases run one after the other (2 n / B) until
    # the pipeline holds a slice of channels x p x chunk bytes, then together ((1 + 1/p) n /
    # B) after a fill of that slice's (1 - 1/p) / B
    p, B, chunk, ch = 8, 100e9, 131072, 16
    g = star(p, B)
    cal = Calibration.ideal().with_(channels=ch, in_network=Protocol("net", 1.0, 0.0, 0.0, 0.0,
                                                                    chunk=chunk))
    model = FabricCostModel(g, algorithm="in-network", calibration=cal)
    lines = [(c[2], c[3]) for c in model.candidates("all-reduce", model.group(p))]
    s = ch * p * chunk
    want = [(0.0, 2 / B), (s * (1 - 1 / p) / B, (1 + 1 / p) / B)]
    assert np.allclose(lines, want, rtol=1e-12, atol=1e-18)
    for n in (1e5, s, 10 * s):
        t = float(model.collective_time("all-reduce", n, p))
        assert t == pytest.approx((1 + 1 / p) * n / B + (1 - 1 / p) / B * min(n, s), rel=1e-12)


def test_a_chain_fills_over_its_stages():
    # ring broadcast: a pipelined chain of p - 1 stages streams n / B once full and fills
    # over p - 2 stages of one slice (channels x chunk)
    p, B, chunk, ch = 6, 100e9, 524288, 4
    cal = Calibration(protocols=(Protocol("p", 1.0, 0.0, 0.0, 0.0, chunk=chunk),),
                      in_network=Protocol("net", 1.0, 0.0, 0.0, 0.0), channels=ch)
    model = FabricCostModel(star(p, B), algorithm="ring", calibration=cal)
    s = ch * chunk
    for n in (1e4, s / 2, 3 * s):
        t = float(model.collective_time("broadcast", n, p))
        assert t == pytest.approx(n / B + (p - 2) / B * min(n, s), rel=1e-12)


def test_in_switch_reduction_chains_into_sharp_across_domains():
    # NVLS inside each of 2 domains of 8 H100, SHARP in the rail leaves: the phases pipeline
    # and the slowest bounds: inside, (1 + 1/8) n per GPU link at 450 x 0.824 x 0.85 GB/s,
    # held to the Hopper ceiling 1.067 x 450 GB/s of busbw; across, n/8 per NIC at 47 GB/s
    g = build("rail-optimized:domains=2,sharp=true")
    model = FabricCostModel(g, algorithm="in-network", validated=True)
    r = model.cost("all-reduce", 2.0 ** 36, 16)
    inside = max(1.125 / (450e9 * 0.824 * 0.85), 2 * 7 / 8 / (1.067 * 450e9))
    across = (1 / 8) / (50e9 * 0.94)
    assert r.algbw == pytest.approx(1 / max(inside, across), rel=0.01)
    assert [s.name for s in r.steps] == ["in-switch reduce-scatter",
                                         "all-reduce across (switch)",
                                         "in-switch all-gather"]


def test_in_network_across_domains_needs_switches_that_reduce():
    g = build("rail-optimized:domains=2")
    model = FabricCostModel(g, algorithm="in-network", validated=True)
    with pytest.raises(UserError, match="in-network-tree runs a tree across them"):
        model.cost("all-reduce", 1e6, 16)
    # NCCL's NVLSTree runs instead: NVLS inside, a tree per rail across
    tree = FabricCostModel(g, algorithm="in-network-tree", validated=True)
    assert tree.cost("all-reduce", 2.0 ** 33, 16).busbw > 450e9
    with pytest.raises(NotApplicable, match="at least two scale-up domains"):
        generate("in-network-tree", "all-reduce", tuple(f"gpu{i}" for i in range(8)), g)


def test_hierarchical_uses_the_switch_inside_when_it_reduces():
    g = build("rail-optimized:domains=2")
    steps = generate("hierarchical", "all-reduce", tuple(f"gpu{i}" for i in range(16)), g)
    assert steps[0].in_network and steps[0].name.startswith("in-switch")
    g2 = build("rail-optimized:domains=2,in_network_reduction=false")
    steps2 = generate("hierarchical", "all-reduce", tuple(f"gpu{i}" for i in range(16)), g2)
    assert not steps2[0].in_network and steps2[0].repeat == 7


@pytest.mark.parametrize("gpu, eff", [("A100-SXM-80GB", 0.8), ("H100-SXM", 0.824),
                                      ("B200-HGX", 0.802), ("Lite", 0.824)])
def test_each_generation_has_its_link_efficiency(gpu, eff):
    # a ring on one switch moves the NVLink payload rate as busbw at large sizes
    g = single_switch(8, gpu=gpu, in_network_reduction=False)
    model = FabricCostModel(g, algorithm="ring")
    line = float(g.edges["gpu0", "nvs0"]["bandwidth"])
    assert model.calibration.scaleup_efficiency == eff
    r = model.cost("all-reduce", 2.0 ** 40, 8)
    assert r.busbw == pytest.approx(line * eff, rel=1e-3)


def test_an_explicit_calibration_is_left_alone():
    g = single_switch(8, gpu="A100-SXM-80GB")
    ideal = Calibration.ideal(1e-6)
    assert FabricCostModel(g, calibration=ideal).calibration is ideal
    assert default_calibration().resolve(g).generation == "ampere"


def test_the_in_switch_ceiling_caps_large_domains():
    # 72 B200 on one switch: the links alone would give NVLS 2 (p-1)/(p+1) x 534 GB/s =
    # 1,039 GB/s of busbw; the Blackwell ceiling holds it at 0.933 x 900 GB/s
    model = FabricCostModel(single_switch(72, gpu="B200-HGX"), algorithm="in-network")
    r = model.cost("all-reduce", 2.0 ** 40, 72)
    assert r.busbw == pytest.approx(0.933 * 900e9, rel=1e-3)
    # 4 GPUs: the links bind first, (2 (p-1)/(p+1)) x 900 x 0.802 x 0.74
    r4 = FabricCostModel(single_switch(4, gpu="B200-HGX"), algorithm="in-network") \
        .cost("all-reduce", 2.0 ** 40, 4)
    assert r4.busbw == pytest.approx(1.2 * 900e9 * 0.802 * 0.74, rel=1e-3)


@pytest.mark.parametrize("spec", ["single-switch:n=8", "rail-optimized:domains=2",
                                  "rail-optimized:domains=2,sharp=true", "torus:dims=4x4",
                                  "lite-groups"])
def test_candidate_parts_rescore_bandwidth_exactly(spec):
    # every link k times faster: a_fixed + a_fill / k + (b_link / k + b_reduce) n is what
    # compiling the faster fabric gives, candidate by candidate
    g = build(spec)
    k = 2.5
    fast = g.copy()
    for _, _, d in fast.edges(data=True):
        d["bandwidth"] *= k
    p = min(16, g.graph["gpus"])
    for op in ("all-reduce", "all-gather", "broadcast"):
        m = FabricCostModel(g, validated=True)
        a_fix, a_fill, b_link, b_red, b_least = m.candidate_parts(op, m.group(p))
        mf = FabricCostModel(fast, validated=True)
        want = mf.candidates(op, mf.group(p))
        assert np.allclose(a_fix + a_fill / k, [c[2] for c in want], rtol=1e-12, atol=0)
        assert np.allclose(np.maximum(b_link / k, b_least) + b_red, [c[3] for c in want],
                           rtol=1e-12, atol=0)
        got = m.candidates(op, m.group(p))
        assert np.allclose(a_fix + a_fill, [c[2] for c in got], rtol=1e-12, atol=0)


def test_the_lines_make_a_concave_time():
    # per (algorithm, protocol) the time is the smallest of its lines: concave in n, so it
    # never decreases and its slope never grows
    model = FabricCostModel(build("rail-optimized:domains=2"), algorithms="nccl")
    n = 2.0 ** np.arange(10, 36, 0.5)
    for name, t in model.curves("all-reduce", n, 16).items():
        assert np.all(np.diff(t) > 0), name
        slope = np.diff(t) / np.diff(n)
        assert np.all(np.diff(slope) <= 1e-18 + 1e-9 * np.abs(slope[:-1])), name


def test_concurrent_groups_alone_equal_their_own_cost():
    # two TP-8 groups in two domains of a rail-optimized fabric share nothing: together is
    # alone, and alone is each group's own cost
    g = build("rail-optimized:domains=2")
    model = FabricCostModel(g, algorithms="nccl", validated=True)
    groups = [tuple(f"gpu{i}" for i in range(8)), tuple(f"gpu{i}" for i in range(8, 16))]
    choices, a, b = concurrent_linear(model, groups, "all-reduce")
    n = 2.0 ** 26
    t = (a + b * n).min(axis=0)
    for gi, grp in enumerate(groups):
        assert t[gi] == pytest.approx(model.cost("all-reduce", n, grp).time, rel=1e-12)
    assert bus_factor("all-reduce", 8) == 1.75
