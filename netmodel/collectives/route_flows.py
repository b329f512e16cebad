"""Maximum flows for searched routes whose capacity split carries less than a maximum flow
over their shortest paths (paths that split and merge again: tori).

Its one job is fixing such a split: :meth:`FlowRoutes._max_flow` (one route) and
:meth:`FlowRoutes._max_flow_many` (many, laid end to end) take a maximum flow's shares
instead, found by plain loops (:meth:`FlowRoutes._flow_of`, :func:`_augment`) and kept by
the route's canonical pattern (:meth:`FlowRoutes._flow_keys`, :meth:`FlowRoutes._flow_hit`),
so the routes of a torus's translates share one flow. The routes themselves are
:mod:`netmodel.collectives.route_search`'s (one pair) and
:mod:`netmodel.collectives.route_dags`'s (many pairs at once). :class:`FlowRoutes` is a
mixin of :class:`~netmodel.collectives.routing.Router` (through
:class:`~netmodel.collectives.route_search.SearchedRoutes`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FlowRoutes"]

#: A route's split is taken as a maximum flow where it carries within this fraction of the
#: bound on the flow (:meth:`SearchedRoutes._max_flow`); also the flow's rounding.
FLOW_RTOL = 1e-12
#: The most bytes of maximum flows a router keeps, by pattern (:meth:`SearchedRoutes._max_flow`),
#: 32 MiB: the 4,304 patterns of an all-to-all of a 16x16 torus take 24 MB.
_FLOWS_BYTES = 1 << 25


class FlowRoutes:
    """Maximum flows of :class:`~netmodel.collectives.routing.Router`'s searched routes (a
    mixin: the methods stay on ``Router``).

    Reads the router's index (``_src``, ``_dst``, ``_n``, ``_route_bw``) and keeps its
    caches there (``_bw_list``, the flows by pattern ``_flows`` and the bytes they take
    ``_flows_bytes``).
    """

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
        if not bound * ratio * (1.0 - FLOW_RTOL) > 1.0:
            return None
        la = np.asarray(links, dtype=np.int64)
        key = self._flow_keys(np.array([sn]), np.array([dn]), np.zeros(1, dtype=np.int64),
                              np.array([len(la)]), la, np.asarray(weights, dtype=float))[0]
        got = self._flow_hit(key, la, weights, ratio, sn, dn)
        if got is None:
            return None
        return la[got[0]].tolist(), got[1].tolist()

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
        eps = FLOW_RTOL
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
        if not total > split * (1.0 + FLOW_RTOL):
            return None
        keep = [i for i in range(len(links)) if f[i] > eps * total]
        return (np.array(keep, dtype=np.int64),
                np.array([f[i] / total for i in keep], dtype=float))


def _flow_bytes(key: bytes, hit: tuple | None) -> int:
    """Bytes a kept maximum flow takes (:meth:`SearchedRoutes._flow_hit`), near enough."""
    return len(key) + 100 + (0 if hit is None else hit[0].nbytes + hit[1].nbytes + 200)


def _augment(sn: int, dn: int, us: list, vs: list, cap: list, f: list, out: dict,
             into: dict) -> list:
    """Flow ``f`` on links ``us[i] -> vs[i]`` of capacity ``cap`` made a maximum flow from
    ``sn`` to ``dn`` by shortest augmenting paths, a blocking flow a phase (Dinic), each
    node's links taken in the order ``out`` and ``into`` list them; ``f`` itself, changed."""
    eps = FLOW_RTOL
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
