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
one (:meth:`~netmodel.collectives.route_search.SearchedRoutes._one_forwarder`).

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

The work is split by job: this module holds :class:`Router` (the fabric's index, and
routing many transfers at once); :mod:`netmodel.collectives.route_templates` the
signatures, pieces and templates (:class:`~netmodel.collectives.route_templates.TemplatedRoutes`);
:mod:`netmodel.collectives.route_search` the routes found pair by pair or towards
destinations (:class:`~netmodel.collectives.route_search.SearchedRoutes`); and
:mod:`netmodel.collectives.route_types` the small types they share (:class:`NoPath`,
:class:`Route`, :class:`Plan`), imported here.

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

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from functools import cached_property
from itertools import chain, compress, repeat
from operator import itemgetter, methodcaller
from typing import TYPE_CHECKING, Literal, overload

import networkx as nx
import numpy as np

from compute.errors import UserError
from netmodel.collectives.route_search import SearchedRoutes
from netmodel.collectives.route_templates import TemplatedRoutes
from netmodel.collectives.route_types import (
    _DAG_NODES,
    _FIELDS,
    _GPU,
    _KIND_CODE,
    _OCS,
    _OTHER,
    _PLAN_FIELDS,
    _SWITCH,
    NoPath,
    Plan,
    Route,
    _Grow,
    _Rows,
)
from netmodel.collectives.steps import Pairs
from netmodel.collectives.updown import UpDown

if TYPE_CHECKING:
    #: Transfers ``(src, dst, fraction of n)``: a sequence of triples, or :class:`Pairs`.
    Transfers = Pairs | Sequence[tuple[Hashable, Hashable, float]]
    #: What :meth:`Router.loads` returns: links, coefficients, latency, scale-out.
    Loads = tuple[np.ndarray, np.ndarray, float, bool]

__all__ = ["NoPath", "Plan", "Route", "Router", "clear_shared_routes", "router_for"]

#: From this many pairs routed on their own at once, the walks over the kept shortest paths
#: are done together with numpy (:meth:`Router._spread_many`); fewer, one by one (each
#: level of the numpy walk costs a few tens of numpy calls, whatever the pairs).
_WALK_MANY = 64
#: The most bytes of routed plans a router keeps (:meth:`Router._keep_plan`), 64 MiB: 256
#: plans of every instance's pairwise all-to-all step on 16,384 GPUs at once (1.6 MB each)
#: plus a direct step's (389 MB) held 0.8 GB that ``compare --instances all`` on a 16k
#: fabric never read again.
_PLAN_BYTES = 1 << 26


def _plan_bytes(kept: tuple) -> int:
    """Bytes of the arrays of a kept plan (:meth:`Router._keep_plan`)."""
    return sum(x.nbytes for x in kept if isinstance(x, np.ndarray))


#: The most signature pairs whose route fields a router keeps in its table for large steps.
_KNOWN_PAIRS = 1 << 22
#: Up to this many pairs of signatures (cells of 8 bytes), the table is looked up through a
#: square index rather than searched.
_DENSE_PAIRS = 1 << 20
#: :meth:`Router._repeat_pieces` gathers rows of pieces padded to the longest when no row
#: has more than this many.
_PADDED_PIECES = 4
#: :func:`router_for` shares routes between fabrics of up to this many nodes (beyond, a
#: fabric is rarely built twice in one run, and its router is large) ...
_SHAPE_NODES = 8192
#: ... and keeps the routers of this many shapes, the least recently used dropped first.
_SHAPES = 16
_SHARED: OrderedDict = OrderedDict()
#: The most link entries :meth:`Router.link_loads` keeps per shape (16 bytes each).
_KEPT_LOADS = 1 << 20


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


def _add_template(out: tuple, head: tuple, tail: tuple, pieces: list, t: int,
                  up: list, down: list) -> None:
    """Append transfer ``t``'s templated route to ``out`` = (hop transfer, hop link, hop
    weight, piece transfer, piece): the climb ``head`` over its GPU's up ports ``up``,
    the descent ``tail`` over the far GPU's down ports ``down``, and the shared
    ``pieces`` between them."""
    hi, hl, hw, pi, po = out
    pos, w = head
    hi += [t] * len(pos)
    hl += [up[x] for x in pos]
    hw += w
    pos, w = tail
    hi += [t] * len(pos)
    hl += [down[x] for x in pos]
    hw += w
    pi += [t] * len(pieces)
    po += pieces


