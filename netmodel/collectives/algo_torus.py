"""Torus collective algorithms: bidirectional rings along every dimension of a
``k``-dimensional torus at once, the data in ``k`` weighted chunks (all-reduce and its
reduce-scatter and all-gather halves), on a torus fabric or an OCS cell whose circuits are
set as a torus.

Each generator takes the group and the fabric graph and returns a list of
:class:`~netmodel.collectives.steps.Step` (the interface of
:mod:`netmodel.collectives.algorithms`, whose table gives their costs).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.steps import NotApplicable, Pairs, Step, unique

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["torus_all_gather", "torus_all_reduce", "torus_reduce_scatter"]


def _torus_grid(graph, group) -> tuple[list[int], np.ndarray]:
    """The sides of the torus dimensions the group spans and, for each, the group
    positions of every member's ``-1`` and ``+1`` neighbours: ``(sides, nbr)`` with
    ``nbr[d, 0|1]`` arrays of length ``p``. The fabric must be a torus as the ``torus``
    builder makes it (graph attribute ``dims``, GPUs ``gpu0 ...`` numbered row-major, last
    side fastest), or an ``ocs`` fabric whose circuits were set as one over all its GPUs
    (``logical=torus:AxB``), and the group a sub-torus: in each dimension either one
    coordinate or all of them, at least two dimensions whole; or the group's own circuits
    are a torus among its members (:func:`_circuit_torus`: an OCS cell's instance).
    NotApplicable otherwise."""
    dims = None if graph is None else graph.graph.get("dims")
    if not dims and graph is not None:
        # an OCS cell: the group's own circuits a torus (a scenario's instance, a
        # blast radius's), else a sub-torus of the circuits an ocs spec set over all
        found = _circuit_torus(graph, group)
        if found is not None:
            return found
        dims = _logical_dims(graph)
    if not dims:
        raise NotApplicable("torus needs a torus fabric (its dims, as the torus builder "
                            "records them) or the group's circuits set as a torus (an OCS "
                            "cell)")
    try:
        sides = [int(x) for x in str(dims).split("x")]
    except ValueError:
        raise NotApplicable(f"torus cannot read the fabric's dims {dims!r}") from None
    total = int(np.prod(sides))
    if graph.graph.get("gpus") != total:
        raise NotApplicable(f"torus needs the fabric's {graph.graph.get('gpus')} GPUs to "
                            f"be the {dims} torus's {total}")
    idx = []
    for g in group:
        name = str(g)
        tail = name[3:]   # ASCII digits, as topologies.schema numbers a torus's GPUs
        i = int(tail) if name.startswith("gpu") and tail.isascii() and tail.isdigit() else -1
        if not 0 <= i < total:
            raise NotApplicable(f"torus needs GPUs gpu0 to gpu{total - 1}, got {g!r}")
        idx.append(i)
    index = np.array(idx, dtype=np.int64)
    strides = np.cumprod([1, *sides[:0:-1]])[::-1]
    coords = (index[:, None] // strides) % np.array(sides)
    active = []
    for d, side in enumerate(sides):
        seen = len(unique(coords[:, d]))
        if seen == side:
            active.append(d)
        elif seen != 1:
            raise NotApplicable(f"torus needs the group to span each dimension of the "
                                f"{dims} torus wholly or at one coordinate")
    p = len(group)
    if len(active) < 2 or int(np.prod([sides[d] for d in active])) != p:
        raise NotApplicable("torus needs the group to be a sub-torus of at least two whole "
                            "dimensions (on one, bidirectional-ring is the same)")
    pos = np.full(total, -1, dtype=np.int64)
    pos[index] = np.arange(p)
    nbr = np.empty((len(active), 2, p), dtype=np.int64)
    for a, d in enumerate(active):
        for b, step in enumerate((-1, 1)):
            shift = ((coords[:, d] + step) % sides[d] - coords[:, d]) * strides[d]
            nbr[a, b] = pos[index + shift]
    return [sides[d] for d in active], nbr


def _logical_dims(graph) -> str | None:
    """The sides of the torus an ``ocs`` fabric's circuits were set as over all its GPUs
    (``logical=torus:AxB[xC]`` in its spec, which :func:`topologies.optical.realize`
    records in ``args``; GPUs ``gpu0 ...`` row-major, as the torus builder numbers them),
    else None."""
    args = graph.graph.get("args")
    if graph.graph.get("builder") != "ocs" or not isinstance(args, dict):
        return None
    logical = args.get("logical")
    if not isinstance(logical, str) or not logical.strip().lower().startswith("torus:"):
        return None
    return logical.strip().lower().partition(":")[2] or None


def _circuit_torus(graph, group) -> tuple[list[int], np.ndarray] | None:
    """The 2D torus the group's optical circuits form among its own members, in
    :func:`_torus_grid`'s form, or None. The circuits an OCS cell sets for an instance
    (:func:`topologies.optical.circuits_for`'s ``torus:AxB`` over its members in order:
    member ``i b + j`` at row ``i``, column ``j``) are its members' only links: every link
    of a member must be an ``ocs-circuit`` to another member, each a torus neighbour
    (``A x B`` the group's size, the most square shape first, then the others, both ways
    round), with circuits along both dimensions. A degraded cell may have lost some of
    them (a neighbour left without its circuit is reached the way routing finds, as on a
    torus with a cable down), and the copies each circuit has are its bandwidth
    (:func:`_torus_rates`). A ring's circuits (``gpu3-gpu4`` of 16) are no torus's.

    >>> from topologies.optical import ocs, realize
    >>> g = realize(ocs(gpus=8, ports=4), "0-1;1-2;2-3;3-0;4-5;5-6;6-7;7-4;0-4;1-5;2-6;3-7")
    >>> sides, nbr = _circuit_torus(g, tuple(f"gpu{i}" for i in range(8)))
    >>> sides, nbr[0, 1].tolist(), nbr[1, 1].tolist()
    ([2, 4], [4, 5, 6, 7, 0, 1, 2, 3], [1, 2, 3, 0, 5, 6, 7, 4])
    >>> _circuit_torus(realize(ocs(gpus=8, ports=4), "ring"), tuple(f"gpu{i}" for i in range(8)))
    """
    p = len(group)
    if p < 4:
        return None
    pos = {g: i for i, g in enumerate(group)}
    if len(pos) != p:
        return None
    adj = graph.adj
    found: set[tuple[int, int]] = set()
    for i, g in enumerate(group):
        if g not in adj:
            return None
        for e, data in adj[g].items():
            j = pos.get(e)
            if j is None or data.get("medium") != "ocs-circuit":
                return None   # a switch, a cable or a circuit out of the group: no cell
            if i < j:
                found.add((i, j))
    if not found:
        return None
    shapes = [(a, p // a) for a in range(int(p ** 0.5), 1, -1) if p % a == 0]
    shapes += [(b, a) for a, b in shapes if a != b]
    me = np.arange(p)
    for a, b in shapes:
        row, col = me // b, me % b
        nbr = np.empty((2, 2, p), dtype=np.int64)
        for d, (side, step) in enumerate(((a, b), (b, 1))):
            at = row if d == 0 else col
            for k, sign in enumerate((-1, 1)):
                nbr[d, k] = me + ((at + sign) % side - at) * step
        dims = [{(min(i, j), max(i, j)) for i, j in zip(me.tolist(), nbr[d, 1].tolist(),
                                                         strict=True)} for d in (0, 1)]
        if found <= dims[0] | dims[1] and found & dims[0] and found & dims[1]:
            return [a, b], nbr
    return None


def _torus_rates(graph, group, sides, nbr) -> list[float]:
    """Bytes/s a GPU can send along each of the group's torus dimensions, half each way
    round, that every ring of the dimension carries: twice its slowest link (a side of 2:
    its one edge), the least over the dimension's rings.

    Every GPU sends the same share of the data along a dimension (the chunk weights are
    the group's, :func:`_torus_weights`), so a ring moves at its slowest link and a phase
    lasts as long as the dimension's slowest ring: a faster cable elsewhere in the
    dimension is left partly idle, not read as the dimension's rate (which would shift
    every GPU's chunks towards it). A link the fabric lacks (a lost cable, a circuit gone
    with its OCS) is left out: its ring's transfers are routed around, and the schedule
    stays as the links left set it.

    >>> from topologies import build
    >>> g = build("torus:dims=2x4,bandwidth=100e9")
    >>> group = tuple(f"gpu{i}" for i in range(8))
    >>> sides, nbr = _torus_grid(g, group)
    >>> [r / 1e9 for r in _torus_rates(g, group, sides, nbr)]
    [50.0, 50.0]
    >>> g.edges["gpu0", "gpu4"]["bandwidth"] *= 2   # one faster cable: the ring gpu1-gpu5 binds
    >>> [r / 1e9 for r in _torus_rates(g, group, sides, nbr)]
    [50.0, 50.0]
    """
    rates = []
    for a, side in enumerate(sides):
        links = [graph.edges[g, e]["bandwidth"]
                 for g, e in zip(group, (group[j] for j in nbr[a, 1]), strict=True)
                 if graph.has_edge(g, e)]   # each ring link once (a side of 2: twice)
        rates.append(float((1 if side == 2 else 2) * min(links)) if links else 0.0)
    return rates


def _torus_weights(sides: Sequence[int], rates: Sequence[float]) -> list[float]:
    """The chunks' shares of the data, for the least total of the reduce-scatter's phases
    (each phase lasts as long as its slowest chunk).

    Chunk ``j`` is on dimension ``a = j + t`` (mod ``k``) in phase ``t``, having been cut
    by the sides before: it takes ``w_j c[j, t]`` per byte of ``n``, ``c[j, t] =
    (s_a - 1)/s_a / (s_j ... s_{a-1}) / r_a`` (``r_a`` a GPU's rate along ``a``,
    :func:`_torus_rates`). The first phase, which moves most, ends on every dimension at
    once with ``w_j`` proportional to ``r_j s_j / (s_j - 1)``: it lasts
    ``n / sum_j r_j s_j/(s_j - 1)``. Equal sides and rates keep ``1/k`` each (the total is
    convex and the same for every order of the weights there). That is the
    least total wherever no side is 2 (checked against a linear program for every 2D and
    3D torus of sides 3 to 11); a side of 2 halves its chunk only, so the next phase carries
    that chunk's half: there the least total is found exactly among the vertices of the
    phases' pieces (``w_i c[i, t] = w_j c[j, t]`` or ``w_j = 0``, ``k - 1`` of them at a
    time; up to 4 dimensions), a vertex taken over the first-phase weights only where it is
    faster (2x3x4: ``(27, 36, 32)/95`` against ``(12, 9, 8)/29``)."""
    k = len(sides)
    x = [r * s / (s - 1) for r, s in zip(rates, sides, strict=True)]
    if min(x) <= 0 or all(v == x[0] for v in x) and all(s == sides[0] for s in sides):
        return [1 / k] * k   # equal sides and rates: every order alike, 1/k the least
    cost = np.array([[(sides[(j + t) % k] - 1) / sides[(j + t) % k]
                      / float(np.prod([sides[(j + u) % k] for u in range(t)]))
                      / rates[(j + t) % k] for t in range(k)] for j in range(k)])

    def total(w):
        return float((np.asarray(w)[:, None] * cost).max(axis=0).sum())

    best = [1 / k] * k if all(v == x[0] for v in x) else [v / sum(x) for v in x]
    least = total(best)
    if k > 4:
        return best
    planes = [np.eye(k)[j] for j in range(k)]
    for t in range(k):
        for i in range(k):
            for j in range(i + 1, k):
                row = np.zeros(k)
                row[i], row[j] = cost[i, t], -cost[j, t]
                planes.append(row / np.abs(row).max())
    rhs = np.zeros(k)
    rhs[0] = 1.0
    # every choice of k - 1 planes at once (3,276 of 28 on 4 dimensions: one at a time,
    # 0.09 s a call), each system solved and judged as alone, the first least kept
    chosen = np.array(list(combinations(range(len(planes)), k - 1)), dtype=np.intp)
    a = np.empty((len(chosen), k, k))
    a[:, 0] = 1.0
    a[:, 1:] = np.array(planes)[chosen]
    a = a[np.abs(np.linalg.det(a)) >= 1e-12]
    if not len(a):
        return best
    w = np.linalg.solve(a, rhs)
    w = np.clip(w[w.min(axis=1) >= -1e-12], 0.0, None)
    w /= w.sum(axis=1, keepdims=True)
    totals = (w[:, :, None] * cost).max(axis=1).sum(axis=1)
    for i, f in enumerate(totals.tolist()):
        if f < least * (1 - 1e-12):
            best, least = w[i].tolist(), f
    return best


def _torus_phases(group: tuple[Hashable, ...], graph: nx.Graph | None
                  ) -> tuple[list[tuple[Pairs, float]], int]:
    """The reduce-scatter phases of :func:`torus_all_reduce` as ``(transfers, reduced)``,
    one per dimension, each to be repeated ``R = max(side) - 1`` times, and ``R``."""
    sides, nbr = _torus_grid(graph, group)
    k, p = len(sides), len(group)
    weights = _torus_weights(sides, _torus_rates(graph, group, sides, nbr))
    rounds = max(sides) - 1
    me = np.arange(p)
    phases = []
    for t in range(k):
        src, dst, frac, reduce = [], [], [], 0.0
        for j in range(k):
            a = (j + t) % k
            chunk = weights[j] / float(np.prod([sides[(j + u) % k] for u in range(t)]))
            side = sides[a]
            sent = chunk * (side - 1) / side / rounds   # per GPU per step
            reduce += sent
            if side == 2:  # both ways round are the one neighbour
                src.append(me)
                dst.append(nbr[a, 1])
                frac.append(np.full(p, sent))
            else:
                src += [me, me]
                dst += [nbr[a, 0], nbr[a, 1]]
                frac += [np.full(p, sent / 2)] * 2
        phases.append((Pairs(group, np.concatenate(src), np.concatenate(dst),
                             np.concatenate(frac)), reduce))
    return phases, rounds


def torus_reduce_scatter(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """The reduce-scatter half of :func:`torus_all_reduce`: ``k`` phases of ``max(side) - 1``
    steps, chunk ``j`` reduce-scattering along dimensions ``j, j+1, ...``; equal sides
    ``s``, ports of ``b``: ``k (s-1) alpha + (p-1)/p n / (2 k b)``."""
    phases, rounds = _torus_phases(group, graph)
    return [Step(f"reduce-scatter phase {t + 1}/{len(phases)}", pairs, rounds, reduce=reduce)
            for t, (pairs, reduce) in enumerate(phases)]


def torus_all_gather(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """The all-gather half of :func:`torus_all_reduce`: the reduce-scatter's phases in
    reverse, nothing reduced; equal sides ``s``, ports of ``b``:
    ``k (s-1) alpha + (p-1)/p n / (2 k b)``."""
    phases, rounds = _torus_phases(group, graph)
    k = len(phases)
    return [Step(f"all-gather phase {t + 1}/{k}", phases[k - 1 - t][0], rounds)
            for t in range(k)]


def torus_all_reduce(group: tuple[Hashable, ...], graph: nx.Graph | None) -> list[Step]:
    """Bidirectional rings along each dimension of a ``k``-dimensional torus with every
    port busy: the data in ``k`` chunks, chunk ``j`` reduce-scattering along dimensions
    ``j, j+1, ...`` (mod ``k``) in turn, so that in each phase every dimension carries one
    chunk, half each way round its rings; then all-gathering back in reverse
    (:func:`torus_reduce_scatter`, :func:`torus_all_gather`). Each phase is
    one step repeated ``R = max(side) - 1`` times, its chunks' bytes spread over the ``R``
    (a shorter ring's finish earlier does not shorten the phase). Equal sides ``s``:
    ``2 k (s-1) alpha + 2 (p-1)/p n / (2 k b)``, ``b`` a port's bandwidth, ``2 k b`` what
    a GPU injects: half of one bidirectional ring's transfer time on a 2D torus (Google's
    ParaGraph torus-2d reduce-scatter and all-gather, paragraph/translation/reducescatter/
    torus_2d_reducescatter_translator.cc: one stage per dimension, each running every
    dimension at once on ``1/k`` of the data). Unequal sides weight the chunks
    (:func:`_torus_weights`) so that the first phase ends on every dimension at once."""
    phases, rounds = _torus_phases(group, graph)
    k = len(phases)
    steps = [Step(f"reduce-scatter phase {t + 1}/{k}", pairs, rounds, reduce=reduce)
             for t, (pairs, reduce) in enumerate(phases)]
    steps += [Step(f"all-gather phase {t + 1}/{k}", phases[k - 1 - t][0], rounds)
              for t in range(k)]
    return steps
