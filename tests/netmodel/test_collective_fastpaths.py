"""The fast paths (shared route pieces, index-array steps, pruned candidates, vectorized
concurrency) give the numbers of the plain ones, to 1e-12 relative, on small fabrics.

The reference here is the model as it was written before the speed work (issue 12): steps
built as tuples of ``(src, dst, fraction)`` by the textbook loops, every transfer routed on
its own by the general bidirectional search (the ground truth the templates reproduce), the
loads of a step summed link by link, and many groups at once costed with one
``(group, link)`` entry per link a group touches. Steps are then combined into lines as the
model does (:func:`netmodel.collectives.cost.combine`, checked on its own elsewhere).
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from compute.comm import OPERATIONS
from compute.errors import UserError
from netmodel.collectives.algorithms import ALGORITHMS, NotApplicable, generate
from netmodel.collectives.concurrent import concurrent_cost, concurrent_linear
from netmodel.collectives.concurrent_loads import JOINT_GROUPS
from netmodel.collectives.cost import (
    SEND_RECV,
    CompiledCollective,
    combine,
    step_table,
)
from netmodel.collectives.degraded import degrade
from netmodel.collectives.group_domains import domains
from netmodel.collectives.in_network import domain_planes
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.protocol_lines import channel_lines, step_protocols
from netmodel.collectives.route_joint import joint_flows
from netmodel.collectives.routing import Router
from netmodel.collectives.step_cost import StepCost, link_path_rates
from netmodel.collectives.steps import Pairs, Step
from tests.netmodel.step_reference import set_step
from topologies import build

# ------------------------------------------------------------------ reference: steps


def _ring(g, f):
    return tuple((g[i], g[(i + 1) % len(g)], f) for i in range(len(g)))


def _rev(t):
    return tuple((d, s, f) for s, d, f in t)


def _heap(m, f):
    return [(m[i], m[(i - 1) // 2], f) for i in range(1, len(m))]


def _dtree(m, f):
    """Child -> parent edges of NCCL's two trees over ``m`` (src/graph/trees.cc), ``f``
    each: the binary tree (a rank's parent: its lowest set bit cleared and the next one
    set, or past the end, only cleared) and its mirror (even count) or its shift by one."""
    n = len(m)

    def parent(r):
        if r == 0:
            return -1
        bit = r & -r
        return (r ^ bit) | (bit << 1) if (r ^ bit) | (bit << 1) < n else r ^ bit

    edges = [(m[r], m[parent(r)], f) for r in range(1, n)]
    for r in range(n):
        if n % 2:
            u = parent((r - 1) % n)
            u = -1 if u < 0 else (u + 1) % n
        else:
            u = parent(n - 1 - r)
            u = -1 if u < 0 else n - 1 - u
        if u >= 0:
            edges.append((m[r], m[u], f))
    return edges


def _incoming(t):
    acc: dict = {}
    for _, d, f in t:
        acc[d] = acc.get(d, 0.0) + f
    return max(acc.values(), default=0.0)


def _fold(g):
    q = 1 << (len(g).bit_length() - 1)
    return list(g[:q]), [(g[q + i], g[i]) for i in range(len(g) - q)]


def _xchg(core, d, f):
    return tuple((core[i], core[i ^ d], f) for i in range(len(core)))


class _SendRecv(tuple):
    """Transfers NCCL sends as send/recv (its all-to-all, send-recv): PXN routes them."""

    p2p = True


def reference_steps(algorithm, op, g, graph):
    """The steps as the textbook loops write them (tuples), or NotApplicable."""
    p = len(g)
    g = tuple(g)
    if algorithm in ("ring", "bidirectional-ring") and op in ("all-reduce", "reduce-scatter",
                                                               "all-gather"):
        lat = None
        if algorithm == "ring":
            doms = domains(graph, g)
            D, m = len(doms), len(doms[0])
            if D >= 2 and m >= 2 and all(len(d) == m for d in doms):
                # one ring per rail: the domain's cycle at 1/p, the rail hop at 1/(m p)
                t = tuple((d[i], d[(i + 1) % m], 1 / p) for d in doms for i in range(m)) + \
                    tuple((doms[k][i], doms[(k + 1) % D][i], 1 / (m * p))
                          for k in range(D) for i in range(m))
                inter = D - 1
            elif D >= 2 and min(map(len, doms)) >= 2 and p >= 3:
                # unequal domains: k = the smallest domain's size rails at 1/(k p) each
                k = min(map(len, doms))
                t = tuple((d[i], d[(i + 1) % len(d)], 1 / p) for d in doms
                          for i in range(len(d))) + \
                    tuple((doms[j][i], doms[(j + 1) % D][i], 1 / (k * p))
                          for j in range(D) for i in range(k))
                inter = D - 1
            else:
                t = _ring(g, 1 / p)
                dom = {x: k for k, d in enumerate(doms) for x in d}
                cross = sum(dom[g[i]] != dom[g[(i + 1) % p]] for i in range(p))
                inter = max(cross - 1, 0)
            tag, lat = "", (p - 1 - inter, inter)
        else:
            fwd = _ring(g, 1 / (2 * p))
            t = _ring(g, 1 / p) if p == 2 else fwd + _rev(fwd)
            tag = " (both ways)"
        # NCCL's ring across D >= 2 domains of >= 2 GPUs each (its nodes): the tuner's rules
        sizes = [len(d) for d in domains(graph, g)]
        nodes = len(sizes) if algorithm == "ring" and len(sizes) >= 2 and min(sizes) >= 2 \
            else 0
        rs = Step("reduce-scatter" + tag, t, p - 1, reduce=1 / p, latencies=lat,
                  ring_nodes=nodes)
        ag = Step("all-gather" + tag, t, p - 1, latencies=lat, ring_nodes=nodes)
        return {"all-reduce": [rs, ag], "reduce-scatter": [rs], "all-gather": [ag]}[op]
    if algorithm == "ring":
        chain = tuple((g[i], g[i + 1], 1.0) for i in range(p - 1))
        lat = None
        doms = domains(graph, g)
        D, m = len(doms), min(map(len, doms))
        if D >= 2 and m >= 2 and p >= 3:
            # a chain per rail at 1/m (m: the smallest domain's size): ring c (each domain
            # from its GPU c round to the one before) walked from the root; a hop out of a
            # domain goes to GPU c, then out of its NIC
            chain = []
            for c in range(m):
                ring = [d[(c + i) % len(d)] for d in doms for i in range(len(d))]
                start = ring.index(g[0])
                walk = [ring[(start + i) % p] for i in range(p)]
                for a, b in zip(walk[:-1], walk[1:], strict=True):
                    here = next(d for d in doms if a in d)
                    if b in here:
                        chain.append((a, b, 1 / m))
                    else:
                        chain += [(a, here[c], 1 / m), (here[c], b, 1 / m)]
            chain = tuple(chain)
            lat = (p - 1 - (D - 1), D - 1)
        if op == "broadcast":
            return [Step("pipelined chain", chain, stages=p - 1, latencies=lat)]
        return [Step("pipelined chain", _rev(chain), stages=p - 1, reduce=_incoming(_rev(chain)),
                     latencies=lat)]
    if algorithm == "tree":
        if op == "all-reduce":
            doms = domains(graph, g)
            D, m = len(doms), len(doms[0])
            if D >= 2 and m >= 2 and all(len(d) == m for d in doms):
                # a tree per rail: chains towards GPU c, a double binary tree of the GPUs c
                up = [(d[i], d[(i + 1) % m], (m - 1) / m) for d in doms for i in range(m)]
                for c in range(m):
                    lead = [d[c] for d in doms]
                    up += _dtree(lead, 0.5 / m)
                chain, depth, hops = m - 1, D.bit_length() - 1, (D - 1).bit_length()
                cap = {"tree_channels": m, "tree_nodes": D}   # a channel per rail
            else:
                up = [(d[i + 1], d[i], 1.0) for d in doms for i in range(len(d) - 1)]
                lead = [d[0] for d in doms]
                if len(lead) > 1:
                    up += _dtree(lead, 0.5)
                chain = max(len(d) for d in doms) - 1
                depth, hops = len(lead).bit_length() - 1, (len(lead) - 1).bit_length()
                cap = {}
            if D >= 2 and min(len(d) for d in doms) >= 2:   # NCCL's nodes: its LL cap
                cap |= {"tree_nodes": D, "tree_ranks": p}
            up = tuple(up)
            # reduce and broadcast at once: one step carrying both directions; NCCL's
            # latency count (log2i of the nodes), the fill over its trees' hops (their root
            # has one child: ceil(log2) of the nodes)
            lat = (2 * chain, 2 * depth) if depth else (0, 2 * chain)
            return [Step("reduce and broadcast (pipelined, at once)", up + _rev(up),
                         stages=chain + hops, reduce=_incoming(up), latencies=lat,
                         tree_share=2.0, **cap)]
        up = tuple(_heap(list(g), 1.0))
        if op == "broadcast":
            return [Step("broadcast (pipelined)", _rev(up), stages=p.bit_length() - 1)]
        return [Step("reduce (pipelined)", up, stages=p.bit_length() - 1, reduce=_incoming(up))]
    if algorithm in ("halving-doubling", "recursive-doubling"):
        if op == "all-reduce":
            core, extra = _fold(g)
            q = len(core)
            steps = [Step("fold in", tuple((e, c, 1.0) for e, c in extra), reduce=1.0)] \
                if extra else []
            if algorithm == "halving-doubling":
                d, f = q // 2, 0.5
                while d >= 1:
                    steps.append(Step(f"halving d={d}", _xchg(core, d, f), reduce=f))
                    d, f = d // 2, f / 2
                d, f = 1, 1 / q
                while d < q:
                    steps.append(Step(f"doubling d={d}", _xchg(core, d, f)))
                    d, f = d * 2, f * 2
            else:
                d = 1
                while d < q:
                    steps.append(Step(f"exchange d={d}", _xchg(core, d, 1.0), reduce=1.0))
                    d *= 2
            if extra:
                steps.append(Step("fold out", tuple((c, e, 1.0) for e, c in extra)))
            return steps
        if p & (p - 1):
            raise NotApplicable("power of two")
        core = list(g)
        if op == "reduce-scatter":
            out, d, f = [], p // 2, 0.5
            while d >= 1:
                out.append(Step(f"halving d={d}", _xchg(core, d, f), reduce=f))
                d, f = d // 2, f / 2
            return out
        out, d, f = [], 1, 1 / p
        while d < p:
            out.append(Step(f"doubling d={d}", _xchg(core, d, f)))
            d, f = d * 2, f * 2
        return out
    if algorithm == "direct":
        def every(f):
            return tuple((a, b, f) for a in g for b in g if a != b)
        return {"all-reduce": [Step("one-shot exchange", every(1.0), reduce=p - 1.0)],
                "reduce-scatter": [Step("exchange", every(1 / p), reduce=(p - 1) / p)],
                "all-gather": [Step("exchange", every(1 / p))],
                "all-to-all": [Step("exchange", _SendRecv(every(1 / p)), p2p_ranks=p)],
                "broadcast": [Step("root sends", tuple((g[0], b, 1.0) for b in g[1:]))],
                "reduce": [Step("all send to root", tuple((b, g[0], 1.0) for b in g[1:]),
                                reduce=p - 1.0)],
                "send-recv": [Step("send-recv", _SendRecv(_ring(g, 1.0)), p2p_ranks=p,
                                   p2p_peers=1)]}[op]
    if algorithm == "pairwise":
        return [Step(f"shift {k}", _SendRecv((g[i], g[(i + k) % p], 1 / p) for i in range(p)))
                for k in range(1, p)]
    if algorithm in ("hierarchical", "in-network-tree"):
        doms = domains(graph, g)
        n, m = len(doms), len(doms[0])
        if n < 2 or m < 2 or any(len(d) != m for d in doms):
            raise NotApplicable("domains")
        if algorithm == "in-network-tree" or domain_planes(graph, doms) is not None:
            return generate(algorithm, op, g, graph)  # in-switch phases: tuples
        inner = tuple(t for d in doms for t in _ring(d, 1 / m))
        across = tuple(t for j in range(m) for t in _ring([d[j] for d in doms], 1 / (m * n)))
        rs = Step("reduce-scatter in domain", inner, m - 1, reduce=1 / m, latencies=(m - 1, 0),
                  pipeline=1, heads=m)
        out_rs = Step("reduce-scatter across", across, n - 1, reduce=1 / (m * n),
                      latencies=(0, n - 1), pipeline=1, heads=m)
        out_ag = Step("all-gather across", across, n - 1, latencies=(0, n - 1), pipeline=1,
                      heads=m)
        ag = Step("all-gather in domain", inner, m - 1, latencies=(m - 1, 0), pipeline=1,
                  heads=m)
        both = tuple((a, b, f * (m - 1)) for a, b, f in inner) * 2
        outs = tuple((a, b, f * (n - 1)) for a, b, f in across) * 2
        return [rs, out_rs, out_ag, ag,
                Step("in-domain phases together", both, latencies=(0, 0), pipeline=1, bound=1,
                     member=False, heads=m),
                Step("across together", outs, latencies=(0, 0), pipeline=1, bound=2,
                     member=False, heads=m),
                Step("every phase together", both[:len(inner)] + outs + both[len(inner):],
                     latencies=(0, 0), pipeline=1, bound=3, member=False, heads=m)]
    return generate(algorithm, op, g, graph)  # in-network: unchanged (tuples)


# ------------------------------------------------------------------ reference: routes, costs


def reference_pxn(router, s, d, members=()):
    """The GPU whose NIC NCCL's PXN sends ``s -> d`` through, found by hand from the labels
    (None: its own): a GPU of ``s``'s server at ``d``'s position in its server, when the
    two servers differ, ``s`` and ``d`` share no switch, and that GPU is one of
    ``members`` (a rank of the same communicator), shares a tier-0 switch with ``s`` and
    has a port to a switch of tier >= 1."""
    g, data = router.graph, router.graph._node
    if not (router._pxn_on and router.is_gpu(s) and router.is_gpu(d)):
        return None
    ss, sd = data[s].get("server"), data[d].get("server")
    if ss is None or sd is None or ss == sd:
        return None

    def switches(x, tiers):
        return {v for v in g._adj[x] if data[v].get("kind") == "switch"
                and data[v].get("tier", 0) in tiers}

    every = range(64)
    if switches(s, every) & switches(d, every):
        return None
    mine = [x for x in router.gpu_list if data[x].get("server") == ss]
    k = [x for x in router.gpu_list if data[x].get("server") == sd].index(d)
    if k >= len(mine) or mine[k] == s:
        return None
    via = mine[k]
    if via not in members or not (switches(s, (0,)) & switches(via, (0,))) \
            or not switches(via, range(1, 64)):
        return None
    return via


def reference_route(router, s, d, members=()):
    """One transfer routed on its own by the general search (GPU pairs: switched paths
    first, GPUs forwarding only when there is none; two GPUs with a tier-0 switch in common
    through none of the scale-out switches); one NCCL's PXN sends through another
    GPU's NIC (:func:`reference_pxn`, ``members`` the GPUs of its communicator) as its
    two legs, to that GPU and on from it."""
    via = reference_pxn(router, s, d, members)
    if via is not None:
        first, then = reference_route(router, s, via), reference_route(router, via, d)
        return (np.concatenate([first[0], then[0]]), np.concatenate([first[1], then[1]]),
                first[2] + then[2], first[3] + then[3], first[4] or then[4])
    if s == d:
        return np.zeros(0, dtype=np.int64), np.zeros(0), 0.0, 0, False
    if d in router.graph._adj[s]:
        lid = router.link_id(s, d)
        return np.array([lid]), np.ones(1), float(router.latency[lid]), 1, \
            bool(router.scaleout[lid])
    gpus = router.is_gpu(s) and router.is_gpu(d)
    # two GPUs of one NVLink domain (a tier-0 switch in common) talk over NVLink alone, as
    # NCCL's P2P does, never through a scale-out switch both are wired to as well
    data = router.graph._node
    tier0 = [{v for v in router.graph._adj[x] if data[v].get("kind") == "switch"
              and data[v].get("tier", 0) < 1} for x in (s, d)]
    out = frozenset(v for v in router.graph._adj[s] if data[v].get("kind") == "switch"
                    and data[v].get("tier", 0) >= 1) if gpus and tier0[0] & tier0[1] \
        else frozenset()
    found = router._search(s, d, gpu_transit=False, avoid=out) if gpus else None
    if found is None:
        found = router._search(s, d, gpu_transit=True)
    if found is None:
        return None
    links, w, lat, hops = found
    lk = np.array(links, dtype=np.int64)
    return lk, np.array(w), lat, hops, bool(router.scaleout[lk].any())


def reference_loads(router, transfers, cache):
    links, coef, lat, so, up = [], [], 0.0, False, -1.0
    # NCCL's send/recv: PXN relays through the step's group's GPUs
    members = {x for s, d, _ in transfers for x in (s, d)} \
        if getattr(transfers, "p2p", False) else ()
    for s, d, f in transfers:
        via = reference_pxn(router, s, d, members)
        r = cache.get((s, d, via))
        if r is None:
            r = cache[(s, d, via)] = reference_route(router, s, d, members)
        links.append(r[0])
        coef.append(r[1] * f)
        lat, so = max(lat, r[2]), so or r[4]
        if not r[4]:
            up = max(up, r[2])
    return np.concatenate(links), np.concatenate(coef), lat, so, (lat if up < 0 else up)


def reference_joint(router, transfers, cache):
    """The loads ``(links, load)`` of a step whose transfers the router spreads together,
    or None where they keep their own routes; kept in ``cache`` (one fabric's) by the
    transfers, as several steps and operations repeat the same transfers (a ring's
    reduce-scatter and all-gather) and the split depends on the fabric and them alone."""
    if router.pxn_applies(transfers):
        return None
    key = ("joint", tuple(transfers))
    if key not in cache:
        t = list(transfers)
        cache[key] = router.link_loads(t)[:2] if joint_flows(router, t) is not None else None
    return cache[key]


def reference_candidates(model, op, group, cache):
    """``[(algorithm, protocol, a, b)]`` with the steps' loads computed the plain way (the
    lines then as the model combines steps)."""
    router, cal = model.router, model.calibration
    eff = np.where(router.scaleout, cal.scaleout_efficiency, cal.scaleup_efficiency)
    rate = router.bandwidth * eff
    out = []
    for name in model.algorithm_names(op, "auto"):
        try:
            steps = reference_steps(name, op, group, model.graph)
        except NotApplicable:
            continue
        costs = []
        for s in steps:
            links, coef, lat, so, up = reference_loads(router, s.transfers, cache)
            # a step whose transfers the router spreads together (the split over their
            # shortest paths with the least busy link, route_joint.py, tested on its own
            # in test_joint_routing_h478): its loads as the router spreads them
            joint = reference_joint(router, s.transfers, cache)
            if joint is not None:
                links, coef = joint
            load = np.bincount(links, coef, minlength=router.n_links)
            beta = float(np.max(load / rate)) if len(links) else 0.0
            if s.route_latency is not None:
                lat = up = s.route_latency
            # the step's structure copied as the model copies it (StepCost.of: a mirror, not
            # under test here); the loads and latencies are this reference's own
            # its slowest path as NCCL sees it (send/recv's channels: structure, the router's)
            path = float(link_path_rates(router)[links].min()) if len(links) else 0.0
            costs.append(StepCost.of(s, transfers=len(s.transfers), latency=lat, scaleout=so,
                                     beta=beta, bottleneck=(), bottleneck_bandwidth=0.0,
                                     latency_up=up, path_bandwidth=path))
        comp = CompiledCollective(op, name, group, tuple(costs))
        for proto in comp.protocols(cal):
            out += [(name, proto.name, a, b) for a, b in comp.lines(proto, cal)]
    return out


def reference_concurrent(model, groups, op, cache):
    """``[(algorithm, protocol, a together, b together)]`` with one ``(group, link)`` entry
    per link each group touches."""
    router, cal = model.router, model.calibration
    eff = np.where(router.scaleout, cal.scaleout_efficiency, cal.scaleup_efficiency)
    rate = router.bandwidth * eff
    out = []
    for name in model.algorithm_names(op, "auto"):
        try:
            per = [[(*reference_loads(router, s.transfers, cache), s)
                    for s in reference_steps(name, op, g, model.graph)] for g in groups]
        except NotApplicable:
            continue
        # on a fabric without switches each group's step is spread together as it is alone
        # (concurrent_loads._joint_groups, at most JOINT_GROUPS groups): its lone loads,
        # where their sum leaves no group's busiest link busier than the own routes'
        lone = [list(p) for p in per]
        if len(groups) <= JOINT_GROUPS and "switch" not in router.kind.values():
            for p in lone:
                for k, (*_, s) in enumerate(p):
                    joint = reference_joint(router, s.transfers, cache)
                    if joint is not None:
                        p[k] = (*joint, *p[k][2:])
        G, S = len(groups), max(len(p) for p in per)
        beta, lat, up = np.zeros((G, S)), np.zeros((G, S)), np.zeros((G, S))
        so = np.zeros((G, S), dtype=bool)
        table = {k: np.zeros((G, S), dtype=v.dtype) for k, v in step_table([], 1).items()}
        for i in range(S):
            mem = [g for g in range(G) if i < len(per[g])]
            cols = []
            for loads in (per, lone):
                lk = np.concatenate([loads[g][i][0] for g in mem])
                cf = np.concatenate([loads[g][i][1] for g in mem])
                gid = np.repeat(mem, [len(loads[g][i][0]) for g in mem])
                total = np.bincount(lk, cf, minlength=router.n_links)
                col = np.zeros(G)
                np.maximum.at(col, gid, total[lk] / rate[lk])
                cols.append(col)
            beta[:, i] = cols[1] if (cols[1] <= cols[0] * (1 + 1e-12)).all() else cols[0]
            for g in mem:
                _, _, la, s_o, u, st = per[g][i]
                if st.route_latency is not None:
                    la = u = st.route_latency
                lat[g, i], up[g, i], so[g, i] = la, u, s_o
                set_step(table, g, i, st)
        on, innet = table["on"], table["in_network"]
        protos = step_protocols(bool((on & innet).any()),
                                bool((on & table["member"] & ~innet).any()), cal,
                                (op, name) in SEND_RECV)
        # each group's slowest path as NCCL sees it (0 where its steps cross the network)
        paths = link_path_rates(router)
        path = np.array([0.0 if so[g].any() else min(
            (float(paths[x[0]].min()) for x in per[g] if len(x[0])), default=0.0)
            for g in range(G)])
        for proto in protos:   # Simple send/recv: a line per share of its rate by channels
            for share, _, _ in channel_lines(op, name, proto.name, [len(g) for g in groups],
                                             so.any(axis=1), cal, path) or [(None, None, None)]:
                out += [(name, proto.name, a, b) for a, b, _ in
                        combine(table, beta, lat, up, so, proto, cal, share=share, path=path)]
    return out


# ------------------------------------------------------------------ fabrics

SPECS = ["single-switch:n=8", "fat-tree:k=4", "fat-tree:k=8,oversubscription=2",
         "leaf-spine:leaves=4,radix=8,oversubscription=2", "rail-optimized:domains=4",
         "rail-optimized:domains=2,sharp=true", "nvl72:racks=2", "ring:n=8", "torus:dims=4x4",
         "full-mesh:n=6", "flat:n=16,planes=4,radix=16",
         "lite-groups:base=[fat-tree:k=4],lites=2"]


def _fabrics():
    for spec in SPECS:
        yield spec, build(spec)
    g = build("fat-tree:k=8")
    yield "fat-tree:k=8 degraded", degrade(g, links=[("leaf0", "spine0")],
                                           nodes=["spine5", "core3"])


FABRICS = list(_fabrics())
# the reference's routes and joint splits of each fabric (deterministic functions of the
# fabric and the transfers), shared by the tests that route on it
_REFERENCE = {name: {} for name, _ in FABRICS}


def _close(x, y):
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return np.all(np.abs(x - y) <= 1e-12 * np.maximum(np.abs(x), np.abs(y)))


@pytest.mark.parametrize("name, graph", FABRICS, ids=[f[0] for f in FABRICS])
def test_candidates_equal_the_plain_path(name, graph):
    G = graph.graph["gpus"]
    cache = _REFERENCE[name]
    for placement in ("contiguous", "random"):
        model = FabricCostModel(graph, placement=placement, seed=5)
        for p in sorted({2, 3, 6, 8, min(16, G), min(G, 24)}):
            if p > G:
                continue
            group = model.group(p)
            for op in OPERATIONS:
                try:
                    new = [(c[0], c[1], c[2], c[3]) for c in model.candidates(op, group)]
                except UserError:
                    new = []
                ref = reference_candidates(model, op, group, cache)
                assert [c[:2] for c in new] == [c[:2] for c in ref], (name, p, op)
                for x, y in zip(new, ref, strict=True):
                    assert _close(x[2:], y[2:]), (name, placement, p, op, x, y)


@pytest.mark.parametrize("name, graph", FABRICS, ids=[f[0] for f in FABRICS])
def test_steps_equal_the_textbook_loops(name, graph):
    G = graph.graph["gpus"]
    for p in sorted({2, 3, 5, 8, min(12, G), G}):
        if p > G:
            continue
        group = tuple(Router(graph).gpu_list[:p])
        for algorithm, table in ALGORITHMS.items():
            if algorithm == "in-network":
                continue
            for op in table:
                try:
                    ref = reference_steps(algorithm, op, group, graph)
                except NotApplicable:
                    with pytest.raises(NotApplicable):
                        generate(algorithm, op, group, graph)
                    continue
                new = generate(algorithm, op, group, graph)
                # every Step field (transfers compared below, to a tolerance): a field
                # added to Step is compared without being listed here
                fields = [f.name for f in dataclasses.fields(Step) if f.name != "transfers"]
                assert [tuple(getattr(s, f) for f in fields) for s in new] == \
                    [tuple(getattr(s, f) for f in fields) for s in ref], (algorithm, op)
                for x, y in zip(new, ref, strict=True):
                    assert len(x.transfers) == len(y.transfers)
                    assert [t[:2] for t in x.transfers] == [t[:2] for t in y.transfers]
                    # each fraction as pytest.approx(e, rel=1e-12) has it (its absolute
                    # 1e-12 floor), all at once
                    f = np.array([t[2] for t in x.transfers], dtype=float)
                    e = np.array([t[2] for t in y.transfers], dtype=float)
                    assert np.all(np.abs(f - e) <= np.maximum(1e-12 * np.abs(e), 1e-12)), \
                        (algorithm, op, f, e)


@pytest.mark.parametrize("name, graph", FABRICS, ids=[f[0] for f in FABRICS])
def test_routes_equal_the_general_search(name, graph):
    r = Router(graph)
    gpus = r.gpu_list
    pick = gpus[:10] + gpus[-6:] if len(gpus) > 16 else gpus
    for a, b in itertools.product(pick, repeat=2):
        route, ref = r.route(a, b), reference_route(r, a, b)
        if ref is None:
            assert route is None
            continue
        x = np.bincount(route.links, route.weights, minlength=r.n_links)
        y = np.bincount(ref[0], ref[1], minlength=r.n_links)
        assert _close(x, y) and route.hops == ref[3] and route.scaleout == ref[4]
        assert route.latency == pytest.approx(ref[2], rel=1e-12, abs=1e-18)


@pytest.mark.parametrize("name, graph", FABRICS, ids=[f[0] for f in FABRICS])
def test_kept_paths_towards_a_destination_equal_the_pair_search(name, graph):
    """Routes read from the shortest paths kept per destination (Router._from_dag) are
    the bidirectional search's: the same links and shares, hops and latency, for every
    pair of GPUs and switches (GPUs forwarding), connected or not."""
    r = Router(graph)
    nodes = [n for n in graph if r.kind[n] in ("gpu", "switch")]
    pick = nodes[:12] + nodes[-8:] if len(nodes) > 20 else nodes
    for a, b in itertools.permutations(pick, 2):
        want, got = r._search(a, b, gpu_transit=True), r._from_dag(a, b)
        if want is None:
            assert got is None
            continue
        x = np.bincount(want[0], want[1], minlength=r.n_links)
        y = np.bincount(got[0], got[1], minlength=r.n_links)
        assert _close(x, y) and sorted(want[0]) == sorted(got[0])
        assert got[2] == want[2] and got[3] == want[3]


@pytest.mark.parametrize("name, graph", FABRICS, ids=[f[0] for f in FABRICS])
def test_concurrent_equals_the_plain_path(name, graph):
    G = graph.graph["gpus"]
    cache = _REFERENCE[name]
    for placement, p in (("random", 4), ("contiguous", 2), ("spread", min(8, G // 2))):
        model = FabricCostModel(graph, placement=placement, seed=1)
        if p < 2:
            continue
        from netmodel.collectives.placement import partition

        groups = partition(graph, p, placement, seed=1)
        for op in ("all-reduce", "all-to-all", "all-gather", "broadcast"):
            try:
                choices, a, b = concurrent_linear(model, groups, op)
            except UserError:
                continue
            ref = reference_concurrent(model, groups, op, cache)
            assert [r[:2] for r in ref] == list(choices), (name, op)
            for j, (c, r) in enumerate(zip(choices, ref, strict=True)):
                assert _close(a[j], r[2]) and _close(b[j], r[3]), (name, placement, op, c)


def test_the_alone_time_of_overlapping_pieces_is_summed_exactly():
    # a leaf-spine whose leaves have uplinks of different speeds: leaves climb into
    # different shares of the spines, pieces over the same links that must be added up
    import networkx as nx

    g = nx.Graph(name="uneven", spec="", gpus=8)
    for s in ("spine0", "spine1"):
        g.add_node(s, kind="switch", tier=2, radix=8, latency=0.0, in_network_reduction=False)
    for i in range(4):
        g.add_node(f"leaf{i}", kind="switch", tier=1, radix=8, latency=0.0,
                   in_network_reduction=False)
        for j, s in enumerate(("spine0", "spine1")):
            bw = 1e9 * (1 + (i + j) % 3)
            g.add_edge(f"leaf{i}", s, bandwidth=bw, latency=0.0, medium="copper", lanes=1)
    for n in range(8):
        g.add_node(f"gpu{n}", kind="gpu", gpu="H100-SXM")
        g.add_edge(f"gpu{n}", f"leaf{n // 2}", bandwidth=1e9, latency=0.0, medium="copper",
                   lanes=1)
    model = FabricCostModel(g, algorithm="direct")
    groups = [("gpu0", "gpu2", "gpu4", "gpu6"), ("gpu1", "gpu3", "gpu5", "gpu7")]
    r = concurrent_cost(model, groups, "all-to-all", 1e9)
    for g_i, grp in enumerate(groups):
        alone = model.cost("all-to-all", 1e9, grp, "direct").time
        assert r.alone[g_i, 0] == pytest.approx(alone, rel=1e-12)
    ref = reference_concurrent(model, groups, "all-to-all", {})
    choices, a, b = concurrent_linear(model, groups, "all-to-all", "direct")
    assert _close(b[0], next(r[3] for r in ref if r[:2] == choices[0]))


# ------------------------------------------------------------------ pruning, limits, Pairs


def test_pruned_one_shot_gives_the_same_choice_and_time():
    # 512 GPUs: one-shot routes 261,632 transfers; above a few KiB a lower bound rules it
    # out before it is built, and the fastest choice and its time do not change
    g = build("fat-tree:k=16")
    sizes = 2.0 ** np.arange(0, 34, 3)
    pruned = FabricCostModel(g, validated=True)
    full = FabricCostModel(g, validated=True)
    group = full.group(512)
    cands = full.candidates("all-reduce", group)
    t = np.array([[a + b * n for n in sizes] for _, _, a, b, _ in cands])
    best = t.argmin(axis=0)
    sw = pruned.sweep("all-reduce", sizes, 512)
    assert np.array_equal(sw.time, t[best, np.arange(len(sizes))])
    assert sw.algorithm == tuple(cands[i][0] for i in best)
    big = FabricCostModel(g, validated=True)
    big.sweep("all-reduce", [2.0 ** 26], 512)
    assert ("all-reduce", "direct", group) not in big._compiled  # never built
    assert "direct" in sw.algorithm[:1]  # 1 byte: one-shot is the fastest, so it was built


def test_too_many_transfers_is_one_clear_error():
    g = build("fat-tree:k=8")
    m = FabricCostModel(g, max_transfers=1000)
    with pytest.raises(UserError, match=r"direct all-to-all on 64 GPUs routes 4,032 point-to-"
                                        r"point transfers, more than the limit of 1,000"):
        m.collective_time("all-to-all", 1.0, 64)
    assert "direct" not in m.curves("all-reduce", [1e6], 64)  # curves leave it out
    assert float(m.collective_time("all-reduce", 2.0 ** 30, 64)) > 0  # pruned: no error
    with pytest.raises(UserError, match="max_transfers must be"):
        FabricCostModel(g, max_transfers=0)


def test_pairs_behave_as_their_tuples():
    t = Pairs(("a", "b", "c"), [0, 2], [1, 0], [0.5, 0.25])
    assert tuple(t) == (("a", "b", 0.5), ("c", "a", 0.25)) and t[-1] == ("c", "a", 0.25)
    assert len(t) == 2 and t[:1] == (("a", "b", 0.5),) and t.incoming() == 0.5
    same = Pairs(("a", "b", "c"), np.array([0, 2]), np.array([1, 0]), np.array([0.5, 0.25]))
    assert t == same and hash(t) == hash(same) and t != t.reversed()
    assert Pairs(("a", "b"), [0], [1], 0.5) != Pairs(("a", "b"), [0], [1], [0.5])
    assert t != tuple(t)  # a different representation: not a cache hit, never a wrong one
    with pytest.raises(ValueError):
        Pairs(("a",), [0, 0], [0], 1.0)
