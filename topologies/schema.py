"""The graph schema every fabric obeys, and :func:`validate` that checks it.

A fabric is an undirected :class:`networkx.Graph`; each edge is a full-duplex link.

Nodes (ids are short, readable and stable: ``gpu17``, ``nvs0``, ``leaf3``, ``spine0``,
``core1``, ``ocs2``) carry ``kind``, one of :data:`NODE_KINDS`:

* ``kind="gpu"``: ``gpu`` (str) names the GPU type: one of the graph's own ``gpu_types``
  or else compute's catalog (e.g. ``"H100-SXM"``, ``"Lite"``; see :func:`gpu_spec`);
  optional placement labels used for failure domains and placement (whole numbers >= 0
  below ``NETMODEL_MAX_FABRIC_NODES``, default 2,000,000, the most nodes a fabric has:
  :func:`~topologies.limits.max_nodes`): ``server``, ``rack``, ``pod``, ``group`` (the
  Lite group / scale-up domain the GPU belongs to), ``rail`` (its position in the
  server); and ``device`` (likewise, the GPU's device index in its server, which NCCL's
  PXN relays by), which
  :func:`topologies.degrade.degrade` sets before a GPU of the server is removed so
  that the others keep theirs; where absent, a GPU's index is its position among its
  server's GPUs in node order. The collective algorithms read the labels too: a GPU's
  scale-up domain is its ``group``, else the tier-0 switches it is wired to, else its
  ``server`` (:func:`netmodel.collectives.group_domains.domain_key`), so GPUs of a
  hand-made fabric that share a ``server`` label are one domain even with no scale-up
  link between them (hierarchical algorithms run a step inside it, rings go one per rail
  across).
* ``kind="switch"``: ``tier`` (int >= 0: 0 = scale-up switch such as NVSwitch, 1 = leaf,
  2 = spine, 3 = core), ``radix`` (int ports), ``latency`` (s, port-to-port traversal) and
  ``in_network_reduction`` (bool: can reduce data in the switch, like NVLS or SHARP).
* ``kind="ocs"``: ``ports`` (int), ``reconfiguration_time`` (s) and ``latency`` (s,
  insertion delay of a circuit through it).

A switch has a port rate from its links alone (its fastest cable), by which it is priced
(radix x port rate) and its ports counted: a fabric read from a file or priced has every
switch linked (:func:`check_switches_linked`; an OCS of a realized fabric has none, its
circuits being GPU-GPU edges, and is priced by its ports).

Edges join two different nodes (no self-loops) and carry ``bandwidth`` (bytes/s per
direction; an edge standing for several parallel cables carries their sum), ``latency``
(s: propagation plus port/serialization overhead), ``medium`` (one of :data:`MEDIA`),
``lanes`` (a whole number >= 1: electrical/optical lanes, summed over cables) and
optionally ``links`` (default 1: physical cables the edge stands for; a breakout share of
a port may be fractional) and ``length`` (m: no model reads it, but it obeys a builder's
``length`` rule, finite, >= 0 and at most 100 km: :func:`check_length`).
The media :data:`TRACE_MEDIA` are wiring, not cables: ``board`` the traces of one
server's baseboard (the NVLinks between the GPUs and NVSwitch chips of an HGX H100 board),
``on-package`` the wiring inside a package. The bill of materials counts their links apart
from cables, no link-end part fails on them (they fail with their board or package: the
``host``, ``nvswitch`` and GPU classes) and no cable or optics is priced for them.
Builders choose ``board`` for a scale-up link inside one server and ``copper`` for one that
leaves it (an NVL72 rack's cable spine between compute and switch trays).
An OCS switches light: every edge at an OCS node, and the ``ocs_cabling`` below, is of an
optical medium (:data:`OPTICAL_MEDIA`; a board trace or a copper cable cannot end on its
mirrors). A circuit set up through an optical circuit switch is a GPU-GPU edge with
``medium="ocs-circuit"`` and ``via`` naming the OCS node (comma-separated when several;
optional, but the graph has an OCS): one OCS a circuit (``links`` of them), each once, and
no GPU with two circuits through one OCS (it has one port on each). Where a pair's circuits
differ (its GPUs' ports unequal), ``via_bandwidth`` and ``via_lanes`` give each circuit's
bandwidth (bytes/s) and lanes, comma-separated in ``via``'s order: both or neither, one of
each a circuit, bandwidths finite and >= 0 summing to the edge's ``bandwidth``, lanes whole
and >= 1 summing to its ``lanes`` (:func:`circuit_each`); a failed OCS or fibre then takes
out that circuit's own share.

Graph attributes: ``name`` (str), ``spec`` (the display string, for a built fabric the
spec string that rebuilds it, or ``""``), ``gpus`` (int: the number of GPU nodes) and, when
a GPU type is not the catalog's own entry, ``gpu_types`` (``{name: GpuSpec}``, with the
GPUs they derive from, to a catalog GPU; in a fabric file a name holds none of ``,``,
``=``, ``:``, as a GPU file's, and is no catalog GPU's name, in any case, with other
figures than the catalog's: :func:`~topologies.schema_gpu.check_gpu_type`, applied where
a file is read and before one is written) and, for those of them a GPU file says more of,
``gpu_file_facts`` (``{name: {key: value}}``, the keys of
:data:`compute.gpu_facts.GPU_FILE_FACTS`: ``derive_from`` and ``fraction``, the ``die``
table, ``host_power_W``, as the GPU file gives them; checked as a GPU file's entry, and
each derivation against the GpuSpec it describes: :func:`compute.gpu_facts.check_derivation`).
Builders add
``builder`` (the registered name) and ``args`` (its non-default arguments, JSON-safe; see
:mod:`topologies.registry`), ``nodes_built`` and ``edges_built`` (the counts they made:
analysis trusts its closed forms only while they still match) and, where they apply,
``dims`` (torus sides, ``"4x4"``: GPUs ``gpu0`` ... row-major, every GPU-GPU edge
between neighbours of that torus), ``k`` and ``oversubscription`` (fat tree),
``lites_per_group``, and for realized circuits ``logical``, ``circuits``,
``reconfiguration_time`` (s) and ``ocs_cabling`` (``{"medium", "cables", "lanes"}``: the
GPU-OCS fibres the circuits ride on, for the bill of materials, and, where the fabric was
realized from its cabling, ``"fibres"``: each fibre's own facts as columns,
:data:`~topologies.schema_circuits.CABLING_FIBRES`; a file written before them lacks
them, and its bill reads rate and length back from the circuits). A fabric some of whose
parts failed carries ``degraded``, True (:func:`~topologies.degrade.mark_degraded`):
its failed parts were bought, so the cost model refuses it. A fabric whose latencies a
scenario's ``[adjust]`` changed (:func:`netmodel.study.scenario_fabric.adjusted`) carries
``latency_scale`` (finite, > 0) and ``hop_latency`` (s, finite, >= 0): every link's
latency is its as-built one times the scale plus the hop (every switch's and OCS's times
the scale), so a cable's length read back from its latency undoes them
(:func:`~topologies.common.cable_length`; none after a scale of 0, which leaves no length
in a latency). ``module_ports`` (1 or 2; absent: 1) says how many optical cable ends one
pluggable module serves (:mod:`topologies.optic_modules`: twin-port OSFP is 2). A circuit
edge also carries ``optics`` (the medium of the GPU ports at its ends). :data:`UNITS` names the unit of every quantity (fabric files carry it).
A node, an edge or the graph may carry attributes of other names (a file's own labels),
kept unread, but not one that looks like a misspelling of one the schema reads
(:func:`~topologies.schema_text.near_miss`: ``link`` for ``links`` was read as one cable, ``gpu_type`` for
``gpu_types`` as no GPU types).

This module holds the schema's vocabulary of nodes and the graph (the tables above,
:data:`GRAPH_TYPES`; the ranges of its values are :data:`~topologies.limits.VALUE_RANGES`)
and :func:`validate` with the checks of one part each that the block builders reuse
(:func:`check_graph_attributes`, :func:`switch_problem`, :func:`ocs_problem`). The link
rule (the media, an edge's attributes and their checks, :func:`check_length`) is
:mod:`topologies.schema_links`'; the readers of a fabric (:func:`check_graph`,
:func:`gpu_nodes`, :func:`gpu_spec`, :func:`gpu_types`, :func:`gpu_derivation`,
:func:`edge_count`) are :mod:`topologies.schema_reads`'. The rule its texts obey, and the
near misses of a name, are :mod:`topologies.schema_text`'s; a circuit's readers
(:func:`circuit_count`, :func:`circuit_via`), the circuit edges' checks, the optical media
and the OCS cabling's checks are :mod:`topologies.schema_circuits`'; a torus's ``dims`` is
checked against its graph by :mod:`topologies.schema_torus`; a fabric file's GPU types are
read by :mod:`topologies.schema_gpu`. The names other modules import from here (the media,
the readers, :func:`check_length`...) stay importable here.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import fields
from itertools import chain
from typing import NoReturn

import networkx as nx

from compute.errors import UserError, find_name, known, lookalike
from compute.gpu_facts import check_gpu_file_facts
from compute.hardware import GpuSpec, catalog
from compute.validate import MAX_TEXT_LENGTH, describe, flag, is_flag
from topologies.limits import MAX_RADIX, MAX_TIER, max_nodes
from topologies.schema_circuits import (
    OPTICAL_MEDIA,
    check_cabling_columns,
    check_cabling_fits,
    check_circuits,
    circuit_count,
    circuit_each,
    circuit_via,
    scale_bandwidth,
    scale_cabling,
)
from topologies.schema_links import (
    EDGE_KEYS,
    EDGE_TYPED,
    MEDIA,
    MEDIA_SET,
    TRACE_MEDIA,
    as_real,
    check_edges,
    check_length,
    check_positive,
    check_value_range,
    finite_nonneg,
    whole_from,
)
from topologies.schema_reads import (
    check_graph,
    edge_count,
    gpu_derivation,
    gpu_nodes,
    gpu_spec,
    gpu_types,
)
from topologies.schema_text import check_attribute_texts, check_graph_texts, invalid, near_miss
from topologies.schema_torus import check_dims

__all__ = ["EDGE_KEYS", "GRAPH_TYPES", "HOP_LATENCY", "LABELS", "LATENCY_SCALE", "MEDIA", "MODULE_PORTS",
           "MODULE_PORT_CHOICES", "MODULE_PORTS_RULE", "NODE_KEYS", "NODE_KINDS",
           "TRACE_MEDIA", "UNITS", "catalog_clash", "circuit_count",
           "check_switches_linked", "circuit_each", "circuit_via", "edge_count", "scale_bandwidth", "scale_cabling",
           "gpu_derivation", "gpu_nodes", "gpu_spec", "gpu_types", "validate",
           "MEDIA_SET", "check_graph", "check_length", "check_positive"]

NODE_KINDS = ("gpu", "switch", "ocs")
#: Required node attributes by kind.
NODE_KEYS = {
    "gpu": ("gpu",),
    "switch": ("tier", "radix", "latency", "in_network_reduction"),
    "ocs": ("ports", "reconfiguration_time", "latency"),
}
#: Optional placement labels of a GPU node (ints >= 0).
LABELS = ("server", "rack", "pod", "group", "rail")
#: The unit of every quantity in a fabric (node, edge and graph attributes; GPU types are
#: in SI: FLOP/s, bytes, bytes/s per direction, watts).
UNITS = {
    "bandwidth": "bytes/s per direction",
    "latency": "s",
    "reconfiguration_time": "s",
    "radix": "ports",
    "ports": "ports",
    "lanes": "lanes",
    "links": "cables",
    "gpus": "GPUs",
    "gpu_types": "SI (FLOP/s, bytes, bytes/s per direction, W)",
}
#: The graph attribute that marks a fabric some of whose parts failed, True
#: (:func:`topologies.degrade.mark_degraded`; the cost model refuses such a graph).
DEGRADED = "degraded"
#: The graph attributes that record the latency change a scenario's ``[adjust]`` made to a
#: built fabric (:func:`topologies.common.note_latency_adjustment`): each link's latency
#: is its as-built one times ``latency_scale`` plus ``hop_latency`` (s).
LATENCY_SCALE, HOP_LATENCY = "latency_scale", "hop_latency"
#: The graph attribute saying how many optical cable ends one pluggable module serves
#: (:mod:`topologies.optic_modules`): 1 (a single-port module, what a fabric without it
#: reads: every file written before it) or 2 (twin-port OSFP, two 400 Gb/s ends in one
#: module, as a DGX H100 SuperPOD's switches and servers hold them, ``P40``).
MODULE_PORTS = "module_ports"
#: The values :data:`MODULE_PORTS` may take.
MODULE_PORT_CHOICES = (1, 2)
#: What :data:`MODULE_PORTS` must be, in a refusal's words.
MODULE_PORTS_RULE = (" or ".join(map(str, MODULE_PORT_CHOICES))
                     + " (the optical cable ends one pluggable module serves)")
#: Types of the graph attributes the schema knows (others are kept unchecked, but not a
#: near miss of one of these: :func:`near_miss`); a bool only where ``bool`` is named.
GRAPH_TYPES = {
    "name": (str,), "spec": (str,), "builder": (str,), "args": (dict,), "gpu_types": (dict,),
    "dims": (str,), "logical": (str,), "gpus": (int,), "nodes_built": (int,),
    "edges_built": (int,), "k": (int,), "oversubscription": (int,), "lites_per_group": (int,),
    "circuits": (int,), "reconfiguration_time": (int, float), "ocs_cabling": (dict,),
    "gpu_file_facts": (dict,), DEGRADED: (bool,), LATENCY_SCALE: (int, float),
    HOP_LATENCY: (int, float), MODULE_PORTS: (int,),
}
#: Each type of :data:`GRAPH_TYPES` in the words a file's writer reads (Python's names,
#: 'must be dict', were the refusal's).
_TYPE_WORDS = {(str,): "text", (dict,): "a table (a JSON object)", (int,): "a whole number",
               (int, float): "a number", (bool,): "true or false"}
#: The graph attributes that count what its builder made (:mod:`topologies.registry`), the
#: least each may be and what it counts: a fabric holds a GPU at least; a count of links is
#: a count (a value that no longer matches the graph only marks it edited, not as built).
BUILT_COUNTS = {"nodes_built": (1, "nodes"), "edges_built": (0, "links")}
#: :data:`LABELS` as a set, for the per-node checks.
LABEL_SET = frozenset(LABELS)
#: The GPU node attributes whose values the schema types (numbers, text, one of a list): a
#: GPU node with any other is passed to :func:`~topologies.schema_text.check_attribute_texts`
#: (an edge's: :data:`~topologies.schema_links.EDGE_TYPED`).
_GPU_TYPED = frozenset(("kind", "gpu", "device", *LABELS))
#: Every node and edge attribute the schema reads (a circuit's own included): a file's
#: attribute of another name is kept unread unless it is a near miss of one of these
#: (:func:`_check_near_misses`).
_NODE_READ = frozenset((*_GPU_TYPED, *chain.from_iterable(NODE_KEYS.values())))
_EDGE_READ = frozenset((*EDGE_TYPED, "via", "via_bandwidth", "via_lanes", "optics"))
READ_ATTRIBUTES = _NODE_READ | _EDGE_READ
#: The attributes the schema reads on a node of each kind.
_KIND_READ = {k: frozenset(("kind", *keys, *(_GPU_TYPED if k == "gpu" else ())))
              for k, keys in NODE_KEYS.items()}


def _near_miss_problem(what: str, key: str, match: str) -> NoReturn:
    invalid(f"{what} has attribute {key!r}, which the schema does not read; did you mean "
         f"{match!r}? (other attributes are kept unread: rename one of your own that looks "
         f"like a misspelling)")


def check_switches_linked(graph: nx.Graph) -> None:
    """UserError naming a switch of ``graph`` with no link (and how many more there are): a
    switch's port rate is its links', so one with none has no price (radix x port rate: it
    was priced at $0, its ports counted all the same) and carries no route; a spare switch
    is not a part of the fabric. An OCS with no link is a realized fabric's (its circuits
    are GPU-GPU edges), priced by its ports; a degraded fabric (graph attribute
    :data:`DEGRADED`) may hold a switch whose links failed, and is not priced.

    >>> from topologies import build
    >>> g = build("ring:n=4")
    >>> g.add_node("sw0", kind="switch", tier=1, radix=64, latency=0.0, in_network_reduction=False)
    >>> check_switches_linked(g)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: switch 'sw0' has no links; a switch is priced by its radix x port rate and its port rate is its links' (a spare switch is no part of a fabric): link it or take it out
    """
    if graph.graph.get(DEGRADED):
        return
    adj = graph._adj
    lone = [n for n, k in graph.nodes(data="kind") if k == "switch" and not adj[n]]
    if lone:
        more = f" (nor have {len(lone) - 1:,} more)" if len(lone) > 1 else ""
        invalid(f"switch {describe(lone[0])} has no links{more}; a switch is priced by its radix "
             f"x port rate and its port rate is its links' (a spare switch is no part of a "
             f"fabric): link {'them' if more else 'it'} or take {'them' if more else 'it'} out")


def _kind_problem(node: object, data: dict) -> NoReturn:
    """Refuse ``node`` (attributes ``data``) whose ``kind`` is not one of
    :data:`NODE_KINDS`: a kind of another value, none at all (not 'kind None'), or none
    beside an attribute ``id``, a GraphML ``<key>`` given the name of a node's own id (a
    kind written under it, read as no kind)."""
    what, allowed = f"node {describe(node)}", f"allowed: {known(NODE_KINDS)}"
    if "kind" in data:
        invalid(f"{what} has kind {describe(data['kind'])}; {allowed}")
    if "id" in data:
        invalid(f"{what} has no attribute 'kind' but one named 'id' ({describe(data['id'])}): "
             f"'id' is the name of a node itself (GraphML's node id, the key of a node in a "
             f"fabric's JSON), no attribute; name the key 'kind' if it holds the node's kind "
             f"({allowed})")
    invalid(f"{what} has no attribute 'kind'; every node names its kind ({allowed})")


def _check_near_misses(holders: list) -> None:
    """Refuse a node or edge attribute among ``holders`` (``(node, None, data)`` and
    ``(u, v, data)``, those with attributes the schema does not type) that a fabric file's
    JSON keeps for itself (a node's ``id``, an edge's ``source`` and ``target``: written,
    it replaced the id or the end) or that is a :func:`near_miss` of one the schema reads.
    The distinct names are looked at once; the loop that names the holder runs on a find
    only."""
    names = set().union(*(data.keys() for _, _, data in holders)) - READ_ATTRIBUTES
    if not names.isdisjoint(("id", "source", "target")):
        for u, v, data in holders:   # a file's JSON gives a node its id, an edge its ends
            for key in ("id",) if v is None else ("source", "target"):
                if key in data:
                    what = f"node {describe(u)}" if v is None else \
                        f"edge {describe(u)}-{describe(v)}"
                    invalid(f"{what} has attribute {key!r}, the key a fabric file's JSON gives "
                         f"{'a node its id' if v is None else 'an edge its ends'} (written to "
                         f".json, it replaced {'the id' if v is None else 'that end'}); rename it")
    # a node's attribute against those a node of its kind reads, an edge's against an
    # edge's, and only those the holder lacks: a 'kinds' beside 'kind' or a GPU's 'port'
    # (an OCS's 'ports') is a label of its own, not a typo read as nothing
    missed = {n for n in names if near_miss(n, READ_ATTRIBUTES) is not None}
    if not missed:
        return
    for u, v, data in holders:
        for key in missed.intersection(data):
            read = _EDGE_READ if v is not None else _KIND_READ.get(data.get("kind"), _NODE_READ)
            if (match := near_miss(key, read - data.keys())) is not None:
                what = f"node {describe(u)}" if v is None else f"edge {describe(u)}-{describe(v)}"
                _near_miss_problem(what, key, match)


def check_graph_attributes(graph: nx.Graph) -> dict:
    """Check ``graph``'s own attributes (:data:`GRAPH_TYPES`, ``reconfiguration_time``,
    ``ocs_cabling``, ``gpu_types`` and ``gpu_file_facts``); UserError naming the first
    wrong one. Returns its ``gpu_types`` (``{}`` when none)."""
    attrs = graph.graph
    if not attrs.keys() <= GRAPH_TYPES.keys():   # 'gpu_type' for 'gpu_types': read as none
        for key in attrs:
            if key not in GRAPH_TYPES and (
                    match := near_miss(key, GRAPH_TYPES.keys() - attrs.keys())) is not None:
                _near_miss_problem("the graph", key, match)
    for key, allowed in GRAPH_TYPES.items():
        if key in attrs:
            v = attrs[key]
            if not isinstance(v, allowed) or (isinstance(v, bool) and bool not in allowed):
                invalid(f"graph attribute {key!r} must be {_TYPE_WORDS[allowed]}, got "
                     f"{describe(v)}")
            if isinstance(v, str) and len(v) > MAX_TEXT_LENGTH:   # a name of 20 MB was printed
                invalid(f"graph attribute {key!r} must be text of at most {MAX_TEXT_LENGTH:,} "
                     f"characters, got {describe(v)}")
    for key, (least, what) in BUILT_COUNTS.items():   # int by now (GRAPH_TYPES)
        if key in attrs and attrs[key] < least:
            invalid(f"graph attribute {key!r} is {describe(attrs[key])}; it counts the {what} "
                 f"its builder made: a whole number >= {least}")
    if "reconfiguration_time" in attrs:
        if not finite_nonneg(attrs["reconfiguration_time"]):
            invalid(f"graph attribute 'reconfiguration_time' must be finite and >= 0 s, got "
                 f"{describe(attrs['reconfiguration_time'])}")
        # the OCS nodes' own bound: a file's 1e300 s printed 'reconfigure: 1e+303 ms'
        check_value_range("graph attribute", "reconfiguration_time", attrs["reconfiguration_time"])
    if LATENCY_SCALE in attrs and not (finite_nonneg(attrs[LATENCY_SCALE]) and attrs[LATENCY_SCALE] > 0):
        invalid(f"graph attribute {LATENCY_SCALE!r} must be finite and > 0 (the scale its "
             f"links' latencies were adjusted by), got {describe(attrs[LATENCY_SCALE])}")
    if HOP_LATENCY in attrs and not finite_nonneg(attrs[HOP_LATENCY]):
        invalid(f"graph attribute {HOP_LATENCY!r} must be finite and >= 0 s (the latency added "
             f"to each of its links), got {describe(attrs[HOP_LATENCY])}")
    if MODULE_PORTS in attrs and attrs[MODULE_PORTS] not in MODULE_PORT_CHOICES:
        invalid(f"graph attribute {MODULE_PORTS!r} must be {MODULE_PORTS_RULE}, got "
             f"{describe(attrs[MODULE_PORTS])}")
    cabling = attrs.get("ocs_cabling")
    if cabling is not None and (set(cabling) - {"fibres"} != {"medium", "cables", "lanes"}
                                or not isinstance(cabling["medium"], str)
                                or cabling["medium"] not in OPTICAL_MEDIA
                                or not whole_from(cabling["cables"], 0)
                                or not whole_from(cabling["lanes"], 0)):
        invalid("graph attribute 'ocs_cabling' must be {'medium': an optical medium ("
             f"{known(OPTICAL_MEDIA)}), 'cables': whole >= 0, 'lanes': whole >= 0}}, got "
             f"{describe(cabling)}")
    if cabling is not None and "fibres" in cabling:
        check_cabling_columns(cabling["fibres"])
    own = attrs.get("gpu_types") or {}
    for name, spec in own.items():
        if not isinstance(spec, GpuSpec) or spec.name != name:
            invalid(f"gpu_types[{describe(name)}] must be the GpuSpec named {describe(name)}, got "
                 f"{describe(spec)}")
    if "gpu_file_facts" in attrs:   # as a GPU file's entries are checked (compute's checks)
        try:
            check_gpu_file_facts(own, attrs["gpu_file_facts"], "gpu_file_facts")
        except UserError as exc:
            invalid(str(exc))
    return own


def catalog_clash(spec: GpuSpec) -> str | None:
    """Why a fabric's GPU type ``spec`` may not be one of its ``gpu_types``, or None: it
    takes a catalog GPU's name (in any case, as a GPU file may not) with other figures
    than the catalog's. The fabric would run it with its own figures while every look-up
    by name (the catalog's price, die and collective generation, a scenario's gpu) got the
    catalog's. One with the catalog's figures (its source aside) is the catalog's GPU.

    >>> from dataclasses import replace
    >>> from compute.hardware import get_gpu
    >>> catalog_clash(get_gpu("Lite")) is None
    True
    >>> catalog_clash(replace(get_gpu("Lite"), name="lite", sms=40))
    "GPU type 'lite' takes the name of the catalog's 'Lite' with other figures (sms); give yours another name"
    """
    table = catalog()
    key = find_name(table, spec.name)
    if key is None:
        return None
    differ = [f.name for f in fields(GpuSpec) if f.name not in ("name", "source")
              and getattr(spec, f.name) != getattr(table[key], f.name)]
    if not differ:
        return None
    return (f"GPU type {spec.name!r} takes the name of the catalog's {key!r} with other "
            f"figures ({', '.join(differ)}); give yours another name")


def _gpu_problem(node: Hashable, data: dict, own: Mapping[str, GpuSpec]) -> None:
    t = data.get("gpu")
    if not isinstance(t, str) or not t:
        invalid(f"gpu node {describe(node)} must name its GPU type in 'gpu', got {describe(t)}")
    if t not in own and t not in catalog():
        # a name in look-alike letters ('Н100-SXM', a Cyrillic EN) asked about, as a GPU
        # named anywhere else is (compute.errors.lookalike)
        invalid(f"gpu node {describe(node)} names GPU type {describe(t)}, which is neither one of the "
             f"graph's gpu_types nor in the catalog{lookalike(t, [*own, *catalog()])}; known: "
             f"{known([*own, *catalog()])}")


def _label_problem(node: Hashable, data: dict, most: int) -> None:
    """Refuse ``node``'s first placement label that is not a whole number from 0 to
    ``most`` (:func:`~topologies.limits.max_nodes` - 1: a label numbers a server, rack,
    pod, group or rail of the fabric, of which it has fewer than nodes; a GraphML long of
    1e400 was read as a 401-digit number)."""
    for key in LABELS:
        if key in data and not whole_from(data[key], 0):
            invalid(f"gpu node {describe(node)} label {key!r} must be a whole number >= 0, got "
                 f"{describe(data[key])}")
        if key in data and data[key] > most:
            invalid(f"gpu node {describe(node)} label {key!r} is {describe(data[key])}, above "
                 f"{most:,}: it numbers a {key} of the fabric, and a fabric has at most "
                 f"{most + 1:,} nodes (NETMODEL_MAX_FABRIC_NODES)")


def _check_devices(graph: nx.Graph, gpu_list: list, devices: list) -> None:
    """Check the ``device`` labels of the GPUs ``devices`` (of ``gpu_list``, every GPU):
    each a whole number >= 0 below :func:`~topologies.limits.max_nodes`, on a GPU with a
    ``server`` label, one per (server, device), and on every GPU with a ``server`` label or
    on none, as :func:`~topologies.degrade.keep_devices` sets them. Routing reads
    them only then: a partial or broken set was ignored without a word (PXN relaying by
    position instead), and an index of 10**12 sized PXN's (server, device) table at 14 TiB.
    A degraded server keeps its indices, so one may reach its count of GPUs."""
    from topologies.limits import max_nodes

    most = max_nodes() - 1
    data = graph.nodes
    seen: dict = {}
    for node in devices:
        d = data[node]
        value = d["device"]
        if value.__class__ is not int or value < 0:
            invalid(f"gpu node {describe(node)} label 'device' must be a whole number >= 0 (its "
                 f"device index in its server), got {describe(value)}")
        if value > most:
            invalid(f"gpu node {describe(node)} label 'device' is {describe(value)}, above "
                 f"{most:,}: a device index numbers a GPU of its server, and a fabric has at "
                 f"most {most + 1:,} nodes (NETMODEL_MAX_FABRIC_NODES)")
        if "server" not in d:
            invalid(f"gpu node {describe(node)} has label 'device' ({value}) but no 'server' label; "
                 f"a device index numbers a GPU of its server")
        other = seen.setdefault((d["server"], value), node)
        if other != node:
            invalid(f"gpu nodes {describe(other)} and {describe(node)} of server {d['server']} both "
                 f"have device {value}; each GPU of a server has its own device index")
    if len(devices) < len(gpu_list):
        have = set(devices)
        missing = next((n for n in gpu_list if n not in have and "server" in data[n]), None)
        if missing is not None:
            invalid(f"gpu node {describe(missing)} has a 'server' label but no 'device' label, "
                 f"while gpu node {describe(devices[0])} has one; give every GPU with a "
                 f"'server' label its device index, or none (then it is the GPU's position "
                 f"among its server's GPUs)")


def _ports_used(adj: Mapping[Hashable, Mapping[Hashable, dict]], node: Hashable) -> float:
    return sum(d.get("links", 1) for d in adj[node].values())


def switch_problem(node: Hashable, data: dict,
                   adj: Mapping[Hashable, Mapping[Hashable, dict]]) -> None:
    """Check switch ``node``'s attributes ``data`` (tier, radix, latency,
    in_network_reduction); UserError naming the first wrong one."""
    if not whole_from(data["tier"], 0):
        invalid(f"switch {describe(node)} tier must be a whole number >= 0, got {describe(data['tier'])}")
    if data["tier"] > MAX_TIER:
        invalid(f"switch {describe(node)} tier must be at most {MAX_TIER} (0 scale-up, 1 leaf, "
             f"2 spine, 3 core), got {describe(data['tier'])}")
    if not whole_from(data["radix"], 1):
        invalid(f"switch {describe(node)} radix must be a positive integer, got {describe(data['radix'])}")
    if data["radix"] > MAX_RADIX:
        invalid(f"switch {describe(node)} radix must be at most {MAX_RADIX:,} ports, got "
             f"{describe(data['radix'])}")
    if not finite_nonneg(data["latency"]):
        invalid(f"switch {describe(node)} latency must be finite and >= 0 s, got {describe(data['latency'])}")
    check_value_range(f"switch {describe(node)}", "latency", data["latency"])
    if not is_flag(data["in_network_reduction"]):
        invalid(f"switch {describe(node)} in_network_reduction must be true or false, got "
             f"{describe(data['in_network_reduction'])}")
    data["in_network_reduction"] = bool(data["in_network_reduction"])   # numpy's: Python's


def ocs_problem(node: Hashable, data: dict,
                adj: Mapping[Hashable, Mapping[Hashable, dict]]) -> None:
    """Check OCS ``node``'s attributes ``data`` (ports, reconfiguration_time, latency) and
    that its edges in ``adj`` are optical; UserError naming the first wrong one."""
    if not whole_from(data["ports"], 1):
        invalid(f"ocs {describe(node)} ports must be a positive integer, got {describe(data['ports'])}")
    if data["ports"] > MAX_RADIX:
        invalid(f"ocs {describe(node)} ports must be at most {MAX_RADIX:,}, got "
             f"{describe(data['ports'])}")
    for key in ("reconfiguration_time", "latency"):
        if not finite_nonneg(data[key]):
            invalid(f"ocs {describe(node)} {key} must be finite and >= 0 s, got {describe(data[key])}")
        check_value_range(f"ocs {describe(node)}", key, data[key])
    for other, d in adj[node].items():
        if d["medium"] not in OPTICAL_MEDIA:
            invalid(f"edge {describe(node)}-{describe(other)} medium {describe(d['medium'])} ends on an "
                 f"OCS, which switches light: allowed {known(OPTICAL_MEDIA)}")


def validate(graph: nx.Graph, *, check_connected: bool = True) -> nx.Graph:
    """Check that ``graph`` obeys the fabric schema; return it unchanged, else raise a
    UserError naming the node, edge or graph attribute at fault.

    Checks the graph attributes' types (:data:`GRAPH_TYPES`) and ``gpu_types``; every node's
    kind and required attributes (a GPU's type known to the graph or the catalog, labels
    whole numbers >= 0; ``device`` labels on every GPU with a ``server`` label or on none, one
    per (server, device), below the fabric node limit; a switch's tier a whole number from 0 to 64, radix a positive
    integer up to 1,000,000 not exceeded by its cables, latency finite >= 0, in_network_reduction
    a bool; an OCS's ports likewise, its edges optical); every edge (no self-loop; bandwidth
    finite and > 0, latency finite and >= 0, lanes a whole number >= 1, links finite and > 0, a
    known medium; bandwidth, latency, reconfiguration times, lanes and links within
    :data:`~topologies.limits.VALUE_RANGES`,
    which an adjusted scenario reaches and overflow does not; a
    circuit between two GPUs, ``via`` OCS nodes of the graph); a torus's ``dims`` against
    its GPUs and edges; the ``gpus`` count; every text (graph attributes, node ids, a
    node's or an edge's string attributes) one line without ``$``
    (:func:`~topologies.schema_text.text_problem`);
    and (unless ``check_connected=False``) that every GPU can reach every other.

    >>> g = nx.Graph(name="pair", spec="", gpus=2)
    >>> g.add_node("gpu0", kind="gpu", gpu="H100-SXM")
    >>> g.add_node("gpu1", kind="gpu", gpu="H100-SXM")
    >>> g.add_edge("gpu0", "gpu1", bandwidth=450e9, latency=1e-6, medium="copper", lanes=18)
    >>> validate(g) is g
    True
    >>> g.add_node("gpu2", kind="gpu", gpu="H100-SXM")
    >>> validate(g)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: graph attribute 'gpus' is 2 but it has 3 GPU nodes; set it to 3
    >>> g.add_edge("gpu2", "gpu2", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    >>> validate(g)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: invalid fabric graph: edge 'gpu2'-'gpu2' joins a node to itself (self-loops are not links)
    """
    # an array's truth raised numpy's ValueError; numpy's bool taken
    check_connected = flag("", "check_connected", check_connected)
    if not isinstance(graph, nx.Graph) or graph.is_directed() or graph.is_multigraph():
        invalid(f"expected an undirected simple networkx Graph, got {type(graph).__name__}")
    own = check_graph_attributes(graph)
    check_graph_texts(graph)   # printed and drawn: one line, no formula
    types = frozenset(own) | frozenset(catalog())
    adj = graph._adj
    plain = type(graph) is nx.Graph  # its dicts are dicts: read them directly
    untyped: list = []   # nodes and edges with attributes the schema does not type
    cables, circuits = check_edges(adj if plain else graph.adj, untyped)
    gpus = ocs_ports = 0
    gpu_list = []
    devices: list = []   # GPUs with a 'device' label
    most_label = max_nodes() - 1   # a placement label's largest (_label_problem)
    nodes = graph._node.items() if plain else graph.nodes(data=True)
    for node, data in nodes:
        kind = data.get("kind")
        if kind == "gpu":
            gpus += 1
            gpu_list.append(node)
            t = data.get("gpu")
            if t.__class__ is not str or t not in types:
                _gpu_problem(node, data, own)
            if len(data) > 2:
                for key, value in data.items():
                    if key in LABEL_SET and (value.__class__ is not int or value < 0
                                             or value > most_label):
                        _label_problem(node, data, most_label)
                if "device" in data:
                    devices.append(node)
                if not data.keys() <= _GPU_TYPED:
                    untyped.append((node, None, data))
            continue
        if kind.__class__ is not str or kind not in NODE_KEYS:
            _kind_problem(node, data)
        missing = [k for k in NODE_KEYS[kind] if k not in data]
        if missing:
            invalid(f"{kind} node {describe(node)} lacks attribute(s) {', '.join(missing)}")
        if len(data) > len(NODE_KEYS[kind]) + 1:   # beyond its kind and required ones
            untyped.append((node, None, data))
        # an edge may stand for several cables: count cables, not edges (a breakout share
        # of a port is a fraction; allow for rounding in their sum)
        if kind == "switch":
            switch_problem(node, data, adj)
            used = _ports_used(adj, node) if cables else len(adj[node])
            if as_real(used) is None or used > data["radix"] + 1e-6:
                invalid(f"switch {describe(node)} uses {describe(used)} ports but its radix is "
                     f"{data['radix']}")
        else:
            ocs_problem(node, data, adj)
            ocs_ports += data["ports"]
            used = _ports_used(adj, node) if cables else len(adj[node])
            if as_real(used) is None or used > data["ports"] + 1e-6:
                invalid(f"ocs {describe(node)} uses {describe(used)} ports but it has {data['ports']}")
    if untyped:
        check_attribute_texts(untyped)
        _check_near_misses(untyped)
    if devices:
        _check_devices(graph, gpu_list, devices)
    if "dims" in graph.graph:
        check_dims(graph, gpu_list)
    node_data = graph._node if plain else graph.nodes   # a dict: each via name at C speed
    check_circuits(circuits, node_data, ocs_ports)
    check_cabling_fits(graph, ocs_ports)
    if gpus == 0:   # before the count's checks: "set it to 0" would ask for a fabric of none
        invalid("it holds no GPU nodes (nodes of kind 'gpu'); a fabric needs at least one")
    declared = graph.graph.get("gpus")
    if declared is None:
        invalid(f"graph attribute 'gpus' is missing; set it to the number of GPU nodes, {gpus} "
             f"(graph.graph['gpus'] = {gpus}, or \"gpus\": {gpus} in a file's graph table)")
    if declared != gpus:
        invalid(f"graph attribute 'gpus' is {describe(declared)} but it has {gpus} GPU nodes; "
             f"set it to {gpus}")
    if check_connected and gpus > 1:
        first = gpu_list[0]
        reached = nx.node_connected_component(graph, first)
        cut = [n for n in gpu_list if n not in reached]
        if cut:
            invalid(f"GPU {describe(cut[0])} cannot reach GPU {describe(first)} ({len(cut)} GPU(s) disconnected)")
    return graph
