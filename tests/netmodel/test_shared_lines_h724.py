"""The candidate lines both the study's MoE part and its fabric comparison ask of each shared
instance are compiled once, before the MoE part is forked (h724).

``netmodel study lite-gpu`` forks the MoE part at the start; it compiled the all-reduce and
all-gather lines of the instances both parts place (routes, each algorithm's steps, their
lines: about 0.4 s of CPU) while the fabric comparison compiled the same ones in the main
process. :func:`~netmodel.study.lite_gpu_warm_up.place_shared_instances` now compiles the lines of
:data:`~netmodel.study.lite_gpu_warm_up.SHARED_OPS` on each instance it places: checked here
against lines compiled afresh, bit for bit, and with an op a scenario cannot cost.
"""

from dataclasses import replace

import numpy as np
import pytest

from compute.errors import UserError
from compute.models import get_model
from netmodel.study import scenario_collectives
from netmodel.study.defaults import DEFAULT_MODELS, MOE_MODEL
from netmodel.study.lite_gpu_warm_up import (
    SHARED_OPS,
    place_shared_instances,
    shared_instance_sizes,
)
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

DENSE = [get_model(m) for m in DEFAULT_MODELS]
MOE = get_model(MOE_MODEL)


def _fresh_lines(scenario, op, size):
    """``(a, b)`` of ``op`` on ``size`` GPUs with no cache of the process's kept."""
    scenario_collectives._SHARED.clear()
    return ScenarioCollectives(scenario).linear(op, size)


@pytest.mark.parametrize("name", ["h100-dgx", "lite-direct", "lite-ocs"])
def test_warmed_lines_are_kept_and_equal_fresh_ones(name):
    s = get_scenario(name)
    sizes = shared_instance_sizes(s, MOE, DENSE)
    assert sizes   # 2, 4, 8 H100s; 8, 16, 32 Lites
    scenario_collectives._SHARED.clear()
    place_shared_instances([s], MOE, DENSE)
    warm = ScenarioCollectives(s)
    kept = {k: warm._linear[k] for k in [(op, k) for op in SHARED_OPS for k in sizes]}
    # sizes no part shares are left to the parts
    assert ("all-reduce", 1) not in warm._linear and ("all-to-all", sizes[0]) not in warm._linear
    for (op, k), (a, b) in kept.items():
        a0, b0 = _fresh_lines(s, op, k)
        assert a.shape == a0.shape and len(a) >= 1
        assert np.array_equal(a, a0) and np.array_equal(b, b0), (op, k)


def test_an_op_the_scenario_cannot_cost_is_left_to_the_parts():
    # every collective with NCCL's tree, which has no all-gather: the all-reduce lines are
    # compiled, the all-gather is refused by the parts in their own words
    s = replace(get_scenario("lite-flat"), algorithm="tree")
    scenario_collectives._SHARED.clear()
    assert place_shared_instances([s], MOE, DENSE) is None
    warm = ScenarioCollectives(s)
    for k in shared_instance_sizes(s, MOE, DENSE):
        assert ("all-reduce", k) in warm._linear
        assert ("all-gather", k) not in warm._linear
    with pytest.raises(UserError, match="tree"):
        warm.linear("all-gather", 8)
