"""Shared pieces of the builders: default latencies with their sources, parameter checks,
and small helpers that add schema-conforming nodes and links. (The builder registry lives
in :mod:`topologies.registry`; ``REGISTRY``, ``builder`` and ``format_value`` are
re-exported here for older imports.)

Defaults (SI units; each number's source or the assumption behind it):

* :data:`PROPAGATION_DELAY` = 5 ns per metre of fibre ("Fibre propagation: about 5 ns per
  metre", shared/reference/fabrics.md); copper twinax is within a few per cent of it, so the
  same figure is used for copper.
* Cable lengths (assumptions, no published figure): 2 m inside a scale-up rack
  (:data:`SCALEUP_LENGTH`), 1 m inside a Lite group (:data:`GROUP_LENGTH`), 20 m from a GPU's
  NIC to its leaf (:data:`NIC_LENGTH`, leaves sit in their own racks in a rail-optimized
  row), 50 m leaf to spine (:data:`LEAF_SPINE_LENGTH`), 100 m spine to core
  (:data:`SPINE_CORE_LENGTH`), 10 m from a GPU to an OCS (:data:`OCS_LENGTH`).
* :data:`CPO_DELAY` = 5 ns per co-packaged optical chiplet crossed ("about 5 ns per chiplet
  plus time of flight", Ayar Labs TeraPHY, fabrics.md); a CPO link crosses two, a fibre
  from a GPU to an OCS one (the OCS end is mirrors), so a circuit through the OCS crosses
  two as well.
* :data:`SWITCH_LATENCY` = 330 ns port to port for a packet switch (third-party figure
  "~330 ns" for Quantum-2, fabrics.md; the other quoted figure is "<150 ns").
* :data:`NVSWITCH_LATENCY` = 150 ns (assumption: no published NVSwitch port-to-port figure
  was found; taken as the lower of the two Quantum-2 figures).
* :data:`OCS_LATENCY` = 0 s: a MEMS circuit switch steers light with mirrors and adds no
  switching delay; the light's path is counted as fibre on both sides.
* :data:`OCS_RECONFIGURATION` = 10 ms (assumption within the published range: Palomar
  "millisecond-scale switching", Calient S320 "up to 200 ms").
* :data:`OCS_PORTS` = 136 (Google Palomar OCS: 136 x 136 ports, fabrics.md).
* :data:`LANE_RATE` = 12.5 GB/s per direction per lane (100 Gb/s SerDes: NDR InfiniBand is
  4 x 100 Gb/s; an NVLink4 link is 2 lanes for 25 GB/s), used to count lanes for the bill of
  materials.

**Building in bulk.** A builder may describe its fabric as runs of nodes that share one
attribute template (:class:`Nodes`, with optional per-node whole-number labels) and runs of
links (:class:`Links`: arrays of endpoint positions with one attribute template), and end
with :func:`finish_blocks`. :func:`assemble` fills the empty graph from them exactly as the
equivalent ``add_nodes_from`` / ``add_edges_from`` calls would (same node order, same
neighbour order, one fresh attribute dict per node and per edge, an edge's dict shared by
both directions), without networkx's per-edge Python work. :func:`check_blocks` then checks
the schema (:func:`~topologies.schema.validate`) on the blocks instead of on every node and
edge: each template once, labels, port counts and connectivity with numpy. It is
validate's fast test, conservative: whenever it is not sure (anything wrong, or anything
validate only accepts on a closer look), :func:`assemble` runs the full
:func:`~topologies.schema.validate` on the graph, so that the verdict and the error are
validate's own (naming the first node or edge at fault).

>>> g = nx.Graph(name="pair", spec="", gpus=2)
>>> gpus = Nodes("gpu", 2, {"kind": "gpu", "gpu": "H100-SXM"})
>>> cable = {"bandwidth": 450e9, "latency": 1e-8, "medium": "copper", "lanes": 36}
>>> assemble(g, [gpus], [Links([0], [1], cable)]) is g
True
>>> list(g.edges(data="medium")), g.edges["gpu0", "gpu1"] is g.edges["gpu1", "gpu0"]
([('gpu0', 'gpu1', 'copper')], True)
"""

from __future__ import annotations

import gc
import math
import operator
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice, repeat

