"""The bulk chain runs OpenBLAS on one thread and puts its count back (queueing.
_one_blas_thread: its threads, spinning between the chain's small products and solves,
took 5-7 times the CPU of one thread on two contended cores), and the landing law kept for
the cells that share a load and ``B`` is read-only and the same as one computed afresh."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.study import queueing
from netmodel.study.queueing import bulk_wait


def _openblas_build() -> bool:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return "openblas" in str(blas.get("name", "")).lower()


def _counts() -> list[int]:
    return [get() for get, _ in queueing._openblas()]


@pytest.mark.skipif(not _openblas_build(), reason="numpy is not built on OpenBLAS")
def test_one_thread_inside_the_block_and_the_count_back_after():
    libs = queueing._openblas()
    assert libs, "numpy's OpenBLAS not found among the mapped libraries"
    before = _counts()
    with queueing._one_blas_thread():
        assert _counts() == [1] * len(libs)
        with queueing._one_blas_thread():             # nested: still one
            assert _counts() == [1] * len(libs)
        assert _counts() == [1] * len(libs)          # the inner block does not put it back
    assert _counts() == before
    with pytest.raises(ZeroDivisionError), queueing._one_blas_thread():
        1 / 0                                        # noqa: B018
    assert _counts() == before


def test_the_wait_is_the_same_on_one_thread_and_outside_the_block():
    services = 0.2 + 0.01 * np.arange(1, 301)    # B = 300: the products and solve go threaded
    queueing._bulk_chain.cache_clear()
    inside = bulk_wait(0.999, services)
    queueing._bulk_chain.cache_clear()
    outside = queueing._solve_chain(0.999, services.tobytes())[0]
    assert inside == pytest.approx(outside, rel=1e-12)
    assert inside > 0


def test_the_kept_landing_law_is_read_only_and_the_same_afresh():
    kept = queueing._landing(0.95, 37)
    assert queueing._landing(0.95, 37) is kept
    with pytest.raises(ValueError):
        kept[0] = 1.0
    fresh = queueing._landing.__wrapped__(0.95, 37)
    assert np.array_equal(kept, fresh)
    assert kept.sum() == pytest.approx(1.0, rel=1e-13)
