"""compute.buffers: a grid's large stage arrays made from kept buffers are the arrays fresh
memory gives, bit for bit, and an array still held is never handed out again."""

from __future__ import annotations

import numpy as np
import pytest

from compute import buffers
from compute.models import get_model
from compute.parallel import configurations
from compute.roofline import evaluate_grid
from compute.search import search

SMALL = 4 * 2**20   # these tests' grids (4-10 MB a stage array) kept from this size up


@pytest.fixture(autouse=True)
def _keep_from_4_mb(monkeypatch):
    monkeypatch.setattr(buffers, "MIN_BYTES", SMALL)


STAGE_ARRAYS = ("flops", "hbm_bytes", "net_bytes", "compute_time", "memory_time",
                "network_time", "stage_time", "bound")
TWO_D = ("latency", "weights", "kv_cache", "activations", "fits", "micro_batches")


def _poison_idle() -> int:
    """Fill every idle kept buffer with 0x7f bytes (a NaN-free garbage double, 1.4e306):
    an element a grid failed to write would then differ from fresh (zeroed) memory.
    Returns the bytes poisoned."""
    n = 0
    for b in list(buffers._BUFFERS):
        if buffers._refs(b) == buffers._IDLE + 1:   # one more: the list() above
            b.fill(0x7F)
            n += b.nbytes
    return n


def _grid(model, gpu, phase, **par):
    configs = configurations(get_model(model), 8, **par)
    return evaluate_grid(model, gpu, configs, np.arange(1, 1025), phase)


def _bytes(g) -> dict:
    out = {name: np.asarray(getattr(g, name)).tobytes() for name in STAGE_ARRAYS + TWO_D}
    out["interval"] = None if g.interval is None else g.interval.tobytes()
    return out


CASES = [("Llama-3-70B", "H100-SXM", "decode", dict(pp=(1, 2, 4, 8), attention_dp=True)),
         ("Mixtral-8x7B", "H100-SXM", "prefill", dict(pp=(1, 2), ep=True, attention_dp=True))]


def test_grids_from_kept_buffers_equal_fresh_ones(monkeypatch):
    buffers.release()
    grids = []
    for case in CASES:   # two shapes and two sets of values, each evaluated after the other
        g = _grid(*case[:3], **case[3])
        assert g.stage_time.nbytes >= buffers.MIN_BYTES   # large enough to be kept
        grids.append(_bytes(g))
        del g
    for case, pooled in zip(CASES[::-1], grids[::-1], strict=True):   # reused, poisoned
        assert _poison_idle() > 0
        g = _grid(*case[:3], **case[3])
        assert any(np.shares_memory(g.stage_time, b) for b in buffers._BUFFERS)
        again = _bytes(g)
        del g
        monkeypatch.setattr(buffers, "MIN_BYTES", 2**62)   # every array fresh
        fresh = _bytes(_grid(*case[:3], **case[3]))
        monkeypatch.setattr(buffers, "MIN_BYTES", SMALL)
        for name, value in fresh.items():
            assert value == pooled[name], name
            assert value == again[name], name


def test_search_answers_equal_with_and_without_kept_buffers(monkeypatch):
    args = ("Mixtral-8x7B", "H100-SXM", "decode")
    kw = dict(pp=(1, 2), ep=True, attention_dp=True)
    buffers.release()
    first = search(*args, **kw)
    _poison_idle()
    second = search(*args, **kw)
    monkeypatch.setattr(buffers, "MIN_BYTES", 2**62)
    fresh = search(*args, **kw)
    for r in (first, second):
        assert r.best == fresh.best
        assert r.front == fresh.front and r.by_config == fresh.by_config


def test_an_array_still_held_is_never_handed_out_again():
    buffers.release()
    n = buffers.MIN_BYTES // 8 + 1
    a = buffers.empty((n,))
    a[:] = 1.0
    view = a[5:]
    del a
    b = buffers.empty((n,))               # `view` still holds the first buffer
    assert not np.shares_memory(b, view)
    b[:] = 2.0
    assert (view == 1.0).all()
    assert buffers.kept_bytes() == (2 * n * 8, 0)
    del view
    assert buffers.kept_bytes() == (n * 8, n * 8)
    c = buffers.empty((n - 1,))           # the first buffer is idle again: reused
    assert buffers.kept_bytes() == (2 * n * 8, 0)
    assert not np.shares_memory(c, b)
    assert len(buffers._BUFFERS) == 2


def test_small_arrays_are_plain_and_dtype_and_shape_are_kept():
    buffers.release()
    small = buffers.empty((10, 10), dtype=np.int8)
    assert small.base is None and small.dtype == np.int8 and small.shape == (10, 10)
    big = buffers.empty((5, 1000, 1000), dtype=np.int8)
    assert big.dtype == np.int8 and big.shape == (5, 1000, 1000)
    assert big.flags.c_contiguous and big.flags.writeable
    assert len(buffers._BUFFERS) == 1


@pytest.mark.parametrize("sizes", [(5, 6, 7), (7, 6, 5)])
def test_idle_buffers_too_small_are_let_go(sizes):
    buffers.release()
    mb = 2**20
    for s in sizes:
        x = buffers.empty((s * mb,), dtype=np.uint8)
        del x
    # each request took the smallest idle buffer large enough, or let the idle ones go
    # (growing: 5 and 6 MB let go; shrinking: the 7 MB one serves 6 and 5)
    assert [b.nbytes for b in buffers._BUFFERS] == [7 * mb]


def test_no_reuse_where_views_are_not_counted(monkeypatch):
    # an interpreter that does not count every view as a reference to its buffer (deferred
    # or borrowed counts) must get plain numpy.empty arrays: a buffer seen idle while an
    # array still uses it would be overwritten under it
    buffers.release()
    monkeypatch.setattr(buffers, "REUSE", False)
    n = buffers.MIN_BYTES // 8 + 1
    a = buffers.empty((n,))
    assert a.shape == (n,) and a.dtype == np.float64 and a.base is None
    assert buffers._BUFFERS == [] and buffers.kept_bytes() == (0, 0)


def test_this_interpreter_counts_views():
    # the check that decides REUSE holds here (CPython 3.11-3.13 with the GIL), so the
    # reuse tests above test reuse; were it to fail, reuse would be off, not unsafe
    import sys
    if sys.implementation.name != "cpython" or not getattr(sys, "_is_gil_enabled",
                                                            lambda: True)():
        pytest.skip("not CPython with the GIL: REUSE may rightly be off")
    assert buffers._counts_views() and buffers.REUSE
