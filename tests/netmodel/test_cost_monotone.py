"""No cost output moves the wrong way when an economics input is swept: raising an input cost
(wafer, HBM, power, network parts, hosts...) never lowers any GPU's price, any cost per SM or
any cost per token; raising an input that makes things cheaper (a larger wafer, a longer
lifetime) never raises one. The inputs are every numeric cost parameter
(netmodel.study.cost.parameters), each classified below with its reason."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.hardware import get_gpu
from compute.yield_model import _with_dies, gpu_price, package_cost
from netmodel.study.cost import _PACKAGE_ARGS, cost_summary, parameter_rows, parameters
from netmodel.study.fabric_search import fabric_search

#: +1: raising the parameter must not lower any cost output; -1: must not raise any.
#: None: no sign, with the reason.
SIGN = {name: 1 for name in parameters(numeric=True)} | {
    "wafer_diameter": -1,           # a larger wafer loses less at its edge: more dies
    "flop_utilization_at_tdp": -1,  # TDP is reached at a higher load: less power at a given one
    "lifetime": -1,                 # capex amortized over more years
    "utilization": -1,              # per token (per year it serves more and draws more)
    # a harvested die's yield can rise with alpha (defects spread out are easier to
    # harvest around) while a plain die's falls: no sign
    "alpha": None,
    # how the H100's published packaging and test costs split (fixed vs per area): a share
    # moves from large packages to small ones, the H100's total fixed
    "packaging_fixed": None, "test_fixed_fraction": None, "interposer_overhead": None,
    # the hosts' figures hold a NIC a GPU: a GPU without one (lite-flat's, lite-ocs's
    # co-packaged ports) takes it off, the more the dearer it is; with a NIC a GPU nothing
    # moves
    "nic_price": -1, "nic_power": -1,
}
#: Outputs per year that go the other way from per token.
PER_YEAR_SIGN = {"utilization": 1}
#: Largest and smallest values taken (shares; PUE; wafers from 150 mm, where an 826 mm^2 die
#: still fits, to the 1 m the model takes; a NIC no dearer than the host that holds it, as
#: cost_summary requires where a GPU has none: $1,599 and $4,001 the defaults).
HIGH = {"critical_fraction": 1.0, "idle_fraction": 1.0, "flop_utilization_at_tdp": 1.0,
        "memory_power_share": 1.0, "utilization": 1.0, "host_load_fraction": 1.0,
        "wafer_diameter": 1.0, "nic_price": 4001.0}
LOW = {"pue": 1.0, "utilization": 0.05, "wafer_diameter": 0.15, "host_cost_per_h100": 1599.0}
#: The package parameters (compute.yield_model's, passed on by cost_summary).
PACKAGE = set(_PACKAGE_ARGS) - {"yield_model", "reference_price"}
CASES = [("h100-dgx", "decode"), ("lite-flat", "decode"), ("lite-ocs", "decode"),
         ("lite-direct", "prefill")]


@pytest.fixture(scope="module")
def bests():
    return {(s, ph): fabric_search("Llama-3-70B", s, ph).best for s, ph in CASES}


def test_every_cost_parameter_is_classified():
    assert set(SIGN) == set(parameters(numeric=True))


def _value(name: str, factor: float) -> float:
    v = parameter_rows()[name].value
    x = v * factor if v else (factor - 0.25) * 1e-12   # copper_energy: 0 J/bit
    return min(HIGH.get(name, float("inf")), max(LOW.get(name, 0.0), x))


def _outputs(name: str, x: float, bests) -> dict:
    """Every GPU's price, price per SM and package cost per SM, and each case's USD per
    million tokens and USD per SM-year, at ``name = x`` (SI)."""
    out = {}
    if name in PACKAGE or name == "reference_price":
        kw = {name: x}
        for g in _with_dies():
            sms = get_gpu(g).sms
            price = gpu_price(g, **kw)
            out[("price", g)] = price
            out[("price/SM", g)] = price / sms
            if name != "reference_price":
                out[("package/SM", g)] = package_cost(g, **kw).per_sm
    for (s, ph), best in bests.items():
        c = cost_summary(s, "Llama-3-70B", ph, best, **{name: x})
        out[("USD/Mtoken", s, ph)] = c.usd_per_mtoken
        out[("USD/SM-year", s, ph)] = c.cost_per_year / (c.gpus * get_gpu(c.gpu).sms)
        out[("GPU price", s, ph)] = c.gpu_price
    return out


@pytest.mark.parametrize("name", [n for n in parameters(numeric=True) if SIGN[n]])
@settings(max_examples=6, deadline=None)
@given(st.floats(0.25, 4.0), st.floats(0.25, 4.0))
def test_raising_an_input_cost_never_lowers_a_cost(bests, name, f1, f2):
    lo, hi = sorted((_value(name, f1), _value(name, f2)))
    a, b = _outputs(name, lo, bests), _outputs(name, hi, bests)
    for key, low in a.items():
        sign = PER_YEAR_SIGN.get(name, SIGN[name]) if key[0] == "USD/SM-year" else SIGN[name]
        change = sign * (b[key] - low)
        assert change >= -1e-12 * abs(low), (name, lo, hi, key, low, b[key])
