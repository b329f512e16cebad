"""A pipelined instance on an optical circuit switch with ports set aside for the KV cache
(serve's ``kv_ports``, netmodel.study.serving_transfer.pool_scenario) holds its stage
links and its stages' circuits within the ports left: lite-ocs's Lite keeps 4 - kv of its
4 ports, 28.125 GB/s each (x NCCL's Simple 0.824 = 23.175 GB/s a circuit).

By hand (netmodel.study.placed_graph.pipeline_ports): 3 ports, TP 4 x PP 2 -> a ring on 2
and 1 circuit a hop; TP 2 x PP 4 -> a pair on 1 circuit and 1 to each neighbouring stage
(the end stages' GPUs 2 of 3); TP 8 x PP 2 -> a ring on 2 and 1 a hop. 2 ports, TP 2 x PP 2
-> a pair on 1 and 1 a hop; TP 1 x PP 4 -> 1 circuit a hop, 2 a middle GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.study.placed_graph import pipeline_ports
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.serving_transfer import pool_scenario

CIRCUIT = 112.5e9 / 4 * 0.824   # one circuit's send-recv, bytes/s
N = np.array([1e9, 2e9])


@pytest.fixture(scope="module")
def pools():
    s = get_scenario("lite-ocs")
    return {kv: ScenarioCollectives(pool_scenario(s, kv)) for kv in (1, 2)}


def _circuits(model, gpu) -> int:
    return sum(d.get("links", 1) for _, _, d in model.graph.edges(gpu, data=True))


@pytest.mark.parametrize(("kv", "tp", "pp", "shared", "most", "fewest", "hop"), [
    (1, 4, 2, (2, 1), 3, 3, 1), (1, 2, 4, (1, 1), 3, 2, 1), (1, 8, 2, (2, 1), 3, 3, 1),
    (2, 2, 2, (1, 1), 2, 2, 1), (2, 1, 4, (0, 1), 2, 1, 1)])
def test_stage_links_and_rings_fit_the_ports_left_beside_the_kv(pools, kv, tp, pp, shared,
                                                                 most, fewest, hop):
    assert pipeline_ports(4 - kv, tp, pp) == shared
    placed = pools[kv].for_instance(tp * pp, tp)
    model, members = placed._placed().slice_model(tuple(range(tp * pp)))
    held = [_circuits(model, g) for g in members]
    assert (max(held), min(held)) == (most, fewest)
    assert max(held) <= 4 - kv
    t1, t2 = placed.collective_time("send-recv", N, 2)
    assert t2 - t1 == pytest.approx(1e9 / (hop * CIRCUIT), rel=1e-9)
