"""Co-design crossovers: re-scoring equals recompiling, a crossover plugged back in
reproduces the baseline, more bandwidth never lowers the latency a Lite tolerates."""

from __future__ import annotations

import numpy as np
import pytest

from compute.memo import Lru
from netmodel.study import scenario_collectives as fs
from netmodel.study import scenario_fabric as sf
from netmodel.study.adjusted_comm import SLOPE_AT, AdjustedComm, hop_latency_slopes
from netmodel.study.compare import run_compare
from netmodel.study.crossovers import find_crossovers
from netmodel.study.fabric_search import fabric_search
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives


@pytest.mark.parametrize("name", ["h100-dgx", "lite-flat@Lite", "lite-ocs@Lite+BW",
                                  "lite-direct@Lite", "lite-hier@Lite"])
def test_rescoring_equals_recompiling(name):
    s = get_scenario(name)
    c = ScenarioCollectives(s)
    sizes = np.array([1e3, 1e6, 1e9])
    for hop, scale in ((2e-7, 0.5), (5e-6, 1.0), (3e-5, 4.0)):
        exact = ScenarioCollectives(s.with_param("adjust.hop_latency", hop)
                                    .with_param("adjust.bandwidth_scale", scale))
        slopes = hop_latency_slopes(s, c, {})
        fast = AdjustedComm(c, scale, hop, slopes)
        for op in ("all-reduce", "all-gather"):
            for g in (2, 8, 16):
                if g <= c.gpus:
                    # added latency never shortens a candidate (the scorer's pruning)
                    assert np.all(slopes(op, g) >= 0)
                    np.testing.assert_allclose(fast.collective_time(op, sizes, g),
                                               exact.collective_time(op, sizes, g),
                                               rtol=1e-12)


@pytest.mark.parametrize("name", ["h100-dgx", "lite-flat@Lite", "lite-ocs@Lite+BW",
                                  "lite-direct@Lite"])
