"""Large concurrent steps routed in parts give what one plan of the whole step gives, to
the last bit (the speed work on ``compare --instances all`` at 16,384 GPUs changes no number).

A step of more than ``concurrent_loads._IN_PARTS`` transfers whose loads together alone are asked
for (:func:`~netmodel.collectives.concurrent.concurrent_linear`) is routed in parts of about
``_PART`` transfers: its signature pairs learned first as one :meth:`Router._describe` of
the whole step learns them (:meth:`Router.learn_in_parts`), its links' bytes summed in the
same order. The reference is the same costing with parts switched off (``_IN_PARTS`` above
every step), on fresh routers each time (``clear_shared_routes``): the choices, lines and
size ranges must be equal, not close, and the routers must end up with the same tables.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import concurrent, concurrent_loads
from netmodel.collectives.concurrent import concurrent_linear
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_sharing import clear_shared_routes
from netmodel.collectives.routing import Router
from topologies import build

# one-port fat trees and leaf-spines (the rows path), an oversubscribed tree, servers with
# NVLink (direct neighbours routed on their own: one plan, as before), a torus (no switch)
SPECS = ["fat-tree:k=8", "fat-tree:k=8,oversubscription=2",
         "leaf-spine:leaves=4,radix=8,oversubscription=2", "rail-optimized:domains=4",
         "torus:dims=4x4", "fat-tree:k=8,gpu=B200-HGX"]


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _linear(spec, placement, p, op, parts: bool, monkeypatch):
    """concurrent_linear on a fresh model and router, with or without parts; the number of
    steps costed in parts."""
    clear_shared_routes()
    monkeypatch.setattr(concurrent_loads, "_IN_PARTS", 0 if parts else 1 << 62)
    monkeypatch.setattr(concurrent_loads, "_PART", 100)   # parts of a few groups
    used = []
    real = concurrent_loads._loads_in_parts

    def counted(*args):
        out = real(*args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(concurrent_loads, "_loads_in_parts", counted)
    model = FabricCostModel(build(spec), placement=placement, seed=3, validated=True)
    out = [concurrent_linear(model, p, o, ranges=True) for o in op]
    return out, sum(used), model.router


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("placement", ["contiguous", "random"])
def test_parts_equal_one_plan(spec, placement, monkeypatch):
    ops = ("all-gather", "all-to-all", "reduce-scatter", "all-reduce")
    for p in (4, 16):
        ref, n_ref, r_ref = _linear(spec, placement, p, ops, False, monkeypatch)
        got, n_got, r_got = _linear(spec, placement, p, ops, True, monkeypatch)
        assert n_ref == 0
        for a, b in zip(ref, got, strict=True):
            assert a[0] == b[0]                       # the choices
            assert all(_same(x, y) for x, y in zip(a[1:], b[1:], strict=True))
        # the same tables learned, in the same order
        assert _same(r_ref._gpu_sig, r_got._gpu_sig)
        assert _same(r_ref._known_keys, r_got._known_keys)
        assert len(r_ref._piece_links) == len(r_got._piece_links)
        assert _same(r_ref._lists.table, r_got._lists.table)
        if p == 16 and spec.startswith(("fat-tree", "leaf-spine")):
            assert n_got > 0    # switched fabrics: their all-pairs steps went in parts


def test_parts_are_used_where_they_should_be(monkeypatch):
    """Every step of a fat tree's direct all-gather (its one all-pairs step) goes in parts
    when it is large; the loads costed alone (concurrent_cost) never do."""
    _, n, _ = _linear("fat-tree:k=8", "contiguous", 16, ("all-gather",), True, monkeypatch)
    assert n >= 1
    clear_shared_routes()
    calls = []
    monkeypatch.setattr(concurrent_loads, "_loads_in_parts", lambda *a: calls.append(a))
    model = FabricCostModel(build("fat-tree:k=8"), validated=True)
    concurrent.concurrent_cost(model, 16, "all-gather", [1e6])
    assert calls == []


def _all_pairs(router, gpus):
    nodes = router.node_numbers(gpus)
    s, d = np.meshgrid(nodes, nodes, indexing="ij")
    keep = s != d
    return s[keep].ravel(), d[keep].ravel()


@pytest.mark.parametrize("spec", ["fat-tree:k=8", "leaf-spine:leaves=8,radix=16",
                                  "rail-optimized:domains=4", "fat-tree:k=8,oversubscription=2"])
@pytest.mark.parametrize("cut", [65, 100, 1000])
def test_learn_in_parts_learns_as_one_describe(spec, cut):
    """Router.learn_in_parts over any cut of the transfers into parts leaves the router as
    _describe of them all at once does: signatures, signature pairs (keys and fields, in
    order), lists and pieces; plans afterwards are then equal."""
    graph = build(spec)
    gpus = [n for n, k in graph.nodes(data="kind") if k == "gpu"]
    one, parted = Router(graph), Router(graph)
    # something learned before: a ring over every GPU, then all pairs of a random half
    for r in (one, parted):
        ring = r.node_numbers(gpus)
        r.plan_nodes(ring, np.roll(ring, -1), np.ones(len(ring)))
    half = list(np.random.default_rng(5).permutation(gpus)[: len(gpus) // 2])
    src, dst = _all_pairs(one, half)
    one._describe(src, dst)
    bounds = list(range(0, len(src), cut))
    if len(src) - bounds[-1] <= 64 and len(bounds) > 1:
        bounds.pop()   # parts of more than 64 transfers (fewer go through the router's dict)
    bounds.append(len(src))
    learned = parted.learn_in_parts(
        lambda: ((src[a:b], dst[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)))
    assert learned
    assert _same(one._gpu_sig, parted._gpu_sig)
    assert _same(one._known_keys, parted._known_keys)
    for k, v in one._known_fields.items():
        assert _same(v, parted._known_fields[k]), k
    assert len(one._piece_links) == len(parted._piece_links)
    assert _same(one._lists.table, parted._lists.table)
    for a, b in zip(one._specs_pos.arrays, parted._specs_pos.arrays, strict=True):
        assert _same(a, b)
    frac = np.full(len(src), 0.25)
    a, b = one.plan_nodes(src, dst, frac), parted.plan_nodes(src, dst, frac)
    for name in ("hop_index", "hop_links", "hop_weights", "pieces", "piece_of", "latency",
                 "scaleout", "routed", "route_links", "route_weights"):
        assert _same(getattr(a, name), getattr(b, name)), name


def test_row_pieces_follow_the_table():
    """The pieces of the known table's rows are kept per table: a step that learns new pairs
    (a new table) takes the new rows' pieces, not the old table's. A router whose kept
    pieces are forgotten before the second step is the reference (fails if the kept pieces
    were reused whatever the table)."""
    graph = build("fat-tree:k=8")
    gpus = [n for n, k in graph.nodes(data="kind") if k == "gpu"]
    kept, ref = Router(graph), Router(graph)
    first = gpus[:16]                      # two leaves' pairs: few signature pairs
    for r in (kept, ref):
        s, d = _all_pairs(r, first)
        r.plan_nodes(s, d, np.ones(len(s)))
    assert kept._row_pieces is not None   # the rows path ran and kept its pieces
    table = kept._known_fields
    s, d = _all_pairs(kept, gpus)          # every pair: new signature pairs, a new table
    ref._row_pieces = None
    a, b = kept.plan_nodes(s, d, np.ones(len(s))), ref.plan_nodes(s, d, np.ones(len(s)))
    assert kept._known_fields is not table
    for name in ("hop_links", "pieces", "piece_of"):
        assert _same(getattr(a, name), getattr(b, name)), name
    # and the pieces: each transfer's pieces are its route's (a piece per tier crossed)
    assert len(a.piece_of) > len(s)
