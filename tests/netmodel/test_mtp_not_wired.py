"""Multi-token prediction where it is not wired, through the Python API: one line naming
the parameter. ``compare`` took ``options.mtp_tokens`` and ranked by the step's latency
(every verified token's work) where the time per output token is that step over the
expected tokens (compute.mtp), and its sweep and the study took it silently; ``search``,
``evaluate`` and ``serve`` cost it (tests/compute/test_mtp_decode.py)."""
import pytest

import netmodel
from compute.errors import UserError
from compute.roofline import RooflineOptions

MTP = RooflineOptions(mtp_tokens=1)


def test_compare_refuses_mtp():
    with pytest.raises(UserError, match=r"^options\.mtp_tokens 1 is not modelled by compare "
                                        r"or sweep; give it to search"):
        netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["decode"], options=MTP)


def test_sweep_refuses_mtp():
    with pytest.raises(UserError, match=r"^options\.mtp_tokens 1 is not modelled by compare "
                                        r"or sweep"):
        netmodel.sweep(["h100-dgx"], ["adjust.hop_latency=0.1us:10us"], ["DeepSeek-V3"], ["decode"],
                       options=MTP)


def test_study_refuses_mtp():
    with pytest.raises(UserError, match=r"^options\.mtp_tokens 1 is not modelled by the study"):
        netmodel.run_study(["DeepSeek-V3"], ["H100-SXM"], ["decode"], options=MTP)


def test_search_still_takes_it():
    best = netmodel.search("DeepSeek-V3", "H200-SXM", "decode", scenario=None, options=MTP)
    assert best is not None
