"""The circuits of an instance's copies coloured onto optical circuit-switched (OCS)
planes one plane at a time, where a plain listing of the copies falls short: odd rings
(:func:`_ring_by_planes`), tori of odd sides (:func:`_torus_by_planes`), and degraded
cells whose planes some GPUs are not cabled to (:func:`_ring_on_planes`,
:func:`_odd_ring_on_planes`, :func:`_torus_on_planes`, matchings given out by
:func:`_matchings_on_planes`). Split from :mod:`netmodel.study.circuit_planes`, whose
:func:`~netmodel.study.circuit_planes.circuit_options` lists these among the copy counts
worth trying.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterable, Sequence


def _odd_ring_on_planes(ring: Sequence[tuple], copies: int,
                        cabled: Sequence[frozenset]) -> list[tuple]:
    """``copies`` of each circuit of the odd ``ring`` (``n >= 5`` pairs in ring order, pair
    ``i`` joining member ``i`` to ``i + 1``) on a degraded cell's planes (``cabled``: as
    for :func:`_ring_on_planes`), as a degraded torus's are set: a whole cell's listing
    of near-perfect matchings (``M_j`` leaves out member ``j``: pairs ``j + 1, j + 3,
    ..., j + n - 2``; with ``m = (n - 1) / 2``, ``k = copies mod m`` and the leftover
    pairs ``L = 0, 2, ..., 2k - 2``, ``M_j`` taken ``(copies - k) / m + L[j - 1] + L[j]``
    times holds each pair ``copies - L`` times, and one plane more holds ``L``) given out
    by :func:`_matchings_on_planes`. [] where that finds no way (not a proof).

    A 5-ring tripled on 8 planes, member a off the first and e off the last: the two
    planes take matchings leaving out their member:

    >>> ring = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")]
    >>> every = frozenset("abcde")
    >>> listed = _odd_ring_on_planes(ring, 3, [every - {"a"}, *[every] * 6, every - {"e"}])
    >>> len(listed), listed[:2], listed[-2:]
    (15, [('b', 'c'), ('d', 'e')], [('a', 'b'), ('c', 'd')])
    """
    left = range(0, 2 * (copies % (len(ring) // 2)), 2)
    planes = _cycle_matchings(ring, copies, left)
    if left:
        planes.append([ring[i] for i in left])
    return _matchings_on_planes(planes, cabled)


def _cycle_matchings(pairs: Sequence[tuple], copies: int,
                     left: Iterable[int]) -> list[list[tuple]]:
    """The near-perfect matchings of an odd cycle (``pairs``: its ``n`` circuits in cycle
    order, pair ``i`` joining member ``i`` to ``i + 1``) that hold each pair ``copies``
    times but the ``left`` ones (indices, none two adjacent), which they hold one time
    fewer: ``M_j``, which leaves out member ``j`` (pairs ``j + 1, j + 3, ..., j + n - 2``),
    taken ``copies // m + L[j - 1] + L[j]`` times (``m = n // 2``, ``L[i]`` 1 where pair
    ``i`` is left over), in ``j`` order; ``copies mod m`` pairs left over make the count
    whole. A degraded odd ring's (:func:`_odd_ring_on_planes`) and an odd torus's rings'
    (:func:`_torus_planes`) listings.

    A 5-cycle 3 times (m = 2: 3 mod 2 = 1 pair left over, pair 0): M_0 and M_1 (the two
    beside pair 0) twice, the others once; pair 0 twice (in M_2 and M_4), the rest 3
    times:

    >>> cycle = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")]
    >>> planes = _cycle_matchings(cycle, 3, [0])
    >>> len(planes), [sum(p in plane for plane in planes) for p in cycle]
    (7, [2, 3, 3, 3, 3])
    """
    n = len(pairs)
    m = n // 2
    held = [0] * n
    for i in left:
        held[i] = 1
    return [[pairs[(j + 1 + 2 * t) % n] for t in range(m)]
            for j in range(n) for _ in range(copies // m + held[j - 1] + held[j])]


def _ring_on_planes(ring: Sequence[tuple], copies: int,
                    cabled: Sequence[frozenset]) -> list[tuple]:
    """``copies`` of each circuit of the ``ring`` (its ``n >= 3`` pairs in ring order, pair
    ``i`` joining member ``i`` to ``i + 1``) on planes that do not reach every member:
    ``cabled`` holds, for each OCS plane in the order every member's ports list them, the
    members cabled to it (a degraded cell: a fibre or a port down). Each plane in turn,
    those reaching fewest members first, takes a largest set of the circuits still short
    that share no GPU and have both ends on it, the most urgent first (a heaviest matching
    on the ring's paths among its members, :func:`_heaviest`: weight a large constant plus
    what a circuit still needs over the planes left that can carry it); where a pass
    leaves circuits short, it is made again (8 passes at most) with what each fell short
    added to its urgency. Listed plane by plane in the planes' order, so the first free
    plane of both ends (:func:`topologies.optical.realize`) takes each circuit at most its
    own. [] where every pass leaves a circuit short (the copies may not fit: not a proof).

    A 5-ring doubled on 5 planes, member a off the second: each plane leaves one member
    out (a on the second), the planes' order kept:

    >>> ring = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")]
    >>> every = frozenset("abcde")
    >>> listed = _ring_on_planes(ring, 2, [every, every - {"a"}, every, every, every])
    >>> len(listed), listed[2:4]
    (10, [('b', 'c'), ('d', 'e')])
    """
    n = len(ring)
    for most in (True, False):
        boost = [0.0] * n
        for _ in range(8):   # again, what fell short first, where a pass leaves some short
            need, chosen = _ring_pass(ring, copies, cabled, boost, most)
            if not any(need):
                return [ring[i] for picks in chosen for i in picks]
            boost = [b + x for b, x in zip(boost, need, strict=True)]
    return []


def _ring_pass(ring: Sequence[tuple], copies: int, cabled: Sequence[frozenset],
               boost: Sequence[float],
               most: bool = True) -> tuple[list[int], list[list[int]]]:
    """One pass of :func:`_ring_on_planes`: what each circuit still needs after it, and
    each plane's circuits (by place in the ring); ``boost`` is added to an urgency."""
    n = len(ring)
    # more than any sum of urgencies: most circuits first; or (not ``most``) the most
    # urgent, a plane leaving a circuit it can carry to planes that need it less
    big = 2 * n + 2 + 2 * sum(boost) if most else 1e-9
    need = [copies] * n
    # the planes still to come that can carry each circuit (both ends cabled to it)
    left = [sum(1 for on in cabled if u in on and v in on) for u, v in ring]
    chosen: list[list[int]] = [[] for _ in cabled]
    for j in sorted(range(len(cabled)), key=lambda j: (len(cabled[j]), j)):
        on = cabled[j]
        ok = [ring[i][0] in on and ring[i][1] in on for i in range(n)]
        # a circuit's urgency: what it still needs over the planes left that carry it
        weight = [big + need[i] / left[i] + boost[i] if ok[i] and need[i] else 0.0
                  for i in range(n)]
        for i in range(n):
            left[i] -= ok[i]
        if all(weight):   # the whole ring: without edge 0, or with it and not its neighbours
            rest = _heaviest(range(2, n - 1), weight)
            picks = max(_heaviest(range(1, n), weight), (rest[0] + weight[0], [0] + rest[1]),
                        key=lambda x: x[0])[1]
        else:
            first = weight.index(0.0)
            picks, run = [], []
            for t in range(1, n + 1):
                i = (first + t) % n
                if weight[i]:
                    run.append(i)
                else:
                    picks += _heaviest(run, weight)[1]
                    run = []
        for i in picks:
            need[i] -= 1
        chosen[j] = picks
    return need, chosen


