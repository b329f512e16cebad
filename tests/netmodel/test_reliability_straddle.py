"""Instances placed across two leaves are costed healthy as placed, as a failure's are.

On 4 leaves of 6 H100 (radix 12, non-blocking, 6 spines) the search costs its first
TP-4 group, four GPUs of leaf0, and finds batch 255 under the 50 ms TBT. Contiguous
placement cuts the 24 GPUs into gpu0-3 | gpu4-7 | ... : gpu4-7 and gpu16-19 sit two on
one leaf and two on the next, and their all-reduces cross a spine. Costed where they
sit, healthy, they miss the SLO at batch 255 and serve the largest batch that meets it.
The cluster counted them at the search's tokens/s, and a failure that re-costs them
(any spine, which is on their footprint) charged it the gap to that figure: 0.372% of
the cell's tokens/s for a spine failure that costs them nothing. The expected figures
here come from an independent costing: compute's search over the batch grid with the
fabric cost model's own result (``FabricCostModel.cost``) for the explicit group.
"""

import numpy as np
import pytest

from compute.hardware import get_gpu
from compute.models import get_model
from compute.roofline import make_workload
from compute.search import search
from netmodel.collectives.model import FabricCostModel
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_fabric import build_fabric, scenario_calibration
from netmodel.study.scenario_files import load_scenario_text
from tests.netmodel.scenario_helpers import scenario_toml
from topologies.degrade import degrade

LS6 = {"builder": "leaf-spine", "leaves": 4, "radix": 12, "gpu": "$gpu"}
TEXT = scenario_toml("ls6", "H100-SXM", LS6, links="as-built",
                     description="4 leaves of 6 H100, TP-4 instances straddle two leaves")
SCENARIO = load_scenario_text(TEXT)
STRADDLE = ("gpu4", "gpu5", "gpu6", "gpu7")


class GroupComm:
    """compute's collective-cost protocol for one explicit group, op by op and size by
    size from the fabric cost model's full result (not the reliability model's path)."""

    def __init__(self, graph, group):
        self.model = FabricCostModel(graph, placement="contiguous", algorithm="auto",
                                     calibration=scenario_calibration(SCENARIO))
        self.group = group

    def collective_time(self, op, nbytes, group_size):
        n = np.atleast_1d(np.asarray(nbytes, dtype=float))
        if group_size <= 1:
            return np.zeros_like(n)
        assert group_size == len(self.group)
        out = [self.model.cost(op, float(x), self.group).time if x > 0 else 0.0 for x in n]
        return np.asarray(out).reshape(np.shape(nbytes))


def best_for(graph, group, max_batch):
    r = search(get_model("Llama-3-70B"), get_gpu("H100-SXM"), make_workload("decode", None, None), tp=(4,),
               comm=GroupComm(graph, group), max_batch=max_batch)
    return r.best


@pytest.fixture(scope="module")
def cluster():
    return build_cluster(SCENARIO, "Llama-3-70B", "decode")


def test_straddling_instances_cost_as_placed(cluster):
    c = cluster
    assert (c.tp, c.batch) == (4, 255)
    assert c.instances[1] == STRADDLE and c.instances[4] == ("gpu16", "gpu17", "gpu18", "gpu19")
    graph = build_fabric(SCENARIO)
    own = best_for(graph, STRADDLE, c.batch)
    # the finding: costed where it sits, the straddling instance misses the SLO at the
    # searched batch, so it serves a smaller one
    assert own.batch < c.batch
    assert own.batch == 252
    # the cell: four instances at the search's tokens/s, two at their own (was 6 x best)
    assert c.cluster_tokens_per_s == pytest.approx(
        4 * c.best.tokens_per_s + 2 * own.tokens_per_s, rel=1e-12)
    assert c.cluster_tokens_per_s < 6 * c.best.tokens_per_s * (1 - 0.003)
    for i, r in enumerate(c.healthy):
        want = own if i in (1, 4) else c.best
        assert (r.batch, r.tokens_per_s) == pytest.approx((want.batch, want.tokens_per_s),
                                                           rel=1e-9)


def test_a_failure_is_charged_against_the_instance_as_placed(cluster):
    c = cluster
    graph = build_fabric(SCENARIO)
    spine = next(x for x in c.effects(["spine"]))
    comp = spine.component
    # without one spine the straddling group still serves its own healthy batch and
    # tokens/s (5 of 6 spines carry its two cross-leaf streams): the failure costs nothing
    degraded = degrade(graph, [comp])
    own = best_for(graph, STRADDLE, c.batch)
    hit = best_for(degraded, STRADDLE, c.batch)
    assert (hit.batch, hit.tokens_per_s) == pytest.approx((own.batch, own.tokens_per_s),
                                                           rel=1e-9)
    assert (spine.instances_down, spine.slow) == (0, 0.0)   # was slow 0.0223 (2 x 1.1%)
    row = next(r for r in blast_radius(None, None, cluster=c).rows if r.cls == "spine")
    assert row.tokens_lost_pct_mean == 0.0   # was 0.372


def test_a_spare_keeps_a_straddling_instance_serving_its_own_batch():
    """2:1 leaves (3 GPU ports, 3 uplinks, 3 free ports each: pod spare sites on every
    leaf). gpu4 fails: a spare on its own leaf0 leaves the instance as it was placed, two
    on leaf0 and two on leaf1, so it serves its own healthy batch again and loses nothing.
    The recovery asked it to meet the SLO at the searched batch, which no instance across
    two leaves does, so it waited for the repair ('no reachable spare meets the SLO')."""
    from netmodel.study.reliability_recovery import recovery

    s = load_scenario_text(scenario_toml(
        "ls6-2to1", "H100-SXM", {**LS6, "oversubscription": 2}, links="as-built",
        description="4 leaves of 6 H100, TP-4 instances straddle two leaves"))
    c = build_cluster(s, "Llama-3-70B", "decode")
    assert c.instances[1] == STRADDLE
    e = next(x for x in c.effects(["gpu-die"]) if x.down == (1,))
    r = recovery(c, e, "pod")
    assert (r.path, r.units, r.restored) == ("substitute 1 spare", 1, 0.0)
    assert c.healthy[1].batch < c.batch
