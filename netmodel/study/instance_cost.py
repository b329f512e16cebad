"""Re-costing one serving instance on a degraded fabric (what the blast radius asks of
every instance a failure touches).

An instance (its members, in the healthy configuration, TP x PP with EP and attention DP,
at the healthy batch) is costed alone on a graph (a degraded cell, maybe with spares): on an
optical circuit-switched fabric its ring or torus is re-set on the ports that survive
(:func:`_ocs_circuits`), and a collective of fewer GPUs (an attention group's, a pipeline
stage's) on circuits re-set for each slice of that many members, as the healthy search
sets circuits per group size; the scenario's
adjustments are applied; where GPUs forward no traffic, the members are renamed by their
place in the instance (:func:`_canonical`), so instances placed alike and hit alike are one
*costing problem* (:func:`_problem_key`), costed once. An instance whose step no longer
meets the SLO is re-balanced (:meth:`InstanceCosting.rebalanced`): the largest batch, up to
the healthy one, that still meets it and fits.

:class:`InstanceCosting` carries these methods for
:class:`~netmodel.study.reliability_cluster.Cluster`, whose fields (scenario, model, GPU, workload,
SLO, options, calibration, healthy configuration) they read; their memos live on the
cluster.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection, Hashable, Iterable, Sequence
from itertools import chain
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.roofline import evaluate_grid
from topologies.graph_ops import frozen_attrs
from topologies.schema import LABELS

if TYPE_CHECKING:
    from compute.results import InferenceResult

__all__ = ["InstanceCosting", "InstanceCut", "placed_alike", "placed_comm", "stage_boundary",
           "wired_gpus"]


def stage_boundary(op: str, p: int, stage: int | None, gpus: int) -> bool:
    """Whether ``op`` on groups of ``p`` members of an instance of ``gpus`` GPUs in
    pipeline stages of ``stage`` (None: no stages) is a stage boundary's send-recv, costed
    on the boundaries' pairs (:meth:`_GroupComm.pairs`): a send-recv of 2 where there is
    more than one stage. The rule of :class:`_GroupComm` and of
    :meth:`~netmodel.study.fabric_search.ScenarioCollectives.for_instance`.

    >>> stage_boundary("send-recv", 2, 4, 8), stage_boundary("send-recv", 2, 8, 8)
    (True, False)
    >>> stage_boundary("all-reduce", 2, 4, 8), stage_boundary("send-recv", 2, None, 8)
    (False, False)
    """
    return op == "send-recv" and p == 2 and stage is not None and stage < gpus


class InstanceCut(Exception):
    """An instance's members can no longer all reach each other."""


