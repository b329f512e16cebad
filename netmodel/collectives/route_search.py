"""Routes found pair by pair or towards destinations, for the transfers templates do not route.

Those are a node to itself, direct neighbours, GPU-forwarded paths on direct-connect fabrics,
switch endpoints, and the switched routes that the templates work out once per pair of
signatures.

Its one job is searching: a bidirectional breadth-first search per pair
(:meth:`SearchedRoutes._search`), or, up to ``_DAG_NODES`` nodes, the shortest paths towards
each destination kept (:meth:`SearchedRoutes._dag`; as numpy arrays for many destinations
at once, :meth:`SearchedRoutes._dag_csrs`), the traffic spread hop by hop over them in
proportion to what each next hop can carry on to the destination, ``min(its bandwidth, the
capacity behind it)`` (:meth:`SearchedRoutes._spread`, or for many pairs at once
:meth:`SearchedRoutes._spread_many`), or, where that split carries less than a maximum flow
over those paths (they split and merge again: tori), a maximum flow's shares
(:meth:`SearchedRoutes._max_flow`). :class:`SearchedRoutes` is a mixin of
:class:`~netmodel.collectives.routing.Router`, which calls it and whose index it reads.

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
from itertools import chain

import numpy as np

from compute.errors import UserError
from netmodel.collectives.route_types import _DAG_NODES, _GPU, _SWITCH, _TRANSIT, Route

__all__ = ["SearchedRoutes"]

#: A route's split is taken as a maximum flow where it carries within this fraction of the
#: bound on the flow (:meth:`SearchedRoutes._max_flow`); also the flow's rounding.
_FLOW_RTOL = 1e-12
#: The most bytes of maximum flows a router keeps, by pattern (:meth:`SearchedRoutes._max_flow`),
#: 32 MiB: the 4,304 patterns of an all-to-all of a 16x16 torus take 24 MB.
_FLOWS_BYTES = 1 << 25


class SearchedRoutes:
    """The routes of :class:`~netmodel.collectives.routing.Router` found by search (a mixin:
    the methods stay on ``Router``).

    Reads the router's index: ``graph``'s adjacency (``_adj``), node numbers and kinds
    (``_nodes``, ``_nid``, ``_n``, ``_code``, ``kind``), links (``_src``, ``_lids``,
    ``_port``, ``bandwidth``, ``latency``, ``scaleout``, ``_switch_latency``); and keeps its
    caches there (``_pair_cache``, ``_dags``, ``_dag_np``, ``_nbr_rows``, ``_transit_nbrs``,
    ``_nbrcsr``, ``_lat_list``, ``_so_list``, ``_sw_lat_arr``, and the table of routes not
    made from templates ``_rt_*`` that :meth:`_learn_from_dags` fills).
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
        # two GPUs routed here have no switched route (else they would have a template): a
        # GPU may forward; any other pair may use any path
        if len(self._nodes) <= _DAG_NODES and kind[src] in _TRANSIT and kind[dst] in _TRANSIT:
            found = self._from_dag(src, dst)
        else:
            found = self._search(src, dst, gpu_transit=True)
        if found is None:
            return None
        found = self._one_forwarder(src, dst, found)
        if found is None:
            return None
        links, weights, latency, hops = found
        if self._so_list is None:
            self._so_list = self.scaleout.tolist()
        return Route(np.array(links, dtype=np.int64), np.array(weights, dtype=float), latency,
                     hops, any(map(self._so_list.__getitem__, links)))

    def _one_forwarder(self, src, dst, found):
        """``found`` (links, weights, latency, hops) with one choice of the GPU whose switch
        port it borrows wherever it had several: a *lending* GPU is one, neither end, that
        the route enters from or leaves to a switch (PXN borrows another GPU's NIC over
        NVLink); where a node's next hops hold several lending GPUs, the route keeps the
        first (in the route's order) and the shortest paths that avoid the others.

        NCCL sends a channel through one NIC, rail-aligned; a GPU whose own NIC or leaf
        failed uses another one, not every NVLink neighbour's NIC at once. Spreading the
        traffic over all of them gave a failed leaf more bandwidth than the healthy route
        (one NIC): 2 x 8 B200 rail-optimized, gpu0 <-> gpu8 with leaf0 failed, 0.157x
        slowdown. Switches still spread traffic (ECMP) and GPUs that forward only between
        GPUs (rings, tori, meshes) keep every path; a route with one lending GPU per choice
        (a gateway Lite, a PXN hop) is unchanged."""
        links = found[0]
        if not links:
            return found
        code = self._code
        la = np.asarray(links, dtype=np.int64)
        s, d = self._src[la], self._dst[la]
        sn, dn = self._nid[src], self._nid[dst]
        lend_out = (code[s] == _GPU) & (code[d] == _SWITCH) & (s != sn)
        lend_in = (code[d] == _GPU) & (code[s] == _SWITCH) & (d != dn)
        lending = set(s[lend_out].tolist()) | set(d[lend_in].tolist())
        if not lending:
            return found
        first: dict = {}
        choices: dict = {}
        for u, v in zip(s.tolist(), d.tolist(), strict=True):
            first.setdefault(u, v)
            if v in lending:
                choices.setdefault(u, []).append(v)
        drop = {v for c in choices.values() if len(c) > 1 for v in c[1:]}
        if not drop:
            return found  # one lending GPU wherever there is a choice
        keep, u = set(), sn
        while u != dn:  # the first path survives
            u = first[u]
            keep.add(u)
        nodes = self._nodes
        return self._search(src, dst, gpu_transit=True,
                            avoid=frozenset(nodes[v] for v in drop - keep))

    def _one_forwarder_many(self, src, dst, sizes, links, weights, latency, hops) -> tuple:
        """:meth:`_one_forwarder` of the routes ``src[i] -> dst[i]`` laid end to end
        (``sizes`` links each, as :meth:`_spread_many` gives them): the routes with a
        choice between lending GPUs are found with numpy and redone one by one."""
        code, n = self._code, self._n
        r = np.repeat(np.arange(len(sizes)), sizes)
        s, d = self._src[links], self._dst[links]
        into = (code[d] == _GPU) & (code[s] == _SWITCH) & (d != dst[r])
        out = (code[s] == _GPU) & (code[d] == _SWITCH) & (s != src[r])
        lend = np.unique(np.concatenate([r[into] * n + d[into], r[out] * n + s[out]]))
        if not len(lend):
            return sizes, links, weights, latency, hops
        hit = np.isin(r * n + d, lend)  # a link into a lending GPU: a choice at its start
        at, count = np.unique(r[hit] * n + s[hit], return_counts=True)
        redo = np.unique(at[count > 1] // n)
        if not len(redo):
            return sizes, links, weights, latency, hops
        starts = np.cumsum(sizes) - sizes
        parts = [(links[a:a + k], weights[a:a + k]) for a, k in zip(starts.tolist(),
                                                                   sizes.tolist(), strict=True)]
        latency, hops, sizes = latency.copy(), hops.copy(), sizes.copy()
        nodes = self._nodes
        for i in redo.tolist():
            lk, w = parts[i]
            got = self._one_forwarder(nodes[int(src[i])], nodes[int(dst[i])],
                                      (lk.tolist(), w.tolist(), float(latency[i]),
                                       int(hops[i])))
            parts[i] = (np.asarray(got[0], dtype=np.int64), np.asarray(got[1], dtype=float))
            latency[i], hops[i], sizes[i] = got[2], got[3], len(got[0])
        return (sizes, np.concatenate([p[0] for p in parts]),
                np.concatenate([p[1] for p in parts]), latency, hops)

    def _learn_from_dags(self, src: np.ndarray, dst: np.ndarray, key: np.ndarray,
                         base: int) -> int:
        """Add the routes ``src[i] -> dst[i]`` (node numbers of switches or GPUs, distinct,
        not neighbours) to the table of :meth:`_route_ids` as entries ``base, base + 1,
        ...`` (:meth:`_spread_many`); returns the next entry id."""
        if not len(src):
            return base
        ok, sizes, links, weights, latency, hops = self._spread_many(src, dst)
        if self._switch_latency and len(links):
            sizes, links, weights, latency, hops = self._one_forwarder_many(
                src[ok], dst[ok], sizes, links, weights, latency, hops)
        n_ok = int(ok.sum())
        ids = np.full(len(src), -1, dtype=np.int64)
        ids[ok] = np.arange(base, base + n_ok)
        self._rt_id.update(zip(key.tolist(), ids.tolist(), strict=True))
        if n_ok:
            starts = np.cumsum(sizes) - sizes
            self._rt_ptr.extend(self._rt_ptr.a[-1] + np.cumsum(sizes))
            self._rt_links.extend(links)
            self._rt_weights.extend(weights)
            self._rt_latency.extend(latency)
            self._rt_hops.extend(hops)
            self._rt_scaleout.extend(np.logical_or.reduceat(self.scaleout[links], starts))
        return base + n_ok

    def _dag_csrs(self, dst: np.ndarray) -> list:
        """:meth:`_dag` of each destination ``dst`` (node numbers, distinct) as arrays over
        node numbers (kept per destination): hops to the destination (-1: no path), and
        each node's next hops (``pointer`` per node, then per edge: the next node, link
        id, bandwidth, the sum of the node's next hops' bandwidths, summed in order), in
        the order of :meth:`_dag`. The missing ones come from one breadth-first search of
        them all, with numpy."""
        keep = self._dag_np
        need = [d for d in dict.fromkeys(dst.tolist()) if d not in keep]
        if need:
            n = self._n
            per = max(1, (1 << 22) // max(n, len(self._src), 1))
            for c0 in range(0, len(need), per):
                self._build_dags(np.array(need[c0:c0 + per], dtype=np.int64))
        return [keep[d] for d in dst.tolist()]

    def _nbr_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each node's neighbours in adjacency order (as :meth:`_dag` reads them):
        ``(pointer per node number, neighbour, link id)``."""
        if self._nbrcsr is None:
            adj, nid = self._adj, self._nid
            starts = np.fromiter(map(nid.__getitem__, adj), np.int64, count=len(adj))
            cnt = np.fromiter(map(len, adj.values()), np.int64, count=len(adj))
            ends = np.fromiter(map(nid.__getitem__, chain.from_iterable(adj.values())),
                               np.int64, count=int(cnt.sum()))
            first = np.repeat(starts, cnt)
            o = np.argsort(first, kind="stable")
            first, ends = first[o], ends[o]
            ptr = np.zeros(self._n + 1, dtype=np.int64)
            np.cumsum(np.bincount(first, minlength=self._n), out=ptr[1:])
            self._nbrcsr = (ptr, ends, self._lids(first, ends))
        return self._nbrcsr

    def _build_dags(self, dst: np.ndarray) -> None:
        """Add the arrays of :meth:`_dag_csrs` for destinations ``dst`` to the kept ones."""
        n, m = self._n, len(dst)
        ptr, nbr, link = self._nbr_csr()
        deg = np.diff(ptr)
        transit = self._code <= _SWITCH

        def expand(u):
            c = deg[u]
            first = np.cumsum(c) - c
            return c, np.repeat(ptr[u], c) + np.arange(int(c.sum())) - np.repeat(first, c)

        dist = np.full((m, n), -1, dtype=np.int64)
        row = np.arange(m)
        dist[row, dst] = 0
        fr, fu, h = row, dst, 0
        while len(fr):  # breadth-first, through switches and GPUs
            h += 1
            c, e = expand(fu)
            r, v = np.repeat(fr, c), nbr[e]
            ok = transit[v] & (dist[r, v] < 0)
            cell = np.unique(r[ok] * n + v[ok])
            fr, fu = cell // n, cell % n
            dist[fr, fu] = h
        R, U = np.nonzero(dist >= 1)  # by destination, then node number
        c, e = expand(U)
        r, u = np.repeat(R, c), np.repeat(U, c)
        v = nbr[e]
        ok = dist[r, v] == np.repeat(dist[R, U] - 1, c)
        r, u, v, lid = r[ok], u[ok], v[ok], link[e][ok]
        bw = self._route_bw[lid]
        g = r * n + u
        new = np.ones(len(g), dtype=bool)
        new[1:] = g[1:] != g[:-1]
        gi = np.cumsum(new) - 1
        idx = np.arange(len(g))
        k = idx - np.maximum.accumulate(np.where(new, idx, 0))
        tot = np.zeros(int(new.sum()))
        if len(g):
            # each next hop weighted by min(its bandwidth, what the next node can pass
            # on), level by level out from the destination, as _dag does
            du = dist[r, u]
            order = np.argsort(du, kind="stable")
            cut = np.searchsorted(du[order], np.arange(1, int(du.max()) + 2))
            cap = np.full((m, n), np.inf)
            for h in range(len(cut) - 1):
                at = order[cut[h]:cut[h + 1]]
                bw[at] = np.minimum(bw[at], cap[r[at], v[at]])
                ka = k[at]
                for kk in range(int(ka.max()) + 1 if len(ka) else 0):  # in order, as sum()
                    sel = at[ka == kk]
                    tot[gi[sel]] += bw[sel]
                first = at[new[at]]
                cap[r[first], u[first]] = tot[gi[first]]
        tot = tot[gi]
        counts = np.bincount(g, minlength=m * n).reshape(m, n)
        per_row = np.cumsum(counts.sum(axis=1))
        keep = self._dag_np
        lo = 0
        for i, d in enumerate(dst.tolist()):
            hi = int(per_row[i])
            p = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(counts[i], out=p[1:])
            if len(keep) >= 512:
                keep.pop(next(iter(keep)))
            keep[d] = (dist[i], p, v[lo:hi], lid[lo:hi], bw[lo:hi], tot[lo:hi])
            lo = hi

    def _spread_many(self, src: np.ndarray, dst: np.ndarray) -> tuple:
        """:meth:`_from_dag` of every pair ``src[i] -> dst[i]`` (node numbers, distinct) at
        once, with numpy: the same links in the same order, the same shares and latencies
        to the last bit. Returns ``(ok, sizes, links, weights, latency, hops)``: whether
        each pair has a path, and for those that do, in order, the size of each route,
        their links and weights one after the other, latency and hops.

        Each pair is a row, walked level by level as :meth:`_spread` walks it: a level's
        nodes in the order the walk finds them (by the rank of the node each is first
        reached from, then by its place among that node's next hops), the traffic arriving
        at a node summed in that order."""
        n = self._n
        uniq, jd = np.unique(dst, return_inverse=True)
        jd = jd.ravel()
        csr = self._dag_csrs(uniq)
        ok = np.stack([c[0] for c in csr])[jd, src] > 0
        out = []
        # rows in chunks: state per (row, node), and each chunk's dags stacked
        rows = np.flatnonzero(ok)
        rows = rows[np.argsort(jd[rows], kind="stable")]
        per = max(1, (1 << 21) // n)
        for c0 in range(0, len(rows), per):
            r = rows[c0:c0 + per]
            out.append((r, *self._spread_rows(src[r], dst[r], jd[r], csr)))
        if not out:
            z = np.zeros(0, dtype=np.int64)
            return ok, z, z, np.zeros(0), np.zeros(0), z
        r, sizes, links, weights, latency, hops, bound = (
            np.concatenate(x) for x in zip(*out, strict=True))
        # back to the pairs' order
        o = np.argsort(r, kind="stable")
        ptr = np.cumsum(sizes) - sizes
        take = np.repeat(ptr[o], sizes[o]) + np.arange(int(sizes.sum())) - np.repeat(
            np.cumsum(sizes[o]) - sizes[o], sizes[o])
        sizes, links, weights = sizes[o], links[take], weights[take]
        # the splits that carry less than their bound, as _spread finds them: a maximum
        # flow instead where they are not one (_max_flow)
        starts = np.cumsum(sizes) - sizes
        ratio = np.maximum.reduceat(weights / self._route_bw[links], starts)
        redo = np.flatnonzero(bound[o] * ratio * (1.0 - _FLOW_RTOL) > 1.0)
        if len(redo):
            sizes, links, weights = self._max_flow_many(src[ok], dst[ok], redo, ratio,
                                                        sizes, links, weights)
        return ok, sizes, links, weights, latency[o], hops[o]

    def _max_flow_many(self, src, dst, redo, ratio, sizes, links, weights) -> tuple:
        """:meth:`_max_flow` of the routes ``redo`` (each carrying less than its bound; the
        highest share over bandwidth of each route ``ratio``) among the routes ``src[i] ->
        dst[i]`` laid end to end (``sizes`` links each): ``(sizes, links, weights)``."""
        first = np.cumsum(sizes) - sizes
        starts = first.tolist()
        sizes = sizes.copy()
        parts_l, parts_w, at = [], [], 0  # runs of routes kept as they are, new routes
        # the patterns a chunk of routes at a time, up to 4,096 routes and 2^15 links (a
        # 16x16 torus's all-to-all redoes 50,176 routes of up to 64 links: their patterns at
        # once held 0.2 GB)
        cum = np.cumsum(sizes[redo])
        c0 = 0
        while c0 < len(redo):
            c1 = min(c0 + 4096, max(c0 + 1, int(np.searchsorted(
                cum, (cum[c0 - 1] if c0 else 0) + (1 << 15), side="right"))))
            chunk = redo[c0:c1]
            c0 = c1
            keys = self._flow_keys(src[chunk], dst[chunk], first[chunk], sizes[chunk], links,
                                   weights)
            for i, key in zip(chunk.tolist(), keys, strict=True):
                a, k = starts[i], int(sizes[i])
                got = self._flow_hit(key, links[a:a + k], weights[a:a + k], float(ratio[i]),
                                     int(src[i]), int(dst[i]))
                if got is None:
                    continue
                parts_l += [links[at:a], links[a:a + k][got[0]]]
                parts_w += [weights[at:a], got[1]]
                sizes[i] = len(got[0])
                at = a + k
        parts_l.append(links[at:])
        parts_w.append(weights[at:])
        return sizes, np.concatenate(parts_l), np.concatenate(parts_w)

    def _spread_rows(self, src, dst, jd, csr) -> tuple:
        """:meth:`_spread_many` of rows ``src -> dst`` (all with a path), ``jd`` naming
        each row's destination's arrays in ``csr``."""
        n, R = self._n, len(src)
        used, j = np.unique(jd, return_inverse=True)
        j = j.ravel()
        parts = [csr[x] for x in used.tolist()]
        sizes_e = np.array([len(c[2]) for c in parts], dtype=np.int64)
        off = np.cumsum(sizes_e) - sizes_e
        PTR = np.concatenate([c[1][:-1] + o for c, o in zip(parts, off.tolist(),
                                                             strict=True)])
        CNT = np.concatenate([np.diff(c[1]) for c in parts])
        EV = np.concatenate([c[2] for c in parts])
        EL = np.concatenate([c[3] for c in parts])
        EB = np.concatenate([c[4] for c in parts])
        ET = np.concatenate([c[5] for c in parts])
        hops = np.stack([c[0] for c in parts])[j, src]
        swl = self._sw_lat_arr
        if swl is None:
            swl = self._sw_lat_arr = np.zeros(n)
            if self._switch_latency:
                swl[np.fromiter(map(self._nid.__getitem__, self._switch_latency), np.int64,
                                count=len(self._switch_latency))] = np.fromiter(
                    self._switch_latency.values(), float, count=len(self._switch_latency))
        lat = self.latency
        flow = np.zeros(R * n)
        arrive = np.full(R * n, -1.0)
        row = np.arange(R)
        fr, fu, frank = row, src, np.zeros(R, dtype=np.int64)  # the frontier
        flow[row * n + src] = 1.0
        arrive[row * n + src] = 0.0
        em_r, em_k, em_rank, em_pos, em_l, em_w = [], [], [], [], [], []
        level = 0
        while len(fr):
            at = j[fr] * n + fu
            cnt = CNT[at]
            e_n = int(cnt.sum())
            if not e_n:
                break
            first = np.cumsum(cnt) - cnt
            pos = np.arange(e_n) - np.repeat(first, cnt)
            e = np.repeat(PTR[at], cnt) + pos
            er, eu, ru = np.repeat(fr, cnt), np.repeat(fu, cnt), np.repeat(frank, cnt)
            v, lid = EV[e], EL[e]
            share = flow[er * n + eu] * EB[e] / ET[e]
            em_r.append(er)
            em_k.append(np.full(e_n, level))
            em_rank.append(ru)
            em_pos.append(pos)
            em_l.append(lid)
            em_w.append(share)
            cell = er * n + v
            np.maximum.at(arrive, cell, (arrive[er * n + eu] + swl[eu]) + lat[lid])
            # traffic into each node, added in the order the walk adds it; the next level
            # in the order the walk finds it
            o = np.lexsort((pos, ru, cell))
            c2, s2 = cell[o], share[o]
            new = np.ones(e_n, dtype=bool)
            new[1:] = c2[1:] != c2[:-1]
            idx = np.arange(e_n)
            k = idx - np.maximum.accumulate(np.where(new, idx, 0))
            for kk in range(int(k.max()) + 1):
                m = k == kk
                flow[c2[m]] += s2[m]
            heads = o[new]  # each next node's first (rank, place) among its reachers
            nr, nv = er[heads], v[heads]
            o2 = np.lexsort((pos[heads], ru[heads], nr))
            nr, nv = nr[o2], nv[o2]
            starts = np.flatnonzero(np.r_[True, nr[1:] != nr[:-1]])
            frank = np.arange(len(nr)) - np.repeat(starts, np.diff(np.r_[starts, len(nr)]))
            fr, fu = nr, nv
            level += 1
        R_ = np.concatenate(em_r)
        o = np.lexsort((np.concatenate(em_pos), np.concatenate(em_rank),
                        np.concatenate(em_k), R_))
        return (np.bincount(R_, minlength=R), np.concatenate(em_l)[o],
                np.concatenate(em_w)[o], arrive[row * n + dst], hops,
                ET[PTR[j * n + src]])

    def _dag(self, dst) -> dict:
        """The shortest paths towards ``dst`` through switches and GPUs, kept per
        destination: ``{node: (hops to dst, next hops)}``, each next hop ``(neighbour, link
        id, bandwidth, sum of the next hops' bandwidths)``. One breadth-first search serves
        every source routed to ``dst`` (a GPU forwarding ring routes all pairs)."""
        hit = self._dags.get(dst)
        if hit is not None:
            return hit
        rows = self._nbr_rows
        if rows is None:
            rows = self._nbr_rows = {}
        transit = self._transit_nbrs
        if transit is None:
            kind = self.kind
            transit = self._transit_nbrs = {
                u: [v for v in nb if kind.get(v) in _TRANSIT] for u, nb in self._adj.items()}
        dist = {dst: 0}
        frontier, depth = [dst], 0
        while frontier:
            depth += 1
            nxt = []
            for u in frontier:
                for v in transit.get(u, ()):
                    if v not in dist:
                        dist[v] = depth
                        nxt.append(v)
            frontier = nxt
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
        if len(self._dags) >= 512:
            self._dags.pop(next(iter(self._dags)))
        self._dags[dst] = dag
        return dag

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

    def _max_flow(self, sn: int, dn: int, links: list, weights: list, bound: float
                  ) -> tuple[list, list] | None:
        """The shares of a maximum flow from node ``sn`` to ``dn`` over a route's links (the
        shortest paths from one to the other, each link's capacity its bandwidth), where the
        route's own ``weights`` (the capacity split) carry less: ``(links, shares)``, the
        links with no flow left out; None where the split is a maximum flow already (it
        carries ``bound``, what the capacity split says ``sn`` can carry on, an upper bound
        of the flow, or the maximum found).

        The capacity split weighs each next hop by ``min(its bandwidth, the sum of the
        same behind it)``; where paths that split merge again, that sum counts the links
        where they merge more than once, and a faster link can draw traffic onto them (4x4
        torus, gpu0 -> gpu6 with the gpu0-gpu4 cable doubled: 1.12x slower). A maximum
        flow's shares take ``n / max flow`` for a transfer of ``n`` bytes, which no faster
        link makes longer. The flow starts as the split scaled to fit the links; the
        capacity split of what the links have left is added, scaled to fit, until no path
        is left (the flow keeps the split's even shape as far as it goes), then augmenting
        paths (shortest first, undoing flow where they must: :func:`_augment`) make it a
        maximum, searched each way round and the two averaged. Plain loops,
        as a route has tens of links (networkx's flows build a residual graph a call and
        start from nothing), and one flow per pattern of route (:meth:`_flow_keys`): the
        routes of a torus's translates share it."""
        bwl = self._bw_list
        if bwl is None:
            bwl = self._bw_list = self._route_bw.tolist()
        ratio = max(w / bwl[lid] for lid, w in zip(links, weights, strict=True))
        if not bound * ratio * (1.0 - _FLOW_RTOL) > 1.0:
            return None
        la = np.asarray(links, dtype=np.int64)
        key = self._flow_keys(np.array([sn]), np.array([dn]), np.zeros(1, dtype=np.int64),
                              np.array([len(la)]), la, np.asarray(weights, dtype=float))[0]
        got = self._flow_hit(key, la, weights, ratio, sn, dn)
        if got is None:
            return None
        return la[got[0]].tolist(), got[1].tolist()

    def _flow_keys(self, sn: np.ndarray, dn: np.ndarray, starts: np.ndarray,
                   sizes: np.ndarray, links: np.ndarray, weights: np.ndarray) -> list:
        """The canonical pattern of each route ``sn[i] -> dn[i]`` (``sizes[i]`` links of
        ``links`` and ``weights`` from ``starts[i]``): ``(key, order)``, ``order`` the
        route's links in canonical order and ``key`` bytes of their ends' numbers,
        bandwidths and shares in that order, and the number of ``dn``. Nodes are numbered
        level by level (``sn`` 0), each level's by its incoming links sorted (number of the
        node before, bandwidth, share); links ordered by (level, numbers of their ends).
        So the order in which nodes list their neighbours plays no part: the routes of a
        uniform torus's translates share a pattern, and so one maximum flow."""
        n, R = self._n, len(sizes)
        tot = int(sizes.sum())
        off = np.cumsum(sizes) - sizes
        pos = np.repeat(starts - off, sizes) + np.arange(tot)
        lk = links[pos]
        rl = np.repeat(np.arange(R), sizes)  # route of each link
        us, vs = self._src[lk], self._dst[lk]
        # (route, node) numbered densely; the sources included
        ids = np.concatenate((np.arange(R) * n + sn, rl * n + us, rl * n + vs))
        uk, inv = np.unique(ids, return_inverse=True)
        inv = inv.ravel()
        s_id, u_id, v_id = inv[:R], inv[R:R + tot], inv[R + tot:]
        nn = len(uk)
        depth = np.full(nn, -1, dtype=np.int64)
        depth[s_id] = 0
        while True:  # shortest-path DAGs: every link one level down
            du = depth[u_id]
            m = (du >= 0) & (depth[v_id] < 0)
            if not m.any():
                break
            depth[v_id[m]] = du[m] + 1
        bw, w = self._route_bw[lk], weights[pos]
        # what lies behind each node, hashed from the far end back (a sum: no order), to
        # tell apart nodes whose incoming links tie
        hb = np.zeros(nn, dtype=np.uint64)
        mixed = (bw.view(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                 ^ w.view(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F))
        du = depth[u_id]
        for lev in range(int(du.max()) if tot else -1, -1, -1):
            e = np.flatnonzero(du == lev)
            x = mixed[e] ^ (hb[v_id[e]] * np.uint64(0x165667B19E3779F9))
            x ^= x >> np.uint64(29)
            x *= np.uint64(0xBF58476D1CE4E5B9)
            x ^= x >> np.uint64(32)
            ue = u_id[e]
            o = np.argsort(ue, kind="stable")
            ue = ue[o]
            cut = np.flatnonzero(np.r_[True, ue[1:] != ue[:-1]])
            hb[ue[cut]] = np.add.reduceat(x[o], cut)
        lab = np.full(nn, -1, dtype=np.int64)
        lab[s_id] = 0
        node_route = uk // n
        nxt = np.ones(R, dtype=np.int64)
        dv = depth[v_id]
        for lev in range(1, int(depth.max()) + 1 if nn else 1):
            e = np.flatnonzero(dv == lev)
            if not len(e):
                continue
            pl = lab[u_id[e]].astype(float)
            o = np.lexsort((w[e], bw[e], pl, v_id[e]))
            e, pl = e[o], pl[o]
            ve = v_id[e]
            nodes, nstart, indeg = np.unique(ve, return_index=True, return_counts=True)
            kmax = int(indeg.max())
            j = np.arange(len(e)) - np.repeat(nstart, indeg)
            row = np.repeat(np.arange(len(nodes)), indeg)
            pad = np.full((len(nodes), 3 * kmax), -1.0)
            pad[row, 3 * j], pad[row, 3 * j + 1], pad[row, 3 * j + 2] = pl, bw[e], w[e]
            cols = [nodes, hb[nodes]]  # ties: by what lies behind, then node number
            cols += [pad[:, c] for c in range(3 * kmax - 1, -1, -1)]
            cols.append(node_route[nodes])
            o = np.lexsort(tuple(cols))
            nodes = nodes[o]
            nr = node_route[nodes]
            cnt = np.bincount(nr, minlength=R)
            within = np.arange(len(nodes)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            lab[nodes] = nxt[nr] + within
            nxt += cnt
        lu, lv = lab[u_id], lab[v_id]
        m = int(lab.max()) + 2 if nn else 1  # (route, level, ends) as one number
        order = np.argsort(((rl * (int(depth.max()) + 2 if nn else 1) + depth[u_id]) * m
                            + lu) * m + lv, kind="stable")
        lo, bo, wo = np.stack((lu[order], lv[order]), axis=1).ravel(), bw[order], w[order]
        dl = lab[np.searchsorted(uk, np.arange(R) * n + dn)].tolist()
        pos_in = order - np.repeat(off, sizes)
        out = []
        for i, (a, k) in enumerate(zip(off.tolist(), sizes.tolist(), strict=True)):
            out.append((b"".join((lo[2 * a:2 * (a + k)].tobytes(), bo[a:a + k].tobytes(),
                                  wo[a:a + k].tobytes(), dl[i].to_bytes(8, "little"))),
                        pos_in[a:a + k]))
        return out

    def _flow_hit(self, key: tuple, links: np.ndarray, weights, ratio: float, sn: int,
                  dn: int) -> tuple | None:
        """:meth:`_flow_of` of a route, kept by its canonical pattern ``key = (bytes,
        order)`` (:meth:`_flow_keys`): ``(positions of the links kept, in canonical order,
        their shares)``, or None."""
        key, order = key
        kept = self._flows
        hit = kept.get(key, False)
        if hit is False:
            la = np.asarray(links, dtype=np.int64)[order]
            w = np.asarray(weights, dtype=float)[order]
            hit = kept[key] = self._flow_of(self._src[la].tolist(), self._dst[la].tolist(),
                                            la.tolist(), w.tolist(), ratio, sn, dn)
            self._flows_bytes += _flow_bytes(key, hit)
            while self._flows_bytes > _FLOWS_BYTES and len(kept) > 1:
                old = next(iter(kept))
                self._flows_bytes -= _flow_bytes(old, kept.pop(old))
        if hit is None:
            return None
        return order[hit[0]], hit[1]  # the shares kept: one array for every such route

    def _flow_of(self, us: list, vs: list, links: list, weights: list, ratio: float,
                 sn: int, dn: int) -> tuple | None:
        """:meth:`_max_flow` of links ``us[i] -> vs[i]`` (ids ``links``, shares ``weights``
        of which the highest over its bandwidth is ``ratio``): ``(positions of the links
        kept, their shares)``, or None where the split is a maximum flow."""
        bwl = self._bw_list
        if bwl is None:
            bwl = self._bw_list = self._route_bw.tolist()
        top = max(bwl[lid] for lid in links)
        cap = [bwl[lid] / top for lid in links]
        f = [w / ratio / top for w in weights]  # the split, scaled to fit: feasible
        split = sum(f[i] for i, u in enumerate(us) if u == sn)
        out: dict = {}
        into: dict = {}
        for i, (u, v) in enumerate(zip(us, vs, strict=True)):
            out.setdefault(u, []).append(i)
            into.setdefault(v, []).append(i)
        eps = _FLOW_RTOL
        m = len(links)
        back = range(m - 1, -1, -1)
        while True:  # the capacity split of what is left, scaled to fit, added
            left = [cap[i] - f[i] if cap[i] - f[i] > eps * cap[i] else 0.0 for i in range(m)]
            c: dict = {dn: math.inf}
            w = [0.0] * m
            for i in back:  # links level by level: those behind a node come later
                cv = c.get(vs[i], 0.0)
                if left[i] and cv:
                    w[i] = y = min(left[i], cv)
                    c[us[i]] = c.get(us[i], 0.0) + y
            if not c.get(sn, 0.0):
                break
            into_node = {sn: 1.0}  # the unit of traffic reaching each node
            share = [0.0] * m
            for i in range(m):
                if w[i] and into_node.get(us[i]):
                    share[i] = y = into_node[us[i]] * w[i] / c[us[i]]
                    into_node[vs[i]] = into_node.get(vs[i], 0.0) + y
            t = min(left[i] / share[i] for i in range(m) if share[i])
            for i in range(m):
                if share[i]:
                    f[i] = min(cap[i], f[i] + t * share[i])
        # the two ways round of breadth-first search (each node's links in order, and
        # reversed) finish it to two maximum flows; their mean is one, and even between
        # paths that tie (the two ways round a torus's ring)
        fwd = _augment(sn, dn, us, vs, cap, list(f), out, into)
        rev = _augment(sn, dn, us, vs, cap, f, {u: x[::-1] for u, x in out.items()},
                       {v: x[::-1] for v, x in into.items()})
        f = [(x + y) / 2 for x, y in zip(fwd, rev, strict=True)]
        total = sum(f[i] for i in out[sn])
        if not total > split * (1.0 + _FLOW_RTOL):
            return None
        keep = [i for i in range(len(links)) if f[i] > eps * total]
        return (np.array(keep, dtype=np.int64),
                np.array([f[i] / total for i in keep], dtype=float))

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


def _flow_bytes(key: bytes, hit: tuple | None) -> int:
    """Bytes a kept maximum flow takes (:meth:`SearchedRoutes._flow_hit`), near enough."""
    return len(key) + 100 + (0 if hit is None else hit[0].nbytes + hit[1].nbytes + 200)


def _augment(sn: int, dn: int, us: list, vs: list, cap: list, f: list, out: dict,
             into: dict) -> list:
    """Flow ``f`` on links ``us[i] -> vs[i]`` of capacity ``cap`` made a maximum flow from
    ``sn`` to ``dn`` by shortest augmenting paths, a blocking flow a phase (Dinic), each
    node's links taken in the order ``out`` and ``into`` list them; ``f`` itself, changed."""
    eps = _FLOW_RTOL
    while True:
        level = {sn: 0}
        order = [sn]
        for x in order:  # breadth-first over the residual links
            nxt = level[x] + 1
            for i in out.get(x, ()):
                v = vs[i]
                if v not in level and cap[i] - f[i] > eps * cap[i]:
                    level[v] = nxt
                    order.append(v)
            for i in into.get(x, ()):
                u = us[i]
                if u not in level and f[i] > eps * cap[i]:
                    level[u] = nxt
                    order.append(u)
        if dn not in level:
            return f
        arcs = {}  # each node's links one level on: (link, +1 forward / -1 undone, next)
        for x in order:
            nxt = level[x] + 1
            arcs[x] = [(i, 1, vs[i]) for i in out.get(x, ()) if level.get(vs[i]) == nxt] + [
                (i, -1, us[i]) for i in into.get(x, ()) if level.get(us[i]) == nxt]
        ptr = dict.fromkeys(order, 0)
        dead: set = set()
        stack, path = [sn], []
        while stack:  # depth-first for paths of residual links, as long as there are any
            x = stack[-1]
            if x == dn:
                delta = min(cap[i] - f[i] if d > 0 else f[i] for i, d in path)
                for i, d in path:
                    f[i] = min(cap[i], f[i] + delta) if d > 0 else max(0.0, f[i] - delta)
                stack, path = [sn], []
                continue
            a, p = arcs[x], ptr[x]
            while p < len(a):
                i, d, y = a[p]
                if y not in dead and (cap[i] - f[i] if d > 0 else f[i]) > eps * cap[i]:
                    break
                p += 1
            ptr[x] = p
            if p == len(a):  # no way on from x in this phase
                dead.add(x)
                stack.pop()
                if path:
                    path.pop()
                continue
            path.append((i, d))
            stack.append(y)
