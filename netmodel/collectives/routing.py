"""Routes over a fabric graph: which directed links a transfer crosses, and how much of it.

A :class:`Router` indexes a fabric graph once (every undirected edge becomes two directed
links, numbered ``0 .. 2E-1``) and answers :meth:`Router.route` queries: the shortest paths
(in hops) from one node to another, with the traffic spread over all of them as equal-cost
multi-path (ECMP) routing does, hop by hop, each node splitting what it forwards over its
next hops in proportion to what each can carry on to the destination, ``min(its
bandwidth, the capacity behind it)`` (the fast path of tiered fabrics,
:mod:`~netmodel.collectives.updown`, splits by bandwidth where that is the same split, and
leaves the other pairs to the search). A route is a sparse vector: link ids and the
fraction of the transfer each link carries, plus the longest path latency (link latencies,
plus the traversal latency of every switch crossed).

Transit rules: switches forward traffic, optical circuit switches never do (a circuit is
its own GPU-GPU edge), and GPUs forward only when no switched path exists (direct-connect
fabrics such as rings, tori and meshes); where such a route could hand its traffic to
several GPUs that lend their switch port (PXN-like, after a NIC or leaf fails), it takes
one (:meth:`~netmodel.collectives.route_search.SearchedRoutes._one_forwarder`). One
exception is NCCL's: its send/recv (a step whose
:class:`~netmodel.collectives.steps.Pairs` are ``p2p``) follows PXN, a transfer to a peer in
another server leaving over NVLink through the NIC of its server's rank on the peer's rail
(:meth:`~netmodel.collectives.route_pxn.PxnRoutes.pxn_proxies`; off with ``pxn=False``,
a calibration's ``pxn``).

Speed: switched routes between two GPUs depend only on the switches each GPU is wired to
(its *signature*, with those cables), so a route is worked out once per pair of signatures
(a *template*: the first-hop and last-hop patterns, and the links in between as a few
shared *pieces*, see :mod:`netmodel.collectives.updown`) and reused for every GPU pair that
shares it. :meth:`Router.loads` and :meth:`Router.plan` route many transfers at once with
numpy: one signature lookup per GPU, the tier where two signatures' up-cones meet found for
all pairs of signatures together, and the pieces summed once each, scaled by the traffic
through them, however many transfers cross them (a step of a few transfers takes plain
loops over the same caches instead). Other routes (direct neighbours, GPU-forwarded paths,
switch endpoints) come from a bidirectional breadth-first search that stops where the two
balls meet.

The work is split by job: this module holds :class:`Router`, the fabric's index (nodes,
directed links, kinds, tiers) and single routes (:meth:`Router.route`), built from mixins:
:mod:`netmodel.collectives.route_plans` routes many transfers at once into plans and link
loads (:class:`~netmodel.collectives.route_plans.PlannedRoutes`), NCCL's PXN relays
through :mod:`netmodel.collectives.route_pxn` (:class:`~netmodel.collectives.route_pxn.PxnRoutes`);
:mod:`netmodel.collectives.route_bulk` the templated transfers of a large step, looked up
per pair of signatures with numpy (:class:`~netmodel.collectives.route_bulk.BulkRoutes`);
:mod:`netmodel.collectives.route_templates` the signatures, pieces and templates
(:class:`~netmodel.collectives.route_templates.TemplatedRoutes`);
:mod:`netmodel.collectives.route_search` the routes found pair by pair or towards
destinations (:class:`~netmodel.collectives.route_search.SearchedRoutes`); and
:mod:`netmodel.collectives.route_types` the small types they share (:class:`NoPath`,
:class:`Route`, :class:`Plan`), imported here. Routers shared between fabrics of one shape
are :mod:`netmodel.collectives.route_sharing`'s (``router_for``).

>>> import networkx as nx
>>> g = nx.Graph(name="star", spec="", gpus=2)
>>> g.add_node("sw", kind="switch", tier=0, radix=2, latency=1e-7, in_network_reduction=False)
>>> for i in range(2):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=1e-8, medium="copper", lanes=1)
>>> r = Router(g).route("gpu0", "gpu1")
>>> [Router(g).link_name(i) for i in r.links], r.hops, round(r.latency * 1e9)
([('gpu0', 'sw'), ('sw', 'gpu1')], 2, 120)
"""


from __future__ import annotations

