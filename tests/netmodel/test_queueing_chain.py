"""netmodel.study.queueing's bulk-service wait checked against the queue's Markov chain,
solved directly (the requests left waiting at a batch's end, ``X' = max(X - B, 0) + A``,
``A`` Poisson of mean ``a = rho B``, truncated far past its tail), at large batches and
loads near 1 where the roots crowd the unit circle; and what the wait is at a high load:
about half a cycle for a large batch, many cycles for a small one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netmodel.study.queueing import batch_wait


def _chain_wait(rho: float, batch: int, states: int) -> float:
    """W / c = (E[Y] + a / 2) / (a + p0) from the stationary law of the embedded chain."""
    a = rho * batch
    k = np.arange(states)
    pmf = np.exp(k * math.log(a) - a - np.array([math.lgamma(i + 1.0) for i in k]))
    p = np.zeros((states, states))
    for x in range(states):
        y = max(x - batch, 0)
        p[x, y:] = pmf[:states - y]
    p[:, -1] += 1 - p.sum(axis=1)
    m = p.T - np.eye(states)
    m[-1] = 1.0   # the probabilities sum to 1
    pi = np.linalg.solve(m, np.r_[np.zeros(states - 1), 1.0])
    carried = float(pi @ np.maximum(k - batch, 0))
    return (carried + a / 2) / (a + float(pi[0]))


@pytest.mark.parametrize(("batch", "rho", "states"), [(4, 0.8, 200), (16, 0.95, 800),
                                                       (64, 0.99, 2500), (256, 0.9, 1200)])
def test_bulk_wait_is_the_markov_chains(batch, rho, states):
    assert float(batch_wait(rho, batch, 1.0)) == pytest.approx(
        _chain_wait(rho, batch, states), rel=1e-7)


def test_at_a_high_load_a_large_batch_waits_half_a_cycle_a_small_one_more():
    # rho 0.95: B = 1 is M/D/1's rho / (2 (1 - rho)) = 9.5 cycles; B = 4 2.74, B = 16 1.00
    # (a simulation of 9 million arrivals: 0.989 to 1.011); B = 256 within 3% of half a cycle
    w = [float(batch_wait(0.95, b, 1.0)) for b in (1, 4, 16, 256, 1024)]
    assert w[0] == pytest.approx(9.5, rel=1e-12)
    assert w[1:3] == pytest.approx([2.7417, 0.99669], abs=1e-4)
    assert 0.5 < w[3] < 0.515 and 0.5 < w[4] < w[3]
    # still without bound as rho -> 1, at any batch
    assert float(batch_wait(0.9999, 1024, 1.0)) > 5 * float(batch_wait(0.999, 1024, 1.0)) > 4.5
