"""The router's index of a fabric (node numbers, directed links, their sort, the GPU port
tables) equals, array for array, the one built by the code it replaced (kept below as
``_old_index``, a verbatim copy of ``Router.__init__``'s index part as of 437ce89)."""

from __future__ import annotations

from itertools import chain, compress, repeat
from operator import itemgetter, methodcaller

import networkx as nx
import numpy as np
import pytest

from netmodel.collectives.route_types import KIND_CODE, KIND_GPU, KIND_OCS, KIND_OTHER, KIND_SWITCH
from netmodel.collectives.routing import Router
from topologies import build

SPECS = ["fat-tree:k=8", "leaf-spine:leaves=2,radix=4", "torus:dims=4x2x3", "ring:n=8",
         "ocs:gpus=8,ports=2", "ocs:gpus=4,ports=2,logical=ring,latency=1us", "nvl72",
         "superpod", "single-switch:n=8", "rail-optimized:domains=2", "full-mesh:n=4,gpu=Lite",
         "lite-groups:split=gateway"]

FIELDS = ["_nodes", "_nid", "kind", "_code", "_switch_latency", "tier", "_tier_arr", "tiered",
          "_src", "_dst", "_gpu_linked", "bandwidth", "latency", "scaleout", "_n", "_order",
          "_keys", "gpu_list", "_gidx", "_gpu_n", "_width", "_gpu_sig", "_gport_link",
          "_gport_ptr", "_top"]


class _Old:
    def __init__(self, graph: nx.Graph) -> None:
        self.graph = graph
        self._adj = graph._adj
        nodes = list(graph)
        self._nodes = nodes
        nid = {n: i for i, n in enumerate(nodes)}
        self._nid = nid
        data = graph._node
        kinds = dict(zip(nodes, map(methodcaller("get", "kind"), data.values()), strict=True))
        self.kind = kinds
        code = np.fromiter(map(KIND_CODE.get, kinds.values(), repeat(KIND_OTHER, len(nodes))),
                           np.int8, count=len(nodes))
        self._code = code
        switches = [nodes[i] for i in np.flatnonzero(code == KIND_SWITCH).tolist()]
        sdata = [data[x] for x in switches]
        self._switch_latency = dict(zip(switches, map(float, map(
            methodcaller("get", "latency", 0.0), sdata)), strict=True))
        tiers = dict(zip(switches, map(methodcaller("get", "tier", 0), sdata), strict=True))
        self.tier = tiers
        tier_arr = np.zeros(len(nodes))
        if tiers:
            tier_arr[code == KIND_SWITCH] = np.fromiter(tiers.values(), float, count=len(tiers))
        adj = graph._adj
        counts = np.fromiter(map(len, adj.values()), np.int64, count=len(adj))
        ends = np.fromiter(map(nid.__getitem__, chain.from_iterable(adj.values())), np.int64,
                           count=int(counts.sum()))
        starts = np.fromiter(map(nid.__getitem__, adj), np.int64, count=len(adj))
        first = np.repeat(starts, counts)
        rank = np.empty(len(nodes), dtype=np.int64)
        rank[starts] = np.arange(len(starts))
        keep = rank[ends] >= rank[first]
        datas = list(compress(chain.from_iterable(nb.values() for nb in adj.values()),
                              keep.tolist()))
        m = len(datas)
        u, v = first[keep], ends[keep]
        bw = np.fromiter(map(itemgetter("bandwidth"), datas), float, count=m)
        lat = np.fromiter(map(itemgetter("latency"), datas), float, count=m)
        sw_u, sw_v = code[u] == KIND_SWITCH, code[v] == KIND_SWITCH
        both = sw_u & sw_v
        self.tiered = bool(np.all(np.abs(tier_arr[u[both]] - tier_arr[v[both]]) == 1))
        so = (sw_u & (tier_arr[u] >= 1)) | (sw_v & (tier_arr[v] >= 1)) | (code[u] == KIND_OCS) \
            | (code[v] == KIND_OCS)
        src = np.empty(2 * m, dtype=np.int64)
        dst = np.empty(2 * m, dtype=np.int64)
        src[0::2], src[1::2] = u, v
        dst[0::2], dst[1::2] = v, u
        self._src, self._dst = src, dst
        self._gpu_linked = np.bincount(src[code[dst] == KIND_GPU], minlength=len(nodes)) > 0
        self.bandwidth = np.repeat(bw, 2)
        self.latency = np.repeat(lat, 2)
        self.scaleout = np.repeat(so, 2)
        n = max(len(nodes), 1)
        self._n = n
        keys = src * n + dst
        self._order = np.argsort(keys, kind="stable")
        self._keys = keys[self._order]
        self._tier_arr = tier_arr
        gpu_n = np.flatnonzero(code == KIND_GPU)
        self.gpu_list = [nodes[i] for i in gpu_n.tolist()]
        self._gidx = np.full(len(nodes), -1, dtype=np.int64)
        self._gidx[gpu_n] = np.arange(len(gpu_n))
        self._gpu_n = gpu_n
        to_switch = (code[src] == KIND_GPU) & (code[dst] == KIND_SWITCH)
        width = np.bincount(self._gidx[src[to_switch]], minlength=len(gpu_n))
        self._width = int(width.max()) if len(width) else 0
        self._gpu_sig = np.full(len(gpu_n), -1, dtype=np.int64)
        gl = np.flatnonzero(to_switch)
        gl = gl[np.argsort(self._gidx[src[gl]], kind="stable")]
        self._gport_link = gl
        self._gport_ptr = np.concatenate([[0], np.cumsum(width)]).astype(np.int64)
        self._ports_up = np.full((len(gpu_n), max(self._width, 1)), -1, dtype=np.int64)
        self._ports_down = np.full((len(gpu_n), max(self._width, 1)), -1, dtype=np.int64)
        self._top = int(max(tiers.values(), default=0))