from collections.abc import Collection, Hashable
from functools import cached_property
from itertools import chain, compress, repeat
from operator import itemgetter, methodcaller

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.memo import Lru
from netmodel.collectives.route_bulk import BulkRoutes
from netmodel.collectives.route_plans import PlannedRoutes
from netmodel.collectives.route_search import SearchedRoutes
from netmodel.collectives.route_templates import TemplatedRoutes
from netmodel.collectives.route_types import (
    DAG_NODES,
    KIND_CODE,
    KIND_GPU,
    KIND_OCS,
    KIND_OTHER,
    KIND_SWITCH,
    TRANSFER_FIELDS,
    Grow,
    NoPath,
    Plan,
    Ragged,
    Route,
    Rows,
    SetRows,
)
from netmodel.collectives.updown import UpDown

__all__ = ["NoPath", "Plan", "Route", "Router", "routed_builds"]

#: :func:`~netmodel.collectives.route_sharing.router_for` shares routes between fabrics of up to this many nodes (beyond, a
#: fabric is rarely built twice in one run, and its router is large) ...
_SHAPE_NODES = 8192
#: The most cells of a router's per-GPU port tables: one a GPU's switch port, all GPUs'
#: together (``NETMODEL_MAX_PORT_CELLS`` overrides). Each cell is about 24 bytes (the GPUs'
#: links to their switches, their up ports in signature order, 8 each, and at most as many
#: signatures' switches, 8), so 2.4 GB at the limit; the shipped fabrics use 1-8 ports a
#: GPU (2,000,000 GPUs x 8 planes: 16,000,000). The tables were GPUs x the most ports of one
#: GPU, padded: one GPU wired to 20,000 NVSwitches among 20,000 GPUs asked 400,000,000
#: cells (9.6 GB); one cell a port since ``_port_links`` and ``_si_sw`` (a
#: :class:`~netmodel.collectives.route_types.SetRows`), it asks 59,999.
MAX_PORT_CELLS = 100_000_000
#: The most directed links (two a cable) of a fabric a router indexes
#: (``NETMODEL_MAX_ROUTER_LINKS`` overrides), counted before any array is made: about 75
#: bytes each at the peak of the index (a full mesh of 2,000 GPUs, 3,998,000 links: 0.30 GB
#: beside the fabric's 0.83 GB, some 200 bytes a link), so some 2.75 GB with the fabric at
#: the limit. A full mesh of 4,000 GPUs, 15,996,000 links, died building its index under 4 GB
#: (a MemoryError past the fabric's 3.3 GB); the shipped fabrics have at most about a
#: million.
MAX_ROUTER_LINKS = 10_000_000


def routed_builds():
    """A block whose fabric builds are for routing (a collective costed on them): each
    refuses, before allocating, a fabric whose directed links (two an edge) pass the most a
    router indexes (``NETMODEL_MAX_ROUTER_LINKS``,
    :data:`netmodel.collectives.routing.MAX_ROUTER_LINKS`), as the router would once it
    was built (``collective --fabric full-mesh:n=4000``: 117 s and 3.2 GB built, then
    refused); the fabric limits still apply (:func:`topologies.limits.capped`).

    >>> from topologies.specs import build
    >>> with routed_builds():
    ...     build("full-mesh:n=4000")
    Traceback (most recent call last):
    compute.errors.UserError: full-mesh: the fabric would have about 4,000 nodes and 7,998,000 edges, over the limit of 2,000,000 nodes and 5,000,000 edges; routing it would index two directed links an edge, over the 10,000,000 a router indexes: use a smaller fabric, or raise NETMODEL_MAX_ROUTER_LINKS
    """
    from compute.limits import setting
    from topologies.limits import capped, max_nodes

    limit = setting("NETMODEL_MAX_ROUTER_LINKS", MAX_ROUTER_LINKS)
    return capped(max_nodes(), limit // 2,
                  why=f"routing it would index two directed links an edge, over the "
                      f"{limit:,} a router indexes: use a smaller fabric, or raise "
                      f"NETMODEL_MAX_ROUTER_LINKS")


