"""Fast valley-free (up/down) ECMP routes for tiered switch fabrics, built from shared pieces.

In a fabric whose switch-to-switch links all join adjacent tiers (leaf-spine, fat trees,
rail-optimized fabrics), a shortest path between two GPUs climbs from the switches of the
source to the lowest tier where the two "up-cones" meet, then descends. The cone of a set
of switches (every node reachable by climbing ``h`` tiers, with the ECMP share of traffic
reaching each) depends only on where a GPU is wired, so it is computed once per attachment;
a route is one cone climbed and another descended.

Everything is shared as far as it goes: the wiring between a set of switches and the tier
above (a *structure*) is indexed once per set, a cone level (a *state*: the switches, the
traffic share reaching each, arrival and departure latencies) once per distinct state, so
that every leaf of a pod climbs into the same state of the pod's spines and every pod into
the same state of the cores. The links a route loads above its first hop are then a few
*pieces* (the up-links of a state, the down-links of a structure under a given flow), each
an array of link ids and weights registered once with the router and reused by every route
through it: a step of many transfers sums a few pieces scaled by the traffic through them
instead of one array per GPU pair.

The fast path is taken only where it is exact: both endpoints' switches on one tier, the two
cones equal where they first meet (so every upward path reaches the meeting tier and ECMP
uses them all), and no dead end below it. Anything else returns None and the caller falls
back to the general bidirectional search.
"""

from __future__ import annotations

from collections.abc import Hashable
from itertools import chain
from typing import Any

import numpy as np

__all__ = ["UpDown"]


class _Struct:
    """The edges from a set of switches (``lower``) to their neighbours one tier up."""

    __slots__ = ("c", "dead", "lat", "ldown", "lup", "p", "piece_key", "share_down",
                 "share_up", "sw_lower", "sw_upper", "upper")

    c: np.ndarray
    dead: bool
    lat: np.ndarray
    ldown: np.ndarray
    lup: np.ndarray
    p: np.ndarray
    piece_key: int
    share_down: np.ndarray
    share_up: np.ndarray
    sw_lower: np.ndarray
    sw_upper: np.ndarray
    upper: tuple[Hashable, ...]


class _State:
    """One level of a cone: its switches and the traffic share, arrival and departure
    latencies at each; ``up`` is the level above (-1: not built yet, None: nothing above)."""

    __slots__ = ("arrive", "depart", "flow", "nodes", "piece", "set_id", "struct", "tier", "up")

    arrive: np.ndarray
    depart: np.ndarray
    flow: np.ndarray
    nodes: tuple[Hashable, ...]
    piece: int
    set_id: int
    struct: _Struct | None
    tier: int
    up: int | None


