"""Routes and footprints of serving instances on one cell of a cluster (what a failure must
touch to change an instance's cost, :class:`~netmodel.study.reliability_cluster.Cluster`):
the collectives' router on the whole cell, or, on a cell of GPUs alone, the same route
found on the part of the cell on the shortest paths between its ends, parts alike routed
once.

>>> from topologies.specs import build
>>> r = CellRoutes(build("torus:dims=4x4"))
>>> r.gpus_only, sorted(r.route("gpu0", "gpu5"))
(True, [('gpu0', 'gpu1'), ('gpu0', 'gpu4'), ('gpu1', 'gpu5'), ('gpu4', 'gpu5')])
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from functools import cached_property
from itertools import repeat

import networkx as nx

from topologies.graph_ops import edge_key, frozen_attrs, shortest_path_part

__all__ = ["CellRoutes"]


class CellRoutes:
    """Routes on the cell ``graph`` (not changed once routed); ``ocs``: an optical
    circuit-switched fabric, whose instances' footprints are their members' own links
    (circuits are set per instance)."""

    def __init__(self, graph: nx.Graph, *, ocs: bool = False):
        self.graph = graph
        self.ocs = ocs
        #: routes of parts of the cell alike (:meth:`local_route`), by the part's shape
        self.local_routes: dict = {}
        self._pairs: dict = {}   # (a, b) -> route
        #: attribute dicts (by id: the cell's own, alive as long as it) -> a small number,
        #: equal for equal attributes (:func:`~topologies.graph_ops.frozen_attrs`)
        self._codes: dict = {}
        self._frozen_codes: dict = {}
        self._raw_codes: dict = {}   # (items, their values' types) -> code (_code)

    def footprint(self, members: Iterable[Hashable]) -> set:
        """The members, every link of theirs (by :func:`~topologies.graph_ops.edge_key`)
        with what it leads to, and every link and switch on a shortest path between two of
        them. Members wired to the same switches share the middle of their routes, so one
        route per pair of distinct attachments does."""
        adj = self.graph._adj   # networkx's documented internals: read only
        members = tuple(members)
        out = set(members)
        by: dict = {}
        for m in members:
            nbrs = adj[m]
            by.setdefault(frozenset(nbrs), m)
            out.update(nbrs)
            out.update([edge_key(m, n) for n in nbrs])
        if self.ocs:
            return out
        reps = list(by.values())
        for i, a in enumerate(reps):
            for b in reps[i + 1:]:
                for u, v in self.route(a, b) or ():
                    out.add(u)
                    out.add(v)
                    out.add(edge_key(u, v))
        return out

    def learn(self, instances: Iterable[Iterable[Hashable]]) -> None:
        """Learn at once the routes :meth:`footprint` of each of ``instances`` asks for, on
        a cell with switches (:meth:`~netmodel.collectives.routing.Router.learn_routes`;
        the footprints and routes are the same)."""
        if self.ocs or self.gpus_only:
            return
        adj = self.graph._adj   # networkx's documented internals: read only
        src, dst = [], []
        for members in instances:
            by: dict = {}
            for m in members:
                by.setdefault(frozenset(adj[m]), m)
            reps = list(by.values())
            for i, a in enumerate(reps):
                src.extend(repeat(a, len(reps) - i - 1))
                dst.extend(reps[i + 1:])
        if src:
            self.router.learn_routes(src, dst)

    def route(self, a, b) -> tuple | None:
        """The links (``(u, v)`` pairs) of the cell's route from GPU ``a`` to GPU ``b``
        (:meth:`local_route` on a cell of GPUs alone), None where no path joins them. Each
        pair is routed once until :meth:`forget` (an instance's footprint and its shape ask
        for the same pairs)."""
        pairs = self._pairs
        key = (a, b)
        if key in pairs:
            return pairs[key]
        if self.gpus_only:
            out = self.local_route(a, b)
        else:
            router = self.router
            r = router.route(a, b)
            out = None if r is None else tuple(router.link_name(link) for link in r.links)
        pairs[key] = out
        return out

    def forget(self) -> None:
        """Forget the pairs :meth:`route` has routed (the routes of parts alike are kept)."""
        self._pairs.clear()

    @cached_property
    def gpus_only(self) -> bool:
        """Whether the cell is GPUs alone, wired to each other (a torus, a mesh: no switch,
        no scale-out link, every link of some bandwidth): a route between two of them then
        runs on the shortest paths between them alone, and :meth:`local_route` finds it on
        those paths instead of searching the whole cell (a breadth-first search of the whole
        cell per destination made the footprints of a 2,048-GPU torus 23 s of 32)."""
        g = self.graph
        if len(g) <= 1 or any(k != "gpu" for _, k in g.nodes(data="kind")):
            return False
        # each link's dict read from the adjacency (twice), not through an edge view
        return all(not d.get("scaleout", False) and float(d.get("bandwidth", 0.0)) > 0
                   for nbrs in g._adj.values() for d in nbrs.values())

    def local_route(self, a, b) -> tuple | None:
        """The links (``(u, v)`` pairs) of the route from ``a`` to ``b`` on a cell of
        GPUs alone (:attr:`gpus_only`): the router's, found on the part of the cell that
        lies on a shortest path between them (every node ``v`` with ``d(a, v) + d(v, b) =
        d(a, b)``, their links in the cell's order), which is all the route's search looks
        at. Parts alike (the same links and attributes in the cell's order: a torus's
        translates) are routed once, on a copy renamed by place. Two GPUs wired to each
        other: their link, the part's only one (half of a TP-4 instance's pairs in a row
        of a torus)."""
        adj = self.graph._adj   # networkx's documented internals: read only
        if b in adj[a] and a != b:
            return ((a, b),)
        on = shortest_path_part(adj, a, b)
        if on is None:
            return None
        order = self.node_order
        nodes = sorted(on, key=order.__getitem__)
        pos = {v: i for i, v in enumerate(nodes)}
        node = self.graph._node
        codes, code = self._codes, self._code
        rows = []
        for v in nodes:   # each node's code and its links within the part (pos, code)
            c = codes.get(id(node[v]))
            row = []
            for w, e in adj[v].items():
                p = pos.get(w)
                if p is not None:
                    x = codes.get(id(e))
                    row.append((p, code(e) if x is None else x))
            rows.append((code(node[v]) if c is None else c, tuple(row)))
        key = (pos[a], pos[b], tuple(rows))
        memo = self.local_routes
        hit = memo.get(key)
        if hit is None:
            from netmodel.collectives.routing import Router

            h = nx.Graph()
            h.graph.update(self.graph.graph)
            for i, v in enumerate(nodes):
                h._node[i] = dict(node[v])
            for i, v in enumerate(nodes):
                h._adj[i] = {pos[w]: e for w, e in adj[v].items() if w in pos}
            router = Router(h)
            r = router.route(pos[a], pos[b])
            hit = memo[key] = tuple(router.link_name(link) for link in r.links)
        return tuple([(nodes[u], nodes[v]) for u, v in hit])

    def _code(self, attrs: dict) -> int:
        """A small number for the cell's attribute dict ``attrs``, equal for equal
        attributes (worked out once per dict, not per route)."""
        codes = self._codes
        c = codes.get(id(attrs))
        if c is None:
            # by its items and their values' types as they stand first (equal ones are
            # equal frozen_attrs; a cell's dicts are mostly alike, and frozen_attrs was
            # most of the first routing of a 131,072-GPU torus's parts), else frozen
            try:
                raw = (tuple(attrs.items()), tuple(map(type, attrs.values())))
                c = self._raw_codes.get(raw)
            except TypeError:   # a value not hashable
                raw = None
            if c is None:
                frozen = self._frozen_codes
                c = frozen.setdefault(frozen_attrs(attrs), len(frozen))
                if raw is not None:
                    self._raw_codes[raw] = c
            codes[id(attrs)] = c
        return c

    @cached_property
    def node_order(self) -> dict:
        """Each node's place in the cell's order."""
        return {n: i for i, n in enumerate(self.graph)}

    @cached_property
    def router(self):
        """The collectives' router of the whole cell (a cell with switches)."""
        from netmodel.collectives.routing import Router

        return Router(self.graph)
