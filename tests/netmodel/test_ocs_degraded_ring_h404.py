"""A ring re-set on a degraded OCS cell takes the most copies its planes carry.

A plane a member is not cabled to (its fibre or port down) carries only circuits among
the others; realize colouring the ring in pair order (or plane by plane as on a whole
cell) left copies that fit unset: a 5-ring on 5 planes with gpu0's port to ocs1 down set
1 copy where 2 fit (each plane a near-perfect matching, ocs1's the one leaving gpu0 out:
2 x 5 = 5 planes x 2). The copies set are checked against an exhaustive search over the
planes' maximal matchings (each plane its members' own), independent of the code.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from functools import cache

import pytest

from netmodel.study.placed_graph import instance_circuits
from netmodel.study.scenario_catalog import get_scenario
from topologies.optical import ocs


def _exact(n, planes, missing):
    """The most copies of the ring of ``n`` that ``planes`` planes carry, plane ``p``
    not reaching the members ``missing[p]``: exhaustive."""
    edges = [(i, (i + 1) % n) for i in range(n)]

    def maximal(on):
        sets = [frozenset(c) for k in range(n + 1) for c in itertools.combinations(range(n), k)
                if len({v for i in c for v in edges[i]}) == 2 * k
                and all(v in on for i in c for v in edges[i])]
        return [m for m in sets if not any(m < o for o in sets)]

    options = [maximal({v for v in range(n) if v not in missing.get(p, ())})
               for p in range(planes)]

    @cache
    def covers(need, p):
        if not any(need):
            return True
        return p < planes and any(covers(tuple(x - (i in m and x > 0)
                                               for i, x in enumerate(need)), p + 1)
                                  for m in options[p])

    r = 0
    while covers((r + 1,) * n, 0):
        r += 1
    return r


def _set(n, ports, down):
    s = replace(get_scenario("lite-ocs"), circuits="ring")   # shipped: the faster layout
    s = replace(s, fabric={**s.fabric, "ports": ports})
    cell = ocs(gpus=n, ports=ports, ocs_ports=n, gpu="Lite")
    for g, o in down:
        cell.remove_edge(f"gpu{g}", f"ocs{o}")
    out = instance_circuits(s, cell, [f"gpu{i}" for i in range(n)])
    return 0 if out is None else out.graph["circuits"] // n


def test_a_five_ring_with_a_port_down_takes_2_copies():
    assert _set(5, 5, [(0, 1)]) == 2   # was 1
    assert _exact(5, 5, {1: {0}}) == 2


CUTS = [[(0, 1)], [(0, 1), (1, 2)], [(0, 1), (2, 1)], [(0, 0), (0, 1)], [(0, 1), (3, 2)],
        [(2, 2), (2, 3)], [(0, 0), (3, 1)], [(0, 2), (2, 2), (4, 0)], [(0, 0), (4, 2)]]


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_degraded_rings_take_the_exact_most(n):
    for ports in range(2, 8):
        for cut in CUTS:
            down = [(g % n, o) for g, o in cut if o < ports]
            if not down:
                continue
            missing = {}
            for g, o in down:
                missing.setdefault(o, set()).add(g)
            assert _set(n, ports, down) == _exact(n, ports, missing), (n, ports, down)
