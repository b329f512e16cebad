"""Routes over a fabric graph: which directed links a transfer crosses, and how much of it.

A :class:`Router` indexes a fabric graph once (every undirected edge becomes two directed
links, numbered ``0 .. 2E-1``) and answers :meth:`Router.route` queries: the shortest paths
(in hops) from one node to another, with the traffic spread over all of them as equal-cost
multi-path (ECMP) routing does, hop by hop, each node splitting what it forwards over its
next hops in proportion to their bandwidth. A route is a sparse vector: link ids and the
fraction of the transfer each link carries, plus the longest path latency (link latencies,
plus the traversal latency of every switch crossed).

Transit rules: switches forward traffic, optical circuit switches never do (a circuit is
its own GPU-GPU edge), and GPUs forward only when no switched path exists (direct-connect
fabrics such as rings, tori and meshes).

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

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, fields
from functools import cached_property
from itertools import chain, compress, repeat
from operator import itemgetter, methodcaller
from typing import TYPE_CHECKING, Literal, overload

import networkx as nx
import numpy as np

from compute.errors import UserError
from netmodel.collectives.steps import Pairs, unique
from netmodel.collectives.updown import UpDown

if TYPE_CHECKING:
    #: Transfers ``(src, dst, fraction of n)``: a sequence of triples, or :class:`Pairs`.
    Transfers = Pairs | Sequence[tuple[Hashable, Hashable, float]]
    #: What :meth:`Router.loads` returns: links, coefficients, latency, scale-out.
    Loads = tuple[np.ndarray, np.ndarray, float, bool]

__all__ = ["NoPath", "Plan", "Route", "Router"]

_GPU, _SWITCH, _OCS, _OTHER = 0, 1, 2, 3
#: What :meth:`Router._describe` tells of each transfer.
_FIELDS = ("kind", "head", "tail", "l1", "l2", "latency", "hops", "scaleout")
_KIND_CODE = {"gpu": _GPU, "switch": _SWITCH, "ocs": _OCS}
#: Node kinds a route without a template may cross (GPUs forward on direct-connect fabrics).
_TRANSIT = frozenset(("gpu", "switch"))
#: Up to this many nodes, such routes come from one search per destination, kept
#: (:meth:`Router._dag`); beyond, from one bidirectional search per pair.
_DAG_NODES = 4096
#: From this many pairs routed on their own at once, the walks over the kept shortest paths
#: are done together with numpy (:meth:`Router._spread_many`); fewer, one by one (each
#: level of the numpy walk costs a few tens of numpy calls, whatever the pairs).
_WALK_MANY = 64
#: The most signature pairs whose route fields a router keeps in its table for large steps.
_KNOWN_PAIRS = 1 << 22
#: Up to this many pairs of signatures (cells of 8 bytes), the table is looked up through a
#: square index rather than searched.
_DENSE_PAIRS = 1 << 20


class NoPath(Exception):
    """No path joins two nodes (the fabric is cut between them)."""

    def __init__(self, a: Hashable, b: Hashable) -> None:
        super().__init__(f"no path joins {a!r} and {b!r}")
        self.pair = (a, b)


@dataclass(frozen=True)
class Route:
    """The traffic pattern of one unit transfer between two nodes.

    Attributes
    ----------
    links : numpy.ndarray
        Directed link ids (int) the transfer crosses.
    weights : numpy.ndarray
        Fraction of the transfer's bytes on each of those links (1 on a single path; ECMP
        splits it; the fractions leaving the source sum to 1).
    latency : float
        Seconds along the slowest of the shortest paths (links plus switch traversals).
    hops : int
        Links on each shortest path.
    scaleout : bool
        Whether any path crosses a scale-out link (one that touches a switch of tier >= 1).
    """

    links: np.ndarray
    weights: np.ndarray
    latency: float
    hops: int
    scaleout: bool


@dataclass
class Plan:
    """Many transfers routed at once (see :meth:`Router.plan`).

    Every transfer is either *templated* (``template[i] == 1``: a switched route between
    two GPUs, shared by every pair of GPUs wired alike) or routed on its own
    (``template[i] == -1``: its links and weights in ``route_links`` and ``route_weights``,
    one slice per such transfer).

    Attributes
    ----------
    frac : numpy.ndarray
        Bytes per byte of ``n`` of each transfer.
    template : numpy.ndarray
        1 for a templated transfer, -1 for one routed on its own.
    routed : numpy.ndarray
        Indices of the transfers routed on their own, ascending.
    route_ptr : numpy.ndarray
        Where each of those transfers' links start in ``route_links`` (one more entry than
        ``routed``: the last is the end).
    route_links, route_weights : numpy.ndarray
        Their links and the fraction of the transfer on each, route after route.
    route_hops : numpy.ndarray
        Links on each of their shortest paths.
    hop_index, hop_links, hop_weights : numpy.ndarray
        First and last hops of the templated transfers: transfer index, link, weight (per
        byte of the transfer).
    pieces, piece_of : numpy.ndarray
        For each (templated transfer, piece it crosses): the transfer index and the piece
        id (:meth:`Router.piece`; weights per byte of the transfer).
    latency : numpy.ndarray
        Route latency of every transfer (s).
    scaleout : numpy.ndarray
        Whether each transfer crosses the scale-out network.
    """

    frac: np.ndarray
    template: np.ndarray
    routed: np.ndarray
    route_ptr: np.ndarray
    route_links: np.ndarray
    route_weights: np.ndarray
    route_hops: np.ndarray
    hop_index: np.ndarray
    hop_links: np.ndarray
    hop_weights: np.ndarray
    pieces: np.ndarray
    piece_of: np.ndarray
    latency: np.ndarray
    scaleout: np.ndarray

    @property
    def routes(self) -> dict[int, Route]:
        """Transfer index -> :class:`Route` of each transfer routed on its own."""
        p = self.route_ptr.tolist()
        return {i: Route(self.route_links[p[k]:p[k + 1]], self.route_weights[p[k]:p[k + 1]],
                         float(self.latency[i]), int(self.route_hops[k]),
                         bool(self.scaleout[i]))
                for k, i in enumerate(self.routed.tolist())}


#: The fields of a :class:`Plan` after ``frac`` (what a kept plan holds).
_PLAN_FIELDS = tuple(f.name for f in fields(Plan))[1:]


class _Grow:
    """A growable 1-D array (capacity doubles): ``extend`` appends, ``a`` reads."""

    def __init__(self, dtype) -> None:
        self._a = np.zeros(16, dtype=dtype)
        self.n = 0

    def extend(self, x: np.ndarray) -> None:
        need = self.n + len(x)
        if need > len(self._a):
            grown = np.zeros(max(need, 2 * len(self._a)), dtype=self._a.dtype)
            grown[:self.n] = self._a[:self.n]
            self._a = grown
        self._a[self.n:need] = x
        self.n = need

    @property
    def a(self) -> np.ndarray:
        return self._a[:self.n]


class _Rows:
    """A growable table of rows padded with ``fill``, for lookups by row id with numpy;
    rows are appended to a list and written into the array in one go when it is read."""

    def __init__(self, fill, dtype, width: int = 1):
        self.fill, self.dtype = fill, dtype
        self._a = np.full((16, max(width, 1)), fill, dtype=dtype)
        self._done = 0
        self._pending: list = []
        self.n = 0

    def add(self, row: Sequence[float]) -> int:
        self._pending.append(row)
        self.n += 1
        return self.n - 1

    @property
    def table(self) -> np.ndarray:
        if self._pending:
            rows, cols = self._a.shape
            width = max(cols, max(map(len, self._pending)))
            if self.n > rows or width > cols:
                grown = np.full((max(self.n, 2 * rows), width), self.fill, dtype=self.dtype)
                grown[:self._done, :cols] = self._a[:self._done]
                self._a = grown
            fill = self.fill
            block = [list(r) + [fill] * (width - len(r)) for r in self._pending]
            self._a[self._done:self.n, :width] = np.array(block, dtype=self.dtype).reshape(
                len(block), width)
            self._done, self._pending = self.n, []
        return self._a[:self.n]


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


class Router:
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
        self._code_list: list[int] | None = None
        self._lat_list: list[float] | None = None  # latency and scaleout as lists
        self._nbr_rows: dict | None = None  # per node: (neighbour, link, bandwidth) rows
        self._transit_nbrs: dict | None = None  # per node: neighbours that may forward
        self._so_list: list[bool] | None = None
        self._learned = 0
        self._sig_rep: list = []
        self._plans: dict = {}
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

    # ----------------------------------------------------------------- signatures, pieces
    def _switch_neighbours(self, node):
        adj = self._adj[node]
        return tuple(sorted(((s, adj[s]["bandwidth"], adj[s]["latency"]) for s in adj
                             if self.kind.get(s) == "switch"), key=lambda t: str(t[0])))

    def _ensure_sigs(self, g: np.ndarray) -> None:
        """Signature ids and port link ids of GPUs ``g`` (GPU indices), computed once, with
        numpy: a GPU's links to switches sorted by the switch's name, grouped into
        signatures by their (switch, bandwidth, latency) rows."""
        missing = g[self._gpu_sig[g] < 0]
        if not len(missing):
            return
        missing = unique(missing)
        if len(missing) <= 8:  # a few GPUs (single routes): plain loops
            for i in missing.tolist():
                node = self.gpu_list[i]
                sig = self._switch_neighbours(node)
                sid = self._sig_ids.get(sig)
                if sid is None:
                    sid = self._sig_ids[sig] = len(self._sigs)
                    self._sigs.append(sig)
                    self._sig_rep.append(int(self._gpu_n[i]))
                    self._sig_info(sig)
                port = self._port(node)
                for j, (x, _, _) in enumerate(sig):
                    self._ports_up[i, j] = port[x]
                    self._ports_down[i, j] = port[x] ^ 1
                self._gpu_sig[i] = sid
            return
        ptr, links = self._gport_ptr, self._gport_link
        start, count = ptr[missing], ptr[missing + 1] - ptr[missing]
        total = int(count.sum())
        row = np.repeat(np.arange(len(missing)), count)
        lk = links[np.repeat(start, count) + np.arange(total)
                   - np.repeat(np.cumsum(count) - count, count)] if total else links[:0]
        sw = self._dst[lk]
        names = self._nodes
        uniq_sw = unique(sw)
        rank_of = np.empty(len(uniq_sw), dtype=np.int64)
        rank_of[np.argsort([str(names[x]) for x in uniq_sw.tolist()], kind="stable")] = \
            np.arange(len(uniq_sw))
        rank = rank_of[np.searchsorted(uniq_sw, sw)]
        order = np.lexsort((rank, row))
        lk, sw, row = lk[order], sw[order], row[order]
        col = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
        gm = missing[row]
        self._ports_up[gm, col] = lk
        self._ports_down[gm, col] = lk ^ 1
        sig_of = np.empty(len(missing), dtype=np.int64)
        bw, lat = self.bandwidth[lk], self.latency[lk]
        for w in unique(count).tolist():
            rows = np.flatnonzero(count == w)
            sel = np.isin(row, rows)
            mat = np.stack([sw[sel].reshape(-1, w), bw[sel].reshape(-1, w),
                            lat[sel].reshape(-1, w)], axis=2).reshape(len(rows), 3 * w) \
                if w else np.zeros((len(rows), 0))
            uniq, inv = np.unique(mat, axis=0, return_inverse=True)
            ids = []
            sigs = [tuple((names[int(u[3 * j])], float(u[3 * j + 1]), float(u[3 * j + 2]))
                          for j in range(w)) for u in uniq]
            if self.tiered and w:  # the structures above new signatures' switches at once
                self._updown.prepare([x for x in sigs if x not in self._sig_ids])
            for sig in sigs:
                sid = self._sig_ids.get(sig)
                if sid is None:
                    sid = self._sig_ids[sig] = len(self._sigs)
                    self._sigs.append(sig)
                    self._sig_rep.append(-1)
                    self._sig_info(sig)
                ids.append(sid)
            sig_of[rows] = np.array(ids, dtype=np.int64)[inv.ravel()]
            seen, at = np.unique(sig_of[rows], return_index=True)
            for sid, g in zip(seen.tolist(), missing[rows[at]].tolist(), strict=True):
                if self._sig_rep[sid] < 0:
                    self._sig_rep[sid] = int(self._gpu_n[g])
        self._gpu_sig[missing] = sig_of

    def _sig_info(self, sig) -> None:
        """Index a new signature: its switches, and its cone tier by tier (the state, the
        node set, whether a dead end lies below, the pieces of the climb to it)."""
        nid, T = self._nid, self._top + 1
        self._si_sw.add([nid[s] for s, _, _ in sig])
        ud = self._updown
        cone = ud.cone(sig) if sig and self.tiered else None
        self._si_cone.append(cone)
        state, sets, dead, ups, upso = ([-1] * T, [-1] * T, [0] * T, [-1] * T, [0] * T)
        if cone is None:
            self._si_info.add([0, 0, -1, 0])
        else:
            t0 = int(ud.state(cone[0]).tier)
            pieces: list[int]
            below, pieces, so = False, [], False
            for j, sid in enumerate(cone):
                st = ud.state(sid)
                t = t0 + j
                state[t], sets[t], dead[t], upso[t] = sid, st.set_id, int(below), int(so)
                ups[t] = self._add_list(pieces)
                self._claim(t, st)
                below = below or st.struct.dead
                if j + 1 < len(cone):
                    piece = ud.up_piece(sid)
                    pieces = [*pieces, piece]
                    so = so or self._piece_scaleout[piece]
            base = ud.state(cone[0])
            pos = {s: i for i, (s, _, _) in enumerate(sig)}
            head = self._add_spec([pos[x] for x in base.nodes], base.flow)
            self._si_info.add([1, t0, head, int(self.tier[base.nodes[0]] >= 1)])
        self._si_state.add(state)
        self._si_set.add(sets)
        self._si_dead.add(dead)
        self._si_up.add(ups)
        self._si_upso.add(upso)

    def _claim(self, t: int, st) -> None:
        """Record that the switches of state ``st`` form a node set of tier ``t``; a tier
        whose sets are not disjoint (or equal) loses the fast disjointness test."""
        key = (t, st.set_id)
        if key in self._claimed:
            return
        self._claimed.add(key)
        owner = self._owner
        for x in st.nodes:
            o = owner.setdefault((t, x), st.set_id)
            if o != st.set_id:
                self._partition[t] = False

    def _add_spec(self, positions, weights) -> int:
        """A first- or last-hop pattern: positions in a signature and traffic shares."""
        self._spec_py.append((list(positions), [float(w) for w in weights]))
        self._specs_w.add(weights)
        return self._specs_pos.add(positions)

    def _add_piece(self, links: np.ndarray, weights: np.ndarray) -> int:
        """Register the links and weights of part of a route; returns the piece id."""
        self._piece_links.append(np.asarray(links, dtype=np.int64))
        self._piece_weights.append(np.asarray(weights, dtype=float))
        self._piece_scaleout.append(bool(self.scaleout[links].any()) if len(links) else False)
        return len(self._piece_links) - 1

    def piece(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Links and weights of piece ``i``."""
        return self._piece_links[i], self._piece_weights[i]

    def _pieces_flat(self):
        """Every piece in one array: ``(pointer per piece, links, weights)``."""
        n = len(self._piece_links)
        if self._flat is None or self._flat[0] != n:
            sizes = np.fromiter(map(len, self._piece_links), np.int64, count=n)
            ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
            links = np.concatenate(self._piece_links) if n else np.zeros(0, dtype=np.int64)
            w = np.concatenate(self._piece_weights) if n else np.zeros(0)
            self._flat = (n, ptr, links, w)
        return self._flat[1:]

    def piece_cover(self) -> tuple[np.ndarray, np.ndarray]:
        """``(covered, exclusive)``: per link, whether some piece crosses it; per piece,
        whether no other piece crosses any of its links."""
        n = len(self._piece_links)
        if self._cover is None or self._cover[0] != n:
            ptr, links, _ = self._pieces_flat()
            count = np.bincount(links, minlength=self.n_links)
            sizes = np.diff(ptr)
            most = np.zeros(n, dtype=np.int64)
            full = sizes > 0
            if full.any():
                most[full] = np.maximum.reduceat(count[links], ptr[:-1][full])
            self._cover = (n, count > 0, most <= 1)
        return self._cover[1:]

    def expand(self, pieces: np.ndarray, coef: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Links and weights of ``pieces`` (ids), each scaled by its ``coef``:
        ``(entry piece position, links, weights)``."""
        ptr, links, w = self._pieces_flat()
        start, count = ptr[pieces], ptr[pieces + 1] - ptr[pieces]
        total = int(count.sum())
        at = np.repeat(start, count) + np.arange(total) - np.repeat(np.cumsum(count) - count,
                                                                    count)
        which = np.repeat(np.arange(len(pieces)), count)
        return which, links[at], w[at] * np.repeat(coef, count)

    # ----------------------------------------------------------------- templates
    def _full_template(self, sa: int, sb: int, src, dst):
        """A route shared by every GPU pair with signatures ``sa``, ``sb`` that the
        up/down fast path does not give (a shared switch, or a general search from the pair
        ``src``, ``dst``): ``(head, tail, list, latency, hops, scaleout)`` or None."""
        key = (sa, sb)
        if key in self._full:
            return self._full[key]
        a_sig, b_sig = self._sigs[sa], self._sigs[sb]
        common = {s for s, _, _ in a_sig} & {s for s, _, _ in b_sig}
        if common:  # a two-hop route through the switches both are wired to
            tb = {s: (j, la) for j, (s, _, la) in enumerate(b_sig)}
            fa, fw, lpos, lat, so = [], [], [], 0.0, False
            tot = sum(bw for s, bw, _ in a_sig if s in common)
            swl, tier = self._switch_latency, self.tier
            for j, (s, bw, la) in enumerate(a_sig):
                if s in common:
                    fa.append(j)
                    fw.append(bw / tot)
                    lpos.append(tb[s][0])
                    lat = max(lat, la + swl.get(s, 0.0) + tb[s][1])
                    so = so or tier[s] >= 1
            hit = (self._add_spec(fa, fw), self._add_spec(lpos, fw), 0, float(lat), 2, so)
        else:
            # through switches only, not over a cable between the two (the pair standing for
            # two signatures may be cabled together; the pairs it stands for are not: direct
            # neighbours are routed on their own)
            found = self._search(src, dst, gpu_transit=False, direct=False)
            hit = None if found is None else self._search_template(src, dst, found, a_sig,
                                                                    b_sig)
        self._full[key] = hit
        return hit

    def _search_template(self, src, dst, found, a_sig, b_sig):
        links, weights, latency, hops = found
        pa = {s: j for j, (s, _, _) in enumerate(a_sig)}
        pb = {s: j for j, (s, _, _) in enumerate(b_sig)}
        fp, fw, lp, lw, middle_l, middle_w = [], [], [], [], [], []
        for lid, w in zip(links, weights, strict=True):
            u, v = self._nodes[self._src[lid]], self._nodes[self._dst[lid]]
            if u == src:
                fp.append(pa[v])
                fw.append(w)
            elif v == dst:
                lp.append(pb[u])
                lw.append(w)
            else:
                middle_l.append(lid)
                middle_w.append(w)
        scaleout = bool(self.scaleout[np.asarray(links, dtype=np.int64)].any())
        pieces = [self._add_piece(np.array(middle_l, dtype=np.int64),
                                  np.array(middle_w, dtype=float))] if middle_l else []
        return (self._add_spec(fp, fw), self._add_spec(lp, lw), self._add_list(pieces),
                latency, hops, scaleout)

    def _describe(self, src: np.ndarray, dst: np.ndarray) -> dict:
        """How each transfer ``src[i] -> dst[i]`` (node numbers) is routed.

        Templated transfers (``kind`` 1: switched routes between two GPUs) get their
        first-hop and last-hop patterns (``head``, ``tail``: spec ids), the piece lists
        (``l1``, ``l2``), ``latency``, ``hops`` and ``scaleout``; the others (``kind`` -1:
        not two GPUs, the same GPU, direct neighbours, no switched route) are routed on
        their own. Everything is computed per distinct pair of signatures, with numpy.
        """
        T = len(src)
        out = {"kind": np.full(T, -1, dtype=np.int64), "head": np.full(T, -1, dtype=np.int64),
               "tail": np.full(T, -1, dtype=np.int64), "l1": np.zeros(T, dtype=np.int64),
               "l2": np.zeros(T, dtype=np.int64), "latency": np.zeros(T),
               "hops": np.zeros(T, dtype=np.int64), "scaleout": np.zeros(T, dtype=bool)}
        code = self._code
        idx = np.flatnonzero((code[src] == _GPU) & (code[dst] == _GPU) & (src != dst))
        near = np.flatnonzero(self._gpu_linked[src[idx]])  # GPUs cabled to a GPU
        if len(near):  # direct neighbours: one link, routed on their own
            linked = self._lids(src[idx[near]], dst[idx[near]]) >= 0
            idx = np.delete(idx, near[linked])
        if not len(idx):
            return out
        gs, gd = self._gidx[src[idx]], self._gidx[dst[idx]]
        self._ensure_sigs(np.concatenate([gs, gd]))
        key = (self._gpu_sig[gs] << 32) | self._gpu_sig[gd]
        if len(idx) <= 64:  # few transfers: signature pairs seen before, from a dict
            known = self._pair_rows
            keys = key.tolist()
            rows = [known.get(k) for k in keys]
            if None in rows:
                self._learn_pairs(key[[j for j, r in enumerate(rows) if r is None]])
                rows = [known[k] for k in keys]
            for name, col in zip(_FIELDS, zip(*rows, strict=True), strict=True):
                out[name][idx] = col
            return out
        at = self._known_at(key, src[idx], dst[idx])
        for k, v in self._known_fields.items():
            if len(idx) == T:  # every transfer templated (the usual case)
                out[k] = v[at]
            else:
                out[k][idx] = v[at]
        return out

    def _known_at(self, key: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Positions of signature pairs ``key`` in the table of known pairs, the route
        fields of those not known yet worked out first (``src[i] -> dst[i]``: a GPU pair
        wired as ``key[i]``; the first of each new pair stands for it). The table is kept
        sorted by key, so that later steps look their pairs up instead of working them
        out again; it starts afresh with a step's pairs when it might grow past
        :data:`_KNOWN_PAIRS`."""
        known = self._known_keys
        S = len(self._sigs)
        dense = S * S <= _DENSE_PAIRS  # a square index of every pair of signatures
        if dense:
            if self._known_index is None or len(self._known_index) != S * S:
                self._index_known(S)
            cell = (key >> 32) * S + (key & 0xFFFFFFFF)
            at = self._known_index[cell]
            hit = at >= 0
        else:
            self._known_index = None
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
        miss = np.arange(len(key)) if hit is None else np.flatnonzero(~hit)
        uk, first, inv = np.unique(key[miss], return_index=True, return_inverse=True)
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

    def _learn_pairs(self, keys: np.ndarray) -> None:
        """Put the route fields of signature pairs ``keys`` in the dict of known pairs; while
        the fabric shows few signatures, those of every pair of them at once (one numpy
        pass instead of one per step)."""
        n = len(self._sigs)
        if n <= 128:
            a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
            new = (a >= self._learned) | (b >= self._learned)
            keys = np.concatenate([keys, (a[new] << 32) | b[new]])
            self._learned = n
        uk = unique(keys)
        uk = uk[[k not in self._pair_rows for k in uk.tolist()]]
        if not len(uk):
            return
        rep = np.array(self._sig_rep)
        u = self._pair_fields(uk, rep[uk >> 32], rep[uk & 0xFFFFFFFF])
        cols = [u[k].tolist() for k in _FIELDS]
        for j, k in enumerate(uk.tolist()):
            self._pair_rows[k] = tuple(c[j] for c in cols)

    def _pair_fields(self, uk: np.ndarray, src: np.ndarray, dst: np.ndarray) -> dict:
        """The route fields of signature pairs ``uk`` (``a << 32 | b``), ``src[j] ->
        dst[j]`` a GPU pair wired as pair ``j``."""
        ua, ub = uk >> 32, uk & 0xFFFFFFFF
        u = {k: np.full(len(uk), -1, dtype=np.int64) for k in ("kind", "head", "tail")}
        u["l1"] = np.zeros(len(uk), dtype=np.int64)
        u["l2"] = np.zeros(len(uk), dtype=np.int64)
        u["latency"] = np.zeros(len(uk))
        u["hops"] = np.zeros(len(uk), dtype=np.int64)
        u["scaleout"] = np.zeros(len(uk), dtype=bool)
        sw = self._si_sw.table
        wa, wb = sw[ua], sw[ub]
        shared = ((wa[:, :, None] == wb[:, None, :]) & (wa[:, :, None] >= 0)).any(axis=(1, 2))
        status = np.where(shared, 2, 0)
        if self.tiered:
            self._meet(ua, ub, status, u)
        status[status == 0] = 2
        nodes = self._nodes
        for j in np.flatnonzero(status == 2).tolist():
            hit = self._full_template(int(ua[j]), int(ub[j]), nodes[src[j]], nodes[dst[j]])
            if hit is not None:
                (u["head"][j], u["tail"][j], u["l1"][j], u["latency"][j], u["hops"][j],
                 u["scaleout"][j]) = hit
                u["kind"][j] = 1
        return u

    def _meet(self, ua: np.ndarray, ub: np.ndarray, status: np.ndarray, u: dict) -> None:
        """The up/down fast path for the signature pairs ``ua[j] -> ub[j]`` with
        ``status[j] == 0``: the lowest tier where the two cones are the same switches (no
        dead end below, no partial overlap before); fills ``u`` for those and sets their
        status to 1; 2 where the fast path does not apply."""
        m = np.flatnonzero(status == 0)
        info = self._si_info.table
        m = m[(info[ua[m], 0] == 1) & (info[ub[m], 0] == 1)]
        if not len(m):
            return
        a, b = ua[m], ub[m]
        sets, dead = self._si_set.table, self._si_dead.table
        ta, tb = info[a, 1], info[b, 1]
        start = np.maximum(ta, tb)
        st = np.zeros(len(m), dtype=np.int64)
        tm = np.full(len(m), -1, dtype=np.int64)
        ud = self._updown
        for t in range(self._top + 1):
            act = (st == 0) & (t >= start)
            if not act.any():
                continue
            sa, sb = sets[a, t], sets[b, t]
            bad = act & ((sa < 0) | (sb < 0) | (dead[a, t] != 0) | (dead[b, t] != 0))
            st[bad] = 2
            act &= ~bad
            eq = act & (sa == sb)
            st[eq] = 1
            tm[eq] = t
            if not self._partition[t]:
                for j in np.flatnonzero(act & ~eq).tolist():
                    if not ud.disjoint(int(sa[j]), int(sb[j])):
                        st[j] = 2
        status[m] = np.where(st == 1, 1, 2)
        ok = st == 1
        m, a, b, tm, ta, tb = m[ok], a[ok], b[ok], tm[ok], ta[ok], tb[ok]
        if not len(m):
            return
        states = self._si_state.table
        s_a, s_b = states[a, tm], states[b, tm]
        h, k = tm - ta, tm - tb
        # the way down: one half per (destination, depth, flow at the top)
        hk = (b << 40) | (k << 32) | s_a
        uh, hinv = np.unique(hk, return_inverse=True)
        hinv = hinv.ravel()
        halves, cones = self._halves, self._si_cone
        keys = uh.tolist()
        got = list(map(halves.get, keys))
        for j in [j for j, hit in enumerate(got) if hit is None]:  # new halves, in order
            key = keys[j]
            bb, kk, sid = key >> 40, (key >> 32) & 0xFF, key & 0xFFFFFFFF
            pieces, f0 = ud.descend(cones[bb], kk, sid)
            base = ud.state(cones[bb][0])
            sig = self._sigs[bb]
            pos = {x: i for i, (x, _, _) in enumerate(sig)}
            got[j] = halves[key] = (self._add_spec([pos[x] for x in base.nodes], f0),
                                    self._add_list(pieces),
                                    any(self._piece_scaleout[i] for i in pieces))
        cols = np.array(got, dtype=np.int64).reshape(len(got), 3)
        tail, lst, hso = cols[:, 0], cols[:, 1], cols[:, 2] != 0
        # latency: one per (state climbed to, state descended from)
        lk = (s_a << 32) | s_b
        ul, linv = np.unique(lk, return_inverse=True)
        lats = self._meet_lat
        lat = np.array([lats[x] if x in lats else lats.setdefault(
            x, ud.meeting_latency(x >> 32, x & 0xFFFFFFFF)) for x in ul.tolist()])
        u["kind"][m] = 1
        u["head"][m] = info[a, 2]
        u["tail"][m] = tail[hinv]
        u["l1"][m] = self._si_up.table[a, tm]
        u["l2"][m] = lst[hinv]
        u["latency"][m] = lat[linv.ravel()]
        u["hops"][m] = 2 + h + k
        u["scaleout"][m] = (self._si_upso.table[a, tm] != 0) | hso[hinv] \
            | (info[a, 3] != 0) | (info[b, 3] != 0)

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
        gs, gd = self._gidx[src[on]], self._gidx[dst[on]]
        if len(on) <= 48:  # few transfers: plain loops over cached lists beat numpy calls
            return self._hops_and_pieces_small(on, gs, gd, d)
        hop_i, hop_l, hop_w = [], [], []
        spos, sw = self._specs_pos.table, self._specs_w.table
        for ports, g, spec in ((self._ports_up, gs, d["head"][on]),
                               (self._ports_down, gd, d["tail"][on])):
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
        lists = self._lists.table
        pc = np.concatenate([np.take(lists, d["l1"][on], axis=0),
                             np.take(lists, d["l2"][on], axis=0)], axis=1)
        valid = pc >= 0
        return (np.concatenate(hop_i), np.concatenate(hop_l), np.concatenate(hop_w),
                np.broadcast_to(on[:, None], pc.shape)[valid], pc[valid])

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

    def _add_list(self, pieces) -> int:
        """Register a list of piece ids; returns its id."""
        self._list_py.append(list(pieces))
        return self._lists.add(pieces)

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
        """Keep ``plan`` for steps with the same pairs (halving and doubling share them)."""
        if len(self._plans) >= 256:
            self._plans.pop(next(iter(self._plans)))
        self._plans[key] = (None, *map(plan.__getattribute__, _PLAN_FIELDS))

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

    def _resolve(self, src, dst):
        """Cached: the Route of a transfer not routed by template, or None."""
        key = (src, dst)
        try:
            return self._pair_cache[key]
        except KeyError:
            pass
        hit = self._compute(src, dst)
        self._pair_cache[key] = hit
        return hit

    def _compute(self, src, dst):
        if src == dst:
            return Route(np.zeros(0, dtype=np.int64), np.zeros(0), 0.0, 0, False)
        kind = self.kind
        if src not in kind or dst not in kind:
            raise UserError(f"node {src if src not in kind else dst!r} is not in the fabric")
        if dst in self._adj[src]:
            lid = self._port(src)[dst]
            return Route(np.array([lid]), np.ones(1), float(self.latency[lid]), 1,
                         bool(self.scaleout[lid]))
        # two GPUs routed here have no switched route (else they would have a template): a
        # GPU may forward; any other pair may use any path
        if len(self._nodes) <= _DAG_NODES and kind[src] in _TRANSIT and kind[dst] in _TRANSIT:
            found = self._from_dag(src, dst)
        else:
            found = self._search(src, dst, gpu_transit=True)
        if found is None:
            return None
        links, weights, latency, hops = found
        if self._so_list is None:
            self._so_list = self.scaleout.tolist()
        return Route(np.array(links, dtype=np.int64), np.array(weights, dtype=float), latency,
                     hops, any(map(self._so_list.__getitem__, links)))

    def _learn_from_dags(self, src: np.ndarray, dst: np.ndarray, key: np.ndarray,
                         base: int) -> int:
        """Add the routes ``src[i] -> dst[i]`` (node numbers of switches or GPUs, distinct,
        not neighbours) to the table of :meth:`_route_ids` as entries ``base, base + 1,
        ...`` (:meth:`_spread_many`); returns the next entry id."""
        if not len(src):
            return base
        ok, sizes, links, weights, latency, hops = self._spread_many(src, dst)
        n_ok = int(ok.sum())
        ids = np.full(len(src), -1, dtype=np.int64)
        ids[ok] = np.arange(base, base + n_ok)
        self._rt_id.update(zip(key.tolist(), ids.tolist(), strict=True))
        if n_ok:
            starts = np.cumsum(sizes) - sizes
            self._rt_ptr.extend(self._rt_ptr.a[-1] + np.cumsum(sizes))
            self._rt_links.extend(links)
            self._rt_weights.extend(weights)
            self._rt_latency.extend(latency)
            self._rt_hops.extend(hops)
            self._rt_scaleout.extend(np.logical_or.reduceat(self.scaleout[links], starts))
        return base + n_ok

    def _dag_csrs(self, dst: np.ndarray) -> list:
        """:meth:`_dag` of each destination ``dst`` (node numbers, distinct) as arrays over
        node numbers (kept per destination): hops to the destination (-1: no path), and
        each node's next hops (``pointer`` per node, then per edge: the next node, link
        id, bandwidth, the sum of the node's next hops' bandwidths, summed in order), in
        the order of :meth:`_dag`. The missing ones come from one breadth-first search of
        them all, with numpy."""
        keep = self._dag_np
        need = [d for d in dict.fromkeys(dst.tolist()) if d not in keep]
        if need:
            n = self._n
            per = max(1, (1 << 22) // max(n, len(self._src), 1))
            for c0 in range(0, len(need), per):
                self._build_dags(np.array(need[c0:c0 + per], dtype=np.int64))
        return [keep[d] for d in dst.tolist()]

    def _nbr_csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each node's neighbours in adjacency order (as :meth:`_dag` reads them):
        ``(pointer per node number, neighbour, link id)``."""
        if self._nbrcsr is None:
            adj, nid = self._adj, self._nid
            starts = np.fromiter(map(nid.__getitem__, adj), np.int64, count=len(adj))
            cnt = np.fromiter(map(len, adj.values()), np.int64, count=len(adj))
            ends = np.fromiter(map(nid.__getitem__, chain.from_iterable(adj.values())),
                               np.int64, count=int(cnt.sum()))
            first = np.repeat(starts, cnt)
            o = np.argsort(first, kind="stable")
            first, ends = first[o], ends[o]
            ptr = np.zeros(self._n + 1, dtype=np.int64)
            np.cumsum(np.bincount(first, minlength=self._n), out=ptr[1:])
            self._nbrcsr = (ptr, ends, self._lids(first, ends))
        return self._nbrcsr

    def _build_dags(self, dst: np.ndarray) -> None:
        """Add the arrays of :meth:`_dag_csrs` for destinations ``dst`` to the kept ones."""
        n, m = self._n, len(dst)
        ptr, nbr, link = self._nbr_csr()
        deg = np.diff(ptr)
        transit = self._code <= _SWITCH

        def expand(u):
            c = deg[u]
            first = np.cumsum(c) - c
            return c, np.repeat(ptr[u], c) + np.arange(int(c.sum())) - np.repeat(first, c)

        dist = np.full((m, n), -1, dtype=np.int64)
        row = np.arange(m)
        dist[row, dst] = 0
        fr, fu, h = row, dst, 0
        while len(fr):  # breadth-first, through switches and GPUs
            h += 1
            c, e = expand(fu)
            r, v = np.repeat(fr, c), nbr[e]
            ok = transit[v] & (dist[r, v] < 0)
            cell = np.unique(r[ok] * n + v[ok])
            fr, fu = cell // n, cell % n
            dist[fr, fu] = h
        R, U = np.nonzero(dist >= 1)  # by destination, then node number
        c, e = expand(U)
        r, u = np.repeat(R, c), np.repeat(U, c)
        v = nbr[e]
        ok = dist[r, v] == np.repeat(dist[R, U] - 1, c)
        r, u, v, lid = r[ok], u[ok], v[ok], link[e][ok]
        bw = self.bandwidth[lid]
        g = r * n + u
        new = np.ones(len(g), dtype=bool)
        new[1:] = g[1:] != g[:-1]
        gi = np.cumsum(new) - 1
        idx = np.arange(len(g))
        k = idx - np.maximum.accumulate(np.where(new, idx, 0))
        tot = np.zeros(int(new.sum()))
        for kk in range(int(k.max()) + 1 if len(k) else 0):  # summed in order, as sum()
            sel = k == kk
            tot[gi[sel]] += bw[sel]
        tot = tot[gi]
        counts = np.bincount(g, minlength=m * n).reshape(m, n)
        per_row = np.cumsum(counts.sum(axis=1))
        keep = self._dag_np
        lo = 0
        for i, d in enumerate(dst.tolist()):
            hi = int(per_row[i])
            p = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(counts[i], out=p[1:])
            if len(keep) >= 512:
                keep.pop(next(iter(keep)))
            keep[d] = (dist[i], p, v[lo:hi], lid[lo:hi], bw[lo:hi], tot[lo:hi])
            lo = hi

    def _spread_many(self, src: np.ndarray, dst: np.ndarray) -> tuple:
        """:meth:`_from_dag` of every pair ``src[i] -> dst[i]`` (node numbers, distinct) at
        once, with numpy: the same links in the same order, the same shares and latencies
        to the last bit. Returns ``(ok, sizes, links, weights, latency, hops)``: whether
        each pair has a path, and for those that do, in order, the size of each route,
        their links and weights one after the other, latency and hops.

        Each pair is a row, walked level by level as :meth:`_spread` walks it: a level's
        nodes in the order the walk finds them (by the rank of the node each is first
        reached from, then by its place among that node's next hops), the traffic arriving
        at a node summed in that order."""
        n = self._n
        uniq, jd = np.unique(dst, return_inverse=True)
        jd = jd.ravel()
        csr = self._dag_csrs(uniq)
        ok = np.stack([c[0] for c in csr])[jd, src] > 0
        out = []
        # rows in chunks: state per (row, node), and each chunk's dags stacked
        rows = np.flatnonzero(ok)
        rows = rows[np.argsort(jd[rows], kind="stable")]
        per = max(1, (1 << 21) // n)
        for c0 in range(0, len(rows), per):
            r = rows[c0:c0 + per]
            out.append((r, *self._spread_rows(src[r], dst[r], jd[r], csr)))
        if not out:
            z = np.zeros(0, dtype=np.int64)
            return ok, z, z, np.zeros(0), np.zeros(0), z
        r, sizes, links, weights, latency, hops = (np.concatenate(x) for x in zip(*out,
                                                                             strict=True))
        # back to the pairs' order
        o = np.argsort(r, kind="stable")
        ptr = np.cumsum(sizes) - sizes
        take = np.repeat(ptr[o], sizes[o]) + np.arange(int(sizes.sum())) - np.repeat(
            np.cumsum(sizes[o]) - sizes[o], sizes[o])
        return ok, sizes[o], links[take], weights[take], latency[o], hops[o]

    def _spread_rows(self, src, dst, jd, csr) -> tuple:
        """:meth:`_spread_many` of rows ``src -> dst`` (all with a path), ``jd`` naming
        each row's destination's arrays in ``csr``."""
        n, R = self._n, len(src)
        used, j = np.unique(jd, return_inverse=True)
        j = j.ravel()
        parts = [csr[x] for x in used.tolist()]
        sizes_e = np.array([len(c[2]) for c in parts], dtype=np.int64)
        off = np.cumsum(sizes_e) - sizes_e
        PTR = np.concatenate([c[1][:-1] + o for c, o in zip(parts, off.tolist(),
                                                             strict=True)])
        CNT = np.concatenate([np.diff(c[1]) for c in parts])
        EV = np.concatenate([c[2] for c in parts])
        EL = np.concatenate([c[3] for c in parts])
        EB = np.concatenate([c[4] for c in parts])
        ET = np.concatenate([c[5] for c in parts])
        hops = np.stack([c[0] for c in parts])[j, src]
        swl = self._sw_lat_arr
        if swl is None:
            swl = self._sw_lat_arr = np.zeros(n)
            if self._switch_latency:
                swl[np.fromiter(map(self._nid.__getitem__, self._switch_latency), np.int64,
                                count=len(self._switch_latency))] = np.fromiter(
                    self._switch_latency.values(), float, count=len(self._switch_latency))
        lat = self.latency
        flow = np.zeros(R * n)
        arrive = np.full(R * n, -1.0)
        row = np.arange(R)
        fr, fu, frank = row, src, np.zeros(R, dtype=np.int64)  # the frontier
        flow[row * n + src] = 1.0
        arrive[row * n + src] = 0.0
        em_r, em_k, em_rank, em_pos, em_l, em_w = [], [], [], [], [], []
        level = 0
        while len(fr):
            at = j[fr] * n + fu
            cnt = CNT[at]
            e_n = int(cnt.sum())
            if not e_n:
                break
            first = np.cumsum(cnt) - cnt
            pos = np.arange(e_n) - np.repeat(first, cnt)
            e = np.repeat(PTR[at], cnt) + pos
            er, eu, ru = np.repeat(fr, cnt), np.repeat(fu, cnt), np.repeat(frank, cnt)
            v, lid = EV[e], EL[e]
            share = flow[er * n + eu] * EB[e] / ET[e]
            em_r.append(er)
            em_k.append(np.full(e_n, level))
            em_rank.append(ru)
            em_pos.append(pos)
            em_l.append(lid)
            em_w.append(share)
            cell = er * n + v
            np.maximum.at(arrive, cell, (arrive[er * n + eu] + swl[eu]) + lat[lid])
            # traffic into each node, added in the order the walk adds it; the next level
            # in the order the walk finds it
            o = np.lexsort((pos, ru, cell))
            c2, s2 = cell[o], share[o]
            new = np.ones(e_n, dtype=bool)
            new[1:] = c2[1:] != c2[:-1]
            idx = np.arange(e_n)
            k = idx - np.maximum.accumulate(np.where(new, idx, 0))
            for kk in range(int(k.max()) + 1):
                m = k == kk
                flow[c2[m]] += s2[m]
            heads = o[new]  # each next node's first (rank, place) among its reachers
            nr, nv = er[heads], v[heads]
            o2 = np.lexsort((pos[heads], ru[heads], nr))
            nr, nv = nr[o2], nv[o2]
            starts = np.flatnonzero(np.r_[True, nr[1:] != nr[:-1]])
            frank = np.arange(len(nr)) - np.repeat(starts, np.diff(np.r_[starts, len(nr)]))
            fr, fu = nr, nv
            level += 1
        R_ = np.concatenate(em_r)
        o = np.lexsort((np.concatenate(em_pos), np.concatenate(em_rank),
                        np.concatenate(em_k), R_))
        return (np.bincount(R_, minlength=R), np.concatenate(em_l)[o],
                np.concatenate(em_w)[o], arrive[row * n + dst], hops)

    def _dag(self, dst) -> dict:
        """The shortest paths towards ``dst`` through switches and GPUs, kept per
        destination: ``{node: (hops to dst, next hops)}``, each next hop ``(neighbour, link
        id, bandwidth, sum of the next hops' bandwidths)``. One breadth-first search serves
        every source routed to ``dst`` (a GPU forwarding ring routes all pairs)."""
        hit = self._dags.get(dst)
        if hit is not None:
            return hit
        rows = self._nbr_rows
        if rows is None:
            rows = self._nbr_rows = {}
        transit = self._transit_nbrs
        if transit is None:
            kind = self.kind
            transit = self._transit_nbrs = {
                u: [v for v in nb if kind.get(v) in _TRANSIT] for u, nb in self._adj.items()}
        dist = {dst: 0}
        frontier, depth = [dst], 0
        while frontier:
            depth += 1
            nxt = []
            for u in frontier:
                for v in transit.get(u, ()):
                    if v not in dist:
                        dist[v] = depth
                        nxt.append(v)
            frontier = nxt
        dag = {}
        dist_get = dist.get
        for u, du in dist.items():
            if du == 0:
                dag[u] = (0, ())
                continue
            row = rows.get(u)
            if row is None:  # (neighbour, link id, bandwidth) in adjacency order
                nbrs, port = self._adj[u], self._port(u)
                row = rows[u] = [(v, port[v], nbrs[v]["bandwidth"]) for v in nbrs]
            want = du - 1
            ahead = [x for x in row if dist_get(x[0]) == want]
            tot = sum(x[2] for x in ahead)
            dag[u] = (du, tuple((v, lid, b, tot) for v, lid, b in ahead))
        if len(self._dags) >= 512:
            self._dags.pop(next(iter(self._dags)))
        self._dags[dst] = dag
        return dag

    def _from_dag(self, src, dst):
        """:meth:`_search`'s answer for two switches or GPUs (GPUs may forward), from the
        kept shortest paths towards ``dst``: the same links, shares and latency, with the
        traffic split over the next hops in proportion to their bandwidth."""
        dag = self._dag(dst)
        start = dag.get(src)
        if start is None:
            return None
        return self._spread(src, dst, start[0], dag)

    def _spread(self, src, dst, total: int, next_hops):
        """One unit of traffic from ``src`` over ``total`` hops of shortest paths to
        ``dst``, split at each node over its next hops (``(v, link id, bandwidth, their
        bandwidths' sum)`` each: ``next_hops(u)``, or ``next_hops[u][1]`` for a
        :meth:`_dag`) in proportion to bandwidth: ``(link ids, shares, latency of the
        slowest path, total)``."""
        flow = {src: 1.0}
        arrive = {src: 0.0}
        links, weights = [], []
        if self._lat_list is None:
            self._lat_list = self.latency.tolist()
        lat, swl = self._lat_list, self._switch_latency.get
        add_link, add_weight = links.append, weights.append
        flow_get, arrive_get = flow.get, arrive.get
        dag = next_hops if isinstance(next_hops, dict) else None
        level = [src]
        for _ in range(total):
            ahead: dict = {}
            for u in level:
                f = flow[u]
                t0 = arrive[u] + swl(u, 0.0)
                for v, lid, b, tot in (dag[u][1] if dag is not None else next_hops(u)):
                    share = f * b / tot
                    add_link(lid)
                    add_weight(share)
                    flow[v] = flow_get(v, 0.0) + share
                    ahead[v] = None
                    t = t0 + lat[lid]
                    if t > arrive_get(v, -1.0):
                        arrive[v] = t
            level = list(ahead)
        return links, weights, float(arrive[dst]), total

    def _search(self, src, dst, *, gpu_transit: bool, direct: bool = True):
        """Bidirectional BFS; returns (link ids, weights, latency, hops) or None.
        ``direct=False``: a cable between ``src`` and ``dst`` is not taken."""
        adj = self._adj
        kind = self.kind

        def ok(v: Hashable) -> bool:
            k = kind.get(v)
            return k == "switch" or (gpu_transit and k == "gpu")

        def grow(frontier: list[Hashable], dist: dict[Hashable, int], target: Hashable,
                 depth: int) -> list[Hashable]:
            """One BFS level out of ``frontier``; the far end ``target`` may be entered
            (not from the near end itself, without ``direct``)."""
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if v not in dist and (v == target and (direct or depth > 0) or ok(v)):
                        dist[v] = depth + 1
                        nxt.append(v)
            return nxt

        ds, dd = {src: 0}, {dst: 0}
        fs, fd = [src], [dst]
        hs = hd = 0
        meet: list = []
        while fs and fd and not meet:
            if len(fs) <= len(fd):  # grow the smaller side
                fs = grow(fs, ds, dst, hs)
                hs += 1
                meet = [v for v in fs if v in dd]
            else:
                fd = grow(fd, dd, src, hd)
                hd += 1
                meet = [v for v in fd if v in ds]
        if not meet:
            return None
        total = hs + hd
        k = min(ds[v] for v in meet)  # all meeting nodes sit at one position k
        level: list[set[Hashable]] = [set() for _ in range(total + 1)]
        level[k] = {v for v in meet if ds[v] == k}
        for i in range(k, 0, -1):  # towards the source: ds decreases by one per hop
            prev = set()
            for v in level[i]:
                for u in adj[v]:
                    if ds.get(u) == i - 1:
                        prev.add(u)
            level[i - 1] = prev
        for i in range(k, total):  # towards the destination: dd decreases by one per hop
            nxt = set()
            want = total - i - 1
            for v in level[i]:
                for w in adj[v]:
                    if dd.get(w) == want:
                        nxt.add(w)
            level[i + 1] = nxt
        position = {v: i for i, nodes in enumerate(level) for v in nodes}

        def next_hops(u):
            nbrs, ahead = adj[u], position[u] + 1
            hops = [v for v in nbrs if position.get(v) == ahead]
            bws = [nbrs[v]["bandwidth"] for v in hops]
            tot = sum(bws)
            port = self._port(u)
            return [(v, port[v], b, tot) for v, b in zip(hops, bws, strict=True)]

        return self._spread(src, dst, total, next_hops)
