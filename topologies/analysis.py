"""What a fabric can carry: diameter in GPU-to-GPU hops, per-GPU injection bandwidth,
bisection bandwidth and equal-cost path diversity, gathered with what it is made of (counts,
and the bill of materials of :mod:`topologies.inventory`) in one :class:`FabricSummary`.
Works on any graph that passes :func:`~topologies.schema.validate`.

Large fabrics are analysed from their structure: closed forms (:mod:`topologies.closed_forms`)
where the graph is still what its spec builds, an exact max-flow for graphs up to
:data:`MAXFLOW_NODES` nodes, breadth-first searches from one GPU per distinct neighbourhood
for the diameter; never all-pairs shortest paths.

>>> from topologies import build
>>> s = summary(build("fat-tree:k=4"))
>>> s.gpus, s.switches_by_tier, s.diameter, s.bisection_bandwidth / 1e9
(16, {1: 8, 2: 8, 3: 4}, 6, 400.0)
>>> s.bom.pluggable_transceivers  # 48 optical cables, a transceiver at each end
96
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from itertools import compress
from operator import itemgetter

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.validate import describe, flag
from topologies.closed_forms import closed_form
from topologies.edge_arrays import EdgeArrays, edges_of
from topologies.graph_ops import ball, hop_array, path_count
from topologies.inventory import BillOfMaterials, bill_of_materials
from topologies.optic_modules import ends_held
from topologies.schema import gpu_nodes, validate

__all__ = ["MAXFLOW_NODES", "FabricSummary", "PathDiversity", "bisection_maxflow", "diameter",
           "injection_bandwidth", "network_bandwidth", "path_diversity", "scale_out_share",
           "summary"]

#: Largest graph (nodes) for which the exact max-flow bisection is computed.
MAXFLOW_NODES = 5000
#: Work budget (BFS sources x (nodes + edges)) for an exact diameter without a closed form.
BFS_BUDGET = 1e8


@dataclass(frozen=True)
class PathDiversity:
    """Shortest paths (in hops) between two GPUs: their length and how many there are."""

    source: str
    target: str
    hops: int
    paths: int


@dataclass(frozen=True)
class FabricSummary:
    """The analysis of one fabric. Bandwidths in bytes/s per direction, times in s."""

    name: str
    spec: str
    gpus: int
    gpu_types: dict
    switches_by_tier: dict
    ocs: int
    links: int
    bom: BillOfMaterials
    diameter: int | None
    diameter_method: str
    injection_bandwidth: float
    injection_by_peer: dict
    bisection_bandwidth: float | None
    bisection_method: str
    path_diversity: PathDiversity | None
    reconfiguration_time: float | None
    scale_out_share: float | None = None

    def table(self, scenario: str | None = None) -> str:
        """The analysis as ``netmodel topology show`` prints it, one item a line (counts
        with thousands grouped); ``scenario``: the label of the scenario whose fabric it is,
        a first line. The bill of materials says its scale-out NICs
        (:func:`topologies.nics.nic_gpus`).

        >>> from topologies import build
        >>> print(summary(build("leaf-spine:leaves=2,radix=4")).table().splitlines()[5])
        NICs:        4 (a GPU's link to the network on pluggable optics, fibre or copper holds one)
        """
        from compute.units import counted, format_quantity

        def bw(value: float | None) -> str:
            return "n/a" if value is None else format_quantity(value, "B/s")

        b = self.bom
        types = ", ".join(f"{n:,} x {t}" for t, n in self.gpu_types.items())
        tiers = ", ".join(f"tier {t}: {n:,}" for t, n in self.switches_by_tier.items()) \
            or "none"
        held = ends_held(b.pluggable_transceivers, b.pluggable_ends, b.module_ports)
        lines = [f"scenario:    {scenario} (its fabric)"] if scenario else []
        lines += [
            f"fabric:      {self.name}" + (f"  [{self.spec}]" if self.spec else ""),
            f"GPUs:        {self.gpus:,} ({types})",
            f"switches:    {sum(self.switches_by_tier.values()):,} ({tiers}); OCS: {self.ocs:,}",
            f"links:       {counted(self.links, 'edge')}; cables: "
            + (", ".join(f"{m} {_whole(n)}" for m, n in b.cables.items()) or "none")
            + "".join(f"; {m} traces: {_whole(n)}" for m, n in b.traces.items())
            + (f"; circuits: {b.circuits}" if b.circuits else ""),
            f"optics:      {counted(b.pluggable_transceivers, 'pluggable transceiver')}"
            + (f" ({held})" if held else "") + ", "
            f"{counted(b.cpo_ports, 'co-packaged port')}, {counted(b.lanes, 'lane')}",
            f"NICs:        {b.nics:,} (a GPU's link to the network on pluggable optics, fibre "
            f"or copper holds one)" if b.nic_worth == b.nics else
            f"NICs:        {b.nics:,} GPUs with a NIC port, {b.nic_worth:,.4g} NICs' worth (a "
            f"GPU's link to the network on pluggable optics, fibre or copper holds a port; "
            f"ports sharing a cable share its NIC)",
            f"ports:       switches {b.switch_ports_used:,} of {b.switch_ports:,} used; "
            f"OCS {b.ocs_ports_used:,} of {b.ocs_ports:,} used",
            f"diameter:    "
            f"{counted(self.diameter, 'GPU-to-GPU hop') if self.diameter is not None else 'n/a'}"
            f" ({self.diameter_method})",
            f"injection:   {bw(self.injection_bandwidth)} per GPU per direction ("
            + ", ".join(f"{k}: {bw(v)}" for k, v in self.injection_by_peer.items()) + ")"
            + (f"; scale-out {bw(self.scale_out_share)} per GPU (its server's NICs shared by "
               "its GPUs)" if self.scale_out_share is not None else ""),
            f"bisection:   {bw(self.bisection_bandwidth)} per direction "
            f"({self.bisection_method})",
        ]
        if self.path_diversity:
            p = self.path_diversity
            lines.append(f"paths:       {counted(p.paths, 'shortest path')} of "
                         f"{counted(p.hops, 'hop')} from {p.source} to {p.target}")
        if self.reconfiguration_time is not None:
            lines.append(f"reconfigure: {self.reconfiguration_time * 1e3:g} ms to change "
                         f"circuits")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Plain JSON-ready dict (the shape of ``netmodel topology show --json``;
        ``scale_out_share`` only where GPUs of a server share NICs)."""
        out = asdict(self)
        if self.scale_out_share is None:
            del out["scale_out_share"]
        out["switches_by_tier"] = {str(k): v for k, v in self.switches_by_tier.items()}
        return out


def _whole(n: float) -> str:
    """A count of cables (a float: a link may carry part of one) grouped as the other counts,
    never in exponent form ('1.23457e+06' for 1,234,567 cables), a part of a cable to six
    decimals at most (a sliver below that as ``g`` writes it).

    >>> _whole(1234567.0), _whole(0.5), _whole(4464), _whole(2100000.75), _whole(1e-9)
    ('1,234,567', '0.5', '4,464', '2,100,000.75', '1e-09')
    """
    if float(n).is_integer():
        return f"{n:,.0f}"
    text = f"{n:,.6f}".rstrip("0").rstrip(".")
    return text if text != "0" else f"{n:g}"


def injection_bandwidth(graph: nx.Graph, edges: EdgeArrays | None = None
                        ) -> tuple[float, dict]:
    """The smallest per-GPU injection bandwidth (sum of its links, bytes/s per direction)
    and, for the first GPU with that smallest sum, that sum split by what the links lead to
    (``"gpu"``, ``"switch tier T"``, ``"ocs"``), so the parts add up to the smallest.

    >>> from topologies import superpod
    >>> low, peers = injection_bandwidth(superpod(1))
    >>> low / 1e9, {k: v / 1e9 for k, v in peers.items()}
    (500.0, {'switch tier 0': 450.0, 'switch tier 1': 50.0})
    """
    gpus = gpu_nodes(graph)
    if edges is None:
        low, first = min((bw, i) for i, (_, bw) in
                         enumerate(graph.degree(gpus, weight="bandwidth")))
    else:   # the same sums, added in the same order, from the arrays (no self-loops)
        sums = edges.node_bandwidth[edges.kind_is("gpu")]
        first = int(np.argmin(sums))
        low = float(sums[first])
    peers: Counter = Counter()
    for _, v, d in graph.edges(gpus[first], data=True):
        node = graph.nodes[v]
        key = f"switch tier {node['tier']}" if node["kind"] == "switch" else node["kind"]
        peers[key] += d["bandwidth"]
    return float(low), dict(sorted(peers.items()))


def network_bandwidth(graph: nx.Graph, gpu: Hashable) -> float:
    """Bandwidth (bytes/s per direction) of GPU ``gpu``'s links to the network: to a switch
    of tier >= 1 or an optical circuit switch, not to its scale-up domain's tier-0 switches
    nor to other GPUs. 0 for a GPU with no such link (rail-optimized's ``nics_per_server``
    below ``gpus_per_server``, a fabric of one scale-up domain, GPUs wired only to each
    other). Whether a NIC drives those links (not co-packaged optics on the GPU's own
    package) is :func:`topologies.nics.nic_gpus`'s. A ``gpu`` that is not a GPU of
    ``graph`` is a UserError.

    >>> from topologies import build
    >>> g = build("rail-optimized:domains=2,nics_per_server=4")   # GPUs 0, 2, 4, 6 a NIC
    >>> network_bandwidth(g, "gpu0") / 1e9, network_bandwidth(g, "gpu1")
    (50.0, 0.0)
    >>> network_bandwidth(build("ocs:gpus=4,ports=2,ocs_ports=4"), "gpu0") > 0
    True
    """
    data = graph._node
    if data.get(gpu, {}).get("kind") != "gpu":   # a switch gave its uplinks; a stray name
        raise UserError(f"gpu must be a GPU of graph, got {describe(gpu)}"   # a KeyError
                        + (f" (a {data[gpu].get('kind')})" if gpu in data else ""))
    return sum((d["bandwidth"] for v, d in graph._adj[gpu].items()
                if data[v]["kind"] == "ocs"
                or (data[v]["kind"] == "switch" and data[v]["tier"] >= 1)), 0.0)


def scale_out_share(graph: nx.Graph) -> float | None:
    """Scale-out injection per GPU where GPUs of a server share NICs: the server's links
    to the network (:func:`network_bandwidth`) over its GPUs, the smallest over
    servers (bytes/s per direction); None where no server (``server`` label) has both a
    GPU with such links and one without (a NIC a GPU: :func:`injection_bandwidth`'s own
    links already say it).

    >>> from topologies import build
    >>> scale_out_share(build("rail-optimized:domains=2,nics_per_server=4")) / 1e9
    25.0
    >>> scale_out_share(build("rail-optimized:domains=2")) is None   # a NIC a GPU
    True
    """
    data = graph._node
    out: dict = {}     # server -> [network bandwidth, GPUs, GPUs without a network link]
    for g in gpu_nodes(graph):
        server = data[g].get("server")
        if server is None:
            return None
        bw = network_bandwidth(graph, g)
        acc = out.setdefault(server, [0.0, 0, 0])
        acc[0] += bw
        acc[1] += 1
        acc[2] += bw == 0
    if not any(0 < bare < n for _, n, bare in out.values()):
        return None
    return min(bw / n for bw, n, _ in out.values())


def _position(e: EdgeArrays, node: Hashable) -> int:
    """``node``'s position in ``e.nodes`` (the graph's node order)."""
    return e.nodes.index(node)


def _diversity(e: EdgeArrays, gpus: np.ndarray, source: int, target: int | None,
               hops: np.ndarray) -> PathDiversity:
    """:func:`path_diversity` on the edge arrays ``e``: ``gpus`` the GPUs' positions,
    ``source`` and ``target`` positions (``target`` None: the last of the GPUs farthest
    from ``source``), ``hops`` :func:`~topologies.graph_ops.hop_array` from ``source``."""
    if target is None:
        at = hops[gpus]
        target = int(gpus[np.flatnonzero(at == at.max())[-1]])
    if hops[target] < 0:
        raise UserError(f"GPU {describe(e.nodes[target])} cannot be reached from "
                        f"{describe(e.nodes[source])}")
    return PathDiversity(e.nodes[source], e.nodes[target], int(hops[target]),
                         path_count(e.u, e.v, hops, source, target))


def _check_pair(graph: nx.Graph, source: Hashable, target: Hashable | None) -> None:
    """Refuse ends of :func:`path_diversity` that are not two different GPUs of ``graph``."""
    for end in (source, target):
        if end is not None and (not isinstance(end, Hashable) or end not in graph
                                or graph.nodes[end].get("kind") != "gpu"):
            raise UserError(f"{describe(end)} is not a GPU of the fabric")
    if target == source:
        raise UserError(f"path diversity joins two different GPUs; got {describe(source)} twice")


def path_diversity(graph: nx.Graph, source: str | None = None,
                   target: str | None = None, *, edges: EdgeArrays | None = None
                   ) -> PathDiversity:

    """How many shortest (fewest-hop) paths join two GPUs; by default the first GPU and the
    last of the GPUs farthest from it. ``edges``: the graph's
    :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them (the search and
    the count run on them:
    :func:`~topologies.graph_ops.hop_array`, :func:`~topologies.graph_ops.path_count`).

    >>> from topologies import fat_tree
    >>> path_diversity(fat_tree(4))  # (k/2)^2 paths through the cores
    PathDiversity(source='gpu0', target='gpu15', hops=6, paths=4)
    """
    gpus = gpu_nodes(graph)
    source = gpus[0] if source is None else source
    _check_pair(graph, source, target)
    e = edges_of(graph, edges)
    at = _position(e, source)
    return _diversity(e, np.flatnonzero(e.kind_is("gpu")), at,
                      None if target is None else _position(e, target),
                      hop_array(len(e.nodes), e.u, e.v, at))


def diameter(graph: nx.Graph) -> tuple[int | None, str]:
    """The largest hop count between two GPUs, and how it was found: a closed form, a
    breadth-first search from one GPU per distinct neighbourhood (GPUs with the same
    neighbours are equally far from everything), or, past :data:`BFS_BUDGET`, a lower
    bound from a double sweep.

    >>> from topologies import torus
    >>> diameter(torus("4x4x4"))
    (6, 'closed form')
    >>> g = torus("4x4x4"); g.graph["spec"] = ""
    >>> diameter(g)
    (6, 'breadth-first search')
    """
    form = closed_form(graph)
    if form is not None and form.diameter is not None:
        return form.diameter, "closed form"
    gpus = gpu_nodes(graph)
    if len(gpus) < 2:
        return 0, "closed form"
    classes: dict[frozenset, Hashable] = {}
    for g in gpus:
        classes.setdefault(frozenset(graph._adj[g]), g)
    size = graph.number_of_nodes() + graph.number_of_edges()
    if len(classes) * size <= BFS_BUDGET:
        return _exact_diameter(graph, list(classes.values()), gpus), "breadth-first search"
    far = max(gpus, key=ball(graph._adj, gpus[0]).get)  # type: ignore[arg-type]  # dict.get
    dist = ball(graph._adj, far)
    return max(dist.get(g, 0) for g in gpus), "lower bound (double sweep)"


def _exact_diameter(graph: nx.Graph, sources: Sequence[Hashable],
                    gpus: Sequence[Hashable]) -> int | None:
    import numpy as np
    from scipy.sparse.csgraph import shortest_path

    index = {n: i for i, n in enumerate(graph)}
    matrix = nx.to_scipy_sparse_array(graph, nodelist=list(graph), weight=None, format="csr")
    # networkx builds 64-bit indices; scipy's shortest_path reads 32-bit ones only before
    # scipy 1.15 (1.11-1.14: "Buffer dtype mismatch"). The graphs here fit 32 bits.
    matrix.indices = matrix.indices.astype(np.int32)
    matrix.indptr = matrix.indptr.astype(np.int32)
    cols = np.array([index[g] for g in gpus])
    best = 0
    for start in range(0, len(sources), 64):
        chunk = [index[s] for s in sources[start:start + 64]]
        dist = shortest_path(matrix, directed=False, unweighted=True, indices=chunk)[:, cols]
        if not np.isfinite(dist).all():
            return None
        best = max(best, int(dist.max()))
    return best


def _torus_halves(graph: nx.Graph, gpus: Sequence[Hashable]) -> list[list[Hashable]] | None:
    """For a torus (graph attribute ``dims``, or OCS circuits an ``ocs`` builder set up for
    a logical ``torus:AxB``; GPUs ``gpu0..`` numbered row-major), one half per dimension:
    the first half of the GPUs in node order with that dimension made the slowest, i.e.
    the half cut across that side; None for any other fabric."""
    dims = graph.graph.get("dims")
    args = graph.graph.get("args")
    if dims is None and graph.graph.get("builder") == "ocs" and isinstance(args, dict) \
            and isinstance(args.get("logical"), str) \
            and args["logical"].strip().lower().startswith("torus:"):
        dims = args["logical"].strip().lower().partition(":")[2]
    if not isinstance(dims, str):
        return None
    from topologies.direct import parse_dims

    try:
        sides = parse_dims(dims)
    except UserError:
        return None
    if math.prod(sides) != len(gpus) or list(gpus) != [f"gpu{i}" for i in range(len(gpus))]:
        return None
    strides = [math.prod(sides[d + 1:]) for d in range(len(sides))]
    return [sorted(gpus, key=lambda g: ((int(g[3:]) // stride) % side, int(g[3:])))[
        : len(gpus) // 2] for side, stride in zip(sides, strides, strict=True)]


def bisection_maxflow(graph: nx.Graph, side: Iterable[Hashable] | None = None) -> float:
    """Exact max-flow (= min cut) in bytes/s per direction from the GPUs in ``side`` to all
    the other GPUs, every link carrying its bandwidth each way. Refused above
    :data:`MAXFLOW_NODES` nodes.

    ``side`` defaults to the first half of the GPUs in node order (the builders number
    physically close GPUs consecutively, so this cuts across the top of a hierarchy). A
    torus (graph attribute ``dims``, or OCS circuits set up as one) has no top: its bisection is the smallest of the half
    cuts across each side (the plane cut across the longest even side crosses the fewest
    links, ``2 n / side``; Dally & Towles, Principles and Practices of Interconnection
    Networks, 2004, section 3.3), not the cut across whichever side is numbered slowest.

    >>> from topologies import ring, torus
    >>> bisection_maxflow(ring(6, bandwidth=100e9)) / 1e9  # two 50 GB/s links cross
    100.0
    >>> bisection_maxflow(torus("4x8")) / 1e9  # across the 8-side: 2 x 4 links of 112.5 GB/s
    900.0
    """
    if graph.number_of_nodes() > MAXFLOW_NODES:
        raise UserError(f"exact max-flow bisection is limited to {MAXFLOW_NODES} nodes; this "
                        f"fabric has {graph.number_of_nodes()}")
    gpus = gpu_nodes(graph)
    if side is None:
        halves = _torus_halves(graph, gpus)
        if halves is not None and len(gpus) > 1:
            return min(bisection_maxflow(graph, h) for h in halves)
    a = set(gpus[: len(gpus) // 2] if side is None else _side(side, gpus))
    b = [g for g in gpus if g not in a]
    if not a or not b:
        raise UserError("a bisection needs GPUs on both sides")
    flow = nx.DiGraph()
    for u, v, d in graph.edges(data=True):
        flow.add_edge(u, v, capacity=d["bandwidth"])
        flow.add_edge(v, u, capacity=d["bandwidth"])
    source, sink = ("source",), ("sink",)
    flow.add_edges_from((source, g) for g in a)  # no capacity: unbounded
    flow.add_edges_from((g, sink) for g in b)
    return float(nx.maximum_flow_value(flow, source, sink))


def _side(side: object, gpus: list) -> list:
    """``side`` of :func:`bisection_maxflow` as a list of GPUs of the fabric, or one line
    naming what is not: a node that is none ('nope', a switch) was a side of no GPU, whose
    flow 0.0 was returned as the bisection; a name as text was read letter by letter."""
    if isinstance(side, (str, bytes)) or not isinstance(side, Iterable):
        raise UserError(f"side must be a list of GPU nodes (e.g. ['gpu0', 'gpu1']), got "
                        f"{describe(side)}")
    side, known = list(side), set(gpus)
    for node in side:
        if not isinstance(node, Hashable) or node not in known:
            raise UserError(f"side must be a list of GPU nodes of the fabric, got "
                            f"{describe(node)}, which is none of its GPUs")
    return side


def summary(graph: nx.Graph, *, pair: tuple | None = None, validated: bool = False,
            edges: EdgeArrays | None = None) -> FabricSummary:
    """Everything above for one fabric; ``pair`` picks the two GPUs for path diversity;
    ``edges``: the graph's :func:`~topologies.edge_arrays.edge_arrays`, where the caller has
    them (checked by :func:`edges_of`).

    The fabric is validated first (connectivity is not required: a realized OCS fabric may
    hold several islands; diameter, bisection and path diversity are then None), unless
    ``validated`` says the caller has it from a builder or a file reader, which validated
    it and which it has not changed since (as
    :class:`~netmodel.collectives.model.FabricCostModel`'s ``validated``).
    """
    validated = flag("", "validated", validated)   # numpy's bool too
    if not validated:
        validate(graph, check_connected=False)
    if pair is not None and (not isinstance(pair, tuple | list) or len(pair) != 2):
        # a string was spread into its letters, a number raised TypeError
        raise UserError(f"pair must be two GPU nodes (a, b), got {describe(pair)}")
    # the links as arrays, read once (refused first where they are another graph's): the
    # counts, the search from the first GPU and the bill of materials all read them
    e = edges_of(graph, edges)
    data, nodes = graph._node, e.nodes
    gpu_at = np.flatnonzero(e.kind_is("gpu"))
    gpus = list(compress(nodes, e.kind_is("gpu").tolist()))
    tiers = Counter(data[n]["tier"] for n in compress(nodes, e.kind_is("switch").tolist()))
    ocs = list(compress(nodes, e.kind_is("ocs").tolist()))
    if pair is not None and len(gpus) < 2:   # no path to count: refused, not dropped
        raise UserError(f"path diversity joins two different GPUs; the fabric has only one "
                        f"({describe(gpus[0]) if gpus else 'none'})")
    types = Counter(map(itemgetter("gpu"), map(data.__getitem__, gpus)))
    hops = None
    if len(gpus) < 2:
        connected = True
    else:   # the first GPU's search finds its part, and serves its path diversity
        hops = hop_array(len(nodes), e.u, e.v, int(gpu_at[0]))
        connected = bool((hops[gpu_at] >= 0).all())
    form = closed_form(graph)
    if not connected:
        dia, dia_how = None, "GPUs are not all connected"
        bis, bis_how = None, "GPUs are not all connected"
        paths = None
    else:
        dia, dia_how = diameter(graph)
        if len(gpus) < 2:
            bis, bis_how = None, "one GPU"
        elif form is not None and form.bisection is not None:
            bis, bis_how = form.bisection, "closed form" + (f"; {form.note}" if form.note else "")
        elif graph.number_of_nodes() <= MAXFLOW_NODES:
            bis, bis_how = bisection_maxflow(graph), "max-flow"
        else:
            bis, bis_how = None, (f"no closed form, and over {MAXFLOW_NODES} nodes for "
                                  "an exact max-flow")
        paths = None if len(gpus) < 2 else path_diversity(graph, *pair, edges=e) \
            if pair is not None else _diversity(e, gpu_at, int(gpu_at[0]), None, hops)
    hops = None
    low, peers = injection_bandwidth(graph, e)
    reconf = [data[n]["reconfiguration_time"] for n in ocs]
    return FabricSummary(
        name=str(graph.graph.get("name", "")), spec=str(graph.graph.get("spec", "")),
        gpus=len(gpus), gpu_types=dict(types), switches_by_tier=dict(sorted(tiers.items())),
        ocs=len(ocs), links=len(e.u), bom=bill_of_materials(graph, e),
        diameter=dia, diameter_method=dia_how, injection_bandwidth=low,
        injection_by_peer=peers, bisection_bandwidth=bis, bisection_method=bis_how,
        path_diversity=paths, scale_out_share=scale_out_share(graph),
        reconfiguration_time=graph.graph.get("reconfiguration_time",
                                             max(reconf) if reconf else None))
