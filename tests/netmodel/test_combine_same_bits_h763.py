"""combine (the lines of a collective's steps), made cheaper, gives HEAD's lines to the
bit: the same arrays, shapes, dtypes and bytes, on the steps of every algorithm of a few
fabrics (chains, pipelines with bounds, send/recv, trees, in-network steps) under each of
their protocols, with random loads, latencies, rows switched off, shares and path rates.
The reference is combine as it was before (copied below, docstrings cut)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from compute.comm import OPERATIONS
from compute.errors import UserError
from netmodel.collectives.algorithms import ALGORITHMS, NotApplicable
from netmodel.collectives.calibration import Calibration, Protocol
from netmodel.collectives.cost import combine, step_shape, step_table
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.pipeline_fill import (
    group_channels,
    p2p_fills,
    p2p_ll_share,
    ring_ll_least,
    ring_net_overhead,
    tree_least,
    tree_ll_least,
)
from netmodel.collectives.routing import NoPath
from netmodel.collectives.steps import unique
from topologies import build


def _old_combine(t: dict[str, np.ndarray], beta: np.ndarray, lat_all: np.ndarray,
            lat_up: np.ndarray, scaleout: np.ndarray, protocol: Protocol,
            cal: Calibration, shape: tuple | None = None, *, split: bool = False,
            share: np.ndarray | None = None, path: Any = None
            ) -> list[tuple[np.ndarray, ...]]:
    """HEAD's, as it was."""
    net = cal.in_network
    if shape is None:
        shape = step_shape(t)
    (on, mem, innet, any_net, plain, chain, red_sum, groups, ringnet, treenet, some_net,
     p2p, tree) = shape
    if some_net:
        fac = np.where(innet, net.bandwidth_factor, protocol.bandwidth_factor)
        up = np.where(innet, net.step_latency_scaleup, protocol.step_latency_scaleup)
        slow = np.where(innet, np.where(scaleout, net.step_latency_scaleout,
                                        net.step_latency_scaleup),
                        np.where(scaleout, protocol.step_latency_scaleout,
                                 protocol.step_latency_scaleup))
        base = np.where(any_net, net.base_latency, protocol.base_latency)
    else:  # no step reduced in the network: the protocol's constants as scalars (same values)
        fac, up = protocol.bandwidth_factor, protocol.step_latency_scaleup
        slow = np.where(scaleout, protocol.step_latency_scaleout, protocol.step_latency_scaleup)
        base = protocol.base_latency
    if share is not None:
        fac = np.where(innet, fac, fac * np.asarray(share, dtype=float)[:, None])
    if ringnet is not None:   # NCCL's ring across nodes: each NVLink step at least the post
        up = np.where(ringnet, np.maximum(up, ring_net_overhead(protocol)), up)
    if protocol.name == "LL" and p2p:   # send/recv's LL inside one NVLink domain: its send warps
        ranks = np.where(np.asarray(scaleout, dtype=bool), 0.0, t["p2p_ranks"])
        if np.any(ranks > 1):
            rates = 0.0 if path is None else np.asarray(path, dtype=float).reshape(-1, 1)
            fac = fac * p2p_ll_share(ranks, cal, t["p2p_peers"], rates)
    ceiling = cal.in_network_ceiling
    floor = t["floor"] / ceiling if ceiling > 0 else 0.0
    with np.errstate(invalid="ignore"):
        bl = np.where(on, t["repeat"] * np.maximum(beta / fac, floor), 0.0)
    lat = t["intra"] * (up + lat_up) + t["inter"] * (slow + lat_all)
    a = base + np.where(mem, lat, 0.0).sum(axis=1)
    gamma = cal.reduction_rate
    red = (red_sum / gamma) if gamma > 0 else 0.0
    least = tree_least(t, mem, fac, cal, protocol) if tree else None
    for ll_least in (ring_ll_least(t, mem, ringnet, protocol),
                     tree_ll_least(t, mem, treenet, protocol)):
        if ll_least is not None:   # NCCL's LL busbw cap across nodes
            least = ll_least if least is None else np.maximum(least, ll_least)
    chunk = np.where(innet, net.chunk, protocol.chunk)
    b = np.where(plain, bl, 0.0).sum(axis=1)
    fills = []  # (coefficient (G,), slice (G,))
    if chain is not None and np.any(chunk[chain] > 0):
        for s in unique(chunk[chain]).tolist():
            if s > 0:
                sel = chain & (chunk == s)
                fills.append((np.where(sel, (t["stages"] - 1) * bl, 0.0).sum(axis=1),
                              np.full(len(a), s * cal.channels)))
    if p2p:
        fills += p2p_fills(t, plain, scaleout, bl, protocol, cal)
    for mem_g, ks, heads in groups:
        sum_m = np.where(mem_g, bl, 0.0).sum(axis=1)
        bg = np.where(mem_g, bl, 0.0).max(axis=1)
        for sel in ks:
            bg = np.maximum(bg, np.where(sel, bl, 0.0).sum(axis=1))
        b = b + bg
        ch = np.where(mem_g, chunk, 0.0).max(axis=1)
        fills.append((np.maximum(sum_m - bg, 0.0),
                      heads * ch * group_channels(mem_g, innet, scaleout, cal)))
    b_link = b
    b = b + red
    if not fills:  # one line (what the general case below gives with no sizes)
        zero = np.zeros_like(a)
        return [_old_capped(a + zero, b + zero, zero, b_link + zero, least, red, split)]
    sizes = sorted({float(x) for f, s in fills for x in unique(s) if x > 0})
    coef = [sum(np.where(s == x, f, 0.0) for f, s in fills) for x in sizes]
    lines = []
    for j in range(len(sizes) + 1):
        fill = sum((coef[k] * sizes[k] for k in range(j)), np.zeros_like(a))
        rest = sum((coef[k] for k in range(j, len(sizes))), np.zeros_like(a))
        lines.append(_old_capped(a + fill, b + rest, fill, b_link + rest, least, red, split))
    return lines


