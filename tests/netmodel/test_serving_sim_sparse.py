"""serving_sim.pools_slot_wait where a replication's decode instance gets few requests or
its batches bring many: every replication's requests count, and the work is bounded.

A prefill of a microsecond at a millionth of its load passes its Poisson arrivals (1/s) on
one by one, so each of ``n`` decode instances gets Poisson arrivals at ``1 / n`` per
second: M/D/c, Crommelin's closed form (:func:`netmodel.study.queueing.mdc_wait`). At a
light decode load a replication runs its floor of 8 requests a slot, and some of its
instances get one or none: the simulation took every instance to the fewest requests any
got, and raised ``ArithmeticError`` ('0 requests an instance, too few for 1 slots') in
each of the first three cases; where it did not, the instances cut to the fewest requests
dropped a quarter of those, less than a quarter of their time from empty, and at M/D/2 at
0.4 over 4 instances gave 0.2684 +- 0.0050 s for 0.3306 (12 standard errors under).
"""

from __future__ import annotations

import tracemalloc

import pytest

import netmodel.study.serving_sim as sim
from netmodel.study.queueing import mdc_wait
from netmodel.study.serving_sim import pools_slot_wait


@pytest.mark.parametrize(("slots", "hold", "decode", "rho", "want"), [
    (1, 0.2, 4, 0.05, 0.05 * 0.2 / (2 * 0.95)),    # M/D/1: rho D / (2 (1 - rho))
    (1, 0.2, 1, 0.2, 0.2 * 0.2 / (2 * 0.8)),
    (2, 0.4, 2, 0.1, 2.4833e-3),
    (2, 3.2, 4, 0.4, 0.33060)])
def test_sparse_decode_instances_are_m_d_c(slots, hold, decode, rho, want):
    assert rho == pytest.approx(hold / decode / slots)
    if slots > 1:   # Crommelin's closed form
        assert mdc_wait(rho, slots, hold) == pytest.approx(want, rel=1e-4)
    got, se, simulated, cut = pools_slot_wait(1e-6, [1e-6], 1, slots, hold, decode)
    assert simulated and not cut   # four relaxation times dropped: the error is se's
    assert 0 < se <= 0.03 * got
    assert abs(got - want) < 4 * se, (got, se, want)


def test_many_requests_a_batch_stay_within_the_budget(monkeypatch):
    """Two prefill instances of batches up to 1024 (50 ms + 1 ms a request) at 0.999, two
    decode instances of 1024 slots at 0.99: a batch brings about 1000 requests, and 2
    million batches held 2 billion (10.9 GB resident, 68 s); now at most MAX_REQUESTS
    (32 million), one replication's in memory at a time."""
    seen = []
    inner = sim._decode_waits

    def counted(*args):
        out = inner(*args)
        seen.append(out[2])
        return out

    monkeypatch.setattr(sim, "_decode_waits", counted)
    s = [0.05 + 0.001 * k for k in range(1, 1025)]
    lam = 0.999 * 1024 / s[-1]
    tracemalloc.start()
    try:
        got, se, simulated, cut = pools_slot_wait(0.999, s, 2, 1024,
                                                  0.99 * 1024 * 2 / (2 * lam), 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(seen) <= 1.05 * sim.MAX_REQUESTS
    assert peak < 400e6
    assert got > 0 and se > 0
    # 16 relaxation times (of the decode queue at 0.99: 2.07 x 10^4 s each) would be 3.3 x
    # 10^5 s; the request budget runs 1050 s a replication, so far less than four are
    # dropped: said, the standard error an underestimate
    assert simulated and cut
