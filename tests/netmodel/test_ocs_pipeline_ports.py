"""A pipelined instance on an optical circuit switch holds one set of circuits within its
GPUs' ports (netmodel.study.placed_graph.pipeline_circuits).

lite-ocs's Lite has 4 optical ports, 112.5 GB/s over them, 28.125 GB/s a port; NCCL's
Simple efficiency on its scale-up links is 0.824 (collective_defaults.toml), so a large
send-recv on ``c`` circuits runs at ``c x 28.125 x 0.824 = c x 23.175`` GB/s.

Before, each pipeline stage's tensor-parallel group was costed on circuits re-set for it
alone on all 4 ports, and each stage link's pair on circuits re-set for the pair on all 4
ports too: 8 ports a GPU counted (a TP 2 x PP 4 prefill of Llama-3-70B 467.76 ms, its
send-recv at 4 x 23.175 GB/s). Now a GPU of a middle stage holds one circuit to each
neighbouring stage and its stage's ring on the 2 ports left (one copy); with 2 stages, a
ring keeps 2 ports and each hop takes the other 2, a pair of 2 GPUs 3 and 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from netmodel.study.placed_graph import pipeline_ports
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.serving_transfer import pool_scenario

PORT = 112.5e9 / 4          # one Lite port, bytes/s
SIMPLE = 0.824              # NCCL's Simple efficiency on the scale-up links
N = np.array([1e9, 2e9])


def _scenario(ports: int):
    """lite-ocs with ``ports`` optical ports a Lite, each at 28.125 GB/s."""
    s = get_scenario("lite-ocs")
    return s if ports == 4 else pool_scenario(s, 4 - ports)


@pytest.fixture(scope="module")
def ocs():
    return ScenarioCollectives(get_scenario("lite-ocs"))


def _circuits(model, gpu) -> int:
    return sum(d.get("links", 1) for _, _, d in model.graph.edges(gpu, data=True))


@pytest.mark.parametrize(("tp", "pp"), [(2, 4), (4, 4), (8, 2), (2, 2), (1, 4), (16, 4)])
def test_no_gpu_holds_more_circuits_than_ports(ocs, tp, pp):
    placed = ocs.for_instance(tp * pp, tp)
    model, members = placed._placed().slice_model(tuple(range(tp * pp)))
    # the model holds the whole instance's circuits: none past a GPU's 4 ports
    held = [_circuits(model, g) for g in members]
    assert max(held) == 4 and sum(held) == 2 * model.graph.graph["circuits"]
    # a GPU of a middle stage (or of either of 2) uses every port: its stage's circuits
    # and its links' (pipeline_ports)
    own, per = pipeline_ports(4, tp, pp)
    middle = members[tp] if pp > 2 else members[0]
    assert _circuits(model, middle) == own + per * (2 if pp > 2 else 1) == 4


@pytest.mark.parametrize(("tp", "pp", "circuits"), [(2, 4, 1), (8, 4, 1), (8, 2, 2),
                                                    (2, 2, 1), (1, 4, 2), (1, 2, 4)])
def test_a_stage_link_runs_on_its_own_circuits(ocs, tp, pp, circuits):
    """A further GB between stages: 1 GB over the hop's circuits at 23.175 GB/s each
    (was 4 circuits, 92.7 GB/s, at every shape)."""
    t1, t2 = ocs.for_instance(tp * pp, tp).collective_time("send-recv", N, 2)
    assert t2 - t1 == pytest.approx(1e9 / (circuits * PORT * SIMPLE), rel=1e-9)


@pytest.mark.parametrize(("tp", "pp", "ports"), [(2, 4, 2), (2, 2, 3), (8, 4, 2),
                                                 (8, 2, 2)])
def test_a_stage_group_runs_on_the_ports_its_links_leave(ocs, tp, pp, ports):
    """The stage's all-reduce costs what a lone instance of ``tp`` Lites of ``ports``
    ports costs: TP 2 x PP 4 on a pair of 2 circuits (56.25 GB/s, was 112.5)."""
    alone = ScenarioCollectives(_scenario(ports))
    assert alone.layout(tp) == "ring"
    got = ocs.for_instance(tp * pp, tp).collective_time("all-reduce", N, tp)
    np.testing.assert_allclose(got, alone.collective_time("all-reduce", N, tp), rtol=1e-9)


def test_smaller_groups_run_on_their_stages_or_instances_circuits(ocs):
    """An attention group (and the stage's all-to-all) runs on the circuits its stage
    holds, not on circuits re-set for it; with one stage on the instance's own."""
    placed = ocs.for_instance(16, 4)
    assert placed.slices(2)[0][0] is placed.slices(4)[0][0]
    # a stage link's pair: its one circuit of the instance's set (a middle stage's
    # other circuit leads to the next stage)
    model, pair = placed.pairs()[0]
    assert [d.get("links", 1) for _, _, d in model.graph.edges(data=True)] == [1]
    one = ocs.for_instance(16, 16)
    assert one.slices(4)[0][0] is ocs.model(16)


def test_the_ports_held_by_shape():
    assert [pipeline_ports(p, 4, 4) for p in (1, 2, 3, 4, 6, 8)] == \
        [None, None, None, (2, 1), (4, 1), (6, 1)]
    assert [pipeline_ports(p, 2, 2) for p in (1, 2, 3, 4)] == [None, (1, 1), (2, 1), (3, 1)]


_CASES = [("Llama-3-70B", "prefill", 2, 4, 1, 1, 1), ("Llama-3-70B", "prefill", 4, 2, 1, 1, 1),
          ("Llama-3-70B", "prefill", 8, 2, 1, 1, 1), ("Llama-3-70B", "decode", 4, 4, 1, 1, 16),
          ("Llama-3-70B", "decode", 8, 1, 1, 1, 16), ("DeepSeek-V3", "prefill", 8, 8, 1, 1, 1),
          ("DeepSeek-V3", "decode", 16, 4, 16, 4, 64),
          ("DeepSeek-V3", "decode", 32, 2, 32, 8, 64)]


def _step(coll, case) -> float:
    model, phase, tp, pp, ep, dp, batch = case
    try:
        return evaluate(model, "Lite", tp, batch, phase, pp=pp, ep=ep, attention_dp=dp,
                        comm=coll).latency
    except UserError:   # circuits that cannot be set: no step at all
        return np.inf


def test_fewer_ports_are_never_faster():
    """lite-ocs at 2, 3 and 4 ports a Lite (each 28.125 GB/s): no step is faster on fewer
    ports (before, TP 2 x PP 4's send-recv took 2, 3, 4 circuits by the ports while the
    stages' rings took them too)."""
    steps = {p: [_step(ScenarioCollectives(_scenario(p)), c) for c in _CASES]
             for p in (2, 3, 4)}
    for fewer, more in ((2, 3), (3, 4)):
        for case, a, b in zip(_CASES, steps[fewer], steps[more], strict=True):
            assert a >= b, (case, fewer, a, b)
    assert all(np.isfinite(steps[4]))
    # hand: TP 2 x PP 4 of 4 ports is a pair on 2 circuits; of 3, a pair on 1: slower
    assert steps[3][0] > steps[4][0]
    # a stage with stages before and after holds no circuit of its own on 2 ports: the
    # instance's ring in stage order carries everything, no faster than 3 ports' split
    assert np.isfinite(steps[2]).all()
