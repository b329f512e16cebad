"""Symmetry classes keep apart the components whose recovery on pod spares differs, by hand.

Pod spare sites fill the first switches' free ports (``plan_spares``: one site per distinct
attachment in turn), so on a fabric whose leaves have one free port each the sites crowd
onto the first NVSwitch: a GPU there finds a spare on its own NVSwitch, a GPU of another
server does not. The classes used to group GPUs by their local effect alone and judge
all of them by ``gpu0`` ("substitute 1 spare"), so a failure of any GPU held one spare
where most hold four (their instance re-created), and availability with pod spares came
out high. Now the class key carries what decides the recovery
(``reliability_recovery_key.recovery_key``) and every class's recovery is every member's own.
"""

import math
from collections import Counter

import pytest

from netmodel.study.availability import availability
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_catalog import HOUR, catalog
from netmodel.study.reliability_cluster import Effect, build_cluster
from netmodel.study.reliability_recovery import recovery
from netmodel.study.reliability_spares import _plan
from netmodel.study.reliability_timings import recovery_times
from netmodel.study.scenario_files import load_scenario_text
from tests.netmodel.scenario_helpers import scenario_toml
from topologies.failure_domains import CLASSES


def _scenario(name, fabric, gpu="H100-SXM", links="as-built"):
    """A test scenario of ``gpu`` on the ``[fabric]`` table ``fabric`` (its GPU ``$gpu``)."""
    return load_scenario_text(scenario_toml(name, gpu, {**fabric, "gpu": "$gpu"},
                                            description="test fabric", links=links))


#: Two DGX-like servers of 8 H100 under 8 rail leaves of 5 ports (2 GPUs, 2 uplinks, one
#: free port each), NVSwitches of 256 ports as the SuperPOD's (144 for the GPUs' 18 NVLinks
#: each, 112 free: 6 sites of 18 links). The 8 pod sites: nvs0 on leaves 0-5, nvs1 on 6, 7.
TWO_DGX = _scenario("two-dgx", {"builder": "rail-optimized", "domains": 2, "domain_size": 8,
                                  "gpus_per_server": 8, "nvswitch_radix": 256,
                                  "servers_per_leaf": 2, "leaf_radix": 5})
#: 4 leaves of 8 ports, each with 4 H200 and 2 uplinks (2:1), links at the GPU's scale-up
#: bandwidth: 2 free ports per leaf, the 8 pod sites spare0-3 on leaves 0-3, then spare4-7
#: on leaves 0-3 again. A GPU's only link is its leaf's; TP-2 instances are placed in
#: pairs on one leaf.
LEAF_SPINE = _scenario("h200-ls", {"builder": "leaf-spine", "leaves": 4, "radix": 8,
                                   "oversubscription": 2, "bandwidth": "$scaleup"},
                       gpu="H200-SXM", links="scale-up")
#: One DGX H100 SuperPOD scalable unit (31 servers, 248 GPUs).
SU = _scenario("su", {"builder": "superpod", "sus": 1})


def gpus_only(rate_per_hour):
    """The catalog with only GPU failures, at ``rate_per_hour`` per H100."""
    zero = {c: 0.0 for c in CLASSES if c not in ("gpu-die", "gpu-package")}
    return catalog().with_(gpu_rate_per_hour=rate_per_hour, rates=zero)


def by_recovery(c, cls):
    """{(recovery path, spares held): components} over ``cls``'s symmetry classes."""
    out = Counter()
    for e in c.effects([cls]):
        r = recovery(c, e, "pod")
        out[(r.path, r.units)] += e.components
    return dict(out)


@pytest.fixture(scope="module")
def two():
    return build_cluster(TWO_DGX, "Llama-3-70B", "decode", catalog_=gpus_only(1e-3))


