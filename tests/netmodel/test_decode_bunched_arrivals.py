"""What the decode slot's M/D/c wait understates: requests come to a decode instance in the
bunches a prefill batch sends at once, not one by one.

With bunches of ``b`` at Poisson instants (``M^b/D/c``) Crommelin's argument holds as it
is: the requests present a service ``D`` apart follow ``X' = max(X - c, 0) + A``, now with
``A = b K``, ``K`` Poisson of mean ``rho c / b``, and the mean wait is ``D E[max(X - c, 0)]
/ (rho c)`` (Little). :func:`_bunched_wait` solves that chain by iteration (a test's
yardstick, not the model's), checked against :func:`~netmodel.study.queueing.mdc_wait` at
``b = 1`` and a seeded simulation at ``b = 2``; the figures docs/study.md gives follow.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest
from scipy.stats import poisson

from netmodel.study.queueing import mdc_wait


def _bunched_wait(rho: float, c: int, b: int, service: float, states: int) -> float:
    """Mean wait of ``M^b/D/c`` at ``rho`` (the chain above, truncated at ``states``)."""
    k = np.arange((states - 1) // b + 1)
    a = np.zeros(states)
    a[k * b] = poisson.pmf(k, rho * c / b)
    fa = np.fft.rfft(a, 2 * states)
    p = np.zeros(states)
    p[0] = 1.0
    for _ in range(100_000):
        q = np.zeros(states)
        q[0], q[1:states - c] = p[:c + 1].sum(), p[c + 1:]
        r = np.maximum(np.fft.irfft(np.fft.rfft(q, 2 * states) * fa, 2 * states)[:states], 0)
        r /= r.sum()
        done = np.abs(r - p).sum() < 1e-12
        p = r
        if done:
            break
    assert p[-1] < 1e-12   # the truncation holds nothing
    return service * float(np.maximum(np.arange(states) - c, 0) @ p) / (rho * c)


def _simulated(rho: float, c: int, b: int, service: float, n: int, seed: int):
    """Mean and standard error (50 batch means, the first tenth dropped) of the wait of
    bunches of ``b`` at Poisson instants, ``c`` servers, first come first served."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(b * service / (rho * c), n // b))
    free, w = [0.0] * c, np.empty(n // b * b)
    for i, x in enumerate(t):
        for m in range(b):
            start = max(x, heapq.heappop(free))
            heapq.heappush(free, start + service)
            w[i * b + m] = start - x
    w = w[len(w) // 10:]
    means = w[:len(w) // 50 * 50].reshape(50, -1).mean(axis=1)
    return float(means.mean()), float(means.std(ddof=1) / math.sqrt(50))


@pytest.mark.parametrize(("rho", "c"), [(0.9, 2), (0.9, 46), (0.5, 8)])
def test_one_at_a_time_is_crommelins(rho, c):
    assert _bunched_wait(rho, c, 1, 1.0, 4000) == pytest.approx(mdc_wait(rho, c, 1.0),
                                                                rel=1e-8)


def test_bunches_of_two_match_a_simulation():
    mean, se = _simulated(0.9, 8, 2, 1.0, 600_000, seed=11)
    assert abs(mean - _bunched_wait(0.9, 8, 2, 1.0, 2000)) < 4 * se
    assert mean - mdc_wait(0.9, 8, 1.0) > 10 * se   # 1.00 in pairs, 0.45 one by one


def test_the_bunches_a_prefill_batch_sends():
    """Llama-3-70B with the vllm-dgx-h100 profile at 0.9 (46 slots of 0.6 s, prefill batch
    2): 26.93 ms one at a time, 71.95 ms in pairs; DeepSeek-V3 on h100-dgx at 0.8 (1,024
    slots of 356.17 ms, prefill batch 112): 5e-15 s one at a time, 45.25 ms in bunches of
    112."""
    assert mdc_wait(0.9, 46, 0.6) == pytest.approx(0.026933, abs=5e-7)
    assert _bunched_wait(0.9, 46, 2, 0.6, 2000) == pytest.approx(0.071951, abs=5e-6)
    assert mdc_wait(0.8, 1024, 0.35617) < 1e-14
    assert _bunched_wait(0.8, 1024, 112, 0.35617, 16384) == pytest.approx(0.045247,
                                                                          abs=5e-5)
