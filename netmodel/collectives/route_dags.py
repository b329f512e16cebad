"""Searched routes of many pairs at once, with numpy: the shortest paths towards each
destination kept as arrays, and the traffic spread over them as the pair-by-pair search
spreads it, to the last bit.

Its one job is the many-pair form of :mod:`netmodel.collectives.route_search`:
:meth:`DagRoutes._dag_csrs` (one breadth-first search of many destinations,
:meth:`DagRoutes._build_dags`), :meth:`DagRoutes._spread_many` (every pair a row, walked
level by level, :meth:`DagRoutes._spread_rows`; on a torus of one bandwidth, of any size (past
``DAG_NODES`` too), each row's next hops read from node 0's as it walks, no arrays kept,
:meth:`DagRoutes._spread_rows_torus`), :meth:`DagRoutes._one_forwarder_many`
(the routes through a NIC-less GPU's stand-in for many pairs at once,
:meth:`DagRoutes._stand_in_many`), and :meth:`DagRoutes._learn_from_dags`, which adds the
routes to the router's table of routes not made from templates. Splits that carry less than a maximum flow are
:mod:`netmodel.collectives.route_flows`'s. :class:`DagRoutes` is a mixin of
:class:`~netmodel.collectives.routing.Router` (through
:class:`~netmodel.collectives.route_search.SearchedRoutes`).
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from netmodel.collectives.route_flows import FLOW_RTOL
from netmodel.collectives.route_types import KIND_GPU, KIND_SWITCH

__all__ = ["DagRoutes"]

#: The most bytes of shortest-path arrays (:meth:`DagRoutes._dag_csrs`) a router keeps,
#: oldest dropped first: 512 MiB. A 512-destination cap dropped each destination's arrays
#: before the next step asked for them again as soon as a group had more than 512 GPUs
#: (a 16x16x16 torus, 1,024 GPUs: halving-doubling all-reduce built 3,552 of them, 13.8 s
#: CPU; each about 0.4 MB there).
_DAG_BYTES = 1 << 29
#: The most links a chunk of rows walked together on a torus holds (:meth:`DagRoutes._spread_many`,
#: counted before the walk by :func:`_torus_links`): 89 bytes each at the walk's peak (1.03
#: million links of 102 random pairs of a 64x64x32 torus, traced).
_WALK_LINKS = 1 << 20


class DagRoutes:
    """Searched routes of :class:`~netmodel.collectives.routing.Router` for many pairs at
    once (a mixin: the methods stay on ``Router``).

    Reads the router's index (``_adj``, ``_nodes``, ``_nid``, ``_n``, ``_code``, ``_src``,
    ``_dst``, ``_lids``, ``_route_bw``, ``latency``, ``scaleout``, ``_switch_latency``) and
    keeps its caches there (``_dag_np`` and its size ``_dag_bytes``, ``_nbrcsr``,
    ``_sw_lat_arr``, and the table of routes not made from templates ``_rt_*``).
    """

    def _learn_from_dags(self, src: np.ndarray, dst: np.ndarray, key: np.ndarray,
                         base: int) -> int:
        """Add the routes ``src[i] -> dst[i]`` (node numbers of switches or GPUs, distinct,
        not neighbours) to the table of :meth:`_route_ids` as entries ``base, base + 1,
        ...`` (:meth:`_spread_many`); returns the next entry id."""
        if not len(src):
            return base
        ok, sizes, links, weights, latency, hops = self._routes_many(src, dst)
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

    def _routes_many(self, src: np.ndarray, dst: np.ndarray) -> tuple:
        """:meth:`_spread_many`'s answer ``(ok, sizes, links, weights, latency, hops)``
        after :meth:`_one_forwarder_many` (where switches add latency), without spreading
        the pairs whose answer is known to be the legs through their stand-ins
        (:meth:`_stand_in_first`): those routed by :meth:`_stand_in_many` alone and laid
        among the others in the pairs' order (their spread, 2.8 of the 7.0 s profiled of
        a 1,024-GPU all-to-all with 4 NICs for 8 GPUs a server, was replaced anyway)."""
        pre = self._stand_in_first(src, dst)
        first = pre[:0]
        if len(pre):
            done, b_sizes, b_links, b_weights, b_lat, b_hops = self._stand_in_many(
                src[pre], dst[pre])
            first = pre[done]
        if not len(first):
            ok, sizes, links, weights, latency, hops = self._spread_many(src, dst)
            if self._switch_latency and len(links):
                sizes, links, weights, latency, hops = self._one_forwarder_many(
                    src[ok], dst[ok], sizes, links, weights, latency, hops)
            return ok, sizes, links, weights, latency, hops
        rest = np.ones(len(src), dtype=bool)
        rest[first] = False
        r = np.flatnonzero(rest)
        z = np.zeros(0, dtype=np.int64)
        ok_r, sizes_r, links_r, weights_r, lat_r, hops_r = (
            self._spread_many(src[r], dst[r]) if len(r)
            else (np.zeros(0, dtype=bool), z, z, np.zeros(0), np.zeros(0), z))
        if len(links_r):
            sizes_r, links_r, weights_r, lat_r, hops_r = self._one_forwarder_many(
                src[r][ok_r], dst[r][ok_r], sizes_r, links_r, weights_r, lat_r, hops_r)
        ok = np.zeros(len(src), dtype=bool)
        ok[first] = True
        ok[r[ok_r]] = True
        m = len(src)
        size, start = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
        lat, hop = np.zeros(m), np.zeros(m, dtype=np.int64)
        size[first], lat[first], hop[first] = b_sizes, b_lat, b_hops
        start[first] = np.cumsum(b_sizes) - b_sizes
        rk = r[ok_r]
        size[rk], lat[rk], hop[rk] = sizes_r, lat_r, hops_r
        start[rk] = len(b_links) + np.cumsum(sizes_r) - sizes_r
        oi = np.flatnonzero(ok)
        sz = size[oi]
        pos = np.repeat(start[oi] - (np.cumsum(sz) - sz), sz) + np.arange(int(sz.sum()))
        return (ok, sz, np.concatenate([b_links, links_r])[pos].astype(np.int64, copy=False),
                np.concatenate([b_weights, weights_r])[pos].astype(float, copy=False),
                lat[oi], hop[oi])

    def _stand_in_first(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """The pairs ``src[i] -> dst[i]`` (indices) whose route :meth:`_one_forwarder_many`
        would certainly replace by the legs through the stand-ins, with no spread needed to
        know it: where switches add latency (else no route is replaced) on a fabric of GPUs
        and switches only, two GPUs in different scale-up networks, an end without a NIC
        whose scale-up network reaches the scale-out network only from its GPUs to switches
        (so every route out of it or into it lends a GPU's NIC, and a path of the legs is
        one of GPUs and switches, found by the spread too)."""
        none = np.zeros(0, dtype=np.int64)
        code = self._code
        if not self._switch_latency or (code > KIND_SWITCH).any():
            return none
        nicless = self._nic_less()
        if not nicless.any():
            return none
        part = self._scaleup_parts()
        q = ((code[src] == KIND_GPU) & (code[dst] == KIND_GPU) & (part[src] != part[dst])
             & (nicless[src] | nicless[dst]))
        if not q.any():
            return none
        so = np.flatnonzero(self.scaleout)
        s, d = self._src[so], self._dst[so]
        bad = np.zeros(int(part.max()) + 1, dtype=bool)
        bad[part[s[(code[s] != KIND_GPU) | (code[d] != KIND_SWITCH)]]] = True
        q &= ~(nicless[src] & bad[part[src]]) & ~(nicless[dst] & bad[part[dst]])
        return np.flatnonzero(q)

    def _one_forwarder_many(self, src, dst, sizes, links, weights, latency, hops) -> tuple:
        """:meth:`_one_forwarder` of the routes ``src[i] -> dst[i]`` laid end to end
        (``sizes`` links each, as :meth:`_spread_many` gives them): the routes with two
        lending GPUs or more are found with numpy and redone one by one."""
        code, n = self._code, self._n
        r = np.repeat(np.arange(len(sizes)), sizes)
        s, d = self._src[links], self._dst[links]
        into = (code[d] == KIND_GPU) & (code[s] == KIND_SWITCH) & (d != dst[r])
        out = (code[s] == KIND_GPU) & (code[d] == KIND_SWITCH) & (s != src[r])
        lend = np.unique(np.concatenate([r[into] * n + d[into], r[out] * n + s[out]]))
        if not len(lend):
            return sizes, links, weights, latency, hops
        # a route with two lending GPUs or more (anywhere in it) may have a choice
        # between them: redone one by one, which keeps its first path's
        at, count = np.unique(lend // n, return_counts=True)
        redo = at[count > 1]
        # a route from or to a GPU without a NIC goes through its stand-in's
        # (:meth:`_stand_in`), whatever the lenders the search found
        nicless = self._nic_less()
        ends = at[nicless[src[at]] | nicless[dst[at]]]
        if len(ends):
            redo = np.union1d(redo, ends)
        if not len(redo):
            return sizes, links, weights, latency, hops
        starts = np.cumsum(sizes) - sizes
        latency, hops, sizes = latency.copy(), hops.copy(), sizes.copy()
        # where the route crosses the scale-out network (its ends in different scale-up
        # networks), _one_forwarder's answer is the legs through the stand-ins: those
        # worked out for all such routes at once (_stand_in_many), each distinct leg once
        parts_ = self._scaleup_parts()
        cross = ends[parts_[src[ends]] != parts_[dst[ends]]]
        pool_l, pool_w, at = [links], [weights], starts.copy()
        off = len(links)
        if len(cross):
            done, b_sizes, b_links, b_weights, b_lat, b_hops = self._stand_in_many(
                src[cross], dst[cross])
            bi = cross[done]
            at[bi] = off + np.cumsum(b_sizes) - b_sizes
            sizes[bi], latency[bi], hops[bi] = b_sizes, b_lat, b_hops
            pool_l.append(b_links)
            pool_w.append(b_weights)
            off += len(b_links)
            redo = np.setdiff1d(redo, bi)
        nodes = self._nodes
        for i in redo.tolist():
            a, k = int(starts[i]), int(sizes[i])
            got = self._one_forwarder(nodes[int(src[i])], nodes[int(dst[i])],
                                      (links[a:a + k].tolist(), weights[a:a + k].tolist(),
                                       float(latency[i]), int(hops[i])))
            pool_l.append(np.asarray(got[0], dtype=np.int64))
            pool_w.append(np.asarray(got[1], dtype=float))
            at[i] = off
            off += len(got[0])
            latency[i], hops[i], sizes[i] = got[2], got[3], len(got[0])
        total = int(sizes.sum())
        pos = np.repeat(at - (np.cumsum(sizes) - sizes), sizes) + np.arange(total)
        return (sizes, np.concatenate(pool_l)[pos].astype(np.int64, copy=False),
                np.concatenate(pool_w)[pos].astype(float, copy=False), latency, hops)

    def _stand_in_many(self, src: np.ndarray, dst: np.ndarray) -> tuple:
        """:meth:`_through_stand_ins` of the GPU pairs ``src[i] -> dst[i]`` (node numbers,
        in different scale-up networks, either end without a NIC) all at once: ``(done,
        sizes, links, weights, latency, hops)``, the routes of the pairs ``done`` (a mask)
        laid end to end; the others (no stand-in, or a leg without a path) are left to
        :meth:`_one_forwarder`. Each distinct leg is routed once (:meth:`route`, the
        templates of its signature pairs learnt together first); the legs to and from a
        GPU's stand-in are kept as :meth:`_through_stand_ins` keeps them, the others not.
        The same links, shares, latency (summed leg by leg in the same order) and hops as
        one pair at a time, where a direct all-to-all of 1,024 GPUs with 4 NICs for 8 GPUs
        a server routed 325,120 legs one by one (130,048 pairs; 18.9 s CPU; 6.8 s with the
        legs routed at once, 4.1 s with their spread left out too, :meth:`_routes_many`). The
        arrays are those routes' links, as the pair-by-pair answer held them, and the
        distinct legs' (fewer)."""
        nodes, nid, n = self._nodes, self._nid, self._n
        stand = np.full(n, -1, dtype=np.int64)
        for g in np.unique(np.concatenate([src, dst])).tolist():   # GPUs: one a GPU
            x = self._stand_in(nodes[g])
            stand[g] = -1 if x is None else nid[x]
        vs, vd = stand[src], stand[dst]
        # the chain src [-> vs] [-> vd] -> dst as up to three legs (-1: none)
        has_s, has_d = vs >= 0, vd >= 0
        both = has_s & has_d
        a = np.stack([src, np.where(has_s, vs, np.where(has_d, vd, -1)),
                      np.where(both, vd, -1)], axis=1)
        b = np.stack([np.where(has_s, vs, np.where(has_d, vd, dst)),
                      np.where(has_s, np.where(has_d, vd, dst), np.where(has_d, dst, -1)),
                      np.where(both, dst, -1)], axis=1)
        used = a >= 0
        done = (has_s | has_d) & ~(used & (a == b)).any(axis=1)
        own = np.zeros_like(used)
        own[:, 0] = has_s                               # src -> its stand-in
        own[np.arange(len(src)), used.sum(axis=1) - 1] |= has_d   # dst's stand-in -> dst
        key = np.where(used, a * n + b, -1)
        uk, inv = np.unique(key[used], return_inverse=True)
        leg = np.full(key.shape, -1, dtype=np.int64)
        leg[used] = inv.ravel()
        own_leg = np.zeros(len(uk), dtype=bool)
        own_leg[leg[own & used]] = True
        la, lb = uk // n, uk % n
        far = (la != lb) & (self._lids(la, lb) < 0)
        if far.any():   # the signature pairs of the GPU legs learnt at once
            ga, gb = self._gidx[la[far]], self._gidx[lb[far]]
            self._ensure_sigs(np.unique(np.concatenate([ga, gb])))
            sig = self._gpu_sig
            self._learn_pairs((sig[ga] << 32) | sig[gb])
        cache = self._pair_cache
        got, ok = [], np.ones(len(uk), dtype=bool)
        for j, (x, y, mine) in enumerate(zip(la.tolist(), lb.tolist(), own_leg.tolist(),
                                             strict=True)):
            pair = (nodes[x], nodes[y])
            kept = pair in cache
            r = self.route(*pair)
            if not kept and not mine:
                cache.pop(pair, None)   # serves its pairs here alone (_through_stand_ins)
            if r is None:
                ok[j] = False
                r = self._as_route(([], [], 0.0, 0))
            got.append(r)
        done &= ~(used & ~ok[np.maximum(leg, 0)]).any(axis=1)
        l_sizes = np.fromiter((len(r.links) for r in got), np.int64, count=len(got))
        l_links = np.concatenate([r.links for r in got]).astype(np.int64, copy=False)
        l_weights = np.concatenate([r.weights for r in got]).astype(float, copy=False)
        l_lat = np.array([r.latency for r in got], dtype=float)
        l_hops = np.array([r.hops for r in got], dtype=np.int64)
        l_start = np.cumsum(l_sizes) - l_sizes
        leg = leg[done]
        used = used[done]
        seq = leg[used]                                 # the legs in order, pair by pair
        sizes = np.zeros(leg.shape, dtype=np.int64)
        sizes[used] = l_sizes[seq]
        latency = np.zeros(len(leg))
        hops = np.zeros(len(leg), dtype=np.int64)
        for c in range(leg.shape[1]):                   # 0.0 + first + second (+ third)
            u = used[:, c]
            latency[u] = latency[u] + l_lat[leg[u, c]]
            hops[u] += l_hops[leg[u, c]]
        ls = l_sizes[seq]
        out = np.cumsum(ls) - ls
        pos = np.repeat(l_start[seq] - out, ls) + np.arange(int(ls.sum()))
        return (done, sizes.sum(axis=1), l_links[pos], l_weights[pos], latency, hops)

    def _dag_csrs(self, dst: np.ndarray) -> list:
        """:meth:`_dag` of each destination ``dst`` (node numbers, distinct) as arrays over
        node numbers (kept per destination): hops to the destination (-1: no path), and
        each node's next hops (``pointer`` per node, then per edge: the next node, link
        id, bandwidth, the sum of the node's next hops' bandwidths, summed in order), in
        the order of :meth:`_dag`. The missing ones come from one breadth-first search of
        them all, with numpy."""
        keep = self._dag_np
        # the ones asked for, held here: the cache keeps at most _DAG_BYTES and may drop
        # some of them while the others are built
        got = {d: keep[d] for d in dict.fromkeys(dst.tolist()) if d in keep}
        need = [d for d in dict.fromkeys(dst.tolist()) if d not in got]
        if need:
            n = self._n
            per = max(1, (1 << 22) // max(n, len(self._src), 1))
            for c0 in range(0, len(need), per):
                got.update(self._build_dags(np.array(need[c0:c0 + per], dtype=np.int64)))
        return [got[d] for d in dst.tolist()]

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

    def _build_dags(self, dst: np.ndarray) -> dict:
        """Add the arrays of :meth:`_dag_csrs` for destinations ``dst`` to the kept ones;
        returns them (destination -> arrays): on a torus of one bandwidth
        (:meth:`_torus_shifts`) translated from one destination's
        (:meth:`_translated_dags`), else by a breadth-first search of them all
        (:meth:`_searched_dags`)."""
        shifts = self._torus_shifts()
        arrays = (self._searched_dags(dst) if shifts is None
                  else self._translated_dags(dst, shifts))
        keep = self._dag_np
        built = {}
        for d, a in zip(dst.tolist(), arrays, strict=True):
            built[d] = a
            size = sum(x.nbytes for x in a)
            while keep and self._dag_bytes + size > _DAG_BYTES:
                old = keep.pop(next(iter(keep)))
                self._dag_bytes -= sum(x.nbytes for x in old)
            keep[d] = a
            self._dag_bytes += size
        return built

    def _torus_shifts(self) -> tuple | None:
        """What :meth:`_translated_dags` needs where this fabric is a torus of one
        bandwidth: every node a GPU or switch, node ``i`` at the row-major coordinates of
        ``i`` over the sides of the graph's ``dims``, its neighbours exactly those one step
        away along one side (checked), every link routed by the same bandwidth. Then each
        translate of the coordinates is an automorphism keeping bandwidths, and the
        shortest paths towards any node are those towards node 0 moved over. ``(sides,
        coordinates (n, sides), neighbour (n, degree), link id (n, degree), bandwidth,
        hops to node 0)``, worked out once; None for any other fabric."""
        if self._torus is not None:
            return self._torus or None
        self._torus = ()
        try:
            sides = tuple(int(x) for x in str(self.graph.graph.get("dims", "")).split("x"))
        except ValueError:
            return None
        n = self._n
        if (min(sides) < 2 or int(np.prod(sides)) != n or len(self._nodes) != n
                or (self._code > KIND_SWITCH).any()):
            return None
        ptr, nbr, link = self._nbr_csr()
        deg = sum(1 if s == 2 else 2 for s in sides)
        if len(nbr) != n * deg or (np.diff(ptr) != deg).any() or (link < 0).any():
            return None
        i = np.arange(n, dtype=np.int64)
        stride = np.cumprod((1, *sides[:0:-1]))[::-1].astype(np.int64)
        coord = (i[:, None] // stride) % np.array(sides)
        want = [i + ((coord[:, k] + step) % s - coord[:, k]) * stride[k]
                for k, s in enumerate(sides) for step in ((-1,) if s == 2 else (-1, 1))]
        table, lids = nbr.reshape(n, deg), link.reshape(n, deg)
        if not np.array_equal(np.sort(table, axis=1), np.sort(np.stack(want, axis=1), axis=1)):
            return None
        bw = self._route_bw[lids]
        b = float(bw.flat[0])
        if not (np.isfinite(b) and b > 0 and (bw == b).all()):
            return None
        dist0 = self._searched_dags(np.zeros(1, dtype=np.int64))[0][0]
        self._torus = (sides, coord, table, lids, b, dist0)
        return self._torus

    def _torus_steps(self) -> tuple | None:
        """What :meth:`_spread_rows_torus` reads on a torus of one bandwidth
        (:meth:`_torus_shifts`), worked out once; None for any other fabric. ``(coordinates
        (n, sides), sides, row-major strides, neighbour (n, degree), link id (n, degree),
        bandwidth, hops to node 0, the directions one hop nearer to node 0 (bits, per
        node), each adjacency slot's direction (n, degree), the totals of 0, 1, 2, ...
        bandwidths added in turn, the count of directions nearer per node)``: a direction
        is a side and a step of -1 or +1 along it (one step on a side of 2)."""
        if self._torus_walk is not None:
            return self._torus_walk or None
        self._torus_walk = ()
        shifts = self._torus_shifts()
        if shifts is None:
            return None
        sides, coord, table, lids, b, dist0 = shifts
        n = self._n
        i = np.arange(n, dtype=np.int64)
        stride = np.cumprod((1, *sides[:0:-1]))[::-1].astype(np.int64)
        # the node one step along each direction, in the order _torus_shifts checks them
        want = np.stack([i + ((coord[:, k] + step) % s - coord[:, k]) * stride[k]
                         for k, s in enumerate(sides)
                         for step in ((-1,) if s == 2 else (-1, 1))], axis=1)
        slot = np.argmax(table[:, :, None] == want[:, None, :], axis=2).astype(np.int64)
        nearer = (dist0[want] == (dist0 - 1)[:, None]) & (dist0 >= 1)[:, None]
        bits = (nearer.astype(np.int64) << np.arange(want.shape[1], dtype=np.int64)).sum(
            axis=1)
        sums = [0.0]
        for _ in range(table.shape[1]):
            sums.append(sums[-1] + b)
        self._torus_walk = (coord, np.array(sides), stride, table, lids, b, dist0, bits,
                            slot, np.array(sums), nearer.sum(axis=1))
        return self._torus_walk

    def _translated_dags(self, dst: np.ndarray, shifts: tuple) -> list:
        """:meth:`_searched_dags` on a torus of one bandwidth (``shifts``,
        :meth:`_torus_shifts`), the same arrays to the bit: hops to ``d`` from ``u`` are
        hops to node 0 from ``u - d`` (coordinates, modulo the sides); a node's next hops
        are its neighbours one hop nearer, in its own adjacency order; every next hop's
        share is the bandwidth (the least of it and what the next node passes on, a sum of
        one or more of it) and a node's total the sum of that many, added in turn."""
        sides, coord, table, lids, b, dist0 = shifts
        side = np.array(sides)
        stride = np.cumprod((1, *sides[:0:-1]))[::-1].astype(np.int64)
        moved = ((coord[None, :, :] - coord[dst][:, None, :]) % side) @ stride
        dist = dist0[moved]                                     # (m, n)
        near = (dist[:, table] == (dist - 1)[:, :, None]) & (dist >= 1)[:, :, None]
        counts = near.sum(axis=2)                               # next hops per node
        R, U, J = np.nonzero(near)              # by destination, node number, adjacency
        v, lid = table[U, J], lids[U, J]
        sums = [0.0]
        for _ in range(table.shape[1]):
            sums.append(sums[-1] + b)
        tot = np.array(sums)[counts[R, U]]
        bw = np.full(len(v), b)
        return _per_destination(dist, counts, v, lid, bw, tot)

    def _searched_dags(self, dst: np.ndarray) -> list:
        """The arrays of :meth:`_dag_csrs` for destinations ``dst``, in their order, from
        one breadth-first search of them all (nothing kept)."""
        n, m = self._n, len(dst)
        ptr, nbr, link = self._nbr_csr()
        deg = np.diff(ptr)
        transit = self._code <= KIND_SWITCH

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
        return _per_destination(dist, counts, v, lid, bw, tot)

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
        walk = self._torus_steps()
        if walk is None:
            csr = self._dag_csrs(uniq)
            ok = np.stack([c[0] for c in csr])[jd, src] > 0
        else:   # a torus: each row's next hops worked out as it walks, nothing kept
            csr = None
            ok = walk[6][_moved(walk, src, dst)] > 0
        out = []
        rows = np.flatnonzero(ok)
        rows = rows[np.argsort(jd[rows], kind="stable")]
        if walk is None:   # rows in chunks: each chunk's dags stacked, rows x nodes
            per = max(1, (1 << 21) // n)
            cuts = np.arange(per, len(rows), per)
        else:   # by the links each row's walk will hold, counted before it is walked
            held = np.cumsum(_torus_links(walk, _moved(walk, src[rows], dst[rows])))
            cuts = np.flatnonzero(np.diff(held // _WALK_LINKS)) + 1
        for r in np.split(rows, cuts):
            if not len(r):
                continue
            out.append((r, *(self._spread_rows(src[r], dst[r], jd[r], csr) if walk is None
                             else self._spread_rows_torus(src[r], dst[r], walk))))
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
        redo = np.flatnonzero(bound[o] * ratio * (1.0 - FLOW_RTOL) > 1.0)
        if len(redo):
            sizes, links, weights = self._max_flow_many(src[ok], dst[ok], redo, ratio,
                                                        sizes, links, weights)
        return ok, sizes, links, weights, latency[o], hops[o]

    def _spread_rows(self, src, dst, jd, csr) -> tuple:
        """:meth:`_spread_many` of rows ``src -> dst`` (all with a path), ``jd`` naming
        each row's destination's arrays in ``csr``."""
        n = self._n
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

        def nexts(fr, fu):
            at = j[fr] * n + fu
            cnt = CNT[at]
            first = np.cumsum(cnt) - cnt
            pos = np.arange(int(cnt.sum())) - np.repeat(first, cnt)
            e = np.repeat(PTR[at], cnt) + pos
            return cnt, pos, EV[e], EL[e], EB[e], ET[e]

        return self._walk_rows(src, dst, nexts, hops, ET[PTR[j * n + src]])

    def _spread_rows_torus(self, src, dst, walk) -> tuple:
        """:meth:`_spread_rows` on a torus of one bandwidth (``walk``,
        :meth:`_torus_steps`), the arrays of :meth:`_translated_dags` read where the walk
        is and never built: towards ``d``, node ``u``'s next hops are those of ``u - d``
        towards node 0, in the directions of ``u``'s own adjacency order; each one's share
        the bandwidth, their total that many of it added in turn (the same numbers)."""
        table, lids, b, near, slot, sums = walk[3], walk[4], walk[5], walk[7], walk[8], \
            walk[9]
        x = _moved(walk, src, dst)
        hops = walk[6][x]
        bound = sums[walk[10][x]]

        def nexts(fr, fu):
            bits = ((near[_moved(walk, fu, dst[fr])][:, None] >> slot[fu]) & 1).astype(bool)
            cnt = bits.sum(axis=1)
            f, k = np.nonzero(bits)   # by frontier entry, then adjacency order
            first = np.cumsum(cnt) - cnt
            pos = np.arange(len(f)) - np.repeat(first, cnt)
            u = fu[f]
            return (cnt, pos, table[u, k], lids[u, k], np.full(len(f), b),
                    sums[cnt][f])

        return self._walk_rows(src, dst, nexts, hops, bound)

    def _walk_rows(self, src, dst, nexts, hops, bound) -> tuple:
        """The level-by-level walk of :meth:`_spread_rows`: ``nexts(rows, nodes)`` gives the
        frontier's next hops ``(count per entry, place among its entry's, next node, link,
        bandwidth share, node's total)`` entry by entry; ``hops`` and ``bound`` (the
        source's total) per row, returned with the routes.

        A node's traffic and arrival come only from the level before it (every next hop is
        one hop nearer the destination), so they are carried with the frontier, nothing
        held per (row, node): work and memory go with the routes' links, not rows x nodes."""
        n, R = self._n, len(src)
        swl = self._sw_lat_arr
        if swl is None:
            swl = self._sw_lat_arr = np.zeros(n)
            if self._switch_latency:
                swl[np.fromiter(map(self._nid.__getitem__, self._switch_latency), np.int64,
                                count=len(self._switch_latency))] = np.fromiter(
                    self._switch_latency.values(), float, count=len(self._switch_latency))
        lat = self.latency
        # the frontier: row, node, rank among the row's frontier, traffic, arrival
        fr, fu, frank = np.arange(R), src, np.zeros(R, dtype=np.int64)
        ff, fa = np.ones(R), np.zeros(R)
        arrive = np.full(R, -1.0)   # at each row's destination
        em_r, em_k, em_rank, em_pos, em_l, em_w = [], [], [], [], [], []
        level = 0
        while len(fr):
            cnt, pos, v, lid, eb, et = nexts(fr, fu)
            e_n = len(v)
            if not e_n:
                break
            fi = np.repeat(np.arange(len(fr)), cnt)
            er, eu, ru = fr[fi], fu[fi], frank[fi]
            share = ff[fi] * eb / et
            em_r.append(er)
            em_k.append(np.full(e_n, level))
            em_rank.append(ru)
            em_pos.append(pos)
            em_l.append(lid)
            em_w.append(share)
            t = (fa[fi] + swl[eu]) + lat[lid]
            # traffic into each node, added in the order the walk adds it (from 0.0, each
            # node's k-th share in the k-th pass); the next level in the order the walk
            # finds it
            cell = er * n + v
            o = np.lexsort((pos, ru, cell))
            c2, s2 = cell[o], share[o]
            new = np.ones(e_n, dtype=bool)
            new[1:] = c2[1:] != c2[:-1]
            heads_at = np.flatnonzero(new)
            gi = np.cumsum(new) - 1
            k = np.arange(e_n) - heads_at[gi]
            gflow = np.zeros(len(heads_at))
            for kk in range(int(k.max()) + 1):
                m = k == kk
                gflow[gi[m]] += s2[m]
            garr = np.maximum(np.maximum.reduceat(t[o], heads_at), -1.0)
            heads = o[new]  # each next node's first (rank, place) among its reachers
            nr, nv = er[heads], v[heads]
            o2 = np.lexsort((pos[heads], ru[heads], nr))
            nr, nv, ff, fa = nr[o2], nv[o2], gflow[o2], garr[o2]
            there = nv == dst[nr]
            arrive[nr[there]] = fa[there]
            starts = np.flatnonzero(np.r_[True, nr[1:] != nr[:-1]])
            frank = np.arange(len(nr)) - np.repeat(starts, np.diff(np.r_[starts, len(nr)]))
            fr, fu = nr, nv
            level += 1
        R_ = np.concatenate(em_r)
        o = np.lexsort((np.concatenate(em_pos), np.concatenate(em_rank),
                        np.concatenate(em_k), R_))
        return (np.bincount(R_, minlength=R), np.concatenate(em_l)[o],
                np.concatenate(em_w)[o], arrive, hops, bound)


def _torus_links(walk: tuple, x: np.ndarray) -> np.ndarray:
    """The links of the shortest paths from each node ``x`` to node 0 of a torus
    (:meth:`DagRoutes._torus_steps`): the paths along a side span ``m + 1`` places over
    ``m`` links, ``m`` the nearer way round, or the whole ring of ``s`` (both ways, ``s``
    links) where ``x`` sits half way round a side ``s > 2``; the box of places is their
    product, and its links along a side that side's links times the other sides' places.

    >>> side, stride = np.array([4, 6]), np.array([6, 1])
    >>> coord = np.array([[i // 6, i % 6] for i in range(24)])
    >>> _torus_links((coord, side, stride), np.array([0, 1, 2, 3, 7, 12 + 3])).tolist()
    [0, 1, 2, 6, 4, 48]
    """
    c, side = walk[0][x], walk[1]
    near = np.minimum(c, side - c)
    whole = (2 * c == side) & (side > 2)
    places = np.where(whole, side, near + 1)
    links = np.where(whole, side, near)
    box = places.prod(axis=1)
    return (links * (box[:, None] // places)).sum(axis=1)


def _moved(walk: tuple, u: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Node ``u - d`` (coordinates, modulo the sides) of a torus's :meth:`DagRoutes._torus_steps`:
    where ``u`` is seen from node 0 when ``d`` is moved there."""
    coord, side, stride = walk[0], walk[1], walk[2]
    return ((coord[u] - coord[d]) % side) @ stride


def _per_destination(dist, counts, v, lid, bw, tot) -> list:
    """Split arrays laid out destination by destination (``counts[i, u]`` entries for node
    ``u`` towards destination ``i``, in that order) into one
    ``(dist, indptr, v, lid, bw, tot)`` tuple a destination, as :meth:`Router._dag_csrs`
    keeps them."""
    per_row = np.cumsum(counts.sum(axis=1))
    out = []
    lo = 0
    for i in range(counts.shape[0]):
        hi = int(per_row[i])
        p = np.zeros(counts.shape[1] + 1, dtype=np.int64)
        np.cumsum(counts[i], out=p[1:])
        out.append((dist[i], p, v[lo:hi], lid[lo:hi], bw[lo:hi], tot[lo:hi]))
        lo = hi
    return out
