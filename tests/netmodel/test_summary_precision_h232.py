"""summary.md's tables write every value at three significant figures, trailing zeros kept
(audit h232): plain .3g wrote the H100's 53.956 tokens/s/SM as "54" beside the Lite's "53.9",
GPT-3-175B's 3.000 as "3" beside "2.59", and h100-dgx's 2.802 tokens/s/W as "2.8" beside
"1.12", so a column mixed precisions and an integer-looking "3" read as exact."""

from __future__ import annotations

import pytest

from netmodel.study.summary_words import ratio_x, sig3


@pytest.mark.parametrize(("value", "text"), [
    (53.956461848986805, "54.0"), (53.94001604863598, "53.9"), (13.010, "13.0"),
    (3.0000, "3.00"), (2.591, "2.59"), (2.8019887992161476, "2.80"),
    (0.11035528459372167, "0.110"), (0.0594, "0.0594"), (280.1, "280"), (1.0, "1.00"),
    (12345.0, "12,300"), (999.6, "1,000"), (None, "infeasible"),
])
def test_three_significant_figures_with_their_zeros(value, text):
    assert sig3(value) == text


def test_part_one_table_reads_at_one_precision():
    from netmodel.study.lite_gpu import ideal_network, run_lite_gpu_study
    from netmodel.study.summary_fabrics import ideal_section

    args = (["Llama-3-70B"], ["H100-SXM", "Lite"], ["prefill"])
    study = run_lite_gpu_study(*args) + run_lite_gpu_study(
        *args, comm_factory=ideal_network, network="ideal")
    lines = ideal_section(study, *args)
    # the study's ideal-network prefill, each to three figures (H100 53.956 and Lite 53.940
    # tokens/s/SM when written: '54.0' and '53.9'; h356: were pins of the two cells)
    import re

    for g in ("H100-SXM", "Lite"):
        r = study.row("Llama-3-70B", g, "prefill", "ideal")
        cell = sig3(r.tokens_per_s_per_sm)
        assert len(re.sub(r"\D", "", cell).lstrip("0")) == 3, cell
        assert f"| {g} | {cell} ({ratio_x(r.vs_baseline)}) |" in lines, (g, lines)
