"""SLO search: best = the brute-force optimum over the grid; infeasible results say why."""

import math

import pytest

from compute.comm import NoCommunication
from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import derive_gpu, get_gpu
from compute.phases import Slo
from compute.search import pareto_front, search


def brute_force(model, gpu, phase, tps, max_batch, slo=None):
    best = None
    for t in tps:
        for b in range(1, max_batch + 1):
            r = evaluate(model, gpu, tp=t, batch=b, phase=phase, slo=slo or Slo())
            if r.feasible and (best is None or r.tokens_per_s_per_sm > best.tokens_per_s_per_sm):
                best = r
    return best


@pytest.mark.parametrize("model, gpu, phase", [
    ("Llama-3-70B", "H100-SXM", "decode"),
    ("Llama-3-8B", "Lite", "prefill"),
])
def test_search_matches_a_loop_over_single_evaluations(model, gpu, phase):
    r = search(model, gpu, phase, tp=[1, 2, 4, 8], max_batch=48)
    ref = brute_force(model, gpu, phase, [1, 2, 4, 8], 48)
    assert (r.best.tp, r.best.batch) == (ref.tp, ref.batch)
    assert r.best.tokens_per_s_per_sm == pytest.approx(ref.tokens_per_s_per_sm, rel=1e-12)