def _heaviest(run: Iterable[int], weight: Sequence[float]) -> tuple[float, list[int]]:
    """The heaviest set of the edges ``run`` (in path order: each shares a member with the
    next) no two of them in a row, and its weight; an edge of weight 0 is not taken.

    >>> _heaviest([0, 1, 2], [1.0, 3.0, 1.0]), _heaviest([0, 1, 2], [2.0, 3.0, 2.0])
    ((3.0, [1]), (4.0, [0, 2]))
    """
    best: list[tuple[float, list[int]]] = [(0.0, []), (0.0, [])]
    for i in run:
        take = (best[-2][0] + weight[i], best[-2][1] + [i] if weight[i] else best[-2][1])
        best.append(max(best[-1], take, key=lambda x: x[0]))
    return best[-1]


def _ring_by_planes(ring: Sequence[tuple], copies: int) -> list[tuple]:
    """``copies`` of each circuit of the odd ``ring`` (its ``n`` pairs in ring order, pair
    ``i`` joining member ``i`` to ``i + 1``), listed plane by plane so that the first free
    plane of both ends (:func:`topologies.optical.realize`, the planes in one order at
    every GPU) colours them with ``ceil(copies x n / m)`` planes, ``m = (n - 1) / 2``: the
    most a plane carries, as :func:`~netmodel.study.circuit_planes.most_copies` counts. A
    plane's circuits are pairs ``i, i + 2, ..., i + 2 (m - 1)`` (no GPU twice); taking ``i`` as ``2 p`` for ``p`` in
    consecutive windows of ``m`` (mod ``n``), plane after plane, gives every pair
    ``copies`` before any plane past that count is needed. Each plane's circuits share no
    GPU and come before the next plane's, so the first free plane of a circuit is at most
    its own.

    >>> ring = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "a")]
    >>> by_planes = _ring_by_planes(ring, 2)   # 5 planes of 2 circuits sharing no GPU
    >>> [by_planes[i:i + 2] for i in (0, 2)], len(by_planes)
    ([[('a', 'b'), ('c', 'd')], [('e', 'a'), ('b', 'c')]], 10)
    """
    n = len(ring)
    m = n // 2
    need = [copies] * n
    out: list[tuple] = []
    at = 0
    while len(out) < copies * n:
        for p in range(at, at + m):
            i = 2 * p % n
            if need[i]:
                need[i] -= 1
                out.append(ring[i])
        at += m
    return out


