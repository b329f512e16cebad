"""An OCS instance's circuits start at the most copies the planes can carry.

A group of ``n`` GPUs wired to the same ``P`` OCS planes: a plane carries at most
``n // 2`` of the group's circuits (they share no GPU on it), so ``r`` copies of a ring's
``n`` circuits need ``r x n <= P x (n // 2)``, and every GPU's ``2 r`` circuits ``2 r <= P``.
A triangle: ``3 r <= P``. Counts above are refused by the colouring, each after a full
search (a triangle of 1,024 ports tried 512 down to 341), so they are not tried. An odd
ring of 5 or more reaches the bound when its circuits are listed plane by plane (in ring
order the colouring stopped at ``P // 3``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import topologies.optical as optical
from compute.errors import UserError
from netmodel.study.circuit_colouring import _ring_by_planes
from netmodel.study.circuit_planes import circuit_options, most_copies
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric, instance_graph
from topologies.optical import circuits_for, ocs, realize


def _ring(n):
    return circuits_for("ring", [f"g{i}" for i in range(n)]) if n > 2 else [("g0", "g1")]


@pytest.mark.parametrize(("n", "ports", "copies"), [
    (2, 12, 12),   # a pair: one circuit a port
    (3, 12, 4),    # a triangle: 3 planes a copy
    (4, 12, 6),    # an even ring: 2 ports a GPU a copy, 2 circuits a plane
    (5, 12, 4),    # 5 r <= 12 x 2
    (7, 12, 5),    # 7 r <= 12 x 3
    (3, 2, 0),     # not one triangle on 2 planes
])
def test_most_copies_by_hand(n, ports, copies):
    assert most_copies(_ring(n), ports, ports) == copies
    # without the planes, the ports alone: one copy a port a GPU's circuit
    assert most_copies(_ring(n), ports) == ports // (1 if n == 2 else 2)


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("ports", [2, 3, 4, 5, 6, 8])
def test_more_copies_than_the_bound_are_refused(n, ports):
    """The colouring (realize, which knows nothing of the bound) refuses one copy more."""
    bound = most_copies(_ring(n), ports, ports)
    fabric = ocs(gpus=n, ports=ports, ocs_ports=max(n, 2))
    with pytest.raises(UserError):
        realize(fabric, circuits_for("ring", list(fabric)[:n]) * (bound + 1))


def test_options_start_at_the_bound():
    assert [len(o) for o in circuit_options("ring", [["a", "b", "c"]], 12, planes=12)] \
        == [12, 9, 6, 3]
    # no planes given: every count from ports / 2, as before
    assert len(next(iter(circuit_options("ring", [["a", "b", "c"]], 12)))) == 18


def test_triangle_instances_colour_once(monkeypatch):
    """lite-ocs at 12 ports a Lite, instances of 3: 42 triangles of 4 copies (12 / 3), 504
    circuits, found by the first colouring tried (6 and 5 copies were tried and refused
    before: 3 colourings)."""
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return realize(*args, **kwargs)

    monkeypatch.setattr(optical, "realize", counted)
    s = replace(get_scenario("lite-ocs"), circuits="ring")   # shipped: the faster layout
    s = replace(s, fabric={**s.fabric, "ports": 12})
    g = instance_graph(s, build_fabric(s), 3)
    assert len(calls) == 1
    assert g.graph["circuits"] == 128 // 3 * 3 * 4 == 504
    assert {d["links"] for _, _, d in g.edges(data=True)} == {4}


@pytest.mark.parametrize("n", [5, 7, 9, 11])
@pytest.mark.parametrize("ports", [2, 3, 4, 5, 6, 7, 8, 10, 13, 16])
def test_odd_rings_reach_the_bound(n, ports):
    """Listed plane by plane, an odd ring's circuits take as many copies as the bound
    allows (and one more is refused, above): the bound is exact for rings."""
    bound = most_copies(_ring(n), ports, ports)
    if bound == 0:
        return
    fabric = ocs(gpus=n, ports=ports, ocs_ports=n)
    ring = circuits_for("ring", list(fabric)[:n])
    assert realize(fabric, _ring_by_planes(ring, bound)).graph["circuits"] == bound * n


def test_odd_ring_instances_take_the_most_copies():
    """lite-ocs at 10 ports a Lite, instances of 5: a ring's 5 circuits a copy on planes
    that carry 2 each, 5 r <= 10 x 2, so 4 copies (the colouring in ring order stopped at
    3 = ports/3, as a triangle's): 25 rings x 5 x 4 = 500 circuits."""
    s = get_scenario("lite-ocs")
    s = replace(s, fabric={**s.fabric, "ports": 10})
    g = instance_graph(s, build_fabric(s), 5)
    assert {d["links"] for _, _, d in g.edges(data=True)} == {4}
    assert g.graph["circuits"] == 128 // 5 * 5 * 4 == 500
