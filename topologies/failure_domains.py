"""Failure domains of a fabric: the parts that can fail, and what each failure removes.

Read from the graph and its placement labels only (this module knows nothing of
collectives or instances). Which GPUs a host or rack holds, and the switches it holds with
them: :mod:`topologies.enclosures`. A :class:`Component` is one failure domain of a class
(:data:`CLASSES`): the nodes it removes, the edges it removes, and the edges it only
thins (one cable of several lost). ``parts`` is how many physical parts of the class
share that same effect (both transceivers of a cable, say), so a component fails at
``parts`` times the rate of one part.

Classes and what a failure removes:

* ``gpu-die`` and ``gpu-package``: the GPU node (the two differ only in their rates: the
  die's grows with silicon, the package's does not). A GPU that holds a NIC its server's
  other GPUs share (``rail-optimized`` with fewer ``nics_per_server`` than GPUs) hands that
  NIC's links to the first of them left (``handed``): the NIC sits on the host's PCIe
  switch, where the others reach it (GPUDirect RDMA), so a failed GPU does not take it
  down; a ``nic`` failure (or its host's) does.
* ``host``: every GPU of a ``server`` label; where the fabric has none, every
  ``gpus_per_host`` consecutive GPUs (builders number GPUs server by server).
* ``rack``: every GPU of a ``rack`` label (only where GPUs carry one); a rack holds whole
  hosts, so the racks one host spans are one (a leaf-spine's rack label is its leaf:
  lite-hier's leaves of 16 Lites under hosts of 32 make racks of 32).
* A host or rack also removes every tier-0 switch whose GPUs are all its own (an HGX
  baseboard's NVSwitch in a DGX server, an NVL72 rack's switch trays): a spare on a free
  port of that switch stops with it. A switch that also serves GPUs of other hosts (a
  domain of several servers) stays.
* Link ends, one component per cable (or per breakout bundle and share, see below):
  ``transceiver`` (pluggable optics or fibre), ``cpo-engine`` (co-packaged optics; an OCS
  end is passive mirrors and has none), ``copper-end``, as many at each end as the bill of
  materials counts (:func:`~topologies.inventory.cable_end_parts`: one per cable end, a
  breakout's switch end its share of a port, each far end one). A link of a trace medium
  (:data:`~topologies.schema.TRACE_MEDIA`; ``board``: the NVLinks of an HGX baseboard) has
  no cable and no end: it fails with its board (``host``, ``nvswitch``). Losing one cable
  of an edge that stands for ``C > 1`` cables keeps the edge at ``(C - 1) / C`` of its
  bandwidth; losing the only cable removes it. A realized OCS fabric's fibres are not its
  edges (its circuits are; the fibres are its ``ocs_cabling``), yet they fail as its bare
  cabling's do: the same parts, named as its edges (``gpu0-ocs0``), one a fibre at its GPU
  end (and a NIC where the optics are pluggable), each taking the one circuit that rides
  that fibre (a GPU has one port on each OCS); a fibre no circuit rides cuts nothing.
  Where the fabric's ``module_ports`` is 2 (twin-port OSFP), a ``transceiver`` is a
  module of two ends (:mod:`topologies.optic_modules`): one part, cutting (or thinning)
  both cables it holds, two at a switch or a server's two GPUs' NIC cables.
* ``nic``: the NIC behind a GPU's cable end to a switch of tier >= 1 or an OCS over
  pluggable optics, fibre or copper (the GPUs :func:`~topologies.nics.nic_gpus` prices
  a NIC for; a GPU whose optics are co-packaged has no separate NIC), one per GPU end
  as its transceivers are counted (a GPU of several such cables: one a cable, a NIC port
  each, where the bill prices one NIC a GPU); a NIC failure removes (or thins) that GPU's cable.
* ``nvswitch``, ``leaf``, ``spine``, ``core``: a switch of tier 0, 1, 2, 3 (a plane of a
  flat fabric is a tier-1 switch); ``ocs``: an optical circuit switch. A tier-0 switch also
  stops every GPU wired to it (``disabled``): the GPUs do not fail, but they run nothing
  until the switch is repaired (NVIDIA Fabric Manager on HGX/DGX H100: with an NVLink
  switch unavailable the GPUs fail to register with the NVLink fabric and CUDA launches
  fail; NMX-M on NVL72: the loss of a switch leaves the NVLink partition not operational).

Breakout shares: where a group of GPUs (same ``group`` label) shares a switch's cables,
the builder gives each GPU a fractional or non-integer ``links`` (``lite-groups`` with
``split="even"``: four Lites each with ``links=0.25`` of one NIC cable, or 4.5 of 18
NVLinks). Those edges are one cable bundle of ``C = sum(links)`` cables. Its switch end
(``C`` parts: the port-side transceivers every share rides through) thins every share by
``(C - 1) / C`` when one fails, or removes them all when ``C <= 1``. Each share's far end
(``ceil(links)`` parts at its GPU, the GPU's own, as a 400G-DR4 port breaks out to four
100G-DR transceivers, one in each far host) thins or removes only that share: ``(links -
1) / links``, or the share when ``links <= 1``. The NIC behind the shares is one NIC
a cable, shared (:func:`~topologies.nics.nic_share`, as the bill charges it: a
ConnectX-7 serves up to four hosts, NVIDIA Multi-Host), so it fails as the switch end
does, taking every share. So one 4-way breakout NIC cable is 5 transceivers and 1 NIC
(lite-direct: 32 NICs for 128 Lites, as the cost charges 32 NICs' worth), and a group's 18 NVLink
cables at 4.5 a Lite (a domain cabled across servers) are 18 + 4 x 5 copper ends; on a
baseboard (``board``) they are none.

>>> from topologies.specs import build
>>> g = build("leaf-spine:leaves=2,radix=4,gpu=Lite")
>>> comps = components(g)
>>> {c: len(v) for c, v in comps.items() if v}
{'gpu-die': 4, 'gpu-package': 4, 'rack': 2, 'nic': 4, 'transceiver': 8, 'leaf': 2, 'spine': 2}
>>> comps["leaf"][0].nodes, comps["transceiver"][0].parts
(('leaf0',), 2.0)
>>> nvs = components(build("single-switch:n=4"))["nvswitch"][0]
>>> nvs.nodes, nvs.disabled
(('nvs0',), ('gpu0', 'gpu1', 'gpu2', 'gpu3'))

What a failure does to the graph (a copy with it applied) is :mod:`topologies.degrade`'s.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from compute.errors import UserError, known, lookalike
from topologies.edge_arrays import EdgeArrays, edge_arrays
from topologies.enclosures import _held_index, _holds, _whole_host_racks, hosts
from topologies.graph_ops import edge_key
from topologies.hierarchical import NVL72_SWITCH_TRAYS
from topologies.inventory import OPTICAL_MEDIA, cable_end_parts, shared_part
from topologies.nics import NIC_MEDIA, nic_share, ocs_fibres
from topologies.optic_modules import module_effects, module_ports, paired_ends
from topologies.schema import (
    TRACE_MEDIA,
    check_graph,
    circuit_each,
    circuit_via,
)

__all__ = ["CLASSES", "GPU_CLASSES", "LINK_CLASSES", "SWITCH_CLASSES", "TIER0_BOXES",
           "ClassComponents", "Component", "class_counts", "component_arrays", "components",
           "handed_labels", "join_parts", "nic_heirs", "stopped_by", "stops"]

#: Switch classes by tier (tier 3 and above are ``core``).
SWITCH_CLASSES = {0: "nvswitch", 1: "leaf", 2: "spine", 3: "core"}
#: Link-end classes by cable medium.
LINK_CLASSES = {"pluggable-optics": "transceiver", "fibre": "transceiver",
                "co-packaged-optics": "cpo-engine", "copper": "copper-end"}
#: The classes of a GPU itself: its logic die and the rest of its package (HBM, substrate),
#: between which the GPU's failure rate is split by area.
GPU_CLASSES = ("gpu-die", "gpu-package")
#: Every component class, in the order tables list them.
CLASSES = (*GPU_CLASSES, "host", "rack", "nic", "transceiver", "cpo-engine",
           "copper-end", "nvswitch", "leaf", "spine", "core", "ocs")
#: The cable media whose GPU end is a NIC: the bill's rule (:data:`topologies.nics.NIC_MEDIA`),
#: said once. A GPU's cable of such a medium to a switch of tier >= 1 or to an OCS has a
#: ``nic`` component, as :func:`~topologies.nics.nic_gpus` prices one (a pluggable
#: module at an OCS port sits in a NIC's cage at the GPU's end as it does at a switch's).
_NIC_MEDIA = NIC_MEDIA


#: Physical switch boxes a builder's tier-0 switch node stands for, each a part at a
#: switch's rate, any one of which takes the node (its domain) down and stops its GPUs
#: (NVIDIA NMX-M, Partition Health: the loss of a switch leaves the NVLink partition not
#: operational). An NVL72 rack's logical switch is its 9 NVLink switch trays. Builders not
#: named: 1 (an HGX baseboard's NVSwitch chips are one part: the switch's rate is an
#: assumption per switch, netmodel/data/failures.toml).
TIER0_BOXES: dict[str, int] = {"nvl72": NVL72_SWITCH_TRAYS}


@dataclass(frozen=True)
class Component:
    """One failure domain: what its failure removes.

    ``nodes``: nodes removed (with their links); ``edges``: edges ``(u, v)`` removed;
    ``scaled``: ``((u, v), factor)`` edges kept at ``factor`` of their bandwidth;
    ``parts``: physical parts of the class with this same effect (its rate multiplier);
    ``handed``: ``((gpu, switch), heirs)`` per NIC link of a failed GPU whose NIC its
    server's GPUs ``heirs`` share (the module doc): :func:`~topologies.degrade.degrade`
    gives the link to the first heir left, which it joins to the network in the GPU's
    place;
    ``fibres``: the ``(gpu, ocs)`` fibres of a realized OCS fabric the component is the end
    of (:func:`_circuit_fibres`), whose circuits :func:`~topologies.degrade.degrade` drops
    (:func:`~topologies.optical.drop_circuits`; ``edges`` and ``scaled`` say the same);
    ``shared``: a part that copies of the fabric would share in a full build (a switch of
    tier >= 1, an OCS, a link between two of them and its ends:
    :func:`~topologies.inventory.shared_part`), which a cluster of copies counts once per
    :func:`~topologies.inventory.cells_per_shared_part` of them; ``disabled``: GPUs that do
    not fail but run nothing until the component is repaired (those wired to a failed
    tier-0 switch, see the module doc; :func:`~topologies.degrade.degrade` removes them,
    and any GPU wired to the switch since, a spare say, with it).
    """

    cls: str
    name: str
    nodes: tuple = ()
    edges: tuple = ()
    scaled: tuple = ()
    parts: float = 1.0
    shared: bool = False
    disabled: tuple = ()
    handed: tuple = ()
    fibres: tuple = ()

    @property
    def elements(self) -> frozenset:
        """Every node and (sorted) edge the failure touches (a NIC link's heirs with it)."""
        out = set(self.nodes)
        out.update(self.disabled)
        out.update(h for _, heirs in self.handed for h in heirs)
        out.update(edge_key(u, v) for u, v in self.edges)
        out.update(edge_key(u, v) for (u, v), _ in self.scaled)
        return frozenset(out)


def _check_classes(classes: Iterable[str] | None) -> tuple[str, ...]:
    if classes is None:
        return CLASSES
    bad = [c for c in classes if c not in CLASSES]
    if bad:
        raise UserError(f"unknown component class {bad[0]!r}{lookalike(bad[0], CLASSES)}; "
                        f"known: {known(CLASSES)}")
    return tuple(classes)


def _bundle_cables(graph: nx.Graph, edges: Sequence[tuple[Hashable, Hashable]]) -> float:
    """Cables of one breakout bundle: its shares' ``links`` summed (whole where within 1e-6
    of a whole number)."""
    cables = sum(float(graph._adj[u][v].get("links", 1)) for u, v in edges)
    if abs(cables - round(cables)) < 1e-6:
        cables = float(round(cables))
    return cables


def _cable_effect(graph: nx.Graph, edges: Sequence[tuple[Hashable, Hashable]],
                  cables: float) -> tuple[tuple, tuple]:
    if cables <= 1 + 1e-9:
        return tuple(edges), ()
    return (), tuple((e, (cables - 1) / cables) for e in edges)


def _link_parts(graph: nx.Graph, edges: Sequence[tuple[Hashable, Hashable]],
                cables: float) -> list[tuple[str, str, tuple, tuple, float]]:
    """Link-end and NIC components of one bundle: ``(class, name, removed, scaled, parts)``.

    Parts at each end as :func:`~topologies.inventory.cable_end_parts` counts them (the bill
    of materials' rule). One edge: both ends share its effect. A breakout bundle (shares of
    one group's cables to one switch): the switch end's parts (``cables`` of them) carry
    every share, so one failing thins or removes the whole bundle, and so does its NIC (the
    shares' NICs' worth, :func:`~topologies.nics.nic_share`: the shares of one cable
    share one NIC); each share's far end (``ceil(links)`` parts at its GPU) carries that
    share only."""
    data = graph._node
    adj = graph._adj   # edge data without a view per lookup (2.4M lookups at k=64)
    medium = adj[edges[0][0]][edges[0][1]]["medium"]
    end_cls = LINK_CLASSES.get(medium)
    out = []

    def network(node) -> bool:   # nic_gpus' rule: a switch of tier >= 1 or an OCS
        return data[node]["kind"] == "ocs" or (data[node]["kind"] == "switch"
                                               and data[node]["tier"] >= 1)

    if len(edges) > 1:
        u, v = edges[0]
        other = v if data[u]["kind"] == "gpu" else u
        removed, scaled = _cable_effect(graph, edges, cables)
        if end_cls is not None:
            out.append((end_cls, f"{u}-{v} bundle of {len(edges)}", removed, scaled,
                        cable_end_parts(data[other]["kind"], cables)))
        if medium in _NIC_MEDIA and network(other):   # the shares' one NIC: all of them
            out.append(("nic", f"{u}-{v} bundle of {len(edges)}", removed, scaled,
                        sum(nic_share(float(adj[a][b].get("links", 1))) for a, b in edges)))
    for u, v in edges:
        links = float(adj[u][v].get("links", 1))
        removed, scaled = _cable_effect(graph, [(u, v)], links)
        kinds = (data[u]["kind"], data[v]["kind"])
        if end_cls is not None:
            ends = [n for n in (u, v) if len(edges) == 1 or data[n]["kind"] == "gpu"]
            out.append((end_cls, f"{u}-{v}", removed, scaled,
                        sum(cable_end_parts(data[n]["kind"], links) for n in ends)))
        if len(edges) == 1 and medium in _NIC_MEDIA and "gpu" in kinds:
            gpu, other = (u, v) if kinds[0] == "gpu" else (v, u)
            if network(other):
                out.append(("nic", f"{u}-{v}", removed, scaled,
                            cable_end_parts(data[gpu]["kind"], links)))
    return out


def components(graph: nx.Graph, *, gpus_per_host: int | None = None,
               classes: Iterable[str] | None = None) -> dict[str, list[Component]]:
    """Every component of ``graph`` by class (:data:`CLASSES` order; empty lists where the
    fabric has none).

    Parameters
    ----------
    graph : networkx.Graph
        A fabric (checked by :func:`~topologies.schema.check_graph`).
    gpus_per_host : int, optional
        Host size where GPUs carry no ``server`` label.
    classes : iterable of str, optional
        Only these classes (the others' lists empty); default all.

    Returns
    -------
    dict of str to list of Component

    Raises
    ------
    UserError
        An unknown class name, or a graph that is no fabric.

    Examples
    --------
    >>> from topologies.specs import build
    >>> comps = components(build("leaf-spine:leaves=2,radix=4"))
    >>> len(comps["gpu-die"]), len(comps["leaf"]), len(comps["spine"])
    (4, 2, 2)
    """
    wanted = _check_classes(classes)
    e = edge_arrays(check_graph(graph))
    arrays = component_arrays(graph, gpus_per_host=gpus_per_host, classes=wanted, edges=e)
    return {cls: _listed(graph, e, c) for cls, c in arrays.items()}


def _listed(graph: nx.Graph, e: EdgeArrays, c: ClassComponents) -> list[Component]:
    """One class's :class:`ClassComponents` as :class:`Component` objects."""
    out: list[Component] = []
    cls = c.cls
    if c.node is not None and len(c.node):
        nodes = [e.nodes[i] for i in c.node.tolist()]
        if cls in GPU_CLASSES:   # a GPU handing on a NIC is in ``rest``
            out = [Component(cls, g, nodes=(g,)) for g in nodes]
        else:   # a switch of tier >= 1 or an OCS, one part
            out = [Component(cls, str(n), nodes=(n,), parts=p, shared=shared_part(graph, n))
                   for n, p in zip(nodes, c.parts.tolist(), strict=True)]
    elif c.edge is not None and len(c.edge):
        gpu = e.kind_is("gpu")
        u, v = e.u[c.edge], e.v[c.edge]
        links = e.links[c.edge]
        shared = (~gpu[u] & ~gpu[v]).tolist()
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = ((links - 1) / links).tolist()
        for a, b, p, cut, f, sh in zip(u.tolist(), v.tolist(), c.parts.tolist(),
                                       c.removed.tolist(), factor, shared, strict=True):
            a, b = e.nodes[a], e.nodes[b]
            if cut:
                out.append(Component(cls, f"{a}-{b}", edges=((a, b),), parts=p, shared=sh))
            else:
                out.append(Component(cls, f"{a}-{b}", scaled=(((a, b), f),), parts=p,
                                     shared=sh))
    out += c.rest
    return out


def _switch_class(d: dict) -> str | None:
    """A node's switch class (:data:`SWITCH_CLASSES` by tier, ``ocs``) from its attributes;
    None for a GPU."""
    if d["kind"] == "switch":
        return SWITCH_CLASSES[min(int(d["tier"]), 3)]
    return "ocs" if d["kind"] == "ocs" else None


def _switch_component(graph: nx.Graph, n: Hashable, cls: str) -> Component:
    boxes, stopped = 1, ()
    if cls == "nvswitch":   # its GPUs stop with it (the module doc)
        boxes = TIER0_BOXES.get(graph.graph.get("builder"), 1)
        stopped = stopped_by(graph, n)
    return Component(cls, str(n), nodes=(n,), parts=float(boxes),
                     shared=shared_part(graph, n), disabled=stopped)


@dataclass(frozen=True, eq=False)
class ClassComponents:
    """The components of one class as :func:`components` lists them, most as arrays (what
    :func:`~topologies.hardware_radius.hardware_radius` reads, without a
    :class:`Component` a GPU or a cable end: fat-tree:k=128 has 2.6 million).

    A block of array components first, then ``rest``, the class's other components in
    :func:`components`' order (hosts, racks, tier-0 switches with the GPUs they stop,
    breakout bundles and their shares). A block component removes one node alone
    (``node``: its position in the :class:`~topologies.edge_arrays.EdgeArrays`' ``nodes``;
    a GPU's die or package, a switch of tier >= 1, an OCS) or concerns one link alone
    (``edge``: its position in the edge arrays; a cable end or NIC of a link that is not a
    breakout share), which it removes where ``removed`` and otherwise keeps at
    ``(links - 1) / links`` of its bandwidth; ``parts`` as :attr:`Component.parts`.
    """

    cls: str
    parts: np.ndarray
    node: np.ndarray | None = None
    edge: np.ndarray | None = None
    removed: np.ndarray | None = None
    rest: tuple = ()

    def __len__(self) -> int:
        return len(self.parts) + len(self.rest)

    @property
    def weights(self) -> np.ndarray:
        """``parts`` of every component, in :func:`components`' order."""
        return np.concatenate([self.parts, np.array([c.parts for c in self.rest], dtype=float)])


def component_arrays(graph: nx.Graph, *, gpus_per_host: int | None = None,
                     classes: Iterable[str] | None = None, edges: EdgeArrays | None = None
                     ) -> dict[str, ClassComponents]:
    """:func:`components` as :class:`ClassComponents` (same classes, order, parts and
    effects), from one pass of arrays over the links (``edges``: the graph's
    :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them).

    Parameters
    ----------
    graph, gpus_per_host, classes
        As :func:`components` takes them.
    edges : EdgeArrays, optional
        As said above.

    Returns
    -------
    dict of str to ClassComponents

    Raises
    ------
    UserError
        As :func:`components`.

    Examples
    --------
    >>> from topologies.specs import build
    >>> g = build("leaf-spine:leaves=2,radix=4,gpu=Lite")
    >>> c = component_arrays(g)
    >>> {k: len(v) for k, v in c.items() if len(v)}
    {'gpu-die': 4, 'gpu-package': 4, 'rack': 2, 'nic': 4, 'transceiver': 8, 'leaf': 2, 'spine': 2}
    >>> c["transceiver"].edge.tolist(), c["transceiver"].parts.tolist()[:2]
    ([0, 1, 2, 3, 4, 5, 6, 7], [2.0, 2.0])
    """
    wanted = _check_classes(classes)
    e = edge_arrays(check_graph(graph)) if edges is None else edges
    data = graph._node
    gpu = e.kind_is("gpu")
    rest: dict[str, list] = {c: [] for c in CLASSES}
    out: dict[str, ClassComponents] = {}
    none = np.zeros(0, dtype=np.int64)
    gpus = np.flatnonzero(gpu)
    heirs = nic_heirs(graph) if any(c in wanted for c in GPU_CLASSES) else {}
    plain = gpus
    if heirs:   # a GPU handing on its NIC: a Component of its own (in ``rest``)
        held = np.array([e.nodes[i] in heirs for i in gpus.tolist()], dtype=bool)
        plain = gpus[~held]
    for cls in GPU_CLASSES:
        if cls in wanted:
            out[cls] = ClassComponents(cls, np.ones(len(plain)), node=plain)
            rest[cls] += [Component(cls, str(g), nodes=(g,), handed=h)
                          for g, h in heirs.items()]
    if "host" in wanted or "rack" in wanted:
        _hosts_and_racks(graph, [e.nodes[i] for i in gpus.tolist()], gpus_per_host, wanted,
                         rest)
    links_wanted = [c for c in wanted if c == "nic" or c in LINK_CLASSES.values()]
    if links_wanted:
        tier = np.fromiter((d.get("tier", -1) for d in data.values()), dtype=float,
                           count=len(e.nodes))
        switch = e.kind_is("switch")
        keep = ~e.medium_in(("ocs-circuit", *TRACE_MEDIA))
        one_gpu = gpu[e.u] != gpu[e.v]
        # a breakout share: a fractional count of cables between a GPU of a group and a
        # switch, bundled with its group's other shares to that switch (the module doc)
        share = np.zeros(len(e.u), dtype=bool)
        shared: dict = defaultdict(list)
        for i in np.flatnonzero(keep & one_gpu & (e.links != np.trunc(e.links))).tolist():
            u, v = e.nodes[e.u[i]], e.nodes[e.v[i]]
            g, other = (u, v) if gpu[e.u[i]] else (v, u)
            label = data[g].get("group")
            if label is not None:
                share[i] = True
                shared[(label, other, e.media[e.medium[i]])].append((u, v))
        single = keep & ~share
        links = e.links
        removed = links <= 1 + 1e-9
        ends = e.end_parts(e.u) + e.end_parts(e.v)
        for cls in links_wanted:
            if cls == "nic":
                far = np.where(gpu[e.u], e.v, e.u)
                network = (switch & (tier >= 1)) | e.kind_is("ocs")   # nic_gpus' rule
                pick = single & one_gpu & e.medium_in(_NIC_MEDIA) & network[far]
                parts = np.ceil(links - 1e-9)
            else:
                pick = single & e.medium_in(m for m, c in LINK_CLASSES.items() if c == cls)
                parts = ends
                if cls == "transceiver" and module_ports(graph) > 1:   # twin-port modules
                    pick &= ~paired_ends(graph, e, pick)
                    rest[cls] += [Component(cls, name, edges=cut, scaled=thin, shared=all(
                        shared_part(graph, u, v) for u, v in (*cut, *(x for x, _ in thin))))
                        for name, cut, thin in module_effects(graph, e, OPTICAL_MEDIA)]
            at = np.flatnonzero(pick & (parts > 0))
            out[cls] = ClassComponents(cls, parts[at], edge=at, removed=removed[at])
        for bundle in shared.values():
            _bundle_components(graph, bundle, _bundle_cables(graph, bundle), wanted, rest)
        if e.medium_in(("ocs-circuit",)).any() or "ocs_cabling" in graph.graph:
            # a realized OCS fabric's fibres fail with no circuit set on them too
            _circuit_fibres(graph, wanted, rest)
    by_cls: dict = defaultdict(list)
    for i in np.flatnonzero(~gpu).tolist():
        by_cls[_switch_class(data[e.nodes[i]])].append(i)
    for cls, at in by_cls.items():
        if cls not in wanted:
            continue
        if cls == "nvswitch":   # each with the GPUs it stops: a Component
            rest[cls] += [_switch_component(graph, e.nodes[i], cls) for i in at]
        else:
            out[cls] = ClassComponents(cls, np.ones(len(at)), node=np.array(at, dtype=np.int64))
    for cls in CLASSES:
        block = out.get(cls) or ClassComponents(cls, np.zeros(0), node=none)
        out[cls] = ClassComponents(cls, block.parts, block.node, block.edge, block.removed,
                                   tuple(rest[cls]))
    return {c: out[c] for c in CLASSES}


def nic_heirs(graph: nx.Graph) -> dict[Hashable, tuple]:
    """Each GPU that holds a NIC its server's other GPUs share, with what a failure of it
    hands on (:attr:`Component.handed`): ``((gpu, switch), heirs)`` per link of its NIC (a
    cable of :data:`_NIC_MEDIA` to a switch of tier >= 1, not a breakout share), ``heirs``
    the GPUs of its ``server`` that reach the network through its NIC (as the builders wire
    them: see :func:`~topologies.hierarchical.rail_optimized`'s ``nics_per_server``:
    through their scale-up switch), nearest first. A GPU without a NIC shares the NIC of
    the nearest GPU of its server holding one at or below its ``rail`` label, else the
    nearest above, as the collective model sends its traffic
    (:meth:`~netmodel.collectives.route_search.SearchedRoutes._own_nic`); its heirs are in
    ``rail`` order from it (those above it, then those below the server's first holder),
    so the answer does not hang on the graph's node order. Where a GPU of the server has
    no whole-number ``rail``, the node order stands in for it. GPUs without a ``server``
    label, GPUs each with a NIC of their own, and a gateway wired to the GPUs it serves
    (``lite-groups`` with ``split="gateway"``: they reach its link through its own mesh
    links, which it forwards) hand nothing on.

    Parameters
    ----------
    graph : networkx.Graph
        A fabric.

    Returns
    -------
    dict
        ``{gpu: (((gpu, switch), heirs), ...)}`` for each GPU that hands anything on.

    Examples
    --------
    >>> from topologies.specs import build
    >>> nic_heirs(build("rail-optimized:domains=2,nics_per_server=4"))["gpu2"]
    ((('gpu2', 'leaf1'), ('gpu3',)),)
    >>> gateway = build("lite-groups:base=[rail-optimized:domains=2],split=gateway")
    >>> nic_heirs(build("rail-optimized:domains=2")), nic_heirs(gateway)
    ({}, {})
    """
    data, adj = graph._node, graph._adj
    by: dict = defaultdict(list)
    for n, d in data.items():
        if d.get("kind") == "gpu" and "server" in d:
            by[d["server"]].append(n)
    out: dict = {}
    for members in by.values():
        rails = [data[g].get("rail") for g in members]
        if all(isinstance(r, int | np.integer) and not isinstance(r, bool) for r in rails):
            members = [g for _, _, g in sorted(
                (int(r), i, g) for i, (r, g) in enumerate(zip(rails, members, strict=True)))]
        links = {g: [(g, s) for s, a in adj[g].items()
                     if data[s].get("kind") == "switch" and int(data[s].get("tier", -1)) >= 1
                     and a.get("medium") in _NIC_MEDIA and float(a.get("links", 1)).is_integer()]
                 for g in members}
        holders = [i for i, g in enumerate(members) if links[g]]
        if not holders:
            continue
        heirs: dict = {members[h]: [] for h in holders}
        for i, g in enumerate(members):   # the GPUs after a holder up to the next one
            if i > holders[0] and not links[g]:
                heirs[members[max(h for h in holders if h <= i)]].append(g)
        heirs[members[holders[0]]] += members[:holders[0]]   # those before the first
        for holder, after in heirs.items():
            if after and not any(h in adj[holder] for h in after):
                out[holder] = tuple((link, tuple(after)) for link in links[holder])
    return out


def join_parts(labels: np.ndarray, pairs: Iterable[tuple[int, int]]) -> np.ndarray:
    """A copy of ``labels`` (a connected part's label per node position, as
    :meth:`~topologies.graph_ops.CellArrays.labels` gives them) with the parts of each pair
    of positions joined: a link added between them. A joined part takes the smaller label
    (parts numbered by their first node stay so).

    >>> join_parts(np.array([0, 1, 2, 2, 4]), [(4, 1), (1, 2)]).tolist()
    [0, 1, 1, 1, 1]
    """
    out = np.array(labels, copy=True)
    for u, v in pairs:
        a, b = int(out[u]), int(out[v])
        if a != b:
            out[out == max(a, b)] = min(a, b)
    return out


def handed_labels(labels: np.ndarray, index: dict, comps: Iterable[Component]) -> np.ndarray:
    """``labels`` of the parts left once ``comps`` failed (per node position in
    ``index``'s order, -1 or a part of its own for a node gone) with each NIC link a failed
    GPU hands on (:attr:`Component.handed`) joined in: its first heir left (not -1) to its
    switch, as :func:`~topologies.degrade.degrade` wires it. Unchanged where no component
    hands anything on.

    >>> from topologies.graph_ops import CellArrays
    >>> from topologies.specs import build
    >>> g = build("rail-optimized:domains=2,nics_per_server=1")
    >>> cells = CellArrays(g)
    >>> gpu0 = next(c for c in components(g)["gpu-die"] if c.nodes == ("gpu0",))
    >>> labels = cells.part_labels({"gpu0"}, [])
    >>> at = cells.index
    >>> labels[at["gpu1"]] == labels[at["leaf0"]]   # gpu0 gone: gpu1-gpu7 cut off
    np.False_
    >>> joined = handed_labels(labels, at, [gpu0])
    >>> joined[at["gpu1"]] == joined[at["leaf0"]], int(joined[at["gpu0"]])
    (np.True_, -1)
    """
    comps = tuple(comps)
    if not any(c.handed for c in comps):
        return labels
    cut = {edge_key(u, v) for c in comps for u, v in c.edges}   # a NIC link lost with it
    pairs = []
    for c in comps:
        for (g, s), heirs in c.handed:
            heir = next((h for h in heirs if labels[index[h]] >= 0), None)
            if heir is not None and labels[index[s]] >= 0 and edge_key(g, s) not in cut:
                pairs.append((index[heir], index[s]))
    return join_parts(labels, pairs) if pairs else labels


def _hosts_and_racks(graph: nx.Graph, gpus: list, gpus_per_host: int | None,
                     wanted: tuple[str, ...], out: dict[str, list]) -> None:
    """Append the ``host`` and ``rack`` components (where wanted) to ``out``'s lists."""
    data = graph._node
    held = _tier0_of(graph) if "host" in wanted or "rack" in wanted else {}
    index = _held_index(held)
    host_list = hosts(graph, gpus_per_host)
    if "host" in wanted:
        for i, members in enumerate(host_list):
            out["host"].append(Component("host", f"host{i}",
                                         nodes=(*members, *_holds(held, members, index))))
    if "rack" in wanted and gpus and all("rack" in data[g] for g in gpus):
        by: dict = defaultdict(list)
        rack_of = _whole_host_racks([data[g]["rack"] for g in gpus],
                                    {g: i for i, g in enumerate(gpus)}, host_list)
        for g, label in zip(gpus, rack_of, strict=True):
            by[label].append(g)
        for label, members in by.items():
            out["rack"].append(Component("rack", f"rack{label}",
                                         nodes=(*members, *_holds(held, members, index))))


def _bundle_components(graph: nx.Graph, edges: Sequence[tuple[Hashable, Hashable]],
                       cables: float, wanted: tuple[str, ...], out: dict[str, list]) -> None:
    """Append the link-end and NIC components of one bundle (:func:`_link_parts`, where
    wanted and with parts) to ``out``'s lists."""
    shared = all(shared_part(graph, u, v) for u, v in edges)
    for end_cls, name, removed, scaled, parts in _link_parts(graph, edges, cables):
        if end_cls in wanted and parts > 0:
            out[end_cls].append(Component(end_cls, name, edges=removed, scaled=scaled,
                                          parts=float(parts), shared=shared))


def _circuit_fibres(graph: nx.Graph, wanted: tuple[str, ...], out: dict[str, list]) -> None:
    """Append the cable-end and NIC components of the GPU-OCS fibres of a realized OCS
    fabric (:func:`~topologies.optical.realize`) to ``out``'s lists: its circuits are its
    edges, the fibres they ride on are not, yet their ends fail as the bare cabling's do.

    A fibre is named ``gpu-ocs`` as the cabling's edge, its parts are the cabling's
    (:func:`~topologies.inventory.cable_end_parts`: one at the GPU, none at the OCS), of the
    class of the medium of ``ocs_cabling`` (else of the circuits' ``optics``), with a ``nic``
    where that medium is one a NIC drives. Failed, it takes the one circuit on it (a GPU has
    one port on each OCS): its edge where that is the pair's only circuit, else that
    circuit's share of its bandwidth (:func:`~topologies.schema.circuit_each`). The fibres
    are those the circuits' ``via`` name and, where ``ocs_cabling`` counts a fibre from
    every GPU to every OCS (the ``ocs`` builder's cabling), the unused ones, which cut
    nothing; where it counts other unused fibres, whose ends are not known, they are one
    component of that many parts that cuts nothing. A circuit without ``via`` has no fibre
    named here.

    >>> from topologies.specs import build
    >>> out = {c: [] for c in CLASSES}
    >>> _circuit_fibres(build("ocs:gpus=4,ports=2,logical=ring"), CLASSES, out)
    >>> len(out["cpo-engine"]), out["cpo-engine"][0].name, out["cpo-engine"][0].edges
    (8, 'gpu0-ocs0', (('gpu0', 'gpu1'),))
    """
    data = graph._node
    cabling = graph.graph.get("ocs_cabling")
    on: dict = {}   # (gpu, ocs) -> the circuit edge riding it and its share
    optics = None
    for u, v, d in graph.edges(data=True):
        planes = circuit_via(u, v, d, data)
        if not planes:
            continue
        optics = optics or d.get("optics")
        each = circuit_each(u, v, d)
        total = float(d["bandwidth"])
        for i, o in enumerate(planes):
            share = (each[0][i] / total if total > 0 else 1.0 / len(planes)) \
                if each is not None else 1.0 / len(planes)
            for g in (u, v):
                on[(g, o)] = ((u, v), len(planes), share)
    medium = cabling["medium"] if cabling is not None else optics
    end_cls = LINK_CLASSES.get(medium)
    at = {n: i for i, n in enumerate(data)}   # the cabling's order: GPU, then OCS
    used = sorted(on, key=lambda p: (at[p[0]], at[p[1]]))
    fibres, unknown = used, 0
    if cabling is not None:   # the inventory's fibres: one rule for the bill and failures
        fibres, unknown = ocs_fibres(graph)
    end_parts = cable_end_parts("gpu", 1) + cable_end_parts("ocs", 1)
    classes = [(end_cls, end_parts), *((("nic", cable_end_parts("gpu", 1)),)
                                       if medium in _NIC_MEDIA else ())]
    for cls, parts in classes:
        if cls not in wanted or parts <= 0:
            continue
        for g, o in fibres:
            circuit = on.get((g, o))
            removed: tuple = ()
            scaled: tuple = ()
            if circuit is not None:
                edge, count, share = circuit
                if count == 1:
                    removed = (edge,)
                else:
                    scaled = ((edge, 1.0 - share),)
            out[cls].append(Component(cls, f"{g}-{o}", edges=removed, scaled=scaled,
                                      parts=float(parts), fibres=((g, o),)))
        if unknown:
            out[cls].append(Component(cls, f"{unknown} fibres no circuit rides",
                                      parts=float(parts * unknown)))


def _tier0_of(graph: nx.Graph) -> dict[Hashable, frozenset]:
    """Every tier-0 switch (:func:`stops`, read from the attribute dicts: no view a node),
    with the GPUs wired to it."""
    return {n: frozenset(stopped_by(graph, n)) for n, d in graph._node.items()
            if _is_tier0(d)}


def stops(graph: nx.Graph, node: Hashable) -> bool:
    """Whether ``node`` is a tier-0 switch: failed, it stops every GPU wired to it."""
    return _is_tier0(graph.nodes[node])


def _is_tier0(d: dict) -> bool:
    """:func:`stops` of a node's attribute dict ``d``."""
    return d.get("kind") == "switch" and int(d.get("tier", -1)) == 0


def stopped_by(graph: nx.Graph, node: Hashable) -> tuple:
    """The GPUs of ``graph`` that stop when ``node`` fails: those wired to it where it is a
    tier-0 switch (:func:`stops`), none otherwise."""
    if not stops(graph, node):
        return ()
    data = graph.nodes
    return tuple(x for x in graph.neighbors(node) if data[x].get("kind") == "gpu")


def class_counts(comps: dict[str, list[Component]]) -> dict[str, float]:
    """Physical parts per class (components weighted by ``parts``)."""
    return {c: float(sum(x.parts for x in v)) for c, v in comps.items()}
