"""What a cost summary's to_dict gives is the caller's: the network bill behind it is cached."""

from __future__ import annotations

from netmodel.study.cost import cost_summary


def test_changing_to_dict_leaves_the_next_summary_alone():
    # to_dict's bill_of_materials was the cached bill's own counts dict: setting lanes to
    # -1 in it gave the next cost_summary('h100-dgx', ...) lanes -1 (2,304 before)
    first = cost_summary("h100-dgx", "Llama-3-70B", "decode").to_dict()
    assert first["bill_of_materials"]["lanes"] == 2304
    first["bill_of_materials"]["lanes"] = -1
    first["bill_of_materials"]["cables"]["pluggable-optics"] = -1
    first["bill_of_materials"]["traces"]["board"] = -1
    again = cost_summary("h100-dgx", "Llama-3-70B", "decode")
    assert again.network.counts["lanes"] == 2304
    # the 576 NVLinks are baseboard traces, not copper cables (the bill said copper 576)
    assert again.network.counts["cables"] == {"pluggable-optics": 288}
    assert again.network.counts["traces"] == {"board": 576}
    assert again.network.to_dict()["bill_of_materials"] == again.network.counts
