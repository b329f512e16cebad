"""Idle does not follow a clock a GPU runs at only under load, and the HBM part of a draw does
not follow the SM clock.

Idle is leakage and the fixed draw at the idle clock. A derived GPU whose flops_multiplier
raises its clock (Lite+BW+FLOPS: the Lite at 1.2x) idled at idle_fraction of its rated TDP,
0.115 x 259.56 = 29.85 W, while the law that rated it (compute.clock_power.rated_at_clock)
kept the Lite's 0.115 x 175 = 20.125 W as the idle share; it now idles at its fraction of
its base's TDP (compute.power.unclocked_tdp), as a GPU at another clock (--clock) already
idled at its nominal TDP's share. Hand figures from the rows: gpus.toml (H100-SXM 700 W,
Lite+BW+FLOPS derive_from H100-SXM, fraction 0.25, flops_multiplier 1.2) and economics.toml
(idle_fraction 0.115, memory_power_share 0.354, clock_core_share 0.75, the clocks above
clock_voltage_floor 0.7, where V follows the clock).

The law keeps 1 - clock_core_share of every draw (HBM and I/O) at its nominal watts; the
docs (docs/economics.md, 'What the clock holds') say why the rest of a stream's draw is on
the SM clock, from P63 and P68 (shared/reference/power_cost_yield.csv), with the model's
figures this file recomputes.
"""

import csv
import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from compute.clock_power import ClockPowerLaw
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.power import activity, gpu_at_clock, gpu_power, hbm_share, unclocked_tdp
from compute.yield_model import parameter
from netmodel.study.cost import cost_summary

ROOT = Path(__file__).resolve().parents[2]
GPUS = tomllib.loads((ROOT / "compute" / "data" / "gpus.toml").read_text())["gpu"]
ECONOMICS = ROOT / "docs" / "economics.md"
REFERENCE = ROOT.parent / "shared" / "reference" / "power_cost_yield.csv"

ENTRY = GPUS["Lite+BW+FLOPS"]
IDLE_SHARE, M, C = (parameter(k) for k in ("idle_fraction", "memory_power_share",
                                           "clock_core_share"))
NOMINAL = get_gpu(ENTRY["derive_from"]).tdp * ENTRY["fraction"]    # 0.25 x 700 = 175 W
R = ENTRY["flops_multiplier"]                                        # 1.2
RATED = NOMINAL * (IDLE_SHARE + (1 - IDLE_SHARE) * (C * R ** 3 + 1 - C))  # 259.56 W
IDLE = IDLE_SHARE * NOMINAL   # 20.125 W


def _scale(r: float) -> float:
    """The law's above-idle factor at r x the clock, the clock above the voltage floor."""
    assert r >= parameter("clock_voltage_floor")
    return C * r ** 3 + 1 - C


def test_rows_give_the_hand_figures():
    assert (NOMINAL, R, IDLE_SHARE) == (175.0, 1.2, 0.115)
    assert round(RATED, 2) == 259.56 and round(IDLE, 3) == 20.125
    assert get_gpu("Lite+BW+FLOPS").tdp == pytest.approx(RATED, rel=1e-12)


def test_a_raised_clock_does_not_raise_idle():
    fast = get_gpu("Lite+BW+FLOPS")
    assert unclocked_tdp(fast) == NOMINAL
    assert gpu_power(fast, "idle") == pytest.approx(IDLE, rel=1e-12)
    assert gpu_power(fast, "idle") < 0.9 * IDLE_SHARE * RATED   # was 0.115 x 259.56 = 29.85 W
    # the same die as Lite+BW, and as Lite+BW run at 1.2x: one idle draw
    assert gpu_power(fast, "idle") == pytest.approx(gpu_power("Lite+BW", "idle"), rel=1e-12)
    assert gpu_power(fast, "idle") == pytest.approx(
        gpu_power(gpu_at_clock("Lite+BW", R), "idle"), rel=1e-12)
    # an idle share swept: its share of the 175 W, whatever the rating
    for share in (0.05, 0.3):
        assert gpu_power(fast, "idle", idle_fraction=share) == pytest.approx(share * NOMINAL)


