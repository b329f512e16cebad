"""How many copies of an instance's circuits an optical circuit-switched (OCS) fabric's
planes carry, and which OCS plane each circuit of each copy takes.

:func:`most_copies` bounds the copies by arithmetic (each GPU's circuits a copy times the
copies within its ports; a group's circuits on one OCS at most ``n // 2``, or on a
degraded cell a largest matching of them among the GPUs cabled to it);
:func:`circuit_options` lists the circuits of every instance for each copy count worth
trying, most first, plane by plane where a plain listing would fall short (odd rings, odd
tori, cells with fibres down: the solvers below it), for
:func:`netmodel.study.scenario_fabric.instance_graph` to set with
:func:`topologies.optical.realize`; :func:`torus_sides` gives a torus's shape. A group's
ports and shared planes, and the copies of alike instances' circuits across a cell, are
:mod:`netmodel.study.circuit_copies`'; the plane-by-plane colourings,
:mod:`netmodel.study.circuit_colouring`'.

>>> most_copies([(0, 1), (1, 2), (2, 0)], ports=64, planes=64)
21
"""

from __future__ import annotations

from itertools import chain
from typing import TYPE_CHECKING

import networkx as nx

from netmodel.study.circuit_colouring import (
    _odd_ring_on_planes,
    _ring_by_planes,
    _ring_on_planes,
    _torus_by_planes,
    _torus_on_planes,
)

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterator, Sequence

__all__ = ["circuit_options", "most_copies", "torus_sides"]


