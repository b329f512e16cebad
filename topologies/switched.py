"""Packet-switched fabrics: one switch (a scale-up domain such as NVSwitch), flat parallel
planes, two-tier leaf-spine and three-tier k-ary fat trees.

``bandwidth`` is always bytes/s per direction per GPU. Radix limits are enforced: a switch
never has more cables than ports. Switch ids: ``nvs0`` (scale-up, tier 0), ``plane{p}``
(flat planes, tier 1), ``leaf{i}`` (tier 1), ``spine{i}`` (tier 2), ``core{i}`` (tier 3).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.hardware import GpuSpec
from compute.units import counted
from topologies.common import (
    CABLE_MEDIA,
    LEAF_SPINE_LENGTH,
    NIC_LENGTH,
    NVSWITCH_LATENCY,
    SCALEOUT_NOT_TRACES,
    SCALEUP_LENGTH,
    SPINE_CORE_LENGTH,
    SWITCH_LATENCY,
    Links,
    Nodes,
    bandwidth_or,
    cable_latency,
    check_int,
    check_length,
    check_medium,
    check_positive,
    check_radix,
    finish_blocks,
    gpu_type,
    link,
    new_graph,
    reduction_or,
    switch_attrs,
)
from topologies.limits import check_size
from topologies.registry import builder

__all__ = ["fat_tree", "flat", "leaf_spine", "single_switch"]


@builder("single-switch")
def single_switch(n: int = 8, gpu: str | GpuSpec = "H100-SXM", bandwidth: float | None = None,
                  links: int = 1, radix: int | None = None, latency: float = NVSWITCH_LATENCY,
                  in_network_reduction: bool | None = None, medium: str = "board",
                  length: float = SCALEUP_LENGTH) -> nx.Graph:
    """``n`` GPUs on one switch ``nvs0`` (tier 0): a scale-up domain such as the NVSwitches
    of a DGX H100, modelled as one logical switch.

    Parameters
    ----------
    n : int
        GPUs (>= 1).
    gpu : str or GpuSpec
        GPU type: a catalog name, a GPU file or a GpuSpec.
    bandwidth : float, optional
        Bytes/s per direction per GPU; default the GPU's ``scaleup_bandwidth`` (450 GB/s for
        an H100: 18 NVLink4 links x 25 GB/s).
    links : int
        Links per GPU; the edge carries ``links`` and their summed bandwidth. Default 1: one
        logical link of the GPU's whole bandwidth (a generic one-switch fabric); 18 counts
        an HGX H100 board's NVLinks, its traces and switch ports, as ``rail-optimized``
        does.
    radix : int, optional
        Switch ports; default exactly ``n * links``. Four NVSwitch3 chips have 4 x 64 = 256.
    latency : float
        Switch traversal, s (default 150 ns, an assumption: no published figure).
    in_network_reduction : bool, optional
        Whether the switch reduces data itself; default the GPU's ``scaleup_reduction``
        (NVLS: yes from H100 on, no for A100's NVSwitch).
    medium, length
        Link medium and length (m): by default ``board``, traces of one baseboard (the GPUs
        and switch chips on one board, as an HGX board's: no cables); ``copper`` for a
        domain cabled to switches in other trays (an NVL72 rack's spine).

    Examples
    --------
    >>> g = single_switch(8)
    >>> g.graph["gpus"], g.nodes["nvs0"]["tier"], g.edges["gpu3", "nvs0"]["bandwidth"] / 1e9
    (8, 0, 450.0)
    >>> a100 = single_switch(8, "A100-SXM-80GB")    # no NVLS before Hopper
    >>> g.nodes["nvs0"]["in_network_reduction"], a100.nodes["nvs0"]["in_network_reduction"]
    (True, False)
    """
    n = check_int("n", n)
    links = check_int("links", links)
    spec = gpu_type(gpu)
    bw = bandwidth_or("bandwidth", bandwidth, spec.scaleup_bandwidth)
    medium = check_medium("medium", medium)
    length = check_length(length)
    radix = check_radix("radix", n * links if radix is None else radix)
    if radix < n * links:
        raise UserError(f"radix {radix} is too small for {n} GPUs with {links} link(s) each: "
                        f"it must be >= {n * links}")
    check_size("single-switch", n + 1, n)
    graph = new_graph(f"{n} {spec.name} on one switch")
    switch = switch_attrs(0, radix, check_positive("latency", latency, allow_zero=True),
                          reduction_or("in_network_reduction", in_network_reduction, spec))
    nodes = [Nodes("nvs", 1, switch), Nodes("gpu", n, {"kind": "gpu", "gpu": spec.name,
                                                        "group": 0})]
    cable = link(bw, cable_latency(length, medium), medium, links=links)
    return finish_blocks(graph, n, nodes, [Links(1 + np.arange(n), np.zeros(n, int), cable)],
                         spec)


@builder("flat")
def flat(n: int = 64, planes: int = 4, radix: int = 64, gpu: str | GpuSpec = "H100-SXM",
         bandwidth: float | None = None, latency: float = SWITCH_LATENCY,
         in_network_reduction: bool = False, medium: str = "co-packaged-optics",
         length: float = NIC_LENGTH) -> nx.Graph:
    """``n`` GPUs one switch hop apart through ``planes`` parallel switch planes, one GPU
    port per plane.

    The plane switches are ``plane0``, ``plane1``, ... (tier 1).

    Parameters
    ----------
    n : int
        GPUs; each plane needs ``radix >= n``.
    planes : int
        Parallel switch planes (>= 1).
    radix : int
        Ports per plane switch.
    gpu : str
        GPU type.
    bandwidth : float, optional
        Bytes/s per direction per GPU summed over its planes; default the GPU's scale-up
        bandwidth (a flat fabric stands in for the scale-up domain).
    latency, in_network_reduction, medium, length
        Switch traversal (s, default 330 ns), reduction in the switch, cable medium and
        length (m).

    Examples
    --------
    >>> g = flat(16, planes=4, radix=16, gpu="Lite")
    >>> g.degree("gpu0"), round(g.edges["gpu0", "plane3"]["bandwidth"] / 1e9, 3)
    (4, 28.125)
    >>> flat(65, radix=64)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: flat: 65 GPUs need switches of radix >= 65 (one port per GPU per plane), got radix 64; use leaf-spine or fat-tree
    """
    n = check_int("n", n)
    planes = check_int("planes", planes)
    radix = check_radix("radix", radix)
    if n > radix:
        raise UserError(f"flat: {n} GPUs need switches of radix >= {n} (one port per GPU per "
                        f"plane), got radix {radix}; use leaf-spine or fat-tree")
    spec = gpu_type(gpu)
    bw = bandwidth_or("bandwidth", bandwidth, spec.scaleup_bandwidth)
    medium = check_medium("medium", medium)
    lat = check_positive("latency", latency, allow_zero=True)
    length = check_length(length)
    check_size("flat", n + planes, n * planes)
    graph = new_graph(f"{n} {spec.name} on {planes} flat plane(s)")
    nodes = [Nodes("plane", planes, switch_attrs(1, radix, lat, in_network_reduction)),
             Nodes("gpu", n, {"kind": "gpu", "gpu": spec.name})]
    i, p = np.indices((n, planes)).reshape(2, -1)              # GPU i - plane p
    cable = link(bw / planes, cable_latency(length, medium), medium)
    return finish_blocks(graph, n, nodes, [Links(planes + i, p, cable)], spec)


def _uplinks(k: int, oversubscription: int) -> int:
    """Uplinks of a leaf with ``k/2`` GPU ports at ``oversubscription`` (down:up) ratio."""
    r = check_int("oversubscription", oversubscription)
    if (k // 2) % r:
        raise UserError(f"oversubscription {r} must divide the {k // 2} GPU ports of a leaf "
                        f"(k/2 with k={k}) so that uplinks are whole cables")
    return k // 2 // r


def _even_k(name: str, k: object) -> int:
    k = check_radix(name, k, 2)
    if k % 2:
        raise UserError(f"{name} must be even (half the ports go down, half up), got {k}")
    return k


def _scaleout(gpu: object, bandwidth: object, medium: object,
              latency: object) -> tuple[GpuSpec, float, str, float]:

    spec = gpu_type(gpu)
    bw = bandwidth_or("bandwidth", bandwidth, spec.scaleout_bandwidth)
    return spec, bw, check_medium("medium", medium, CABLE_MEDIA, SCALEOUT_NOT_TRACES), \
        check_positive("latency", latency, allow_zero=True)


@builder("leaf-spine")
def leaf_spine(leaves: int = 4, radix: int = 8, oversubscription: int = 1,
               spines: int | None = None, gpu: str | GpuSpec = "H100-SXM",
               bandwidth: float | None = None, latency: float = SWITCH_LATENCY,
               in_network_reduction: bool = False,
               medium: str = "pluggable-optics") -> nx.Graph:
    """Two-tier leaf-spine: ``leaves`` switches of ``radix`` ports, ``radix/2`` GPUs on each,
    ``radix / (2 * oversubscription)`` uplinks per leaf spread evenly over the spines.

    Parameters
    ----------
    leaves : int
        Leaf switches (GPUs = ``leaves * radix / 2``).
    radix : int
        Ports per switch (even).
    oversubscription : int
        GPU ports : uplinks of a leaf (1 = non-blocking); must divide ``radix/2``.
    spines : int, optional
        Spine switches; default one per leaf uplink. Must divide the uplinks (each leaf
        then has ``uplinks/spines`` parallel cables to every spine) and each spine needs
        ``leaves * uplinks / spines <= radix``.
    gpu, bandwidth, latency, in_network_reduction, medium
        GPU type; bytes/s per direction per GPU and per cable (default the GPU's
        ``scaleout_bandwidth``, its NIC); switch traversal (s); SHARP-like reduction; the
        cables' medium (not a board or package trace: they leave the server).

    Examples
    --------
    >>> g = leaf_spine(leaves=4, radix=8)
    >>> g.graph["gpus"], sum(1 for n in g if n.startswith("spine")), g.degree("spine0")
    (16, 4, 4)
    """
    leaves = check_int("leaves", leaves)
    radix = _even_k("radix", radix)
    up = _uplinks(radix, oversubscription)
    spines = up if spines is None else check_radix("spines", spines)
    if up % spines:
        raise UserError(f"spines {spines} must divide the {up} uplinks of each leaf")
    parallel = up // spines
    if leaves * parallel > radix:
        raise UserError(f"radix {radix} is too small: each spine would need {leaves * parallel} "
                        f"ports for {leaves} leaves; use at most {radix // parallel} leaves, "
                        "more spines or fat-tree")
    spec, bw, medium, lat = _scaleout(gpu, bandwidth, medium, latency)
    h = radix // 2
    check_size("leaf-spine", leaves * (h + 1) + spines, leaves * (h + spines))
    graph = new_graph(f"leaf-spine of {counted(leaves, 'leaf', 'leaves')} x {h} {spec.name}")
    sw = switch_attrs(1, radix, lat, in_network_reduction)
    gpu_ids = np.arange(leaves * h)
    gpu0 = leaves + spines                # node positions: leaves, spines, GPUs
    nodes = [Nodes("leaf", leaves, sw), Nodes("spine", spines, {**sw, "tier": 2}),
             Nodes("gpu", leaves * h, {"kind": "gpu", "gpu": spec.name}, {"rack": gpu_ids // h})]
    i, j = np.indices((leaves, spines)).reshape(2, -1)         # leaf i - spine j
    links = [Links(gpu0 + gpu_ids, gpu_ids // h, link(bw, cable_latency(NIC_LENGTH, medium),
                                                      medium)),
             Links(i, leaves + j, link(bw * parallel, cable_latency(LEAF_SPINE_LENGTH, medium),
                                       medium, parallel))]
    return finish_blocks(graph, leaves * h, nodes, links, spec)


@builder("fat-tree")
def fat_tree(k: int = 4, oversubscription: int = 1, pods: int | None = None,
             gpu: str | GpuSpec = "H100-SXM", bandwidth: float | None = None,
             latency: float = SWITCH_LATENCY, in_network_reduction: bool = False,
             medium: str = "pluggable-optics") -> nx.Graph:
    """Three-tier k-ary fat tree of ``k``-port switches: ``k^3/4`` GPUs in ``k`` pods.

    Each pod has ``k/2`` leaves (``leaf``, tier 1) with ``k/2`` GPUs each and
    ``u = k / (2 * oversubscription)`` aggregation switches (``spine``, tier 2); every leaf
    has one cable to each of its pod's spines. Spine ``a`` of every pod has ``k/2`` cables
    up, one to each core of group ``a`` (``core``, tier 3; ``u * k/2`` cores). With
    oversubscription 1 this is the classic non-blocking fat tree (Al-Fares et al.,
    SIGCOMM 2008). GPUs are numbered pod by pod, leaf by leaf (label ``pod``; ``rack`` = leaf).

    Parameters
    ----------
    k : int
        Switch radix (even, >= 2).
    oversubscription : int
        Leaf GPU ports : leaf uplinks (must divide ``k/2``); the spine and core tiers stay
        non-blocking.
    pods : int, optional
        Build only the first ``pods`` pods (default ``k``; the cores keep ``k`` ports but use
        ``pods`` of them): ``pods * k^2/4`` GPUs.
    gpu, bandwidth, latency, in_network_reduction, medium
        As for :func:`leaf_spine` (every cable carries ``bandwidth``, default the GPU's NIC).

    Examples
    --------
    >>> g = fat_tree(4)
    >>> g.graph["gpus"], sum(1 for n in g if n.startswith("core")), g.nodes["core0"]["tier"]
    (16, 4, 3)
    >>> fat_tree(8, oversubscription=2).graph["gpus"]
    128
    """
    k = _even_k("k", k)
    up = _uplinks(k, oversubscription)
    pods = k if pods is None else check_int("pods", pods)
    if pods > k:
        raise UserError(f"pods {pods} exceeds k={k}: a core switch has one port per pod")
    spec, bw, medium, lat = _scaleout(gpu, bandwidth, medium, latency)
    h = k // 2
    n = pods * h * h
    check_size("fat-tree", n + pods * (h + up) + up * h, n + 2 * pods * h * up)
    graph = new_graph(f"k={k} fat tree of {n} {spec.name}")
    sw = switch_attrs(1, k, lat, in_network_reduction)
    gpu_ids = np.arange(n)
    leaf0 = n                   # node positions: GPUs, leaves, spines, cores
    spine0 = leaf0 + pods * h
    core0 = spine0 + pods * up
    nodes = [Nodes("gpu", n, {"kind": "gpu", "gpu": spec.name},
                   {"pod": gpu_ids // (h * h), "rack": gpu_ids // h}),
             Nodes("leaf", pods * h, sw),
             Nodes("spine", pods * up, {**sw, "tier": 2}),
             Nodes("core", up * h, {**sw, "tier": 3})]
    p, e, a = np.indices((pods, h, up)).reshape(3, -1)       # leaf p*h+e - spine p*up+a
    q, b, c = np.indices((pods, up, h)).reshape(3, -1)       # spine q*up+b - core b*h+c
    links = [Links(gpu_ids, leaf0 + gpu_ids // h, link(bw, cable_latency(NIC_LENGTH, medium),
                                                       medium)),
             Links(leaf0 + p * h + e, spine0 + p * up + a,
                   link(bw, cable_latency(LEAF_SPINE_LENGTH, medium), medium)),
             Links(spine0 + q * up + b, core0 + b * h + c,
                   link(bw, cable_latency(SPINE_CORE_LENGTH, medium), medium))]
    graph.graph.update(k=k, oversubscription=int(oversubscription))
    return finish_blocks(graph, n, nodes, links, spec)
