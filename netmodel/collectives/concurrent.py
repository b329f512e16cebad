"""Many collectives at once on one fabric: every TP group of a cluster in the same layer.

All groups run the same operation and size at the same time, step by step. Links are
shared fairly: during a step, a link carries the traffic of every group routed across it
and drains it at its achievable rate, so a group's step lasts until its most loaded link
(counting everyone's bytes on it) has drained. Groups of one size and algorithm have the
same steps and run in lockstep (step ``i`` of every group beside step ``i`` of the others);
groups of different sizes or algorithms share by time
(:func:`~netmodel.collectives.concurrent_time.timed_steps`: a link carries a group's bytes while
that group's step runs, not on every repetition of another's step ``i``), unless some group
runs a pipeline (its phases overlap: lockstep then) or the schedule in time would pass its
budget (lockstep too); :attr:`ConcurrentResult.schedule` says which, per size. Each group's
slowdown is its time together over its time alone.

:func:`concurrent_cost` (``netmodel collective --all-groups``, through
:func:`all_groups_cost`, which cuts the groups and leaves out those cut apart) lets each
group choose its own (algorithm, protocol) per size, the fastest for it alone over every
candidate that runs on it, as NCCL's communicators tune apart (each by its own topology and size, knowing
nothing of the others' traffic): groups of different shapes may run different algorithms
(in-network inside a scale-up domain beside ring across two), their steps then routed
together, step ``i`` of each group's own algorithm beside step ``i`` of every other's.
Alone is each group's own best; slowdown its time together over that. Where every group
runs one algorithm (groups of one shape: the usual case), its loads are those of that
algorithm costed for all groups at once, reused between sizes and ops.
:func:`concurrent_own` (the fabric search's ``instances = "all"``) compiles that makespan
once for any sizes (:func:`concurrent_own_makespan`). :func:`concurrent_linear` gives the
lines of one choice shared by all groups per size, and :func:`concurrent_makespan` the
(algorithm, protocol), among those that run on every group, with the smallest makespan.

The costing is split by job, one module each under ``netmodel.collectives``:
``concurrent_groups`` prepares the groups (classes that share steps, kept on the model),
``concurrent_loads`` works out the loads of every step of all groups at once on the links,
``concurrent_time`` schedules groups that run different steps by time,
``concurrent_options`` turns the loads into each (algorithm, protocol)'s lines (pruned, with
the sizes each runs at) and ``concurrent_choice`` gives each group its own choice; this
module holds the entry points and :class:`ConcurrentResult`.

>>> import networkx as nx
>>> from netmodel.collectives.calibration import Calibration
>>> from netmodel.collectives.model import FabricCostModel
>>> g = nx.Graph(name="two leaves", spec="", gpus=4)
>>> for s in ("leaf0", "leaf1"):
...     g.add_node(s, kind="switch", tier=1, radix=4, latency=0.0, in_network_reduction=False)
>>> g.add_node("spine", kind="switch", tier=2, radix=2, latency=0.0, in_network_reduction=False)
>>> for i in range(4):
...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
...     g.add_edge(f"gpu{i}", f"leaf{i % 2}", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
>>> for s in ("leaf0", "leaf1"):
...     g.add_edge(s, "spine", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
>>> m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
>>> r = concurrent_cost(m, [("gpu0", "gpu1"), ("gpu2", "gpu3")], "send-recv", 1e9)
>>> r.alone[:, 0].tolist(), r.time[:, 0].tolist(), r.slowdown[:, 0].tolist()
([1.0, 1.0], [2.0, 2.0], [2.0, 2.0])
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from compute.comm import check_op
from compute.errors import UserError
from netmodel.collectives.algorithms import transfer_count
from netmodel.collectives.concurrent_choice import (
    mixed_classes,
    mixed_lines,
    mixed_sizes,
    own_lean,
    own_options,
    own_times,
)
from netmodel.collectives.concurrent_groups import groups_in_order, prepare_groups, prepared_groups
from netmodel.collectives.concurrent_loads import evaluate_loads
from netmodel.collectives.concurrent_options import (
    by_choice,
    choice_keys,
    masked_times,
    one_class,
    option_ranges,
    valid_options,
)
from netmodel.collectives.concurrent_policies import policy_rows
from netmodel.collectives.cost import GroupCut
from netmodel.collectives.model import FabricCostModel, check_sizes
from netmodel.collectives.placement import partition

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from netmodel.collectives.concurrent_groups import Groups

__all__ = ["ALL_GROUPS_WORK", "DAG_UNIT_WEIGHT", "ConcurrentResult", "all_groups_cost",
           "all_groups_work", "check_all_groups_work", "concurrent_cost", "concurrent_linear",
           "concurrent_makespan", "concurrent_own", "concurrent_own_makespan", "dag_searched"]


@dataclass(frozen=True)
class ConcurrentResult:
    """Times of many groups running one collective together.

    Attributes
    ----------
    op : str
    groups : tuple of tuple
    nbytes : numpy.ndarray
        Message sizes (bytes), shape ``(S,)``.
    algorithm, protocol : tuple of str
        The choice of the slowest group per size (the group whose time is the makespan; where
        several are, the first as listed: ``time[:, s].argmax()``).
    time : numpy.ndarray
        Seconds together, shape ``(G, S)``: each group running its own choice
        (``algorithms``, ``protocols``) while every other group runs its own.
    alone : numpy.ndarray
        Seconds alone, shape ``(G, S)``: each group's own best, over every algorithm that
        runs on it (two-shot on a Lite package's mesh, in-network within a scale-up domain
        included where the group allows them, whatever the other groups allow).
    hotspots : tuple
        The most loaded directed links ``(u, v)`` at the largest size (at most five),
        with the number of groups sharing each: ``((u, v), groups)``.
    algorithms, protocols : numpy.ndarray
        Each group's own choice per size, shape ``(G, S)`` (str): the (algorithm,
        protocol) fastest for it alone, as NCCL's communicators tune apart.
    schedule : tuple of str
        Which schedule shared the links per size
        (:mod:`~netmodel.collectives.concurrent_time`): ``"time"`` (groups of different
        sizes or algorithms, each running its steps in turn), ``"lockstep"`` (groups of one
        size on one algorithm: step ``i`` of each beside step ``i`` of the others),
        ``"lockstep (a pipeline)"`` (some group runs one: the groups stay in lockstep) or
        ``"lockstep (past the schedule's budget)"`` (the schedule in time would look at
        more than ``_TIMED_WORK`` entries: a charge that is no bound of it either way).
    """

    op: str
    groups: tuple[tuple[Hashable, ...], ...]
    nbytes: np.ndarray
    algorithm: tuple[str, ...]
    protocol: tuple[str, ...]
    time: np.ndarray
    alone: np.ndarray
    hotspots: tuple[tuple[tuple[Hashable, Hashable], int], ...]
    algorithms: np.ndarray
    protocols: np.ndarray
    schedule: tuple[str, ...]

    @property
    def slowdown(self) -> np.ndarray:
        """Time together over time alone, shape ``(G, S)`` (>= 1)."""
        return self.time / self.alone

    @property
    def makespan(self) -> np.ndarray:
        """The slowest group's seconds per size, shape ``(S,)``."""
        return self.time.max(axis=0)


