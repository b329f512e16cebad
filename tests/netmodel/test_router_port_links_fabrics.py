"""The router's flat port cells (``_port_links``, h241) on every shipped builder and scenario,
their degraded variants, their JSON and GraphML round trips and copies wired from the other
end (h246's review of f642d53).

The router reads a GPU's link down from a switch as its link up ``^ 1``: edge ``k`` of the
graph is links ``2k`` (from its first node) and ``2k + 1`` (back), so whichever end a
builder or a file names first, a link's reverse is its id ``^ 1``. Checked three ways:

* each GPU's cells are its links to its switches, in switch-name order, each cell ``^ 1`` the
  link back (every fabric below, ragged ones included: a GPU that lost a plane port);
* the loads of random transfers equal, link by link (named), with the GPUs before every
  other node (each GPU's links up even) and after them (odd), the parity of every port
  cell flipped;
* on fabrics where no GPU forwards, they equal the sum of routes searched one at a time by a
  fresh router (``_resolve``: no template, no port cell).

All three pass on the code before f642d53 too (the ``^ 1`` reading is not new: the old
down table was filled with ``up ^ 1``); they fail with the flip dropped or read as ``+ 1``.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from netmodel.collectives.degraded import degrade
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import Pairs
from tests.netmodel.test_rows_meet import _hub
from topologies import build, read_graph, write_graph

SPECS = ["single-switch:n=8", "single-switch:n=4,links=2", "flat:n=16,planes=4,radix=16",
         "leaf-spine:leaves=4,radix=8", "fat-tree:k=4", "rail-optimized:domains=2",
         "superpod", "nvl72", "ring:n=8", "torus:dims=4x2x3", "lite-groups",
         "lite-groups:split=gateway", "ocs:gpus=16,ports=4"]
#: Fabrics where the search's routes are the templates' (no GPU forwards on a shortest
#: path, as on rail-optimized and lite-groups fabrics, and no two GPUs share both an
#: NVSwitch and a network switch, where a template keeps to the NVSwitches: the hub).
NO_GPU_TRANSIT = {"single-switch:n=8", "single-switch:n=4,links=2",
                  "flat:n=16,planes=4,radix=16", "leaf-spine:leaves=4,radix=8", "fat-tree:k=4",
                  "flat:n=16,planes=4,radix=16 without gpu0-plane3"}
_GRAPHS: dict = {}


def _fabric(name: str) -> nx.Graph:
    if name not in _GRAPHS:
        if name == "hub40":
            g = _hub(40)
        elif name.startswith("scenario:"):
            from netmodel.study.scenario_catalog import get_scenario
            from netmodel.study.scenario_fabric import build_fabric

            g = build_fabric(get_scenario(name.split(":", 1)[1]))
        elif " without " in name:
            base, part = name.split(" without ")
            u, v = part.split("-")
            g = degrade(_fabric(base), links=[(u, v)]) if v else degrade(_fabric(base),
                                                                          nodes=[u])
        else:
            g = build(name)
        _GRAPHS[name] = g
    return _GRAPHS[name]


def _scenarios() -> list[str]:
    from netmodel.study.scenario_catalog import scenario_names

    return [f"scenario:{s}" for s in scenario_names()]


DEGRADED = ["flat:n=16,planes=4,radix=16 without gpu0-plane3",   # gpu0: 3 ports, others 4
            "fat-tree:k=4 without core0-", "superpod without leaf0-",
            "rail-optimized:domains=2 without leaf0-", "hub40 without gpu0-nvs39"]
FABRICS = [*SPECS, "hub40", *_scenarios(), *DEGRADED]


def _switch_links(g: nx.Graph, x) -> list:
    return sorted((s for s in g[x] if g.nodes[s]["kind"] == "switch"), key=str)


def _rewired(g: nx.Graph, gpus_first: bool) -> nx.Graph:
    """``g`` with its GPUs before (or after) every other node, each kind's nodes and every
    node's neighbours in ``g``'s order: an edge's links are numbered from the node that
    comes first, so a GPU's link up is ``2k`` in the one and ``2k + 1`` in the other."""
    h = nx.Graph(**g.graph)
    gpu = [n for n, k in g.nodes(data="kind") if k == "gpu"]
    rest = [n for n, k in g.nodes(data="kind") if k != "gpu"]
    for n in (gpu + rest if gpus_first else rest + gpu):
        h.add_node(n, **g.nodes[n])
    h.add_edges_from(g.edges(data=True))
    return h


def _named_loads(g: nx.Graph, transfers: Pairs) -> dict:
    r = Router(g)
    links, coef, latency, _ = r.loads(transfers)
    total = np.bincount(links, coef, minlength=r.n_links)
    return {r.link_name(i): float(total[i]) for i in np.flatnonzero(total).tolist()}, latency


def _transfers(g: nx.Graph, count: int, p2p: bool) -> Pairs:
    gpus = tuple(n for n, k in g.nodes(data="kind") if k == "gpu")
    rng = np.random.default_rng(count + len(gpus))
    a, b = rng.integers(0, len(gpus), count), rng.integers(0, len(gpus), count)
    # joined by a path that no optical switch forwards on (its circuits are GPU-GPU edges)
    carry = g.subgraph(n for n, k in g.nodes(data="kind") if k != "ocs")
    part = {n: i for i, c in enumerate(nx.connected_components(carry)) for n in c}
    comp = np.array([part[x] for x in gpus])
    keep = (a != b) & (comp[a] == comp[b])
    return Pairs(gpus, a[keep], b[keep], 1.0 / count, p2p=p2p)


