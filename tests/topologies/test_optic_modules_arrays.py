"""topologies.optic_modules pairs cable ends with arrays (grouped by key with lexsort,
cables expanded with repeat, rows cut into modules by their rank within a key); a plain
loop over every end, kept here as the reference, gives the same modules in the same order,
the same names and the same worth array on twin-port fabrics of every shape."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from netmodel.study.scenario_fabric import build_fabric
from topologies import build
from topologies.edge_arrays import edge_arrays
from topologies.inventory import OPTICAL_MEDIA, bill_of_materials
from topologies.optic_modules import (
    module_count,
    module_effects,
    module_ports,
    module_worth,
    optical_modules,
    paired_ends,
)


def _ref_modules(graph, e, media):
    """The pairing one end at a time: (where, ((node position, edge), ...)) a module."""
    ports = module_ports(graph)
    pick = np.flatnonzero(paired_ends(graph, e, e.medium_in(media)))
    gpu, ocs = e.kind_is("gpu"), e.kind_is("ocs")
    data = graph._node
    tier = [data[n].get("tier", -1) if data[n]["kind"] == "switch" else -1 for n in e.nodes]
    ends: dict = defaultdict(list)
    for i, u, v, c in zip(pick.tolist(), e.u[pick].tolist(), e.v[pick].tolist(),
                          e.links[pick].tolist(), strict=True):
        for n, far in ((u, v), (v, u)):
            if ocs[n]:
                continue
            key: tuple = (n, bool(gpu[far]) or -1 < tier[far] < tier[n])
            if gpu[n] and "server" in data[e.nodes[n]]:
                key = ("server", data[e.nodes[n]]["server"])
            ends[key].append((n, i, int(c)))
    out = []
    for held in ends.values():
        held.sort()
        where = e.nodes[held[0][0]]
        row = [(n, i) for n, i, c in held for _ in range(c)]
        out += [(where, tuple(row[at:at + ports])) for at in range(0, len(row), ports)]
    return out


def _ref_optical(graph, e, media):
    out = []
    for where, row in _ref_modules(graph, e, media):
        taken: dict = {}
        for _, i in row:
            taken[i] = taken.get(i, 0) + 1
        out.append((where, tuple(taken.items())))
    return out


def _ref_worth(graph, e, media):
    worth = np.zeros((len(e.u), 2))
    for _, row in _ref_modules(graph, e, media):
        for n, i in row:
            worth[i, int(e.u[i] != n)] += 1.0 / len(row)
    return worth


def _ref_effects(graph, e, media):
    out, count = [], defaultdict(int)
    for where, held in _ref_optical(graph, e, media):
        removed, scaled = [], []
        for i, k in held:
            uv = (e.nodes[e.u[i]], e.nodes[e.v[i]])
            c = float(e.links[i])
            if c - k <= 1e-9:
                removed.append(uv)
            else:
                scaled.append((uv, (c - k) / c))
        out.append((f"{where} module {count[where]}", tuple(removed), tuple(scaled)))
        count[where] += 1
    return out


def _fat_tree_twin():
    g = build("fat-tree:k=6")   # three tiers: edge, aggregation, core
    g.graph["module_ports"] = 2
    return g


FABRICS = {
    **{f"superpod:sus={n}": (lambda n=n: build(f"superpod:sus={n}")) for n in range(1, 9)},
    "h100-dgx": lambda: build_fabric("h100-dgx"),
    "rail 5 domains": lambda: build("rail-optimized:domains=5,module_ports=2"),
    "rail 4 NIC planes": lambda: build("rail-optimized:domains=6,nics_per_server=4,"
                                       "module_ports=2"),
    "rail 4 a server, odd": lambda: build("rail-optimized:domains=7,gpus_per_server=4,"
                                          "module_ports=2"),
    "rail odd leaves": lambda: build("rail-optimized:domains=9,servers_per_leaf=3,"
                                     "module_ports=2"),
    "fat-tree k=6 twin": _fat_tree_twin,
    "lite-groups superpod": lambda: build("lite-groups:base=[superpod:sus=1]"),
}


@pytest.mark.parametrize("name", list(FABRICS))
def test_arrays_pair_as_the_loop_does(name):
    g = FABRICS[name]()
    assert module_ports(g) == 2
    e = edge_arrays(g)
    mods = optical_modules(g, e, OPTICAL_MEDIA)
    assert mods == _ref_optical(g, e, OPTICAL_MEDIA)
    assert mods   # there are modules to compare
    assert module_count(g, e, OPTICAL_MEDIA) == len(mods)
    w = module_worth(g, e, OPTICAL_MEDIA)
    assert np.array_equal(w, _ref_worth(g, e, OPTICAL_MEDIA))
    assert w.sum() == len(mods)
    assert module_effects(g, e, OPTICAL_MEDIA) == _ref_effects(g, e, OPTICAL_MEDIA)


def test_superpod_su_by_hand():
    # one SU: 124 NIC modules + 8 leaves x (16 down + 16 up) + 4 spines x 32 (module doc)
    g = build("superpod:sus=1")
    assert module_count(g) == 124 + 8 * 32 + 4 * 32 == 508
    assert bill_of_materials(g).pluggable_transceivers == 508
    assert module_count(build("superpod:sus=1,module_ports=1")) == 0


def test_twin_port_fabric_without_optics_has_no_modules():
    g = build("rail-optimized:domains=1,module_ports=2")   # one domain: no scale-out fabric
    e = edge_arrays(g)
    assert optical_modules(g, e) == [] == module_effects(g, e) == _ref_optical(g, e, OPTICAL_MEDIA)
    assert module_count(g, e) == 0 and not module_worth(g, e).any()
