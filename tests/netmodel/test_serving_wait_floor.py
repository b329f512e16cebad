"""The prefill waits' floor (:func:`netmodel.study.serving_queue.wait_floor`): never above
the bulk-service wait, M/D/1 itself at batch 1, and what lets a near-saturated search that
no cell passes finish with the same answer after a fraction of the ``B x B`` solves."""

from __future__ import annotations

import numpy as np
import pytest

import netmodel.study.serving_queue as sq
from netmodel.study.queueing import bulk_sizes, bulk_wait, md1_wait
from netmodel.study.serving import serve, with_load


@pytest.mark.parametrize("load", [0.1, 0.9, 0.9999])
def test_floor_is_below_the_wait(load):
    b = np.arange(1, 41)
    rows = np.array([0.5 + 0.01 * b,            # a fixed cost and a linear one: sublinear
                     0.02 * b ** 1.2,           # superlinear: batch 1 the most per SM-second
                     np.full(40, 1.0)])         # every batch the full one's time
    floor = sq.wait_floor(load, rows)
    for i in range(3):
        for j in range(0, 40, 3):
            assert 0 <= floor[i, j] <= bulk_wait(load, rows[i, :j + 1])
    # one request a batch: M/D/1 at rate load / S_1, to the floor's slack
    assert floor[1, 0] == pytest.approx(md1_wait(load / rows[1, 0], rows[1, 0]), rel=2e-6)


def test_near_one_load_with_no_cell_meeting_the_slo(monkeypatch):
    calls = []
    wait = sq._wait

    def counted(load, cycle, cell, *slots):
        calls.append(cell)
        return wait(load, cycle, cell, *slots)

    monkeypatch.setattr(sq, "_wait", counted)
    kw = dict(max_batch=32)
    r = serve("Llama-3-70B", "h100-dgx", with_load("coding", 0.9999), **kw)
    floored = len(calls)
    calls.clear()
    monkeypatch.setattr(sq, "wait_floor", lambda load, cycle: np.zeros(np.shape(cycle)))
    monkeypatch.setattr(sq, "_cell_slot_floor", lambda load, cycle, cell, slots, cheap: cheap)
    bare = serve("Llama-3-70B", "h100-dgx", with_load("coding", 0.9999), **kw)
    assert not r.feasible and r.reason == bare.reason
    assert r.to_dict() == bare.to_dict()
    # the bare search solves 841 cells (Llama-3-70B's configurations at batches 1 .. 32);
    # the floor rules out all but 267 (the batch-1 cells' floors are M/D/1's, exact; a
    # pipelined cell under attention DP takes up to attention_dp prompts in one period, a
    # prompt a group, so its floor's least seconds a request, that period over them, is
    # looser: 93 were left when such a cell took one prompt a period)
    assert len(calls) > 800 and floored < len(calls) / 3, (floored, len(calls))


@pytest.mark.parametrize("load", [0.3, 0.9, 0.999])
def test_floor_with_a_decode_slot_is_below_both_waits(load):
    """With a decode instance a cell's wait is its prefill batch's and its decode slot's as
    its batches bring the requests (M^X/D/c); the floor adds serving_queue.slot_floor: the
    larger of M/D/c's wait, which bunches only lengthen, and the roots' bound at the least
    mean batch size the cell's shortest batch allows."""
    b = np.arange(1, 25)
    rows = np.array([0.5 + 0.01 * b, 0.02 * b ** 1.2, np.full(24, 1.0), 0.05 + 0.002 * b])
    for slots in [(load, 8, 20.0), (load, 64, 40.0), (load, 1, 3.0), (load, 300, 900.0)]:
        floor = sq._floor(load, rows, slots)[0]
        assert np.all(floor >= sq.wait_floor(load, rows))
        slot = sq.slot_floor(load, rows, slots)
        hold = slots[1] / slots[2]   # M/D/c's, less the slack and the roots' rounding
        assert np.all(slot >= sq.slot_wait(*slots) * (1 - 2e-6) - hold * 1e-12 / load)
        for cell in range(0, rows.size, 5):
            waits = sq.cell_waits(load, rows, cell, slots)
            assert floor.flat[cell] <= sum(waits) and slot.flat[cell] <= waits[1]
    # where the bunches are full (every batch the full one's time, near saturation) the
    # bunched floor holds the wait within 10% (12.08 of 13.27 s), M/D/c's far below it
    heavy = (0.999, 300, 900.0)
    full = sq.cell_waits(0.999, rows, 2 * 24 + 23, heavy)[1]
    assert sq.slot_floor(0.999, rows, heavy)[2, 23] > 0.9 * full > 10 * sq.slot_wait(*heavy)


