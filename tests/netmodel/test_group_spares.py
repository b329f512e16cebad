"""Group spares: each group is its own pool, judged by its own switches' free ports.

Four DGX-like servers of 8 H100 (one NVLink domain, one ``group``, each) on rail leaves of
6 ports (3 up, 3 down) with 3 servers a leaf: servers 0-2 fill leaves 0-7 (3 GPUs + 3
uplinks: no free port), server 3 is alone on leaves 8-15 (2 free ports each). NVSwitches
of 256 ports (144 for 8 GPUs x 18 NVLinks, 112 free: 6 sites of 18 links). So groups 0-2
hold no spare and group 3 holds 6 (nvs3 with leaves 8-13). The pool size of every group
was the first group's (0): 8 group spares, 2 a group, were all unreachable and group 3's
GPU failures, whose recovery substitutes one spare, waited for their repair as without
spares.
"""

import math

import pytest

from netmodel.study.availability import availability
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_catalog import HOUR
from netmodel.study.reliability_cluster import YEAR, build_cluster
from netmodel.study.reliability_recovery import recovery
from netmodel.study.reliability_spares import group_capacities, spare_pools
from netmodel.study.reliability_timings import recovery_times
from netmodel.study.scenario_files import load_scenario_text
from tests.netmodel.scenario_helpers import scenario_toml

from .test_spare_recovery_classes import gpus_only

FOUR = load_scenario_text(scenario_toml(
    "four-dgx", "H100-SXM", {"builder": "rail-optimized", "domains": 4, "domain_size": 8,
                             "gpus_per_server": 8, "nvswitch_radix": 256, "servers_per_leaf": 3,
                             "leaf_radix": 6, "gpu": "$gpu"}, description="test fabric"))


@pytest.fixture(scope="module")
def four():
    return build_cluster(FOUR, "Llama-3-70B", "decode", catalog_=gpus_only(1e-3))


def test_each_group_holds_what_its_own_switches_can(four):
    assert (four.gpus, four.tp, four.cells) == (32, 4, 1)
    assert group_capacities(four) == (0, 0, 0, 6)
    p = spare_pools(four, 8, "group")
    assert (p.pools, p.groups, p.reachable) == (4, 4, (0, 0, 0, 2))   # was (0, 0, 0, 0)


def test_every_group_is_judged_by_its_own_spares(four):
    got = {}
    for k in event_kinds(four, "group"):
        got.setdefault((k.group, k.units, k.path), 0)
        got[(k.group, k.units, k.path)] += k.rate * HOUR / 1e-3
    # groups 0-2: 24 GPUs with no spare site; group 3: 8 GPUs substitute one spare each
    assert {key: round(v, 9) for key, v in got.items()} == {
        (0, -1, "no free port for a spare"): 8.0, (1, -1, "no free port for a spare"): 8.0,
        (2, -1, "no free port for a spare"): 8.0, (3, 1, "substitute 1 spare"): 8.0}
    e = next(e for e in four.effects(["gpu-die"]) if e.example == "gpu24")
    assert recovery(four, e, "group").path == "substitute 1 spare"


def test_availability_with_group_spares_by_hand(four):
    # r = 1e-3/h per GPU. Groups 0-2: 24 GPUs, each failure takes its TP-4 instance down
    # for the repair. Group 3: its pool of 2 spares is an Erlang loss system offered
    # a = 8 r hold Erlangs: B = (a^2/2) / (1 + a + a^2/2); a failure served is down for
    # the swap, one refused for the repair. 8 instances.
    a = availability(None, None, cluster=four, spares=8, placement="group", trials=400,
                     horizon="2y", seed=5)
    r = 1e-3 / HOUR
    det, warm = four.catalog.detection_s, four.catalog.warmup_s
    load = recovery_times(four).shard_bytes / (four.gpu.scaleup_bandwidth * _efficiency(four))
    d_rep, d_swap, hold = det + 24 * HOUR + load + warm, det + load + warm, det + 24 * HOUR
    x = 8 * r * hold
    b = x * x / 2 / (1 + x + x * x / 2)
    lost = 24 * r * d_rep + 8 * r * (b * d_rep + (1 - b) * d_swap)
    # every loss is one instance: X ~ Poisson(lost) down at once, capped at the 8 (the
    # first-order 1 - lost / 8 plus E[(X - 8)^+] / 8, some 2e-9 here)
    def capped(m):
        return 1 - (8 - sum((8 - n) * math.exp(-m) * m ** n / math.factorial(n)
                            for n in range(8))) / 8

    assert a.analytic.mean == pytest.approx(capped(lost), rel=1e-12)
    none = capped(32 * r * d_rep)
    assert a.no_spares.mean == pytest.approx(none, rel=1e-12)
    assert a.analytic.mean > none + 1e-3          # the old pools: equal to none
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci


