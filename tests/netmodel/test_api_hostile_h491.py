"""Hostile input through ``import netmodel`` (docs/api.md) found by a probe of about 1,300
calls, fixed since (each refusal was a strict xfail until its fix) and now guarded here."""

import pytest

import netmodel
from compute.errors import UserError


def test_run_study_empty_gpus_is_refused():
    with pytest.raises(UserError, match=r"GPU"):
        netmodel.run_study(models=["Llama-3-70B"], gpus=[], phases=["decode"])


def test_compare_empty_gpus_is_refused():
    with pytest.raises(UserError, match=r"gpus"):
        netmodel.compare(["Llama-3-70B"], ["lite-flat"], ["decode"], gpus=[], max_batch=8)


def test_collective_time_empty_algorithms_names_the_parameter():
    with pytest.raises(UserError, match=r"algorithms"):
        netmodel.collective_time("single-switch:n=8", "all-reduce", 1e6, 8, algorithms=[])


def test_run_study_unknown_keyword_names_run_study():
    with pytest.raises((TypeError, UserError), match=r"\brun_study\b") as err:
        netmodel.run_study(bogus=1)
    # the keyword and the allowed ones (run_study's own and run_full_study's) on one line
    assert "'bogus'" in str(err.value) and "\n" not in str(err.value)
    assert {"models", "gpus", "phases", "networks", "figures"} <= set(
        str(err.value).split("allowed: ")[1].split(", "))


@pytest.mark.parametrize("op", ["all-reduce", "send-recv"])
def test_collective_on_uncircuited_ocs_is_refused(op):
    with pytest.raises(UserError, match=r"logical"):
        netmodel.collective_time("ocs:gpus=4,ports=2", op, 1e6, 2)


def test_collective_on_circuited_ocs_is_finite():
    # the guard beside the refusal above: with circuits, a pair of GPUs talks over one circuit
    # (one port of two: 225 GB/s per direction); 1 MB send-recv >= 1e6 / 225e9 s
    t = float(netmodel.collective_time("ocs:gpus=4,ports=2,logical=ring", "send-recv", 1e6, 2))
    assert 1e6 / 225e9 <= t < 1e-3


@pytest.mark.parametrize("model", ["Llama-3-70B", "Mixtral-8x7B"])
def test_evaluate_unread_expert_skew_is_refused(model):
    with pytest.raises(UserError, match=r"expert_skew"):
        netmodel.evaluate(model, "H100-SXM", "decode", tp=8, batch=8, expert_skew=2)


def test_sweep_names_an_unknown_keyword_under_its_own_name():
    # TypeError: run_sweep() got an unexpected keyword argument 'bogus' (an inner name)
    import netmodel
    with pytest.raises(UserError) as caught:
        netmodel.sweep(["h100-dgx"], ["adjust.hop_latency=0.1us:1us"], bogus=1)
    text = str(caught.value)
    assert text.startswith("sweep() takes no keyword 'bogus'; allowed: ") and "\n" not in text
    assert "gpus" in text and "points" in text
