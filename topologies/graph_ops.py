"""Fast graph operations the reliability models repeat on a large fabric (a copy, the part
of it on the shortest paths between two nodes, its connected parts once some parts are
gone), on networkx's documented node and adjacency dicts or on arrays of the edges.

>>> from topologies.specs import build
>>> g = build("torus:dims=4x4")
>>> sorted(shortest_path_part(g._adj, "gpu0", "gpu5"))
['gpu0', 'gpu1', 'gpu4', 'gpu5']
>>> parts = CellArrays(g).partition({"gpu1", "gpu4"}, ())
>>> len(parts), len(set(parts.values()))
(14, 1)
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from functools import cached_property
from itertools import compress, repeat

import networkx as nx
import numpy as np

__all__ = ["CellArrays", "attrs_key", "ball", "copy_graph", "edge_key", "frozen_attrs",
           "hop_array", "labels_to_parts", "largest_part", "path_count", "path_counts",
           "shortest_path_part"]


def copy_graph(graph: nx.Graph, *, attrs: bool = True) -> nx.Graph:
    """``graph.copy()`` (the same nodes, links and adjacency orders, every attribute dict
    copied) made by filling networkx's documented node and adjacency dicts directly, for an
    ``nx.Graph``: the copy of a 16,384-GPU torus per instance costed took 0.37 s.

    ``attrs=False``: the nodes' and links' attribute dicts are ``graph``'s own, shared
    (the graph-level dict is the copy's): a copy to remove nodes and links from and then
    read, never to change an attribute on. A 131,072-GPU torus: 0.35 s and 126 MB for
    the full copy, a tenth of both for this one.

    >>> from topologies.specs import build
    >>> g = build("torus:dims=4x4")
    >>> h = copy_graph(g, attrs=False)
    >>> h.remove_node("gpu0")
    >>> len(g), len(h), h.edges["gpu1", "gpu2"] is g.edges["gpu1", "gpu2"]
    (16, 15, True)
    """
    if type(graph) is not nx.Graph:
        return graph.copy()
    out = nx.Graph()
    out.graph.update(graph.graph)
    node, adj = out._node, out._adj
    if not attrs:
        node.update(graph._node)
        # each row copied, its values (one dict per link, both ways) kept
        adj.update({n: nbrs.copy() for n, nbrs in graph._adj.items()})
        return out
    for n, d in graph._node.items():
        node[n] = d.copy()
        adj[n] = {}
    seen = set()
    for n, nbrs in graph._adj.items():   # the order Graph.copy adds the links in
        row = adj[n]
        for v, d in nbrs.items():
            if v not in seen:
                dd = d.copy()
                row[v] = dd
                adj[v][n] = dd
        seen.add(n)
    return out


def ball(adj, a, b=None) -> dict | None:
    """Hops from ``a`` of every node no further than ``b`` (a breadth-first search from
    ``a`` that stops at ``b``'s depth) on the adjacency ``adj``, in the order the search
    reaches them; None where ``b`` is not reached. Without ``b``: every node ``a``
    reaches (networkx allows no None node)."""
    dist = {a: 0}
    frontier, depth = [a], 0
    while frontier and b not in dist:
        depth += 1
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if v not in dist:
                    dist[v] = depth
                    nxt.append(v)
        frontier = nxt
    return dist if b is None or b in dist else None


def path_counts(adj, dist: dict) -> dict:
    """Shortest (fewest-hop) paths from the search's start to every node of ``dist``, a
    :func:`ball` (the start first, every node after those one hop nearer), in its order:
    a node's count is the sum of its neighbours' one hop nearer (a level at a time, the
    sums in C).

    >>> from topologies.specs import build
    >>> adj = build("torus:dims=4x4")._adj
    >>> path_counts(adj, ball(adj, "gpu0", "gpu10"))["gpu10"]   # C(4, 2) orders x 2 x 2 ways
    24
    """
    count: dict = {}
    nearer: dict = {}   # the level before this one's counts
    level: dict = {}
    depth, zeros = 0, repeat(0)
    for v, d in dist.items():
        if d != depth:
            count.update(level)
            nearer, level, depth = level, {}, d
        level[v] = sum(map(nearer.get, adj[v], zeros)) if d else 1
    count.update(level)
    return count


def _both_ways(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every link ``u[i]``-``v[i]`` as two arcs (``from``, ``to``), the smallest integer type
    that holds the positions (a million-node fabric's six million arcs in 48 MB, not 96)."""
    top = max(int(u.max()), int(v.max())) if len(u) else 0
    kind = np.int32 if top < 2**31 - 1 else np.int64
    return np.concatenate([u, v]).astype(kind), np.concatenate([v, u]).astype(kind)


def hop_array(n: int, u: np.ndarray, v: np.ndarray, source: int) -> np.ndarray:
    """Hops from node position ``source`` to each of ``n`` nodes over the links
    ``u[i]``-``v[i]`` (positions), -1 where not reached: :func:`ball` on arrays. The search
    is scipy's breadth-first order (C), each node's depth then read off its search tree by
    pointer jumping (each node's hops to an ancestor and the ancestor's ancestor, doubled
    per pass: a few numpy passes, log2 of the depth). A 1,000,000-GPU torus: 0.5 s, where
    :func:`ball`'s dicts took 16 s.

    >>> hop_array(5, np.array([0, 1, 2]), np.array([1, 2, 0]), 1).tolist()   # 3, 4 apart
    [1, 0, 1, -1, -1]
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    a, b = _both_ways(np.asarray(u), np.asarray(v))
    arcs = csr_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
    _, parent = breadth_first_order(arcs, source, directed=True, return_predecessors=True)
    at = np.arange(n)
    reached = parent >= 0
    reached[source] = True
    up = np.where(parent >= 0, parent, at)   # the root and the unreached: their own
    hops = (up != at).astype(np.int64)       # to ``up``
    while True:
        higher = up[up]
        if np.array_equal(higher, up):
            break
        hops += hops[up]
        up = higher
    return np.where(reached, hops, -1)


def path_count(u: np.ndarray, v: np.ndarray, hops: np.ndarray, source: int,
               target: int) -> int:
    """Shortest (fewest-hop) paths from ``source`` to ``target`` (positions) over the links
    ``u[i]``-``v[i]``, ``hops`` the :func:`hop_array` from ``source``: :func:`path_counts`
    on arrays, exact (Python integers: a 100x100x100 torus's far pair has about 10^70). A
    node's count is the sum of its neighbours' one hop nearer, a level at a time up to
    ``target``'s, each level's sums one ``np.add.reduceat`` over its arcs grouped by
    node.

    >>> u, v = np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3])   # a square: 0-1-3, 0-2-3
    >>> path_count(u, v, hop_array(4, u, v, 0), 0, 3)
    2
    """
    depth = int(hops[target])
    if depth < 0:
        raise ValueError("target is not reached from source")
    a, b = _both_ways(np.asarray(u), np.asarray(v))
    level = hops[b]
    step = (level == hops[a] + 1) & (level <= depth) & (hops[a] >= 0)
    a, b, level = a[step], b[step], level[step]
    order = np.lexsort((b, level))   # by level, then by node
    a, b, level = a[order], b[order], level[order]
    bounds = np.searchsorted(level, np.arange(1, depth + 2))
    count = np.zeros(len(hops), dtype=object)   # Python ints: 0
    count[source] = 1
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if lo == hi:
            continue
        nodes = b[lo:hi]
        starts = np.flatnonzero(np.r_[True, nodes[1:] != nodes[:-1]])
        count[nodes[starts]] = np.add.reduceat(count[a[lo:hi]], starts)
    return int(count[target])


def shortest_path_part(adj, a, b) -> set | None:
    """Every node on a shortest path from ``a`` to ``b`` (``d(a, v) + d(v, b) = d(a, b)``)
    on the adjacency ``adj``; None where no path joins them. A search from each end, the
    smaller frontier a level further at a time, until they meet: the first level of one
    that reaches the other's search, every node of it that does (``M``, each at ``r_a``
    from ``a`` and ``r_b`` from ``b``, ``d(a, b) = r_a + r_b``: every shortest path
    crosses ``M``); then back from ``M`` towards each end a hop at a time: a node is on
    a shortest path when a neighbour one hop further from that end is. Two balls of
    about half the distance, not one of all of it (3 hops in a 3D torus: 25 + 7 nodes,
    not 63)."""
    if a == b:
        return {a}
    da, db = {a: 0}, {b: 0}
    fa, fb = [a], [b]
    meet: list = []
    while not meet:
        if not fa or not fb:
            return None
        grow_a = len(fa) <= len(fb)
        mine, other, front = (da, db, fa) if grow_a else (db, da, fb)
        depth = mine[front[0]] + 1
        nxt = []
        for u in front:
            for v in adj[u]:
                if v not in mine:
                    mine[v] = depth
                    nxt.append(v)
                    if v in other:
                        meet.append(v)
        if grow_a:
            fa = nxt
        else:
            fb = nxt
    on = set(meet)
    for dist in (da, db):   # back towards each end from the meeting level
        level, depth = meet, dist[meet[0]]
        while depth > 0:
            depth -= 1
            nxt = []
            for u in level:
                for v in adj[u]:
                    if v not in on and dist.get(v) == depth:
                        on.add(v)
                        nxt.append(v)
            level = nxt
    return on


def edge_key(u, v) -> tuple:
    """A link's ends in one order, whichever way it is named (by their text)."""
    return (u, v) if str(u) <= str(v) else (v, u)