def test_one_instance_availability_counts_each_groups_own_components(four):
    # one instance's availability from independent components: each of its 4 GPUs fails as
    # a die and as a package (one component each, rate r_cls per second, down d_cls), so
    # A = prod_cls (1 + r_cls d_cls)^-4 without spares, whatever the placement. The group
    # kinds (one per group and class) were read with their whole class's component count
    # (or none), giving 0.908560 for group where pod gave this 0.908932.
    hand = 1.0
    for cls in ("gpu-die", "gpu-package"):
        hand *= (1 + four.rates[cls] * recovery_times(four).repair_down_s(cls)) ** -4
    for placement in ("pod", "group"):
        a = availability(None, None, cluster=four, spares=8, placement=placement, trials=10,
                         horizon="1d", seed=0)
        assert a.no_spares.instance_availability == pytest.approx(hand, rel=1e-12)


def test_groups_sharing_leaves_split_their_free_ports():
    # Two DGX-like servers under 8 rail leaves of one free port each (test_spare_recovery_
    # classes.TWO_DGX; each NVSwitch has room for 6 sites): each group planned alone on
    # every free port held 6, 12 in all where the leaves take 8 (pod: 8). The groups now
    # take one site each in turn, each on its next attachment with a free port: group 0
    # leaf0, group 1 leaf1 (leaf0 taken), group 0 leaf2, ...: 4 each, every leaf once.
    from netmodel.study.reliability_spares import _every, _groups, capacity

    from .test_spare_recovery_classes import TWO_DGX

    c = build_cluster(TWO_DGX, "Llama-3-70B", "decode")
    assert group_capacities(c) == (4, 4)                       # was (6, 6)
    assert sum(group_capacities(c)) == capacity(c, "pod") == 8
    leaves = [sorted(n for _, _, edges in _every(c, members) for n, _ in edges
                     if n.startswith("leaf")) for members in _groups(c).values()]
    assert leaves == [["leaf0", "leaf2", "leaf4", "leaf6"], ["leaf1", "leaf3", "leaf5", "leaf7"]]
    assert spare_pools(c, 16, "group").reachable == (4, 4)     # was (6, 6)


@pytest.fixture(scope="module")
def hosts_over_two_groups():
    """test_spare_recovery_classes.LEAF_SPINE (4 leaves of 4 H200, 2 free ports a leaf,
    TP-2 instances in pairs on a leaf) with only host failures, relabelled: each leaf a
    group, and host ``h`` holding the pair ``h % 2`` of leaves ``2 (h // 2)`` and
    ``2 (h // 2) + 1``: a host failure takes down one instance of each of two groups,
    whose spares sit on their own leaf (the host holds no switch, so none stops)."""
    from dataclasses import replace

    from netmodel.study.reliability_catalog import catalog
    from topologies.failure_domains import CLASSES

    from .test_spare_recovery_classes import LEAF_SPINE

    zero = {c: 0.0 for c in CLASSES if c not in ("host", "gpu-die", "gpu-package")}
    c = build_cluster(LEAF_SPINE, "Llama-3-70B", "decode",
                      catalog_=catalog().with_(gpu_rate_per_hour=0.0, rates=zero))
    g = c.graph.copy()
    for n, d in g.nodes(data=True):
        if d["kind"] == "gpu":
            leaf, slot = divmod(int(n[3:]), 4)
            d["group"], d["server"] = leaf, leaf // 2 * 2 + slot // 2
    return replace(c, graph=g)


