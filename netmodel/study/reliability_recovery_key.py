"""The key that splits a symmetry class of failed components by how their instances come back
on pod spares, worked out from the cell's spare sites without costing anything.

Components whose keys (:func:`recovery_key`) differ are evaluated apart (the symmetry classes
of :mod:`netmodel.study.reliability_cluster`): the sites fill the first switches' free ports,
so the same failure of two GPUs may find a spare on its own switches or only on other ones.
The key follows :func:`~netmodel.study.reliability_recovery.recovery` step by step, each
instance with its spares in described by its shape (:func:`_shape`): what its members are
wired to, in order, which of those the failure removes, and the hops between those switches,
the switch names left out, so that equal shapes cost alike on a regular fabric. The sites
themselves, and the recovery, are :mod:`netmodel.study.reliability_spares`'.
"""

from __future__ import annotations

from collections import Counter
from itertools import groupby
from typing import Any

from netmodel.study.reliability_spares import _every, _live, _nearest

__all__ = ["recovery_key"]


def recovery_key(cluster: Any, comp: Any, lost: set, wired: set, touched: set) -> tuple:
    """What decides how ``comp``'s instances come back on pod spares beyond its local
    effect (``lost``, ``wired``, ``touched``: :meth:`Cluster.local
    <netmodel.study.reliability_cluster.Cluster.local>`), worked out from the cell's spare
    sites without costing anything: components whose keys differ are evaluated apart.

    The sites fill the first switches' free ports, so the same failure of two GPUs may
    find a spare on its own switches or only on other ones (a DGX SuperPOD SU: a GPU of
    nvs0 substitutes one spare of its NVSwitch, one of nvs5 re-creates its instance on
    four). The key follows :func:`~netmodel.study.reliability_recovery.recovery` step by
    step: the sites left (those on a tier-0 switch ``comp`` removes stop with it), the
    first ``max(need, re-created)`` of them, the spare each member to replace picks, and
    the shape of every instance with its spares in (:func:`_shape`: what it is wired to,
    in order, which of that ``comp`` removes, and the hops between those switches) and of
    the block it would be re-created on. The instances with a lost or stopped member go
    down together; every other instance ``comp`` touches is taken alone with its wired
    members to replace, as :func:`~netmodel.study.reliability_recovery.slow_recovery` swaps
    a slowed one (and a down one: the key is exact where only the instances with a lost
    member go down, a sufficient split otherwise). () where the cell has no site.
    """
    sites = _every(cluster)
    if not sites:
        return ()
    live = _live(cluster, comp, sites)
    removed = set(comp.nodes)
    insts, member_of, size = cluster.instances, cluster.member_of, cluster.instance_gpus
    down = sorted({member_of[n] for n in lost if n in member_of})
    todo = [(insts[i], [m for m in insts[i] if m in lost]) for i in down]
    together: tuple = ()
    if down:
        plan = live[:max(sum(len(g) for _, g in todo), size * len(down))]
        together = (len(plan), _substituted(cluster, todo, plan, removed),
                    _shape(cluster, [s[0] for s in plan[:size]], removed))
    alone = []
    for i in sorted(set(touched) - set(down)):
        gone = [m for m in insts[i] if m in wired]
        plan = live[:max(len(gone), size)]
        alone.append((len(plan), _substituted(cluster, [(insts[i], gone)], plan, removed)
                      if gone else None))
    block = _shape(cluster, [s[0] for s in live[:size]], removed) if alone else None
    return together, tuple(sorted(alone, key=repr)), block


def _substituted(cluster, todo, plan, removed) -> tuple:
    """The shapes (sorted) of the instances of ``todo`` (members, the members to replace)
    with the spares :func:`~netmodel.study.reliability_recovery._recovery` would pick from
    ``plan`` in, the nearest first; where the plan has too few sites, ``("short",
    shapes)`` of the instances substituted before they ran out (those
    :func:`~netmodel.study.reliability_recovery._recovery` substitutes in part: fewest
    members to replace first)."""
    wiring = _wiring(cluster)
    free = [name for name, _, _ in plan]
    if sum(len(gone) for _, gone in todo) > len(free):   # short: fewest first, as _recovery
        todo = sorted(todo, key=lambda item: len(item[1]))
    picks = cluster.__dict__.setdefault("_spare_picks", {})
    out = []
    for inst, gone in todo:
        sub = {}
        for m in gone:
            if not free:
                return "short", tuple(sorted(out))
            # the nearest site (_recovery's pick), by the member's switches and the free
            # sites in order: many members share them (memoized)
            home = wiring[m][1]
            hit = frozenset(removed & _site_switches(cluster)) if removed else frozenset()
            key = (home, tuple(free), hit)
            pick = picks.get(key)
            if pick is None:
                pick = picks[key] = _nearest(free, home, lambda s: wiring[s][1], hit)
            free.remove(pick)
            sub[m] = pick
        out.append(_shape(cluster, [sub.get(m, m) for m in inst], removed))
    return tuple(sorted(out))


