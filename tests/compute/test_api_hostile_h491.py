"""Hostile input to compute's lower-layer API (docs/api.md's 'Lower layers':
``compute.roofline.evaluate_grid`` and ``compute.search``): a caller's wrong value is a
one-line UserError naming the parameter, never a raw TypeError, a silent NaN or empty
answer, or a huge allocation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.phases import Workload, slo_text
from compute.roofline import MAX_BATCH, evaluate_grid, make_workload
from compute.search import pareto_front, search

MODEL, GPU = "Llama-3-70B", "H100-SXM"


def grid(**kw):
    args = dict(model=MODEL, gpu=GPU, tps=[8], batches=[1, 8], workload="decode") | kw
    return evaluate_grid(**args)


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("tps", [None, 8, "8"])
def test_grid_tps_not_a_list_is_named(tps):
    # was: TypeError: 'NoneType' object is not iterable (a str: each character a TP degree)
    with pytest.raises(UserError, match=r"^tps must be a list of TP degrees") as e:
        grid(tps=tps)
    one_line(e)


@pytest.mark.parametrize("limit", [float("nan"), 0, -1.0, "0.05", None, True])
def test_grid_latency_limit_must_be_positive_seconds(limit):
    # was: NaN, 0 and -1 made every cell infeasible without a word; '0.05' a raw ValueError
    with pytest.raises(UserError, match=r"^latency_limit must be a number of seconds > 0"):
        grid(latency_limit=limit)


def test_grid_latency_limit_inf_and_a_number_still_work():
    g = grid(latency_limit=math.inf)
    assert g.feasible.all()
    # 1 ms is shorter than any decode step of a 70B model on 8 GPUs (weights / HBM
    # bandwidth: 141e9 B / 8 / 3.35e12 B/s = 5.3 ms)
    assert not grid(latency_limit=1e-3).feasible.any()


def test_grid_size_refused_before_the_work(monkeypatch):
    # was: no limit; np.arange(1, 10**8) ran 34 s and ran out of a 6 GiB address space
    monkeypatch.setenv("NETMODEL_MAX_SEARCH_CONFIGURATIONS", "10")
    with pytest.raises(UserError, match=r"^evaluate_grid: about 22 configurations x batches, "
                                        r"over the limit of 10") as e:
        grid(tps=[4, 8], batches=np.arange(1, 12))
    one_line(e)
    assert grid(tps=[8], batches=np.arange(1, 11)).latency.shape == (1, 10)


def test_grid_size_counted_before_the_configurations_are_checked(monkeypatch):
    # the estimate comes before any per-configuration work: an array of a billion batches
    # is refused by its size, not walked
    monkeypatch.setenv("NETMODEL_MAX_SEARCH_CONFIGURATIONS", "100")
    big = np.broadcast_to(np.int64(1), (10**9,))   # a view: no memory spent here
    with pytest.raises(UserError, match=r"about 1,000,000,000 configurations x batches"):
        grid(batches=big)


@pytest.mark.parametrize("batch", [1e300, MAX_BATCH + 1])
def test_grid_batches_over_the_largest_batch(batch):
    # was: 1e300 cast to int64 wrapped to -9.2e18 ('tokens must be finite numbers of
    # tokens >= 0, got -9.22e+18'); MAX_BATCH + 1 was evaluated, where evaluate refuses it
    with pytest.raises(UserError, match=r"^batches must be whole numbers from 1 to "
                                        r"1,000,000,000, got 1e\+(300|09)"):
        grid(batches=[1, batch])


def test_workload_with_token_counts_beside_it_is_refused():
    # was: context=5 silently dropped (the Workload's 100 used)
    w = Workload("decode", context=100)
    with pytest.raises(UserError, match=r"^context=5 given beside a Workload"):
        make_workload(w, context=5)
    with pytest.raises(UserError, match=r"^prompt=7 given beside a Workload"):
        search(MODEL, GPU, w, prompt=7, max_batch=4)
    assert make_workload(w) is w
    assert search(MODEL, GPU, w, max_batch=4).grid.workload.context == 100


def test_pareto_front_nan_points_are_on_no_front():
    # was: [0, 1]: the NaN-latency point (an untimed cell) on the front
    assert pareto_front(np.array([1.0, np.nan]), np.array([1.0, 2.0])).tolist() == [0]
    # was: []: a NaN score hid every later point (its running best became NaN)
    assert pareto_front(np.array([1.0, 2.0]), np.array([np.nan, 1.0])).tolist() == [1]
    assert pareto_front(np.array([1.0, np.nan, 2.0]),
                        np.array([np.nan, 5.0, 1.0])).tolist() == [2]


def test_pareto_front_refuses_non_numbers():
    with pytest.raises(UserError, match=r"^latency and score must be arrays of numbers"):
        pareto_front(np.array(["a", "b"]), np.array([1.0, 2.0]))


finite = st.floats(0.0, 10.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite | st.just(math.nan), finite | st.just(math.nan)),
                min_size=1, max_size=90))
def test_pareto_front_ignores_nan_points(points):
    # invariant: the front with NaN points equals the front of the others, by index, and
    # no kept point is beaten (lower or equal latency and higher score) by a timed one
    lat = np.array([p[0] for p in points])
    sc = np.array([p[1] for p in points])
    timed = np.flatnonzero(~(np.isnan(lat) | np.isnan(sc)))
    got = pareto_front(lat, sc).tolist()
    assert got == timed[pareto_front(lat[timed], sc[timed])].tolist()
    for i in got:
        assert not any(lat[j] <= lat[i] and sc[j] > sc[i] for j in timed)


@pytest.mark.parametrize("limit", [float("nan"), -1, 0, math.inf, "x", None])
def test_slo_text_limit_is_seconds(limit):
    # was: 'TBT <= nan ns', 'TBT <= -1 s', 'TBT <= 0 ns', 'TBT <= inf s'; 'x' a raw ValueError
    with pytest.raises(UserError, match=r"^limit must be a finite number of seconds > 0"):
        slo_text("decode", limit)


@pytest.mark.parametrize("name", ["  ", "a\nb", " Lite", "Lite\t", "Lite\u202e"])
def test_gpuspec_name_is_one_visible_line(name):
    # was: accepted; a newline split every table row and one-line error that names the GPU,
    # U+202E reversed the text printed after it (a GPU file's name is refused for both)
    import dataclasses

    from compute.hardware import get_gpu

    with pytest.raises(UserError, match=r"^a GpuSpec's name must be non-empty text .* on "
                                        r"one line") as e:
        dataclasses.replace(get_gpu("Lite"), name=name)
    one_line(e)


def test_get_gpu_takes_a_path(tmp_path):
    # was: "a GPU is a catalog name, a GPU file path or a GpuSpec, got PosixPath(...)":
    # a pathlib.Path of a GPU file refused though the API's GpuLike names a GPU file
    from compute.hardware import get_gpu

    f = tmp_path / "g.toml"
    f.write_text('[gpu."Lite-2xHBM"]\nderive_from = "Lite"\nhbm_capacity_multiplier = 2.0\n'
                 'source = "test"\n')
    got = get_gpu(f)
    assert got.name == "Lite-2xHBM"
    assert got.hbm_capacity == 2 * get_gpu("Lite").hbm_capacity
    with pytest.raises(UserError, match=r"^GPU file 'nope.toml' does not exist"):
        get_gpu(tmp_path.__class__("nope.toml"))
