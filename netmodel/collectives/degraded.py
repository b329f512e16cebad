"""Collectives on a degraded fabric: failed links, switches or GPUs removed.

:func:`degrade` returns a copy of a fabric without the failed parts, and without the GPUs
wired to a failed tier-0 (NVLink) switch, which stop with it (:func:`stopped_gpus`; as
the reliability model, :mod:`topologies.failure_domains`, counts them: nothing is
re-routed around a failed NVSwitch over the GPUs' NICs). :func:`degraded_cost`
costs one collective on the healthy fabric and on the degraded one: traffic is rerouted
over the surviving shortest paths, the ring is re-embedded (the faster of the group's own
order and a greedy nearest-neighbour order, on the healthy fabric as on the degraded one,
so that a failure counts only what it removes; where the whole group is left, the healthy
side also runs the degraded side's greedy order, and on a fabric whose collectives lay
their own routes, :func:`lays_own_routes`, its plans, whose detours are paths of the
healthy fabric too), GPUs that failed leave
the group (``lost``), and a group that the failures cut apart is reported as such
(``cut``, infinite time) rather than costed. A GPU whose NIC is down (its NIC link or rail
leaf failed) costs as NCCL started again on the survivors runs: its rings and trees on
as many channels as the fewest NICs up at any domain, the rails up everywhere first
(:func:`~netmodel.collectives.algo_ring.nic_lanes`), and its per-channel tree caps count
those channels (:func:`~netmodel.collectives.algo_ring.nic_channels`, where the rule's
sources are).

>>> from netmodel.collectives.calibration import Calibration
>>> import networkx as nx
>>> g = nx.Graph(name="ring of 4", spec="", gpus=4)
>>> for i in range(4):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
>>> for i in range(4):
...     g.add_edge(f"gpu{i}", f"gpu{(i + 1) % 4}", bandwidth=1e9, latency=0.0,
...                medium="copper", lanes=1)
>>> r = degraded_cost(g, "send-recv", 1e9, ["gpu0", "gpu1"], links=[("gpu0", "gpu1")],
...                   algorithm="direct", calibration=Calibration.ideal())
>>> r.healthy.time, r.degraded.time, r.cut
(1.0, 1.0, False)
>>> r = degraded_cost(g, "send-recv", 1e9, ["gpu0", "gpu1"],
...                   links=[("gpu0", "gpu1"), ("gpu0", "gpu3")], calibration=Calibration.ideal())
>>> r.cut, r.degraded.cut
(True, ('gpu0', 'gpu1'))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

import networkx as nx

from compute.errors import UserError
from compute.validate import describe
from netmodel.collectives.model import RING_ORDERS, FabricCostModel, faster_ring_order
from netmodel.collectives.results import CollectiveResult
from topologies.degrade import hand_on, keep_devices, mark_degraded
from topologies.failure_domains import nic_heirs, stopped_by, stops
from topologies.optical import drop_circuits
from topologies.schema import circuit_count, circuit_via

__all__ = ["DegradedResult", "degrade", "degraded_cost", "degraded_model", "lays_own_routes",
           "stopped_gpus"]


def _parts(what: str, value: object, items: str) -> tuple:
    """``value`` as a tuple, when it is a collection (a list, tuple or set), not text or a
    number: iterating a float raised TypeError, and a string its characters."""
    try:
        if not isinstance(value, str | bytes):
            return tuple(value)   # type: ignore[call-overload]
    except TypeError:   # a number, None, a 0-d array
        pass
    raise UserError(f"{what} must be a list of {items} (or empty), got {describe(value)}")


def degrade(graph: nx.Graph, *, links: Iterable[Iterable[Hashable]] = (),
            nodes: Iterable[Hashable] = ()) -> nx.Graph:
    """A copy of ``graph`` without the failed ``links`` (``(u, v)`` pairs) and ``nodes``
    (switches, GPUs or optical switches, with their links and the circuits through them).
    A failed GPU holding a NIC its server's other GPUs share (``rail-optimized`` with
    fewer ``nics_per_server`` than GPUs) hands the NIC's link to the first of them left
    (:func:`topologies.degrade.hand_on`, the rule the reliability model degrades
    by), unless that link failed too: the NIC sits on the host's PCIe switch, not on the
    GPU.
    On a realized OCS fabric a ``(gpu, ocs)`` pair is the GPU's fibre to that switch: the
    circuit riding it goes. Unknown parts raise UserError. Given any failed part, the copy
    is marked degraded (:func:`topologies.degrade.mark_degraded`): the cost model
    refuses it."""
    if not isinstance(graph, nx.Graph):   # None or a number raised AttributeError at copy()
        raise UserError(f"graph must be a networkx Graph (e.g. netmodel.build_fabric"
                        f"('fat-tree:k=4')), got {describe(graph)}")
    links, nodes = _parts("links", links, "(u, v) pairs"), _parts("nodes", nodes, "nodes")
    out = graph.copy()
    fibres: set = set()   # (GPU, OCS): a realized OCS fabric's fibre, not an edge of it
    for pair in links:
        try:
            u, v = pair
        except (TypeError, ValueError):
            raise UserError(f"a failed link must be a pair of nodes, got {describe(pair)}") \
                from None
        fibre = _fibre(graph, u, v)
        if fibre is not None:
            if fibre in fibres:
                raise UserError(f"failed link {describe(u)} - {describe(v)} is given more "
                                f"than once (a link joins its two nodes either way round); "
                                f"give each once")
            fibres.add(fibre)
            continue
        if not _has(graph, u) or not _has(graph, v) or not graph.has_edge(u, v):
            raise UserError(f"failed link {describe(u)} - {describe(v)} is not a link of the "
                            f"fabric")
        if not out.has_edge(u, v):   # removed already: the same link again, either way round
            raise UserError(f"failed link {describe(u)} - {describe(v)} is given more than "
                            f"once (a link joins its two nodes either way round); give each "
                            f"once")
        out.remove_edge(u, v)
    # the failed GPUs' servers keep their GPUs' device indices (PXN relays by them)
    known = [n for n in nodes if _has(graph, n)]
    stopped = stopped_gpus(graph, known)
    keep_devices(out, [*known, *stopped])
    # a failed GPU holding a NIC its server's other GPUs share leaves the NIC up: its link
    # goes to the first of them left, as the reliability model degrades (its failed link
    # removed above is not handed on)
    heirs = nic_heirs(graph)
    hand_on(out, [h for n in known if n in heirs for h in heirs[n]], {*known, *stopped})
    for n in nodes:
        if not _has(graph, n):
            raise UserError(f"failed node {describe(n)} is not a node of the fabric")
        if n not in out:
            raise UserError(f"failed node {describe(n)} is given more than once; give each "
                            f"once")
        out.remove_node(n)
    drop_circuits(out, {n for n in nodes if graph.nodes[n].get("kind") == "ocs"}, fibres,
                  graph.nodes)
    out.remove_nodes_from([g for g in stopped_gpus(graph, nodes) if g in out])
    out.graph["gpus"] = sum(1 for _, k in out.nodes(data="kind") if k == "gpu")
    if "circuits" in out.graph:   # the circuits left: a failed circuit, GPU or OCS takes its own
        out.graph["circuits"] = circuit_count(out)
    if out.graph["gpus"] == 0:
        raise UserError("every GPU of the fabric failed"
                        + (" or stopped with a failed tier-0 switch" if any(
                            stops(graph, n) for n in nodes) else ""))
    out.graph["name"] = f"{graph.graph.get('name', 'fabric')} (degraded)"
    out.graph["spec"] = ""
    if links or nodes:
        mark_degraded(out)
    return out



def _fibre(graph: nx.Graph, u: object, v: object) -> tuple | None:
    """``(gpu, ocs)`` where ``u``-``v`` is a GPU's fibre to an optical switch that one of
    its circuits rides (a realized OCS fabric keeps its circuits as GPU-GPU edges, not the
    fibres: ``--fail gpu0/ocs0`` was 'not a link of the fabric'); None otherwise."""
    for gpu, ocs in ((u, v), (v, u)):
        if not (_has(graph, gpu) and _has(graph, ocs)) or graph.has_edge(gpu, ocs) \
                or graph.nodes[gpu].get("kind") != "gpu" \
                or graph.nodes[ocs].get("kind") != "ocs":
            continue
        if any(ocs in circuit_via(gpu, other, d, graph.nodes)
               for _, other, d in graph.edges(gpu, data=True)):
            return gpu, ocs
        raise UserError(f"failed link {describe(u)} - {describe(v)} carries no circuit of "
                        f"the fabric (a realized OCS fabric keeps its circuits, not its "
                        f"fibres: give a fibre that one of {describe(gpu)}'s circuits rides, "
                        f"an OCS, or a circuit's two GPUs)")
    return None


def stopped_gpus(graph: nx.Graph, nodes: Iterable[Hashable]) -> tuple:
    """GPUs of ``graph`` wired to a failed tier-0 (NVLink) switch among ``nodes``: they stop
    with it (NVIDIA Fabric Manager on HGX H100: with an NVLink switch unavailable the GPUs
    fail to register with the NVLink fabric and CUDA launches fail; NMX-M on NVL72 alike;
    netmodel/data/failures.toml [class.nvswitch] effect_source), so nothing is re-routed
    around the switch over their NICs, as the reliability model counts them."""
    out: dict = {}
    for n in nodes:
        out.update((x, None) for x in stopped_by(graph, n) if x not in nodes)
    return tuple(out)


def _has(graph: nx.Graph, node: object) -> bool:
    """Whether ``node`` is a node of ``graph`` (an unhashable one, a list, is not: networkx
    raises TypeError for it)."""
    try:
        return node in graph
    except TypeError:
        return False

@dataclass(frozen=True)
class DegradedResult:
    """A collective before and after failures.

    ``lost``: group members that failed or stopped (the degraded cost is over the
    survivors); ``stopped``: those of them that did not fail but are wired to a failed
    tier-0 switch (:func:`stopped_gpus`); ``cut``: whether the failures cut the surviving
    group apart.
    """

    healthy: CollectiveResult
    degraded: CollectiveResult
    failed_links: tuple[tuple[Hashable, ...], ...]
    failed_nodes: tuple[Hashable, ...]
    lost: tuple[Hashable, ...]
    stopped: tuple[Hashable, ...] = ()
    #: the graph the survivors were costed on (the degraded fabric, or the circuits the
    #: caller's ``circuits`` re-set on it)
    graph: nx.Graph | None = None
    #: the ring order (a :class:`~netmodel.collectives.model.FabricCostModel`'s
    #: ``ring_order``) that gave ``degraded``: the faster of the group's and a greedy one
    ring_order: str = "given"
    #: the routes that gave ``healthy``: ``"own"``, the healthy fabric's shortest paths, or
    #: ``"degraded"``, the degraded fabric's, paths of the healthy fabric too, where they
    #: were faster on a fabric whose collectives lay their own routes
    #: (:func:`lays_own_routes`) with the whole group left
    healthy_routes: str = "own"

    @property
    def cut(self) -> bool:
        return not self.degraded.connected

    @property
    def slowdown(self) -> float:
        """Degraded over healthy time (``inf`` when cut)."""
        if self.cut:
            return math.inf
        return self.degraded.time / self.healthy.time if self.healthy.time > 0 else 1.0

    def as_dict(self) -> dict:
        """The failures' effect, JSON-ready (``netmodel collective --fail``'s ``failures``,
        after the failures as typed): ``healthy_time`` and ``healthy_algorithm`` (None where
        the healthy fabric is cut apart too, an OCS fabric without circuits: JSON has no
        inf), ``slowdown`` (None where nothing is left to compare: cut apart, or one GPU
        survives, which communicates nothing), ``lost``, ``cut`` and, where any,
        ``stopped`` (members wired to a failed tier-0 switch, in ``lost`` too) and, where
        the healthy time came from the degraded fabric's routes, ``healthy_routes``
        (``"degraded"``: :attr:`healthy_routes`)."""
        whole = self.healthy.connected
        doc = {"healthy_time": self.healthy.time if whole else None,
               "healthy_algorithm": self.healthy.algorithm if whole else None,
               "slowdown": None if self.cut or len(self.degraded.group) < 2
               else self.slowdown,
               "lost": [str(x) for x in self.lost], "cut": self.cut}
        if self.stopped:
            doc["stopped"] = [str(x) for x in self.stopped]
        if self.healthy_routes != "own":
            doc["healthy_routes"] = self.healthy_routes
        return doc


def _check_model_options(options: dict) -> None:
    """Refuse a keyword :func:`degraded_cost` would not pass on to
    :class:`~netmodel.collectives.model.FabricCostModel`: one the model takes not (Python's
    TypeError named ``FabricCostModel.__init__``, a function the caller never called), or
    ``ring_order``, which it sets itself (each side runs the faster of the group's order and
    a greedy one): a ``ring_order`` given was dropped without a word.

    >>> _check_model_options({"ring_order": "greedy"})
    Traceback (most recent call last):
    ...
    compute.errors.UserError: degraded_cost() takes no keyword 'ring_order' (each side runs the faster of the group's order and a greedy one); allowed: links, nodes, algorithm, circuits, placement, algorithms, calibration, seed, max_transfers, scope, tuner, validated
    """
    import inspect

    own = ("graph", "algorithm", "ring_order")   # the graph and these: degraded_cost's own
    allowed = [k for k in inspect.signature(FabricCostModel).parameters if k not in own]
    unknown = [k for k in options if k not in allowed]
    if unknown:
        why = (" (each side runs the faster of the group's order and a greedy one)"
               if "ring_order" in unknown else "")
        raise UserError(f"degraded_cost() takes no keyword {', '.join(map(repr, unknown))}"
                        f"{why}; allowed: links, nodes, algorithm, circuits, "
                        f"{', '.join(allowed)}")


def degraded_cost(graph: nx.Graph, op: str, nbytes: float, group: int | Iterable[Hashable],
                  *, links: Iterable[Iterable[Hashable]] = (), nodes: Iterable[Hashable] = (),
                  algorithm: str | None = None, circuits: Callable | None = None,
                  **model_options: Any) -> DegradedResult:
    """Cost ``op`` on ``group`` (a size placed on the healthy fabric, or explicit GPUs)
    before and after removing ``links`` and ``nodes``; ``model_options`` go to
    :class:`~netmodel.collectives.model.FabricCostModel` (placement, algorithms,
    calibration...). With ``scope="collectives"`` (a scenario's), ``algorithm`` is the
    models' own: all-to-all and send-recv choose as auto where it lacks them.
    ``circuits``: on a fabric whose circuits are re-set after a failure (an OCS
    scenario's instance, :meth:`~netmodel.study.collective_setup.CollectiveSetup.circuits_after`),
    given the surviving members in the group's order, the graph they are costed on
    instead of the failed circuits dropped, or None where none can be set (the group is
    cut)."""
    _check_model_options(model_options)
    if circuits is not None and not callable(circuits):   # raised TypeError after the cost
        raise UserError(f"circuits must be a function of the surviving GPUs giving the graph "
                        f"they are costed on, or None, got {describe(circuits)}")
    links, nodes = _parts("links", links, "(u, v) pairs"), _parts("nodes", nodes, "nodes")
    broken = degrade(graph, links=links, nodes=nodes)   # names a bad part before any cost
    links = tuple(tuple(x) for x in links)
    # both sides embed the ring alike (the faster of the group's order and a greedy
    # nearest-neighbour order), so that a failure counts only what it removes: the healthy
    # side in the group's order alone let a cable nowhere near the group 'speed up' a ring
    # listed out of physical order (torus 3x4, 6 GPUs at random: 0.52x)
    options = dict(model_options)
    if options.get("scope") == "collectives" and algorithm is not None:
        # a scenario's algorithm: the models' own, so that all-to-all and send-recv choose
        # as auto where it lacks them (FabricCostModel.algorithm_names), as without failures
        options["algorithm"], algorithm = algorithm, None
    healthy_model = FabricCostModel(graph, **options)
    # a size placed by the model's policy, or a list of GPUs (None, a float, text: by name)
    group = healthy_model.group(group)
    healthy = faster_ring_order(
        lambda o: (healthy_model if o == "given" else FabricCostModel(
            graph, ring_order=o, **options)).cost(op, nbytes, group, algorithm),
        attrgetter("time"))[1]
    lost = tuple(g for g in group if g not in broken)
    stopped = set(stopped_gpus(graph, nodes))
    survivors = tuple(g for g in group if g in broken)
    if not survivors:
        raise UserError("every GPU of the group failed" + (
            " or stopped with a failed tier-0 switch (a GPU wired to one runs nothing until "
            "it is repaired)" if stopped & set(group) else ""))
    if circuits is not None:
        reset = circuits(survivors)
        if reset is None:   # no circuit can be set among them: each survivor alone
            reset = broken.copy()
            reset.remove_edges_from(list(reset.subgraph(survivors).edges()))
        broken = reset
    models = {order: FabricCostModel(broken, ring_order=order, **options)
              for order in RING_ORDERS}
    order, degraded = faster_ring_order(
        lambda o: models[o].cost(op, nbytes, survivors, algorithm), attrgetter("time"))
    routes = "own"
    if not lost and healthy.connected:
        # the healthy side runs every plan of the degraded side's that the healthy fabric
        # can. Its ring order, on any fabric: the order is the communicator's, and the greedy
        # one a heuristic that a failure's longer distances may steer to a better ring
        # (rail-optimized 3 x 4, bidirectional ring of 8 placed at random, 64 KiB, gpu6's
        # NVLink failed: 71.27 -> 58.24 us, 0.82x)
        ring = models["greedy"]._ordered(survivors)
        ringed = healthy_model.cost(op, nbytes, ring, algorithm) if ring != group else None
        if ringed is not None and ringed.time < healthy.time:
            healthy = replace(ringed, group=group)
        # and its routes where the collective lays its own (:func:`lays_own_routes`): they
        # are paths of the healthy fabric, over the same links, so its shortest paths alone
        # let a failure 'speed up' what their contention slowed (ring:n=7, halving-doubling
        # on all 7, gpu1-gpu2 failed: the fold-in's gpu6 -> gpu2 goes the long way round,
        # off gpu6 -> gpu0, which carried three flows, 0.77x; full-mesh:n=5, a pair whose
        # cable failed spreads over 3 two-hop detours, 0.33x)
        if degraded.time < healthy.time and lays_own_routes(graph):
            healthy, routes = degraded, "degraded"
    return DegradedResult(healthy, degraded, links, nodes, lost,
                          tuple(g for g in lost if g in stopped), broken, order, routes)


def lays_own_routes(graph: nx.Graph) -> bool:
    """Whether a collective on ``graph`` lays its own routes: no switch of a scale-out tier
    (tier >= 1), so every route is a scale-up path between GPUs (direct cables, circuits,
    GPUs forwarding, tier-0 switches) that the communicator picks, as NCCL's topology
    search picks among NVLink paths, and any path of the fabric is one it may take. Where
    a scale-out network routes (ECMP in its switches, NCCL's rails and PXN relays through
    a rank of the peer's rail), a failure's detour may be one the healthy fabric never
    takes (a leaf cut off from the spines borrows a NIC no rank lends: 0.9993x,
    tests/netmodel/test_degraded_never_faster.py).

    >>> from topologies import build
    >>> [lays_own_routes(build(s)) for s in ("ring:n=4", "torus:dims=2x3",
    ...  "ocs:gpus=4,ports=2,logical=ring", "single-switch:n=4", "fat-tree:k=4")]
    [True, True, True, True, False]
    """
    return not any(d.get("kind") == "switch" and d.get("tier") != 0
                   for _, d in graph.nodes(data=True))


def degraded_model(result: DegradedResult, model: FabricCostModel, placement: str,
                   algorithm: str, seed: int) -> FabricCostModel:
    """A model of the fabric ``result``'s survivors were costed on (its ``graph``, else
    ``model``'s fabric without the failed parts), with ``model``'s options, the ring order
    that gave ``result.degraded`` and the given ``placement``, ``algorithm`` and ``seed``:
    what the alternatives, a figure or every group at once read after the failures (in the
    group's order, where the greedy one had won, the chosen algorithm's own alternative
    was slower than the time beside it: torus 3x5, send-recv of 1 MiB on 15 GPUs, gpu4/gpu9
    failed, 147.5 us against 147.6 us)."""
    broken = result.graph if result.graph is not None else \
        degrade(model.graph, links=result.failed_links, nodes=result.failed_nodes)
    return FabricCostModel(broken, placement=placement, algorithm=algorithm,
                           algorithms=model.algorithms, seed=seed, scope=model.scope,
                           calibration=model.calibration, max_transfers=model.max_transfers,
                           tuner=model.tuner, ring_order=result.ring_order)
