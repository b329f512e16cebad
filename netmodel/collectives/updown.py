"""Fast valley-free (up/down) ECMP routes for tiered switch fabrics.

In a fabric whose switch-to-switch links all join adjacent tiers (leaf-spine, fat trees,
rail-optimized fabrics), a shortest path between two GPUs climbs from the switches of the
source to the lowest tier where the two "up-cones" meet, then descends. The cone of a set
of switches (every node reachable by climbing ``h`` tiers, with the ECMP share of traffic
reaching each) depends only on where a GPU is wired, so it is computed once per attachment
and shared by every GPU wired the same way; a route is one cone climbed and another
descended, a few numpy operations over the cones' arrays.

The fast path is taken only where it is exact: both endpoints' switches on one tier, the two
cones equal where they first meet (so every upward path reaches the meeting tier and ECMP
uses them all), and no dead end below it. Anything else returns None and the caller falls
back to the general bidirectional search.
"""

from __future__ import annotations

import numpy as np

__all__ = ["UpDown"]


class _Level:
    __slots__ = ("arrive", "dead", "depart", "flow", "nodes", "pos", "up")

    def __init__(self, nodes, flow, arrive, depart):
        self.nodes = nodes
        self.pos = {n: i for i, n in enumerate(nodes)}
        self.flow = flow
        self.arrive = arrive
        self.depart = depart
        self.up = None  # edges to the next level: (parent, child, link up, link down, share up, share down)
        self.dead = False