def test_a_failure_over_two_groups_draws_on_each_groups_own_pool(hosts_over_two_groups):
    # a host failure: instance (gpu0, gpu1) of group 0 and (gpu4, gpu5) of group 1 down,
    # each substituting 2 spares of its own leaf. It was one kind of group -1 asking one
    # pool (of 2) for all 4 spares: never granted, availability that of no spares.
    c = hosts_over_two_groups
    assert (c.tp, c.instances_total, group_capacities(c)) == (2, 8, (2, 2, 2, 2))
    r = c.rates["host"]
    got = [(k.group, k.follows, k.down, k.units, k.path, k.rate) for k in event_kinds(c, "group")]
    assert got == [(0, False, 1, 2, "substitute 2 spares", 2 * r),   # hosts 0, 1
                   (1, True, 1, 2, "substitute 2 spares", 2 * r),
                   (2, False, 1, 2, "substitute 2 spares", 2 * r),   # hosts 2, 3
                   (3, True, 1, 2, "substitute 2 spares", 2 * r)]
    a = availability(None, None, cluster=c, spares=8, placement="group", trials=400,
                     horizon="2y", seed=5)
    assert a.pools.reachable == (2, 2, 2, 2)
    # each pool of 2 spares takes the 2-spare asks of 2 hosts: busy or free, an Erlang
    # loss system of one server offered x = 2 r hold: B = x / (1 + x). Per host failure
    # two instances of the 8 are down, each for the repair (B) or the swap (1 - B):
    # capacity lost 4 r x 2 (B d_rep + (1 - B) d_swap) / 8
    rt = recovery_times(c)
    d_rep, d_swap, x = rt.repair_down_s("host"), rt.swap_s(), 2 * r * rt.hold_s("host")
    b = x / (1 + x)
    assert a.analytic.blocking == pytest.approx((b,) * 4, rel=1e-12)
    assert a.analytic.mean == pytest.approx(1 - r * (b * d_rep + (1 - b) * d_swap),
                                            rel=1e-12)
    assert a.no_spares.mean == pytest.approx(1 - r * d_rep, rel=1e-12)
    assert a.analytic.mean - a.no_spares.mean > 4e-4        # the old code: 0
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci
    # instance-down events are counted per failure and cell it strikes, however many
    # groups' instances it takes down there: the 4 hosts' failures, as with pod spares
    assert a.analytic.instance_down_events_per_year == pytest.approx(4 * r * YEAR, rel=1e-12)
    pod = availability(None, None, cluster=c, spares=8, placement="pod", trials=400,
                       horizon="2y", seed=5)
    assert pod.analytic.instance_down_events_per_year == pytest.approx(4 * r * YEAR,
                                                                       rel=1e-12)
    n = 4 * r * YEAR * 400 * 2   # some 970 host failures in the 800 trial-years
    assert abs(a.mc.instance_down_events_per_year * 800 - n) <= 5 * math.sqrt(n)


def test_a_failure_over_two_groups_strikes_both_at_once(hosts_over_two_groups):
    # no spares, threshold 80%: a host failure takes 2 of the 8 instances (25%) at once,
    # so the capacity is below it whenever a host is down: P(N >= 1), N ~ Poisson(4 r
    # d_rep) hosts down (exact in the model). Were the two groups' outages drawn apart,
    # each 12.5%, it would take two at once (some 1e-6).
    c = hosts_over_two_groups
    a = availability(None, None, cluster=c, spares=0, placement="group", trials=400,
                     horizon="2y", seed=7, threshold=0.8)
    hand = -math.expm1(-4 * c.rates["host"] * recovery_times(c).repair_down_s("host"))
    assert a.no_spares.below_threshold == pytest.approx(hand, rel=1e-12)
    assert a.analytic.below_threshold == pytest.approx(hand, rel=1e-12)
    assert abs(a.mc.below_threshold - hand) <= 4 * a.mc.below_threshold_ci
    assert a.mc.below_threshold > hand / 2


