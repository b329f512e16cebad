"""The instances both the study's MoE part and its fabric comparison place are placed once,
before the MoE part is forked (h718).

``netmodel study lite-gpu`` runs the MoE part in a forked process from the start; it placed
the instances of each scenario with its own GPU (fabric, placement, an OCS's circuits of
each size, ``circuits = "best"`` choosing among layouts by costing both) again, while the
fabric comparison placed the same ones in the main process: about 0.4 s of CPU twice.
:func:`~netmodel.study.lite_gpu_warm_up.place_shared_instances` places them first, of the sizes
:func:`~netmodel.study.lite_gpu_warm_up.shared_instance_sizes` guesses both place (TP degrees of
both models at which their weights fit). A guess that changes nothing: checked here
against the weights, the caches it fills and the result with and without it.
"""

import numpy as np
import pytest

from compute.errors import UserError
from compute.models import get_model
from netmodel.study.defaults import DEFAULT_MODELS, MOE_MODEL
from netmodel.study.lite_gpu_warm_up import place_shared_instances, shared_instance_sizes
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

DENSE = [get_model(m) for m in DEFAULT_MODELS]
MOE = get_model(MOE_MODEL)


@pytest.mark.parametrize("name", ["h100-dgx", "lite-flat", "lite-ocs"])
def test_sizes_hold_the_weights_of_both(name):
    s = get_scenario(name)
    gpu = s.gpu_spec
    sizes = shared_instance_sizes(s, MOE, DENSE)
    least = max(MOE.weight_storage_bytes, min(m.weight_storage_bytes for m in DENSE))
    # the heavier of Mixtral's 93.4 GB and the lightest dense model's (Llama-3-70B's
    # 141 GB): 2 H100s (85.5 GB each) or 7 Lites (21.4 GB) hold it, 1 H100 or 6 Lites not
    assert least == DENSE[0].weight_storage_bytes
    for k in range(1, gpu.max_instance + 1):
        tp_of_both = MOE.heads % k == 0 and any(m.heads % k == 0 for m in DENSE)
        holds = k >= 2 and k * gpu.hbm_capacity >= least
        assert (k in sizes) == (tp_of_both and holds), k
    assert sizes == ([2, 4, 8] if gpu.name == "H100-SXM" else [8, 16, 32])


def test_no_dense_model_leaves_the_moe_model_alone():
    assert shared_instance_sizes(get_scenario("lite-flat"), MOE, []) == []


def test_placed_instances_are_the_scenarios_own():
    s = get_scenario("lite-ocs")   # circuits = "best": each size's layout chosen by cost
    place_shared_instances([s], MOE, DENSE)
    fresh = ScenarioCollectives(s)
    for k in (8, 16, 32):
        key = k if s.is_ocs else 0
        assert key in fresh._models            # placed: kept by the process-wide cache
        assert fresh.group(k) == fresh.model(k).group(k)
        assert fresh.layout(k) in ("ring", "torus")
    # and the charges on them are those of the scenario's own costing
    n = np.geomspace(1e3, 1e9, 7)
    t = fresh.collective_time("all-reduce", n, 16)
    a, b = fresh.linear("all-reduce", 16)
    assert np.array_equal(t, (a[:, None] + b[:, None] * n).min(0))


def test_a_scenario_that_cannot_be_placed_is_left_to_the_parts():
    # lite-ocs with one optical port a GPU wires rings of 2 at most: larger instances
    # are refused, by the parts, in their own words; the warm-up raises nothing
    from dataclasses import replace

    s = get_scenario("lite-ocs")
    one_port = replace(s, fabric={**s.fabric, "ports": 1})
    assert place_shared_instances([one_port, get_scenario("h100-dgx")], MOE, DENSE) is None
    with pytest.raises(UserError, match="needs 2 optical ports per GPU"):
        ScenarioCollectives(one_port).group(8)


def test_the_comparison_is_the_same_with_and_without_them():
    # the MoE model on lite-ocs (each size's circuits chosen by cost), its shared costs
    # dropped before each run: placed first or not, the same rows to the last bit
    from netmodel.study import scenario_collectives
    from netmodel.study.compare import run_compare

    runs = []
    for warm in (False, True):
        scenario_collectives._SHARED.clear()
        if warm:
            place_shared_instances([get_scenario("lite-ocs")], MOE, DENSE)
        runs.append(run_compare([MOE], ["lite-ocs"], ["decode"]).to_json())
    assert runs[0] == runs[1] and '"feasible": true' in runs[0]


def test_warm_before_fork_makes_what_both_processes_use():
    # (h729: the warm-up moved to netmodel.study.lite_gpu_warm_up) the GPUs' prices, the
    # fabric comparison's modules and the MoE part's instances (on `own` alone), nothing else
    import sys

    from netmodel.study import cost, scenario_collectives
    from netmodel.study.lite_gpu_warm_up import FABRIC_MODULES, warm_before_fork

    scenario_collectives._SHARED.clear()
    cost._prices_cached.cache_clear()
    own, other = get_scenario("lite-ocs"), get_scenario("h100-dgx")
    warm_before_fork([other, own], [own], MOE, DENSE)
    assert all(name in sys.modules for name in FABRIC_MODULES)
    assert cost._prices_cached.cache_info().currsize == 2   # H100-SXM and Lite, priced
    assert all(k in ScenarioCollectives(own)._models for k in (8, 16, 32))
    assert not ScenarioCollectives(other)._models            # not the MoE part's: left
