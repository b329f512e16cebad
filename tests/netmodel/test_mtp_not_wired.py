"""Multi-token prediction where it is not wired, through the Python API: one line naming
the parameter and why. The study's crossovers, serving, reliability and paper parts are
not checked with it, and its own models have no MTP module (Llama-3-70B, GPT-3-175B and
Llama-3.1-405B are dense; its MoE part's Mixtral-8x7B has none). ``compare`` and
``sweep`` cost it (tests/netmodel/test_mtp_compare.py), as ``search``, ``evaluate`` and
``serve`` do (tests/compute/test_mtp_decode.py)."""
import pytest

import netmodel
from compute.errors import UserError
from compute.roofline_options import RooflineOptions

MTP = RooflineOptions(mtp_tokens=1)


def test_study_refuses_mtp_saying_its_models_have_no_module():
    # the old line named no reason ('... is not modelled by the study; give it to search')
    with pytest.raises(UserError, match=r"^options\.mtp_tokens 1 is not modelled by the "
                                        r"study: none of its models has an MTP module "
                                        r"\(Llama-3-70B, GPT-3-175B, Llama-3\.1-405B, "
                                        r"Mixtral-8x7B: mtp_modules 0\)"):
        netmodel.run_study(options=MTP)


def test_study_refuses_mtp_with_a_model_that_has_one():
    with pytest.raises(UserError, match=r"^options\.mtp_tokens 1 is not modelled by the "
                                        r"study \(its crossovers, serving, reliability and "
                                        r"paper parts are not checked with it\); give it to "
                                        r"compare, sweep, search"):
        netmodel.run_study(["DeepSeek-V3"], ["H100-SXM"], ["decode"], options=MTP)


def test_search_still_takes_it():
    best = netmodel.search("DeepSeek-V3", "H200-SXM", "decode", scenario=None, options=MTP)
    assert best is not None
