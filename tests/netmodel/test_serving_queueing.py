"""``serve`` at a load: the TTFT with the mean wait for a prefill batch (M/D/1 at batch 1, as
DistServe, arXiv 2401.09670 Section 3.1; M/D^B/1 bulk service for a batch of B,
netmodel.study.queueing), the SLO checked on it, and ``--load`` refused outside (0, 1).

Without a load the TTFT was that of the steps: DeepSeek-V3 on h100-dgx took a prefill batch
of 112 at a 769.20 ms TTFT against a 1 s SLO. Were every batch charged the full 769 ms
cycle, a request would wait about half of it at 80% load (1153.7 ms, the SLO missed); a
batch of k at the cycle of k waits 123.35 ms there (892.54 ms: batch 112 kept), and at
load 0.99 the search takes batch 16: 127.06 ms of the steps + 435.88 ms of wait for the
prefill batch + 251.26 ms for a decode slot (the requests in the batch's bunches).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from netmodel.study.queueing import batch_wait, md1_wait, mdc_wait
from netmodel.study.serving import serve, with_load, with_rate
from tests.netmodel.cli_helpers import one_line_error, run_cli


def test_md1_is_distserves_closed_form():
    # Avg_TTFT = D + R D^2 / (2 (1 - R D)): D = 0.2 s, R = 4/s (rho 0.8) -> 0.2 + 0.4 s
    assert md1_wait(4.0, 0.2) == pytest.approx(0.4, rel=1e-12)
    # rho = 0.5: the wait is half a service
    assert md1_wait(0.25, 2.0) == pytest.approx(1.0, rel=1e-12)
    assert float(batch_wait(0.5, 1, 2.0)) == pytest.approx(1.0, rel=1e-12)


def _bisect(f, lo, hi):
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(lo) * f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def test_batch_of_two_by_hand():
    """B = 2, rho = 0.5 (a = 1 arrival a step): the one root inside the unit circle of
    z^2 = e^(z - 1) is z = -e^((z - 1) / 2); E[Y] + a/2 = 1 / (1 - z), a + p0 = 1 + (-z) /
    (1 - z) = (1 - 2z) / (1 - z), so W = c / (1 - 2z)."""
    z = _bisect(lambda z: z + math.exp((z - 1) / 2), -1.0, 0.0)
    assert z == pytest.approx(-0.47767, abs=1e-5)
    assert float(batch_wait(0.5, 2, 3.0)) == pytest.approx(3.0 / (1 - 2 * z), rel=1e-10)


def _simulated(rho: float, batch: int, n: int, seed: int) -> float:
    """Mean wait (in steps) of Poisson arrivals at a server taking every waiting request up
    to ``batch`` each 1-s step, starting as soon as one waits."""
    t = np.cumsum(np.random.default_rng(seed).exponential(1 / (rho * batch), n))
    waits = np.empty(n)
    i, free = 0, 0.0
    while i < n:
        start = max(free, t[i])
        k = min(int(np.searchsorted(t, start, side="right")), i + batch)
        waits[i:k] = start - t[i:k]
        i, free = k, start + 1.0
    return float(waits[n // 10:].mean())


def test_bulk_wait_matches_a_simulation():
    # the closed form 0.87954 steps at B = 4, rho = 0.8 (a simulation of 400,000 requests)
    assert float(batch_wait(0.8, 4, 1.0)) == pytest.approx(0.879536, abs=1e-6)
    assert _simulated(0.8, 4, 400_000, 3) == pytest.approx(0.879536, rel=0.03)


@pytest.mark.parametrize("batch", [1, 2, 7, 112, 1024])
def test_wait_grows_with_the_load_and_vanishes_at_none(batch):
    loads = np.linspace(0.001, 0.99, 60)
    w = np.array([float(batch_wait(x, batch, 1.0)) for x in loads])
    assert np.all(np.diff(w) >= -1e-12 * w[1:])
    assert float(batch_wait(1e-12, batch, 1.0)) < 1e-8
    # at a high load a big batch's request waits about half a step for the next batch
    if batch >= 112:
        assert float(batch_wait(0.9, batch, 1.0)) == pytest.approx(0.5, abs=0.02)


KW = dict(dimensions="tp", tp=1, max_batch=1)   # one configuration: TP 1, batch 1


def test_serve_adds_md1_wait_at_batch_one():
    base = serve("Llama-3-8B", "h100-dgx", **KW)
    assert base.queue_wait_s is None and "no queueing" in base.table()
    prev = base.ttft_s
    for load in (0.1, 0.5, 0.8, 0.95):
        r = serve("Llama-3-8B", "h100-dgx", with_load("coding", load), **KW)
        cycle = 1 / r.prefill_rate
        assert r.queue_wait_s == pytest.approx(load * cycle / (2 * (1 - load)), rel=1e-12)
        # one decode slot (batch 1), held 54.49 ms for the request's 12 steps: M/D/1 too
        held = 1 / r.decode_rate
        assert r.decode_wait_s == pytest.approx(load * held / (2 * (1 - load)), rel=1e-12)
        # and half a decode step (of 12 in those 54.49 ms) to join the batch at the next
        assert r.join_wait_s == pytest.approx(held / 12 / 2, rel=1e-12)
        assert r.ttft_s == pytest.approx(base.ttft_s + r.queue_wait_s + r.decode_wait_s
                                         + r.join_wait_s, rel=1e-12)
        assert r.ttft_s >= prev
        prev = r.ttft_s
    # the least load a workload states (MIN_LOAD, a millionth): the wait 5e-7 of a cycle
    tiny = serve("Llama-3-8B", "h100-dgx", with_load("coding", 1e-6), **KW)
    assert tiny.queue_wait_s == pytest.approx(1e-6 / (2 * (1 - 1e-6)) / tiny.prefill_rate,
                                              rel=1e-12)
    # and a decode slot's 5e-7 of its 54.49 ms: 1.7e-6 of the TTFT in all, with the half
    # step to join the decode batch, which no load shortens: 2.27 ms
    assert tiny.ttft_s - tiny.join_wait_s == pytest.approx(base.ttft_s, rel=2e-6)
    assert tiny.join_wait_s == pytest.approx(0.0022705, abs=5e-8)


def test_serve_sizes_pools_to_run_at_the_load():
    r = serve("Llama-3-8B", "h100-dgx", with_load(with_rate("coding", 1000.0), 0.5), **KW)
    assert r.prefill_instances == math.ceil(1000.0 / 0.5 / r.prefill_rate)
    assert r.decode_instances == math.ceil(1000.0 / 0.5 / r.decode_rate)


def test_sized_pools_wait_at_their_own_load():
    # 1000 requests/s at load 0.5 on 45.29 requests/s instances: ceil(44.16) = 45 of them,
    # which run at 1000 / (45 x 45.29) = 0.4907, not 0.5; the M/D/1 wait is taken there
    stated = serve("Llama-3-8B", "h100-dgx", with_load("coding", 0.5), **KW)
    r = serve("Llama-3-8B", "h100-dgx", with_load(with_rate("coding", 1000.0), 0.5), **KW)
    assert r.prefill_instances == 45 and stated.achieved_load is None
    rho = 1000.0 / (45 * r.prefill_rate)
    assert r.achieved_load == pytest.approx(rho, rel=1e-12) and rho == pytest.approx(0.49066, abs=1e-5)
    cycle = 1 / r.prefill_rate
    assert r.queue_wait_s == pytest.approx(rho * cycle / (2 * (1 - rho)), rel=1e-12)
    assert r.queue_wait_s < stated.queue_wait_s   # 10.64 ms where 0.5 gives 11.04 ms
    assert r.ttft_s == pytest.approx(stated.ttft_s - stated.queue_wait_s + r.queue_wait_s
                                     - stated.decode_wait_s + r.decode_wait_s, rel=1e-12)
    assert r.to_dict()["achieved_load"] == r.achieved_load
    assert "waiting for a prefill batch at the sized pool's load 0.491" in r.table()


def test_delivered_tokens_are_the_load_times_the_capacity():
    base = serve("Llama-3-8B", "h100-dgx", **KW)
    r = serve("Llama-3-8B", "h100-dgx", with_load("coding", 0.5), **KW)
    assert base.delivered_tokens_per_s_per_sm is None
    assert "at capacity" in base.table() and "delivered" not in base.table()
    # capacity: (1500 + 13) tokens a request x 0.09894 requests/s/SM = 149.7; at 0.5, half
    assert r.tokens_per_s_per_sm == pytest.approx(1513 * r.requests_per_s_per_sm, rel=1e-12)
    assert r.tokens_per_s_per_sm == pytest.approx(149.69, abs=0.01)
    assert r.delivered_tokens_per_s_per_sm == pytest.approx(74.846, abs=0.001)
    assert r.to_dict()["delivered_tokens_per_s_per_sm"] == r.delivered_tokens_per_s_per_sm
    assert ("150 tokens/s/SM (1.29 output tokens/s/SM) at capacity; delivered at load 0.5: "
            "74.8 tokens/s/SM") in r.table()


def test_deepseek_v3_takes_a_smaller_batch_at_a_high_load():
    # the pools on one pipeline stage (pp=1): with two, the prefill pool takes TP 8 x PP 2
    # x EP 8 x DP-attention 8 at batch 8 (tests/compute/test_pp_prefill_dp_groups.py)
    cache = {}
    base = serve("DeepSeek-V3", "h100-dgx", collectives=cache, pp=1)
    assert base.prefill.batch == 112 and base.ttft_s == pytest.approx(0.76920, abs=5e-6)
    # every batch at the full cycle, the step-only choice would miss the 1 s SLO at 0.8
    cycle = base.prefill.batch / base.prefill_rate
    assert base.ttft_s + float(batch_wait(0.8, 112, cycle)) == pytest.approx(1.1540, abs=5e-4)
    r = serve("DeepSeek-V3", "h100-dgx", with_load("coding", 0.8), collectives=cache, pp=1)
    assert r.prefill.batch == 112 and r.queue_wait_s == pytest.approx(0.12283, abs=5e-6)
    r = serve("DeepSeek-V3", "h100-dgx", with_load("coding", 0.99), collectives=cache, pp=1)
    # one by one, the decode instance's 1,024 slots (each held 1024 / 2922 = 350 ms) would
    # wait 11.58 ms (M/D/1024 at 0.99); in the bunches of up to 64 a batch sends, far
    # longer (M^X/D/c), so the search takes batch 16: 127.02 ms of the steps + 435.18 ms
    # for a prefill batch + 246.99 ms for a slot + 14.60 ms, half of its 29.20 ms step
    # (vLLM's all-gather exchange where it is the cheaper), to join its batch
    assert mdc_wait(0.99, 1024, 1024 / r.decode_rate) == pytest.approx(0.011581, abs=5e-7)
    assert r.prefill.batch == 16 and r.ttft_s <= 1.0
    assert r.ttft_s == pytest.approx(0.82384, abs=5e-6)
    assert r.join_wait_s == pytest.approx(r.decode.latency / 2, rel=1e-12)
    assert r.join_wait_s == pytest.approx(0.014599, abs=5e-7)
    assert r.queue_wait_s == pytest.approx(0.43518, abs=5e-6)
    assert r.decode_wait_s == pytest.approx(0.24699, abs=5e-6)
    assert r.to_dict()["workload"]["load"] == 0.99 and r.to_dict()["queue_wait_s"] == r.queue_wait_s


SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--tp-only",
         "--max-batch", "8"]
RANGE = ("must be a number from 1e-06 to 1, 1 excluded (a fraction of the pools' "
         "capacity)")


@pytest.mark.parametrize(("typed", "got"), [("nan", "nan"), ("0", "0.0"), ("1", "1.0"),
                                            ("-0.5", "-0.5"), ("1.5", "1.5"),
                                            ("inf", "inf"), ("abc", "'abc'")])
def test_cli_refuses_a_load_outside_its_range(typed, got):
    r = run_cli([*SERVE, "--load", typed])
    assert one_line_error(r) == (f"error: --load {typed!r}: workload 'coding': load {RANGE}, "
                                 f"got {got}")


def test_workload_file_refuses_a_load_outside_its_range(tmp_path):
    (tmp_path / "w.toml").write_text("prompt = 1500\noutput = 13\nload = nan\n")
    r = run_cli([*SERVE, "--workload", "w.toml"], cwd=tmp_path)
    assert one_line_error(r) == f"error: w.toml: workload 'w': load {RANGE}, got nan"


def test_cli_prints_the_wait():
    r = run_cli([*SERVE, "--load", "0.5"])
    assert r.exit_code == 0, r.output
    assert ", load 0.5)" in r.output and "waiting for a prefill batch" in r.output


def test_sized_pools_deliver_the_rate_over_the_sms_they_hold():
    # 1000 requests/s on 45 prefill + d decode instances of one H100 each (TP 1): they
    # deliver 1000 x 1513 tokens/s over (45 + d) x 132 SMs, not load x capacity
    r = serve("Llama-3-8B", "h100-dgx", with_load(with_rate("coding", 1000.0), 0.5), **KW)
    assert r.gpus_used == r.prefill_instances + r.decode_instances
    want = 1000.0 * 1513 / (r.gpus_used * 132)
    assert r.delivered_tokens_per_s_per_sm == pytest.approx(want, rel=1e-12)
    assert r.delivered_tokens_per_s_per_sm < 0.5 * r.tokens_per_s_per_sm   # whole instances
    assert r.to_dict()["delivered_tokens_per_s_per_sm"] == r.delivered_tokens_per_s_per_sm
    assert (f"delivered by the sized pools at 1000 requests/s: "
            f"{r.delivered_tokens_per_s_per_sm:.3g} tokens/s/SM") in r.table()