def concurrent_makespan(op: str, choices, a: np.ndarray, b: np.ndarray,
                        lo: np.ndarray | None, hi: np.ndarray | None,
                        nbytes: ArrayLike) -> np.ndarray:
    """The collective's time at the sizes ``nbytes`` (any shape) from
    :func:`concurrent_linear`'s ``(choices, a, b, lo, hi)``: the makespan of the best
    shared choice, each group's lines counted only at the sizes they run at.

    >>> concurrent_makespan("send-recv", [("direct", "LL"), ("direct", "Simple")],
    ...                     np.array([[1.0, 1.0], [3.0, 3.0]]), np.array([[2.0, 2.0],
    ...                     [1.0, 1.0]]), np.array([[0.0, 0.0], [4.0, 2.0]]),
    ...                     np.array([[4.0, 2.0], [np.inf, np.inf]]), [1.0, 3.0, 5.0]).tolist()
    [3.0, 7.0, 8.0]
    """
    n = np.asarray(nbytes, dtype=float)
    merge = not one_class(lo, hi)
    keys = choice_keys(op, [c[0] for c in choices], merge)
    if not merge:
        shape = a.shape + (1,) * n.ndim
        t = masked_times(a.reshape(shape) + b.reshape(shape) * n, lo, hi, n)
        return t.max(axis=1).min(axis=0)
    # per group the smallest of its choice's options: (O, G, sizes) at once, in parts of
    # at most 2**22 numbers (a search grid holds thousands of sizes)
    flat = n.ravel()
    out = np.empty(len(flat))
    step = max(1, 2 ** 22 // max(1, a.size))
    for i in range(0, len(flat), step):
        m = flat[i:i + step]
        t = masked_times(a[:, :, None] + b[:, :, None] * m, lo, hi, m)
        out[i:i + step] = by_choice(t, keys).max(axis=1).min(axis=0)
    return out.reshape(n.shape)


def concurrent_linear(model: FabricCostModel, groups: Groups, op: str,
                      algorithm: str | None = None, ranges: bool = False) -> tuple:
    """The linear candidates of ``op`` run by all ``groups`` at once, compiled once so that
    any array of sizes costs a multiply-add: ``(choices, a, b)``, and with ``ranges``
    ``(choices, a, b, lo, hi)``.

    ``choices`` lists the valid ``(algorithm, protocol)``; ``a`` and ``b`` have shape
    ``(C, G)``: group ``g`` takes ``a[c, g] + b[c, g] * n`` seconds together under choice
    ``c``. The time of the collective at size ``n`` is then the makespan of the best shared
    choice, ``min_c max_g (a[c, g] + b[c, g] * n)``, among the choices that run on every
    group (:func:`concurrent_cost` instead lets each group run its own best alone).
    ``lo`` and ``hi`` (shape ``(C, G)``, or both None where every choice runs at every
    size): group ``g`` runs choice ``c`` only at the sizes ``lo < n <= hi`` (NCCL's
    send/recv: LL or Simple by each group's size rule, those choices one shared
    algorithm); :func:`concurrent_makespan` takes the five. ``groups`` and ``algorithm``
    as there.

    >>> import networkx as nx
    >>> from netmodel.collectives.calibration import Calibration
    >>> g = nx.Graph(name="one link", spec="", gpus=4)
    >>> g.add_node("sw", kind="switch", tier=0, radix=4, latency=0.0,
    ...            in_network_reduction=False)
    >>> for i in range(4):
    ...     g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    ...     g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    >>> m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal())
    >>> choices, a, b = concurrent_linear(m, [("gpu0", "gpu1"), ("gpu2", "gpu1")],
    ...                                   "send-recv")
    >>> choices[0][0], a.shape, b[0].tolist()  # both send into gpu1: 2 s per GB each
    ('direct', (1, 2), [2e-09, 2e-09])
    """
    groups, names = prepare_groups(model, groups, op, algorithm)
    options = valid_options(model, groups, op, names, alone_too=False)
    out = (tuple((o[0], o[1]) for o in options), np.stack([o[2] for o in options]),
           np.stack([o[3] for o in options]))
    if not ranges:
        return out
    return out + (option_ranges(model, groups, op, options) or (None, None))


def concurrent_own(model: FabricCostModel, groups: Groups, op: str,
                   algorithm: str | None = None) -> tuple:
    """:func:`concurrent_cost`'s makespan compiled once for any sizes (the fabric search's
    ``instances = "all"``): ``(options, lo, hi, whole, groups, shapes)`` for
    :func:`concurrent_own_makespan`, each group running its own choice, the fastest for it
    alone, as NCCL's communicators tune apart; under a model's tuner plugin
    (:meth:`~netmodel.collectives.model.FabricCostModel.tuned`) each group takes the
    plugin's (algorithm, protocol) where it chooses one the group can run, as
    :func:`concurrent_cost` lets it. Groups whose lines are all alike (one shape: the usual
    case; with a tuner, of as many ranks on as many nodes too) are kept once (they choose
    alike and take the same time); the groups themselves are kept for the sizes where their
    choices run different algorithms (costed there by :func:`concurrent_cost`, their steps
    routed together). ``shapes``: each kept group's (ranks, nodes), which the tuner reads;
    None untuned."""
    groups, names = prepare_groups(model, groups, op, algorithm)
    groups = groups_in_order(model, groups)[0]   # as concurrent_cost orders them: the same sums
    options, lo, hi, whole = own_options(model, groups, op, names, None, hot=False)
    cols = [np.stack([np.asarray(o[k], dtype=float) for o in options]) for k in (2, 3, 4, 5)]
    if lo is not None:
        cols += [lo, hi]
    tuned = model.tuned(algorithm)
    if tuned:   # the plugin reads each communicator's ranks and nodes
        cols += [np.array([[len(g) for g in groups],
                           [model.tuner_nodes(g) for g in groups]], dtype=float)]
    keep = _first_columns(np.vstack(cols))
    opts = [(o[0], o[1], o[2][keep], o[3][keep], o[4][keep], o[5][keep]) for o in options]
    if lo is not None:
        lo, hi = lo[:, keep], hi[:, keep]
    shapes = [(int(r), int(n)) for r, n in cols[-1][:, keep].T] if tuned else None
    return opts, lo, hi, whole, groups, shapes


def _first_columns(m: np.ndarray) -> np.ndarray:
    """Where each distinct column of ``m`` (floats) first occurs, ascending: ``np.sort(
    np.unique(m, axis=1, return_index=True)[1])``, found by each column's bytes in a dict
    where bytes and values agree (no NaN, no -0.0; else by np.unique), not by np.unique's
    sort of the columns field by field (8,192 groups of 2, 72 rows: 28 -> 3 ms).

    >>> _first_columns(np.array([[1.0, 2.0, 1.0, 2.0], [0.0, 5.0, 0.0, 5.0]])).tolist()
    [0, 1]
    """
    if np.isnan(m).any() or np.signbit(m[m == 0]).any():
        return np.sort(np.unique(m, axis=1, return_index=True)[1])
    rows = np.ascontiguousarray(m.T)
    first: dict[bytes, int] = {}
    for i, b in enumerate(rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize)))
                          .ravel().tolist()):
        first.setdefault(b, i)
    return np.fromiter(sorted(first.values()), np.intp, count=len(first))


