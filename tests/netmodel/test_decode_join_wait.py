"""``serve --load``: the wait to join a decode batch at its next step (``join_wait_s``).

A decode instance under continuous batching runs steps of one fixed length ``tau`` (the
full batch's step) back to back; a request whose KV cache is in joins at the next step
boundary. Ready at a uniform phase of a step (Poisson arrivals, the pools unsynchronised),
it waits the residual of a fixed interval, ``E[S^2] / (2 E[S]) = tau / 2``. With the wait
for a slot the sum is exact: on the lattice of steps a slot frees only at a boundary, and
the requests present at boundaries ``n`` steps apart (``n`` the steps of a decode,
``D = n tau``) follow Crommelin's chain ``X' = max(X - c, 0) + A``, ``A`` Poisson of mean
``lambda D``, as in continuous time; the time-average number waiting is that chain's
``E[max(X - c, 0)]`` plus the ``lambda tau / 2`` who arrived within the current step, so
by Little the mean wait is M/D/c's plus ``tau / 2`` (checked below by simulation).
"""

from __future__ import annotations

import heapq
import json
import math

import numpy as np
import pytest

from netmodel.study.queueing import mdc_wait
from netmodel.study.serving import serve, with_load


def _lattice_wait(rho: float, slots: int, steps: int, n: int, seed: int):
    """Mean and standard error (50 batch means, the first tenth dropped) of the wait from
    arrival to joining of Poisson arrivals at ``rho`` of ``slots`` slots, each held
    ``steps`` unit steps from the boundary it joins at, first come first served."""
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(steps / (rho * slots), n))
    free, w = [0.0] * slots, np.empty(n)
    for k, x in enumerate(t):
        joined = max(math.ceil(x), heapq.heappop(free))
        heapq.heappush(free, joined + steps)
        w[k] = joined - x
    means = w[n // 10:].reshape(50, -1).mean(axis=1)
    return float(means.mean()), float(means.std(ddof=1) / math.sqrt(50))


@pytest.mark.parametrize(("rho", "slots", "steps"), [(0.7, 2, 3), (0.7, 4, 5), (0.5, 1, 2)])
def test_slot_and_step_waits_are_mdc_plus_half_a_step(rho, slots, steps):
    mean, se = _lattice_wait(rho, slots, steps, 500_000, seed=7)
    exact = mdc_wait(rho, slots, float(steps)) + 0.5
    assert abs(mean - exact) < 4 * se
    assert abs(mean - (exact - 0.5)) > 20 * se   # M/D/c alone falls short by the half step


def test_serve_adds_half_a_decode_step():
    """Llama-3-8B on one H100, batch 1 (TP 1): a decode step of 4.54 ms, so 2.27 ms to
    the next; added to the TTFT under a load, reported apart, none without one."""
    kw = dict(dimensions="tp", tp=1, max_batch=1)
    r = serve("Llama-3-8B", "h100-dgx", with_load("coding", 0.5), **kw)
    assert r.join_wait_s == pytest.approx(r.decode.latency / 2, rel=1e-12)
    assert r.join_wait_s == pytest.approx(0.0022705, abs=5e-8)
    steps = r.prefill.latency + r.transfer_visible_s
    assert r.ttft_s == pytest.approx(steps + r.queue_wait_s + r.decode_wait_s
                                     + r.join_wait_s, rel=1e-12)
    assert "+ 27.25 ms for a decode slot + 2.27 ms to its next step" in r.table()
    assert json.loads(r.to_json())["join_wait_s"] == r.join_wait_s
    plain = serve("Llama-3-8B", "h100-dgx", **kw)
    assert plain.join_wait_s is None and json.loads(plain.to_json())["join_wait_s"] is None
    assert r.ttft_s - plain.ttft_s == pytest.approx(r._waited(), rel=1e-12)
