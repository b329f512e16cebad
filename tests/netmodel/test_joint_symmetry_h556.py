"""A joint split's programme folded by its symmetry (netmodel/collectives/route_joint.py
``_symmetry``, ``_least``): a pairwise all-to-all's shift ``i -> i + k`` over every GPU of
a torus (GPUs numbered row by row) is the same after a rotation of the rows (``i -> i + C``
on an R x C torus), so the least busiest link over all splits is the least over the splits
that rotation leaves alone, found on a programme R times smaller. A least busiest link no
lighter than the own routes' keeps them; a lighter one (the step on one side, scale-up or
scale-out) gives the folded optimum's flows, copied round the rotation: an optimum of the
whole programme, its busiest link the whole programme's (the step's time), its loads the
same on every link of an orbit, without the whole programme's solve (its dual simplex is
slow on these degenerate programmes: 299 s of solves for pairwise all-to-all on an 8x4x4
torus, 4 s folded).

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
            z = rj._folded(*args, prog)[0]
            whole = rj._linprog(*prog[:3])
            assert whole.status == 0
            assert z == pytest.approx(whole.fun, rel=1e-9, abs=1e-9)
            folded += 1
    assert folded >= 10


def _dual_only(monkeypatch):
    """The whole programme, by the dual simplex alone (as before the fold and the primal)."""
    linprog = rj._linprog
    monkeypatch.setattr(rj, "_folded", lambda *a: None)
    monkeypatch.setattr(rj, "_linprog", lambda a_eq, b_eq, a_ub, primal=False:
                        linprog(a_eq, b_eq, a_ub))


def _linprog_calls(monkeypatch) -> list:
    """Each programme solved from now on, as (its equality matrix's shape, primal or not)."""
    calls = []
    linprog = rj._linprog

    def counted(*args, **kw):
        calls.append((args[0].shape, kw.get("primal", False)))
        return linprog(*args, **kw)

    monkeypatch.setattr(rj, "_linprog", counted)
    return calls


def _busiest(r, links, load):
    return float((np.bincount(links, load, minlength=r.n_links) / r.bandwidth).max())


@pytest.mark.parametrize("k", range(1, 36))
def test_loads_are_an_optimum_of_the_whole_programme(monkeypatch, k):
    # 6x6: the odd shifts 7 to 29 are split lighter than their own routes (z 0.78-0.99),
    # the others keep them (the same loads, bit for bit, with the fold and without). A
    # split's busiest link is the whole programme's, every shortest path split loads the
    # links with the same bytes in all, and the rows' rotation (i -> i + 6) maps each
    # link's load onto its image's
    g = build("torus:dims=6x6")
    calls = _linprog_calls(monkeypatch)
    r, links, load, asked = _solves(monkeypatch, g, _shift(36, k))
    folded_calls = len(calls)
    _dual_only(monkeypatch)
    _, links0, load0, _ = _solves(monkeypatch, g, _shift(36, k))
    assert _busiest(r, links, load) == pytest.approx(_busiest(r, links0, load0), rel=1e-9)
    assert float(load.sum()) == pytest.approx(float(load0.sum()), rel=1e-9)
    own = _busiest(r, *r.loads(_shift(36, k), split=True)[:2])
    if k % 2 and 7 <= k <= 29:   # split: by the folded programme alone
        assert asked and folded_calls == 1
        assert _busiest(r, links, load) < own * (1 - 1e-3)
    else:
        assert _busiest(r, links, load) == own
        assert np.array_equal(links, links0) and np.array_equal(load, load0)
    total = np.bincount(links, load, minlength=r.n_links)
    for lid in links.tolist():
        u, v = (int(x[3:]) for x in r.link_name(lid))
        image = r.link_id(f"gpu{(u + 6) % 36}", f"gpu{(v + 6) % 36}")
        assert total[image] == pytest.approx(total[lid], rel=1e-9, abs=1e-12)


def test_a_3d_torus_pairwise_steps_are_the_whole_programmes(monkeypatch):
    # pairwise all-to-all over a 4x4x2 torus (GPUs numbered x, y, z): its odd shifts 3 to
    # 29 are split lighter than their own routes (to 0.68-0.89 of their busiest link),
    # each by the folded programme alone, its busiest link the whole programme's by the
    # dual simplex (as every step's)
    g = build("torus:dims=4x4x2")
    calls = _linprog_calls(monkeypatch)
    r = Router(g)
    got, split = [], []
    for k in range(1, 32):
        calls.clear()
        links, load = r.link_loads(_shift(32, k))[:2]
        got.append(_busiest(r, links, load))
        if got[-1] < _busiest(r, *r.loads(_shift(32, k), split=True)[:2]) * (1 - 1e-3):
            assert len(calls) == 1
            split.append(k)
    _dual_only(monkeypatch)
    r = Router(g)
    whole = [_busiest(r, *r.link_loads(_shift(32, k))[:2]) for k in range(1, 32)]
    assert got == pytest.approx(whole, rel=1e-9)
    assert split == list(range(3, 30, 2))


@pytest.mark.parametrize("k", [3, 7, 8, 11, 15, 27])
def test_a_step_without_symmetry_by_the_primal_simplex(monkeypatch, k):
    # pairwise over 30 of a 6x6 torus's 36 GPUs (no rotation maps the group onto itself):
    # the whole programme runs, by the primal simplex (on one side), its busiest link the
    # dual simplex's; shifts 7 to 23 split lighter than the own routes (3 and 27 not)
    g = build("torus:dims=6x6")
    step = tuple((f"gpu{i}", f"gpu{(i + k) % 30}", 1.0) for i in range(30))
    calls = _linprog_calls(monkeypatch)
    r = Router(g)
    links, load = r.link_loads(step)[:2]
    # no fold: the whole programme alone, by the primal simplex
    assert [primal for _, primal in calls] == [True]
    _dual_only(monkeypatch)
    links0, load0 = Router(g).link_loads(step)[:2]
    assert _busiest(r, links, load) == pytest.approx(_busiest(r, links0, load0), rel=1e-9)
    own = _busiest(r, *r.loads(step, split=True)[:2])
    assert _busiest(r, links, load) < own * (1 - 1e-3) if 7 <= k <= 23 else \
        _busiest(r, links, load) == own


@pytest.mark.parametrize(("dims", "a", "b"), [("4x6", 1, 2), ("6x6", 2, 1), ("5x7", 2, 3),
                                              ("6x8", 1, 3)])
def test_a_translation_keeps_its_own_routes(monkeypatch, dims, a, b):
    R, C = map(int, dims.split("x"))
    g = build(f"torus:dims={dims}")
    bw = float(next(iter(g.edges(data="bandwidth")))[2])
    step = tuple((f"gpu{r * C + c}", f"gpu{(r + a) % R * C + (c + b) % C}", 1.0)
                 for r in range(R) for c in range(C))
    seen = []
    folded = rj._folded

    def spy(*args):
        seen.append(folded(*args))
        return seen[-1]

    monkeypatch.setattr(rj, "_folded", spy)
    r, links, load, asked = _solves(monkeypatch, g, step)
    total = np.bincount(links, load, minlength=r.n_links)
    assert float((total / r.bandwidth).max()) == pytest.approx(max(a, b) / bw, rel=1e-12)
    # the programme was asked, folded, and found no lighter split than the own routes'
    assert len(asked) == 1 and seen[0][0] == pytest.approx(1.0, abs=1e-9)


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
        assert rj._folded(*args, prog) is None