def _split_key(bw: np.ndarray) -> bytes:
    """The link bandwidths as routes read them: only the ratios of bandwidths matter (ECMP
    splits, signatures), and a power-of-two factor changes none of their bits, so the
    bandwidths are scaled by a power of two to put the largest in ``[0.5, 1)`` (exact when
    the scaled values stay normal numbers; otherwise they are kept as they are)."""
    if len(bw) and np.isfinite(bw).all() and (bw > 0).all():
        e = int(np.frexp(bw.max())[1])
        scaled = np.ldexp(bw, -e)
        if (scaled >= np.finfo(float).tiny).all() and np.array_equal(np.ldexp(scaled, e), bw):
            return b"s" + scaled.tobytes()
    return b"r" + bw.tobytes()


class Router(PlannedRoutes, BulkRoutes, TemplatedRoutes, SearchedRoutes):
    """Shortest-path ECMP routing over one fabric graph, with caches.

    Parameters
    ----------
    graph : networkx.Graph
        A fabric obeying :mod:`topologies.schema`. The router reads it once; do not mutate it
        afterwards.
    pxn : bool
        Route NCCL's send/recv as PXN sends it (NCCL's default); False: through each
        GPU's own ports (``NCCL_PXN_DISABLE=1``).

    Attributes
    ----------
    bandwidth : numpy.ndarray
        Bytes/s per directed link.
    scaleout : numpy.ndarray
        True for links that touch a switch of tier >= 1 (scale-out network); False for the
        scale-up side (GPU-GPU links and links to tier-0 switches).
    """

    def __init__(self, graph: nx.Graph, *, pxn: bool = True) -> None:
        from compute.limits import check, setting

        adj = graph._adj
        # each node's neighbours: a cable counted at both its ends (a self-loop at its one)
        counts = np.fromiter(map(len, adj.values()), np.int64, count=len(adj))
        entries = int(counts.sum())
        # as many directed links as entries plus self-loops, so at most twice the entries:
        # counted (networkx's number_of_edges, 2.4 ms on a 16,384-GPU fat tree) only where
        # that could pass the limit
        limit = setting("NETMODEL_MAX_ROUTER_LINKS", MAX_ROUTER_LINKS)
        check(f"routing {graph.graph.get('name') or 'the fabric'}", "directed links (two a "
              "cable, about 75 bytes each in the router's index beside some 200 of the "
              "fabric's)", entries if 2 * entries <= limit else 2 * graph.number_of_edges(),
              MAX_ROUTER_LINKS, "NETMODEL_MAX_ROUTER_LINKS", "use a smaller fabric")
        self.graph = graph
        self._adj = adj
        nodes = list(graph)
        self._nodes = nodes
        nn = len(nodes)
        nid = dict(zip(nodes, range(nn), strict=True))
        self._nid = nid
        data = graph._node
        kind_list = [d.get("kind") for d in data.values()]
        self._kind_list = kind_list  # self.kind, the dict, is built on first use
        code = np.fromiter(map(KIND_CODE.get, kind_list, repeat(KIND_OTHER, nn)), np.int8,
                           count=nn)
        self._code = code
        is_sw = code == KIND_SWITCH
        sw_mask = is_sw.tolist()
        switches = list(compress(nodes, sw_mask))
        sdata = list(compress(data.values(), sw_mask))
        self._switch_latency = dict(zip(switches, map(float, [d.get("latency", 0.0)
                                                              for d in sdata]), strict=True))
        tiers = dict(zip(switches, [d.get("tier", 0) for d in sdata], strict=True))
        self.tier = tiers
        tier_arr = np.zeros(nn)
        if tiers:
            tier_arr[is_sw] = np.fromiter(tiers.values(), float, count=len(tiers))
        # the edges in networkx's order (graph.edges(): each node's neighbours in turn, an
        # edge listed by the first of its two nodes), read without its views
        ends = np.fromiter(map(nid.__getitem__, chain.from_iterable(adj.values())), np.int64,
                           count=entries)
        starts = None
        if list(adj) == nodes:  # adjacency in node order (as networkx keeps it)
            first = np.repeat(np.arange(nn, dtype=np.int64), counts)
            keep = ends >= first
        else:
            starts = np.fromiter(map(nid.__getitem__, adj), np.int64, count=len(adj))
            first = np.repeat(starts, counts)
            rank = np.empty(nn, dtype=np.int64)
            rank[starts] = np.arange(len(starts))  # position of each node in adjacency order
            keep = rank[ends] >= rank[first]
        kept = keep.tolist()
        try:
            datas = list(compress(chain.from_iterable(map(dict.values, adj.values())), kept))
        except TypeError:  # a graph view: its neighbour maps are not dicts
            datas = list(compress(chain.from_iterable(map(methodcaller("values"),
                                                          adj.values())), kept))
        m = len(datas)
        u, v = first[keep], ends[keep]
        bw = np.fromiter(map(itemgetter("bandwidth"), datas), float, count=m)
        lat = np.fromiter(map(itemgetter("latency"), datas), float, count=m)
        del datas
        cu, cv = code[u], code[v]
        sw_u, sw_v = cu == KIND_SWITCH, cv == KIND_SWITCH
        both = sw_u & sw_v
        tu, tv = tier_arr[u], tier_arr[v]
        #: Whether every switch-to-switch link joins adjacent tiers (valley-free fast path).
        self.tiered = bool(np.all(np.abs(tu[both] - tv[both]) == 1))
        so = (sw_u & (tu >= 1)) | (sw_v & (tv >= 1)) | (cu == KIND_OCS) | (cv == KIND_OCS)
        src = np.empty(2 * m, dtype=np.int64)
        dst = np.empty(2 * m, dtype=np.int64)
        src[0::2], src[1::2] = u, v
        dst[0::2], dst[1::2] = v, u
        self._src, self._dst = src, dst
        #: Whether routes come from the kept shortest paths towards each destination (up to
        #: ``DAG_NODES`` nodes that links join: an OCS kept without circuits joins none, and
        #: 4,096 of them made a 128-GPU cell's circuits searched pair by pair), else from a
        #: search per pair (:mod:`~netmodel.collectives.route_search`) but on a torus of one
        #: bandwidth, whose pairs are walked many at once whatever its size
        #: (:meth:`~netmodel.collectives.route_dags.DagRoutes._spread_rows_torus`).
        self._dag_sized = int(np.count_nonzero(counts)) <= DAG_NODES   # nodes with a link
        #: Whether each node has a link to a GPU.
        self._gpu_linked = np.bincount(src[code[dst] == KIND_GPU], minlength=nn) > 0
        self.bandwidth = np.repeat(bw, 2)
        #: The bandwidths routes are split by (a router sharing another's routes: the
        #: other's, a power of two times its own; see :func:`~netmodel.collectives.route_sharing.router_for`).
        self._route_bw = self.bandwidth
        self.latency = np.repeat(lat, 2)
        self.scaleout = np.repeat(so, 2)
        n = max(nn, 1)
        self._n = n
        # link ids sorted by (source, destination): the two directions sorted as one array
        # (u -> v for edge k at k, v -> u at m + k; a stable sort, so a self-loop's 2k comes
        # before its 2k + 1 as in a sort of the interleaved keys)
        both_keys = np.concatenate([u * n + v, v * n + u])
        pos = np.argsort(both_keys, kind="stable")
        self._keys = both_keys[pos]
        order = 2 * pos
        order[pos >= m] -= 2 * m - 1  # v -> u of edge k: 2 (m + k) - (2m - 1) = 2k + 1
        self._order = order
        self._ports: dict = {}
        self._tier_arr = tier_arr
        self._group_ids: tuple[tuple[Hashable, ...], np.ndarray] | None = None
        self._pair_cache: dict = {}
        self._nicless: np.ndarray | None = None   # route_search: GPUs without a NIC
        self._every_gpu: bool | None = None   # route_search.hop_count: no switch at all
        self._stand_ins: dict = {}   # ... and the GPU whose NIC each uses
        self._scaleup: np.ndarray | None = None   # route_search: scale-up parts
        self._dags = Lru(512)   # route_search._dag's, read with get: the oldest dropped
        self._dag_np: dict = {}
        self._dag_bytes = 0   # route_dags: the bytes of _dag_np's arrays
        self._sw_lat_arr: np.ndarray | None = None
        self._nbrcsr: tuple | None = None
        self._torus: tuple | None = None   # route_dags._torus_shifts (() where none)
        self._torus_walk: tuple | None = None   # route_dags._torus_steps
        self._components: dict[Hashable, int] | None = None
        is_gpu = code == KIND_GPU
        gpu_n = np.flatnonzero(is_gpu)
        self.gpu_list = list(compress(nodes, is_gpu.tolist()))
        # PXN (route_pxn.PxnRoutes.pxn_proxies): the GPUs' server labels and device
        # indices (topologies.degrade.keep_devices), read here (routes depend on them: PXN's
        # lenders, and route_search._stand_in's choice of a server's own GPU, PXN on or
        # off), the rest worked out on first use
        self._pxn_on = bool(pxn)
        self._pxn: tuple | None = None
        glist = self.gpu_list   # labelled where the first or last GPU is (each read then)
        self._gpu_servers = self._gpu_devices = None
        if glist and any("server" in data[x] for x in (glist[0], glist[-1])):
            gdata = list(map(data.__getitem__, glist))
            self._gpu_servers = [d.get("server") for d in gdata]
            if any("device" in d for d in gdata):
                self._gpu_devices = [d.get("device") for d in gdata]
        self._gidx = np.full(nn, -1, dtype=np.int64)
        self._gidx[gpu_n] = np.arange(len(gpu_n))
        self._gpu_n = gpu_n
        # signatures (the switches a GPU is wired to, with those cables), filled on demand
        to_switch = (code[src] == KIND_GPU) & (code[dst] == KIND_SWITCH)
        width = np.bincount(self._gidx[src[to_switch]], minlength=len(gpu_n))
        self._width = int(width.max()) if len(width) else 0
        if len(gpu_n):
            from compute.limits import check

            most = self.gpu_list[int(np.argmax(width))]
            check(f"routing {len(gpu_n):,} GPUs, {most!r} wired to {self._width:,} switches "
                  f"(the most)", "cells of the per-GPU port tables (one a GPU's switch port, "
                  "about 24 bytes each)", int(width.sum()), MAX_PORT_CELLS,
                  "NETMODEL_MAX_PORT_CELLS", "wire the GPUs to fewer switches")
        self._gpu_sig = np.full(len(gpu_n), -1, dtype=np.int64)
        gl = np.flatnonzero(to_switch)
        gl = gl[np.argsort(self._gidx[src[gl]], kind="stable")]
        self._gport_link = gl  # GPU -> switch links, grouped by GPU
        self._gport_ptr = np.concatenate([[0], np.cumsum(width)]).astype(np.int64)
        #: Each GPU's links up to its switches in its signature's order (by switch name),
        #: GPU g's at ``_gport_ptr[g]:_gport_ptr[g + 1]``, filled with its signature (-1
        #: before; :meth:`_port_index`, :meth:`_port_rows`); a link down from the switch is
        #: its up link ``^ 1``. Flat, not GPUs x the most ports of one GPU: one GPU wired to
        #: 4,000 NVSwitches among 4,000 GPUs made two such tables of 128 MB each.
        self._port_links = np.full(len(gl), -1, dtype=np.int64)
        #: Every GPU's port count where all GPUs have the same (the table is then a
        #: ``GPUs x width`` array, :meth:`_port_table`), else 0.
        self._port_width = self._width if len(width) and self._width and \
            int(width.min()) == self._width else 0
        self._sig_ids: dict = {}
        self._sigs: list = []
        # route_templates._sig_ports: each signature's switches' positions and cables,
        # aligned with _si_sw's keys; tier and switch latency by node number
        self._sp_pos, self._sp_bw, self._sp_lat = (Grow(np.int64), Grow(float),
                                                   Grow(float))
        self._sp_node: tuple | None = None
        self._sp_done = 0
        # routes shared by GPUs wired alike, and the pieces they are made of
        self._top = int(max(tiers.values(), default=0))
        T = self._top + 1
        self._piece_links: list = []
        self._piece_weights: list = []
        self._piece_scaleout: list = []
        self._flat: tuple[int, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._cover: tuple[int, np.ndarray, np.ndarray] | None = None
        # first- and last-hop patterns: positions in a signature and traffic shares, flat
        self._specs_pos = Ragged(np.int64)
        self._specs_w = Ragged(float)
        self._specs_one = True   # every pattern one position (fat trees, leaf-spines)
        self._lists = Rows(-1, np.int64)
        self._spec_py: list = []
        self._spec_ids: dict = {}  # each pattern's id, by (positions, weights)
        self._list_py: list = []
        self._add_list([])  # list 0: no pieces
        self._si_sw = SetRows(n)   # each signature's switches (node numbers)
        self._si_info = Rows(0, np.int64, 4)
        self._si_state = Rows(-1, np.int64, T)
        self._si_set = Rows(-1, np.int64, T)
        self._si_dead = Rows(0, np.int8, T)
        self._si_up = Rows(-1, np.int64, T)
        self._si_upso = Rows(0, np.int8, T)
        self._si_cone: list = []
        self._owner: dict = {}
        self._claimed: set = set()
        self._partition = [True] * T
        self._full: dict = {}
        self._pair_rows: dict = {}
        self._known_keys = np.zeros(0, dtype=np.int64)
        self._known_index: np.ndarray | None = None
        self._known_fields = {k: np.zeros(0, dtype=bool if k == "scaleout" else float
                                          if k == "latency" else np.int64) for k in TRANSFER_FIELDS}
        # the pieces of every row of the known table, worked out once per table (its
        # fields are replaced, never written in place, when pairs are learned; rows of
        # lists are never changed once added): (the table's fields, flat, first, count)
        self._row_pieces: tuple | None = None
        self._code_list: list[int] | None = None
        self._lat_list: list[float] | None = None  # latency and scaleout as lists
        self._bw_list: list[float] | None = None  # _route_bw as a list
        self._flows: dict = {}  # maximum flows, by pattern (FlowRoutes._max_flow, route_flows)
        self._flows_bytes = 0  # the bytes they take
        self._nbr_rows: dict | None = None  # per node: (neighbour, link, bandwidth) rows
        self._transit_nbrs: dict | None = None  # per node: neighbours that may forward
        self._so_list: list[bool] | None = None
        self._learned = 0
        self._sig_rep: list = []
        self._plans: dict = {}
        self._plan_bytes = 0  # the arrays of the plans kept, in bytes
        # routes of transfers not routed by template, by pair of node numbers (source *
        # nodes + destination): entry ids (-1: no path) into flat arrays, routes one after
        # the other
        self._rt_id: dict[int, int] = {}
        self._rt_ptr = Grow(np.int64)
        self._rt_ptr.extend(np.zeros(1, dtype=np.int64))
        self._rt_links = Grow(np.int64)
        self._rt_weights = Grow(float)
        self._rt_latency = Grow(float)
        self._rt_hops = Grow(np.int64)
        self._rt_scaleout = Grow(bool)
        self._halves: dict = {}
        self._meet_lat: dict = {}
        self._spec_ratios: dict = {}  # highest share over bandwidth, by (pattern, signature)
        self._list_ratios: dict = {}  # highest share over bandwidth, by list of pieces
        self._cone_tables = UpDown()  # holds no router: see _updown
        self._loads_kept: dict = {}  # link_loads, by transfers
        self._loads_size = 0
        #: What routes depend on (:func:`~netmodel.collectives.route_sharing.router_for`), for fabrics of up to
        #: ``_SHAPE_NODES`` nodes; None beyond.
        self._shape = None if nn > _SHAPE_NODES else (
            tuple(nodes), tuple(kind_list), tuple(tiers.items()),
            tuple(self._switch_latency.items()), counts.tobytes(), ends.tobytes(),
            None if starts is None else starts.tobytes(), _split_key(self.bandwidth),
            self.latency.tobytes(), self._pxn_on,
            None if self._gpu_servers is None else tuple(self._gpu_servers),
            None if self._gpu_devices is None else tuple(self._gpu_devices))

    @cached_property
    def kind(self) -> dict[Hashable, str | None]:
        """``{node: its kind}`` (``None`` where it has none), built on first use."""
        return dict(zip(self._nodes, self._kind_list, strict=True))

    # ----------------------------------------------------------------- small helpers
    @property
    def n_links(self) -> int:
        """Number of directed links (twice the graph's edges)."""
        return len(self._src)

    @property
    def _updown(self) -> UpDown:
        """The cone routing of this router's tiers, links and pieces: its tables
        (``_cone_tables``, shared with the routers sharing this one's routes) bound to this
        router for the call, so that the tables hold no router (no reference cycle: a
        router is freed when dropped, not at the cyclic collector's next pass)."""
        return self._cone_tables.bind(self)

    def _lids(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Link ids of ``u[i] -> v[i]`` (node numbers); -1 where there is no such link."""
        key = np.asarray(u, dtype=np.int64) * self._n + np.asarray(v, dtype=np.int64)
        if not len(self._keys):
            return np.full(key.shape, -1, dtype=np.int64)
        i = np.minimum(np.searchsorted(self._keys, key), len(self._keys) - 1)
        return np.where(self._keys[i] == key, self._order[i], -1)

    def link_id(self, u: Hashable, v: Hashable) -> int:
        """The id of the directed link ``u -> v``."""
        a, b = self._nid.get(u), self._nid.get(v)
        lid = -1 if a is None or b is None else int(self._lids(np.array([a]), np.array([b]))[0])
        if lid < 0:
            raise UserError(f"there is no link {u!r} - {v!r} in the fabric")
        return lid

    def link_name(self, link: int) -> tuple[Hashable, Hashable]:
        """``(u, v)`` for directed link id ``link``."""
        link = int(link)
        return self._nodes[self._src[link]], self._nodes[self._dst[link]]

    def _out_links(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The links out of each of ``nodes`` (node numbers, repeats allowed), found in the
        link index (a search a node, nothing fabric-wide): ``(count per node, link ids)``,
        each node's links ascending, node after node."""
        keys = self._keys
        lo = np.searchsorted(keys, nodes * self._n)
        count = np.searchsorted(keys, (nodes + 1) * self._n) - lo
        total = int(count.sum())
        owner = np.repeat(np.arange(len(nodes)), count)
        links = self._order[np.repeat(lo - (np.cumsum(count) - count), count)
                            + np.arange(total)]
        return count, links[np.lexsort((links, owner))]

    def _up_links(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The links from each of ``nodes`` (node numbers of switches, repeats allowed) to
        switches one tier up: ``(count per node, link ids)``, each node's ascending, node
        after node (found in the link index: the fabric's 98,304 links were sifted once a
        router, a whole-fabric pass on the first 64-GPU collective of a 16,384-GPU fat
        tree)."""
        count, links = self._out_links(nodes)
        code, tier = self._code, self._tier_arr
        src, dst = self._src[links], self._dst[links]
        up = (code[src] == KIND_SWITCH) & (code[dst] == KIND_SWITCH) & (tier[dst] == tier[src] + 1)
        owner = np.repeat(np.arange(len(nodes)), count)
        return np.bincount(owner[up], minlength=len(nodes)), links[up]

    def _port(self, u) -> dict:
        """``{neighbour: link id of u -> neighbour}`` (cached)."""
        hit = self._ports.get(u)
        if hit is None:
            nbrs = list(self._adj[u])
            a = np.full(len(nbrs), self._nid[u], dtype=np.int64)
            b = np.fromiter(map(self._nid.__getitem__, nbrs), np.int64, count=len(nbrs))
            hit = self._ports[u] = dict(zip(nbrs, self._lids(a, b).tolist(), strict=True))
        return hit

    def _port_table(self) -> np.ndarray | None:
        """The GPUs' up ports as a ``GPUs x width`` array (a view of ``_port_links``) where
        every GPU has the same number of switch ports; else None."""
        w = self._port_width
        return self._port_links.reshape(-1, w) if w else None

    def _port_index(self, g: np.ndarray, pos: np.ndarray | int) -> np.ndarray:
        """Where in ``_port_links`` port ``pos[i]`` of GPU ``g[i]`` (GPU indices) is."""
        w = self._port_width
        return g * w + pos if w else self._gport_ptr[g] + pos

    def _port_rows(self, g: np.ndarray, down: bool = False) -> list[list[int]]:
        """The up ports of GPUs ``g`` (GPU indices), each GPU's as a list (``down``: the
        links back down to it, each up link ``^ 1``)."""
        table = self._port_table()
        if table is not None:
            rows = table[g]
            return (rows ^ 1 if down else rows).tolist()
        links, ptr = self._port_links, self._gport_ptr
        flip = 1 if down else 0
        return [(links[ptr[i]:ptr[i + 1]] ^ flip).tolist() for i in g.tolist()]

    def is_gpu(self, node: Hashable) -> bool:
        return self.kind.get(node) == "gpu"

    def connected(self, a: Hashable, b: Hashable) -> bool:
        """Whether ``a`` and ``b`` are in the same connected component (any path at all)."""
        if self._components is None:
            comp = {}
            for i, c in enumerate(nx.connected_components(self.graph)):
                for n in c:
                    comp[n] = i
            self._components = comp
        return self._components.get(a) == self._components.get(b) and a in self._components

    def component_of(self, node: Hashable) -> int:
        """A label of ``node``'s connected component (equal labels: connected)."""
        self.connected(node, node)
        return self._components[node]

    def _nid_checked(self, node: Hashable) -> int:
        i = self._nid.get(node)
        if i is None:
            raise UserError(f"node {node!r} is not in the fabric")
        return i

    def node_numbers(self, nodes: Collection[Hashable]) -> np.ndarray:
        """The router's numbers of ``nodes`` (UserError for a node not in the fabric)."""
        try:   # the dict's own lookup, no Python call per node (16,384 GPUs a costing)
            return np.fromiter(map(self._nid.__getitem__, nodes), np.int64, count=len(nodes))
        except KeyError:   # a node not in the fabric: named by the checked lookup
            return np.fromiter(map(self._nid_checked, nodes), np.int64, count=len(nodes))

    # ----------------------------------------------------------------- routing
    def learn_routes(self, src: Collection[Hashable], dst: Collection[Hashable]) -> None:
        """Learn at once what :meth:`route` of each pair ``src[i] -> dst[i]`` learns one
        pair at a time (the route fields of their GPUs' signature pairs, in one numpy pass:
        one pass per pair made the footprints of a 16,384-GPU rail-optimized cell's 24,576
        pairs 50 s); each :meth:`route` after is a lookup. The routes are the same. A node
        not in the fabric, or ``src`` and ``dst`` of different lengths, is a UserError.

        >>> from topologies.specs import build
        >>> g = build("fat-tree:k=4")
        >>> r, one_by_one = Router(g), Router(g)
        >>> r.learn_routes(["gpu0", "gpu0"], ["gpu5", "gpu15"])
        >>> [sorted(map(r.link_name, r.route("gpu0", b).links))
        ...  == sorted(map(one_by_one.link_name, one_by_one.route("gpu0", b).links))
        ...  for b in ("gpu5", "gpu15")]
        [True, True]
        """
        s, d = self.node_numbers(src), self.node_numbers(dst)
        if len(s) != len(d):
            raise UserError(f"src and dst must be as long, got {len(s)} and {len(d)}")
        if not len(s):
            return
        _, s_on, d_on = self._switched(s, d)
        if not len(s_on):
            return
        gs, gd = self._gidx[s_on], self._gidx[d_on]
        ends = np.concatenate([gs, gd])
        unsigned = ends[self._gpu_sig[ends] < 0]
        if len(unsigned):
            self._ensure_sigs(np.unique(unsigned))
        sig = self._gpu_sig
        self._learn_pairs((sig[gs] << 32) | sig[gd])

    def route(self, src: Hashable, dst: Hashable) -> Route | None:
        """The ECMP route from ``src`` to ``dst``, or None when no path joins them."""
        hit = self._pair_cache.get((src, dst))
        if hit is not None:
            return hit
        kind = self.kind
        if src not in kind or dst not in kind:
            raise UserError(f"node {src if src not in kind else dst!r} is not in the fabric")
        if src == dst or kind[src] != "gpu" or kind[dst] != "gpu" or dst in self._adj[src]:
            return self._resolve(src, dst)
        gs, gd = self._gidx[self._nid[src]], self._gidx[self._nid[dst]]
        if self._gpu_sig[gs] < 0 or self._gpu_sig[gd] < 0:
            self._ensure_sigs(np.array([gs, gd]))
        key = (int(self._gpu_sig[gs]) << 32) | int(self._gpu_sig[gd])
        row = self._pair_rows.get(key)
        if row is None:
            self._learn_pairs(np.array([key], dtype=np.int64))
            row = self._pair_rows[key]
        kd, h, tl, l1, l2, latency, hops, scaleout = row
        if kd < 0:
            return self._resolve(src, dst)
        pos, w = self._spec_py[h]
        tpos, tw = self._spec_py[tl]
        links, ptr = self._port_links, self._gport_ptr
        up, down = links[ptr[gs]:ptr[gs + 1]], links[ptr[gd]:ptr[gd + 1]]
        pieces = self._list_py[l1] + self._list_py[l2]
        lk = [up[pos], down[tpos] ^ 1] + [self._piece_links[i] for i in pieces]
        wt = [np.array(w), np.array(tw)] + [self._piece_weights[i] for i in pieces]
        route = Route(np.concatenate(lk), np.concatenate(wt), float(latency), int(hops),
                      bool(scaleout))
        self._pair_cache[(src, dst)] = route
        return route
