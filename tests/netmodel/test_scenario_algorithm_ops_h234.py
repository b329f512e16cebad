"""A scenario's ``[collective] algorithm`` governs the collectives, as NCCL_ALGO does: an
op the algorithm lacks is refused naming the scenario and what to give (h234), except
all-to-all and send-recv, groups of sends and receives that NCCL_ALGO leaves alone, which
choose as ``auto`` (``scope="collectives"``). Before, 'algorithm = "ring"' failed every
mixture of experts (all-to-all) and every pipeline (send-recv); 'algorithm =
"hierarchical"' (all-reduce only) failed every compare on the first all-gather with a line
naming neither the scenario nor the fix."""

from __future__ import annotations

import pytest

import netmodel
from compute.errors import UserError
from netmodel.collectives.algorithms import SEND_RECV_OPS
from netmodel.collectives.model import FabricCostModel
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_files import load_scenario_text
from topologies import build


def _with(algorithm: str):
    s = get_scenario("lite-flat")
    return load_scenario_text(
        s.to_toml().replace('algorithm = "auto"', f'algorithm = "{algorithm}"'))


def test_a_missing_collective_names_the_scenario_and_the_fix():
    s = _with("hierarchical")
    assert s.algorithm == "hierarchical"
    with pytest.raises(UserError, match=(
            r"^scenario 'lite-flat@Lite' runs every collective with algorithm 'hierarchical', "
            r"which has no all-gather \(algorithms for it: .*\); to cost it, give the "
            r"scenario's \[collective\] algorithm = \"auto\"")):
        netmodel.compare(["Llama-3-70B"], [s], ["decode"])


@pytest.mark.parametrize("model, parallelism", [("Mixtral-8x7B", "auto"),
                                                ("Llama-3-70B", "all")])
def test_sends_and_receives_choose_as_auto_under_a_named_algorithm(model, parallelism):
    """NCCL_ALGO=Ring leaves ncclSend/ncclRecv alone: a ring scenario's mixture of experts
    and pipelines run, and their all-to-all and send-recv cost what auto's do, to the bit."""
    r = netmodel.compare([model], [_with("ring")], ["decode"], parallelism=parallelism)
    assert r.rows[0].feasible
    ring, auto = ScenarioCollectives(_with("ring")), ScenarioCollectives(get_scenario("lite-flat"))
    for op in SEND_RECV_OPS:
        assert ring.collective_time(op, 1 << 20, 16) == auto.collective_time(op, 1 << 20, 16)
    # the collectives stay the scenario's ring
    assert ring.collective_time("all-reduce", 1 << 20, 16) != \
        auto.collective_time("all-reduce", 1 << 20, 16)


def test_a_model_named_for_every_op_still_refuses():
    g = build("leaf-spine:leaves=2,radix=8")
    m = FabricCostModel(g, algorithm="ring")
    with pytest.raises(UserError, match="algorithm 'ring' does not implement 'all-to-all'"):
        m.collective_time("all-to-all", 1 << 20, 4)
    c = FabricCostModel(g, algorithm="ring", scope="collectives")
    assert c.collective_time("all-to-all", 1 << 20, 4) == \
        FabricCostModel(g).collective_time("all-to-all", 1 << 20, 4)
    with pytest.raises(UserError, match="scope must be one of"):
        FabricCostModel(g, scope="all")


def test_an_algorithm_with_every_op_a_dense_search_needs_still_runs():
    r = netmodel.compare(["Llama-3-70B"], [_with("ring")], ["decode"])
    assert r.rows[0].feasible