@cache
def _torus_cycles(a: int, b: int, shift: int = 0) -> tuple[tuple[int, ...], ...] | None:
    """Two Hamiltonian cycles (member indices in cycle order; member ``i x b + j`` at row
    ``i``, column ``j``, as :func:`topologies.optical.circuits_for` numbers a torus) whose
    edges are the ``a x b`` torus's, each once, for ``a, b >= 3``; None where the search
    finds none. From the rows (``a`` cycles) and the columns (``b``), each square in
    turn (from square ``shift``, row by row) whose two row edges are the first set's and
    two column edges the second's swaps them where that leaves fewer cycles in all and more
    in neither (two cycles a swap joins are one), until each set is one cycle (it is, for
    every shape :func:`~netmodel.study.circuit_planes.torus_sides` gives up to 129 GPUs and
    every ``shift``).

    >>> first, second = _torus_cycles(3, 3)
    >>> sorted(first) == sorted(second) == list(range(9))
    True
    """
    n = a * b

    def at(i: int, j: int) -> int:
        return i % a * b + j % b

    rows: list[set[int]] = [set() for _ in range(n)]
    cols: list[set[int]] = [set() for _ in range(n)]
    for i in range(a):
        for j in range(b):
            for adj, x, y in ((rows, at(i, j), at(i, j + 1)), (cols, at(i, j), at(i + 1, j))):
                adj[x].add(y)
                adj[y].add(x)

    def count(adj: list[set[int]]) -> int:
        seen, found = [False] * n, 0
        for first in range(n):
            if not seen[first]:
                found += 1
                stack = [first]
                while stack:
                    x = stack.pop()
                    if not seen[x]:
                        seen[x] = True
                        stack.extend(adj[x])
        return found

    def swap(one: list[set[int]], other: list[set[int]], square: tuple) -> None:
        p, q, r, s = square   # edges p-q, r-s of one to other, p-r, q-s of other to one
        for x, y in ((p, q), (r, s)):
            one[x].discard(y), one[y].discard(x), other[x].add(y), other[y].add(x)
        for x, y in ((p, r), (q, s)):
            other[x].discard(y), other[y].discard(x), one[x].add(y), one[y].add(x)

    squares = [(at(i, j), at(i, j + 1), at(i + 1, j), at(i + 1, j + 1))
               for i in range(a) for j in range(b)]
    squares = squares[shift:] + squares[:shift]
    cycles, moved = (a, b), True
    while cycles != (1, 1) and moved:
        moved = False
        for p, q, r, s in squares:
            if not (q in rows[p] and s in rows[r] and r in cols[p] and s in cols[q]):
                continue
            swap(rows, cols, (p, q, r, s))
            now = (count(rows), count(cols))
            if now[0] <= cycles[0] and now[1] <= cycles[1] and sum(now) < sum(cycles):
                cycles, moved = now, True
            else:
                swap(cols, rows, (p, q, r, s))
    if cycles != (1, 1):
        return None

    def order(adj: list[set[int]]) -> tuple[int, ...]:
        out, prev = [0], -1
        while len(out) < n:
            nxt = min(x for x in adj[out[-1]] if x != prev)
            prev = out[-1]
            out.append(nxt)
        return tuple(out)

    return order(rows), order(cols)


