"""Scale-up domains under a rail-optimized scale-out fabric: the shape of an NVIDIA DGX H100
SuperPOD and of GB200 NVL72 racks (published shapes in shared/reference/fabrics.md).

Each scale-up domain is one logical switch ``nvs{d}`` (tier 0, in-network reduction as
NVSwitch NVLS) joined to its GPUs by NVLink: board traces (medium ``board``) where the
domain is one server (an HGX baseboard: eight GPUs and their NVSwitch chips on one board,
as in a DGX H100), copper cables where it spans several (an NVL72 rack's cable spine from
18 compute trays to 9 NVLink switch trays). Every GPU also has its own NIC
to a leaf of its *rail*: GPU ``r`` of every server hangs off rail ``r``'s leaf, so traffic
between same-rank GPUs of different servers crosses one leaf. Leaves serve
``servers_per_leaf`` servers (a scalable unit, SU, label ``pod``) and connect to every
spine with the same number of parallel cables.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from compute import validate
from compute.errors import UserError
from compute.gpu_facts import nvlink_count
from compute.hardware import GpuSpec
from compute.validate import describe
from topologies.common import (
    CABLE_MEDIA,
    LEAF_SPINE_LENGTH,
    NIC_LENGTH,
    NVSWITCH_LATENCY,
    SCALEOUT_NOT_TRACES,
    SCALEUP_LENGTH,
    SWITCH_LATENCY,
    Links,
    Nodes,
    bandwidth_or,
    cable_latency,
    check_int,
    check_medium,
    check_radix,
    finish_blocks,
    gpu_type,
    link,
    new_graph,
    reduction_or,
    switch_attrs,
)
from topologies.limits import MAX_RADIX, check_size
from topologies.registry import builder
from topologies.schema import MODULE_PORT_CHOICES, MODULE_PORTS, MODULE_PORTS_RULE

__all__ = ["NVL72_SWITCH_TRAYS", "nvl72", "rail_optimized", "spine_count", "superpod"]

#: NVLink switch trays of an NVL72 rack (2 NVLink switch chips each, 18 chips): NVIDIA
#: Mission Control manual, 'NVLink Switch Integration' ("9 NVLink switch trays per rack");
#: shared/reference/fabrics.md (GB200 SuperPOD network fabrics).
NVL72_SWITCH_TRAYS = 9

def spine_count(leaves: int, uplinks: int, spine_radix: int, unit: str = "leaves") -> int:
    """The fewest spines ``s`` such that ``s`` divides a leaf's ``uplinks`` (equal parallel
    cables to every spine) and each spine has room for ``leaves * uplinks / s`` cables.

    Reproduces the DGX H100 SuperPOD (Table 4 of NVIDIA's network-fabrics page: 4, 8, 16,
    16 spines for 1-4 SUs of 8 leaves with 32 uplinks, 64-port switches):

    >>> [spine_count(8 * su, 32, 64) for su in (1, 2, 3, 4)]
    [4, 8, 16, 16]

    Too many leaves are refused with advice to use fewer ``unit`` (the caller's parameter
    that sets the leaves: a builder's ``domains`` or ``racks``) or a larger ``spine_radix``:

    >>> spine_count(65, 32, 64, unit="racks")
    Traceback (most recent call last):
    compute.errors.UserError: 65 leaves are too many for one spine tier of 64-port switches \
(at most 64); use fewer racks or a larger spine_radix

    Each count is checked first (a float uplink count raised TypeError; a huge one ran the
    search for ever): ``leaves`` >= 1, ``uplinks`` and ``spine_radix`` port counts.

    >>> spine_count(8, 2.5, 64)
    Traceback (most recent call last):
    compute.errors.UserError: uplinks must be an integer in 1..1,000,000, got 2.5
    """
    leaves = check_int("leaves", leaves)
    uplinks = check_radix("uplinks", uplinks)
    spine_radix = check_radix("spine_radix", spine_radix)
    unit = validate.string("", "unit", unit, max_length=100)
    for s in range(1, uplinks + 1):
        if uplinks % s == 0 and leaves * (uplinks // s) <= spine_radix:
            return s
    most = spine_radix  # with s = uplinks each leaf takes one port of every spine
    raise UserError(f"{leaves} leaves are too many for one spine tier of {spine_radix}-port "
                    f"switches (at most {most}); use fewer {unit} or a larger spine_radix")


@builder("rail-optimized")
def rail_optimized(domains: int = 4, domain_size: int = 8, gpus_per_server: int = 8,
                   gpu: str | GpuSpec = "H100-SXM", servers_per_leaf: int = 32, leaf_radix: int = 64,
                   spine_radix: int = 64, scaleup_bandwidth: float | None = None,
                   nic_bandwidth: float | None = None, nvlinks: int | None = None,
                   nvswitch_radix: int | None = None, in_network_reduction: bool | None = None,
                   sharp: bool = False, servers_per_rack: int | None = None,
                   medium: str = "pluggable-optics",
                   nics_per_server: int | None = None, module_ports: int = 1) -> nx.Graph:
    """``domains`` scale-up domains of ``domain_size`` GPUs, under a rail-optimized two-tier
    scale-out fabric (omitted when there is one domain).

    GPUs are numbered domain by domain, server by server: ``gpu{d * domain_size + i}`` has
    labels ``group = d`` (its domain), ``server``, ``rail = i % gpus_per_server``,
    ``pod`` (its SU: ``server // servers_per_leaf``) and ``rack``. Switches: ``nvs{d}``
    (tier 0), ``leaf{su * gpus_per_server + rail}`` (tier 1), ``spine{j}`` (tier 2); with
    fewer NICs than GPUs a server, ``leaf{su * nics_per_server + nic}``.

    Parameters
    ----------
    domains : int
        Scale-up domains.
    domain_size : int
        GPUs per domain (8 for DGX H100, 72 for GB200 NVL72); a multiple of
        ``gpus_per_server``.
    gpus_per_server : int
        GPUs per server (= rails: 8 for DGX H100, 4 per GB200 compute tray).
    gpu : str or GpuSpec
        GPU type: a catalog name, a GPU file or a GpuSpec.
    servers_per_leaf : int
        Servers on each rail leaf (an SU; <= ``leaf_radix / 2``).
    leaf_radix, spine_radix : int
        Ports per leaf and spine (64 for Quantum-2); a leaf has ``leaf_radix / 2`` uplinks.
    scaleup_bandwidth, nic_bandwidth : float, optional
        Bytes/s per direction per GPU into its domain switch (default the GPU's
        ``scaleup_bandwidth``) and out of its NIC (default ``scaleout_bandwidth``).
    nvlinks : int, optional
        NVLinks per GPU: board traces where ``domain_size == gpus_per_server`` (the domain
        is one HGX board), copper cables otherwise (the domain's switch is in other trays:
        NVL72). Default the GPU's (:attr:`~compute.hardware.GpuSpec.nvlinks`: 12 on the
        A100, 18 on the H100 and B200, a derived GPU its base's); where it gives none, its
        scale-up bandwidth over the H100's 25 GB/s NVLink4 rate, as a scenario's
        ``"$nvlinks"`` counts them (:func:`compute.gpu_facts.nvlink_count`).
    nvswitch_radix : int, optional
        Ports of the domain switch; default ``domain_size * nvlinks``.
    in_network_reduction : bool, optional
        Reduction in the domain switch (NVLS); default the GPU's ``scaleup_reduction``
        (yes from H100 on, no for A100's NVSwitch).
    sharp : bool
        Reduction in leaves and spines (InfiniBand SHARP).
    servers_per_rack : int, optional
        Servers per rack for the ``rack`` label; default one domain per rack (more than
        the fabric's servers: one rack).
    medium : str
        Medium of the scale-out cables (one of :data:`~topologies.common.CABLE_MEDIA`: they
        leave the server, so not a board or package trace).
    nics_per_server : int, optional
        Scale-out NICs per server, ``nic_bandwidth`` each (default ``gpus_per_server``: a
        NIC a GPU, a rail each). Fewer must divide ``gpus_per_server``: every
        ``gpus_per_server / nics_per_server``-th GPU of a server holds a NIC, on rail leaf
        ``nic``, and the others reach the network through their scale-up domain (the
        collective model sends each through the NIC of the GPU before it holding one, as
        GPUs of a PCIe switch share its NIC), so NCCL
        lays a channel on each NIC (as on a server with NICs down), 4 for 8 A100 with 4 x
        200 Gb/s HDR. A failed GPU holding a NIC leaves it up for the others (it sits on the
        host's PCIe switch: :func:`topologies.failure_domains.nic_heirs`); the NIC failing
        cuts them off with it.
    module_ports : int
        Optical cable ends one pluggable module serves, 1 or 2 (graph attribute
        :data:`~topologies.schema.MODULE_PORTS`, :mod:`topologies.optic_modules`): 2 is a
        twin-port OSFP (2 x 400G in one module, at the switches and the servers alike, as
        a DGX H100 SuperPOD's: ``P40``, DGX H100 User Guide Table 6); 1, the default, a
        module an end. A module's failure cuts every link end it holds.

    Examples
    --------
    >>> g = rail_optimized(domains=4, servers_per_leaf=2)
    >>> g.graph["gpus"], sorted(n for n in g.neighbors("gpu9") if not n.startswith("gpu"))
    (32, ['leaf1', 'nvs1'])
    >>> g.nodes["gpu9"]["rail"], g.nodes["gpu9"]["pod"], g.nodes["gpu17"]["pod"]
    (1, 0, 1)
    >>> g.edges["gpu9", "nvs1"]["medium"], rail_optimized(2, 16).edges["gpu9", "nvs0"]["medium"]
    ('board', 'copper')
    >>> a100 = rail_optimized(domains=1, gpu="A100-SXM-80GB")   # the A100's 12 NVLinks
    >>> a100.edges["gpu0", "nvs0"]["links"], a100.nodes["nvs0"]["radix"]
    (12, 96)
    >>> four = rail_optimized(domains=2, nics_per_server=4)   # GPUs 0, 2, 4, 6 hold a NIC
    >>> [n for n in four.neighbors("gpu10") if n.startswith("leaf")], list(four["gpu11"])
    (['leaf1'], ['nvs1'])
    """
    # its parameters, by name: nvl72 builds through the same body, naming its own
    return _rail_fabric("rail-optimized", "domains", **locals())


def _rail_fabric(name: str, unit: str, domains: int, domain_size: int, gpus_per_server: int,
                 gpu: str | GpuSpec, servers_per_leaf: int, leaf_radix: int, spine_radix: int,
                 scaleup_bandwidth: float | None, nic_bandwidth: float | None,
                 nvlinks: int | None, nvswitch_radix: int | None,
                 in_network_reduction: bool | None, sharp: bool, servers_per_rack: int | None,
                 medium: str, nics_per_server: int | None = None,
                 module_ports: int = 1) -> nx.Graph:
    """:func:`rail_optimized`'s body, for builder ``name`` whose ``domains`` are its
    ``unit`` (its refusals name them: nvl72's racks)."""
    domains = check_int(unit, domains)
    gps = check_int("gpus_per_server", gpus_per_server)
    size = check_int("domain_size", domain_size)
    if size % gps:
        raise UserError(f"domain_size {size} must be a multiple of gpus_per_server {gps}")
    nics = gps if nics_per_server is None else check_int("nics_per_server", nics_per_server)
    if gps % nics:
        allowed = (": one of " + ", ".join(str(d) for d in range(1, gps + 1) if gps % d == 0)
                   if gps <= 1024 else "")
        raise UserError(f"nics_per_server {nics} must divide gpus_per_server {gps}{allowed}")
    stride = gps // nics   # GPUs a NIC: the first of every stride GPUs of a server has it
    per_leaf = check_int("servers_per_leaf", servers_per_leaf)
    leaf_radix = check_radix("leaf_radix", leaf_radix, 2)
    spine_radix = check_radix("spine_radix", spine_radix)
    spec = gpu_type(gpu)
    nvlinks = check_radix("nvlinks", nvlink_count(spec) if nvlinks is None else nvlinks)
    uplinks = leaf_radix // 2
    if per_leaf > leaf_radix - uplinks:
        raise UserError(f"servers_per_leaf {per_leaf} exceeds the {leaf_radix - uplinks} "
                        f"down ports of a {leaf_radix}-port leaf (half go up)")
    if nvswitch_radix is None and size * nvlinks > MAX_RADIX:   # not the default's name
        raise UserError(f"domain_size {size:,} GPUs x {nvlinks} NVLinks needs an NVSwitch "
                        f"of {size * nvlinks:,} ports, over the {MAX_RADIX:,} a switch may "
                        f"have; use a smaller domain_size")
    nvs_radix = check_radix("nvswitch_radix",
                            size * nvlinks if nvswitch_radix is None else nvswitch_radix)
    if nvs_radix < size * nvlinks:
        raise UserError(f"nvswitch_radix {nvs_radix} is too small for {size} GPUs with "
                        f"{nvlinks} NVLinks each: it must be >= {size * nvlinks}")
    per_rack = None if servers_per_rack is None else check_int("servers_per_rack",
                                                               servers_per_rack)
    up_bw = bandwidth_or("scaleup_bandwidth", scaleup_bandwidth, spec.scaleup_bandwidth)
    nic_bw = bandwidth_or("nic_bandwidth", nic_bandwidth, spec.scaleout_bandwidth)
    medium = check_medium("medium", medium, CABLE_MEDIA, SCALEOUT_NOT_TRACES)
    try:   # a whole number as each count here is read (2.0, numpy's 2): refused as 2.0
        ports = check_int("module_ports", module_ports)
    except UserError:
        ports = None
    if ports not in MODULE_PORT_CHOICES:
        raise UserError(f"module_ports must be {MODULE_PORTS_RULE}, got "
                        f"{describe(module_ports)}")
    n = domains * size
    servers = n // gps
    if per_rack is not None:   # more servers a rack than there are: one rack
        per_rack = min(per_rack, servers)
    sus = -(-servers // per_leaf)
    scaleout = domains > 1
    leaves = sus * nics
    # spines <= uplinks: the estimate bounds the fabric before spine_count searches
    check_size(name, n + domains + (leaves + uplinks) * scaleout,
               n * (1 + scaleout) + leaves * uplinks * scaleout)
    spines = spine_count(leaves, uplinks, spine_radix, unit) if scaleout else 0

    graph = new_graph(f"{domains} x {size} {spec.name} (rail-optimized)" if scaleout
                      else f"{size} {spec.name} scale-up domain")
    gpu_ids = np.arange(n)
    server = gpu_ids // gps
    labels = {"group": gpu_ids // size, "server": server, "rail": gpu_ids % gps,
              "pod": server // per_leaf,
              "rack": server // per_rack if per_rack else server // (size // gps)}
    nvls = reduction_or("in_network_reduction", in_network_reduction, spec)
    nodes = [Nodes("nvs", domains, switch_attrs(0, nvs_radix, NVSWITCH_LATENCY, nvls)),
             Nodes("gpu", n, {"kind": "gpu", "gpu": spec.name}, labels)]
    gpu0 = domains                 # node positions: NVSwitches, GPUs, leaves, spines
    # a domain inside one server is wired on its baseboard; one across servers by cables
    scaleup = "board" if size == gps else "copper"
    links = [Links(gpu0 + gpu_ids, gpu_ids // size,
                   link(up_bw, cable_latency(SCALEUP_LENGTH, scaleup), scaleup,
                        links=nvlinks))]
    if scaleout:
        leaf0 = gpu0 + n
        sw = switch_attrs(1, leaf_radix, SWITCH_LATENCY, sharp)
        nodes += [Nodes("leaf", leaves, sw),
                  Nodes("spine", spines, {**sw, "tier": 2, "radix": spine_radix})]
        parallel = uplinks // spines
        j, t = np.indices((leaves, spines)).reshape(2, -1)      # leaf j - spine t
        nic = gpu_ids[gpu_ids % stride == 0]   # GPUs holding a NIC (every GPU by default)
        links += [Links(gpu0 + nic, leaf0 + nic // gps // per_leaf * nics + nic % gps // stride,
                        link(nic_bw, cable_latency(NIC_LENGTH, medium), medium)),
                  Links(leaf0 + j, leaf0 + leaves + t,
                        link(nic_bw * parallel, cable_latency(LEAF_SPINE_LENGTH, medium),
                             medium, links=parallel))]
    if ports != 1:
        graph.graph[MODULE_PORTS] = ports
    return finish_blocks(graph, n, nodes, links, spec)


@builder("superpod")
def superpod(sus: int = 1, gpu: str | GpuSpec = "H100-SXM", scaleup_bandwidth: float | None = None,
             nic_bandwidth: float | None = None, sharp: bool = False,
             medium: str = "pluggable-optics", module_ports: int = 2) -> nx.Graph:
    """A DGX H100 SuperPOD-like cluster of ``sus`` scalable units.

    The published shape (shared/reference/fabrics.md): 32 DGX server slots per SU, one slot of the whole cluster
    holding the UFM (so 31, 63, 95, 127 servers for 1-4 SUs), 8 GPUs
    per server on one NVSwitch domain (4 NVSwitch3 chips: 256 ports, 18 NVLinks per GPU,
    NVLS reduction), each GPU with its own 400 Gb/s NIC to its rail's leaf; 8 rail leaves
    per SU and 4/8/16/16 spines for 1-4 SUs, all 64-port (Quantum-2). Racks hold 4 servers
    (an assumption for the ``rack`` label). Its optics are twin-port OSFP modules
    (``module_ports`` 2 by default: 32 cages for a Quantum-2 switch's 64 ports, ``P40``;
    4 cages for a DGX H100's 8 ConnectX-7, DGX H100 User Guide Table 6), so one SU's
    1,008 optical cable ends are 508 modules (a leaf's 31st GPU port holds one alone).
    Another ``gpu`` keeps the shape and its own NVLinks (an A100's 12; the domain switch
    keeps its 256 ports). The rest as :func:`rail_optimized`.

    Examples
    --------
    >>> g = superpod(1)
    >>> g.graph["gpus"], sum(1 for n in g if n.startswith("leaf")), \\
    ...     sum(1 for n in g if n.startswith("spine"))
    (248, 8, 4)
    >>> g.edges["gpu0", "nvs0"]["bandwidth"] / 1e9, g.edges["gpu0", "leaf0"]["bandwidth"] / 1e9
    (450.0, 50.0)
    >>> g.edges["gpu0", "nvs0"]["links"], superpod(1, "A100-SXM-80GB").edges["gpu0", "nvs0"]["links"]
    (18, 12)
    """
    sus = check_int("sus", sus)
    ports, rails = 64, 8   # Quantum-2 leaves and spines; a rail leaf per GPU of a server
    # one spine tier: each of the SU's rail leaves takes a port of every spine at the least
    if rails * sus > ports:
        raise UserError(f"sus must be at most {ports // rails}, got {sus}: one tier of "
                        f"{ports}-port spines joins at most {ports} rail leaves, {rails} per "
                        f"SU (a larger cluster: rail-optimized or nvl72 with a larger "
                        f"spine_radix, or fat-tree)")
    return rail_optimized(domains=32 * sus - 1, domain_size=8, gpus_per_server=rails, gpu=gpu,
                          servers_per_leaf=32, leaf_radix=ports, spine_radix=ports,
                          scaleup_bandwidth=scaleup_bandwidth, nic_bandwidth=nic_bandwidth,
                          nvlinks=None, nvswitch_radix=4 * 64, sharp=sharp, servers_per_rack=4,
                          medium=medium, module_ports=module_ports)


@builder("nvl72")
def nvl72(racks: int = 1, gpu: str | GpuSpec = "B200-HGX", scaleup_bandwidth: float | None = None,
          nic_bandwidth: float | None = None, sharp: bool = False,
          medium: str = "pluggable-optics", leaf_radix: int = 64, spine_radix: int = 64,
          servers_per_leaf: int | None = None) -> nx.Graph:
    """GB200 NVL72-like racks: 72 GPUs per rack on one NVLink domain.

    The published shape (fabrics.md): 72 GPUs per rack on one NVLink domain (18 NVLink switch chips, each GPU with one NVLink5 to every chip: 18 links,
    900 GB/s per direction; modelled as one logical switch of 18 x 72 ports with NVLS).
    The GPU type defaults to the catalog's B200 (the Blackwell GPU of a GB200 has the same
    NVLink5 bandwidth); another ``gpu`` keeps its own NVLinks (an A100's 12 reach 12 of the
    18 chips). With ``racks > 1`` each GPU's NIC joins a rail-optimized leaf-spine
    (4 GPUs per compute tray = 4 rails; ``servers_per_leaf`` trays per leaf, default half
    the leaf's ports: an assumption, not a published GB200 SuperPOD shape). The leaves and
    spines default to 64 ports (NDR Quantum-2 class, for 400 Gb/s NICs); an XDR fabric of
    800 Gb/s NICs (GB300) has 144-port Quantum-X800 switches: ``leaf_radix=144,
    spine_radix=144``.

    Each logical switch ``nvs{d}`` stands for the :data:`NVL72_SWITCH_TRAYS` = 9 NVLink
    switch trays (2 chips each) of its rack: each tray fails on its own, and NVIDIA documents
    the loss of a switch as leaving the rack's NVLink partition not operational, so failure
    models count the logical switch's rate 9 times (a tray's), not once.

    Examples
    --------
    >>> g = nvl72()
    >>> g.graph["gpus"], g.nodes["nvs0"]["radix"], g.edges["gpu71", "nvs0"]["bandwidth"] / 1e9
    (72, 1296, 900.0)
    >>> sorted({g.nodes[f"gpu{i}"]["server"] for i in range(8)})   # 4 GPUs per compute tray
    [0, 1]
    >>> g = nvl72(racks=16, leaf_radix=144, spine_radix=144)   # 288 trays, 72 a leaf
    >>> sum(1 for n in g if n.startswith("leaf")), g.nodes["leaf0"]["radix"]
    (16, 144)
    """
    racks = check_int("racks", racks)
    leaf_radix = check_radix("leaf_radix", leaf_radix, 2)
    per_leaf = leaf_radix // 2 if servers_per_leaf is None else servers_per_leaf
    spec = gpu_type(gpu)
    chips = 2 * NVL72_SWITCH_TRAYS   # a GPU's NVLinks go one to each chip
    if nvlink_count(spec) > chips:   # the NVSwitch's ports are no parameter of nvl72
        raise UserError(f"gpu {spec.name!r} has {nvlink_count(spec)} NVLinks, more than the "
                        f"{chips} NVLink switch chips of an NVL72 rack take (one link to "
                        f"each); give a GPU of at most {chips} NVLinks, or rail-optimized "
                        f"with domain_size=72 and its own nvswitch_radix")
    return _rail_fabric("nvl72", "racks", domains=racks, domain_size=72, gpus_per_server=4,
                        gpu=spec, servers_per_leaf=per_leaf, leaf_radix=leaf_radix,
                        spine_radix=spine_radix, scaleup_bandwidth=scaleup_bandwidth,
                        nic_bandwidth=nic_bandwidth, nvlinks=None, in_network_reduction=None,
                        nvswitch_radix=chips * 72, sharp=sharp, servers_per_rack=None,
                        medium=medium)