def concurrent_own_makespan(model: FabricCostModel, op: str, own: tuple,
                            nbytes: ArrayLike, schedules: list | None = None) -> np.ndarray:
    """The makespan at the sizes ``nbytes`` (any shape) of :func:`concurrent_own`'s
    ``own``: :func:`concurrent_cost`'s, each group running its own choice. ``schedules``
    (a list, optional): gets :attr:`ConcurrentResult.schedule` of the sizes where the groups
    run different algorithms (costed by :func:`concurrent_cost`), so that a caller can say
    where the schedule in time fell back to the lockstep past its budget. Under a tuner
    (``own``'s ``shapes``) each distinct size is costed once (the plugin is asked per
    group and size)."""
    from compute.comm import check_nbytes

    options, lo, hi, whole, groups, shapes = own
    n = np.asarray(check_nbytes(nbytes), dtype=float)
    out = np.zeros(n.shape)
    some = n > 0          # no bytes: no time (as every collective_time says)
    if some.any():
        flat, back = n[some], None
        if shapes is not None:
            flat, back = np.unique(flat, return_inverse=True)
        t = _own_makespan(model, op, options, lo, hi, whole, groups, flat, schedules,
                          shapes)
        out[some] = t if back is None else t[back.ravel()]
    return out


def _own_makespan(model: FabricCostModel, op: str, options, lo, hi, whole, groups,
                  flat: np.ndarray, schedules: list | None = None,
                  shapes: list | None = None) -> np.ndarray:
    """:func:`concurrent_own_makespan` at the sizes ``flat`` (1-D, every one > 0);
    ``shapes``: each kept group's (ranks, nodes) for the model's tuner (None: untuned)."""
    tuned = None
    if shapes is not None:
        pairs = [(o[0], o[1]) for o in options]

        def tuned(g, s, col):
            return model.tuner_row(op, float(flat[s]), *shapes[g], pairs, col)
    lean = None if tuned is not None else own_lean(options, lo, hi, flat)
    if lean is None:
        time, alone, choice, _, pairs, _ = own_times(options, lo, hi, flat, tuned)
    else:
        time, alone, choice, pairs = lean
    if not np.isfinite(alone).all():
        raise UserError(f"no algorithm can run {op} on every group")
    out = np.maximum(time, alone).max(axis=0)   # never faster than alone, as concurrent_cost
    mixed = mixed_sizes(choice, pairs, whole)
    if mixed.any():   # groups on different algorithms: their steps routed together
        r = _concurrent_cost(model, groups, op, flat[mixed])   # a grid's sizes: unbounded
        out[mixed] = r.makespan
        if schedules is not None:
            schedules.extend(r.schedule)
    return out