def _same(a, b, name):
    assert type(a) is type(b), name
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    elif isinstance(a, dict):
        assert list(a.items()) == list(b.items()), name  # same order too
        assert [type(x) for x in a.values()] == [type(x) for x in b.values()], name
    else:
        assert a == b, name


def _check(graph):
    new, old = Router(graph), _Old(graph)
    for name in FIELDS:
        _same(getattr(new, name), getattr(old, name), name)
    # the port tables (h241): flat, one cell a GPU port, not GPUs x the most ports of one
    # GPU (the old _ports_up; _ports_down is each up link ^ 1), -1 until filled
    _same(new._port_links, np.full(len(old._gport_link), -1, dtype=np.int64), "_port_links")
    ports = np.diff(old._gport_ptr)
    assert new._port_width == (old._width if len(ports) and old._width and
                               ports.min() == old._width else 0)


@pytest.mark.parametrize("spec", SPECS)
def test_index_equals_the_old_code(spec):
    _check(build(spec))


def test_index_on_odd_graphs():
    """A self-loop, a view, adjacency order unlike node order, an empty graph, nodes with
    neither kind nor latency, and integer attributes: still the same index."""
    g = build("leaf-spine:leaves=2,radix=4")
    sw = next(x for x, d in g.nodes(data=True) if d["kind"] == "switch")
    g.add_edge(sw, sw, bandwidth=3, latency=0)
    g.add_node("loner")
    g.add_edge("loner", sw, bandwidth=7, latency=1)
    _check(g)
    gpus = [x for x, d in g.nodes(data=True) if d.get("kind") == "gpu"]
    _check(g.subgraph(gpus[1:] + [sw, "loner"]))  # a view
    h = nx.Graph()
    h.add_nodes_from(reversed(list(g.nodes(data=True))))
    h.add_edges_from(g.edges(data=True))
    h.remove_node(gpus[0])
    _check(h)
    h._adj = {x: h._adj[x] for x in sorted(h._adj, key=str)}  # adjacency in another order
    assert list(h._adj) != list(h)
    _check(h)
    _check(nx.Graph())