def test_a_shared_parts_failure_over_two_groups_strikes_every_cell_and_group_at_once():
    # A shared part (a set of 2 cells, 2 sets: 4 cells of 2 groups, pools cell x 2 + g)
    # whose failure takes down one instance of each group in each cell of its set: the
    # group-1 kind follows the group-0 one. Each failure is 4 events at one moment, each
    # in its own pool (cell of the set, slot of its group).
    from dataclasses import replace

    from netmodel.study.availability_analytic import analytic
    from netmodel.study.availability_kinds import Kind
    from netmodel.study.availability_mc import simulate
    from netmodel.study.reliability_spares import SparePools

    d_rep, hold = 30 * 86400.0, 30 * 86400.0
    r = 0.05 / d_rep                        # 0.05 failures in progress on average
    lead = Kind("leaf", "x", rate=r, down=1, slow=0.0, units=1, restored=0.0,
                d_repair=d_rep, d_swap=600.0, hold=hold, d_slow=0.0, cells=2, sets=2,
                group=0)
    kinds = [lead, replace(lead, group=1, follows=True)]
    # no spares, 8 instances, threshold 60%: a failure takes 4 (50%) at once, so the
    # capacity is below it whenever one is in progress: 1 - e^-(r d_rep), exact
    none = SparePools("group", 0, 8, (0,) * 8, 2)
    hand = -math.expm1(-r * d_rep)
    assert analytic(kinds, none, 8, 0.6).below_threshold == pytest.approx(hand, rel=1e-12)
    mc = simulate(kinds, none, 8, horizon="4y", trials=400, seed=2, threshold=0.6)
    assert abs(mc.below_threshold - hand) <= 4 * mc.below_threshold_ci
    # one spare a pool: each pool is asked by its set's failures only (r / 2), one spare
    # at a time: Erlang B(1, a) = a / (1 + a), a = r / 2 x hold; 4 events a failure
    one = SparePools("group", 8, 8, (1,) * 8, 2)
    a = analytic(kinds, one, 8, 0.6)
    x = r / 2 * hold
    assert a.blocking == pytest.approx((x / (1 + x),) * 2, rel=1e-12)
    mc = simulate(kinds, one, 8, horizon="4y", trials=2000, seed=2, threshold=0.6)
    # an instance-down event per failure and cell: 2 a failure, however many groups
    assert mc.instance_down_events_per_year == pytest.approx(2 * r * YEAR, rel=0.05)
    assert a.instance_down_events_per_year == pytest.approx(2 * r * YEAR, rel=1e-12)
    # a cell's two pools take the same failures, so they are busy together: a cell's
    # failure waits as each pool refuses, B; over the 8,000 trial-years some 240, a Poisson
    # count (5 sigma); were the group-1 events asked of the group-0 pool, every one would
    years = 2000 * 4
    waits = 2 * r * YEAR * x / (1 + x) * years
    assert abs(mc.waits_for_repair_per_year * years - waits) <= 5 * math.sqrt(waits)
    assert abs(mc.mean - a.mean) <= 4 * mc.mean_ci


@pytest.fixture(scope="module")
def instances_over_two_groups():
    """test_spare_recovery_classes.LEAF_SPINE with only host failures, relabelled: a
    leaf's 4 GPUs one host, and groups by position (gpu0, gpu2 of each leaf group 0,
    gpu1, gpu3 group 1), so each TP-2 instance (a pair on a leaf) spans both groups: a
    host failure takes down 2 instances, whose 4 substitutes are 2 of each group (each
    group's sites: one a leaf)."""
    from dataclasses import replace

    from netmodel.study.reliability_catalog import catalog
    from topologies.failure_domains import CLASSES

    from .test_spare_recovery_classes import LEAF_SPINE

    zero = {c: 0.0 for c in CLASSES if c not in ("host", "gpu-die", "gpu-package")}
    c = build_cluster(LEAF_SPINE, "Llama-3-70B", "decode",
                      catalog_=catalog().with_(gpu_rate_per_hour=0.0, rates=zero))
    g = c.graph.copy()
    for n, d in g.nodes(data=True):
        if d["kind"] == "gpu":
            leaf, slot = divmod(int(n[3:]), 4)
            d["group"], d["server"] = slot % 2, leaf
    return replace(c, graph=g)