import networkx as nx
import numpy as np

from compute.errors import UserError, chosen, known, lookalike
from compute.gpu_facts import base_gpu, gpu_file_facts
from compute.hardware import GpuSpec, catalog, get_gpu
from compute.validate import describe, flag, is_whole
from topologies.limits import MAX_RADIX
from topologies.registry import REGISTRY, builder, format_value  # noqa: F401  (old home)
from topologies.schema import (
    HOP_LATENCY,
    LABEL_SET,
    LATENCY_SCALE,
    MEDIA,
    MEDIA_SET,
    NODE_KEYS,
    TRACE_MEDIA,
    as_real,
    check_graph_attributes,
    check_length,  # noqa: F401  (the builders' cable-length rule, kept beside the graph's)
    check_positive,
    ocs_problem,
    switch_problem,
    validate,
)
from topologies.schema_circuits import OPTICAL_MEDIA

PROPAGATION_DELAY = 5e-9     # s per metre
SCALEUP_LENGTH = 2.0         # m
GROUP_LENGTH = 1.0           # m
NIC_LENGTH = 20.0            # m
LEAF_SPINE_LENGTH = 50.0     # m
SPINE_CORE_LENGTH = 100.0    # m
OCS_LENGTH = 10.0            # m
CPO_DELAY = 5e-9             # s per chiplet crossed
SWITCH_LATENCY = 330e-9      # s
NVSWITCH_LATENCY = 150e-9    # s
OCS_LATENCY = 0.0            # s
OCS_RECONFIGURATION = 10e-3  # s
OCS_PORTS = 136
LANE_RATE = 12.5e9           # bytes/s per direction per lane


def cable_latency(length: float, medium: str, chiplets: int = 2) -> float:
    """Seconds for a cable of ``length`` metres: propagation, plus, for co-packaged optics,
    the optical chiplets it crosses: ``chiplets`` 2 for a cable between two packages (or a
    package and a packet switch) with co-packaged optics, 1 for a fibre from a package to
    an optical circuit switch, whose end is mirrors with no chiplet.

    >>> round(cable_latency(20, "pluggable-optics") * 1e9, 3)
    100.0
    >>> round(cable_latency(1, "co-packaged-optics") * 1e9, 3)
    15.0
    >>> round(cable_latency(10, "co-packaged-optics", chiplets=1) * 1e9, 3)
    55.0
    """
    extra = chiplets * CPO_DELAY if medium == "co-packaged-optics" else 0.0
    return length * PROPAGATION_DELAY + extra


def latency_adjustment(attrs: Mapping) -> tuple[float, float]:
    """``(latency_scale, hop_latency)``: what a scenario's adjustment did to the latencies
    of the graph whose attributes are ``attrs`` (each link's is its as-built one times the
    scale plus the hop: :func:`note_latency_adjustment`); ``(1.0, 0.0)`` for a graph as
    built.

    >>> latency_adjustment({}), latency_adjustment({"latency_scale": 2, "hop_latency": 1e-7})
    ((1.0, 0.0), (2.0, 1e-07))
    """
    return float(attrs.get(LATENCY_SCALE, 1.0)), float(attrs.get(HOP_LATENCY, 0.0))


def note_latency_adjustment(attrs: dict, scale: float, hop: float) -> None:
    """Record on graph attributes ``attrs`` that every link's latency was scaled by
    ``scale`` and ``hop`` (s) added to it, after what they record already (adjusting twice
    composes: ``(l s0 + h0) s + h = l (s0 s) + (h0 s + h)``), so :func:`cable_length`
    reads a cable's as-built length back whatever was done to its latency. A scale of 0
    (an ideal fabric's) leaves no length in any latency: the record is dropped, and a
    length read back is the hop's, as for a graph that records nothing.

    >>> a = {}
    >>> note_latency_adjustment(a, 2.0, 1e-7); note_latency_adjustment(a, 3.0, 5e-8)
    >>> a["latency_scale"], round(a["hop_latency"] * 1e9, 6)
    (6.0, 350.0)
    >>> note_latency_adjustment(a, 0.0, 1e-7); a
    {}
    """
    if scale == 0:
        attrs.pop(LATENCY_SCALE, None)
        attrs.pop(HOP_LATENCY, None)
        return
    s0, h0 = latency_adjustment(attrs)
    attrs[LATENCY_SCALE], attrs[HOP_LATENCY] = s0 * scale, h0 * scale + hop


