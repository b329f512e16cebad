"""Review of the short search that labels a failure's cell whole (``Cluster._part_labels``,
``Cluster._still_connected``), against networkx's connected components by definition.

The search may only say "one part" where the cell left is one part: a failure that
splits the cell must never be labelled as one. Random failures (a few of the cell's own
components, plus random nodes and links) on rail-optimized, torus, OCS and hierarchical
cells, on degraded ones (some parts already failed before the cell is built) and with the
search's budget cut to a few links (where it must give up, not guess): every "proven" is
one networkx component, and the labels equal networkx's parts numbered by their first node
(a removed node a part of its own, then -1), as ``scipy``'s ``connected_components``
numbers them.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netmodel.study import reliability_parts as rp
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario
from netmodel.study.scenarios import fabric_scenario
from topologies.degrade import degrade
from topologies.failure_domains import components
from topologies.specs import build

REFS = ["rail-optimized:domains=8", "rail-optimized:domains=4,nics_per_server=1",
        "torus:dims=4x4x2", "torus:dims=6x4", "lite-ocs", "lite-hier",
        "ocs:gpus=16,ports=2,ocs_ports=16,logical=ring"]


def _degraded(spec: str, picks: dict[str, list[int]]):
    """A cell built on ``spec`` with the components ``picks`` ({class: indices}) failed."""
    g = build(spec)
    comps = components(g)
    failed = [comps[k][i] for k, idx in picks.items() for i in idx]
    return build_cluster(fabric_scenario(degrade(g, failed), f"{spec} degraded"),
                         "Llama-3-8B", "decode")


@pytest.fixture(scope="module")
def cells():
    out = [build_cluster(fabric_cluster_scenario(r) if ":" in r else r, "Llama-3-8B",
                         "decode") for r in REFS]
    # a spine and a leaf gone: the cell is still one part, with fewer ways round
    out.append(_degraded("rail-optimized:domains=8", {"spine": [0], "leaf": [1]}))
    # two torus links gone: no longer a torus, still one part
    out.append(_degraded("torus:dims=4x4x2", {"copper-end": [0, 7]}))
    return out


_LINKS: dict = {}   # id(cell graph) -> (the graph, its nodes and links, no attributes)


def _by_definition(c, dead: set, gone: list) -> tuple[bool, np.ndarray]:
    """(whether what is left is one part, labels numbered as connected_components does)."""
    # the cell's nodes and links without their attributes, made once a cell, seen
    # without ``dead`` and ``gone`` (a copy of the graph, every link's attributes copied,
    # to remove them from was most of these tests' time): its parts are that copy's
    kept = _LINKS.get(id(c.graph))
    if kept is None or kept[0] is not c.graph:
        bare = nx.Graph()
        bare.add_nodes_from(c.graph)
        bare.add_edges_from(c.graph.edges)
        kept = _LINKS[id(c.graph)] = (c.graph, bare)
    g = nx.restricted_view(kept[1], dead, [e[:2] for e in gone])
    parts = list(nx.connected_components(g))
    nodes = c._csr.nodes
    part_of = {n: i for i, p in enumerate(parts) for n in p}
    labels = np.empty(len(nodes), dtype=np.int64)
    first: dict = {}
    for k, n in enumerate(nodes):
        key = ("dead", n) if n in dead else part_of[n]
        labels[k] = first.setdefault(key, len(first))
    labels[[c._csr.index[n] for n in dead]] = -1
    return len(parts) == 1, labels


@st.composite
def failures(draw, n_cells: int):
    which = draw(st.integers(0, n_cells - 1))
    comps = draw(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 10_000)),
                          min_size=0, max_size=3))
    nodes = draw(st.lists(st.integers(0, 10_000), max_size=4))
    links = draw(st.lists(st.integers(0, 10_000), max_size=4))
    budget = draw(st.sampled_from([1, 3, 10, 2048]))
    return which, comps, nodes, links, budget


def _pick(c, comps, nodes, links):
    classes = [k for k, v in c.components.items() if v]
    chosen = []
    for k, i in comps:
        cls = classes[k % len(classes)]
        chosen.append(c.components[cls][i % len(c.components[cls])])
    chosen = list(dict.fromkeys(chosen))
    all_nodes, all_edges = list(c.graph.nodes), list(c.graph.edges)
    dead = {n for x in chosen for n in (*x.nodes, *x.disabled)}
    dead |= {all_nodes[i % len(all_nodes)] for i in nodes}
    gone = [e for x in chosen for e in x.edges]
    gone += [all_edges[i % len(all_edges)][:2] for i in links]
    return chosen, dead, gone


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_proven_only_where_networkx_finds_one_part(cells, data, monkeypatch):
    which, comps, nodes, links, budget = data.draw(failures(len(cells)))
    c = cells[which]
    _, dead, gone = _pick(c, comps, nodes, links)
    monkeypatch.setattr(rp, "SEARCH_LINKS", budget)
    one, _ = _by_definition(c, dead, gone)
    # a cell whose links are few searches with the small budget only where links / 8 is
    proven = c._still_connected(dead, gone)
    if proven:
        assert one, (sorted(dead), gone)
    if budget == 2048 and len(c._csr.lo) < 8 * 2048:
        # a budget past every link: the search is complete, so it proves every cell left
        # in one part (a removed node's survivors next to it all meet)
        assert proven == (one and bool(len(c.graph) - len(dead))), (sorted(dead), gone)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_labels_are_networkx_parts(cells, data, monkeypatch):
    which, comps, _, _, budget = data.draw(failures(len(cells)))
    c = cells[which]
    chosen, dead, gone = _pick(c, comps, [], [])
    if any(x.handed for x in chosen):   # a shared NIC handed on: joins parts by design
        return
    monkeypatch.setattr(rp, "SEARCH_LINKS", budget)
    c.__dict__.pop("_last_partition", None)
    labels = c._part_labels(chosen)[1]
    _, expect = _by_definition(c, dead, gone)
    assert labels.tolist() == expect.tolist(), [x.name for x in chosen]
    assert labels.dtype == np.int32


def test_a_split_is_never_one_part_every_single_failure(cells):
    """Every single component of every cell (no sampling): a failure that splits the cell
    is never labelled one part."""
    checked = split = 0
    for c in cells:
        for comps in c.components.values():
            for x in comps:
                dead = {*x.nodes, *x.disabled}
                one, expect = _by_definition(c, dead, list(x.edges))
                split += not one
                if c._still_connected(dead, list(x.edges)):
                    assert one, x.name
                if not x.handed:
                    c.__dict__.pop("_last_partition", None)
                    assert c._part_labels([x])[1].tolist() == expect.tolist(), x.name
                checked += 1
    assert checked > 1000 and split > 100   # both kinds met
