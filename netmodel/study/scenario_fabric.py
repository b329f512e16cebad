"""A scenario's fabric and the graph one of its instances is costed on.

:func:`build_fabric` builds the physical graph from the scenario's (builder, parameters) once
a process; :func:`adjusted` applies its ``[adjust]``; on an optical circuit-switched fabric
:func:`instance_graph` sets the circuits of every instance of one size (with ``circuits =
"best"`` the layout :func:`layout_model` chooses for it); :func:`scenario_model`
is the cost model of instances of one size, with the collectives' parameters of
:func:`scenario_calibration`; :func:`network_key` spells what its collective costs depend on
(:class:`~netmodel.study.scenario_collectives.ScenarioCollectives` shares compiled costs by it).

>>> g = build_fabric("lite-flat")
>>> adjusted(g, get_scenario("lite-flat").adjust) is g
True
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.hardware import GpuSpec
from compute.memo import Lru
from netmodel.collectives.tuner_plugin import NO_TUNER
from netmodel.study.circuit_copies import (
    alike_circuits,
    alike_groups,
    members_cell,
    ocs_planes,
    ocs_ports,
    worth_copying,
)
from netmodel.study.circuit_planes import circuit_options
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenarios import BEST, CIRCUITS, Scenario, fabric_error

if TYPE_CHECKING:

    from netmodel.collectives.calibration import Calibration
    from netmodel.collectives.model import FabricCostModel
    from netmodel.study.scenarios import Adjust

__all__ = ["BEST_SIZES", "LAYOUTS", "adjusted", "best_layout", "build_fabric", "faster_layout",
           "first_instance_layout", "instance_graph", "is_built", "layout_model", "network_key",
           "scenario_calibration", "scenario_cost_model", "scenario_model", "set_layout"]


_BUILT_MAX = 64
#: Built fabrics by (spec string, GPU type): a fabric is built once per process (of the
#: last :data:`_BUILT_MAX` used).
_BUILT = Lru(_BUILT_MAX)


def build_fabric(scenario: str | Scenario) -> nx.Graph:
    """The scenario's physical fabric graph, built from its (builder, parameters) with the
    scenario's GPU type object (a user's GPU works), cached by its spec string and GPU type,
    and frozen (:func:`networkx.freeze`: nodes and links cannot be added or removed; do
    not change its attributes either: callers share it, and paths trust it as checked,
    :func:`is_built`). A scenario on a fabric graph
    (:func:`~netmodel.study.scenarios.fabric_scenario`) gives that graph."""
    from topologies.specs import build

    scenario = get_scenario(scenario)
    if scenario.graph is not None:
        return scenario.graph
    try:
        key = _key(scenario)
        graph = _BUILT.recall(key)
        fresh = graph is None
        if fresh:
            from netmodel.collectives.routing import routed_builds

            with routed_builds():   # costed, so routed: refused before it is built where no
                graph = build(*scenario.fabric_params())   # router could index it
    except UserError as exc:
        raise fabric_error(scenario, exc) from None
    if fresh:
        nx.freeze(graph)   # shared by every caller: adding or removing a node or link raises
        _BUILT.put(key, graph)
    gpu = scenario.gpu
    first = next(n for n, k in graph.nodes(data="kind") if k == "gpu")
    if graph.nodes[first]["gpu"] != gpu:
        raise UserError(f"scenario {scenario.name!r}: its fabric's GPUs are "
                        f"{graph.nodes[first]['gpu']!r} but the scenario's GPU is {gpu!r}; "
                        f"write gpu = \"$gpu\" (or lite = \"$gpu\") in [fabric]")
    return graph


def _key(scenario: Scenario) -> tuple:
    """The key :func:`build_fabric` keeps the scenario's built fabric under."""
    return scenario.fabric_spec(), scenario.gpu_spec


def is_built(scenario: object, graph: nx.Graph) -> bool:
    """Whether ``graph`` is the fabric :func:`build_fabric` gave for ``scenario`` (and
    still holds): checked against :mod:`topologies.schema` where it entered (its builder,
    the fabric file's reader or :func:`~netmodel.study.scenarios.fabric_scenario`), and
    not modified since (build_fabric's fabrics are not). Builds nothing: a fabric no
    longer kept, or any other graph, is not known to be checked.

    >>> g = build_fabric("lite-ocs")
    >>> is_built(get_scenario("lite-ocs"), g), is_built(get_scenario("lite-ocs"), g.copy())
    (True, False)
    """
    if not isinstance(scenario, Scenario):
        return False
    if scenario.graph is not None:
        return graph is scenario.graph
    try:
        return _BUILT.get(_key(scenario)) is graph
    except UserError:
        return False


