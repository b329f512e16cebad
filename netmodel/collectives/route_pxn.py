"""NCCL's PXN in routing: a send/recv transfer to a peer in another server relayed through
the NIC of the sender's server's GPU at the peer's device index, and such transfers planned
as their two legs.

:class:`PxnRoutes` is a mixin of :class:`~netmodel.collectives.routing.Router` (beside
:class:`~netmodel.collectives.route_plans.PlannedRoutes`, whose
:meth:`~netmodel.collectives.route_plans.PlannedRoutes.plan_nodes` asks it): whether PXN
applies to a step (:meth:`PxnRoutes.pxn_applies`), which GPU lends its NIC to each transfer
(:meth:`PxnRoutes.pxn_proxies`, and a stand-in where that GPU lost its NIC) and the plan of
the legs joined per transfer (:meth:`PxnRoutes._plan_pxn`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.route_types import KIND_SWITCH, Plan

if TYPE_CHECKING:
    from netmodel.collectives.steps import Pairs

    #: Transfers ``(src, dst, fraction of n)``: triples or :class:`~netmodel.collectives.steps.Pairs`.
    Transfers = Pairs | Sequence[tuple[Hashable, Hashable, float]]

__all__ = ["PxnRoutes"]

#: :meth:`PxnRoutes._pxn_index`'s (server, device) -> GPU table is a dense array where
#: servers x (largest device index + 1) is at most this many cells per GPU (8 bytes each;
#: 8 GPUs a server with devices 0-7: one cell per GPU), else sorted keys looked up by
#: bisection: one server of 20,000 GPUs beside 20,000 one-GPU servers asked 3.2 GB dense,
#: 1,001 one-GPU servers, one GPU labelled device 1,999,999, 14.9 GiB.
_SLOT_CELLS_PER_GPU = 16


def _slot_table(server: np.ndarray, device: np.ndarray, gpu: np.ndarray, servers: int
                ) -> np.ndarray | tuple[int, np.ndarray, np.ndarray]:
    """GPU ``gpu[i]`` at (``server[i]``, ``device[i]``), each pair once, as a table
    :func:`_slot_lookup` reads: a ``servers x (largest device + 1)`` array (-1: none) where
    that is at most :data:`_SLOT_CELLS_PER_GPU` cells per GPU, else ``(width, keys,
    gpus)``, the keys ``server * width + device`` sorted.

    >>> t = _slot_table(np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([5, 6, 7]), 2)
    >>> t.tolist()
    [[5, 6], [-1, 7]]
    >>> t = _slot_table(np.array([0, 1]), np.array([0, 1_999_999]), np.array([5, 6]), 2)
    >>> _slot_lookup(t, np.array([1, 1, 0]), np.array([1_999_999, 0, 0])).tolist()
    [6, -1, 5]
    """
    width = int(device.max(initial=-1)) + 1
    if servers * width <= _SLOT_CELLS_PER_GPU * max(1, len(gpu)):
        table = np.full((servers, width), -1, dtype=np.int64)
        table[server, device] = gpu
        return table
    keys = server.astype(np.int64) * width + device
    order = np.argsort(keys, kind="stable")
    return width, keys[order], np.asarray(gpu, dtype=np.int64)[order]


def _slot_lookup(table: np.ndarray | tuple, server: np.ndarray, device: np.ndarray
                 ) -> np.ndarray:
    """The GPU at each (``server[i]``, ``device[i]``) of :func:`_slot_table`'s table, -1
    where none is (each ``device[i]`` below the table's width)."""
    if isinstance(table, np.ndarray):
        return table[server, device]
    width, keys, gpus = table
    want = server * width + device
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return np.where(keys[at] == want, gpus[at], -1)
#: :meth:`PxnRoutes._pxn_index` keeps each GPU's tier-0 switches as a dense row (padded
#: with -1) where no GPU has more than this many, else as sorted (GPU, switch) keys: one GPU
#: wired to 4,000 NVSwitches among 4,000 GPUs made the rows 4,000 x 4,000 and the
#: comparison of a 64-GPU all-to-all's rows 2,048 x 4,000 x 4,000 (30.5 GiB, a traceback).
_TIER0_DENSE = 4
#: The most (transfer, switch) pairs :func:`_share_sorted` looks up at once (16 bytes each).
_SHARE_CHUNK = 1 << 22


def _tier0_rows(owner: np.ndarray, switch: np.ndarray, count: np.ndarray, nodes: int
                ) -> np.ndarray | tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """The tier-0 switches (node numbers ``switch[i]``, of GPU index ``owner[i]``, sorted by
    GPU; ``count``: each GPU's) as :meth:`PxnRoutes._share_tier0` reads them: a row per
    GPU padded with -1 where no GPU has more than :data:`_TIER0_DENSE`, else ``(nodes,
    start, count, keys)``, the keys ``gpu * nodes + switch`` sorted and ``start`` each GPU's
    first."""
    width = max(1, int(count.max(initial=0)))
    first = np.concatenate([[0], np.cumsum(count)[:-1]])
    if width <= _TIER0_DENSE:
        t0 = np.full((len(count), width), -1, dtype=np.int64)
        t0[owner, np.arange(len(owner)) - first[owner]] = switch
        return t0
    return nodes, first, count, np.sort(owner.astype(np.int64) * nodes + switch)


def _share_sorted(t0: tuple, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:meth:`PxnRoutes._share_tier0` on :func:`_tier0_rows`' sorted keys: each of the
    switches of whichever of ``x[i]``, ``y[i]`` has fewer looked up among the other's, at
    most :data:`_SHARE_CHUNK` at once (the work: the fewer switches, summed over pairs).

    GPU 0 wired to switches 10-14 (more than 4: sorted keys), GPU 1 to 14, GPU 2 to 15:

    >>> t0 = _tier0_rows(np.array([0, 0, 0, 0, 0, 1, 2]), np.array([10, 11, 12, 13, 14, 14, 15]),
    ...                  np.array([5, 1, 1]), 20)
    >>> _share_sorted(t0, np.array([0, 0, 1, 1, 2]), np.array([1, 2, 2, 0, 2])).tolist()
    [True, False, False, True, True]
    """
    nodes, start, count, keys = t0
    x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
    swap = count[y] < count[x]
    a, b = np.where(swap, y, x), np.where(swap, x, y)   # a: the side with fewer switches
    rep = count[a]
    out = np.zeros(len(x), dtype=bool)
    if not len(x) or not len(keys):
        return out
    ends = np.cumsum(rep)
    cuts = np.searchsorted(ends, np.arange(_SHARE_CHUNK, int(ends[-1]), _SHARE_CHUNK),
                           side="right")
    for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(x)], strict=True):
        r = rep[lo:hi]
        idx = np.repeat(np.arange(lo, hi), r)
        if not len(idx):
            continue
        off = np.arange(len(idx)) - np.repeat(np.cumsum(r) - r, r)
        ai = a[idx]
        want = b[idx] * nodes + (keys[start[ai] + off] - ai * nodes)
        at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        out[idx[keys[at] == want]] = True
    return out



#: From this many PXN legs, and distinct legs, each distinct leg is described once
#: (:meth:`Router._plan_legs`; fewer: sorting them costs more than it saves).
_LEGS_ONCE = 4096


class PxnRoutes:
    """NCCL's PXN on :class:`~netmodel.collectives.routing.Router` (a mixin: the methods stay
    on ``Router``): the GPU whose NIC each send/recv transfer leaves through, and the plan
    of transfers relayed so as their legs.

    Reads the router's index (``_gidx``, ``_gpu_n``, ``_gpu_servers``, ``_gpu_devices``,
    ``_gport_link``, ``_src``, ``_dst``, ``_tier_arr``, ``_code``, ``_n``, ``_nodes``,
    ``_pxn_on``) and keeps there what :meth:`_pxn_index` works out (``_pxn``); plans the
    legs with :class:`~netmodel.collectives.route_plans.PlannedRoutes`' ``_describe``,
    ``_plan_direct``, ``_routed`` and ``_hops_and_pieces``.
    """

    def pxn_applies(self, transfers: Transfers) -> bool:
        """Whether NCCL's PXN may route ``transfers``: NCCL's send/recv
        (:class:`~netmodel.collectives.steps.Pairs` ``p2p``) on a fabric where it can
        (:meth:`pxn_proxies`). Caches keyed by the
        transfers add it, so that a step of the same pairs under another op (direct
        all-gather and all-to-all) shares their routes wherever PXN does not apply."""
        return bool(getattr(transfers, "p2p", False)) and self._pxn_index() is not None

    def _pxn_index(self) -> tuple | None:
        """What :meth:`pxn_proxies` reads, worked out once: ``(server, position, table,
        nic, t0)`` per GPU index (its ``server`` label's number, its device index: its
        ``device`` label (:meth:`_pxn_devices`) or else its position among its server's GPUs
        in the fabric's order, the GPU index of each (server, position),
        whether it has a port to a switch of tier >= 1, and the node numbers of the tier-0
        switches it is wired to, a row per GPU padded with -1); None where PXN is off or no
        GPU has a ``server`` label. ``table`` (:func:`_slot_table`) is dense where servers x
        the largest device index is small, else sorted (server, device) keys: its size
        follows the GPUs, whatever their labels."""
        hit = self._pxn
        if hit is None:
            hit = self._pxn = (False,)
            servers = self._gpu_servers
            if self._pxn_on and servers is not None:
                lab: dict = {}
                sid = np.fromiter((-1 if s is None else lab.setdefault(s, len(lab))
                                   for s in servers), np.int64, count=len(servers))
                if len(lab) >= 2:
                    has = sid >= 0
                    order = np.argsort(np.where(has, sid, len(lab)), kind="stable")
                    count = np.bincount(sid[has], minlength=len(lab))
                    start = np.concatenate([[0], np.cumsum(count)])
                    pos = np.full(len(sid), -1, dtype=np.int64)
                    ordered = order[: int(count.sum())]
                    pos[ordered] = np.arange(len(ordered)) - np.repeat(start[:-1], count)
                    dev = self._pxn_devices(has)
                    if dev is not None:   # the device indices the healthy fabric gave
                        pos[has] = dev[has]
                    table = _slot_table(sid[ordered], pos[ordered], ordered, len(lab))
                    dst, tier = self._dst, self._tier_arr
                    gl = self._gport_link   # grouped by GPU
                    owner = self._gidx[self._src[gl]]
                    up = tier[dst[gl]] >= 1
                    nic = np.zeros(len(sid), dtype=bool)
                    nic[owner[up]] = True
                    low = ~up   # each GPU's tier-0 switches, in a row of its own
                    n0 = np.bincount(owner[low], minlength=len(sid))
                    t0 = _tier0_rows(owner[low], dst[gl[low]], n0, self._n)
                    if nic.any() and (n0 > 0).any():
                        hit = self._pxn = (sid, pos, table, nic, t0)
        return None if len(hit) == 1 else hit

    def _pxn_devices(self, has: np.ndarray) -> np.ndarray | None:
        """Each GPU's ``device`` label (its device index in its server, kept from the
        healthy fabric by :func:`~topologies.degrade.keep_devices` when GPUs
        failed), where every GPU with a ``server`` label (``has``) has a whole one >= 0,
        one per (server, device); None otherwise (then the position among the server's
        GPUs, the same on the fabric it was kept from)."""
        devs = self._gpu_devices
        if devs is None:
            return None
        servers = self._gpu_servers
        seen = set()
        for i in np.flatnonzero(has).tolist():
            d = devs[i]
            if d.__class__ is not int or d < 0 or (servers[i], d) in seen:
                return None
            seen.add((servers[i], d))
        return np.array([d if h else -1 for d, h in zip(devs, has.tolist(), strict=True)],
                        dtype=np.int64)

    @staticmethod
    def _share_tier0(t0: np.ndarray | tuple, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Whether GPUs ``x[i]`` and ``y[i]`` (GPU indices) are wired to a tier-0 switch in
        common (``t0``: :meth:`_pxn_index`'s rows of tier-0 switches, :func:`_tier0_rows`)."""
        if isinstance(t0, tuple):
            return _share_sorted(t0, x, y)
        tx, ty = t0[x], t0[y]
        if t0.shape[1] == 1:
            return (tx[:, 0] >= 0) & (tx[:, 0] == ty[:, 0])
        return ((tx[:, :, None] == ty[:, None, :]) & (tx[:, :, None] >= 0)).any(axis=(1, 2))

    def pxn_proxies(self, src: np.ndarray, dst: np.ndarray, gid: np.ndarray | None = None
                    ) -> np.ndarray | None:
        """The node number of the GPU whose NIC NCCL's PXN sends each transfer ``src[i] ->
        dst[i]`` (node numbers; ``gid[i]`` its group, None: all one group) through, -1 where
        it sends through its own; None where no transfer is sent so.

        The rule, NCCL's send/recv with PXN on (``NCCL_PXN_DISABLE=0`` and
        ``NCCL_P2P_PXN_LEVEL=2``, the defaults since 2.12; src/graph/paths.cc,
        ``ncclTopoGetNetDev``): a GPU sending to a peer in another server uses the NIC of
        the GPU of its own server with the peer's device index (here: its ``device`` label,
        kept from the healthy fabric where GPUs failed, or else its position among its
        server's GPUs, the fabric's ``server`` labels), moving the data there over
        NVLink first, so the transfer stays on the peer's rail; the peer receives on its
        own NIC. That GPU must be a rank of the same communicator (NCCL's topology holds
        only its own ranks' GPUs; ``ncclTopoDevToRank`` finds no other), here one that
        takes part in the same group's transfers of the step. Here where both GPUs have
        ``server`` labels, different servers and no tier-0 switch in common (one NVLink
        domain: NCCL's P2P over NVLink, MNNVL across trays, no NIC; a shared scale-out
        switch does not matter, NCCL knowing nothing of the fabric: where a rail's leaf
        holds several GPUs of a server, as Lites, NCCL still relays to the peer's device
        index), and that GPU shares a tier-0 switch with the sender (any of its tier-0
        switches) and has a port to a switch of tier >= 1 (a working NIC). Where that GPU
        lost its NIC (a failed cable or rail leaf), NCCL, started again, relays to the NIC
        nearest it that is left, handing the data to that NIC's GPU
        (:meth:`_pxn_stand_ins`), which must be a rank too and share a tier-0 switch with
        the sender (the sender itself: its own NIC). A single
        route (:meth:`Router.route`, a communicator of its two GPUs) is never sent so.
        Off with ``pxn=False`` (a calibration's ``pxn``, ``NCCL_PXN_DISABLE=1``)."""
        index = self._pxn_index()
        if index is None or not len(src):
            return None
        sid, pos, table, nic, t0 = index
        gi = self._gidx
        a, b = gi[src], gi[dst]   # -1: not a GPU
        sa, sb = sid[a], sid[b]
        ok = (a >= 0) & (b >= 0) & (sa >= 0) & (sb >= 0) & (sa != sb)
        if not ok.any():
            return None
        e = np.flatnonzero(ok)
        a, b = a[e], b[e]
        via = _slot_lookup(table, sa[e], pos[b])   # a's server's rank at b's position (-1: none)
        keep = (via >= 0) & (via != a)
        via = np.where(keep, via, 0)
        # NVLink to the lender, none to the peer (one NVLink domain: NCCL's P2P, no NIC);
        # a shared scale-out switch does not matter: NCCL knows nothing of the fabric
        keep &= self._share_tier0(t0, a, via) & ~self._share_tier0(t0, a, b)
        lost = np.flatnonzero(keep & ~nic[via])
        if len(lost):   # a lender without a NIC: the GPU whose NIC it sends through
            via[lost] = self._pxn_stand_ins(via[lost], b[lost])
            keep[lost] = (via[lost] >= 0) & (via[lost] != a[lost])
            via = np.where(keep, via, 0)
            keep[lost] &= self._share_tier0(t0, a[lost], via[lost])
        keep &= nic[via]
        e, via = e[keep], self._gpu_n[via[keep]]
        if not len(e):
            return None
        if gid is None:   # the lender takes part in the step's transfers: a rank of it
            mark = np.zeros(self._n, dtype=bool)
            mark[src] = True
            mark[dst] = True
            keep = mark[via]
        else:   # ... in its own group's transfers
            n = self._n
            g = np.asarray(gid, dtype=np.int64)
            members = np.unique(np.concatenate([g * n + src, g * n + dst]))
            want = g[e] * n + via
            at = np.minimum(np.searchsorted(members, want), len(members) - 1)
            keep = members[at] == want
        if not keep.any():
            return None
        proxies = np.full(len(src), -1, dtype=np.int64)
        proxies[e[keep]] = via[keep]
        return proxies

    def _pxn_stand_ins(self, via: np.ndarray, peer: np.ndarray) -> np.ndarray:
        """For lenders ``via[i]`` without a NIC (GPU indices; a failed NIC link or rail
        leaf), the GPU (index; -1: none) whose NIC the lender's own route to ``peer[i]``
        leaves through: the first GPU on it, other than the lender, with a link to a switch
        of tier >= 1 (the degraded fabric's one NIC,
        :meth:`~netmodel.collectives.route_search.SearchedRoutes._one_forwarder`).

        NCCL's PXN (``ncclTopoGetNetDev``) relays to the NIC ``ncclTopoGetLocalNet`` gives
        the rank at the peer's device index, its nearest (started again on a degraded
        node, the nearest that is left, reached over NVLink through that NIC's GPU,
        ``PATH_PXN``), and hands the data to that NIC's GPU (``ncclTopoGetLocalGpu``): the
        senders still share one NIC for the peer's position, as on the healthy fabric,
        where sending each through its own NIC made a failure halve a step's time."""
        out = np.full(len(via), -1, dtype=np.int64)
        gpus, nodes, gidx = self._gpu_n, self._nodes, self._gidx
        tier, lsrc, ldst = self._tier_arr, self._src, self._dst
        seen: dict = {}
        for i, (v, p) in enumerate(zip(via.tolist(), peer.tolist(), strict=True)):
            hit = seen.get((v, p))
            if hit is None:
                hit = -1
                vn = int(gpus[v])
                # a lender in another scale-up network than the peer leaves through its
                # stand-in (its route is the legs through it: _resolve), so no route is
                # worked out for it (one per lender and peer took 2.4 -> 6.2 s for a
                # 512-GPU all-to-all once every NIC-less GPU kept its own NIC)
                stand = (self._stand_in(nodes[vn]) if self._nic_less()[vn]
                         and self._scaleup_parts()[vn] != self._scaleup_parts()[int(gpus[p])]
                         else None)
                if stand is not None and self.connected(stand, nodes[int(gpus[p])]):
                    seen[(v, p)] = out[i] = int(gidx[self._nid[stand]])
                    continue
                route = self.route(nodes[vn], nodes[int(gpus[p])])
                if route is not None:
                    s, d = lsrc[route.links], ldst[route.links]
                    out_at = np.flatnonzero((gidx[s] >= 0) & (s != vn) & (tier[d] >= 1)
                                            & (self._code[d] == KIND_SWITCH))
                    if len(out_at):
                        hit = int(gidx[s[out_at[0]]])
                seen[(v, p)] = hit
            out[i] = hit
        return out

    def _pxn_legs(self, src: np.ndarray, dst: np.ndarray, via: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The transfers with each one PXN sends (``via[i] >= 0``) split into its legs:
        ``(src, dst, which)``, the first leg in its place (to the GPU lending its NIC) and
        the second (on from there) after all the transfers, ``which`` the transfers they
        belong to (each index in ``0 .. T-1``)."""
        e = np.flatnonzero(via >= 0)
        s2 = np.concatenate([src, via[e]])
        d2 = dst.copy()
        d2[e] = via[e]
        d2 = np.concatenate([d2, dst[e]])
        return s2, d2, np.concatenate([np.arange(len(src)), e])

    def _plan_pxn(self, src: np.ndarray, dst: np.ndarray, frac: np.ndarray,
                  via: np.ndarray, once: bool = False) -> Plan:
        """:meth:`plan_nodes` of transfers some of which PXN sends through another GPU's NIC
        (``via``, :meth:`pxn_proxies`): every leg planned as a transfer of its own, and the
        legs of one transfer joined (their links, pieces and hops together; latency the sum,
        scale-out either's). ``once``: each distinct leg described once
        (:meth:`_plan_legs`; one group's step: concurrent groups' steps, learned up front
        or in parts, were measured slower so: 4 x 1,024 contiguous, 5.5 -> 7.0 s)."""
        T = len(src)
        s2, d2, which = self._pxn_legs(src, dst, via)
        inner = (self._plan_legs(s2, d2, frac[which], T) if once
                 else self._plan_direct(s2, d2, frac[which], None))
        e = which[T:]
        kind = inner.template[:T].copy()
        kind[e] = np.where((kind[e] >= 0) & (inner.template[T:] >= 0), 1, -1)
        latency = inner.latency[:T].copy()
        latency[e] += inner.latency[T:]
        scaleout = inner.scaleout[:T].copy()
        scaleout[e] |= inner.scaleout[T:]
        r = inner.routed
        sizes = np.diff(inner.route_ptr)
        if len(r):  # the routes of legs routed on their own, joined per transfer
            outer = which[r]
            order = np.argsort(outer, kind="stable")   # a first leg before its second
            starts = inner.route_ptr[:-1][order]
            sz = sizes[order]
            total = int(sz.sum())
            at = np.repeat(starts - np.concatenate([[0], np.cumsum(sz)[:-1]]), sz) \
                + np.arange(total)
            routed, first = np.unique(outer[order], return_index=True)
            per = np.add.reduceat(sz, first) if len(first) else sz
            ptr = np.concatenate([[0], np.cumsum(per)]).astype(np.int64)
            hops = np.add.reduceat(inner.route_hops[order], first)
            links, weights = inner.route_links[at], inner.route_weights[at]
        else:
            routed, ptr = r, inner.route_ptr
            links, weights, hops = inner.route_links, inner.route_weights, inner.route_hops
        return Plan(frac, kind, routed, ptr, links, weights, hops, which[inner.hop_index],
                    inner.hop_links, inner.hop_weights, which[inner.pieces], inner.piece_of,
                    latency, scaleout)

    def _plan_legs(self, src: np.ndarray, dst: np.ndarray, frac: np.ndarray, T: int) -> Plan:
        """:meth:`_plan_direct` of PXN's legs (:meth:`_pxn_legs`), each distinct leg
        described once. The legs repeat: every sender of a server relays to a peer's
        position through the same GPU (the first legs), and that GPU's leg to the peer is
        the same for every sender relayed to it, often its own transfer of the step (direct
        all-to-all of 2,048 contiguous GPUs on 8-GPU servers: 7.85 million legs, 0.54
        million distinct). :meth:`_describe` works out the distinct legs (in order of first
        appearance, so that it learns what it would learn from all of them, in the same
        order, from the same first transfer of each signature pair) and its fields are
        gathered per leg; the hops, pieces and routes of every leg are then made from them
        as :meth:`_plan_direct` makes them: the same plan, entry for entry, so the loads
        are the same sums in the same order (bit-identical). ``T``: the transfers the legs
        are of (the first ``T`` legs); fewer than half of them relayed (a random placement
        leaving few GPUs of a group in a server), the legs are described as they are: few
        repeat, and sorting them costs more than it saves."""
        L = len(src)
        if L < _LEGS_ONCE or 2 * (L - T) < T:
            return self._plan_direct(src, dst, frac, None)
        uc, first, inv = np.unique(src * self._n + dst, return_index=True,
                                   return_inverse=True)
        U = len(uc)
        del uc
        if U < _LEGS_ONCE or 2 * U > L:   # few legs, or few repeats: describe them all
            return self._plan_direct(src, dst, frac, None)
        order = np.argsort(first)   # the distinct legs in order of first appearance
        rank = np.empty(U, dtype=np.int64)
        rank[order] = np.arange(U)
        inv = rank[inv.ravel()]
        keep = first[order]
        del rank, order, first
        d = self._describe(src[keep], dst[keep])
        del keep
        for k, v in d.items():   # every leg's fields: its distinct leg's
            if k == "_rows":
                d[k] = (v[0], v[1][inv])
            elif k == "_gpus":
                d[k] = (v[0][inv], v[1][inv])
            else:
                d[k] = v[inv]
        del inv
        latency, scaleout = d["latency"], d["scaleout"]
        own = self._routed(src, dst, np.flatnonzero(d["kind"] < 0), latency, scaleout)
        on = np.flatnonzero(d["kind"] >= 0)
        hi, hl, hw, pi, po = self._hops_and_pieces(src, dst, d, on)
        return Plan(frac, d["kind"], *own, hi, hl, hw, pi, po, latency, scaleout)