def _site_switches(cluster) -> frozenset:
    """Every switch a spare site of the cell (``pod``) is wired to."""
    got = cluster.__dict__.get("_site_switches")
    if got is None:
        got = cluster.__dict__["_site_switches"] = frozenset(
            n for _, _, edges in _every(cluster) for n, _ in edges)
    return got


def _shape(cluster, members, removed) -> tuple:
    """``members`` (GPUs, or pod spare sites) as the costing sees them, with the
    switch names left out: in order, each member's neighbours (kind, tier, the order of
    their first appearance, whether ``removed`` holds it), then the hops between every two
    of those switches in the cell without its GPUs (None: not joined there). A shape
    describes its members' wiring whole, so equal shapes cost alike on a regular fabric;
    the order the neighbours are named in only decides how finely components split
    (memoized per members and the removed nodes among their neighbours)."""
    wiring = _wiring(cluster)
    # a shape depends on the members' neighbours only (their wiring is made from them): keyed
    # by those, members wired alike share it
    atts = tuple(wiring[m][1] for m in members)
    unions = cluster.__dict__.setdefault("_spare_unions", {})
    every = unions.get(atts)
    if every is None:
        every = unions[atts] = frozenset().union(*atts)
    hit = frozenset(r for r in removed if r in every)
    memo = cluster.__dict__.setdefault("_spare_shapes", {})
    key = (atts, hit)
    if key in memo:
        return memo[key]
    members = tuple(members)
    ids: dict = {}
    rows = []
    for m in members:
        row = []
        # per kind and tier: switches seen first, then those removed, then by name (alike
        # planes of a flat fabric, every GPU on every plane, read alike whichever failed)
        for kt, names in wiring[m][0]:
            row.extend((*kt, i, x) for i, x in sorted((ids[n], n in hit) for n in names
                                                     if n in ids))
            new = [n for n in names if n not in ids]
            for n in [n for n in new if n in hit] + [n for n in new if n not in hit]:
                ids[n] = len(ids)
                row.append((*kt, ids[n], n in hit))
        rows.append(tuple(row))
    data = cluster.graph.nodes
    switches = [n for n in ids if data[n]["kind"] != "gpu"]
    memo[key] = out = (tuple(rows), _hop_runs(cluster, switches))
    return out


def _wiring(cluster) -> dict:
    """Node (or pod spare site) -> (its neighbours as ((kind, tier), names by name) per
    kind and tier, in that order; the set of them): a GPU's made when first asked for,
    every pod site's at once."""
    memo = cluster.__dict__.get("_spare_wiring")
    if memo is None:
        memo = cluster.__dict__["_spare_wiring"] = _Wiring(cluster.graph)
        for name, _, edges in _every(cluster):
            memo[name] = _grouped(memo.data, [n for n, _ in edges])
    return memo


class _Wiring(dict):
    """:func:`_wiring`'s memo: a GPU's entry is made when first asked for."""

    def __init__(self, graph):
        super().__init__()
        self.graph, self.data = graph, graph.nodes

    def __missing__(self, node):
        self[node] = out = _grouped(self.data, list(self.graph.neighbors(node)))
        return out


def _grouped(data, nbrs) -> tuple:
    by: dict = {}
    for n in sorted(nbrs, key=str):
        by.setdefault((data[n]["kind"], data[n].get("tier", -1)), []).append(n)
    return tuple((kt, tuple(by[kt])) for kt in sorted(by)), frozenset(nbrs)


def _hop_runs(cluster, switches: list) -> tuple:
    """The hops between every two of ``switches`` (``a`` before ``b``, in order) over
    switches only (None: not joined), as runs ``((hops, how many in a row), ...)``: the
    same sequence, said once per run (equal runs are equal sequences). A spare site on
    every OCS of ``ocs:ports=4096`` has 4,096 switches, 8.4 million pairs, none joined:
    one run, and a switch whose part of the switches holds none of those after it adds
    its row as one run of None without a look-up per pair."""
    import networkx as nx

    part = cluster.__dict__.get("_switch_parts")
    if part is None:   # switch -> its connected part of the switches, once per cell
        part = cluster.__dict__["_switch_parts"] = {
            n: i for i, nodes in enumerate(nx.connected_components(cluster.switches))
            for n in nodes}
    left = Counter(part[s] for s in switches)   # per part: its switches from here on
    memo = cluster.__dict__.setdefault("_switch_hops", {})
    runs: list = []

    def add(value, count):
        if runs and runs[-1][0] == value:
            runs[-1][1] += count
        else:
            runs.append([value, count])

    for i, a in enumerate(switches):
        left[part[a]] -= 1
        after = len(switches) - i - 1
        if not after:
            continue
        if not left[part[a]]:   # none after it joined to it
            add(None, after)
            continue
        if a not in memo:
            memo[a] = nx.single_source_shortest_path_length(cluster.switches, a)
        for value, same in groupby(map(memo[a].get, switches[i + 1:])):
            add(value, sum(1 for _ in same))
    return tuple(map(tuple, runs))
