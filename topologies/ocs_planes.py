"""The OCS plane each circuit of an optical fabric holds: an edge colouring of the circuits
with the port planes as colours (:func:`assign_planes`).

Port ``p`` of every GPU is cabled to OCS ``ocs{p}`` (:mod:`topologies.optical`), so a
circuit joins the same port plane at both its GPUs, and no GPU port carries two circuits:
the circuits at one GPU take distinct planes. A greedy choice, with Kempe-chain swaps
where it is blocked, finds them.

>>> assign_planes([("a", "b"), ("b", "c"), ("c", "a")],
...               {g: ["ocs0", "ocs1", "ocs2"] for g in "abc"})
['ocs0', 'ocs1', 'ocs2']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

from compute.errors import UserError

__all__ = ["assign_planes"]


def assign_planes(pairs: Sequence[tuple[Hashable, Hashable]],
                  free: dict[Hashable, list[Hashable]]) -> list[Hashable]:
    """An OCS for every circuit such that no GPU port is used twice (an edge colouring with
    the OCS planes as colours; Kempe-chain swaps when a greedy choice is blocked).

    Parameters
    ----------
    pairs : sequence of (GPU, GPU)
        The circuits, each a pair of GPU node ids (a pair may repeat: parallel circuits).
    free : dict
        Each GPU's OCS planes (the OCS nodes its ports are cabled to), in the order a
        greedy choice tries them.

    Returns
    -------
    list
        The OCS of each circuit of ``pairs``, in order; a GPU's circuits hold distinct
        ones, and each one a plane of both its GPUs.

    Raises
    ------
    UserError
        Where a circuit finds no plane free at both its GPUs, even after a swap.

    Examples
    --------
    >>> assign_planes([("a", "b")] * 2, {"a": ["o0", "o1"], "b": ["o1", "o0"]})
    ['o0', 'o1']
    >>> assign_planes([("a", "b")] * 2, {"a": ["o0"], "b": ["o0", "o1"]})
    Traceback (most recent call last):
    ...
    compute.errors.UserError: cannot set up circuit a-b: no OCS has a free port of both GPUs (1 and 2 ports; 1 and 1 in use). The logical topology needs more ports per GPU
    """
    used: defaultdict[Hashable, dict[Hashable, Hashable]] = defaultdict(dict)  # gpu -> {ocs: partner}
    ports = {g: set(planes) for g, planes in free.items()}
    # free[g][:start[g]] are all in use at g (greedy fills a GPU's planes in order; a Kempe
    # swap may free one of them, so it sends its GPUs' starts back to 0): the first plane
    # free at both ends is found past it, not by listing every plane of both for each
    # circuit (p ports: p x p per circuit, minutes for a ring over 16 GPUs of 1,000 ports)
    start: defaultdict[Hashable, int] = defaultdict(int)
    colour = {}
    swapped = False
    for idx, (u, v) in enumerate(pairs):
        at, mine, theirs, own = start[u], free[u], used[v], used[u]
        while at < len(mine) and mine[at] in own:
            at += 1
        start[u] = at
        on_v = ports[v]
        chosen = next((mine[i] for i in range(at, len(mine)) if mine[i] not in own
                       and mine[i] not in theirs and mine[i] in on_v), None)
        if chosen is None:
            fu = [o for o in free[u] if o not in used[u]]
            fv = [o for o in free[v] if o not in used[v]]
            chosen = _kempe(u, v, fu, fv, used, free, start)
            swapped = True
            if chosen is None:
                raise UserError(
                    f"cannot set up circuit {u}-{v}: no OCS has a free port of both GPUs "
                    f"({len(free[u])} and {len(free[v])} ports; {len(used[u])} and "
                    f"{len(used[v])} in use). The logical topology needs more ports per GPU")
        used[u][chosen] = v
        used[v][chosen] = u
        colour[idx] = chosen
    if swapped:
        return _planes_held(pairs, [colour[i] for i in range(len(pairs))], used)
    return [colour[i] for i in range(len(pairs))]


def _planes_held(pairs: Sequence[tuple[Hashable, Hashable]], chosen: list[Hashable],
                 used: dict[Hashable, dict[Hashable, Hashable]]) -> list[Hashable]:
    """The plane each circuit of ``pairs`` holds in ``used`` (gpu -> {ocs: partner}) once
    the colouring is done: a Kempe swap (:func:`_kempe`) moves circuits placed before it
    to the other plane of its path, so a circuit's ``chosen`` plane may since be its
    pair's no more, or a neighbour's. Each circuit keeps its ``chosen`` plane where its
    pair still holds it, the rest take their pair's other planes in turn.

    >>> used = {"a": {"o1": "b"}, "b": {"o1": "a", "o0": "c"}, "c": {"o0": "b"}}
    >>> _planes_held([("a", "b"), ("b", "c")], ["o0", "o0"], used)
    ['o1', 'o0']
    """
    held: dict[frozenset, list[Hashable]] = {}
    for u, planes in used.items():
        for o, v in planes.items():
            key = frozenset((u, v))
            if o not in held.setdefault(key, []):
                held[key].append(o)
    left = {key: set(planes) for key, planes in held.items()}
    out: list[Hashable | None] = []
    for (u, v), o in zip(pairs, chosen, strict=True):
        mine = left[frozenset((u, v))]
        out.append(o if o in mine else None)
        mine.discard(o)
    for i, (u, v) in enumerate(pairs):
        if out[i] is None:
            key = frozenset((u, v))
            o = next(p for p in held[key] if p in left[key])
            left[key].discard(o)
            out[i] = o
    return out


def _kempe(u: Hashable, v: Hashable, fu: list[Hashable], fv: list[Hashable],
           used: dict[Hashable, dict[Hashable, Hashable]],
           free: dict[Hashable, list[Hashable]],
           start: dict[Hashable, int]) -> Hashable | None:
    """Swap two planes along an alternating path from ``v`` so that a plane free at ``u``
    becomes free at ``v``; return that plane, or None when no swap works. The GPUs of a
    swapped path get ``start`` 0 (:func:`assign_planes`: a plane before it may be free now)."""
    for a in fu:
        for b in fv:
            if a not in free[v] or b not in free[u]:
                continue
            # path from v alternating a, b, a, ...
            path, node, plane = [], v, a
            while plane in used[node]:
                nxt = used[node][plane]
                path.append((node, nxt, plane))
                node, plane = nxt, (b if plane == a else a)
            swap = {a: b, b: a}
            if any(u in (x, y) for x, y, _ in path) or \
                    any(swap[p] not in free[x] or swap[p] not in free[y] for x, y, p in path):
                continue
            for x, y, p in path:
                del used[x][p]
                del used[y][p]
            for x, y, p in path:
                used[x][swap[p]] = y
                used[y][swap[p]] = x
                start[x] = start[y] = 0
            return a
    return None