def concurrent_cost(model: FabricCostModel, groups: Groups, op: str, nbytes: ArrayLike,
                    algorithm: str | None = None) -> ConcurrentResult:
    """Cost ``op`` of ``nbytes`` (scalar or array) run by all ``groups`` at once.

    ``groups``: explicit GPU lists, or an int size to cut the whole fabric into groups by
    the model's placement policy. ``algorithm``: one name, or None/"auto" for the model's
    choice, which each group makes for itself, as it would alone (NCCL's communicators
    tune apart, knowing nothing of each other's traffic; a model's tuner plugin chooses for
    each group as for one alone: :meth:`~netmodel.collectives.model.FabricCostModel.tuner_pair`). A group cut apart by a failure
    raises :class:`~compute.errors.UserError`; so does a size above 1 PiB
    (:data:`compute.units.MAX_MESSAGE_BYTES`, as every entry that costs a size a user gives:
    more than any GPU's memory holds).
    """
    from compute.validate import of_type

    # a fabric given for its model (a spec, a graph) raised AttributeError ('str' object has
    # no attribute 'graph') from deep inside
    of_type("model", model, FabricCostModel, "FabricCostModel(build('ring:n=8'))", default=False)
    op = check_op(op)
    return _concurrent_cost(model, groups, op, check_sizes(nbytes, bounded=True), algorithm)


