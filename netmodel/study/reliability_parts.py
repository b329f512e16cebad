"""Which parts of a reliability cluster's cell stay connected once components fail: each
surviving node's part (:meth:`Partitions.partition`) and the largest part of GPUs
(:meth:`Partitions.main_part`), proven whole by a short search where a failure leaves the
cell in one part (:meth:`Partitions._still_connected`), else labelled whole
(:meth:`~topologies.graph_ops.CellArrays.part_labels`). :class:`Partitions` is a mixin of
:class:`~netmodel.study.reliability_cluster.Cluster`, which gives it the cell (``graph``)
and ``_kinds``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from topologies.failure_domains import handed_labels
from topologies.graph_ops import CellArrays, labels_to_parts

if TYPE_CHECKING:
    from topologies.failure_domains import Component

__all__ = ["SEARCH_LINKS", "Partitions"]

#: The fewest links :meth:`Partitions._still_connected` looks at before it gives up (at
#: least the cell's links / 8): past it the cell is labelled whole, as it is where the
#: failure does cut it apart.
SEARCH_LINKS = 2048


class Partitions:
    """The connected parts of a cluster's cell once components fail (a mixin of
    :class:`~netmodel.study.reliability_cluster.Cluster`)."""

    @cached_property
    def _csr(self) -> CellArrays:
        """The cell as arrays (for connectivity)."""
        return CellArrays(self.graph)

    def partition(self, comps: Iterable[Component]) -> dict:
        """Connected part of every surviving node once ``comps`` failed: ``{node: label}``
        (thinned links still connect; GPUs a component stops are gone, as it degrades;
        shared: do not modify)."""
        last = self._part_labels(comps)
        if last[2] is None:
            last[2] = labels_to_parts(self._csr.nodes, last[1])
        return last[2]

    def _part_labels(self, comps: Iterable[Component]) -> list:
        """``[comps, labels, parts]``: :meth:`partition` by position in the cell's node
        order (:meth:`~topologies.graph_ops.CellArrays.part_labels`, -1 for a node gone),
        and its dict once made (None before). The last answer is given again for the same
        components (the same objects): reliability_spares asks it per instance a failure
        slows (a plane of a 16,384-GPU flat fabric: 1,024 times the whole cell)."""
        comps = tuple(comps)
        last = self.__dict__.get("_last_partition")
        if last is not None and len(last[0]) == len(comps) and all(
                a is b for a, b in zip(last[0], comps, strict=True)):
            return last
        dead = {n for c in comps for n in (*c.nodes, *c.disabled)}
        gone = [e for c in comps for e in c.edges]
        if self._one_part and self._still_connected(dead, gone):
            # the answer the whole-cell labelling gives a cell left in one part: each
            # removed node a part of its own (then -1), every other node the label of the
            # first survivor (parts are numbered by their first node)
            at = self._csr.index
            dead_at = np.fromiter((at[n] for n in dead), np.int64, count=len(dead))
            alive = np.ones(len(self._csr.nodes), dtype=bool)
            alive[dead_at] = False
            labels = np.full(len(alive), int(np.argmax(alive)), dtype=np.int32)
            labels[dead_at] = -1
        else:   # a failed GPU's NIC that others share stays, for them (handed_labels)
            labels = handed_labels(self._csr.part_labels(dead, gone), self._csr.index, comps)
        last = self.__dict__["_last_partition"] = [comps, labels, None]
        return last

    @cached_property
    def _one_part(self) -> bool:
        """Whether the healthy cell is one connected part (where it is not, every failure's
        parts are labelled whole, :meth:`_still_connected` proves nothing)."""
        csr = self._csr
        return bool(len(csr.nodes)) and csr.labels(np.ones(len(csr.lo), dtype=bool))[0] == 1

    def _still_connected(self, dead: set, gone: list) -> bool:
        """Whether a cell that is one part stays one without the nodes ``dead`` and the
        links ``gone``: each part left holds a survivor next to what was removed (the cell
        was connected), so it does iff those survivors meet. A search from all of them at
        once, each joining the one it reaches, stops when they all have met (True), or
        having looked at the larger of :data:`SEARCH_LINKS` and the cell's links / 8
        links, or with nothing left to reach (False: not proven; the cell is labelled
        whole). A failure of one
        GPU of a 16,384-H100 rail-optimized cell (its NVSwitch and rail leaf meet through
        another GPU of the server and a spine) looks at some hundreds of links, where
        labelling the cell takes a pass over its ~50,000."""
        if not dead and not gone:
            return True
        adj = self.graph.adj
        cut = {(u, v) for u, v in gone} | {(v, u) for u, v in gone}
        seeds = [y for x in dead for y in adj[x] if y not in dead]
        seeds += [y for e in gone for y in e if y not in dead]
        seeds = list(dict.fromkeys(seeds))
        if len(seeds) <= 1:
            return bool(seeds)
        owner = {s: i for i, s in enumerate(seeds)}
        parent = list(range(len(seeds)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        apart, budget = len(seeds), max(SEARCH_LINKS, len(self._csr.lo) // 8)
        queue = deque(seeds)
        while queue and budget > 0:
            u = queue.popleft()
            ru = root(owner[u])
            budget -= len(adj[u])
            for w in adj[u]:
                if w in dead or (u, w) in cut:
                    continue
                o = owner.get(w)
                if o is None:
                    owner[w] = ru
                    queue.append(w)
                    continue
                rw = root(o)
                if rw != ru:
                    parent[rw] = ru
                    apart -= 1
                    if apart == 1:
                        return True
        return False

    @cached_property
    def _gpu_at(self) -> np.ndarray:
        """Per node of the cell (:attr:`_csr` order): whether it is a GPU."""
        kinds = self._kinds
        return np.fromiter((kinds[n] == "gpu" for n in self._csr.nodes), bool,
                           count=len(self._csr.nodes))

    def main_part(self, part: dict) -> int | None:
        """The label of the largest connected part of GPUs in ``part`` (a
        :meth:`partition`; the first such part where several are as large)."""
        kinds = self._kinds
        sizes: dict = {}
        for n, k in part.items():
            if kinds[n] == "gpu":
                sizes[k] = sizes.get(k, 0) + 1
        return max(sizes, key=lambda k: sizes[k]) if sizes else None