def frozen_attrs(attrs: dict) -> tuple:
    """An attribute dict as a hashable value whatever order it was set in, each value with
    its type (1 is not True); values that are not hashable by their repr. Slower than
    :func:`attrs_key`, for keys that must match across builds.

    >>> frozen_attrs({"b": 1, "a": True}) == frozen_attrs({"a": True, "b": 1})
    True
    >>> frozen_attrs({"a": 1}) == frozen_attrs({"a": True})
    False
    """
    out = tuple(sorted((k, type(v).__name__, v) for k, v in attrs.items()))
    try:
        hash(out)
    except TypeError:
        return tuple((k, t, repr(v)) for k, t, v in out)
    return out


def attrs_key(d: dict) -> tuple:
    """A link's attributes as a hashable value, in the order they were set (a builder sets
    them alike; two orders only tell alike links apart), unhashable values by their
    repr."""
    out = tuple(d.items())
    try:
        hash(out)
    except TypeError:
        return tuple((k, repr(v)) for k, v in out)
    return out


def largest_part(labels: np.ndarray, keep: np.ndarray) -> tuple[int | None, int]:
    """The largest part among the positions ``keep`` marks whose label is not -1 (a
    :meth:`CellArrays.part_labels`): ``(label, how many of them are off it)``; on a tie
    the part of the first such position; ``(None, 0)`` where there is none.

    >>> largest_part(np.array([0, 1, 1, -1, 0, 2]), np.array([1, 1, 1, 1, 1, 0], bool))
    (0, 2)
    """
    lab = labels[keep & (labels >= 0)]
    if not len(lab):
        return None, 0
    counts = np.bincount(lab)
    main = int(lab[np.argmax((counts == counts.max())[lab])])
    return main, int(np.count_nonzero(lab != main))


