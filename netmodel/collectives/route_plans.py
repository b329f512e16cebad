"""Many transfers routed at once: a step's transfers into a :class:`Plan`, its link loads,
and the plans and loads kept for steps with the same pairs.

Its one job is :meth:`PlannedRoutes.plan` (and :meth:`PlannedRoutes.plan_nodes` on node
numbers): the transfers a template routes through
:class:`~netmodel.collectives.route_bulk.BulkRoutes` (or, for a few, plain loops over the
same caches, :meth:`PlannedRoutes._plan_small`), the others from a table of routes learned
pair by pair (:meth:`PlannedRoutes._route_ids`: a node to itself and direct neighbours with
numpy, the rest from :class:`~netmodel.collectives.route_search.SearchedRoutes`); and
:meth:`PlannedRoutes.loads` and :meth:`PlannedRoutes.link_loads`, the bytes per byte of
``n`` each directed link carries (a step of more than 2^19 transfers in parts,
:meth:`~netmodel.collectives.route_bulk.BulkRoutes._link_loads_in_parts`, the same to the
last bit). :class:`PlannedRoutes` is a mixin of
:class:`~netmodel.collectives.routing.Router`; a large batch of searched routes is sampled
and its work estimated before it is routed by
:class:`~netmodel.collectives.route_sampling.SampledRoutes`, mixed in here, and NCCL's PXN
(which GPU's NIC a send/recv transfer leaves through, and the plan of its two legs) is
:class:`~netmodel.collectives.route_pxn.PxnRoutes`, mixed in too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from netmodel.collectives.route_bulk import _IN_PARTS, add_template
from netmodel.collectives.route_joint import JOINT_TRANSFERS, joint_loads
from netmodel.collectives.route_pxn import PxnRoutes
from netmodel.collectives.route_sampling import SampledRoutes
from netmodel.collectives.route_types import (
    KIND_GPU,
    KIND_SWITCH,
    PLAN_FIELDS,
    NoPath,
    Plan,
)
from netmodel.collectives.steps import Pairs

if TYPE_CHECKING:
    #: Transfers ``(src, dst, fraction of n)``: a sequence of triples, or :class:`Pairs`.
    Transfers = Pairs | Sequence[tuple[Hashable, Hashable, float]]
    #: What :meth:`Router.loads` returns: links, coefficients, latency, scale-out.
    Loads = tuple[np.ndarray, np.ndarray, float, bool]

__all__ = ["PlannedRoutes"]

#: From this many pairs routed on their own at once, the walks over the kept shortest paths
#: are done together with numpy (:meth:`Router._spread_many`); fewer, one by one (each
#: level of the numpy walk costs a few tens of numpy calls, whatever the pairs), but on a
#: torus past ``DAG_NODES``, whose pairs the one-by-one search walks breadth first in Python.
_WALK_MANY = 64
#: The most bytes of routed plans a router keeps (:meth:`Router._keep_plan`), 64 MiB: 256
#: plans of every instance's pairwise all-to-all step on 16,384 GPUs at once (1.6 MB each)
#: plus a direct step's (389 MB) held 0.8 GB that ``compare --instances all`` on a 16k
#: fabric never read again.
_PLAN_BYTES = 1 << 26



def _digest(a: np.ndarray) -> bytes:
    """A 32-byte digest of the array ``a``'s bytes, read in place: a plan's key names its
    transfers by it, not by copies of them held while it is made (two of 134 MB each for
    a direct step of 4,096 GPUs)."""
    return hashlib.blake2b(np.ascontiguousarray(a).data, digest_size=32).digest()


def _plan_bytes(kept: tuple) -> int:
    """Bytes of the arrays of a kept plan (:meth:`Router._keep_plan`)."""
    return sum(x.nbytes for x in kept if isinstance(x, np.ndarray))


#: The most link entries :meth:`Router.link_loads` keeps per shape (16 bytes each).
_KEPT_LOADS = 1 << 20



class PlannedRoutes(PxnRoutes, SampledRoutes):
    """Many transfers of :class:`~netmodel.collectives.routing.Router` routed at once into
    plans and link loads (a mixin: the methods stay on ``Router``).

    Reads the router's index (``_nid``, ``_nid_checked``, ``_nodes``, ``_n``, ``_code``,
    ``_adj``, ``_gidx``, ``_lids``, ``latency``, ``scaleout``, ``n_links``, ``_shape``), its
    templates (:class:`~netmodel.collectives.route_bulk.BulkRoutes`,
    :class:`~netmodel.collectives.route_templates.TemplatedRoutes`) and searches
    (:class:`~netmodel.collectives.route_search.SearchedRoutes`), and keeps there the plans
    (``_plans``, ``_plan_bytes``), the link loads (``_loads_kept``, ``_loads_size``) and the
    table of routes not made from templates (``_rt_*``).
    """

    def _node_ids(self, transfers: Transfers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Source and destination node numbers and fractions of ``transfers``."""
        if isinstance(transfers, Pairs):
            g = self._member_ids(transfers.nodes)
            return g[transfers.src], g[transfers.dst], transfers.fractions()
        if not len(transfers):
            z = np.zeros(0, dtype=np.int64)
            return z, z, np.zeros(0)
        s, d, f = zip(*transfers, strict=True)
        src = np.fromiter(map(self._nid_checked, s), np.int64, count=len(s))
        dst = np.fromiter(map(self._nid_checked, d), np.int64, count=len(d))
        return src, dst, np.array(f, dtype=float)

    def _member_ids(self, nodes: tuple) -> np.ndarray:
        """Node numbers of a :class:`Pairs`' ``nodes`` (kept for the last tuple asked)."""
        hit = self._group_ids
        if hit is None or hit[0] is not nodes:
            g = np.fromiter(map(self._nid_checked, nodes), np.int64, count=len(nodes))
            hit = self._group_ids = (nodes, g)
        return hit[1]

    def plan(self, transfers: Transfers) -> Plan:
        """Route many transfers ``(src, dst, fraction)`` (a sequence, or :class:`Pairs`).

        Raises :class:`NoPath` for a transfer whose ends are not connected (the first
        such in order).
        """
        src, dst, frac = self._node_ids(transfers)
        key, pxn = None, self.pxn_applies(transfers)
        if isinstance(transfers, Pairs):
            key = (transfers.nodes, _digest(transfers.src), _digest(transfers.dst), pxn)
        return self.plan_nodes(src, dst, frac, key, pxn=pxn)

    def plan_nodes(self, src: np.ndarray, dst: np.ndarray, frac: np.ndarray,
                   key: Hashable | None = None, gid: np.ndarray | None = None,
                   pxn: bool = False) -> Plan:
        """:meth:`plan` of transfers given as node numbers (:meth:`node_numbers`);
        ``key``: a hashable name of the pattern ``(src, dst)`` (with ``gid`` and ``pxn``)
        to keep its plan under; ``gid``: the group (communicator) of each transfer, None:
        one. With ``pxn`` (NCCL's send/recv, :attr:`~netmodel.collectives.steps.Pairs.p2p`)
        a transfer NCCL's PXN sends through another GPU's NIC
        (:meth:`~netmodel.collectives.route_pxn.PxnRoutes.pxn_proxies`) is
        routed as its two legs, over the scale-up network to that GPU and on from it."""
        if key is not None:
            hit = self._plans.get(key)
            if hit is not None:
                return Plan(frac, *hit[1:])
        via = self.pxn_proxies(src, dst, gid) if pxn else None
        if via is not None:
            plan = self._plan_pxn(src, dst, frac, via, once=gid is None)
            if key is not None:
                self._keep_plan(key, plan)
            return plan
        return self._plan_direct(src, dst, frac, key)

    def _plan_direct(self, src: np.ndarray, dst: np.ndarray, frac: np.ndarray,
                     key: Hashable | None) -> Plan:
        """:meth:`plan_nodes` with every transfer sent through its own GPU's ports."""
        if len(src) <= 32:
            plan = self._plan_small(src, dst, frac)
            if key is not None:
                self._keep_plan(key, plan)
            return plan
        self._sampled = self._sample_before_describing(src, dst)
        try:
            d = self._describe(src, dst)
            latency, scaleout = d["latency"], d["scaleout"]
            own = self._routed(src, dst, np.flatnonzero(d["kind"] < 0), latency, scaleout)
        finally:
            self._sampled = False
        on = np.flatnonzero(d["kind"] >= 0)
        hi, hl, hw, pi, po = self._hops_and_pieces(src, dst, d, on)
        plan = Plan(frac, d["kind"], *own, hi, hl, hw, pi, po, latency, scaleout)
        if key is not None:
            self._keep_plan(key, plan)
        return plan

    def _keep_plan(self, key, plan: Plan) -> None:
        """Keep ``plan`` for steps with the same pairs (halving and doubling share them):
        the last 256, in at most :data:`_PLAN_BYTES` (the oldest dropped; a plan larger
        than that alone, as a direct all-to-all of 64 groups of 256 GPUs at once, 389 MB,
        is not kept: a router makes it again if asked)."""
        kept = (None, *map(plan.__getattribute__, PLAN_FIELDS))
        size = _plan_bytes(kept)
        if size > _PLAN_BYTES:
            return
        self.drop_plans([key])
        while self._plans and (len(self._plans) >= 256
                               or self._plan_bytes + size > _PLAN_BYTES):
            self.drop_plans([next(iter(self._plans))])
        self._plans[key] = kept
        self._plan_bytes += size

    def drop_plans(self, keys: Iterable[Hashable]) -> None:
        """Forget the plans kept under ``keys`` (those not kept are skipped)."""
        for key in keys:
            hit = self._plans.pop(key, None)
            if hit is not None:
                self._plan_bytes -= _plan_bytes(hit)

    def _routed(self, src: np.ndarray, dst: np.ndarray, ri: np.ndarray,
                latency: np.ndarray, scaleout: np.ndarray) -> tuple:
        """Routes of transfers ``ri`` (routed on their own; ascending): ``(ri, pointer,
        links, weights, hops)`` as :class:`Plan` keeps them; their latency and scale-out
        written into ``latency`` and ``scaleout``. Raises :class:`NoPath` for the first
        whose ends are not connected."""
        if not len(ri):
            return ri, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), \
                np.zeros(0, dtype=np.int64)
        a, b = src[ri], dst[ri]
        # a direct neighbour's route is its link, all of it (what _learn_routes keeps for
        # it), taken here without an entry of its own in the table: a direct all-gather
        # over a full mesh of 4,000 GPUs kept 16 million, some 7 GB with their dict keys
        lid = self._lids(a, b)
        lid[a == b] = -1
        near = lid >= 0
        far = np.flatnonzero(~near)
        ln = lid[near]
        del lid
        sizes = near.astype(np.int64)
        hops = sizes.copy()
        latency[ri[near]] = self.latency[ln]
        scaleout[ri[near]] = self.scaleout[ln]
        if len(far):
            ids = self._route_ids(a[far], b[far])
            bad = np.flatnonzero(ids < 0)
            if len(bad):
                raise NoPath(self._nodes[a[far[bad[0]]]], self._nodes[b[far[bad[0]]]])
            latency[ri[far]] = self._rt_latency.a[ids]
            scaleout[ri[far]] = self._rt_scaleout.a[ids]
            ptr = self._rt_ptr.a
            start = ptr[ids]
            sizes[far] = ptr[ids + 1] - start
            hops[far] = self._rt_hops.a[ids]
        out = np.zeros(len(ri) + 1, dtype=np.int64)
        np.cumsum(sizes, out=out[1:])
        if not len(far):   # every transfer one link
            return ri, out, ln, np.ones(len(ln)), hops
        links = np.empty(out[-1], dtype=np.int64)
        weights = np.empty(out[-1])
        at = out[:-1][near]
        links[at], weights[at] = ln, 1.0
        fs = sizes[far]
        first = np.zeros(len(far) + 1, dtype=np.int64)
        np.cumsum(fs, out=first[1:])
        off = np.arange(first[-1]) - np.repeat(first[:-1], fs)
        to = np.repeat(out[:-1][far], fs) + off
        pos = np.repeat(start, fs) + off
        links[to], weights[to] = self._rt_links.a[pos], self._rt_weights.a[pos]
        return ri, out, links, weights, hops

    def _route_ids(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Entry ids of the routes ``src[i] -> dst[i]`` (node numbers) in the router's
        table of routes not made from templates (-1: no path), routing the pairs not seen
        before."""
        key = (src * self._n + dst).tolist()
        known = self._rt_id
        ids = np.fromiter(map(known.get, key, repeat(-2)), np.int64, count=len(key))
        miss = np.flatnonzero(ids == -2)
        if len(miss):
            self._learn_routes(src[miss], dst[miss])
            ids[miss] = np.fromiter(map(known.__getitem__, [key[i] for i in miss.tolist()]),
                                    np.int64, count=len(miss))
        return ids

    def _learn_routes(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Route the pairs ``src[i] -> dst[i]`` (node numbers) into the table of
        :meth:`_route_ids`, in order of first appearance: a node to itself (no links) and
        direct neighbours (one link) with numpy, the others by :meth:`_resolve`."""
        n = self._n
        key = src * n + dst
        _, first = np.unique(key, return_index=True)
        first.sort()
        src, dst, key = src[first], dst[first], key[first]
        lid = self._lids(src, dst)
        lid[src == dst] = -1
        quick = np.flatnonzero((src == dst) | (lid >= 0))
        slow = np.flatnonzero((src != dst) & (lid < 0))
        base = len(self._rt_hops.a)
        known = self._rt_id
        if len(quick):  # itself: no links; a direct neighbour: one link, all of it
            ql = lid[quick]
            one = ql >= 0
            ql = ql[one]
            sizes = one.astype(np.int64)
            self._rt_ptr.extend(self._rt_ptr.a[-1] + np.cumsum(sizes))
            self._rt_links.extend(ql)
            self._rt_weights.extend(np.ones(len(ql)))
            lat = np.zeros(len(quick))
            lat[one] = self.latency[ql]
            so = np.zeros(len(quick), dtype=bool)
            so[one] = self.scaleout[ql]
            self._rt_latency.extend(lat)
            self._rt_hops.extend(sizes)
            self._rt_scaleout.extend(so)
            known.update(zip(key[quick].tolist(), range(base, base + len(quick)), strict=True))
            base += len(quick)
        if len(slow) > self._sample_from() and not self._sampled:
            slow = self._sample_first(key, slow)
            base = len(self._rt_hops.a)
        if len(slow) and (len(slow) >= _WALK_MANY or not self._dag_sized) \
                and (self._dag_sized or self._torus_steps() is not None):
            # switches and GPUs (GPUs may forward): from the kept shortest paths towards
            # each destination, or on a torus of one bandwidth of any size walked from node
            # 0's (DagRoutes._spread_rows_torus), every pair at once; on a torus past
            # DAG_NODES even a few pairs (one by one, _search's breadth-first search in
            # Python walked most of the fabric for each far pair: 8 GPUs placed at random
            # on a 50x50x50 torus, minutes for one all-reduce)
            code = self._code
            transit = (code[src[slow]] <= KIND_SWITCH) & (code[dst[slow]] <= KIND_SWITCH)
            base = self._learn_from_dags(src[slow[transit]], dst[slow[transit]],
                                         key[slow[transit]], base)
            slow = slow[~transit]
        if len(slow):
            nodes = self._nodes
            got = [self._resolve(nodes[a], nodes[b])
                   for a, b in zip(src[slow].tolist(), dst[slow].tolist(), strict=True)]
            ok = [r for r in got if r is not None]
            ids = []
            for r in got:
                ids.append(-1 if r is None else base)
                base += r is not None
            known.update(zip(key[slow].tolist(), ids, strict=True))
            if ok:
                sizes = np.fromiter((len(r.links) for r in ok), np.int64, count=len(ok))
                self._rt_ptr.extend(self._rt_ptr.a[-1] + np.cumsum(sizes))
                self._rt_links.extend(np.concatenate([r.links for r in ok]))
                self._rt_weights.extend(np.concatenate([r.weights for r in ok]))
                self._rt_latency.extend(np.array([r.latency for r in ok], dtype=float))
                self._rt_hops.extend(np.array([r.hops for r in ok], dtype=np.int64))
                self._rt_scaleout.extend(np.array([r.scaleout for r in ok], dtype=bool))

    def _plan_small(self, src: np.ndarray, dst: np.ndarray, frac: np.ndarray) -> Plan:
        """:meth:`plan_nodes` of a few transfers with plain loops (numpy calls cost more
        than the work here); the same routes, from the same caches."""
        sl, dl = src.tolist(), dst.tolist()
        T = len(sl)
        if self._code_list is None:
            self._code_list = self._code.tolist()
        code, nodes, adj = self._code_list, self._nodes, self._adj
        gi = self._gidx
        cand = [i for i in range(T) if sl[i] != dl[i] and code[sl[i]] == KIND_GPU
                and code[dl[i]] == KIND_GPU and nodes[dl[i]] not in adj[nodes[sl[i]]]]
        kind = [-1] * T
        latency = [0.0] * T
        scaleout = [False] * T
        hi, hl, hw, pi, po = [], [], [], [], []
        out = (hi, hl, hw, pi, po)
        if cand:
            gs = gi[[sl[i] for i in cand]]
            gd = gi[[dl[i] for i in cand]]
            self._ensure_sigs(np.concatenate([gs, gd]))
            keys = ((self._gpu_sig[gs] << 32) | self._gpu_sig[gd]).tolist()
            known = self._pair_rows
            if any(k not in known for k in keys):
                self._learn_pairs(np.array([k for k in keys if k not in known], dtype=np.int64))
            up, down = self._port_rows(gs), self._port_rows(gd, down=True)
            specs, lists = self._spec_py, self._list_py
            for i, k, u, dn in zip(cand, keys, up, down, strict=True):
                kd, h, tl, l1, l2, lat, _, so = known[k]
                if kd < 0:
                    continue
                kind[i], latency[i], scaleout[i] = 1, lat, so
                add_template(out, specs[h], specs[tl], lists[l1] + lists[l2], i, u, dn)
        lat = np.array(latency)
        so = np.array(scaleout, dtype=bool)
        own = self._routed(src, dst, np.array([i for i in range(T) if kind[i] < 0],
                                              dtype=np.int64), lat, so)
        return Plan(frac, np.array(kind, dtype=np.int64), *own, np.array(hi, dtype=np.int64),
                    np.array(hl, dtype=np.int64), np.array(hw, dtype=float),
                    np.array(pi, dtype=np.int64), np.array(po, dtype=np.int64), lat, so)

    def link_loads(self, transfers: Transfers
                   ) -> tuple[np.ndarray, np.ndarray, float, bool, float]:
        """:meth:`loads` with ``split``, each link once: ``(links, load, latency, scaleout,
        latency_up)``, links ascending and the bytes per byte of ``n`` each carries
        (nonzero). Kept per pattern of transfers for fabrics whose routes
        :func:`~netmodel.collectives.route_sharing.router_for` shares (at most ``_KEPT_LOADS`` link entries in all, the oldest
        dropped first), so that fabrics of one shape route a step once. A large step of
        :class:`Pairs` is routed in parts where that gives the same loads
        (:meth:`~netmodel.collectives.route_bulk.BulkRoutes._link_loads_in_parts`).

        >>> import networkx as nx
        >>> from netmodel.collectives.routing import Router
        >>> g = nx.Graph(name="star", spec="", gpus=2)
        >>> g.add_node("sw", kind="switch", tier=0, radix=2, latency=1e-7,
        ...            in_network_reduction=False)
        >>> for i in range(2):
        ...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        ...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=1e-8, medium="copper",
        ...                lanes=1)
        >>> links, load, *_ = Router(g).link_loads([("gpu0", "gpu1", 0.5),
        ...                                         ("gpu1", "gpu0", 0.5)])
        >>> links.tolist(), load.tolist()
        ([0, 1, 2, 3], [0.5, 0.5, 0.5, 0.5])
        >>> Router(g).link_loads((("gpu0", "gpu1", 1.0),))[1].tolist()  # a tuple: kept
        [1.0, 1.0]
        """
        kept = self._loads_kept if self._shape is not None else None
        name = (transfers, "pxn") if self.pxn_applies(transfers) else transfers
        if kept is not None:
            try:
                hit = kept.get(name)
            except TypeError:  # unhashable transfers (a list): routed, not kept
                hit = kept = None
            if hit is not None:
                return hit
        out = self._link_loads_in_parts(transfers) if isinstance(transfers, Pairs) else None
        if out is None:
            out = self._link_loads_whole(transfers)
        if kept is not None:
            uniq, load = out[:2]
            uniq.flags.writeable = load.flags.writeable = False
            kept[name] = out
            self._loads_size += len(uniq) + 1
            while self._loads_size > _KEPT_LOADS:
                self._loads_size -= len(kept.pop(next(iter(kept)))[0]) + 1
        return out

    def _link_loads_whole(self, transfers: Transfers
                          ) -> tuple[np.ndarray, np.ndarray, float, bool, float]:
        """:meth:`link_loads` of ``transfers`` routed in one plan (not kept)."""
        pl = self.plan(transfers)
        links, coef, latency, scaleout, latency_up = self._plan_loads(pl, True)
        if len(links) > 4096:
            load = np.bincount(links, coef, minlength=self.n_links)
            uniq = np.flatnonzero(load)
            load = load[uniq]
        elif len(links):
            uniq, inv = np.unique(links, return_inverse=True)
            load = np.bincount(inv, coef)
        else:
            uniq, load = links, coef
        if len(pl.frac) <= JOINT_TRANSFERS and not self.pxn_applies(transfers):
            src, dst, frac = self._node_ids(transfers)
            joint = joint_loads(self, src, dst, frac, pl, uniq, load)
            if joint is not None:
                uniq, load = joint
        return uniq, load, latency, scaleout, latency_up

    @overload
    def loads(self, transfers: Transfers, split: Literal[False] = False) -> Loads: ...

    @overload
    def loads(self, transfers: Transfers, split: Literal[True]
              ) -> tuple[np.ndarray, np.ndarray, float, bool, float]: ...

    def loads(self, transfers: Transfers, split: bool = False
              ) -> Loads | tuple[np.ndarray, np.ndarray, float, bool, float]:
        """Route many transfers ``(src, dst, fraction)`` at once (a sequence, or
        :class:`~netmodel.collectives.steps.Pairs`).

        Returns ``(links, coefficients, latency, scaleout)``: directed link ids and the
        bytes per byte of ``n`` each carries (a link may appear more than once: sum them),
        the longest route latency and whether any route crosses the scale-out network;
        with ``split``, also the longest route latency among the transfers that stay on the
        scale-up network (the longest of all if none does).
        Raises :class:`NoPath` for a transfer whose ends are not connected. Transfers whose
        routes share pieces (GPU pairs on the same switches, leaves of one pod) share them:
        each piece appears once, scaled by the traffic through it.
        """
        return self._plan_loads(self.plan(transfers), split)

    def _plan_loads(self, pl: Plan, split: bool
                    ) -> Loads | tuple[np.ndarray, np.ndarray, float, bool, float]:
        """:meth:`loads` of a routed :class:`Plan`."""
        parts_l, parts_w = [], []
        if len(pl.routed):  # every route's weights times its fraction, in one product
            parts_l.append(pl.route_links)
            parts_w.append(pl.route_weights * np.repeat(pl.frac[pl.routed],
                                                         np.diff(pl.route_ptr)))
        if len(pl.piece_of):
            coef = np.bincount(pl.piece_of, pl.frac[pl.pieces])
            used = np.flatnonzero(coef)
            _, lk, w = self.expand(used, coef[used])
            parts_l.append(lk)
            parts_w.append(w)
        parts_l.append(pl.hop_links)
        parts_w.append(pl.hop_weights * pl.frac[pl.hop_index])
        latency, scaleout, latency_up = _plan_latencies(pl)
        out = (np.concatenate(parts_l).astype(np.int64, copy=False), np.concatenate(parts_w),
               latency, scaleout)
        if split:
            return (*out, latency_up)
        return out

    def step_latencies(self, transfers: Transfers) -> tuple[float, bool, float] | None:
        """``(latency, scaleout, latency_up)`` of :meth:`link_loads` without its loads: the
        same numbers, from the same plan :meth:`_link_loads_whole` routes; None for a step
        :meth:`link_loads` may route in parts (more than ``_IN_PARTS`` pairs). For a
        fabric whose routes are another's with every link's latency changed
        (:meth:`~netmodel.collectives.model.FabricCostModel.share_loads_of`), whose loads
        are that fabric's."""
        if isinstance(transfers, Pairs) and len(transfers) > _IN_PARTS:
            return None
        return _plan_latencies(self.plan(transfers))


def _plan_latencies(pl: Plan) -> tuple[float, bool, float]:
    """The longest route latency of a :class:`Plan`, whether any route crosses the
    scale-out network, and the longest latency of the routes that stay on the scale-up
    network (the longest of all if none does)."""
    latency = float(pl.latency.max()) if len(pl.latency) else 0.0
    up = pl.latency[~pl.scaleout]
    return latency, bool(pl.scaleout.any()), float(up.max()) if len(up) else latency