class Router(TemplatedRoutes, SearchedRoutes):
    """Shortest-path ECMP routing over one fabric graph, with caches.

    Parameters
    ----------
    graph : networkx.Graph
        A fabric obeying :mod:`topologies.schema`. The router reads it once; do not mutate it
        afterwards.

    Attributes
    ----------
    bandwidth : numpy.ndarray
        Bytes/s per directed link.
    scaleout : numpy.ndarray
        True for links that touch a switch of tier >= 1 (scale-out network); False for the
        scale-up side (GPU-GPU links and links to tier-0 switches).
    """

    def __init__(self, graph: nx.Graph) -> None:
        self.graph = graph
        self._adj = graph._adj
        nodes = list(graph)
        self._nodes = nodes
        nn = len(nodes)
        nid = dict(zip(nodes, range(nn), strict=True))
        self._nid = nid
        data = graph._node
        kind_list = [d.get("kind") for d in data.values()]
        self._kind_list = kind_list  # self.kind, the dict, is built on first use
        code = np.fromiter(map(_KIND_CODE.get, kind_list, repeat(_OTHER, nn)), np.int8,
                           count=nn)
        self._code = code
        is_sw = code == _SWITCH
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
        adj = graph._adj
        counts = np.fromiter(map(len, adj.values()), np.int64, count=len(adj))
        ends = np.fromiter(map(nid.__getitem__, chain.from_iterable(adj.values())), np.int64,
                           count=int(counts.sum()))
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
        sw_u, sw_v = cu == _SWITCH, cv == _SWITCH
        both = sw_u & sw_v
        tu, tv = tier_arr[u], tier_arr[v]
        #: Whether every switch-to-switch link joins adjacent tiers (valley-free fast path).
        self.tiered = bool(np.all(np.abs(tu[both] - tv[both]) == 1))
        so = (sw_u & (tu >= 1)) | (sw_v & (tv >= 1)) | (cu == _OCS) | (cv == _OCS)
        src = np.empty(2 * m, dtype=np.int64)
        dst = np.empty(2 * m, dtype=np.int64)
        src[0::2], src[1::2] = u, v
        dst[0::2], dst[1::2] = v, u
        self._src, self._dst = src, dst
        #: Whether each node has a link to a GPU.
        self._gpu_linked = np.bincount(src[code[dst] == _GPU], minlength=nn) > 0
        self.bandwidth = np.repeat(bw, 2)
        #: The bandwidths routes are split by (a router sharing another's routes: the
        #: other's, a power of two times its own; see :func:`router_for`).
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
        self._upcsr: tuple[np.ndarray, np.ndarray] | None = None
        self._group_ids: tuple[tuple[Hashable, ...], np.ndarray] | None = None
        self._pair_cache: dict = {}
        self._dags: dict = {}
        self._dag_np: dict = {}
        self._sw_lat_arr: np.ndarray | None = None
        self._nbrcsr: tuple | None = None
        self._components: dict[Hashable, int] | None = None
        is_gpu = code == _GPU
        gpu_n = np.flatnonzero(is_gpu)
        self.gpu_list = list(compress(nodes, is_gpu.tolist()))
        self._gidx = np.full(nn, -1, dtype=np.int64)
        self._gidx[gpu_n] = np.arange(len(gpu_n))
        self._gpu_n = gpu_n
        # signatures (the switches a GPU is wired to, with those cables), filled on demand
        to_switch = (code[src] == _GPU) & (code[dst] == _SWITCH)
        width = np.bincount(self._gidx[src[to_switch]], minlength=len(gpu_n))
        self._width = int(width.max()) if len(width) else 0
        self._gpu_sig = np.full(len(gpu_n), -1, dtype=np.int64)
        gl = np.flatnonzero(to_switch)
        gl = gl[np.argsort(self._gidx[src[gl]], kind="stable")]
        self._gport_link = gl  # GPU -> switch links, grouped by GPU
        self._gport_ptr = np.concatenate([[0], np.cumsum(width)]).astype(np.int64)
        self._ports_up = np.full((len(gpu_n), max(self._width, 1)), -1, dtype=np.int64)
        self._ports_down = np.full((len(gpu_n), max(self._width, 1)), -1, dtype=np.int64)
        self._sig_ids: dict = {}
        self._sigs: list = []
        # routes shared by GPUs wired alike, and the pieces they are made of
        self._top = int(max(tiers.values(), default=0))
        T = self._top + 1
        self._piece_links: list = []
        self._piece_weights: list = []
        self._piece_scaleout: list = []
        self._flat: tuple[int, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._cover: tuple[int, np.ndarray, np.ndarray] | None = None
        self._specs_pos = _Rows(-1, np.int64)
        self._specs_w = _Rows(0.0, float)
        self._lists = _Rows(-1, np.int64)
        self._spec_py: list = []
        self._list_py: list = []
        self._add_list([])  # list 0: no pieces
        self._si_sw = _Rows(-1, np.int64)
        self._si_info = _Rows(0, np.int64, 4)
        self._si_state = _Rows(-1, np.int64, T)
        self._si_set = _Rows(-1, np.int64, T)
        self._si_dead = _Rows(0, np.int8, T)
        self._si_up = _Rows(-1, np.int64, T)
        self._si_upso = _Rows(0, np.int8, T)
        self._si_cone: list = []
        self._owner: dict = {}
        self._claimed: set = set()
        self._partition = [True] * T
        self._full: dict = {}
        self._pair_rows: dict = {}
        self._known_keys = np.zeros(0, dtype=np.int64)
        self._known_index: np.ndarray | None = None
        self._known_fields = {k: np.zeros(0, dtype=bool if k == "scaleout" else float
                                          if k == "latency" else np.int64) for k in _FIELDS}
        # the pieces of every row of the known table, worked out once per table (its
        # fields are replaced, never written in place, when pairs are learned; rows of
        # lists are never changed once added): (the table's fields, flat, first, count)
        self._row_pieces: tuple | None = None
        self._code_list: list[int] | None = None
        self._lat_list: list[float] | None = None  # latency and scaleout as lists
        self._bw_list: list[float] | None = None  # _route_bw as a list
        self._flows: dict = {}  # maximum flows, by pattern (SearchedRoutes._max_flow)
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
        self._rt_ptr = _Grow(np.int64)
        self._rt_ptr.extend(np.zeros(1, dtype=np.int64))
        self._rt_links = _Grow(np.int64)
        self._rt_weights = _Grow(float)
        self._rt_latency = _Grow(float)
        self._rt_hops = _Grow(np.int64)
        self._rt_scaleout = _Grow(bool)
        self._halves: dict = {}
        self._meet_lat: dict = {}
        self._updown = UpDown(self)
        self._loads_kept: dict = {}  # link_loads, by transfers
        self._loads_size = 0
        #: What routes depend on (:func:`router_for`), for fabrics of up to
        #: ``_SHAPE_NODES`` nodes; None beyond.
        self._shape = None if nn > _SHAPE_NODES else (
            tuple(nodes), tuple(kind_list), tuple(tiers.items()),
            tuple(self._switch_latency.items()), counts.tobytes(), ends.tobytes(),
            None if starts is None else starts.tobytes(), _split_key(self.bandwidth),
            self.latency.tobytes())

    @cached_property
    def kind(self) -> dict[Hashable, str | None]:
        """``{node: its kind}`` (``None`` where it has none), built on first use."""
        return dict(zip(self._nodes, self._kind_list, strict=True))

    # ----------------------------------------------------------------- small helpers
    @property
    def n_links(self) -> int:
        """Number of directed links (twice the graph's edges)."""
        return len(self._src)

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

    def _up_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """Links from each switch to switches one tier up, grouped by node number:
        ``(pointer per node, link ids)`` (built on first use)."""
        if self._upcsr is None:
            code, tier = self._code, self._tier_arr
            src, dst = self._src, self._dst
            up = np.flatnonzero((code[src] == _SWITCH) & (code[dst] == _SWITCH)
                                & (tier[dst] == tier[src] + 1))
            up = up[np.argsort(src[up], kind="stable")]
            ptr = np.concatenate([[0], np.cumsum(np.bincount(src[up], minlength=self._n))])
            self._upcsr = (ptr.astype(np.int64), up)
        return self._upcsr

    def _port(self, u) -> dict:
        """``{neighbour: link id of u -> neighbour}`` (cached)."""
        hit = self._ports.get(u)
        if hit is None:
            nbrs = list(self._adj[u])
            a = np.full(len(nbrs), self._nid[u], dtype=np.int64)
            b = np.fromiter(map(self._nid.__getitem__, nbrs), np.int64, count=len(nbrs))
            hit = self._ports[u] = dict(zip(nbrs, self._lids(a, b).tolist(), strict=True))
        return hit

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

    def _describe(self, src: np.ndarray, dst: np.ndarray) -> dict:
        """How each transfer ``src[i] -> dst[i]`` (node numbers) is routed.

        Templated transfers (``kind`` 1: switched routes between two GPUs) get their
        first-hop and last-hop patterns (``head``, ``tail``: spec ids), the piece lists
        (``l1``, ``l2``), ``latency``, ``hops`` and ``scaleout``; the others (``kind`` -1:
        not two GPUs, the same GPU, direct neighbours, no switched route) are routed on
        their own. Everything is computed per distinct pair of signatures, with numpy.
        """
        T = len(src)
        idx, s_on, d_on = self._switched(src, dst)
        if idx is not None and not len(idx):
            return self._describe_default(T)
        gs, gd = self._gidx[s_on], self._gidx[d_on]
        sig = self._gpu_sig
        ss, sd = sig[gs], sig[gd]
        unsigned_s, unsigned_d = ss < 0, sd < 0
        if unsigned_s.any() or unsigned_d.any():  # the ends' GPUs, sources first
            self._ensure_sigs(np.concatenate([gs[unsigned_s], gd[unsigned_d]]))
            ss, sd = sig[gs], sig[gd]
        del unsigned_s, unsigned_d
        n_on = T if idx is None else len(idx)
        if n_on <= 64:  # few transfers: signature pairs seen before, from a dict
            out = self._describe_default(T)
            idx = np.arange(T) if idx is None else idx
            known = self._pair_rows
            keys = ((ss << 32) | sd).tolist()
            rows = [known.get(k) for k in keys]
            if None in rows:
                self._learn_pairs(np.array([k for k, r in zip(keys, rows, strict=True)
                                            if r is None], dtype=np.int64))
                rows = [known[k] for k in keys]
            for name, col in zip(_FIELDS, zip(*rows, strict=True), strict=True):
                out[name][idx] = col
            return out
        at = self._known_at(ss, sd, s_on, d_on)
        del ss, sd
        if idx is None:  # every transfer a GPU pair (the usual case)
            # what a plan keeps, and for _hops_and_pieces each transfer's row of the table
            # and GPUs (head, tail, l1 and l2 gathered there only if it needs them)
            rows = self._known_fields
            out = {k: rows[k][at] for k in ("kind", "latency", "scaleout")}
            out["_rows"], out["_gpus"] = (rows, at), (gs, gd)
        else:
            out = self._describe_default(T)
            for k, v in self._known_fields.items():
                out[k][idx] = v[at]
        return out

    def _switched(self, src: np.ndarray, dst: np.ndarray) -> tuple:
        """``(idx, s_on, d_on)``: the transfers :meth:`_describe` routes by template (None:
        all of them) and their ends; the others (not two GPUs, the same GPU, direct
        neighbours) are routed on their own."""
        code = self._code
        ok = (code[src] == _GPU) & (code[dst] == _GPU) & (src != dst)
        # an all-pairs step (4.2 million transfers) is all GPU pairs: no index, no gathers
        idx = None if ok.all() else np.flatnonzero(ok)
        s_on, d_on = (src, dst) if idx is None else (src[idx], dst[idx])
        near = np.flatnonzero(self._gpu_linked[s_on])  # GPUs cabled to a GPU
        if len(near):  # direct neighbours: one link, routed on their own
            linked = near[self._lids(s_on[near], d_on[near]) >= 0]
            if len(linked):
                idx = np.delete(np.arange(len(src)) if idx is None else idx, linked)
                s_on, d_on = src[idx], dst[idx]
        return idx, s_on, d_on

    def learn_in_parts(self, parts: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]]
                       ) -> bool:
        """Learn what :meth:`_describe` of all the transfers of ``parts()`` (``(src, dst)``
        after ``(src, dst)``, one step laid end to end) would learn, in the same order (the
        same signature, pattern, list and piece ids), without their whole arrays (a step of
        4.2 million transfers: 33 MB an array, whose fresh pages cost more than the
        arithmetic). False, having learned no pair, where it would not be the same or a
        part's plan would learn apart (a transfer not routed by template, a part of at most
        64 transfers, a table of signature pairs searched rather than indexed, one that
        would start afresh): then :meth:`_describe` the whole step."""
        mark = np.zeros(len(self._gpu_sig), dtype=bool)   # GPUs to sign
        for src, dst in parts():
            idx, s_on, d_on = self._switched(src, dst)
            if idx is not None or len(s_on) <= 64:
                # a transfer routed on its own (its part's plan would route it before the
                # rest is known to be alike), or a part _describe works out through its dict
                return False
            for g in (self._gidx[s_on], self._gidx[d_on]):
                mark[g[self._gpu_sig[g] < 0]] = True
        if mark.any():   # _describe signs its GPUs in order, distinct: the same
            self._ensure_sigs(np.flatnonzero(mark))
        S = len(self._sigs)
        if S * S > _DENSE_PAIRS:
            return False
        if self._known_index is None or len(self._known_index) != S * S:
            self._index_known(S)
        index, sig = self._known_index, self._gpu_sig
        rep_s = np.full(S * S, -1, dtype=np.int64)   # each new pair's first transfer
        rep_d = np.full(S * S, -1, dtype=np.int64)
        misses = 0
        for src, dst in parts():
            _, s_on, d_on = self._switched(src, dst)
            cell = sig[self._gidx[s_on]] * S + sig[self._gidx[d_on]]
            miss = np.flatnonzero(index[cell] < 0)
            if not len(miss):
                continue
            misses += len(miss)
            cm, first = np.unique(cell[miss], return_index=True)
            new = rep_s[cm] < 0
            rep_s[cm[new]] = s_on[miss[first[new]]]
            rep_d[cm[new]] = d_on[miss[first[new]]]
        if not misses:
            return True
        if len(self._known_keys) and len(self._known_keys) + misses > _KNOWN_PAIRS:
            return False   # _known_at would start its table afresh
        cells = np.flatnonzero(rep_s >= 0)
        # one transfer per new pair, the first of each: _known_at learns the pairs in the
        # order of their keys (as the whole step's), each from the same transfer
        self._known_at(cells // S, cells % S, rep_s[cells], rep_d[cells])
        return True

    @staticmethod
    def _describe_default(T: int) -> dict:
        """:meth:`_describe`'s fields of ``T`` transfers none of which is templated."""
        return {"kind": np.full(T, -1, dtype=np.int64), "head": np.full(T, -1, dtype=np.int64),
                "tail": np.full(T, -1, dtype=np.int64), "l1": np.zeros(T, dtype=np.int64),
                "l2": np.zeros(T, dtype=np.int64), "latency": np.zeros(T),
                "hops": np.zeros(T, dtype=np.int64), "scaleout": np.zeros(T, dtype=bool)}

    def _known_at(self, ss: np.ndarray, sd: np.ndarray, src: np.ndarray, dst: np.ndarray
                  ) -> np.ndarray:
        """Positions of signature pairs ``(ss[i], sd[i])`` (key ``ss << 32 | sd``) in the
        table of known pairs, the route fields of those not known yet worked out first
        (``src[i] -> dst[i]``: a GPU pair wired as that pair; the first of each new pair
        stands for it). The table is kept sorted by key, so that later steps look their
        pairs up instead of working them out again; it starts afresh with a step's pairs
        when it might grow past :data:`_KNOWN_PAIRS`."""
        known = self._known_keys
        S = len(self._sigs)
        dense = S * S <= _DENSE_PAIRS  # a square index of every pair of signatures
        key = None
        if dense:
            if self._known_index is None or len(self._known_index) != S * S:
                self._index_known(S)
            cell = ss * S
            cell += sd
            at = self._known_index[cell]
            hit = at >= 0
        else:
            self._known_index = None
            key = (ss << 32) | sd
            at = np.searchsorted(known, key)
            hit = known[np.minimum(at, len(known) - 1)] == key if len(known) else None
        if hit is not None and len(known):
            if hit.all():
                return at
            if len(known) + int(np.count_nonzero(~hit)) > _KNOWN_PAIRS:
                # the table might grow too large: start it afresh with this step's pairs
                known = self._known_keys = known[:0]
                self._known_fields = {k: v[:0] for k, v in self._known_fields.items()}
                if dense:
                    self._index_known(S)
        if not len(known):
            hit = None
        miss = np.arange(len(ss)) if hit is None else np.flatnonzero(~hit)
        if dense and len(miss) > S * S:
            # many transfers over few pairs of signatures (an all-pairs step of 64 groups of
            # 256: 4.2 million over 4,096): each pair's first transfer by marking its cell,
            # not by sorting them all; cells run in the keys' order (key = a << 32 | b,
            # cell = a * S + b, b < S)
            firsts = np.full(S * S, len(miss), dtype=np.int64)
            np.minimum.at(firsts, cell[miss], np.arange(len(miss)))
            ucell = np.flatnonzero(firsts < len(miss))
            uk, first, inv = (ucell // S << 32) | (ucell % S), firsts[ucell], None
        else:
            mk = (ss[miss] << 32) | sd[miss] if key is None else key[miss]
            uk, first, inv = np.unique(mk, return_index=True, return_inverse=True)
        u = self._pair_fields(uk, src[miss[first]], dst[miss[first]])
        # merge the new pairs into the sorted table: where each new and old row goes
        new_at = np.searchsorted(known, uk) + np.arange(len(uk))
        old = np.ones(len(known) + len(uk), dtype=bool)
        old[new_at] = False
        merged = {}
        for k in _FIELDS:
            col = np.empty(len(old), dtype=u[k].dtype)
            col[new_at], col[old] = u[k], self._known_fields[k]
            merged[k] = col
        keys = np.empty(len(old), dtype=np.int64)
        keys[new_at], keys[old] = uk, known
        self._known_keys, self._known_fields = keys, merged
        if dense:
            self._index_known(S)
            return self._known_index[cell]
        if hit is not None:
            at[hit] = np.flatnonzero(old)[at[hit]]  # old rows moved down by the new ones
        at[miss] = new_at[inv.ravel()]
        return at

    def _index_known(self, S: int) -> None:
        """Point the square index of signature pairs (``S`` signatures) at the table."""
        index = np.full(S * S, -1, dtype=np.int64)
        keys = self._known_keys
        index[(keys >> 32) * S + (keys & 0xFFFFFFFF)] = np.arange(len(keys))
        self._known_index = index

    # ----------------------------------------------------------------- routing
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
        up, down = self._ports_up[gs], self._ports_down[gd]
        pieces = self._list_py[l1] + self._list_py[l2]
        lk = [up[pos], down[tpos]] + [self._piece_links[i] for i in pieces]
        wt = [np.array(w), np.array(tw)] + [self._piece_weights[i] for i in pieces]
        route = Route(np.concatenate(lk), np.concatenate(wt), float(latency), int(hops),
                      bool(scaleout))
        self._pair_cache[(src, dst)] = route
        return route

    def _hops_and_pieces(self, src, dst, d, on):
        """First/last-hop entries and piece entries of templated transfers ``on``:
        ``(hop transfer, hop link, hop weight, piece transfer, piece id)``."""
        every = len(on) == len(src)   # every transfer templated (on is 0, 1, ...): no gathers
        gpus, rows = d.pop("_gpus", None), d.pop("_rows", None)   # _describe's
        if rows is not None and every and len(rows[1]) > 48 and len(rows[0]["kind"]) <= len(on):
            out = self._hops_and_pieces_rows(*rows, *gpus, on)
            if out is not None:
                return out
        if rows is not None:  # the fields the general way reads, per transfer
            for k in ("head", "tail", "l1", "l2"):
                d[k] = rows[0][k][rows[1]]
        del rows
        if every and gpus is not None:
            gs, gd = gpus
            del gpus
        else:
            gs = self._gidx[src if every else src[on]]
            gd = self._gidx[dst if every else dst[on]]
        if len(on) <= 48:  # few transfers: plain loops over cached lists beat numpy calls
            return self._hops_and_pieces_small(on, gs, gd, d)
        pick = (lambda a: a) if every else (lambda a: a[on])  # noqa: E731
        one = self._one_port_hops(on, gs, gd, pick(d["head"]), pick(d["tail"]))
        if one is not None:
            del gs, gd   # before the pieces' arrays (33 MB each in a large step)
            pi, po = self._pieces_of(pick(d["l1"]), pick(d["l2"]), on)
            return (*one, pi, po)
        spos, sw = self._specs_pos.table, self._specs_w.table
        hop_i, hop_l, hop_w = [], [], []
        for ports, g, spec in ((self._ports_up, gs, pick(d["head"])),
                               (self._ports_down, gd, pick(d["tail"]))):
            pt, wt = np.take(spos, spec, axis=0), np.take(sw, spec, axis=0)
            if pt.shape[1] == 1 and (pt >= 0).all():
                hop_i.append(on)
                hop_l.append(ports[g, pt[:, 0]])
                hop_w.append(wt[:, 0])
                continue
            valid = pt >= 0
            hop_i.append(np.broadcast_to(on[:, None], pt.shape)[valid])
            hop_l.append(ports[np.broadcast_to(g[:, None], pt.shape)[valid], pt[valid]])
            hop_w.append(wt[valid])
        pi, po = self._pieces_of(pick(d["l1"]), pick(d["l2"]), on)
        return np.concatenate(hop_i), np.concatenate(hop_l), np.concatenate(hop_w), pi, po

    def _one_port_hops(self, on: np.ndarray, gs: np.ndarray, gd: np.ndarray,
                       head: np.ndarray, tail: np.ndarray,
                       at: np.ndarray | None = None) -> tuple | None:
        """The two hops' ``(transfer, link, weight)`` entries of transfers ``on`` from GPU
        indices ``gs`` to ``gd``, first hops then last hops, written in place, on fabrics
        whose patterns have one port each (fat trees, leaf-spines; else None). ``head`` and
        ``tail`` are each transfer's first- and last-hop pattern or, given ``at``, each
        known row's, transfer ``t`` taking row ``at[t]`` (a row's port and weight are then
        worked out once and gathered; a row of pattern -1, never in ``at``, wraps to the
        last, unused)."""
        spos, sw = self._specs_pos.table, self._specs_w.table
        if spos.shape[1] != 1 or not (spos >= 0).all():
            return None
        n = len(on)
        hop_i = np.empty(2 * n, dtype=np.int64)
        hop_l = np.empty(2 * n, dtype=np.int64)
        hop_w = np.empty(2 * n)
        hop_i[:n] = on
        hop_i[n:] = on
        sp, wcol = spos[:, 0], sw[:, 0]
        for half, ports, g, spec in ((slice(0, n), self._ports_up, gs, head),
                                     (slice(n, 2 * n), self._ports_down, gd, tail)):
            if sp.any():
                port = sp[spec] if at is None else sp[spec].take(at)
                port += g * ports.shape[1]
                np.take(ports.ravel(), port, out=hop_l[half], mode="wrap")
                del port
            else:   # the first port everywhere
                np.take(ports[:, 0], g, out=hop_l[half], mode="wrap")
            if at is None:
                np.take(wcol, spec, out=hop_w[half], mode="wrap")
            else:
                np.take(wcol[spec], at, out=hop_w[half], mode="wrap")
        return hop_i, hop_l, hop_w

    def _hops_and_pieces_rows(self, rows: dict, at: np.ndarray, gs: np.ndarray,
                              gd: np.ndarray, on: np.ndarray) -> tuple | None:
        """:meth:`_hops_and_pieces` of every transfer (all templated), transfer ``t`` routed
        as row ``at[t]`` of the table of known signature pairs ``rows``, from ``gs[t]`` to
        ``gd[t]`` (GPU indices; ``on``: 0, 1, ...), for fabrics whose patterns have one
        port each (fat trees, leaf-spines: else None). What depends on the row alone (port,
        weight, the pieces of the row's two lists) is worked out once per row and gathered
        per transfer, not looked up through each transfer's patterns and lists (the same
        entries)."""
        one = self._one_port_hops(on, gs, gd, rows["head"], rows["tail"], at)
        if one is None:
            return None
        hop_i, hop_l, hop_w = one
        del gs, gd   # before the pieces' arrays (33 MB each in a large step)
        hit = self._row_pieces
        if hit is None or hit[0] is not rows:   # a table not seen before: its rows' pieces
            # (a pairwise all-to-all's 255 steps of 16,384 transfers look up one table)
            lists = self._lists.table
            table = np.concatenate([lists[rows["l1"]], lists[rows["l2"]]], axis=1)
            valid = table >= 0
            flat, count = table[valid], valid.sum(axis=1)   # each row's pieces, in order
            hit = self._row_pieces = (rows, flat, np.cumsum(count) - count, count)
        _, flat, first, count = hit
        pi, po = self._repeat_pieces(flat, first, count, at, on)
        return hop_i, hop_l, hop_w, pi, po

    @staticmethod
    def _repeat_pieces(flat: np.ndarray, first: np.ndarray, count: np.ndarray,
                       which: np.ndarray, on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(transfer, piece)`` entries of transfers ``on``, transfer ``on[t]`` taking the
        ``count[which[t]]`` pieces of ``flat`` (piece ids, >= 0) from ``first[which[t]]``."""
        width = int(count.max()) if len(count) else 0
        if 0 < width <= _PADDED_PIECES and len(which) >= 4 * len(count):
            # few pieces a row (2 in fat trees and leaf-spines): each row's pieces padded
            # with -1 to ``width``, gathered per transfer and the padding dropped: the same
            # entries in the same order, in a third fewer passes over them (a large step's
            # 4.2 million transfers, 7.3 million entries: 79 -> 47 ms)
            slot = np.arange(width)
            have = slot < count[:, None]
            padded = np.where(have, flat.take(np.where(have, first[:, None] + slot, 0)), -1)
            entries = padded.take(which, axis=0)
            return np.repeat(on, count.take(which)), entries[entries >= 0]
        n = count.take(which)
        nz = np.flatnonzero(n) if not count.all() else None
        fw = first.take(which)   # each transfer's first entry in flat
        if nz is not None:  # transfers with pieces only
            n, fw, on = n[nz], fw[nz], on[nz]
        total = int(n.sum())
        if not total:
            return on[:0].copy(), flat[:0].copy()
        # positions in flat of every entry: 1 past the last within a transfer's run, and
        # at each transfer's first entry, a jump to its pieces in flat (a running sum)
        pos = np.ones(total, dtype=np.int64)
        starts = np.cumsum(n)
        starts -= n
        jump = fw[1:] - fw[:-1]
        jump -= n[:-1] - 1
        pos[starts[1:]] = jump
        del starts, jump
        pos[0] = fw[0]
        np.cumsum(pos, out=pos)
        return np.repeat(on, n), flat[pos]

    def _pieces_of(self, l1: np.ndarray, l2: np.ndarray, on: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
        """The pieces of transfers ``on`` whose piece lists are ``l1`` and ``l2``: ``(transfer,
        piece)`` entries, transfer by transfer, each ``l1``'s pieces then ``l2``'s. Made per
        distinct ``(l1, l2)`` and repeated: a step has millions of transfers but few pairs
        of lists, and the lists' table is as wide as the longest list (the padded rows of
        every transfer, masked, were most of a large step's time and memory)."""
        lists = self._lists.table
        n_lists = len(lists)
        # the lists that occur, numbered in order (by marking: no sort), and pairs of them
        used1, used2 = np.zeros(n_lists, dtype=bool), np.zeros(n_lists, dtype=bool)
        used1[l1] = True
        used2[l2] = True
        ids1, ids2 = np.flatnonzero(used1), np.flatnonzero(used2)
        n2 = len(ids2)
        rank = np.zeros(n_lists, dtype=np.int64)
        rank[ids1] = np.arange(len(ids1)) * n2
        pair = rank[l1]
        rank[:] = 0
        rank[ids2] = np.arange(n2)
        pair += rank[l2]
        cells = len(ids1) * n2
        if cells <= 4 * len(pair) + 1024:   # pairs numbered by a dense index
            seen = np.zeros(cells, dtype=bool)
            seen[pair] = True
            kinds = np.flatnonzero(seen)
            number = np.zeros(cells, dtype=np.int64)
            number[kinds] = np.arange(len(kinds))
            which = number[pair]
        else:
            kinds, which = np.unique(pair, return_inverse=True)
            which = which.ravel()
        ki, kj = np.divmod(kinds, n2)
        kinds1, kinds2 = ids1[ki], ids2[kj]
        rows = np.concatenate([lists[kinds1], lists[kinds2]], axis=1)
        valid = rows >= 0
        flat, count = rows[valid], valid.sum(axis=1)   # each pair's pieces, in order
        return self._repeat_pieces(flat, np.cumsum(count) - count, count, which, on)

    def _hops_and_pieces_small(self, on, gs, gd, d):
        specs, lists = self._spec_py, self._list_py
        up, down = self._ports_up[gs].tolist(), self._ports_down[gd].tolist()
        hi, hl, hw, pi, po = [], [], [], [], []
        rows = zip(on.tolist(), d["head"][on].tolist(), d["tail"][on].tolist(),
                   d["l1"][on].tolist(), d["l2"][on].tolist(), up, down, strict=True)
        out = (hi, hl, hw, pi, po)
        for t, h, tl, l1, l2, u, dn in rows:
            _add_template(out, specs[h], specs[tl], lists[l1] + lists[l2], t, u, dn)
        return (np.array(hi, dtype=np.int64), np.array(hl, dtype=np.int64),
                np.array(hw, dtype=float), np.array(pi, dtype=np.int64),
                np.array(po, dtype=np.int64))

    def _node_ids(self, transfers: Transfers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Source and destination node numbers and fractions of ``transfers``."""
        if isinstance(transfers, Pairs):
            nodes = transfers.nodes
            hit = self._group_ids
            if hit is None or hit[0] is not nodes:
                g = np.fromiter(map(self._nid_checked, nodes), np.int64, count=len(nodes))
                hit = self._group_ids = (nodes, g)
            g = hit[1]
            return g[transfers.src], g[transfers.dst], transfers.fractions()
        if not len(transfers):
            z = np.zeros(0, dtype=np.int64)
            return z, z, np.zeros(0)
        s, d, f = zip(*transfers, strict=True)
        src = np.fromiter(map(self._nid_checked, s), np.int64, count=len(s))
        dst = np.fromiter(map(self._nid_checked, d), np.int64, count=len(d))
        return src, dst, np.array(f, dtype=float)

    def _nid_checked(self, node: Hashable) -> int:
        i = self._nid.get(node)
        if i is None:
            raise UserError(f"node {node!r} is not in the fabric")
        return i

    def plan(self, transfers: Transfers) -> Plan:
        """Route many transfers ``(src, dst, fraction)`` (a sequence, or :class:`Pairs`).

        Raises :class:`NoPath` for a transfer whose ends are not connected (the first
        such in order).
        """
        src, dst, frac = self._node_ids(transfers)
        key = None
        if isinstance(transfers, Pairs):
            key = (transfers.nodes, transfers.src.tobytes(), transfers.dst.tobytes())
        return self.plan_nodes(src, dst, frac, key)

    def node_numbers(self, nodes: Collection[Hashable]) -> np.ndarray:
        """The router's numbers of ``nodes`` (UserError for a node not in the fabric)."""
        return np.fromiter(map(self._nid_checked, nodes), np.int64, count=len(nodes))

    def plan_nodes(self, src: np.ndarray, dst: np.ndarray, frac: np.ndarray,
                   key: Hashable | None = None) -> Plan:
        """:meth:`plan` of transfers given as node numbers (:meth:`node_numbers`);
        ``key``: a hashable name of the pattern ``(src, dst)`` to keep its plan under."""
        if key is not None:
            hit = self._plans.get(key)
            if hit is not None:
                return Plan(frac, *hit[1:])
        if len(src) <= 32:
            plan = self._plan_small(src, dst, frac)
            if key is not None:
                self._keep_plan(key, plan)
            return plan
        d = self._describe(src, dst)
        latency, scaleout = d["latency"], d["scaleout"]
        own = self._routed(src, dst, np.flatnonzero(d["kind"] < 0), latency, scaleout)
        on = np.flatnonzero(d["kind"] >= 0)
        hi, hl, hw, pi, po = self._hops_and_pieces(src, dst, d, on)
        plan = Plan(frac, d["kind"], *own, hi, hl, hw, pi, po, latency, scaleout)
        if key is not None:
            self._keep_plan(key, plan)
        return plan

    def _keep_plan(self, key, plan: Plan) -> None:
        """Keep ``plan`` for steps with the same pairs (halving and doubling share them):
        the last 256, in at most :data:`_PLAN_BYTES` (the oldest dropped; a plan larger
        than that alone, as a direct all-to-all of 64 groups of 256 GPUs at once, 389 MB,
        is not kept: a router makes it again if asked)."""
        kept = (None, *map(plan.__getattribute__, _PLAN_FIELDS))
        size = _plan_bytes(kept)
        if size > _PLAN_BYTES:
            return
        self.drop_plans([key])
        while self._plans and (len(self._plans) >= 256
                               or self._plan_bytes + size > _PLAN_BYTES):
            self.drop_plans([next(iter(self._plans))])
        self._plans[key] = kept
        self._plan_bytes += size

    def drop_plans(self, keys: Iterable[Hashable]) -> None:
        """Forget the plans kept under ``keys`` (those not kept are skipped)."""
        for key in keys:
            hit = self._plans.pop(key, None)
            if hit is not None:
                self._plan_bytes -= _plan_bytes(hit)

    def _routed(self, src: np.ndarray, dst: np.ndarray, ri: np.ndarray,
                latency: np.ndarray, scaleout: np.ndarray) -> tuple:
        """Routes of transfers ``ri`` (routed on their own; ascending): ``(ri, pointer,
        links, weights, hops)`` as :class:`Plan` keeps them; their latency and scale-out
        written into ``latency`` and ``scaleout``. Raises :class:`NoPath` for the first
        whose ends are not connected."""
        if not len(ri):
            return ri, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), \
                np.zeros(0, dtype=np.int64)
        a, b = src[ri], dst[ri]
        ids = self._route_ids(a, b)
        bad = np.flatnonzero(ids < 0)
        if len(bad):
            raise NoPath(self._nodes[a[bad[0]]], self._nodes[b[bad[0]]])
        latency[ri] = self._rt_latency.a[ids]
        scaleout[ri] = self._rt_scaleout.a[ids]
        ptr = self._rt_ptr.a
        start = ptr[ids]
        sizes = ptr[ids + 1] - start
        out = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=out[1:])
        pos = np.repeat(start - out[:-1], sizes) + np.arange(out[-1])
        return ri, out, self._rt_links.a[pos], self._rt_weights.a[pos], self._rt_hops.a[ids]

    def _route_ids(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Entry ids of the routes ``src[i] -> dst[i]`` (node numbers) in the router's
        table of routes not made from templates (-1: no path), routing the pairs not seen
        before."""
        key = (src * self._n + dst).tolist()
        known = self._rt_id
        ids = np.fromiter(map(known.get, key, repeat(-2)), np.int64, count=len(key))
        miss = np.flatnonzero(ids == -2)
        if len(miss):
            self._learn_routes(src[miss], dst[miss])
            ids[miss] = np.fromiter(map(known.__getitem__, [key[i] for i in miss.tolist()]),
                                    np.int64, count=len(miss))
        return ids

    def _learn_routes(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Route the pairs ``src[i] -> dst[i]`` (node numbers) into the table of
        :meth:`_route_ids`, in order of first appearance: a node to itself (no links) and
        direct neighbours (one link) with numpy, the others by :meth:`_resolve`."""
        n = self._n
        key = src * n + dst
        _, first = np.unique(key, return_index=True)
        first.sort()
        src, dst, key = src[first], dst[first], key[first]
        lid = self._lids(src, dst)
        lid[src == dst] = -1
        quick = np.flatnonzero((src == dst) | (lid >= 0))
        slow = np.flatnonzero((src != dst) & (lid < 0))
        base = len(self._rt_hops.a)
        known = self._rt_id
        if len(quick):  # itself: no links; a direct neighbour: one link, all of it
            ql = lid[quick]
            one = ql >= 0
            ql = ql[one]
            sizes = one.astype(np.int64)
            self._rt_ptr.extend(self._rt_ptr.a[-1] + np.cumsum(sizes))
            self._rt_links.extend(ql)
            self._rt_weights.extend(np.ones(len(ql)))
            lat = np.zeros(len(quick))
            lat[one] = self.latency[ql]
            so = np.zeros(len(quick), dtype=bool)
            so[one] = self.scaleout[ql]
            self._rt_latency.extend(lat)
            self._rt_hops.extend(sizes)
            self._rt_scaleout.extend(so)
            known.update(zip(key[quick].tolist(), range(base, base + len(quick)), strict=True))
            base += len(quick)
        if len(slow) >= _WALK_MANY and len(self._nodes) <= _DAG_NODES:
            # switches and GPUs (GPUs may forward): from the kept shortest paths towards
            # each destination, every pair at once
            code = self._code
            transit = (code[src[slow]] <= _SWITCH) & (code[dst[slow]] <= _SWITCH)
            base = self._learn_from_dags(src[slow[transit]], dst[slow[transit]],
                                         key[slow[transit]], base)
            slow = slow[~transit]
        if len(slow):
            nodes = self._nodes
            got = [self._resolve(nodes[a], nodes[b])
                   for a, b in zip(src[slow].tolist(), dst[slow].tolist(), strict=True)]
            ok = [r for r in got if r is not None]
            ids = []
            for r in got:
                ids.append(-1 if r is None else base)
                base += r is not None
            known.update(zip(key[slow].tolist(), ids, strict=True))
            if ok:
                sizes = np.fromiter((len(r.links) for r in ok), np.int64, count=len(ok))
                self._rt_ptr.extend(self._rt_ptr.a[-1] + np.cumsum(sizes))
                self._rt_links.extend(np.concatenate([r.links for r in ok]))
                self._rt_weights.extend(np.concatenate([r.weights for r in ok]))
                self._rt_latency.extend(np.array([r.latency for r in ok], dtype=float))
                self._rt_hops.extend(np.array([r.hops for r in ok], dtype=np.int64))
                self._rt_scaleout.extend(np.array([r.scaleout for r in ok], dtype=bool))

    def _plan_small(self, src: np.ndarray, dst: np.ndarray, frac: np.ndarray) -> Plan:
        """:meth:`plan_nodes` of a few transfers with plain loops (numpy calls cost more
        than the work here); the same routes, from the same caches."""
        sl, dl = src.tolist(), dst.tolist()
        T = len(sl)
        if self._code_list is None:
            self._code_list = self._code.tolist()
        code, nodes, adj = self._code_list, self._nodes, self._adj
        gi = self._gidx
        cand = [i for i in range(T) if sl[i] != dl[i] and code[sl[i]] == _GPU
                and code[dl[i]] == _GPU and nodes[dl[i]] not in adj[nodes[sl[i]]]]
        kind = [-1] * T
        latency = [0.0] * T
        scaleout = [False] * T
        hi, hl, hw, pi, po = [], [], [], [], []
        out = (hi, hl, hw, pi, po)
        if cand:
            gs = gi[[sl[i] for i in cand]]
            gd = gi[[dl[i] for i in cand]]
            self._ensure_sigs(np.concatenate([gs, gd]))
            keys = ((self._gpu_sig[gs] << 32) | self._gpu_sig[gd]).tolist()
            known = self._pair_rows
            if any(k not in known for k in keys):
                self._learn_pairs(np.array([k for k in keys if k not in known], dtype=np.int64))
            up, down = self._ports_up[gs].tolist(), self._ports_down[gd].tolist()
            specs, lists = self._spec_py, self._list_py
            for i, k, u, dn in zip(cand, keys, up, down, strict=True):
                kd, h, tl, l1, l2, lat, _, so = known[k]
                if kd < 0:
                    continue
                kind[i], latency[i], scaleout[i] = 1, lat, so
                _add_template(out, specs[h], specs[tl], lists[l1] + lists[l2], i, u, dn)
        lat = np.array(latency)
        so = np.array(scaleout, dtype=bool)
        own = self._routed(src, dst, np.array([i for i in range(T) if kind[i] < 0],
                                              dtype=np.int64), lat, so)
        return Plan(frac, np.array(kind, dtype=np.int64), *own, np.array(hi, dtype=np.int64),
                    np.array(hl, dtype=np.int64), np.array(hw, dtype=float),
                    np.array(pi, dtype=np.int64), np.array(po, dtype=np.int64), lat, so)

    def link_loads(self, transfers: Transfers
                   ) -> tuple[np.ndarray, np.ndarray, float, bool, float]:
        """:meth:`loads` with ``split``, each link once: ``(links, load, latency, scaleout,
        latency_up)``, links ascending and the bytes per byte of ``n`` each carries
        (nonzero). Kept per pattern of transfers for fabrics whose routes
        :func:`router_for` shares (at most ``_KEPT_LOADS`` link entries in all, the oldest
        dropped first), so that fabrics of one shape route a step once.

        >>> import networkx as nx
        >>> g = nx.Graph(name="star", spec="", gpus=2)
        >>> g.add_node("sw", kind="switch", tier=0, radix=2, latency=1e-7,
        ...            in_network_reduction=False)
        >>> for i in range(2):
        ...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        ...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=1e-8, medium="copper",
        ...                lanes=1)
        >>> links, load, *_ = Router(g).link_loads([("gpu0", "gpu1", 0.5),
        ...                                         ("gpu1", "gpu0", 0.5)])
        >>> links.tolist(), load.tolist()
        ([0, 1, 2, 3], [0.5, 0.5, 0.5, 0.5])
        >>> Router(g).link_loads((("gpu0", "gpu1", 1.0),))[1].tolist()  # a tuple: kept
        [1.0, 1.0]
        """
        kept = self._loads_kept if self._shape is not None else None
        if kept is not None:
            try:
                hit = kept.get(transfers)
            except TypeError:  # unhashable transfers (a list): routed, not kept
                hit = kept = None
            if hit is not None:
                return hit
        links, coef, latency, scaleout, latency_up = self.loads(transfers, split=True)
        if len(links) > 4096:
            load = np.bincount(links, coef, minlength=self.n_links)
            uniq = np.flatnonzero(load)
            load = load[uniq]
        elif len(links):
            uniq, inv = np.unique(links, return_inverse=True)
            load = np.bincount(inv, coef)
        else:
            uniq, load = links, coef
        out = (uniq, load, latency, scaleout, latency_up)
        if kept is not None:
            uniq.flags.writeable = load.flags.writeable = False
            kept[transfers] = out
            self._loads_size += len(uniq) + 1
            while self._loads_size > _KEPT_LOADS:
                self._loads_size -= len(kept.pop(next(iter(kept)))[0]) + 1
        return out

    @overload
    def loads(self, transfers: Transfers, split: Literal[False] = False) -> Loads: ...

    @overload
    def loads(self, transfers: Transfers, split: Literal[True]
              ) -> tuple[np.ndarray, np.ndarray, float, bool, float]: ...

    def loads(self, transfers: Transfers, split: bool = False
              ) -> Loads | tuple[np.ndarray, np.ndarray, float, bool, float]:
        """Route many transfers ``(src, dst, fraction)`` at once (a sequence, or
        :class:`~netmodel.collectives.steps.Pairs`).

        Returns ``(links, coefficients, latency, scaleout)``: directed link ids and the
        bytes per byte of ``n`` each carries (a link may appear more than once: sum them),
        the longest route latency and whether any route crosses the scale-out network;
        with ``split``, also the longest route latency among the transfers that stay on the
        scale-up network (the longest of all if none does).
        Raises :class:`NoPath` for a transfer whose ends are not connected. Transfers whose
        routes share pieces (GPU pairs on the same switches, leaves of one pod) share them:
        each piece appears once, scaled by the traffic through it.
        """
        pl = self.plan(transfers)
        parts_l, parts_w = [], []
        if len(pl.routed):  # every route's weights times its fraction, in one product
            parts_l.append(pl.route_links)
            parts_w.append(pl.route_weights * np.repeat(pl.frac[pl.routed],
                                                         np.diff(pl.route_ptr)))
        if len(pl.piece_of):
            coef = np.bincount(pl.piece_of, pl.frac[pl.pieces])
            used = np.flatnonzero(coef)
            _, lk, w = self.expand(used, coef[used])
            parts_l.append(lk)
            parts_w.append(w)
        parts_l.append(pl.hop_links)
        parts_w.append(pl.hop_weights * pl.frac[pl.hop_index])
        latency = float(pl.latency.max()) if len(pl.latency) else 0.0
        out = (np.concatenate(parts_l).astype(np.int64, copy=False), np.concatenate(parts_w),
               latency, bool(pl.scaleout.any()))
        if split:
            up = pl.latency[~pl.scaleout]
            return (*out, float(up.max()) if len(up) else latency)
        return out


class _SharedRouter(Router):
    """A router sharing another's routes and caches (its ``__dict__``, the very same dict,
    so that what one learns the other reads), with its own graph and bandwidths."""

    __slots__ = ("_own_bandwidth", "_own_graph")

    @property  # type: ignore[override]
    def graph(self) -> nx.Graph:
        return self._own_graph

    @property  # type: ignore[override]
    def bandwidth(self) -> np.ndarray:
        return self._own_bandwidth


def router_for(graph: nx.Graph) -> Router:
    """A :class:`Router` of ``graph`` that shares its routes with the routers of fabrics of
    the same shape made before in this thread (up to ``_SHAPES`` shapes, fabrics of up to
    ``_SHAPE_NODES`` nodes).

    Routes read the nodes (in order, with their kinds, switch tiers and switch latencies),
    the links (in adjacency order, with their latencies) and the link bandwidths only
    through their ratios (ECMP splits in proportion to bandwidth, signatures grouping GPUs
    wired alike): two fabrics alike in all of these, with bandwidths a power of two apart
    (a fabric and the same with every link twice as fast), have the same routes to the last
    bit. Such a fabric's router is made from the first one's routes, with its own
    bandwidths (which costs read). The shape is read from the graph itself, so a graph
    edited before its router is made never shares a stale entry; as for :class:`Router`,
    do not edit a graph after making its router.

    >>> import networkx as nx
    >>> def star(bw):
    ...     g = nx.Graph(name="star", spec="", gpus=2)
    ...     g.add_node("sw", kind="switch", tier=0, radix=2, latency=1e-7,
    ...                in_network_reduction=False)
    ...     for i in range(2):
    ...         g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    ...         g.add_edge(f"gpu{i}", "sw", bandwidth=bw, latency=1e-8, medium="copper",
    ...                    lanes=1)
    ...     return g
    >>> a, b, c = router_for(star(1e9)), router_for(star(2e9)), router_for(star(3e9))
    >>> a._pair_cache is b._pair_cache, a._pair_cache is c._pair_cache
    (True, False)
    >>> b.bandwidth.tolist()
    [2000000000.0, 2000000000.0, 2000000000.0, 2000000000.0]
    """
    router = Router(graph)
    shape = router._shape
    if shape is None:
        return router
    key = (threading.get_ident(), shape)
    donor = _SHARED.get(key)
    if donor is None:
        _SHARED[key] = router
        while len(_SHARED) > _SHAPES:
            _SHARED.popitem(last=False)
        return router
    _SHARED.move_to_end(key)
    shared = _SharedRouter.__new__(_SharedRouter)
    shared.__dict__ = donor.__dict__
    shared._own_graph = graph
    shared._own_bandwidth = router.bandwidth
    return shared


def clear_shared_routes() -> None:
    """Forget the routers :func:`router_for` keeps (their graphs are then freed when
    nothing else holds them)."""
    _SHARED.clear()
