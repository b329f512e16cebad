"""Routes found pair by pair or towards destinations, for the transfers templates do not route.

Those are a node to itself, direct neighbours, GPU-forwarded paths on direct-connect fabrics,
switch endpoints, and the switched routes that the templates work out once per pair of
signatures.

Its one job is searching: a bidirectional breadth-first search per pair
(:meth:`SearchedRoutes._search`), or, up to ``DAG_NODES`` nodes that links join, the shortest
paths towards each destination kept (:meth:`SearchedRoutes._dag`), the traffic spread hop by
hop over them in proportion to what each next hop can carry on to the destination,
``min(its bandwidth, the capacity behind it)`` (:meth:`SearchedRoutes._spread`). The same for many pairs at once,
as numpy arrays, is :mod:`netmodel.collectives.route_dags`'s
(:class:`~netmodel.collectives.route_dags.DagRoutes`), and where a split carries less than
a maximum flow over those paths (they split and merge again: tori), a maximum flow's shares
are :mod:`netmodel.collectives.route_flows`'s
(:class:`~netmodel.collectives.route_flows.FlowRoutes`); :class:`SearchedRoutes` takes both
as mixins. It is a mixin of :class:`~netmodel.collectives.routing.Router`, which calls it and
whose index it reads.

>>> import networkx as nx
>>> from netmodel.collectives.routing import Router
>>> g = nx.Graph(name="ring", spec="", gpus=3)
>>> for i in range(3):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
>>> for i in range(3):
...     g.add_edge(f"gpu{i}", f"gpu{(i + 1) % 3}", bandwidth=1e9, latency=1e-8,
...                medium="copper", lanes=1)
>>> g.add_node("gpu3", kind="gpu", gpu="H100-SXM")
>>> g.add_edge("gpu2", "gpu3", bandwidth=1e9, latency=1e-8, medium="copper", lanes=1)
>>> r = Router(g)._resolve("gpu0", "gpu3")  # forwarded by gpu2
>>> [Router(g).link_name(i) for i in r.links], r.hops
([('gpu0', 'gpu2'), ('gpu2', 'gpu3')], 2)
"""

from __future__ import annotations

import math
from collections.abc import Hashable

import numpy as np

from compute.errors import UserError
from netmodel.collectives.route_dags import DagRoutes
from netmodel.collectives.route_flows import FlowRoutes
from netmodel.collectives.route_types import KIND_GPU, KIND_SWITCH, TRANSIT_KINDS, Route

__all__ = ["SearchedRoutes"]