class UpDown:
    """Cone-based routing for one :class:`~netmodel.collectives.routing.Router`."""

    def __init__(self, router):
        self.router = router
        self._cones: dict = {}
        self._templates: dict = {}
        self._alive: dict = {}

    # ------------------------------------------------------------------ cones
    def _live(self, sig):
        """Drop attachments that lead nowhere: switches whose only neighbours are GPUs (a
        scale-up switch seen from outside its domain). Without a switch shared by both ends
        no shortest path crosses them, and ECMP at the GPU uses only the others."""
        live = self._alive
        kind, adj = self.router.kind, self.router._adj
        for x, _, _ in sig:
            if x not in live:
                live[x] = any(kind.get(y) == "switch" for y in adj[x])
        return tuple(t for t in sig if live[t[0]])

    def _cone(self, sig):
        cone = self._cones.get(sig)
        if cone is None:
            tier = self.router.tier
            tiers = {tier[a] for a, _, _ in sig}
            if len(tiers) != 1:
                cone = False
            else:
                nodes = [a for a, _, _ in sig]
                bw = np.array([b for _, b, _ in sig], dtype=float)
                lat = np.array([la for _, _, la in sig], dtype=float)
                swl = np.array([self.router._switch_latency.get(a, 0.0) for a in nodes])
                cone = ([_Level(nodes, bw / bw.sum(), lat, swl + lat)], tiers.pop())
            self._cones[sig] = cone
        return cone

    def _level(self, cone, h):
        levels = cone[0]
        while len(levels) <= h:
            last = levels[-1]
            if not last.nodes:
                return None
            self._extend(levels, cone[1] + len(levels) - 1)
        lv = levels[h]
        return lv if lv.nodes else None

    def _extend(self, levels, tier_of_last):
        r = self.router
        adj, ids, tier = r._adj, r._id, r.tier
        swl = r._switch_latency
        last = levels[-1]
        parents, children, lup, ldown, bws = [], [], [], [], []
        nxt: dict = {}
        for i, x in enumerate(last.nodes):
            ups = [y for y in adj[x] if tier.get(y, -1) == tier_of_last + 1]
            if not ups:
                last.dead = True
            for y in ups:
                j = nxt.setdefault(y, len(nxt))
                parents.append(i)
                children.append(j)
                lup.append(ids[(x, y)])
                ldown.append(ids[(y, x)])
                bws.append(adj[x][y]["bandwidth"])
        nodes = list(nxt)
        p = np.array(parents, dtype=np.int64)
        c = np.array(children, dtype=np.int64)
        bw = np.array(bws, dtype=float)
        lup_a = np.array(lup, dtype=np.int64)
        lat = r.latency[lup_a] if len(lup_a) else np.zeros(0)
        share_up = bw / np.bincount(p, bw, minlength=len(last.nodes))[p] if len(p) else bw
        share_down = bw / np.bincount(c, bw, minlength=len(nodes))[c] if len(c) else bw
        flow = np.bincount(c, last.flow[p] * share_up, minlength=len(nodes))
        sw_last = np.array([swl.get(x, 0.0) for x in last.nodes])
        arrive = np.zeros(len(nodes))
        np.maximum.at(arrive, c, last.arrive[p] + sw_last[p] + lat)
        depart = np.zeros(len(nodes))
        np.maximum.at(depart, c, lat + last.depart[p])
        depart += np.array([swl.get(y, 0.0) for y in nodes])
        last.up = (p, c, lup_a, np.array(ldown, dtype=np.int64), share_up, share_down)
        levels.append(_Level(nodes, flow, arrive, depart))

    # ------------------------------------------------------------------ routes
    def template(self, a_sig, b_sig):
        """A route template (see Router) between GPUs wired as ``a_sig`` and ``b_sig``, or
        None when the fast path does not apply."""
        if not self.router.tiered:
            return None
        if {a for a, _, _ in a_sig} & {b for b, _, _ in b_sig}:
            return None  # a shared switch: a two-hop route, cheap to search
        a_sig, b_sig = self._live(a_sig), self._live(b_sig)
        if not a_sig or not b_sig:
            return None
        key = (a_sig, b_sig)
        if key not in self._templates:
            self._templates[key] = self._template(a_sig, b_sig)
        return self._templates[key]

    def _template(self, a_sig, b_sig):
        ca, cb = self._cone(a_sig), self._cone(b_sig)
        if not ca or not cb:
            return None
        ta, tb = ca[1], cb[1]
        top = max(self.router.tier.values(), default=0)
        for t in range(max(ta, tb), top + 1):
            h, k = t - ta, t - tb
            lc, ld = self._level(ca, h), self._level(cb, k)
            if lc is None or ld is None:
                return None
            if any(ca[0][i].dead for i in range(h)) or any(cb[0][i].dead for i in range(k)):
                return None
            common = lc.pos.keys() & ld.pos.keys()
            if not common:
                continue
            if len(common) != len(lc.nodes) or len(common) != len(ld.nodes):
                return None
            return self._build(ca[0], cb[0], h, k, a_sig, b_sig)
        return None

    def _build(self, up, down, h, k, a_sig, b_sig):
        r = self.router
        links, weights = [], []
        for j in range(h):
            p, _, lup, _, share_up, _ = up[j].up
            links.append(lup)
            weights.append(up[j].flow[p] * share_up)
        top_c, top_d = up[h], down[k]
        perm = np.array([top_d.pos[n] for n in top_c.nodes], dtype=np.int64)
        f = np.empty(len(top_d.nodes))
        f[perm] = top_c.flow
        latency = float(np.max(top_c.arrive + top_d.depart[perm]))
        for j in range(k - 1, -1, -1):
            p, c, _, ldown, _, share_down = down[j].up
            w = f[c] * share_down
            links.append(ldown)
            weights.append(w)
            f = np.bincount(p, w, minlength=len(down[j].nodes))
        first = tuple((a, float(s)) for a, s in zip(up[0].nodes, up[0].flow, strict=True))
        last = tuple((b, float(s)) for b, s in zip(down[0].nodes, f, strict=True))
        ml = np.concatenate(links) if links else np.zeros(0, dtype=np.int64)
        mw = np.concatenate(weights) if weights else np.zeros(0)
        tier = r.tier
        scaleout = bool(r.scaleout[ml].any()) or tier[a_sig[0][0]] >= 1 or tier[b_sig[0][0]] >= 1
        return first, last, ml, mw, latency, 2 + h + k, scaleout
