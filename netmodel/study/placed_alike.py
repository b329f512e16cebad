"""Whether two groups of GPUs are placed alike on a fabric graph (:func:`placed_alike`), so
that a collective costs the same on both.

A renaming of the graph's nodes that takes one group to the other, position by position,
keeps every link and every node's attributes. An instance's slices and stage boundaries
placed alike are costed once (:class:`~netmodel.study.placed_cost.GroupComm`,
:class:`~netmodel.study.placed_cost.PlacedInstance`).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Hashable, Sequence

import networkx as nx

from topologies.schema import LABELS

__all__ = ["ALIKE_NODES", "placed_alike"]


#: Nodes a :func:`placed_alike` check follows at most before it gives up (then the slices
#: are costed each).
ALIKE_NODES = 4096


def _natural(node: Hashable) -> tuple:
    """``node``'s name with its runs of ASCII digits as numbers (``gpu10`` after ``gpu9``);
    other characters, other scripts' digits and superscripts included, stay text.

    >>> _natural("gpu10") > _natural("gpu9"), _natural("²"), _natural("gpu٣")
    (True, ('²',), ('gpu٣',))
    """
    return tuple(int(x) if i % 2 else x for i, x in enumerate(re.split(r"([0-9]+)", str(node))))


def placed_alike(graph: nx.Graph, a: Sequence[Hashable], b: Sequence[Hashable],
                 labels: dict | None = None) -> bool:
    """Whether the GPUs ``a`` are placed on ``graph`` as ``b`` are, position by position:
    a renaming of the graph's nodes that takes ``a[j]`` to ``b[j]`` keeps every link (its
    ends and attributes) and every node's attributes (its placement labels,
    :data:`~topologies.schema.LABELS`, up to renaming their values). A collective's cost
    on ``a`` is then its cost on ``b`` (slices of an instance placed alike are costed
    once, :class:`~netmodel.study.placed_cost.GroupComm`).

    The renaming is found by following links out from the GPUs (each node's unmatched
    neighbours paired in order of kind, tier and name; a node taken to itself is not
    followed: its other neighbours stay), completed as a swap (what ``x`` is taken to is
    taken back to ``x``), then checked link by link; False where it does not hold or
    grows past :data:`ALIKE_NODES` nodes (alike placements it misses are costed again,
    never the other way). First the two are tried swapped with nothing else moved.

    Parameters
    ----------
    graph : networkx.Graph
        The fabric both groups are placed on.
    a, b : sequence of hashable
        The two groups' GPUs, in order (a slice's, a boundary pair's).
    labels : dict, optional
        What the check keeps of ``graph`` between calls (its GPUs by label value, its
        nodes' order), for a caller asking of one graph many times.

    Returns
    -------
    bool
        True only where the renaming was found and holds.

    >>> g = nx.Graph()
    >>> g.add_nodes_from(("g0", "g1", "g2", "g3", "g4", "g5"), kind="gpu")
    >>> for i, leaf in enumerate(("leaf0", "leaf0", "leaf1", "leaf1", "leaf2", "leaf2")):
    ...     g.add_edge(f"g{i}", leaf, bandwidth=1.0)
    >>> g.add_edges_from((("leaf0", "spine"), ("leaf1", "spine")), bandwidth=4.0)
    >>> g.add_edge("leaf2", "spine", bandwidth=2.0)
    >>> placed_alike(g, ("g2", "g3"), ("g0", "g1")), placed_alike(g, ("g4", "g5"), ("g0", "g1"))
    (True, False)
    >>> placed_alike(g, ("g1", "g2"), ("g0", "g1"))      # across two leaves
    False
    """
    if len(a) != len(b) or len(set(a)) != len(a) or len(set(b)) != len(b):
        return False
    data, adj = graph.nodes, graph.adj
    # every renaming tried takes a[j] to b[j]: one that cannot keep its attributes and
    # degree fails the final check whatever else it moves (most of the pairs of a stage
    # boundary asked, each GPU's ``device`` its own, were found unlike only there)
    if not all(u == v or _node_kept(data, adj, u, v) for u, v in zip(a, b, strict=True)):
        return False
    if labels is None:
        labels = {}
    phi = dict(zip(a, b, strict=True))
    phi.update(zip(b, a, strict=True))
    if len(phi) == 2 * len(a) and _renaming_holds(data, adj, phi, labels):
        return True   # the two swapped, nothing else moved
    phi = dict(zip(a, b, strict=True))
    keys = labels.setdefault("order", {})

    def order(n):
        hit = keys.get(n)
        if hit is None:
            d = data[n]
            hit = keys[n] = (str(d.get("kind")), d.get("tier", -1), _natural(n))
        return hit

    used = set(b)
    todo = deque(u for u in a if phi[u] != u)   # breadth first: nearest pairs first
    while todo:
        u = todo.popleft()
        v = phi[u]
        if len(adj[u]) != len(adj[v]):
            return False
        free_u = sorted((w for w in adj[u] if w not in phi), key=order)
        free_v = sorted((w for w in adj[v] if w not in used), key=order)
        if len(free_u) != len(free_v):
            return False
        for x, y in zip(free_u, free_v, strict=True):
            phi[x] = y
            used.add(y)
            if x != y:
                todo.append(x)
        if len(phi) > ALIKE_NODES:
            return False
    for u, v in list(phi.items()):   # a swap: what u is taken to goes back to u
        if v not in phi:
            phi[v] = u
    if set(phi.values()) != set(phi):
        return False
    return _renaming_holds(data, adj, phi, labels)


def _node_kept(data, adj, u, v) -> bool:
    """Whether taking node ``u`` to ``v`` keeps its degree and attributes (a GPU's
    placement labels aside: they are renamed), as :func:`_renaming_holds` checks each
    node it moves."""
    du, dv = data[u], data[v]
    if du.keys() != dv.keys() or len(adj[u]) != len(adj[v]):
        return False
    gpu = du.get("kind") == "gpu"
    return all(dv[k] == x for k, x in du.items() if not (gpu and k in LABELS))


def _renaming_holds(data, adj, phi: dict, labels: dict) -> bool:
    """Whether ``phi`` (nodes to nodes, one to one on its keys; every other node kept)
    keeps every link and node attribute, placement labels up to renaming their values:
    :func:`placed_alike`'s check. ``labels``: the graph's GPUs by (label, value), filled
    on first need."""
    moved: dict = {}                 # label -> {value: its new value}
    for u, v in phi.items():
        if u == v:
            continue
        du, dv = data[u], data[v]
        if du.keys() != dv.keys() or len(adj[u]) != len(adj[v]):
            return False
        for k, x in du.items():
            if k in LABELS and du.get("kind") == "gpu":
                if moved.setdefault(k, {}).setdefault(x, dv[k]) != dv[k]:
                    return False
            elif dv[k] != x:
                return False
        av = adj[v]
        for w, d in adj[u].items():
            e = av.get(phi.get(w, w))
            if e is None or e != d:
                return False
    for k, m in moved.items():       # renamed values: one to one, every holder renamed
        if len(set(m.values())) != len(m):
            return False
        for x, y in m.items():
            if x == y:
                continue
            if "by label" not in labels:
                by = labels["by label"] = {}
                for n, d in data.items():
                    if d.get("kind") == "gpu":
                        for key in LABELS:
                            if key in d:
                                by.setdefault((key, d[key]), set()).add(n)
            held = labels["by label"].get((k, x), ())
            if m.get(y, y) == y or any(phi.get(h, h) == h for h in held):
                return False
    return True

