"""summary.md's wording: what a table column or a range names says what the numbers are."""

from __future__ import annotations

from types import SimpleNamespace

from netmodel.study.summary_costs import reliability_section


def _summary(scenario, threshold, quantile):
    return SimpleNamespace(
        model="m", phase="decode", scenario=scenario, gpus=32, tp=4, pp=1, ep=1, attention_dp=1,
        sms_down_per_gpu_failure_hw=132.0, sms_down_per_gpu_failure_sw=528.0,
        gpu_failures_per_year=3.5, availability=0.998, availability_with_spares=0.999,
        spares=1, spare_placement="pod", spares_needed=8, spares_needed_placement="global",
        threshold=threshold, quantile=quantile, goodput_tokens_per_s_per_sm=10.0,
        goodput_tokens_per_s_per_sm_with_spares=9.9)


def test_spares_column_names_the_capacity_and_the_share_of_time():
    # the header read 'spares for 99% 99.9% of the time' (two bare percentages, typed
    # out whatever the summaries' threshold and quantile): the smallest pool that keeps
    # >= threshold of the capacity at least quantile of the time
    for threshold, quantile, words in ((0.99, 0.999, ">= 99% of capacity 99.9% of the time"),
                                       (0.95, 0.99, ">= 95% of capacity 99% of the time")):
        rel = SimpleNamespace(summaries=[_summary("base@H", threshold, quantile)], notes={},
                              recovery={})
        fab = SimpleNamespace(baseline="base@H", scenarios=[])
        header = next(line for line in reliability_section(rel, fab) if line.startswith("| scen"))
        assert header.endswith(f"| spares to keep {words} |"), header


def test_spare_pool_says_its_gpus_sms_share_and_rule():
    # the reference pool, 1% of each cluster's GPUs rounded up, is 1 H100 of 32 (132 SMs,
    # 1/32 = 3.1%) against 2 Lites of 128 (2 x 33 = 66 SMs, 2/128 = 1.6%); the table said
    # '(1 pod)' and '(2 pod)', hiding that the H100 cluster gets twice the share
    base = _summary("h100-dgx@H100-SXM", 0.99, 0.999)
    lite = SimpleNamespace(**{**vars(_summary("lite-flat@Lite", 0.99, 0.999)),
                              "gpus": 128, "tp": 16, "spares": 2})
    rel = SimpleNamespace(summaries=[base, lite], notes={}, spares="1%", recovery={},
                          sms_per_gpu={"h100-dgx@H100-SXM": 132, "lite-flat@Lite": 33})
    fab = SimpleNamespace(baseline="h100-dgx@H100-SXM", scenarios=[])
    lines = reliability_section(rel, fab)
    rows = {line.split(" | ")[0][2:]: line for line in lines if line.startswith("| ")}
    assert "| 0.99900 (1 GPU = 132 SMs, 3.1% of the cluster; pod) |" in rows["h100-dgx@H100-SXM"]
    assert "| 0.99900 (2 GPUs = 66 SMs, 1.6% of the cluster; pod) |" in rows["lite-flat@Lite"]
    intro = lines[2]
    assert ("a reference pool of 1% of each cluster's GPUs, rounded up to whole GPUs" in intro
            and "1 x H100-SXM (132 SMs, 3.1% of 32 GPUs) and 2 x Lite (66 SMs, 1.6% of 128 "
            "GPUs)" in intro), intro
    hot = next(line for line in lines if line.startswith("- **Hot spares**"))
    assert "(0.99800 to 0.99900 with 2 GPUs, pod)" in hot, hot


def test_crossovers_name_every_fabric_of_a_tie():
    # Llama-3-70B decode: Lite+BW needs 23.25x on lite-direct and 28.65x on lite-flat,
    # lite-flat-inr and lite-hier alike; the summary (and the README) said '23.3x
    # (lite-direct) to 28.7x (lite-flat)', as if lite-flat alone needed the most; and with
    # --gpus B200-HGX, '<0.125x (lite-direct)' where every fabric is below the range
    from netmodel.study.summary_crossings import crossovers_section

    def row(fabric, gpu, need, bound="found"):
        return SimpleNamespace(model="m", phase="decode", fabric=fabric, gpu=gpu,
                               baseline="base@H", baseline_tokens_per_s_per_sm=20.0,
                               tokens_per_s_per_sm=14.0, bandwidth_bound=bound,
                               bandwidth_to_match=need, latency_bound="no match",
                               hop_latency_to_match=None)

    rows = [row("direct", "G", 23.25), row("flat", "G", 28.65), row("inr", "G", 28.65),
            row("hier", "G", 28.65), row("ocs", "G", None, "never"),
            *(row(f, "B", 0.125, "below range") for f in ("direct", "flat", "inr", "hier",
                                                           "ocs"))]
    [line] = [x for x in crossovers_section(SimpleNamespace(rows=rows)) if x.startswith("- **")]
    assert ("G needs 23.2x (direct) to 28.6x (flat, inr and hier) and does not match on ocs"
            in line), line
    assert "B needs <0.125x (every fabric)" in line, line


def test_a_latency_above_the_range_is_not_an_upper_limit():
    # --gpus B200-HGX: a B200 on lite-direct still matches h100-dgx with 100 us added to
    # every hop (the top of LATENCY_RANGE, latency_bound 'above range'); the summary said
    # it 'tolerates up to 100 us', a limit the search never found
    from netmodel.study.crossovers import LATENCY_RANGE
    from netmodel.study.summary_crossings import crossovers_section

    def row(bound, latency):
        return SimpleNamespace(model="m", phase="decode", fabric="f", gpu="B",
                               baseline="base@H", baseline_tokens_per_s_per_sm=20.0,
                               tokens_per_s_per_sm=40.0, bandwidth_bound="below range",
                               bandwidth_to_match=0.125, latency_bound=bound,
                               hop_latency_to_match=latency)

    top = LATENCY_RANGE[1]
    [line] = [x for x in crossovers_section(SimpleNamespace(rows=[row("above range", top)]))
              if x.startswith("- **")]
    assert f"tolerates more than {top * 1e6:.3g} us added per hop (B on f)" in line, line
    [line] = [x for x in crossovers_section(SimpleNamespace(rows=[row("found", 22.2e-6)]))
              if x.startswith("- **")]
    assert "tolerates up to 22.2 us added per hop (B on f)" in line, line
