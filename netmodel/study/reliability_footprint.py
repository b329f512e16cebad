"""The footprint, shape and members' places of each instance of a reliability cluster, and
the local effect of one failure on them: the signature a symmetry class's components are
grouped by (the module doc of :mod:`netmodel.study.reliability_cluster`).

An instance's *footprint* is its members and every link and switch on a route between two
of them (:class:`~netmodel.study.cell_routes.CellRoutes`): a failure that touches none of it
leaves the instance as it was. Its *shape* (:attr:`Footprints.shape_ids`) names how it is
wired, and a member's *place* how it sits in its instance, without switch names; a
failure's local effect (:meth:`Footprints.local`) holds them for the instances it touches.
:class:`Footprints` is a mixin of :class:`~netmodel.study.reliability_cluster.Cluster`,
which gives it the cell (``graph``), ``scenario``, ``instances``, ``member_of`` and
``_kinds``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cached_property
from typing import TYPE_CHECKING

from netmodel.study.cell_routes import CellRoutes
from topologies.graph_ops import attrs_key, edge_key

if TYPE_CHECKING:
    from topologies.failure_domains import Component

__all__ = ["Footprints"]


class Footprints:
    """Each instance's footprint, shape and members' places on a cluster's cell, and the
    local effect of one failure (a mixin of
    :class:`~netmodel.study.reliability_cluster.Cluster`, whose :meth:`~netmodel.study.
    reliability_cluster.Cluster.effects` groups a class's components by it)."""

    # ------------------------------------------------------------------ footprints
    @property
    def _index(self) -> dict:
        """Element (node or sorted edge) -> indices of the instances whose footprint holds
        it (:meth:`_routed`)."""
        return self._routed[0]

    @cached_property
    def _routed(self) -> tuple:
        """(:attr:`_index`, :attr:`_shapes`): each instance's footprint and shape worked out
        together, so that each pair of its members is routed once for both (the routes
        forgotten after each instance: kept for every pair of a 131,072-GPU torus they took
        70 MB)."""
        inv: defaultdict = defaultdict(list)   # no empty list made per element seen again
        shapes = []
        keys: dict = {}   # link attribute dicts' ids (the cell's, alive) -> attrs_key
        routes = self._routes
        routes.learn(self.instances)   # every pair's route fields at once, then lookups
        for i, inst in enumerate(self.instances):
            for e in self._footprint(inst):
                inv[e].append(i)
            shapes.append(self._shape(inst, keys))
            routes.forget()
        inv.default_factory = None   # a plain mapping from here: a missing element is none
        return inv, tuple(shapes)

    @cached_property
    def _routes(self) -> CellRoutes:
        """Routes and footprints of instances on the cell
        (:class:`~netmodel.study.cell_routes.CellRoutes`)."""
        return CellRoutes(self.graph, ocs=self.scenario.is_ocs)

    def _footprint(self, members) -> set:
        """An instance's footprint (:meth:`~netmodel.study.cell_routes.CellRoutes.
        footprint`): its members, their links and every link and switch on a route
        between two of them."""
        return self._routes.footprint(members)

    def _route(self, a, b) -> tuple | None:
        """The links of the cell's route from GPU ``a`` to GPU ``b`` (None where no path
        joins them): :meth:`~netmodel.study.cell_routes.CellRoutes.route`."""
        return self._routes.route(a, b)

    @cached_property
    def shape_ids(self) -> tuple:
        """Per instance of a cell, its :meth:`_shape` as a small number (the first
        instance's is 0): instances of one number are wired alike, so they cost alike healthy
        and a failure of the same local effect does to each what it does to the other."""
        ids: dict = {}
        return tuple(ids.setdefault(s, len(ids)) for s in self._shapes)

    @property
    def _shapes(self) -> tuple:
        """:meth:`_shape` of every instance of a cell (:meth:`_routed`)."""
        return self._routed[1]

    def _shape(self, members, keys: dict | None = None) -> tuple:
        """What an instance's healthy cost depends on, up to the builders' regularity (as
        the symmetry classes assume): per member in order, what it is wired to (named by
        first appearance in the instance) and the links' attributes, and the hops between
        each two distinct attachments. ``keys``: a memo of each link's
        :func:`~topologies.graph_ops.attrs_key` by its attribute dict's id, shared by the
        instances of one pass (the dicts alive meanwhile), and each key by itself (one
        object per value)."""
        g = self.graph
        adj, node = g._adj, g._node   # networkx's documented internals: read only
        names: dict = {}
        wiring, reps = [], {}
        if keys is None:
            keys = {}
        for m in members:
            row = []
            nbrs = adj[m]
            for v, d in nbrs.items():
                k = names.setdefault(v, len(names))
                data = node[v]
                a = keys.get(id(d))
                if a is None:   # one object per value (a cell's links are mostly alike)
                    a = attrs_key(d)
                    a = keys[id(d)] = keys.setdefault(a, a)
                row.append((k, data.get("kind"), data.get("tier"), a))
            row.sort()
            wiring.append(tuple(row))
            reps.setdefault(frozenset(nbrs), m)
        hops = []
        if len(reps) > 1 and not self.scenario.is_ocs:
            rs = list(reps.values())
            for i, a in enumerate(rs):
                for b in rs[i + 1:]:
                    r = self._route(a, b)
                    hops.append(None if r is None else len(r))
        return tuple(wiring), tuple(hops)

    def _place(self, member) -> int:
        """A member's place in its instance, named without switch names: per neighbour
        (sorted) its kind, tier and how many members of the instance are wired to it (on a
        server of a TP-4 instance every GPU reads (NVSwitch, 4), (its rail leaf, 1); one GPU
        of an instance spread 1 + 3 over two servers reads (NVSwitch, 1)), as a small
        number (the first place's is 0, as :attr:`shape_ids`): a GPU on every OCS of
        ``ocs:ports=4096`` has 4,096 neighbours, and each failure's signature
        (:meth:`_local`) held, hashed and compared that tuple per member it hits."""
        memo = self.__dict__.setdefault("_places", {})
        out = memo.get(member)
        if out is None:
            adj, node = self.graph._adj, self.graph._node   # read only
            i = self.member_of[member]
            per = self.__dict__.setdefault("_place_counts", {})
            counts = per.get(i)   # per instance: neighbour -> members wired to it
            if counts is None:
                counts = per[i] = Counter(v for x in self.instances[i] for v in adj[x])
            place = tuple(sorted(
                (node[v].get("kind"), node[v].get("tier", -1), counts[v]) for v in adj[member]))
            ids = self.__dict__.setdefault("_place_ids", {})
            out = memo[member] = ids.setdefault(place, len(ids))
        return out

    def local(self, comp: Component) -> tuple:
        """A failure's local effect: (signature, GPUs out, GPUs wired to the failed parts,
        touched instances; shared: do not modify). The last answer is given again for the
        same component (the same object): reliability_spares asks it per instance the
        failure slows, and a switch every GPU is wired to took a pass over all of them
        each time."""
        last = self.__dict__.get("_last_local")
        if last is not None and last[0] is comp:
            return last[1]
        out = self._local(comp)
        self.__dict__["_last_local"] = (comp, out)
        return out

    def _local(self, comp: Component) -> tuple:
        """(signature, GPUs out (lost or stopped), GPUs wired to the failed parts, touched
        instances)."""
        if not (comp.nodes or comp.disabled or comp.scaled or comp.handed):
            return self._links_local(comp)
        kind = self._kinds
        failed = {n for n in comp.nodes if kind[n] == "gpu"}
        stopped = set(comp.disabled) - failed if comp.disabled else set()
        lost = failed | stopped
        index = self._index
        edges = comp.edges
        if comp.scaled:
            edges = (*edges, *(e for e, _ in comp.scaled))
        wired, touched = self._edge_hits(edges)
        tiers = []
        for n in comp.nodes:
            hit = index.get(n)
            if hit:
                touched.update(hit)
            if kind[n] != "gpu":
                tiers.append((kind[n], self.graph._node[n].get("tier", -1)))
                # networkx's documented internals (read only)
                wired.update(x for x in self.graph._adj[n] if kind[x] == "gpu")
        wired -= lost
        member_of = self.member_of
        # per instance touched: its members lost, stopped and wired to the failed parts
        # (counted from its members the failure takes or is wired to), and its shape, with
        # the place in it of each such member (:meth:`_place`): instances wired otherwise
        # (one across two leaves, or any of a random placement) fare otherwise, lose shares
        # of their own healthy rates, and a TP-4 instance of one GPU on a server and three
        # on another fares otherwise by which of them loses its NIC. Those places are
        # gathered from the GPUs lost or wired (a handful), not from every member of every
        # touched instance: most instances a failure touches are touched by their routes
        # alone (a torus link lies on the routes of tens of instances: 27 s of a 131,072-GPU
        # torus's blast radius went to those members)
        places = self.__dict__.get("_places") or {}   # _place's memo, read here first
        hits: dict = {}
        n_lost, n_stopped = {}, {}   # instance -> its members failed, stopped
        for m in (lost | wired) if lost else wired:
            i = member_of.get(m)
            if i is not None:
                p = places.get(m)
                if p is None:
                    p = self._place(m)
                f, st = m in failed, m in stopped
                hits.setdefault(i, []).append((f, st, p))
                if f:
                    n_lost[i] = n_lost.get(i, 0) + 1
                if st:
                    n_stopped[i] = n_stopped.get(i, 0) + 1
        touched.update(hits)
        handed = ()
        if comp.handed:
            # a failed GPU handing its NIC on (Component.handed): its heirs' routes change
            touched.update(member_of[h] for _, hs in comp.handed for h in hs
                           if h in member_of)
            # a GPU handing a NIC on is never one class with one that does not: per link,
            # its heirs in order, each an idle GPU (-1) or its place in its instance
            handed = tuple(tuple(self._place(h) if h in member_of else -1 for h in hs)
                           for _, hs in comp.handed)
        shapes = self.shape_ids
        per, routed = [], []   # routed: the shapes of those touched by routes alone
        for i in touched:
            hit = hits.get(i)
            if hit is None:
                routed.append(shapes[i])
                continue
            f, st = n_lost.get(i, 0), n_stopped.get(i, 0)
            per.append((f, st, len(hit) - f - st, shapes[i], tuple(sorted(hit))))
        idle_lost = len(failed) - sum(n_lost.values())
        idle_stopped = len(stopped) - sum(n_stopped.values())
        idle_wired = sum(1 for n in wired if n not in member_of)
        factors = tuple(sorted(round(f, 9) for _, f in comp.scaled)) if comp.scaled else ()
        tiers.sort()
        per.sort()
        routed.sort()
        # spare sites on a tier-0 switch it removes stop with it, those on nothing but
        # switches it removes are cut off (reliability_spares)
        sig = (comp.cls, tuple(tiers), idle_lost, idle_stopped, idle_wired,
               tuple(per), tuple(routed), len(comp.edges), factors,
               comp.shared, _sites_lost(self, comp), bool(comp.handed), handed,
               self._joint(comp))
        return sig, lost, wired, touched

    def _edge_hits(self, edges) -> tuple[set, set]:
        """``(wired, touched)`` of the links ``edges`` a failure removes or thins: the GPUs
        at their ends and the instances whose routes use them."""
        kind, index = self._kinds, self._index
        wired, touched = set(), set()
        for u, v in edges:
            if kind[u] == "gpu":
                wired.add(u)
            if kind[v] == "gpu":
                wired.add(v)
            hit = index.get(edge_key(u, v))
            if hit:
                touched.update(hit)
        return wired, touched

    def _links_local(self, comp: Component) -> tuple:
        """:meth:`_local` of a component that only removes links (a cable's end: most of a
        torus's components): no GPU lost or stopped, no switch tier, no factor, no spare
        site, no NIC handed on; the same signature."""
        member_of = self.member_of
        wired, touched = self._edge_hits(comp.edges)
        places = self.__dict__.get("_places") or {}   # _place's memo, read here first
        hits: dict = {}
        idle_wired = 0
        for m in wired:
            i = member_of.get(m)
            if i is None:
                idle_wired += 1
                continue
            p = places.get(m)
            hits.setdefault(i, []).append((False, False, self._place(m) if p is None else p))
        touched.update(hits)
        shapes = self.shape_ids
        per, routed = [], []
        for i in touched:
            hit = hits.get(i)
            if hit is None:
                routed.append(shapes[i])
            else:
                per.append((0, 0, len(hit), shapes[i], tuple(sorted(hit))))
        per.sort()
        routed.sort()
        sig = (comp.cls, (), 0, 0, idle_wired, tuple(per), tuple(routed), len(comp.edges), (),
               comp.shared, 0, False, (), self._joint(comp))
        return sig, set(), wired, touched

    def _joint(self, comp: Component) -> tuple:
        """What a component of several links (and no node) shares between them, for its
        signature: the nodes at two or more of their ends and the nodes next to two or more
        of their GPUs (each as kind, tier, how many), none for one link. A twin-port module
        (:mod:`topologies.optic_modules`) holding a server's two GPUs' NIC cables and one
        holding a leaf's ports to two servers' GPUs hit GPUs of the same places in an
        instance, but the first cuts the server off the network and the second takes one
        rail of two servers, each still reaching its other rail over NVLink."""
        if comp.nodes or len(comp.edges) + len(comp.scaled) < 2:
            return ()
        kind, node, adj = self._kinds, self.graph._node, self.graph._adj   # read only
        ends = Counter(x for e in (*comp.edges, *(e for e, _ in comp.scaled)) for x in e)
        near = Counter(v for g in ends if kind[g] == "gpu" for v in adj[g] if v not in ends)
        return tuple(tuple(sorted((kind[x], node[x].get("tier", -1), c)
                                  for x, c in counts.items() if c > 1))
                     for counts in (ends, near))


def _sites_lost(cluster: Footprints, comp: Component) -> int:
    """:func:`~netmodel.study.reliability_spares.sites_lost` (imported on first use:
    reliability_spares reads the cluster), none where ``comp`` removes no node."""
    if not comp.nodes:
        return 0
    from netmodel.study.reliability_spares import sites_lost

    return sites_lost(cluster, comp)
