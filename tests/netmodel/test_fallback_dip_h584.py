"""The closed form dips where it passes the spare chain's limit and takes independent asks,
where the model it solves (and its Monte Carlo) gains from every spare.

Llama-3-8B prefill on 2,048 lite-flat GPUs (TP 1, 2,048 instances), vendor repair (11.9
days), global spares: a host takes 32 instances down and re-creates as many as the free
spares hold (one each, :attr:`Kind.pieces` 32), a Lite failure takes one. Up to 25 spares
the pool's chain (every split of the busy spares among the failures in progress) is under
:data:`~netmodel.study.availability_analytic.MAX_SEQUENTIAL_STATES`; at 26 it is not, every
repair time is one already (so the one-hold chain is no smaller) and the closed form takes
the host's 32 instances as 32 independent asks of one spare (Kaufman-Roberts). That spreads
a host's hold of the whole pool over phantom single holds: the pool reads busier when a
host comes (it is refused more of its instances) and rarely full when a Lite failure
comes (it waits for its repair less), and the mean drops 4.4e-4 at the step where the
Monte Carlo, on the same failures, gains 1.19e-4. A known approximation (the table says
it: ``fallback``), pinned here as a strict xfail: a better fallback is left open.
"""

from __future__ import annotations

import math

import pytest

from netmodel.study.availability import _components_per_kind
from netmodel.study.availability_analytic import FALLBACK_INDEPENDENT, analytic
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_catalog import catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import spare_pools

_RUN: dict = {}


def _run():
    if not _RUN:
        c = build_cluster("lite-flat", "Llama-3-8B", "prefill", gpus=2048,
                          catalog_=catalog().with_(repair="vendor"))
        kinds = event_kinds(c, "global")
        comps = _components_per_kind(c, kinds)
        _RUN.update(c=c, kinds=kinds, an={
            n: analytic(kinds, spare_pools(c, n, "global"), c.instances_total,
                        components=comps)
            for n in (25, 26)})
    return _RUN


def test_the_case_and_where_the_fallback_starts():
    r = _run()
    c, an = r["c"], r["an"]
    assert (c.tp, c.instances_total) == (1, 2048)
    host = next(k for k in r["kinds"] if k.cls == "host")
    assert (host.down, host.pieces, host.grain) == (32, 32, 1)
    assert len({k.hold for k in r["kinds"] if k.units > 0}) == 1   # one repair time
    assert an[25].fallback == ()
    assert an[26].fallback == (FALLBACK_INDEPENDENT,)
    assert an[25].mean == pytest.approx(0.997353, abs=1e-6)
    assert an[26].mean == pytest.approx(0.996917, abs=1e-6)


def test_the_monte_carlo_gains_from_the_26th_spare():
    r = _run()
    c, kinds, an = r["c"], r["kinds"], r["an"]
    runs = [simulate(kinds, spare_pools(c, n, "global"), c.instances_total, trials=100,
                     seed=0) for n in (25, 26)]
    d = runs[1].trial_means - runs[0].trial_means      # the same failures, trial by trial
    ci = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
    assert d.mean() > 10 * ci
    assert d.mean() == pytest.approx(1.19e-4, rel=0.1)
    # the exact chain at 25 agrees with it; the fallback at 26 is far below it
    assert abs(runs[0].mean - an[25].mean) < 4 * runs[0].mean_ci
    assert runs[1].mean - an[26].mean > 2 * runs[1].mean_ci


@pytest.mark.xfail(strict=True, reason="the independent-asks fallback past the chain's "
                   "limit reads a host's grant of the whole pool as independent single "
                   "asks: 25 -> 26 global spares 0.997353 -> 0.996917")
def test_the_closed_form_gains_from_the_26th_spare():
    an = _run()["an"]
    assert an[26].mean >= an[25].mean
