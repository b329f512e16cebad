"""The fabric-aware search costs an instance's smaller groups as placed (h344).

compute's grid asks one collective time per (op, group size); a pipeline stage's TP group
was costed on the first GPUs of the instance only
(:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.group`), while the stages placed
further along may straddle servers. BLOOM-176B decode on lite-direct (servers of 32 Lite
GPUs), TP 28 x PP 4 on GPUs 0-111: stage 1 (GPUs 0-27) sits in server 0, stages 2-4 (28-55,
56-83, 84-111) straddle servers 0-1, 1-2 and 2-3, and their all-reduce of 2,064,384 bytes
(a decode step's hidden states) takes 0.285 ms against stage 1's 0.078 ms. The search
charged 0.078 ms and chose batch 287 (6,197 tokens/s) where the instance as placed serves
batch 128 (2,573 tokens/s). compute's pipeline timing takes one network time per (op,
group size) for every stage (:func:`compute.roofline.evaluate_grid`), so the search now
charges every stage the slowest stage's group as placed
(:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance`), through the
costing the blast radius re-costs an instance with
(:func:`~netmodel.study.placed_cost.placed_comm`).
"""

import numpy as np
import pytest

from compute.search import search
from netmodel.study.fabric_search import FabricSearch
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_collectives import ScenarioCollectives

NBYTES = np.array([2064384.0])   # BLOOM-176B decode all-reduce at the example's batch


@pytest.fixture(scope="module")
def coll():
    return ScenarioCollectives("lite-direct")


def test_later_stages_straddle_servers(coll):
    members = coll.group(112)
    servers = [sorted({coll.graph.nodes[g]["server"] for g in members[28 * i:28 * i + 28]})
               for i in range(4)]
    assert servers == [[0], [0, 1], [1, 2], [2, 3]]          # 32 Lite GPUs a server
    first = float(coll.collective_time("all-reduce", NBYTES, 28)[0])
    placed = float(coll.for_instance(112, 28).collective_time("all-reduce", NBYTES, 28)[0])
    # each stage's group costed on its own members by the scenario's cost model
    m = coll.model(112)
    stages = [float(m.collective_time("all-reduce", NBYTES, list(members[28 * i:28 * i + 28]))[0])
              for i in range(4)]
    assert first == stages[0]                                # the first GPUs' group
    assert placed == max(stages)                             # the slowest stage's
    # straddling stages: 0.285 ms vs 0.078 ms when written; 0.204 ms vs 0.0776 ms since the
    # Lite pairs' collectives may split over cable and switch (collectives.route_policies)
    assert placed > 2.5 * first
    one = coll.for_instance(28, 28)    # a whole instance's group: as before
    assert float(one.collective_time("all-reduce", NBYTES, 28)[0]) == first


def test_example_search_is_the_placed_cost(coll):
    r = search("BLOOM-176B", coll.scenario.gpu_spec, "decode", comm=coll, tp=28, pp=4)
    assert (r.best.tp, r.best.pp) == (28, 4)
    fs = FabricSearch(scenario=coll.scenario, search=r, group=coll.group(112),
                      reconfiguration_s=0.0)
    c = build_cluster("lite-direct", "BLOOM-176B", phase="decode", search=fs)
    (inst,) = c.instances
    placed = c.rebalanced(c.recost_graph((), inst), inst)
    assert placed.batch == r.best.batch                       # 128 when written
    assert placed.latency == r.best.latency                   # to the bit
    assert r.best.tokens_per_s == placed.tokens_per_s         # 2,573.0 when written
    # costed on the first GPUs only (a comm without for_instance), the search promised
    # more than the placed instance serves (287, 6,197 tokens/s when written)
    first_only = search("BLOOM-176B", coll.scenario.gpu_spec, "decode",
                        comm=_FirstGpusOnly(coll), tp=28, pp=4)
    assert first_only.best.batch > placed.batch
    assert first_only.best.tokens_per_s > placed.tokens_per_s


class _FirstGpusOnly:
    """The scenario's collectives without the per-instance hook: every group of a size
    costed on the instance's first GPUs (the search before it costed groups as placed)."""

    def __init__(self, coll):
        self.collective_time = coll.collective_time


def test_cluster_search_is_the_placed_cost():
    c = build_cluster("lite-direct", "BLOOM-176B", phase="decode", parallelism="all")
    par = c.parallelism                  # TP 16 x PP 4, 2 instances when written
    assert par.pp > 1 and len(c.instances) >= 2   # the case: pipelines, several instances
    for inst in c.instances:
        placed = c.rebalanced(c.recost_graph((), inst), inst)
        assert (placed.batch, placed.latency) == (c.best.batch, c.best.latency)
    assert c.healthy_tokens_per_s == 2 * c.best.tokens_per_s