class _GroupComm:
    """compute's collective-cost protocol for one explicit instance on one fabric graph.

    A collective of the whole instance runs on its members. One of fewer GPUs (an
    attention group's all-reduce under attention data parallelism, a stage's under
    pipeline parallelism) runs on each consecutive slice of that many members at once, as
    the healthy search costs such a group
    (:meth:`~netmodel.study.fabric_search.ScenarioCollectives.for_instance`): the slowest
    slice sets the time, each slice taking its own best algorithm. With ``stage`` (the
    GPUs of one pipeline stage, ``tp``; the members stage after stage) a ``send-recv``
    (group size 2, a stage boundary's) runs on the pairs that carry it, member ``i`` of a
    stage to member ``i`` of the next (:meth:`boundary_time`), the slowest pair's time:
    the ``tp`` pairs of a boundary send at once, and links they share (a leaf's uplink)
    are not charged for it (each pair is costed alone). Slices likewise: each is
    costed alone, though a pipeline's stages (and attention groups) run at once, so a
    link two slices share is not charged for both."""

    def __init__(self, model, members, slice_model=None, physical=None, orig=None,
                 alike: dict | None = None, stage: int | None = None):
        self.model = model
        self.members = tuple(members)
        #: GPUs of one pipeline stage (None: no stage layout known, a send-recv is costed
        #: as any group of 2, on consecutive pairs of members)
        self.stage = stage
        #: ``slice_model(positions)`` -> ``(model, members)`` of the members at
        #: ``positions`` (a slice, a boundary pair) where it is costed on a graph of its
        #: own (an OCS instance's circuits re-set for it, as the healthy costing sets them
        #: per group size); None: on ``model``
        self.slice_model = slice_model
        #: where slices placed alike are costed once (:func:`placed_alike`): the graph
        #: the slices are placed on and the instance's members on it (None: every slice
        #: is costed), and the checks' memo (``alike``: kept by a caller costing many
        #: instances on that graph)
        self._alike = None if physical is None else (
            physical, self.members if orig is None else tuple(orig),
            {} if alike is None else alike)
        self._kinds_memo: dict[tuple, list] = {}   # part key -> positions of each kind

    def _time(self, op: str, members: tuple, model, n: np.ndarray) -> np.ndarray:
        """Seconds of ``op`` on ``members`` (one communicator) on ``model`` at the sizes
        ``n``: the fastest candidate's, or the model's tuner plugin's choice where it
        chooses (as the healthy costing,
        :meth:`~netmodel.study.fabric_search.ScenarioCollectives.collective_time`, takes
        it); a group cut apart raises :class:`InstanceCut`."""
        from netmodel.collectives.cost import GroupCut, lines_time
        from netmodel.collectives.model import candidate_lines

        try:
            cands = model.candidates(op, members)
        except (GroupCut, UserError):
            raise InstanceCut() from None
        if model.tuned():   # the plugin's pair per size, as every other costing asks it
            return model.collective_time(op, n, members)
        return lines_time(*candidate_lines(model, cands), n)

    def slices(self, k: int):
        """``(model, members)`` of each consecutive slice of ``k`` members (the instance
        itself where ``k`` is its size), one of each kind of placement: a slice placed as
        an earlier one (:func:`placed_alike`) costs what it costs and is left out."""
        return self._kinds(("slice", k))

    def pairs(self, stage: int):
        """``(model, members)`` of each stage boundary's pair, member ``i`` of a stage of
        ``stage`` members and member ``i`` of the next, one of each kind of placement (as
        :meth:`slices`)."""
        return self._kinds(("pair", stage))

    def _kinds(self, key: tuple):
        """``(model, members)`` of each part ``key`` names (``("slice", k)``, ``("pair",
        stage)``), placed unlike the parts before it."""
        starts = self._kinds_memo.get(key)
        m = len(self.members)
        if starts is None:
            kind, k = key
            if kind == "slice":
                starts = [tuple(range(i, i + k)) for i in range(0, m - k + 1, k)]
            else:
                starts = [(j, j + k) for s in range(0, m - k, k) for j in range(s, s + k)]
            if self._alike is not None and len(starts) > 1 and len(starts[0]) < m:
                graph, orig, memo = self._alike
                kept: list[tuple] = []
                for pos in starts:
                    part = tuple(orig[i] for i in pos)
                    for was in kept:
                        key2 = (part, tuple(orig[i] for i in was))
                        if key2 not in memo:
                            memo[key2] = placed_alike(graph, *key2, memo)
                        if memo[key2]:
                            break
                    else:
                        kept.append(pos)
                starts = kept
            self._kinds_memo[key] = starts
        for pos in starts:
            if self.slice_model is not None and len(pos) < m:
                yield self.slice_model(pos)
            else:
                yield self.model, tuple(self.members[i] for i in pos)

    def _slowest(self, op: str, n: np.ndarray, kinds) -> np.ndarray:
        """Seconds of ``op`` at the sizes ``n`` on the slowest of ``kinds`` (``(model,
        members)``), 0 where nothing is sent."""
        t = None
        for model, members in kinds:
            ti = self._time(op, members, model, n)
            t = ti if t is None else np.maximum(t, ti)
        return np.where(n > 0, t, 0.0)

    def boundary_time(self, op: str, nbytes: float | np.ndarray, stage: int) -> np.ndarray:
        """Seconds of ``op`` (a ``send-recv``) of ``nbytes`` between pipeline stages of
        ``stage`` members: the slowest boundary pair's (:meth:`pairs`)."""
        return self._slowest(op, np.asarray(nbytes, dtype=float), self.pairs(int(stage)))

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        n = np.asarray(nbytes, dtype=float)
        k = int(group_size)
        if k <= 1:
            return np.zeros_like(n)
        if stage_boundary(op, k, self.stage, len(self.members)):
            return self.boundary_time(op, n, self.stage)
        return self._slowest(op, n, self.slices(k))

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """An MoE all-to-all crossing the network once a server (DeepEP's normal kernels),
        as the healthy costing charges a prefill's dispatch and combine
        (:meth:`~netmodel.study.fabric_search.ScenarioCollectives.moe_all_to_all_time`,
        :func:`compute.moe_routing.moe_comm`): the faster of that way and every copy's
        (:meth:`collective_time`), per slice of ``group_size`` members, the slowest
        slice's."""
        from netmodel.collectives.cost import GroupCut
        from netmodel.collectives.moe import once_a_server_time

        n = np.asarray(nbytes, dtype=float)
        k = int(group_size)
        if k <= 1:
            return np.zeros_like(n)
        t = None
        for model, members in self.slices(k):
            def every(model=model, members=members) -> np.ndarray:
                return self._time("all-to-all", members, model, n)

            try:
                ti = once_a_server_time(model, tuple(members), n, copies, reach, every)
            except GroupCut:
                raise InstanceCut() from None
            t = ti if t is None else np.maximum(t, ti)
        return np.where(n > 0, t, 0.0)


