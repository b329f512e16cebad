"""The NCCL tuner's side of a collective cost model: which (algorithm, protocol) a tuner
chooses for one communicator, and what NCCL's own tuner reads of the group's topology.

:class:`TunedChoices` is a mixin of :class:`~netmodel.collectives.model.FabricCostModel`
(the methods stay on the model): :meth:`TunedChoices.tuned` says whether a tuner chooses,
:meth:`TunedChoices.tuner_row` and :meth:`TunedChoices.tuner_pair` ask it for one
communicator (alone, after failures or beside others), and :meth:`TunedChoices.nccl_graph`
stands for NCCL's graph search (its ring and tree graphs' busbw and channel caps, its NVLS
graph), which the emulated tuner :class:`~netmodel.collectives.tuner_plugin.NcclTuner`
reads. The tuners themselves are :mod:`netmodel.collectives.tuner_plugin`'s.

>>> from topologies import build
>>> from netmodel.collectives.model import FabricCostModel
>>> m = FabricCostModel(build("rail-optimized:domains=2"), tuner="nccl")
>>> m.tuned(), m.tuner_nodes(m.group(16)), m.nccl_graph(m.group(16)).channels
(True, 2, 16)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator

import numpy as np

from netmodel.collectives.algorithms import NotApplicable
from netmodel.collectives.cost import GroupCut

__all__ = ["TunedChoices"]


class TunedChoices:
    """The tuner's choice on a :class:`~netmodel.collectives.model.FabricCostModel` (a
    mixin: the methods stay on the model).

    Reads the model's ``tuner``, ``algorithm``, ``graph``, ``calibration``, ``group``,
    ``compiled`` and keeps there the tuner's answers (``_tuner_seen``) and the NCCL graphs
    of its groups (``_nccl_graphs``).
    """

    def tuned(self, algorithm: str | None = None) -> bool:
        """Whether the model's tuner chooses for ``algorithm`` (the model's if None): a
        tuner is set and the choice is ``auto``."""
        return self.tuner is not None and \
            (self.algorithm if algorithm is None else algorithm) == "auto"

    def _tuner_picks(self, op, group, cands, times, n) -> Iterator[tuple[int, int]]:
        """``(size index, candidate index)`` where the tuner chooses: the fastest line of its
        (algorithm, protocol), skipping pairs no candidate runs at that size, as the plugin
        skips those NCCL marks unavailable. A group's nodes are its scale-up domains."""
        pairs = [(c[0], c[1]) for c in cands]
        nodes = self.tuner_nodes(group)
        for j, size in enumerate(np.asarray(n, dtype=float).ravel()):
            i = self.tuner_row(op, float(size), len(group), nodes, pairs, times[:, j], group)
            if i is not None:
                yield j, i

    def tuner_row(self, op: str, nbytes: float, ranks: int, nodes: int, pairs,
                  col: np.ndarray, group: tuple[Hashable, ...] | None = None) -> int | None:
        """The line the tuner chooses for one communicator (``op`` of ``nbytes`` on
        ``ranks`` ranks over ``nodes`` nodes): the fastest line of its (algorithm, protocol)
        (:meth:`tuner_pair`), skipping pairs no line runs; None where it leaves the choice
        to auto. ``pairs``: each line's ``(algorithm, protocol)``; ``col``: each line's time
        (``inf`` where it does not run). Every costing of a communicator chooses so, alone
        (:meth:`~netmodel.collectives.model.FabricCostModel.chosen`) or beside the others (:func:`~netmodel.collectives.
        concurrent_choice.own_times`). ``group``: the communicator's GPUs, for a tuner that
        reads its topology (:meth:`nccl_graph`; None: the group the model places for
        ``ranks`` GPUs, as concurrent costing asks)."""
        runs = np.isfinite(col).tolist()
        ok = frozenset(q for q, r in zip(pairs, runs, strict=True) if r)
        pick = self.tuner_pair(op, float(nbytes), ranks, nodes, ok, group)
        if pick is None:
            return None
        return min((i for i, q in enumerate(pairs) if q == pick), key=lambda i: col[i])

    def tuner_nodes(self, group: tuple[Hashable, ...]) -> int:
        """The nodes the tuner counts for ``group``: its scale-up domains."""
        from netmodel.collectives.group_domains import domains

        return len(domains(self.graph, group))

    def tuner_pair(self, op: str, nbytes: float, ranks: int, nodes: int,
                   ok: frozenset, group: tuple[Hashable, ...] | None = None
                   ) -> tuple[str, str] | None:
        """The tuner's ``(algorithm, protocol)`` for one communicator (``op`` of ``nbytes``
        on ``ranks`` ranks over ``nodes`` nodes) among the pairs ``ok`` that run there, as
        the plugin skips those NCCL marks unavailable; None where it leaves the choice to
        auto. Every costing of one instance asks it (one group alone, after failures, or
        every group at once: each communicator is tuned apart). NCCL's own tuner
        (:class:`~netmodel.collectives.tuner_plugin.NcclTuner`) also reads the group's
        :meth:`nccl_graph` (``group`` None: the group the model places for ``ranks``)."""
        graph = None
        if getattr(self.tuner, "needs_graph", False) and op == "all-reduce":
            graph = self.nccl_graph(self.group(int(ranks)) if group is None else group)
        key = (op, float(nbytes), int(ranks), int(nodes), ok, graph)
        seen = self._tuner_seen
        if key not in seen:
            avail = (lambda a, p: (a, p) in ok)   # noqa: E731
            seen[key] = self.tuner.choose(op, float(nbytes), int(ranks), int(nodes), avail) \
                if graph is None else \
                self.tuner.choose(op, float(nbytes), int(ranks), int(nodes), avail,
                                  graph=graph, pairs=ok)
        return seen[key]

    def nccl_graph(self, group: tuple[Hashable, ...]):
        """What NCCL's tuner reads of ``group``'s topology
        (:class:`~netmodel.collectives.tuner_plugin.NcclGraph`), as the model stands for
        NCCL's graph search, or None where the ring cannot run: its ``busbw`` is the model's
        own ring all-reduce busbw on ``group`` at large sizes under Simple (bytes/s:
        ``2 (n - 1) / n`` over the steady seconds per byte; NCCL's ring and tree graphs
        share their channels' speed, so the tree starts from the same), its channels the
        calibration's, a tree's caps and the ring's LL128 cap the model's tree channels
        (one per NIC rail, NCCL's ring and tree graph channels across nodes; none without
        rails, as the model's own tree) x the generation's per-channel caps for the group's
        node count, on one node LL's cap the generation's LL bandwidth factor (NCCL's
        llMaxBw over its NVLink rate) x ``busbw``, and whether NCCL enables LL128 on the
        GPU in the calibration's release (:attr:`~netmodel.collectives.calibration.Calibration.ll128_enabled`),
        and its NVLS graph (:meth:`_nvls_graph`)."""
        from netmodel.collectives.tuner_plugin import NcclGraph

        cache = self.__dict__.setdefault("_nccl_graphs", {})
        if group in cache:
            return cache[group]
        cal = self.calibration
        out = None
        n = len(group)
        try:
            ring = self.compiled("all-reduce", "ring", group)
            b = ring.line_parts(cal.protocol("Simple"), cal)[-1][1]
        except (NotApplicable, GroupCut):
            b = 0.0
        if n > 1 and b > 0 and math.isfinite(b):
            channels = 0
            try:
                tree = self.compiled("all-reduce", "tree", group)
                channels = max((s.tree_channels for s in tree.steps if s.member), default=0)
            except (NotApplicable, GroupCut):
                pass
            nodes = self.tuner_nodes(group)
            idx = min(nodes, 3) - 1

            def cap(table) -> float:
                return channels * table[idx] if channels and table else 0.0

            busbw = 2 * (n - 1) / n / b
            out = NcclGraph(self._ring_graph_busbw(busbw, nodes), int(cal.channels),
                            cap(cal.tree_channel_bandwidth),
                            cap(cal.tree_ll128_channel_bandwidth),
                            cal.protocol("LL").bandwidth_factor * busbw if nodes == 1 else 0.0,
                            cap(cal.ring_ll128_channel_bandwidth), cal.ll128_enabled,
                            **self._nvls_graph(group, nodes))
        cache[group] = out
        return out

    def _ring_graph_busbw(self, busbw: float, nodes: int) -> float:
        """NCCL's ring graph busbw on one node (``nChannels x bwIntra``) for the model's
        ring busbw ``busbw``: NCCL's search (NVIDIA/nccl src/graph/search.cc) lays channels
        of one speed of its array, as many as fit and at most ``ring_max_channels``, and
        keeps the most ``channels x speed``, so the graph holds ``max(min(floor(busbw / s),
        ring_max_channels) x s)`` over the intra speed array of the GPUs' generation (the
        data file's ``nvls_speeds``: 360 GB/s on 8 H100 for the links' 370.8, 720 on 8 B200
        for 721.8); ``busbw`` as it is across nodes or for a generation without an array
        (A100's generic array gives its 240 unchanged)."""
        from netmodel.collectives.tuner_plugin import get_tuner

        spec = get_tuner("nccl").spec
        speeds = spec.get("nvls_speeds", {}).get(self.calibration.generation)
        if nodes != 1 or speeds is None:
            return busbw
        most = int(spec["ring_max_channels"])
        return max(min(math.floor(busbw / s * (1 + 1e-9)), most) * s for s in speeds["intra"])

    def _nvls_graph(self, group: tuple[Hashable, ...], nodes: int) -> dict:
        """The NVLS graph NCCL's search finds for ``group`` over ``nodes`` scale-up domains
        (:class:`~netmodel.collectives.tuner_plugin.NcclGraph`'s ``nvls_*`` fields; none
        where NCCL has no NVLS there): ``min(ranks a domain, 32)`` heads, each GPU's NVLink
        rate into its domain's reducing switches x the scale-up efficiency (NCCL's per-link
        rate) and, across domains, the slowest GPU's fastest link out of its domain (its
        NIC) for :func:`~netmodel.collectives.tuner_plugin.nvls_search`, over the data
        file's speed arrays of the GPUs' generation (none: no NVLS, as on A100); the
        generation's NVLS efficiency and NVLSTree cap; NVLSTree's size correction on the
        data file's generations where every GPU's host is of an architecture the data file
        lists (x86, :func:`~netmodel.collectives.tuner_plugin.nvls_tree_corrected`: not on a
        Grace-hosted GB200); whether the calibration's
        NCCL release prices them with the formula of 2.27 and older (``nvls_legacy``)."""
        from netmodel.collectives.calibration_generations import parse_release
        from netmodel.collectives.group_domains import domains
        from netmodel.collectives.in_network import domain_planes
        from netmodel.collectives.tuner_plugin import get_tuner, nvls_search, nvls_tree_corrected

        spec = get_tuner("nccl").spec
        cal = self.calibration
        speeds = spec.get("nvls_speeds", {}).get(cal.generation)
        doms = domains(self.graph, group)
        planes = None if speeds is None else domain_planes(self.graph, doms)
        if planes is None or len({len(d) for d in doms}) != 1:
            return {}
        adj = self.graph._adj
        link = min(sum(adj[g][s]["bandwidth"] for s in pl)
                   for d, pl in zip(doms, planes, strict=True) for g in d)
        nic = None
        if nodes > 1:
            data = self.graph._node
            nic = min(max((adj[g][s]["bandwidth"] for s in adj[g] if s not in pl
                           and data[s].get("kind") == "switch"), default=0.0)
                      for d, pl in zip(doms, planes, strict=True) for g in d)
        heads = min(len(doms[0]), int(spec["nvls_max_heads"]))
        intra, inter = nvls_search(link * cal.scaleup_efficiency, heads,
                                   speeds["intra" if nodes == 1 else "inter"], nic)
        if intra <= 0:
            return {}
        table = cal.nvls_tree_channel_bandwidth
        gpus = {self.graph._node[g].get("gpu") for g in group}
        return {"nvls_channels": heads, "nvls_bw_intra": intra, "nvls_bw_inter": inter,
                "nvls_efficiency": cal.in_network.bandwidth_factor,
                "nvls_tree_cap": table[min(nodes, 3) - 1] if table else 0.0,
                "nvls_tree_correction": cal.generation in spec[
                    "nvls_tree_correction_generations"] and all(
                    nvls_tree_corrected(g, self.graph) for g in gpus),
                "nvls_legacy": cal.release is not None
                and cal.release <= parse_release(spec["nvls_legacy_until"])}