def test_the_draw_spans_idle_to_the_rated_tdp():
    fast = get_gpu("Lite+BW+FLOPS")
    step = evaluate("Llama-3-8B", fast, 1, 8)
    # Lite+BW at 1.2x: its HBM stream the share Lite+BW's draws (0.354 x 2) of a range the
    # law scales as it scales the stream, 175 - 20.125 = 154.875 W x 1.546 = 239.435 W
    share = M * 2
    assert hbm_share(fast, M) == pytest.approx(share, rel=1e-12)
    assert RATED - IDLE == pytest.approx((NOMINAL - IDLE) * _scale(R), rel=1e-12)
    a = activity(step, hbm_power_share=share)
    assert 0 < a < 1
    assert gpu_power(fast, "decode", step) == pytest.approx(IDLE + (RATED - IDLE) * a,
                                                            rel=1e-12)
    # a compute-bound prefill draws the rated TDP
    pre = evaluate("Llama-3-8B", fast, 1, 4, "prefill")
    assert activity(pre, hbm_power_share=share) == pytest.approx(1, abs=0.01)
    assert gpu_power(fast, "prefill", pre) == pytest.approx(RATED, rel=0.01)


def test_a_raised_gpu_run_at_another_clock():
    # Lite+BW+FLOPS at 0.8x is the Lite+BW die at 1.2 x 0.8 = 0.96x its clock: the law at
    # 0.96x, its idle as it is (f x V^2 follow the die's own clock, not each ratio alone)
    slow = gpu_at_clock("Lite+BW+FLOPS", 0.8)
    want = IDLE + (NOMINAL - IDLE) * _scale(R * 0.8)   # 20.125 + 154.875 x 0.9136 = 161.61 W
    assert slow.tdp == pytest.approx(want, rel=1e-12)
    assert round(slow.tdp, 2) == 161.61
    assert slow.tdp == pytest.approx(gpu_at_clock("Lite+BW", R * 0.8).tdp, rel=1e-12)
    assert gpu_power(slow, "idle") == pytest.approx(IDLE, rel=1e-12)


def test_a_spec_only_named_as_a_derived_gpu_keeps_its_own_tdp():
    other = replace(get_gpu("Lite+BW+FLOPS"), tdp=300.0)   # not the derivation's rating
    assert unclocked_tdp(other) == 300.0
    assert gpu_power(other, "idle") == pytest.approx(IDLE_SHARE * 300.0)


def test_the_same_die_at_the_same_clock_draws_the_same_in_prefill():
    # lite-ocs Llama-3-70B prefill (TP 8: compute and collectives, no HBM-bound stage):
    # the catalog's 1.2x GPU and --clock 1.2 on Lite+BW; 0.9% apart while the first idled
    # at 0.115 of its rating
    rated = cost_summary("lite-ocs@Lite+BW+FLOPS", "Llama-3-70B", "prefill")
    clocked = cost_summary("lite-ocs@Lite+BW", "Llama-3-70B", "prefill", clock=R)
    assert rated.tokens_per_s == pytest.approx(clocked.tokens_per_s, rel=1e-9)
    assert rated.power_gpu == pytest.approx(clocked.power_gpu, rel=1e-3)


