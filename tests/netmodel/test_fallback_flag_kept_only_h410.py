"""The closed form's fallback flag names only approximations its result kept.

Pools one failure asks together are solved as one chain per cell's pool sizes; where one
cell's chain passes the limit the whole set is taken apart and every cell's chain is set
aside. A cell solved before it with every repair time taken as one (``one repair time``)
then left that name in ``Analytic.fallback`` although its chain was thrown away.

Hand case: an instance spanning groups 0 and 1 asks both pools of its cell at once; two
cells, pools of 2 + 2 and 5 + 5 spares, failures of three repair times. The 2 + 2 chain
has 46 states, 14 with one repair time; the 5 + 5 chain 812, 91 with one repair time (the
limits at which each is first solved). With the limit at 20 the first cell takes one
repair time and the second passes the limit: the result is the pools taken apart, the same
mean as at a limit of 1, where no chain is solved.
"""

from __future__ import annotations

from dataclasses import replace

from netmodel.study import availability_busy as ab
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.reliability_spares import SparePools

H = 30 * 86400.0


def _kind(x, group=0, hold=H, **kw):
    return Kind("host", "x", rate=x / hold, down=1, slow=0.0, units=1, restored=0.0,
                d_repair=hold, d_swap=600.0, hold=hold, d_slow=0.0, group=group, **kw)


KINDS = [_kind(9.0), replace(_kind(9.0, group=1, follows=True, joint=True), down=0),
         _kind(0.3, hold=2 * H), _kind(0.3, group=1, hold=3 * H)]
POOLS = SparePools("group", 14, 4, (2, 2, 5, 5), 2)


def test_a_chain_set_aside_is_not_named(monkeypatch):
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)
    monkeypatch.setattr(ab, "MAX_COUPLED_STATES", 1)
    apart = analytic(KINDS, POOLS, 100)
    assert apart.fallback == (ab.FALLBACK_APART,)
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 20)
    monkeypatch.setattr(ab, "MAX_COUPLED_STATES", 20)
    got = analytic(KINDS, POOLS, 100)
    assert got.mean == apart.mean   # the first cell's chain was set aside
    assert got.fallback == (ab.FALLBACK_APART,)


def test_a_chain_kept_is_named(monkeypatch):
    # with room for both cells' chains of one repair time, they are kept and named
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 100)
    monkeypatch.setattr(ab, "MAX_COUPLED_STATES", 100)
    got = analytic(KINDS, POOLS, 100)
    assert got.fallback == (ab.FALLBACK_ONE_HOLD_TOGETHER,)
    assert "(100 states of pools asked together)" in ab.fallback_words(got.fallback)
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 10_000)
    monkeypatch.setattr(ab, "MAX_COUPLED_STATES", 10_000)
    assert analytic(KINDS, POOLS, 100).fallback == ()
