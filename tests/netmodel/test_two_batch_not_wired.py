"""Two-batch overlap where it is not modelled, through the Python API: one line naming the
parameter. compare, sweep and the study accepted ``options.two_batch_overlap`` and mixed
overlapped and serial steps in their rows (a compare row's net% 72% of a step the network
could not all fit in; instances 'all' another batch and TTFT again); ``search`` with
``parallelism='all'`` said 'got PP 8', a degree the caller never gave."""
import pytest

import netmodel
from compute.errors import UserError
from compute.roofline import RooflineOptions

TBO = RooflineOptions(two_batch_overlap=True)


@pytest.mark.parametrize("call", [
    lambda: netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["decode"], options=TBO),
    lambda: netmodel.sweep(["h100-dgx"], ["fabric.domains=2:4"], ["Llama-3-8B"], ["decode"],
                           points=2, options=TBO),
    lambda: netmodel.run_study(["Llama-3-8B"], ["H100-SXM"], ["decode"], options=TBO),
], ids=["compare", "sweep", "study"])
def test_not_wired_refused_by_name(call):
    with pytest.raises(UserError, match=r"^options\.two_batch_overlap is not modelled by "
                                        r"(compare|sweep|the study); give it to search"):
        call()


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
