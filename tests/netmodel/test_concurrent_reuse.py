"""What the concurrent model and the router keep and reuse gives, to the last bit, what
working everything out afresh gives (issue 12's speed work changes no number).

The reference path is the model with its reuse switched off: the router's table of
signature-pair route fields emptied at every step (as when each step worked its pairs out
anew), a step's loads reused only for the same bytes (never scaled), (group, piece) sums
always sorted (never the dense table). Times, alone times and hot spots must be equal, not
close.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives import (
    concurrent,
    concurrent_groups,
    concurrent_loads,
    concurrent_options,
    route_bulk,
    route_plans,
    route_sharing,
)
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.concurrent_groups import _unique_rows
from netmodel.collectives.concurrent_loads import _power_of_two_ratio
from netmodel.collectives.degraded import degrade
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.placement import partition
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import Pairs
from topologies import build

SPECS = ["fat-tree:k=8", "fat-tree:k=8,oversubscription=2", "rail-optimized:domains=4",
         "leaf-spine:leaves=4,radix=8,oversubscription=2", "torus:dims=4x4",
         "lite-groups:base=[fat-tree:k=4],lites=2"]
SIZES = 2.0 ** np.arange(0, 40, 3)


def _fabrics():
    for spec in SPECS:
        yield spec, build(spec)
    g = build("fat-tree:k=8")
    yield "fat-tree:k=8 degraded", degrade(g, links=[("leaf0", "spine0")],
                                           nodes=["spine5", "core3"])


FABRICS = list(_fabrics())


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _run(graph, placement, p, op):
    model = FabricCostModel(graph, placement=placement, seed=7, validated=True)
    return concurrent_cost(model, p, op, SIZES)


def _afresh(monkeypatch):
    monkeypatch.setattr(route_bulk, "_KNOWN_PAIRS", 0)
    monkeypatch.setattr(route_bulk, "_DENSE_PAIRS", 0)
    monkeypatch.setattr(concurrent_loads, "_power_of_two_ratio",
                        lambda new, old: 1.0 if np.array_equal(new, old) else None)
    monkeypatch.setattr(concurrent_loads, "_DENSE_FACTOR", 0)


@pytest.mark.parametrize("name, graph", FABRICS, ids=[f[0] for f in FABRICS])
def test_reuse_gives_the_numbers_of_working_afresh(name, graph, monkeypatch):
    cases = [(placement, p, op) for placement in ("random", "spread", "contiguous")
             for p in (4, 8) for op in ("all-reduce", "all-to-all", "all-gather")]
    kept = {c: _run(graph, *c) for c in cases}
    _afresh(monkeypatch)
    for c in cases:
        new, ref = kept[c], _run(graph, *c)
        assert new.algorithm == ref.algorithm and new.protocol == ref.protocol, (name, c)
        assert _same(new.time, ref.time) and _same(new.alone, ref.alone), (name, c)
        assert new.hotspots == ref.hotspots, (name, c)


def test_a_step_reused_scaled_equals_its_loads_worked_out():
    # halving-doubling's first steps and recursive doubling's: the same pairs, bytes in
    # the ratio 1/2 : 1, 1/4 : 1, ... so recursive doubling reuses them scaled
    g = build("fat-tree:k=8")
    groups = partition(g, 8, "random", seed=3)
    seen = []
    real = concurrent_loads._scaled

    def spy(out, c):
        seen.append(c)
        return real(out, c)

    m1 = FabricCostModel(g, algorithm="auto", validated=True)
    concurrent_loads._scaled = spy
    try:
        both = concurrent.concurrent_linear(m1, groups, "all-reduce")
    finally:
        concurrent_loads._scaled = real
    assert 8.0 in seen and 2.0 in seen  # reused, scaled
    m2 = FabricCostModel(g, algorithm="auto", validated=True)
    alone = concurrent.concurrent_linear(m2, groups, "all-reduce", "recursive-doubling")
    j = both[0].index(alone[0][0])
    assert _same(both[1][j], alone[1][0]) and _same(both[2][j], alone[2][0])


def test_power_of_two_ratio():
    x = np.array([0.125, 0.5, 1 / 3])
    assert _power_of_two_ratio(x, x) == 1.0
    assert _power_of_two_ratio(x * 8, x) == 8.0 and _power_of_two_ratio(x / 4, x) == 0.25
    assert _power_of_two_ratio(x * 3, x) is None  # not a power of two: not exact
    y = x * 2
    y[2] += 1e-16
    assert _power_of_two_ratio(y, x) is None  # one transfer differs
    assert _power_of_two_ratio(x[:2], x) is None
    assert _power_of_two_ratio(np.zeros(3), np.zeros(3)) is None
    assert _power_of_two_ratio(x * 2.0 ** 80, x) is None  # far from 1: not taken
    assert _power_of_two_ratio(np.zeros(0), np.zeros(0)) is None
    assert math.frexp(_power_of_two_ratio(x / 2 ** 10, x))[0] == 0.5


@pytest.mark.parametrize("width", [1, 3, 8, 9, 12, 40])
def test_unique_rows_are_numpys(width):
    rng = np.random.default_rng(width)
    table = rng.random((300, width)) < 0.3
    table[::7] = table[3]  # repeated rows
    want = np.unique(table, axis=0, return_inverse=True)[1].ravel()
    assert np.array_equal(_unique_rows(table), want)


@pytest.mark.parametrize("square", [True, False], ids=["square index", "searched"])
@pytest.mark.parametrize("name, graph", FABRICS, ids=[f[0] for f in FABRICS])
def test_router_plans_with_the_table_equal_those_without(name, graph, square, monkeypatch):
    """A router that keeps the route fields of earlier steps' signature pairs (looked up
    through the square index of signature pairs, or searched in the sorted table) plans
    every step exactly as one that works each step's pairs out anew (same steps in the
    same order: the same pieces registered under the same numbers), and its loads are
    equal."""
    if not square:
        monkeypatch.setattr(route_bulk, "_DENSE_PAIRS", 0)
    gpus = Router(graph).gpu_list
    rng = np.random.default_rng(1)
    steps = []
    for k in range(5):  # large steps (the table's path), overlapping pairs
        a, b = rng.choice(len(gpus), 150), rng.choice(len(gpus), 150)
        steps.append(Pairs(tuple(gpus), a, b, 0.5 ** k))
    fields = ("template", "hop_index", "hop_links", "hop_weights", "pieces", "piece_of",
              "latency", "scaleout")
    kept = Router(graph)
    plans = [kept.plan(s) for s in steps]
    loads = [kept.loads(s) for s in steps]
    assert len(kept._known_keys) > 0 and (kept._known_index is not None) == square
    monkeypatch.setattr(route_bulk, "_KNOWN_PAIRS", 0)
    monkeypatch.setattr(route_bulk, "_DENSE_PAIRS", 1 << 20 if not square else 0)
    afresh = Router(graph)
    for s, pl, ld in zip(steps, plans, loads, strict=True):
        ref = afresh.plan(s)
        for f in fields:
            assert _same(getattr(pl, f), getattr(ref, f)), (name, f)
        assert pl.routes.keys() == ref.routes.keys()
        got = afresh.loads(s)
        assert _same(got[0], ld[0]) and _same(got[1], ld[1]) and got[2:] == ld[2:]


def test_random_placement_is_the_per_group_sort():
    g = build("fat-tree:k=8")
    gpus = Router(g).gpu_list
    for seed, size in ((0, 8), (5, 3), (11, 7)):
        perm = np.random.default_rng(seed).permutation(len(gpus))
        want = [tuple(gpus[i] for i in sorted(perm[j * size:(j + 1) * size]))
                for j in range(len(gpus) // size)]
        assert partition(g, size, "random", seed=seed) == want


def _twice(graph):
    """The fabric and the same with every link twice as fast (routes shared)."""
    fast = graph.copy()
    for _, _, d in fast.edges(data=True):
        d["bandwidth"] *= 2
    return graph, fast


@pytest.mark.parametrize("spec", ["fat-tree:k=8", "rail-optimized:domains=4",
                                  "torus:dims=4x4"])
def test_groups_kept_between_ops_give_the_numbers_of_a_fresh_model(spec):
    # one model costs the same groups op after op (their steps' loads kept between
    # costings), then the twin fabric twice as fast (its router shares the first one's
    # routes, not its loads); every answer equals a fresh model's, to the last bit
    graph, fast = _twice(build(spec))
    ops = ["all-reduce", "reduce-scatter", "all-gather", "all-to-all", "all-reduce"]
    for g in (graph, fast):
        kept = FabricCostModel(g, validated=True)
        groups = partition(g, 4, "random", seed=5)
        for op in ops:
            new = concurrent.concurrent_linear(kept, groups, op)
            ref = concurrent.concurrent_linear(FabricCostModel(g, validated=True), groups, op)
            assert new[0] == ref[0], (spec, op)
            assert _same(new[1], ref[1]) and _same(new[2], ref[2]), (spec, op)
        # costed alone too (what a step's kept loads hold differs): not the loads above
        new = concurrent_cost(kept, groups, "all-reduce", SIZES)
        ref = concurrent_cost(FabricCostModel(g, validated=True), groups, "all-reduce", SIZES)
        assert _same(new.time, ref.time) and _same(new.alone, ref.alone), spec
        assert new.hotspots == ref.hotspots and new.algorithm == ref.algorithm, spec
    slow, quick = (concurrent.concurrent_linear(FabricCostModel(g, validated=True),
                                                partition(g, 4, "random", seed=5),
                                                "all-reduce") for g in (graph, fast))
    # the twin's own bandwidths, not the loads kept: every line faster, but a tree's that
    # NCCL's per-channel cap holds (collective_generations.toml, tree_channel_bandwidth),
    # which faster links do not move
    tree = np.array([c[0] == "tree" for c in slow[0]])
    assert np.all(quick[2][~tree] < slow[2][~tree]) and np.all(quick[2] <= slow[2])


def _count_plans(monkeypatch) -> list:
    """A list that grows by one on each Router.plan_nodes call from now on."""
    planned = []
    real = Router.plan_nodes

    def spy(self, *a, **k):
        planned.append(1)
        return real(self, *a, **k)

    monkeypatch.setattr(Router, "plan_nodes", spy)
    return planned


def test_a_later_op_reuses_the_loads_of_an_earlier_one(monkeypatch):
    # a ring all-gather's steps are those of the ring all-reduce costed before on the same
    # groups: with the groups kept, the all-gather plans no step of its own ring
    g = build("fat-tree:k=8")
    groups = partition(g, 8, "random", seed=3)
    model = FabricCostModel(g, validated=True)
    concurrent.concurrent_linear(model, groups, "all-reduce", "ring")
    planned = _count_plans(monkeypatch)
    kept = concurrent.concurrent_linear(model, groups, "all-gather", "ring")
    assert planned == []
    fresh = concurrent.concurrent_linear(FabricCostModel(g, validated=True), groups,
                                         "all-gather", "ring")
    assert planned and _same(kept[1], fresh[1]) and _same(kept[2], fresh[2])
    assert len(model._concurrent) == 1
    for seed in range(concurrent_groups._KEPT_GROUPS + 2):   # the kept sets stay few
        concurrent.concurrent_linear(model, partition(g, 8, "random", seed=seed), "all-gather",
                                     "ring")
    assert len(model._concurrent) == concurrent_groups._KEPT_GROUPS


def test_the_search_s_sizes_keep_their_groups_and_dropped_sets_drop_their_plans(
        monkeypatch):
    # the fabric search asks each op at 2, 4, ..., 256 GPUs in turn: with 4 kept sets the
    # 5th size dropped the 1st before the next op came back to it, so every op on a 16k
    # fabric routed every instance's direct all-to-all afresh (2.6 s at 256 GPUs)
    assert concurrent_groups._KEPT_GROUPS >= 8
    g = build("fat-tree:k=8")   # 128 GPUs
    model = FabricCostModel(g, validated=True)
    sets = [partition(g, 2 ** k, "contiguous") for k in range(1, 7)]
    for groups in sets:
        concurrent.concurrent_linear(model, groups, "all-gather", "direct")
    planned = _count_plans(monkeypatch)
    for groups in sets:   # direct all-to-all: the same pairs and bytes as all-gather's
        concurrent.concurrent_linear(model, groups, "all-to-all", "direct")
    assert planned == []
    monkeypatch.undo()
    # a dropped set's plans (named by its token, which no later costing holds) go with it
    model = FabricCostModel(g, validated=True)
    tokens = []
    for seed in range(concurrent_groups._KEPT_GROUPS + 2):
        concurrent.concurrent_linear(model, partition(g, 8, "random", seed=seed), "all-gather",
                                     "ring")
        tokens.append(next(reversed(model._concurrent.values())).token)
    named = {k[2] for k in model.router._plans if k[0] == "concurrent"}
    assert tokens[0] not in named and tokens[1] not in named and tokens[-1] in named


@pytest.mark.parametrize("budget", [1, 100_000])
def test_the_router_keeps_plans_within_its_byte_budget(monkeypatch, budget):
    # a direct all-to-all of 64 groups of 256 GPUs at once is a plan of 389 MB: kept with
    # 255 pairwise steps' it held 0.8 GB never read again; now the plans kept stay within
    # _PLAN_BYTES (the oldest dropped; one larger than that alone not kept), same numbers
    g = build("fat-tree:k=8")
    ref = FabricCostModel(g, validated=True)
    want = [concurrent.concurrent_linear(ref, partition(g, p, "contiguous"), "all-to-all")
            for p in (2, 4, 8, 16, 32, 64)]
    monkeypatch.setattr(route_plans, "_PLAN_BYTES", budget)
    route_sharing.clear_shared_routes()   # a router of its own, no plan of ref's
    model = FabricCostModel(g, validated=True)
    assert not model.router._plans
    got = [concurrent.concurrent_linear(model, partition(g, p, "contiguous"), "all-to-all")
           for p in (2, 4, 8, 16, 32, 64)]
    for (c1, a1, b1), (c2, a2, b2) in zip(want, got, strict=True):
        assert c1 == c2 and _same(a1, a2) and _same(b1, b2)
    r = model.router
    sizes = [route_plans._plan_bytes(v) for v in r._plans.values()]
    assert r._plan_bytes == sum(sizes) <= budget
    assert (len(sizes) > 0) == (budget > 1)
    assert sum(map(route_plans._plan_bytes, ref.router._plans.values())) > 100_000


def test_a_model_keeping_its_groups_is_freed_without_the_cycle_collector():
    # the kept groups hold the model's graph and tiers, not the model: no reference cycle
    # keeps a dropped model (and its caches) alive until a full collection
    import gc
    import weakref

    g = build("fat-tree:k=8")
    was = gc.isenabled()
    gc.disable()
    try:
        model = FabricCostModel(g, validated=True)
        concurrent.concurrent_linear(model, partition(g, 8, "random", seed=3), "all-reduce")
        assert model._concurrent
        ref = weakref.ref(model)
        del model
        assert ref() is None
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize("op, nbytes", [("all-reduce", 64 * 2 ** 20),
                                        ("reduce-scatter", [2.0 ** 10, 2.0 ** 30])])
def test_costly_direct_left_out_only_where_it_cannot_matter(monkeypatch, op, nbytes):
    """concurrent_cost left no algorithm out: 'collective all-reduce --group 1024
    --all-groups' on the 16k fat tree routed direct's 16.7 million transfers (13 s, 4.6 GB)
    to find it 450 times slower than halving-doubling. Now an algorithm of more than 65,536
    transfers per group (here 512 x 511 = 261,632) is left out where its lower bound is
    above the best makespan and every group's best time alone at every size asked, and
    the result is the one of costing it."""
    g = build("fat-tree:k=16")   # 1,024 GPUs: two groups of 512
    routed = []
    real = concurrent_loads.evaluate_loads

    def watch(model, op_, name, *args, **kwargs):
        routed.append(name)
        return real(model, op_, name, *args, **kwargs)

    monkeypatch.setattr(concurrent_options, "evaluate_loads", watch)
    monkeypatch.setattr(concurrent, "evaluate_loads", watch)
    fast = concurrent_cost(FabricCostModel(g, placement="random", validated=True), 512, op,
                           nbytes)
    pruned = "direct" not in routed
    routed.clear()
    monkeypatch.setattr(concurrent_options, "_costly", lambda *a: set())
    full = concurrent_cost(FabricCostModel(g, placement="random", validated=True), 512, op,
                           nbytes)
    assert "direct" in routed
    # 64 MiB all-reduce: direct sends 511 x 64 MiB per GPU, halving-doubling 2 x 64 MiB;
    # reduce-scatter at 1 KiB: direct's one step may win on latency, so it is routed
    assert pruned == (op == "all-reduce")
    assert fast.algorithm == full.algorithm and fast.protocol == full.protocol
    assert np.array_equal(fast.time, full.time) and np.array_equal(fast.alone, full.alone)
    assert fast.hotspots == full.hotspots


def test_all_groups_together_refused_over_max_transfers():
    """max_transfers bounded each group alone, so 'collective all-to-all --group 1024
    --all-groups' on the 131,072-GPU fat tree set out to route 128 x 1024 x 1023 = 134
    million transfers (some 40 GB). Now all groups together count: 2 groups of 64 on a k=8
    fat tree route 2 x 64 x 63 = 8,064 direct transfers, over a limit of 8,000 (each group's
    4,032 is under it)."""
    g = build("fat-tree:k=8")
    m = FabricCostModel(g, validated=True, max_transfers=8000)
    with pytest.raises(UserError, match=r"direct all-to-all on 2 groups of 64 GPUs at once "
                                        r"routes 8,064 point-to-point transfers, more than "
                                        r"the limit of 8,000"):
        concurrent_cost(m, 64, "all-to-all", 2 ** 20, algorithm="direct")
    ok = FabricCostModel(g, validated=True, max_transfers=8064)
    assert concurrent_cost(ok, 64, "all-to-all", 2 ** 20, algorithm="direct").time.shape == (2, 1)
