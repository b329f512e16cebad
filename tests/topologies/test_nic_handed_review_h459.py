"""Review of the shared-NIC hand-on (:func:`topologies.failure_domains.nic_heirs`,
:func:`~topologies.degrade.degrade`, :func:`~topologies.failure_domains.handed_labels`)
against an independent construction of the same physics.

``rail-optimized`` with ``nics_per_server`` below ``gpus_per_server`` gives GPU ``r`` of a
server (its ``rail`` label) the NIC of ``stride * (r // stride)``, ``stride =
gpus_per_server / nics_per_server`` (the builder's docstring). The reference fabric here
puts that NIC in as a node of its own: the holder's cable to the leaf moves to a NIC node,
and the NIC node is wired to every GPU sharing it (as the host's PCIe switch wires them).
A failed GPU then removes the GPU alone; a failed NIC (class ``nic``, the cable's NIC end)
removes the NIC node; a failed leaf the leaf. The connected parts the model's degraded
fabric leaves (GPUs and switches) must equal the reference's, and so must the labels the
study counts by (:func:`handed_labels`).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies.degrade import degrade
from topologies.failure_domains import components, handed_labels, nic_heirs
from topologies.graph_ops import CellArrays
from topologies.specs import build

GPS = 8


def _spec(domains: int, nics: int) -> str:
    return f"rail-optimized:domains={domains},nics_per_server={nics}"


def _reference(graph: nx.Graph, nics: int) -> nx.Graph:
    """The fabric with a node per shared NIC, hung off all the GPUs sharing it."""
    ref = graph.copy()
    stride = GPS // nics
    by = {}
    for n, d in graph.nodes(data=True):
        if d.get("kind") == "gpu":
            by[(d["server"], d["rail"] // stride)] = by.get((d["server"], d["rail"] // stride),
                                                          []) + [n]
    for (server, j), gpus in by.items():
        holder = next(g for g in gpus if graph.nodes[g]["rail"] == j * stride)
        (leaf,) = [s for s in graph[holder] if graph.nodes[s].get("tier", 0) >= 1]
        nic = f"nic-{server}-{j}"
        ref.add_node(nic, kind="nic")
        ref.add_edge(nic, leaf)
        ref.remove_edge(holder, leaf)
        ref.add_edges_from((nic, g) for g in gpus)
    return ref


def _parts(graph: nx.Graph, keep) -> set:
    """The connected parts of ``graph``, each cut down to the nodes ``keep`` names."""
    return {frozenset(n for n in c if keep(n)) for c in nx.connected_components(graph)} - {
        frozenset()}


def _gpu_or_switch(graph):
    return lambda n: graph.nodes[n].get("kind") in ("gpu", "switch")


def _pick(comps: dict, cls: str, name) -> object:
    return next(c for c in comps[cls] if c.name == name)


@settings(max_examples=120, deadline=None)
@given(domains=st.integers(2, 3), nics=st.sampled_from([1, 2, 4]), data=st.data())
def test_degrade_matches_a_nic_node_fabric(domains, nics, data):
    g = build(_spec(domains, nics))
    comps = components(g)
    gpus = [n for n, k in g.nodes(data="kind") if k == "gpu"]
    failed_gpus = data.draw(st.sets(st.sampled_from(gpus), max_size=2 * GPS))
    holders = sorted(nic_heirs(g), key=lambda n: int(n[3:]))
    failed_nics = data.draw(st.sets(st.sampled_from(holders), max_size=len(holders)))
    leaves = sorted(n for n, d in g.nodes(data=True) if d.get("tier") == 1)
    failed_leaves = data.draw(st.sets(st.sampled_from(leaves), max_size=1))
    nic_comps = []
    for h in failed_nics:
        (leaf,) = [s for s in g[h] if g.nodes[s].get("tier", 0) >= 1]
        nic_comps.append(next(c for c in comps["nic"] if c.edges == ((h, leaf),)
                              or c.edges == ((leaf, h),)))
    cls = data.draw(st.sampled_from(["gpu-die", "gpu-package"]))
    failed = ([_pick(comps, cls, n) for n in failed_gpus] + nic_comps
              + [_pick(comps, "leaf", n) for n in failed_leaves])
    failed = data.draw(st.permutations(failed))   # any order
    if len(failed_gpus) == len(gpus):
        return
    out = degrade(g, failed)
    ref = _reference(g, nics)
    stride = GPS // nics
    ref.remove_nodes_from(failed_gpus)
    ref.remove_nodes_from(failed_leaves)
    ref.remove_nodes_from(f"nic-{g.nodes[h]['server']}-{g.nodes[h]['rail'] // stride}"
                          for h in failed_nics)
    want = _parts(ref, _gpu_or_switch(ref))
    assert _parts(out, _gpu_or_switch(out)) == want
    # the study's labels (the healthy cell's node order, -1 for a node gone) agree
    cells = CellArrays(g)
    gone = [e for c in failed for e in c.edges]
    labels = handed_labels(cells.part_labels({*failed_gpus, *failed_leaves}, gone),
                           cells.index, failed)
    got: dict = {}
    for n, i in cells.index.items():
        if labels[i] >= 0:
            got.setdefault(int(labels[i]), set()).add(n)
    assert {frozenset(p) for p in got.values()} == want


@pytest.mark.parametrize("nics", [1, 2, 4])
@pytest.mark.parametrize("order", ["by name", "reversed"])
def test_heirs_do_not_hang_on_node_order(nics, order):
    """The same fabric with its nodes listed in another order (as a file sorted by name
    lists them) has the same holders and heirs: before, sorted by name ``gpu10``-``gpu15``
    came before their holder ``gpu8`` and were nobody's heirs (nics_per_server=1: gpu8
    handed on to gpu9 alone), and in reverse order no GPU handed anything on."""
    g = build(_spec(2, nics))
    nodes = list(g.nodes(data=True))
    nodes = sorted(nodes, key=lambda x: str(x[0])) if order == "by name" else nodes[::-1]
    h = nx.Graph(**g.graph)
    h.add_nodes_from(nodes)
    h.add_edges_from(g.edges(data=True))
    want = nic_heirs(g)
    assert nic_heirs(h) == want
    stride = GPS // nics
    for holder, ((_, heirs),) in want.items():   # the builder's stride, from the labels
        r, server = g.nodes[holder]["rail"], g.nodes[holder]["server"]
        assert r % stride == 0
        assert heirs == tuple(f"gpu{server * GPS + r + k}" for k in range(1, stride))


def test_holder_and_its_nic_both_failed_hand_nothing_on():
    """gpu0 and its NIC failed together: its 7 partners are cut off in the labels the
    study counts by, as degrade leaves them (before, handed_labels joined gpu1 to the leaf
    through a NIC that had failed)."""
    g = build(_spec(2, 1))
    comps = components(g)
    gpu0 = next(c for c in comps["gpu-die"] if c.nodes == ("gpu0",))
    nic = next(c for c in comps["nic"] if c.name == "gpu0-leaf0")
    cells = CellArrays(g)
    at = cells.index
    labels = handed_labels(cells.part_labels({"gpu0"}, list(nic.edges)), at, [gpu0, nic])
    assert labels[at["gpu1"]] != labels[at["leaf0"]]
    assert labels[at["gpu1"]] == labels[at["gpu7"]] and labels[at["gpu8"]] == labels[
        at["leaf0"]]
    out = degrade(g, [nic, gpu0])
    assert not nx.has_path(out, "gpu1", "leaf0")
    assert np.array_equal(labels >= 0, np.array([n in out for n in cells.nodes]))


def test_every_heir_failed_cuts_nothing_more():
    """The holder and all its heirs failed: nothing is handed on, and the other server's
    GPUs all keep the leaf (only the empty server's NVSwitch is left apart)."""
    g = build(_spec(2, 1))
    comps = components(g)
    failed = [c for c in comps["gpu-die"] if c.nodes[0] in {f"gpu{i}" for i in range(8)}]
    out = degrade(g, failed[::-1])
    assert not any(out.has_edge(f"gpu{i}", "leaf0") for i in range(8))
    assert out.graph["gpus"] == 8
    assert _parts(out, lambda n: True) == {frozenset({"nvs0"}), frozenset(
        {*(f"gpu{i}" for i in range(8, 16)), "nvs1", "leaf0", "spine0"})}


@pytest.mark.parametrize("order", [0, 1])
def test_holder_and_its_cable_both_failed_cut_the_server(order):
    """The cable's end (a ``transceiver`` of gpu0's NIC link) failing with gpu0: the NIC
    has no cable to hand on, so gpu1-gpu7 are cut off, in degrade and in the labels."""
    g = build(_spec(2, 1))
    comps = components(g)
    gpu0 = next(c for c in comps["gpu-die"] if c.nodes == ("gpu0",))
    ends = [c for c in comps["transceiver"]
            if {n for e in c.edges for n in e} == {"gpu0", "leaf0"}]
    assert ends
    failed = [gpu0, ends[0]][::1 if order else -1]
    out = degrade(g, failed)
    assert not nx.has_path(out, "gpu1", "leaf0") and nx.has_path(out, "gpu9", "leaf0")
    cells = CellArrays(g)
    at = cells.index
    labels = handed_labels(cells.part_labels({"gpu0"}, list(ends[0].edges)), at, failed)
    assert labels[at["gpu1"]] != labels[at["leaf0"]]
