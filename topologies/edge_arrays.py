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
from itertools import chain, compress
from operator import itemgetter

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.validate import of_type
from topologies.schema_reads import edge_count

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
    kinds, node_kind = _codes(list(map(itemgetter("kind"), graph._node.values())))
    # every edge twice (once from each end), in adjacency order; graph.edges() yields an
    # edge from the end it meets first, the one of lower node index (a self-loop once)
    degree = np.fromiter(map(len, adj.values()), dtype=np.int64, count=len(nodes))
    total = int(degree.sum())
    far = _positions(nodes, adj.values(), total)
    near = np.repeat(np.arange(len(nodes), dtype=np.int64), degree)
    first = np.flatnonzero(near <= far)
    # each edge's dict from the end it meets first, without a list of every entry's
    ds = list(compress(chain.from_iterable(map(dict.values, adj.values())),
                       (near <= far).tolist()))
    m = len(ds)
    media, medium = _codes(list(map(itemgetter("medium"), ds)) +
                           [d.get("optics", "co-packaged-optics") for d in ds])
    return EdgeArrays(
        nodes=nodes, kinds=kinds, node_kind=node_kind, u=near[first], v=far[first],
        links=np.array([d.get("links", 1) for d in ds], dtype=float).reshape(m),
        bandwidth=np.array(list(map(itemgetter("bandwidth"), ds)), dtype=float).reshape(m),
        lanes=np.array(list(map(itemgetter("lanes"), ds))).reshape(m),
        media=media, medium=medium[:m], optics=medium[m:],
        node_bandwidth=np.bincount(near, weights=np.array(list(map(
            itemgetter("bandwidth"), chain.from_iterable(map(dict.values, adj.values())))),
            dtype=float).reshape(total), minlength=len(nodes)))


def _positions(nodes: list, rows: Iterable[Iterable], count: int) -> np.ndarray:
    """The position in ``nodes`` of each of the ``count`` keys of ``rows`` one after the
    other (each key a node of ``nodes``: the graph's adjacency rows, its neighbours). A key
    that is the very object ``nodes`` holds (a builder's graph: one string per node, shared
    by its node and adjacency entries) is found by its identity with numpy; any other (an
    equal but distinct object, as a file or a relabelling may leave) through a dict of the
    nodes. A 1,000,000-GPU torus's 6,000,000 entries: 1 s, where a dict lookup each took
    3.1 s and the dict 0.7 s more.

    >>> a, b = "gpu" + str(0), "gpu" + str(1)
    >>> _positions([a, b], [[b, a], ["gpu" + str(1)]], 3).tolist()   # the last: equal, not b
    [1, 0, 1]
    """
    if not nodes or not count:
        return np.zeros(count, dtype=np.int64)
    own = np.fromiter(map(id, nodes), dtype=np.uint64, count=len(nodes))
    wanted = np.fromiter(map(id, chain.from_iterable(rows)), dtype=np.uint64, count=count)
    order = np.argsort(own)
    ids = own[order]
    at = np.minimum(np.searchsorted(ids, wanted), len(nodes) - 1)
    out = order[at]
    miss = np.flatnonzero(ids[at] != wanted)
    if len(miss):
        index = {n: i for i, n in enumerate(nodes)}
        keys = list(chain.from_iterable(rows))
        out[miss] = [index[keys[i]] for i in miss.tolist()]
    return out.astype(np.int64, copy=False)


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
    # the link count in C (networkx's, through its degree view, took 4.6 s a call of a
    # 1,000,000-GPU torus's topology show)
    links = edge_count(graph)
    if edges.nodes != list(graph) or len(edges.u) != links:
        got = (f"another graph's ({len(edges.nodes):,} nodes, {len(edges.u):,} links)"
               if edges.nodes != list(graph) else
               f"arrays of the same nodes with {len(edges.u):,} links")
        raise UserError(f"edges must be edge_arrays(graph) of this graph ({len(graph):,} "
                        f"nodes, {links:,} links), got {got}")
    return edges


def _code(e: EdgeArrays, kind: str) -> int:
    """``kind``'s code in ``e.node_kind`` (-1: no node of it)."""
    return e.kinds.index(kind) if kind in e.kinds else -1
