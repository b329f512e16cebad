"""A failure whose instances take different numbers of spares is granted in part too.

Where every instance a failure takes down (or slows and would swap) takes the same
``per`` spares, a failure short of free spares brings back as many whole instances as
they hold, the down first. Where they took different numbers (a host taking 4 members
of some spread instances and 8 of others; down instances re-created beside slowed ones
substituted) the ask was all or nothing, and pod substitution short of sites fell to
re-creating whole instances. Now (``Kind.each``, ``Kind.steps``) the spares go to the
down instances first, the fewest spares first (the most instances back), as far as they
reach, then what is left to the slowed likewise; the closed form and the Monte Carlo
both read the steps from the kind, and pod substitution short of sites substitutes the
instances in the same order.

The hand kind: 2 instances down replacing 3 and 5 members, 1 slowed by half that its
swap serves whole on 2 spares (10 in all), 1-day repairs, holds and slow-downs, 600 s
swaps, restored nothing, 0.05 failures a day, one pool, 50 instances. Each pool size
below is taken whole by a failure finding it free, so the next finds none until the
repair: busy a share ``B = a / (1 + a)``, ``a = rate x hold`` (Erlang's loss formula for
one server), and then every instance waits (2.5 instance-days).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.study import reliability_recovery as rr
from netmodel.study import reliability_spares as rs
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import SparePools
from netmodel.study.scenario_catalog import get_scenario

DAY, SWAP, N = 86400.0, 600.0, 50
YEAR = 365.25 * DAY
W = SWAP / DAY


def _kind():
    return Kind("host", "x", rate=0.05 / DAY, down=2, slow=0.5, units=10, restored=0.0,
                d_repair=DAY, d_swap=SWAP, hold=DAY, d_slow=DAY, slow_swapped=0.5,
                each=(3, 5, 2))


def _pool(s):
    return SparePools("global", s, 1, (s,))


def test_the_steps_by_hand():
    k = _kind()
    assert (k.pieces, k.grain, k.down_pieces) == (3, 2, 2)
    # free spares -> (taken, down back, slowed swapped): 2 swaps the slowed (the 3 does
    # not fit); 3 the first down (the slowed's 2 no longer fits beside it); 5 the first
    # down and the slowed (the second down's 5 does not fit beside the 3); 8 both down;
    # 10 all
    assert [k.steps[k.granted(f)] for f in (0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 99)] == [
        (0, 0, 0), (0, 0, 0), (2, 0, 1), (3, 1, 0), (3, 1, 0), (5, 1, 1), (5, 1, 1),
        (8, 2, 0), (8, 2, 0), (10, 2, 1), (10, 2, 1)]
    assert [k.take(f) for f in (1, 2, 4, 7, 9, 12)] == [0, 2, 3, 5, 8, 10]
    # shares back (down, slowed) and instances refused at each step
    assert [k.backs(s) for s in range(6)] == [(0.0, 0.0), (0.0, 1.0), (0.5, 0.0),
                                               (0.5, 1.0), (1.0, 0.0), (1.0, 1.0)]
    assert [k.refused(s) for s in range(6)] == [3, 2, 2, 1, 1, 0]
    assert k.to_dict()["each"] == [3, 5, 2] and "per" not in k.to_dict()


@pytest.mark.parametrize(("spares", "per_failure_days"), [
    # instance-days a failure finding the pool free loses (down: the swap where back,
    # else the repair; the slowed half an instance for the swap where swapped, else the
    # day); all or nothing every pool below 10 lost 2.5 each time
    (2, 2 + 0.5 * W),            # the slowed swapped, both down for the repair
    (3, W + 1 + 0.5),            # the 3-member instance back, the other down, slowed
    (5, W + 1 + 0.5 * W),        # the 3 back and the slowed swapped, the 5 down
    (8, 2 * W + 0.5),            # both down back, the slowed for the day
    (10, 2.5 * W),               # all back
])
def test_loss_by_hand(spares, per_failure_days):
    k = _kind()
    a = k.rate * k.hold
    busy = a / (1 + a)
    hand = k.rate * ((1 - busy) * per_failure_days + busy * 2.5) * DAY / N
    got = analytic([k], _pool(spares), N)
    assert got.overlap == pytest.approx(hand, rel=1e-12)
    # a down instance waits unless both are back: always below 8 spares, else when busy
    waits = k.rate * YEAR * (busy if spares >= 8 else 1.0)
    assert got.waits_for_repair_per_year == pytest.approx(waits, rel=1e-12)


@pytest.mark.parametrize("spares", [3, 5, 8])
def test_closed_form_and_monte_carlo_agree(spares):
    k = _kind()
    a = analytic([k], _pool(spares), N)
    mc = simulate([k], _pool(spares), N, horizon="1y", trials=2000, seed=spares)
    assert abs(mc.mean - a.mean) <= 2 * mc.mean_ci
    sigma = (max(a.waits_for_repair_per_year, 1.0) / 2000) ** 0.5
    assert abs(mc.waits_for_repair_per_year - a.waits_for_repair_per_year) <= 4 * sigma


def test_both_read_the_steps_from_the_kind(monkeypatch):
    # the steps made to serve the slowed first (as though its 2 came before the down's
    # 3): at 3 free the slowed is swapped (2 taken) where the first down came back, and
    # both the closed form and the Monte Carlo follow (the same seed and draws), so
    # neither reads a rule of its own
    k = _kind()
    before = analytic([k], _pool(3), N), simulate([k], _pool(3), N, horizon="1y",
                                                  trials=200, seed=3)
    monkeypatch.setattr(Kind, "steps", property(
        lambda self: ((0, 0, 0), (2, 0, 1), (5, 1, 1), (10, 2, 1))))
    assert (k.take(3), k.backs(k.granted(3))) == (2, (0.0, 1.0))
    a = analytic([k], _pool(3), N)
    mc = simulate([k], _pool(3), N, horizon="1y", trials=200, seed=3)
    # by hand: a failure finding the pool free now loses 2 + 0.5 W instance-days
    busy = k.rate * k.hold / (1 + k.rate * k.hold)
    hand = k.rate * ((1 - busy) * (2 + 0.5 * W) + busy * 2.5) * DAY / N
    assert a.overlap == pytest.approx(hand, rel=1e-12)
    assert before[0].overlap != pytest.approx(hand, rel=1e-3)
    assert mc.mean != before[1].mean
    assert abs(mc.mean - a.mean) <= 3 * mc.mean_ci


# a host of lite-flat with instances placed spread takes 4 members of each of the 8
# TP-16 instances; made here to take 4 more of every other one (8, 4, 8, 4, ...: 48 to
# replace) on the cell's 16 free ports


@pytest.fixture
def spread_mixed(monkeypatch):
    c = build_cluster(replace(get_scenario("lite-flat"), placement="spread"),
                      "Llama-3-70B", "decode")
    e = next(x for x in c.effects() if x.cls == "host")
    own = rr._replace

    def more(cluster, comp, effect):
        return [(inst, gone + ([m for m in inst if m not in gone][:4] if j % 2 == 0
                               else []))
                for j, (inst, gone) in enumerate(own(cluster, comp, effect))]
    monkeypatch.setattr(rr, "_replace", more)
    return c, e


def test_substitution_short_of_sites_takes_the_fewest_first(spread_mixed):
    c, e = spread_mixed
    assert (rs.capacity(c, "pod"), c.instance_gpus, e.instances_down) == (16, 16, 8)
    rec = rr.recovery(c, e, "pod")
    # fewest first: the four instances of 4 fill the 16 sites (in the instances' order
    # 8 + 4 = 12 and the next 8 does not fit: 2); before, all or nothing, it fell to
    # re-creating 16 // 16 = 1 instance ('re-create 1 of 8 on 16 spares', 128 units)
    assert rec.path.startswith("substitute 16 of 48 spares (4 of 8 instances")
    assert (rec.units, rec.per, rec.each) == (48, 0, (8, 4) * 4)
    assert rec.restored == 0.0
    (k,) = event_kinds(c, "pod", classes=["host"])
    assert (k.units, k.per, k.each, k.pieces, k.grain) == (48, 0, (4,) * 4 + (8,) * 4, 8, 4)


@pytest.mark.parametrize(("spares", "back"), [(16, 4), (12, 3), (10, 2), (3, 0)])
def test_spread_host_loss_by_hand(spread_mixed, spares, back):
    # a failure finding s free brings back the instances of 4 it holds, floor(s / 4) up
    # to 4 (none of 8 fits beside them below 24), the other 8 - back after the repair; it
    # leaves fewer than 4 free, so the next finds none until its repair: busy B = a / (1
    # + a), a = rate x hold, and all 8 wait. First-order loss over the 8 instances. All
    # or nothing (before) a host lost 8 repairs at every pool but 16 (1 re-created)
    c, _ = spread_mixed
    (k,) = event_kinds(c, "pod", classes=["host"])
    a = k.rate * k.hold
    busy = a / (1 + a) if back else 0.0
    hand = k.rate * ((1 - busy) * (back * k.d_swap + (8 - back) * k.d_repair)
                     + busy * 8 * k.d_repair) / 8
    got = analytic([k], rs.spare_pools(c, spares, "pod"), c.instances_total)
    assert got.overlap == pytest.approx(hand, rel=1e-12)


def test_past_the_chain_limit_too(monkeypatch):
    # rare failures (0.01 a year): the pool of 5 is free at almost every one, so the 3
    # comes back and the slowed is swapped, the 5 waits: a third of the instances
    # refused, (W + 1 + 0.5 W) instance-days a failure, every failure a wait; the same
    # from the chain and, past its limit, from the recursion over the spares busy
    from netmodel.study import availability_busy as ab

    k = replace(_kind(), rate=0.01 / YEAR)
    hand = k.rate * (W + 1 + 0.5 * W) * DAY / N
    chain = analytic([k], _pool(5), N)
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)
    fallback = analytic([k], _pool(5), N)
    assert (chain.fallback, fallback.fallback) == ((), ("the spares busy alone",))
    for a in (chain, fallback):
        assert a.blocking[0] == pytest.approx(1 / 3, rel=1e-3)
        assert a.overlap == pytest.approx(hand, rel=1e-3)
        assert a.waits_for_repair_per_year == pytest.approx(k.rate * YEAR, rel=1e-3)
