"""netmodel.study.queueing.bulk_wait: a batch of k <= B requests at its own cycle S_k (a
free instance takes every waiting request up to B, an idle one starts on the first arrival
alone), checked against M/D/1 at B = 1 (Pollaczek-Khinchine), the full-batch model
(batch_wait) where every S_k = S_B, the generating function's boundary equations solved
by hand at B = 2 (an independent route: the one root of z^2 = e^(a (z - 1)) inside the
unit circle), the embedded chain solved directly, and a discrete-event simulation."""

from __future__ import annotations

import math
from bisect import bisect_right

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.queueing import batch_wait, bulk_wait, md1_wait
from netmodel.study.serving import serve, with_load


def _shape(kind: str, b: int) -> np.ndarray:
    k = np.arange(1, b + 1)
    return {"flat": np.ones(b), "linear": k / b, "affine": 0.3 + 0.7 * k / b,
            "rough": np.random.default_rng(1).uniform(0.2, 1.0, b)}[kind]


@pytest.mark.parametrize("rho", [1e-6, 0.1, 0.5, 0.8, 0.99])
def test_one_request_a_batch_is_md1(rho):
    # Pollaczek-Khinchine for a deterministic service S: W = rho S / (2 (1 - rho))
    assert bulk_wait(rho, [0.25]) == pytest.approx(rho * 0.25 / (2 * (1 - rho)), rel=1e-12)
    assert bulk_wait(rho, [0.25]) == pytest.approx(md1_wait(rho / 0.25, 0.25), rel=1e-12)


@pytest.mark.parametrize(("batch", "rho"), [(2, 0.5), (4, 0.8), (16, 0.95), (112, 0.8),
                                            (256, 0.9), (1024, 0.95), (96, 1e-6)])
def test_full_batches_throughout_are_the_old_model(batch, rho):
    # every S_k = S_B: Bailey's bulk service, batch_wait's roots and products
    assert bulk_wait(rho, np.full(batch, 0.7)) == pytest.approx(
        float(batch_wait(rho, batch, 0.7)), rel=1e-9)
    # the old model's published figures: 0.879536 steps at B = 4, rho 0.8; 0.99669 at 16
    assert bulk_wait(0.8, np.ones(4)) == pytest.approx(0.879536, abs=1e-6)
    assert bulk_wait(0.95, np.ones(16)) == pytest.approx(0.99669, abs=1e-5)


def _bisect(f, lo, hi):
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(lo) * f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize(("rho", "s1", "s2"), [(0.5, 0.5, 1.0), (0.9, 0.3, 2.0),
                                               (0.2, 1.0, 1.0), (0.7, 1.5, 1.0)])
def test_batch_of_two_by_the_generating_function(rho, s1, s2):
    """B = 2: X, the requests left at a batch's end, goes to A_1 from 0 and 1 (a batch of
    1, a1 = lam S_1 arrivals) and to X - 2 + A_2 above (a = lam S_2). Its generating
    function's numerator must vanish at the root z in (-1, 0) of z^2 = e^(a (z - 1)):
    pi0 (e^(a1 (z - 1)) - 1) + pi1 (e^(a1 (z - 1)) - z) = 0, and P(1) = 1 gives pi0 (2 + a1
    - a) + pi1 (1 + a1 - a) = 2 - a; the second derivative, E[X] = (pi0 N0 + pi1 N1 - 2 +
    a^2) / (2 (2 - a)), N_j = 2 + 4 a1 + a1^2 - j (j - 1) - 2 j a - a^2. The wait is the
    queue's request-seconds per batch over lam x the seconds per batch (Little)."""
    lam = rho * 2 / s2
    a1, a = lam * s1, lam * s2
    z = _bisect(lambda z: z * z - math.exp(a * (z - 1)), -1.0, 0.0)
    e = math.exp(a1 * (z - 1))
    pi = np.linalg.solve([[e - 1, e - z], [2 + a1 - a, 1 + a1 - a]], [0.0, 2 - a])
    n0, n1 = 2 + 4 * a1 + a1 ** 2 - a ** 2, 2 + 4 * a1 + a1 ** 2 - 2 * a - a ** 2
    ex = (pi[0] * n0 + pi[1] * n1 - 2 + a * a) / (2 * (2 - a))
    tail = 1 - pi.sum()
    carried = ex - pi[1] - 2 * tail                 # E[max(X - 2, 0)]
    area = lam / 2 * (pi.sum() * s1 ** 2 + tail * s2 ** 2) + carried * s2
    seconds = pi[0] / lam + pi.sum() * s1 + tail * s2
    assert bulk_wait(rho, [s1, s2]) == pytest.approx(area / (lam * seconds), rel=1e-10)
    if (rho, s1, s2) == (0.5, 0.5, 1.0):   # a = 1, a1 = 1/2, z = -0.4777
        assert area / (lam * seconds) == pytest.approx(0.193343, abs=1e-6)


