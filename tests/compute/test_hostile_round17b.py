"""Hostile input, round 17b (compute): public functions below the API that took any object
and raised AttributeError, TypeError, ZeroDivisionError or numpy's 'truth value ... is
ambiguous' ValueError deep inside. Now each refuses in one line naming the parameter and
what is allowed; valid inputs give what they gave."""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from compute.hardware import GpuSpec, derive_gpu, get_gpu
from compute.models import expected_experts_touched, get_model
from compute.parallel import expert_slots
from compute.power import ClockPowerLaw, clock_sweep, gpu_at_clock, gpu_power
from compute.units import parse_size_range

NOT_A_LAW = [0.8, "x", np.array([1.0, 2.0]), np.array(5), [0.8], ClockPowerLaw]


@pytest.mark.parametrize("law", NOT_A_LAW, ids=["float", "str", "array", "0-d", "list", "class"])
def test_a_clock_power_law_of_the_wrong_type_is_refused_by_name(law):
    calls = (lambda: gpu_at_clock("Lite", 1.2, law),
             lambda: gpu_power("Lite", "idle", law=law),
             lambda: clock_sweep("Llama-3-70B", "Lite", "decode", clocks=(1.0,), law=law))
    for call in calls:
        # named where it lives (compute.power, which says the law, re-exports it)
        with pytest.raises(UserError, match=r"^law must be a compute\.clock_power\.ClockPowerLaw "
                                             r"\(e\.g\. .*\) or None for the defaults, got "):
            call()


@pytest.mark.parametrize("clocks", [None, 0.8, "0.8"])
def test_clock_sweep_clocks_must_be_a_list(clocks):
    with pytest.raises(UserError, match=r"^clocks must be a list of clock ratios, got "):
        clock_sweep("Llama-3-70B", "Lite", "decode", clocks=clocks)


def test_the_default_and_a_given_law_agree():
    # the shipped law given explicitly is the default: the same GPU at 1.2x
    assert gpu_at_clock("Lite", 1.2) == gpu_at_clock("Lite", 1.2, ClockPowerLaw())
    # idle draw: idle_fraction x the nominal TDP, whichever way the law comes
    assert gpu_power("Lite", "idle") == gpu_power("Lite", "idle", law=ClockPowerLaw())


@pytest.mark.parametrize("base", [None, "H100-SXM", 1.0, np.array(5)])
def test_derive_gpu_base_must_be_a_gpu_spec(base):
    with pytest.raises(UserError, match=r"^base must be a compute\.hardware\.GpuSpec "
                                         r"\(e\.g\. get_gpu\('H100-SXM'\)\), got "):
        derive_gpu(base, "X", fraction=0.5)
    half = derive_gpu(get_gpu("H100-SXM"), "X", fraction=0.5)
    assert isinstance(half, GpuSpec) and half.sms == 66   # 132 SMs / 2


@pytest.mark.parametrize("source", [None, 1.0, np.array([1.0, 2.0]), "x" * 10_001],
                         ids=["None", "float", "array", "long"])
def test_derive_gpu_source_must_be_text(source):
    with pytest.raises(UserError, match=r"^GPU 'X': source must be text of at most 10,000 "):
        derive_gpu(get_gpu("H100-SXM"), "X", fraction=0.5, source=source)
    assert derive_gpu(get_gpu("H100-SXM"), "X", fraction=0.5).source == "derived from H100-SXM"


@pytest.mark.parametrize("max_sizes", [None, "x", 0, -1, 2.5, True, np.array([1.0, 2.0]),
                                       np.timedelta64(5, "s"), 10**400],
                         ids=["None", "str", "0", "-1", "2.5", "True", "array", "timedelta",
                              "10**400"])
def test_parse_size_range_max_sizes_must_be_a_whole_count(max_sizes):
    with pytest.raises(UserError, match=r"^max_sizes must be a whole number from 1 to "):
        parse_size_range("1KiB:1GiB", max_sizes=max_sizes)


def test_parse_size_range_of_a_valid_limit():
    # 1 KiB to 1 GiB by powers of two: 2**10 .. 2**30, 21 sizes
    assert parse_size_range("1KiB:1GiB", max_sizes=np.int64(21)) == [2.0**i for i in range(10, 31)]
    with pytest.raises(UserError, match="makes 21 sizes, more than the limit of 20"):
        parse_size_range("1KiB:1GiB", max_sizes=20)


@pytest.mark.parametrize("ep", [0, -1, None, "8", 2.0, True, np.timedelta64(2, "s"), 10**400],
                         ids=["0", "-1", "None", "str", "float", "True", "timedelta", "10**400"])
def test_expert_slots_refuses_an_ep_degree_that_is_not_a_whole_count(ep):
    with pytest.raises(UserError, match=r"^ep must be a whole number from 1 to "):
        expert_slots(256, ep)


@pytest.mark.parametrize("experts", [0, None, "256", 2.0])
def test_expert_slots_refuses_an_expert_count_outside_the_model_limits(experts):
    with pytest.raises(UserError, match=r"^experts must be a whole number from 1 to 1,048,576"):
        expert_slots(experts, 8)


def test_expert_slots_of_valid_counts():
    # ceil(256 / 24) = 11 slots each, 24 x 11 - 256 = 8 redundant
    assert expert_slots(256, 24) == (11, 8)
    assert expert_slots(np.int64(256), np.int64(24)) == (11, 8)


@pytest.mark.parametrize("model", [None, "DeepSeek-V3", 1.0])
def test_expected_experts_touched_model_must_be_a_model_spec(model):
    with pytest.raises(UserError, match=r"^model must be a compute\.model_spec\.ModelSpec"):
        expected_experts_touched(model, 64.0)


@pytest.mark.parametrize("tokens", ["x", None, 1 + 1j, [10**400], np.timedelta64(5, "s"),
                                    [1.0, "x"]])
def test_expected_experts_touched_tokens_must_be_numbers(tokens):
    with pytest.raises(UserError, match=r"^tokens must be a number of tokens or an array"):
        expected_experts_touched(get_model("DeepSeek-V3"), tokens)


def test_expected_experts_touched_of_valid_tokens():
    m = get_model("DeepSeek-V3")   # 256 routed experts, 8 a token
    one = 256 * (1 - (1 - 8 / 256) ** 64)
    assert expected_experts_touched(m, 64.0) == pytest.approx(one, rel=1e-15)
    np.testing.assert_allclose(expected_experts_touched(m, np.array([64, 1])),
                               [one, 8.0], rtol=1e-15)
    assert float(expected_experts_touched(get_model("Llama-3-8B"), [3, 4])[1]) == 1.0