def test_gpu_classes_split_by_the_spares_their_instance_draws_on(two):
    assert (two.tp, two.instances) == (4, tuple(tuple(f"gpu{4 * i + j}" for j in range(4))
                                                for i in range(4)))
    sites = [sorted(n for n, _ in edges) for _, _, edges in _plan(two, two.cell_gpus)]
    assert sites == [[f"leaf{r}", "nvs0"] for r in range(6)] + \
        [["leaf6", "nvs1"], ["leaf7", "nvs1"]]
    # A failed GPU's instance asks for max(1 to replace, 4 to re-create) = 4 sites: the
    # first 4, all on nvs0 (leaves 0-3). A GPU of nvs0 takes the spare of its own NVSwitch
    # (its TP-4 all-reduce stays on NVLink): substitute 1. A GPU of nvs1 takes a spare of
    # nvs0 (its own leaf, or the first site), an instance across two NVLink domains whose
    # all-reduce goes over the rail NICs and misses the 50 ms TBT at its batch, so the
    # instance is re-created on the 4 sites of nvs0. The old classes: all 16 substitute 1
    for cls in ("gpu-die", "gpu-package"):
        assert by_recovery(two, cls) == {("substitute 1 spare", 1): 8,
                                         ("re-create on 4 spares", 4): 8}, cls
    examples = {recovery(two, e, "pod").units: e.example for e in two.effects(["gpu-die"])}
    assert examples[1] == "gpu0" and int(examples[4][3:]) >= 8


def test_every_class_recovers_as_each_of_its_members(two):
    # each component evaluated on its own (its effect and its recovery) against its
    # class: the same path, spares held and capacity restored, member by member
    kept = []   # every effect made here lives on: recovery() memoizes by the effect's id
    for cls in ("gpu-die", "host", "nvswitch"):
        own = Counter()
        for comp in two.components[cls]:
            _, lost, wired, touched = two._local(comp)
            r = two._evaluate(comp, lost, wired, touched)
            kept.append(Effect(cls=cls, example=comp.name, components=1, parts=comp.parts,
                               sms=0, component=comp, **r))
            rec = recovery(two, kept[-1], "pod")
            own[(rec.path, rec.units, round(rec.restored, 9))] += 1
        classes = Counter()
        for e in two.effects([cls]):
            rec = recovery(two, e, "pod")
            classes[(rec.path, rec.units, round(rec.restored, 9))] += e.components
        assert classes == own, cls


def test_superpod_su_gpus_by_hand():
    # The known case: an SU's 8 sites are 6 on nvs0 (leaves 0-5) and 2 on nvs1 (leaves 6,
    # 7); a GPU's instance draws on the first 4, all on nvs0. nvs0's 8 GPUs substitute 1,
    # the other 240 re-create their TP-4 instance on 4 (the old class: gpu0's 'substitute
    # 1 spare' for all 248)
    c = build_cluster(SU, "Llama-3-70B", "decode")
    assert (c.gpus, c.tp) == (248, 4)
    assert by_recovery(c, "gpu-die") == {("substitute 1 spare", 1): 8,
                                         ("re-create on 4 spares", 4): 240}


def test_blast_radius_row_says_the_worst_recovery():
    b = blast_radius(TWO_DGX, "Llama-3-70B")
    row = next(r for r in b.rows if r.cls == "gpu-die")
    assert row.count == 16 and row.instances_down_mean == 1
    assert row.recovery_with_spares == \
        f"re-create on 4 spares ({recovery_times(b.cluster).swap_s():.3g} s)"   # was 'substitute 1 spare'