def test_the_fabrics_include_ragged_and_odd_ports():
    """The list holds a GPU with fewer ports than the others (no table view), a GPU wired to
    41 switches, and a copy whose GPU links up are all odd ids."""
    r = Router(_fabric(DEGRADED[0]))
    assert r._port_width == 0 and r._width == 4
    assert Router(_fabric("hub40"))._width == 41
    for first, parity in ((True, 0), (False, 1)):
        r = Router(_rewired(_fabric("fat-tree:k=4"), first))
        r._ensure_sigs(np.arange(len(r.gpu_list)))
        assert (r._port_links % 2 == parity).all() and len(r._port_links) == 16


@pytest.mark.parametrize("name", FABRICS)
@pytest.mark.parametrize("flip", [False, True])
def test_each_gpus_cells_are_its_switch_links_and_back(name, flip):
    """Every GPU's cells, after its signature is known: the links from it to each of its
    switches by switch name; each cell ``^ 1`` the link from that switch back (GPUs first,
    links up even, or last, links up odd)."""
    g = _rewired(_fabric(name), flip)
    r = Router(g)
    r._ensure_sigs(np.arange(len(r.gpu_list)))
    for i, x in enumerate(r.gpu_list):
        cells = r._port_links[r._gport_ptr[i]:r._gport_ptr[i + 1]].tolist()
        want = _switch_links(g, x)
        assert [r.link_name(c) for c in cells] == [(x, s) for s in want]
        assert [r.link_name(c ^ 1) for c in cells] == [(s, x) for s in want]
    gi = np.arange(len(r.gpu_list))
    down = r._port_rows(gi, down=True)
    assert down == [[r.link_id(s, x) for s in _switch_links(g, x)] for x in r.gpu_list]


@pytest.mark.parametrize("name", FABRICS)
@pytest.mark.parametrize("count", [30, 400])   # plain loops (<= 48 routed) and numpy
@pytest.mark.parametrize("p2p", [False, True])
def test_loads_equal_with_links_up_odd_or_even(name, count, p2p):
    """Random transfers: the named links' loads and the latency with the GPUs' links up
    even (GPUs first) equal, to 1e-12, those with them odd (GPUs last); so do a dozen of
    their single routes (:meth:`Router.route`)."""
    g = _fabric(name)
    want, lat = _named_loads(_rewired(g, True), _transfers(g, count, p2p))
    got, glat = _named_loads(_rewired(g, False), _transfers(g, count, p2p))
    assert got.keys() == want.keys()
    np.testing.assert_allclose([got[k] for k in want], list(want.values()), rtol=1e-12,
                               atol=1e-15)
    assert glat == pytest.approx(lat, rel=1e-12)
    t = _transfers(g, count, p2p)
    ra, rb = Router(_rewired(g, True)), Router(_rewired(g, False))
    for s, d in list(zip(t.src.tolist(), t.dst.tolist(), strict=True))[:12]:
        a, b = ra.route(t.nodes[s], t.nodes[d]), rb.route(t.nodes[s], t.nodes[d])
        wa = dict(zip(map(ra.link_name, a.links.tolist()), a.weights.tolist(), strict=True))
        wb = dict(zip(map(rb.link_name, b.links.tolist()), b.weights.tolist(), strict=True))
        assert wa.keys() == wb.keys() and len(wa) == len(a.links)
        assert [wb[k] for k in wa] == pytest.approx(list(wa.values()), rel=1e-12)
        assert (a.latency, a.hops) == (b.latency, b.hops)


@pytest.mark.parametrize("name", sorted(NO_GPU_TRANSIT))
@pytest.mark.parametrize("count", [30, 400])
def test_loads_equal_routes_searched_one_by_one(name, count):
    """Where no GPU forwards, the batch's loads equal the sum of each transfer's route found
    by a fresh router's search (no template, no port cell), to 1e-12."""
    g = _fabric(name)
    t = _transfers(g, count, False)
    r = Router(g)
    links, coef, latency, _ = r.loads(t)
    got = np.bincount(links, coef, minlength=r.n_links)
    fresh = Router(g)
    want = np.zeros(r.n_links)
    worst = 0.0
    for s, d in zip(t.src.tolist(), t.dst.tolist(), strict=True):
        one = fresh._resolve(t.nodes[s], t.nodes[d])
        np.add.at(want, one.links, one.weights * (1.0 / count))
        worst = max(worst, one.latency)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert latency == pytest.approx(worst, rel=1e-12)


@pytest.mark.parametrize("name", ["flat:n=16,planes=4,radix=16 without gpu0-plane3", "hub40",
                                  "nvl72", "scenario:h100-dgx", "lite-groups:split=gateway"])
@pytest.mark.parametrize("ext", ["json", "graphml"])
def test_a_fabric_read_back_from_a_file_routes_the_same(name, ext, tmp_path):
    """Written and read back (node and edge order as the file keeps them), the fabric's
    loads equal the built one's link by link, to the bit."""
    g = _fabric(name)
    path = tmp_path / f"f.{ext}"
    write_graph(g, path)
    h = read_graph(path)
    for count in (30, 400):
        want, lat = _named_loads(g, _transfers(g, count, True))
        got, glat = _named_loads(h, _transfers(g, count, True))
        assert got == want and glat == lat
