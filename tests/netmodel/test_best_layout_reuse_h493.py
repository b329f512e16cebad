"""circuits = "best": ScenarioCollectives builds each layout's model once and shares it
with its with_circuits() costs, giving what layout_model builds afresh (h493)."""

from dataclasses import replace

import numpy as np
import pytest

from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_fabric import (
    BEST_SIZES,
    build_fabric,
    layout_model,
    scenario_calibration,
)

SIZES = np.array(BEST_SIZES)


@pytest.fixture(scope="module")
def best():
    # whatever other tests left in the process-wide cache: the kept model is the layout's
    # own however its entries were dropped (test_best_layout_eviction)
    s = replace(get_scenario("lite-ocs"), circuits="best")
    return s, ScenarioCollectives(s)


@pytest.mark.parametrize("size", [4, 9, 16])
def test_shared_model_is_the_fresh_one(best, size):
    s, coll = best
    layout, fresh = layout_model(s, build_fabric(s), size, scenario_calibration(s))
    assert coll.layout(size) == layout
    model = coll.model(size)
    # the kept model is the layout's own (built once, shared), not a second realization
    assert model is coll.with_circuits(layout).model(size)
    assert model.group(size) == fresh.group(size)
    for op in ("all-reduce", "all-gather"):
        got = model.collective_time(op, SIZES, size)
        want = fresh.collective_time(op, SIZES, size)
        assert np.array_equal(got, want), op


def test_the_size_keys_the_choice(best):
    # 9 Lites: a 3x3 torus the 4 ports cannot set -> ring; 16: a 4x4 torus is set and
    # chosen; a cache keyed coarser than the size would give one layout for both
    s, coll = best
    assert (coll.layout(9), coll.layout(16)) == ("ring", "torus")
    assert coll.model(9) is not coll.model(16)
    assert len(coll.group(9)) == 9 and len(coll.group(16)) == 16
