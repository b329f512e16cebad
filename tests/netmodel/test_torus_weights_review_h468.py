"""Review of the torus algorithm's chunk weights against an independent minimiser.

The torus all-reduce's reduce-scatter runs ``k`` phases; in phase ``t`` chunk ``j`` is on
dimension ``a = (j + t) mod k``, cut by the sides it crossed before, and the phase lasts
as long as its slowest chunk. Per byte of the data, chunk ``j`` takes
``w_j c[j, t]`` in phase ``t``, ``c[j, t] = (s_a - 1)/s_a / (s_j ... s_{a-1}) / r_a``,
``r_a`` what every ring of dimension ``a`` carries a GPU: twice its slowest link (both
ways round), a side of 2 its one edge. The least of ``sum_t max_j w_j c[j, t]`` over the
simplex is a linear program (``min sum_t z_t`` subject to ``w_j c[j, t] <= z_t``,
``sum w = 1``, ``w >= 0``), solved here by scipy's HiGHS and by a grid over the simplex;
``_torus_weights`` must reach it. With ideal calibration (``alpha`` a step, latencies 0)
the model's all-reduce on the torus builder's tori, their cables scaled apart, is then
``2 k (max(s) - 1) alpha + 2 n f*``, the rates read here from the graph's own cables.
"""

from __future__ import annotations

import functools
from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netmodel.collectives.algo_torus import _torus_weights
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import zero_latency
from topologies import build

ALPHA = 1e-6


def _cost(sides, rates) -> np.ndarray:
    k = len(sides)
    return np.array([[(sides[(j + t) % k] - 1) / sides[(j + t) % k]
                      / float(np.prod([sides[(j + u) % k] for u in range(t)]))
                      / rates[(j + t) % k] for t in range(k)] for j in range(k)])


def _total(w, c) -> float:
    return float((np.asarray(w, dtype=float)[:, None] * c).max(axis=0).sum())


def _lp_least(c) -> float:
    """The least of sum_t max_j w_j c[j, t] over the simplex, by a linear program (c
    scaled to 1 at its largest for the solver, the result scaled back)."""
    from scipy.optimize import linprog

    k, scale = c.shape[0], float(c.max())
    cn = c / scale
    a_ub = []
    for t in range(k):
        for j in range(k):
            row = np.zeros(2 * k)
            row[j], row[k + t] = cn[j, t], -1.0
            a_ub.append(row)
    res = linprog(np.r_[np.zeros(k), np.ones(k)], A_ub=np.array(a_ub), b_ub=np.zeros(k * k),
                  A_eq=[np.r_[np.ones(k), np.zeros(k)]], b_eq=[1.0],
                  bounds=[(0, None)] * (2 * k), method="highs")
    assert res.status == 0
    return float(res.fun) * scale


@functools.cache
def _grid(k: int, n: int) -> np.ndarray:
    """The points of the simplex grid of step 1/n in k dimensions, one a row (made once a
    (k, n): only read)."""
    pts = []
    for cut in combinations(range(n + k - 1), k - 1):
        bounds = (-1, *cut, n + k - 1)
        pts.append([bounds[i + 1] - bounds[i] - 1 for i in range(k)])
    w = np.array(pts, dtype=float) / n
    w.flags.writeable = False
    return w


def _grid_least(c, n: int) -> float:
    """The least over the simplex grid of step 1/n (never below the true least)."""
    w = _grid(c.shape[0], n)
    return float((w[:, :, None] * c[None]).max(axis=1).sum(axis=1).min())


SIDES = st.sampled_from([2, 3, 4, 5, 6, 8, 11, 16])
RATES = st.sampled_from([5e9, 1e10, 2e10]) | st.floats(1e9, 1e12)


@settings(max_examples=150, deadline=None)
@example(sides=[2, 3, 4], rates=[6e9, 8e9, 9e9])       # r s/(s-1) equal, sides not: 6/11
@example(sides=[2, 3, 4, 2], rates=[6e9, 8e9, 9e9, 6e9])
@example(sides=[4, 4], rates=[5e10, 5e10])              # the symmetric case: 1/k
@example(sides=[2, 4], rates=[5e10, 5e10])              # the builder's 2x4: (0.6, 0.4)
@given(sides=st.lists(SIDES, min_size=2, max_size=4),
       rates=st.lists(RATES, min_size=4, max_size=4))
