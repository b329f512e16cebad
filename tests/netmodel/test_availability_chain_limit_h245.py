"""Past the chain's state limit the closed form keeps one failure's asks together (h245).

The pools a failure asks more than once, or with others, are a Markov chain of the failures
in progress by repair time and the spares each holds (:func:`_chain`); past
MAX_SEQUENTIAL_STATES states it fell back to independent arrivals (Kaufman-Roberts, the
pools apart), which misses that one failure's own asks refuse each other. At the limit the
results jumped, so that more spares read worse: a pool asked twice by one failure waited
119.16 times a year with 26 spares (7,840 states) and 122.85 with 28 (10,200); two pools
asked together, mean 0.97502 with 9 each and 0.96911 with 10. Now the chain with every
repair time taken as one (each class's offered load kept: a state is the spares each
failure holds, a few hundred) stands between: exact where a failure's grant is one size.
"""

from dataclasses import replace

import pytest

from netmodel.study import availability_analytic as aa
from netmodel.study import availability_busy as ab
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.reliability_spares import SparePools

H = 30 * 86400.0


def _kind(x, units, group=0, hold=H, **kw):
    """A kind offering ``x`` Erlangs (failures in progress) of ``units`` spares."""
    return Kind("host", "x", rate=x / hold, down=1, slow=0.0, units=units, restored=0.0,
                d_repair=hold, d_swap=600.0, hold=hold, d_slow=0.0, group=group, **kw)


def test_one_size_grants_past_the_limit_are_erlang_b(monkeypatch):
    # two failure kinds of different repair times, each asking a pool of 2 for 1 then 1:
    # from an empty pool both are granted, from a full one neither, so the pool holds 0 or
    # 2 (an Erlang loss system of one server, insensitive to the holds): B = x / (1 + x),
    # x = x1 + x2. Past a limit of 2 states (this chain has 3: one per repair time)
    x1, x2 = 0.3, 0.45
    kinds = [_kind(x1, 1), _kind(x1, 1, follows=True),
             _kind(x2, 1, hold=3 * H), _kind(x2, 1, hold=3 * H, follows=True)]
    pools = SparePools("group", 2, 1, (2,), 1)
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 2)
    b = (x1 + x2) / (1 + x1 + x2)
    # old: independent arrivals of 1 spare each, Erlang B(2, 1.5) = 0.3103 for all 4
    assert analytic(kinds, pools, 100).blocking == pytest.approx((b,) * 4, rel=1e-12)


@pytest.fixture
def flag_unread(monkeypatch):
    """The closed forms without their ``threshold_low`` flag's bound (reported False), which
    the tests below read not and which was half their time (it solves chains of holdings of
    its own; test_threshold_low_* pin it): blocking, fallback, mean and waits are worked
    out before it and apart from it, the same floats."""
    monkeypatch.setattr(aa, "_threshold_low", lambda *args, **kw: False)


def _one_pool():
    # one failure kind asking the pool for 1 then 1, others of 1 and 2 spares, 3 repair
    # times: 7,840 states with 26 spares, 10,200 with 28, 13,056 with 30
    return [_kind(10.0, 1), _kind(10.0, 1, follows=True), _kind(10.0, 1, hold=2 * H),
            _kind(10.0, 2, hold=3 * H)]


def test_more_spares_never_read_worse_across_the_limit(monkeypatch, flag_unread):
    # across the limit of 10,000 states this was written at (26 spares within, 28 and 30
    # past): at 30,000 all three are solved whole and none crosses it
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 10_000)
    kinds = _one_pool()
    runs = {n: analytic(kinds, SparePools("group", n, 1, (n,), 1), 100) for n in (26, 28, 30)}
    waits = [runs[n].waits_for_repair_per_year for n in (26, 28, 30)]
    means = [runs[n].mean for n in (26, 28, 30)]
    # old: waits 119.16, 122.85, 114.18 a year; means 0.80087, 0.82643, 0.84023
    assert [runs[n].fallback for n in (26, 28, 30)] == [(), *[(ab.FALLBACK_ONE_HOLD,)] * 2]
    assert waits[0] > waits[1] > waits[2]
    assert means[0] < means[1] < means[2]
    # against the whole chain (the limit raised: 10,200 states)
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 10**6)
    exact = analytic(kinds, SparePools("group", 28, 1, (28,), 1), 100)
    # old: the second ask's blocking 0.373 where the chain says 0.539, waits 10.6% high
    assert runs[28].blocking == pytest.approx(exact.blocking, abs=0.02)
    assert runs[28].waits_for_repair_per_year == pytest.approx(
        exact.waits_for_repair_per_year, rel=0.01)
    assert runs[28].mean == pytest.approx(exact.mean, abs=2e-3)


def test_two_pools_asked_together_across_the_limit(monkeypatch, flag_unread):
    # an instance spanning groups 0 and 1 (9 Erlangs of failures asking 1 spare of each
    # pool), each group's own failures of other repair times (0.3 Erlangs each): 7,942
    # states with 9 spares a pool, 12,298 with 10 (the limit was 10,000 while GMRES solved
    # the chain), 26,663 with 12, 37,688 with 13 (the limit was 30,000, one pool's, until
    # its own), 93,993 with 16, 123,234 with 17 (past MAX_COUPLED_STATES, 100,000)
    kinds = [_kind(9.0, 1), replace(_kind(9.0, 1, group=1, follows=True, joint=True), down=0),
             _kind(0.3, 1, hold=2 * H), _kind(0.3, 1, group=1, hold=3 * H)]
    sixteen, seventeen = (analytic(kinds, SparePools("group", 2 * n, 2, (n, n), 2), 100)
                          for n in (16, 17))
    # old: 0.975023 -> 0.969111 at 9 -> 10 (pools apart past the limit)
    assert sixteen.fallback == ()
    assert seventeen.fallback == (ab.FALLBACK_ONE_HOLD_TOGETHER,)
    assert sixteen.mean < seventeen.mean
    # against the whole chain with the limit raised (123,234 states): 0.999116 (one repair
    # time: 0.999100); at 13 spares 0.993149, spanning blocking 0.07171 (one repair time:
    # 0.992970, 0.07370); at 10 spares 0.980815667, spanning blocking 0.2008340, the one
    # repair time's 0.98023 (h363: were pins of those)
    monkeypatch.setattr(ab, "MAX_COUPLED_STATES", 10**6)
    exact = analytic(kinds, SparePools("group", 34, 2, (17, 17), 2), 100)
    assert exact.fallback == ()
    assert seventeen.mean == pytest.approx(exact.mean, abs=1e-3)
    assert seventeen.blocking[0] == pytest.approx(exact.blocking[0], abs=0.01)
    assert sixteen.mean < exact.mean
