"""A shared part's failure (a leaf, a spine, a link between switches: counted once per set
of cells, topologies.inventory.cells_per_shared_part) hits every cell of its set at the same
moment in the availability Monte Carlo: one draw per set, applied to all its cells. The
mean is that of the cells counted one by one; the spread (time below a threshold, the
capacity band) is that of all-or-nothing losses, not of independent cells (a binomial)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netmodel.study.availability import availability
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_catalog import HOUR, catalog
from netmodel.study.reliability_cluster import YEAR, build_cluster
from netmodel.study.reliability_spares import SparePools
from netmodel.study.reliability_timings import recovery_times
from tests.netmodel.fabric_helpers import h100_x4_scenario
from topologies.failure_domains import CLASSES


def _leaves_only(rate_per_hour: float):
    return catalog().with_(gpu_rate_per_hour=0.0,
                           rates={c: (rate_per_hour if c == "leaf" else 0.0)
                                  for c in CLASSES if c not in ("gpu-die", "gpu-package")})


def test_a_leaf_failure_slows_all_cells_of_its_set_at_once(tmp_path):
    # 256 GPUs = 8 cells = 2 sets of 4 leaves. Only leaves fail. Each failure slows
    # `slow` instances' worth in each of the 4 cells of its set for d_slow (detection +
    # repair), so the loss in progress is 4 x slow x N, N ~ Poisson(R x d_slow) failures in
    # progress (M/G/infinity; R = 8 leaves x rate). With 32 instances and a 95% threshold
    # the limit is 1.6 instances; slow = 0.758 (3.03 lost a failure), so
    #   correlated (one draw per set):  P(below) = P(N >= 1) = 1 - exp(-R d)
    #   cell by cell (the old draws):   P(below) = P(M >= 3), M ~ Poisson(4 R d), loss slow each
    d_slow = catalog().detection_s + catalog().repair_s("leaf")
    rd = 0.05                                   # failures in progress on average
    rate = rd / (8 * d_slow) * HOUR             # per leaf per hour
    c = build_cluster(h100_x4_scenario(tmp_path), "Llama-3.1-405B", "decode", gpus=256,
                      catalog_=_leaves_only(rate))
    assert (c.cells, c.cells_per_shared_part, c.instances_total) == (8, 4, 32)
    (kind,) = event_kinds(c, "pod")
    assert 1.6 / 4 < kind.slow < 1.6 / 2        # one failure's 4 cells cross the limit
    hand = 1 - math.exp(-rd)                    # 0.0488 (cell by cell: 1.1e-3)
    old = 1 - sum(math.exp(-4 * rd) * (4 * rd) ** n / math.factorial(n) for n in range(3))
    assert old < hand / 40
    a = availability(None, None, cluster=c, spares=0, trials=300, horizon="1y", seed=3,
                     threshold=0.95)
    assert a.analytic.below_threshold == pytest.approx(hand, rel=1e-9)
    assert abs(a.mc.below_threshold - hand) < 4 * a.mc.below_threshold_ci
    # all or nothing: no instant loses 1, 2 or 3 cells' worth, so any loss at all (99%:
    # limit 0.32) is the same time as a set's loss (95%), sample for sample
    b = availability(None, None, cluster=c, spares=0, trials=300, horizon="1y", seed=3,
                     threshold=0.99)
    assert b.mc.below_threshold == a.mc.below_threshold
    # p1 over time and trials: one set down (P(N >= 1) = 4.9% > 1% > P(N >= 2) = 0.12%),
    # 4 cells' worth; cell by cell it was 2 cells' (P(M >= 2) = 1.8% > 1% > P(M >= 3))
    assert a.mc.p1 == pytest.approx(1 - 4 * kind.slow / 32, rel=1e-12)
    # one kind of failure a set (its cells, its sets), at R = 8 leaves' rate
    assert (kind.cls, kind.cells, kind.sets, kind.down) == ("leaf", 4, 2, 0)
    assert kind.rate * kind.d_slow == pytest.approx(rd, rel=1e-9)
    # the mean is the cells' one by one: 8 cells x 4 leaves x rate x slow x d_slow, and
    # each slowed instance (its GPU's NIC link to the leaf went: NCCL has no failover)
    # first restarts, losing the rest of it, restarted - slow, for the swap's span
    assert kind.restarted >= 1
    assert kind.restart == pytest.approx(kind.restarted - kind.slow, rel=1e-12)
    assert kind.d_restart == recovery_times(c).swap_s()
    # (to 1e-10: the cap on losses past the cluster, E[(X - I)^+] / I, is no longer 0
    # but about 6e-12: a restart puts its instances wholly out, so failures that overlap
    # it can run past the cluster)
    lost = 8 * 4 * rate / HOUR * (kind.slow * d_slow + kind.restart * kind.d_restart) / 32
    assert a.analytic.mean == pytest.approx(1 - lost, rel=1e-10)
    assert abs(a.mc.mean - (1 - lost)) < 4 * a.mc.mean_ci


def test_a_set_failure_asks_each_cell_pool_for_its_own_spares():
    # a failure taking one instance down in each of 4 cells asks each cell's pod pool
    # (1 spare each) once, not one pool 4 times: a request is denied only while its pool's
    # spare is held, Erlang B(1, a) = a / (1 + a) at a = rate x hold per pool (the analytic
    # blocking); asking one pool 4 times would deny at least 3 in 4
    k = Kind("leaf", "x", rate=2e-6, down=1, slow=0.0, units=1, restored=0.0,
             d_repair=86400.0, d_swap=600.0, hold=86400.0, d_slow=86400.0, cells=4, sets=1)
    pools = SparePools("pod", 4, 4, (1, 1, 1, 1))
    a = analytic([k], pools, 16)
    load = 2e-6 * 86400.0
    assert a.blocking[0] == pytest.approx(load / (1 + load), rel=1e-12)
    assert a.instance_down_events_per_year == pytest.approx(4 * 2e-6 * YEAR, rel=1e-12)
    mc = simulate([k], pools, 16, trials=400, horizon="1y", seed=5)
    assert mc.instance_down_events_per_year == pytest.approx(4 * 2e-6 * YEAR, rel=0.02)
    share = mc.waits_for_repair_per_year / mc.instance_down_events_per_year
    assert share == pytest.approx(a.blocking[0], rel=0.15)


def test_a_part_filled_last_set_is_a_kind_of_its_own(tmp_path):
    # 6 cells at 4 a set: one full set of 4 cells and the last holding 2, its own leaves
    # (the builder's second SU half-filled). Failures a second: 4 leaves per set, so the
    # cells' events (rate x cells) add to 6 cells x 4 leaves x rate, as counted cell by cell
    rate = 1e-3
    c = build_cluster(h100_x4_scenario(tmp_path), "Llama-3.1-405B", "decode", gpus=192,
                      catalog_=_leaves_only(rate))
    kinds = event_kinds(c, "pod")
    assert sorted((k.cells, k.sets, k.first) for k in kinds) == [(2, 1, 4), (4, 1, 0)]
    assert sum(k.rate for k in kinds) == pytest.approx(2 * 4 * rate / HOUR, rel=1e-12)
    assert sum(k.rate * k.cells for k in kinds) == pytest.approx(6 * 4 * rate / HOUR,
                                                                rel=1e-12)


def test_spread_sets_puts_a_failure_on_every_cell_of_one_set():
    # 2 kinds over 6 cells with 3 pools a cell (group placement): a full-set kind (2 sets
    # of 2 cells from cell 0) and a last set of 2 cells from cell 4
    from netmodel.study.availability_mc import _spread_sets

    kinds = [Kind("leaf", "a", 1.0, 0, 1.0, 0, 0.0, 1.0, 0.0, 1.0, 1.0, cells=2, sets=2),
             Kind("leaf", "b", 1.0, 0, 1.0, 0, 0.0, 1.0, 0.0, 1.0, 1.0, cells=2, sets=1,
                  first=4),
             Kind("gpu-die", "c", 1.0, 1, 0.0, -1, 0.0, 1.0, 0.0, 1.0, 1.0)]
    rng = np.random.default_rng(0)
    n = 3000
    kind = rng.integers(0, 3, size=n)
    pool = rng.integers(0, 18, size=n)
    trial, t, k2, p2 = _spread_sets(kinds, 18, np.zeros(n, dtype=np.int64),
                                    np.arange(n, dtype=float), kind, pool, rng)
    assert len(t) == n + int((kind < 2).sum())         # 2 events per shared failure
    for i in range(n):
        mine = p2[t == i]
        if kind[i] == 2:
            assert mine.tolist() == [pool[i]]
            continue
        cells = sorted((mine // 3).tolist())
        assert len(set((mine % 3).tolist())) == 1        # the same part in every cell
        assert cells in ([[0, 1], [2, 3]] if kind[i] == 0 else [[4, 5]])
