"""Routes shared by GPUs wired alike: signatures, pieces and templates.

Its one job is the switched routes between two GPUs that depend only on the switches each
GPU is wired to (its *signature*, with those cables): the signatures and their up-cones
(:meth:`TemplatedRoutes._ensure_sigs`, :meth:`TemplatedRoutes._sig_info`), the links
between the first and last hops kept as shared *pieces*
(:meth:`TemplatedRoutes._add_piece`, :meth:`TemplatedRoutes.expand`), and the route fields
of each pair of signatures: through the up/down fast path of
:mod:`netmodel.collectives.updown` where the two cones meet
(:meth:`TemplatedRoutes._meet`), through the switches both GPUs are wired to
(:meth:`TemplatedRoutes._shared_templates`), or from a search
(:meth:`TemplatedRoutes._full_template`). :class:`TemplatedRoutes` is a mixin of
:class:`~netmodel.collectives.routing.Router`.

>>> import networkx as nx
>>> from netmodel.collectives.routing import Router
>>> g = nx.Graph(name="star", spec="", gpus=3)
>>> g.add_node("sw", kind="switch", tier=0, radix=3, latency=1e-7, in_network_reduction=False)
>>> for i in range(3):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=1e-8, medium="copper", lanes=1)
>>> r = Router(g)
>>> r._ensure_sigs(np.arange(3))
>>> r._gpu_sig.tolist(), len(r._sigs)  # all three wired alike: one signature
([0, 0, 0], 1)
"""

from __future__ import annotations

import numpy as np

from netmodel.collectives import route_types
from netmodel.collectives.route_flows import FLOW_RTOL
from netmodel.collectives.route_types import KIND_SWITCH, TRANSFER_FIELDS, rows_meet
from netmodel.collectives.steps import unique

__all__ = ["TemplatedRoutes"]

#: The most pairs of signatures :meth:`TemplatedRoutes._meet` works on at once (some fifty
#: arrays of 8 bytes each a pair: 2**18 pairs, about 100 MB).
MEET_PAIRS = 1 << 18


