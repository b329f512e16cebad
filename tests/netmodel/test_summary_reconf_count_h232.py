"""summary.md's OCS line writes the fastest rate as a count (audit h232): '.4g' wrote
lite-ocs@Lite+BW+FLOPS's 11,865 tokens/s of Llama-3-70B prefill as '1.187e+04 tokens/s'."""

from __future__ import annotations

from types import SimpleNamespace as NS


def test_rate_and_tokens_are_written_as_counts():
    from netmodel.study.summary_fabrics import _reconfiguration

    rows = [NS(scenario="lite-ocs", model="Llama-3-70B", phase="prefill", gpu=g,
               tokens_per_s=t, reconfiguration_s=0.010)
            for g, t in (("Lite", 8247.0), ("Lite+BW+FLOPS", 11865.0))]
    fab = NS(scenarios=[NS(name="lite-ocs")], rows=rows)
    line, = _reconfiguration(fab)
    # 10 ms at 11,865 tokens/s is 118.65 tokens
    assert ("at its fastest rate (Llama-3-70B prefill on Lite+BW+FLOPS, 11,865 tokens/s) "
            "10 ms is the time of 119 tokens.") in line
    rows[0].tokens_per_s, rows[1].tokens_per_s = 400.0, 950.0   # below 100 tokens: 3 figures
    assert "950 tokens/s) 10 ms is the time of 9.5 tokens." in _reconfiguration(fab)[0]