def _chain_wait(rho: float, s: np.ndarray, states: int) -> float:
    """The embedded chain over ``states`` states, solved directly (the last absorbs the
    tail), and the wait by renewal-reward and Little."""
    b = len(s)
    lam = rho * b / s[-1]
    x = np.arange(states)
    k = np.where(x == 0, 1, np.minimum(x, b))
    left = np.where(x == 0, 0, x - k)
    log_fact = np.array([math.lgamma(i + 1.0) for i in range(states)])
    p = np.zeros((states, states))
    for i in range(states):
        a = lam * s[k[i] - 1]
        p[i, left[i]:] = np.exp(x[:states - left[i]] * math.log(a) - a - log_fact[:states - left[i]])
    p[:, -1] += 1 - p.sum(axis=1)
    m = p.T - np.eye(states)
    m[-1] = 1.0
    pi = np.linalg.solve(m, np.r_[np.zeros(states - 1), 1.0])
    service = s[k - 1]
    return float(pi @ (left * service + lam * service ** 2 / 2)) / (
        lam * float(pi @ service + pi[0] / lam))


@pytest.mark.parametrize(("batch", "rho", "kind", "states"), [
    (4, 0.8, "affine", 200), (8, 0.9, "rough", 400), (16, 0.95, "linear", 800),
    (32, 0.5, "affine", 300), (64, 0.99, "affine", 2500)])
def test_partial_batches_are_the_markov_chains(batch, rho, kind, states):
    s = _shape(kind, batch)
    assert bulk_wait(rho, s) == pytest.approx(_chain_wait(rho, s, states), rel=1e-8)


