"""The hardware blast radius of a fabric: for one failure of each component class of
:mod:`topologies.failure_domains`, how many GPUs it takes out, read from the graph alone
(no model is placed; this module knows nothing of collectives or instances).

A failure takes out the GPUs it removes or stops (every GPU wired to a failed tier-0
switch) plus the GPUs it cuts off from the largest connected part left (counted by GPUs;
the definition :mod:`netmodel.study.blast_radius` uses). Per class (:class:`BlastClass`):
the mean over its components, weighted by the parts each stands for (how often it fails),
and the worst case. A single node that is no articulation point, or a single link that is
no bridge, of a connected fabric cuts nothing (one depth-first pass finds both,
:func:`_cut_points`); every other component is grouped by its local structure (the kinds,
tiers and degrees of what it removes) and one per group is evaluated on the graph without
it (:class:`_Cutter`, on the :class:`~topologies.graph_ops.CellArrays` of the fabric's
:class:`~topologies.edge_arrays.EdgeArrays`).

Examples
--------
>>> from topologies import build
>>> radius = {b.cls: b for b in hardware_radius(build("torus:dims=4x4"), gpus_per_host=4)}
>>> radius["gpu-die"].gpus_max, radius["copper-end"].gpus_max   # a torus has no cut point
(1, 0)
>>> radius["host"].gpus_mean   # a host's 4 GPUs (one row of the torus) and nothing cut off
4.0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass
from itertools import accumulate, chain

import networkx as nx
import numpy as np

from topologies.edge_arrays import EdgeArrays, edge_arrays
from topologies.failure_domains import CLASSES, component_arrays, join_parts
from topologies.graph_ops import CellArrays

__all__ = ["BlastClass", "hardware_radius"]


@dataclass(frozen=True)
class BlastClass:
    """The hardware blast radius of one component class of a fabric: ``components`` and
    ``parts`` (physical parts, the rate weight), GPUs one failure removes, stops or cuts off,
    ``gpus_mean`` (weighted by parts) and ``gpus_max``, and how many structural groups were
    evaluated on the graph (``evaluated``; the others cut nothing by construction)."""

    cls: str
    components: int
    parts: float
    gpus_mean: float
    gpus_max: int
    evaluated: int


class _Cutter(CellArrays):
    """GPUs a failure cuts off: the :class:`~topologies.graph_ops.CellArrays` of a graph
    (read from its :func:`~topologies.edge_arrays.edge_arrays` ``edges``, where the caller has
    them) with ``gpu``, a boolean per node."""

    def __init__(self, graph: nx.Graph, edges: EdgeArrays | None = None):
        e = edge_arrays(graph) if edges is None else edges
        super().__init__(edges=e)
        self.gpu = e.kind_is("gpu")

    def parts(self) -> int:
        """Connected parts of the whole graph."""
        return int(self.labels(np.ones(len(self.lo), dtype=bool))[0])

    def cut(self, nodes: Iterable[Hashable],
            edges: Collection[tuple[Hashable, Hashable]]) -> int:
        """GPUs outside the largest connected part (by GPUs) once ``nodes`` and ``edges``
        are gone (removed GPUs not counted)."""
        index = self.index
        return self.cut_at([index[x] for x in nodes],
                           [(index[u], index[v]) for u, v in edges])

    def cut_at(self, nodes: list[int], edges: Collection[tuple[int, int]],
               added: Collection[tuple[int, int]] = ()) -> int:
        """:meth:`cut` of nodes and edges given by position, with the links ``added``
        (positions) joined in (a failed GPU's NIC handed on to a GPU of its server)."""
        n = len(self.nodes)
        dead = np.zeros(n, dtype=bool)
        dead[nodes] = True
        _, labels = self.labels(self.kept(dead, edges))
        labels = join_parts(labels, added)
        alive = self.gpu & ~dead
        counts = np.bincount(labels[alive], minlength=int(labels.max()) + 1 if n else 0)
        return int(alive.sum() - (counts.max() if counts.size else 0))


def _cut_points(graph: nx.Graph) -> tuple[set, set]:
    """``(articulation points, bridges as frozensets)`` of a graph without self-loops (with
    them: networkx's) from one depth-first pass with low points (Tarjan) over the nodes'
    integer positions: ``w`` a DFS child of ``u``, ``u`` is an articulation point when
    ``low[w] >= disc[u]`` (the root when it has two or more children) and ``u``-``w`` a
    bridge when ``low[w] > disc[u]``. networkx's ``bridges`` builds a directed copy of the
    graph for its chain decomposition (3.6 s of fat-tree:k=64's 24 s); its
    biconnected components keep an edge stack and the components this needs none of
    (0.33 s of CPU for fat-tree:k=64, against 0.16 s for this pass).

    >>> art, bridges = _cut_points(nx.path_graph(3))
    >>> art, sorted(sorted(b) for b in bridges)
    ({1}, [[0, 1], [1, 2]])
    """
    art, pairs = _low_points(graph)
    return art, {frozenset(p) for p in pairs}


def _low_points(graph: nx.Graph) -> tuple[set, set]:
    """:func:`_cut_points` with each bridge as two tuples, ``(u, v)`` and ``(v, u)`` (cheaper
    to make and look up than a frozenset: a fabric's every GPU link may be one)."""
    if nx.number_of_selfloops(graph):
        return (set(nx.articulation_points(graph)),
                {p for u, v in nx.bridges(graph) for p in ((u, v), (v, u))})
    nodes = list(graph._adj)
    art, pairs = _low_positions(graph)
    return ({nodes[i] for i in art},
            {p for q, u in pairs for p in ((nodes[q], nodes[u]), (nodes[u], nodes[q]))})


def _low_positions(graph: nx.Graph) -> tuple[list[int], list[tuple[int, int]]]:
    """:func:`_low_points` of a graph without self-loops by node position: the articulation
    points and each bridge once, ``(parent, child)`` of the search."""
    adj = graph._adj
    index = dict(zip(adj, range(len(adj)), strict=True))
    nbr = list(map(index.__getitem__, chain.from_iterable(adj.values())))
    end = list(accumulate(map(len, adj.values())))   # one past a node's last neighbour
    pos = [0, *end[:-1]]                             # its next neighbour to look at
    disc = [0] * len(adj)                            # discovery time; 0: not yet seen
    low = [0] * len(adj)
    parent = [-1] * len(adj)
    art: list = []
    bridges: list = []
    t = 0
    for root in range(len(adj)):
        if disc[root]:
            continue
        t += 1
        disc[root] = low[root] = t
        children = 0
        stack = [root]
        while stack:
            u = stack[-1]
            p = pos[u]
            if p < end[u]:
                pos[u] = p + 1
                w = nbr[p]
                if not disc[w]:
                    parent[w] = u
                    t += 1
                    disc[w] = low[w] = t
                    stack.append(w)
                elif w != parent[u] and disc[w] < low[u]:   # a back edge (no parallel edges)
                    low[u] = disc[w]
                continue
            stack.pop()
            q = parent[u]
            if q < 0:
                continue
            if low[u] < low[q]:
                low[q] = low[u]
            if low[u] >= disc[q]:
                if q == root:
                    children += 1
                else:
                    art.append(q)
                if low[u] > disc[q]:
                    bridges.append((q, u))
        if children > 1:
            art.append(root)
    return art, bridges


def _low_arrays(graph: nx.Graph, e: EdgeArrays) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_low_points` as arrays: articulation point? per node, bridge? per edge (of
    the edge arrays ``e``)."""
    n = len(e.nodes)
    art = np.zeros(n, dtype=bool)
    if nx.number_of_selfloops(graph):
        names, pairs = _low_points(graph)
        index = dict(zip(e.nodes, range(n), strict=True))
        at, pairs = [index[x] for x in names], [(index[u], index[v]) for u, v in pairs]
    else:
        at, pairs = _low_positions(graph)
    art[at] = True
    codes = np.array([min(q, u) * n + max(q, u) for q, u in pairs], dtype=np.int64)
    return art, np.isin(e.u * n + e.v, codes)


def hardware_radius(graph: nx.Graph, *, gpus_per_host: int | None = None,
                    edges: EdgeArrays | None = None) -> tuple[BlastClass, ...]:
    """The hardware blast radius of every component class ``graph`` has (see the module
    docstring).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric (:mod:`topologies.schema`); it may be cut apart already (circuits that
        leave islands), the radius then counts from its largest part.
    gpus_per_host : int, optional
        GPUs of a host where the fabric has no ``server`` labels
        (:func:`~topologies.enclosures.hosts`); None: no ``host`` class there.
    edges : EdgeArrays, optional
        The graph's :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them.

    Returns
    -------
    tuple of BlastClass
        One per component class the fabric has, in
        :data:`topologies.failure_domains.CLASSES` order.

    Examples
    --------
    >>> from topologies import build
    >>> r = {b.cls: b for b in hardware_radius(build("leaf-spine:leaves=2,radix=4"))}
    >>> r["leaf"].gpus_max, r["spine"].gpus_max, r["gpu-die"].gpus_mean
    (2, 0, 1.0)
    >>> r["transceiver"].gpus_mean  # half the cables are a GPU's only one
    0.5
    """
    e = edge_arrays(graph) if edges is None else edges
    n = len(e.nodes)
    cutter = _Cutter(graph, e)
    connected = cutter.parts() == 1 if n else True
    art, bridge = _low_arrays(graph, e) if connected else (np.zeros(n, dtype=bool),
                                                           np.zeros(len(e.u), dtype=bool))
    gpu = cutter.gpu
    # a node's description (kind, tier, degree, GPU neighbours, articulation point?) as a
    # small int, equal descriptions the same int: a component's signature from these sorts
    # and hashes ints, and two signatures are equal exactly when those of the descriptions
    # are (one description, one int)
    loop = e.u == e.v
    ends = np.concatenate([e.u[~loop], e.v[~loop], e.u[loop]])
    far = np.concatenate([e.v[~loop], e.u[~loop], e.u[loop]])
    degree = np.fromiter(map(len, graph._adj.values()), dtype=np.int64, count=n) \
        + np.bincount(e.u[loop], minlength=n)
    gpu_nbrs = np.bincount(ends, weights=gpu[far], minlength=n)
    tier = np.fromiter((d.get("tier", -1) for d in graph._node.values()), dtype=float,
                       count=n)
    rows = np.stack([e.node_kind, tier, degree, gpu_nbrs, art], axis=1) if n \
        else np.zeros((0, 5))
    desc = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1) if n \
        else np.zeros(0, dtype=np.int64)
    bridges = None

    def is_bridge(u: int, v: int) -> bool:
        nonlocal bridges
        if bridges is None:
            bridges = set((e.u[bridge] * n + e.v[bridge]).tolist())
        return min(u, v) * n + max(u, v) in bridges

    def block(cc, cache: dict) -> np.ndarray:
        """Radii of the array block of one class: a node alone cuts nothing where it is no
        articulation point of a connected fabric, a link alone nothing where it is no bridge
        (or is only thinned); else one cut per signature, at its first component."""
        radii = np.zeros(len(cc.parts))
        if cc.node is not None and len(cc.node):
            at = cc.node
            radii += gpu[at]
            need = np.flatnonzero(art[at]) if connected else np.arange(len(at))
            keys = desc[at[need]]
        elif cc.edge is not None and len(cc.edge):
            at = cc.edge
            cut_off = bridge[at]
            need = np.flatnonzero(cc.removed & cut_off) if connected \
                else np.flatnonzero(cc.removed)
            a, b = desc[e.u[at[need]]], desc[e.v[at[need]]]
            keys = (np.minimum(a, b) * len(desc) + np.maximum(a, b)) * 2 + cut_off[need]
        else:
            return radii
        if not len(need):
            return radii
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        values = []
        for k, f in zip(uniq.tolist(), first.tolist(), strict=True):
            i = int(at[need[f]])
            if cc.edge is None:
                sig: tuple = ((k,), ())
            else:
                pair, flag = divmod(k, 2)
                sig = ((), ((*divmod(pair, len(desc)), bool(flag)),))
            if sig not in cache:
                cache[sig] = cutter.cut_at([i], ()) if cc.edge is None else \
                    cutter.cut_at([], [(int(e.u[i]), int(e.v[i]))])
            values.append(cache[sig])
        radii[need] += np.asarray(values, dtype=float)[inverse.reshape(-1)]
        return radii

    def radius(cls: str, cc) -> BlastClass:
        cache: dict = {}
        radii = block(cc, cache).tolist()
        index = cutter.index if cc.rest else {}
        for c in cc.rest:
            # GPUs a tier-0 switch stops go with it
            gone = [index[x] for x in ((*c.nodes, *c.disabled) if c.disabled else c.nodes)]
            edges = [(index[u], index[v]) for u, v in c.edges]
            if c.handed:   # a GPU handing its NIC's links to the first GPU of its heirs
                added = tuple((index[heirs[0]], index[s]) for (_, s), heirs in c.handed)
                sig = ("handed", tuple(int(desc[i]) for i in gone),
                       tuple((int(desc[h]), int(desc[s])) for h, s in added))
                if sig not in cache:
                    cache[sig] = cutter.cut_at(gone, edges, added)
                radii.append(int(gpu[gone].sum()) + cache[sig])
                continue
            # the two shapes of most components first: a node alone, a link alone; each
            # cuts nothing where it is no articulation point or bridge of a connected
            # fabric, else its signature is the general one below
            if not edges and len(gone) == 1:
                lost = int(gpu[gone[0]])
                if connected and not art[gone[0]]:
                    radii.append(lost)
                    continue
                sig = ((int(desc[gone[0]]),), ())
            elif not gone and len(edges) == 1:
                lost = 0
                cut_off = is_bridge(*edges[0]) if connected else False
                if connected and not cut_off:
                    radii.append(0)
                    continue
                a, b = int(desc[edges[0][0]]), int(desc[edges[0][1]])
                sig = ((), ((a, b, cut_off) if a <= b else (b, a, cut_off),))
            elif not gone and not edges:
                radii.append(0)
                continue
            else:
                lost = int(gpu[gone].sum())
                # and the nodes its edges share (a twin-port module's two cables: from one
                # leaf to two spines, or from two leaves to one spine, alike edge by edge)
                ends = Counter(x for e2 in edges for x in e2)
                sig = (tuple(sorted(desc[gone].tolist())),
                       tuple(sorted((*sorted((int(desc[u]), int(desc[v]))),
                                     is_bridge(u, v) if connected else False)
                                    for u, v in edges)),
                       tuple(sorted((int(desc[x]), c) for x, c in ends.items() if c > 1)))
            if sig not in cache:
                cache[sig] = cutter.cut_at(gone, edges)
            radii.append(lost + cache[sig])
        w = cc.weights
        r = np.asarray(radii, dtype=float)
        mean = float(np.dot(w, r) / w.sum()) if w.sum() > 0 else float(r.mean())
        return BlastClass(cls=cls, components=len(cc), parts=float(w.sum()),
                          gpus_mean=mean, gpus_max=int(r.max()), evaluated=len(cache))

    comps = component_arrays(graph, gpus_per_host=gpus_per_host, edges=e)
    return tuple(radius(cls, comps[cls]) for cls in CLASSES if len(comps[cls]))