#: The most work :func:`all_groups_cost` takes on, in the units of
#: :func:`all_groups_work` (a transfer routed or a node searched, weighted by
#: :data:`DAG_UNIT_WEIGHT` where routes are searched node by node), some 2 minutes.
#: Measured (all-reduce, groups of 64 on a torus, contiguous, the CLI in one process on a
#: loaded 2-core machine, wall): 20x20x20 4.5 M units 19.6 s, 30x30x30 23.1 M 108 s (~4.7 us
#: a unit); 40x40x40, 91.8 M, ran past 100 s. Every shipped scenario's (128 GPUs at most,
#: groups of 2) and the docs' examples are under 0.1 M (0.4 M weighted).
ALL_GROUPS_WORK = 25_000_000

#: What a unit of :func:`all_groups_work` weighs on a fabric of up to
#: :data:`~netmodel.collectives.route_types.DAG_NODES` (4,096) nodes that links join
#: (``Router._dag_sized``), against one past it. There each destination's shortest paths
#: are searched and kept node by node in Python (``route_search._dag``: most of a small
#: torus's time, ~0.8 of 8x8x8's in cProfile; the flows over them next), where past it a
#: torus of one bandwidth is walked many pairs at once (``route_dags._spread_rows_torus``).
#: Measured, the same runs as :data:`ALL_GROUPS_WORK`'s unweighted: ~17 us a unit up to
#: 4,096 nodes (8x8x8 0.23 M units 3.9 s, 12x12x12 0.80 M 15.8 s, 16x16x16 2.0 M 35 s;
#: groups of 8 on 12x12x12 0.70 M 9.0 s) against ~4.7 us past it, 3.6 times as much: a
#: 16x16x16 torus at the unweighted limit would have run ~7 minutes. Again, CPU
#: seconds (user + sys, start-up included) of the CLI, the machine more loaded: 8x8x8 0.23 M
#: units 5.2 s (22.9 us a unit), 12x12x12 0.80 M 17.0 s (21.4 us), 16x16x16 2.04 M 35.8 s
#: (17.5 us), groups of 8 on 12x12x12 0.70 M 6.3 s (9.0 us); past it 17x16x16 (4,352 nodes)
#: 2.18 M 10.4 s (4.8 us), 20x20x20 4.47 M 21.9 s (4.9 us): 16x16x16 against 17x16x16, the
#: same work either side of the edge, 3.4 times as long. Weighted 4, the limit holds a
#: small fabric to ~6 M unweighted units, ~2 minutes at 17.5 us (groups of 8, cheaper a
#: unit there, are overestimated ~2 times).
DAG_UNIT_WEIGHT = 4