#: Nodes a :func:`placed_alike` check follows at most before it gives up (then the slices
#: are costed each).
ALIKE_NODES = 4096


def _natural(node: Hashable) -> tuple:
    """``node``'s name with its runs of ASCII digits as numbers (``gpu10`` after ``gpu9``);
    other characters, other scripts' digits and superscripts included, stay text.

    >>> _natural("gpu10") > _natural("gpu9"), _natural("²"), _natural("gpu٣")
    (True, ('²',), ('gpu٣',))
    """
    return tuple(int(x) if i % 2 else x for i, x in enumerate(re.split(r"([0-9]+)", str(node))))


def placed_alike(graph: nx.Graph, a: Sequence[Hashable], b: Sequence[Hashable],
                 labels: dict | None = None) -> bool:
    """Whether the GPUs ``a`` are placed on ``graph`` as ``b`` are, position by position:
    a renaming of the graph's nodes that takes ``a[j]`` to ``b[j]`` keeps every link (its
    ends and attributes) and every node's attributes (its placement labels,
    :data:`~topologies.schema.LABELS`, up to renaming their values). A collective's cost
    on ``a`` is then its cost on ``b`` (slices of an instance placed alike are costed
    once, :class:`_GroupComm`).

    The renaming is found by following links out from the GPUs (each node's unmatched
    neighbours paired in order of kind, tier and name; a node taken to itself is not
    followed: its other neighbours stay), completed as a swap (what ``x`` is taken to is
    taken back to ``x``), then checked link by link; False where it does not hold or
    grows past :data:`ALIKE_NODES` nodes (alike placements it misses are costed again,
    never the other way). First the two are tried swapped with nothing else moved.
    ``labels``: what the check keeps of ``graph`` between calls (its GPUs by label value,
    its nodes' order), for a caller asking of one graph many times.

    >>> g = nx.Graph()
    >>> g.add_nodes_from(("g0", "g1", "g2", "g3", "g4", "g5"), kind="gpu")
    >>> for i, leaf in enumerate(("leaf0", "leaf0", "leaf1", "leaf1", "leaf2", "leaf2")):
    ...     g.add_edge(f"g{i}", leaf, bandwidth=1.0)
    >>> g.add_edges_from((("leaf0", "spine"), ("leaf1", "spine")), bandwidth=4.0)
    >>> g.add_edge("leaf2", "spine", bandwidth=2.0)
    >>> placed_alike(g, ("g2", "g3"), ("g0", "g1")), placed_alike(g, ("g4", "g5"), ("g0", "g1"))
    (True, False)
    >>> placed_alike(g, ("g1", "g2"), ("g0", "g1"))      # across two leaves
    False
    """
    if len(a) != len(b) or len(set(a)) != len(a) or len(set(b)) != len(b):
        return False
    data, adj = graph.nodes, graph.adj
    if labels is None:
        labels = {}
    phi = dict(zip(a, b, strict=True))
    phi.update(zip(b, a, strict=True))
    if len(phi) == 2 * len(a) and _renaming_holds(data, adj, phi, labels):
        return True   # the two swapped, nothing else moved
    phi = dict(zip(a, b, strict=True))
    keys = labels.setdefault("order", {})

    def order(n):
        hit = keys.get(n)
        if hit is None:
            d = data[n]
            hit = keys[n] = (str(d.get("kind")), d.get("tier", -1), _natural(n))
        return hit

    used = set(b)
    todo = deque(u for u in a if phi[u] != u)   # breadth first: nearest pairs first
    while todo:
        u = todo.popleft()
        v = phi[u]
        if len(adj[u]) != len(adj[v]):
            return False
        free_u = sorted((w for w in adj[u] if w not in phi), key=order)
        free_v = sorted((w for w in adj[v] if w not in used), key=order)
        if len(free_u) != len(free_v):
            return False
        for x, y in zip(free_u, free_v, strict=True):
            phi[x] = y
            used.add(y)
            if x != y:
                todo.append(x)
        if len(phi) > ALIKE_NODES:
            return False
    for u, v in list(phi.items()):   # a swap: what u is taken to goes back to u
        if v not in phi:
            phi[v] = u
    if set(phi.values()) != set(phi):
        return False
    return _renaming_holds(data, adj, phi, labels)


