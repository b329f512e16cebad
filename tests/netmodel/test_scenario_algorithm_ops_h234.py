"""A scenario whose [collective] algorithm lacks an op a search charges says so, naming the
scenario and what to give (h234): 'algorithm = "hierarchical"' (all-reduce only) failed
every compare on the first all-gather, and 'algorithm = "ring"' every mixture of experts
(all-to-all) and every pipeline (send-recv), with "algorithm 'hierarchical' does not
implement 'all-gather'; algorithms for 'all-gather': ...", which names neither the scenario
nor the fix."""

from __future__ import annotations

import pytest

import netmodel
from compute.errors import UserError
from netmodel.study.scenarios import get_scenario, load_scenario_text


def _with(algorithm: str):
    s = get_scenario("lite-flat")
    return load_scenario_text(
        s.to_toml().replace('algorithm = "auto"', f'algorithm = "{algorithm}"'))


@pytest.mark.parametrize("algorithm, model, parallelism, op", [
    ("hierarchical", "Llama-3-70B", "auto", "all-gather"),
    ("ring", "Mixtral-8x7B", "auto", "all-to-all"),
    ("ring", "Llama-3-70B", "all", "send-recv"),
])
def test_a_missing_op_names_the_scenario_and_the_fix(algorithm, model, parallelism, op):
    s = _with(algorithm)
    assert s.algorithm == algorithm
    with pytest.raises(UserError, match=(
            rf"^scenario 'lite-flat@Lite' runs every collective with algorithm '{algorithm}', "
            rf"which has no {op} \(algorithms for it: .*\); to cost it, give the scenario's "
            rf"\[collective\] algorithm = \"auto\"")):
        netmodel.compare([model], [s], ["decode"], parallelism=parallelism)


def test_an_algorithm_with_every_op_a_dense_search_needs_still_runs():
    r = netmodel.compare(["Llama-3-70B"], [_with("ring")], ["decode"])
    assert r.rows[0].feasible