def all_groups_work(model: FabricCostModel, size: int, op: str) -> tuple[int, int]:
    """``(groups, work)``: how many groups of ``size`` GPUs :func:`all_groups_cost` cuts
    from ``model``'s fabric at most (its GPUs // size), and the work of costing them, counted
    before any is cut or routed: each group's transfers of every algorithm tried for ``op``
    (:func:`~netmodel.collectives.algorithms.transfer_count`, each routed alone and with the
    others), plus the fabric's nodes once a group (whether it is joined: one search of the
    fabric towards its first member where the router searches, as on a torus); all of it
    :data:`DAG_UNIT_WEIGHT` times on a fabric of up to 4,096 linked nodes, whose routes are
    searched node by node (:func:`dag_searched`).

    Two groups of 4 on a ring of 8 GPUs, ring all-reduce alone: ``4 p log2`` bound
    ``4 * 4 * 3 = 48`` transfers a group, and the 8 nodes, each unit 4 (8 nodes, searched
    node by node): ``4 * 2 * (48 + 8)``.

    >>> from topologies.registry import build
    >>> all_groups_work(FabricCostModel(build("ring:n=8"), algorithms=["ring"]), 4,
    ...                 "all-reduce")
    (2, 448)
    """
    groups = len(model.router.gpu_list) // size
    per = sum(transfer_count(a, op, size) for a in model.algorithm_names(op))
    weight = DAG_UNIT_WEIGHT if dag_searched(model) else 1
    return groups, weight * groups * (per + model.graph.number_of_nodes())


def dag_searched(model: FabricCostModel) -> bool:
    """Whether ``model``'s router searches and keeps each destination's shortest paths node
    by node (a fabric of up to :data:`~netmodel.collectives.route_types.DAG_NODES` nodes
    that links join), where :func:`all_groups_work`'s units weigh
    :data:`DAG_UNIT_WEIGHT`."""
    return bool(model.router._dag_sized)


