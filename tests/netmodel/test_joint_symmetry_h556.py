"""A joint split's programme folded by its symmetry (netmodel/collectives/route_joint.py
``_symmetry``, ``_least``): a pairwise all-to-all's shift ``i -> i + k`` over every GPU of
a torus (GPUs numbered row by row) is the same after a rotation of the rows (``i -> i + C``
on an R x C torus), so the least busiest link over all splits is the least over the splits
that rotation leaves alone, found on a programme R times smaller. It decides only whether
the whole programme runs (a least busiest link no lighter than the own routes' keeps them),
so every step's loads are the ones the whole programme alone gives.

Hand case: a translation by ``(a, b)`` of a torus, ``a < R/2``, ``b < C/2``, one byte per
transfer, every cable ``B``: each transfer's shortest paths cross ``a`` row cables and ``b``
column cables, all one way round, so the ``R C`` row cables of that way carry ``R C a`` bytes
together and one of them at least ``a`` (likewise ``b``), and the own routes already spread
them evenly: the busiest link carries ``max(a, b)`` over ``B``, the folded programme finds
no lighter split, and the whole one is not run.
"""

from __future__ import annotations

import numpy as np
import pytest

import netmodel.collectives.route_joint as rj
from netmodel.collectives.routing import Router
from topologies import build


def _solves(monkeypatch, g, step):
    """The step's loads and the arguments of each programme it asked for."""
    asked = []
    solve = rj._solve

    def spy(*args):
        asked.append(args)
        return solve(*args)

    monkeypatch.setattr(rj, "_solve", spy)
    r = Router(g)
    links, load = r.link_loads(step)[:2]
    return r, links, load, asked


def _shift(n, k):
    return tuple((f"gpu{i}", f"gpu{(i + k) % n}", 1.0) for i in range(n))


@pytest.mark.parametrize("dims", ["4x8", "6x6"])
def test_the_folded_programme_has_the_whole_ones_least(monkeypatch, dims):
    R, C = map(int, dims.split("x"))
    g = build(f"torus:dims={dims}")
    folded = 0
    for k in range(1, R * C):
        _, _, _, asked = _solves(monkeypatch, g, _shift(R * C, k))
        for args in asked:
            prog = rj._programme(*args)
            sym = rj._symmetry(*args[:8], prog[1], prog[3], prog[4])
            assert sym is not None and sym[3] == R       # the rows' rotation
            z = rj._least(*args, prog)
            whole = rj._linprog(*prog[:3])
            assert whole.status == 0
            assert z == pytest.approx(whole.fun, rel=1e-9, abs=1e-9)
            folded += 1
    assert folded >= 10


@pytest.mark.parametrize("k", range(1, 36))
def test_loads_are_the_whole_programmes(monkeypatch, k):
    # 6x6: shifts 7, 9, 11, 13, 15, ... are split lighter than their own routes (z < 1),
    # the others keep them: the same loads, bit for bit, with the fold and without
    g = build("torus:dims=6x6")
    _, links, load, _ = _solves(monkeypatch, g, _shift(36, k))
    monkeypatch.setattr(rj, "_least", lambda *a: None)
    _, links0, load0, _ = _solves(monkeypatch, g, _shift(36, k))
    assert np.array_equal(links, links0)
    assert np.array_equal(load, load0)


@pytest.mark.parametrize(("dims", "a", "b"), [("4x6", 1, 2), ("6x6", 2, 1), ("5x7", 2, 3),
                                              ("6x8", 1, 3)])
def test_a_translation_keeps_its_own_routes(monkeypatch, dims, a, b):
    R, C = map(int, dims.split("x"))
    g = build(f"torus:dims={dims}")
    bw = float(next(iter(g.edges(data="bandwidth")))[2])
    step = tuple((f"gpu{r * C + c}", f"gpu{(r + a) % R * C + (c + b) % C}", 1.0)
                 for r in range(R) for c in range(C))
    seen = []
    least = rj._least

    def spy(*args):
        seen.append(least(*args))
        return seen[-1]

    monkeypatch.setattr(rj, "_least", spy)
    r, links, load, asked = _solves(monkeypatch, g, step)
    total = np.bincount(links, load, minlength=r.n_links)
    assert float((total / r.bandwidth).max()) == pytest.approx(max(a, b) / bw, rel=1e-12)
    # the programme was asked, folded, and found no lighter split than the own routes'
    assert len(asked) == 1 and seen[0] == pytest.approx(1.0, abs=1e-9)


def test_a_faster_cable_breaks_the_symmetry(monkeypatch):
    # one cable of the 6x6 torus twice as fast: no rotation keeps every bandwidth, so the
    # whole programme runs (a fold that ignored it would find a wrong least)
    g = build("torus:dims=6x6")
    g.edges["gpu0", "gpu1"]["bandwidth"] *= 2
    _, links, load, asked = _solves(monkeypatch, g, _shift(36, 7))
    assert asked
    for args in asked:
        prog = rj._programme(*args)
        assert rj._symmetry(*args[:8], prog[1], prog[3], prog[4]) is None
        assert rj._least(*args, prog) is None
