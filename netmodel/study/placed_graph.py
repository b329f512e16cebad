"""The graph one serving instance is costed on, as a *costing problem*: circuits re-set,
members renamed by place, and a key naming it (equal keys: one costing).

On an optical circuit-switched fabric its circuits re-set on the ports its members have
(:func:`instance_circuits`; in pipeline stages, its stages' rings and stage links shared
within those ports, :func:`pipeline_circuits`) without what no cost reads
(:func:`unlabelled`); where GPUs forward no traffic (:func:`wired_gpus` False), its members
renamed by their place in the instance (:func:`canonical`); and a key naming all of it (:func:`problem_key`), so that
instances placed alike and hit alike by a failure, and failures that leave the same graph,
are costed once (:class:`~netmodel.study.instance_cost.InstanceCosting`,
:func:`~netmodel.study.placed_cost.placed_comm`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

import networkx as nx

from compute.errors import UserError
from netmodel.study.scenarios import BEST
from topologies.graph_ops import frozen_attrs

if TYPE_CHECKING:
    from netmodel.collectives.calibration import Calibration
    from netmodel.study.scenarios import Scenario

__all__ = ["canonical", "instance_circuits", "ocs_ports_key", "pipeline_circuits",
           "pipeline_ports", "problem_key", "unlabelled", "wired_gpus"]


def instance_circuits(scenario: Scenario, physical: nx.Graph,
                      members: Sequence[Hashable],
                      calibration: Calibration | None = None) -> nx.Graph | None:
    """The circuit graph of one instance (or one slice of it) on a (possibly degraded) OCS
    fabric: its ring (or torus) re-set on the ports its members still have, as the study
    sets an instance's circuits (:func:`~netmodel.study.circuit_planes.circuit_options`),
    a ring first for the planes each member still reaches (:func:`_cabled`: a plane a
    member lost carries circuits among the others).

    Parameters
    ----------
    scenario : Scenario
        An optical circuit-switched scenario (its ``circuits`` shape).
    physical : networkx.Graph
        The physical fabric (a cell, maybe degraded): GPUs, their optical ports and the
        OCSes.
    members : sequence of hashable
        The GPUs the circuits join, in ring order.
    calibration : Calibration, optional
        With ``circuits = "best"``: the collective model's parameters the layouts are
        costed with, as the caller's healthy instances were
        (:func:`~netmodel.study.scenario_fabric.layout_model`); None: the scenario's own
        (:func:`~netmodel.study.scenario_fabric.scenario_calibration`).

    Returns
    -------
    networkx.Graph or None
        The circuits as :func:`topologies.optical.realize` makes them; None where the
        members have no optical port left or no circuit shape can be set (``physical``
        failing :func:`~topologies.schema.validate` included: it is checked once, not
        again for each copy count tried).

    Raises
    ------
    UserError
        No copy count fits and the members' OCS ports are of two optical media
        (:func:`topologies.optical.ports_optics`): a fabric's error, not an instance
        lost. Ports of two media whose circuits realize can set, each joining ports of
        one medium (a plane of each medium, every GPU on both), are set.
    """
    from netmodel.study.circuit_copies import members_cell, ocs_planes, ocs_ports
    from netmodel.study.circuit_planes import circuit_options
    from topologies.optical import ports_optics, realize
    from topologies.schema import validate

    ports = ocs_ports(physical, members)
    if ports == 0:
        return None
    try:
        # a degraded copy of the cell is not known to pass (an OCS gone, spares added)
        validate(physical, check_connected=False)
    except UserError:
        return None   # as realize refused every copy count on it
    # from the most copies the members' OCS planes can carry, as instance_graph: the counts
    # above it are refused, each after a full colouring (a triangle of 256 ports: 128 to 85)
    planes = ocs_planes(physical, members)
    cabled = _cabled(physical, members)
    # realize reads the members' fibres, not every GPU's (524,288 at 4,096 ports, listed
    # by each realize for the cabling): the whole cell's cabling is set on what it makes
    cell = members_cell(physical, members)
    if scenario.circuits == BEST:   # each layout set, the faster kept (as layout_model)
        chosen = _best_circuits(scenario, cell, members, ports, planes, cabled,
                                calibration)
        if chosen is not None:
            return _whole_cabling(chosen, physical, cell)
    else:
        for pairs in circuit_options(scenario.circuits, [members], ports, planes, cabled):
            try:
                out = realize(cell, pairs, validated=True)   # checked above, unchanged
            except UserError:
                continue
            return _whole_cabling(out, physical, cell)
    # no count fits: ports of two media (realize refuses a circuit joining them) said so,
    # not an instance lost; checked only here, as realize sets circuits on planes of two
    # media where each circuit's ends are one
    ports_optics(physical, members)
    return None


def pipeline_ports(ports: int, stage: int, stages: int) -> tuple[int, int] | None:
    """``(stage ports, circuits a hop)``: how a GPU's ``ports`` optical ports are shared by
    an instance in ``stages`` pipeline stages of ``stage`` GPUs (:func:`pipeline_circuits`),
    every GPU alike. A stage link (member ``i`` of a stage to member ``i`` of the next)
    takes at least one circuit, so a GPU of a middle stage holds at least 2 ports for its
    links and one of 2 stages 1; the stage's own circuits take the rest: a pair of 2 GPUs
    all of them, a ring of 3 or more an even number (2 a copy), whatever is left over going
    to the links, split evenly between a middle stage's two. A stage of one GPU (no
    tensor-parallel group) gives every port to its links. None where the ports cannot hold
    both (a stage of 3 or more needs 2 ports for its ring, a pair 1).

    >>> pipeline_ports(4, 2, 4), pipeline_ports(4, 8, 4), pipeline_ports(4, 8, 2)
    ((2, 1), (2, 1), (2, 2))
    >>> pipeline_ports(4, 2, 2), pipeline_ports(4, 1, 4), pipeline_ports(4, 1, 2)
    ((3, 1), (0, 2), (0, 4))
    >>> pipeline_ports(2, 4, 4), pipeline_ports(3, 4, 4), pipeline_ports(2, 2, 2)
    (None, None, (1, 1))
    """
    links = 2 if stages > 2 else 1
    if stage == 1:
        return (0, ports // links) if ports >= links else None
    left = ports - links
    if left < (1 if stage == 2 else 2):
        return None
    own = left if stage == 2 else left // 2 * 2
    return own, (ports - own) // links


def pipeline_circuits(scenario: Scenario, physical: nx.Graph, members: Sequence[Hashable],
                      stage: int, calibration: Calibration | None = None
                      ) -> nx.Graph | None:
    """The circuits of one instance in pipeline stages of ``stage`` members (``members``
    stage after stage, 2 stages or more) on an OCS cell, set once for all of its
    collectives (an OCS's circuits stay put while the instance serves): its GPUs' ports
    shared as :func:`pipeline_ports` says, no port counted twice. Each stage's
    tensor-parallel group sets the scenario's ``circuits`` (a ring, a torus, or with
    ``"best"`` the faster for the stage's all-reduce,
    :func:`~netmodel.study.scenario_fabric.best_layout`) on the ports its stage links
    leave, as many copies as they carry; each stage link is a circuit (or several) from
    member ``i`` of a stage to member ``i`` of the next (a stage of one GPU: every port on
    its links). Lite's 4 ports, 28.125 GB/s each: PP 3 or more -> the stage's ring on 2
    ports (one copy; a pair of 2 GPUs on 2 circuits) and one circuit to each neighbouring
    stage; PP 2 -> a ring on 2 ports and 2 circuits a hop, or a pair on 3 circuits and 1
    a hop. A stage's smaller groups (attention groups, an expert-parallel all-to-all among
    the stage) run on the stage's circuits, as the stage's own collectives.

    Parameters
    ----------
    scenario : Scenario
        An optical circuit-switched scenario (its ``circuits`` shape).
    physical : networkx.Graph
        The cell the instance is placed on (maybe degraded).
    members : sequence of hashable
        The instance's GPUs, stage after stage.
    stage : int
        GPUs a stage, a divisor of ``len(members)`` smaller than it.
    calibration : Calibration, optional
        With ``circuits = "best"``: the parameters the layouts are costed with (None: the
        scenario's own).

    Returns
    -------
    networkx.Graph or None
        The circuits as :func:`topologies.optical.realize` sets them; None where the
        members' ports cannot hold them (the caller then costs every group on the
        instance's own ring, stage after stage, a stage link routed over it).
    """
    from netmodel.study.circuit_copies import members_cell, ocs_ports
    from netmodel.study.circuit_planes import TORUS_PORTS, circuit_options, torus_sides
    from netmodel.study.scenario_fabric import (
        LAYOUTS,
        adjusted,
        best_layout,
        scenario_calibration,
        scenario_cost_model,
        set_layout,
    )
    from topologies.optical import realize
    from topologies.schema import validate

    members = tuple(members)
    stages = [members[i:i + stage] for i in range(0, len(members), stage)]
    shared = pipeline_ports(ocs_ports(physical, members), stage, len(stages))
    if shared is None:
        return None
    ports, per = shared
    try:
        validate(physical, check_connected=False)
    except UserError:
        return None
    cell = members_cell(physical, members)
    hops = [(a, b) for s, t in pairwise(stages) for a, b in zip(s, t, strict=True)] * per

    def realized(lay: str) -> nx.Graph | None:
        options = circuit_options(lay, stages, ports) if stage > 1 else iter([[]])
        for pairs in options:
            try:
                return realize(cell, [*pairs, *hops], validated=True)
            except UserError:
                continue
        return None

    lays = [scenario.circuits] if scenario.circuits != BEST else \
        [lay for lay in LAYOUTS if lay == "ring" or (ports >= TORUS_PORTS and torus_sides(stage))]
    if len(lays) == 1:
        out = realized(lays[0])
    else:
        cal = scenario_calibration(scenario) if calibration is None else calibration

        def make(lay: str):
            g = realized(lay)
            if g is None:
                return None
            built = adjusted(g, scenario.adjust)   # realize checked g
            model = scenario_cost_model(scenario, built, cal, validated=built is g)
            return (model, g) if set_layout(model, stages[0]) == lay else None

        chosen = best_layout(stages[0], make)
        out = None if chosen is None else chosen[1]
    return None if out is None else _whole_cabling(out, physical, cell)


def _best_circuits(scenario: Scenario, physical: nx.Graph, members: Sequence[Hashable],
                   ports: int, planes: int, cabled: list[frozenset] | None,
                   calibration: Calibration | None) -> nx.Graph | None:
    """``circuits = "best"`` on a (perhaps degraded) cell: the circuits of each layout the
    members' ports can set, each costed with the scenario's recipe
    (:func:`~netmodel.study.scenario_fabric.scenario_cost_model`, its adjustments) and
    ``calibration`` (None: the scenario's own), the faster kept by
    :func:`~netmodel.study.scenario_fabric.best_layout`, which sets the healthy cell's
    instances too; None where none can be set."""
    from netmodel.study.circuit_planes import circuit_options
    from netmodel.study.scenario_fabric import (
        adjusted,
        best_layout,
        scenario_calibration,
        scenario_cost_model,
        set_layout,
    )
    from topologies.optical import realize

    if calibration is None:
        calibration = scenario_calibration(scenario)

    def make(lay: str):
        for pairs in circuit_options(lay, [members], ports, planes, cabled):
            try:
                graph = realize(physical, pairs, validated=True)
            except UserError:
                continue
            # realize checked what it made: again only where adjusted copied it (as
            # layout_model)
            built = adjusted(graph, scenario.adjust)
            model = scenario_cost_model(scenario, built, calibration,
                                        validated=built is graph)
            # a torus not set as one: the ring's
            return (model, graph) if set_layout(model, tuple(members)) == lay else None
        return None

    chosen = best_layout(tuple(members), make)
    return None if chosen is None else chosen[1]


def _whole_cabling(circuits: nx.Graph, physical: nx.Graph, cell: nx.Graph) -> nx.Graph:
    """``circuits`` (changed in place and returned), set by realize on ``cell`` (the
    members' part of ``physical``, :func:`~netmodel.study.circuit_copies.members_cell`),
    with the cabling of the whole cell, as realize on ``physical`` sets it: the record
    members_cell gave ``cell`` (:func:`topologies.optical.ocs_cabling` of ``physical``,
    shared, not read again: a degraded cell is not frozen, so each read lists its every
    fibre); none where it gave none (realize on ``cell`` read the members' fibres alone).

    >>> from topologies.optical import ocs, realize
    >>> from netmodel.study.circuit_copies import members_cell
    >>> g = ocs(gpus=4, ports=2)   # not frozen: its fibres read from its links
    >>> cell = members_cell(g, ["gpu0", "gpu1"])
    >>> pairs = [("gpu0", "gpu1")] * 2
    >>> out = _whole_cabling(realize(cell, pairs), g, cell)
    >>> out.graph["ocs_cabling"]["cables"], out.graph == realize(g, pairs).graph
    (8, True)
    """
    if cell is not physical:
        cabling = cell.graph.get("ocs_cabling")
        if cabling is None:
            circuits.graph.pop("ocs_cabling", None)
        else:
            circuits.graph["ocs_cabling"] = dict(cabling)
    return circuits


def _cabled(physical: nx.Graph, members: Sequence[Hashable]) -> list[frozenset] | None:
    """Each OCS the ``members`` reach, in the one order every member's ports list them
    (realize's first free plane reads them so), with the members cabled to it; None where
    the members list them in orders no one order holds.

    >>> g = nx.Graph([("a", "o0"), ("a", "o2"), ("b", "o0"), ("b", "o1"), ("b", "o2")])
    >>> nx.set_node_attributes(g, {"a": "gpu", "b": "gpu", "o0": "ocs", "o1": "ocs",
    ...                            "o2": "ocs"}, "kind")
    >>> [sorted(on) for on in _cabled(g, ["a", "b"])]
    [['a', 'b'], ['b'], ['a', 'b']]
    """
    data = physical.nodes
    lists = [[o for o in physical.neighbors(m) if data[o]["kind"] == "ocs"] for m in members]
    # one order every list follows (each a member's ports, some lost): the longest list's
    # extended where that holds, else a merge of them all (gpu0 without ocs0 and gpu1
    # without ocs5 list ocs1..ocs5 and ocs0..ocs4: ocs0 first), first seen first when free
    order = list(dict.fromkeys(o for own in sorted(lists, key=len, reverse=True) for o in own))
    place = {o: i for i, o in enumerate(order)}
    if any(place[a] > place[b] for own in lists for a, b in pairwise(own)):   # merge them
        first = {o: i for i, o in enumerate(dict.fromkeys(o for own in lists for o in own))}
        after = nx.DiGraph()
        after.add_nodes_from(first)
        after.add_edges_from(e for own in lists for e in pairwise(own))
        try:
            order = list(nx.lexicographical_topological_sort(after, key=first.__getitem__))
        except nx.NetworkXUnfeasible:   # a cycle: orders no one order holds
            return None
    cabled: dict = {o: set() for o in order}
    for m, own in zip(members, lists, strict=True):
        for o in own:
            cabled[o].add(m)
    return [frozenset(on) for on in cabled.values()]


def unlabelled(circuits: nx.Graph) -> nx.Graph:
    """``circuits`` (a graph :func:`instance_circuits` just made; changed in place and
    returned) without
    what :func:`topologies.optical.realize` writes that no collective cost reads: which
    OCS carries each circuit (an edge's ``via``, and each circuit's bandwidth and lanes in
    its order, ``via_bandwidth`` and ``via_lanes``, where they differ), the circuit list in the GPUs' own
    names (the graph's ``logical``) and the cabling's record of its fibres by name
    (``ocs_cabling``: the bill's). Failures that re-set the same circuits through other
    OCS planes, or the same circuits of other instances, then leave one costing problem
    (:func:`problem_key`) instead of one each.

    >>> g = nx.Graph(logical="g0-g1")
    >>> g.add_edge("g0", "g1", bandwidth=1.0, via="ocs2")
    >>> h = unlabelled(g)
    >>> h is g, h.graph, h.edges["g0", "g1"]
    (True, {}, {'bandwidth': 1.0})
    """
    circuits.graph.pop("logical", None)
    circuits.graph.pop("ocs_cabling", None)   # its fibres by name: priced, not costed
    for _, _, data in circuits.edges(data=True):
        for key in ("via", "via_bandwidth", "via_lanes"):
            data.pop(key, None)
    return circuits


def wired_gpus(graph: nx.Graph) -> bool:
    """Whether ``graph`` wires GPUs to GPUs (then they may forward traffic, and instances
    are costed on the whole cell rather than on their members and the switches; members
    then keep their names, :func:`canonical` does not apply).

    >>> g = nx.Graph([("g0", "s"), ("g1", "s")])
    >>> nx.set_node_attributes(g, {"g0": "gpu", "g1": "gpu", "s": "switch"}, "kind")
    >>> wired_gpus(g)
    False
    >>> g.add_edge("g0", "g1")
    >>> wired_gpus(g)
    True
    """
    data = graph.nodes
    return any(data[u]["kind"] == "gpu" and data[v]["kind"] == "gpu" for u, v in graph.edges())


def canonical(graph: nx.Graph, members: Iterable[Hashable]) -> tuple[nx.Graph, tuple]:
    """``(graph, members)`` with the members renamed by their place in the instance
    (``gpu0``, ``gpu1``, ...) and the graph rebuilt in one order (the other nodes by name,
    then the members, then any other GPU; links by the positions of their ends): instances placed alike on the same switches, hit alike by a failure, become
    one costing problem. Only for fabrics whose GPUs forward no traffic (the graph then
    holds the members, the switches and spares); unchanged where a new name is taken.

    >>> g = nx.Graph([("s", "g7", {"bandwidth": 1.0}), ("s", "g5", {"bandwidth": 2.0})])
    >>> h, m = canonical(g, ("g5", "g7"))
    >>> m, list(h.nodes), sorted(h.edges(data="bandwidth"))
    (('gpu0', 'gpu1'), ['s', 'gpu0', 'gpu1'], [('s', 'gpu0', 2.0), ('s', 'gpu1', 1.0)])
    """
    members = tuple(members)
    mapping = {m: f"gpu{k}" for k, m in enumerate(members)}
    # the other nodes by name, not in the graph's order: a subgraph taken on a set of nodes
    # iterates that set, whose order follows the process's string hashing
    others = sorted((n for n in graph if n not in mapping), key=lambda n: (type(n).__name__, str(n)))
    if set(mapping.values()) & set(others):
        return graph, members
    data = graph.nodes
    order = [n for n in others if data[n].get("kind") != "gpu"] + list(members) \
        + [n for n in others if data[n].get("kind") == "gpu"]
    index = {n: i for i, n in enumerate(order)}
    names = [mapping.get(n, n) for n in order]
    out = type(graph)()
    out.graph.update(graph.graph)
    out.add_nodes_from((names[i], data[n]) for i, n in enumerate(order))
    ends = sorted(((min(index[u], index[v]), max(index[u], index[v]), d)
                   for u, v, d in graph.edges(data=True)), key=lambda e: e[:2])
    out.add_edges_from((names[i], names[j], d) for i, j, d in ends)
    return out, tuple(mapping[m] for m in members)


def problem_key(graph: nx.Graph, members: Iterable[Hashable]) -> tuple:
    """``graph`` (its nodes and each node's neighbours in order, with every attribute) and
    the instance ``members``, as one hashable value: equal keys are the same costing
    problem (two failures that leave the same graph, such as a NIC and the transceiver of
    the same link, are costed once).

    >>> a = nx.Graph([("s", "g1", {"bandwidth": 1.0}), ("s", "g2", {"bandwidth": 1.0})])
    >>> b = nx.Graph([("s", "g1", {"bandwidth": 1.0}), ("s", "g2", {"bandwidth": 0.5})])
    >>> problem_key(a, ("g1", "g2")) == problem_key(a.copy(), ("g1", "g2"))
    True
    >>> problem_key(a, ("g1", "g2")) == problem_key(b, ("g1", "g2"))  # a link thinned
    False
    >>> problem_key(a, ("g1", "g2")) == problem_key(a, ("g2", "g1"))  # another order
    False
    """
    adj, data = graph.adj, graph.nodes
    return (type(graph).__name__, frozen_attrs(graph.graph),
            tuple((n, frozen_attrs(data[n]), tuple(adj[n])) for n in graph.nodes),
            tuple((u, v, frozen_attrs(d)) for u, v, d in graph.edges(data=True)),
            tuple(members))


def ocs_ports_key(graph: nx.Graph, members: Iterable[Hashable]) -> tuple:
    """What the circuits of a slice of ``members`` are set from (each member's optical
    links in order, with their attributes and their OCS's), positionally: a part of the
    key (:func:`problem_key`) of an OCS instance costed in slices, whose circuits are re-set
    per slice from the physical ``graph``, not from the graph the instance is costed on.

    Returns
    -------
    tuple
        Per member, ``(ocs, link attributes, ocs attributes)`` of each of its optical links.
    """
    data = graph.nodes
    return tuple(tuple((o, frozen_attrs(graph.edges[m, o]), frozen_attrs(data[o]))
                       for o in graph.neighbors(m) if data[o].get("kind") == "ocs")
                 for m in members)