def check_all_groups_work(model: FabricCostModel, size: int, op: str) -> None:
    """:class:`~compute.errors.UserError` where :func:`all_groups_work` passes
    :data:`ALL_GROUPS_WORK`: every group of 64 GPUs of a 40x40x40 torus at once (1,000
    groups) ran past 100 s, of a 100x100x100 torus past 120 s, before any answer."""
    op = check_op(op)
    groups, work = all_groups_work(model, size, op)
    if work > ALL_GROUPS_WORK:
        weighted = (f", each counted {DAG_UNIT_WEIGHT} times: routes on a fabric this small "
                    f"are searched node by node" if dag_searched(model) else "")
        raise UserError(
            f"all_groups: {op} on all {groups:,} groups of {size} GPUs at once would take "
            f"about {work:,} units of work (each group's transfers of every algorithm tried, "
            f"and the fabric's {model.graph.number_of_nodes():,} nodes searched once a "
            f"group{weighted}), more than the limit of {ALL_GROUPS_WORK:,} (some 2 "
            f"minutes): use larger groups, a smaller fabric, or one group alone")


def all_groups_cost(model: FabricCostModel, size: int, op: str, nbytes: float) -> dict:
    """Every group of ``size`` GPUs the placement cuts from ``model``'s fabric, run at once
    (:func:`concurrent_cost`) on the model's algorithm and its scope (a scenario's own
    governs its collectives only, as the group alone), as a JSON-ready dict (``netmodel
    collective --all-groups``' ``all_groups``). A group that failures (or an OCS without
    circuits) cut apart is reported as the costed group is (cut, not an error): listed in
    ``cut`` and left out; the others run together (none: ``groups`` 0, the times None).
    Work past :data:`ALL_GROUPS_WORK` is refused first (:func:`check_all_groups_work`)."""
    check_all_groups_work(model, size, op)
    groups = partition(model.graph, size, model.placement, seed=model.seed,
                       gpus=model.router.gpu_list, checked=True)
    route = model.router.route
    # routes join GPUs within one part of the fabric: every other member reaching the
    # first is the whole group joined (towards the first: one search of the fabric a
    # group where the router searches, not one for each member)
    apart = [any(route(x, g[0]) is None for x in g[1:]) for g in groups]
    cut = [g for g, a in zip(groups, apart, strict=True) if a]
    whole = [g for g, a in zip(groups, apart, strict=True) if not a]
    doc = {"groups": len(whole), "algorithm": None, "protocol": None, "makespan": None,
           "slowdown_max": None, "slowdown_mean": None, "slowest_group": [],
           "hot_links": [], "schedule": None, "cut": [[str(x) for x in g] for g in cut]}
    if not whole:
        return doc
    conc = concurrent_cost(model, whole, op, nbytes)
    worst = int(conc.time[:, 0].argmax())   # the group whose time is the makespan
    doc.update({
        "algorithm": conc.algorithm[0],
        "protocol": conc.protocol[0], "makespan": float(conc.makespan[0]),
        "slowdown_max": float(conc.slowdown[:, 0].max()),
        "slowdown_mean": float(conc.slowdown[:, 0].mean()),
        "slowest_group": [str(x) for x in conc.groups[worst]],
        "hot_links": [[str(u), str(v), k] for (u, v), k in conc.hotspots],
        "schedule": conc.schedule[0]})
    return doc