def _old_capped(a, b, fill, b_link, least, red, split: bool) -> tuple[np.ndarray, ...]:
    """HEAD's, as it was."""
    if least is not None:
        b = np.where(least > 0, np.maximum(b_link, least) + red, b)
    if split:
        return a, b, fill, b_link, np.zeros_like(a) if least is None else least.copy()
    return a, b, fill


SPECS = ["single-switch:n=8", "fat-tree:k=4", "rail-optimized:domains=2,sharp=true",
         "nvl72:racks=2", "torus:dims=4x4", "leaf-spine:leaves=4,radix=8,oversubscription=2"]


def _bits(x) -> tuple:
    """Everything a line holds, to the bit."""
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, len(x), tuple(_bits(y) for y in x))
    x = np.asarray(x)
    return (x.dtype.str, x.shape, x.tobytes())


def _compiled(graph):
    model = FabricCostModel(graph)
    gpus = graph.graph["gpus"]
    for p in sorted({2, 3, min(8, gpus), gpus}):
        group = model.group(p)
        for algorithm in ALGORITHMS:
            for op in OPERATIONS:
                try:
                    yield model.calibration, model.compiled(op, algorithm, group)
                except (NotApplicable, NoPath, UserError):
                    continue


@pytest.mark.parametrize("spec", SPECS)
def test_combine_gives_the_old_lines_to_the_bit(spec):
    rng = np.random.default_rng(SPECS.index(spec))
    seen = 0
    kinds = set()
    for cal0, comp in _compiled(build(spec)):
        cals = [cal0, dataclasses.replace(cal0, reduction_rate=0.0, in_network_ceiling=0.0)]
        t1, beta1, lat1, up1, so1, shape1 = comp._arrays()
        S = beta1.shape[1]
        # chains, pipeline groups, send/recv, tree caps, in-network steps, NCCL's ring
        # across nodes
        kinds.add((shape1[5] is not None, bool(shape1[7]), shape1[11], shape1[12],
                   shape1[10], shape1[8] is not None))
        for cal in cals:
            for protocol in comp.protocols(cal):
                # the collective's own arrays, then random rows of the same steps
                cases = [(t1, beta1, lat1, up1, so1, shape1, None, None)]
                for G in (1, 4):
                    t = step_table(comp.steps, G)
                    t["on"] = rng.random((G, S)) < 0.8
                    beta = beta1 * np.where(rng.random((G, S)) < 0.1, 0.0,
                                            rng.uniform(0.1, 3.0, size=(G, S)))
                    lat = lat1 * rng.uniform(0.0, 2.0, size=(G, S))
                    up = np.minimum(up1 * rng.uniform(0.0, 2.0, size=(G, S)), lat)
                    so = rng.random((G, S)) < 0.5
                    share = rng.uniform(0.1, 1.0, size=G) if rng.random() < 0.5 else None
                    path = rng.uniform(1e9, 9e11, size=G) if rng.random() < 0.5 else None
                    cases.append((t, beta, lat, up, so, step_shape(t), share, path))
                for t, beta, lat, up, so, shape, share, path in cases:
                    for split in (False, True):
                        for given in (shape, None):
                            new = combine(t, beta, lat, up, so, protocol, cal, given,
                                          split=split, share=share, path=path)
                            old = _old_combine(t, beta, lat, up, so, protocol, cal, given,
                                               split=split, share=share, path=path)
                            assert _bits(new) == _bits(old), (spec, comp.op, comp.algorithm)
                            seen += 1
    assert seen > 100
    met = [any(k[i] for k in kinds) for i in range(6)]
    assert met[0] and met[2]   # lines with fills: chains, send/recv's
    if "sharp" in spec:   # every branch of combine
        assert all(met), met
