"""The wait for a decode slot under ``--load``: each decode instance's batch is ``c`` slots,
a request holding one for its decode time (continuous batching), so M/D/c
(netmodel.study.queueing.mdc_wait, exact by Crommelin's chain), checked against M/D/1, the
chain's root solved by hand at c = 2, a simulation, and Cosmetatos' approximation of
M/D/c from Erlang C; and ``serve`` adding it to the TTFT (the KV cache needs the slot's
room before it is sent)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.queueing import md1_wait, mdc_wait
from netmodel.study.serving import serve, with_load, with_rate
from netmodel.study.serving_queue import slot_wait
from netmodel.study.serving_workload import ServingWorkload
from tests.netmodel.cli_helpers import run_cli


@pytest.mark.parametrize("rho", [1e-6, 0.3, 0.9, 0.999])
def test_one_slot_is_md1(rho):
    assert mdc_wait(rho, 1, 0.4) == pytest.approx(md1_wait(rho / 0.4, 0.4), rel=1e-12)


def _bisect(f, lo, hi):
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(lo) * f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_two_slots_by_hand(rho):
    """c = 2: the requests present a service apart, X' = max(X - 2, 0) + A (a = 2 rho);
    E[max(X - 2, 0)] = -(2 - a^2) / (2 (2 - a)) + 1 / (1 - z), z the root in (-1, 0) of
    z^2 = e^(a (z - 1)); the wait is D E[max(X - 2, 0)] / a (Little)."""
    a = 2 * rho
    z = _bisect(lambda z: z * z - math.exp(a * (z - 1)), -1.0, 0.0)
    queue = -(2 - a * a) / (2 * (2 - a)) + 1 / (1 - z)
    assert mdc_wait(rho, 2, 3.0) == pytest.approx(3.0 * queue / a, rel=1e-10)
    if rho == 0.9:
        assert mdc_wait(rho, 2, 1.0) == pytest.approx(2.146923, abs=1e-6)


def _simulated(rho: float, c: int, n: int, seed: int) -> tuple[float, float]:
    """M/D/c, service 1, first come first served: a request starts when it arrives or when
    the c-th before it leaves (deterministic service frees the servers in arrival order);
    the mean wait and its standard error by 20 batch means."""
    t = np.cumsum(np.random.default_rng(seed).exponential(1 / (rho * c), n))
    start = t.copy()
    for i in range(c, n):
        start[i] = max(t[i], start[i - c] + 1.0)
    w = (start - t)[n // 10:]
    means = w[:len(w) // 20 * 20].reshape(20, -1).mean(axis=1)
    return float(w.mean()), float(means.std(ddof=1) / math.sqrt(20))


@pytest.mark.parametrize(("rho", "c", "seed"), [(0.9, 2, 1), (0.8, 8, 2), (0.7, 4, 3),
                                                (0.95, 16, 4)])
def test_matches_a_simulation(rho, c, seed):
    mean, se = _simulated(rho, c, 400_000, seed)
    want = mdc_wait(rho, c, 1.0)
    assert se < 0.05 * want and abs(mean - want) < 4 * se


def _cosmetatos(rho: float, c: int) -> float:
    """Cosmetatos (Operational Research Quarterly 27, 1976): W(M/D/c) ~ W(M/M/c) / 2 x (1 +
    (1 - rho)(c - 1)(sqrt(4 + 5c) - 2) / (16 rho c)), W(M/M/c) by Erlang C."""
    a = c * rho
    head = sum(a ** k / math.factorial(k) for k in range(c))
    tail = a ** c / math.factorial(c) / (1 - rho)
    mmc = tail / (head + tail) / (c * (1 - rho))
    return mmc / 2 * (1 + (1 - rho) * (c - 1) * (math.sqrt(4 + 5 * c) - 2) / (16 * rho * c))


@pytest.mark.parametrize("c", [2, 4, 8, 32, 64])
@pytest.mark.parametrize("rho", [0.7, 0.9, 0.95])
def test_near_cosmetatos_approximation(c, rho):
    # an approximation: within 1% at up to 8 servers, 5% at 32 and 64 (here 0.04% to 4.9%)
    off = _cosmetatos(rho, c) / mdc_wait(rho, c, 1.0) - 1
    assert abs(off) < (0.01 if c <= 8 else 0.05)


@pytest.mark.parametrize("servers", [0, 1.5, -2, True, "4"])
def test_refuses_servers_that_are_not_whole(servers):
    with pytest.raises(UserError, match="servers must be a whole number from 1"):
        mdc_wait(0.5, servers, 1.0)



def _profiled(load, rate=None):
    from compute.profiles import get_profile
    from compute.roofline_options import RooflineOptions

    wl = with_load("coding", load) if rate is None else with_load(with_rate("coding", rate), load)
    return serve("Llama-3-70B", "h100-dgx", wl,
                 options=RooflineOptions(profile=get_profile("vllm-dgx-h100")))


def test_serve_adds_the_decode_slot_wait_to_the_ttft():
    """Llama-3-70B on h100-dgx with the vllm-dgx-h100 profile, load 0.9: the decode
    instance runs 46 slots at 76.67 requests/s, each held 0.6 s: M/D/46 waits 26.93 ms one
    by one, 71.95 ms in pairs; the prefill's batches of up to 2 bring them in pairs 38% of
    the time, 63.14 ms (test_decode_bunched_arrivals), added to the TTFT as the prefill
    batch's wait is."""
    r = _profiled(0.9)
    assert r.decode.batch == 46 and r.prefill.batch == 2
    one = slot_wait(0.9, 46, r.decode_rate)
    assert one == pytest.approx(mdc_wait(0.9, 46, 46 / r.decode_rate), rel=1e-12)
    assert one == pytest.approx(0.02693, abs=5e-6)
    assert one < r.decode_wait_s < slot_wait(0.9, 46, r.decode_rate, [0.0, 1.0])
    assert r.decode_wait_s == pytest.approx(0.06314, abs=5e-6)
    steps = r.prefill.latency + r.transfer_visible_s
    # + 25.00 ms, half the 50.00 ms step, to join its batch (test_decode_join_wait)
    assert r.join_wait_s == pytest.approx(0.025, abs=5e-6)
    assert r.ttft_s == pytest.approx(steps + r.queue_wait_s + r.decode_wait_s
                                     + r.decode.latency / 2, rel=1e-12)
    assert "ms waiting for a prefill batch + 63.14 ms for a decode slot + 25.00 ms" in r.table()
    assert json.loads(r.to_json())["decode_wait_s"] == r.decode_wait_s


