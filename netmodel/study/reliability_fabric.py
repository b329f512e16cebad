"""A fabric's intake for the reliability models: how large a fabric they take
(:data:`MAX_GPUS`, built under :func:`fabric_cap`), the scenario of a ``--fabric``
(:func:`fabric_cluster_scenario`), the cells of a cluster of so many GPUs
(:func:`cluster_cells`), and the hosts and racks read from its GPUs' ``server`` and
``rack`` labels (:func:`check_labels`, :func:`with_devices`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

from compute.errors import UserError
from compute.validate import describe, is_whole, of_type
from topologies.degrade import label_devices
from topologies.schema import gpu_nodes

if TYPE_CHECKING:
    from netmodel.study.scenarios import Scenario

__all__ = ["MAX_FABRIC_NODES", "MAX_GPUS", "check_labels", "cluster_cells", "fabric_cap",
           "fabric_cluster_scenario", "with_devices"]

#: Largest cluster (GPUs) the reliability commands model.
MAX_GPUS = 131_072
#: Most nodes (GPUs and switches) of a fabric they build before counting its GPUs: a fabric
#: of MAX_GPUS GPUs with more switches than GPUs is no cluster (the shipped scenarios and
#: the builders at their defaults have 1.0-1.6 nodes a GPU), so past it the fabric is refused
#: from its builder's estimate (:func:`fabric_cap`), before any memory is spent.
MAX_FABRIC_NODES = 2 * MAX_GPUS


def fabric_cap():
    """A block whose fabric builds (builders, fabric files) refuse a fabric estimated past
    :data:`MAX_FABRIC_NODES` nodes before building it: a 1,048,576-GPU torus was built
    (20-40 s, 1.8 GB) only to be refused for its GPUs."""
    from topologies.limits import capped, max_edges

    return capped(MAX_FABRIC_NODES, max_edges(),
                  why=f"the reliability models take a fabric of up to {MAX_GPUS:,} GPUs "
                      f"({MAX_FABRIC_NODES:,} nodes with its switches); use a smaller fabric")


def fabric_cluster_scenario(ref: str) -> Scenario:
    """The scenario the reliability models run on a fabric ``ref`` (a saved
    ``.json``/``.graphml`` fabric, a builder's spec or a scenario's fabric:
    :func:`~netmodel.study.fabric_ref.resolve_fabric`), built under :func:`fabric_cap`
    into a :func:`~netmodel.study.scenarios.fabric_scenario`; a scenario's fabric is named
    by the scenario without its GPU (the label adds it back)."""
    from netmodel.study.fabric_ref import resolve_fabric
    from netmodel.study.scenarios import fabric_scenario

    with fabric_cap():
        fab = resolve_fabric(ref)
    name = fab.label if fab.scenario is None else f"fabric of {fab.scenario.name}"
    if any(k == "ocs" for _, k in fab.graph.nodes(data="kind")):
        return _ocs_scenario(fab, name)
    return fabric_scenario(fab.graph, name)


#: A fabric's logical topology (``logical=``) -> the circuits an OCS scenario sets per
#: instance (:data:`~netmodel.study.scenarios.CIRCUITS`).
_LOGICAL_CIRCUITS = {"ring": "ring", "torus": "torus"}


def _ocs_scenario(fab, name: str) -> Scenario:
    """The OCS scenario of an optical circuit-switched ``fab`` (a
    :class:`~netmodel.study.fabric_ref.Fabric`) whose circuits are set: its builder's
    cabling (``[fabric] builder = "ocs"`` with the spec's own arguments, the GPU its own)
    with each instance's circuits set as its ``logical`` says (``ring``; ``torus:AxB`` a
    torus per instance), re-set on recovery as the shipped ``lite-ocs`` scenario's are
    (:attr:`~netmodel.study.reliability_timings.RecoveryTimes.reconfiguration_s`), with the
    settings ``--fabric`` gives elsewhere (:func:`~netmodel.study.scenarios.fabric_scenario`).
    A scenario's fabric keeps that scenario's circuits. Refused in one line: an OCS fabric
    with no circuits set (as ``infer --fabric`` refuses it), and circuits the reliability
    models cannot re-set per instance (a circuit list, a full mesh) or on cabling no
    builder's arguments say (a saved file without its builder's claim).

    >>> s = fabric_cluster_scenario("ocs:gpus=32,gpu=Lite,logical=torus:4x8")
    >>> s.fabric_spec(), s.circuits, s.is_ocs, s.links
    ('ocs:gpus=32,gpu=Lite', 'torus', True, 'as-built')
    >>> fabric_cluster_scenario("ocs:gpus=8,gpu=Lite")
    Traceback (most recent call last):
    compute.errors.UserError: fabric 'ocs:gpus=8,gpu=Lite' is an OCS fabric with no circuits set, so no collective can run on it; set them in the spec: ocs:gpus=8,gpu=Lite,logical=ring (or logical=torus:AxB)
    """
    from netmodel.study.scenarios import Scenario
    from topologies.schema import gpu_spec

    info = fab.graph.graph
    if fab.scenario is not None:   # a scenario's fabric: the cabling, its circuits its own
        table, circuits = dict(fab.scenario.fabric), fab.scenario.circuits
        spec = fab.scenario.gpu_spec
    else:
        args = info.get("args") if info.get("builder") == "ocs" else None
        logical = info.get("logical")
        if not logical:
            how = ("save the fabric with its circuits set (a spec with logical=ring)"
                   if fab.source == "file" else
                   f"set them in the spec: {fab.label}{',' if ':' in fab.label else ':'}"
                   f"logical=ring (or logical=torus:AxB)")   # 'ocs:logical=ring', not 'ocs,
            raise UserError(f"fabric {fab.label!r} is an OCS fabric with no circuits set, so "
                            f"no collective can run on it; {how}")
        shape = str(logical).strip().lower().partition(":")[0]
        circuits = _LOGICAL_CIRCUITS.get(shape) if isinstance(logical, str) else None
        if circuits is None:
            raise UserError(f"fabric {fab.label!r} sets its circuits as {describe(logical)}; "
                            f"the reliability models re-set each instance's circuits on "
                            f"recovery as a ring or a torus of its own GPUs, so give "
                            f"logical=ring or logical=torus:AxB")
        if not isinstance(args, dict):
            # a file's args are dropped where they do not build its graph (an edited
            # fibre, link or node: topologies.registry.check_as_built)
            raise UserError(f"fabric {fab.label!r} holds OCS circuits but no 'ocs' builder's "
                            f"arguments that build it (graph attribute 'args' missing, or "
                            f"the graph edited from what they build), so the cabling each "
                            f"instance's circuits are re-set on is not known; save it from a "
                            f"spec (netmodel topology export ocs:...,logical=ring)")
        types = {d["gpu"] for _, d in fab.graph.nodes(data=True) if d["kind"] == "gpu"}
        if len(types) != 1:
            raise UserError(f"fabric {fab.label!r} holds {len(types)} GPU types "
                            f"({', '.join(sorted(types)) or 'no GPU'}); a cluster of it "
                            f"needs one")
        spec = gpu_spec(fab.graph, types.pop())
        table = {"builder": "ocs", **{k: v for k, v in args.items() if k != "logical"}}
    table["gpu"] = "$gpu"   # the fabric's own GPU (a GPU file's too), never swapped
    return Scenario(name=name, gpu=spec.name, gpu_spec=spec, fabric=table,
                    circuits=circuits,
                    description=f"fabric {name}: each instance's circuits set to a "
                                f"{circuits}, re-set when a spare joins",
                    sources={"bandwidth": "the fabric's links", "latency": "the fabric's "
                             "links and switches"})


def cluster_cells(gpus, cell: int, label: str = "the scenario's fabric") -> int:
    """Cells of a cluster of ``gpus`` GPUs (None: one) made of copies of a ``cell``-GPU
    fabric; refused when the cluster, or the fabric itself, is over :data:`MAX_GPUS`.

    >>> cluster_cells(24, 8)
    3
    >>> cluster_cells(16, 0)
    Traceback (most recent call last):
    compute.errors.UserError: cell must be a whole number of GPUs >= 1, got 0
    """
    if isinstance(cell, bool) or not is_whole(cell) or cell < 1:   # 0 divided by zero
        raise UserError(f"cell must be a whole number of GPUs >= 1, got {describe(cell)}")
    if cell > MAX_GPUS:
        raise UserError(f"{label} has {cell:,} GPUs, more than the largest cluster "
                        f"the reliability models take ({MAX_GPUS:,} GPUs); use a smaller "
                        f"fabric")
    if gpus is None:
        return 1
    if isinstance(gpus, bool) or not is_whole(gpus) or gpus < 1:
        raise UserError(f"gpus must be a whole number >= 1, got {describe(gpus)}")
    if gpus > MAX_GPUS:
        raise UserError(f"gpus {gpus:,} exceeds the largest cluster modelled "
                        f"({MAX_GPUS:,} GPUs)")
    if gpus % cell:
        lo = max(cell, gpus // cell * cell)
        raise UserError(f"gpus {gpus:,} is not a multiple of the scenario's fabric of {cell} "
                        f"GPUs (the cluster is copies of it); use {lo:,} or {lo + cell:,}")
    return int(gpus // cell)


def check_labels(graph: nx.Graph, where: str, gpus_per_host: int) -> None:
    """Refuse a fabric whose GPUs carry a ``server`` or ``rack`` label on some GPUs but not
    on all, naming the first GPU without it: hosts and racks are counted from those labels
    where every GPU has one (where none has one, a host is every ``gpus_per_host``
    consecutive GPUs, :meth:`~netmodel.study.reliability_catalog.Catalog.gpus_per_host`,
    and no rack fails), so a partly labelled fabric would be counted by the rule for an
    unlabelled one.

    >>> from topologies.specs import build
    >>> g = build("rail-optimized:domains=2").copy()
    >>> del g.nodes["gpu3"]["server"]
    >>> check_labels(g, "fabric 'mine'", 8)
    Traceback (most recent call last):
    compute.errors.UserError: fabric 'mine': GPU 'gpu3' has no 'server' label, which 15 of its 16 GPUs have; label every GPU's server (hosts are counted from it) or none (then every 8 consecutive GPUs are a host)
    """
    of_type("graph", graph, nx.Graph, "topologies.build('ring')", default=False)
    data = graph.nodes
    gpus = gpu_nodes(graph)
    for label in ("server", "rack"):
        have = sum(1 for g in gpus if label in data[g])
        if 0 < have < len(gpus):
            first = next(g for g in gpus if label not in data[g])
            rule = (f"hosts are counted from it) or none (then every {gpus_per_host} "
                    f"consecutive GPUs are a host)" if label == "server" else
                    "racks are counted from it) or none (then no rack fails)")
            raise UserError(f"{where}: GPU {first!r} has no {label!r} label, which {have} of "
                            f"its {len(gpus)} GPUs have; label every GPU's {label} ({rule}")



def with_devices(graph: nx.Graph) -> nx.Graph:
    """The cell's fabric with each GPU of a ``server`` label given its device index in the
    whole server (:func:`~topologies.degrade.label_devices`; a copy, the built
    fabric being shared; ``graph`` itself where there is nothing to label). An instance is
    costed on its members and the switches alone (:meth:`~netmodel.study.reliability_cluster.Cluster.recost_graph`), where the
    position among the server's GPUs left is the position among the instance's: NCCL's PXN
    relays by the device index (:meth:`~netmodel.collectives.route_pxn.PxnRoutes.
    pxn_proxies`), and a TP-12 instance on 8-GPU servers holding devices 4-7 of one server
    relayed as if they were 0-3. A spare planned on the cell takes its server's next index
    (:func:`~topologies.spares.place_spare`: device 8 of an 8-GPU server), not
    its template's."""
    of_type("graph", graph, nx.Graph, "topologies.build('ring')", default=False)
    data = graph.nodes
    if all("device" in d for _, d in data.items() if d.get("kind") == "gpu" and "server" in d):
        return graph
    out = graph.copy()
    label_devices(out)
    return out