def adjusted(graph: nx.Graph, adjust: Adjust) -> nx.Graph:
    """A copy of ``graph`` with the scenario's :class:`~netmodel.study.scenarios.Adjust` applied
    (the graph itself when there is nothing to change): every switch's, OCS's and link's
    latency scaled, a hop's added to every link, every link's bandwidth scaled
    (:func:`~topologies.schema.scale_bandwidth`), and with them a realized OCS fabric's
    fibres' (:func:`~topologies.schema.scale_cabling`: the record its circuits ride on,
    their lengths and lanes kept; a copy, the fabric's own record unchanged). The latency
    change is recorded on the graph (:func:`~topologies.common.note_latency_adjustment`,
    composed with one made before), so a cable's length read back from its latency is
    its as-built one (the network bill's).

    >>> from netmodel.study.scenarios import Adjust
    >>> g = adjusted(adjusted(build_fabric("lite-flat"), Adjust(latency_scale=2)),
    ...              Adjust(latency_scale=3, hop_latency=1e-7))
    >>> g.graph["latency_scale"], round(g.graph["hop_latency"] * 1e9, 6)
    (6.0, 100.0)
    """
    if adjust.is_identity:
        return graph
    from topologies.common import note_latency_adjustment
    from topologies.schema import scale_bandwidth, scale_cabling

    out = graph.copy()
    ls, hop, bs = adjust.latency_scale, adjust.hop_latency, adjust.bandwidth_scale
    for _, data in out.nodes(data=True):
        if data["kind"] in ("switch", "ocs"):
            data["latency"] = data["latency"] * ls
    for _, _, data in out.edges(data=True):
        data["latency"] = data["latency"] * ls + hop
        scale_bandwidth(data, bs)   # and each circuit's, where a pair's circuits differ
    if ls != 1 or hop:   # what was done to the latencies, for a length read back from one
        note_latency_adjustment(out.graph, ls, hop)
    # a realized OCS fabric's fibres (not edges: its cabling's record) with its links, as
    # they are scaled where they are edges; their lengths and lanes as they are
    scale_cabling(out.graph, bs)
    return out


def instance_graph(scenario: Scenario, graph: nx.Graph, size: int,
                   calibration: Calibration | None = None, seed: int = 0) -> nx.Graph:
    """The graph an instance of ``size`` GPUs is costed on. For an optical circuit-switched
    fabric: circuits among the GPUs of every instance (the scenario's placement) set to its
    ``circuits`` topology, as many parallel copies as the ports allow (``ring``: ports/2,
    ``torus``: ports/4; fewer where the OCS planes cannot carry them, :func:`~netmodel.study.circuit_planes.most_copies`:
    an odd ring of ``n`` takes ``n`` circuits a copy on planes that carry ``(n - 1) / 2``
    each, so ``ports x (n - 1) / 2 / n`` copies, ports/3 for a triangle, ``ports x (n -
    1) / 4 / n`` for a torus of odd sides; a torus falls back to a ring for sizes with no
    2D factorisation, under 4 ports or where not one copy fits the planes, a 3x3 on 4;
    ``best``: the layout :func:`layout_model` chooses for the size, costed with
    ``calibration``, None: :func:`scenario_calibration`'s). Other fabrics: ``graph``
    itself. ``seed``: the draw of a ``random`` placement, the one the cost model places
    its group by (circuits set for seed 0's instances left a group drawn by another seed
    cut apart).

    ``graph`` is checked against :mod:`topologies.schema` once, before the circuits are
    tried, unless it is the scenario's built fabric (:func:`is_built`: checked where it
    entered); each copy count tried is realized on it without checking it again."""
    if not scenario.is_ocs or size < 2:
        return graph
    made: dict = {}   # the first instance's circuits, by layout, where set already
    if scenario.circuits == BEST:   # the layout layout_model chooses for the size
        if calibration is None:
            calibration = scenario_calibration(scenario)
        # chosen on the first instance's circuits where the instances are alike, so
        # that only the chosen layout is set on the whole cell, from them
        chosen = first_instance_layout(scenario, graph, size, calibration, made=made) \
            or layout_model(scenario, graph, size, calibration)[0]
        scenario = replace(scenario, circuits=chosen)
    from netmodel.collectives.placement import partition
    from topologies.optical import ports_optics, realize
    from topologies.schema import gpu_nodes, validate

    if not is_built(scenario, graph):
        validate(graph, check_connected=False)
    groups = partition(graph, size, scenario.placement, seed=seed, gpus=gpu_nodes(graph))
    ports = ocs_ports(graph, groups[0])
    planes = ocs_planes(graph, groups[0])
    if ports < 2 and size > 2:
        raise UserError(f"scenario {scenario.name!r}: an instance of {size} GPUs needs 2 "
                        f"optical ports per GPU (a circuit to each ring neighbour); the "
                        f"fabric's GPUs have {ports}")
    if worth_copying(ports, groups) and alike_groups(graph, groups):
        # the first group's circuits, copied to the others
        out = alike_circuits(graph, groups, scenario.circuits, ports, planes, made)
        if out is not None:
            return out
    last = None
    for pairs in circuit_options(scenario.circuits, groups, ports, planes):
        try:
            return realize(graph, pairs, validated=True)   # checked above
        except UserError as exc:
            last = exc
    try:   # ports of two media: the fabric's error, said as such (checked only here:
        # realize sets circuits on planes of two media where each circuit's ends are one)
        ports_optics(graph, gpu_nodes(graph))
    except UserError as exc:
        raise UserError(f"scenario {scenario.name!r}: {exc}") from None
    raise UserError(f"scenario {scenario.name!r}: cannot set circuits for instances of "
                    f"{size} GPUs: {last}")