def test_availability_with_the_split_classes_by_hand(two):
    # Only GPU failures, r = 1e-3/h per GPU (die and package together): 8 GPUs hold 1 spare
    # each while their part is repaired, 8 hold 4. One pod of 4 spares is a two-rate loss
    # system (Kaufman-Roberts): a_1 = a_4 = 8 r hold Erlangs, j q(j) = a_1 q(j-1) +
    # 4 a_4 q(j-4); a 1-spare failure is refused when all 4 are held, a 4-spare one when
    # any is. 4 instances, each failure takes one down for the swap or, refused, the repair
    a = availability(None, None, cluster=two, spares=4, placement="pod", trials=400,
                     horizon="2y", seed=3)
    assert a.pools.reachable == (4,)
    r = 1e-3 / HOUR
    det, warm = two.catalog.detection_s, two.catalog.warmup_s
    load = recovery_times(two).shard_bytes / (two.gpu.scaleup_bandwidth * _efficiency(two))
    d_rep, d_swap, hold = det + 24 * HOUR + load + warm, det + load + warm, det + 24 * HOUR
    a1 = a4 = 8 * r * hold
    q = [1.0]
    for j in range(1, 5):
        q.append((a1 * q[j - 1] + 4 * a4 * (q[j - 4] if j >= 4 else 0.0)) / j)
    b1, b4 = q[4] / sum(q), sum(q[1:]) / sum(q)
    lost = 8 * r * (b1 * d_rep + (1 - b1) * d_swap) + 8 * r * (b4 * d_rep + (1 - b4) * d_swap)
    # every loss is one instance: X ~ Poisson(lost) instances down at once, capped at the 4
    # (the first-order 1 - lost / 4 plus E[(X - 4)^+] / 4 = (lost - 4 + sum over n < 4 of
    # (4 - n) P(X = n)) / 4, some 7e-9 here)
    def capped(m):
        return 1 - (4 - sum((4 - n) * math.exp(-m) * m ** n / math.factorial(n)
                            for n in range(4))) / 4

    assert a.analytic.mean == pytest.approx(capped(lost), rel=1e-12)
    assert a.no_spares.mean == pytest.approx(capped(16 * r * d_rep), rel=1e-12)
    # the old classes (all 16 hold 1 spare: Erlang B with 16 r hold) said more
    old = (16 * r * hold) ** 4 / 24 / sum((16 * r * hold) ** k / [1, 1, 2, 6, 24][k]
                                          for k in range(5))
    assert a.analytic.mean < 1 - 16 * r * (old * d_rep + (1 - old) * d_swap) / 4 - 1e-4
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci


@pytest.fixture(scope="module")
def leaf_spine():
    c = build_cluster(LEAF_SPINE, "Llama-3-70B", "decode")
    assert (c.gpu.name, c.tp, c.instances[0]) == ("H200-SXM", 2, ("gpu0", "gpu1"))
    sites = [sorted(n for n, _ in edges) for _, _, edges in _plan(c, c.cell_gpus)]
    assert sites == [[f"leaf{i % 4}"] for i in range(8)]
    return c


def test_a_cut_off_member_is_the_one_replaced(leaf_spine):
    # A NIC failure cuts gpu0 off (its only link), its instance (gpu0, gpu1) falls apart
    # one and one. gpu0 is the member off the cell's main part: one spare replaces it, the
    # first of the first max(1, 2) sites, spare0 on gpu0's own leaf, so the instance
    # serves as healthy. The old rule kept the larger side, the first on a tie (gpu0's):
    # it replaced the healthy gpu1, the instance stayed cut, and was re-created on 2
    got = {e.example: recovery(leaf_spine, e, "pod") for e in leaf_spine.effects(["nic"])}
    assert (got["leaf0-gpu0"].path, got["leaf0-gpu0"].units, got["leaf0-gpu0"].restored) \
        == ("substitute 1 spare", 1, 0.0)
    assert by_recovery(leaf_spine, "nic") == {("substitute 1 spare", 1): 16}


def test_spares_on_a_failed_leaf_are_cut_off_with_it(leaf_spine):
    # A leaf failure cuts its 4 GPUs off one by one (both instances on it: every member
    # replaced, not one per instance) and the 2 spare sites on it (spare0 and spare4 for
    # leaf0). 4 to replace, 4 to re-create: the first 4 sites left, spare1-3 and spare5 on
    # leaves 1, 2, 3, 1, so each instance runs across two leaves. The old rule drew on
    # spare0 (its own leaf: cut off too) and said no spare serves
    for e in leaf_spine.effects(["leaf"]):
        assert (e.components, e.instances_down, e.gpus_cut) == (4, 2, 4)
        r = recovery(leaf_spine, e, "pod")
        assert (r.path, r.units) == ("substitute 4 spares", 4)
        assert 0 < r.restored < 0.05     # two instances a little slower across leaves


def _efficiency(cluster) -> float:
    """The scale-up payload share the collective model reads for the cluster's GPU
    (netmodel/data/collective_defaults.toml: 0.824 on NVLink4), at which a spare loads its
    shard from a peer."""
    from netmodel.collectives.calibration_files import default_calibration

    return default_calibration().for_gpu(cluster.gpu.name).scaleup_efficiency