def _random_rows(rng, n):
    """Prefill cycles of every shape a grid row takes: a fixed cost and a linear one,
    increments at random (convex or not), a power of the batch (sublinear and superlinear,
    no fixed cost) and a memory-bound floor under a compute-bound line."""
    k = np.arange(1, n + 1)
    return np.array([rng.uniform(1e-3, 0.1) + rng.uniform(0.01, 0.1) * k,
                     np.cumsum(rng.uniform(1e-3, 0.1, n)),
                     rng.uniform(0.01, 0.1) * k ** rng.uniform(0.5, 1.5),
                     np.maximum(rng.uniform(0.05, 0.5), rng.uniform(0.01, 0.05) * k)])


@pytest.mark.parametrize("seed", range(4))
def test_mean_batch_floor_is_below_the_bulk_chains(seed):
    """serving_queue._mean_floor (the instance busy at most all the time, each batch on or
    above a line of a fixed cost) never exceeds the mean of the bulk chain's batch sizes,
    on random rows at loads up to 1 - 1e-9."""
    rng = np.random.default_rng(seed)
    for load in [0.3, 0.9, 0.9999, 0.999999999]:
        rows = _random_rows(rng, int(rng.integers(8, 48)))
        floor = sq._mean_floor(load, rows)
        for i in range(rows.shape[0]):
            for j in range(rows.shape[1]):
                sizes = bulk_sizes(load, rows[i, :j + 1])
                assert 0 <= floor[i, j] <= sizes @ np.arange(1, j + 2) * (1 + 1e-12)


def test_mean_batch_floor_by_hand_and_near_saturation():
    # S_k = 0.2 + 0.1 k: alpha 0.2, so at B = 4 and 0.99: 0.99 x 4 x 0.2 / (0.01 x 0.6 +
    # 0.99 x 0.2) = 3.8824; no fixed cost (S_k = 0.1 k): nothing
    b = np.arange(1.0, 5.0)
    assert sq._mean_floor(0.99, 0.2 + 0.1 * b[None, :])[0, 3] == pytest.approx(
        0.792 / 0.204, rel=1e-9)
    assert sq._mean_floor(0.99, 0.1 * b[None, :])[0, 3] == 0.0
    # a compute-bound row with a small fixed cost (about Llama-3-70B's TP 8 prefill at
    # 1,500 tokens, 41 ms a prompt and 9 ms a batch) near saturation: the batches are
    # nearly full and the floor says so, and the slot floor then holds the bunched wait
    # within 10% where the shortest batch's Poisson bound (and M/D/c) are far below it
    k = np.arange(1, 129)
    row = (0.009 + 0.041 * k)[None, :]
    slots = (0.9999, 335, 884.5)
    mean = bulk_sizes(0.9999, row[0]) @ k
    assert 0.9 * mean < sq._mean_floor(0.9999, row)[0, -1] <= mean
    exact = sq.cell_waits(0.9999, row, 127, slots)[1]
    assert 0.9 * exact < sq.slot_floor(0.9999, row, slots)[0, -1] <= exact


@pytest.mark.parametrize("seed", range(2))
def test_slot_floor_on_random_rows(seed):
    """slot_floor (M/D/c's, or the roots' bound at the larger of the two mean-batch floors)
    below the exact M^X/D/c slot wait of random rows and decode instances."""
    rng = np.random.default_rng(100 + seed)
    for load in [0.5, 0.99, 0.9999]:
        rows = _random_rows(rng, 16)
        c = int(rng.integers(1, 400))
        slots = (float(rng.choice([0.5, 0.99, 0.9999])), c, c / rng.uniform(0.05, 1.0))
        floor = sq.slot_floor(load, rows, slots)
        for cell in range(0, rows.size, 3):
            assert floor.flat[cell] <= sq.cell_waits(load, rows, cell, slots)[1]
        # the search's cell by cell floor (the row's mean floor alone) is the grid's
        cheap = sq.slot_floor(load, rows, slots, busy=False)
        for cell in range(rows.size):
            assert sq._cell_slot_floor(load, rows, cell, slots, cheap.flat[cell]) == (
                pytest.approx(floor.flat[cell], rel=1e-12, abs=1e-300))
