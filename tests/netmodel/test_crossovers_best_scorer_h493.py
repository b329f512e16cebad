"""circuits = "best": the crossovers re-score a search's grid with the layouts chosen at
each bandwidth scale and per-hop latency (BestScorer), as searching again gives, to the
last bit, keyed by each group size's chosen layout (h493)."""

import numpy as np
import pytest

from compute.search import DEFAULT_MAX_BATCH
from netmodel.study.adjusted_comm import AdjustedComm
from netmodel.study.crossovers import _Tokens
from netmodel.study.fabric_search import fabric_search
from netmodel.study.grid_rescore import BestScorer, ChosenLayouts
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

SCENARIO = "lite-ocs@Lite+BW"   # ships circuits = "best"


@pytest.fixture(scope="module")
def coll():
    s = get_scenario(SCENARIO)
    assert s.circuits == "best"
    return s, ScenarioCollectives(s)


def _searched(s, c, model, phase, scale, hop, keep_grid=False):
    return fabric_search(model, s, phase, collectives=c, keep_grid=keep_grid,
                         comm=AdjustedComm(c, scale, hop))


@pytest.mark.parametrize("model, phase", [("Llama-3-70B", "decode"),
                                          ("GPT-3-175B", "decode")])
def test_best_scorer_equals_searching_again(coll, model, phase):
    s, c = coll
    first = _searched(s, c, model, phase, 1.0, 0.0, keep_grid=True)
    want0 = first.best.tokens_per_s_per_sm if first.best else None
    scorer = BestScorer.build(first.search.grid, c, 1.0, 0.0, want0)
    assert scorer is not None
    for scale, hop in ((1.0, 0.0), (0.125, 0.0), (3.0, 0.0), (1e-4, 0.0), (1.0, 2e-7),
                       (2.5, 4e-6), (0.125, 1e-3)):
        r = _searched(s, c, model, phase, scale, hop)
        want = r.best.tokens_per_s_per_sm if r.best else None
        assert scorer(scale, hop) == want, (scale, hop)   # exactly


def test_the_key_is_each_sizes_chosen_layout(coll):
    """At 1e-4 of the links' bandwidth the rings of 24 and 32 GPUs beat their 4x6 and
    4x8 tori (bandwidth-bound: the ring's all-reduce moves the least per link), chosen
    at full bandwidth: the grid scored with the layouts chosen there equals a search's
    grid there, and differs from the grid scored with the layouts chosen at full
    bandwidth (a key that ignored the links would reuse those)."""
    s, c = coll
    model, phase = "GPT-3-175B", "decode"   # fits in memory at TP 24 and 32
    first = _searched(s, c, model, phase, 1.0, 0.0, keep_grid=True)
    grid = first.search.grid
    scorer = BestScorer.build(grid, c, 1.0, 0.0,
                               first.best.tokens_per_s_per_sm if first.best else None)
    assert scorer is not None and scorer.sizes == [24, 32]
    full = ChosenLayouts(c, 1.0, 0.0).chosen(scorer.sizes)
    thin = ChosenLayouts(c, 1e-4, 0.0).chosen(scorer.sizes)
    assert full == ((24, "torus"), (32, "torus")) and thin == ((24, "ring"), (32, "ring"))
    scorer(1e-4, 0.0)
    assert set(scorer._scorers) == {full, thin}
    there = _searched(s, c, model, phase, 1e-4, 0.0, keep_grid=True).search.grid
    fits = scorer.layout.fits
    got = scorer._scorers[thin].times(1e-4, 0.0)[0]
    stale = scorer._scorers[full].times(1e-4, 0.0)[0]
    assert np.array_equal(got, there.network_time[:, fits])
    assert not np.array_equal(stale, there.network_time[:, fits])


def test_tokens_search_once_for_best(coll, monkeypatch):
    """_Tokens searches a best scenario's grid once, then re-scores it."""
    from types import SimpleNamespace

    s, c = coll
    calls = []
    t = _Tokens(SimpleNamespace(model="Llama-3-70B", phase="decode"), s, c,
                DEFAULT_MAX_BATCH, {},
                None, None, "auto")
    real = t.search
    monkeypatch.setattr(t, "search", lambda *a, **k: calls.append(a) or real(*a, **k))
    values = [t(scale, hop) for scale, hop in ((1.0, 0.0), (0.5, 0.0), (2.0, 1e-6))]
    assert len(calls) == 1 and isinstance(t.scorer, BestScorer)
    for (scale, hop), v in zip(((1.0, 0.0), (0.5, 0.0), (2.0, 1e-6)), values, strict=True):
        r = real(scale, hop)
        assert v == (r.best.tokens_per_s_per_sm if r.best else None)
