"""summary.md's part 4 table: its last column says what the spare count buys."""

from __future__ import annotations

from types import SimpleNamespace

from netmodel.study.summary import _reliability_part


def _summary(scenario, threshold, quantile):
    return SimpleNamespace(
        model="m", phase="decode", scenario=scenario, gpus=32, tp=4,
        sms_down_per_gpu_failure_hw=132.0, sms_down_per_gpu_failure_sw=528.0,
        gpu_failures_per_year=3.5, availability=0.998, availability_with_spares=0.999,
        spares=1, spare_placement="pod", spares_needed=8, spares_needed_placement="global",
        threshold=threshold, quantile=quantile)


def test_spares_column_names_the_capacity_and_the_share_of_time():
    # the header read 'spares for 99% 99.9% of the time' (two bare percentages, typed
    # out whatever the summaries' threshold and quantile): the smallest pool that keeps
    # >= threshold of the capacity at least quantile of the time
    for threshold, quantile, words in ((0.99, 0.999, ">= 99% of capacity 99.9% of the time"),
                                       (0.95, 0.99, ">= 95% of capacity 99% of the time")):
        rel = SimpleNamespace(summaries=[_summary("base@H", threshold, quantile)], notes={})
        fab = SimpleNamespace(baseline="base@H", scenarios=[])
        header = next(line for line in _reliability_part(rel, fab) if line.startswith("| scen"))
        assert header.endswith(f"| spares to keep {words} |"), header
