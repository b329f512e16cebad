"""The collective costs of one serving instance as placed: each slice of a smaller group
and each pair across a pipeline stage boundary costed where it is placed, the slowest one's
time.

A collective of fewer GPUs than the instance (a pipeline stage's tensor-parallel group, an
attention group) runs on each consecutive slice of that many members, and a stage
boundary's send-recv on the pairs across the boundary; slices placed alike
(:func:`~netmodel.study.placed_alike.placed_alike`) are costed once.

The healthy search costs an instance so (:class:`PlacedInstance`, made by
:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance`), the blast radius
re-costs one on a degraded fabric so (:func:`placed_comm`, asked by
:class:`~netmodel.study.instance_cost.InstanceCosting`), and the crossovers re-score it
with the links adjusted (:class:`~netmodel.study.adjusted_comm.PlacedAdjusted`, through
:class:`PlacedInstance`'s :meth:`~PlacedInstance.as_scenario`,
:meth:`~PlacedInstance.groups` and :meth:`~PlacedInstance.cut`). On an optical
circuit-switched fabric an instance holds one set of circuits within its GPUs' ports,
every group costed on it: with one stage the instance's own, in pipeline stages each
stage's ring on the ports its stage links leave
(:func:`~netmodel.study.placed_graph.pipeline_circuits`).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from compute.errors import UserError
from netmodel.study.placed_alike import placed_alike
from netmodel.study.placed_graph import (
    canonical,
    pipeline_circuits,
    problem_key,
    unlabelled,
    wired_gpus,
)

__all__ = ["GroupComm", "InstanceCut", "PlacedInstance", "placed_comm", "stage_boundary"]


def stage_boundary(op: str, p: int, stage: int | None, gpus: int) -> bool:
    """Whether ``op`` on groups of ``p`` members of an instance of ``gpus`` GPUs in
    pipeline stages of ``stage`` (None: no stages) is a stage boundary's send-recv, costed
    on the boundaries' pairs (:meth:`GroupComm.pairs`): a send-recv of 2 where there is
    more than one stage. The rule of :class:`GroupComm` and of
    :meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance`.

    >>> stage_boundary("send-recv", 2, 4, 8), stage_boundary("send-recv", 2, 8, 8)
    (True, False)
    >>> stage_boundary("all-reduce", 2, 4, 8), stage_boundary("send-recv", 2, None, 8)
    (False, False)
    """
    return op == "send-recv" and p == 2 and stage is not None and stage < gpus


class InstanceCut(Exception):
    """An instance's members can no longer all reach each other."""


class GroupComm:
    """compute's collective-cost protocol for one explicit instance on one fabric graph.

    A collective of the whole instance runs on its members. One of fewer GPUs (an
    attention group's all-reduce under attention data parallelism, a stage's under
    pipeline parallelism) runs on each consecutive slice of that many members at once, as
    the healthy search costs such a group
    (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance`): the slowest
    slice sets the time, each slice taking its own best algorithm. With ``stage`` (the
    GPUs of one pipeline stage, ``tp``; the members stage after stage) a ``send-recv``
    (group size 2, a stage boundary's) runs on the pairs that carry it, member ``i`` of a
    stage to member ``i`` of the next (:meth:`boundary_time`), the slowest pair's time:
    the ``tp`` pairs of a boundary send at once, and links they share (a leaf's uplink)
    are not charged for it (each pair is costed alone). Slices likewise: each is
    costed alone, though a pipeline's stages (and attention groups) run at once, so a
    link two slices share is not charged for both.

    Parameters
    ----------
    model : FabricCostModel
        The cost model of the instance's graph (a collective of the whole instance, and a
        slice's where ``slice_model`` is None).
    members : sequence of hashable
        The instance's GPUs on ``model``'s graph, stage after stage.
    slice_model : callable, optional
        ``slice_model(positions)`` -> ``(model, members)`` of the members at
        ``positions`` where a slice is costed on a graph other than ``model``'s (an OCS
        instance's circuits in pipeline stages, :func:`placed_comm`).
    physical : networkx.Graph, optional
        The graph the members are placed on, for telling slices placed alike
        (:func:`~netmodel.study.placed_alike.placed_alike`); None: every slice is costed.
    orig : sequence of hashable, optional
        The members' names on ``physical`` (default ``members``).
    alike : dict, optional
        The placed-alike checks done, kept by a caller costing many instances on
        ``physical``.
    stage : int, optional
        The GPUs of one pipeline stage; None: no stage layout known (a send-recv is costed
        as any group of 2).

    Notes
    -----
    It answers compute's :class:`~compute.comm.CollectiveCostModel` (``collective_time``,
    ``moe_all_to_all_time``) and, for :class:`PlacedInstance` and the re-scoring
    :class:`~netmodel.study.adjusted_comm.PlacedAdjusted`, which groups a collective runs
    on (:meth:`slices`, :meth:`pairs`) and the time of a boundary's send-recv
    (:meth:`boundary_time`). A group cut apart raises :class:`InstanceCut`.
    """

    def __init__(self, model, members, slice_model=None, physical=None, orig=None,
                 alike: dict | None = None, stage: int | None = None):
        self.model = model
        self.members = tuple(members)
        #: GPUs of one pipeline stage (None: no stage layout known, a send-recv is costed
        #: as any group of 2, on consecutive pairs of members)
        self.stage = stage
        #: ``slice_model(positions)`` -> ``(model, members)`` of the members at
        #: ``positions`` (a slice, a boundary pair) where it is costed on a graph of its
        #: own (an OCS instance's circuits in pipeline stages, :func:`placed_comm`);
        #: None: on ``model``
        self.slice_model = slice_model
        #: where slices placed alike are costed once
        #: (:func:`~netmodel.study.placed_alike.placed_alike`): the graph the slices are
        #: placed on and the instance's members on it (None: every slice
        #: is costed), and the checks' memo (``alike``: kept by a caller costing many
        #: instances on that graph)
        self._alike = None if physical is None else (
            physical, self.members if orig is None else tuple(orig),
            {} if alike is None else alike)
        self._kinds_memo: dict[tuple, list] = {}   # part key -> positions of each kind
        #: ``(model, lines, least lines)`` of each (model, op, members) costed (:meth:`_time`)
        self._lines_memo: dict[tuple, tuple] = {}

    def _time(self, op: str, members: tuple, model, n: np.ndarray) -> np.ndarray:
        """Seconds of ``op`` on ``members`` (one communicator) on ``model`` at the sizes
        ``n``: the fastest candidate's, or the model's tuner plugin's choice where it
        chooses (as the healthy costing,
        :meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.collective_time`, takes
        it); a group cut apart raises :class:`InstanceCut`."""
        from netmodel.collectives.cost import GroupCut, least_lines, lines_time
        from netmodel.collectives.model import candidate_lines

        # the candidates' lines and those that can be the least at some size n >= 0
        # (least_lines), made once per group: a grid's search asks a group again for each
        # stage and exchange (every line where a size is below 0 or NaN)
        key = (id(model), op, members)
        hit = self._lines_memo.get(key)
        if hit is None or hit[0] is not model:
            try:
                cands = model.candidates(op, members)
            except (GroupCut, UserError):
                raise InstanceCut() from None
            if model.tuned():   # the plugin's pair per size, as every other costing asks it
                return model.collective_time(op, n, members)
            lines = candidate_lines(model, cands)
            # the model kept with them: its id stays its own
            hit = self._lines_memo[key] = (model, lines, least_lines(*lines))
        return lines_time(*hit[2 if not n.size or n.min() >= 0 else 1], n)

    def slices(self, k: int):
        """``(model, members)`` of each consecutive slice of ``k`` members (the instance
        itself where ``k`` is its size), one of each kind of placement: a slice placed as
        an earlier one (:func:`~netmodel.study.placed_alike.placed_alike`) costs what it costs and is left out."""
        return self._kinds(("slice", k))

    def pairs(self, stage: int):
        """``(model, members)`` of each stage boundary's pair, member ``i`` of a stage of
        ``stage`` members and member ``i`` of the next, one of each kind of placement (as
        :meth:`slices`)."""
        return self._kinds(("pair", stage))

    def _kinds(self, key: tuple):
        """``(model, members)`` of each part ``key`` names (``("slice", k)``, ``("pair",
        stage)``), placed unlike the parts before it."""
        starts = self._kinds_memo.get(key)
        m = len(self.members)
        if starts is None:
            kind, k = key
            if kind == "slice":
                starts = [tuple(range(i, i + k)) for i in range(0, m - k + 1, k)]
            else:
                starts = [(j, j + k) for s in range(0, m - k, k) for j in range(s, s + k)]
            if self._alike is not None and len(starts) > 1 and len(starts[0]) < m:
                graph, orig, memo = self._alike
                kept: list[tuple] = []
                for pos in starts:
                    part = tuple(orig[i] for i in pos)
                    for was in kept:
                        key2 = (part, tuple(orig[i] for i in was))
                        if key2 not in memo:
                            memo[key2] = placed_alike(graph, *key2, memo)
                        if memo[key2]:
                            break
                    else:
                        kept.append(pos)
                starts = kept
            elif self.slice_model is not None:   # parts given one model and members alike
                seen: set = set()
                kept = []
                for pos in starts:
                    if len(pos) < m:
                        model, members = self.slice_model(pos)
                        if (id(model), members) in seen:
                            continue
                        seen.add((id(model), members))
                    kept.append(pos)
                starts = kept
            self._kinds_memo[key] = starts
        for pos in starts:
            if self.slice_model is not None and len(pos) < m:
                yield self.slice_model(pos)
            else:
                yield self.model, tuple(self.members[i] for i in pos)

    def _slowest(self, op: str, n: np.ndarray, kinds) -> np.ndarray:
        """Seconds of ``op`` at the sizes ``n`` on the slowest of ``kinds`` (``(model,
        members)``), 0 where nothing is sent."""
        t = None
        for model, members in kinds:
            ti = self._time(op, members, model, n)
            t = ti if t is None else np.maximum(t, ti)
        return np.where(n > 0, t, 0.0)

    def boundary_time(self, op: str, nbytes: float | np.ndarray, stage: int) -> np.ndarray:
        """Seconds of ``op`` (a ``send-recv``) of ``nbytes`` between pipeline stages of
        ``stage`` members: the slowest boundary pair's (:meth:`pairs`)."""
        return self._slowest(op, np.asarray(nbytes, dtype=float), self.pairs(int(stage)))

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        n = np.asarray(nbytes, dtype=float)
        k = int(group_size)
        if k <= 1:
            return np.zeros_like(n)
        if stage_boundary(op, k, self.stage, len(self.members)):
            return self.boundary_time(op, n, self.stage)
        return self._slowest(op, n, self.slices(k))

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """An MoE all-to-all crossing the network once a server (DeepEP's normal kernels),
        as the healthy costing charges a prefill's dispatch and combine
        (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.moe_all_to_all_time`,
        :func:`compute.moe_routing.moe_comm`): the faster of that way and every copy's
        (:meth:`collective_time`), per slice of ``group_size`` members, the slowest
        slice's."""
        from netmodel.collectives.cost import GroupCut
        from netmodel.collectives.moe import once_a_server_time

        n = np.asarray(nbytes, dtype=float)
        k = int(group_size)
        if k <= 1:
            return np.zeros_like(n)
        t = None
        for model, members in self.slices(k):
            def every(model=model, members=members) -> np.ndarray:
                return self._time("all-to-all", members, model, n)

            try:
                ti = once_a_server_time(model, tuple(members), n, copies, reach, every)
            except GroupCut:
                raise InstanceCut() from None
            t = ti if t is None else np.maximum(t, ti)
        return np.where(n > 0, t, 0.0)


def placed_comm(scenario, calibration, direct: bool, fm, members: tuple, graph: nx.Graph,
                orig: tuple, memo: dict, shared: dict | None = None,
                stage: int | None = None) -> GroupComm:
    """The collective costs of the instance ``orig`` (costed as ``members`` on ``fm``) on
    ``graph`` (the physical fabric: a cell, maybe degraded), as the blast radius re-costs it
    and the healthy search costs a group smaller than its instance
    (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance`): a collective
    of fewer GPUs than the instance runs on each consecutive slice of that many members,
    the slowest slice's time. On an OCS fabric the instance holds one set of circuits,
    set once for all its collectives (they stay put while it serves): with one stage
    (``stage`` None or the instance) ``fm``'s, the instance's own, every group on them; in
    pipeline stages its stages' rings and stage links within its GPUs' ports
    (:func:`~netmodel.study.placed_graph.pipeline_circuits`), every slice and boundary
    pair on them (a slice on its stage's part, a pair on its own circuits: the rest lead
    to no shorter route, and parts alike are one problem, costed once), or where the
    ports hold no stage ring beside the links, ``fm``'s ring of the instance, stage after
    stage, a boundary pair routed over it.

    Parameters
    ----------
    scenario : Scenario
        The scenario (its OCS circuits, adjustments and cost-model settings).
    calibration : Calibration
        The collective model's parameters the slices' cost models take.
    direct : bool
        Whether GPUs are wired to GPUs (:func:`~netmodel.study.placed_graph.wired_gpus`):
        members then keep their names, else a slice is renamed by place
        (:func:`~netmodel.study.placed_graph.canonical`).
    fm : FabricCostModel
        The cost model the whole instance is costed with.
    members : tuple
        The instance's GPUs on ``fm``'s graph.
    graph : networkx.Graph
        The physical fabric the instance is placed on (its GPUs named as in ``orig``).
    orig : tuple
        The instance's GPUs on ``graph``.
    memo : dict
        The slices' cost models by problem (:func:`~netmodel.study.placed_graph.
        problem_key`), kept by the caller.
    shared : dict, optional
        What the slices' costings keep for the next instance on the same ``graph``, kept
        by a caller costing many: each slice's circuits and ``(model, members)``, set once
        (key ``"slices"``), and the placed-alike checks done (key ``"alike"``).
    stage : int, optional
        The GPUs of one pipeline stage (a send-recv then runs on the stage boundaries'
        pairs, :class:`GroupComm`).

    Returns
    -------
    GroupComm
        The instance's costs; a slice whose circuits cannot be set raises
        :class:`InstanceCut` when it is costed.
    """
    shared = {} if shared is None else shared
    alike = shared.setdefault("alike", {})
    if not scenario.is_ocs:
        return GroupComm(fm, members, physical=fm.graph, alike=alike, stage=stage)
    if stage is None or stage >= len(members):
        # one stage: every group on the instance's own circuits (``fm``'s), told alike
        # on them (not on the cell: a slice of a ring is placed unlike its cell's)
        return GroupComm(fm, members, physical=fm.graph, alike={}, stage=stage)
    made = shared.setdefault("pipelines", {})   # an instance's circuits, set once
    hit = made.get((orig, stage))
    if hit is None:
        hit = made[orig, stage] = _pipeline(scenario, graph, orig, stage, calibration)
    if hit is None:
        # the ports hold no stage ring beside the stage links: the instance's own circuits
        # (``fm``'s ring of its members, stage after stage), each stage link routed over
        # them from where the stages' rings join
        return GroupComm(fm, members, physical=fm.graph, alike={}, stage=stage)
    kept: dict = {}   # (model, members) by the circuits' GPUs a group is costed on

    def slice_model(pos: tuple):
        # a group within a stage on its stage's circuits, a boundary pair on its own: the
        # rest of the instance's circuits lead to no shorter route (a stage link leaves
        # the stage), so each is costed on that part of the one set
        first = pos[0] // stage
        within = pos[-1] // stage == first
        at = tuple(range(first * stage, (first + 1) * stage)) if within else pos
        got = kept.get(at)
        if got is None:
            got = kept[at] = _part_model(scenario, calibration, direct, hit,
                                         tuple(orig[i] for i in at), memo)
        model, named = got
        return model, tuple(named[at.index(i)] for i in pos)

    # every group costed (no placed-alike check): stages and pairs placed alike on the
    # circuits are one problem (_part_model), costed once
    return GroupComm(fm, members, slice_model, stage=stage)


def _pipeline(scenario, graph: nx.Graph, orig: tuple, stage: int, calibration
              ) -> nx.Graph | None:
    """The circuits of the instance ``orig`` in pipeline stages of ``stage`` on the OCS
    cell ``graph`` (:func:`~netmodel.study.placed_graph.pipeline_circuits`), with the
    scenario's adjustments applied; None where its ports cannot hold them."""
    from netmodel.study.scenario_fabric import adjusted

    circuits = pipeline_circuits(scenario, graph, orig, stage, calibration)
    return None if circuits is None else adjusted(unlabelled(circuits), scenario.adjust)


def _part_model(scenario, calibration, direct: bool, circuits: nx.Graph, part: tuple,
                memo: dict) -> tuple:
    """``(model, members)`` of the instance's circuits among its members ``part`` (a
    stage, a boundary pair): that part of ``circuits``, renamed by place where
    GPUs forward no traffic, its cost model kept in ``memo`` by problem (stages and pairs
    alike across instances costed once)."""
    from netmodel.study.scenario_fabric import scenario_cost_model

    # the part's GPUs and circuits with the OCSes (no links: realize keeps them for the
    # circuits to name), so that parts alike across stages and instances are one problem
    g = circuits.subgraph([*part, *(n for n, k in circuits.nodes(data="kind")
                                    if k != "gpu")]).copy()
    g.graph["gpus"] = len(part)
    if not direct:
        g, part = canonical(g, part)
    key = problem_key(g, part)
    if key not in memo:
        memo[key] = scenario_cost_model(scenario, g, calibration)
    return memo[key], tuple(part)


class PlacedInstance:
    """compute's collective-cost protocol for one instance of ``gpus`` GPUs in pipeline
    stages of ``stage`` as placed on a scenario's fabric
    (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance` makes it):
    where a group of fewer GPUs than the instance is placed as the scenario's own group of
    that size, it costs what the scenario charges (:meth:`as_scenario`); elsewhere on each
    of the groups it runs on (:meth:`groups`: slices, or a stage boundary's pairs), the
    slowest one's time (:func:`placed_comm`).

    Parameters
    ----------
    coll : ScenarioCollectives
        The scenario's own costs. Read of it: ``scenario``, ``calibration``, ``graph``,
        ``model(size)`` and ``group(size)`` (the scenario's cost model and group of
        ``size`` GPUs), ``linear(op, size)`` (for its refusals: an op the scenario's
        algorithm lacks, a group cut apart), ``collective_time`` and
        ``moe_all_to_all_time``.
    gpus : int
        The instance's GPUs (``tp x pp``).
    stage : int
        The GPUs of one pipeline stage (``tp``), a divisor of ``gpus``.
    memo : dict
        What the costings of ``coll``'s instances keep, shared as its compiled costs are
        (the placed costing of each instance size, the slices' cost models, the checks
        done).

    Notes
    -----
    A re-scoring of the scenario's costs (:class:`~netmodel.study.adjusted_comm.
    PlacedAdjusted`) asks it :meth:`as_scenario`, :meth:`groups` and :meth:`cut`, and
    costs each group itself.
    """

    def __init__(self, coll, gpus: int, stage: int, memo: dict):
        self.coll, self.gpus, self.stage, self.memo = coll, gpus, stage, memo

    def __repr__(self) -> str:
        return f"{self.coll!r}.for_instance({self.gpus}, {self.stage})"

    def boundary(self, op: str, p: int) -> bool:
        """Whether ``op`` on groups of ``p`` is a stage boundary's send-recv, costed on the
        boundaries' pairs (:meth:`pairs`; :func:`stage_boundary`)."""
        return stage_boundary(op, p, self.stage, self.gpus)

    def as_scenario(self, op: str, p: int) -> bool:
        """Whether ``op`` on groups of ``p`` costs what the scenario's own
        :meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.collective_time`
        (``moe_all_to_all_time`` for an MoE all-to-all) charges: a group of 1 or of the
        whole instance, or every slice (every boundary pair, for a stage boundary's
        send-recv) placed as the scenario's group of that size (:meth:`as_first`,
        :meth:`pairs_as_first`). The one rule of this costing and of the re-scoring one
        (:class:`~netmodel.study.adjusted_comm.PlacedAdjusted`)."""
        if p <= 1 or p >= self.gpus:
            return True
        return self.pairs_as_first() if self.boundary(op, p) else self.as_first(p)

    def pairs_as_first(self) -> bool:
        """Whether every stage boundary's pair is placed as the scenario's group of 2
        (``coll.group(2)``) on the same cost model (as :meth:`as_first`): then a
        send-recv costs what the scenario's ``collective_time`` charges."""
        c = self.coll
        key = ("first pairs", self.gpus, self.stage)
        hit = self.memo.get(key)
        if hit is None:
            hit = False
            model = c.model(self.gpus)
            if not c.scenario.is_ocs and model is c.model(2):
                from netmodel.collectives.cost import GroupCut

                try:
                    kinds = self.pairs()
                    first = tuple(c.group(2))
                    memo = self.memo.setdefault("shared", {}).setdefault("alike", {})
                    key2 = (tuple(kinds[0][1]), first)
                    if key2 not in memo:
                        memo[key2] = placed_alike(model.graph, *key2, memo)
                    hit = len(kinds) == 1 and memo[key2]
                except (InstanceCut, GroupCut, UserError):
                    hit = False
            self.memo[key] = hit
        return hit

    def pairs(self) -> list:
        """``(cost model, members)`` of each stage boundary's pair placed unlike the pairs
        before it (:meth:`GroupComm.pairs`)."""
        return list(self._placed().pairs(self.stage))

    def as_first(self, size: int) -> bool:
        """Whether every slice of ``size`` members is placed as the first, which is the
        scenario's own group of ``size`` (``coll.group(size)``) on the same cost model
        (not on an OCS fabric, whose slices have circuits of their own): then the
        instance's groups of that size cost what the scenario's ``collective_time``
        charges, without costing a slice again."""
        c = self.coll
        key = ("first", self.gpus, int(size))
        hit = self.memo.get(key)
        if hit is None:
            hit = False
            if not c.scenario.is_ocs and c.model(self.gpus) is c.model(size):
                from netmodel.collectives.cost import GroupCut

                try:
                    starts = self.slices(size)
                    hit = len(starts) == 1 and tuple(starts[0][1]) == tuple(c.group(size))
                except (InstanceCut, GroupCut, UserError):
                    hit = False
            self.memo[key] = hit
        return hit

    def _placed(self) -> GroupComm:
        """The instance's :func:`placed_comm` (made once per network)."""
        c = self.coll
        hit = self.memo.get(("comm", self.gpus, self.stage))
        if hit is None:
            members = c.group(self.gpus)
            hit = self.memo["comm", self.gpus, self.stage] = placed_comm(
                c.scenario, c.calibration, wired_gpus(c.graph), c.model(self.gpus),
                members, c.graph, members, self.memo, self.memo.setdefault("shared", {}),
                stage=self.stage)
        return hit

    def slices(self, size: int) -> list:
        """``(cost model, members)`` of each slice of ``size`` of the instance's members
        placed unlike the slices before it (the others cost what the first so placed
        costs: :func:`~netmodel.study.placed_alike.placed_alike`); raises
        :class:`InstanceCut` where one is cut apart."""
        return list(self._placed().slices(int(size)))

    def groups(self, op: str, p: int) -> list:
        """The groups ``op`` on groups of ``p`` runs on, one of each placement.

        Parameters
        ----------
        op : str
            The collective.
        p : int
            Its group size, fewer than the instance's GPUs.

        Returns
        -------
        list of (FabricCostModel, tuple)
            ``(cost model, members)`` of each stage boundary's pair for a boundary's
            send-recv (:meth:`boundary`, :meth:`pairs`), else of each slice of ``p``
            members (:meth:`slices`); a group placed as an earlier one is left out.

        Raises
        ------
        UserError
            What the scenario refuses (an op its algorithm lacks, an instance cut apart),
            and a group of the instance cut apart (:meth:`cut`).
        """
        self.coll.linear(op, p)   # its refusals: an op the algorithm lacks, a cut
        try:
            if self.boundary(op, p):
                return self.pairs()
            return self.slices(p)
        except InstanceCut:
            raise self.cut(op, p) from None

    def cut(self, op: str, size: int) -> UserError:
        """The refusal of ``op`` on a group of ``size`` of the instance cut apart."""
        return UserError(f"scenario {self.coll.scenario.label!r}: a group of {size} GPUs of "
                         f"an instance of {self.gpus} is cut apart; no {op} can run on it")

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        """Seconds of ``op`` of ``nbytes`` (elementwise) on groups of ``group_size`` of the
        instance: the scenario's charge where :meth:`as_scenario`, else the slowest of
        :meth:`groups`'s."""
        from compute.comm import collective_args

        n, p = collective_args(op, nbytes, group_size)
        if self.as_scenario(op, p):
            return self.coll.collective_time(op, n, p)
        self.coll.linear(op, p)   # its refusals: an op the algorithm lacks, a group cut
        try:
            if self.boundary(op, p):
                return self._placed().boundary_time(op, n, self.stage)
            return self._placed().collective_time(op, n, p)
        except InstanceCut:
            raise self.cut(op, p) from None

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """An MoE all-to-all crossing the network once a server, as the scenario's own
        ``moe_all_to_all_time`` costs it, on each slice of ``group_size`` members placed
        unlike the earlier ones (:meth:`GroupComm.moe_all_to_all_time`), the slowest."""
        from compute.comm import collective_args

        n, p = collective_args(None, nbytes, group_size)
        if self.as_scenario("all-to-all", p):
            return self.coll.moe_all_to_all_time(n, p, copies, reach)
        self.coll.linear("all-to-all", p)
        try:
            return self._placed().moe_all_to_all_time(n, p, copies, reach)
        except InstanceCut:
            raise self.cut("all-to-all", p) from None
