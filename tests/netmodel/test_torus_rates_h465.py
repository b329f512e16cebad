"""The torus algorithm's chunk weights read what each dimension's rings can carry: every
GPU sends the same share of the data along a dimension, so a ring moves at its slowest
link and the dimension at its slowest ring (``algo_torus._torus_rates``); a faster cable
is never read as the dimension's rate.

With those rates the phases' time is, per byte of n, ``sum_t max_j w_j c[j, t]``
(``c[j, t] = (s_a - 1)/s_a / (sides cut before) / r_a``, ``a = j + t``) exactly, as every
transfer is a neighbour's and crosses its one link; ``_torus_weights`` takes its least
over the weights (convex, piecewise linear: a vertex of its pieces), and that least only
falls as a rate rises. So raising one link's bandwidth never slows the torus algorithm:
where the link is not its dimension's slowest nothing is reweighted and no link's load
moves; where it is, the least over the weights can only fall.

Ideal calibration (alpha = 1 us a step, latencies 0), the torus builder's tori.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netmodel.collectives.algo_torus import _torus_grid, _torus_rates, _torus_weights
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import zero_latency
from topologies import build

ALPHA = 1e-6
GIB = 2**30
DIMS = ["2x2", "2x3", "2x4", "3x3", "3x4", "4x4", "2x2x2", "2x3x2", "3x3x2", "2x4x2",
        "3x4x2", "4x4x2"]


def _torus(dims: str):
    return zero_latency(build(f"torus:dims={dims},bandwidth=100e9"))


def _time(graph, op: str, nbytes: int, cal=None) -> float:
    p = graph.graph["gpus"]
    m = FabricCostModel(graph, calibration=cal or Calibration.ideal(ALPHA))
    return m.cost(op, nbytes, p, "torus").time


def test_slow_ring_binds_4x4():
    """4x4 of 25 GB/s cables (100 GB/s a GPU) with row 0's four cables (gpu0-gpu1 ...
    gpu3-gpu0, a ring of the second dimension) halved: r = (50, 25) GB/s (twice the
    slowest link), w proportional to r s/(s - 1): (2/3, 1/3). Per byte over GB/s:
    phase 1 (2/3)(3/4)/50 = (1/3)(3/4)/25 = 1/100, phase 2 max((2/3)(3/16)/25,
    (1/3)(3/16)/50) = 1/200: all-reduce 12 alpha + 3/100 n = 32.224 ms at 1 GiB. Reading
    the fastest ring (50, 50) kept (1/2, 1/2): phases 3/200 and 3/800, 12 alpha +
    3/80 n = 40.277 ms."""
    g = _torus("4x4")
    for i in range(4):
        g.edges[f"gpu{i}", f"gpu{(i + 1) % 4}"]["bandwidth"] /= 2
    group = tuple(f"gpu{i}" for i in range(16))
    sides, nbr = _torus_grid(g, group)
    rates = _torus_rates(g, group, sides, nbr)
    assert rates == [50e9, 25e9]
    assert _torus_weights(sides, rates) == pytest.approx([2 / 3, 1 / 3], rel=1e-12)
    hand = 12 * ALPHA + 3 / 100 * GIB / 1e9
    assert hand == pytest.approx(32.224e-3, rel=1e-4)
    assert 12 * ALPHA + 3 / 80 * GIB / 1e9 == pytest.approx(40.277e-3, rel=1e-4)
    assert _time(g, "all-reduce", GIB) == pytest.approx(hand, rel=1e-12)


def test_uniform_and_lost_cable_rates_unchanged():
    """Uniform tori keep their rates (twice a port; a side of 2 its one doubled cable), and
    a lost cable is left out (its ring's transfers are routed around), not read as 0."""
    g = _torus("2x4x2")
    group = tuple(f"gpu{i}" for i in range(16))
    sides, nbr = _torus_grid(g, group)
    # 6 ports of 100/6 GB/s; the sides of 2 have their two ports on one edge
    assert _torus_rates(g, group, sides, nbr) == pytest.approx([100e9 / 3] * 3, rel=1e-12)
    g.remove_edge("gpu0", "gpu1")
    assert _torus_rates(g, group, sides, nbr) == pytest.approx([100e9 / 3] * 3, rel=1e-12)


def test_equal_first_phase_unequal_sides_searched():
    """2x3x4 (6 ports a GPU: B = 36 GB/s, ports of 6, the side of 2 one cable of 12) with
    the cables of dimension 0, 1, 2 scaled by 1/2, 2/3, 3/4: r = (6, 8, 9) GB/s, so
    r_j s_j/(s_j - 1) = 12 along all three and the first phase alone gives 1/3 each. Per
    byte over 12 GB/s, c[j, t] = (1, 1, 1), (1/2, 1/3, 1/4), (1/6, 1/12, 1/8): 1/3 each
    takes 1/3 + 1/6 + 1/18 = 5/9; the side of 2 only halves its chunk, and the least is
    w = (3, 4, 4)/11 (phase 1 balanced on chunks 1, 2, phase 2's 3/22 on chunk 0, phase 3
    1/22): 6/11. All-reduce 18 alpha + 2 (6/11) n / 12 GB/s = 97.631 ms at 1 GiB (1/3
    each, as equal sides would be kept: 99.439 ms)."""
    g = zero_latency(build("torus:dims=2x3x4,bandwidth=36e9"))
    assert g.edges["gpu0", "gpu12"]["bandwidth"] == pytest.approx(12e9, rel=1e-12)
    assert g.edges["gpu0", "gpu1"]["bandwidth"] == pytest.approx(6e9, rel=1e-12)
    for u, v, d in g.edges(data=True):
        i, j = int(u[3:]), int(v[3:])
        dim = 0 if i // 12 != j // 12 else 1 if i // 4 != j // 4 else 2
        d["bandwidth"] *= [1 / 2, 2 / 3, 3 / 4][dim]
    group = tuple(f"gpu{i}" for i in range(24))
    sides, nbr = _torus_grid(g, group)
    rates = _torus_rates(g, group, sides, nbr)
    assert rates == pytest.approx([6e9, 8e9, 9e9], rel=1e-12)
    w = _torus_weights(sides, rates)
    assert w == pytest.approx([3 / 11, 4 / 11, 4 / 11], rel=1e-9)
    hand = 18 * ALPHA + 2 * 6 / 11 * GIB / 12e9
    assert hand == pytest.approx(97.631e-3, rel=1e-5)
    assert 18 * ALPHA + 2 * 5 / 9 * GIB / 12e9 == pytest.approx(99.439e-3, rel=1e-5)
    assert _time(g, "all-reduce", GIB) == pytest.approx(hand, rel=1e-9)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(dims="2x4", scales=None, index=None, factor=2.0, op="all-reduce", nbytes=2**24)
@given(dims=st.sampled_from(DIMS),
       scales=st.none() | st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]),
                                   min_size=64, max_size=64),
       index=st.integers(0, 10**6), factor=st.sampled_from([1.25, 1.5, 2.0, 4.0]),
       op=st.sampled_from(["all-reduce", "reduce-scatter", "all-gather"]),
       nbytes=st.sampled_from([2**16, 2**24, GIB]))