def cable_length(latency: float | np.ndarray, chiplets: float | np.ndarray = 0,
                 adjustment: tuple[float, float] = (1.0, 0.0)) -> np.ndarray:
    """Metres of cable a link's ``latency`` (s) reads back as, the inverse of
    :func:`cable_latency`: the as-built latency (``adjustment``, the graph's
    :func:`latency_adjustment`, undone: ``(latency - hop) / scale``) less ``chiplets``
    co-packaged chiplets' delay (2 a co-packaged cable, 1 a co-packaged fibre to an OCS,
    0 any other medium), over :data:`PROPAGATION_DELAY`, at least 0. For links that carry
    no ``length`` of their own (the network bill, :func:`topologies.optical.ocs_cabling`).

    >>> float(cable_length(cable_latency(20, "pluggable-optics")))
    20.0
    >>> lat = cable_latency(10, "co-packaged-optics", chiplets=1) * 2 + 1e-7   # adjusted
    >>> round(float(cable_length(lat, 1, (2.0, 1e-7))), 9)
    10.0
    """
    scale, hop = adjustment
    built = (np.asarray(latency, dtype=float) - hop) / scale
    return np.maximum(0.0, (built - np.asarray(chiplets, dtype=float) * CPO_DELAY)
                      / PROPAGATION_DELAY)


def lanes_for(bandwidth: float) -> int:
    """Lanes of :data:`LANE_RATE` needed to carry ``bandwidth`` bytes/s per direction.

    >>> lanes_for(450e9), lanes_for(50e9), lanes_for(1e9)
    (36, 4, 1)
    """
    return max(1, math.ceil(bandwidth / LANE_RATE - 1e-9))


def link(bandwidth: float, latency: float, medium: str, links: int = 1) -> dict:
    """Edge attributes for ``links`` parallel cables carrying ``bandwidth`` bytes/s per
    direction in total (``links`` is stored only when it is not 1, to save memory)."""
    attrs = {"bandwidth": float(bandwidth), "latency": float(latency), "medium": medium,
             "lanes": lanes_for(bandwidth)}
    if links != 1:
        attrs["links"] = links
    return attrs


def new_graph(name: str) -> nx.Graph:
    """An empty fabric graph; the registry fills in ``spec``, :func:`finish` the GPU count."""
    return nx.Graph(name=name, spec="", gpus=0)


def finish(graph: nx.Graph, gpus: int, *specs: GpuSpec) -> nx.Graph:
    """Record the GPU count and, in ``gpu_types``, every GPU type in ``specs`` (those the
    builder placed) that is not the catalog's own entry; validate (connectivity included)."""
    _record(graph, gpus, specs)
    return validate(graph)


def finish_blocks(graph: nx.Graph, gpus: int, nodes: Sequence[Nodes], links: Sequence[Links],
                  *specs: GpuSpec, order: np.ndarray | None = None) -> nx.Graph:
    """:func:`finish` for a builder that describes its fabric in blocks: record the GPU
    count and types, fill the empty ``graph`` from the blocks (edges in ``order``, as
    :func:`assemble` takes it) and check it in bulk (see "Building in bulk" above; the same
    graph and the same errors as adding the nodes and edges one by one and calling
    :func:`finish`)."""
    _record(graph, gpus, specs)
    return assemble(graph, nodes, links, order=order)


def _record(graph: nx.Graph, gpus: int, specs: Sequence[GpuSpec]) -> None:
    graph.graph["gpus"] = gpus
    own = {s.name: s for s in specs if catalog().get(s.name) != s}
    if own:
        # what compute knows of each beside its spec (a GPU file's derive_from, die table,
        # host power: compute.gpu_facts.GPU_FILE_FACTS), and of the GPUs each derives from,
        # to a catalog GPU: a fabric file carries them, so a process that never read the
        # GPU file calibrates, prices and powers its GPUs as this one does
        facts = {}
        todo = list(own.values())
        while todo:
            spec = todo.pop()
            found = gpu_file_facts(spec)
            if found and spec.name not in facts:
                facts[spec.name] = found
                base = base_gpu(spec.name) if "derive_from" in found else None
                if base is not None and base.name not in catalog():
                    own.setdefault(base.name, base)
                    todo.append(base)
        graph.graph["gpu_types"] = own
        if facts:
            graph.graph["gpu_file_facts"] = facts