def _cycle_matching(cycle: Sequence[int], avoid: set[int], want: int) -> list[int] | None:
    """``want`` edges of the ``cycle`` (vertex order; edge ``i`` joins places ``i`` and
    ``i + 1``) sharing no vertex with each other nor with ``avoid``, by their first
    places, taken in turn along the runs of vertices outside ``avoid``; None where the
    runs hold fewer.

    >>> _cycle_matching([0, 1, 2, 3, 4], {0}, 2), _cycle_matching([0, 1, 2, 3, 4], {0, 2}, 2)
    ([1, 3], None)
    """
    n = len(cycle)
    start = next((i for i, x in enumerate(cycle) if x in avoid), None)
    if start is None:
        return list(range(0, 2 * want, 2)) if 2 * want < n else None
    out: list[int] = []
    prev = None
    for t in range(1, n + 1):
        i = (start + t) % n
        if cycle[i] in avoid:
            prev = None
        elif prev is None:
            prev = i
        else:
            out.append(prev)
            prev = None
            if len(out) == want:
                return out
    return None if want else out


def _torus_by_planes(members: Sequence[Hashable], sides: tuple[int, int],
                     copies: int) -> list[tuple]:
    """``copies`` of the circuits of the ``sides`` torus over ``members`` (both sides odd,
    ``n`` members), listed plane by plane, each plane's circuits sharing no GPU, on
    ``ceil(copies x 2n / m)`` planes, ``m = (n - 1) / 2`` the most a plane carries: the
    bound :func:`~netmodel.study.circuit_planes.most_copies` counts (the first free plane of
    both ends, :func:`topologies.optical.realize`, then takes each circuit at most its own plane).

    The torus is two Hamiltonian cycles (:func:`_torus_cycles`), each an odd ring of ``n``
    whose ``n`` near-perfect matchings (``M_j`` leaves out its ``j``-th GPU: its edges
    ``j + 1, j + 3, ..., j + n - 2``) hold each edge ``m`` times. With ``k = copies mod m``
    and any ``k`` edges ``L`` of the ring sharing no GPU, ``M_j`` taken ``(copies - k) / m
    + L[j - 1] + L[j]`` times holds each edge ``copies - L`` times (its ``m`` matchings'
    counts sum to ``copies - k + k - L[e]``). The two rings' leftovers ``L`` (``2k``
    edges) share one plane where ``2k <= m`` (no GPU twice), else two: the first ring's
    ``k`` with ``m - k`` of the second's sharing no GPU with them, and the rest of the
    second's. [] where no such leftovers are found (the circuits are then tried in order).

    >>> nine = [f"g{i}" for i in range(9)]
    >>> listed = _torus_by_planes(nine, (3, 3), 6)   # 108 circuits on 27 planes of 4
    >>> len(listed), {len({g for p in listed[i:i + 4] for g in p}) for i in range(0, 108, 4)}
    (108, {8})
    """
    return [p for plane in _torus_planes(members, sides, copies) for p in plane]