class TemplatedRoutes:
    """Signatures, pieces and the route templates of signature pairs of
    :class:`~netmodel.collectives.routing.Router` (a mixin: the methods stay on ``Router``).

    Reads the router's index (``_adj``, ``_nodes``, ``_nid``, ``_src``, ``_dst``, ``kind``,
    ``tier``, ``tiered``, ``_top``, ``bandwidth``, ``latency``, ``scaleout``,
    ``_switch_latency``, ``gpu_list``, ``_gpu_n``, the GPU port links ``_gport_ptr``,
    ``_gport_link``, ``_port``, ``n_links``, and ``_updown``) and keeps its tables there:
    signatures (``_sigs``, ``_sig_ids``, ``_sig_rep``, ``_gpu_sig``, ``_port_links``,
    the ``_si_*`` rows, ``_owner``, ``_claimed``, ``_partition``), pieces
    (``_piece_*``, ``_flat``, ``_cover``), specs and piece lists (``_spec_py``,
    ``_specs_pos``, ``_specs_w``, ``_specs_one``, ``_spec_ids``, ``_list_py``, ``_lists``),
    the signatures' ports alongside ``_si_sw`` (``_sp_*``), and the pairs' route fields
    (``_full``, ``_pair_rows``, ``_learned``, ``_halves``, ``_meet_lat``). Falls back on
    :meth:`~netmodel.collectives.route_search.SearchedRoutes._search`.
    """

    # ----------------------------------------------------------------- signatures, pieces
    def _switch_neighbours(self, node):
        adj = self._adj[node]
        return tuple(sorted(((s, adj[s]["bandwidth"], adj[s]["latency"]) for s in adj
                             if self.kind.get(s) == "switch"), key=lambda t: str(t[0])))

    def _ensure_sigs(self, g: np.ndarray) -> None:
        """Signature ids and port link ids of GPUs ``g`` (GPU indices), computed once, with
        numpy: a GPU's links to switches sorted by the switch's name, grouped into
        signatures by their (switch, bandwidth, latency) rows."""
        missing = g[self._gpu_sig[g] < 0]
        if not len(missing):
            return
        if len(missing) > len(self._gpu_sig):
            # many transfers' ends (an all-pairs step of 64 groups of 256 GPUs: 8.4 million
            # GPU indices): the distinct ones, in order, by marking them rather than sorting
            seen = np.zeros(len(self._gpu_sig), dtype=bool)
            seen[missing] = True
            missing = np.flatnonzero(seen)
        else:
            missing = unique(missing)
        if len(missing) <= 8:  # a few GPUs (single routes): plain loops
            for i in missing.tolist():
                node = self.gpu_list[i]
                sig = self._switch_neighbours(node)
                sid = self._sig_ids.get(sig)
                if sid is None:
                    sid = self._sig_ids[sig] = len(self._sigs)
                    self._sigs.append(sig)
                    self._sig_rep.append(int(self._gpu_n[i]))
                    self._sig_info(sig)
                port = self._port(node)
                at = int(self._gport_ptr[i])
                for j, (x, _, _) in enumerate(sig):
                    self._port_links[at + j] = port[x]
                self._gpu_sig[i] = sid
            return
        ptr, links = self._gport_ptr, self._gport_link
        start, count = ptr[missing], ptr[missing + 1] - ptr[missing]
        total = int(count.sum())
        row = np.repeat(np.arange(len(missing)), count)
        lk = links[np.repeat(start, count) + np.arange(total)
                   - np.repeat(np.cumsum(count) - count, count)] if total else links[:0]
        sw = self._dst[lk]
        names = self._nodes
        uniq_sw = unique(sw)
        rank_of = np.empty(len(uniq_sw), dtype=np.int64)
        rank_of[np.argsort([str(names[x]) for x in uniq_sw.tolist()], kind="stable")] = \
            np.arange(len(uniq_sw))
        rank = rank_of[np.searchsorted(uniq_sw, sw)]
        order = np.lexsort((rank, row))
        lk, sw, row = lk[order], sw[order], row[order]
        col = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
        self._port_links[ptr[missing[row]] + col] = lk
        sig_of = np.empty(len(missing), dtype=np.int64)
        bw, lat = self._route_bw[lk], self.latency[lk]
        for w in unique(count).tolist():
            rows = np.flatnonzero(count == w)
            sel = np.isin(row, rows)
            mat = np.stack([sw[sel].reshape(-1, w), bw[sel].reshape(-1, w),
                            lat[sel].reshape(-1, w)], axis=2).reshape(len(rows), 3 * w) \
                if w else np.zeros((len(rows), 0))
            uniq, inv = np.unique(mat, axis=0, return_inverse=True)
            ids = []
            sigs = [tuple((names[int(u[3 * j])], float(u[3 * j + 1]), float(u[3 * j + 2]))
                          for j in range(w)) for u in uniq]
            if self.tiered and w:  # the structures above new signatures' switches at once
                self._updown.prepare([x for x in sigs if x not in self._sig_ids])
            for sig in sigs:
                sid = self._sig_ids.get(sig)
                if sid is None:
                    sid = self._sig_ids[sig] = len(self._sigs)
                    self._sigs.append(sig)
                    self._sig_rep.append(-1)
                    self._sig_info(sig)
                ids.append(sid)
            sig_of[rows] = np.array(ids, dtype=np.int64)[inv.ravel()]
            seen, at = np.unique(sig_of[rows], return_index=True)
            for sid, g in zip(seen.tolist(), missing[rows[at]].tolist(), strict=True):
                if self._sig_rep[sid] < 0:
                    self._sig_rep[sid] = int(self._gpu_n[g])
        self._gpu_sig[missing] = sig_of

    def _sig_info(self, sig) -> None:
        """Index a new signature: its switches, and its cone tier by tier (the state, the
        node set, whether a dead end lies below, the pieces of the climb to it)."""
        nid, T = self._nid, self._top + 1
        self._si_sw.add([nid[s] for s, _, _ in sig])
        ud = self._updown
        cone = ud.cone(sig) if sig and self.tiered else None
        self._si_cone.append(cone)
        state, sets, dead, ups, upso = ([-1] * T, [-1] * T, [0] * T, [-1] * T, [0] * T)
        if cone is None:
            self._si_info.add([0, 0, -1, 0])
        else:
            t0 = int(ud.state(cone[0]).tier)
            pieces: list[int]
            below, pieces, so = False, [], False
            for j, sid in enumerate(cone):
                st = ud.state(sid)
                t = t0 + j
                state[t], sets[t], dead[t], upso[t] = sid, st.set_id, int(below), int(so)
                ups[t] = self._add_list(pieces)
                self._claim(t, st)
                below = below or st.struct.dead
                if j + 1 < len(cone):
                    piece = ud.up_piece(sid)
                    pieces = [*pieces, piece]
                    so = so or self._piece_scaleout[piece]
            base = ud.state(cone[0])
            pos = {s: i for i, (s, _, _) in enumerate(sig)}
            head = self._add_spec([pos[x] for x in base.nodes], base.flow)
            self._si_info.add([1, t0, head, int(self.tier[base.nodes[0]] >= 1)])
        self._si_state.add(state)
        self._si_set.add(sets)
        self._si_dead.add(dead)
        self._si_up.add(ups)
        self._si_upso.add(upso)

    def _claim(self, t: int, st) -> None:
        """Record that the switches of state ``st`` form a node set of tier ``t``; a tier
        whose sets are not disjoint (or equal) loses the fast disjointness test."""
        key = (t, st.set_id)
        if key in self._claimed:
            return
        self._claimed.add(key)
        owner = self._owner
        for x in st.nodes:
            o = owner.setdefault((t, x), st.set_id)
            if o != st.set_id:
                self._partition[t] = False

    def _add_spec(self, positions, weights) -> int:
        """A first- or last-hop pattern: positions in a signature and traffic shares; its
        id, the same for the same pattern (every GPU of its own signature, one GPU on 4,000
        NVSwitches: a 256-GPU all-to-all's 130,306 patterns were 257 distinct ones)."""
        pos, w = list(positions), [float(x) for x in weights]
        key = (tuple(pos), tuple(w))
        sid = self._spec_ids.get(key)
        if sid is not None:
            return sid
        self._spec_py.append((pos, w))
        self._specs_w.add(w)
        if len(pos) != 1:
            self._specs_one = False
        sid = self._spec_ids[key] = self._specs_pos.add(pos)
        return sid

    def _add_specs(self, count: np.ndarray, pos: np.ndarray, w: np.ndarray) -> np.ndarray:
        """:meth:`_add_spec` of patterns ``r``, each ``count[r]`` positions and weights in
        turn of the flat ``pos`` and ``w``; their ids (-1 where ``count[r]`` is 0). Patterns
        of one position (most) with numpy, each distinct one looked up once."""
        ids = np.full(len(count), -1, dtype=np.int64)
        first = np.cumsum(count) - count
        one = np.flatnonzero(count == 1)
        if len(one):
            p1, w1 = pos[first[one]], w[first[one]]
            key = np.stack([p1, w1.view(np.int64)], axis=1)
            _, at, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
            got = np.array([self._add_spec([p], [x]) for p, x in
                            zip(p1[at].tolist(), w1[at].tolist(), strict=True)],
                           dtype=np.int64)
            ids[one] = got[inv.ravel()]
        pl, wl = pos.tolist(), w.tolist()
        for r in np.flatnonzero(count > 1).tolist():
            f, e = int(first[r]), int(first[r] + count[r])
            ids[r] = self._add_spec(pl[f:e], wl[f:e])
        return ids

    def _add_piece(self, links: np.ndarray, weights: np.ndarray) -> int:
        """Register the links and weights of part of a route; returns the piece id."""
        self._piece_links.append(np.asarray(links, dtype=np.int64))
        self._piece_weights.append(np.asarray(weights, dtype=float))
        self._piece_scaleout.append(bool(self.scaleout[links].any()) if len(links) else False)
        return len(self._piece_links) - 1

    def piece(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Links and weights of piece ``i``."""
        return self._piece_links[i], self._piece_weights[i]

    def _pieces_flat(self):
        """Every piece in one array: ``(pointer per piece, links, weights)``."""
        n = len(self._piece_links)
        if self._flat is None or self._flat[0] != n:
            sizes = np.fromiter(map(len, self._piece_links), np.int64, count=n)
            ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            links = np.concatenate(self._piece_links) if n else np.zeros(0, dtype=np.int64)
            w = np.concatenate(self._piece_weights) if n else np.zeros(0)
            self._flat = (n, ptr, links, w)
        return self._flat[1:]

    def piece_cover(self) -> tuple[np.ndarray, np.ndarray]:
        """``(covered, exclusive)``: per link, whether some piece crosses it; per piece,
        whether no other piece crosses any of its links."""
        n = len(self._piece_links)
        if self._cover is None or self._cover[0] != n:
            ptr, links, _ = self._pieces_flat()
            count = np.bincount(links, minlength=self.n_links)
            sizes = np.diff(ptr)
            most = np.zeros(n, dtype=np.int64)
            full = sizes > 0
            if full.any():
                most[full] = np.maximum.reduceat(count[links], ptr[:-1][full])
            self._cover = (n, count > 0, most <= 1)
        return self._cover[1:]

    def expand(self, pieces: np.ndarray, coef: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Links and weights of ``pieces`` (ids), each scaled by its ``coef``:
        ``(entry piece position, links, weights)``."""
        ptr, links, w = self._pieces_flat()
        start, count = ptr[pieces], ptr[pieces + 1] - ptr[pieces]
        total = int(count.sum())
        at = np.repeat(start, count) + np.arange(total) - np.repeat(np.cumsum(count) - count,
                                                                    count)
        which = np.repeat(np.arange(len(pieces)), count)
        return which, links[at], w[at] * np.repeat(coef, count)

    # ----------------------------------------------------------------- templates
    def _full_template(self, sa: int, sb: int, src, dst):
        """A route shared by every GPU pair with signatures ``sa``, ``sb`` that share no
        switch and that the up/down fast path does not give: a general search from the pair
        ``src``, ``dst`` (the pairs that share switches: :meth:`_shared_templates`),
        ``(head, tail, list, latency, hops, scaleout)`` or None."""
        key = (sa, sb)
        if key in self._full:
            return self._full[key]
        # through switches only, not over a cable between the two (the pair standing for
        # two signatures may be cabled together; the pairs it stands for are not: direct
        # neighbours are routed on their own)
        found = self._search(src, dst, gpu_transit=False, direct=False)
        hit = None if found is None else self._search_template(src, dst, found,
                                                                self._sigs[sa], self._sigs[sb])
        self._full[key] = hit
        return hit

    def _sig_ports(self) -> tuple[np.ndarray, ...]:
        """Each signature's switches as ``_si_sw`` keeps them (``(ptr, keys)``, by node
        number), with each one's position in the signature, cable bandwidth and latency
        alongside: ``(ptr, keys, position, bandwidth, latency)``. Flat arrays, one entry a
        switch, not a dict per signature (every GPU of its own signature doubled what the
        signatures took)."""
        ptr, keys = self._si_sw.arrays
        if self._sp_done < len(self._sigs):
            nid = self._nid
            pos: list = []
            bw: list = []
            lat: list = []
            for sig in self._sigs[self._sp_done:]:
                ids = [nid[s] for s, _, _ in sig]
                order = sorted(range(len(sig)), key=ids.__getitem__)
                pos.extend(order)
                bw.extend([sig[i][1] for i in order])
                lat.extend([sig[i][2] for i in order])
            self._sp_pos.extend(np.array(pos, dtype=np.int64))
            self._sp_bw.extend(np.array(bw, dtype=float))
            self._sp_lat.extend(np.array(lat, dtype=float))
            self._sp_done = len(self._sigs)
        return ptr, keys, self._sp_pos.a, self._sp_bw.a, self._sp_lat.a

    def _shared_templates(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        """For signature pairs ``a[j] -> b[j]``: the two-hop routes through the switches both
        are wired to, ``(count, head positions, weights, tail positions, latency,
        scaleout)``: pair ``j``'s ``count[j]`` switches (0 where they share none) at
        ``first[j]:first[j] + count[j]`` of the flat positions and weights, ``first`` the
        counts' cumulative sum less the count; latency and scaleout one a pair. With numpy over all pairs at once: each switch of the
        shorter signature looked up among the longer's (one GPU on 4,000 NVSwitches: a
        256-GPU all-to-all's 65,153 pairs took 1.1 s pair by pair).

        Where the two share a tier-0 switch, over their tier-0 switches only, never through a
        scale-out switch both are wired to as well (NVL72: GPUs at one position of two
        compute trays sit on one rail leaf, gpu0 - leaf0 - gpu4 as short as gpu0 - nvs0 -
        gpu4, and splitting over both charged the NIC and NCCL's network latencies). NCCL
        connects a peer by the first transport that can (src/transport.cc, selectTransport:
        p2p, shm, then net), P2P wherever the GPUs' path is NVLink (src/graph/paths.cc,
        ncclTopoCheckP2p: PATH_NVL within p2pLevel), an MNNVL clique's trays fused into one
        topology (src/graph/topo.cc, ncclTopoGetSystem). A GPU whose NVLink failed shares no
        tier-0 switch, and keeps the network.

        Each switch is weighted by what it can carry on: min(the link up, the link down to
        the destination). By the link up alone, doubling one of a GPU's plane ports sent 2/5
        of its traffic down one 28 GB/s port of its peer (4-plane flat fabric, ring 1.59x
        slower after the upgrade). The switches in the source's port order; the weights'
        sum and the latency's maximum taken in that order, one switch after another, as a
        Python loop would (the same floats to the bit)."""
        ptr, keys, pos, bw, lat = self._sig_ports()
        base = self._si_sw.base
        if self._sp_node is None:   # by node number: the switches' (tier_arr's tiers)
            swl = np.zeros(len(self._nodes))
            if self._switch_latency:   # in node order, as the switches are numbered
                swl[self._code == KIND_SWITCH] = np.fromiter(
                    self._switch_latency.values(), float, count=len(self._switch_latency))
            self._sp_node = (self._tier_arr, swl)
        tier, swl = self._sp_node
        na, nb = ptr[a + 1] - ptr[a], ptr[b + 1] - ptr[b]
        swap = nb < na   # look the shorter row's switches up in the longer's
        short, long_ = np.where(swap, b, a), np.where(swap, a, b)
        cnt = np.minimum(na, nb)
        ends = np.cumsum(cnt)
        chunk = route_types.MEET_CHUNK
        lo, parts = 0, []
        while lo < len(a):   # pairs in chunks of about MEET_CHUNK look-ups
            hi = max(int(np.searchsorted(ends, (ends[lo - 1] if lo else 0) + chunk,
                                         side="right")), lo + 1)
            parts.append(self._shared_chunk(lo, hi, short, long_, swap, cnt, ptr, keys, pos,
                                            bw, lat, base, tier, swl))
            lo = hi
        if not parts:
            return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0),
                    np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=bool))
        return tuple(np.concatenate(x) for x in zip(*parts, strict=True))

    def _shared_chunk(self, lo, hi, short, long_, swap, cnt, ptr, keys, pos, bw, lat,
                      base, tier, swl) -> tuple[np.ndarray, ...]:
        """:meth:`_shared_templates` for pairs ``lo:hi``."""
        c = cnt[lo:hi]
        total = int(c.sum())
        pair = np.repeat(np.arange(hi - lo), c)
        off = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
        ent = np.repeat(ptr[short[lo:hi]], c) + off
        x = keys[ent] - short[lo:hi][pair] * base
        want = long_[lo:hi][pair] * base + x
        at = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
        found = keys[at] == want if total else np.zeros(0, dtype=bool)
        pair, ent, at, x = pair[found], ent[found], at[found], x[found]
        sw = swap[lo:hi][pair]
        ea, eb = np.where(sw, at, ent), np.where(sw, ent, at)
        t = tier[x]
        n = hi - lo
        low = t < 1
        keep = low | ~(np.bincount(pair[low], minlength=n) > 0)[pair]
        pair, ea, eb, x, t = pair[keep], ea[keep], eb[keep], x[keep], t[keep]
        pa = pos[ea]
        order = np.lexsort((pa, pair))
        pair, ea, eb, x, t, pa = (v[order] for v in (pair, ea, eb, x, t, pa))
        k = np.bincount(pair, minlength=n)
        first = np.cumsum(k) - k
        m = np.minimum(bw[ea], bw[eb])
        v = lat[ea] + swl[x] + lat[eb]
        tot, top = np.zeros(n), np.zeros(n)
        byk = np.argsort(-k, kind="stable")
        neg = -k[byk]
        for col in range(int(k.max()) if n else 0):   # one switch of every pair at a time
            rows = byk[:int(np.searchsorted(neg, -col, side="left"))]
            idx = first[rows] + col
            tot[rows] += m[idx]
            vv = v[idx]
            cur = top[rows]
            top[rows] = np.where(vv > cur, vv, cur)
        w = m / tot[pair]
        so = np.bincount(pair[t >= 1], minlength=n) > 0
        return k, pa, w, pos[eb], top, so

    def _search_template(self, src, dst, found, a_sig, b_sig):
        links, weights, latency, hops = found
        pa = {s: j for j, (s, _, _) in enumerate(a_sig)}
        pb = {s: j for j, (s, _, _) in enumerate(b_sig)}
        fp, fw, lp, lw, middle_l, middle_w = [], [], [], [], [], []
        for lid, w in zip(links, weights, strict=True):
            u, v = self._nodes[self._src[lid]], self._nodes[self._dst[lid]]
            if u == src:
                fp.append(pa[v])
                fw.append(w)
            elif v == dst:
                lp.append(pb[u])
                lw.append(w)
            else:
                middle_l.append(lid)
                middle_w.append(w)
        scaleout = bool(self.scaleout[np.asarray(links, dtype=np.int64)].any())
        pieces = [self._add_piece(np.array(middle_l, dtype=np.int64),
                                  np.array(middle_w, dtype=float))] if middle_l else []
        return (self._add_spec(fp, fw), self._add_spec(lp, lw), self._add_list(pieces),
                latency, hops, scaleout)

    def _learn_pairs(self, keys: np.ndarray) -> None:
        """Put the route fields of signature pairs ``keys`` in the dict of known pairs; while
        the fabric shows few signatures, those of every pair of them at once (one numpy
        pass instead of one per step)."""
        n = len(self._sigs)
        if n <= 128:
            a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
            new = (a >= self._learned) | (b >= self._learned)
            keys = np.concatenate([keys, (a[new] << 32) | b[new]])
            self._learned = n
        uk = unique(keys)
        uk = uk[[k not in self._pair_rows for k in uk.tolist()]]
        if not len(uk):
            return
        rep = np.array(self._sig_rep)
        u = self._pair_fields(uk, rep[uk >> 32], rep[uk & 0xFFFFFFFF])
        # a row a pair, its fields in TRANSFER_FIELDS' order (the 4,096 pairs of a 64-GPU
        # group spread over 64 leaves: zipped, where a generator a row took 3 ms)
        rows = zip(*(u[k].tolist() for k in TRANSFER_FIELDS), strict=True)
        self._pair_rows.update(zip(uk.tolist(), rows, strict=True))

    def _pair_fields(self, uk: np.ndarray, src: np.ndarray, dst: np.ndarray) -> dict:
        """The route fields of signature pairs ``uk`` (``a << 32 | b``), ``src[j] ->
        dst[j]`` a GPU pair wired as pair ``j``."""
        ua, ub = uk >> 32, uk & 0xFFFFFFFF
        u = {k: np.full(len(uk), -1, dtype=np.int64) for k in ("kind", "head", "tail")}
        u["l1"] = np.zeros(len(uk), dtype=np.int64)
        u["l2"] = np.zeros(len(uk), dtype=np.int64)
        u["latency"] = np.zeros(len(uk))
        u["hops"] = np.zeros(len(uk), dtype=np.int64)
        u["scaleout"] = np.zeros(len(uk), dtype=bool)
        shared = rows_meet(self._si_sw, ua, ub)
        status = np.where(shared, 2, 0)
        if self.tiered:
            self._meet(ua, ub, status, u)
        status[status == 0] = 2
        todo = np.flatnonzero(status == 2)
        if not len(todo):
            return u
        # the pairs that share switches, all at once (their patterns kept once each, so
        # working a pair out again adds none)
        count, fa, fw, fb, lat, so = self._shared_templates(ua[todo], ub[todo])
        on = count > 0
        at = todo[on]
        u["head"][at] = self._add_specs(count, fa, fw)[on]
        u["tail"][at] = self._add_specs(count, fb, fw)[on]
        u["latency"][at] = lat[on]
        u["hops"][at] = 2
        u["scaleout"][at] = so[on]
        u["kind"][at] = 1
        # the others searched, pair by pair
        nodes, todo = self._nodes, todo[~on]
        hits, rows = [], []
        for j, x, y, s, d in zip(todo.tolist(), ua[todo].tolist(), ub[todo].tolist(),
                                 src[todo].tolist(), dst[todo].tolist(), strict=True):
            hit = self._full_template(x, y, nodes[s], nodes[d])
            if hit is not None:
                hits.append(hit)
                rows.append(j)
        if hits:
            at = np.array(rows, dtype=np.int64)
            for k, col in zip(("head", "tail", "l1", "latency", "hops", "scaleout"),
                              zip(*hits, strict=True), strict=True):
                u[k][at] = col
            u["kind"][at] = 1
        return u

    def _meet(self, ua: np.ndarray, ub: np.ndarray, status: np.ndarray, u: dict) -> None:
        """The up/down fast path for the signature pairs ``ua[j] -> ub[j]`` with
        ``status[j] == 0``: the lowest tier where the two cones are the same switches (no
        dead end below, no partial overlap before); fills ``u`` for those and sets their
        status to 1; 2 where the fast path does not apply.

        At most :data:`MEET_PAIRS` pairs are worked on at once, in runs of whole
        destinations in ascending order: what it keeps (capacity sets, halves, their
        patterns, lists and pieces) is made in the order of keys led by the destination,
        so in the same order, with the same ids, as all at once. A 2,032-GPU direct
        all-pairs step (4.1 million pairs of signatures, a GPU's own switches each)
        made some fifty arrays of 33 MB at once: 1.96 GB peak, most of its time in
        page faults."""
        m = np.flatnonzero(status == 0)
        info = self._si_info.table
        m = m[(info[ua[m], 0] == 1) & (info[ub[m], 0] == 1)]
        if len(m) <= MEET_PAIRS:
            if len(m):
                self._meet_part(m, ua, ub, status, u)
            return
        m = m[np.argsort(ub[m], kind="stable")]   # by destination
        dest = ub[m]
        lo = 0
        while lo < len(m):
            hi = lo + MEET_PAIRS
            if hi < len(m):   # back to the first pair of a destination (or past one)
                hi = int(np.searchsorted(dest, dest[hi], side="left"))
                if hi <= lo:
                    hi = int(np.searchsorted(dest, dest[lo], side="right"))
            self._meet_part(m[lo:hi], ua, ub, status, u)
            lo = hi

    def _meet_part(self, m: np.ndarray, ua: np.ndarray, ub: np.ndarray, status: np.ndarray,
                   u: dict) -> None:
        """:meth:`_meet` of the pairs ``m`` (their fast path's ends checked)."""
        info = self._si_info.table
        a, b = ua[m], ub[m]
        sets, dead = self._si_set.table, self._si_dead.table
        ta, tb = info[a, 1], info[b, 1]
        start = np.maximum(ta, tb)
        st = np.zeros(len(m), dtype=np.int64)
        tm = np.full(len(m), -1, dtype=np.int64)
        ud = self._updown
        for t in range(self._top + 1):
            act = (st == 0) & (t >= start)
            if not act.any():
                continue
            sa, sb = sets[a, t], sets[b, t]
            bad = act & ((sa < 0) | (sb < 0) | (dead[a, t] != 0) | (dead[b, t] != 0))
            st[bad] = 2
            act &= ~bad
            eq = act & (sa == sb)
            st[eq] = 1
            tm[eq] = t
            if not self._partition[t]:
                for j in np.flatnonzero(act & ~eq).tolist():
                    if not ud.disjoint(int(sa[j]), int(sb[j])):
                        st[j] = 2
        status[m] = np.where(st == 1, 1, 2)
        ok = st == 1
        m, a, b, tm, ta, tb = m[ok], a[ok], b[ok], tm[ok], ta[ok], tb[ok]
        if not len(m):
            return
        h, k = tm - ta, tm - tb
        # the cones split by bandwidth: exact where it is the capacity split (UpDown.up_ok)
        cones = self._si_cone
        cid = None
        if not ud.one_speed:
            bk = (b << 8) | k
            ubk, bkinv = np.unique(bk, return_inverse=True)
            cid = np.array([ud.caps_id(cones[x >> 8], x & 0xFF) for x in ubk.tolist()],
                           dtype=np.int64)[bkinv.ravel()]
            key = (a << 40) | (h << 32) | (cid & 0xFFFFFFFF)
            uk, kinv = np.unique(key, return_inverse=True)
            good = np.array([ud.up_ok(cones[x >> 40], (x >> 32) & 0xFF, (x & 0xFFFFFFFF)
                                      if (x & 0xFFFFFFFF) != 0xFFFFFFFF else -1)
                             for x in uk.tolist()], dtype=bool)[kinv.ravel()]
            if not good.all():
                status[m[~good]] = 2
                m, a, b, tm, ta, tb, h, k, cid = (x[good] for x in
                                                  (m, a, b, tm, ta, tb, h, k, cid))
                if not len(m):
                    return
        states = self._si_state.table
        s_a, s_b = states[a, tm], states[b, tm]
        # the way down: one half per (destination, depth, flow at the top)
        hk = (b << 40) | (k << 32) | s_a
        uh, hinv = np.unique(hk, return_inverse=True)
        hinv = hinv.ravel()
        halves = self._halves
        keys = uh.tolist()
        got = list(map(halves.get, keys))
        for j in [j for j, hit in enumerate(got) if hit is None]:  # new halves, in order
            key = keys[j]
            bb, kk, sid = key >> 40, (key >> 32) & 0xFF, key & 0xFFFFFFFF
            pieces, f0 = ud.descend(cones[bb], kk, sid)
            base = ud.state(cones[bb][0])
            sig = self._sigs[bb]
            pos = {x: i for i, (x, _, _) in enumerate(sig)}
            got[j] = halves[key] = (self._add_spec([pos[x] for x in base.nodes], f0),
                                    self._add_list(pieces),
                                    any(self._piece_scaleout[i] for i in pieces))
        cols = np.array(got, dtype=np.int64).reshape(len(got), 3)
        tail, lst, hso = cols[:, 0], cols[:, 1], cols[:, 2] != 0
        if cid is not None:
            # the capacity split counts paths that split and merge again (three switch
            # tiers) more than once: a pair whose split carries less than that bound is
            # left to the search, which takes a maximum flow's shares (route_flows)
            short = self._short_of_cap(a, b, h, tm, cid, tail[hinv], lst[hinv])
            if short.any():
                status[m[short]] = 2
                keep = ~short
                m, a, b, tm, ta, tb, h, k, s_a, s_b, hinv = (
                    x[keep] for x in (m, a, b, tm, ta, tb, h, k, s_a, s_b, hinv))
                if not len(m):
                    return
        # latency: one per (state climbed to, state descended from)
        lk = (s_a << 32) | s_b
        ul, linv = np.unique(lk, return_inverse=True)
        lats = self._meet_lat
        lat = np.array([lats[x] if x in lats else lats.setdefault(
            x, ud.meeting_latency(x >> 32, x & 0xFFFFFFFF)) for x in ul.tolist()])
        u["kind"][m] = 1
        u["head"][m] = info[a, 2]
        u["tail"][m] = tail[hinv]
        u["l1"][m] = self._si_up.table[a, tm]
        u["l2"][m] = lst[hinv]
        u["latency"][m] = lat[linv.ravel()]
        u["hops"][m] = 2 + h + k
        u["scaleout"][m] = (self._si_upso.table[a, tm] != 0) | hso[hinv] \
            | (info[a, 3] != 0) | (info[b, 3] != 0)

    def _short_of_cap(self, a, b, h, tm, cid, tail, lst) -> np.ndarray:
        """Whether the split of each pair of signatures ``a[j] -> b[j]`` (the cone of
        ``a`` climbed ``h[j]`` tiers to tier ``tm[j]``, where the capacities towards ``b``
        are ``cid[j]``, then down by the pieces of list ``lst[j]`` into the last-hop
        pattern ``tail[j]``) carries less than its bound
        (:meth:`~netmodel.collectives.updown.UpDown.up_cap`): the bound times the highest
        share over bandwidth of its links is above 1 (past ``FLOW_RTOL``). Each part is
        worked out once per distinct value (a 8,192-GPU fat tree's all-reduce: 20,688
        pairs of signatures)."""
        info, ups, cones, ud = self._si_info.table, self._si_up.table, self._si_cone, \
            self._updown

        def per(keys, f):
            uk, inv = np.unique(keys, return_inverse=True)
            return np.array([f(x) for x in uk.tolist()], dtype=float)[inv.ravel()]

        ratio = np.maximum.reduce([
            per(a, lambda x: self._spec_ratio(int(info[x, 2]), x)),
            per((tail << 32) | b, lambda x: self._spec_ratio(x >> 32, x & 0xFFFFFFFF)),
            per(ups[a, tm], self._list_ratio), per(lst, self._list_ratio)])
        cap = per((a << 40) | (h << 32) | cid,
                  lambda x: ud.up_cap(cones[x >> 40], (x >> 32) & 0xFF, x & 0xFFFFFFFF))
        return cap * ratio * (1.0 - FLOW_RTOL) > 1.0

    def _spec_ratio(self, spec: int, sig: int) -> float:
        """The highest share over bandwidth of first- or last-hop pattern ``spec`` on
        the ports of signature ``sig`` (kept in ``_spec_ratios``)."""
        hit = self._spec_ratios.get((spec, sig))
        if hit is None:
            pos, w = self._spec_py[spec]
            ports = self._sigs[sig]
            hit = self._spec_ratios[(spec, sig)] = max(
                (x / ports[p][1] for p, x in zip(pos, w, strict=True)), default=0.0)
        return hit

    def _list_ratio(self, lst: int) -> float:
        """The highest share over bandwidth of the links of the pieces of list ``lst``."""
        hit = self._list_ratios.get(lst)
        if hit is None:
            bw = self._route_bw
            hit = self._list_ratios[lst] = max(
                (float((self._piece_weights[i] / bw[self._piece_links[i]]).max())
                 for i in self._list_py[lst] if len(self._piece_links[i])), default=0.0)
        return hit

    def _add_list(self, pieces) -> int:
        """Register a list of piece ids; returns its id."""
        self._list_py.append(list(pieces))
        return self._lists.add(pieces)
