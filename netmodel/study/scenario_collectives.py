"""A scenario's collective costs: compute's collective-cost protocol for an instance placed
on a scenario's fabric graph, compiled once and asked many times.

For each (scenario, TP degree) the instance is placed once (the scenario's placement policy;
on an optical circuit-switched fabric the circuits of every instance of that size are set
first, see :func:`~netmodel.study.scenario_fabric.instance_graph`), and each collective's
cost on it is compiled once into the linear candidates ``time = a + b * bytes`` of every
valid (algorithm, protocol) (:class:`~netmodel.collectives.model.FabricCostModel`). Every
later question, an array of message sizes over the whole batch grid of any model and
phase, is then one numpy multiply-add and a minimum. :class:`ScenarioCollectives`
implements compute's collective-cost protocol that way;
:func:`~netmodel.study.fabric_search.fabric_search` runs compute's search with it. The
fabric and the graph an instance runs on are built in :mod:`netmodel.study.scenario_fabric`.

By default instances are costed alone (each sits where the placement puts the first
instance; other instances' traffic does not share its links). With the scenario's
``instances = "all"`` (or ``ScenarioCollectives(scenario, concurrent=True)``) every
instance of the cluster runs the collective at the same time: for TP degree ``t`` the
fabric is cut into ``floor(GPUs / t)`` instances by the placement policy, links are shared
fairly, and the collective takes the slowest instance's time, each instance running its own
(algorithm, protocol), the fastest for it alone (under the scenario's ``tuner`` plugin, the
plugin's pair where it chooses one the instance can run), as NCCL's communicators tune
apart and as ``collective --all-groups`` charges it
(:func:`~netmodel.collectives.concurrent.concurrent_own`, compiled once per (op, t), its
instances of one shape kept once; a size array then costs each choice's least line alone
and together, and where instances choose different algorithms, their steps routed
together by :func:`~netmodel.collectives.concurrent.concurrent_cost`).

>>> c = ScenarioCollectives("lite-flat")
>>> float(c.collective_time("all-reduce", 1e6, 1))
0.0
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError, chosen, known
from compute.memo import Lru
from compute.validate import describe, is_whole
from netmodel.collectives.tuner_plugin import NO_TUNER
from netmodel.study.placed_cost import PlacedInstance
from netmodel.study.run_words import named
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import (
    best_layout,
    build_fabric,
    layout_model,
    network_key,
    scenario_calibration,
)
from netmodel.study.scenarios import BEST, Scenario

if TYPE_CHECKING:
    from netmodel.collectives.calibration import Calibration
    from netmodel.collectives.model import FabricCostModel

__all__ = ["ScenarioCollectives", "once_a_server", "schedule_note", "size_ranges"]


_SHARED_MAX = 256
#: Compiled collective costs by network (:func:`network_key`): a comparison of five Lite
#: variants on one fabric routes it twice, not five times. Read with ``get``: the oldest
#: dropped past :data:`_SHARED_MAX`.
_SHARED = Lru(_SHARED_MAX)


def schedule_note(past: Sequence[tuple[str, int]]) -> str:
    """Words for :attr:`ScenarioCollectives.past_budget`."""
    return ("instances = all: where the instances ran different algorithms ("
            + ", ".join(f"{op} on {size} GPUs" for op, size in past)
            + "), working out their schedule in time passed its budget: charged in lockstep "
            f"(collective {named('all_groups')}: 'lockstep (past the schedule's budget)'), no "
            "bound of the schedule in time either way")


def _shared(key: Hashable, make: Callable[[], dict]) -> dict:
    """The process-wide cache of ``key`` (:data:`_SHARED`, oldest dropped past
    :data:`_SHARED_MAX`), made by ``make`` on first use."""
    hit = _SHARED.get(key)
    if hit is None:
        hit = _SHARED.put(key, make())
    return hit


class ScenarioCollectives:
    """compute's collective-cost protocol for one scenario (see the module docstring).

    ``collective_time(op, nbytes, group_size)``: seconds for an instance of ``group_size``
    GPUs placed on the scenario's fabric, elementwise over ``nbytes``. An instance the fabric
    cuts apart raises :class:`~compute.errors.UserError`. ``concurrent``: None follows the
    scenario's ``instances``; True (``"all"``) or False (``"alone"``) overrides it, and
    :attr:`scenario` then carries the override. ``scope``: what the scenario's algorithm
    governs (:class:`~netmodel.collectives.model.FabricCostModel`'s): ``"collectives"``
    (a scenario's own, as NCCL_ALGO: all-to-all and send-recv choose as auto where it has
    none), or ``"every-op"`` for an algorithm a caller names
    (:meth:`~netmodel.study.collective_setup.CollectiveSetup.at_once_time`).
    ``calibration``: the collective model's parameters (None: the scenario's own,
    :func:`~netmodel.study.scenario_fabric.scenario_calibration`; a caller's, such as
    ``collective --scenario --nccl-release``'s, keys the shared caches by itself).
    """

    def __init__(self, scenario: str | Scenario, concurrent: bool | None = None, *,
                 scope: str = "collectives", calibration: Calibration | None = None):
        from netmodel.collectives.model import SCOPES

        if chosen(scope, SCOPES) is None:   # blanks at either end dropped, as every choice's
            raise UserError(f"scope must be one of {known(SCOPES)}, got {describe(scope)}")
        self.scope = chosen(scope, SCOPES)
        scenario = get_scenario(scenario)
        if concurrent is not None:   # a flag ('no', NaN and 8 were taken by their truth)
            from compute.validate import flag

            concurrent = flag("", "concurrent", concurrent)
            scenario = scenario.with_instances("all" if concurrent else "alone")
        self.scenario = scenario
        self.concurrent = scenario.instances == "all"
        #: how many charges of each (op, instance GPUs) fell back past the budget
        self._past_budget: dict[tuple[str, int], int] = {}
        #: the last charge of every instance at once that scheduled nothing: ``(op, GPUs,
        #: sizes, seconds)``, for the same question asked again at once
        #: (:meth:`collective_time`)
        self._last_own: tuple | None = None
        self.graph = build_fabric(self.scenario)
        self.gpus = int(self.graph.graph["gpus"])
        if calibration is not None:   # a caller's (an int raised AttributeError later)
            from compute.validate import of_type
            from netmodel.collectives.calibration import Calibration

            of_type("calibration", calibration, Calibration, "scenario_calibration(scenario)")
        self.calibration = scenario_calibration(self.scenario) if calibration is None \
            else calibration
        # scenarios whose networks are the same (GPU types differing only off the network,
        # as Lite and Lite+MemBW do) share their compiled costs
        # (the scope is part of what the costs depend on where it is not the scenario's)
        tail = "" if scope == "collectives" else f" scope {scope}"
        key = network_key(self.scenario, self.calibration) + tail
        # the cost models (routers, compiled steps) do not depend on ``instances``: the
        # instances alone and all at once share them, and only their linear candidates
        # differ
        models = _shared(network_key(self.scenario.with_instances("alone"),
                                     self.calibration) + tail
                         if self.concurrent else key, dict)
        self._models, self._linear = models, _shared(("linear", key), dict)
        #: :meth:`for_instance`'s costings, by instance GPUs
        self._placed: dict = {}
        #: their instances' costings (``("comm", gpus)``) and the cost models of the slices
        #: they re-set circuits for (OCS, by problem), shared as the compiled costs are
        self._slices = _shared(("placed", key), dict)
        #: :meth:`with_circuits`' costs, by layout
        self._layouts: dict = {}
        self._best = scenario.circuits == BEST and scenario.is_ocs
        #: ``circuits = "best"``: the model of each size, the chosen layout's own (its
        #: :meth:`with_circuits` costs' model), held here: the process-wide cache drops
        #: this scenario's models and a layout's apart (oldest first past _SHARED_MAX)
        self._chosen: dict = {}
        #: a layout's :meth:`with_circuits` costs: the ``circuits = "best"`` scenario's
        #: models (and their layouts), taken where a size was chosen as this layout
        self._kept_by: dict | None = None
        #: :meth:`_latency_twin`'s
        self._twin: ScenarioCollectives | None = None
        #: kept for :func:`~netmodel.study.adjusted_comm.hop_latency_slopes` by a caller
        #: that holds no cache of its own (the re-scoring of each layout of ``best``)
        self.slopes_cache: dict = {}
        #: ``circuits = "best"``: the layout chosen for ``(size, scale, hop_latency)``
        #: (:meth:`~netmodel.study.adjusted_comm.AdjustedComm.layout_comm`), shared as the
        #: compiled costs are
        self.layout_choices: dict = _shared(("layout choices", key), dict)

    def __repr__(self) -> str:
        extra = (", concurrent=True" if self.concurrent else "") + (
            "" if self.scope == "collectives" else f", scope={self.scope!r}")
        return f"ScenarioCollectives({self.scenario.label!r}{extra})"

    def model(self, size: int) -> FabricCostModel:
        """The :class:`~netmodel.collectives.model.FabricCostModel` instances of ``size``
        GPUs are costed with (one per size on a circuit-switched fabric, else shared)."""
        # before the look-up: a model shared by every size was returned to a size past the
        # fabric once built, whose refusal then came from the placement, in other words
        if size > self.gpus:
            raise UserError(f"an instance of {size} GPUs does not fit scenario "
                            f"{self.scenario.label!r} ({self.gpus} GPUs)")
        key = size if self.scenario.is_ocs else 0
        if self._best and size >= 2:
            hit = self._chosen.get(key)
            return self._best_model(key) if hit is None else hit
        hit = self._models.get(key)
        if hit is None:
            kept = self._kept_by
            if kept is not None and kept.get(("layout", key)) == self.scenario.circuits:
                # the best scenario's model of this size, chosen as this layout: made
                # by costs of this layout whose process-wide cache was dropped since
                layout, hit = self.scenario.circuits, kept[key]
            else:
                layout, hit = layout_model(self.scenario, self.graph, size,
                                           self.calibration, scope=self.scope)
                twin = self._latency_twin()
                if twin is not None:   # only the links' latencies differ: its loads
                    hit.share_loads_of(twin.model(size))
            self._models[key] = hit
            self._models[("layout", key)] = layout
        return hit

    def _latency_twin(self) -> ScenarioCollectives | None:
        """This scenario's costs without its per-hop latency (made once), whose models
        route the steps of this one's: the same links at the same bandwidths, so the
        same routes and loads (:meth:`~netmodel.collectives.model.FabricCostModel.
        share_loads_of`, which checks it), for scenarios that differ in their per-hop
        latency alone (``with_param("adjust.hop_latency", ...)``: ``compare``'s and a
        sweep's points) to route their loads once; None where it adds none."""
        if not self.scenario.adjust.hop_latency:
            return None
        if self._twin is None:
            self._twin = ScenarioCollectives(
                self.scenario.with_param("adjust.hop_latency", 0.0), scope=self.scope,
                calibration=self.calibration)
        return self._twin

    def _best_model(self, size: int) -> FabricCostModel:
        """:meth:`model` with ``circuits = "best"``: the model of the layout chosen for
        ``size`` (:func:`~netmodel.study.scenario_fabric.best_layout`), kept with its
        layout by the process-wide cache and held by this one as :meth:`with_circuits`
        ``(layout)``'s own, so that ``with_circuits(layout).model(size)`` is it and
        neither is realized and compiled a second time, whichever of the scenario's
        and the layouts' caches were dropped (the layout's costs take the kept model).
        A model given by :meth:`seed_model` (no layout) is held as it is."""
        hit = self._models.get(size)
        if hit is None:
            # each layout's model is :meth:`with_circuits`' own, built once: the
            # re-scorings of the layouts (AdjustedComm.layout_comm) share it and its
            # compiled steps instead of realizing and compiling them again
            layout, hit = best_layout(int(size), self._layout_model(int(size)))
            self._models[size] = hit
            self._models[("layout", size)] = layout
        else:
            layout = self._models.get(("layout", size))
            if layout is not None:
                hit = self.with_circuits(layout).model(size)
        self._chosen[size] = hit
        return hit

    def _layout_model(self, size: int) -> Callable:
        """``make(layout)`` for :func:`~netmodel.study.scenario_fabric.best_layout`: the
        model of :meth:`with_circuits` ``(layout)`` at ``size`` (the one
        :func:`~netmodel.study.scenario_fabric.layout_model` makes for it), None where
        the circuits are not set as that layout (a torus the size or ports refuse). A
        torus on a fabric whose every GPU has fewer than
        :data:`~netmodel.study.circuit_planes.TORUS_PORTS` optical ports is set as a ring
        (:func:`~netmodel.study.circuit_planes.circuit_options`): None at once, the ring
        not realized and modelled a second time as the torus's (a serving pool's fabric
        with ports set aside for the KV cache, at every size)."""
        def make(lay: str):
            fixed = self.with_circuits(lay)
            if lay == "torus" and fixed._under_torus_ports():
                return None
            model = fixed.model(size)
            return (model, model) if fixed.layout(size) == lay else None

        return make

    def _under_torus_ports(self) -> bool:
        """Whether every GPU of the fabric has fewer optical ports than a torus takes
        (:data:`~netmodel.study.circuit_planes.TORUS_PORTS`), counted once."""
        hit = self.__dict__.get("_few_ports")
        if hit is None:
            from netmodel.study.circuit_planes import TORUS_PORTS
            from topologies.schema import gpu_nodes

            data, graph = self.graph.nodes, self.graph
            hit = self.__dict__["_few_ports"] = all(
                sum(1 for o in graph.neighbors(g) if data[o]["kind"] == "ocs") < TORUS_PORTS
                for g in gpu_nodes(graph))
        return hit

    def layout(self, size: int) -> str | None:
        """The layout the circuits of an instance of ``size`` GPUs are set as (``"ring"`` or
        ``"torus"``; with ``circuits = "best"`` the one chosen for that size,
        :func:`~netmodel.study.scenario_fabric.layout_model`), None off an OCS fabric
        or for one GPU (or a model given by :meth:`seed_model`)."""
        if not self.scenario.is_ocs or size < 2:
            return None
        self.model(size)
        return self._models.get(("layout", size))

    def with_circuits(self, layout: str) -> ScenarioCollectives:
        """This scenario's costs with its circuits set as ``layout`` (``"ring"`` or
        ``"torus"``) at every size, with this one's calibration and scope, made once: the
        layouts ``circuits = "best"`` chooses among, each re-scored apart where the links
        are adjusted (:class:`~netmodel.study.adjusted_comm.AdjustedComm`)."""
        from dataclasses import replace

        hit = self._layouts.get(layout)
        if hit is None:
            hit = self._layouts[layout] = ScenarioCollectives(
                replace(self.scenario, circuits=layout), scope=self.scope,
                calibration=self.calibration)
            if self._best:   # the models this one keeps of sizes chosen as the layout
                hit._kept_by = self._models
        return hit

    def seed_model(self, size: int, make: Callable[[], FabricCostModel]) -> bool:
        """Give instances of ``size`` GPUs the cost model ``make()`` (a
        :class:`~netmodel.collectives.model.FabricCostModel`) where none is kept yet;
        returns whether it was given. For a caller holding the graph already built and
        checked (:func:`~netmodel.study.adjusted_comm.hop_latency_slopes`: another
        scenario's with a per-hop latency added), which :meth:`model` would build again."""
        key = size if self.scenario.is_ocs else 0
        if key in self._models:
            return False
        self._models[key] = make()
        return True

    def group(self, size: int) -> tuple:
        """The GPU nodes of the instance of ``size`` GPUs."""
        return self.model(size).group(int(size))

    def reconfiguration_time(self, size: int) -> float:
        """Seconds to set the circuits of an instance of ``size`` GPUs (0 without OCS);
        paid once per re-provisioning, not per token."""
        if not self.scenario.is_ocs or size < 2:
            return 0.0
        return float(self.model(size).graph.graph.get("reconfiguration_time", 0.0))

    def instances(self, size: int) -> tuple:
        """The instances of ``size`` GPUs whose collectives run together: all
        ``floor(GPUs / size)`` of the placement with ``instances = "all"``, else the
        first one only."""
        m = self.model(size)
        if not self.concurrent:
            return (m.group(int(size)),)
        key = ("instances", int(size))   # asked per configuration by _packed_best
        hit = self._linear.get(key)
        if hit is None:
            from netmodel.collectives.placement import partition

            hit = self._linear[key] = tuple(partition(m.graph, int(size), m.placement,
                                                      seed=m.seed, gpus=m.router.gpu_list))
        return hit

    def linear(self, op: str, size: int) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)``: the candidates' ``time = a + b * bytes`` of an instance alone
        (compiled once per op, size), shape ``(C,)``; the sizes each runs at (NCCL's
        send/recv: LL or Simple by size) kept beside them for :meth:`collective_time`."""
        key = (op, int(size))
        hit = self._linear.get(key)
        if hit is None:
            from netmodel.collectives.model import candidate_lines

            m = self.model(size)
            with self.refusals(op, size):
                a, b, lo, hi = candidate_lines(m, m.candidates(op, m.group(int(size))))
            hit = self._linear[key] = (a, b)
            self._linear[("ranges", op, int(size))] = (lo, hi)
        return hit

    def own(self, op: str, size: int):
        """Every instance at once, each on its own (algorithm, protocol), the fastest for it
        alone or its tuner plugin's where the plugin chooses
        (:func:`~netmodel.collectives.concurrent.concurrent_own`, compiled once per
        op, size, as ``collective --all-groups`` charges it), which :meth:`collective_time`
        costs by :func:`~netmodel.collectives.concurrent.concurrent_own_makespan`."""
        key = ("own", op, int(size))
        hit = self._linear.get(key)
        if hit is None:
            from netmodel.collectives.concurrent import concurrent_own

            with self.refusals(op, size):
                hit = concurrent_own(self.model(size), self.instances(size), op)
            self._linear[key] = hit
        return hit

    def refusals(self, op: str, size: int):
        """A context in which ``op`` on an instance of ``size`` GPUs is costed: an instance
        cut apart by the fabric is refused as one line naming the scenario, and an op the
        scenario's own algorithm does not implement is refused at once, in one naming it
        (the compare's own charges and :mod:`netmodel.study.topology_compare` use it)."""
        from netmodel.collectives.algorithms import ALGORITHMS, SEND_RECV_OPS, algorithms_for

        algorithm = self.scenario.algorithm
        if algorithm != "auto" and op not in ALGORITHMS[algorithm] and \
                op not in SEND_RECV_OPS:
            raise UserError(f"scenario {self.scenario.label!r} runs every collective with "
                            f"algorithm {algorithm!r}, which has no {op} (algorithms for "
                            f"it: {known(algorithms_for(op))}); to cost it, give the "
                            f"scenario's [collective] algorithm = \"auto\" (the fastest "
                            f"valid one per op and size)")
        return _whole(self.scenario.label, op, size, algorithm)

    def parts(self, op: str, size: int) -> tuple[np.ndarray, ...]:
        """``(a_fixed, a_fill, b_link, b_reduce, b_least)`` of each candidate line
        (instances alone; :meth:`~netmodel.collectives.model.FabricCostModel.
        candidate_parts`): ``a = a_fixed + a_fill`` and ``b = max(b_link, b_least) +
        b_reduce``; the pipeline fill ``a_fill`` and ``b_link`` are bound by link bandwidth
        (they scale as 1/k when every link's bandwidth is multiplied by k), ``a_fixed`` by
        latency, ``b_reduce`` by the GPUs' reduction rate, ``b_least`` by NCCL's tree
        channel cap (0 where none). Compiled once per (op, size)."""
        if self.concurrent:
            raise UserError("parts() costs instances alone; this scenario runs all at once")
        key = ("parts", op, int(size))
        hit = self._linear.get(key)
        if hit is None:
            m = self.model(size)
            with self.refusals(op, size):
                hit = m.candidate_parts(op, m.group(int(size)))
            self._linear[key] = hit
        return hit

    def part_ranges(self, op: str, size: int, scale: float = 1.0
                    ) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
        """``(lo, hi)``: each line of :meth:`parts` (same order) runs at the sizes ``lo <
        n <= hi`` with every link's bandwidth times ``scale`` (NCCL's send/recv picks LL or
        Simple by size, its channels from the links' rate:
        :meth:`~netmodel.collectives.cost.CompiledCollective.size_range`); ``(None,
        None)`` where every line runs at every size."""
        self.parts(op, size)   # refuses what parts refuses
        m = self.model(size)
        return size_ranges(m, m.group(int(size)), op, scale)

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        from compute.comm import collective_args

        n, p = collective_args(op, nbytes, group_size)
        if p == 1:
            return np.zeros_like(n)
        if self.concurrent:   # every instance at once, each on its own choice
            from netmodel.collectives.concurrent import concurrent_own_makespan
            from netmodel.collectives.concurrent_time import LOCKSTEP_BUDGET

            # a grid's search asks the same sizes of one (op, GPUs) again at once (a fifth
            # of the charges of a 16,384-GPU compare): the last answer is kept where it
            # scheduled nothing
            # (no size where instances ran different algorithms, whose schedule in time has
            # a budget a caller may change), so that it depends on the sizes alone
            last = self._last_own
            if last is not None and last[0] == op and last[1] == p \
                    and last[2].shape == n.shape and np.array_equal(last[2], n):
                t = last[3]
            else:
                said: list = []
                t = concurrent_own_makespan(self.model(p), op, self.own(op, p), n, said)
                self._last_own = None if said else (op, p, n.copy(), t)
                if LOCKSTEP_BUDGET in said:
                    key = (op, int(p))
                    self._past_budget[key] = self._past_budget.get(key, 0) + 1
        elif self.scenario.tuner != NO_TUNER \
                and self.scenario.algorithm == "auto":
            # the tuner's choice, not the fastest line: the model's own costing (after the
            # lines' refusals: an instance cut apart, an op the algorithm lacks)
            self.linear(op, p)
            t = self.model(p).collective_time(op, n, p)
        else:
            from netmodel.collectives.cost import least_lines, lines_time

            # the lines that can be the least at some size (the others never set a time:
            # least_lines), worked out once per (op, size) beside the lines themselves
            least = self._linear.get(("least", op, int(p)))
            if least is None:
                a, b = self.linear(op, p)
                least = self._linear[("least", op, int(p))] = least_lines(
                    a, b, *self._linear[("ranges", op, int(p))])
            t = lines_time(*least, n)
        return np.where(n > 0, t, 0.0)

    def for_instance(self, gpus: int, stage: int) -> PlacedInstance | ScenarioCollectives:
        """The collective costs of an instance of ``gpus`` GPUs (``tp x pp``) in pipeline
        stages of ``stage`` GPUs (``tp``) as placed (compute's optional ``for_instance``,
        :class:`~compute.comm.CollectiveCostModel`):
        a group of fewer GPUs (a pipeline stage's TP group, an attention group) runs on
        each consecutive slice of that many of the instance's members (:meth:`group`),
        the slowest slice setting the time, as the blast radius re-costs an instance
        (:func:`~netmodel.study.placed_cost.placed_comm`), not on the first GPUs only:
        the stages placed further along may straddle servers. Slices placed as an earlier
        one (:func:`~netmodel.study.placed_alike.placed_alike`) are costed once, and
        where every slice is placed as the first GPUs the time is
        :meth:`collective_time`'s. A stage boundary's send-recv (a group of 2) runs on
        the pairs across the boundary, member ``i`` of a stage to member ``i`` of the
        next (``stage`` apart), the slowest pair's time (each pair costed alone: the
        ``stage`` pairs of a boundary send at once, and links they share are not charged
        for it); where the first pair is placed as the scenario's group of 2 (:meth:`group`,
        :func:`~netmodel.study.placed_alike.placed_alike`) and no other pair unlike it,
        :meth:`collective_time`'s. A group of the instance's size is
        :meth:`collective_time`'s. With every instance at once (``instances = "all"``)
        this is ``self`` (groups costed as every instance's). ``gpus`` a whole number >=
        1 and ``stage`` one of its divisors, else :class:`~compute.errors.UserError`.
        Returns a :class:`~netmodel.study.placed_cost.PlacedInstance`, made once per
        ``(gpus, stage)``, or ``self``.

        >>> coll = ScenarioCollectives("h100-dgx")
        >>> coll.for_instance(16, 3)
        Traceback (most recent call last):
        ...
        compute.errors.UserError: stage must be a whole number of GPUs that divides gpus (16), got 3
        """
        if not (is_whole(gpus) and gpus >= 1):
            raise UserError(f"gpus must be a whole number of GPUs >= 1, got {describe(gpus)}")
        if not (is_whole(stage) and 1 <= stage <= gpus and gpus % stage == 0):
            raise UserError(f"stage must be a whole number of GPUs that divides gpus "
                            f"({int(gpus):,}), got {describe(stage)}")
        if self.concurrent:
            return self
        key = (int(gpus), int(stage))
        hit = self._placed.get(key)
        if hit is None:
            hit = self._placed[key] = PlacedInstance(self, *key, memo=self._slices)
        return hit

    @property
    def past_budget(self) -> list[tuple[str, int]]:
        """``(op, instance GPUs)`` of every charge of :meth:`collective_time` so far
        where the instances ran different algorithms and working out their schedule in
        time passed its budget: charged in lockstep
        (:data:`~netmodel.collectives.concurrent_time.LOCKSTEP_BUDGET`, as ``collective
        --all-groups`` says), which is no bound of the schedule in time either way."""
        return self.past_budget_since()

    def budget_mark(self) -> dict[tuple[str, int], int]:
        """Where :attr:`past_budget` stands now, for :meth:`past_budget_since`."""
        return dict(self._past_budget)

    def past_budget_since(self, mark: dict[tuple[str, int], int] | None = None
                          ) -> list[tuple[str, int]]:
        """:attr:`past_budget` of the charges made since :meth:`budget_mark` gave ``mark``
        (None: since the start), so that a comparison given collectives an earlier one used
        says only what its own searches were charged."""
        mark = mark or {}
        return sorted(k for k, c in self._past_budget.items() if c > mark.get(k, 0))

    def schedule_notes(self, mark: dict[tuple[str, int], int] | None = None,
                       at: str = "") -> dict[str, str]:
        """The note every command gives (``settings.not_computed`` / a ``note:`` line) for
        the charges since ``mark`` (:meth:`past_budget_since`) that fell back past the
        schedule's budget: ``{"schedule of SCENARIO" + at: words}``, empty where none did
        (or the instances run alone)."""
        past = self.past_budget_since(mark) if self.concurrent else []
        return {f"schedule of {self.scenario.label}{at}": schedule_note(past)} if past else {}

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """Seconds for an MoE all-to-all of ``nbytes`` a GPU (``copies`` copies of each
        token, the send buffer of one copy per expert) among ``group_size`` GPUs when it
        crosses the network once a server (DeepEP's normal kernels:
        :mod:`netmodel.collectives.moe`); ``reach(units)``: the expected distinct units
        (servers, GPUs) one token's experts sit on. compute asks it where its prefill
        dispatch and combine run that way (:func:`compute.moe_routing.moe_comm`).

        The time is :func:`netmodel.collectives.moe.once_a_server_time` on the instance's
        cost model, as a fabric's (:meth:`~netmodel.collectives.model.FabricCostModel.
        moe_all_to_all_time`): the smaller of that way's and every copy's
        (:meth:`collective_time` of ``"all-to-all"``), which is taken alone with every
        instance at once (``instances = "all"``; the shared fabric is costed for plain
        all-to-alls only), where the group's scale-up domains differ in size and where
        each GPU is its own (the same traffic)."""
        from compute.comm import collective_args
        from netmodel.collectives.moe import check_once_a_server

        copies = check_once_a_server("moe_all_to_all_time", copies, reach)
        n, p = collective_args(None, nbytes, group_size)
        if p == 1:
            return np.zeros_like(n)

        if self.concurrent:
            return self.collective_time("all-to-all", n, p)
        return once_a_server(self, self.model(p), self.scenario.label, n, p, copies, reach)



def size_ranges(model, members: Sequence[Hashable], op: str, scale: float = 1.0
                ) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """``(lo, hi)``: each candidate line of ``op`` on ``members`` on ``model`` (in
    :meth:`~netmodel.collectives.model.FabricCostModel.candidates`' order) runs at the
    sizes ``lo < n <= hi`` with every link's bandwidth times ``scale`` (NCCL's send/recv
    picks LL or Simple by size, its channels from the links' rate, and Simple send-recv's
    lines by its channels run at their own sizes:
    :meth:`~netmodel.collectives.cost.CompiledCollective.size_range`); ``(None, None)``
    where every line runs at every size: :meth:`ScenarioCollectives.part_ranges` of the
    scenario's group, and the re-scoring of each slice
    (:class:`~netmodel.study.adjusted_comm.AdjustedComm`)."""
    from netmodel.collectives.cost import SEND_RECV

    cal = model.calibration
    if not any(o == op for o, _ in SEND_RECV):
        return None, None
    r = [c[4].size_range(c[1], cal, scale, c[3]) for c in model.candidates(op, members)]
    lo = np.array([x[0] for x in r], dtype=float)
    hi = np.array([x[1] for x in r], dtype=float)
    return (lo, hi) if (lo > 0).any() or (hi < np.inf).any() else (None, None)


def once_a_server(comm, model, label: str, n: np.ndarray, p: int, copies: int,
                  reach) -> np.ndarray:
    """:func:`netmodel.collectives.moe.once_a_server_time` on ``model`` (instances of ``p``
    GPUs) against every copy's all-to-all by ``comm.collective_time``, one line naming the
    scenario ``label`` where an instance is cut apart: the scenario's own comm
    (:class:`ScenarioCollectives`) and the crossovers' re-scoring one
    (:class:`~netmodel.study.adjusted_comm.AdjustedComm`) both cost it so."""
    from netmodel.collectives.moe import once_a_server_time

    def every() -> np.ndarray:
        return comm.collective_time("all-to-all", n, p)

    with _whole(label, "all-to-all", p):
        return once_a_server_time(model, model.group(p), n, copies, reach, every)


@contextmanager
def _whole(label: str, op: str, size: int, algorithm: str = "auto"):
    """An instance of ``size`` GPUs of scenario ``label`` cut apart by the fabric
    (:class:`~netmodel.collectives.cost.GroupCut`), as one line naming the scenario; and
    where the scenario's own ``algorithm`` (not auto) cannot run ``op`` on the instance
    (the torus algorithm on an OCS instance set as a ring), the model's ``no algorithm can
    run ...`` said as the scenario's choice, with what to give instead."""
    from netmodel.collectives.cost import GroupCut

    try:
        yield
    except GroupCut as exc:
        raise UserError(f"scenario {label!r}: an instance of {size} GPUs is cut apart "
                        f"({exc}); no {op} can run on it") from None
    except UserError as exc:
        said = str(exc)
        if algorithm == "auto" or not said.startswith("no algorithm can run"):
            raise
        why = said[said.index("(") + 1:-1] if said.endswith(")") and "(" in said else said
        raise UserError(f"scenario {label!r} runs every collective with algorithm "
                        f"{algorithm!r}, which cannot run {op} on an instance of {size} GPUs "
                        f"({why}); to cost it, give the scenario's [collective] algorithm = "
                        f"\"auto\" (the fastest valid one per op and size) or one that runs "
                        f"on its fabric") from None