def scenario_model(scenario: Scenario, graph: nx.Graph, size: int, calibration: Calibration,
                   **routing) -> FabricCostModel:
    """The cost model instances of ``size`` GPUs of ``scenario`` are costed with: its built
    fabric ``graph`` with the circuits set for that size on a circuit-switched fabric and
    its ``[adjust]`` applied, costed with ``calibration`` (:func:`scenario_calibration`)
    and the scenario's placement and algorithm (governing the collectives, not all-to-all
    and send-recv: ``scope="collectives"``) unless ``routing`` gives them (and any other
    :class:`~netmodel.collectives.model.FabricCostModel` keyword: ``algorithms``, ``seed``,
    ``max_transfers``). ``compare`` and ``collective --scenario`` both build it here.
    With ``circuits = "best"`` it is the model of the layout :func:`layout_model` chose.
    """
    return layout_model(scenario, graph, size, calibration, **routing)[1]


#: The placements whose first instance :func:`first_instance_layout` finds as the cost
#: model's ``group(size)`` does (no seed read).
_SEEDLESS = ("contiguous", "spread", "rail-aligned")


#: What ``circuits = "best"`` chooses among (:data:`~netmodel.study.scenarios.CIRCUITS`
#: but itself), ties to the first.
LAYOUTS = tuple(c for c in CIRCUITS if c != BEST)
#: The all-reduce sizes ``circuits = "best"`` weighs the layouts at: 1 KiB to 1 GiB, every
#: factor of 4 (a decode step's all-reduce of 132 tokens x 8,192 x 2 bytes is 2.2 MB; a
#: prefill's of 2,048 tokens 34 MB a sequence).
BEST_SIZES = tuple(float(4 ** k) for k in range(5, 16))


def layout_model(scenario: Scenario, graph: nx.Graph, size: int, calibration: Calibration,
                 **routing) -> tuple[str | None, FabricCostModel]:
    """``(layout, model)``: :func:`scenario_model`'s model and the layout its instance's
    circuits were set as (``"ring"`` or ``"torus"``; a torus the size or the ports cannot
    take is set as a ring, :func:`instance_graph`), None off an OCS fabric or for one GPU.

    ``circuits = "best"``: each layout of :data:`LAYOUTS` the cell can realize for the
    size is set and costed through this same recipe, and the one whose all-reduce on the
    instance (the collective a tensor-parallel instance runs twice a layer) takes the least
    time summed in logs over :data:`BEST_SIZES` (the least geometric mean: each size
    weighs by the ratio of the layouts' times, not by its seconds) is kept by
    :func:`best_layout`; an OCS re-sets an instance's circuits anyway. The choice is
    made once per instance size, and both phases share it.

    >>> from dataclasses import replace
    >>> s = replace(get_scenario("lite-ocs"), circuits="best")
    >>> g, cal = build_fabric(s), scenario_calibration(s)
    >>> [layout_model(s, g, p, cal)[0] for p in (9, 16)]
    ['ring', 'torus']
    """
    if scenario.circuits == BEST and scenario.is_ocs and size >= 2:
        # chosen on the first instance's circuits where the instances are alike: only
        # the chosen layout is set on the whole cell and modelled
        lay = first_instance_layout(scenario, graph, int(size), calibration, **routing)
        if lay is not None:
            made = layout_model(replace(scenario, circuits=lay), graph, size, calibration,
                                **routing)
            if made[0] == lay:
                return made

        def make(lay: str):
            set_as, model = layout_model(replace(scenario, circuits=lay), graph, size,
                                         calibration, **routing)
            return (model, model) if set_as == lay else None

        return best_layout(int(size), make)   # the ring is set or refused
    # the circuits follow the placement in use (the caller's, if given)
    placement = routing.get("placement", scenario.placement)
    realized = instance_graph(replace(scenario, placement=placement), graph, size,
                              seed=routing.get("seed") or 0)
    built = adjusted(realized, scenario.adjust)
    # checked once: the built fabric where it entered, the circuits as realize made them
    # (instance_graph checked any other graph it was given before realizing on it)
    checked = is_built(scenario, graph) if built is graph else built is realized
    model = scenario_cost_model(scenario, built, calibration, validated=checked, **routing)
    if not scenario.is_ocs or size < 2:
        return None, model
    if scenario.circuits != "torus":   # a ring is set as one
        return "ring", model
    return set_layout(model, model.group(int(size))), model


