"""A failure short of spares brings back the most serving capacity, not the most instances.

A failure whose instances take different numbers of spares (``Kind.each``) gave its free
spares to the down instances first, the fewest spares first (the most instances back),
then to the slowed ones; and it counted what came back by instances: the share of the
down capacity back was ``instances back / down``, the slowed likewise. An operator short
of spares brings back the most serving capacity. Where every down instance serves alike
and nothing slowed is swapped, the most instances back is the most capacity (the
fewest-first order, unchanged). Where they differ it is not:

* a down instance serving at half the cell's mean rate (a smaller healthy batch:
  ``Cluster.weights``) on 4 spares beside one at the full rate on 8: with 8 free the one
  of 8 restores 1 instance's worth, the one of 4 only 0.5;
* a down instance on 5 spares beside five slowed by half on 1 spare each: with 5 free the
  five restore 2.5 instances' worth for the day, the down one 1.

Now (``Kind.worths``, ``availability_kinds._grants``) the free spares go to the set that
restores the most capacity-seconds (each instance's worth x the time a grant saves it),
and the shares back are of the capacity (worth), not of the count; the closed form and
the Monte Carlo both read them from the kind.

Hand case (as tests/netmodel/test_mixed_partial_grants_h429.py): 1-day repairs, holds and
slow-downs, 600 s swaps, nothing lost on the spares, 0.05 failures a day, one pool, 50
instances. The pool is taken whole by a failure finding it free, so the next finds none
until the repair: busy ``B = a / (1 + a)``, ``a = rate x hold``, and then every instance
waits.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_spares import SparePools

DAY, SWAP, N = 86400.0, 600.0, 50
W = SWAP / DAY


def _pool(s):
    return SparePools("global", s, 1, (s,))


def _unlike_down():
    # two down: one at half the mean rate on 4 spares, one at the full rate on 8
    return Kind("host", "x", rate=0.05 / DAY, down=2, slow=0.0, units=12, restored=0.0,
                d_repair=DAY, d_swap=SWAP, hold=DAY, d_slow=DAY, worth=1.5,
                each=(4, 8), worths=(0.5, 1.0))


def _down_and_slowed():
    # one down on 5 spares, five slowed by half, each swapped on 1 spare (no worths
    # given: the down at down_worth each, the slowed sharing slow_swapped evenly)
    return Kind("host", "x", rate=0.05 / DAY, down=1, slow=2.5, units=10, restored=0.0,
                d_repair=DAY, d_swap=SWAP, hold=DAY, d_slow=DAY, slow_swapped=2.5,
                each=(5, 1, 1, 1, 1, 1))


def _busy(k):
    a = k.rate * k.hold
    return a / (1 + a)


def test_unlike_down_instances_by_hand():
    k = _unlike_down()
    # 4 free: the half one (0.5 back of 1.5: a third); 8: the full one (2/3), not the
    # half one as fewest-first gave (and then counted half of the capacity back); 12: both
    assert [k.steps[k.granted(f)] for f in (3, 4, 7, 8, 11, 12)] == [
        (0, 0, 0), (4, 1, 0), (4, 1, 0), (8, 1, 0), (8, 1, 0), (12, 2, 0)]
    assert [k.backs(k.granted(f))[0] for f in (3, 4, 8, 12)] == pytest.approx(
        [0.0, 1 / 3, 2 / 3, 1.0], rel=1e-12)
    assert k.to_dict()["worths"] == [0.5, 1.0]
    # 8 free, taken whole: 1 instance's worth back after the swap, 0.5 for the repair
    hand = k.rate * ((1 - _busy(k)) * (1.0 * W + 0.5) + _busy(k) * 1.5) * DAY / N
    assert analytic([k], _pool(8), N).overlap == pytest.approx(hand, rel=1e-12)


def test_down_and_slowed_by_hand():
    k = _down_and_slowed()
    # 5 free: the five slowed (2.5 worth for the day), not the down one (1); 6: still
    # the five (the down one and one slowed restore 1.5); 9: the down one and four
    # slowed (3.0); 10: all
    assert [k.steps[k.granted(f)] for f in (1, 5, 6, 9, 10)] == [
        (1, 0, 1), (5, 0, 5), (5, 0, 5), (9, 1, 4), (10, 1, 5)]
    assert k.backs(k.granted(5)) == (0.0, 1.0)
    assert k.backs(k.granted(9)) == pytest.approx((1.0, 0.8), rel=1e-12)
    # 5 free, taken whole: the down one for the repair, the slowed 2.5 for the swap;
    # fewest-first (the down one back, the slowed for the day) lost W + 2.5
    hand = k.rate * ((1 - _busy(k)) * (1.0 + 2.5 * W) + _busy(k) * 3.5) * DAY / N
    got = analytic([k], _pool(5), N)
    assert got.overlap == pytest.approx(hand, rel=1e-12)
    old = k.rate * ((1 - _busy(k)) * (W + 2.5) + _busy(k) * 3.5) * DAY / N
    assert got.overlap < 0.5 * old


@pytest.mark.parametrize("kind", [_unlike_down, _down_and_slowed])
def test_closed_form_and_monte_carlo_agree(kind):
    k = kind()
    s = 8 if k.down == 2 else 5
    a = analytic([k], _pool(s), N)
    mc = simulate([k], _pool(s), N, horizon="1y", trials=2000, seed=s)
    assert abs(mc.mean - a.mean) <= 2 * mc.mean_ci


def test_alike_instances_keep_the_fewest_first():
    # every down instance alike (worth 1), nothing slowed: the most instances back is the
    # most capacity, the order as before (3 and 5 spares: 3 free the 3, 8 both)
    k = Kind("host", "x", rate=0.05 / DAY, down=2, slow=0.0, units=8, restored=0.0,
             d_repair=DAY, d_swap=SWAP, hold=DAY, d_slow=DAY, each=(3, 5))
    assert k.steps == ((0, 0, 0), (3, 1, 0), (8, 2, 0))
    assert [k.backs(g) for g in range(3)] == [(0.0, 0.0), (0.5, 0.5), (1.0, 1.0)]


def test_alike_in_spares_unlike_in_worth(monkeypatch):
    # a lite-flat plane leaf's failure slows 8 instances; made here to swap two of them
    # on 1 spare each, one losing 0.5 instances' worth slowed, the other 0.125: as many
    # spares each (Kind.per 1 before, the first swapped first and counted as half the
    # slowed capacity back), now granted by capacity (Kind.each): 1 free swaps the 0.5,
    # 0.5 / 0.625 = 0.8 of the swapped capacity back
    from netmodel.study import availability_kinds as ak
    from netmodel.study import reliability_recovery as rr
    from netmodel.study.reliability_cluster import build_cluster
    from netmodel.study.reliability_recovery import SlowSwap
    from netmodel.study.reliability_spares import spare_pools

    c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    leaf = next(e for e in c.effects() if e.cls == "leaf")
    assert leaf.instances_down == 0 and len(leaf.slowed) == 8
    own = rr.slow_recovery   # failure_recovery's choice for the slowed, as the kinds read it

    def two(cluster, effect, placement="pod"):
        if effect is not leaf:
            return own(cluster, effect, placement)
        return SlowSwap("swap 2 of 8 slowed", 2, 0.625, 0.0, 1, 2, (1, 1), (0.125, 0.5))

    monkeypatch.setattr(rr, "slow_recovery", two)
    (k,) = ak.event_kinds(c, "pod", classes=["leaf"])
    assert (k.units, k.per, k.each, k.worths, k.slow_swapped) == (2, 0, (1, 1), (0.125, 0.5),
                                                                   0.625)
    assert k.steps == ((0, 0, 0), (1, 0, 1), (2, 0, 2))
    assert k.backs(1) == pytest.approx((0.8, 0.8), rel=1e-12)
    # 1 free, taken whole (busy B = a / (1 + a)): 0.5 slowed for the swap, the rest of
    # the slow-down for the day; busy, all of it for the day
    a = k.rate * k.hold
    busy = a / (1 + a)
    free = 0.5 * k.d_swap + (k.slow - 0.5) * k.d_slow
    # and, granted or not, all 8 restart first (their plane links went: NCCL has no
    # failover), each losing the rest of its worth, 8 - slow, for the swap's span
    assert (k.restarted, k.d_restart) == (8, k.d_swap)
    assert k.restart == pytest.approx(8 - k.slow, rel=1e-12)
    restart = (8 - k.slow) * k.d_swap
    hand = k.rate * ((1 - busy) * free + busy * k.slow * k.d_slow + restart) \
        / c.instances_total
    got = analytic([k], spare_pools(c, 1, "pod"), c.instances_total)
    assert got.overlap == pytest.approx(hand, rel=1e-12)