def _renaming_holds(data, adj, phi: dict, labels: dict) -> bool:
    """Whether ``phi`` (nodes to nodes, one to one on its keys; every other node kept)
    keeps every link and node attribute, placement labels up to renaming their values:
    :func:`placed_alike`'s check. ``labels``: the graph's GPUs by (label, value), filled
    on first need."""
    moved: dict = {}                 # label -> {value: its new value}
    for u, v in phi.items():
        if u == v:
            continue
        du, dv = data[u], data[v]
        if du.keys() != dv.keys() or len(adj[u]) != len(adj[v]):
            return False
        for k, x in du.items():
            if k in LABELS and du.get("kind") == "gpu":
                if moved.setdefault(k, {}).setdefault(x, dv[k]) != dv[k]:
                    return False
            elif dv[k] != x:
                return False
        av = adj[v]
        for w, d in adj[u].items():
            e = av.get(phi.get(w, w))
            if e is None or e != d:
                return False
    for k, m in moved.items():       # renamed values: one to one, every holder renamed
        if len(set(m.values())) != len(m):
            return False
        for x, y in m.items():
            if x == y:
                continue
            if "by label" not in labels:
                by = labels["by label"] = {}
                for n, d in data.items():
                    if d.get("kind") == "gpu":
                        for key in LABELS:
                            if key in d:
                                by.setdefault((key, d[key]), set()).add(n)
            held = labels["by label"].get((k, x), ())
            if m.get(y, y) == y or any(phi.get(h, h) == h for h in held):
                return False
    return True


def _ocs_circuits(scenario, physical, members):
    """The circuit graph of one instance on a (possibly degraded) OCS fabric: its ring (or
    torus) re-set on the ports its members still have (as the study sets them), or None."""
    from netmodel.study.scenario_fabric import circuit_options, ocs_ports
    from topologies.optical import realize

    ports = ocs_ports(physical, members)
    if ports == 0:
        return None
    for pairs in circuit_options(scenario.circuits, [members], ports):
        try:
            return realize(physical, pairs)
        except UserError:
            continue
    return None


def _unlabelled(circuits: nx.Graph) -> nx.Graph:
    """``circuits`` (a graph :func:`_ocs_circuits` just made, changed in place) without
    what :func:`topologies.optical.realize` writes that no collective cost reads: which
    OCS carries each circuit (an edge's ``via``) and the circuit list in the GPUs' own
    names (the graph's ``logical``). Failures that re-set the same circuits through other
    OCS planes, or the same circuits of other instances, then leave one costing problem
    (:func:`_problem_key`) instead of one each.

    >>> g = nx.Graph(logical="g0-g1")
    >>> g.add_edge("g0", "g1", bandwidth=1.0, via="ocs2")
    >>> h = _unlabelled(g)
    >>> h is g, h.graph, h.edges["g0", "g1"]
    (True, {}, {'bandwidth': 1.0})
    """
    circuits.graph.pop("logical", None)
    for _, _, data in circuits.edges(data=True):
        data.pop("via", None)
    return circuits

def wired_gpus(graph: nx.Graph) -> bool:
    """Whether ``graph`` wires GPUs to GPUs (then they may forward traffic, and instances
    are costed on the whole cell rather than on their members and the switches)."""
    data = graph.nodes
    return any(data[u]["kind"] == "gpu" and data[v]["kind"] == "gpu" for u, v in graph.edges())


