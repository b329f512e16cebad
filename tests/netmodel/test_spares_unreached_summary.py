"""Part 4's 'Spares per SM bought' bullet against the reliability table beside it: the
idle-SM-for-availability trade is said only of a pool the fabric reaches."""

from __future__ import annotations

from types import SimpleNamespace

from netmodel.study.summary_costs import reliability_section


def _row(scenario, gpus, spares, healthy, avail, avail_spares):
    # goodput over every SM bought = healthy x availability x GPUs serving / GPUs bought
    return SimpleNamespace(
        scenario=scenario, model="Llama-3-70B", phase="decode", gpus=gpus, tp=4, pp=1, ep=1,
        attention_dp=1, sms_down_per_gpu_failure_hw=1.0, sms_down_per_gpu_failure_sw=4.0,
        gpu_failures_per_year=1.0, availability=avail, healthy_tokens_per_s_per_sm=healthy,
        goodput_tokens_per_s_per_sm=healthy * avail, spares=spares, spare_placement="pod",
        availability_with_spares=avail_spares,
        goodput_tokens_per_s_per_sm_with_spares=healthy * avail_spares * gpus / (gpus + spares),
        spares_needed=8, spares_needed_placement="global", threshold=0.99, quantile=0.999)


def _bullet(rows):
    rel = SimpleNamespace(summaries=rows, notes={}, sms_per_gpu={}, spares="1%", recovery={})
    fab = SimpleNamespace(scenarios=[], baseline="h100-dgx@H100-SXM")
    [line] = [x for x in reliability_section(rel, fab)
              if x.startswith("- **Spares per SM bought**")]
    return line


def test_an_unreached_pool_is_not_said_to_trade_idle_sms_for_availability():
    # the shipped study (reliability.csv): h100-dgx's 1 pod spare and lite-direct's 2 have
    # no free port (availability unchanged, 0.99829 and 0.99698), lite-flat's 2 lift it
    # 0.99701 -> 0.99956. By hand: h100-dgx 20.102 x 0.99829 = 20.07 -> x 32 / 33 = 19.46,
    # -1/33 = -3.0%, the pool's share of the SMs and nothing else; lite-direct 8.199 x
    # 0.99698 = 8.17 -> x 128 / 130 = 8.05 (-2/130 = -1.5%); lite-flat 7.957 x 0.99701 =
    # 7.93 -> 7.957 x 0.99956 x 128 / 130 = 7.83 (-1.3%: availability +0.26% against
    # 2/130 = 1.54% of the SMs idle). The bullet said 'on every scenario the pool's idle
    # SMs cost more tokens/s per SM than the availability it adds wins back', of pools
    # that add none.
    line = _bullet([_row("h100-dgx@H100-SXM", 32, 1, 20.102, 0.99829, 0.99829),
                    _row("lite-direct@Lite", 128, 2, 8.199, 0.99698, 0.99698),
                    _row("lite-flat@Lite", 128, 2, 7.957, 0.99701, 0.99956)])
    assert "h100-dgx@H100-SXM 20.1 to 19.5 (-3.0%)" in line, line
    assert "lite-direct@Lite 8.17 to 8.05 (-1.5%)" in line, line
    assert "lite-flat@Lite 7.93 to 7.83 (-1.3%)" in line, line
    assert "on every scenario" not in line, line
    assert ("on lite-flat@Lite the pool's idle SMs cost more tokens/s per SM than the "
            "availability it adds wins back") in line, line
    assert ("on h100-dgx@H100-SXM and lite-direct@Lite no spare is reachable, so the pool "
            "adds no availability and goodput falls by its share of the SMs bought") in line


def test_every_pool_reached_keeps_the_one_clause():
    line = _bullet([_row("lite-flat@Lite", 128, 2, 7.957, 0.99701, 0.99956),
                    _row("lite-ocs@Lite", 128, 2, 7.809, 0.99689, 0.99947)])
    assert line.endswith(": on every scenario the pool's idle SMs cost more tokens/s per SM "
                         "than the availability it adds wins back."), line
    assert "reachable" not in line


def test_no_pool_reached():
    line = _bullet([_row("h100-dgx@H100-SXM", 32, 1, 20.102, 0.99829, 0.99829)])
    assert line.endswith(": on h100-dgx@H100-SXM no spare is reachable, so the pool adds no "
                         "availability and goodput falls by its share of the SMs bought."), line
    assert "idle SMs cost" not in line
