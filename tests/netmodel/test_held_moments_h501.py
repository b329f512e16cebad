"""threshold_low's bound on the chain of holdings (availability_threshold._held_moments).

The bound (``_missed``) sums moments of the refusals in progress as the pool bunches
them. They ran on the chain of the busy count, whose releases are the average over who
holds the spares (detailed balance), and took a failure granted in part as a timer apart
from its own hold. On 64 H100 at TP 1 with 6 global spares (95%) a DGX host is refused at
least 2 of its 8 instances, takes every free spare and keeps them for its repair, and the
GPU failures of that day are refused; the bound read 3.1e-4 where the time below that
the thinning misses is 7e-4 (tests/netmodel/test_review_threshold_knapsack_h490.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.study import availability_analytic as aa
from netmodel.study import availability_threshold
from netmodel.study import availability_threshold as at
from netmodel.study.availability_kinds import Kind


def _pair(h, g):
    # a pool of 1 spare; a host (rate h) downs 2 instances of 1 spare each and takes
    # what is free; a GPU (rate g) takes 1; holds and repairs 1 (exponential)
    host = Kind("host", "h", h, down=2, slow=0.0, units=2, restored=0.0, d_repair=1.0,
                d_swap=0.0, hold=1.0, d_slow=0.0, per=1)
    gpu = Kind("gpu", "g", g, down=1, slow=0.0, units=1, restored=0.0, d_repair=1.0,
               d_swap=0.0, hold=1.0, d_slow=0.0)
    return [host, gpu]


def test_a_host_carries_its_refusal_while_it_holds_the_spare():
    # one refusal type (loss 1): a host refused 1 (it holds the spare) and a GPU refused
    # (the pool busy). States: empty, the host holding (carrying 1), a GPU holding;
    # 0 -> H at h = 1, 0 -> G at g = 2, back at 1: pi = (1, 1, 2) / 4. GPU refusals are
    # timers at g in H and G: pi'A = (0, 1/2, 1); L = pi'A (I - Q)^-1 solves
    # 4 x0 = x1 + x2, 2 x1 = 1/2 + x0, 2 x2 = 1 + 2 x0: L = (0.3, 0.4, 0.8).
    # E[Y] = L 1 + pi(H) = 1.5 + 0.25; E[C(Y, 2)] = pairs of timers (L a / 2 =
    # 2 x 1.2 / 2) + a timer with the carried (L(H) = 0.4) = 1.6.
    kinds = _pair(1.0, 2.0)
    mo = at._held_moments(kinds, [1.0, 2.0], 1, [[(0, 1), (1, 1)]], [1.0], 2)
    assert mo[(1,)] == pytest.approx(1.75, rel=1e-12)
    assert mo[(2,)] == pytest.approx(1.6, rel=1e-12)
    # the busy count's chain (the host's refusal a timer, releases at q0/q1 a kind:
    # Q = [[-3, 3], [1, -1]]) has the same mean and 1.575: (0, 1.75)(I - Q)^-1 =
    # (0.35, 1.4), times (1, 2) over s = 2
    refused = np.array([[0.0, 1.0], [0.0, 2.0]])
    old = at._pool_moments(kinds, [1.0, 2.0], np.array([0.25, 0.75]), [(refused, 1.0)], 2)
    assert old[(1,)] == pytest.approx(1.75, rel=1e-12)
    assert old[(2,)] == pytest.approx(1.575, rel=1e-12)


def _events(h, g, years, seed):
    """The time-average of C(Y, 2), Y the loss-1 refusals in progress of _pair's pool,
    by events: exponential holds, a host's refused instance back with its spare."""
    rng = np.random.default_rng(seed)
    n = rng.poisson((h + g) * years)
    t = np.sort(rng.uniform(0.0, years, n))
    host = rng.random(n) < h / (h + g)
    life = rng.exponential(1.0, n)
    free_at = -1.0   # the spare's release
    starts, ends = [], []
    for ti, is_host, d in zip(t, host, life, strict=True):
        free = ti >= free_at
        if free:
            free_at = ti + d
        if is_host and free or not is_host and not free:   # refused 1 (loss 1)
            starts.append(ti)
            ends.append(ti + d)
    grid = np.arange(10.0, years, 0.05)
    y = np.searchsorted(np.sort(starts), grid, "right") \
        - np.searchsorted(np.sort(ends), grid, "right")
    return float(np.mean(y)), float(np.mean(y * (y - 1) / 2))


def test_the_held_moments_are_the_event_averages():
    # 200,000 holds: the averages within about 0.3% (seeds 0-3 at 40,000: 1.590-1.605)
    mean, pairs = _events(1.0, 2.0, 200_000.0, 5)
    assert mean == pytest.approx(1.75, rel=0.01)
    assert pairs == pytest.approx(1.6, rel=0.008)   # the busy count's 1.575 is 1.6% off


def test_past_the_holdings_limit_the_busy_count_chain(monkeypatch):
    from netmodel.study.availability_kinds import event_kinds
    from netmodel.study.reliability_catalog import catalog
    from netmodel.study.reliability_cluster import build_cluster
    from netmodel.study.reliability_spares import SparePools

    cat = catalog().with_(gpu_rate_per_hour=1e-3,
                          repair_hours={"gpu-die": 24, "gpu-package": 24})
    c = build_cluster("h100-dgx", "Llama-3-8B", "decode", gpus=64, catalog_=cat)
    kinds = event_kinds(c, "global")
    pools = SparePools(placement="global", spares=6, pools=1, reachable=(6,), groups=1)
    b, occ = aa._blocking(kinds, pools)
    held = at._missed(kinds, b, 3.2, pools, occ)
    monkeypatch.setattr(availability_threshold, "MAX_HELD_STATES", 1)
    busy = at._missed(kinds, b, 3.2, pools, occ)
    # the hosts' bunching: the holdings chain reads more than twice the busy count's
    assert held > 2 * busy > 0