class SearchedRoutes(DagRoutes, FlowRoutes):
    """The routes of :class:`~netmodel.collectives.routing.Router` found by search (a mixin:
    the methods stay on ``Router``).

    Reads the router's index: ``graph``'s adjacency (``_adj``), node numbers and kinds
    (``_nodes``, ``_nid``, ``_n``, ``_code``, ``kind``), links (``_src``, ``_lids``,
    ``_port``, ``bandwidth``, ``latency``, ``scaleout``, ``_switch_latency``); and keeps its
    caches there (``_pair_cache``, ``_dags``, ``_nbr_rows``, ``_transit_nbrs``,
    ``_lat_list``, ``_so_list``). Many pairs at once: :class:`DagRoutes`; maximum flows:
    :class:`FlowRoutes`.
    """

    def _resolve(self, src, dst):
        """Cached: the Route of a transfer not routed by template, or None."""
        key = (src, dst)
        try:
            return self._pair_cache[key]
        except KeyError:
            pass
        hit = self._compute(src, dst)
        self._pair_cache[key] = hit
        return hit

    def _compute(self, src, dst):
        if src == dst:
            return Route(np.zeros(0, dtype=np.int64), np.zeros(0), 0.0, 0, False)
        kind = self.kind
        if src not in kind or dst not in kind:
            raise UserError(f"node {src if src not in kind else dst!r} is not in the fabric")
        if dst in self._adj[src]:
            lid = self._port(src)[dst]
            return Route(np.array([lid]), np.ones(1), float(self.latency[lid]), 1,
                         bool(self.scaleout[lid]))
        # a GPU without a NIC to or from another scale-up network: its stand-in's route
        # (:meth:`_one_forwarder`'s), whatever the search would find (every path it could
        # find crosses the scale-out network), so none is searched for
        nid = self._nid
        if (kind[src] == "gpu" and kind[dst] == "gpu"
                and (self._nic_less()[nid[src]] or self._nic_less()[nid[dst]])
                and self._scaleup_parts()[nid[src]] != self._scaleup_parts()[nid[dst]]):
            legs = self._stand_in_legs(src, dst)
            if legs is not None:
                return self._as_route(legs)
        # two GPUs routed here have no switched route (else they would have a template): a
        # GPU may forward; any other pair may use any path
        if (self._dag_sized and kind[src] in TRANSIT_KINDS
                and kind[dst] in TRANSIT_KINDS):
            found = self._from_dag(src, dst)
        else:
            found = self._search(src, dst, gpu_transit=True)
        if found is None:
            return None
        found = self._one_forwarder(src, dst, found)
        if found is None:
            return None
        return self._as_route(found)

    def hop_count(self, src, dst) -> float:
        """The hops of :meth:`route`'s route from ``src`` to ``dst`` (``inf`` where no path
        joins them), without laying the route where every node of the fabric is a GPU
        (rings, tori, meshes, circuits: every route there is split over the shortest paths,
        :meth:`_from_dag`, no GPU lending a switch port): ``src``'s depth in the kept
        search towards ``dst`` (:meth:`_dag`). A greedy ring order asks it of every pair
        of its group (8,128 on a 128-GPU torus), where laying each route cost 0.2 ms."""
        if self._every_gpu is None:
            self._every_gpu = bool((self._code == KIND_GPU).all())
        kind = self.kind
        if not (self._every_gpu and self._dag_sized) or src == dst or src not in kind \
                or dst not in kind:
            r = self.route(src, dst)
            return math.inf if r is None else r.hops
        start = self._dag(dst).get(src)
        return math.inf if start is None else start[0]

    def _as_route(self, found) -> Route:
        """``found`` (links, weights, latency, hops) as a :class:`Route`."""
        links, weights, latency, hops = found
        if self._so_list is None:
            self._so_list = self.scaleout.tolist()
        return Route(np.array(links, dtype=np.int64), np.array(weights, dtype=float), latency,
                     hops, any(map(self._so_list.__getitem__, links)))

    def _one_forwarder(self, src, dst, found):
        """``found`` (links, weights, latency, hops) with one choice of the GPU whose switch
        port it borrows wherever it had several: a *lending* GPU is one, neither end, that
        the route enters from or leaves to a switch (PXN borrows another GPU's NIC over
        NVLink); where the route holds lending GPUs off its first path (in the route's
        order), it keeps the shortest paths that avoid them.

        NCCL sends a channel through one NIC, rail-aligned; a GPU whose own NIC or leaf
        failed uses another one, not every NVLink neighbour's NIC at once. Spreading the
        traffic over all of them gave a failed leaf more bandwidth than the healthy route
        (one NIC): 2 x 8 B200 rail-optimized, gpu0 <-> gpu8 with leaf0 failed, 0.157x
        slowdown. Switches still spread traffic (ECMP) and GPUs that forward only between
        GPUs (rings, tori, meshes) keep every path; a route with one lending GPU per choice
        (a gateway Lite, a PXN hop) is unchanged. A route from or to a GPU without a NIC of
        its own crosses the scale-out network through that GPU's stand-in
        (:meth:`_stand_in`), the same NIC whatever the peer."""
        links = found[0]
        if not links:
            return found
        code = self._code
        la = np.asarray(links, dtype=np.int64)
        if self.scaleout[la].any():
            legs = self._stand_in_legs(src, dst)
            if legs is not None:
                return legs
        s, d = self._src[la], self._dst[la]
        sn, dn = self._nid[src], self._nid[dst]
        lend_out = (code[s] == KIND_GPU) & (code[d] == KIND_SWITCH) & (s != sn)
        lend_in = (code[d] == KIND_GPU) & (code[s] == KIND_SWITCH) & (d != dn)
        lending = set(s[lend_out].tolist()) | set(d[lend_in].tolist())
        if len(lending) < 2:
            return found  # one lending GPU (or none): no choice between them
        first: dict = {}
        for u, v in zip(s.tolist(), d.tolist(), strict=True):
            first.setdefault(u, v)
        keep, u = set(), sn
        while u != dn:  # the first path survives
            u = first[u]
            keep.add(u)
        # every lending GPU off the first path, whether the choice between them is made at
        # one node or earlier: a failed leaf's uplinks (rail-optimized 3 x 4, gpu1 <->
        # gpu4, leaf1's spine links failed) split over gpu0's NIC (via nvs0) and gpu5's
        # (via leaf1 and nvs1), two NICs where the healthy route has one (0.50x)
        drop = lending - keep
        if not drop:
            return found  # one lending GPU wherever there is a choice
        nodes = self._nodes
        return self._search(src, dst, gpu_transit=True,
                            avoid=frozenset(nodes[v] for v in drop))

    def _nic_less(self) -> np.ndarray:
        """Whether each node (by number) is a GPU without a link to the scale-out network
        (a switch of tier >= 1 or an optical switch): its NIC, its cable or its rail leaf
        failed, or it has none."""
        hit = self._nicless
        if hit is None:
            code = self._code
            gpu = code == KIND_GPU
            out = np.bincount(self._src[self.scaleout & gpu[self._src]], minlength=self._n)
            hit = self._nicless = gpu & (out[: self._n] == 0)
        return hit

    def _scaleup_parts(self) -> np.ndarray:
        """Each node's scale-up network (by node number): the connected parts of the fabric
        without the links of the scale-out network (:attr:`scaleout`). Two GPUs in different
        parts have no path but through the scale-out network."""
        hit = self._scaleup
        if hit is None:
            from scipy.sparse import coo_matrix
            from scipy.sparse.csgraph import connected_components
            keep = ~self.scaleout
            n = self._n
            adj = coo_matrix((np.ones(int(keep.sum()), dtype=np.int8),
                              (self._src[keep], self._dst[keep])), shape=(n, n))
            hit = self._scaleup = connected_components(adj, directed=False)[1]
        return hit

    def _stand_in_legs(self, src, dst):
        """The route ``src -> dst`` through the stand-ins of either end without a NIC
        (:meth:`_through_stand_ins`), or None (neither end has one, or a leg has no path)."""
        ends = self._stand_in(src), self._stand_in(dst)
        if ends == (None, None):
            return None
        return self._through_stand_ins(src, dst, *ends)

    def _stand_in(self, gpu):
        """The GPU whose NIC ``gpu`` sends and receives through when it has none of its own
        (:meth:`_nic_less`), or None (it has one, or no GPU near it has): the nearest over
        the scale-up network (GPU links and tier-0 switches, breadth first in adjacency
        order), one of its own server first among the nearest.

        NCCL, started again on a node whose GPU lost its NIC, gives it the NICs nearest it
        that are left (``ncclTopoGetLocalNet``: by the GPU's own device index and the
        channel, whatever the peer), through another GPU over NVLink (``PATH_PXN``) or
        through the host; one of them here, as a channel goes through one NIC
        (:meth:`_one_forwarder`). The search picked, per peer, the lender on the shortest
        path, so a GPU that lost its rail borrowed the peer's rail wherever a GPU of its
        server sat on it (700 ns where the healthy route climbs to the spines, 1690 ns:
        failures that sped collectives up, test_degraded_never_faster's PXN_LATENCY)."""
        cache = self._stand_ins
        if gpu in cache:
            return cache[gpu]
        out = None
        nid = self._nid
        if self._nic_less()[nid[gpu]]:
            adj, kind, tier = self._adj, self.kind, self.tier
            nicless = self._nic_less()
            server = self.graph.nodes[gpu].get("server")
            seen, level = {gpu}, [gpu]
            while level and out is None:
                nxt = []
                for u in level:
                    for v in adj[u]:
                        k = kind.get(v)
                        if v not in seen and (k == "gpu" or (k == "switch"
                                                            and tier.get(v, 0) < 1)):
                            seen.add(v)
                            nxt.append(v)
                near = [v for v in nxt if kind[v] == "gpu" and not nicless[nid[v]]]
                if near:
                    same = [v for v in near if server is not None
                            and self.graph.nodes[v].get("server") == server]
                    out = self._own_nic(gpu, same) if same else near[0]
                level = nxt
        cache[gpu] = out
        return out

    def _own_nic(self, gpu, same: list):
        """Of ``same`` (GPUs with a NIC of ``gpu``'s server, nearest it over the scale-up
        network, in adjacency order), the one whose NIC ``gpu`` shares: the nearest at or
        below its ``rail`` label, else the nearest above (the first where labels are
        missing). A server with fewer NICs than GPUs (rail_optimized's
        ``nics_per_server``) gives GPUs ``stride * j .. stride * j + stride - 1`` the NIC
        of GPU ``stride * j``, as an HGX board gives the GPUs of a PCIe switch its NIC;
        the first in adjacency order handed every GPU of a server one NIC (2 x 8 H100, 4
        NICs a server: the direct all-to-all 57.1 ms at 1 GiB, its 4 x 0.5 GiB a server
        through 4 x 50 GB/s at 94% being 22.8 ms)."""
        nodes = self.graph.nodes
        own = nodes[gpu].get("rail")
        rails = [nodes[v].get("rail") for v in same]
        if not isinstance(own, (int, np.integer)) or not all(
                isinstance(r, (int, np.integer)) for r in rails):
            return same[0]
        return min(zip(same, rails, strict=True),
                   key=lambda vr: (vr[1] > own, abs(own - vr[1])))[0]

    def _through_stand_ins(self, src, dst, via_src, via_dst):
        """The route ``src -> dst`` through the stand-ins (:meth:`_stand_in`) of either end
        that has one: its legs end to end (links and shares, latency and hops summed), or
        None where a leg has no path."""
        chain = [src]
        for x in (via_src, via_dst, dst):
            if x is not None and x != chain[-1]:
                chain.append(x)
        if len(chain) < 3:
            return None
        links, weights, latency, hops = [], [], 0.0, 0
        cache = self._pair_cache
        for a, b in zip(chain, chain[1:], strict=False):
            kept = (a, b) in cache
            r = self.route(a, b)
            if not kept and (a, b) != (src, via_src) and (a, b) != (via_dst, dst):
                # a leg to or from the far end (not a GPU's own leg to its stand-in, which
                # every peer shares) serves this pair alone: not kept, its Route made again
                # if asked for (a direct all-to-all of 2,048 GPUs with a rail leaf failed
                # kept 39,000 of them, 13 MB)
                cache.pop((a, b), None)
            if r is None:
                return None
            links += r.links.tolist()
            weights += r.weights.tolist()
            latency += r.latency
            hops += r.hops
        return links, weights, latency, hops

    def _search(self, src, dst, *, gpu_transit: bool, direct: bool = True,
                avoid: frozenset = frozenset()):
        """Bidirectional BFS; returns (link ids, weights, latency, hops) or None.
        ``direct=False``: a cable between ``src`` and ``dst`` is not taken; nodes in
        ``avoid`` forward nothing."""
        adj = self._adj
        kind = self.kind

        def ok(v: Hashable) -> bool:
            k = kind.get(v)
            return (k == "switch" or (gpu_transit and k == "gpu")) and v not in avoid

        def grow(frontier: list[Hashable], dist: dict[Hashable, int], target: Hashable,
                 depth: int) -> list[Hashable]:
            """One BFS level out of ``frontier``; the far end ``target`` may be entered
            (not from the near end itself, without ``direct``)."""
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if v not in dist and (v == target and (direct or depth > 0) or ok(v)):
                        dist[v] = depth + 1
                        nxt.append(v)
            return nxt

        ds, dd = {src: 0}, {dst: 0}
        fs, fd = [src], [dst]
        hs = hd = 0
        meet: list = []
        while fs and fd and not meet:
            if len(fs) <= len(fd):  # grow the smaller side
                fs = grow(fs, ds, dst, hs)
                hs += 1
                meet = [v for v in fs if v in dd]
            else:
                fd = grow(fd, dd, src, hd)
                hd += 1
                meet = [v for v in fd if v in ds]
        if not meet:
            return None
        total = hs + hd
        k = min(ds[v] for v in meet)  # all meeting nodes sit at one position k
        level: list[set[Hashable]] = [set() for _ in range(total + 1)]
        level[k] = {v for v in meet if ds[v] == k}
        for i in range(k, 0, -1):  # towards the source: ds decreases by one per hop
            prev = set()
            for v in level[i]:
                for u in adj[v]:
                    if ds.get(u) == i - 1:
                        prev.add(u)
            level[i - 1] = prev
        for i in range(k, total):  # towards the destination: dd decreases by one per hop
            nxt = set()
            want = total - i - 1
            for v in level[i]:
                for w in adj[v]:
                    if dd.get(w) == want:
                        nxt.add(w)
            level[i + 1] = nxt
        position = {v: i for i, nodes in enumerate(level) for v in nodes}
        # each next hop weighted by min(its bandwidth, what the next node can pass on
        # towards dst), worked out from dst back to src (as _dag does)
        cap = {dst: math.inf}
        rows = {}
        for i in range(total - 1, -1, -1):
            for u in level[i]:
                nbrs = adj[u]
                hops = [v for v in nbrs if position.get(v) == i + 1]
                ws = [min(nbrs[v]["bandwidth"], cap[v]) for v in hops]
                rows[u] = (hops, ws)
                cap[u] = sum(ws)

        def next_hops(u):
            hops, ws = rows[u]
            tot = cap[u]
            port = self._port(u)
            return [(v, port[v], w, tot) for v, w in zip(hops, ws, strict=True)]

        return self._spread(src, dst, total, next_hops)

    def _dag(self, dst, reach=None) -> dict:
        """The shortest paths towards ``dst`` through switches and GPUs, kept per
        destination: ``{node: (hops to dst, next hops)}``, each next hop ``(neighbour, link
        id, bandwidth, sum of the next hops' bandwidths)``. One breadth-first search serves
        every source routed to ``dst`` (a GPU forwarding ring routes all pairs).

        ``reach``: where given, the nodes asked (a step's sources): the search stops at the
        depth where the last of them is found, and the answer holds the nodes up to that
        depth only, each entry as the whole search gives it (a node's next hops and their
        bandwidths lie nearer ``dst``). Such a part is not kept (the whole one is, where
        the search ran to the end): on a degraded torus cell of 16,384 GPUs a group's few
        sources lie a few hops from their destination, where the whole search walked
        every node for each destination."""
        hit = self._dags.get(dst)
        if hit is not None:
            return hit
        left = None if reach is None else set(reach) - {dst}
        rows = self._nbr_rows
        if rows is None:
            rows = self._nbr_rows = {}
        transit = self._transit_nbrs
        if transit is None:
            kind = self.kind
            transit = self._transit_nbrs = {
                u: [v for v in nb if kind.get(v) in TRANSIT_KINDS] for u, nb in self._adj.items()}
        dist = {dst: 0}
        frontier, depth = [dst], 0
        while frontier and (left is None or left):
            depth += 1
            nxt = []
            for u in frontier:
                for v in transit.get(u, ()):
                    if v not in dist:
                        dist[v] = depth
                        nxt.append(v)
            frontier = nxt
            if left is not None:
                left.difference_update(nxt)
        dag = {}
        dist_get = dist.get
        cap = {dst: math.inf}  # what each node can pass on towards dst
        for u, du in dist.items():
            if du == 0:
                dag[u] = (0, ())
                continue
            row = rows.get(u)
            if row is None:  # (neighbour, link id, bandwidth) in adjacency order
                nbrs, port = self._adj[u], self._port(u)
                row = rows[u] = [(v, port[v], nbrs[v]["bandwidth"]) for v in nbrs]
            want = du - 1
            # dist lists nodes by increasing hops, so every next hop's capacity is known
            ahead = [(v, lid, min(b, cap[v])) for v, lid, b in row if dist_get(v) == want]
            tot = cap[u] = sum(x[2] for x in ahead)
            dag[u] = (du, tuple((v, lid, w, tot) for v, lid, w in ahead))
        if frontier and left is not None:
            return dag   # a part: the nodes beyond its depth not searched
        return self._dags.put(dst, dag)

    def _from_dag(self, src, dst):
        """:meth:`_search`'s answer for two switches or GPUs (GPUs may forward), from the
        kept shortest paths towards ``dst``: the same links, shares and latency, with the
        traffic split over the next hops in proportion to their bandwidth."""
        dag = self._dag(dst)
        start = dag.get(src)
        if start is None:
            return None
        return self._spread(src, dst, start[0], dag)

    def _spread(self, src, dst, total: int, next_hops):
        """One unit of traffic from ``src`` over ``total`` hops of shortest paths to
        ``dst``, split at each node over its next hops (``(v, link id, bandwidth, their
        bandwidths' sum)`` each: ``next_hops(u)``, or ``next_hops[u][1]`` for a
        :meth:`_dag`) in proportion to bandwidth: ``(link ids, shares, latency of the
        slowest path, total)``."""
        flow = {src: 1.0}
        arrive = {src: 0.0}
        links, weights = [], []
        if self._lat_list is None:
            self._lat_list = self.latency.tolist()
        lat, swl = self._lat_list, self._switch_latency.get
        add_link, add_weight = links.append, weights.append
        flow_get, arrive_get = flow.get, arrive.get
        dag = next_hops if isinstance(next_hops, dict) else None
        level = [src]
        bound = math.inf  # what src can carry on: the capacity split's bound on the flow
        for _ in range(total):
            ahead: dict = {}
            for u in level:
                f = flow[u]
                t0 = arrive[u] + swl(u, 0.0)
                for v, lid, b, tot in (dag[u][1] if dag is not None else next_hops(u)):
                    if u == src:
                        bound = tot
                    share = f * b / tot
                    add_link(lid)
                    add_weight(share)
                    flow[v] = flow_get(v, 0.0) + share
                    ahead[v] = None
                    t = t0 + lat[lid]
                    if t > arrive_get(v, -1.0):
                        arrive[v] = t
            level = list(ahead)
        fixed = self._max_flow(self._nid[src], self._nid[dst], links, weights, bound)
        if fixed is not None:
            links, weights = fixed
        return links, weights, float(arrive[dst]), total