def test_sized_decode_pool_waits_at_its_own_load():
    """100 requests/s at 0.9: 15 prefill instances (batches of up to 2, at 0.890) send each
    batch to one of 2 decode instances (46 slots held 0.6 s, at 0.652) at random. serve
    simulates the pools (serving_sim): 0.111 ms, standard error 0.009 ms, where an
    independent simulation of 40,000 cycles (test_decode_bunched_arrivals' _pools) gives
    0.1167 +- 0.0083 ms; routed_sizes' M^X/D/c said 0.573 ms, one by one 0.121 ms."""
    r = _profiled(0.9, rate=100.0)
    achieved = 100.0 / (r.decode_instances * r.decode_rate)
    assert achieved == pytest.approx(0.65214, abs=5e-6)
    assert (r.prefill_instances, r.decode_instances) == (15, 2)
    assert 0 < r.decode_wait_se_s <= 1e-5
    assert abs(r.decode_wait_s - 1.1669e-4) < 4 * math.hypot(r.decode_wait_se_s, 8.25e-6)
    assert slot_wait(achieved, 46, r.decode_rate) == pytest.approx(1.2136e-4, abs=5e-9)
    assert json.loads(r.to_json())["decode_wait_se_s"] == r.decode_wait_se_s
    assert (f"{r.decode_wait_s * 1e3:.2f} ms for a decode slot (simulated, standard error "
            f"{r.decode_wait_se_s * 1e3:.2f} ms)") in r.table()


def test_one_decode_instance_is_simulated():
    """60 requests/s at 0.9: 9 prefill instances (at 0.890) feed one decode instance (at
    0.783), each busy prefill instance sending its batch of 2 every 0.267 s, smoother than
    Poisson over a hold of 0.6 s. Simulated 0.019 ms (standard error 0.007 ms; an
    independent simulation of 40,000 cycles 0.0184 +- 0.0032 ms), where M/D/c, what serve
    took before, gave 2.78 ms."""
    r = _profiled(0.9, rate=60.0)
    assert (r.prefill_instances, r.decode_instances) == (9, 1)
    achieved = 60.0 / r.decode_rate
    assert mdc_wait(achieved, 46, 46 / r.decode_rate) == pytest.approx(2.7814e-3, abs=5e-8)
    assert 0 < r.decode_wait_se_s <= 1e-5
    assert abs(r.decode_wait_s - 1.838e-5) < 4 * math.hypot(r.decode_wait_se_s, 3.17e-6)
    assert r.ttft_s == pytest.approx(r.prefill.latency + r.transfer_visible_s + r.queue_wait_s
                                     + r.decode_wait_s + r.join_wait_s, rel=1e-12)


def test_no_load_or_no_decode_pool_no_slot_wait():
    plain = serve("Llama-3-8B", "h100-dgx", dimensions="tp", tp=1, max_batch=8)
    assert plain.decode_wait_s is None and "decode slot" not in plain.table()
    one = serve("Llama-3-8B", "h100-dgx", with_load(ServingWorkload("one", 1500, 1), 0.5),
                dimensions="tp", tp=1, max_batch=8)
    assert one.decode is None and one.decode_wait_s is None and one.queue_wait_s is not None


def test_cli_prints_the_slot_wait():
    r = run_cli(["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--tp-only",
                 "--max-batch", "8", "--load", "0.5"])
    assert r.exit_code == 0, r.output
    assert "ms for a decode slot" in r.output
