"""A tuner plugin's choice of algorithm and protocol, for comparing with runs that used one.

NCCL lets a plugin override its tuner (``NCCL_TUNER_PLUGIN``). AWS's OFI NCCL plugin ships
one whose "region" tuner picks the all-reduce algorithm and protocol on p5 from fixed
polygons over (message size, ranks), in log2 space, choices NCCL's own cost model would not
make (ring/LL128 up to 1-2 GiB, tree/LL128 up to 288 MiB on 16-32 nodes). The polygons are
data (``netmodel/data/collective_tuner_plugins.toml``, with their source);
:class:`TunerPlugin` reads one platform's, and a
:class:`~netmodel.collectives.model.FabricCostModel` given it as ``tuner`` costs with the
plugin's choice where it makes one and its own ``auto`` where it leaves the choice to NCCL.
The model's ``auto`` is the fastest of the model's own costs, not NCCL's choice, unless a
tuner is named: :func:`tuner_names` lists the names (``"nccl"``, NCCL's tuner emulated,
below, and ``PLUGIN:SET``, from the data file's tables) that a scenario's
``[collective] tuner``, ``netmodel collective --tuner`` and
:class:`~netmodel.collectives.model.FabricCostModel`'s ``tuner`` take, ``"none"`` (no tuner:
the model's own ``auto``) the default; :func:`get_tuner` loads one.

>>> tuner_names()
('none', 'nccl', 'aws-ofi-nccl:p5')
>>> get_tuner("aws-ofi-nccl:p5").label
'aws-ofi-nccl:p5'

>>> t = TunerPlugin.load("aws-ofi-nccl", "p5.48xlarge")
>>> t.choose("all-reduce", 2 ** 30, 64, 8)     # 1 GiB on 8 nodes: LL128 where NCCL has Simple
('ring', 'LL128')
>>> t.choose("all-reduce", 2 ** 30, 16, 2) is None    # 2 nodes: left to NCCL (the model's auto)
True

``"nccl"`` (:class:`NcclTuner`) is NCCL's own tuner, emulated: the all-reduce's algorithm
and protocol NCCL's cost model predicts fastest among Ring, Tree, NVLS and NVLSTree
(NVIDIA/nccl src/graph/tuning.cc, src/tuning/nvls.cc), which the model then costs with its
own costing. Without it the model's ``auto`` takes the fastest of
the model's own costs, which on 3 nodes picks a tree NCCL does not (NVIDIA/nccl issue 1801).
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compute.errors import UserError, chosen, known, lookalike
from compute.validate import describe

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["NCCL_TUNER", "NO_TUNER", "PLUGINS_PATH", "NcclGraph", "NcclTuner", "TunerPlugin",
           "get_tuner", "host_arch", "nvls_search", "nvls_tree_corrected", "tuner_names",
           "tuner_refusal"]

PLUGINS_PATH = Path(__file__).resolve().parent.parent / "data" / "collective_tuner_plugins.toml"
_EPS = 1e-10            # the plugin's edge tolerance, in log2 units
#: The tuner name for no tuner: the model's auto, the fastest of its own costs, standing for
#: NCCL's own tuner (no plugin): the default everywhere.
NO_TUNER = "none"
#: The tuner name of NCCL's own tuner emulated (:class:`NcclTuner`): the data file's
#: table of that name, which is no plugin's.
NCCL_TUNER = "nccl"


@functools.lru_cache(maxsize=4)
def _data(path: str | Path = PLUGINS_PATH) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def tuner_names(path: str | Path = PLUGINS_PATH) -> tuple[str, ...]:
    """The tuner names a model takes: ``"none"`` (the model's own auto), ``"nccl"`` (NCCL's
    tuner emulated, :class:`NcclTuner`, where the data file has its table), then
    ``PLUGIN:SET`` for each region set of each plugin in the data file
    (``[aws-ofi-nccl.p5]``: ``aws-ofi-nccl:p5``)."""
    data = _data(path)
    return (NO_TUNER, *((NCCL_TUNER,) if NCCL_TUNER in data else ()),
            *(f"{plugin}:{key}" for plugin, sets in data.items() if plugin != NCCL_TUNER
              for key in sets))


def get_tuner(name: str | None, path: str | Path = PLUGINS_PATH
              ) -> TunerPlugin | NcclTuner | None:
    """The tuner ``name`` (one of :func:`tuner_names`) names, None for ``"none"`` or None
    (the model's own auto); a :class:`TunerPlugin` or :class:`NcclTuner` is returned as
    given. Another name raises :class:`~compute.errors.UserError` listing the known ones."""
    if name is None or isinstance(name, TunerPlugin | NcclTuner):
        return name
    names = tuner_names(path)
    if chosen(name, names) is None:   # blanks at either end dropped, as every choice's
        raise UserError(f"unknown tuner {describe(name)}{lookalike(name, names)}; known: "
                        f"{known(names)}")
    name = chosen(name, names)
    if name == NO_TUNER:
        return None
    if name == NCCL_TUNER:
        return _nccl(str(path))
    return _named(name, str(path))


@functools.lru_cache(maxsize=4)
def _nccl(path: str) -> NcclTuner:
    spec = _data(path)[NCCL_TUNER]
    _check_nccl(path, spec)
    return NcclTuner.from_spec(spec)


#: Keys the ``[nccl]`` table held before each GPU named its host's CPU architecture, with
#: what replaced them (refused with these words by :func:`get_tuner`, not silently ignored).
_MOVED_KEYS = {
    "nvls_tree_correction_arm_gpus": "a GPU names its host's CPU architecture in its own entry "
                                     "(host_arch = \"aarch64\" in compute/data/gpus.toml or a "
                                     "GPU file; a derived GPU keeps its base's), and the "
                                     "correction's rule reads it: "
                                     "nvls_tree_correction_host_archs = [\"x86_64\"]",
}


def _check_nccl(path: str, spec: dict) -> None:
    """Refuse, in one line naming ``path``, a ``[nccl]`` table holding a key of
    :data:`_MOVED_KEYS` (saying what replaced it) or a host architecture that is none of
    :data:`compute.gpu_rows.HOST_ARCHS` (its ``nvls_tree_correction_host_archs``,
    ``default_host_arch``)."""
    from compute.gpu_rows import check_host_arch

    for key, instead in _MOVED_KEYS.items():
        if key in spec:
            raise UserError(f"{path}: [{NCCL_TUNER}].{key} is no longer read: {instead}")
    where = f"{path}: [{NCCL_TUNER}]"
    archs = spec.get("nvls_tree_correction_host_archs")
    if not isinstance(archs, list):
        raise UserError(f"{where}: nvls_tree_correction_host_archs must be a list of host "
                        f"CPU architectures, got {describe(archs)}")
    for arch in archs:
        check_host_arch(where, "nvls_tree_correction_host_archs", arch)
    check_host_arch(where, "default_host_arch", spec.get("default_host_arch"))


def host_arch(gpu: str, graph: nx.Graph | None = None) -> str:
    """The CPU architecture NCCL's tuner takes GPU type ``gpu``'s host to be (one of
    :data:`compute.gpu_rows.HOST_ARCHS`): its entry's ``host_arch``, else that of the GPU it
    derives from, and so on (:func:`compute.gpu_facts.named_fact`; on a fabric ``graph``, as
    the graph records its GPUs' facts, :func:`topologies.schema_reads.gpu_named_fact`); else
    the ``[nccl]`` table's ``default_host_arch``.

    >>> host_arch("GB200-NVL72"), host_arch("B200-HGX"), host_arch("Lite")
    ('aarch64', 'x86_64', 'x86_64')
    """
    if graph is not None:
        from topologies.schema_reads import gpu_named_fact

        named = gpu_named_fact(graph, gpu, "host_arch")
    else:
        from compute.gpu_facts import named_fact

        named = named_fact(gpu, "host_arch")
    return _nccl(str(PLUGINS_PATH)).spec["default_host_arch"] if named is None else named[0]


def nvls_tree_corrected(gpu: str, graph: nx.Graph | None = None) -> bool:
    """Whether NCCL's tuner applies NVLSTree's size correction on GPU type ``gpu``'s host:
    the ``[nccl]`` table's ``nvls_tree_correction_host_archs`` lists its :func:`host_arch`
    (x86; not a Grace-hosted GB200 or GB300, nor a GPU of a GPU file that derives from one or
    names ``host_arch = "aarch64"``). A cache of costs whose key leaves the GPU's name out
    keys this (:func:`netmodel.study.scenario_fabric.network_key`): a GB200 and a B200 of
    equal fabric parameters differ here.

    >>> nvls_tree_corrected("GB200-NVL72"), nvls_tree_corrected("B200-HGX")
    (False, True)
    """
    spec = _nccl(str(PLUGINS_PATH)).spec
    return host_arch(gpu, graph) in spec["nvls_tree_correction_host_archs"]


def tuner_refusal(tuner: str | None, algorithm: str = "auto") -> str | None:
    """Why the tuner plugin ``tuner`` cannot choose here, in one line; None where it can, or
    where there is none (None or :data:`NO_TUNER`). The rule, said once: a plugin chooses
    the algorithm and protocol of each communicator under ``algorithm`` ``"auto"`` (a named
    algorithm leaves it nothing to choose), as AWS's plugin does per communicator, from its
    collective, size, ranks and nodes alone. So one group alone, a group after failures,
    every group of a size at once (each tuned apart) and a scenario's every instance at
    once (``instances = "all"``: compare's makespan, each instance tuned apart) all take
    it. The caller prefixes where it was given.

    >>> tuner_refusal("none", "ring") is None
    True
    >>> print(tuner_refusal("aws-ofi-nccl:p5", "ring"))
    tuner 'aws-ofi-nccl:p5' chooses under algorithm 'auto', and algorithm 'ring' names one
    >>> tuner_refusal("aws-ofi-nccl:p5", "auto") is None
    True
    """
    if tuner is None or tuner == NO_TUNER:
        return None
    if algorithm != "auto":
        return (f"tuner {tuner!r} chooses under algorithm 'auto', and algorithm "
                f"{algorithm!r} names one")
    return None


@functools.lru_cache(maxsize=8)
def _named(name: str, path: str) -> TunerPlugin:
    plugin, _, key = name.partition(":")
    spec = _data(path)[plugin][key]
    return TunerPlugin.from_spec(plugin, spec["platforms"][0], spec, label=name)


def _log2(v: float) -> float:
    return math.log2(v if v > 0 else 1e-6)   # the plugin reads 0 as 1e-6 before the log


def _extend(a, b, corner) -> tuple[float, float]:
    """The plugin's extended vertex (log2 space): the line through ``a`` and ``b`` continued
    to the corner's x, or to its y where the line would pass above the corner."""
    (ax, ay), (bx, by), (zx, zy) = a, b, corner
    if ax == bx:
        return ax, zy
    if ay == by:
        return zx, ay
    m = (ay - by) / (ax - bx)
    c = by - m * bx
    y = m * zx + c
    return (zx, y) if y < zy else ((zy - c) / m, zy)


def _on_segment(p, a, b) -> bool:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    if length2 == 0:
        return False
    t = ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2
    if t < -_EPS or t > 1 + _EPS:
        return False
    return math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy) < _EPS


def _contains(poly: list[tuple[float, float]], p: tuple[float, float]) -> bool:
    """Inside ``poly`` or on an edge (the plugin takes both), even-odd rule."""
    n = len(poly)
    if any(_on_segment(p, poly[i], poly[(i + 1) % n]) for i in range(n)):
        return True
    inside = False
    for i in range(n):
        (x1, y1), (x2, y2) = poly[i], poly[(i + 1) % n]
        if (y1 > p[1]) != (y2 > p[1]) and p[0] < x1 + (p[1] - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


class TunerPlugin:
    """One plugin's regions for one platform: ``{op: [(algorithm, protocol, polygon)]}``
    (polygons in log2 of bytes and ranks), applied on ``min_nodes`` nodes or more of
    ``ranks_per_node`` ranks each."""

    def __init__(self, name: str, platform: str, regions: dict, ranks_per_node: int,
                 min_nodes: int, label: str | None = None) -> None:
        self.name, self.platform = name, platform
        self.regions, self.ranks_per_node, self.min_nodes = regions, ranks_per_node, min_nodes
        #: the name :func:`get_tuner` takes (``PLUGIN:SET``)
        self.label = label or name

    def __repr__(self) -> str:
        return f"TunerPlugin({self.label!r})"

    @classmethod
    def load(cls, name: str, platform: str, path: str | Path = PLUGINS_PATH) -> TunerPlugin:
        """``name``'s regions for ``platform`` (an instance type its data lists)."""
        data = _data(path)
        # a str first: a list or dict raised TypeError (unhashable) at the lookup
        if not isinstance(name, str) or name not in data:
            raise UserError(f"unknown tuner plugin {describe(name)}; known: {known(data)}")
        sets = {p: key for key, s in data[name].items() for p in s["platforms"]}
        if not isinstance(platform, str) or platform not in sets:
            raise UserError(f"tuner plugin {name} has no regions for platform "
                            f"{describe(platform)}; known: {known(sets)}")
        return get_tuner(f"{name}:{sets[platform]}", path)

    @classmethod
    def from_spec(cls, name: str, platform: str, spec: dict,
                  label: str | None = None) -> TunerPlugin:
        """A plugin from one region set of the data file (``spec``: its table)."""
        corner = (_log2(spec["max_bytes"]), _log2(spec["max_ranks"]))
        ext = {k: _extend(*((_log2(x), _log2(y)) for x, y in ab), corner)
               for k, ab in spec.get("extend", {}).items()}

        def coord(v, axis):
            if isinstance(v, str):
                point, _, which = v.partition(".")
                return ext[point]["xy".index(which)]
            return _log2(v)

        def vertex(v):
            return ext[v] if isinstance(v, str) else (coord(v[0], 0), coord(v[1], 1))

        regions = {op: [(r["algorithm"], r["protocol"], [vertex(v) for v in r["vertices"]])
                        for r in spec[op]]
                   for op, rs in spec.items() if isinstance(rs, list) and rs
                   and isinstance(rs[0], dict)}
        return cls(name, platform, regions, int(spec["ranks_per_node"]),
                   int(spec["min_nodes"]), label)

    def choose(self, op: str, nbytes: float, ranks: int, nodes: int,
               available: Callable[[str, str], bool] | None = None
               ) -> tuple[str, str] | None:
        """The plugin's ``(algorithm, protocol)`` for ``op`` of ``nbytes`` on ``ranks`` ranks
        over ``nodes`` nodes, or None where it leaves the choice to NCCL (too few nodes,
        another ranks-per-node, an op or a point it has no region for). ``available``: whether
        NCCL can run a pair (the plugin skips a region whose pair NCCL marks unavailable)."""
        if nodes < self.min_nodes or ranks != self.ranks_per_node * nodes:
            return None
        p = (_log2(nbytes), _log2(ranks))
        for alg, proto, poly in self.regions.get(op, ()):
            if available is not None and not available(alg, proto):
                continue
            if _contains(poly, p):
                return alg, proto
        return None


# ------------------------------------------------------------------ NCCL's own tuner

#: NCCL's all-reduce algorithms the emulation prices, in the order NCCL's tuner tries them
#: (NCCL_ALGO_TREE 0, NCCL_ALGO_RING 1, NCCL_ALGO_NVLS 4, NCCL_ALGO_NVLS_TREE 5: on a tie
#: the first wins, as its strict '<' keeps it), by the model's names, and its protocols in
#: theirs (LL, LL128, Simple). NVLS and NVLSTree run Simple alone.
NCCL_PRICED = ("tree", "ring", "in-network", "in-network-tree")
NCCL_PROTOCOLS = ("LL", "LL128", "Simple")
#: The priced algorithms that run Simple alone (NCCL's NVLS and NVLSTree).
_SIMPLE_ONLY = NCCL_PRICED[2:]


@dataclass(frozen=True)
class NcclGraph:
    """What NCCL's tuner reads of one communicator's topology search, as the model stands
    for it (:meth:`~netmodel.collectives.model.FabricCostModel.nccl_graph`).

    Attributes
    ----------
    busbw : float
        NCCL's ``nChannels x bw`` of its ring and tree graphs (bytes/s; NCCL searches both
        with the same speeds): the bandwidth its tuner starts from for either algorithm.
    channels : int
        The communicator's channels (``comm->nChannels``), for the ring's plateau threshold.
    tree_cap, tree_ll128_cap : float
        A tree's busbw caps, ``nChannels x perChMaxTreeBw`` and ``x perChMaxTreeLL128Bw``
        (bytes/s; 0: none).
    ll_cap : float
        LL's busbw cap on one node, NCCL's ``llMaxBw`` (bytes/s; 0: none): the GPU
        generation's. Across nodes NCCL reads it by host CPU, which fabrics do not carry:
        the tuner takes the data file's ``ll_max_bw_net`` (:meth:`NcclTuner.ll_cap`).
    ring_ll128_cap : float
        A ring's LL128 busbw cap, ``nChannels x perChMaxRingLL128Bw`` (bytes/s; 0: none).
    ll128 : bool
        NCCL enables LL128 by default on the communicator's GPUs (their compute capability
        and NCCL's release); False: the tuner chooses among LL and Simple.
    nvls_channels : int
        The NVLS graph's channels, one head GPU each (0: no NVLS graph: NCCL cannot run
        NVLS or NVLSTree there; :func:`nvls_search`).
    nvls_bw_intra, nvls_bw_inter : float
        The NVLS graph's per-channel speeds, ``bwIntra`` and ``bwInter`` (bytes/s).
    nvls_efficiency : float
        NCCL's ``nvlsEfficiency`` of the GPUs' generation.
    nvls_tree_cap : float
        NCCL's ``perChMaxNVLSTreeBw`` for the node count (bytes/s a channel; 0: none).
    nvls_tree_correction : bool
        NCCL multiplies NVLSTree's algbw by ``treeCorrectionFactor`` (compute capability
        10.0 or more on an x86 host).
    nvls_legacy : bool
        The communicator's NCCL release prices NVLS and NVLSTree as 2.27 and older do (the
        data file's ``nvls_legacy_until``): ``c x min(bwIntra, bwInter)``, NVLSTree's
        ``bwInter`` halved on 3 nodes or more, x 5/6 as algbw, no ``nvlsEfficiency``, no
        NVLSTree cap or size correction, NVLSTree's network step 14 us.
    """

    busbw: float
    channels: int
    tree_cap: float = 0.0
    tree_ll128_cap: float = 0.0
    ll_cap: float = 0.0
    ring_ll128_cap: float = 0.0
    ll128: bool = True
    nvls_channels: int = 0
    nvls_bw_intra: float = 0.0
    nvls_bw_inter: float = 0.0
    nvls_efficiency: float = 0.0
    nvls_tree_cap: float = 0.0
    nvls_tree_correction: bool = False
    nvls_legacy: bool = False


def nvls_search(link: float, heads: int, speeds, nic: float | None = None
                ) -> tuple[float, float]:
    """NCCL's NVLS graph speeds ``(bwIntra, bwInter)`` (bytes/s a channel; ``(0, 0)`` where
    no speed fits) for ``heads`` channels on nodes whose GPUs each have ``link`` bytes/s of
    NVLink into their NVSwitch (NCCL's count: links x its per-link rate), as NVIDIA/nccl
    src/graph/search.cc, ncclTopoCompute, finds them (the data file's ``[nccl]`` notes, [S]):
    a head moves twice a channel's speed on its port and every other GPU once, so ``heads``
    channels fit at speed ``s`` while ``(heads + 1) s <= link``; pass 1 takes the first such
    ``s`` of ``speeds`` (descending) for both, at most ``nic`` (a head's NIC, across nodes;
    None inside one node), and pass 2 raises ``bwInter`` alone up ``speeds`` while it is
    below ``2 x bwIntra`` and at most ``nic``.

    >>> [x / 1e9 for x in nvls_search(18 * 20.6e9, 8, [60e9, 50e9, 40e9, 30e9])]
    [40.0, 60.0]
    >>> [x / 1e9 for x in nvls_search(18 * 20.6e9, 8, [48e9, 45e9, 42e9, 40e9], nic=50e9)]
    [40.0, 48.0]
    """
    speeds = list(speeds)
    cap = math.inf if nic is None else nic
    fit = [i for i, s in enumerate(speeds) if (heads + 1) * s <= link * (1 + 1e-9) and s <= cap]
    if heads < 1 or not fit:
        return 0.0, 0.0
    i = fit[0]
    intra = inter = speeds[i]
    while i > 0 and inter < 2 * intra and speeds[i - 1] <= cap:
        i -= 1
        inter = speeds[i]
    return intra, inter


class NcclTuner:
    """NCCL's own tuner for all-reduce, emulated: for each (algorithm, protocol) of Ring,
    Tree, NVLS (the model's ``in-network`` on one node) and NVLSTree (``in-network-tree``),
    NCCL's predicted time ``latency + bytes / algbw`` (NVIDIA/nccl src/graph/tuning.cc,
    ncclTopoTuneModel and ncclTopoGetAlgoTime, and src/tuning/nvls.cc of 2026; written from
    their formulas, constants from the data file's ``[nccl]`` table), and the fastest one
    is its choice. Each algorithm's bus bandwidth is the graph's, ``busbw`` (:class:`NcclGraph`),
    refined: ring LL x 0.5, LL128 ``min(x 0.92, ring_ll128_cap)``, Simple x 1; tree ``min(0.92 busbw, tree_cap)``,
    then LL / 3.8, LL128 ``min(x 7/9 on one node or x 120/128, tree_ll128_cap)``; LL's
    busbw at most ``llMaxBw`` (:meth:`ll_cap`: the generation's on one node, 39 GB/s on 2
    nodes and 20.4 on more across nodes); algbw is a ring's busbw x ``n / (2 (n - 1))`` and
    a tree's x 0.5 on any node count. Latency: a ring's base + ``(2 (n - 1) - 2 (N - 1))``
    NVLink steps + ``2 (N - 1)`` network steps on ``n`` ranks over ``N`` nodes (across
    nodes an NVLink step at least the network's post overhead, 1 us, 3 us under Simple; at
    one rank a node a network step the tree's; x 1.4 for Simple across nodes at 64 bytes a
    channel a rank or more); a tree's base + ``2 ((n/N - 1) NVLink steps + log2i(N)
    network steps)``; a tree's algbw is multiplied by ``treeCorrectionFactor`` from 64 B to
    256 MiB. NVLS and NVLSTree (Simple only) read the NVLS graph (:func:`nvls_search`:
    ``c`` heads at ``bwIntra`` and ``bwInter`` a channel): ``c x min(bwIntra x
    nvlsEfficiency x (c - 1) / c x 2, bwInter)`` busbw, NVLSTree's ``bwInter`` doubled on 2
    nodes and its channel capped at ``perChMaxNVLSTreeBw``, algbw a ring's ratio
    (:meth:`nvls_bandwidth`); latency NVLS's NVLink hw latency alone (25 us), NVLSTree's
    that + ``2 log2i(N)`` network steps of 20.9 us, its algbw multiplied by
    ``treeCorrectionFactor`` on Blackwell on x86 hosts (:func:`nvls_tree_corrected`) below 2^30 bytes. NVLS runs
    on one node, NVLSTree across nodes, neither with fewer than 2 channels. Releases 2.27
    and older price both as their source does (:attr:`NcclGraph.nvls_legacy`).

    It chooses only where its algorithms are the only candidates the model can run (NVLS
    across nodes, which NCCL runs only with CollNet, and CollNet Direct and Chain are not
    priced: where they can run it leaves the choice to the model's auto), only for
    all-reduce (NCCL's other collectives run the ring) and only on nodes of at most
    ``max_ranks_per_node`` ranks (8: a host's GPUs; the data file says why an NVL72 rack's
    domain is left to auto).

    >>> t = get_tuner("nccl")
    >>> g = NcclGraph(busbw=400e9, channels=16, tree_cap=8 * 36.0e9)
    >>> t.choose("all-reduce", 2 ** 34, 24, 3, graph=g)     # 16 GiB: the ring's 0.52 x busbw
    ('ring', 'Simple')
    >>> t.choose("all-reduce", 2 ** 20, 256, 32, graph=g)   # 1 MiB on 32 nodes: log2 steps
    ('tree', 'LL128')
    >>> h100 = NcclGraph(busbw=360e9, channels=16, ll_cap=140.9e9, nvls_channels=8,
    ...                  nvls_bw_intra=40e9, nvls_bw_inter=60e9, nvls_efficiency=0.85)
    >>> t.choose("all-reduce", 2 ** 20, 8, 1, graph=h100)   # 8 H100, 1 MiB: ring LL's 15 us
    ('ring', 'LL')
    >>> t.choose("all-reduce", 2 ** 30, 8, 1, graph=h100)   # NVLS: 476 GB/s busbw
    ('in-network', 'Simple')
    """

    label = name = NCCL_TUNER
    #: the model gives :meth:`choose` the communicator's :class:`NcclGraph`
    needs_graph = True

    def __init__(self, spec: dict) -> None:
        self.spec = spec

    def __repr__(self) -> str:
        return "NcclTuner()"

    @classmethod
    def from_spec(cls, spec: dict) -> NcclTuner:
        """The tuner of the data file's ``[nccl]`` table (``spec``)."""
        return cls(spec)

    def bandwidth(self, algorithm: str, protocol: str, ranks: int, nodes: int,
                  graph: NcclGraph) -> float:
        """NCCL's algbw (bytes/s) of ``algorithm`` and ``protocol`` for an all-reduce on
        ``ranks`` ranks over ``nodes`` nodes, before the tree's size correction (0: NCCL
        cannot run it: NVLS or NVLSTree without an NVLS graph of 2 channels or more)."""
        if algorithm in _SIMPLE_ONLY:
            return self.nvls_bandwidth(algorithm, ranks, nodes, graph)
        sp, bus = self.spec, graph.busbw
        ll_cap = self.ll_cap(nodes, graph)
        if algorithm == "ring":
            bus *= sp["ring_factor"][protocol]
            if protocol == "LL" and ll_cap > 0:
                bus = min(bus, ll_cap)
            elif protocol == "LL128" and graph.ring_ll128_cap > 0:
                bus = min(bus, graph.ring_ll128_cap)
            return bus * ranks / (2 * (ranks - 1))
        bus *= sp["tree_factor"]
        if graph.tree_cap > 0:
            bus = min(bus, graph.tree_cap)
        if protocol == "LL":
            bus /= sp["tree_ll_divisor"]
            if ll_cap > 0:
                bus = min(bus, ll_cap)
        elif protocol == "LL128":
            bus *= sp["tree_ll128_factor"][0 if nodes == 1 else 1]
            if graph.tree_ll128_cap > 0:
                bus = min(bus, graph.tree_ll128_cap)
        return bus * 0.5

    def nvls_bandwidth(self, algorithm: str, ranks: int, nodes: int,
                       graph: NcclGraph) -> float:
        """NCCL's algbw (bytes/s) of NVLS (``"in-network"``) or NVLSTree
        (``"in-network-tree"``) all-reduce, Simple, on ``ranks`` ranks over ``nodes`` nodes
        (NVIDIA/nccl src/tuning/nvls.cc of 2026, ncclTuningNvlsModelInit): a channel's
        ``min(bwIntra x nvlsEfficiency x (c - 1) / c x 2, bwInter (x 2 for NVLSTree on 2
        nodes or fewer), NVLSTree's per-channel cap)`` on ``c`` channels, times ``c``, times
        ``ranks / (2 (ranks - 1))``; 0 below 2 channels."""
        c = graph.nvls_channels
        if c < 2:
            return 0.0
        tree = algorithm == "in-network-tree"
        if graph.nvls_legacy:     # 2.27 and older: no nvlsEfficiency, no cap, x 5/6
            inter = graph.nvls_bw_inter / (2 if tree and nodes > 2 else 1)
            return c * min(graph.nvls_bw_intra, inter) * self.spec["nvls_legacy_ratio"]
        bw = min(graph.nvls_bw_intra * graph.nvls_efficiency * (c - 1) / c * 2,
                 graph.nvls_bw_inter * (2 if tree and nodes <= 2 else 1))
        if tree and graph.nvls_tree_cap > 0:
            bw = min(bw, graph.nvls_tree_cap)
        return bw * c * ranks / (2 * (ranks - 1))

    def ll_cap(self, nodes: int, graph: NcclGraph) -> float:
        """NCCL's ``llMaxBw`` (bytes/s; 0: none), the LL protocol's busbw cap of a ring or a
        tree: on one node the graph's (the GPU generation's), across nodes
        :meth:`net_ll_cap`'s."""
        if nodes <= 1:
            return graph.ll_cap
        return float(self.net_ll_cap(nodes))

    def net_ll_cap(self, nodes: Any) -> Any:
        """NCCL's ``llMaxBw`` (bytes/s) across ``nodes`` >= 2 of its nodes, a count or an
        array of counts (the model's steps:
        :func:`~netmodel.collectives.pipeline_fill.ll_cap_rate`): the data file's
        ``ll_max_bw_net``, its first entry on 2 nodes, its last on 3 or more (NCCL's row of
        hosts that are not AMD's).

        >>> (get_tuner(NCCL_TUNER).net_ll_cap([2, 3, 40]) / 1e9).tolist()
        [39.0, 20.4, 20.4]
        """
        import numpy as np

        caps = np.asarray(self.spec["ll_max_bw_net"], dtype=float)
        return caps[np.clip(nodes, 2, 1 + len(caps)).astype(np.intp) - 2]

    def latency(self, algorithm: str, protocol: str, ranks: int, nodes: int,
                legacy: bool = False) -> float:
        """NCCL's latency (seconds) of ``algorithm`` and ``protocol`` for an all-reduce on
        ``ranks`` ranks over ``nodes`` nodes (before the ring's plateau); ``legacy``: NVLSTree
        as NCCL 2.27 and older price it (:attr:`NcclGraph.nvls_legacy`)."""
        sp = self.spec
        if algorithm == "in-network":      # NVLS: its NVLink hw latency alone (one node)
            return sp["nvls_step_latency_nvlink"]
        if algorithm == "in-network-tree":
            net = sp["nvls_tree_step_latency_net_legacy" if legacy
                     else "nvls_tree_step_latency_net"]
            return (sp["nvls_base_latency"] + sp["nvls_step_latency_nvlink"]
                    + 2 * (int(nodes).bit_length() - 1) * net)
        intra = sp["step_latency_nvlink"][algorithm][protocol]
        inter = sp["step_latency_net"][algorithm][protocol]
        lat = sp["base_latency"][algorithm][protocol]
        if algorithm == "ring":
            steps, net = 2 * (ranks - 1), 2 * (nodes - 1)
            if nodes > 1:
                # each ring step across nodes pays the network's post overhead at least
                # (x 3 under Simple); one rank a node exposes the tree's network latency
                over = sp["net_overhead"] * (sp["net_overhead_simple"]
                                             if protocol == "Simple" else 1.0)
                intra = max(intra, over)
                if ranks == nodes:
                    inter = sp["step_latency_net"]["tree"][protocol]
            return lat + (steps - net) * intra + net * inter
        per_node = ranks // nodes
        return lat + 2 * ((per_node - 1) * intra + (int(nodes).bit_length() - 1) * inter)

    def predicted_time(self, algorithm: str, protocol: str, nbytes: float, ranks: int,
                       nodes: int, graph: NcclGraph) -> float:
        """NCCL's predicted seconds for an all-reduce of ``nbytes`` on ``ranks`` ranks over
        ``nodes`` nodes by ``algorithm`` (``"ring"``, ``"tree"``, ``"in-network"``: NVLS, or
        ``"in-network-tree"``: NVLSTree) and ``protocol``."""
        sp = self.spec
        bw = self.bandwidth(algorithm, protocol, ranks, nodes, graph)
        lat = self.latency(algorithm, protocol, ranks, nodes, graph.nvls_legacy)
        if algorithm == "tree":
            # log2i(nBytes >> 6), NCCL's integer log (0 for 0 and 1)
            log = max((int(nbytes) >> 6).bit_length() - 1, 0)
            table = sp["tree_correction"][protocol]
            if log < len(table):
                bw *= table[log]
        elif algorithm == "in-network-tree" and graph.nvls_tree_correction \
                and not graph.nvls_legacy:
            log = (int(nbytes) >> 6).bit_length() - 1     # nvls.cc: logSize >= 0 and < 24
            table = sp["nvls_tree_correction"]
            if 0 <= log < len(table):
                bw *= table[log]
        elif (algorithm == "ring" and protocol == "Simple" and nodes > 1
              and nbytes / (graph.channels * ranks) >= sp["ring_plateau_bytes"]):
            lat *= sp["ring_plateau"]
        return lat + nbytes / bw if bw > 0 else math.inf

    def choose(self, op: str, nbytes: float, ranks: int, nodes: int,
               available: Callable[[str, str], bool] | None = None, *,
               graph: NcclGraph | None = None, pairs: Collection | None = None
               ) -> tuple[str, str] | None:
        """NCCL's ``(algorithm, protocol)`` for ``op`` of ``nbytes`` on ``ranks`` ranks over
        ``nodes`` nodes, among the pairs ``available`` takes (all of Ring's and Tree's if
        None); None where it leaves the choice to the model's auto: another op than
        all-reduce, no ``graph``, one rank, more than ``max_ranks_per_node`` ranks a node,
        or a candidate it does not price in ``pairs`` (the ``(algorithm, protocol)`` pairs
        that run: CollNet, NVLS across nodes or the model's own)."""
        if op != "all-reduce" or graph is None or ranks < 2 or graph.busbw <= 0 \
                or ranks / nodes > self.spec["max_ranks_per_node"]:
            return None
        if pairs is not None and any(a not in NCCL_PRICED or (a == "in-network" and nodes > 1)
                                     for a, _ in pairs):
            return None     # CollNet, NVLS with CollNet across nodes, the model's own
        best, pick = math.inf, None
        for alg in NCCL_PRICED:
            for proto in NCCL_PROTOCOLS:
                if proto == "LL128" and not graph.ll128:
                    continue   # NCCL leaves LL128 off on these GPUs in this release
                if alg in _SIMPLE_ONLY and (proto != "Simple" or (nodes > 1) != (
                        alg == "in-network-tree")):
                    continue   # Simple only; NVLS on one node, NVLSTree across nodes
                if available is not None and not available(alg, proto):
                    continue
                t = self.predicted_time(alg, proto, float(nbytes), ranks, nodes, graph)
                if t < best:
                    best, pick = t, (alg, proto)
        return pick