def labels_to_parts(nodes: list, labels: np.ndarray) -> dict:
    """``{node: label}`` of every node (in ``nodes`` order) whose label is not -1 (a
    :meth:`CellArrays.part_labels`), made from the arrays (a pass in Python over the 19,000
    nodes of a 16,384-GPU cell per failure took 12 s of a ``compare --reliability``).

    >>> labels_to_parts(["a", "b", "c"], np.array([1, -1, 0]))
    {'a': 1, 'c': 0}
    """
    keep = labels >= 0
    return dict(zip(compress(nodes, keep.tolist()), labels[keep].tolist(), strict=True))


class CellArrays:
    """A graph's nodes and links as arrays, read once, for the connected parts left when
    some nodes and links are gone (:meth:`partition`; :meth:`kept` and :meth:`labels` by
    position): ``nodes`` (the graph's node order), ``lo`` and ``hi`` each link's two ends
    by position (``graph.edges()`` order, ``lo`` the end the graph meets first), ``index``
    each node's position.

    ``graph`` is read here; ``edges``, a graph's :class:`~topologies.edge_arrays.EdgeArrays`
    (:func:`~topologies.edge_arrays.edge_arrays`: the same nodes and links in the same order),
    is taken as it is read already, without a second pass over the links.

    >>> from topologies.specs import build
    >>> c = CellArrays(build("ring:n=4"))
    >>> c.nodes, c.lo.tolist(), c.hi.tolist()
    (['gpu0', 'gpu1', 'gpu2', 'gpu3'], [0, 0, 1, 2], [3, 1, 2, 3])
    >>> dead = np.zeros(4, dtype=bool)
    >>> c.labels(c.kept(dead, [(1, 0), (2, 3)]))[0]   # two links of the ring gone
    2
    """

    def __init__(self, graph: nx.Graph | None = None, *, edges=None):
        if (graph is None) == (edges is None):
            raise TypeError("CellArrays takes a graph or its edges (EdgeArrays), not both")
        if edges is not None:
            self.nodes, self.lo, self.hi = edges.nodes, edges.u, edges.v
            return
        self.nodes = list(graph.nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        index = self.index
        ends = np.array([(index[u], index[v]) for u, v in graph.edges()],
                        dtype=np.int64).reshape(-1, 2)
        self.lo, self.hi = ends.T.copy()

    @cached_property
    def index(self) -> dict:
        """Node -> position (made on first use where the arrays came from ``edges``)."""
        return dict(zip(self.nodes, range(len(self.nodes)), strict=True))

    @cached_property
    def code(self) -> np.ndarray:
        """Each link as one integer, ``min * n + max`` of its ends' positions."""
        n = len(self.nodes)
        return np.minimum(self.lo, self.hi) * n + np.maximum(self.lo, self.hi)

    def kept(self, dead: np.ndarray, gone: Collection[tuple[int, int]]) -> np.ndarray:
        """Per link: kept once the nodes where ``dead`` (a boolean per node) is true and
        the links ``gone`` (pairs of positions, either way round) are removed."""
        keep = ~(dead[self.lo] | dead[self.hi])
        if gone:
            n = len(self.nodes)
            keep &= ~np.isin(self.code, [min(u, v) * n + max(u, v) for u, v in gone])
        return keep

    def labels(self, keep: np.ndarray) -> tuple[int, np.ndarray]:
        """``(parts, label per node)``: the connected parts of the graph of every node and
        the links where ``keep`` is true (a removed node is a part of its own)."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = len(self.nodes)
        m = coo_matrix((np.ones(int(keep.sum())), (self.lo[keep], self.hi[keep])),
                       shape=(n, n))
        return connected_components(m, directed=False)

    def part_labels(self, gone_nodes: Collection[Hashable],
                    gone_edges: Iterable[tuple[Hashable, Hashable]]) -> np.ndarray:
        """:meth:`partition` as an array by position: each node's label, -1 for a node of
        ``gone_nodes``.

        >>> from topologies.specs import build
        >>> CellArrays(build("ring:n=4")).part_labels({"gpu1"}, [("gpu2", "gpu3")]).tolist()
        [0, -1, 2, 0]
        """
        index = self.index
        dead = np.zeros(len(self.nodes), dtype=bool)
        dead[[index[x] for x in gone_nodes]] = True
        _, labels = self.labels(self.kept(dead, {(index[u], index[v]) for u, v in gone_edges}))
        labels[dead] = -1
        return labels

    def partition(self, gone_nodes: Collection[Hashable],
                  gone_edges: Iterable[tuple[Hashable, Hashable]]) -> dict:
        """Connected part of every node not in ``gone_nodes`` once those nodes and the
        links ``gone_edges`` (either way round) are removed: ``{node: label}``."""
        return labels_to_parts(self.nodes, self.part_labels(gone_nodes, gone_edges))
