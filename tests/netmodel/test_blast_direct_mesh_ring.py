"""A failed cable of lite-direct's mesh: the communicator made again lays its rings anew.

lite-direct (Llama-3-70B decode, TP 16 x batch 165, 8 instances): each group of 4 Lites is
meshed by 6 CPO cables beside its share of the NVSwitch. A CPO engine failure takes one
mesh cable (gpu0-gpu1). The instance's all-reduce is hierarchical, its in-domain ring
around each group of 4; in the members' order (0-1-2-3) the ring's 0 -> 1 leg went through
the switch, 88.01 us against 86.39 healthy. NCCL restarted after the failure searches its
rings over the links left (as ``netmodel collective --fail``, ``degraded_cost``, takes the
faster of the group's order and a greedy one): 0-2-1-3 keeps to the cables left, so the
all-reduce is the healthy 86.39 us. What the failure still costs is the lm_head's direct
all-gather (42.3 MB: gpu0's shard to gpu1 now over the switch), 354.4 -> 382.9 us, once a
step. By hand: the direct all-gather sends each GPU's shard of ``n / 16`` bytes to its 15
peers, 3 over the group's cables (37.5 GB/s each) and 12 through its NVSwitch port (112.5
GB/s), scale-up efficiency 0.824: the port's ``12 x`` with ``x = (n/16) / (0.824 x 112.5
GB/s)`` = 28.54 us (342.4 us; a cable's shard, 3x slower a byte, takes 85.6 us) plus the
latency, 11.97 us; with gpu0-gpu1 cut, 13 shards through the port, ``dAG = x`` (the
latency the same). loss = dAG / (step + dAG) of one instance, an eighth of the cell:
0.0748% of the instance, 0.00935% of the cell (it read 0.756% and 0.0945%).
"""

import pytest

from netmodel.collectives.degraded import degraded_cost
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_fabric import scenario_calibration
from tests.netmodel.reliability_g2_helpers import shipped_cluster


@pytest.fixture(scope="module")
def cluster():
    # the one the reliability tests share (its effects worked out once a process)
    return shipped_cluster("lite-direct")


def _collective(c, op, nbytes):
    """Healthy and degraded (gpu0-gpu1 failed) times of ``op`` on instance 0, as
    ``netmodel collective --scenario lite-direct --fail gpu0/gpu1`` costs them."""
    s = c.scenario
    r = degraded_cost(c.graph, op, nbytes, list(c.instances[0]), links=[("gpu0", "gpu1")],
                      calibration=scenario_calibration(s), placement=s.placement,
                      algorithm=s.algorithm, scope="collectives", tuner=s.tuner)
    return r.healthy.time, r.degraded.time


def test_mesh_cable_costs_only_the_all_gather(cluster):
    c = cluster
    healthy = c.healthy[0]
    stages = {st.name: st for st in healthy.stages}
    ar = stages["allreduce_mlp"]
    ag = stages["lm_head"]
    ar_h, ar_d = _collective(c, "all-reduce", ar.collective_bytes)
    ag_h, ag_d = _collective(c, "all-gather", ag.collective_bytes)
    assert ar_h == pytest.approx(ar.network_time, rel=1e-12)
    assert ar_d == pytest.approx(ar_h, rel=1e-12)            # the ring re-laid: 86.39 us
    assert ag_h == pytest.approx(ag.network_time, rel=1e-12)
    x = ag.collective_bytes / 16 / (0.824 * 112.5e9)         # a shard through the port
    assert x == pytest.approx(28.54e-6, rel=1e-3)
    assert ag_h - 12 * x == pytest.approx(ag_d - 13 * x, rel=1e-9)   # the same latency
    assert ag_d - ag_h == pytest.approx(x, rel=1e-9)         # 354.4 -> 382.9 us
    assert round(ag_h * 1e6, 1) == 354.4 and round(ag_d * 1e6, 1) == 382.9
    # the all-gather is the lm_head's network-bound stage, once a step
    assert ag.time == ag.network_time and ag.count == 1
    step = healthy.latency
    loss = (ag_d - ag_h) / (step + ag_d - ag_h)              # batch kept: within the SLO
    assert loss == pytest.approx(x / (step + x), rel=1e-9)
    assert round(100 * loss, 4) == 0.0748
    (comp,) = [x for x in c.components["cpo-engine"] if x.edges == (("gpu0", "gpu1"),)]
    g = c.recost_graph((comp,), c.instances[0])
    r = c.rebalanced(g, c.instances[0])
    assert r.batch == healthy.batch
    assert 1 - r.tokens_per_s / healthy.tokens_per_s == pytest.approx(loss, rel=1e-9)
    rows = {row.cls: row for row in blast_radius(None, None, cluster=c).rows}
    # every mesh cable alike: one instance of 8 slowed by `loss`
    assert rows["cpo-engine"].tokens_lost_pct_mean == pytest.approx(100 * loss / 8, rel=1e-9)
    assert rows["cpo-engine"].instances_down_mean == 0


#: 32 Lites on a 4 x 4 x 2 torus, TP-4 instances of Llama-3-8B placed at random: the members'
#: order of some is no ring of the torus, which the greedy order finds
TORUS_RANDOM = """name = "torus-random"
description = "test fabric"
gpu = "Lite"
[fabric]
builder = "torus"
dims = "4x4x2"
gpu = "$gpu"
[collective]
placement = "random"
algorithm = "auto"
links = "scale-up"
calibration = "default"
[sources]
bandwidth = "test"
latency = "test"
"""


def test_rings_laid_alike_healthy_and_after_a_failure():
    """The ring order is taken on both sides: a healthy instance is costed in the faster
    of its members' order and the greedy one, so a GPU of another instance failing leaves
    it no faster than healthy (with the greedy order after a failure alone, instance 7
    read 2.1% faster than healthy where gpu2 of another instance failed)."""
    from netmodel.study.scenario_fabric import scenario_cost_model
    from netmodel.study.scenario_files import load_scenario_text

    c = build_cluster(load_scenario_text(TORUS_RANDOM), "Llama-3-8B", "decode")
    costing = c.costing
    given = []
    for inst in c.instances:
        g = c.recost_graph((), inst)
        gg, members, _ = costing._problem(g, inst)
        fm = scenario_cost_model(c.scenario, gg, c.calibration)
        given.append(costing._evaluate(fm, members, g, inst).tokens_per_s)
    healthy = [h.tokens_per_s for h in c.healthy]
    # the searched instance is costed in its order; some other reads faster re-laid
    assert healthy[0] == given[0]
    assert all(h >= t for h, t in zip(healthy, given, strict=True))
    assert any(h > t * 1.01 for h, t in zip(healthy, given, strict=True))
    for comp in list(c.components["gpu-die"])[:8]:
        for i, inst in enumerate(c.instances):
            if comp.nodes[0] in inst:
                continue
            r, _ = c._recost((comp,), inst)
            # a GPU of another instance forwards on a torus: its failure may slow, never speed
            assert r.tokens_per_s <= healthy[i] * (1 + 1e-12), (comp.name, i)
