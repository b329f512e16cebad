"""A GPU derived from a derived GPU, each step raising the clock (its ``flops_multiplier``:
the SMs are the fraction's, so the multiplier is a clock ratio), is the same die run at the
product of the ratios, and is rated as one derivation at that product is: its root's
fraction at that clock by the clock-power law (compute.hardware.clock_lineage).

Before, derive_gpu rated each step on its base's rated power: a GPU file's ``Fast =
Lite+BW+FLOPS x 1.2`` was rated 175 x (0.115 + 0.885 s(1.2)) x (0.115 + 0.885 s(1.2)) =
384.985 W, while ``One = H100-SXM x 0.25 at 1.44`` (the same die: same SMs, FLOP/s,
bandwidths) was rated 405.684 W, and gpu_power, which costs every GPU as its root's fraction
at its clock (compute.power.unclocked), drew 405.66 W in a compute-bound prefill: more than
the TDP. netmodel cost on rail-optimized:domains=2 (Llama-3-8B prefill) provisioned 11,601 W
for Fast and 12,173 W for One.

Hand figures from the rows: H100-SXM 700 W; economics.toml idle_fraction 0.115,
clock_core_share 0.75, clock_voltage_floor 0.7 (every clock here at or above it)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.gpu_facts import check_gpu_file_facts
from compute.hardware import derive_gpu, get_gpu, load_gpu_file
from compute.power import gpu_power, unclocked
from compute.yield_model import parameter

CHAIN = '''
[gpu."H575Fast"]
derive_from = "Lite+BW+FLOPS"
flops_multiplier = 1.2
source = "test: Lite+BW+FLOPS clocked 1.2x again"

[gpu."H575One"]
derive_from = "H100-SXM"
fraction = 0.25
network_bandwidth_multiplier = 2.0
hbm_bandwidth_multiplier = 2.0
flops_multiplier = 1.44
max_instance = 32
source = "test: the same die in one step"

[gpu."H575Up"]
derive_from = "H100-SXM"
fraction = 0.5
flops_multiplier = 1.25
source = "test"

[gpu."H575UpHalf"]
derive_from = "H575Up"
fraction = 0.25
flops_multiplier = 1.1
source = "test: a file GPU derived from one before it"

[gpu."H575Once"]
derive_from = "H100-SXM"
fraction = 0.125
flops_multiplier = 1.375
source = "test"
'''


def _rated(watts: float, clock: float) -> float:
    """The clock-power law by hand: idle share as it is, the rest x (c r^3 + 1 - c)."""
    i, c = parameter("idle_fraction"), parameter("clock_core_share")
    assert clock >= parameter("clock_voltage_floor")   # V follows the clock: r V^2 = r^3
    return watts * (i + (1 - i) * (c * clock ** 3 + 1 - c))


@pytest.fixture(scope="module")
def gpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("h575") / "chain.toml"
    path.write_text(CHAIN)
    return load_gpu_file(path)


def _same_die(a, b) -> None:
    for field in ("sms", "flops_bf16", "flops_fp8", "hbm_bandwidth", "hbm_capacity",
                  "scaleup_bandwidth", "scaleout_bandwidth", "tdp"):
        assert math.isclose(getattr(a, field), getattr(b, field), rel_tol=1e-12), field


def test_a_chain_from_a_catalog_gpu_is_rated_as_one_derivation(gpus):
    fast, one = gpus["H575Fast"], gpus["H575One"]
    assert math.isclose(one.tdp, _rated(700 * 0.25, 1.44), rel_tol=1e-12)   # 405.684 W
    assert round(one.tdp, 3) == 405.684
    _same_die(fast, one)   # was 384.985 W: 175 W rated at 1.2x, then rated at 1.2x again
    assert unclocked(fast)[0].tdp == unclocked(one)[0].tdp == 175.0


def test_a_chain_within_one_file_is_rated_as_one_derivation(gpus):
    half, once = gpus["H575UpHalf"], gpus["H575Once"]   # 0.5 x 0.25, 1.25 x 1.1
    assert math.isclose(once.tdp, _rated(700 * 0.125, 1.375), rel_tol=1e-12)
    _same_die(half, once)   # was 87.5 W rated at 1.25x (as Up's), then at 1.1x
    assert not math.isclose(half.tdp, _rated(_rated(350.0, 1.25) * 0.25, 1.1),
                            rel_tol=1e-3)


def test_the_full_load_draw_stays_within_the_tdp(gpus):
    # a compute-bound prefill draws near TDP, never more (compute/power.py); the chained
    # GPU drew 405.66 W against a 384.985 W rating
    fast = gpus["H575Fast"]
    step = evaluate("Llama-3-8B", fast, 1, 64, "prefill")
    draw = gpu_power(fast, "prefill", step)
    assert draw <= fast.tdp
    assert draw > 0.99 * fast.tdp
    assert draw == gpu_power(gpus["H575One"], "prefill",
                             evaluate("Llama-3-8B", gpus["H575One"], 1, 64, "prefill"))


@settings(max_examples=40, deadline=None)
@given(st.floats(0.7, 1.5), st.floats(0.7, 1.5), st.sampled_from([0.25, 0.5, 1.0]))
def test_two_clock_steps_in_code_equal_one_at_their_product(r1, r2, fraction):
    h100 = get_gpu("H100-SXM")
    first = derive_gpu(h100, "H575First", fraction=0.5, flops_multiplier=r1)
    lineage = {"H575First": (h100, 0.5)}.get
    second = derive_gpu(first, "H575Second", fraction=fraction, flops_multiplier=r2,
                        lineage=lambda spec: lineage(spec.name))
    once = derive_gpu(h100, "H575Once", fraction=0.5 * fraction, flops_multiplier=r1 * r2)
    _same_die(second, once)


def test_a_clock_raised_then_lowered_back_is_the_plain_die():
    # Lite+BW+FLOPS (1.2x) at 1/1.2: Lite+BW's 175 W; rated step by step it was 187.0 W
    back = derive_gpu(get_gpu("Lite+BW+FLOPS"), "H575Back", flops_multiplier=1 / 1.2)
    assert math.isclose(back.tdp, 175.0, rel_tol=1e-12)
    assert math.isclose(back.flops_bf16, get_gpu("Lite+BW").flops_bf16, rel_tol=1e-12)


def test_a_saved_fabrics_chain_is_checked_against_the_one_rating():
    h100 = get_gpu("H100-SXM")
    up = derive_gpu(h100, "H575SavedUp", fraction=0.5, flops_multiplier=1.25)
    half = derive_gpu(up, "H575SavedHalf", fraction=0.25, flops_multiplier=1.1,
                      lineage=lambda spec: (h100, 0.5) if spec.name == up.name else None)
    facts = {"H575SavedUp": {"derive_from": "H100-SXM", "fraction": 0.5},
             "H575SavedHalf": {"derive_from": "H575SavedUp", "fraction": 0.25}}
    specs = {"H575SavedUp": up, "H575SavedHalf": half}
    check_gpu_file_facts(specs, facts, "f.json")   # the chain as derive_gpu rates it
    stepwise = _rated(_rated(350.0, 1.25) * 0.25, 1.1)   # the old rating, step by step
    old = {**specs, "H575SavedHalf": replace(half, tdp=stepwise)}
    with pytest.raises(UserError, match=r"f\.json: GPU 'H575SavedHalf' has tdp "):
        check_gpu_file_facts(old, facts, "f.json")


def test_a_spec_only_named_as_a_derived_gpu_starts_its_own_lineage():
    # built in code under a catalog name with another TDP: not that GPU, so derived from it
    # as from a GPU derived from none (its rated power rated at the new clock)
    odd = derive_gpu(get_gpu("H100-SXM"), "Lite+BW+FLOPS", fraction=0.25, flops_multiplier=1.2,
                     hbm_bandwidth_multiplier=2.0)
    odd = replace(odd, tdp=300.0)
    again = derive_gpu(odd, "H575Again", flops_multiplier=1.2)
    assert math.isclose(again.tdp, _rated(300.0, 1.2), rel_tol=1e-12)
