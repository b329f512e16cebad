"""A fabric's links as arrays, read from the graph in one pass (:func:`edge_arrays`).

They are shared by the analyses that would each loop over every edge in Python: the bill
of materials and port use (:mod:`topologies.inventory`), the scale-out NICs
(:mod:`topologies.nics`), the failure domains (:mod:`topologies.failure_domains`), the
hardware radius (:mod:`topologies.hardware_radius`) and what a fabric can carry
(:mod:`topologies.analysis`).

>>> from topologies import build
>>> e = edge_arrays(build("fat-tree:k=4"))   # 16 GPUs, 20 switches, 48 links
>>> len(e.nodes), len(e.u), e.kinds
(36, 48, ('gpu', 'switch'))
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.validate import of_type

__all__ = ["EdgeArrays", "edge_arrays", "edges_of"]


@dataclass(frozen=True)
class EdgeArrays:
    """A fabric's links as arrays, read from the graph in one pass (:func:`edge_arrays`) and
    shared by the analyses that would each loop over every edge in Python: ``u``/``v``
    index ``nodes`` (edge order is ``graph.edges()``'s), ``node_kind`` codes index
    ``kinds``, ``medium`` and ``optics`` (a circuit's, default co-packaged optics) codes
    index ``media``; ``node_bandwidth`` each node's links' bandwidth summed in its adjacency
    order (``graph.degree(weight="bandwidth")``'s sums)."""

    nodes: list
    kinds: tuple
    node_kind: np.ndarray
    u: np.ndarray
    v: np.ndarray
    links: np.ndarray
    bandwidth: np.ndarray
    lanes: np.ndarray
    media: tuple
    medium: np.ndarray
    optics: np.ndarray
    node_bandwidth: np.ndarray

    def kind_is(self, kind: str) -> np.ndarray:
        """Boolean per node: of ``kind``."""
        return self.node_kind == _code(self, kind)

    def end_parts(self, ends: np.ndarray) -> np.ndarray:
        """Per edge: :func:`~topologies.inventory.cable_end_parts` at its end ``ends`` (``self.u`` or ``self.v``)."""
        kind = self.node_kind[ends]
        return np.where(kind == _code(self, "ocs"), 0.0,
                        np.where(kind == _code(self, "gpu"), np.ceil(self.links - 1e-9),
                                 self.links))

    def medium_in(self, media: Iterable[str]) -> np.ndarray:
        """Boolean per edge: its medium one of ``media``."""
        return np.isin(self.medium, self._media_codes(media))

    def optics_in(self, media: Iterable[str]) -> np.ndarray:
        """Boolean per edge: its ``optics`` one of ``media``."""
        return np.isin(self.optics, self._media_codes(media))

    def _media_codes(self, media: Iterable[str]) -> list[int]:
        wanted = set(media)
        return [i for i, m in enumerate(self.media) if m in wanted]


def _codes(values: list) -> tuple[tuple, np.ndarray]:
    """The distinct ``values`` in order of first appearance and each value's code."""
    names = tuple(dict.fromkeys(values))
    code = {x: i for i, x in enumerate(names)}
    return names, np.fromiter(map(code.__getitem__, values), dtype=np.int64, count=len(values))


def edge_arrays(graph: nx.Graph) -> EdgeArrays:
    """One pass over ``graph`` into an :class:`EdgeArrays` (for
    :func:`~topologies.inventory.bill_of_materials`, :func:`~topologies.inventory.port_use`
    and :func:`~topologies.inventory.port_fill`, which build one each where not given it).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric: every node has a ``kind``, every edge a ``medium``, ``bandwidth`` and
        ``lanes``.

    Returns
    -------
    EdgeArrays

    Examples
    --------
    >>> from topologies import build
    >>> e = edge_arrays(build("leaf-spine:leaves=2,radix=4"))
    >>> len(e.u), e.kinds, int(e.links.sum())
    (8, ('switch', 'gpu'), 8)
    """
    adj = graph._adj
    nodes = list(adj)
    index = {n: i for i, n in enumerate(nodes)}
    kinds, node_kind = _codes(list(map(itemgetter("kind"), graph._node.values())))
    # every edge twice (once from each end), in adjacency order; graph.edges() yields an
    # edge from the end it meets first, the one of lower node index (a self-loop once)
    degree = np.fromiter(map(len, adj.values()), dtype=np.int64, count=len(nodes))
    total = int(degree.sum())
    far = np.fromiter(map(index.__getitem__, chain.from_iterable(adj.values())),
                      dtype=np.int64, count=total)
    near = np.repeat(np.arange(len(nodes), dtype=np.int64), degree)
    first = np.flatnonzero(near <= far)
    data = list(chain.from_iterable(nbrs.values() for nbrs in adj.values()))
    ds = list(map(data.__getitem__, first.tolist()))
    media, medium = _codes(list(map(itemgetter("medium"), ds)) +
                           [d.get("optics", "co-packaged-optics") for d in ds])
    m = len(ds)
    return EdgeArrays(
        nodes=nodes, kinds=kinds, node_kind=node_kind, u=near[first], v=far[first],
        links=np.array([d.get("links", 1) for d in ds], dtype=float).reshape(m),
        bandwidth=np.array(list(map(itemgetter("bandwidth"), ds)), dtype=float).reshape(m),
        lanes=np.array(list(map(itemgetter("lanes"), ds))).reshape(m),
        media=media, medium=medium[:m], optics=medium[m:],
        node_bandwidth=np.bincount(near, weights=np.array(
            list(map(itemgetter("bandwidth"), data)), dtype=float).reshape(total),
            minlength=len(nodes)))


def edges_of(graph: nx.Graph, edges: EdgeArrays | None = None) -> EdgeArrays:
    """``edges`` where they are ``graph``'s :func:`edge_arrays` (node list and link count
    compared, O(n)), built where None; another graph's refused in one line naming which
    differs (they index nodes this one lacks, or misread its links).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.
    edges : EdgeArrays, optional
        What the caller has of ``graph``'s :func:`edge_arrays`.

    Returns
    -------
    EdgeArrays

    Raises
    ------
    UserError
        ``edges`` that are not an :class:`EdgeArrays`, or another graph's.

    Examples
    --------
    >>> from topologies import build
    >>> edges_of(build("ring:n=4"), edge_arrays(build("ring:n=8")))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: edges must be edge_arrays(graph) of this graph (4 nodes, 4 links), got another graph's (8 nodes, 8 links)
    >>> g = build("ring:n=4"); e = edge_arrays(g); g.remove_edge(*next(iter(g.edges)))
    >>> edges_of(g, e)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: edges must be edge_arrays(graph) of this graph (4 nodes, 3 links), got arrays of the same nodes with 4 links
    """
    if of_type("edges", edges, EdgeArrays, "edge_arrays(graph)") is None:
        return edge_arrays(graph)
    if edges.nodes != list(graph) or len(edges.u) != graph.number_of_edges():
        got = (f"another graph's ({len(edges.nodes):,} nodes, {len(edges.u):,} links)"
               if edges.nodes != list(graph) else
               f"arrays of the same nodes with {len(edges.u):,} links")
        raise UserError(f"edges must be edge_arrays(graph) of this graph ({len(graph):,} "
                        f"nodes, {graph.number_of_edges():,} links), got {got}")
    return edges


def _code(e: EdgeArrays, kind: str) -> int:
    """``kind``'s code in ``e.node_kind`` (-1: no node of it)."""
    return e.kinds.index(kind) if kind in e.kinds else -1