def switch_attrs(tier: int, radix: int, latency: float, in_network_reduction: bool) -> dict:
    """Node attributes of a switch."""
    return {"kind": "switch", "tier": tier, "radix": int(radix), "latency": float(latency),
            "in_network_reduction": bool(in_network_reduction)}


# ---------------------------------------------------------------- parameter checks

def gpu_type(name: object, what: str = "gpu") -> GpuSpec:
    """The GPU ``name`` names: a GpuSpec itself, a catalog name or a GPU file path
    (UserError listing the known ones otherwise)."""
    if not isinstance(name, str | GpuSpec):
        raise UserError(f"{what} must be a GPU name or a GpuSpec, got {describe(name)}")
    return get_gpu(name)


def check_int(what: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int in ``minimum..maximum``; bools and non-integral numbers are
    refused.

    >>> check_int("n", 4.0)
    4
    >>> check_int("n", 0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: n must be an integer >= 1, got 0
    """
    number: int | None
    if is_whole(value):   # not numpy's timedelta64 (registered Integral, no int())
        number = int(value)
    else:
        x = as_real(value)
        number = int(x) if x is not None and math.isfinite(x) and x == int(x) else None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        rule = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum:,}"
        raise UserError(f"{what} must be an integer {rule}, got {describe(value)}")
    return number


def check_radix(what: str, value: object, minimum: int = 1) -> int:
    """A port count: an integer in ``minimum`` .. :data:`~topologies.limits.MAX_RADIX`."""
    return check_int(what, value, minimum, MAX_RADIX)


#: The media a builder's cables or traces may be of: not ``ocs-circuit``, which only
#: :func:`topologies.optical.realize` makes (a circuit through an OCS of the graph).
BUILT_MEDIA = tuple(m for m in MEDIA if m != "ocs-circuit")
#: The media of links that leave a board: cables (a switched scale-out's NIC-to-leaf and
#: switch-to-switch links, :data:`NIC_LENGTH` and more).
CABLE_MEDIA = tuple(m for m in BUILT_MEDIA if m not in TRACE_MEDIA)
#: Why a scale-out refuses a trace medium.
SCALEOUT_NOT_TRACES = (f"a scale-out's links run {NIC_LENGTH:g} m from a NIC to its leaf "
                       f"and {LEAF_SPINE_LENGTH:g} m or more between switches, off any "
                       f"board: a board or package trace cannot")


def check_medium(what: str, medium: object, allowed: Collection[str] = BUILT_MEDIA,
                 why: str = "") -> str:
    """``medium`` if it is one of ``allowed`` (default: the schema's media a builder lays,
    :data:`BUILT_MEDIA`); ``why`` says why others are not, in the refusal."""
    if chosen(medium, allowed) is None:   # blanks at either end dropped, as every choice's
        if chosen(medium, MEDIA) is not None:
            reason = why or ("a circuit is set up through an OCS (the ocs builder's "
                             "logical=), not laid as a cable")
            raise UserError(f"{what} {describe(medium)} is not allowed here: {reason}; "
                            f"allowed: {known(allowed)}")
        raise UserError(f"{what} {describe(medium)} is not a known medium"
                        f"{lookalike(medium, allowed)}; known: {known(allowed)}")
    return chosen(medium, allowed)


def check_choice(what: str, value: object, choices: Collection[str]) -> str:
    """``value`` if it is one of ``choices``."""
    text = chosen(value, choices)   # blanks at either end dropped, as every choice's
    if text is None:
        raise UserError(f"{what} {describe(value)} is not allowed{lookalike(value, choices)}; "
                        f"allowed: {known(choices)}")
    return text


def reduction_or(what: str, value: object, spec: GpuSpec) -> bool:
    """``value`` checked as true or false, or, when it is None, whether ``spec``'s scale-up
    switches reduce in the switch (:attr:`~compute.hardware.GpuSpec.scaleup_reduction`).

    >>> from compute.hardware import get_gpu
    >>> reduction_or("in_network_reduction", None, get_gpu("A100-SXM-80GB"))
    False
    """
    if value is None:
        return bool(spec.scaleup_reduction)
    return flag("", what, value)


def bandwidth_or(what: str, value: object, default: float) -> float:
    """``value`` checked as a bandwidth (bytes/s), or ``default`` (the GPU's own) when it
    is None; a default of 0 (a GPU with no NIC: ``scaleout_Gbps = 0``) must be given.

    >>> bandwidth_or("nic_bandwidth", None, 0.0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: nic_bandwidth defaults to the GPU's scale-out bandwidth, which is 0 (it has no NIC: scaleout_Gbps = 0); give nic_bandwidth
    """
    if value is None and not default > 0:   # only a scale-out bandwidth may be 0
        raise UserError(f"{what} defaults to the GPU's scale-out bandwidth, which is 0 (it "
                        f"has no NIC: scaleout_Gbps = 0); give {what}")
    return default if value is None else check_positive(what, value)


# ---------------------------------------------------------------- building in bulk

def names(prefix: str, count: int, start: int = 0) -> list[str]:
    """``[prefix0, prefix1, ...]``: ``count`` node ids numbered from ``start``.

    >>> names("leaf", 3, start=2)
    ['leaf2', 'leaf3', 'leaf4']
    """
    return [f"{prefix}{i}" for i in range(start, start + count)]


@dataclass(frozen=True)
class Nodes:
    """``count`` nodes ``{prefix}{start}`` ... sharing the attributes ``attrs``, each with
    its own copy; ``labels`` adds per-node values (``{key: sequence of ints}``, in order,
    after the template's keys)."""

    prefix: str
    count: int
    attrs: Mapping
    labels: Mapping[str, Sequence[int] | np.ndarray] = field(default_factory=dict)
    start: int = 0


@dataclass(frozen=True)
class Links:
    """Edges ``u[i]``-``v[i]`` between node positions (in the order of the node blocks,
    counted from 0 over all of them), sharing the attributes ``attrs``, each edge with its
    own copy."""

    u: Sequence[int] | np.ndarray
    v: Sequence[int] | np.ndarray
    attrs: Mapping


def _ends(links: Sequence[Links]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every edge's endpoints and its block number, in insertion order."""
    u = [np.asarray(b.u, dtype=np.int64).ravel() for b in links]
    v = [np.asarray(b.v, dtype=np.int64).ravel() for b in links]
    for a, b in zip(u, v, strict=True):
        if a.shape != b.shape:
            raise ValueError("a link block's u and v differ in length")
    block = [np.full(len(a), i, dtype=np.int64) for i, a in enumerate(u)]
    if not links:
        return np.zeros((3, 0), dtype=np.int64)  # type: ignore[return-value]
    return np.concatenate(u), np.concatenate(v), np.concatenate(block)


def _copies(attrs: Mapping, count: int) -> list[dict]:
    return list(map(dict.copy, repeat(dict(attrs), count)))


def assemble(graph: nx.Graph, nodes: Sequence[Nodes], links: Sequence[Links], *,
             check: bool = True, order: np.ndarray | None = None) -> nx.Graph:
    """Fill the empty :class:`networkx.Graph` ``graph`` with the node blocks ``nodes`` (in
    order) and the edge blocks ``links`` (in order), as ``add_nodes_from`` then
    ``add_edges_from`` over the blocks would; then (``check``) check it against the schema
    (see "Building in bulk" in the module docstring). ``order``, a permutation of the
    edges of all the blocks one after the other, adds them in that order instead (edge
    ``order[0]`` first): blocks of different attributes interleaved, as a builder that
    adds its edges one by one would add them.

    Edges must be simple: no self-loop, no pair twice (ValueError otherwise: a builder's
    mistake, not the user's). The garbage collector is paused meanwhile: the graph's
    hundreds of thousands of new dicts would otherwise set off collections that traverse
    them, again and again, for nothing (none of them is garbage; at 131,072 GPUs this
    saved about 0.3 s).
    """
    if type(graph) is not nx.Graph or graph.number_of_nodes():
        raise ValueError("assemble fills an empty networkx.Graph (not a subclass: its dicts "
                         "are plain dicts)")
    u, v, block = _ends(links)
    if order is not None:
        order = np.asarray(order, dtype=np.int64)
        if not np.array_equal(np.sort(order), np.arange(len(u))):
            raise ValueError("order must be a permutation of the edges of the link blocks")
        u, v, block = u[order], v[order], block[order]
    paused = gc.isenabled()
    gc.disable()
    try:
        _fill(graph, nodes, links, u, v, order)
    finally:
        if paused:
            gc.enable()
    cache = getattr(graph, "__networkx_cache__", None)  # networkx >= 3.3 caches per graph
    if cache:
        cache.clear()
    if check and not check_blocks(graph, nodes, links, (u, v, block)):
        validate(graph)  # the error validate gives, or a graph its exact rules accept
    return graph


def _fill(graph: nx.Graph, nodes: Sequence[Nodes], links: Sequence[Links], u: np.ndarray,
          v: np.ndarray, order: np.ndarray | None = None) -> None:
    ids: list[str] = []
    node_dicts: list[dict] = []
    for block in nodes:
        dicts = _copies(block.attrs, block.count)
        for key, values in block.labels.items():
            column = np.asarray(values).tolist()
            if len(column) != block.count:
                raise ValueError(f"label {key!r} has {len(column)} values for {block.count} "
                                 "nodes")
            deque(map(operator.setitem, dicts, repeat(key), column), maxlen=0)
        ids += names(block.prefix, block.count, block.start)
        node_dicts += dicts
    n = len(ids)
    if len(u) and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= n):
        raise ValueError("a link names a node position outside the node blocks")
    if np.any(u == v):
        raise ValueError("a link joins a node to itself")
    rows = [{} for _ in range(n)]
    graph._node.update(zip(ids, node_dicts, strict=True))
    graph._adj.update(zip(ids, rows, strict=True))
    if len(graph._node) != n:
        raise ValueError("two nodes have the same id")
    edge_dicts: list[dict] = []
    for b in links:
        edge_dicts += _copies(b.attrs, len(np.asarray(b.u).ravel()))
    if order is not None:
        edge_dicts = list(map(edge_dicts.__getitem__, order.tolist()))
    # edge e is entered in u's row, then in v's, in edge order, as add_edges_from does:
    # each row lists its neighbours in the order of the edges that touch it; a chunk of
    # edges at a time, so that the lists of rows and ids entered are a chunk's, not every
    # edge's (a 1,000,000-GPU torus: its build's peak 1.74 -> 1.66 GB, the graph 1.2 GB)
    row_of = np.empty(n, dtype=object)
    row_of[:] = rows
    id_of = np.array(ids, dtype=object)
    dicts = iter(edge_dicts)
    for lo in range(0, len(u), _FILL_CHUNK):
        cu, cv = u[lo:lo + _FILL_CHUNK], v[lo:lo + _FILL_CHUNK]
        src = np.empty(2 * len(cu), dtype=np.int64)
        dst = np.empty_like(src)
        src[0::2], src[1::2] = cu, cv
        dst[0::2], dst[1::2] = cv, cu
        ds = list(islice(dicts, len(cu)))
        deque(map(operator.setitem, row_of[src].tolist(), id_of[dst].tolist(),
                  chain.from_iterable(zip(ds, ds, strict=True))), maxlen=0)
    if sum(map(len, rows)) != 2 * len(u):
        raise ValueError("a pair of nodes is linked twice")


#: Edges :func:`_fill` enters a chunk at a time.
_FILL_CHUNK = 1 << 18

_INF = math.inf   # bound once: _edge_ok runs per edge


def _edge_ok(d: Mapping) -> bool:
    """Whether edge attributes ``d`` pass :func:`~topologies.schema.validate`'s fast test."""
    bw, lat, lanes, links = (d.get("bandwidth"), d.get("latency"), d.get("lanes"),
                             d.get("links", 1))
    return (bw.__class__ is float and 0 < bw < _INF and lat.__class__ is float
            and 0 <= lat < _INF and lanes.__class__ is int and lanes >= 1
            and (links.__class__ is int and links >= 1
                 or links.__class__ is float and 0 < links < _INF)
            and d.get("medium").__class__ is str and d["medium"] in MEDIA_SET)


def _template_ok(attrs: Mapping, types: frozenset) -> bool:
    """Whether a node template is valid (labels are checked apart)."""
    kind = attrs.get("kind")
    if kind == "gpu":
        return attrs.get("gpu").__class__ is str and attrs["gpu"] in types
    if kind.__class__ is not str or kind not in NODE_KEYS or \
            any(k not in attrs for k in NODE_KEYS[kind]):
        return False
    try:
        if kind == "switch":
            switch_problem("", dict(attrs), {})
        else:
            ocs_problem("", dict(attrs), {"": {}})   # its edges are checked apart
    except UserError:
        return False
    return True


def _labels_ok(block: Nodes) -> bool:
    """Whether a GPU block's labels (and any label keys in its template) are whole >= 0."""
    for key, value in block.attrs.items():
        if key in LABEL_SET and (value.__class__ is not int or value < 0):
            return False
    for key, values in block.labels.items():
        if key not in LABEL_SET:
            return False  # a label overriding a checked key: let validate look at it all
        arr = np.asarray(values)
        if arr.dtype.kind not in "iu" or (arr.size and arr.min() < 0):
            return False
    return True


def _components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A component label per node (the smallest position in its component): min-label
    propagation with pointer jumping, a few numpy passes for a low-diameter fabric."""
    label = np.arange(n, dtype=np.int64)
    while True:
        low = np.minimum(label[u], label[v])
        new = label.copy()
        np.minimum.at(new, u, low)
        np.minimum.at(new, v, low)
        new = new[new]
        while True:  # jump to the root: label[x] <= x always
            nxt = new[new]
            if np.array_equal(nxt, new):
                break
            new = nxt
        if np.array_equal(new, label):
            return label
        label = new


def check_blocks(graph: nx.Graph, nodes: Sequence[Nodes], links: Sequence[Links],
                 ends: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, *,
                 check_connected: bool = True) -> bool:
    """Whether the graph :func:`assemble` made from ``nodes`` and ``links`` obeys the schema
    (what :func:`~topologies.schema.validate` checks): the graph attributes, each node and
    edge template once, GPU labels, every switch's and OCS's cables against its ports, an
    OCS's links optical, the ``gpus`` count and that all GPUs are connected (a circuit edge
    is left to validate). False when anything is wrong (then
    :func:`~topologies.schema.validate` names it)."""
    try:
        own = check_graph_attributes(graph)
    except UserError:
        return False
    types = frozenset(own) | frozenset(catalog())
    u, v, block = _ends(links) if ends is None else ends
    if not all(_edge_ok(b.attrs) and b.attrs["medium"] != "ocs-circuit" for b in links):
        return False
    n = sum(b.count for b in nodes)
    ocs = np.zeros(n, dtype=bool)
    cables = np.array([b.attrs.get("links", 1) for b in links], dtype=float)[block] \
        if len(links) else np.zeros(0)
    used = np.bincount(u, cables, minlength=n) + np.bincount(v, cables, minlength=n)
    ports = np.full(n, np.inf)
    gpu_positions = []
    start = 0
    for b in nodes:
        if not _template_ok(b.attrs, types):
            return False
        kind = b.attrs["kind"]
        if kind == "gpu":
            if not _labels_ok(b):
                return False
            gpu_positions.append(np.arange(start, start + b.count))
        elif b.labels:
            return False  # labels on a switch or OCS: let validate look at it all
        else:
            ports[start:start + b.count] = b.attrs["radix" if kind == "switch" else "ports"]
            ocs[start:start + b.count] = kind == "ocs"
        start += b.count
    if np.any(used > ports + 1e-6):
        return False
    if ocs.any() and len(links):
        dark = np.array([b.attrs["medium"] not in OPTICAL_MEDIA for b in links])[block]
        if np.any(dark & (ocs[u] | ocs[v])):
            return False   # a trace or copper cable on an OCS
    gpus = np.concatenate(gpu_positions) if gpu_positions else np.zeros(0, dtype=np.int64)
    if graph.graph.get("gpus") != len(gpus) or not len(gpus):
        return False
    if check_connected and len(gpus) > 1:
        label = _components(n, u, v)
        if np.any(label[gpus] != label[gpus[0]]):
            return False
    return True