@pytest.mark.parametrize("r", [0.8, 1.2])
def test_the_hbm_part_of_a_stream_is_held_under_the_clock(r):
    # H100 batch-1 decode, memory-bound: the same bytes a second at r x the clock (the step
    # time is the HBM's), so the stream's draw is the same share; the law scales C of it
    # by r V^2 = r^3 and keeps 1 - C (HBM and I/O) at its nominal watts
    h100 = get_gpu("H100-SXM")
    one, at_r = (evaluate("Llama-3-8B", g, 1, 1) for g in (h100, gpu_at_clock(h100, r)))
    assert at_r.latency == pytest.approx(one.latency, rel=1e-3)
    idle, span = IDLE_SHARE * h100.tdp, (1 - IDLE_SHARE) * h100.tdp   # 80.5 W, 619.5 W
    a = activity(at_r)
    p = gpu_power(h100, "decode", at_r, clock=r)
    assert p == pytest.approx(idle + span * a * _scale(r), rel=1e-12)
    held = span * a * (1 - C)                                   # the HBM and I/O part
    assert p - idle - held == pytest.approx(span * a * C * r ** 3, rel=1e-12)
    assert held == pytest.approx(span * activity(one) * (1 - C), rel=0.01)


def _p63_bound() -> float:
    if not REFERENCE.exists():
        pytest.skip(f"reference data absent: {REFERENCE}")
    with REFERENCE.open() as f:
        row = next(r for r in csv.DictReader(f) if r["id"] == "P63")
    return float(re.search(r"saves up to (\d+)% decode energy", row["what"])[1]) / 100


def test_the_docs_give_the_models_clock_locking_saving():
    text = " ".join(ECONOMICS.read_text().split())
    said = re.search(r"The model saves (\d+)% at 0\.8x, (\d+)% at 0\.7x and (\d+)% at 0\.5x "
                     r"\(Llama-3-8B batch-1 decode on the H200, latency unchanged\): more "
                     r"than P63's (\d+)%", text)
    assert said, "docs/economics.md no longer gives the model's clock-locking saving"
    *saved, p63 = (int(x) for x in said.groups())
    assert p63 / 100 == _p63_bound() == 0.32
    h200 = get_gpu("H200-SXM")
    one = evaluate("Llama-3-8B", h200, 1, 1)
    base = gpu_power(h200, "decode", one) * one.latency

    def saving(r, law=None):
        g = gpu_at_clock(h200, r, law)
        s = evaluate("Llama-3-8B", g, 1, 1)
        return 1 - gpu_power(g, "decode", s, law=law) * s.latency / base

    got = [saving(r) for r in (0.8, 0.7, 0.5)]
    assert [round(100 * x) for x in got] == saved
    assert got[-1] > _p63_bound()
    # a stream charged wholly by its bytes (no share on the SM clock) saves nothing: the
    # draw is the same at every clock (the tensor cores' sliver, twice as long at 0.5x,
    # costs 1.5%)
    bytes_only = ClockPowerLaw(core_share=0.0)
    assert -0.02 < saving(0.5, bytes_only) <= 0
    # the two ways to 1.2x are one: the catalog's GPU is costed as Lite+BW at 1.2x, its
    # stream by the law as --clock's; charged by its bytes alone (its SM share held) it
    # drew 131.8 W
    text_w = re.search(r"Llama-3-8B batch-1 decode draws ([\d.]+) W, where a stream "
                       r"charged by its bytes alone drew ([\d.]+) W", text)
    assert text_w
    fast, clocked = get_gpu("Lite+BW+FLOPS"), gpu_at_clock("Lite+BW", R)
    steps = [evaluate("Llama-3-8B", g, 1, 1) for g in (fast, clocked)]
    drawn = [gpu_power(g, "decode", s) for g, s in zip((fast, clocked), steps, strict=True)]
    assert drawn[0] == pytest.approx(drawn[1], rel=1e-12)
    by_bytes = IDLE + (RATED - IDLE) * activity(
        steps[0], hbm_power_share=M * 2 * (NOMINAL - IDLE) / (RATED - IDLE))
    said_w = [float(x) for x in text_w.groups()]
    assert [round(drawn[0], 1), round(by_bytes, 1)] == said_w == [191.7, 131.8]
    assert (drawn[0] - IDLE) / (by_bytes - IDLE) == pytest.approx(_scale(R), rel=0.02)
