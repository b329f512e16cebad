"""Large steps of GPU pairs are planned from the table of signature pairs row by row
(``Router._hops_and_pieces_rows``: each row's port, weight and pieces worked out once and
gathered per transfer) and pieces are repeated per distinct pair of piece lists
(``Router._repeat_pieces``). Checked against the general way (the same router with the
row shortcut turned off) field by field, against each transfer's own route
(``Router.route``, built from the cached lists one pair at a time), and by hand."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives.placement import partition
from netmodel.collectives.routing import Plan, Router
from topologies import build

SPECS = ["fat-tree:k=8", "leaf-spine:leaves=4,radix=8", "superpod:sus=2",
         "lite-groups:base=[fat-tree:k=8],lites=2", "rail-optimized:domains=4",
         "flat:n=32,planes=4"]
TRANSFER_FIELDS = [f for f in Plan.__dataclass_fields__]


def _all_pairs(router: Router, size: int) -> tuple[np.ndarray, np.ndarray]:
    groups = partition(router.graph, size, "contiguous", gpus=router.gpu_list)
    nodes = router.node_numbers([x for g in groups for x in g]).reshape(len(groups), size)
    a = np.repeat(np.arange(size), size - 1)
    j = np.tile(np.arange(size - 1), size)
    b = j + (j >= a)
    return nodes[:, a].ravel(), nodes[:, b].ravel()


def _entries(router: Router, pl: Plan, t: int) -> list[tuple[int, float]]:
    """Transfer ``t``'s (link, weight) entries in the plan, pieces expanded, sorted."""
    out = [(int(lk), float(w)) for lk, w in zip(pl.hop_links[pl.hop_index == t],
                                                  pl.hop_weights[pl.hop_index == t],
                                                  strict=True)]
    for p in pl.piece_of[pl.pieces == t].tolist():
        out += zip(router._piece_links[p].tolist(), router._piece_weights[p].tolist(),
                   strict=True)
    return sorted(out)


def _plans(spec: str, size: int, monkeypatch, extra: bool = False):
    """The plan of an all-pairs step of groups of ``size`` by the row shortcut and by the
    general way (fresh routers), and the router and transfers. ``extra``: a transfer of a
    GPU to itself first, so that not every transfer is templated (no shortcut)."""
    g = build(spec)
    fast, slow = Router(g), Router(g)
    src, dst = _all_pairs(fast, size)
    if extra:
        src, dst = np.concatenate([src[:1], src]), np.concatenate([src[:1], dst])
    frac = np.full(len(src), 1.0 / size)
    calls = []
    real = Router._hops_and_pieces_rows

    def counted(self, *a):
        out = real(self, *a)
        if out is not None:   # taken
            calls.append(len(a[1]))
        return out

    monkeypatch.setattr(Router, "_hops_and_pieces_rows", counted)
    got = fast.plan_nodes(src, dst, frac)
    monkeypatch.setattr(Router, "_hops_and_pieces_rows", lambda self, *a: None)
    want = slow.plan_nodes(src, dst, frac)
    return got, want, fast, src, dst, calls


@pytest.mark.parametrize("spec", SPECS)
def test_rows_shortcut_equals_the_general_way(spec, monkeypatch):
    got, want, router, src, dst, calls = _plans(spec, 8, monkeypatch)
    # the shortcut is taken where every transfer is templated (fat trees, leaf-spines)
    every = router._specs_one and (want.template >= 0).all()
    assert calls == ([len(src)] if every else [])
    assert every or spec not in ("fat-tree:k=8", "leaf-spine:leaves=4,radix=8")
    for f in TRANSFER_FIELDS:
        a, b = getattr(got, f), getattr(want, f)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), f
    # and each templated transfer's entries are its own route's links and weights
    rng = np.random.default_rng(0)
    templated = np.flatnonzero(got.template >= 0)
    assert len(templated) > len(src) // 2
    nodes = router._nodes
    for t in rng.choice(templated, 40, replace=False).tolist():
        r = router.route(nodes[src[t]], nodes[dst[t]])
        assert _entries(router, got, t) == sorted(zip(r.links.tolist(), r.weights.tolist(),
                                                      strict=True))


@pytest.mark.parametrize("spec", ["fat-tree:k=8", "leaf-spine:leaves=4,radix=8"])
def test_not_every_transfer_templated(spec, monkeypatch):
    """A GPU to itself among the pairs: the general way (one port a pattern), the same
    entries as each route's."""
    got, want, router, src, dst, calls = _plans(spec, 8, monkeypatch, extra=True)
    assert calls == [] and got.template[0] < 0
    for f in TRANSFER_FIELDS:
        assert np.array_equal(getattr(got, f), getattr(want, f)), f
    nodes = router._nodes
    for t in range(1, len(src), 37):
        r = router.route(nodes[src[t]], nodes[dst[t]])
        assert _entries(router, got, t) == sorted(zip(r.links.tolist(), r.weights.tolist(),
                                                      strict=True))


def test_repeat_pieces_by_hand():
    # rows: 0 -> pieces 10, 11, 12; 1 -> none; 2 -> piece 20
    flat = np.array([10, 11, 12, 20])
    first, count = np.array([0, 3, 3]), np.array([3, 0, 1])
    which, on = np.array([2, 0, 1, 0, 2]), np.array([5, 6, 7, 8, 9])
    t, p = Router._repeat_pieces(flat, first, count, which, on)
    assert t.tolist() == [5, 6, 6, 6, 8, 8, 8, 9]
    assert p.tolist() == [20, 10, 11, 12, 10, 11, 12, 20]
    t, p = Router._repeat_pieces(flat, first, count, np.array([1, 1]), np.array([0, 1]))
    assert t.tolist() == [] and p.tolist() == [] and t.dtype == p.dtype == np.int64


@pytest.mark.parametrize("spec", ["fat-tree:k=8", "superpod:sus=2"])
@pytest.mark.parametrize("distinct", [2, 10_000])
def test_pieces_of_equals_the_lists_one_by_one(spec, distinct):
    """Per transfer, its first list's pieces then its second's, whether the pairs of lists
    are few (numbered by marking) or many (sorted)."""
    router = Router(build(spec))
    src, dst = _all_pairs(router, 8)
    router.plan_nodes(src, dst, np.full(len(src), 0.125))   # lists made
    n_lists = len(router._lists.table)
    assert n_lists > 2
    rng = np.random.default_rng(distinct)
    T = 3_000
    pool = rng.integers(0, n_lists, size=(min(distinct, n_lists * n_lists), 2))
    l1, l2 = pool[rng.integers(0, len(pool), T)].T
    on = np.sort(rng.choice(10 * T, T, replace=False))
    t, p = router._pieces_of(l1, l2, on)
    lists = router._list_py
    want = [(o, x) for o, a, b in zip(on.tolist(), l1.tolist(), l2.tolist(), strict=True)
            for x in lists[a] + lists[b]]
    assert list(zip(t.tolist(), p.tolist(), strict=True)) == want
