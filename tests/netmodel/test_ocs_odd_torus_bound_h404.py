"""A torus of odd sides reaches the OCS copy bound.

``r`` copies of an ``a x b`` torus (``n = a b`` odd, ``2n`` circuits a copy) on ``P``
planes: a plane's circuits share no GPU, so it carries ``m = (n - 1) / 2`` of them, and
``r x 2n <= P x m`` (:func:`most_copies`). The colouring in pair order fell a copy short
of it (a 3x3 on 64 ports: 13 copies, the bound 14 = floor(64 x 4 / 18)); listed plane by
plane over two Hamiltonian cycles (:func:`_torus_by_planes`) every count reaches it. A set
that realize accepts holds no GPU's port twice (its schema check), so each count reached
is proof that the bound is reachable there: with the exhaustive search of
test_review_ocs_copies_h389 (the bound exact up to 8 planes) the bound is the exact most.
"""

from __future__ import annotations

from collections import Counter

import pytest

from compute.errors import UserError
from netmodel.study.circuit_colouring import _torus_by_planes, _torus_cycles
from netmodel.study.circuit_copies import ocs_planes
from netmodel.study.circuit_planes import circuit_options, most_copies, torus_sides
from topologies.optical import circuits_for, ocs, realize


def _set(n, ports):
    """Copies of the torus of ``n`` set on ``n`` GPUs of ``ports`` ports: what
    circuit_options offers, the first that realize accepts."""
    fabric = ocs(gpus=n, ports=ports, ocs_ports=n, gpu="Lite")
    gpus = [g for g in fabric if fabric.nodes[g]["kind"] == "gpu"]
    for pairs in circuit_options("torus", [gpus], ports, ocs_planes(fabric, gpus)):
        try:
            out = realize(fabric, pairs)
        except UserError:
            continue
        return out.graph["circuits"] // (2 * n)
    return 0


def test_a_3x3_on_64_ports_takes_14_copies():
    # 64 planes x 4 circuits = 256 >= 14 x 18 = 252 (15 x 18 = 270 does not fit)
    assert 14 * 18 <= 64 * 4 < 15 * 18
    assert _set(9, 64) == 14   # was 13


@pytest.mark.parametrize("n", [9, 15, 21, 25])
def test_every_count_reaches_the_bound(n):
    a, b = torus_sides(n)
    copy = circuits_for(f"torus:{a}x{b}", [f"g{i}" for i in range(n)])
    for ports in range(4, 70):
        bound = most_copies(copy, ports, ports)
        assert bound == min(ports // 4, ports * (n // 2) // (2 * n))
        if bound:
            assert _set(n, ports) == bound, (n, ports)


@pytest.mark.parametrize(("sides", "copies"), [((3, 3), 6), ((3, 5), 4), ((3, 7), 5),
                                               ((5, 5), 9), ((5, 5), 11), ((3, 9), 1)])
def test_listed_planes_share_no_gpu_and_hold_every_circuit(sides, copies):
    """The listing's own invariant, without realize: every torus circuit ``copies``
    times, and a first fit over it takes ceil(copies x 2n / m) planes, the bound's."""
    n = sides[0] * sides[1]
    m = n // 2
    members = [f"g{i}" for i in range(n)]
    listed = _torus_by_planes(members, sides, copies)
    torus = Counter(frozenset(p) for p in circuits_for(f"torus:{sides[0]}x{sides[1]}",
                                                       members))
    assert Counter(frozenset(p) for p in listed) == {e: copies * c for e, c in torus.items()}
    # first fit, as realize colours: each circuit on the first plane free at both ends
    held: dict = {}
    for u, v in listed:
        plane = 0
        while plane in held.get(u, ()) or plane in held.get(v, ()):
            plane += 1
        held.setdefault(u, set()).add(plane)
        held.setdefault(v, set()).add(plane)
    assert 1 + max(max(p) for p in held.values()) == -(-copies * 2 * n // m)


@pytest.mark.parametrize("sides", [(3, 3), (3, 5), (5, 5), (5, 7), (7, 9), (9, 9)])
def test_two_hamiltonian_cycles_make_the_torus(sides):
    a, b = sides
    n = a * b
    one, other = _torus_cycles(a, b)
    edges = Counter()
    for cycle in (one, other):
        assert sorted(cycle) == list(range(n))   # every member once: Hamiltonian
        edges.update(frozenset((cycle[i], cycle[(i + 1) % n])) for i in range(n))
    assert edges == Counter(frozenset(p) for p in circuits_for(f"torus:{a}x{b}",
                                                              list(range(n))))
