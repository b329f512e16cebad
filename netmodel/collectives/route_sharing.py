"""Routers shared between fabrics of one shape: a fabric built again (or with every link a
power of two faster) routes with the routes its first router learned.

Its one job is :func:`router_for` and its cache of routers (the last ``_SHAPES`` shapes
per thread; a router's shape is :class:`~netmodel.collectives.routing.Router`'s
``_shape``) and :func:`clear_shared_routes`, which forgets them.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from compute.memo import Lru
from netmodel.collectives.routing import Router

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

__all__ = ["clear_shared_routes", "router_for"]

#: :func:`router_for` keeps the routers of this many shapes (fabrics of up to
#: ``netmodel.collectives.routing._SHAPE_NODES`` nodes), the least recently used dropped first.
_SHAPES = 16
_SHARED = Lru(_SHAPES)


class _SharedRouter(Router):
    """A router sharing another's routes and caches (its ``__dict__``, the very same dict,
    so that what one learns the other reads), with its own graph and bandwidths."""

    __slots__ = ("_own_bandwidth", "_own_graph")

    @property  # type: ignore[override]
    def graph(self) -> nx.Graph:
        return self._own_graph

    @property  # type: ignore[override]
    def bandwidth(self) -> np.ndarray:
        return self._own_bandwidth


def router_for(graph: nx.Graph, *, pxn: bool = True) -> Router:
    """A :class:`Router` of ``graph`` that shares its routes with the routers of fabrics of
    the same shape made before in this thread (up to ``_SHAPES`` shapes, fabrics of up to
    ``_SHAPE_NODES`` nodes).

    Routes read the nodes (in order, with their kinds, switch tiers and switch latencies),
    the links (in adjacency order, with their latencies) and the link bandwidths only
    through their ratios (ECMP splits in proportion to bandwidth, signatures grouping GPUs
    wired alike): two fabrics alike in all of these, with bandwidths a power of two apart
    (a fabric and the same with every link twice as fast), have the same routes to the last
    bit (``pxn``: whether NCCL's PXN sends, :class:`Router`'s, part of the shape). Such a fabric's router is made from the first one's routes, with its own
    bandwidths (which costs read). The shape is read from the graph itself, so a graph
    edited before its router is made never shares a stale entry; as for :class:`Router`,
    do not edit a graph after making its router.

    >>> import networkx as nx
    >>> def star(bw):
    ...     g = nx.Graph(name="star", spec="", gpus=2)
    ...     g.add_node("sw", kind="switch", tier=0, radix=2, latency=1e-7,
    ...                in_network_reduction=False)
    ...     for i in range(2):
    ...         g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    ...         g.add_edge(f"gpu{i}", "sw", bandwidth=bw, latency=1e-8, medium="copper",
    ...                    lanes=1)
    ...     return g
    >>> a, b, c = router_for(star(1e9)), router_for(star(2e9)), router_for(star(3e9))
    >>> a._pair_cache is b._pair_cache, a._pair_cache is c._pair_cache
    (True, False)
    >>> b.bandwidth.tolist()
    [2000000000.0, 2000000000.0, 2000000000.0, 2000000000.0]
    """
    router = Router(graph, pxn=pxn)
    shape = router._shape
    if shape is None:
        return router
    key = (threading.get_ident(), shape)
    donor = _SHARED.recall(key)
    if donor is None:
        return _SHARED.put(key, router)
    shared = _SharedRouter.__new__(_SharedRouter)
    shared.__dict__ = donor.__dict__
    shared._own_graph = graph
    shared._own_bandwidth = router.bandwidth
    return shared


def clear_shared_routes() -> None:
    """Forget the routers :func:`router_for` keeps (their graphs are then freed when
    nothing else holds them)."""
    _SHARED.clear()
