"""Re-costing one serving instance on a degraded fabric (what the blast radius asks of
every instance a failure touches).

An instance (its members, in the healthy configuration, TP x PP with EP and attention DP,
at the healthy batch) is costed alone on a graph (a degraded cell, maybe with spares): on
an optical circuit-switched fabric its ring or torus is re-set on the ports that survive
(:func:`~netmodel.study.placed_graph.instance_circuits`), and a collective of fewer GPUs
(an attention group's, a pipeline stage's) on each slice of that many members, on the
instance's one set of circuits (in pipeline stages, its stages' rings and stage links
within its GPUs' ports), as the healthy search costs them
(:func:`~netmodel.study.placed_cost.placed_comm`); the scenario's adjustments are applied;
where GPUs forward no traffic, the members are renamed by their place in the instance
(:func:`~netmodel.study.placed_graph.canonical`), so instances placed alike and hit alike
are one *costing problem* (:func:`~netmodel.study.placed_graph.problem_key`), costed
once. An instance whose step no longer meets the SLO is re-balanced
(:meth:`InstanceCosting.rebalanced`): the largest batch, up to the healthy one, that still
meets it and fits.

An :class:`InstanceCosting` is made by (and held by) a
:class:`~netmodel.study.reliability_cluster.Cluster` (:attr:`~netmodel.study.reliability_cluster.Cluster.costing`):
it is given the cluster's scenario, model, GPU, workload, SLO, options, calibration and
healthy result, whether GPUs forward traffic, and, when first needed, the cell's switches'
part and whether the cell passes :func:`~topologies.schema.validate`; the cluster tells it
the graphs it makes to re-cost on (:meth:`InstanceCosting.made_from_switches`,
:meth:`InstanceCosting.made_from_cell`), and it keeps its memos.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable
from itertools import chain
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from compute.evaluate_one import evaluate
from compute.parallel import Parallelism
from compute.roofline import evaluate_grid
from netmodel.study.placed_cost import GroupComm, InstanceCut, placed_comm
from netmodel.study.placed_graph import (
    canonical,
    instance_circuits,
    ocs_ports_key,
    problem_key,
    unlabelled,
)
from topologies.graph_ops import frozen_attrs

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Slo, Workload
    from compute.results import InferenceResult
    from compute.roofline_options import RooflineOptions
    from netmodel.collectives.calibration import Calibration
    from netmodel.study.scenarios import Scenario

__all__ = ["InstanceCosting"]


class InstanceCosting:
    """The re-costing of one instance of a cluster's healthy configuration (``best``, at
    its batch) on graphs the cluster makes: ``direct``, whether GPUs forward traffic;
    ``switches``, called once when first needed, the cell's switches' part (every switch
    and OCS, their links); ``cell_valid``, called when needed, whether the cell passes
    :func:`~topologies.schema.validate` (see :meth:`_known_valid`; the cluster checks it
    once). It keeps its
    memos (``_costed``, ``_rebalanced``, ``_ocs_problems``, and ``_models``: cost models
    kept for re-balancing) and the graphs last made (:meth:`made_from_switches`,
    :meth:`made_from_cell`)."""

    def __init__(self, *, scenario: Scenario, model: ModelSpec, gpu: GpuSpec,
                 workload: Workload, slo: Slo, options: RooflineOptions,
                 calibration: Calibration, best: InferenceResult, direct: bool,
                 switches: Callable[[], nx.Graph], cell_valid: Callable[[], bool]) -> None:
        self.scenario, self.model, self.gpu = scenario, model, gpu
        self.workload, self.slo, self.options = workload, slo, options
        self.calibration, self.best = calibration, best
        self.parallelism = Parallelism.of(best)
        self.batch = best.batch
        self.direct = direct
        self._switches, self._cell_valid = switches, cell_valid
        self._canonical_switch_part = None
        self._last_problem = None
        self._last_recost = None
        self._last_direct = None
        self._costed: dict = {}
        self._rebalanced: dict = {}
        self._ocs_problems: dict = {}   # _new_problem's on an OCS fabric, by graph and members
        self._models: dict = {}
        self._slice_models: dict = {}
        self._graph_model = None   # (graph, its cost model): the last one made (_cost_model)
        self._greedy = None        # the same for _greedy_model

    def made_from_switches(self, graph: nx.Graph, comps: tuple, members: tuple,
                           spares: bool) -> None:
        """The cluster has just made ``graph`` (where GPUs forward no traffic) from the
        switches' part, the ``members`` wired in, ``comps`` failed and, where ``spares``,
        the spares of a plan added: costing it may take the short way
        (:meth:`_switch_problem`). ``graph`` is not to be changed before it is costed; it is
        kept, so its id is not reused."""
        self._last_recost = (graph, comps, members, spares)

    def made_from_cell(self, graph: nx.Graph, members: tuple, made: tuple) -> None:
        """The cluster has just made ``graph`` (where GPUs forward traffic) to cost
        ``members`` on, from the whole cell, named by ``made`` (the failures and spares it
        was made from: equal names, equal graphs): the costing's key names it by ``made``
        instead of every node and link (:meth:`_new_problem`). ``graph`` is not to be
        changed before it is costed; it is kept, so its id is not reused."""
        self._last_direct = (graph, members, made)

    def known_made(self, made: tuple, members: tuple) -> tuple | None:
        """Where GPUs forward traffic (not on an OCS fabric), what :meth:`rebalanced` and
        :meth:`instance_result` gave ``members`` on a graph made from the cell named
        ``made`` (:meth:`made_from_cell`), if both are known: ``(rebalanced, whether
        instance_result was None)``; None where not (the graph is then made and costed)."""
        if not self.direct or self.scenario.is_ocs:
            return None
        key = ("made", made, tuple(members))
        memo = self._costed
        if key not in memo:
            return None
        r = memo[key]
        if r is None or r.feasible:
            return r, r is None
        if key not in self._rebalanced:
            return None
        return self._rebalanced[key], False

    def release(self) -> None:
        """Drop every graph it holds but in its memos' keys (the graph last made and
        costed, its cost model): the cluster is about to make another, and a copy of a
        131,072-GPU torus with its router held beside the next one raised the peak."""
        self.forget_made()
        self._last_problem = self._graph_model = self._greedy = None

    def forget_made(self) -> None:
        """Forget the graph last made (:meth:`made_from_cell`,
        :meth:`made_from_switches`): the next one is costed the long way, by every node and
        link."""
        self._last_recost = self._last_direct = None

    def _problem(self, graph: nx.Graph, members: Collection[Hashable]) -> tuple | None:
        """``(graph, members, key)`` of the instance ``members`` as costed on ``graph``:
        circuits set on an OCS fabric, the scenario's adjustments applied, renamed by place
        where instances are alike (:func:`~netmodel.study.placed_graph.canonical`), and the problem's key (failures that
        leave the same graph are one problem); None when an OCS instance's circuits cannot be
        set."""
        orig = tuple(members)
        # rebalanced asks again for the problem instance_result has just made from the
        # same graph object: the last one is kept (with its graph, so the id is not reused)
        last = self._last_problem
        if last is not None and last[0] is graph and last[1] == orig:
            return last[2]
        out = self._new_problem(graph, orig)
        self._last_problem = (graph, orig, out)
        return out

    def _new_problem(self, graph: nx.Graph, members: tuple) -> tuple | None:
        """:meth:`_problem`, not kept but on an OCS fabric where GPUs forward no traffic:
        there the circuits (``circuits = "best"``: each layout made and timed) are set from
        ``graph`` (the members, the switches, maybe spares) and ``members`` alone, so the
        problem is kept by their :func:`~netmodel.study.placed_graph.problem_key`, and a
        graph of the same nodes, links and attributes is not set again (a spare in for a
        GPU whose die failed, then for the same GPU whose package failed)."""
        if not self.scenario.is_ocs or len(members) < 2 or self.direct:
            return self._set_problem(graph, members)
        name = problem_key(graph, members)
        memo = self._ocs_problems
        if name not in memo:
            memo[name] = self._set_problem(graph, members)
        return memo[name]

    def _set_problem(self, graph: nx.Graph, members: tuple) -> tuple | None:
        """:meth:`_new_problem` worked out."""
        from netmodel.study.scenario_fabric import adjusted

        s = self.scenario
        orig, physical = members, graph   # the cell the circuits are set on
        if s.is_ocs and len(members) > 1:
            graph = instance_circuits(s, graph, members, self.calibration)
            if graph is None:
                return None
            graph = unlabelled(graph)
        elif not s.is_ocs:
            fast = self._switch_problem(graph, members)
            if fast is not None:
                return fast
        g = adjusted(graph, s.adjust)
        made = self._last_direct
        if not s.is_ocs and self.direct and made is not None and made[0] is graph \
                and made[1] == members:
            # the graph the cluster has just made (made_from_cell), named by what it was
            # made from (equal names: equal graphs); not every node and link of the cell
            return g, tuple(members), ("made", made[2], tuple(members))
        if not self.direct:   # instances alike, failures alike: one costing
            g, members = canonical(g, members)
        key = problem_key(g, members)
        if s.is_ocs and not self.parallelism.is_plain:
            # a sub-group's circuits are set from the members' own optical links on the
            # cell, which the instance's circuits do not name (two ports lost on one OCS
            # or on two leave the same ring, not the same stage-boundary pairs)
            key += (ocs_ports_key(physical, orig),)
        return g, tuple(members), key

    def _switch_problem(self, graph: nx.Graph, members: tuple) -> tuple | None:
        """:meth:`_new_problem` the short way, for the graph the cluster has just made
        (:meth:`made_from_switches`) (the switches' part, the members wired in, one set of failures, and
        the spares of its plan after the members, by name) where GPUs forward no traffic and the scenario adjusts nothing: the graph
        :func:`~netmodel.study.placed_graph.canonical` gives, made from the switches' part in its canonical order
        (:meth:`_canonical_switches`, once) with the failed parts' edits and the members,
        and a key naming that part, the edits and the members' part instead of every
        attribute of the graph (equal keys: equal graphs, as with :func:`~netmodel.study.placed_graph.problem_key`).
        None where it does not apply (the long way then)."""
        last = self._last_recost
        if (last is None or last[0] is not graph or last[2] != members
                or self.direct or not self.scenario.adjust.is_identity
                or type(graph) is not nx.Graph):
            return None
        comps = last[1]
        base, order, names = self._canonical_switches()
        mapping = {m: f"gpu{k}" for k, m in enumerate(members)}
        data = graph.nodes
        # spares the graph holds beyond the members (the cluster's plan; those the failure
        # stops are gone from it): GPUs after the members, by name, as canonical puts them
        others = [] if not last[3] else sorted(
            (n for n in graph if n not in base and n not in mapping),
            key=lambda n: (type(n).__name__, str(n)))
        if len(mapping) != len(members) or any(m in base or m not in graph for m in members) \
                or any(v in names for v in mapping.values()) \
                or any(data[n].get("kind") != "gpu" for n in others) \
                or set(mapping.values()) & set(others) \
                or len(graph) != len(members) + len(others) \
                + sum(1 for n in order if n in graph):
            return None   # a member twice, or gone, a name taken, or another node: long way
        gone = {n for c in comps for n in c.nodes if n in base}
        cut = set()      # switches' links removed (both ends kept)
        changed = set()  # switches' links thinned (kept)
        for c in comps:
            for u, v in c.edges:
                if u in base and v in base and base.has_edge(u, v) \
                        and u not in gone and v not in gone:
                    cut.add((u, v))
                    cut.add((v, u))
            for (u, v), _ in c.scaled:
                if u in base and v in base and base.has_edge(u, v) \
                        and u not in gone and v not in gone:
                    changed.add((u, v))
                    changed.add((v, u))
        changed -= cut
        adj = graph.adj
        out = nx.Graph()
        out.graph.update(graph.graph)
        # the internals networkx documents (node and adjacency dicts), filled directly: the
        # switches' links share the cached part's attribute dicts (nothing changes them),
        # a thinned one gets its own
        node, oadj = out._node, out._adj
        own = {}
        for n in order:
            if n in gone:
                continue
            node[n] = dict(data[n])
            nbrs = {}
            for v, d in base._adj[n].items():
                if v in gone or (n, v) in cut:
                    continue
                if (n, v) in changed:
                    d = own.get((v, n))
                    if d is None:
                        d = own[n, v] = dict(adj[n][v])
                nbrs[v] = d
            oadj[n] = nbrs
        part = []
        # the members under their new names, then the spares not in the instance, wired as in graph
        for m, name in chain(((m, mapping[m]) for m in members), ((n, n) for n in others)):
            node[name] = dict(data[m])
            nbrs = {}
            for v in sorted(adj[m], key=names.__getitem__):
                d = dict(adj[m][v])
                nbrs[v] = d
                oadj[v][name] = d
            oadj[name] = nbrs
            part.append((name, frozen_attrs(node[name]), tuple((v, frozen_attrs(d)) for v, d in nbrs.items())))
        key = ("switches", frozen_attrs(out.graph), tuple(sorted(names[n] for n in gone)),
               tuple(sorted((names[u], names[v]) for u, v in cut if names[u] < names[v])),
               tuple(sorted((names[u], names[v], frozen_attrs(own.get((u, v)) or own[v, u]))
                            for u, v in changed if names[u] < names[v])),
               len(members), tuple(part))
        return out, tuple(mapping.values()), key

    def _canonical_switches(self) -> tuple:
        """The cluster's switches' part (``switches``) rebuilt in :func:`~netmodel.study.placed_graph.canonical`'s
        order (by name), that order, and each node's place in it; made once."""
        got = self._canonical_switch_part
        if got is None:
            base, _ = canonical(self._switches(), ())
            order = list(base.nodes)
            got = base, order, {n: i for i, n in enumerate(order)}
            self._canonical_switch_part = got
        return got

    def _comm(self, fm, members: tuple, graph: nx.Graph, orig: tuple) -> GroupComm:
        """The collective costs of the instance ``orig`` (costed as ``members`` on ``fm``)
        on ``graph``: :func:`~netmodel.study.placed_cost.placed_comm` with the cluster's scenario and calibration."""
        return placed_comm(self.scenario, self.calibration, self.direct, fm, members, graph,
                           orig, self._slice_models,
                           stage=self.parallelism.tp)

    def _cost_model(self, g: nx.Graph, key: tuple):
        """The collective cost model of problem ``key`` (its graph ``g``): the one the
        healthy-batch costing kept for re-balancing (taken back), else the last one made
        where it is of the same graph object (the instances one failure touches, each a
        problem of its own, are costed on one degraded cell where GPUs forward traffic:
        one router of it, not one per instance; a 131,072-GPU torus's took 0.2 s to make,
        and more to learn its routes again), else a new one. Costing changes no graph, and
        a graph the cluster makes is not changed once costed, so one graph object has one
        model's routes."""
        from netmodel.study.scenario_fabric import scenario_cost_model

        fm = self._models.pop(key, None)
        if fm is None:
            last = self._graph_model
            if last is not None and last[0] is g:
                return last[1]
            fm = scenario_cost_model(self.scenario, g, self.calibration,
                                     validated=self._known_valid(key))
            self._graph_model = (g, fm)
        return fm

    def _known_valid(self, key: tuple) -> bool:
        """Whether the graph of problem ``key`` passes :func:`~topologies.schema.validate`
        without checking it: one the cluster made from the cell (key ``("made",
        (failures, spares), members)``, :meth:`made_from_cell`, :meth:`_new_problem`) from a
        cell that passes (``cell_valid``) by removing failed parts alone, no spare added, no
        link thinned (a thinned bandwidth may leave the allowed range, a spare's links may
        exceed a switch's radix: those graphs are checked), and the scenario adjusts
        nothing. Each such copy of a 131,072-GPU torus took 0.6 s to validate (blast-radius
        of it 68.7 -> 61.8 s without)."""
        if key[0] != "made" or not self.scenario.adjust.is_identity:
            return False
        failures, spares = key[1]
        return not spares and not any(scaled for _, _, scaled, _ in failures) \
            and self._cell_valid()

    def instance_result(self, graph: nx.Graph,
                        members: Collection[Hashable]) -> InferenceResult | None:
        """The instance ``members`` costed alone on ``graph`` (a degraded cell, maybe with
        spares) in the healthy configuration and batch: an InferenceResult, or None when its
        members cannot all reach each other."""
        problem = self._problem(graph, members)
        if problem is None:
            return None
        g, g_members, key = problem
        memo = self._costed
        if key in memo:
            return memo[key]
        from netmodel.collectives.model import faster_ring_order

        def costed(order: str) -> tuple | None:
            fm = self._cost_model(g, key) if order == "given" else self._greedy_model(g, key)
            r = self._evaluate(fm, g_members, graph, members)
            return None if r is None else (fm, r)

        # the communicator lays its rings on the links there are, as NCCL's topology search
        # does at init (made again after a failure): the faster of the members' order and a
        # greedy nearest-neighbour one, as collective --fail's degraded_cost takes on both
        # sides; the greedy one tried where the instance is slower than the searched one
        # (costed in its order), off OCS scenarios. In the members' order alone
        # lite-direct's ring of a group of 4 crossed the switch where a mesh cable failed
        # (0-1-2-3), where 0-2-1-3 keeps to the cables left. Healthy instances too: on both
        # sides alike, a failure counts only what it removes (taken after a failure alone,
        # the greedy order made instances placed at random on a torus 2% faster than
        # healthy where a GPU of another instance failed)
        best = faster_ring_order(
            costed, lambda c: c[1].latency,
            settled=lambda c: not c[1].latency > self.best.latency or self.scenario.is_ocs)[1]
        fm, r = (None, None) if best is None else best
        if r is not None and not r.feasible:   # re-balancing will cost it again
            self._models[key] = fm
        memo[key] = r
        return r

    def _evaluate(self, fm, g_members: tuple, graph: nx.Graph,
                  members: Collection[Hashable]) -> InferenceResult | None:
        """The instance costed with cost model ``fm`` at the healthy batch, or None where
        a slice's circuits cannot be set."""
        p = self.parallelism
        try:
            return evaluate(self.model, self.gpu, p.tp, self.batch, self.workload, pp=p.pp,
                            ep=p.ep, attention_dp=p.attention_dp,
                            expert_skew=self.best.expert_skew,
                            comm=self._comm(fm, g_members, graph, tuple(members)),
                            options=self.options, slo=self.slo)
        except InstanceCut:
            return None

    def _greedy_model(self, g: nx.Graph, key: tuple):
        """The cost model of problem ``key`` (its graph ``g``) with its rings in a greedy
        nearest-neighbour order (:class:`~netmodel.collectives.model.FabricCostModel`'s
        ``ring_order="greedy"``); the last one made is given again for the same graph
        object (the instances one failure touches, costed on one degraded cell)."""
        from netmodel.study.scenario_fabric import scenario_cost_model

        last = self._greedy
        if last is not None and last[0] is g:
            return last[1]
        fm = scenario_cost_model(self.scenario, g, self.calibration,
                                 validated=self._known_valid(key), ring_order="greedy")
        self._greedy = (g, fm)
        return fm

    def rebalanced(self, graph: nx.Graph,
                   members: Collection[Hashable]) -> InferenceResult | None:
        """The instance ``members`` on ``graph`` re-balanced to meet the SLO: the same
        configuration (TP, PP, EP, attention DP; placement) at the largest batch up to the healthy one
        whose step meets the SLO and fits (a serving engine whose step slows caps its
        running batch); None when its members cannot all reach each other or no batch
        meets the SLO. At the healthy batch this is :meth:`instance_result`."""
        r = self.instance_result(graph, members)
        if r is None or r.feasible:
            return r
        g, g_members, key = self._problem(graph, members)   # not None: r was costed
        memo = self._rebalanced
        if key in memo:
            return memo[key]
        batches = np.arange(1, self.batch, dtype=np.int64)   # below the healthy batch
        out = None
        if batches.size:
            p = self.parallelism
            grid = evaluate_grid(self.model, self.gpu, [p.tp if p.is_plain else p], batches,
                                 self.workload, expert_skew=self.best.expert_skew,
                                 comm=self._comm(self._cost_model(g, key), g_members,
                                                 graph, tuple(members)),
                                 options=self.options,
                                 latency_limit=float(self.slo.limit(self.workload.phase)))
            ok = np.flatnonzero(grid.feasible[0])
            if ok.size:
                out = grid.result(0, int(ok[-1]))
        memo[key] = out
        return out
