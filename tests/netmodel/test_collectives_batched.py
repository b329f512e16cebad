"""Work done for many nodes or switches at once gives what doing it one at a time gives
(issue 12's speed work changes no number): scale-up domain labels, up/down structures, the
most common GPU type."""

from __future__ import annotations

import random
from dataclasses import replace

import networkx as nx
import numpy as np
import pytest

from netmodel.collectives import group_domains
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.group_domains import domain_key, domain_labels
from topologies import build

SPECS = ["fat-tree:k=8", "rail-optimized:domains=4", "rail-optimized:domains=2,sharp=true",
         "nvl72", "lite-groups:split=gateway", "lite-groups:base=[fat-tree:k=4],lites=2",
         "torus:dims=4x4", "ring:n=8", "single-switch:n=8",
         "leaf-spine:leaves=4,radix=8,oversubscription=2"]


def _gpus(g):
    return [n for n, d in g.nodes(data=True) if d.get("kind") == "gpu"]


def _reference_labels(graph, queries):
    """Domain numbers one GPU at a time: in order of each key's first appearance."""
    numbers: dict = {}
    return [np.array([numbers.setdefault(domain_key(graph, x), len(numbers)) for x in q],
                     dtype=np.int64) for q in queries]


@pytest.mark.parametrize("strip", [(), ("group",), ("group", "server")])
@pytest.mark.parametrize("spec", SPECS)
def test_domain_labels_equal_one_at_a_time(spec, strip):
    """``strip``: attributes taken off every GPU (so that tier-0 switches, servers or the
    GPU itself name the domains)."""
    g = build(spec)
    gpus = _gpus(g)
    for x in gpus:
        for a in strip:
            g.nodes[x].pop(a, None)
    rng = random.Random(3)
    shuffled = rng.sample(gpus, len(gpus))
    # a few GPUs first, then all in a shuffled order with repeats, then all in order
    queries = [shuffled[:3], shuffled + shuffled[:5], gpus]
    got = [domain_labels(g, q) for q in queries]
    for a, b in zip(got, _reference_labels(g, queries), strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()


def test_domain_keys_of_mixed_nodes():
    """Group labels, tier-0 switches (several per GPU, names sorted as strings, two
    switches whose names read alike), servers and bare GPUs, asked together."""
    g = nx.Graph()
    g.add_node("s10", kind="switch", tier=0)
    g.add_node("s9", kind="switch", tier=0)
    g.add_node(7, kind="switch", tier=0)
    g.add_node("7", kind="switch", tier=0)
    g.add_node("up", kind="switch", tier=1)
    edges = {"a": ["s9", "s10", "up"], "b": ["s10", "s9"], "c": [7], "d": ["7"],
             "e": ["up"], "f": [], "h": ["s9"]}
    for gpu, sws in edges.items():
        g.add_node(gpu, kind="gpu")
        for s in sws:
            g.add_edge(gpu, s)
    g.nodes["e"]["server"] = "srv"
    g.nodes["h"]["group"] = 4
    nodes = ["a", "b", "c", "d", "e", "f", "h"]
    keys = [("gpu", x) if k is None else k
            for x, k in zip(nodes, group_domains._domain_keys(g, nodes), strict=True)]
    assert keys == [domain_key(g, x) for x in nodes]
    assert keys[0] == ("switch", ("s10", "s9")) == keys[1]
    assert keys[2] == keys[3] == ("switch", ("7",))
    assert keys[4:] == [("server", "srv"), ("gpu", "f"), ("group", 4)]
    assert domain_labels(g, nodes).tolist() == [0, 0, 1, 1, 2, 3, 4]
    # new GPUs asked with known ones: numbered after them, a known domain keeps its number
    g.add_node("i", kind="gpu", server="srv")
    g.add_node("j", kind="gpu", group=5)
    g.add_node("k", kind="gpu")
    g.add_edge("k", "s9")
    g.add_edge("k", "s10")
    assert domain_labels(g, ["f", "j", "i", "k", "j", "b"]).tolist() == [3, 5, 2, 0, 5, 0]


@pytest.mark.parametrize("types, want", [
    (["A100-SXM-80GB"] * 5 + ["B200-HGX"] * 3, "ampere"),
    (["B200-HGX"] * 4 + ["A100-SXM-80GB"] * 4, "blackwell"),  # a tie: the first seen
    (["B200-HGX", "A100-SXM-80GB"] * 4, "blackwell"),
])
def test_most_common_gpu_type_from_the_gpu_list(types, want):
    """The GPU list given (the router's) and the graph's own nodes name the same type."""
    cal = default_calibration()
    results = []
    for given in (True, False):
        g = build("single-switch:n=8")
        gpus = _gpus(g)
        for x, t in zip(gpus, types, strict=True):
            g.nodes[x]["gpu"] = t
        r = cal.resolve(g, gpus if given else None)
        results.append(r)
        assert r.generation == want
    assert results[0] == results[1]


@pytest.mark.parametrize("spec", ["rail-optimized:domains=4", "nvl72", "fat-tree:k=8"])
def test_domain_labels_with_the_routers_tiers(spec):
    """Tier-0 switches taken from the router's tiers or found in the graph: same labels."""
    from netmodel.collectives.routing import Router

    a, b = build(spec), build(spec)
    gpus = _gpus(a)
    assert domain_labels(a, gpus, Router(a).tier).tolist() == domain_labels(b, gpus).tolist()
    assert group_domains._TIER0.get(a) == group_domains._TIER0.get(b)


def _reference_struct(r, nodes) -> dict:
    """One structure worked out alone, as before the batched build (np.unique per set),
    from every up link of the fabric sifted at once (as the router did before it looked up
    only the structure's switches' links)."""
    from netmodel.collectives.route_types import KIND_SWITCH

    code, tier, src, dst = r._code, r._tier_arr, r._src, r._dst
    up = np.flatnonzero((code[src] == KIND_SWITCH) & (code[dst] == KIND_SWITCH)
                        & (tier[dst] == tier[src] + 1))
    up = up[np.argsort(src[up], kind="stable")]
    ptr = np.concatenate([[0], np.cumsum(np.bincount(src[up], minlength=r._n))])
    low = np.array([r._nid[x] for x in nodes], dtype=np.int64)
    start, count = ptr[low], ptr[low + 1] - ptr[low]
    total = int(count.sum())
    p = np.repeat(np.arange(len(nodes)), count)
    lup = up[np.repeat(start, count) + np.arange(total)
             - np.repeat(np.cumsum(count) - count, count)] if total else up[:0]
    y = r._dst[lup]
    upper_n = np.unique(y)
    c = np.searchsorted(upper_n, y)
    bw = r.bandwidth[lup]
    swl = r._switch_latency
    upper = tuple(r._nodes[i] for i in upper_n.tolist())
    return {"dead": bool((count == 0).any()), "upper": upper, "p": p, "c": c, "lup": lup,
            "ldown": lup ^ 1, "lat": r.latency[lup],
            "share_up": bw / np.bincount(p, bw, minlength=len(nodes))[p] if total else bw,
            "share_down": bw / np.bincount(c, bw, minlength=len(upper_n))[c] if total else bw,
            "sw_lower": np.array([swl.get(x, 0.0) for x in nodes]),
            "sw_upper": np.array([swl.get(x, 0.0) for x in upper])}


_STRUCT_FIELDS = ("c", "dead", "lat", "ldown", "lup", "p", "share_down", "share_up",
                  "sw_lower", "sw_upper", "upper")


@pytest.mark.parametrize("spec", ["fat-tree:k=8", "fat-tree:k=8,oversubscription=2",
                                  "rail-optimized:domains=4",
                                  "leaf-spine:leaves=4,radix=8,oversubscription=2",
                                  "fat-tree:k=8 degraded"])
def test_up_down_structures_built_together_equal_one_at_a_time(spec):
    """Every switch set of the fabric's tiers (one switch, a pod's spines, pairs, all of a
    tier, one with no way up) built in one pass and one by one: the same arrays, bit for
    bit, and the same dtypes."""
    from netmodel.collectives.degraded import degrade
    from netmodel.collectives.routing import Router

    g = build(spec.split()[0])
    if spec.endswith("degraded"):
        g = degrade(g, links=[("leaf0", "spine0")], nodes=["spine5", "core3"])
    by_tier: dict = {}
    for n, d in g.nodes(data=True):
        if d.get("kind") == "switch":
            by_tier.setdefault(d.get("tier", 0), []).append(n)
    keys = []
    for t, sws in sorted(by_tier.items()):
        keys += [((x,), t) for x in sws] + [(tuple(sws[:2]), t), (tuple(sws), t),
                                            (tuple(sws[::-3]), t)]
    keys = list(dict.fromkeys(keys))
    together, alone = Router(g)._updown, Router(g)._updown
    together._build_structs(keys)
    for key in keys:
        alone._build_structs([key])
        a, b = together._structs[key], alone._structs[key]
        ref = _reference_struct(together.router, key[0])
        for f in _STRUCT_FIELDS:
            x, y, z = getattr(a, f), getattr(b, f), ref[f]
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype == z.dtype, (key, f)
                assert x.tobytes() == y.tobytes() == z.tobytes(), (key, f)
            else:
                assert x == y == z, (key, f)
    top = max(by_tier)
    assert all(not together._structs[((x,), top)].upper for x in by_tier[top])
    assert any(len(together._structs[k].upper) > 1 for k in keys)


# ------------------------------------------------------------------ combine, step_shape

def _reference_combine(t, beta, lat_all, lat_up, scaleout, protocol, cal):
    """:func:`combine` as it was before :func:`step_shape` (the reference)."""
    net = cal.in_network
    on, mem, innet = t["on"], t["member"] & t["on"], t["in_network"]
    fac = np.where(innet, net.bandwidth_factor, protocol.bandwidth_factor)
    # NCCL's LL send/recv all-to-all in one NVLink domain: LL's factor x its send warps
    # (min(C, (p - 1) c) channels x the send half of a channel's warps) over the LL ring's
    # (ring channels x LL warps), at most 1; c: C halved while c p > C
    if protocol.name == "LL" and cal.p2p_threads and cal.ll_ring_threads and cal.ring_channels:
        share = np.ones(np.shape(t["p2p_ranks"]))
        for (i, j), p in np.ndenumerate(t["p2p_ranks"]):
            if p > 1 and not scaleout[i, j]:
                c, total = cal.p2p_channels_per_peer, cal.p2p_channels_per_peer
                while c * p > total and c > 1:
                    c //= 2
                warps = cal.p2p_threads // 32
                share[i, j] = min(1.0, min(total, (p - 1) * c) * (warps - warps // 2)
                                  / (cal.ring_channels * (cal.ll_ring_threads // 32)))
        fac = fac * share
    ceiling = cal.in_network_ceiling
    floor = t["floor"] / ceiling if ceiling > 0 else 0.0
    with np.errstate(invalid="ignore"):
        bl = np.where(on, t["repeat"] * np.maximum(beta / fac, floor), 0.0)
    up = np.where(innet, net.step_latency_scaleup, protocol.step_latency_scaleup)
    slow = np.where(innet, np.where(scaleout, net.step_latency_scaleout,
                                    net.step_latency_scaleup),
                    np.where(scaleout, protocol.step_latency_scaleout,
                             protocol.step_latency_scaleup))
    # NCCL's tuner on a ring across nodes (ring_nodes >= 2 domains, at most 8 ranks a node:
    # p = repeat + 1): each NVLink step at least the network's post overhead, 1 us (3 us
    # under Simple) on hosts but AMD's (src/tuning/ring.cc), under NCCL's protocols
    ring = (t["ring_nodes"] > 1) & ((t["repeat"] + 1) <= 8 * t["ring_nodes"])
    if ring.any() and protocol.name in ("LL", "LL128", "Simple"):
        up = np.where(ring, np.maximum(up, 1.0e-6 * (3.0 if protocol.name == "Simple" else 1.0)),
                      up)
    lat = t["intra"] * (up + lat_up) + t["inter"] * (slow + lat_all)
    any_net = (on & innet).any(axis=1)
    a = np.where(any_net, net.base_latency, protocol.base_latency)         + np.where(mem, lat, 0.0).sum(axis=1)
    gamma = cal.reduction_rate
    red = (np.where(mem, t["repeat"] * t["reduce"], 0.0).sum(axis=1) / gamma) if gamma > 0         else 0.0
    chunk = np.where(innet, net.chunk, protocol.chunk)
    pipe = t["pipeline"]
    plain = mem & (pipe == 0)
    b = np.where(plain, bl, 0.0).sum(axis=1)
    fills = []  # (coefficient (G,), slice (G,))
    chain = plain & (t["stages"] > 1)
    if chain.any() and np.any(chunk[chain] > 0):
        for s in np.unique(chunk[chain]).tolist():
            if s > 0:
                sel = chain & (chunk == s)
                fills.append((np.where(sel, (t["stages"] - 1) * bl, 0.0).sum(axis=1),
                              np.full(len(a), s * cal.channels)))
    # NCCL's Simple send/recv in one NVLink domain: each of C = min(32, (p - 1) c) channels
    # (c: 32 halved while c p > 32) copies its first chunk twice, a step at a time
    if protocol.name == "Simple" and cal.p2p_nvlink_chunk > 0:
        for p in sorted({int(x) for x in t["p2p_ranks"][plain & ~scaleout] if x > 1}):
            c = cal.p2p_channels_per_peer
            while c * p > cal.p2p_channels_per_peer and c > 1:
                c //= 2
            sel = plain & ~scaleout & (t["p2p_ranks"] == p)
            run = min(cal.p2p_channels_per_peer, (p - 1) * c)
            fills.append((np.where(sel, bl, 0.0).sum(axis=1),
                          np.full(len(a), run * cal.p2p_nvlink_chunk * p / (p - 1))))
    for g in np.unique(pipe[on & (pipe > 0)]).tolist():
        in_g = on & (pipe == g)
        mem_g = in_g & mem
        sum_m = np.where(mem_g, bl, 0.0).sum(axis=1)
        bg = np.where(mem_g, bl, 0.0).max(axis=1)
        bounds = t["bound"]
        for k in np.unique(bounds[in_g & (bounds > 0)]).tolist():
            bg = np.maximum(bg, np.where(in_g & (bounds == k), bl, 0.0).sum(axis=1))
        b = b + bg
        heads = np.where(in_g, t["heads"], 0).max(axis=1)
        ch = np.where(mem_g, chunk, 0.0).max(axis=1)
        # NCCL's NVLS channels (by generation) where the group reduces in the switch inside
        # one scale-up domain (no member step crosses the scale-out network)
        one_domain = (mem_g & innet).any(axis=1) & ~(mem_g & scaleout).any(axis=1)
        nch = np.where(one_domain & (cal.in_network_channels > 0), cal.in_network_channels,
                       cal.channels)
        fills.append((np.maximum(sum_m - bg, 0.0), heads * ch * nch))
    # NCCL's tree channel cap, step by step: repeat x share / (channels x rate), summed; a
    # Tree channel's rate perChMaxTreeBws x factor, under LL128 at most
    # perChMaxTreeLL128Bws; an NVLSTree channel's perChMaxNVLSTreeBws (0: none)
    caps = cal.tree_channel_bandwidth
    nvls = cal.nvls_tree_channel_bandwidth
    ll128 = cal.tree_ll128_channel_bandwidth if protocol.name == "LL128" else ()
    least = np.zeros(len(a))
    for g in range(len(a)):
        for i in range(on.shape[1]):
            chans = t["tree_channels"][g, i]
            if not (mem[g, i] and chans > 0):
                continue
            k = min(max(int(t["tree_nodes"][g, i]), 1), 3) - 1
            if t["tree_table"][g, i] == 1:
                rate = nvls[k] if nvls else 0.0
            elif caps:
                rate = caps[k] * fac[g, i]
                if ll128:
                    rate = min(rate, ll128[k])
            else:
                rate = 0.0
            if rate > 0:
                least[g] += t["repeat"][g, i] * t["tree_share"][g, i] / (rate * chans)
    # NCCL's LL busbw cap of that ring across nodes (llMaxBws, hosts but AMD's): 39.0 GB/s
    # on 2 nodes, 20.4 on more; a pass of p - 1 steps moves (p - 1)/p of n through a GPU
    if protocol.name == "LL" and (ring & mem).any():
        ll = np.zeros(len(a))
        for g in range(len(a)):
            for i in range(on.shape[1]):
                if ring[g, i] and mem[g, i]:
                    rep = t["repeat"][g, i]
                    cap = 39.0e9 if t["ring_nodes"][g, i] == 2 else 20.4e9
                    ll[g] += rep / (rep + 1) / cap
        least = np.maximum(least, ll)
    # and of NCCL's tree all-reduce across nodes (tree_ranks GPUs on tree_nodes >= 2, at
    # most 8 a node): repeat x share / cap (algbw half the busbw)
    tree = (t["tree_ranks"] > 0) & (t["tree_nodes"] > 1) \
        & (t["tree_ranks"] <= 8 * t["tree_nodes"])
    if protocol.name == "LL" and (tree & mem).any():
        ll = np.zeros(len(a))
        for g in range(len(a)):
            for i in range(on.shape[1]):
                if tree[g, i] and mem[g, i]:
                    cap = 39.0e9 if t["tree_nodes"][g, i] == 2 else 20.4e9
                    ll[g] += t["repeat"][g, i] * t["tree_share"][g, i] / cap
        least = np.maximum(least, ll)
    b_link = b
    b = b + red
    sizes = sorted({float(x) for f, s in fills for x in np.unique(s) if x > 0})
    coef = [sum(np.where(s == x, f, 0.0) for f, s in fills) for x in sizes]
    lines = []
    for j in range(len(sizes) + 1):
        fill = sum((coef[k] * sizes[k] for k in range(j)), np.zeros_like(a))
        rest = sum((coef[k] for k in range(j, len(sizes))), np.zeros_like(a))
        bj = np.where(least > 0, np.maximum(b_link + rest, least) + red, b + rest)
        lines.append((a + fill, bj, fill))
    return lines


COMBINE_SPECS = ["fat-tree:k=8", "rail-optimized:domains=2,sharp=true", "nvl72",
                 "lite-groups:split=gateway", "torus:dims=4x4"]


def _calibrations():
    cal = default_calibration()
    yield cal
    yield replace(cal, reduction_rate=2e11, in_network_ceiling=3e11)


def _same_lines(x, y):
    assert len(x) == len(y)
    for u, v in zip(x, y, strict=True):
        for p, q in zip(u, v, strict=True):
            p, q = np.asarray(p), np.asarray(q)
            assert p.dtype == q.dtype and p.shape == q.shape and p.tobytes() == q.tobytes()


def _reference_step_table(steps, G):
    """:func:`step_table` as before: zeros, then one column per step by set_step."""
    from netmodel.collectives.cost import STEP_FIELDS
    from tests.netmodel.step_reference import set_step

    out = {k: np.zeros((G, len(steps))) for k in STEP_FIELDS}
    for k in ("on", "in_network", "member"):
        out[k] = np.zeros((G, len(steps)), dtype=bool)
    for i, s in enumerate(steps):
        set_step(out, slice(None), i, s)
    return out


@pytest.mark.parametrize("spec", COMBINE_SPECS)
def test_combine_equals_the_reference(spec):
    """Every algorithm of every op on two group sizes, under every protocol and two
    calibrations (one with a reduction rate and an in-network ceiling), one row and three
    rows of loads at once: the lines of :func:`combine` (with and without the steps' shape
    worked out beforehand) equal the reference's bit for bit, and so do the step tables."""
    from netmodel.collectives.algorithms import ALGORITHMS, generate
    from netmodel.collectives.cost import combine, step_shape, step_table
    from netmodel.collectives.model import FabricCostModel

    g = build(spec)
    rng = np.random.default_rng(5)
    seen = 0
    for cal in _calibrations():
        model = FabricCostModel(g, calibration=cal, validated=True)
        for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast"):
            for p in sorted({4, min(16, model.gpus)}):
                for name in ALGORITHMS:
                    try:
                        comp = model.compiled(op, name, model.group(p))
                    except Exception:  # not applicable here
                        continue
                    t, beta, lat_all, lat_up, so, shape = comp._arrays()
                    t3 = step_table(comp.steps, 3)
                    steps = generate(name, op, model.group(p), g)
                    for table, want in ((t, _reference_step_table(comp.steps, 1)),
                                        (t3, _reference_step_table(comp.steps, 3)),
                                        (step_table(steps, 2), _reference_step_table(steps, 2))):
                        assert list(table) == list(want)
                        for k, x in table.items():
                            assert x.dtype == want[k].dtype and x.tobytes() == want[k].tobytes()
                    beta3 = np.repeat(beta, 3, axis=0) * rng.uniform(0.5, 2.0, (3, 1))
                    rows = (np.repeat(x, 3, axis=0) for x in (lat_all, lat_up, so))
                    for proto in comp.protocols(model.calibration):
                        args = (beta, lat_all, lat_up, so, proto, model.calibration)
                        want = _reference_combine(t, *args)
                        _same_lines(combine(t, *args), want)
                        _same_lines(combine(t, *args, shape), want)
                        args3 = (beta3, *rows, proto, model.calibration)
                        rows = (np.repeat(x, 3, axis=0) for x in (lat_all, lat_up, so))
                        _same_lines(combine(t3, *args3, step_shape(t3)),
                                    _reference_combine(t3, *args3))
                        seen += 1
    assert seen >= 20


def _reference_loads(router, transfers):
    """:meth:`Router.loads` as before: one product per routed transfer."""
    pl = router.plan(transfers)
    parts_l, parts_w = [], []
    for i, r in pl.routes.items():
        parts_l.append(r.links)
        parts_w.append(r.weights * pl.frac[i])
    if len(pl.piece_of):
        coef = np.bincount(pl.piece_of, pl.frac[pl.pieces])
        used = np.flatnonzero(coef)
        _, lk, w = router.expand(used, coef[used])
        parts_l.append(lk)
        parts_w.append(w)
    parts_l.append(pl.hop_links)
    parts_w.append(pl.hop_weights * pl.frac[pl.hop_index])
    return np.concatenate(parts_l).astype(np.int64, copy=False), np.concatenate(parts_w)


@pytest.mark.parametrize("spec", ["torus:dims=4x4", "ring:n=8", "lite-groups:split=gateway",
                                  "rail-optimized:domains=2", "fat-tree:k=4"])
def test_loads_of_routed_transfers_equal_one_product_each(spec):
    """Transfers routed one by one (GPUs forward, or a switch is an end) with unequal
    fractions, many and one at a time: the same links and weights, bit for bit."""
    from netmodel.collectives.routing import Router

    g = build(spec)
    nodes = [n for n, d in g.nodes(data=True) if d.get("kind") in ("gpu", "switch")]
    rng = np.random.default_rng(2)
    r = Router(g)
    routed = 0
    for count in (1, 2, 7, 40, 200):
        ends = rng.choice(len(nodes), (count, 2))
        transfers = [(nodes[a], nodes[b], float(f)) for (a, b), f in
                     zip(ends.tolist(), rng.uniform(0.1, 1.0, count), strict=True)]
        links, weights, *_ = r.loads(transfers)
        want_l, want_w = _reference_loads(r, transfers)
        assert links.tobytes() == want_l.tobytes() and weights.tobytes() == want_w.tobytes()
        routed += len(r.plan(transfers).routes)
    assert routed > 20


@pytest.mark.parametrize("spec", ["torus:dims=4x4", "ring:n=8", "lite-groups:split=gateway",
                                  "rail-optimized:domains=2", "fat-tree:k=4"])
def test_routes_from_kept_paths_equal_the_search(spec):
    """The shortest paths kept per destination (neighbour rows built once per node) give
    the bidirectional search's links, shares, latency and hops exactly, in its order."""
    from netmodel.collectives.routing import Router

    g = build(spec)
    r = Router(g)
    nodes = [n for n, d in g.nodes(data=True) if d.get("kind") in ("gpu", "switch")][:24]
    pairs = [(a, b) for a in nodes for b in nodes if a != b]
    for a, b in pairs:
        assert r._from_dag(a, b) == r._search(a, b, gpu_transit=True)
    assert len(pairs) >= 56