def _simulated(rho: float, s: np.ndarray, n: int, seed: int) -> tuple[float, float]:
    """Mean wait of Poisson arrivals at a server taking every waiting request up to B, a
    batch of k for s[k - 1] seconds, starting on the first arrival when idle; and its
    standard error by 20 batch means (the first tenth dropped as warm-up)."""
    b = len(s)
    t = np.cumsum(np.random.default_rng(seed).exponential(s[-1] / (rho * b), n))
    # floats and a list searched by bisect: the same sums as in numpy, found faster
    arrived, took = t.tolist(), list(map(float, s))
    starts, sizes = [], []
    i, free = 0, 0.0
    while i < n:
        start = max(free, arrived[i])
        k = min(bisect_right(arrived, start), i + b)
        starts.append(start)
        sizes.append(k - i)
        i, free = k, start + took[k - i - 1]
    waits = np.repeat(starts, sizes) - t   # each batch's start, less its requests' arrivals
    w = waits[n // 10:]
    means = w[:len(w) // 20 * 20].reshape(20, -1).mean(axis=1)
    return float(w.mean()), float(means.std(ddof=1) / math.sqrt(20))


@pytest.mark.parametrize(("batch", "rho", "kind", "seed"), [
    (4, 0.8, "affine", 1), (16, 0.5, "linear", 2), (8, 0.9, "rough", 3),
    (112, 0.8, "affine", 4), (2, 0.6, "flat", 5)])
def test_partial_batches_match_a_simulation(batch, rho, kind, seed):
    # 300,000 requests; the exact wait within 4 standard errors (of 20 batch means), each
    # under 3% of it: the simulation can tell the new model from the old
    s = _shape(kind, batch)
    mean, se = _simulated(rho, s, 300_000, seed)
    want = bulk_wait(rho, s)
    assert se < 0.03 * want
    assert abs(mean - want) < 4 * se
    if kind != "flat":   # the full-batch charge is far outside the noise
        assert abs(float(batch_wait(rho, batch, s[-1])) - want) > 10 * se


def test_short_partial_batches_wait_less_and_the_wait_still_diverges():
    s = _shape("affine", 112)   # S_1 = 0.306 of S_B: 0.3435 cycles where full ones wait 0.5004
    assert bulk_wait(0.8, s) == pytest.approx(0.343459, abs=1e-6)
    assert float(batch_wait(0.8, 112, 1.0)) == pytest.approx(0.500441, abs=1e-6)
    loads = np.linspace(0.001, 0.99, 40)
    w = np.array([bulk_wait(x, s) for x in loads])
    assert np.all(np.diff(w) > 0)
    # at a light load a request almost always runs alone: M/D/1 at S_1, lam S_1^2 / 2
    lam = 1e-6 * 112
    assert bulk_wait(1e-6, s) == pytest.approx(lam * s[0] ** 2 / 2, rel=1e-3)
    # stable below rho = 1 (B / S_B > lambda), unbounded as rho -> 1
    assert bulk_wait(0.9999, s) > 5 * bulk_wait(0.999, s) > 4.5 * 0.5


@pytest.mark.parametrize("services", [[], [0.0, 1.0], [-1.0], [1.0, math.nan]])
def test_refuses_services_that_are_not_positive_seconds(services):
    with pytest.raises(ValueError, match="services must be positive seconds"):
        bulk_wait(0.5, services)


@pytest.mark.parametrize("load", [0.0, 1.0, math.nan, -0.1])
def test_refuses_a_load_outside_0_1(load):
    with pytest.raises(UserError, match="load must be a number between 0 and 1"):
        bulk_wait(load, [1.0, 2.0])


def test_an_infinite_cycle_waits_forever():
    assert bulk_wait(0.5, [1.0, math.inf]) == math.inf


def test_deepseek_v3_keeps_its_step_only_batch_at_load_08():
    """DeepSeek-V3 on h100-dgx, coding, 1 s SLO, load 0.8: every batch at the full cycle
    took batch 96 (662.17 ms of steps + 331.49 ms of wait = 993.67 ms); a batch of k at
    the cycle of k (49.2 ms at 1, where vLLM's all-gather exchange is the cheaper, 769.2 ms
    at 112) keeps the step-only batch 112: 769.20 + 122.83 = 892.02 ms, 4.48 ms for a
    decode slot (the batches' bunches) and 14.60 ms, half a decode step, to join the
    decode batch. The pools on one pipeline stage (pp=1): with two, the prefill pool takes
    TP 8 x PP 2 x EP 8 x DP-attention 8 at batch 8 (tests/compute/test_pp_prefill_dp_groups.py)."""
    r = serve("DeepSeek-V3", "h100-dgx", with_load("coding", 0.8), pp=1)
    assert r.prefill.batch == 112
    assert r.queue_wait_s == pytest.approx(0.122829, abs=5e-6)
    assert r.ttft_s - r.join_wait_s - r.decode_wait_s == pytest.approx(0.892024, abs=5e-6)
    assert r.decode_wait_s == pytest.approx(0.0044773, abs=5e-7)
    # the full-batch charge at batch 112 would miss the SLO: 769.2 + 384.8 ms
    cycle = r.prefill.batch / r.prefill_rate
    assert r.ttft_s - r.queue_wait_s + float(batch_wait(0.8, 112, cycle)) > 1.0
