"""A scenario's collective costs re-scored with every link's bandwidth multiplied and a
latency added per hop, without routing its fabric again (:class:`AdjustedComm`).

Uniform link bandwidth scaling divides the link-bound parts of every candidate's line by the
factor exactly (:func:`adjusted_lines`), and a per-hop latency adds to each candidate's
``a`` a slope measured once per fabric (:func:`hop_latency_slopes`). An instance as placed
is re-scored group by group (:class:`PlacedAdjusted`, through the scenario's own
:class:`~netmodel.study.placed_cost.PlacedInstance`); an MoE prefill's all-to-all is
compiled on the fabric with its links adjusted. The crossovers
(:mod:`netmodel.study.crossovers`) and the per-hop latency sweep
(:mod:`netmodel.study.sweep`) search with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from netmodel.study.scenario_collectives import ScenarioCollectives, once_a_server, size_ranges

if TYPE_CHECKING:
    from netmodel.study.placed_cost import PlacedInstance

__all__ = ["SLOPE_AT", "AdjustedComm", "PlacedAdjusted", "adjusted_lines",
           "hop_latency_slopes"]

#: Per-hop latency at which the slope is measured (s).
SLOPE_AT = 1e-6


class AdjustedComm:
    """A scenario's collective costs with every link's bandwidth multiplied by ``scale``
    and ``hop_latency`` seconds added per hop, re-scored from its compiled candidates
    (compute's :class:`~compute.comm.CollectiveCostModel`, with ``for_instance`` and
    ``moe_all_to_all_time``).

    Parameters
    ----------
    collectives : ScenarioCollectives
        The scenario's own costs, instances alone. Read of it: ``parts``,
        ``part_ranges``, ``model(size)``, ``scenario``, ``calibration`` and
        ``for_instance``.
    scale : float
        What every link's bandwidth is multiplied by.
    hop_latency : float
        Seconds added to every link.
    slopes : callable, optional
        ``slopes(op, size)``: each candidate's seconds per second of per-hop latency
        (:func:`hop_latency_slopes`); needed where ``hop_latency`` is not 0.
    """

    def __init__(self, collectives, scale: float = 1.0, hop_latency: float = 0.0,
                 slopes=None):
        self.c = collectives
        self.scale = float(scale)
        self.hop = float(hop_latency)
        self.slopes = slopes
        self._models: list = []    # (the scenario's cost model, the adjusted one)
        self._chosen: dict = {}    # circuits = "best": size -> the chosen layout's comm

    def layout_comm(self, size: int) -> AdjustedComm | None:
        """With ``circuits = "best"`` on an OCS fabric: the re-scoring of the layout chosen
        for instances of ``size`` GPUs at these links, None elsewhere. An operator who
        re-sets an instance's circuits per job sets them for the links it has, so the
        layouts are chosen again here, as a compilation at the adjusted links chooses
        (:func:`~netmodel.study.scenario_fabric.layout_model`): each layout the size can
        take (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.
        with_circuits`) re-scored at this scale and per-hop latency (its own slopes, kept
        by it), the faster kept by :func:`~netmodel.study.scenario_fabric.best_layout`'s
        criterion. The slices of an instance as placed (:class:`PlacedAdjusted`) choose
        theirs so, each on its own circuits."""
        from netmodel.study.scenarios import BEST

        s = self.c.scenario
        if s.circuits != BEST or not s.is_ocs or int(size) < 2:
            return None
        p = int(size)
        hit = self._chosen.get(p)
        if hit is None:
            from netmodel.study.scenario_fabric import best_layout

            def make(lay: str):
                fixed = self.c.with_circuits(lay)
                if fixed.layout(p) != lay:   # a torus the size or ports cannot set
                    return None
                slopes = hop_latency_slopes(fixed.scenario, fixed, fixed.slopes_cache) \
                    if self.hop else None
                comm = AdjustedComm(fixed, self.scale, self.hop, slopes)
                return comm, comm

            # the choice depends on the size and the links only: kept by the scenario's
            # costs for every re-scoring at the same links (a sweep's rows share them)
            key = (p, self.scale, self.hop)
            lay = self.c.layout_choices.get(key)
            if lay is None:
                lay, hit = best_layout(p, make)
                self.c.layout_choices[key] = lay
            else:
                hit = make(lay)[1]
            self._chosen[p] = hit
        return hit

    def lines(self, op: str, group_size: int) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)``: each candidate's ``time = a + b * bytes`` at this scale and
        per-hop latency (with ``circuits = "best"``, the chosen layout's:
        :meth:`layout_comm`)."""
        chosen = self.layout_comm(group_size)
        if chosen is not None:
            return chosen.lines(op, group_size)
        slope = self.slopes(op, int(group_size)) if self.hop else None
        return adjusted_lines(*self.c.parts(op, int(group_size)), slope, self.scale,
                               self.hop)

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        n = np.asarray(nbytes, dtype=float)
        if int(group_size) <= 1:
            return np.zeros_like(n)
        chosen = self.layout_comm(group_size)
        if chosen is not None:
            return chosen.collective_time(op, n, group_size)
        a, b = self.lines(op, group_size)
        lo, hi = self.c.part_ranges(op, int(group_size), self.scale)
        m = self.c.model(int(group_size))
        group = m.group(int(group_size))
        slope = self.slopes(op, int(group_size)) if self.hop else None
        key = (op, int(group_size))
        rows = self.__dict__.setdefault("_rows", {}).get(key)
        if rows is None or rows[0] is not m:
            rows = self._rows[key] = (m, _send_recv_rows(m, group, op, self.scale))
        own = _send_recv_times(m, rows[1], self.c.parts(op, int(group_size)), slope,
                               self.scale, self.hop, n)
        t = _lines_choice(m, group, op, a, b, lo, hi, n, own)
        return np.where(n > 0, t, 0.0)

    def for_instance(self, gpus: int, stage: int):
        """The re-scored costs of an instance of ``gpus`` GPUs in pipeline stages of
        ``stage`` as placed (compute's
        optional ``for_instance``, :class:`~compute.comm.CollectiveCostModel`), as the
        scenario's own (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.
        for_instance`) costs it: a group of fewer GPUs on each slice of that many members
        placed unlike the earlier ones, each slice's candidate parts re-scored
        (:func:`adjusted_lines`, its per-hop slopes measured on the slice), the slowest
        slice's time; a stage boundary's send-recv so on each boundary pair. Every
        instance at once: this comm itself."""
        placed = getattr(self.c, "for_instance", None)
        own = None if placed is None else placed(gpus, stage)   # its checks of the layout
        if own is None or own is self.c:
            return self
        key = (own.gpus, own.stage)
        hit = self.__dict__.setdefault("_placed", {}).get(key)
        if hit is None:
            hit = self._placed[key] = PlacedAdjusted(self, own)
        return hit

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """An MoE prefill all-to-all crossing the network once a server, as the
        scenario's own (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.
        moe_all_to_all_time`) costs it: :func:`netmodel.collectives.moe.once_a_server_time`
        on the instance's cost model with the links adjusted (its lines compiled on that
        graph, once per scale and per-hop latency), the faster of that way and every
        copy's, which is this comm's re-scored all-to-all. Without it compute costs an
        MoE prefill here as every copy sent (:func:`compute.moe_routing.moe_comm`)."""
        n = np.asarray(nbytes, dtype=float)
        p = int(group_size)
        if p <= 1:
            return np.zeros_like(n)
        chosen = self.layout_comm(p)
        if chosen is not None:
            return chosen.moe_all_to_all_time(n, p, copies, reach)
        return once_a_server(self, self._model(p), self.c.scenario.label, n, p, copies, reach)

    def _model(self, size: int):
        """The cost model of instances of ``size`` GPUs on the scenario's graph with every
        link's bandwidth times ``scale`` and ``hop_latency`` added (as
        :class:`~netmodel.study.scenarios.Adjust` applies them), made once a comm."""
        base = self.c.model(size)
        for b, m in self._models:
            if b is base:
                return m
        m = _relinked(self.c.scenario, base, self.c.calibration, self.scale, self.hop)
        self._models.append((base, m))
        return m


def _lines_choice(m, group, op: str, a, b, lo, hi, n: np.ndarray, own=()) -> np.ndarray:
    """Seconds of ``op`` on ``group`` at the sizes ``n`` from the candidate lines ``(a,
    b)`` of ``m``'s candidates (run at ``lo < n <= hi`` where given): the least line, or
    the scenario's tuner plugin's choice where it chooses, as compare charges it. ``own``:
    ``[(rows, times)]``, candidates whose times at the flattened ``n`` are given instead
    of their lines' (:func:`_send_recv_times`)."""
    from netmodel.collectives.cost import lines_time

    if not m.tuned() and not own:
        return lines_time(a, b, lo, hi, n)
    flat = n.reshape(-1)
    times = a[:, None] + b[:, None] * flat[None, :]
    if lo is not None:
        times = np.where((flat > lo[:, None]) & (flat <= hi[:, None]), times, np.inf)
    for rows, t in own:
        times[rows] = t
    if not m.tuned():
        return times.min(0).reshape(n.shape)
    return m.chosen(times, m.candidates(op, group), flat, op, group)[1].reshape(n.shape)


def _send_recv_rows(m, group, op: str, scale: float) -> list:
    """``[(comp, protocol, rows)]``: each NCCL send/recv candidate of ``op`` on ``group``
    (:data:`~netmodel.collectives.cost.SEND_RECV`: a compiled algorithm under one
    protocol) and its lines' rows among ``m``'s candidates; ``[]`` at the links' own rate
    (``scale`` 1), whose lines are the candidates' own."""
    from netmodel.collectives.cost import SEND_RECV

    if scale == 1.0 or not any(o == op for o, _ in SEND_RECV):
        return []
    cal = m.calibration
    mine: dict = {}
    for i, c in enumerate(m.candidates(op, group)):
        if (c[4].op, c[4].algorithm) in SEND_RECV:
            mine.setdefault((id(c[4]), c[1]), (c[4], cal.protocol(c[1]), []))[2].append(i)
    return list(mine.values())


def _send_recv_times(m, mine: list, parts, slope, scale: float, hop: float,
                     n: np.ndarray) -> list:
    """``[(rows, times)]``: each NCCL send/recv candidate of :func:`_send_recv_rows`
    (``mine``) re-scored at the sizes ``n`` (flattened) with every link's bandwidth times
    ``scale`` and ``hop`` added per hop (``parts`` and ``slope`` the candidates' own,
    :func:`adjusted_lines`), its lines those of its path at ``scale`` times its rate (a
    peer's channels and a channel's ratio, so Simple's lines by channel and LL's share,
    move with the links' rate:
    :meth:`~netmodel.collectives.cost.CompiledCollective.scaled_line_parts`), each of its
    rows the least of them."""
    cal = m.calibration
    flat = n.reshape(-1)
    out = []
    for comp, proto, rows in mine:
        i = rows[0]   # a candidate's lines share their fixed part (latency, no bandwidth)
        a0 = parts[0][i] + (hop * slope[i] if hop else 0.0)
        best = np.full(flat.shape, np.inf)
        for _, _, fill, b_link, b_least, lo, hi in comp.scaled_line_parts(proto, cal, scale):
            t = a0 + fill / scale + (max(b_link / scale, b_least) + parts[3][i]) * flat
            best = np.minimum(best, np.where((flat > lo) & (flat <= hi), t, np.inf))
        out.append((rows, best))
    return out


def _relinked(scenario, model, calibration, scale: float = 1.0, hop: float = 0.0):
    """A cost model with ``scenario``'s settings
    (:func:`~netmodel.study.scenario_fabric.scenario_cost_model`) and ``calibration`` on
    ``model``'s graph with every link's bandwidth times ``scale`` and ``hop`` seconds added
    per hop (as :class:`~netmodel.study.scenarios.Adjust` applies them); not checked again
    (``model``'s graph was checked when built)."""
    from netmodel.study.scenario_fabric import adjusted, scenario_cost_model
    from netmodel.study.scenarios import Adjust

    graph = adjusted(model.graph, Adjust(bandwidth_scale=scale, hop_latency=hop))
    out = scenario_cost_model(scenario, graph, calibration, validated=True)
    out.share_loads_of(model)   # where only the latencies changed: model's loads
    return out


class PlacedAdjusted:
    """:meth:`AdjustedComm.for_instance`: the re-scored collective costs of one instance
    as placed (compute's :class:`~compute.comm.CollectiveCostModel`).

    Parameters
    ----------
    comm : AdjustedComm
        The re-scoring (its scale and per-hop latency), which costs what ``placed`` leaves
        to the scenario.
    placed : PlacedInstance
        The scenario's own costing of the instance
        (:class:`~netmodel.study.placed_cost.PlacedInstance`), asked where a collective
        costs what the scenario charges (``as_scenario``), which groups it runs on
        (``groups``) and how a cut is refused (``cut``); each group is re-scored here.
    """

    def __init__(self, comm: AdjustedComm, placed: PlacedInstance):
        self.comm, self.placed = comm, placed
        self._parts: dict = {}     # (slice model id, members, op) -> its lines' parts
        self._models: dict = {}    # (slice model id, hop, scale) -> (model, adjusted one)
        self._chosen: dict = {}    # circuits = "best": (boundary, p) -> the groups chosen

    def groups(self, op: str, p: int) -> list:
        """``(cost model, members)`` of each group ``op`` on groups of ``p`` runs on, one
        of each placement (:meth:`~netmodel.study.placed_cost.PlacedInstance.groups`, its
        refusals). With ``circuits = "best"`` on an OCS fabric each group's circuits are
        set as the layout faster at these links (:func:`~netmodel.study.scenario_fabric.
        best_layout`'s criterion, the group's all-reduce re-scored here), as
        :meth:`AdjustedComm.layout_comm` chooses an instance's and a compilation at the
        adjusted links chooses each slice's
        (:func:`~netmodel.study.placed_graph.instance_circuits`); the scenario's own
        choice, made at its own links, is not kept."""
        from netmodel.study.circuit_planes import torus_sides
        from netmodel.study.scenarios import BEST

        own = self.placed.groups(op, p)   # its refusals; the groups at the own links
        s = self.placed.coll.scenario
        if s.circuits != BEST or not s.is_ocs or not torus_sides(int(p)):
            return own   # one layout the size can take: the ring, set as at the own links
        key = (self.placed.boundary(op, p), int(p))
        hit = self._chosen.get(key)
        if hit is None:
            hit = self._chosen[key] = self._best_groups(op, int(p), len(own))
        return hit

    def _best_groups(self, op: str, p: int, count: int) -> list:
        """:meth:`groups` of a ``circuits = "best"`` scenario: each layout's groups
        (the scenario set as that layout, :meth:`~netmodel.study.scenario_collectives.
        ScenarioCollectives.with_circuits`; placed alike as the scenario's, on the same
        fabric: ``count`` of them, in the same order), a group's layout made where its
        circuits are set as it (:func:`~netmodel.study.scenario_fabric.set_layout`), the
        faster kept per group by :func:`~netmodel.study.scenario_fabric.best_layout`."""
        from netmodel.study.scenario_fabric import LAYOUTS, best_layout, set_layout

        c, pl = self.comm.c, self.placed
        per = {}
        for lay in LAYOUTS:
            try:
                per[lay] = pl.coll.with_circuits(lay).for_instance(pl.gpus, pl.stage) \
                    .groups(op, p)
            except UserError:   # cut apart as this layout: the other's
                continue
            if len(per[lay]) != count:   # not expected: the same fabric, the same placement
                raise RuntimeError(f"scenario {c.scenario.label!r} set as {lay} costs "
                                   f"{len(per[lay])} groups of {p}, not {count}")
        chosen = []
        for i in range(count):
            def make(lay: str, i=i):
                if lay not in per:
                    return None
                model, members = per[lay][i]
                if set_layout(model, tuple(members)) != lay:   # a torus set as a ring
                    return None
                return _Rescored(self, model, tuple(members)), (model, members)

            hit = best_layout(int(p), make)
            if hit is None:
                raise pl.cut(op, p)
            chosen.append(hit[1])
        return chosen

    def _adjusted_model(self, model, scale: float, hop: float):
        """``model`` (a slice's cost model) on its graph with every link's bandwidth times
        ``scale`` and ``hop`` added per hop, made once (as :meth:`AdjustedComm._model`)."""
        key = (id(model), scale, hop)
        hit = self._models.get(key)
        if hit is None:
            hit = self._models[key] = (model, _relinked(
                self.placed.coll.scenario, model, model.calibration, scale, hop))
        return hit[1]

    def _lines(self, model, members: tuple, op: str):
        """``(a, b, lo, hi)`` of the slice ``members`` on ``model`` re-scored at the comm's
        scale and per-hop latency (its slope measured at :data:`SLOPE_AT`, as
        :func:`hop_latency_slopes` measures the first GPUs')."""
        c = self.comm
        key = (id(model), members, op)
        hit = self._parts.get(key)
        if hit is None:
            hit = self._parts[key] = (model, model.candidate_parts(op, members), {})
        parts, slopes = hit[1], hit[2]
        slope = None
        if c.hop:
            slope = slopes.get("slope")
            if slope is None:
                at = self._adjusted_model(model, 1.0, SLOPE_AT)
                a1 = at.candidate_parts(op, members)[0]
                if a1.shape != parts[0].shape:
                    raise UserError("per-hop latency changed the candidate algorithms")
                slope = slopes["slope"] = (a1 - parts[0]) / SLOPE_AT
        a, b = adjusted_lines(*parts, slope, c.scale, c.hop)
        return (a, b, *size_ranges(model, members, op, c.scale))

    def _slice_time(self, op: str, model, members: tuple, n: np.ndarray) -> np.ndarray:
        a, b, lo, hi = self._lines(model, members, op)
        c = self.comm
        hit = self._parts[(id(model), members, op)]
        if "rows" not in hit[2]:
            hit[2]["rows"] = _send_recv_rows(model, members, op, c.scale)
        own = _send_recv_times(model, hit[2]["rows"], hit[1], hit[2].get("slope"), c.scale,
                               c.hop, n)
        return _lines_choice(model, members, op, a, b, lo, hi, n, own)

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        n = np.asarray(nbytes, dtype=float)
        p = int(group_size)
        if self.placed.as_scenario(op, p):
            return self.comm.collective_time(op, n, p)
        t = None
        for model, members in self.groups(op, p):
            ti = self._slice_time(op, model, tuple(members), n)
            t = ti if t is None else np.maximum(t, ti)
        return np.where(n > 0, t, 0.0)

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """:meth:`AdjustedComm.moe_all_to_all_time` per slice placed unlike the earlier
        ones, each on its slice's cost model with the links adjusted, the slowest."""
        from netmodel.collectives.cost import GroupCut
        from netmodel.collectives.moe import once_a_server_time

        n = np.asarray(nbytes, dtype=float)
        p = int(group_size)
        if self.placed.as_scenario("all-to-all", p):
            return self.comm.moe_all_to_all_time(n, p, copies, reach)
        c = self.comm
        t = None
        for model, members in self.groups("all-to-all", p):
            members = tuple(members)

            def every(model=model, members=members) -> np.ndarray:
                return self._slice_time("all-to-all", model, members, n)

            try:
                ti = once_a_server_time(self._adjusted_model(model, c.scale, c.hop),
                                        members, n, copies, reach, every)
            except GroupCut:
                raise self.placed.cut("all-to-all", p) from None
            t = ti if t is None else np.maximum(t, ti)
        return np.where(n > 0, t, 0.0)


class _Rescored:
    """One group's costs re-scored by a :class:`PlacedAdjusted` (its scale and per-hop
    latency), as :func:`~netmodel.study.scenario_fabric.best_layout` asks a layout's
    (``collective_time(op, nbytes, members)``)."""

    def __init__(self, placed: PlacedAdjusted, model, members: tuple):
        self.placed, self.model, self.members = placed, model, members

    def collective_time(self, op: str, nbytes, _members) -> np.ndarray:
        return self.placed._slice_time(op, self.model, self.members,
                                       np.asarray(nbytes, dtype=float))


def adjusted_lines(a_fixed, a_fill, b_link, b_red, b_least, slope, scale: float,
                    hop: float):
    """``(a, b)`` of candidate lines from their parts (arrays of any one shape,
    :meth:`~netmodel.collectives.model.FabricCostModel.candidate_parts`): the fill and
    ``b_link`` divided by ``scale``, ``b`` at least ``b_least`` (NCCL's tree channel cap,
    which the links' bandwidth does not move) before ``b_red`` is added, ``hop`` times the
    slope added to ``a``.

    Parameters
    ----------
    a_fixed, a_fill, b_link, b_red, b_least : numpy.ndarray
        The candidates' parts.
    slope : numpy.ndarray or None
        Seconds added to ``a`` per second of per-hop latency (read only where ``hop``).
    scale, hop : float
        Links' bandwidth multiple and per-hop latency (s).

    Returns
    -------
    tuple of numpy.ndarray
        ``(a, b)``: each line's ``time = a + b * bytes``.

    >>> a, b = adjusted_lines(*np.array([[1.0], [2.0], [4.0], [0.5], [3.0]]), None, 2.0, 0.0)
    >>> a.tolist(), b.tolist()     # a = 1 + 2/2; b = max(4/2, 3) + 0.5
    ([2.0], [3.5])
    """
    a = a_fixed
    if hop:
        a = a + hop * slope
    # as combine: max(b_link, b_least) + b_reduce; b_least is 0 where no cap binds and
    # b_link >= 0, so the max leaves an uncapped line's b_link as it is
    return a + a_fill / scale, np.maximum(b_link / scale, b_least) + b_red


def hop_latency_slopes(scenario, coll, cache: dict):
    """Each candidate's seconds per second of per-hop latency on ``scenario``'s fabric.

    Parameters
    ----------
    scenario : Scenario
        The scenario ``coll`` costs.
    coll : ScenarioCollectives
        Its own costs, instances alone.
    cache : dict
        Kept by the caller: the slopes of each scenario (by label), measured once.

    Returns
    -------
    callable
        ``slope(op, size)``: seconds added to each candidate's ``a`` (in ``coll.parts``'
        order) per second of per-hop latency, measured from a compilation at the
        scenario's own per-hop latency plus :data:`SLOPE_AT` (the latency re-scoring adds
        goes on top of the scenario's own).
    """
    key = scenario.label
    if key in cache:
        return cache[key]
    own = scenario.adjust.hop_latency
    step = (own + SLOPE_AT) - own   # SLOPE_AT itself where the scenario adds none
    at = ScenarioCollectives(scenario.with_param("adjust.hop_latency", own + SLOPE_AT))
    memo: dict = {}

    def slope(op: str, size: int) -> np.ndarray:
        k = (op, size)
        if k not in memo:
            a0 = coll.parts(op, size)[0]
            _seed_slope_model(coll, at, size)
            a1 = at.parts(op, size)[0]
            if a1.shape != a0.shape:
                raise UserError("per-hop latency changed the candidate algorithms")
            memo[k] = (a1 - a0) / step
        return memo[k]

    cache[key] = slope
    return slope


def _seed_slope_model(coll, at, size: int) -> None:
    """Give ``at`` (``coll``'s scenario with :data:`SLOPE_AT` per hop) its cost model for
    instances of ``size`` GPUs made from ``coll``'s: the graph ``coll`` costs on (the
    fabric, with its circuits set on an OCS fabric, already built and checked) with the
    per-hop latency added, instead of building, setting circuits and checking it again.
    The same graph to the last bit where ``coll``'s scenario adds no per-hop latency of
    its own (``latency * scale + 0.0`` then ``+ hop`` is ``latency * scale + hop``;
    ``x * 1.0`` is ``x``); elsewhere, and where ``at`` has the model, nothing is done."""
    s = coll.scenario
    if s.adjust.hop_latency != 0.0 or coll.concurrent or at.concurrent:
        return
    at.seed_model(size, lambda: _relinked(at.scenario, coll.model(size), at.calibration,
                                          hop=at.scenario.adjust.hop_latency))