class UpDown:
    """Cone-based routing for one :class:`~netmodel.collectives.routing.Router`'s routes.

    The router keeps the tables (an UpDown made with no router) and reads them through
    :meth:`bind`, a view on the very same tables (its ``__dict__``) with ``router`` set:
    the tables hold no router, so a router and its tables form no reference cycle and are
    freed as soon as they are dropped, and routers sharing one router's routes
    (:func:`~netmodel.collectives.route_sharing.router_for`: the same ``__dict__``, so the
    same tables and pieces) each climb them with themselves, whichever of them is gone.

    >>> ud = UpDown()
    >>> view = ud.bind("a router")
    >>> view.router, ud.router, view.__dict__ is ud.__dict__, "router" in ud.__dict__
    ('a router', None, True, False)
    """

    # router: a slot, outside the __dict__ the views share
    __slots__ = ("__dict__", "router")

    def __init__(self, router: Any = None) -> None:
        # router: the Router (not imported here: routing imports this module)
        self.router = router
        self._structs: dict = {}
        self._states: list[_State] = []
        self._state_ids: dict = {}
        self._cones: dict = {}
        self._alive: dict[int, bool] = {}
        self._set_ids: dict = {}
        self._set_nodes: list = []
        self._overlap: dict = {}
        self._down: dict = {}
        self._chains: dict = {}
        self._cone_bw: dict = {}
        self._caps: dict = {}
        self._cap_sets: list = []
        self._cap_ids: dict = {}
        self._up_ok: dict = {}
        self._up_cap: dict = {}
        self._one_speed: bool | None = None

    def bind(self, router: Any) -> UpDown:
        """These tables, read and extended for ``router`` (whose pieces the routes use)."""
        view = UpDown.__new__(UpDown)
        view.__dict__ = self.__dict__
        view.router = router
        return view

    # ------------------------------------------------------------------ states
    def _set_id(self, nodes) -> int:
        key = frozenset(nodes)
        sid = self._set_ids.get(key)
        if sid is None:
            sid = self._set_ids[key] = len(self._set_ids)
            self._set_nodes.append(key)
        return sid

    def _state(self, nodes, tier, flow, arrive, depart) -> int:
        key = (nodes, flow.tobytes(), arrive.tobytes(), depart.tobytes())
        sid = self._state_ids.get(key)
        if sid is None:
            st = _State()
            st.nodes, st.tier, st.flow, st.arrive, st.depart = nodes, tier, flow, arrive, depart
            st.set_id = self._set_id(nodes)
            st.up, st.struct, st.piece = -1, None, -1
            sid = self._state_ids[key] = len(self._states)
            self._states.append(st)
        return sid

    def _struct(self, nodes, tier) -> _Struct:
        key = (nodes, tier)
        s = self._structs.get(key)
        if s is None:
            self._build_structs([key])
            s = self._structs[key]
        return s

    def prepare(self, sigs) -> None:
        """Build the structures above the switches of every signature of ``sigs`` whose
        cone the fast path will climb, all in one numpy pass (:meth:`_build_structs`),
        before the cones are climbed one by one."""
        tier = self.router.tier
        keys = {}
        nid = self.router._nid
        sigs = list(sigs)
        self._see([nid[t[0]] for sig in sigs for t in sig])   # their switches at once
        for sig in sigs:
            live = self._live(sig)
            if not live:
                continue
            nodes = tuple(a for a, _, _ in live)
            tiers = {tier[a] for a in nodes}
            if len(tiers) == 1:
                key = (nodes, tiers.pop())
                if key not in self._structs:
                    keys[key] = None
        if keys:
            self._build_structs(list(keys))

    def _build_structs(self, keys) -> None:
        """The :class:`_Struct` of each ``(switches, tier)`` of ``keys`` (none built yet):
        the up-links of all their switches gathered at once and numbered per structure
        (each structure's upper switches sorted by node number, as ``np.unique`` would);
        every share is summed over the same links in the same order as one structure alone
        would sum them."""
        r = self.router
        nid, n = r._nid, r._n
        sizes = np.fromiter(map(len, (k[0] for k in keys)), np.int64, count=len(keys))
        low = np.fromiter(map(nid.__getitem__, chain.from_iterable(k[0] for k in keys)),
                          np.int64, count=int(sizes.sum()))
        count, lup = r._up_links(low)
        total = int(count.sum())
        gp = np.repeat(np.arange(len(low)), count)  # each link's lower switch (overall)
        node_set = np.repeat(np.arange(len(keys)), sizes)
        node_off = np.cumsum(sizes) - sizes
        link_set = node_set[gp]
        sk = link_set * n + r._dst[lup]  # (structure, upper switch) of each link
        srt = np.sort(sk)
        uk = srt[np.concatenate(([True], srt[1:] != srt[:-1]))] if total else srt
        c = np.searchsorted(uk, sk)  # upper switch of each link (overall)
        up_count = np.bincount(uk // n, minlength=len(keys))
        up_off = np.cumsum(up_count) - up_count
        link_count = np.bincount(link_set, minlength=len(keys))
        link_off = np.cumsum(link_count) - link_count
        bw = r._route_bw[lup]
        lat = r.latency[lup]
        share_up = bw / np.bincount(gp, bw, minlength=len(low))[gp] if total else bw
        share_down = bw / np.bincount(c, bw, minlength=len(uk))[c] if total else bw
        ldown = lup ^ 1
        p_local = gp - node_off[link_set]
        c_local = c - up_off[link_set]
        dead = np.bincount(node_set, count == 0, minlength=len(keys)) > 0
        names = r._nodes
        swl = r._switch_latency
        sw_low = np.array([swl.get(x, 0.0) for k in keys for x in k[0]])
        uppers = list(map(names.__getitem__, (uk % n).tolist()))
        sw_up = np.array([swl.get(x, 0.0) for x in uppers])
        for j, key in enumerate(keys):
            a, b = int(link_off[j]), int(link_off[j] + link_count[j])
            u0, u1 = int(up_off[j]), int(up_off[j] + up_count[j])
            v0, v1 = int(node_off[j]), int(node_off[j] + sizes[j])
            s = _Struct()
            s.dead = bool(dead[j])
            s.upper = tuple(uppers[u0:u1])
            s.p = p_local[a:b]
            s.c = c_local[a:b]
            s.lup, s.ldown = lup[a:b], ldown[a:b]
            s.lat = lat[a:b]
            s.share_up = share_up[a:b]
            s.share_down = share_down[a:b]
            s.sw_lower = sw_low[v0:v1]
            s.sw_upper = sw_up[u0:u1]
            s.piece_key = len(self._structs)
            self._structs[key] = s

    def _above(self, sid: int):
        """The state one level above state ``sid`` (None when nothing is above)."""
        st = self._states[sid]
        if st.up != -1:
            return st.up
        s = st.struct = self._struct(st.nodes, st.tier)
        if not s.upper:
            st.up = None
            return None
        p, c = s.p, s.c
        flow = np.bincount(c, st.flow[p] * s.share_up, minlength=len(s.upper))
        arrive = np.zeros(len(s.upper))
        np.maximum.at(arrive, c, st.arrive[p] + s.sw_lower[p] + s.lat)
        depart = np.zeros(len(s.upper))
        np.maximum.at(depart, c, s.lat + st.depart[p])
        depart += s.sw_upper
        st.up = self._state(s.upper, st.tier + 1, flow, arrive, depart)
        return st.up

    def _up_piece(self, sid: int) -> int:
        """The router piece of the up-links out of state ``sid`` (weights: traffic share)."""
        st = self._states[sid]
        if st.piece < 0:
            s = st.struct
            st.piece = self.router._add_piece(s.lup, st.flow[s.p] * s.share_up)
        return st.piece

    # ------------------------------------------------------------------ cones
    def _live(self, sig):
        """Drop attachments that lead nowhere: switches whose only neighbours are GPUs (a
        scale-up switch seen from outside its domain). Without a switch shared by both ends
        no shortest path crosses them, and ECMP at the GPU uses only the others."""
        ids = [self.router._nid[t[0]] for t in sig]
        live = self._see(ids)
        return tuple(t for t, i in zip(sig, ids, strict=True) if live[i])

    def _see(self, ids: list[int]) -> dict[int, bool]:
        """``_alive``, by switch (node numbers): whether it has a link to a switch, looked
        up for those of ``ids`` not seen before, all at once (nothing fabric-wide)."""
        live = self._alive
        new = [i for i in dict.fromkeys(ids) if i not in live]
        if new:
            r = self.router
            nodes = np.array(new, dtype=np.int64)
            count, links = r._out_links(nodes)
            owner = np.repeat(np.arange(len(nodes)), count)
            to_sw = (r._code[r._src[links]] == 1) & (r._code[r._dst[links]] == 1)   # switches
            live.update(zip(new, (np.bincount(owner[to_sw], minlength=len(nodes)) > 0
                                  ).tolist(), strict=True))
        return live

    def _cone(self, sig):
        """``[state ids by level]`` of the cone of a live signature, or False when its
        switches are not on one tier."""
        cone = self._cones.get(sig)
        if cone is None:
            tier = self.router.tier
            tiers = {tier[a] for a, _, _ in sig}
            if len(tiers) != 1:
                cone = False
            else:
                nodes = tuple(a for a, _, _ in sig)
                bw = np.array([b for _, b, _ in sig], dtype=float)
                lat = np.array([la for _, _, la in sig], dtype=float)
                swl = np.array([self.router._switch_latency.get(a, 0.0) for a in nodes])
                cone = [self._state(nodes, tiers.pop(), bw / bw.sum(), lat, swl + lat)]
                self._cone_bw[id(cone)] = bw
            self._cones[sig] = cone
        return cone

    def _level(self, cone, h):
        """State id of level ``h`` of ``cone`` (None when the cone ends below it)."""
        while len(cone) <= h:
            up = self._above(cone[-1])
            if up is None:
                return None
            cone.append(up)
        return cone[h]

    # ------------------------------------------------------------------ routes
    def cone(self, sig: tuple[tuple[Hashable, float, float], ...]) -> list[int] | None:
        """The full cone of a signature's live switches, up to the top tier: a list of
        state ids by level, or None when the fast path cannot apply (no live switch, or
        switches on several tiers)."""
        live = self._live(sig)
        if not live:
            return None
        cone = self._cone(live)
        if not cone:
            return None
        self._level(cone, 1 << 30)  # extend to the top
        return cone

    def state(self, sid: int) -> _State:
        return self._states[sid]

    def up_piece(self, sid: int) -> int:
        return self._up_piece(sid)

    def descend(self, cone: list[int], k: int, top_state: int
                ) -> tuple[list[int], np.ndarray]:
        """The way down ``cone`` from its level ``k`` carrying the flow of state
        ``top_state`` (which holds the same switches): ``(pieces, flow at level 0)``."""
        states = self._states
        top_c, top_d = states[top_state], states[cone[k]]
        if top_c.nodes == top_d.nodes:
            f = top_c.flow
        else:
            pos = {n: i for i, n in enumerate(top_d.nodes)}
            f = np.empty(len(top_d.nodes))
            f[np.array([pos[n] for n in top_c.nodes], dtype=np.int64)] = top_c.flow
        return self._descend(cone, k, f)

    def meeting_latency(self, a: int, b: int) -> float:
        """Longest climb through state ``a`` plus descent from state ``b`` (same switches)."""
        sa, sb = self._states[a], self._states[b]
        if sa.nodes == sb.nodes:
            return float(np.max(sa.arrive + sb.depart))
        pos = {n: i for i, n in enumerate(sb.nodes)}
        perm = np.array([pos[n] for n in sa.nodes], dtype=np.int64)
        return float(np.max(sa.arrive + sb.depart[perm]))

    def disjoint(self, a: int, b: int) -> bool:
        """Whether node sets ``a`` and ``b`` (set ids) share no switch."""
        key = (a, b) if a < b else (b, a)
        hit = self._overlap.get(key)
        if hit is None:
            hit = self._overlap[key] = self._set_nodes[a].isdisjoint(self._set_nodes[b])
        return hit

    def _descend(self, cone, k, f):
        """Pieces of the way down ``cone`` from its level ``k`` carrying flow ``f`` there,
        and the flow reaching its level 0."""
        key = (id(cone), k, f.tobytes())
        hit = self._chains.get(key)
        if hit is not None:
            return hit
        pieces = []
        for j in range(k - 1, -1, -1):
            s = self._states[cone[j]].struct
            dkey = (s.piece_key, f.tobytes())
            down = self._down.get(dkey)
            if down is None:
                w = f[s.c] * s.share_down
                down = (self.router._add_piece(s.ldown, w),
                        np.bincount(s.p, w, minlength=len(self._states[cone[j]].nodes)))
                self._down[dkey] = down
            pieces.append(down[0])
            f = down[1]
        hit = self._chains[key] = (pieces, f)
        return hit

    # ------------------------------------------------------------------ capacities
    # The cones split traffic by bandwidth, shared by every destination; routes split it by
    # what each next hop can carry on to the destination, min(bandwidth, its capacity) (the
    # capacity of a node: the sum of its next hops' weights; the last switch's, its link to
    # the destination). The two agree wherever, at every node, those weights are in
    # proportion to the bandwidths (every fabric of one link speed per tier); a pair whose
    # route they do not agree on is left to the search (:mod:`netmodel.collectives.route_search`), which splits by
    # capacity.
    @property
    def one_speed(self) -> bool:
        """Whether every link at a switch has one bandwidth ``B``: then every node of a
        route carries on at least ``B``, each next hop weighs its bandwidth, and the
        cones' split is the capacity split for every pair (no check needed)."""
        hit = self._one_speed
        if hit is None:
            r = self.router
            at = (r._code[r._src] == 1) | (r._code[r._dst] == 1)
            bw = r._route_bw[at]
            hit = self._one_speed = bool(not len(bw) or bw.min() == bw.max())
        return hit

    def _down_caps(self, cone, k):
        """``(ok, caps)``: the capacity towards a GPU of cone ``cone`` (its signature's
        switches at level 0) of each switch of level ``k``, in the order of its state, and
        whether the way down from there splits by bandwidth as by capacity."""
        key = (id(cone), k)
        hit = self._caps.get(key)
        if hit is None:
            if k == 0:
                hit = (True, self._cone_bw[id(cone)])
            else:
                ok, cap = self._down_caps(cone, k - 1)
                s = self._states[cone[k - 1]].struct
                bw = self.router._route_bw[s.lup]
                w = np.minimum(bw, cap[s.p])
                hit = (ok and _proportional(s.c, w, bw),
                       np.bincount(s.c, w, minlength=len(s.upper)))
            self._caps[key] = hit
        return hit

    def caps_id(self, cone, k) -> int:
        """An id of the capacities of level ``k`` of ``cone`` towards its GPU (the same for
        equal switches and capacities), or -1 where the way down does not split by
        bandwidth as by capacity."""
        ck = (id(cone), k, None)
        cid = self._cap_ids.get(ck)
        if cid is None:
            ok, cap = self._down_caps(cone, k)
            if not ok:
                cid = -1
            else:
                key = (self._states[cone[k]].nodes, cap.tobytes())
                cid = self._cap_ids.get(key)
                if cid is None:
                    cid = self._cap_ids[key] = len(self._cap_sets)
                    self._cap_sets.append((key[0], cap))
            self._cap_ids[ck] = cid
        return cid

    def up_ok(self, cone, h: int, cid: int) -> bool:
        """Whether the climb of ``cone`` to its level ``h``, whose switches have the
        capacities ``cid`` (:meth:`caps_id`), splits by bandwidth as by capacity, the GPU's
        own ports included."""
        if cid < 0:
            return False
        key = (id(cone), h, cid)
        hit = self._up_ok.get(key)
        if hit is None:
            nodes, cap = self._cap_sets[cid]
            top = self._states[cone[h]].nodes
            if top != nodes:
                pos = {x: i for i, x in enumerate(nodes)}
                cap = cap[np.array([pos[x] for x in top], dtype=np.int64)]
            hit = True
            for j in range(h - 1, -1, -1):
                s = self._states[cone[j]].struct
                bw = self.router._route_bw[s.lup]
                w = np.minimum(bw, cap[s.c])
                if not _proportional(s.p, w, bw):
                    hit = False
                    break
                cap = np.bincount(s.p, w, minlength=len(self._states[cone[j]].nodes))
            if hit:
                bw = self._cone_bw[id(cone)]
                w = np.minimum(bw, cap)
                hit = _proportional(np.zeros(len(bw), dtype=np.int64), w, bw)
                self._up_cap[key] = float(w.sum())
            self._up_ok[key] = hit
        return hit

    def up_cap(self, cone, h: int, cid: int) -> float:
        """The capacity split's bound on what the GPU of ``cone`` can send on to a GPU
        whose level-``h`` switches have the capacities ``cid``, where :meth:`up_ok` holds:
        the sum over its ports of ``min(bandwidth, the capacity behind it)``. Where paths
        that split merge again (three switch tiers) it counts the merge more than once,
        so the split can carry less (:meth:`TemplatedRoutes._meet
        <netmodel.collectives.route_templates.TemplatedRoutes._meet>` checks)."""
        return self._up_cap[(id(cone), h, cid)]


def _proportional(group: np.ndarray, w: np.ndarray, bw: np.ndarray) -> bool:
    """Whether within each ``group`` the weights ``w`` (each at most its ``bw``) are in
    proportion to ``bw`` (to rounding)."""
    if not len(w) or np.array_equal(w, bw):
        return True
    r = w / bw
    mean = np.bincount(group, r) / np.maximum(np.bincount(group), 1)
    return bool(np.all(np.abs(r - mean[group]) <= 1e-12 * mean[group]))
