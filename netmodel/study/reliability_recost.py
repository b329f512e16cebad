"""The re-costing of a reliability cluster's instances once parts failed, and the effect of
one failure worked out by it (the module doc of :mod:`netmodel.study.reliability_cluster`).

An instance is re-costed on a graph made from the cell (where GPUs forward no traffic, only
its members and every switch and OCS), with spares added and the failed parts removed or
thinned (:meth:`Recosting.recost_graph`), by the cluster's
:class:`~netmodel.study.instance_cost.InstanceCosting`: in the healthy configuration, or
re-balanced to the largest batch that meets the SLO. A failure's effect
(:meth:`Recosting.evaluate`) is worked out from its local effect by re-costing the instances
it touches. :class:`Recosting` is a mixin of
:class:`~netmodel.study.reliability_cluster.Cluster`, which gives it the cell (``graph``),
``scenario``, ``model``, ``workload``, ``gpu``, ``slo``, ``options``, ``calibration``,
``best``, ``instances``, ``healthy``, ``_kinds`` and the cell's connected parts
(``_part_labels``, ``_gpu_at``, ``_csr``).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from functools import cached_property
from typing import TYPE_CHECKING

import networkx as nx

from compute.errors import UserError
from netmodel.study.instance_cost import InstanceCosting
from netmodel.study.placed_graph import wired_gpus
from topologies.degrade import degrade
from topologies.failure_domains import nic_heirs
from topologies.graph_ops import copy_graph, frozen_attrs, largest_part

if TYPE_CHECKING:
    from compute.results import InferenceResult
    from topologies.failure_domains import Component

__all__ = ["Recosting"]


class Recosting:
    """The re-costing of a cluster's instances on the graphs failures leave, and the effect
    of one failure worked out by it (a mixin of
    :class:`~netmodel.study.reliability_cluster.Cluster`, whose :meth:`~netmodel.study.
    reliability_cluster.Cluster.effects` evaluates each symmetry class's representative
    with it)."""

    # ------------------------------------------------------------------ costing
    @cached_property
    def costing(self) -> InstanceCosting:
        """The re-costing of one instance on graphs of this cluster
        (:class:`~netmodel.study.instance_cost.InstanceCosting`): given the healthy
        configuration, whether GPUs forward traffic, the switches' part and the cell's
        validity, and told of each graph :meth:`recost_graph` makes; it keeps its memos."""
        return InstanceCosting(scenario=self.scenario, model=self.model, gpu=self.gpu,
                               workload=self.workload, slo=self.slo, options=self.options,
                               calibration=self.calibration, best=self.best,
                               direct=self._direct, switches=lambda: self._switches,
                               cell_valid=lambda: self._cell_valid)

    def instance_result(self, graph: nx.Graph,
                        members: Collection[Hashable]) -> InferenceResult | None:
        """The instance ``members`` costed alone on ``graph`` (a :meth:`recost_graph`)
        in the healthy configuration and batch: an InferenceResult, or None when its members
        cannot all reach each other
        (:meth:`~netmodel.study.instance_cost.InstanceCosting.instance_result`)."""
        return self.costing.instance_result(graph, members)

    def rebalanced(self, graph: nx.Graph,
                   members: Collection[Hashable]) -> InferenceResult | None:
        """The instance ``members`` on ``graph`` (a :meth:`recost_graph`) re-balanced to
        meet the SLO: at the largest batch up to the healthy one whose step meets it and
        fits; None when its members cannot all reach each other or no batch meets the SLO
        (:meth:`~netmodel.study.instance_cost.InstanceCosting.rebalanced`)."""
        return self.costing.rebalanced(graph, members)

    # ------------------------------------------------------------------ graphs
    @cached_property
    def _direct(self) -> bool:
        """Whether GPUs forward traffic (then instances are costed on the whole cell rather
        than on their members and the switches): GPUs wired to GPUs, or a GPU holding a NIC
        its server's other GPUs share (:func:`~topologies.failure_domains.nic_heirs`:
        ``rail-optimized`` with fewer ``nics_per_server`` than GPUs), which forwards their
        traffic to the network. Costed on its members and the switches, an instance of
        such GPUs whose NIC holder is not a member had no way out of its server: spread
        over 2 x 8 H100 with one NIC a server, 3 of 4 TP-4 instances served nothing
        healthy."""
        return wired_gpus(self.graph) or bool(nic_heirs(self.graph))

    @cached_property
    def _switches(self) -> nx.Graph:
        """The cell without its GPUs (every switch and OCS, their links), for
        :meth:`recost_graph`."""
        g = self.graph
        return g.subgraph([n for n, k in g.nodes(data="kind") if k != "gpu"]).copy()

    @cached_property
    def _cell_valid(self) -> bool:
        """Whether the cell, a plain ``nx.Graph`` without an OCS, passes
        :func:`~topologies.schema.validate` (connectivity not required); checked once.
        :meth:`recost_graph` makes a graph from it by removing failed parts alone (no spare
        added, no link thinned) that then passes too (:attr:`costing` trusts it):
        every node, link and graph attribute left is the cell's (``spec`` emptied, the
        builder's keys dropped), ``gpus`` is recounted, ``device`` labels are given to
        every GPU of a server or kept, each switch's cables only fall, and a torus's
        ``dims`` allows GPUs and links missing. Without an OCS: one removed would leave a
        circuit's ``via`` naming it, or ``ocs_cabling`` more cables than ports. The cell
        is not to be changed once costed (as every cached part of it)."""
        from topologies.schema import validate

        g = self.graph
        if type(g) is not nx.Graph or "ocs" in self._kinds.values() \
                or "ocs_cabling" in g.graph:
            return False
        if g is self.scenario.graph:   # fabric_scenario checked it (connected too)
            return True
        try:
            validate(g, check_connected=False)
        except UserError:
            return False   # each graph made from it is checked, as before
        return True

    def recost_graph(self, comps: Iterable[Component], members: Iterable[Hashable],
                     spares: Iterable[tuple[str, dict, list[tuple[Hashable, dict]]]] = (),
                     ) -> nx.Graph:
        """A graph to cost ``members`` on: the cell (or, where GPUs forward no traffic, only
        the members and every switch and OCS) with ``spares`` (a
        :func:`~topologies.spares.plan_spares` plan) added and ``comps`` failed."""
        comps, members = tuple(comps), tuple(members)
        if self._direct:
            return self._direct_graph(comps, members, tuple(spares))
        g = self.graph
        # the switches' part once (_switches), copied, and the members wired into it:
        # the graph g.subgraph(switches + members).copy() gave, without filtering the
        # whole cell's adjacency through a subgraph view for every instance costed
        out = self._switches.copy()
        ms = [m for m in members if m in g]
        out.add_nodes_from((m, g.nodes[m]) for m in ms)
        adj = g.adj
        out.add_edges_from((m, v, d) for m in ms for v, d in adj[m].items() if v in out)
        _add_spares(out, spares)
        out = degrade(out, comps, copy=False)
        # what the graph was made from, for the costing's short way to its canonical
        # form (for this graph object as returned: it is not to be changed before costing)
        self.costing.made_from_switches(out, comps, members, bool(spares))
        return out

    def _recost(self, comps: tuple, members: tuple) -> tuple:
        """(:meth:`rebalanced`, whether :meth:`instance_result` is None: its members cut
        apart) of ``members`` on the :meth:`recost_graph` of ``comps``. Where GPUs forward
        traffic, answers the costing already holds for the graph the same failures make
        (:meth:`~netmodel.study.instance_cost.InstanceCosting.known_made`: a gpu-package
        failure's graph is its gpu-die's) are taken without making the graph (a copy of a
        131,072-GPU torus took 0.3-0.6 s)."""
        if self._direct:
            known = self.costing.known_made(_made(comps, ()), members)
            if known is not None:
                return known
        g = self.recost_graph(comps, members)
        r = self.rebalanced(g, members)
        return r, r is None and self.instance_result(g, members) is None   # memoized

    def _direct_graph(self, comps: tuple, members: tuple, spares: tuple) -> nx.Graph:
        """:meth:`recost_graph` where GPUs forward traffic: the whole cell with ``spares``
        added and ``comps`` failed, whatever the members. The cell, the spares and the
        failures it was made from name the graph (the same ones make the same graph), for
        the costing's key
        (:meth:`~netmodel.study.instance_cost.InstanceCosting.made_from_cell`) instead of
        every node and link of the cell; the graph last made is given again for the same name (the instances one
        failure touches are costed one after another on it; costing changes no graph),
        not copied from the cell again (each copy of a 131,072-GPU torus took 0.5 s). The
        last costing's router (tens of MB on such a cell) is freed when it is dropped: its
        cone tables hold no router (:meth:`~netmodel.collectives.updown.UpDown.bind`), so
        no reference cycle waits for the cyclic collector (that cycle grew the peak
        1.6 -> 2.2 GB until a gc.collect(1) here collected it by hand)."""
        made = _made(comps, spares)
        last = self.__dict__.get("_last_direct")
        if last is not None and last[2] == made:
            out = last[0]
        else:   # the last graph (and the costing's router of it) freed before the copy
            self.__dict__.pop("_last_direct", None)
            last = None
            self.costing.release()
            # where the failures only remove parts (no link thinned, no NIC handed on, no
            # circuit or fibre dropped, no device labelled, no spare added: degrade then
            # changes no attribute dict), the copy shares the cell's attribute dicts
            # (copy_graph's attrs=False; costing changes no graph)
            out = copy_graph(self.graph, attrs=bool(spares) or not self._removal_only(comps))
            _add_spares(out, spares)
            out = degrade(out, comps, copy=False)
        self.__dict__["_last_direct"] = (out, members, made)
        self.costing.made_from_cell(out, members, made)
        return out

    def _removal_only(self, comps: tuple) -> bool:
        """Whether :func:`~topologies.degrade.degrade` of the cell by ``comps``
        only removes nodes and links and sets graph attributes: no link thinned, no NIC
        handed on, no fibre, a plain ``nx.Graph`` without circuits, and every GPU of a
        ``server`` label with its ``device`` already
        (:func:`~topologies.degrade.keep_devices` labels none)."""
        if any(c.scaled or c.handed or c.fibres for c in comps):
            return False
        ok = self.__dict__.get("_plain_cell")
        if ok is None:
            g = self.graph
            ok = self.__dict__["_plain_cell"] = type(g) is nx.Graph \
                and "circuits" not in g.graph and all(
                    "device" in d for d in g._node.values()
                    if d.get("kind") == "gpu" and "server" in d)
        return ok

    # the names other modules (reliability_spares) read, over the private ones above
    @property
    def direct(self) -> bool:
        """Whether GPUs are wired to GPUs in the cell (the cached ``_direct``)."""
        return self._direct

    @property
    def switches(self) -> nx.Graph:
        """The cell without its GPUs, every switch and OCS and their links (shared: do not
        modify)."""
        return self._switches

    # ------------------------------------------------------------------ effects
    def evaluate(self, comp: Component, lost, wired, touched) -> dict:
        """The effect of failure ``comp`` worked out from its local effect
        (:meth:`~netmodel.study.reliability_footprint.Footprints.local`)."""
        return self._evaluate(comp, lost, wired, touched)

    def _evaluate(self, comp: Component, lost, wired, touched) -> dict:
        # the cell's connected parts as an array (main_part and the GPUs off it, by
        # position: a pass in Python over a 16,384-GPU cell per failure took 40 s of an
        # availability with spares per group)
        labels = self._part_labels([comp])[1]
        cut = largest_part(labels, self._gpu_at)[1]   # the GPUs off main_part's part
        at = self._csr.index
        down, slo_down, cut_down, slow, members, rebalanced = [], 0, 0, 0.0, [], 0
        slowed = []
        for i in sorted(touched):
            inst = self.instances[i]
            own = self.healthy[i]
            if own is None:   # serves nothing healthy: a failure takes nothing from it
                continue
            gone = [m for m in inst if m in lost]
            if gone:
                down.append(i)
                members.append(len(gone))
                continue
            if len({labels[at[m]] for m in inst}) > 1:
                down.append(i)
                cut_down += 1
                members.append(sum(1 for m in inst if m in wired) or 1)
                continue
            r, apart = self._recost((comp,), inst)
            if r is None:
                down.append(i)
                if apart:
                    cut_down += 1
                else:
                    slo_down += 1
                members.append(sum(1 for m in inst if m in wired))
                continue
            rebalanced += r.batch < own.batch
            loss = 1.0 - r.tokens_per_s / own.tokens_per_s
            if loss > 1e-9:
                slow += loss
                slowed.append((i, loss))
        stopped = sum(1 for n in lost if n not in comp.nodes)
        return dict(gpus_lost=len(lost) - stopped, gpus_disabled=stopped, gpus_cut=cut,
                    instances_down=len(down),
                    slo_down=slo_down, cut_down=cut_down, slow=slow,
                    rebalanced=rebalanced, down_members=tuple(members), down=tuple(down),
                    slowed=tuple(slowed))


def _made(comps: tuple, spares: tuple) -> tuple:
    """What :meth:`Recosting._direct_graph` makes a graph from, as its name: the failures'
    parts and the spares (equal names, equal graphs)."""
    return (tuple((c.nodes, c.edges, c.scaled, c.disabled) for c in comps),
            tuple((name, frozen_attrs(attrs), tuple((n, frozen_attrs(d)) for n, d in edges))
                  for name, attrs, edges in spares))


def _add_spares(graph: nx.Graph, spares) -> None:
    """Add a :func:`~topologies.spares.plan_spares` plan's spares to ``graph``,
    wired to the nodes of theirs it holds."""
    for name, attrs, edges in spares:
        graph.add_node(name, **attrs)
        graph.add_edges_from((name, n, d) for n, d in edges if n in graph)