def test_instances_spanning_groups_take_each_groups_share_of_its_own_pool(
        instances_over_two_groups):
    # It was one kind of group -1 asking one pool (of 2) for all 4 spares: never granted,
    # availability that of no spares. Now 2 of group 0's pool, and a joint kind asking 2
    # of group 1's; the instances come back only if both pools have 2 free.
    c = instances_over_two_groups
    assert (c.tp, c.instances_total, group_capacities(c)) == (2, 8, (4, 4))
    r = c.rates["host"]
    got = [(k.group, k.follows, k.joint, k.down, k.units, k.rate)
           for k in event_kinds(c, "group")]
    assert got == [(0, False, False, 2, 2, 4 * r), (1, True, True, 0, 2, 4 * r)]
    a = availability(None, None, cluster=c, spares=4, placement="group", trials=1000,
                     horizon="2y", seed=5)
    assert a.pools.reachable == (2, 2)
    # each pool of 2 takes the 2-spare asks of all 4 hosts: B = x / (1 + x), x = 4 r
    # hold; the same failures ask both pools, so they are busy together (one chain of
    # the two, h240; taken as independent it was 1 - (1 - B)^2, the pessimistic end): a
    # failure is back on spares as either pool says, 1 - B; 2 of the 8 instances down a
    # failure, for the repair (B) or the swap
    rt = recovery_times(c)
    d_rep, d_swap, x = rt.repair_down_s("host"), rt.swap_s(), 4 * r * rt.hold_s("host")
    b = x / (1 + x)
    assert a.analytic.blocking == pytest.approx((b, b), rel=1e-9)
    assert a.analytic.mean == pytest.approx(1 - r * (b * d_rep + (1 - b) * d_swap),
                                            rel=1e-12)
    assert a.no_spares.mean == pytest.approx(1 - r * d_rep, rel=1e-12)
    assert a.analytic.mean - a.no_spares.mean > 4e-4        # the old code: 0
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci
    assert a.analytic.instance_down_events_per_year == pytest.approx(4 * r * YEAR,
                                                                     rel=1e-12)


def test_a_spanning_instance_comes_back_only_if_every_pool_has_its_share():
    # hand kinds: one failure kind (1 instance of 4 down, a spare of group 0's pool and
    # one of group 1's), 1 cell, 2 pools
    from dataclasses import replace

    from netmodel.study.availability_analytic import analytic
    from netmodel.study.availability_kinds import Kind
    from netmodel.study.availability_mc import simulate
    from netmodel.study.reliability_spares import SparePools

    hold = 30 * 86400.0
    r = 1.0 / hold                           # x = r hold = 1 Erlang at each pool
    lead = Kind("host", "x", rate=r, down=1, slow=0.0, units=1, restored=0.0,
                d_repair=hold, d_swap=600.0, hold=hold, d_slow=0.0, group=0)
    share = replace(lead, group=1, follows=True, joint=True, down=0)
    kinds = [lead, share]
    # group 1's pool empty: never back on spares, though group 0's pool has its spare
    empty = SparePools("group", 1, 2, (1, 0), 2)
    assert analytic(kinds, empty, 4).blocking == (1.0, 1.0)
    mc = simulate(kinds, empty, 4, horizon="2y", trials=200, seed=1)
    assert mc.waits_for_repair_per_year == mc.instance_down_events_per_year > 0
    assert mc.events_per_year == mc.instance_down_events_per_year   # a share: no event
    # one spare each: both pools busy together (only these failures ask them), so the
    # refusals are Erlang B(1, 1) = 1/2 of the failures (the closed form's one chain of
    # both pools, h240; taken as independent they were 1 - (1/2)^2 = 3/4)
    one = SparePools("group", 2, 2, (1, 1), 2)
    a = analytic(kinds, one, 4)
    assert a.blocking == pytest.approx((0.5, 0.5), rel=1e-9)
    assert a.waits_for_repair_per_year == pytest.approx(r * YEAR / 2, rel=1e-9)
    mc = simulate(kinds, one, 4, horizon="2y", trials=1000, seed=1)
    years = 2 * 1000
    n = r * YEAR * years                     # some 24,000 failures
    assert abs(mc.instance_down_events_per_year * years - n) <= 5 * math.sqrt(n)
    assert abs(mc.waits_for_repair_per_year * years - n / 2) <= 5 * math.sqrt(n)


def _efficiency(cluster) -> float:
    """The scale-up payload share the collective model reads for the cluster's GPU
    (netmodel/data/collective_defaults.toml: 0.824 on NVLink4), at which a spare loads its
    shard from a peer."""
    from netmodel.collectives.calibration_files import default_calibration

    return default_calibration().for_gpu(cluster.gpu.name).scaleup_efficiency
