"""Fabrics as ASTRA-sim analytical network configurations (the ``network.yml`` its analytical
backend reads), for the fabrics its dimension model can express.

The format (keys as read by astra-network-analytical's ``NetworkParser``; layout as in
ASTRA-sim's ``examples/network/analytical/HGX-H100-validated.yml`` and
``inputs/network/analytical/Ring_FullyConnected_Switch.yml``)::

    topology: [ Ring, FullyConnected, Switch ]   # one building block per dimension
    npus_count: [ 2, 8, 4 ]                      # NPUs per dimension (each > 1)
    bandwidth: [ 200.0, 100.0, 50.0 ]  # GB/s    # per link, per direction
    latency: [ 50.0, 500.0, 2000.0 ]  # ns       # per link

Dimension 0 is the innermost: NPU ids run fastest along it. A ``Ring`` NPU has two links
(one each way), a ``FullyConnected`` one has a link to every other NPU of its dimension, a
``Switch`` one has one link to the dimension's switch (a message crosses two links). The
analytical backend takes 1 GB = 2^30 bytes (``bw_GBps_to_Bpns`` in its
``common/NetworkFunction.cc``), so bandwidths are written as bytes/s / 2^30: ASTRA-sim then
moves exactly the bytes/s netmodel models.

Mapping (bandwidths and latencies are read from the graph's links, so an adjusted graph is
exported as adjusted):

* ``single-switch``, ``flat`` -> ``[Switch]``: bandwidth the GPU's links (all planes of a
  flat fabric summed: one switch stands for the planes); latency per link = cable + half the
  switch traversal, so two links give the switch path.
* ``ring`` -> ``[Ring]``; ``full-mesh`` -> ``[FullyConnected]``; ``torus`` -> one ``Ring``
  per side, the last side first (it varies fastest in netmodel's numbering): bandwidth and
  latency per cable.
* ``leaf-spine``, ``fat-tree`` (non-blocking only) -> ``[Switch]`` of every GPU:
  approximated as one switch with the NIC bandwidth and the latency of the longest path
  (GPUs under one leaf get the cross-fabric latency). An oversubscribed tier cannot be
  expressed: a Switch dimension is non-blocking.
* ``rail-optimized``, ``superpod``, ``nvl72`` -> ``[Switch, Switch]``: the scale-up domain
  (NVLink bandwidth, cable + half the NVSwitch latency), then the domains (NIC bandwidth,
  half the longest rail path's latency). Approximated: ASTRA-sim joins GPU ``i`` of every
  domain only, where a rail also joins the other servers' GPUs of the same rank; no
  in-network reduction (NVLS, SHARP) is expressed.
* ``lite-groups`` with ``split="even"`` -> ``[FullyConnected]`` for the Lite mesh, then
  the base fabric's dimensions with a Lite's share of each link (bandwidth / lites).
  Approximated as above for a switched base: ASTRA-sim routes dimension by dimension.
* Refused, with the reason: optical circuit switches (circuits are set per job; export the
  logical topology, e.g. ``ring:n=...``, instead), ``lite-groups`` with
  ``split="gateway"`` (only Lite 0 reaches the base fabric; every NPU of an ASTRA-sim
  dimension has the same links), oversubscribed trees, and graphs no builder made (or
  edited since).

Dimensions of one NPU are dropped (ASTRA-sim requires more than one).

>>> from topologies import build
>>> net = astra_sim_network(build("superpod"))
>>> net.topology, net.npus_count, round(net.bandwidth[0] * 2**30 / 1e9, 6)
(('Switch', 'Switch'), (8, 31), 450.0)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from os import PathLike
from typing import Any

import networkx as nx

from compute.errors import UserError
from compute.outputs import atomic_write
from topologies.registry import as_built, bound_arguments, build

__all__ = ["GB", "AstraSimNetwork", "astra_sim_network", "write_astra_sim"]

#: ASTRA-sim's analytical backend's GB (bytes): 2^30 (common/NetworkFunction.cc).
GB = 2**30
#: File suffixes for the YAML it reads.
SUFFIXES = (".yml", ".yaml")


@dataclass(frozen=True)
class AstraSimNetwork:
    """An ASTRA-sim analytical network: per dimension its building block, NPU count, link
    bandwidth (ASTRA-sim GB/s: 2^30 bytes/s, per direction) and link latency (ns), and the
    approximations made to express the fabric."""

    topology: tuple[str, ...]
    npus_count: tuple[int, ...]
    bandwidth: tuple[float, ...]
    latency: tuple[float, ...]
    notes: tuple[str, ...] = ()

    def to_yaml(self, title: str = "") -> str:
        """The ``network.yml`` text (comments say where it came from and the units)."""
        def clean(text: str) -> str:
            return "".join(c if c.isprintable() else " " for c in text)

        def row(values: Iterable[object]) -> str:
            return "[ " + ", ".join(str(v) for v in values) + " ]"

        lines = ["# ASTRA-sim analytical network, written by netmodel"
                 + (f": {clean(title)}" if title else ""),
                 "# bandwidth: GB/s per link per direction, 1 GB = 2^30 bytes as ASTRA-sim's "
                 "analytical backend reads it; latency: ns per link"]
        lines += [f"# approximated: {clean(n)}" for n in self.notes]
        lines += [f"topology: {row(self.topology)}",
                  f"npus_count: {row(self.npus_count)}",
                  f"bandwidth: {row(self.bandwidth)}  # GB/s",
                  f"latency: {row(self.latency)}  # ns"]
        return "\n".join(lines) + "\n"


def _dim(kind: str, npus: int, bandwidth: float, latency: float) -> tuple:
    return kind, int(npus), round(bandwidth / GB, 9), round(latency * 1e9, 6)


def _edge(graph: nx.Graph, u: Hashable, v: Hashable) -> tuple[float, float, float]:
    """(bandwidth per cable, bandwidth of the edge, latency) of edge u-v."""
    d = graph.edges[u, v]
    return d["bandwidth"] / d.get("links", 1), d["bandwidth"], d["latency"]


def _switch_latency(graph: nx.Graph, node: Hashable) -> float:
    return graph.nodes[node]["latency"]


def _neighbour(graph: nx.Graph, node: Hashable, prefix: str) -> Hashable:
    return next(v for v in graph.neighbors(node) if str(v).startswith(prefix))


def _one_switch(graph: nx.Graph, n: int, what: str, notes: list[str]) -> list[tuple]:
    """A fabric of one switch tier (single-switch, flat) as [Switch(n)]."""
    total = sum(d["bandwidth"] for *_, d in graph.edges("gpu0", data=True))
    sw = _neighbour(graph, "gpu0", "nvs" if what == "single-switch" else "plane")
    lat = graph.edges["gpu0", sw]["latency"] + _switch_latency(graph, sw) / 2
    if what == "flat" and graph.degree("gpu0") > 1:
        notes.append(f"{graph.degree('gpu0')} parallel planes as one switch of their summed "
                     "bandwidth")
    return [_dim("Switch", n, total, lat)]


def _tree(graph: nx.Graph, args: Mapping[str, Any], what: str,
          notes: list[str]) -> list[tuple]:
    if args["oversubscription"] != 1:
        raise UserError(f"{what} with oversubscription {args['oversubscription']} cannot be "
                        "expressed in ASTRA-sim's analytical network: its Switch dimension "
                        "is non-blocking")
    n = graph.graph["gpus"]
    leaf = _neighbour(graph, "gpu0", "leaf")
    nic, _, nic_lat = _edge(graph, "gpu0", leaf)
    sw = _switch_latency(graph, leaf)
    path = 2 * nic_lat + sw  # one leaf
    spines = [v for v in graph.neighbors(leaf) if str(v).startswith("spine")]
    leaves = sum(1 for v in graph if str(v).startswith("leaf"))
    if spines and leaves > 1:
        trunk = graph.edges[leaf, spines[0]]["latency"]
        path += 2 * trunk + 2 * sw
        cores = [v for v in graph.neighbors(spines[0]) if str(v).startswith("core")]
        pods = len({graph.nodes[g].get("pod") for g in ("gpu0", f"gpu{n - 1}")})
        if cores and pods > 1:
            path += 2 * graph.edges[spines[0], cores[0]]["latency"] + 2 * sw
    notes.append(f"{what} as one non-blocking switch of {n} GPUs with the longest path's "
                 "latency")
    return [_dim("Switch", n, nic, path / 2)]


def _rail(graph: nx.Graph, domains: int, size: int, notes: list[str]) -> list[tuple]:
    nvs = _neighbour(graph, "gpu0", "nvs")
    nvl = graph.edges["gpu0", nvs]
    dims = [_dim("Switch", size, nvl["bandwidth"], nvl["latency"] + _switch_latency(graph, nvs)
                 / 2)]
    if domains > 1:
        leaf = _neighbour(graph, "gpu0", "leaf")
        nic, _, nic_lat = _edge(graph, "gpu0", leaf)
        sw = _switch_latency(graph, leaf)
        last = f"gpu{graph.graph['gpus'] - 1}"
        path = 2 * nic_lat + sw  # same rank, same scalable unit: one rail leaf
        if graph.nodes["gpu0"]["pod"] != graph.nodes[last]["pod"]:  # across units: a spine
            spine = _neighbour(graph, leaf, "spine")
            path += 2 * graph.edges[leaf, spine]["latency"] + 2 * sw
        dims.append(_dim("Switch", domains, nic, path / 2))
        notes.append("the rails as one switch per GPU rank across domains, with the longest "
                     "rail path's latency")
    return dims


def _network(graph: nx.Graph, notes: list) -> list:
    if not as_built(graph):
        raise UserError("this fabric was not made by a netmodel builder, or was edited since: "
                        "ASTRA-sim's analytical network needs one of the shapes its dimensions "
                        "express (see topologies.astra_sim)")
    name = graph.graph["builder"]
    args = bound_arguments(name, graph.graph["args"])
    n = graph.graph["gpus"]
    if name in ("single-switch", "flat"):
        return _one_switch(graph, n, name, notes)
    if name == "ring":
        per_cable, _, lat = _edge(graph, "gpu0", "gpu1")
        return [_dim("Ring", n, per_cable, lat)]
    if name == "full-mesh":
        per_cable, _, lat = _edge(graph, "gpu0", "gpu1")
        return [_dim("FullyConnected", n, per_cable, lat)]
    if name == "torus":
        from topologies.direct import parse_dims

        sides = parse_dims(args["dims"])
        per_port = sum(d["bandwidth"] for *_, d in graph.edges("gpu0", data=True)) \
            / (2 * len(sides))
        lat = next(d["latency"] for *_, d in graph.edges("gpu0", data=True))
        return [_dim("Ring", s, per_port, lat) for s in reversed(sides)]
    if name in ("leaf-spine", "fat-tree"):
        return _tree(graph, args, name, notes)
    if name == "rail-optimized":
        if args["domains"] > 1 and args["nics_per_server"] not in (None,
                                                                   args["gpus_per_server"]):
            raise UserError("rail-optimized with fewer NICs than GPUs a server "
                            f"(nics_per_server {args['nics_per_server']}) cannot be expressed "
                            "in ASTRA-sim's analytical network (every NPU of a dimension has "
                            "the same links); it exports nics_per_server "
                            f"{args['gpus_per_server']} (gpus_per_server: a NIC a GPU) or "
                            "domains 1")
        return _rail(graph, args["domains"], args["domain_size"], notes)
    if name == "superpod":
        return _rail(graph, 32 * args["sus"] - 1, 8, notes)
    if name == "nvl72":
        return _rail(graph, args["racks"], 72, notes)
    if name == "lite-groups":
        if args["split"] != "even":
            raise UserError("lite-groups with split='gateway' cannot be expressed in ASTRA-sim's "
                            "analytical network: only Lite 0 of a group reaches the base "
                            "fabric, and every NPU of a dimension has the same links")
        k = args["lites"]
        base = args["base"]
        # the base as the builder bound it: a spec string (the default, or any base equal
        # to it, is stored as 'single-switch:n=8') or a builder's {builder, ...} arguments
        if not isinstance(base, str) and not (isinstance(base, dict)
                                              and isinstance(base.get("builder"), str)):
            raise UserError("lite-groups on a hand-made base fabric cannot be expressed in "
                            "ASTRA-sim's analytical network: the base's shape is not known")
        dims = []
        if k > 1:
            mesh, _, lat = _edge(graph, "gpu0", "gpu1")
            dims.append(_dim("FullyConnected", k, mesh, lat))
        for kind, npus, bw, lat in _network(build(base), notes):
            dims.append((kind, npus, round(bw / k, 9), lat))
        if k > 1:
            notes.append(f"each Lite takes 1/{k} of its big GPU's links to the base fabric")
        return dims
    if name == "ocs":
        raise UserError("an optical circuit-switched fabric cannot be expressed in ASTRA-sim's "
                        "analytical network: its circuits are set per job; export the logical "
                        "topology instead (e.g. ring:n=..., torus:dims=...)")
    raise UserError(f"fabric builder {name!r} has no ASTRA-sim mapping")


def astra_sim_network(graph: nx.Graph) -> AstraSimNetwork:
    """The ASTRA-sim analytical network for ``graph`` (see the module docstring for the
    mapping); UserError naming why for a fabric its dimension model cannot express.

    >>> from topologies import build
    >>> astra_sim_network(build("torus:dims=4x2")).npus_count
    (2, 4)
    >>> astra_sim_network(build("fat-tree:oversubscription=2"))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: fat-tree with oversubscription 2 cannot be expressed in ASTRA-sim's analytical network: its Switch dimension is non-blocking
    """
    notes: list[str] = []
    dims = [d for d in _network(graph, notes) if d[1] > 1]
    if any(d.get("in_network_reduction") for _, d in graph.nodes(data=True)):
        notes.append("in-network reduction (NVLS/SHARP) is not expressed")
    if not dims:
        raise UserError("a fabric of one GPU has no network for ASTRA-sim")
    kinds, npus, bws, lats = zip(*dims, strict=True)
    return AstraSimNetwork(tuple(kinds), tuple(npus), tuple(bws), tuple(lats),
                           tuple(dict.fromkeys(notes)))


def write_astra_sim(graph: nx.Graph, path: str | PathLike[str]) -> str:
    """Write ``graph``'s ASTRA-sim network to ``path`` (``.yml``/``.yaml``), atomically;
    return the path."""
    net = astra_sim_network(graph)
    title = graph.graph.get("spec") or graph.graph.get("name", "")
    return atomic_write(path, net.to_yaml(str(title)).encode(), what="ASTRA-sim network file",
                        suffixes=SUFFIXES)
