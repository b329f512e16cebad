"""Two-batch overlap where it is not modelled, through the Python API: one line naming the
parameter. The study accepted ``options.two_batch_overlap`` and mixed overlapped and serial
steps in its parts; ``search`` with ``parallelism='all'`` said 'got PP 8', a degree the
caller never gave. (compare and sweep take it: tests/netmodel/test_fabric_options_compare.py.)"""
import pytest

import netmodel
from compute.errors import UserError
from compute.roofline_options import RooflineOptions

TBO = RooflineOptions(two_batch_overlap=True)


def test_not_wired_refused_by_name():
    with pytest.raises(UserError, match=r"^options\.two_batch_overlap is not modelled by "
                                        r"the study; give it to compare, sweep, search"):
        netmodel.run_study(["Llama-3-8B"], ["H100-SXM"], ["decode"], options=TBO)


@pytest.mark.parametrize("scenario", [None, "h100-dgx"])
def test_search_all_refused_by_parallelism(scenario):
    with pytest.raises(UserError, match=r"^parallelism 'all' searches pipeline stages"):
        netmodel.search("Mixtral-8x7B", "H100-SXM", "prefill", scenario=scenario,
                        parallelism="all", options=TBO)


def test_search_auto_still_takes_it():
    # DeepSeek-V3 prefill on h100-dgx at PP 1: the overlapped step is taken (docs/study.md's
    # serve prefill pool: TP 16 x EP 16 x DP-attention 16, 400 ms against 760 ms serial)
    best = netmodel.search("DeepSeek-V3", phase="prefill", scenario="h100-dgx",
                           options=TBO, prompt=1500).best
    assert best.pp == 1 and best.two_batch_hidden > 0
    off = netmodel.search("DeepSeek-V3", phase="prefill", scenario="h100-dgx",
                          prompt=1500).best
    assert best.latency < off.latency
