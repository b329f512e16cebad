"""Past the chain's size limit, a kind granted in part is refused the share of its instances
the free spares do not hold, not only the chance that none fits.

The closed form solves a pool asked by a kind granted in part (``Kind.per``) with
``_sequential``'s chain; past ``MAX_SEQUENTIAL_STATES`` it fell back to Kaufman-Roberts
with the kind's instances as independent asks (now each failure's grant one ask of its
size, over the spares busy). That fallback computed the distribution
of instances refused right (it feeds the time below the threshold and the waits) but set
the kind's blocking, which the mean capacity reads, to the chance that not even one
instance fits. A failure asking more than the pool holds (a leaf's 32 instances of 4 on
104 spares) is refused some instances every time, yet read as granted whole: on lite-flat
with Llama-3-8B and global spares the mean fell from 4.49e-6 lost at 96 spares (the chain)
to 1.12e-6 at 104 (the fallback), where the Monte Carlo reads 3.42e-6.
"""

from __future__ import annotations

import pytest

from netmodel.study import availability_analytic as aa
from netmodel.study import availability_busy as ab
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_cluster import YEAR, build_cluster
from netmodel.study.reliability_spares import SparePools, spare_pools

DAY = 86400.0
SWAP = 600.0


def _leaf(rate):
    # one failure slows nothing and downs 8 instances of 16 GPUs each (128 spares asked)
    return Kind("leaf", "x", rate=rate, down=8, slow=0.0, units=128, restored=0.0,
                d_repair=DAY, d_swap=SWAP, hold=DAY, d_slow=0.0, per=16)


def test_the_fallback_refuses_the_instances_the_pool_cannot_hold(monkeypatch):
    # rare failures (0.01 a year, held a day): the pool of 100 is free at almost every
    # one, so floor(100 / 16) = 6 of its 8 instances come back and 2 wait: blocking 2 / 8
    # by hand, the loss (6 d_swap + 2 d_repair) x rate / instances
    rate, n = 0.01 / YEAR, 100
    pool = SparePools("global", 100, 1, (100,))
    hand_b = 2 / 8
    hand_lost = rate * (6 * SWAP + 2 * DAY) / n
    chain = aa.analytic([_leaf(rate)], pool, n)
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)   # past the chain's limit
    notes: set = set()
    aa._sequential(100, [_leaf(rate)], [0], [], [1], notes)
    assert notes == {ab.FALLBACK_INDEPENDENT}
    fallback = aa.analytic([_leaf(rate)], pool, n)
    for a in (chain, fallback):
        assert a.blocking[0] == pytest.approx(hand_b, rel=1e-3)
        assert 1 - a.mean == pytest.approx(hand_lost, rel=1e-3)
        # every failure leaves 2 instances waiting
        assert a.waits_for_repair_per_year == pytest.approx(rate * YEAR, rel=1e-3)


def test_lite_flat_just_past_the_chain_limit_agrees_with_the_monte_carlo():
    # Llama-3-8B (TP 4): a plane leaf asks 32 instances x 4 = 128 global spares; at 104
    # the chain is past its limit (at 96 it is not) and 26 of the 32 come back
    flat = build_cluster("lite-flat", "Llama-3-8B", "decode")
    kinds = event_kinds(flat, "global")
    (leaf,) = [k for k in kinds if k.cls == "leaf"]
    assert (leaf.units, leaf.grain, leaf.pieces) == (128, 4, 32)
    pools = spare_pools(flat, 104, "global")
    a = aa.analytic(kinds, pools, flat.instances_total)
    k = kinds.index(leaf)
    # the leaf is refused at least (128 - 104) / 4 = 6 of its 32 instances every time
    assert a.blocking[k] >= 6 / 32
    mc = simulate(kinds, pools, flat.instances_total, horizon="1y", trials=1000, seed=0)
    assert abs(mc.mean - a.mean) <= 2 * mc.mean_ci