def _concurrent_cost(model: FabricCostModel, groups: Groups, op: str, nbytes: ArrayLike,
                     algorithm: str | None = None) -> ConcurrentResult:
    """:func:`concurrent_cost` at any size: :func:`concurrent_own_makespan` charges a
    search's grid with it, whose batches may fit no memory (left out afterwards), so its
    messages may pass 1 PiB."""
    op = check_op(op)
    n = np.atleast_1d(check_sizes(nbytes)).astype(float)
    if n.ndim != 1 or not n.size:
        raise UserError(f"nbytes must be one message size or a list of sizes, got "
                        f"{n.size} sizes of shape {n.shape}")
    listed, names = prepare_groups(model, groups, op, algorithm)
    # costed in an order of their own, so that the order they are listed in changes no
    # bit; the rows put back in the listed order at the end
    groups, back = groups_in_order(model, listed)
    options, lo, hi, whole = own_options(model, groups, op, names, n)
    tuned = None
    if model.tuned(algorithm):
        # each communicator tuned apart, from its own op, size, ranks and nodes
        nodes = [model.tuner_nodes(g) for g in groups]

        pairs = [(o[0], o[1]) for o in options]

        def tuned(g, s, col):
            return model.tuner_row(op, float(n[s]), len(groups[g]), nodes[g], pairs, col)
    time, alone, own, keys, pair_list, t_all = own_times(options, lo, hi, n, tuned)
    if not np.isfinite(alone).all():   # the first such group as listed
        g = int(np.flatnonzero(~np.isfinite(alone[back]).all(axis=1))[0])
        raise UserError(f"no algorithm can run {op} on the group "
                        f"{', '.join(map(str, listed[g]))}")
    G, S = own.shape
    algorithms = np.array([p[0] for p in pair_list])[own]
    protocols = np.array([p[1] for p in pair_list])[own]
    # sizes where the groups run different algorithms (or one that runs on some only):
    # every group's own steps routed together (their loads are no single algorithm's)
    mixed = mixed_sizes(own, pair_list, whole).tolist()
    prepared = None
    evaluated: dict[tuple, tuple] = {}
    lines: dict[tuple, tuple] = {}
    mixed_hot = None
    # the schedule of the costing that gave each size's times: the one algorithm's that
    # every group runs, or the mixed groups' own
    schedule = [None if mixed[s] else whole[algorithms[0, s]] for s in range(S)]
    for s in range(S):
        if not mixed[s]:
            continue
        col = algorithms[:, s]
        if prepared is None:
            prepared = prepared_groups(model, groups, True)
        assignment = tuple(col.tolist())
        ev = evaluated.get(assignment)
        if ev is None:
            try:
                ev = evaluated[assignment] = evaluate_loads(
                    model, op, None, prepared, True, mixed_classes(prepared, op, col))
            except GroupCut as exc:
                raise UserError(f"a group is cut apart: {exc}") from None
        for k in np.unique(own[:, s]).tolist():
            rows = np.flatnonzero(own[:, s] == k)
            lk = (assignment, k, rows.tobytes())
            hit = lines.get(lk)
            if hit is None:
                hit = lines[lk] = mixed_lines(model, op, groups, ev, rows, *pair_list[k])
            a, b, lo, hi = hit   # each line at its own sizes (send/recv's by channel)
            time[rows, s] = np.where((n[s] > lo) & (n[s] <= hi), a + b * n[s],
                                     np.inf).min(axis=0)
        schedule[s] = ev[7]
        if s == S - 1:
            mixed_hot = ev[6]
    # a group that no other's transfers can reach under any algorithm or routing policy
    # (concurrent_policies) takes its time alone, whatever the others run
    rows = policy_rows(model, op, groups)
    if rows is not None:
        time[rows] = alone[rows]
    # a group is never faster together than alone: where the two differ only by the order
    # of sums (its steps alone on its links, or an ulp of the schedule), alone
    time = np.maximum(time, alone)
    # the choice of each size's slowest group, and (at the largest size) its option's hot
    # links: the option of that choice it runs (its protocol by size for send/recv). The
    # slowest is the first group as listed whose time is the makespan, as the result's
    # time[:, s].argmax() finds it (--all-groups' slowest_group): where groups on different
    # choices tie, the canonical order's first would be another group's choice
    slowest = back[np.argmax(time[back], axis=0)]
    cols = np.arange(S)
    router = model.router
    if mixed_hot is None:
        k = own[slowest[-1], -1]
        at = np.where(keys == k, t_all[:, slowest[-1], -1], np.inf)
        hot = options[int(np.argmin(at))][6]
    else:
        hot = mixed_hot
    worst = max(hot, key=lambda h: h[0][0] if h else 0.0) if hot else []
    hotspots = tuple((router.link_name(t), users) for _, t, users in worst)
    return ConcurrentResult(op, listed, n, tuple(algorithms[slowest, cols].tolist()),
                            tuple(protocols[slowest, cols].tolist()), time[back],
                            alone[back], hotspots, algorithms[back], protocols[back],
                            tuple(schedule))