def _torus_planes(members: Sequence[Hashable], sides: tuple[int, int],
                  copies: int) -> list[list[tuple]]:
    """:func:`_torus_by_planes`'s listing as its planes, each a list of circuits sharing no
    GPU ([] where none is found).

    A 3x3 doubled 5 times: each ring's 9 near-perfect matchings (4 circuits) once, and
    one of them twice for the leftover, then the two leftovers' plane:

    >>> planes = _torus_planes([f"g{i}" for i in range(9)], (3, 3), 5)
    >>> len(planes), [len(plane) for plane in planes[-3:]]
    (23, [4, 4, 2])
    """
    n = len(members)
    m = n // 2
    k = copies % m

    def planes(cycle: Sequence[int], left: Sequence[int]) -> list[list[tuple]]:
        return _cycle_matchings([pair(cycle, i) for i in range(n)], copies, left)

    def pair(cycle: Sequence[int], i: int) -> tuple:
        return members[cycle[i]], members[cycle[(i + 1) % n]]

    found = None
    for shift in range(n if k else 1):
        found = _torus_cycles(*sides, shift) or found
        for one, other in (found, found[::-1]) if found else ():
            for at in range(n if k else 1):
                first = [(at + 2 * i) % n for i in range(k)]
                ends = {one[j] for i in first for j in (i, (i + 1) % n)}
                if 2 * k <= m:
                    second = _cycle_matching(other, ends, k)
                    rest: list[int] = []
                else:
                    second = _cycle_matching(other, ends, m - k)
                    rest = [] if second is None else _cycle_matching(
                        other, {other[j] for i in second for j in (i, (i + 1) % n)},
                        2 * k - m)
                if second is None or rest is None:
                    continue
                # the leftovers: one plane, or m of them and the rest (2k - m)
                left = [pair(one, i) for i in first] + [pair(other, i) for i in second + rest]
                return planes(one, first) + planes(other, second + rest) + \
                    [part for part in (left[:m], left[m:]) if part]
    if found is None:
        return []
    # no leftovers that share planes: each ring's on a plane of its own (one plane more
    # than the bound's where the bound left no room for it)
    one, other = found
    left = list(range(0, 2 * k, 2))
    return planes(one, left) + planes(other, left) + [part for part in (
        [pair(one, i) for i in left], [pair(other, i) for i in left]) if part]


def _torus_factors(a: int, b: int) -> list[list[tuple[int, int]]]:
    """Four perfect matchings (member-index pairs, member ``i x b + j`` at row ``i``, column
    ``j``, as :func:`topologies.optical.circuits_for` numbers a torus) holding the ``a x
    b`` torus's circuits once each (a side of 2: its two circuits between a pair), for an
    even number of members. A side of even length ``q`` alternates its edges between two
    matchings (0 and 1 along the rows); a cycle of the other side, odd or even, alternates
    2 and 3, and where it is odd its last edge (the wrap) takes 0, the row edges of rows 0
    and ``p - 1`` between columns ``2t`` and ``2t + 1`` then 3 and 2 (each column pair's
    square swaps colours, as in the colouring of a product with a class-1 factor).

    A 2x3 (12 circuits as ``circuits_for`` lists them, each column's pair twice): 4
    matchings of 3, each holding every member once, the pair 0-3 in two of them:

    >>> factors = _torus_factors(2, 3)
    >>> [sorted(g for pair in m for g in pair) for m in factors] == [list(range(6))] * 4
    True
    >>> sum(sorted(pair) == [0, 3] for m in factors for pair in m)
    2
    """
    # rows of even length q (the side of even length), p rows; ``at`` maps back
    if b % 2 == 0:
        p, q = a, b

        def at(i: int, j: int) -> int:
            return i % a * b + j % b
    else:
        p, q = b, a

        def at(i: int, j: int) -> int:
            return j % a * b + i % b
    out: list[list[tuple[int, int]]] = [[], [], [], []]
    for i in range(p):
        for j in range(q):
            colour = j % 2
            if p % 2 and j % 2 == 0 and i in (0, p - 1):
                colour = 3 if i == 0 else 2
            out[colour].append((at(i, j), at(i, j + 1)))
            colour = i % 2 + 2 if i < p - 1 or p % 2 == 0 else 0
            out[colour].append((at(i, j), at(i + 1, j)))
    return out


