"""Routes over a fabric graph: which directed links a transfer crosses, and how much of it.

A :class:`Router` indexes a fabric graph once (every undirected edge becomes two directed
links, numbered ``0 .. 2E-1``) and answers :meth:`Router.route` queries: the shortest paths
(in hops) from one node to another, with the traffic spread over all of them as equal-cost
multi-path (ECMP) routing does, hop by hop, each node splitting what it forwards over its
next hops in proportion to their bandwidth. A route is a sparse vector: link ids and the
fraction of the transfer each link carries, plus the longest path latency (link latencies,
plus the traversal latency of every switch crossed).

Transit rules: switches forward traffic, optical circuit switches never do (a circuit is
its own GPU-GPU edge), and GPUs forward only when no switched path exists (direct-connect
fabrics such as rings, tori and meshes).

Speed: the search is a bidirectional breadth-first search that stops where the two balls
meet, so a route in a 16,384-GPU fat tree touches a few thousand nodes, never the whole
graph. Switched routes between two GPUs depend only on the switches each GPU is wired to
(and those cables), so they are computed once per pair of attachment signatures and reused
for every GPU pair that shares them (every pair of GPUs on the same two leaves).

>>> import networkx as nx
>>> g = nx.Graph(name="star", spec="", gpus=2)
>>> g.add_node("sw", kind="switch", tier=0, radix=2, latency=1e-7, in_network_reduction=False)
>>> for i in range(2):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=1e-8, medium="copper", lanes=1)
>>> r = Router(g).route("gpu0", "gpu1")
>>> [Router(g).link_name(i) for i in r.links], r.hops, round(r.latency * 1e9)
([('gpu0', 'sw'), ('sw', 'gpu1')], 2, 120)
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from compute.errors import UserError
from netmodel.collectives.updown import UpDown

__all__ = ["NoPath", "Route", "Router"]


class NoPath(Exception):
    """No path joins two nodes (the fabric is cut between them)."""

    def __init__(self, a, b):
        super().__init__(f"no path joins {a!r} and {b!r}")
        self.pair = (a, b)


@dataclass(frozen=True)
class Route:
    """The traffic pattern of one unit transfer between two nodes.

    Attributes
    ----------
    links : numpy.ndarray
        Directed link ids (int) the transfer crosses.
    weights : numpy.ndarray
        Fraction of the transfer's bytes on each of those links (1 on a single path; ECMP
        splits it; the fractions leaving the source sum to 1).
    latency : float
        Seconds along the slowest of the shortest paths (links plus switch traversals).
    hops : int
        Links on each shortest path.
    scaleout : bool
        Whether any path crosses a scale-out link (one that touches a switch of tier >= 1).
    """

    links: np.ndarray
    weights: np.ndarray
    latency: float
    hops: int
    scaleout: bool


class Router:
    """Shortest-path ECMP routing over one fabric graph, with caches.

    Parameters
    ----------
    graph : networkx.Graph
        A fabric obeying :mod:`topologies.schema`. The router reads it once; do not mutate it
        afterwards.

    Attributes
    ----------
    bandwidth : numpy.ndarray
        Bytes/s per directed link.
    scaleout : numpy.ndarray
        True for links that touch a switch of tier >= 1 (scale-out network); False for the
        scale-up side (GPU-GPU links and links to tier-0 switches).
    """

    def __init__(self, graph: nx.Graph):
        self.graph = graph
        self._adj = graph._adj
        kinds = dict(graph.nodes(data="kind"))
        self.kind = kinds
        self._switch_latency = {n: float(d.get("latency", 0.0)) for n, d in graph.nodes(data=True)
                                if d.get("kind") == "switch"}
        tiers = {n: d.get("tier", 0) for n, d in graph.nodes(data=True)
                 if d.get("kind") == "switch"}
        self.tier = tiers
        m = graph.number_of_edges()
        ends = []
        bw = np.empty(2 * m)
        lat = np.empty(2 * m)
        out = np.empty(2 * m, dtype=bool)
        ids = {}
        tiered = True
        for e, (u, v, d) in enumerate(graph.edges(data=True)):
            if u in tiers and v in tiers and abs(tiers[u] - tiers[v]) != 1:
                tiered = False
            b = float(d["bandwidth"])
            la = float(d["latency"])  # a circuit's edge latency already holds its OCS's
            so = tiers.get(u, 0) >= 1 or tiers.get(v, 0) >= 1 or kinds.get(u) == "ocs" \
                or kinds.get(v) == "ocs"
            ids[(u, v)] = 2 * e
            ids[(v, u)] = 2 * e + 1
            ends.append((u, v))
            ends.append((v, u))
            bw[2 * e] = bw[2 * e + 1] = b
            lat[2 * e] = lat[2 * e + 1] = la
            out[2 * e] = out[2 * e + 1] = so
        self._ends = ends
        self._id = ids
        self.bandwidth = bw
        self.latency = lat
        self.scaleout = out
        self._pair_cache: dict = {}
        self._template_cache: dict = {}
        self._components = None
        #: Whether every switch-to-switch link joins adjacent tiers (valley-free fast path).
        self.tiered = tiered
        self.gpu_list = [n for n, k in kinds.items() if k == "gpu"]
        self._updown = UpDown(self)

    # ----------------------------------------------------------------- small helpers
    @property
    def n_links(self) -> int:
        """Number of directed links (twice the graph's edges)."""
        return len(self._ends)

    def link_id(self, u, v) -> int:
        """The id of the directed link ``u -> v``."""
        try:
            return self._id[(u, v)]
        except KeyError:
            raise UserError(f"there is no link {u!r} - {v!r} in the fabric") from None

    def link_name(self, link: int) -> tuple:
        """``(u, v)`` for directed link id ``link``."""
        return self._ends[int(link)]

    def is_gpu(self, node) -> bool:
        return self.kind.get(node) == "gpu"

    def connected(self, a, b) -> bool:
        """Whether ``a`` and ``b`` are in the same connected component (any path at all)."""
        if self._components is None:
            comp = {}
            for i, c in enumerate(nx.connected_components(self.graph)):
                for n in c:
                    comp[n] = i
            self._components = comp
        return self._components.get(a) == self._components.get(b) and a in self._components

    def component_of(self, node) -> int:
        """A label of ``node``'s connected component (equal labels: connected)."""
        self.connected(node, node)
        return self._components[node]

    # ----------------------------------------------------------------- routing
    def route(self, src, dst) -> Route | None:
        """The ECMP route from ``src`` to ``dst``, or None when no path joins them."""
        hit = self._resolve(src, dst)
        if hit is None or isinstance(hit, Route):
            return hit
        return self._from_template(src, dst, hit)

    def loads(self, transfers):
        """Route many transfers ``(src, dst, fraction)`` at once.

        Returns ``(links, coefficients, latency, scaleout)``: directed link ids and the
        bytes per byte of ``n`` each carries (a link may appear more than once: sum them),
        the longest route latency and whether any route crosses the scale-out network.
        Raises :class:`NoPath` for a transfer whose ends are not connected. Transfers whose
        routes share a template (GPU pairs on the same switches) share its middle part.
        """
        ids = self._id
        parts_l, parts_w = [], []
        mid: dict = {}
        hl, hw = [], []
        latency, scaleout = 0.0, False
        resolve = self._resolve
        for s, d, f in transfers:
            hit = resolve(s, d)
            if hit is None:
                raise NoPath(s, d)
            if isinstance(hit, Route):
                parts_l.append(hit.links)
                parts_w.append(hit.weights * f)
                lat, so = hit.latency, hit.scaleout
            else:
                first, last, _, _, lat, _, so = hit
                for a, w in first:
                    hl.append(ids[(s, a)])
                    hw.append(w * f)
                for b, w in last:
                    hl.append(ids[(b, d)])
                    hw.append(w * f)
                key = id(hit)
                if key in mid:
                    mid[key][1] += f
                else:
                    mid[key] = [hit, f]
            if lat > latency:
                latency = lat
            scaleout = scaleout or so
        for tpl, f in mid.values():
            parts_l.append(tpl[2])
            parts_w.append(tpl[3] * f)
        parts_l.append(np.array(hl, dtype=np.int64))
        parts_w.append(np.array(hw, dtype=float))
        return np.concatenate(parts_l), np.concatenate(parts_w), latency, scaleout

    def _switch_neighbours(self, node):
        adj = self._adj[node]
        return tuple(sorted(((s, adj[s]["bandwidth"], adj[s]["latency"]) for s in adj
                             if self.kind.get(s) == "switch"), key=lambda t: str(t[0])))

    def _resolve(self, src, dst):
        """Cached: a Route, a template tuple (GPU pairs routed through switches), or None."""
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
            lid = self._id[(src, dst)]
            return Route(np.array([lid]), np.ones(1), float(self.latency[lid]), 1,
                         bool(self.scaleout[lid]))
        templated = kind[src] == "gpu" and kind[dst] == "gpu"
        if templated:
            a_sig, b_sig = self._switch_neighbours(src), self._switch_neighbours(dst)
            tkey = (a_sig, b_sig)
            try:
                tpl = self._template_cache[tkey]
            except KeyError:
                tpl = self._updown.template(a_sig, b_sig) if a_sig and b_sig else None
                if tpl is None:
                    found = self._search(src, dst, gpu_transit=False)
                    tpl = None if found is None else self._to_template(src, dst, found)
                self._template_cache[tkey] = tpl
            if tpl is not None:
                return tpl
        found = self._search(src, dst, gpu_transit=not templated)
        if found is None and templated:
            found = self._search(src, dst, gpu_transit=True)
        if found is None:
            return None
        links, weights, latency, hops = found
        lk = np.fromiter(links, dtype=np.int64, count=len(links))
        return Route(lk, np.fromiter(weights, dtype=float, count=len(weights)), latency, hops,
                     bool(self.scaleout[lk].any()))

    def _to_template(self, src, dst, found):
        links, weights, latency, hops = found
        first, last, middle_l, middle_w = [], [], [], []
        for lid, w in zip(links, weights, strict=True):
            u, v = self._ends[lid]
            if u == src:
                first.append((v, w))
            elif v == dst:
                last.append((u, w))
            else:
                middle_l.append(lid)
                middle_w.append(w)
        ml = np.array(middle_l, dtype=np.int64)
        scaleout = bool(self.scaleout[np.asarray(links, dtype=np.int64)].any())
        return (tuple(first), tuple(last), ml, np.array(middle_w, dtype=float), latency, hops,
                scaleout)

    def _from_template(self, src, dst, tpl) -> Route:
        first, last, ml, mw, latency, hops, scaleout = tpl
        ids = self._id
        head = [ids[(src, a)] for a, _ in first]
        tail = [ids[(b, dst)] for b, _ in last]
        lk = np.concatenate([np.array(head + tail, dtype=np.int64), ml])
        w = np.concatenate([np.array([x for _, x in first] + [x for _, x in last]), mw])
        return Route(lk, w, latency, hops, scaleout)

    def _search(self, src, dst, *, gpu_transit: bool):
        """Bidirectional BFS; returns (link ids, weights, latency, hops) or None."""
        adj = self._adj
        kind = self.kind

        def ok(v):
            k = kind.get(v)
            return k == "switch" or (gpu_transit and k == "gpu")

        def grow(frontier, dist, target, depth):
            """One BFS level out of ``frontier``; the far end ``target`` may be entered."""
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if v not in dist and (v == target or ok(v)):
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
        level = [set() for _ in range(total + 1)]
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
        flow = {src: 1.0}
        arrive = {src: 0.0}
        links, weights = [], []
        ids, lat, swl = self._id, self.latency, self._switch_latency
        for i in range(total):
            ahead = level[i + 1]
            for u in level[i]:
                f = flow.get(u, 0.0)
                hops_out = [v for v in adj[u] if v in ahead]
                bws = [adj[u][v]["bandwidth"] for v in hops_out]
                tot = sum(bws)
                t0 = arrive[u] + swl.get(u, 0.0)
                for v, b in zip(hops_out, bws, strict=True):
                    lid = ids[(u, v)]
                    share = f * b / tot
                    links.append(lid)
                    weights.append(share)
                    flow[v] = flow.get(v, 0.0) + share
                    t = t0 + lat[lid]
                    if t > arrive.get(v, -1.0):
                        arrive[v] = t
        return links, weights, float(arrive[dst]), total
