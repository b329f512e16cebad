"""The OCS copy bound checked against an exhaustive search, and the torus that fits none.

A group's circuits on ``P`` OCS planes (every GPU a port on each) are an edge colouring
with ``P`` colours: a plane's circuits share no GPU. ``r`` copies of a circuit set ``H``
fit iff ``P`` matchings of ``H`` cover every pair ``r x`` its multiplicity. The search
below decides that exactly (branching on the first pair still short, over the maximal
matchings holding it; pruned by a GPU's circuits <= P and circuits <= P x the largest
matching), independent of :func:`most_copies` and of realize's colouring.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import cache

import networkx as nx
import pytest

from compute.errors import UserError
from netmodel.study.circuit_copies import ocs_planes
from netmodel.study.circuit_planes import circuit_options, most_copies, torus_sides
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric, instance_graph
from topologies.optical import circuits_for, ocs, realize


def _copy(kind, n):
    names = [f"g{i}" for i in range(n)]
    if kind == "torus":
        a, b = torus_sides(n)
        return circuits_for(f"torus:{a}x{b}", names)
    return circuits_for("ring", names) if n > 2 else [tuple(names)]


def _exact_most(copy, planes):
    """The most copies of ``copy`` that ``planes`` matchings cover (exhaustive)."""
    mult = Counter(frozenset(p) for p in copy)
    edges = list(mult)
    graph = nx.Graph(tuple(e) for e in edges)
    mats = []

    def grow(i, used, chosen):
        if i == len(edges):
            if all(set(edges[j]) & used for j in range(len(edges)) if j not in chosen):
                mats.append(chosen)   # maximal
            return
        if not set(edges[i]) & used:
            grow(i + 1, used | edges[i], chosen | {i})
        grow(i + 1, used, chosen)

    grow(0, frozenset(), frozenset())
    largest = max(len(m) for m in mats)
    at = {v: [i for i, e in enumerate(edges) if v in e] for v in graph}

    @cache
    def covers(need, k):
        if not any(need):
            return True
        if k == 0 or sum(need) > k * largest or \
                any(sum(need[i] for i in held) > k for held in at.values()):
            return False
        first = next(i for i, x in enumerate(need) if x)
        return any(covers(tuple(max(x - 1, 0) if i in m else x for i, x in enumerate(need)),
                          k - 1) for m in mats if first in m)

    r = 0
    while covers(tuple((r + 1) * mult[e] for e in edges), planes):
        r += 1
    return r


CASES = [("ring", n) for n in range(2, 10)] + [("torus", n) for n in (4, 6, 8, 9)]


@pytest.mark.parametrize(("kind", "n"), CASES)
def test_most_copies_is_the_exact_most(kind, n):
    """Not only an upper bound (no count that fits is left out): the most that fit."""
    copy = _copy(kind, n)
    assert [most_copies(copy, p, p) for p in range(1, 9)] == \
        [_exact_most(copy, p) for p in range(1, 9)]


def _set(kind, n, ports, groups=1):
    """Circuits per GPU that circuit_options + realize set, every port held once."""
    fabric = ocs(gpus=n * groups, ports=ports, ocs_ports=n * groups, gpu="Lite")
    gpus = [g for g in fabric if fabric.nodes[g]["kind"] == "gpu"]
    parts = [gpus[i * n:(i + 1) * n] for i in range(groups)]
    for pairs in circuit_options(kind, parts, ports, ocs_planes(fabric, parts[0])):
        try:
            out = realize(fabric, pairs)
        except UserError:
            continue
        held = Counter()
        for u, v, d in out.edges(data=True):
            for o in d["via"].split(","):
                held[o, u] += 1
                held[o, v] += 1
        assert max(held.values()) == 1
        return len(pairs) * 2 // (n * groups)
    return 0


@pytest.mark.parametrize(("kind", "n"), CASES)
def test_the_options_reach_the_exact_most(kind, n):
    """What is set is the exact most of what is asked (a torus, or its ring where the
    torus is not asked or fits no copy), and circuits a GPU never fall as ports grow."""
    found = []
    for ports in range(1 if n == 2 else 2, 9):
        torus = kind == "torus" and ports >= 4 and _exact_most(_copy("torus", n), ports)
        copy = _copy("torus" if torus else "ring", n)
        degree = 1 if n == 2 else len(copy) * 2 // n
        for groups in (1, 3):
            assert _set(kind, n, ports, groups) == _exact_most(copy, ports) * degree
        found.append(_set(kind, n, ports))
    assert found == sorted(found)


def test_a_torus_that_fits_no_copy_is_set_as_its_ring():
    """lite-ocs with a torus at 4 ports, instances of 9: a 3x3 torus (18 circuits, 4 on a
    plane) fits no copy on 4 planes and every instance failed ('cannot set circuits',
    though 3 ports set a ring); its ring, 9 circuits on 4 planes of 4, fits one copy: 14
    instances (128 // 9) x 9 circuits."""
    s = get_scenario("lite-ocs")
    s = replace(s, circuits="torus", fabric={**s.fabric, "ports": 4})
    g = instance_graph(s, build_fabric(s), 9)
    assert g.graph["circuits"] == 128 // 9 * 9 == 126