def most_copies(pairs: Sequence[tuple], ports: int, planes: int | None = None,
                cabled: Sequence[frozenset] | None = None) -> int:
    """The most parallel copies of the circuit ``pairs`` (one group's, each pair once a
    copy) that the OCS planes can carry: a GPU with ``d`` circuits a copy holds ``r x d``
    ports, so ``r <= ports // d`` (``d`` the fewest circuits of any of its GPUs; a ring
    and a torus give every GPU as many); and the circuits one OCS plane carries within
    the group share no GPU (each holds a port of both ends on that plane), so a plane
    carries at most ``n // 2`` of them among the group's ``n`` GPUs, and ``r x E``
    circuits (``E`` a copy) need ``r x E <= planes x (n // 2)``, ``planes`` the OCS the
    group's GPUs reach together (:func:`~netmodel.study.circuit_copies.ocs_planes`; None:
    that bound is not applied).
    Given ``cabled`` (each OCS plane's GPUs of the group cabled to it: a degraded cell), a
    plane carries at most a largest matching of the circuits among its own: ``r x E`` is
    at most their sum (a plane without one member of a 3x3 torus carries 4, without two
    3; a 4-ring's plane of two members not neighbours carries none).
    Copy counts above this cannot be set (:func:`topologies.optical.realize` refuses
    them); it may still refuse this one, the colouring found being no proof of the best.
    0 where not even one copy fits.

    A triangle's 3 circuits a copy all share a GPU two by two: each copy takes 3 planes.
    An even ring's circuits fit 2 a plane a GPU, ports/2 copies:

    >>> tri = [("a", "b"), ("b", "c"), ("c", "a")]
    >>> most_copies(tri, 1024, 1024), most_copies(tri, 1024)
    (341, 512)
    >>> most_copies([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")], 1024, 1024)
    512

    A 4-ring on 4 planes, two members off the first: that plane carries 1 circuit, 7 in all,
    so 1 copy, not 2; none where they are not neighbours:

    >>> ring = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    >>> every = frozenset("abcd")
    >>> [most_copies(ring, 4, 4, [on, every, every, every]) for on in (every, every - {"c", "d"})]
    [2, 1]
    >>> most_copies(ring, 5, 5, [frozenset("ac"), *[every] * 4])
    2
    """
    ends: dict = {}
    for pair in pairs:
        for end in pair:
            ends[end] = ends.get(end, 0) + 1
    if not ends:
        return 0
    most = ports // min(ends.values())
    if planes is not None:
        most = min(most, planes * (len(ends) // 2) // len(pairs))
    if cabled is not None:
        circuits = nx.Graph(pairs)
        carry: dict[frozenset, int] = {}
        for on in cabled:
            if on not in carry:
                carry[on] = _largest_matching(circuits, pairs, on)
        most = min(most, sum(carry[on] for on in cabled) // len(pairs))
    return most


def _largest_matching(circuits: nx.Graph, pairs: Sequence[tuple], on: frozenset) -> int:
    """The most of ``pairs`` (the edges of ``circuits``) among the GPUs ``on`` that share
    no GPU: taken in order where that reaches half of them (a ring's, a torus's on a
    whole plane), else a largest matching of them (networkx's blossom).

    >>> ring = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    >>> [_largest_matching(nx.Graph(ring), ring, frozenset(on)) for on in ("abcd", "abc", "ac")]
    [2, 1, 0]
    """
    used: set = set()
    for u, v in pairs:
        if u in on and v in on and u not in used and v not in used:
            used.update((u, v))
    if len(used) // 2 == len(on) // 2:
        return len(used) // 2
    return len(nx.max_weight_matching(circuits.subgraph(on), maxcardinality=True))


#: The fewest optical ports a GPU sets a torus's circuits on (one to each of its four
#: neighbours); with fewer, :func:`circuit_options` sets a ring.
TORUS_PORTS = 4


def circuit_options(circuits: str | None, groups: Sequence[Sequence[Hashable]],
                    ports: int, planes: int | None = None,
                    cabled: Sequence[frozenset] | None = None) -> Iterator[list[tuple]]:
    """The circuit pairs to try, most parallel copies first, for setting ``circuits``
    (``"torus"`` or a ring) among the GPUs of every group of ``groups`` (one size) with
    ``ports`` optical ports a GPU (:func:`~netmodel.study.scenario_fabric.instance_graph`): a torus of ports/4 copies where
    the size has a 2D factorisation, ports >= 4 and (given ``planes``) one copy fits the
    planes, else a ring of ports/2 (ports for a pair), down to one copy (a torus's
    counts all refused, on a degraded cell, are followed by the ring's). Given ``planes``, the OCS the first group's GPUs reach
    together (:func:`~netmodel.study.circuit_copies.ocs_planes`), the first option is the most copies that can be
    coloured onto them (:func:`most_copies`: an odd ring of ``n`` takes ``n`` circuits a
    copy on planes that carry ``(n - 1) / 2`` each), not more: the counts above it are
    refused, each after a full search (a triangle of 1,024 ports: 512 down to 341). An
    odd ring of 5 or more is also listed plane by plane at the most copies ``ports``
    carry, first where that is above ports/3 (in ring order the colouring stops there:
    :func:`_ring_by_planes`); a torus of odd sides (an odd number of GPUs) is listed plane
    by plane first at every count (:func:`_torus_by_planes`: it reaches the bound, where
    in order the colouring fell a copy short: a 3x3 on 64 ports set 13 of 14). Each option is made when the one before it has failed, not
    all at once (every copy count's pairs: ports x ports / 2 pairs a group, 4.3 GB for
    pairs of GPUs of 4,096 ports). Given ``cabled`` (for each OCS plane, in the order
    every GPU's ports list them, the GPUs of the one group cabled to it: a degraded
    cell), a ring of 3 or more that some plane does not reach whole is listed for its
    planes first at every count (:func:`_ring_on_planes`: a 5-ring with a port down, 1
    copy of 2 in ring order), and so is a torus (:func:`_torus_on_planes`: a 3x3 on 18
    ports with two fibres down, 3 copies of 4 as a whole cell lists them); an odd ring's
    near-perfect matchings given out likewise follow its other listings at each count
    (:func:`_odd_ring_on_planes`: a 13-ring on 11 ports with a fibre down, 4 copies of
    5 without them); the first
    count is then also bounded by what each plane's GPUs can carry
    (:func:`most_copies`).

    >>> [len(o) for o in circuit_options("ring", [["a", "b", "c", "d"]], 4)]
    [8, 4]
    >>> [len(o) for o in circuit_options("ring", [["a", "b", "c"]], 6, planes=6)]
    [6, 3]

    A 3x3 torus takes 18 circuits a copy on planes that carry 4 of them each: on 4 ports
    the first option is its ring (9 circuits), as under 4 ports; on 5, the torus:

    >>> nine = [[f"g{i}" for i in range(9)]]
    >>> [len(next(circuit_options("torus", nine, p, p))) for p in (4, 5)]
    [9, 18]
    """
    from topologies.optical import circuits_for

    size = len(groups[0])
    sides = torus_sides(size)
    whole = frozenset(groups[0])
    short = size > 2 and len(groups) == 1 and cabled is not None and \
        any(whole - on for on in cabled)
    if circuits == "torus" and sides and ports >= TORUS_PORTS:
        shape = f"torus:{sides[0]}x{sides[1]}"
        tori = [circuits_for(shape, list(gr)) for gr in groups]
        # a torus not one copy of which fits the planes (3x3 on 4: 18 circuits, 4 a
        # plane) is refused by any colouring; its ring fits (9 circuits, 4 a plane)
        fit = None if planes is None and cabled is None else \
            most_copies(tori[0], ports, planes, cabled)
        if fit is None or fit:
            start = ports // 4 if fit is None else min(ports // 4, fit)

            def torus_options() -> Iterator[list[tuple]]:
                for r in range(start, 0, -1):
                    if short:   # a plane misses a member: the whole cell's planes given out
                        on_planes = _torus_on_planes(list(groups[0]), sides, r, cabled)
                        if on_planes:
                            yield on_planes
                    if size % 2:   # both sides odd: listed plane by plane first, as an odd ring
                        planed = [p for gr in groups for p in _torus_by_planes(list(gr), sides, r)]
                        if planed:
                            yield planed
                    yield [p for torus in tori for p in torus * r]

            # a degraded cell may refuse every torus count where a ring fits (a 2x3 on
            # 5 ports with 3 fibres down: no torus, a ring of 2 copies): the ring's after
            def ring_after() -> Iterator[list[tuple]]:   # made only where reached
                yield from circuit_options("ring", groups, ports, planes, cabled)

            return chain(torus_options(), ring_after())
    rings = [circuits_for("ring", list(gr)) if size > 2 else [tuple(gr)] for gr in groups]
    start = _bounded(max(ports if size == 2 else ports // 2, 1), rings[0], ports, planes,
                     cabled)
    # an odd ring of 5 or more: the colouring of the pairs in ring order stops at ports/3
    # copies; listed plane by plane (_ring_by_planes) they take the most the ports carry,
    # tried first where that is more (a refused colouring is the slow part)
    by_planes = most_copies(rings[0], ports, ports) if size >= 5 and size % 2 else 0

    def options() -> Iterator[list[tuple]]:
        for r in range(start, 0, -1):
            if short:
                on_planes = _ring_on_planes(rings[0], r, cabled)
                if on_planes:
                    yield on_planes
            in_order = [p for ring in rings for p in ring for _ in range(r)]
            if r != by_planes:
                yield in_order
            else:
                planed = [p for ring in rings for p in _ring_by_planes(ring, r)]
                yield from (planed, in_order) if r > ports // 3 else (in_order, planed)
            if short and size >= 5 and size % 2:   # an odd ring's matchings given out
                given = _odd_ring_on_planes(rings[0], r, cabled)
                if given:
                    yield given

    return options()


def _bounded(start: int, copy: Sequence[tuple], ports: int, planes: int | None,
             cabled: Sequence[frozenset] | None = None) -> int:
    """``start`` copies, or fewer where :func:`most_copies` of one group's ``copy`` says so
    (at least 1: one copy is tried, and refused with realize's reason, where none fits)."""
    if planes is None and cabled is None:
        return start
    return min(start, max(most_copies(copy, ports, planes, cabled), 1))


def torus_sides(n: int) -> tuple[int, int] | None:
    """The most square ``a x b == n`` with ``2 <= a <= b``, or None."""
    best = None
    for a in range(2, int(n ** 0.5) + 1):
        if n % a == 0:
            best = (a, n // a)
    return best
