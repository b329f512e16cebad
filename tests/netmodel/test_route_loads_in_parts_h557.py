"""One large step routed in parts gives what one plan of the whole step gives, to the last
bit (a direct all-reduce over 4,096 GPUs, 16.8 million transfers, is costed 65,536 at a
time; no number of ``netmodel collective`` changes).

:meth:`Router.link_loads` routes a :class:`Pairs` step of more than
``route_bulk._IN_PARTS`` transfers in parts of ``_PART``: its signature pairs learned
first as one plan learns them (:meth:`Router.learn_in_parts`, which starts the table of
known pairs afresh where one plan would), its links' bytes summed in the same order. The
reference is the same costing with parts switched off, on fresh routers; links, loads,
latencies, the steps' costs and the routers' tables must be equal, not close.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import route_bulk
from netmodel.collectives.algo_direct import _all_pairs
from netmodel.collectives.algo_ring import ring_pairs
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_sharing import clear_shared_routes
from netmodel.collectives.routing import Router
from topologies import build

# one-port fat trees (the rows path, dyadic and non-dyadic fractions), an oversubscribed
# tree, a leaf-spine, a rail-optimized fabric and a SuperPOD (many signatures); a full mesh
# (GPUs cabled to each other) and a torus (routed on their own: one plan, as before)
SPECS = ["fat-tree:k=8,gpu=Lite", "fat-tree:k=8,oversubscription=2",
         "leaf-spine:leaves=4,radix=8,oversubscription=2", "rail-optimized:domains=4",
         "superpod:sus=1", "full-mesh:n=8", "torus:dims=4x4"]


def _gpus(g):
    return tuple(x for x, k in g.nodes(data="kind") if k == "gpu")


def _loads(g, pairs, parts: bool, monkeypatch, known=None):
    """link_loads of ``pairs`` on a fresh router (after two ring steps), with or without
    parts; whether parts answered, and the router."""
    monkeypatch.setattr(route_bulk, "_IN_PARTS", 0 if parts else 1 << 62)
    monkeypatch.setattr(route_bulk, "_PART", 97)   # parts of 97 transfers, the last more
    if known is not None:   # a table of known pairs that the step overflows: afresh
        monkeypatch.setattr(route_bulk, "_KNOWN_PAIRS", known)
    used = []
    real = route_bulk.BulkRoutes._link_loads_in_parts

    def counted(self, t):
        out = real(self, t)
        used.append(out is not None)
        return out

    monkeypatch.setattr(route_bulk.BulkRoutes, "_link_loads_in_parts", counted)
    r = Router(g)
    group = pairs.nodes
    r.link_loads(ring_pairs(group, 1.0))
    r.link_loads(ring_pairs(group[::-1], 1.0))
    return r.link_loads(pairs), any(used), r


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("known", [None, 200])
def test_link_loads_in_parts_bit_for_bit(spec, known, monkeypatch):
    g = build(spec)
    gpus = _gpus(g)
    answered = []
    for p in sorted({min(16, len(gpus)), min(100, len(gpus)), len(gpus)}):
        for frac in (1.0, 1 / p):
            pairs = _all_pairs(gpus[:p], frac)
            whole, _, rw = _loads(g, pairs, False, monkeypatch, known)
            parts, used, rp = _loads(g, pairs, True, monkeypatch, known)
            answered.append(used)
            assert _same(whole[0], parts[0]) and _same(whole[1], parts[1])
            assert whole[2:] == parts[2:]
            assert _same(rw._known_keys, rp._known_keys)
            assert len(rw._piece_links) == len(rp._piece_links)
            for k, v in rw._known_fields.items():
                assert _same(v, rp._known_fields[k])
    # switched fabrics are routed in parts; GPUs cabled to GPUs in one plan
    assert all(answered) == (spec not in ("full-mesh:n=8", "torus:dims=4x4"))
    assert any(answered) == all(answered)


def test_link_loads_in_parts_by_hand(monkeypatch):
    """Direct all-reduce over the 16 GPUs of a k=4 fat tree (2 a leaf, 2 leaves a pod, 4
    pods, 4 cores), every GPU sending n to each of the 15 others: a GPU's link to its leaf
    carries 15 n each way; a leaf's 2 uplinks carry what leaves it, 2 GPUs x 14 n, split
    evenly: 14 n each; a pod's 4 links to the cores carry 4 GPUs x 12 n, 12 n each."""
    g = build("fat-tree:k=4")
    pairs = _all_pairs(_gpus(g), 1.0)
    (links, load, *_), used, r = _loads(g, pairs, True, monkeypatch)
    assert used
    by = dict(zip(links.tolist(), load.tolist(), strict=True))
    tier = {x: d.get("tier", -1) for x, d in g.nodes(data=True)}
    seen = {}
    for lid, x in by.items():
        a, b = r.link_name(lid)
        seen.setdefault((tier[a], tier[b]), set()).add(x)
    assert seen == {(-1, 1): {15.0}, (1, -1): {15.0}, (1, 2): {14.0}, (2, 1): {14.0},
                    (2, 3): {12.0}, (3, 2): {12.0}}   # GPU -1, leaf 1, aggregation 2, core 3


@pytest.mark.parametrize("op", ["all-reduce", "all-to-all"])
def test_direct_cost_in_parts_unchanged(op, monkeypatch):
    """The direct step's cost (time, bottleneck, latency) with and without parts."""
    out = []
    for parts in (False, True):
        clear_shared_routes()
        monkeypatch.setattr(route_bulk, "_IN_PARTS", 0 if parts else 1 << 62)
        monkeypatch.setattr(route_bulk, "_PART", 1000)
        m = FabricCostModel(build("fat-tree:k=8,gpu=Lite"), validated=True)
        r = m.cost(op, 64 * 2 ** 20, 100, "direct")
        c = m.curves(op, [2.0 ** 10, 2.0 ** 26], 128)
        out.append((r.time, r.bottleneck, [(s.beta, s.latency, s.bottleneck) for s in
                                            m.compiled(op, "direct", m.group(100)).steps],
                    {k: v.tobytes() for k, v in c.items()}))
    clear_shared_routes()
    assert out[0] == out[1]
