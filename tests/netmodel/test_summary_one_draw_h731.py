"""The Monte Carlo reliability summary runs each placement's pools on one draw of the
failures (:class:`~netmodel.study.availability_mc_pools.PoolRuns`): the pool without
spares, the reference pools and the spares-needed search. It ran three whole
:func:`~netmodel.study.availability.availability` simulations (each with closed forms
the summary never read) and two searches, five draws of the same seed's failures. Every
field is checked here against the summary worked out as it was: ``availability()`` per
pool and ``spares_needed()`` per placement, bit for bit."""

from __future__ import annotations

import pytest

from netmodel.study import availability_mc as amc
from netmodel.study import availability_mc_pools as amp
from netmodel.study.availability import availability, parse_spares, spares_needed
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.reliability_summary import (
    SUMMARY_COLUMNS,
    ReliabilitySummary,
    _gpu_radius,
    reliability_summary,
)
from tests.netmodel.reliability_g2_helpers import shipped_cluster


def _as_before(c, *, spares="1%", threshold=0.99, quantile=0.999, horizon="1y", trials=200,
               seed=0) -> ReliabilitySummary:
    """The summary as it was worked out before the one draw (HEAD 2c4612cd)."""
    n = parse_spares(spares, c.gpus)
    hw, sw, rate = _gpu_radius(c)
    run = dict(cluster=c, horizon=horizon, trials=trials, seed=seed, threshold=threshold)
    base = availability(None, None, spares=0, placement="global", **run)
    ref = max((availability(None, None, spares=n, placement=p, **run)
               for p in ("pod", "global")), key=lambda a: a.mc.mean)
    best = None
    for p in ("pod", "global"):
        k = spares_needed(c, p, threshold=threshold, quantile=quantile, horizon=horizon,
                          trials=trials, seed=seed)
        if k is not None and (best is None or k < best[1]):
            best = (p, k)
    return ReliabilitySummary(
        scenario=c.scenario.label, model=c.model.name, phase=c.workload.phase, gpus=c.gpus,
        **c.parallelism.to_dict(), sms_down_per_gpu_failure_hw=hw,
        sms_down_per_gpu_failure_sw=sw, gpu_failures_per_year=rate * YEAR,
        availability=base.mc.mean, goodput_tokens_per_s_per_sm=base.goodput_per_sm,
        healthy_tokens_per_s_per_sm=base.healthy_per_sm, spares=n,
        spare_placement=ref.pools.placement, availability_with_spares=ref.mc.mean,
        goodput_tokens_per_s_per_sm_with_spares=ref.goodput_per_sm,
        spares_needed=None if best is None else best[1],
        spares_needed_placement=None if best is None else best[0], threshold=threshold,
        quantile=quantile, analytic_fallback=())


CASES = [
    ("lite-flat", 1024, {}),
    ("lite-flat", 1024, dict(spares="3%", threshold=0.995, trials=60, seed=5)),
    ("lite-ocs", 1024, dict(trials=80, seed=11)),
    ("h100-dgx", 1024, dict(spares=16, quantile=0.99, horizon="0.5y", trials=100, seed=3)),
]


@pytest.mark.parametrize(("scenario", "gpus", "kw"), CASES)
def test_every_field_as_before(scenario, gpus, kw, monkeypatch):
    c = shipped_cluster(scenario, gpus=gpus)
    before = _as_before(c, **kw)
    draws = []
    real = amc._draw

    def counted(*a, **k):
        draws.append(1)
        return real(*a, **k)

    monkeypatch.setattr(amp, "_draw", counted)   # the pools' runs
    monkeypatch.setattr(amc, "_draw", counted)   # simulate()'s
    now = reliability_summary(None, None, cluster=c, method="monte-carlo", **kw)
    for col in SUMMARY_COLUMNS:
        assert getattr(now, col) == getattr(before, col), col
    assert now == before
    assert len(draws) == 2   # one chunk of trials per placement, drawn once (it was 5)
    # the figures are Monte Carlo ones: not those of a pool with spares where it has none
    assert 0 < now.availability < now.availability_with_spares < 1


def test_a_run_of_several_chunks_as_before(monkeypatch):
    """Chunks drawn again for each ask of the search (a run past one chunk keeps no
    draw): the figures still as before."""
    c = shipped_cluster("lite-flat", gpus=1024)
    monkeypatch.setattr(amc, "CHUNK_EVENTS", 300)   # a handful of trials a chunk
    kw = dict(trials=40, seed=9)
    assert len(amc._plan(event_kinds(c, "global"), 40, YEAR, 9).chunks) > 1
    assert reliability_summary(None, None, cluster=c, method="monte-carlo", **kw) \
        == _as_before(c, **kw)
