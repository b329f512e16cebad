"""Concurrent costings check their groups all at once (FabricCostModel.groups) where they
are a partition's tuples of distinct GPUs; anything else goes group by group through
FabricCostModel.group, errors included. Both ways must give the same groups and the same
errors, and concurrent costings the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.concurrent import concurrent_cost, concurrent_linear
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.placement import partition
from netmodel.study.scenario_collectives import ScenarioCollectives
from topologies import build


@pytest.fixture(scope="module")
def model():
    return FabricCostModel(build("fat-tree:k=8"), placement="contiguous")


def _one_by_one(model, groups):
    return tuple(model.group(g) for g in groups)


@pytest.mark.parametrize("size", [2, 8, 32, 128])
@pytest.mark.parametrize("policy", ["contiguous", "spread", "random"])
def test_a_partition_is_taken_as_is(model, size, policy):
    groups = tuple(partition(model.graph, size, policy, seed=3))
    at_once = model.groups(groups)
    assert at_once == _one_by_one(model, groups)
    assert at_once is groups   # checked at once: no group rebuilt


@pytest.mark.parametrize("groups", [
    [("gpu0", "gpu1"), ("gpu1", "gpu2")],            # a GPU in two groups: allowed
    [["gpu0", "gpu1"], ("gpu2", "gpu3")],            # lists
    (g for g in [("gpu0", "gpu1"), ("gpu2", "gpu3")]),   # a generator
    [(np.int64(0), "gpu1")],                         # not a node
])
def test_other_groups_go_one_by_one(model, groups):
    groups = list(groups)
    try:
        expect = _one_by_one(model, groups)
    except UserError as exc:
        with pytest.raises(UserError) as err:
            model.groups(groups)
        assert str(err.value) == str(exc)
        return
    assert model.groups(groups) == expect


@pytest.mark.parametrize("groups, message", [
    ([("gpu0", "gpu0")], "group member 'gpu0' appears more than once"),
    ([("gpu0", "gpu1"), ("gpu2", "edge0")], None),
    ([("gpu0", "nowhere")], "group member 'nowhere' is not a node of the fabric"),
    ([("gpu0", "gpu1"), ()], "a group needs at least one GPU, got none"),
    ([("gpu0", ["unhashable"])], None),
    (["gpu0"], None),
])
def test_bad_groups_get_the_errors_of_one_by_one(model, groups, message):
    with pytest.raises((UserError, TypeError)) as one:
        _one_by_one(model, groups)
    with pytest.raises(type(one.value)) as both:
        model.groups(groups)
    assert str(both.value) == str(one.value)
    if message:
        assert str(both.value) == message


def test_concurrent_costs_are_unchanged(model):
    # explicit lists (one by one) and the partition's tuples (at once): the same numbers
    groups = partition(model.graph, 8, "contiguous")
    lists = [list(g) for g in groups]
    for op in ("all-reduce", "all-to-all"):
        a = concurrent_cost(model, groups, op, [1e3, 1e6, 1e9])
        b = concurrent_cost(model, lists, op, [1e3, 1e6, 1e9])
        assert np.array_equal(a.time, b.time) and np.array_equal(a.alone, b.alone)
        assert a.algorithm == b.algorithm and a.groups == b.groups
        ca = concurrent_linear(model, groups, op)
        cb = concurrent_linear(model, lists, op)
        assert ca[0] == cb[0] and np.array_equal(ca[1], cb[1]) and np.array_equal(ca[2], cb[2])


def test_scenario_instances_are_made_once():
    coll = ScenarioCollectives("lite-flat", concurrent=True)
    first = coll.instances(8)
    assert coll.instances(8) is first
    m = coll.model(8)
    assert first == tuple(partition(m.graph, 8, m.placement, seed=m.seed))
    assert len(first) == coll.gpus // 8