def test_weights_reach_the_least_total(sides, rates):
    """_torus_weights' weights take the least total of the phases (the linear program's,
    and never more than any point of a simplex grid), on 2 to 4 dimensions."""
    rates = rates[:len(sides)]
    c = _cost(sides, rates)
    w = _torus_weights(sides, rates)
    assert len(w) == len(sides)
    assert min(w) >= 0 and sum(w) == pytest.approx(1.0, rel=1e-12)
    got = _total(w, c)
    assert got <= _lp_least(c) * (1 + 1e-7)   # both positive: a relative bound
    n = {2: 2000, 3: 120, 4: 24}[len(sides)]
    assert got <= _grid_least(c, n) * (1 + 1e-12)


def test_hand_values_of_the_weights():
    """The closed forms (per byte, times a rate, so that no absolute tolerance hides
    them): 2x3x4 at r = (6, 8, 9) GB/s takes 6/11 per byte over 12 GB/s (not the 5/9 of
    1/3 each); a 4x4 at r = (50, 25) GB/s 3/200 per byte over GB/s at w = (2/3, 1/3);
    the builder's 2x4 (r = 50 GB/s both) 10.5e-3 at (0.6, 0.4)."""
    c = _cost([2, 3, 4], [6e9, 8e9, 9e9]) * 12e9
    assert _total(_torus_weights([2, 3, 4], [6e9, 8e9, 9e9]), c) == pytest.approx(
        6 / 11, rel=1e-12)
    assert _total([1 / 3] * 3, c) == pytest.approx(5 / 9, rel=1e-12)
    c = _cost([4, 4], [50e9, 25e9]) * 1e9
    w = _torus_weights([4, 4], [50e9, 25e9])
    assert w == pytest.approx([2 / 3, 1 / 3], rel=1e-12)
    assert _total(w, c) == pytest.approx(3 / 200, rel=1e-12)
    w = _torus_weights([2, 4], [50e9, 50e9])
    assert w == pytest.approx([0.6, 0.4], rel=1e-12)
    assert _total(w, _cost([2, 4], [50e9, 50e9]) * 1e9) == pytest.approx(10.5e-3, rel=1e-12)


def _dimension(u: str, v: str, sides: list[int]) -> int:
    """The dimension a torus builder's cable u-v runs along (row-major, last side
    fastest)."""
    i, j = int(u[3:]), int(v[3:])
    ci = np.unravel_index(i, sides)
    cj = np.unravel_index(j, sides)
    (d,) = [d for d in range(len(sides)) if ci[d] != cj[d]]
    return d


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(dims="2x4", factors=[2.0] + [1.0] * 63)
@given(dims=st.sampled_from(["2x4", "3x4", "4x4", "2x3x4", "3x3x2", "4x4x2", "3x5"]),
       factors=st.lists(st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.0]), min_size=64,
                        max_size=64))
def test_model_time_is_the_least_total(dims, factors):
    """The model's ideal all-reduce on the torus builder's torus, each cable's bandwidth
    scaled apart, is ``2 k (max(s) - 1) alpha + 2 n f*``: ``f*`` the linear program's
    least at the rates read here from the cables (a dimension's slowest; twice it where
    its side is above 2). Reading a dimension's fastest ring instead weights the chunks
    wrongly (the fabric's faster cables are no faster rings)."""
    sides = [int(s) for s in dims.split("x")]
    g = zero_latency(build(f"torus:dims={dims},bandwidth=100e9"))
    slowest = [np.inf] * len(sides)
    for (u, v, d), f in zip(sorted(g.edges(data=True)), factors * 4, strict=False):
        d["bandwidth"] *= f
        a = _dimension(u, v, sides)
        slowest[a] = min(slowest[a], d["bandwidth"])
    rates = [b if s == 2 else 2 * b for s, b in zip(sides, slowest, strict=True)]
    least = _lp_least(_cost(sides, rates))
    p, n = int(np.prod(sides)), 2.0**30
    model = FabricCostModel(g, calibration=Calibration.ideal(ALPHA))
    steps = len(sides) * (max(sides) - 1)
    assert model.cost("all-reduce", n, p, "torus").time == pytest.approx(
        2 * steps * ALPHA + 2 * n * least, rel=1e-7)
    assert model.cost("reduce-scatter", n, p, "torus").time == pytest.approx(
        steps * ALPHA + n * least, rel=1e-7)