def first_instance_layout(scenario: Scenario, graph: nx.Graph, size: int,
                          calibration: Calibration, made: dict | None = None,
                          **routing) -> str | None:
    """The layout ``circuits = "best"`` sets for instances of ``size`` GPUs on the healthy
    cell ``graph`` (the scenario's built fabric), chosen on the first instance's circuits
    alone (:func:`~netmodel.study.circuit_copies.members_cell`) instead of every
    instance's, as :func:`layout_model` would choose it: every instance of the placement
    is wired alike (each member's ports, fibres and node as the first instance's member at
    its place), so each sets its circuits as the first one does and the first one's
    collective, costed on its own circuits, is costed alike on all of them. None where
    that does not hold, where the circuits are few
    (:data:`~netmodel.study.circuit_copies.ALIKE_PORTS`) or the first instance's cannot be
    set (the caller then sets each layout on the whole cell, and says why it cannot); the
    placement ``random`` (a seed) and graphs other than the built fabric are left to it.

    Parameters
    ----------
    scenario : Scenario
        An optical circuit-switched scenario with ``circuits = "best"``.
    graph : networkx.Graph
        Its built fabric (:func:`build_fabric`).
    size : int
        GPUs an instance (2 or more).
    calibration : Calibration
        The collective model's parameters the layouts are costed with.
    made : dict, optional
        Given: each layout's first instance's circuit pairs and circuits as set here,
        ``{layout: (pairs, graph)}``, for
        :func:`~netmodel.study.circuit_copies.alike_circuits` to set the whole cell's
        from.
    **routing
        :func:`scenario_cost_model`'s keywords (its placement among them).

    Returns
    -------
    str or None
        ``"ring"`` or ``"torus"``; None where this does not decide.

    Examples
    --------
    >>> s = get_scenario("lite-ocs")
    >>> s = replace(s, fabric={**s.fabric, "ports": 96})   # 12,288 ports placed
    >>> g, cal = build_fabric(s), scenario_calibration(s)
    >>> [first_instance_layout(s, g, p, cal) for p in (2, 16)]
    ['ring', 'torus']
    >>> s = get_scenario("lite-ocs")   # 4 ports: 512 placed, the whole cell's way
    >>> first_instance_layout(s, build_fabric(s), 16, cal) is None
    True
    """
    from netmodel.collectives.placement import partition
    from topologies.optical import realize
    from topologies.schema import gpu_nodes

    placement = routing.get("placement", scenario.placement)
    if placement not in _SEEDLESS or not is_built(scenario, graph):
        return None
    groups = partition(graph, size, placement, gpus=gpu_nodes(graph))
    first = groups[0]
    ports, planes = ocs_ports(graph, first), ocs_planes(graph, first)
    if ports < 2 and size > 2:
        return None   # refused: the caller says why
    if not worth_copying(ports, groups) or not alike_groups(graph, groups):
        return None
    cell = members_cell(graph, first)

    class _Unset(Exception):
        pass

    def make(lay: str):
        for pairs in circuit_options(lay, [first], ports, planes):
            try:
                realized = realize(cell, pairs, validated=True)   # the cell's part of it
            except UserError:
                continue
            if made is not None:
                made[lay] = (pairs, realized)
            built = adjusted(realized, scenario.adjust)
            model = scenario_cost_model(scenario, built, calibration,
                                        validated=built is realized, **routing)
            set_as = "ring" if lay != "torus" else set_layout(model, first)
            return (model, lay) if set_as == lay else None
        raise _Unset

    try:
        chosen = best_layout(first, make)
    except _Unset:
        return None
    return None if chosen is None else chosen[0]


