"""Routing policies beside the hop-shortest routes, where a GPU pair has both a direct cable
and a wider path through the scale-up switches they share.

A router's routes are hop-shortest (:mod:`netmodel.collectives.routing`): two GPUs joined
by a cable send over it, one hop, even where each also has a port on an NVSwitch they
share that is wider (a Lite group, :func:`topologies.direct.lite_groups`: 37.5 GB/s
cables to each of 3 partners beside a 112.5 GB/s switch port). NCCL's topology search
picks each algorithm's channels by bandwidth, not hops (src/graph/search.cc, paths.cc;
channels of one algorithm may take different paths), so an algorithm is costed under each
of a small fixed set of policies (:data:`ROUTINGS`) and runs under the fastest
(:meth:`~netmodel.collectives.model.FabricCostModel.compiled_variants`):

* ``"shortest"``: the hop-shortest routes, as without this module;
* ``"widest"``: each such pair whose switch path is wider than its cable sends over the
  switch path;
* ``"split"``: each such pair splits its transfer over the cable and the switch path in
  proportion to their capacities (37.5 : 112.5, so 1 : 3, in a Lite group);
* ``"balanced"``: as ``"split"``, but a GPU that sends to (or receives from) ``k`` such
  partners in one step shares its one switch port among them, so each pair sends
  ``S / (S + k C)`` of its bytes over the switch path (``C``: the cable's rate, ``S``:
  the switch path's): the share at which the busiest cable and the port take equal time
  (with ``k`` transfers of ``f`` bytes, ``k s f / S = (1 - s) f / C``); ``"split"``'s
  share where ``k = 1``. In an all-pairs step of a Lite group (``k = 3``) that is 1 : 1,
  not 1 : 3: two-shot's step over the port takes ``(3 / 8) n / S = (n / 8) / C``, against
  ``(9 / 16) n / S`` split by capacity (1.5 times). Costed only for an algorithm with
  such a step (a ring's or a tree's steps have ``k = 1``: ``"split"`` already).

Only the transfers between such pairs move; every other transfer keeps its hop-shortest
route. The pairs are found once per fabric (:func:`route_policies`, kept with its router);
a fabric without any (no GPU-GPU cable, or no GPU with a scale-up switch port at both ends
of one: every shipped real system) has no policy, and its collectives are costed as
before, bit for bit.

>>> from topologies import build
>>> from netmodel.collectives.route_sharing import router_for
>>> [p.name for p in route_policies(router_for(build("lite-groups:base=[single-switch:n=2]")))]
['widest', 'split', 'balanced']
>>> route_policies(router_for(build("single-switch:n=4"))), route_policies(router_for(build("ring:n=4")))
((), ())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.route_types import KIND_GPU, KIND_SWITCH, NoPath
from netmodel.collectives.steps import Pairs

if TYPE_CHECKING:
    from netmodel.collectives.routing import Router

__all__ = ["ROUTINGS", "RoutePolicy", "route_policies"]

#: The routing policies an algorithm is costed under where a fabric has cabled pairs with
#: a switch path (the first, the router's own, everywhere).
ROUTINGS = ("shortest", "widest", "split", "balanced")


@dataclass(frozen=True, eq=False)
class RoutePolicy:
    """One policy other than ``"shortest"`` on one fabric: which directed GPU pairs move
    what share of their transfer from the cable to the switch path.

    ``keys``: the pairs as ``u * n + v`` node numbers (sorted); ``share``: the fraction of
    each pair's bytes sent over the switch path (1 under ``"widest"``; under
    ``"balanced"`` the split share ``S / (C + S)``, from which each step's is worked out);
    ``wide``: the router of the fabric without those pairs' cables (the switch paths);
    ``to_main``: each of ``wide``'s link ids as the fabric router's.
    """

    name: str
    keys: np.ndarray
    share: np.ndarray
    wide: Router
    to_main: np.ndarray

    def _moved(self, router: Router, transfers) -> tuple | None:
        """``(src, dst, frac, share)`` of ``transfers`` as node numbers, with each one's
        switch share (0: it keeps its route), or None where none moves."""
        src, dst, frac = router._node_ids(transfers)
        pos, hit = self._hits(router, src, dst)
        if not hit.any():
            return None
        share = np.where(hit, self.share[pos], 0.0)
        if self.name == "balanced":
            share = np.where(hit, _balanced(share, src, dst, hit, router._n), 0.0)
        return src, dst, frac, share

    def moves(self, router: Router, transfers) -> bool:
        """Whether any of ``transfers`` leaves its hop-shortest route under this policy
        (under ``"balanced"``: with a share other than ``"split"``'s, some GPU sending to
        or receiving from more than one partner of a cable and a switch path)."""
        if self.name != "balanced":
            return self._moved(router, transfers) is not None
        src, dst, _ = router._node_ids(transfers)
        hit = self._hits(router, src, dst)[1]
        return bool(hit.any()) and int(max(np.bincount(src[hit]).max(),
                                           np.bincount(dst[hit]).max())) > 1

    def _hits(self, router: Router, src: np.ndarray, dst: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """Each transfer's row in :attr:`keys` and whether it is one of this policy's
        pairs (none where there are no transfers)."""
        key = src * router._n + dst
        pos = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        return pos, self.keys[pos] == key

    def link_loads(self, router: Router, transfers
                   ) -> tuple[np.ndarray, np.ndarray, float, bool, float]:
        """:meth:`Router.link_loads <netmodel.collectives.route_plans.PlannedRoutes.
        link_loads>` of ``transfers`` under this policy, in ``router``'s link ids: the
        moved pairs' shares over the switch paths, the rest (the pairs' cable shares and
        every other transfer) as the router routes them."""
        moved = self._moved(router, transfers)
        if moved is None:
            return router.link_loads(transfers)
        own, wide = self._split(transfers, moved)
        parts = []
        if len(own):
            parts.append((router.link_loads(own), None))
        parts.append((self.wide.link_loads(wide), self.to_main))
        links = np.concatenate([out[0] if m is None else m[out[0]] for out, m in parts])
        load = np.concatenate([out[1] for out, _ in parts])
        uniq, inv = np.unique(links, return_inverse=True)
        return (uniq, np.bincount(inv, load), max(out[2] for out, _ in parts),
                any(out[3] for out, _ in parts), max(out[4] for out, _ in parts))

    def step_latencies(self, router: Router, transfers) -> tuple[float, bool, float] | None:
        """``(latency, scaleout, latency_up)`` of :meth:`link_loads` without its loads
        (:meth:`~netmodel.collectives.route_plans.PlannedRoutes.step_latencies` of each
        part: the same numbers), None where a part is not routed in one plan."""
        moved = self._moved(router, transfers)
        if moved is None:
            return router.step_latencies(transfers)
        own, wide = self._split(transfers, moved)
        parts = ([router.step_latencies(own)] if len(own) else []) \
            + [self.wide.step_latencies(wide)]
        if any(p is None for p in parts):
            return None
        return (max(p[0] for p in parts), any(p[1] for p in parts),
                max(p[2] for p in parts))

    @staticmethod
    def _split(transfers, moved: tuple) -> tuple:
        """``(own, wide)``: of ``transfers`` (:meth:`_moved`'s ``moved``), what stays on
        the router's routes and what goes over the switch paths, with their fractions."""
        src, dst, frac, share = moved
        stay = frac * (1.0 - share)
        go = share > 0
        if isinstance(transfers, Pairs):
            keep = stay > 0
            own = Pairs(transfers.nodes, transfers.src[keep], transfers.dst[keep], stay[keep],
                        p2p=transfers.p2p)
            wide = Pairs(transfers.nodes, transfers.src[go], transfers.dst[go],
                         (frac * share)[go], p2p=transfers.p2p)
        else:
            items = list(transfers)
            own = tuple((a, b, float(f)) for (a, b, _), f in zip(items, stay, strict=True)
                        if f > 0)
            wide = tuple((a, b, float(f)) for (a, b, _), f, g
                         in zip(items, frac * share, go, strict=True) if g)
        return own, wide


def _balanced(split: np.ndarray, src: np.ndarray, dst: np.ndarray, hit: np.ndarray, n: int
              ) -> np.ndarray:
    """Each transfer's switch share under ``"balanced"``: ``S / (S + k C)`` from its split
    share ``q = S / (C + S)`` (so ``S / C = q / (1 - q)``), ``k`` the most transfers of
    such pairs that leave its source or reach its destination in the step (``hit``)."""
    ks = np.bincount(src[hit], minlength=n)
    kd = np.bincount(dst[hit], minlength=n)
    k = np.maximum(np.maximum(ks[src], kd[dst]), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = split / (1.0 - split)
        return np.where(split > 0, r / (r + k), 0.0)


def route_policies(router: Router) -> tuple[RoutePolicy, ...]:
    """The policies other than ``"shortest"`` on ``router``'s fabric (:data:`ROUTINGS`),
    found once and kept with the router (routers sharing one shape share them: the shares
    read only bandwidth ratios); ``()`` where no GPU pair has both a cable and a path
    through scale-up switches only."""
    hit = router.__dict__.get("_route_policies")
    if hit is None:
        hit = router.__dict__["_route_policies"] = _find(router)
    return hit


def _find(router: Router) -> tuple[RoutePolicy, ...]:
    code, src, dst = router._code, router._src, router._dst
    cable = (code[src] == KIND_GPU) & (code[dst] == KIND_GPU)
    if not cable.any():
        return ()
    up = (code[src] == KIND_GPU) & (code[dst] == KIND_SWITCH) & ~router.scaleout
    ported = np.zeros(router._n, dtype=bool)
    ported[src[up]] = True
    ids = np.flatnonzero(cable & ported[src] & ported[dst])
    if not len(ids):
        return ()
    from netmodel.collectives.route_sharing import router_for

    nodes = router._nodes
    wide_graph = router.graph.copy()
    wide_graph.remove_edges_from({(nodes[src[i]], nodes[dst[i]]) for i in ids})
    wide = router_for(wide_graph, pxn=router._pxn_on)
    n = router._n
    # wide's links as the fabric's (the same nodes, numbered alike): by (source, destination)
    wkeys = wide._src * n + wide._dst
    to_main = router._order[np.searchsorted(router._keys, wkeys)]
    bw = router.bandwidth
    # a switched route between two GPUs depends only on the switches each is wired to,
    # with those cables (the router's signatures): one route per pair of port sets
    to_sw = np.flatnonzero((code[src] == KIND_GPU) & (code[dst] == KIND_SWITCH))
    ports: dict[int, list] = {}
    for i, w, b in zip(src[to_sw].tolist(), dst[to_sw].tolist(), bw[to_sw].tolist(),
                       strict=True):
        ports.setdefault(i, []).append((w, b))
    sig = {k: tuple(sorted(x)) for k, x in ports.items()}
    # each cabled pair by its pair of signatures (numbered), one route for each distinct one
    number: dict = {}
    sig_id = np.full(n, -1, dtype=np.int64)
    for k, x in sig.items():
        sig_id[k] = number.setdefault(x, len(number))
    u, v = src[ids], dst[ids]
    pair_code = sig_id[u] * len(number) + sig_id[v]
    first, inv = np.unique(pair_code, return_index=True, return_inverse=True)[1:]
    # their switch routes learned together (one pass over the pairs' signatures, as
    # Router.learn_routes gives the routes route finds one by one), then read one by one
    wide.learn_routes([nodes[i] for i in u[first].tolist()],
                      [nodes[i] for i in v[first].tolist()])
    rates = np.array([_switch_rate(wide, code, bw, to_main, nodes, int(u[j]), int(v[j]))
                      for j in first.tolist()], dtype=float)   # None -> nan
    rate = rates[inv]
    ok = ~np.isnan(rate)
    if not ok.any():
        return ()
    keys_a = u[ok].astype(np.int64) * n + v[ok]
    order = np.argsort(keys_a)
    keys_a = keys_a[order]
    c, s = bw[ids][ok][order], rate[ok][order]
    out = []
    wider = s > c
    if wider.any():
        out.append(RoutePolicy("widest", keys_a[wider], np.ones(int(wider.sum())), wide,
                               to_main))
    out.append(RoutePolicy("split", keys_a, s / (c + s), wide, to_main))
    out.append(RoutePolicy("balanced", keys_a, s / (c + s), wide, to_main))
    return tuple(out)


def _switch_rate(wide: Router, code: np.ndarray, bw: np.ndarray, to_main: np.ndarray,
                 nodes: list, u: int, v: int) -> float | None:
    """The rate of ``u``'s transfer to ``v`` alone over ``wide``'s route (bytes/s, the
    fabric's bandwidths), or None where that route crosses a scale-out link or a node
    other than a switch (no path through scale-up switches only)."""
    try:
        r = wide.route(nodes[u], nodes[v])
    except NoPath:
        return None
    if r is None or r.scaleout or not len(r.links):
        return None
    inner = np.concatenate([wide._src[r.links], wide._dst[r.links]])
    inner = inner[(inner != u) & (inner != v)]
    if (code[inner] != KIND_SWITCH).any():
        return None
    return 1.0 / float(np.max(r.weights / bw[to_main[r.links]]))
