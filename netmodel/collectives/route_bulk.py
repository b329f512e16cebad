"""Many templated transfers routed at once: each transfer's pair of signatures looked up in a
table of known pairs, and its first and last hops and shared pieces gathered with numpy.

Its one job is the large steps of switched fabrics (an all-pairs step of millions of
transfers between GPUs wired alike): :meth:`BulkRoutes._describe` finds each transfer's
route fields through a sorted (or, for few signatures, square-indexed) table of signature
pairs that later steps look up again (:meth:`BulkRoutes._known_at`,
:meth:`BulkRoutes.learn_in_parts`), and :meth:`BulkRoutes._hops_and_pieces` turns them into
the hop and piece entries of a :class:`~netmodel.collectives.route_types.Plan`, per
distinct row or pair of piece lists rather than per transfer. A step too large for one
plan's arrays (a direct all-reduce over 4,096 GPUs: 16.8 million transfers) has its link
loads routed in parts, its pairs learned first as one plan learns them and each link's bytes
summed in one plan's order (:meth:`BulkRoutes._link_loads_in_parts`). The templates
themselves are :mod:`netmodel.collectives.route_templates`'s. :class:`BulkRoutes` is a mixin
of :class:`~netmodel.collectives.routing.Router`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from netmodel.collectives.route_types import KIND_GPU, TRANSFER_FIELDS

if TYPE_CHECKING:
    from netmodel.collectives.steps import Pairs

__all__ = ["BulkRoutes"]

#: The most signature pairs whose route fields a router keeps in its table for large steps.
_KNOWN_PAIRS = 1 << 22
#: Up to this many pairs of signatures (cells of 8 bytes), the table is looked up through a
#: square index rather than searched.
_DENSE_PAIRS = 1 << 20
#: :meth:`Router._repeat_pieces` gathers rows of pieces padded to the longest when no row
#: has more than this many.
_PADDED_PIECES = 4
#: :meth:`BulkRoutes._link_loads_in_parts` routes a step of more transfers than this in
#: parts of :data:`_PART` (the last of up to twice that), summing the same loads bit for bit.
_IN_PARTS = 1 << 19
_PART = 1 << 16


def add_template(out: tuple, head: tuple, tail: tuple, pieces: list, t: int,
                 up: list, down: list) -> None:
    """Append transfer ``t``'s templated route to ``out`` = (hop transfer, hop link, hop
    weight, piece transfer, piece): the climb ``head`` over its GPU's up ports ``up``,
    the descent ``tail`` over the far GPU's down ports ``down``, and the shared
    ``pieces`` between them."""
    hi, hl, hw, pi, po = out
    pos, w = head
    hi += [t] * len(pos)
    hl += [up[x] for x in pos]
    hw += w
    pos, w = tail
    hi += [t] * len(pos)
    hl += [down[x] for x in pos]
    hw += w
    pi += [t] * len(pieces)
    po += pieces


class BulkRoutes:
    """Templated transfers of :class:`~netmodel.collectives.routing.Router` routed many at
    once (a mixin: the methods stay on ``Router``).

    Reads the router's index (``_code``, ``_gidx``, ``_gpu_linked``, ``_lids``) and its
    templates (``_gpu_sig``, ``_sigs``, ``_port_links``, ``_specs_pos``,
    ``_specs_w``, ``_spec_py``, ``_lists``, ``_list_py``, ``_pair_rows``, through
    :meth:`~netmodel.collectives.route_templates.TemplatedRoutes._ensure_sigs`,
    :meth:`~netmodel.collectives.route_templates.TemplatedRoutes._learn_pairs` and
    :meth:`~netmodel.collectives.route_templates.TemplatedRoutes._pair_fields`), and keeps
    the table of known signature pairs there (``_known_keys``, ``_known_fields``,
    ``_known_index``, ``_row_pieces``). Steps in parts are learned and planned through
    :class:`~netmodel.collectives.route_plans.PlannedRoutes` (``plan_nodes``,
    ``_member_ids``) and :class:`~netmodel.collectives.route_pxn.PxnRoutes`
    (``pxn_applies``, ``pxn_proxies``, ``_pxn_legs``), their pieces'
    links read through ``expand``, ``_piece_links`` and ``n_links``.
    """

    def _describe(self, src: np.ndarray, dst: np.ndarray) -> dict:
        """How each transfer ``src[i] -> dst[i]`` (node numbers) is routed.

        Templated transfers (``kind`` 1: switched routes between two GPUs) get their
        first-hop and last-hop patterns (``head``, ``tail``: spec ids), the piece lists
        (``l1``, ``l2``), ``latency``, ``hops`` and ``scaleout``; the others (``kind`` -1:
        not two GPUs, the same GPU, direct neighbours, no switched route) are routed on
        their own. Everything is computed per distinct pair of signatures, with numpy.
        """
        T = len(src)
        idx, s_on, d_on = self._switched(src, dst)
        if idx is not None and not len(idx):
            return self._describe_default(T)
        gs, gd = self._gidx[s_on], self._gidx[d_on]
        sig = self._gpu_sig
        ss, sd = sig[gs], sig[gd]
        unsigned_s, unsigned_d = ss < 0, sd < 0
        if unsigned_s.any() or unsigned_d.any():  # the ends' GPUs, sources first
            self._ensure_sigs(np.concatenate([gs[unsigned_s], gd[unsigned_d]]))
            ss, sd = sig[gs], sig[gd]
        del unsigned_s, unsigned_d
        n_on = T if idx is None else len(idx)
        if n_on <= 64:  # few transfers: signature pairs seen before, from a dict
            out = self._describe_default(T)
            idx = np.arange(T) if idx is None else idx
            known = self._pair_rows
            keys = ((ss << 32) | sd).tolist()
            rows = [known.get(k) for k in keys]
            if None in rows:
                self._learn_pairs(np.array([k for k, r in zip(keys, rows, strict=True)
                                            if r is None], dtype=np.int64))
                rows = [known[k] for k in keys]
            for name, col in zip(TRANSFER_FIELDS, zip(*rows, strict=True), strict=True):
                out[name][idx] = col
            return out
        at = self._known_at(ss, sd, s_on, d_on)
        del ss, sd
        if idx is None:  # every transfer a GPU pair (the usual case)
            # what a plan keeps, and for _hops_and_pieces each transfer's row of the table
            # and GPUs (head, tail, l1 and l2 gathered there only if it needs them)
            rows = self._known_fields
            out = {k: rows[k][at] for k in ("kind", "latency", "scaleout")}
            out["_rows"], out["_gpus"] = (rows, at), (gs, gd)
        else:
            out = self._describe_default(T)
            for k, v in self._known_fields.items():
                out[k][idx] = v[at]
        return out

    def _switched(self, src: np.ndarray, dst: np.ndarray) -> tuple:
        """``(idx, s_on, d_on)``: the transfers :meth:`_describe` routes by template (None:
        all of them) and their ends; the others (not two GPUs, the same GPU, direct
        neighbours) are routed on their own."""
        code = self._code
        ok = (code[src] == KIND_GPU) & (code[dst] == KIND_GPU) & (src != dst)
        # an all-pairs step (4.2 million transfers) is all GPU pairs: no index, no gathers
        idx = None if ok.all() else np.flatnonzero(ok)
        s_on, d_on = (src, dst) if idx is None else (src[idx], dst[idx])
        near = np.flatnonzero(self._gpu_linked[s_on])  # GPUs cabled to a GPU
        if len(near):  # direct neighbours: one link, routed on their own
            linked = near[self._lids(s_on[near], d_on[near]) >= 0]
            if len(linked):
                idx = np.delete(np.arange(len(src)) if idx is None else idx, linked)
                s_on, d_on = src[idx], dst[idx]
        return idx, s_on, d_on

    def learn_in_parts(self, parts: Callable[[], Iterable[tuple[np.ndarray, ...]]],
                       pxn: bool = False) -> bool:
        """Learn what :meth:`_describe` of all the transfers of ``parts()`` (``(src, dst)``
        after ``(src, dst)``, one step laid end to end; ``(src, dst, gid)`` with each
        transfer's group; with ``pxn``, as :meth:`plan_nodes`) would learn, in the same order (the
        same signature, pattern, list and piece ids), without their whole arrays (a step of
        4.2 million transfers: 33 MB an array, whose fresh pages cost more than the
        arithmetic). False, having learned no pair, where it would not be the same or a
        part's plan would learn apart (a transfer not routed by template, a part of at most
        64 transfers, a table of signature pairs searched rather than indexed): then
        :meth:`_describe` the whole step. A table that would start afresh starts afresh
        here too, with every pair of the step."""
        given, pxn = parts, pxn and self._pxn_index() is not None

        def parts():   # what PXN sends through another GPU's NIC as its legs (plan_nodes)
            for src, dst, *gid in given():
                via = self.pxn_proxies(src, dst, *gid) if pxn else None
                yield (src, dst) if via is None else self._pxn_legs(src, dst, via)[:2]
        mark = np.zeros(len(self._gpu_sig), dtype=bool)   # GPUs to sign
        for src, dst in parts():
            idx, s_on, d_on = self._switched(src, dst)
            if idx is not None or len(s_on) <= 64:
                # a transfer routed on its own (its part's plan would route it before the
                # rest is known to be alike), or a part _describe works out through its dict
                return False
            for g in (self._gidx[s_on], self._gidx[d_on]):
                mark[g[self._gpu_sig[g] < 0]] = True
        if mark.any():   # _describe signs its GPUs in order, distinct: the same
            self._ensure_sigs(np.flatnonzero(mark))
        S = len(self._sigs)
        if S * S > _DENSE_PAIRS:
            return False
        if self._known_index is None or len(self._known_index) != S * S:
            self._index_known(S)
        index, sig = self._known_index, self._gpu_sig
        rep_s = np.full(S * S, -1, dtype=np.int64)   # each new pair's first transfer
        rep_d = np.full(S * S, -1, dtype=np.int64)
        misses = 0
        for src, dst in parts():
            _, s_on, d_on = self._switched(src, dst)
            cell = sig[self._gidx[s_on]] * S + sig[self._gidx[d_on]]
            miss = np.flatnonzero(index[cell] < 0)
            if not len(miss):
                continue
            misses += len(miss)
            cm, first = np.unique(cell[miss], return_index=True)
            new = rep_s[cm] < 0
            rep_s[cm[new]] = s_on[miss[first[new]]]
            rep_d[cm[new]] = d_on[miss[first[new]]]
        if not misses:
            return True
        if len(self._known_keys) and len(self._known_keys) + misses > _KNOWN_PAIRS:
            # _known_at would start its table afresh with the step's pairs, known ones too
            # (16.8 million transfers of a direct all-reduce over 4,096 GPUs after the
            # pairs of its other algorithms): the same, each pair's first transfer again
            self._known_keys = self._known_keys[:0]
            self._known_fields = {k: v[:0] for k, v in self._known_fields.items()}
            self._index_known(S)
            rep_s[:] = -1
            for src, dst in parts():
                _, s_on, d_on = self._switched(src, dst)
                cm, first = np.unique(sig[self._gidx[s_on]] * S + sig[self._gidx[d_on]],
                                      return_index=True)
                new = rep_s[cm] < 0
                rep_s[cm[new]] = s_on[first[new]]
                rep_d[cm[new]] = d_on[first[new]]
        cells = np.flatnonzero(rep_s >= 0)
        # one transfer per new pair, the first of each: _known_at learns the pairs in the
        # order of their keys (as the whole step's), each from the same transfer
        self._known_at(cells // S, cells % S, rep_s[cells], rep_d[cells])
        return True

    def _link_loads_in_parts(self, transfers: Pairs
                             ) -> tuple[np.ndarray, np.ndarray, float, bool, float] | None:
        """:meth:`~netmodel.collectives.route_plans.PlannedRoutes.link_loads` of a step of
        more than :data:`_IN_PARTS` transfers, bit for bit, routed :data:`_PART` transfers
        at a time in their order (a direct all-reduce over 4,096 GPUs, 16.8 million
        transfers, allocated arrays of 134 MB each, 4 GB at its peak, whose fresh pages
        cost more than the arithmetic); None where it would not be the same or is not
        needed (then one plan): a step of at most :data:`_IN_PARTS` transfers, one PXN
        may route (:meth:`~netmodel.collectives.route_pxn.PxnRoutes.pxn_applies`), a
        transfer routed on its own (whose links come after every hop in one plan), pairs
        not learned as one plan learns them (:meth:`learn_in_parts`), or a link both a hop
        and on a shared piece.

        Why it is the same: the pairs are learned first as one plan learns them (the same
        signatures, patterns and piece ids); one plan sums each link's bytes in order, its
        pieces' then its hops' (:func:`numpy.bincount`), and a link is a first hop (out of
        a GPU) or a last hop (into one), never both, nor on a piece (checked): its hops are
        summed here in the same order (:func:`numpy.add.at` adds in order, parts keep the
        transfers' order), and its pieces' bytes (each piece's summed in order) as one
        plan spreads them; the rest is maxima, order-free."""
        if len(transfers) <= _IN_PARTS or self.pxn_applies(transfers):
            return None
        g = self._member_ids(transfers.nodes)
        ts, td, tf = transfers.src, transfers.dst, transfers.frac
        T = len(ts)
        cuts = list(range(0, T, _PART))
        if len(cuts) > 1 and T - cuts[-1] < _PART:   # the last merged into the one before
            cuts.pop()
        cuts.append(T)

        def parts():
            for a, b in zip(cuts[:-1], cuts[1:], strict=True):
                f = np.full(b - a, tf) if isinstance(tf, float) else tf[a:b]
                yield g[ts[a:b]], g[td[a:b]], f
        if not self.learn_in_parts(lambda: ((s, d) for s, d, _ in parts())):
            return None
        NP, L = len(self._piece_links), self.n_links
        hops = np.zeros(L)
        per_piece = np.zeros(NP)
        latency, latency_up, scaleout = 0.0, -1.0, False
        for src, dst, frac in parts():
            pl = self.plan_nodes(src, dst, frac)
            if len(pl.routed) or len(self._piece_links) != NP:
                return None
            np.add.at(hops, pl.hop_links, pl.hop_weights * frac[pl.hop_index])
            if len(pl.piece_of):
                np.add.at(per_piece, pl.piece_of, frac[pl.pieces])
            if len(pl.latency):
                latency = max(latency, float(pl.latency.max()))
                up = pl.latency[~pl.scaleout]
                if len(up):
                    latency_up = max(latency_up, float(up.max()))
                scaleout = scaleout or bool(pl.scaleout.any())
            del pl
        used = np.flatnonzero(per_piece)
        if len(used):
            _, lk, w = self.expand(used, per_piece[used])
            if (hops[lk] != 0).any():
                return None   # a link both a hop and on a piece: one plan's order
            hops += np.bincount(lk, w, minlength=L)
        uniq = np.flatnonzero(hops)
        return uniq, hops[uniq], latency, scaleout, latency if latency_up < 0 else latency_up

    @staticmethod
    def _describe_default(T: int) -> dict:
        """:meth:`_describe`'s fields of ``T`` transfers none of which is templated."""
        return {"kind": np.full(T, -1, dtype=np.int64), "head": np.full(T, -1, dtype=np.int64),
                "tail": np.full(T, -1, dtype=np.int64), "l1": np.zeros(T, dtype=np.int64),
                "l2": np.zeros(T, dtype=np.int64), "latency": np.zeros(T),
                "hops": np.zeros(T, dtype=np.int64), "scaleout": np.zeros(T, dtype=bool)}

    def _known_at(self, ss: np.ndarray, sd: np.ndarray, src: np.ndarray, dst: np.ndarray
                  ) -> np.ndarray:
        """Positions of signature pairs ``(ss[i], sd[i])`` (key ``ss << 32 | sd``) in the
        table of known pairs, the route fields of those not known yet worked out first
        (``src[i] -> dst[i]``: a GPU pair wired as that pair; the first of each new pair
        stands for it). The table is kept sorted by key, so that later steps look their
        pairs up instead of working them out again; it starts afresh with a step's pairs
        when it might grow past :data:`_KNOWN_PAIRS`."""
        known = self._known_keys
        S = len(self._sigs)
        dense = S * S <= _DENSE_PAIRS  # a square index of every pair of signatures
        key = None
        if dense:
            if self._known_index is None or len(self._known_index) != S * S:
                self._index_known(S)
            cell = ss * S
            cell += sd
            at = self._known_index[cell]
            hit = at >= 0
        else:
            self._known_index = None
            key = (ss << 32) | sd
            at = np.searchsorted(known, key)
            hit = known[np.minimum(at, len(known) - 1)] == key if len(known) else None
        if hit is not None and len(known):
            if hit.all():
                return at
            if len(known) + int(np.count_nonzero(~hit)) > _KNOWN_PAIRS:
                # the table might grow too large: start it afresh with this step's pairs
                known = self._known_keys = known[:0]
                self._known_fields = {k: v[:0] for k, v in self._known_fields.items()}
                if dense:
                    self._index_known(S)
        if not len(known):
            hit = None
        miss = np.arange(len(ss)) if hit is None else np.flatnonzero(~hit)
        if dense and len(miss) > S * S:
            # many transfers over few pairs of signatures (an all-pairs step of 64 groups of
            # 256: 4.2 million over 4,096): each pair's first transfer by marking its cell,
            # not by sorting them all; cells run in the keys' order (key = a << 32 | b,
            # cell = a * S + b, b < S)
            firsts = np.full(S * S, len(miss), dtype=np.int64)
            np.minimum.at(firsts, cell[miss], np.arange(len(miss)))
            ucell = np.flatnonzero(firsts < len(miss))
            uk, first, inv = (ucell // S << 32) | (ucell % S), firsts[ucell], None
        else:
            mk = (ss[miss] << 32) | sd[miss] if key is None else key[miss]
            uk, first, inv = np.unique(mk, return_index=True, return_inverse=True)
        u = self._pair_fields(uk, src[miss[first]], dst[miss[first]])
        # merge the new pairs into the sorted table: where each new and old row goes
        new_at = np.searchsorted(known, uk) + np.arange(len(uk))
        old = np.ones(len(known) + len(uk), dtype=bool)
        old[new_at] = False
        merged = {}
        for k in TRANSFER_FIELDS:   # each new column dropped once merged (4.1 million
            new = u.pop(k)          # pairs: 33 MB a column, not all eight held twice)
            col = np.empty(len(old), dtype=new.dtype)
            col[new_at], col[old] = new, self._known_fields[k]
            merged[k] = col
            del new, col
        keys = np.empty(len(old), dtype=np.int64)
        keys[new_at], keys[old] = uk, known
        self._known_keys, self._known_fields = keys, merged
        if dense:
            self._index_known(S)
            return self._known_index[cell]
        if hit is not None:
            at[hit] = np.flatnonzero(old)[at[hit]]  # old rows moved down by the new ones
        at[miss] = new_at[inv.ravel()]
        return at

    def _index_known(self, S: int) -> None:
        """Point the square index of signature pairs (``S`` signatures) at the table."""
        index = np.full(S * S, -1, dtype=np.int64)
        keys = self._known_keys
        index[(keys >> 32) * S + (keys & 0xFFFFFFFF)] = np.arange(len(keys))
        self._known_index = index

    def _hops_and_pieces(self, src, dst, d, on):
        """First/last-hop entries and piece entries of templated transfers ``on``:
        ``(hop transfer, hop link, hop weight, piece transfer, piece id)``."""
        every = len(on) == len(src)   # every transfer templated (on is 0, 1, ...): no gathers
        gpus, rows = d.pop("_gpus", None), d.pop("_rows", None)   # _describe's
        if rows is not None and every and len(rows[1]) > 48 and len(rows[0]["kind"]) <= len(on):
            out = self._hops_and_pieces_rows(*rows, *gpus, on)
            if out is not None:
                return out
        if rows is not None:  # the fields the general way reads, per transfer
            for k in ("head", "tail", "l1", "l2"):
                d[k] = rows[0][k][rows[1]]
        del rows
        if every and gpus is not None:
            gs, gd = gpus
            del gpus
        else:
            gs = self._gidx[src if every else src[on]]
            gd = self._gidx[dst if every else dst[on]]
        if len(on) <= 48:  # few transfers: plain loops over cached lists beat numpy calls
            return self._hops_and_pieces_small(on, gs, gd, d)
        pick = (lambda a: a) if every else (lambda a: a[on])  # noqa: E731
        one = self._one_port_hops(on, gs, gd, pick(d["head"]), pick(d["tail"]))
        if one is not None:
            del gs, gd   # before the pieces' arrays (33 MB each in a large step)
            pi, po = self._pieces_of(pick(d["l1"]), pick(d["l2"]), on)
            return (*one, pi, po)
        ptr, spos = self._specs_pos.arrays
        sw = self._specs_w.arrays[1]
        hop_i, hop_l, hop_w = [], [], []
        links = self._port_links
        for flip, g, spec in ((0, gs, pick(d["head"])), (1, gd, pick(d["tail"]))):
            # each transfer's pattern's entries in turn (flat: a pattern spread over 2,000
            # ports padded every transfer's row to 2,000)
            first, count = ptr[spec], ptr[spec + 1] - ptr[spec]
            at = np.repeat(first - (np.cumsum(count) - count), count) + np.arange(count.sum())
            hop_i.append(np.repeat(on, count))
            hop_l.append(links[self._port_index(np.repeat(g, count), spos[at])] ^ flip)
            hop_w.append(sw[at])
        pi, po = self._pieces_of(pick(d["l1"]), pick(d["l2"]), on)
        return np.concatenate(hop_i), np.concatenate(hop_l), np.concatenate(hop_w), pi, po

    def _one_port_hops(self, on: np.ndarray, gs: np.ndarray, gd: np.ndarray,
                       head: np.ndarray, tail: np.ndarray,
                       at: np.ndarray | None = None) -> tuple | None:
        """The two hops' ``(transfer, link, weight)`` entries of transfers ``on`` from GPU
        indices ``gs`` to ``gd``, first hops then last hops, written in place, on fabrics
        whose patterns have one port each (fat trees, leaf-spines; else None). ``head`` and
        ``tail`` are each transfer's first- and last-hop pattern or, given ``at``, each
        known row's, transfer ``t`` taking row ``at[t]`` (a row's port and weight are then
        worked out once and gathered; a row of pattern -1, never in ``at``, wraps to the
        last, unused)."""
        if not self._specs_one:
            return None
        sp, wcol = self._specs_pos.arrays[1], self._specs_w.arrays[1]   # one a pattern
        n = len(on)
        hop_i = np.empty(2 * n, dtype=np.int64)
        hop_l = np.empty(2 * n, dtype=np.int64)
        hop_w = np.empty(2 * n)
        hop_i[:n] = on
        hop_i[n:] = on
        links, table = self._port_links, self._port_table()
        for half, g, spec in ((slice(0, n), gs, head), (slice(n, 2 * n), gd, tail)):
            if sp.any() or table is None:
                port = sp[spec] if at is None else sp[spec].take(at)
                port += g * table.shape[1] if table is not None else self._gport_ptr[g]
                np.take(links, port, out=hop_l[half], mode="wrap")
                del port
            else:   # the first port everywhere
                np.take(table[:, 0], g, out=hop_l[half], mode="wrap")
            if half.start:   # the last hops: the links down from the switches
                np.bitwise_xor(hop_l[half], 1, out=hop_l[half])
            if at is None:
                np.take(wcol, spec, out=hop_w[half], mode="wrap")
            else:
                np.take(wcol[spec], at, out=hop_w[half], mode="wrap")
        return hop_i, hop_l, hop_w

    def _hops_and_pieces_rows(self, rows: dict, at: np.ndarray, gs: np.ndarray,
                              gd: np.ndarray, on: np.ndarray) -> tuple | None:
        """:meth:`_hops_and_pieces` of every transfer (all templated), transfer ``t`` routed
        as row ``at[t]`` of the table of known signature pairs ``rows``, from ``gs[t]`` to
        ``gd[t]`` (GPU indices; ``on``: 0, 1, ...), for fabrics whose patterns have one
        port each (fat trees, leaf-spines: else None). What depends on the row alone (port,
        weight, the pieces of the row's two lists) is worked out once per row and gathered
        per transfer, not looked up through each transfer's patterns and lists (the same
        entries)."""
        one = self._one_port_hops(on, gs, gd, rows["head"], rows["tail"], at)
        if one is None:
            return None
        hop_i, hop_l, hop_w = one
        del gs, gd   # before the pieces' arrays (33 MB each in a large step)
        lists = self._lists.table
        if 4 * len(rows["l1"]) > len(at) and 2 * lists.shape[1] <= _PADDED_PIECES:
            # a table of about as many rows as transfers (a SuperPOD's all-pairs step:
            # every GPU signed apart, 4.1 million rows for 4.1 million transfers, lists of
            # one piece): each transfer's two lists side by side, the padding dropped: the
            # same entries in the same order, without every row's pieces worked out and
            # kept (0.5 GB more at the step's peak, 0.1 GB kept after it)
            table = np.concatenate([lists[rows["l1"][at]], lists[rows["l2"][at]]], axis=1)
            valid = table >= 0
            return hop_i, hop_l, hop_w, np.repeat(on, valid.sum(axis=1)), table[valid]
        hit = self._row_pieces
        if hit is None or hit[0] is not rows:   # a table not seen before: its rows' pieces
            # (a pairwise all-to-all's 255 steps of 16,384 transfers look up one table)
            table = np.concatenate([lists[rows["l1"]], lists[rows["l2"]]], axis=1)
            valid = table >= 0
            flat, count = table[valid], valid.sum(axis=1)   # each row's pieces, in order
            hit = self._row_pieces = (rows, flat, np.cumsum(count) - count, count)
        _, flat, first, count = hit
        pi, po = self._repeat_pieces(flat, first, count, at, on)
        return hop_i, hop_l, hop_w, pi, po

    @staticmethod
    def _repeat_pieces(flat: np.ndarray, first: np.ndarray, count: np.ndarray,
                       which: np.ndarray, on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(transfer, piece)`` entries of transfers ``on``, transfer ``on[t]`` taking the
        ``count[which[t]]`` pieces of ``flat`` (piece ids, >= 0) from ``first[which[t]]``."""
        width = int(count.max()) if len(count) else 0
        if 0 < width <= _PADDED_PIECES and len(which) >= 4 * len(count):
            # few pieces a row (2 in fat trees and leaf-spines): each row's pieces padded
            # with -1 to ``width``, gathered per transfer and the padding dropped: the same
            # entries in the same order, in a third fewer passes over them (a large step's
            # 4.2 million transfers, 7.3 million entries: 79 -> 47 ms)
            slot = np.arange(width)
            have = slot < count[:, None]
            padded = np.where(have, flat.take(np.where(have, first[:, None] + slot, 0)), -1)
            entries = padded.take(which, axis=0)
            return np.repeat(on, count.take(which)), entries[entries >= 0]
        n = count.take(which)
        nz = np.flatnonzero(n) if not count.all() else None
        fw = first.take(which)   # each transfer's first entry in flat
        if nz is not None:  # transfers with pieces only
            n, fw, on = n[nz], fw[nz], on[nz]
        total = int(n.sum())
        if not total:
            return on[:0].copy(), flat[:0].copy()
        # positions in flat of every entry: 1 past the last within a transfer's run, and
        # at each transfer's first entry, a jump to its pieces in flat (a running sum)
        pos = np.ones(total, dtype=np.int64)
        starts = np.cumsum(n)
        starts -= n
        jump = fw[1:] - fw[:-1]
        jump -= n[:-1] - 1
        pos[starts[1:]] = jump
        del starts, jump
        pos[0] = fw[0]
        np.cumsum(pos, out=pos)
        return np.repeat(on, n), flat[pos]

    def _pieces_of(self, l1: np.ndarray, l2: np.ndarray, on: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
        """The pieces of transfers ``on`` whose piece lists are ``l1`` and ``l2``: ``(transfer,
        piece)`` entries, transfer by transfer, each ``l1``'s pieces then ``l2``'s. Made per
        distinct ``(l1, l2)`` and repeated: a step has millions of transfers but few pairs
        of lists, and the lists' table is as wide as the longest list (the padded rows of
        every transfer, masked, were most of a large step's time and memory)."""
        lists = self._lists.table
        n_lists = len(lists)
        # the lists that occur, numbered in order (by marking: no sort), and pairs of them
        used1, used2 = np.zeros(n_lists, dtype=bool), np.zeros(n_lists, dtype=bool)
        used1[l1] = True
        used2[l2] = True
        ids1, ids2 = np.flatnonzero(used1), np.flatnonzero(used2)
        n2 = len(ids2)
        rank = np.zeros(n_lists, dtype=np.int64)
        rank[ids1] = np.arange(len(ids1)) * n2
        pair = rank[l1]
        rank[:] = 0
        rank[ids2] = np.arange(n2)
        pair += rank[l2]
        cells = len(ids1) * n2
        if cells <= 4 * len(pair) + 1024:   # pairs numbered by a dense index
            seen = np.zeros(cells, dtype=bool)
            seen[pair] = True
            kinds = np.flatnonzero(seen)
            number = np.zeros(cells, dtype=np.int64)
            number[kinds] = np.arange(len(kinds))
            which = number[pair]
        else:
            kinds, which = np.unique(pair, return_inverse=True)
            which = which.ravel()
        ki, kj = np.divmod(kinds, n2)
        kinds1, kinds2 = ids1[ki], ids2[kj]
        rows = np.concatenate([lists[kinds1], lists[kinds2]], axis=1)
        valid = rows >= 0
        flat, count = rows[valid], valid.sum(axis=1)   # each pair's pieces, in order
        return self._repeat_pieces(flat, np.cumsum(count) - count, count, which, on)

    def _hops_and_pieces_small(self, on, gs, gd, d):
        specs, lists = self._spec_py, self._list_py
        up, down = self._port_rows(gs), self._port_rows(gd, down=True)
        hi, hl, hw, pi, po = [], [], [], [], []
        rows = zip(on.tolist(), d["head"][on].tolist(), d["tail"][on].tolist(),
                   d["l1"][on].tolist(), d["l2"][on].tolist(), up, down, strict=True)
        out = (hi, hl, hw, pi, po)
        for t, h, tl, l1, l2, u, dn in rows:
            add_template(out, specs[h], specs[tl], lists[l1] + lists[l2], t, u, dn)
        return (np.array(hi, dtype=np.int64), np.array(hl, dtype=np.int64),
                np.array(hw, dtype=float), np.array(pi, dtype=np.int64),
                np.array(po, dtype=np.int64))