def placed_comm(scenario, calibration, direct: bool, fm, members: tuple, graph: nx.Graph,
                orig: tuple, memo: dict, shared: dict | None = None,
                stage: int | None = None) -> _GroupComm:
    """The collective costs of the instance ``orig`` (costed as ``members`` on ``fm``) on
    ``graph`` (the physical fabric: a cell, maybe degraded), as the blast radius re-costs it
    and the healthy search costs a group smaller than its instance
    (:meth:`~netmodel.study.fabric_search.ScenarioCollectives.for_instance`): a collective
    of fewer GPUs than the instance runs on each consecutive slice of that many members,
    the slowest slice's time; on an OCS fabric on circuits re-set for each slice (as the
    healthy costing sets an instance's circuits for each group size,
    :func:`~netmodel.study.scenario_fabric.instance_graph`), not on slices of the
    instance's ring. ``direct``: GPUs are wired to GPUs (members keep their names);
    ``memo``: the slices' cost models by problem, kept by the caller; ``shared``: what
    the slices' costings keep for the next instance on the same ``graph``, kept by a
    caller costing many (each slice's circuits and ``(model, members)``, set once, and
    the :func:`placed_alike` checks done); ``stage``: the GPUs of one pipeline stage
    (a send-recv then runs on the stage boundaries' pairs, :class:`_GroupComm`)."""
    shared = {} if shared is None else shared
    alike = shared.setdefault("alike", {})
    if not scenario.is_ocs:
        return _GroupComm(fm, members, physical=fm.graph, alike=alike, stage=stage)
    from netmodel.study.scenario_fabric import adjusted, scenario_cost_model

    made = shared.setdefault("slices", {})   # a slice's (model, members): circuits set once

    def slice_model(pos: tuple):
        part = tuple(orig[i] for i in pos)
        hit = made.get(part)
        if hit is None:
            hit = made[part] = new_slice(part)
        return hit

    def new_slice(part: tuple):
        circuits = _ocs_circuits(scenario, graph, part) if len(part) > 1 else None
        if circuits is None:
            raise InstanceCut()
        g = adjusted(_unlabelled(circuits), scenario.adjust)
        if not direct:
            g, part = _canonical(g, part)
        key = _problem_key(g, part)
        if key not in memo:
            memo[key] = scenario_cost_model(scenario, g, calibration)
        return memo[key], tuple(part)

    return _GroupComm(fm, members, slice_model, graph, orig, alike, stage)