def test_search_tries_every_tp_dividing_the_heads_up_to_the_largest_instance():
    assert search("GPT-3-175B", "Lite", "decode", max_batch=4).tp_degrees == \
        (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
    assert search("Llama-3-70B", "H100-SXM", "decode", max_batch=4).tp_degrees == (1, 2, 4, 8)


def test_best_meets_the_slo_and_fits_and_front_is_pareto():
    r = search("Llama-3-70B", "H100-SXM", "decode")
    assert r.best.feasible and r.best.latency <= 0.050 and r.best.memory.fits
    assert r.evaluated == 4 * 1024 and 0 < r.feasible <= r.fitting <= r.evaluated
    lat = [p.latency for p in r.front]
    score = [p.tokens_per_s_per_sm for p in r.front]
    assert lat == sorted(lat) and score == sorted(score)
    assert score[-1] == pytest.approx(r.best.tokens_per_s_per_sm)
    assert max(p.tokens_per_s_per_sm for p in r.by_tp) == pytest.approx(score[-1])


def test_tighter_slo_never_gives_more_tokens_per_sm():
    loose = search("Llama-3-8B", "H100-SXM", "decode", slo=Slo(tbt=0.1))
    tight = search("Llama-3-8B", "H100-SXM", "decode", slo=Slo(tbt=0.01))
    assert tight.best.tokens_per_s_per_sm <= loose.best.tokens_per_s_per_sm
    assert tight.best.latency <= 0.01


def test_nothing_fits_says_why():
    small = derive_gpu(get_gpu("H100-SXM"), "Eighth", fraction=0.125)  # 10 GB, up to TP 8
    r = search("GPT-3-175B", small, "decode")  # 350 GB of weights > 8 x 9 GB usable
    assert r.best is None and r.fitting == 0 and r.front == ()
    assert "nothing fits in memory" in r.reason and "weights alone need" in r.reason


def test_slo_unreachable_says_why():
    r = search("Llama-3-70B", "H100-SXM", "decode", slo=Slo(tbt=1e-4))
    assert r.best is None and r.fitting > 0 and r.feasible == 0
    assert "meets TBT <= 0.1 ms" in r.reason and "the fastest (TP" in r.reason


def test_ideal_network_is_never_worse_than_the_ring():
    ring = search("Llama-3-70B", "Lite", "prefill")
    ideal = search("Llama-3-70B", "Lite", "prefill", comm=NoCommunication())
    assert ideal.best.tokens_per_s_per_sm >= ring.best.tokens_per_s_per_sm


def test_bad_search_arguments():
    with pytest.raises(UserError, match="does not divide"):
        search("Llama-3-70B", "H100-SXM", "decode", tp=[3])
    with pytest.raises(UserError, match="max_batch"):
        search("Llama-3-70B", "H100-SXM", "decode", max_batch=0)
    with pytest.raises(UserError, match="unknown GPU 'H900'"):
        search("Llama-3-70B", "H900", "decode")


def test_pareto_front_by_hand():
    import numpy as np

    lat = np.array([5.0, 1.0, 2.0, 2.0, 4.0, 3.0])
    score = np.array([9.0, 1.0, 3.0, 2.0, 3.5, 4.0])
    # (1,1) -> (2,3) -> (3,4) -> (5,9); (2,2) and (4,3.5) are dominated.
    assert pareto_front(lat, score).tolist() == [1, 2, 5, 0]


def test_result_exports():
    import csv
    import io
    import json

    r = search("Llama-3-8B", "H100-SXM", "decode", max_batch=64)
    d = json.loads(r.to_json())
    assert d["best"]["tp"] == r.best.tp and d["best"]["feasible"] is True
    assert len(d["front"]) == len(r.front)
    best = d["best"]
    assert math.isclose(sum(best["time_split_s"].values()), best["latency_s"], rel_tol=1e-12)
    assert math.isclose(sum(s["total_time_s"] for s in best["stages"]), best["latency_s"],
                        rel_tol=1e-12)
    rows = list(csv.DictReader(io.StringIO(r.best.to_csv())))
    assert [row["stage"] for row in rows][:2] == ["embedding", "qkv"]
    assert list(csv.DictReader(io.StringIO(r.front_csv())))[0]["tp"].isdigit()


def test_search_times_no_collective_that_only_unfit_cells_need():
    """On a GPU with half an H100's HBM, Llama-3-70B fits at no batch at TP 1 or 2: the
    search never asks the network about a group size only cells that do not fit use,
    leaves those cells untimed (NaN), and agrees bit for bit with a grid that times
    everything."""
    import numpy as np

    from compute.roofline import default_comm, evaluate_grid

    # half an H100's HBM (40 GB): TP 1 and 2 cannot hold the 141 GB of weights
    gpu = derive_gpu(get_gpu("H100-SXM"), "small", hbm_capacity_multiplier=0.5)
    ring = default_comm(gpu)
    asked = []

    def comm(op, nbytes, group_size):
        asked.append((op, int(group_size), int(np.size(nbytes))))
        return ring.collective_time(op, nbytes, group_size)

    r = search("Llama-3-70B", gpu, "decode", comm=comm)
    grid = r.grid
    unfit = ~grid.fits
    assert unfit.any() and grid.fits.any()
    assert np.isnan(grid.latency[unfit]).all() and np.isfinite(grid.latency[grid.fits]).all()
    fitting_tps = {grid.configs[i].tp for i in range(len(grid.configs)) if grid.fits[i].any()}
    assert {g for _, g, _ in asked} == fitting_tps - {1}
    assert sum(n for *_, n in asked) < grid.network_time.size  # unfit cells never sent
    full = evaluate_grid("Llama-3-70B", gpu, grid.configs, grid.batches, grid.workload,
                         comm=ring, latency_limit=grid.latency_limit)
    assert np.array_equal(full.latency[grid.fits], grid.latency[grid.fits])
    assert np.array_equal(full.feasible, grid.feasible)
    masked = np.where(full.feasible, full.tokens_per_s_per_sm, -np.inf)
    i, j = np.unravel_index(int(np.argmax(masked)), masked.shape)
    assert (r.best.tp, r.best.batch) == (grid.configs[i].tp, int(grid.batches[j]))


@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_front_and_best_per_configuration_equal_points_built_one_by_one(phase):
    """The front and by_config (built from whole arrays) hold the same points, of the same
    Python types, as building each FrontPoint from its cell does."""
    import numpy as np

    from compute.results import FrontPoint

    r = search("Llama-3-70B", "H100-SXM", phase, pp=(1, 2), attention_dp=True)
    g = r.grid
    score, rate = g.tokens_per_s_per_sm, g.tokens_per_s

    def point(i, j):
        c = g.configs[i]
        return FrontPoint(tp=c.tp, batch=int(g.batches[j]), latency=float(g.latency[i, j]),
                          tokens_per_s=float(rate[i, j]),
                          tokens_per_s_per_sm=float(score[i, j]), pp=c.pp, ep=c.ep,
                          attention_dp=c.attention_dp)

    masked = np.where(g.feasible, score, -np.inf)

    def best(i):  # a pipelined prefill's ties (equal to rounding): the lowest latency
        if g.interval is None:
            return int(np.argmax(masked[i]))
        near = [j for j in range(masked.shape[1])
                if g.feasible[i, j] and masked[i, j] >= masked[i].max() * (1 - 1e-12)]
        return min(near, key=lambda j: g.latency[i, j])

    want = tuple(point(i, best(i)) for i in range(len(g.configs)) if g.feasible[i].any())
    assert len(r.by_config) > 1 and r.by_config == want
    assert len(r.front) > 1
    for p in r.front + r.by_config:
        assert p == point(g.configs.index(next(c for c in g.configs if (c.tp, c.pp, c.ep,
                          c.attention_dp) == (p.tp, p.pp, p.ep, p.attention_dp))),
                          int(np.flatnonzero(np.asarray(g.batches) == p.batch)[0]))
        assert [type(v) for v in vars(p).values()] == [int, int, float, float, float, int,
                                                       int, int]


@pytest.mark.parametrize("bad", [-1e-6, math.nan, math.inf])
def test_a_collective_model_giving_a_bad_time_is_refused_by_both_paths(bad):
    import numpy as np

    from compute.roofline import evaluate_grid, make_workload

    class Bad:   # an object, not a plain function: no wrapper checks its times first
        def collective_time(self, op, nbytes, group_size):
            return np.full(np.shape(nbytes), bad)

    comm = Bad()
    want = r"negative or non-finite time for all-(reduce|gather) among 8 GPUs"
    with pytest.raises(ValueError, match=want):
        evaluate_grid("Llama-3-70B", "H100-SXM", [8], [1, 2], make_workload("decode"),
                      comm=comm)
    with pytest.raises(ValueError, match=want):
        evaluate("Llama-3-70B", "H100-SXM", 8, 1, comm=comm)