def test_faster_link_never_slows_torus(dims, scales, index, factor, op, nbytes):
    """Raising one link's bandwidth (``index`` picks it; None: gpu0-gpu4) of a static torus
    up to 4x4x2, its links as built or each scaled apart (``scales``, so that a dimension's
    slowest ring may be the one raised), never slows the torus algorithm."""
    g0 = _torus(dims)
    edges = sorted(g0.edges())
    if scales is not None:
        for e, f in zip(edges, scales * (len(edges) // len(scales) + 1), strict=False):
            g0.edges[e]["bandwidth"] *= f
    edge = ("gpu0", "gpu4") if index is None else edges[index % len(edges)]
    g1 = g0.copy()
    g1.edges[edge]["bandwidth"] *= factor
    assert _time(g1, op, nbytes) <= _time(g0, op, nbytes) * (1 + 1e-12)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=st.sampled_from(DIMS), index=st.integers(0, 10**6),
       nbytes=st.sampled_from([2**16, 2**24, GIB]))
def test_faster_link_never_slows_torus_shipped_calibration(dims, index, nbytes):
    """The same on the builder's uniform tori with the shipped calibration: one cable
    doubled leaves every dimension's slowest ring as it was, so nothing is reweighted."""
    g0 = zero_latency(build(f"torus:dims={dims},bandwidth=100e9"))
    edge = sorted(g0.edges())[index % g0.number_of_edges()]
    g1 = g0.copy()
    g1.edges[edge]["bandwidth"] *= 2
    cal = default_calibration()
    assert _time(g1, "all-reduce", nbytes, cal) <= _time(g0, "all-reduce", nbytes, cal) * (
        1 + 1e-12)