class InstanceCosting:
    """The re-costing of one instance, for a
    :class:`~netmodel.study.reliability_cluster.Cluster` (which inherits it): it reads the
    cluster's ``scenario``, ``model``, ``gpu``, ``parallelism``, ``batch``, ``best``,
    ``workload``,
    ``options``, ``slo``, ``calibration`` and ``_direct`` (whether GPUs forward traffic),
    and keeps its memos in the cluster's ``__dict__`` (``_costed``, ``_rebalanced``, and
    ``_models``: cost models kept for re-balancing)."""

    def _problem(self, graph: nx.Graph, members: Collection[Hashable]) -> tuple | None:
        """``(graph, members, key)`` of the instance ``members`` as costed on ``graph``:
        circuits set on an OCS fabric, the scenario's adjustments applied, renamed by place
        where instances are alike (:func:`_canonical`), and the problem's key (failures that
        leave the same graph are one problem); None when an OCS instance's circuits cannot be
        set."""
        orig = tuple(members)
        # rebalanced asks again for the problem instance_result has just made from the
        # same graph object: the last one is kept (with its graph, so the id is not reused)
        last = self.__dict__.get("_last_problem")
        if last is not None and last[0] is graph and last[1] == orig:
            return last[2]
        out = self._new_problem(graph, orig)
        self.__dict__["_last_problem"] = (graph, orig, out)
        return out

    def _new_problem(self, graph: nx.Graph, members: tuple) -> tuple | None:
        """:meth:`_problem`, not kept."""
        from netmodel.study.scenario_fabric import adjusted

        s = self.scenario
        orig = members
        if s.is_ocs and len(members) > 1:
            graph = _ocs_circuits(s, graph, members)
            if graph is None:
                return None
            graph = _unlabelled(graph)
        elif not s.is_ocs:
            fast = self._switch_problem(graph, members)
            if fast is not None:
                return fast
        physical = graph
        g = adjusted(graph, s.adjust)
        made = self.__dict__.get("_last_direct")
        if not s.is_ocs and self._direct and made is not None and made[0] is graph \
                and made[1] == members:
            # the graph the cluster's recost_graph has just made, named by what it was
            # made from (equal names: equal graphs); not every node and link of the cell
            return g, tuple(members), ("made", made[2], tuple(members))
        if not self._direct:   # instances alike, failures alike: one costing
            g, members = _canonical(g, members)
        key = _problem_key(g, members)
        if s.is_ocs and not self.parallelism.is_plain:
            # a sub-group's circuits are set from the members' own optical links
            key += (_ocs_ports_key(physical, orig),)
        return g, tuple(members), key

    def _switch_problem(self, graph: nx.Graph, members: tuple) -> tuple | None:
        """:meth:`_new_problem` the short way, for the graph the cluster's ``recost_graph``
        has just made (the switches' part, the members wired in, one set of failures, and
        the spares of its plan after the members, by name) where GPUs forward no traffic and the scenario adjusts nothing: the graph
        :func:`_canonical` gives, made from the switches' part in its canonical order
        (:meth:`_canonical_switches`, once) with the failed parts' edits and the members,
        and a key naming that part, the edits and the members' part instead of every
        attribute of the graph (equal keys: equal graphs, as with :func:`_problem_key`).
        None where it does not apply (the long way then)."""
        last = self.__dict__.get("_last_recost")
        if (last is None or last[0] is not graph or last[2] != members
                or self._direct or not self.scenario.adjust.is_identity
                or type(graph) is not nx.Graph):
            return None
        comps = last[1]
        base, order, names = self._canonical_switches()
        mapping = {m: f"gpu{k}" for k, m in enumerate(members)}
        data = graph.nodes
        # spares the graph holds beyond the members (recost_graph's plan; those the failure
        # stops are gone from it): GPUs after the members, by name, as _canonical puts them
        others = [] if not last[3] else sorted(
            (n for n in graph if n not in base and n not in mapping),
            key=lambda n: (type(n).__name__, str(n)))
        if len(mapping) != len(members) or any(m in base or m not in graph for m in members) \
                or any(v in names for v in mapping.values()) \
                or any(data[n].get("kind") != "gpu" for n in others) \
                or set(mapping.values()) & set(others) \
                or len(graph) != len(members) + len(others) \
                + sum(1 for n in order if n in graph):
            return None   # a member twice, or gone, a name taken, or another node: long way
        gone = {n for c in comps for n in c.nodes if n in base}
        cut = set()      # switches' links removed (both ends kept)
        changed = set()  # switches' links thinned (kept)
        for c in comps:
            for u, v in c.edges:
                if u in base and v in base and base.has_edge(u, v) \
                        and u not in gone and v not in gone:
                    cut.add((u, v))
                    cut.add((v, u))
            for (u, v), _ in c.scaled:
                if u in base and v in base and base.has_edge(u, v) \
                        and u not in gone and v not in gone:
                    changed.add((u, v))
                    changed.add((v, u))
        changed -= cut
        adj = graph.adj
        out = nx.Graph()
        out.graph.update(graph.graph)
        # the internals networkx documents (node and adjacency dicts), filled directly: the
        # switches' links share the cached part's attribute dicts (nothing changes them),
        # a thinned one gets its own
        node, oadj = out._node, out._adj
        own = {}
        for n in order:
            if n in gone:
                continue
            node[n] = dict(data[n])
            nbrs = {}
            for v, d in base._adj[n].items():
                if v in gone or (n, v) in cut:
                    continue
                if (n, v) in changed:
                    d = own.get((v, n))
                    if d is None:
                        d = own[n, v] = dict(adj[n][v])
                nbrs[v] = d
            oadj[n] = nbrs
        part = []
        # the members under their new names, then the spares not in the instance, wired as in graph
        for m, name in chain(((m, mapping[m]) for m in members), ((n, n) for n in others)):
            node[name] = dict(data[m])
            nbrs = {}
            for v in sorted(adj[m], key=names.__getitem__):
                d = dict(adj[m][v])
                nbrs[v] = d
                oadj[v][name] = d
            oadj[name] = nbrs
            part.append((name, frozen_attrs(node[name]), tuple((v, frozen_attrs(d)) for v, d in nbrs.items())))
        key = ("switches", frozen_attrs(out.graph), tuple(sorted(names[n] for n in gone)),
               tuple(sorted((names[u], names[v]) for u, v in cut if names[u] < names[v])),
               tuple(sorted((names[u], names[v], frozen_attrs(own.get((u, v)) or own[v, u]))
                            for u, v in changed if names[u] < names[v])),
               len(members), tuple(part))
        return out, tuple(mapping.values()), key

    def _canonical_switches(self) -> tuple:
        """The cluster's switches' part (``_switches``) rebuilt in :func:`_canonical`'s
        order (by name), that order, and each node's place in it; made once."""
        got = self.__dict__.get("_canonical_switch_part")
        if got is None:
            base, _ = _canonical(self._switches, ())
            order = list(base.nodes)
            got = base, order, {n: i for i, n in enumerate(order)}
            self.__dict__["_canonical_switch_part"] = got
        return got

    def _comm(self, fm, members: tuple, graph: nx.Graph, orig: tuple) -> _GroupComm:
        """The collective costs of the instance ``orig`` (costed as ``members`` on ``fm``)
        on ``graph``: :func:`placed_comm` with the cluster's scenario and calibration."""
        return placed_comm(self.scenario, self.calibration, self._direct, fm, members, graph,
                           orig, self.__dict__.setdefault("_slice_models", {}),
                           stage=self.parallelism.tp)

    def _cost_model(self, g: nx.Graph, key: tuple):
        """The collective cost model of problem ``key`` (its graph ``g``): the one the
        healthy-batch costing kept for re-balancing (taken back), else a new one."""
        from netmodel.study.scenario_fabric import scenario_cost_model

        fm = self.__dict__.setdefault("_models", {}).pop(key, None)
        if fm is None:
            fm = scenario_cost_model(self.scenario, g, self.calibration,
                                     validated=self._known_valid(key))
        return fm

    def _known_valid(self, key: tuple) -> bool:
        """Whether the graph of problem ``key`` passes :func:`~topologies.schema.validate`
        without checking it: one the cluster's ``recost_graph`` made (key ``("made",
        (failures, spares), members)``, :meth:`_new_problem`) from a cell that passes
        (``_cell_valid``, checked once) by removing failed parts alone, no spare added, no
        link thinned (a thinned bandwidth may leave the allowed range, a spare's links may
        exceed a switch's radix: those graphs are checked), and the scenario adjusts
        nothing. Each such copy of a 131,072-GPU torus took 0.6 s to validate (blast-radius
        of it 68.7 -> 61.8 s without)."""
        if key[0] != "made" or not self.scenario.adjust.is_identity:
            return False
        failures, spares = key[1]
        return not spares and not any(scaled for _, _, scaled, _ in failures) \
            and getattr(self, "_cell_valid", False)

    def instance_result(self, graph: nx.Graph,
                        members: Collection[Hashable]) -> InferenceResult | None:
        """The instance ``members`` costed alone on ``graph`` (a degraded cell, maybe with
        spares) in the healthy configuration and batch: an InferenceResult, or None when its
        members cannot all reach each other."""
        problem = self._problem(graph, members)
        if problem is None:
            return None
        g, g_members, key = problem
        memo = self.__dict__.setdefault("_costed", {})
        if key in memo:
            return memo[key]
        fm = self._cost_model(g, key)
        try:
            p = self.parallelism
            r = evaluate(self.model, self.gpu, p.tp, self.batch, self.workload, pp=p.pp,
                         ep=p.ep, attention_dp=p.attention_dp,
                         expert_skew=self.best.expert_skew,
                         comm=self._comm(fm, g_members, graph, tuple(members)),
                         options=self.options, slo=self.slo)
        except InstanceCut:
            r = None
        if r is not None and not r.feasible:   # re-balancing will cost it again
            self.__dict__["_models"][key] = fm
        memo[key] = r
        return r

    def rebalanced(self, graph: nx.Graph,
                   members: Collection[Hashable]) -> InferenceResult | None:
        """The instance ``members`` on ``graph`` re-balanced to meet the SLO: the same
        configuration (TP, PP, EP, attention DP; placement) at the largest batch up to the healthy one
        whose step meets the SLO and fits (a serving engine whose step slows caps its
        running batch); None when its members cannot all reach each other or no batch
        meets the SLO. At the healthy batch this is :meth:`instance_result`."""
        r = self.instance_result(graph, members)
        if r is None or r.feasible:
            return r
        g, g_members, key = self._problem(graph, members)   # not None: r was costed
        memo = self.__dict__.setdefault("_rebalanced", {})
        if key in memo:
            return memo[key]
        batches = np.arange(1, self.batch, dtype=np.int64)   # below the healthy batch
        out = None
        if batches.size:
            p = self.parallelism
            grid = evaluate_grid(self.model, self.gpu, [p.tp if p.is_plain else p], batches,
                                 self.workload, expert_skew=self.best.expert_skew,
                                 comm=self._comm(self._cost_model(g, key), g_members,
                                                 graph, tuple(members)),
                                 options=self.options,
                                 latency_limit=float(self.slo.limit(self.workload.phase)))
            ok = np.flatnonzero(grid.feasible[0])
            if ok.size:
                out = grid.result(0, int(ok[-1]))
        memo[key] = out
        return out


