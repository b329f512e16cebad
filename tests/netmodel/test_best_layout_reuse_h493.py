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


def test_the_kept_model_is_the_layouts_own_after_its_cache_is_dropped():
    # the process-wide caches drop the oldest past _SHARED_MAX: a torus scenario's, then
    # a best one's that chose the torus at 16; the fillers drop the torus's alone, so a
    # new best one finds its model of 16 kept and its torus layout's cache new. Before,
    # with_circuits("torus") realized and compiled the torus again (an equal model, not
    # the kept one: a CI run's order of tests met it)
    from netmodel.study import scenario_collectives as sc

    base = get_scenario("lite-ocs")
    saved = dict(sc._SHARED)
    sc._SHARED.clear()
    try:
        torus = ScenarioCollectives(replace(base, circuits="torus"))
        ScenarioCollectives(replace(base, circuits="best")).model(16)
        keys = [k for k, d in sc._SHARED.items() if d is torus._models]
        for i in range(sc._SHARED_MAX - len(sc._SHARED) + list(sc._SHARED).index(keys[0])
                       + 1):
            sc._shared(("filler", i), dict)
        assert not any(d is torus._models for d in sc._SHARED.values())
        coll = ScenarioCollectives(replace(base, circuits="best"))
        assert 16 in coll._models and coll.layout(16) == "torus"
        assert coll.model(16) is coll.with_circuits("torus").model(16)
    finally:
        sc._SHARED.clear()
        sc._SHARED.update(saved)