def best_layout(members: int | tuple, make) -> tuple[str, object] | None:
    """``(layout, made)``: the layout ``circuits = "best"`` sets for an instance, and what
    ``make`` made for it; None where no layout can be set. The one place the candidates
    are set, for the healthy cell (:func:`layout_model`) and a degraded one
    (:func:`~netmodel.study.placed_graph.instance_circuits`) alike: each layout of
    :data:`LAYOUTS` the instance's size can take (a torus where it has a 2D
    factorisation) is made by ``make(layout)``: ``(model, made)``, the cost model of the
    instance with its circuits set as that layout (costed with the caller's calibration)
    and what the caller keeps, or None where they cannot be set as it. Where several are
    made, the one whose all-reduce on ``members`` (a size, or the GPUs) over
    :data:`BEST_SIZES` has the least sum of logs is kept (:func:`faster_layout`).

    One layout made (a 3x3 torus the ports cannot set) is kept without costing it:

    >>> best_layout(9, lambda lay: (None, "the ring's") if lay == "ring" else None)
    ('ring', "the ring's")
    >>> best_layout(9, lambda lay: None) is None
    True
    """
    from netmodel.study.circuit_planes import torus_sides

    size = members if isinstance(members, int) else len(members)
    made = {lay: make(lay) for lay in LAYOUTS if lay == "ring" or torus_sides(size)}
    made = {lay: m for lay, m in made.items() if m is not None}
    if len(made) <= 1:
        return next(((lay, m[1]) for lay, m in made.items()), None)
    times = {lay: m.collective_time("all-reduce", np.array(BEST_SIZES), members)
             for lay, (m, _) in made.items()}
    lay = faster_layout(times)
    return lay, made[lay][1]


def set_layout(model: FabricCostModel, members: tuple) -> str:
    """``"torus"`` where the circuits ``model``'s graph sets among ``members`` are a torus
    the torus algorithm runs on, else ``"ring"``."""
    from netmodel.collectives.algorithms import NotApplicable

    if len(members) < 4:
        return "ring"
    try:
        model.compiled("all-reduce", "torus", tuple(members))
    except NotApplicable:
        return "ring"
    return "torus"


def faster_layout(times: dict[str, np.ndarray]) -> str:
    """The layout of ``times`` (each layout's all-reduce seconds at the same sizes) with the
    least sum of their logs, the first of equals.

    >>> faster_layout({"ring": np.array([2.0, 8.0]), "torus": np.array([1.0, 9.0])})
    'torus'
    >>> faster_layout({"ring": np.array([1.0, 8.0]), "torus": np.array([2.0, 4.0])})
    'ring'
    """
    score = {lay: float(np.log(np.asarray(t, dtype=float)).sum()) for lay, t in times.items()}
    least = min(score.values())
    return next(lay for lay, v in score.items() if v <= least + 1e-12 * max(1.0, abs(least)))


def scenario_cost_model(scenario: Scenario, graph: nx.Graph, calibration: Calibration,
                        validated: bool = False, **routing) -> FabricCostModel:
    """The cost model of ``graph`` as built already (circuits set, adjustments applied) with
    ``scenario``'s settings: ``calibration`` (:func:`scenario_calibration`, which holds its
    NCCL release and buffer) and its placement, algorithm (governing the collectives, not
    all-to-all and send-recv: ``scope="collectives"``) and tuner unless ``routing`` gives
    them (or any other :class:`~netmodel.collectives.model.FabricCostModel` keyword);
    ``validated``: ``graph`` is known to pass :func:`~topologies.schema.validate`. The
    one recipe of :func:`scenario_model`, the re-costing of an instance and its slices
    (:mod:`netmodel.study.instance_cost`) and the re-scoring with adjusted links
    (:mod:`netmodel.study.adjusted_comm`).

    >>> from netmodel.study.scenario_catalog import get_scenario
    >>> s = get_scenario("h100-dgx")
    >>> g = build_fabric(s)
    >>> m = scenario_cost_model(s, g, scenario_calibration(s), validated=True)
    >>> (m.placement, m.algorithm, m.scope) == (s.placement, s.algorithm, "collectives")
    True
    """
    from netmodel.collectives.model import FabricCostModel

    routing = {"placement": scenario.placement, "algorithm": scenario.algorithm,
               "scope": "collectives", "tuner": scenario.tuner, **routing}
    return FabricCostModel(graph, calibration=calibration, validated=validated, **routing)