def _canonical(graph: nx.Graph, members: Iterable[Hashable]) -> tuple[nx.Graph, tuple]:
    """``(graph, members)`` with the members renamed by their place in the instance
    (``gpu0``, ``gpu1``, ...) and the graph rebuilt in one order (the other nodes by name,
    then the members, then any other GPU; links by the positions of their ends): instances placed alike on the same switches, hit alike by a failure, become
    one costing problem. Only for fabrics whose GPUs forward no traffic (the graph then
    holds the members, the switches and spares); unchanged where a new name is taken.

    >>> g = nx.Graph([("s", "g7", {"bandwidth": 1.0}), ("s", "g5", {"bandwidth": 2.0})])
    >>> h, m = _canonical(g, ("g5", "g7"))
    >>> m, list(h.nodes), sorted(h.edges(data="bandwidth"))
    (('gpu0', 'gpu1'), ['s', 'gpu0', 'gpu1'], [('s', 'gpu0', 2.0), ('s', 'gpu1', 1.0)])
    """
    members = tuple(members)
    mapping = {m: f"gpu{k}" for k, m in enumerate(members)}
    # the other nodes by name, not in the graph's order: a subgraph taken on a set of nodes
    # iterates that set, whose order follows the process's string hashing
    others = sorted((n for n in graph if n not in mapping), key=lambda n: (type(n).__name__, str(n)))
    if set(mapping.values()) & set(others):
        return graph, members
    data = graph.nodes
    order = [n for n in others if data[n].get("kind") != "gpu"] + list(members) \
        + [n for n in others if data[n].get("kind") == "gpu"]
    index = {n: i for i, n in enumerate(order)}
    names = [mapping.get(n, n) for n in order]
    out = type(graph)()
    out.graph.update(graph.graph)
    out.add_nodes_from((names[i], data[n]) for i, n in enumerate(order))
    ends = sorted(((min(index[u], index[v]), max(index[u], index[v]), d)
                   for u, v, d in graph.edges(data=True)), key=lambda e: e[:2])
    out.add_edges_from((names[i], names[j], d) for i, j, d in ends)
    return out, tuple(mapping[m] for m in members)