def _torus_on_planes(members: Sequence[Hashable], sides: tuple[int, int], copies: int,
                     cabled: Sequence[frozenset]) -> list[tuple]:
    """``copies`` of the circuits of the ``sides`` torus over ``members`` on planes that do
    not each reach every member (``cabled``: as for :func:`_ring_on_planes`): the planes of
    a whole cell's listing (:func:`_torus_planes` for an odd torus; for an even one its
    four perfect matchings, :func:`_torus_factors`, ``copies`` times each) given to the
    planes by :func:`_matchings_on_planes`. [] where that finds no way (not a proof).

    A 3x3 on 18 planes doubled 4 times fills every plane (18 near-perfect matchings of 4):
    with gpu0 off ``ocs0`` and gpu8 off ``ocs17``, the two planes take matchings leaving
    out their GPU:

    >>> nine = [f"gpu{i}" for i in range(9)]
    >>> cabled = [frozenset(nine)] * 18
    >>> cabled[0], cabled[17] = cabled[0] - {"gpu0"}, cabled[17] - {"gpu8"}
    >>> listed = _torus_on_planes(nine, (3, 3), 4, cabled)
    >>> len(listed), any("gpu0" in p for p in listed[:4]), any("gpu8" in p for p in listed[-4:])
    (72, False, False)
    """
    a, b = sides
    if len(members) % 2:
        planes = _torus_planes(members, sides, copies)
    else:
        planes = [[(members[x], members[y]) for x, y in factor]
                  for factor in _torus_factors(a, b)] * copies
    return _matchings_on_planes(planes, cabled) if planes else []


def _matchings_on_planes(planes: Sequence[Sequence[tuple]], cabled: Sequence[frozenset],
                         budget: int = 200_000) -> list[tuple]:
    """The circuits of ``planes`` (a whole cell's listing: each a set of circuits sharing no
    GPU, one OCS plane's) set on the planes of a degraded cell (``cabled``: each OCS, in
    the order every member's ports list them, with the members cabled to it), listed
    plane by plane in that order, so that :func:`topologies.optical.realize`'s first free
    plane of both ends takes each circuit at most its own plane. The planes missing a
    member take first whole listed planes none of whose GPUs they miss (a bipartite
    matching of those planes to the listed ones, each distinct listed plane as often as
    it is listed); the rest go to the whole planes, and where those are too few, to the
    planes left missing a member, each taking the listed plane it loses fewest circuits
    of; each circuit lost then takes a plane both its ends reach and have free, moving
    the circuits that hold its ends there to other such planes (four moves deep, at most
    ``budget`` planes looked at). [] where a listed plane or a circuit is left without
    one (not a proof that the copies do not fit).

    Three listed planes on three OCS, the second without ``a``: it takes the plane
    leaving ``a`` out.

    >>> listed = [[("a", "b")], [("a", "b")], [("b", "c")]]
    >>> _matchings_on_planes(listed, [frozenset("abc"), frozenset("bc"), frozenset("abc")])
    [('a', 'b'), ('b', 'c'), ('a', 'b')]
    """
    count = len(cabled)
    if len(planes) > count:
        return []
    members = frozenset().union(*cabled)
    kinds = Counter(tuple(plane) for plane in planes)
    keys = list(kinds)
    ends = [frozenset(g for pair in key for g in pair) for key in keys]
    short = sorted((j for j in range(count) if cabled[j] != members),
                   key=lambda j: (len(cabled[j]), j))
    given: dict[int, int] = {}                    # plane -> kind
    holders: list[list[int]] = [[] for _ in keys]   # kind -> planes given it
    fits = {j: [x for x in range(len(keys)) if ends[x] <= cabled[j]] for j in short}

    def augment(j: int, seen: set[int]) -> bool:
        for x in fits[j]:
            if x in seen:
                continue
            seen.add(x)
            if len(holders[x]) < kinds[keys[x]] or any(
                    augment(other, seen) and not holders[x].remove(other)
                    for other in list(holders[x])):
                holders[x].append(j)
                given[j] = x
                return True
        return False

    for j in short:
        augment(j, set())
    left = {x: kinds[keys[x]] - len(holders[x]) for x in range(len(keys))}
    on: list[list[tuple]] = [[] for _ in cabled]
    for j, x in given.items():
        on[j] = list(keys[x])
    whole = [j for j in range(count) if cabled[j] == members]
    spare = [j for j in short if j not in given]
    lost: list[tuple] = []
    over = sum(left.values()) - len(whole)
    if over > len(spare):
        return []
    # whole planes too few: a plane missing a member takes the listed plane it loses
    # fewest circuits of, the least lost first (the table sorted once)
    table = sorted((sum(1 for u, v in keys[x] if u not in cabled[j] or v not in cabled[j]),
                    -len(cabled[j]), j, x) for j in spare for x in left if left[x]) \
        if over > 0 else []
    taken: set[int] = set()
    for _, _, j, x in table:
        if over == 0:
            break
        if j in taken or not left[x]:
            continue
        taken.add(j)
        left[x] -= 1
        over -= 1
        on[j] = [(u, v) for u, v in keys[x] if u in cabled[j] and v in cabled[j]]
        lost += [(u, v) for u, v in keys[x] if u not in cabled[j] or v not in cabled[j]]
    free = iter(whole)
    for x, times in left.items():
        for _ in range(times):
            on[next(free)] = list(keys[x])
    if lost and not _place_lost(lost, on, cabled, budget):
        return []
    return [pair for plane in on for pair in plane]


