"""An OCS cell whose circuits are set as a torus is costed with the torus algorithm
(netmodel/collectives/algo_torus.py, ``_circuit_torus``), its copies per dimension its
bandwidth there; a cell of ring circuits keeps the ring.

Hand values (ideal calibration, alpha = 1 us a step, every latency 0, n = 1 GiB, one
circuit B = 25 GB/s). A 4x4 torus of circuits, ``r_d`` copies along dimension ``d``: a GPU
sends ``2 r_d B`` along it, half each way. The all-reduce is ``k = 2`` reduce-scatter phases
and their 2 all-gather mirrors of ``R = 3`` steps each: ``12 alpha`` plus twice the
reduce-scatter's bytes. Chunk ``j`` (share ``w_j`` of n) moves ``w_j (3/4) n`` along
dimension ``j`` in phase 1 and ``w_j (1/4)(3/4) n`` along the other in phase 2, each phase
as long as its slower chunk:

* equal copies ``r``: ``w = 1/2``, RS = ``(3/8 + 3/32) n / (2 r B) = (15/16) n / (4 r B)``,
  AR = ``12 alpha + (15/32) n / (r B)``: 20.1447 ms at ``r = 1``, 10.0783 ms at ``r = 2``
  (the injection bound ``2(p-1)/p n / (2 k r B)``: every one of a GPU's ``4 r`` circuits
  busy);
* ``r_0 = 1``, ``r_1 = 2`` (a cell short of a copy along one dimension): with ``x = w_0``,
  RS = ``max(3x/8, 3(1-x)/16) + max(3x/128, 3(1-x)/64)`` in units of ``n/B``, least at
  ``x = 1/3`` (below it both maxima are their second terms, falling in ``x``; above it
  the first term of the first rises faster than the second falls):
  ``1/8 + 1/16 = 3/16``, AR = ``12 alpha + (3/8) n / B`` = 16.1181 ms, between the two.

Before this, every one of these cells was costed as a ring of circuits (``torus`` not
applicable: no ``dims``), e.g. 1 copy: bidirectional-ring over circuits whose ring order
leaves 4 hops of 16 two circuits long.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netmodel.collectives.algorithms import NotApplicable
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from tests.netmodel.fabric_helpers import zero_latency
from topologies import build
from topologies.optical import ocs, realize

ALPHA = 1e-6
N = 2**30
B = 25e9


def _torus_pairs(a: int, b: int, r0: int, r1: int) -> list[tuple[str, str]]:
    """An a x b torus's circuits over gpu0 ... (row-major, as circuits_for numbers them):
    each row circuit ``r1`` times, each column circuit ``r0`` times (a side of 2 lists
    its one neighbour from both sides: two circuits, as the torus builder's doubled
    cable)."""
    p = a * b
    g = [f"gpu{i}" for i in range(p)]
    rows = [(g[i], g[i // b * b + (i % b + 1) % b]) for i in range(p)]
    cols = [(g[i], g[(i + b) % p]) for i in range(p)]
    return rows * r1 + cols * r0


def _cell(a: int, b: int, r0: int, r1: int, spare: int = 0, ideal: bool = True):
    """A cost model of an OCS cell of a x b GPUs whose circuits are that torus (``r0``
    copies along the columns, ``r1`` along the rows), ports of B; ideal: latencies 0."""
    ports = 2 * (r0 + r1) + spare
    graph = realize(ocs(gpus=a * b, ports=ports, bandwidth=ports * B),
                    _torus_pairs(a, b, r0, r1))
    if ideal:
        return FabricCostModel(zero_latency(graph), calibration=Calibration.ideal(ALPHA))
    return FabricCostModel(graph, calibration=default_calibration())


@pytest.mark.parametrize("r0, r1, hand", [
    (1, 1, 12 * ALPHA + 15 / 32 * N / B),
    (2, 2, 12 * ALPHA + 15 / 64 * N / B),
    (1, 2, 12 * ALPHA + 3 / 8 * N / B),
    (2, 1, 12 * ALPHA + 3 / 8 * N / B),
])
def test_torus_cell_hand_values(r0, r1, hand):
    m = _cell(4, 4, r0, r1)
    r = m.cost("all-reduce", N, 16)
    assert r.algorithm == "torus"
    assert r.time == pytest.approx(hand, rel=1e-9)
    assert r.busbw == pytest.approx(2 * 15 / 16 * N / hand, rel=1e-9)


def test_torus_cell_hand_figures():
    """The closed forms above, as numbers (ms)."""
    assert 12 * ALPHA + 15 / 32 * N / B == pytest.approx(20.1447e-3, rel=1e-5)
    assert 12 * ALPHA + 15 / 64 * N / B == pytest.approx(10.0783e-3, rel=1e-5)
    assert 12 * ALPHA + 3 / 8 * N / B == pytest.approx(16.1181e-3, rel=1e-5)


def test_torus_cell_is_the_static_torus():
    """One copy a dimension of circuits of B costs what a 4x4 torus of cables of B does
    (the torus builder's, bandwidth 4 B a GPU over its 4 cables), both ideal."""
    cell = _cell(4, 4, 1, 1)
    static = FabricCostModel(zero_latency(build(f"torus:dims=4x4,bandwidth={4 * B:g}")),
                             calibration=Calibration.ideal(ALPHA))
    for op in ("all-reduce", "reduce-scatter", "all-gather"):
        assert cell.cost(op, N, 16, "torus").time == pytest.approx(
            static.cost(op, N, 16, "torus").time, rel=1e-12)


def test_ocs_spec_torus_whole_fabric():
    """``ocs:...,logical=torus:AxB[xC]`` (the CLI's spec): the torus algorithm on the
    whole; a row of 4 (one dimension) is left to the rings; a plane of a 3D torus of
    circuits is a sub-torus as on the torus builder's."""
    m = FabricCostModel(zero_latency(build(f"ocs:gpus=16,ports=4,bandwidth={4 * B:g},"
                                           "logical=torus:4x4")),
                        calibration=Calibration.ideal(ALPHA))
    assert m.cost("all-reduce", N, 16).algorithm == "torus"
    assert m.cost("all-reduce", N, 16).time == pytest.approx(12 * ALPHA + 15 / 32 * N / B,
                                                             rel=1e-9)
    with pytest.raises(NotApplicable):
        m.compiled("all-reduce", "torus", tuple(f"gpu{i}" for i in range(4)))
    # a 2x4x2 torus of circuits over 16: gpu0..gpu7 (the first plane, 2x4 and its
    # side of 2) is a sub-torus as on the torus builder's 2x4x2
    spec = f"bandwidth={6 * B:g}"
    sub = tuple(f"gpu{i}" for i in range(0, 16, 2))
    cell = FabricCostModel(zero_latency(build(f"ocs:gpus=16,ports=6,{spec},"
                                              "logical=torus:2x4x2")),
                           calibration=Calibration.ideal(ALPHA))
    static = FabricCostModel(zero_latency(build(f"torus:dims=2x4x2,{spec}")),
                             calibration=Calibration.ideal(ALPHA))
    assert cell.cost("all-reduce", N, sub, "torus").time == pytest.approx(
        static.cost("all-reduce", N, sub, "torus").time, rel=1e-12)


def test_ring_cell_keeps_the_ring():
    """Ring circuits (gpu3-gpu4 among them) are no torus: torus does not apply, and the
    cell's cost is the ring's as before."""
    for graph in (realize(ocs(gpus=16, ports=4, bandwidth=4 * B), "ring"),
                  build("ocs:gpus=16,ports=4,logical=ring")):
        m = FabricCostModel(graph, calibration=default_calibration())
        with pytest.raises(NotApplicable, match="circuits set as a torus"):
            m.compiled("all-reduce", "torus", m.group(16))
        assert m.cost("all-reduce", N, 16).algorithm != "torus"


def test_not_a_cell_of_its_own():
    """A group with a circuit out of it, or a switch, is not a torus cell."""
    m = _cell(4, 4, 1, 1)
    with pytest.raises(NotApplicable):   # gpu0..gpu7: circuits to gpu8..gpu15
        m.compiled("all-reduce", "torus", tuple(f"gpu{i}" for i in range(8)))
    flat = FabricCostModel(build("single-switch:n=16"), calibration=default_calibration())
    with pytest.raises(NotApplicable):
        flat.compiled("all-reduce", "torus", flat.group(16))


def test_lite_ocs_torus_instances():
    """lite-ocs with circuits = "torus": its instances of 16 (4x4, one copy on 4 ports)
    take the torus, as fast as the ring scenario's ring of 2 copies (the same 4 circuits
    a Lite) or faster; instances of 9 (3x3 fits no copy on 4 planes: a ring) keep the ring."""
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_fabric import build_fabric, scenario_calibration, scenario_model

    ring = replace(get_scenario("lite-ocs"), circuits="ring")   # shipped: the faster
    torus = replace(ring, circuits="torus")
    g = build_fabric(ring)
    cal = scenario_calibration(ring)
    t = scenario_model(torus, g, 16, cal).cost("all-reduce", N, 16)
    r = scenario_model(ring, g, 16, cal).cost("all-reduce", N, 16)
    assert t.algorithm == "torus" and r.algorithm != "torus"
    assert t.time <= r.time
    nine = scenario_model(torus, g, 9, cal)
    assert nine.cost("all-reduce", N, 9).algorithm != "torus"


_SIDES = st.sampled_from([(2, 2), (2, 3), (2, 4), (3, 3), (3, 4), (4, 4), (2, 5), (4, 5)])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sides=_SIDES, r0=st.integers(1, 3), r1=st.integers(1, 3),
       more=st.sampled_from([0, 1]), nbytes=st.sampled_from([2**16, 2**22, 2**26, 2**30]),
       ideal=st.booleans())
def test_more_copies_never_slower_and_torus_beats_ring(sides, r0, r1, more, nbytes, ideal):
    """One more copy along a dimension never makes the torus all-reduce slower, and on a
    torus cell the torus is never slower than a ring (one-way or both ways round) on the
    same circuits. (Not asked of ``auto``: its ``tree`` on a 3x4 cell, ideal, 64 KiB,
    takes 10.37 us with one copy a dimension and 10.59 us with the columns doubled.)"""
    a, b = sides
    p = a * b
    # spare ports: an odd ring takes 3 planes for 2 copies (Shannon: 3/2 of a GPU's
    # circuits always do), so the colouring never refuses a cell
    base = _cell(a, b, r0, r1, spare=r0 + r1 + 1, ideal=ideal)
    bigger = _cell(a, b, r0 + more, r1 + 1 - more, spare=r0 + r1 + 1, ideal=ideal)
    t = base.cost("all-reduce", nbytes, p, "torus").time
    assert bigger.cost("all-reduce", nbytes, p, "torus").time <= t * (1 + 1e-12)
    for ring in ("ring", "bidirectional-ring"):
        assert t <= base.cost("all-reduce", nbytes, p, ring).time * (1 + 1e-12)
