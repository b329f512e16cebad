"""A healthy instance re-costed on its healthy fabric is the healthy instance (h339).

The blast radius and availability re-cost every instance a failure touches
(:class:`netmodel.study.instance_cost.InstanceCosting`); on the fabric no failure touched,
that costing must give the healthy search's step to the bit (an invariant: one collective
model, one configuration, one batch). It did not where the healthy costing charges a
collective otherwise than the fastest line:

- an MoE prefill's dispatch and combine cross the network once a server
  (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.moe_all_to_all_time`), which
  the re-costing did not offer (every copy's all-to-all: DeepSeek-V3 prefill on h100-dgx,
  0.7605 s healthy, 1.5948 s re-costed on the same fabric);
- a scenario's tuner plugin chooses per communicator (c2618d1/266a7d0), which the
  re-costing's cost models did not hold (Llama-3.1-405B decode at TP 32 on h100-dgx@Lite
  with aws-ofi-nccl:p5: 49.33 ms healthy, 40.88 ms re-costed: auto's fastest line).
"""

from dataclasses import replace

import numpy as np
import pytest

from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives


def _same(c):
    r = c.instance_result(c.graph, c.instances[0])
    assert r is not None and r.feasible
    assert r.latency == c.best.latency
    for a, b in zip(c.best.stages, r.stages, strict=True):
        assert (a.name, a.network_time) == (b.name, b.network_time)
    return r


@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_moe_instance_recost_is_healthy(phase):
    # one pipeline stage ("auto": EP and DP attention for an MoE model): with pipeline
    # stages the prefill instance is TP 8 x PP 2 x EP 8 x DP-attention 8, each stage's
    # all-to-alls inside one server, and the once-a-server way is not taken
    c = build_cluster("h100-dgx", "DeepSeek-V3", phase=phase, parallelism="auto")
    assert c.parallelism.ep == 16 == c.best.gpus   # 2 servers: the once-a-server way applies
    r = _same(c)
    if phase == "prefill":   # the dispatch is cheaper than every copy's all-to-all
        stage = next(s for s in r.stages if s.name == "moe_dispatch")
        every = float(ScenarioCollectives("h100-dgx").collective_time(
            "all-to-all", stage.collective_bytes, 16))
        assert stage.network_time < every / 2


def test_tuned_instance_recost_is_healthy():
    s = replace(get_scenario("h100-dgx@Lite"), name="tuned", tuner="aws-ofi-nccl:p5")
    c = build_cluster(s, "Llama-3.1-405B", phase="decode", parallelism="tp")
    # 32 ranks on 4 servers of 8: a communicator the plugin chooses for (3 nodes or more,
    # 8 ranks a node), where its choice is not auto's fastest line
    assert (c.parallelism.tp, c.best.gpus) == (32, 32)
    step = next(st for st in c.best.stages if st.collective == "all-reduce"
                and st.collective_bytes > 0)
    n = np.array([step.collective_bytes])
    untuned = ScenarioCollectives(replace(s, tuner="none")).collective_time("all-reduce", n, 32)
    tuned = ScenarioCollectives(s).collective_time("all-reduce", n, 32)
    assert tuned[0] > untuned[0]
    _same(c)