def test_slopes_from_the_base_graph_equal_a_rebuilt_fabric(name, monkeypatch):
    """The slope model made from the base model's graph (no fabric, circuits or checks
    again) costs to the last bit what the scenario at SLOPE_AT per hop, built from
    scratch, does; and it is the one the slopes used."""
    s = get_scenario(name)
    at = s.with_param("adjust.hop_latency", SLOPE_AT)
    # the old path: nothing shared, all rebuilt
    monkeypatch.setattr(fs, "_SHARED", Lru(fs._SHARED_MAX))
    rebuilt = ScenarioCollectives(at)
    keys = [(op, g) for op in ("all-reduce", "all-gather") for g in (2, 8, 16)
            if g <= rebuilt.gpus]
    old = {k: rebuilt.parts(*k) for k in keys}
    # the new path, from a fresh cache
    monkeypatch.setattr(fs, "_SHARED", Lru(fs._SHARED_MAX))
    c = ScenarioCollectives(s)
    built = sf.instance_graph

    def no_second_fabric(scenario, graph, size, *args, **kwargs):
        assert scenario.adjust.hop_latency == 0, "the slope model built its fabric again"
        return built(scenario, graph, size, *args, **kwargs)

    monkeypatch.setattr(sf, "instance_graph", no_second_fabric)
    slopes = hop_latency_slopes(s, c, {})
    seeded = ScenarioCollectives(at)
    for op, g in keys:
        x = slopes(op, g)
        new = seeded.parts(op, g)
        for a, b in zip(old[(op, g)], new, strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(x, (old[(op, g)][0] - c.parts(op, g)[0]) / SLOPE_AT)
        # made from the base graph: its links are the base's plus the hop, exactly
        m, base = seeded.model(g), c.model(g).graph
        assert list(m.graph.edges) == list(base.edges)
        assert all(d["latency"] == base.edges[u, v]["latency"] + SLOPE_AT
                   for u, v, d in m.graph.edges(data=True))


@pytest.fixture(scope="module")
def crossed():
    fab = run_compare(["GPT-3-175B"], ["h100-dgx", "lite-flat@Lite", "lite-flat@Lite+MemBW",
                                       "lite-flat@Lite+BW"], ["decode"])
    return fab, find_crossovers(fab)


def test_a_crossover_reproduces_the_baseline(crossed):
    fab, cross = crossed
    base = fab.row("GPT-3-175B", "h100-dgx@H100-SXM", "decode").tokens_per_s_per_sm
    found = [r for r in cross.rows if r.bandwidth_bound == "found"]
    assert found
    for r in found:
        s = get_scenario(f"lite-flat@{r.gpu}")
        at = s.with_param("adjust.bandwidth_scale", r.bandwidth_to_match / r.own_bandwidth)
        got = fabric_search("GPT-3-175B", at, "decode").best.tokens_per_s_per_sm
        assert base <= got <= base * 1.01
        # and a little less bandwidth falls short: it is the edge, not any point above it
        below = s.with_param("adjust.bandwidth_scale",
                             0.97 * r.bandwidth_to_match / r.own_bandwidth)
        assert fabric_search("GPT-3-175B", below, "decode").best.tokens_per_s_per_sm < base


def test_more_bandwidth_never_lowers_the_tolerated_latency(crossed):
    _, cross = crossed
    by = {r.gpu: r for r in cross.rows}
    mem, bw = by["Lite+MemBW"], by["Lite+BW"]      # same GPU, twice the network
    assert mem.latency_bound in ("found", "above range")
    assert bw.hop_latency_to_match >= mem.hop_latency_to_match
    # and the bandwidth multiple is a property of the GPU, not of how it was shipped
    assert bw.bandwidth_to_match == pytest.approx(mem.bandwidth_to_match, rel=0.01)
    # a variant that does not match at its own bandwidth tolerates no latency
    assert by["Lite"].latency_bound == "no match" and by["Lite"].hop_latency_to_match is None


@pytest.mark.parametrize("model, scenario, phase", [
    ("GPT-3-175B", "lite-flat@Lite+MemBW", "decode"),
    ("Llama-3-70B", "lite-ocs@Lite+BW", "decode"),
    ("Llama-3-70B", "lite-hier@Lite", "prefill"),
])
def test_the_grid_scorer_equals_searching_again(model, scenario, phase):
    """Re-scoring a search's grid gives the search's own best tokens/s/SM to the last
    bit, at other bandwidths and per-hop latencies (feasible or not)."""
    from netmodel.study.grid_rescore import GridScorer

    s = get_scenario(scenario)
    c = ScenarioCollectives(s)
    slopes = hop_latency_slopes(s, c, {})

    def searched(scale, hop, keep_grid=False):
        return fabric_search(model, s, phase, collectives=c, keep_grid=keep_grid,
                             comm=AdjustedComm(c, scale, hop, slopes))

    first = searched(1.0, 0.0, keep_grid=True)
    scorer = GridScorer.build(first.search.grid, c, lambda: slopes, 1.0, 0.0,
                               first.best.tokens_per_s_per_sm if first.best else None)
    assert scorer is not None
    # the collectives of the TP degrees that fit in memory, and no other, are costed
    grid = first.search.grid
    fitting = {t for t, f in zip(grid.tps, grid.fits.any(axis=1), strict=True) if f and t > 1}
    assert {size for _, size in scorer.keys} == fitting
    seen, learnt = set(), None
    for scale, hop in ((0.125, 0.0), (0.7, 0.0), (3.0, 0.0), (64.0, 0.0), (1.0, 2e-7),
                       (2.5, 4e-6), (1.0, 1e-4), (0.125, 1e-3)):
        r = searched(scale, hop)
        want = r.best.tokens_per_s_per_sm if r.best else None
        assert scorer(scale, hop) == want           # exactly, not approximately
        seen.add(want is None)
        if hop and learnt is None:
            learnt = int(scorer.learnt.sum())
    assert seen == {False, True}    # both feasible and infeasible points were checked
    if phase == "decode":  # at a small per-hop latency, slopes measured only for the
        assert 0 < learnt < len(scorer.keys)   # configurations that may be the best


def test_the_grid_scorer_declines_what_it_does_not_reproduce():
    """Collectives hidden behind their GEMMs change how stages add up: the scorer is not
    built, and the crossovers search every point as before (same answer as a search)."""
    from compute.roofline_options import RooflineOptions
    from netmodel.study.grid_rescore import GridScorer

    s = get_scenario("lite-flat@Lite")
    c = ScenarioCollectives(s)
    options = RooflineOptions(overlap_collectives=True)
    r = fabric_search("GPT-3-175B", s, "decode", collectives=c, keep_grid=True,
                      comm=AdjustedComm(c), options=options)
    assert GridScorer.build(r.search.grid, c, None, 1.0, 0.0,
                             r.best.tokens_per_s_per_sm) is None
    fab = run_compare(["GPT-3-175B"], ["h100-dgx", "lite-flat@Lite"], ["decode"],
                      options=options)
    row = find_crossovers(fab, options=options, latency=False).rows[0]
    assert row.bandwidth_bound == "found"
    at = s.with_param("adjust.bandwidth_scale", row.bandwidth_to_match)
    got = fabric_search("GPT-3-175B", at, "decode", options=options).best
    assert got.tokens_per_s_per_sm >= row.baseline_tokens_per_s_per_sm


def test_a_grid_checked_on_one_fabric_scores_another_exactly():
    """The grid apart from its collective times does not depend on the fabric: scored
    with another fabric's collectives it gives that fabric's own search, to the last
    bit (find_crossovers starts every fabric after the first from it)."""
    from netmodel.study.grid_rescore import GridScorer

    first, other = get_scenario("lite-flat@Lite+BW"), get_scenario("lite-ocs@Lite+BW")
    cf, co = ScenarioCollectives(first), ScenarioCollectives(other)
    assert cf.gpus == co.gpus
    grid = fabric_search("GPT-3-175B", first, "decode", collectives=cf, keep_grid=True,
                         comm=AdjustedComm(cf)).search.grid
    slopes = hop_latency_slopes(other, co, {})
    scorer = GridScorer(grid, co, lambda: slopes)
    for scale, hop in ((0.125, 0.0), (1.0, 0.0), (5.0, 0.0), (1.0, 3e-6), (2.0, 1e-5)):
        r = fabric_search("GPT-3-175B", other, "decode", collectives=co,
                          comm=AdjustedComm(co, scale, hop, slopes))
        assert scorer(scale, hop) == (r.best.tokens_per_s_per_sm if r.best else None)


def test_a_grid_layout_shared_across_fabrics_scores_as_the_grid():
    """A scorer made from the layout another fabric's scorer worked out (what
    find_crossovers does for every fabric after the first) scores every point exactly as
    one made from the grid itself, and learns the same slopes."""
    from netmodel.study.grid_rescore import GridScorer

    first, other = get_scenario("lite-flat@Lite+MemBW"), get_scenario("lite-hier@Lite+MemBW")
    cf, co = ScenarioCollectives(first), ScenarioCollectives(other)
    grid = fabric_search("GPT-3-175B", first, "decode", collectives=cf, keep_grid=True,
                         comm=AdjustedComm(cf)).search.grid
    slopes_f, slopes_o = hop_latency_slopes(first, cf, {}), hop_latency_slopes(other, co, {})
    layout = GridScorer(grid, cf, lambda: slopes_f).layout
    own = GridScorer(grid, co, lambda: slopes_o)
    shared = GridScorer(None, co, lambda: slopes_o, layout)   # never reads the grid
    assert shared.layout is layout and own.layout is not layout
    got = []
    for scale, hop in ((0.125, 0.0), (1.0, 0.0), (8.0, 0.0), (1.0, 1e-9), (1.0, 2e-6),
                       (0.5, 3e-5), (1.0, 1e-4)):
        want = own(scale, hop)
        assert shared(scale, hop) == want           # exactly
        got.append(want)
    assert len(set(got)) >= 5                       # the points differ from each other
    assert np.array_equal(shared.learnt, own.learnt)
    assert np.array_equal(shared.slope, own.slope, equal_nan=True)