def _place_lost(lost: Sequence[tuple], on: list[list[tuple]], cabled: Sequence[frozenset],
                budget: int) -> bool:
    """Each circuit of ``lost`` put on a plane of ``on`` (each plane's circuits, changed in
    place) that both its ends reach (``cabled``) and have free there, moving a circuit
    that holds an end there to another such plane, four moves deep; False where one finds
    none within ``budget`` planes looked at (``on`` then part done).

    ``b-c`` where ``b`` is held on the first plane (``a-b``) and ``c`` on the second
    (``c-d``): ``a-b`` moves to the second, ``b-c`` takes its place:

    >>> on = [[("a", "b")], [("c", "d")]]
    >>> _place_lost([("b", "c")], on, [frozenset("abcd"), frozenset("abcd")], 100), on
    (True, [[('b', 'c')], [('c', 'd'), ('a', 'b')]])
    """
    held = [{g: pair for pair in plane for g in pair} for plane in on]
    looked = [0]
    done: list[tuple[bool, int, tuple]] = []   # each put (True) and take, to undo them

    def put(j: int, pair: tuple, undo: bool = False) -> None:
        on[j].append(pair)
        for g in pair:
            held[j][g] = pair
        if not undo:
            done.append((True, j, pair))

    def take(j: int, pair: tuple, undo: bool = False) -> None:
        on[j].remove(pair)
        for g in pair:
            del held[j][g]
        if not undo:
            done.append((False, j, pair))

    def back(mark: int) -> None:
        while len(done) > mark:
            was_put, j, pair = done.pop()
            (take if was_put else put)(j, pair, True)

    def place(pair: tuple, depth: int, avoid: int) -> bool:
        u, v = pair
        reach = [j for j in range(len(on)) if j != avoid and u in cabled[j] and v in cabled[j]]
        looked[0] += len(reach)
        for j in reach:
            if u not in held[j] and v not in held[j]:
                put(j, pair)
                return True
        if depth == 0:
            return False
        for j in reach:
            if looked[0] > budget:
                return False
            blocking = list(dict.fromkeys(held[j][g] for g in pair if g in held[j]))
            if any(set(b) == set(pair) for b in blocking):
                continue
            mark = len(done)
            for b in blocking:
                take(j, b)
            put(j, pair)
            if all(place(b, depth - 1, j) for b in blocking):
                return True
            back(mark)
        return False

    return all(place(pair, 4, -1) for pair in lost)
