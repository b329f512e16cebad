"""The Monte Carlo reads the down-first rule from ``Kind.backs``, the closed form's rule.

A failure granted in part that downs some instances and swaps slowed ones gives its
spares to the down first (``Kind.backs``). The closed form reads that from ``Kind.backs``;
the Monte Carlo typed the same rule again (``min(got, down) / down``, ``max(got - down, 0) /
slowed``), so a change to the one would leave the other behind. Here ``Kind.backs`` is
replaced by the even spread (each piece alike, ``granted / pieces`` for both): the Monte
Carlo must then equal its run of the same draws with the kind's pieces taken as alike
(``down_pieces`` 0).
"""

from __future__ import annotations

import pytest

from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_spares import SparePools

DAY = 86400.0


def _run(spares):
    # 2 down and 2 slowed by half, 8 spares each (4 pieces); 1-day repairs
    k = Kind("host", "x", rate=0.05 / DAY, down=2, slow=1.0, units=32, restored=0.1,
             d_repair=DAY, d_swap=600.0, hold=DAY, d_slow=DAY, slow_swapped=1.0,
             slow_restored=0.2, per=8)
    r = simulate([k], SparePools("global", spares, 1, (spares,)), 50, horizon="1y",
                 trials=200, seed=spares)
    return r.mean, r.waits_for_repair_per_year


@pytest.mark.parametrize("spares", [8, 16, 24])
def test_the_monte_carlo_follows_kind_backs(monkeypatch, spares):
    down_first = _run(spares)
    monkeypatch.setattr(Kind, "backs", lambda self, granted: (granted / self.pieces,) * 2)
    even = _run(spares)
    monkeypatch.setattr(Kind, "down_pieces", property(lambda self: 0))
    alike = _run(spares)
    assert even == pytest.approx(alike, rel=1e-12, abs=1e-15)
    assert down_first[0] > even[0]   # the down back first lose less (a slowed one serves)
