"""Availability's tokens/s/SM figures are written by the one rule for a figure of merit.

``netmodel availability`` printed them with ``.4g`` ("goodput 4.46 ... (healthy 5.019)",
"66.4 ... (healthy 83.16)"); :func:`netmodel.study.summary_words.sig3` writes a figure of
merit (three significant figures, trailing zeros kept).
"""

from __future__ import annotations

import re

import pytest

from netmodel.study.availability import availability
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.summary_words import sig3


@pytest.fixture(scope="module")
def hier():
    # a cell of 128 holds 5 instances of TP 24: 8 GPUs idle, so healthy != serving
    return build_cluster("lite-hier", "GPT-3-175B", "prefill")


def test_the_table_writes_the_per_sm_figures_by_sig3(hier):
    a = availability(None, None, cluster=hier, spares=8, placement="global", trials=20)
    text = a.table()
    line = next(x for x in text.splitlines() if x.startswith("goodput "))
    good, healthy = re.fullmatch(r"goodput (\S+) tokens/s/SM .*\(healthy (\S+)\)", line).groups()
    assert good == sig3(a.goodput_per_sm)
    assert healthy == sig3(a.healthy_per_sm)
    serving = re.search(r"^healthy (\S+) tokens/s/SM over the SMs serving", text, re.M)[1]
    assert serving == sig3(a.serving_per_sm)
    # three significant figures each (the old .4g wrote four: '17.25')
    for fig in (good, healthy, serving):
        assert len(fig.replace(".", "").replace(",", "").lstrip("0")) == 3, fig