def _problem_key(graph: nx.Graph, members: Iterable[Hashable]) -> tuple:
    """``graph`` (its nodes and each node's neighbours in order, with every attribute) and
    the instance ``members``, as one hashable value: equal keys are the same costing
    problem (two failures that leave the same graph, such as a NIC and the transceiver of
    the same link, are costed once).

    >>> a = nx.Graph([("s", "g1", {"bandwidth": 1.0}), ("s", "g2", {"bandwidth": 1.0})])
    >>> b = nx.Graph([("s", "g1", {"bandwidth": 1.0}), ("s", "g2", {"bandwidth": 0.5})])
    >>> _problem_key(a, ("g1", "g2")) == _problem_key(a.copy(), ("g1", "g2"))
    True
    >>> _problem_key(a, ("g1", "g2")) == _problem_key(b, ("g1", "g2"))  # a link thinned
    False
    >>> _problem_key(a, ("g1", "g2")) == _problem_key(a, ("g2", "g1"))  # another order
    False
    """
    adj, data = graph.adj, graph.nodes
    return (type(graph).__name__, frozen_attrs(graph.graph),
            tuple((n, frozen_attrs(data[n]), tuple(adj[n])) for n in graph.nodes),
            tuple((u, v, frozen_attrs(d)) for u, v, d in graph.edges(data=True)),
            tuple(members))


def _ocs_ports_key(graph: nx.Graph, members: Iterable[Hashable]) -> tuple:
    """What the circuits of a slice of ``members`` are set from (each member's optical
    links in order, with their attributes and their OCS's), positionally."""
    data = graph.nodes
    return tuple(tuple((o, frozen_attrs(graph.edges[m, o]), frozen_attrs(data[o]))
                       for o in graph.neighbors(m) if data[o].get("kind") == "ocs")
                 for m in members)