def scenario_calibration(scenario: Scenario) -> Calibration:
    """The collective model's parameters for the scenario: the shipped defaults or the ideal
    ones; with ``links = "scale-up"`` every link is NVLink to them: the NVLink per-step
    latencies and scale-up efficiency on every link, and NCCL's send/recv channels a peer
    by NVLink's rule on every path (``scaleup_everywhere``: two per NVLink of a GPU's links
    into the switches, all planes together, at most 32; not the network's 2 a peer).

    >>> from netmodel.study.scenario_catalog import get_scenario
    >>> cal = scenario_calibration(get_scenario("lite-flat"))
    >>> cal.scaleup_everywhere, cal.scaleout_efficiency == cal.scaleup_efficiency
    (True, True)
    >>> scenario_calibration(get_scenario("h100-dgx")).scaleup_everywhere
    False

    A scenario's ``nccl_buffsize`` and ``nccl_release`` are set in it (None keeps the
    defaults: NCCL's 4 MiB buffer, the newest release the data file holds), so the caches
    keyed by it (:func:`network_key`) keep each release's and buffer's costs apart:

    >>> from dataclasses import replace
    >>> s = replace(get_scenario("h100-dgx"), nccl_release="2.26", nccl_buffsize=2**20)
    >>> cal = scenario_calibration(s)
    >>> cal.nccl_release, cal.simple_buffer
    ('2.26', 1048576.0)
    """
    from netmodel.collectives.calibration import Calibration
    from netmodel.collectives.calibration_files import default_calibration

    cal = Calibration.ideal(0.0) if scenario.calibration == "ideal" else default_calibration()
    if scenario.links == "scale-up":
        up = lambda p: replace(p, step_latency_scaleout=p.step_latency_scaleup)  # noqa: E731
        cal = cal.with_(protocols=tuple(up(p) for p in cal.protocols),
                        in_network=up(cal.in_network),
                        scaleout_efficiency=cal.scaleup_efficiency, scaleup_everywhere=True)
    # in the order collective --nccl-buffsize/--nccl-release apply them over it
    # (CollectiveSetup.calibration): the buffer, then the release
    if scenario.nccl_buffsize is not None:
        cal = cal.with_(simple_buffer=float(scenario.nccl_buffsize))
    if scenario.nccl_release is not None:
        cal = cal.with_(nccl_release=scenario.nccl_release)
    return cal


def network_key(scenario: Scenario, calibration: Calibration) -> str:
    """What a scenario's collective costs depend on, spelled as a string: the fabric's
    builder and parameters with the GPU type left out (a GPU's name labels nodes; its
    bandwidths enter the parameters), the placement, algorithm, circuits, instances,
    adjustments, the calibration and the GPU's generation in it. Scenarios with the same
    key cost every collective the same."""
    builder, params = scenario.fabric_params()
    # the GPU's name is left out, its generation is not: it picks the calibration's
    # constants (Calibration.resolve), so an A100 and a copy of it named otherwise differ
    generation = calibration.generation_of(scenario.gpu, scenario.graph)

    def spell(v: object) -> object:
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], dict):
            return (v[0], {k: spell(x) for k, x in v[1].items()})
        if isinstance(v, GpuSpec):
            return "$gpu"
        return v

    parts = (builder, {k: spell(v) for k, v in params.items()}, scenario.placement,
             scenario.algorithm, scenario.circuits, scenario.instances, scenario.adjust,
             calibration, generation and generation.name)
    if scenario.tuner != NO_TUNER:   # the shipped scenarios' keys as they were
        parts += (scenario.tuner,)
    if calibration.ll128_off(scenario.gpu, scenario.graph):
        parts += ("LL128 off",)   # a B300 beside a B200 of the same generation, <= 2.27
    if scenario.tuner != NO_TUNER:
        from netmodel.collectives.tuner_plugin import host_arch, nvls_tree_corrected

        if not nvls_tree_corrected(scenario.gpu, scenario.graph):
            # NCCL's NVLSTree correction off: a GB200 (its Grace) beside a B200
            parts += (f"{host_arch(scenario.gpu, scenario.graph)} host",)
    return repr(parts)
