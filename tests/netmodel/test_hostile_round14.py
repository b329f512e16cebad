"""Hostile round 14: compare and sweep's --mtp-tokens / --mtp-acceptance (21db010), the
sweep's cost.packaging_cost and cost.test_cost with prices at the default margin (3cf555d,
2dfdf04) and the library functions behind them, fed hostile values. Each test fails on the
code before its fix: a message that named 'inf' for digits typed, a RuntimeError, TypeError,
ValueError or OverflowError raised through the API."""

from __future__ import annotations

import re

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from compute.roofline_options import RooflineOptions
from netmodel.collectives.model import FabricCostModel
from netmodel.study import cost, network_bill
from netmodel.study.scenarios import Adjust
from netmodel.study.serving import ServingWorkload
from tests.netmodel.cli_helpers import one_line_error, run_cli

#: numpy's own repr of the duration the messages show: np.timedelta64(5,'s') from
#: numpy 2, numpy.timedelta64(5,'s') before
TD5 = repr(np.timedelta64(5, "s"))

DIGITS = "1" * 5000


class RaisingRepr:
    def __repr__(self):
        raise RuntimeError("repr")


# -- the command line: a number past a float's range is named as typed -------------------

COMMANDS = {
    "compare": ["compare", "--models", "DeepSeek-V3", "--scenarios", "h100-dgx", "-q"],
    "sweep": ["sweep", "--scenario", "h100-dgx", "--param", "fabric.domains=2,4", "--models",
              "DeepSeek-V3", "-q"],
    "search": ["search", "--model", "DeepSeek-V3", "--gpu", "H200-SXM"],
    "infer": ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--batch",
              "8"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("typed,shown", [("1e400", "'1e400'"),
                                         (DIGITS, "'" + "1" * 57 + "...'"),
                                         ("9" * 400 + ".0", "'" + "9" * 57 + "...'")],
                         ids=["1e400", "5000-digits", "400-digits-dot-0"])
@pytest.mark.parametrize("option", ["tokens", "acceptance"])
def test_mtp_digits_past_a_float_are_named_as_typed(tmp_path, command, typed, shown, option):
    # the line said 'got inf' of a value the user never typed
    flags = ["--mtp-tokens", typed] if option == "tokens" else \
        ["--mtp-tokens", "1", "--mtp-acceptance", typed]
    line = one_line_error(run_cli(COMMANDS[command] + flags, tmp_path),
                          f"got {shown}")
    assert "inf" not in line
    assert ("whole number from 0 (off) to 16" if option == "tokens" else
            "must be a probability from 0 to 1") in line


# -- the sweep's library function ----------------------------------------------------------

def test_sweep_param_that_is_no_text():
    # str() of the object ran its own __repr__: RuntimeError
    with pytest.raises(UserError, match="^sweep parameter a RaisingRepr must be PATH=LO:HI"):
        netmodel.sweep(["h100-dgx"], [RaisingRepr()], ["Llama-3-8B"])


def test_sweep_points_of_time():
    # numpy calls timedelta64 an integer: TypeError from float() deep in geomspace
    with pytest.raises(UserError, match=r"^points must be a whole number >= 1 \(the values of "
                                        r"a LO:HI range\), got " + re.escape(TD5) + "$"):
        netmodel.sweep(["h100-dgx"], ["cost.test_cost=375:1500"], ["Llama-3-8B"],
                       points=np.timedelta64(5, "s"))


def test_parallelism_array_with_mtp_is_refused_by_name():
    # check_fabric_options compared it with 'all' first: numpy's ambiguous-truth ValueError
    with pytest.raises(UserError, match=r"^parallelism an array of shape \(2,\) is unknown; "
                                        r"known: 'all', 'auto', 'tp'$"):
        netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["decode"],
                         parallelism=np.array(["all", "tp"]),
                         options=RooflineOptions(mtp_tokens=1))


# -- cost_summary and NetworkPrices: every parameter through one number check -------------

@pytest.mark.parametrize("call,match", [
    # OverflowError from math.isfinite(10**400)
    (lambda: cost.cost_summary("lite-flat", "Llama-3-8B", max_batch=16, lifetime=10**400),
     "^lifetime must be a finite number >= 0, got an integer of 401 digits$"),
    (lambda: network_bill.NetworkPrices(switch_price=10**400),
     "^switch_price must be a finite number >= 0, got an integer of 401 digits$"),
    # RuntimeError from the value's repr
    (lambda: cost.cost_summary("lite-flat", "Llama-3-8B", max_batch=16,
                               packaging_cost=RaisingRepr()),
     "^packaging_cost must be a number, got a RaisingRepr$"),
    (lambda: cost.cost_summary("lite-flat", "Llama-3-8B", max_batch=16, share=RaisingRepr()),
     "^unknown network share a RaisingRepr; known: 'as-built', 'ports-used'$"),
    # TypeError: unhashable numpy.ndarray (after the whole search)
    (lambda: cost.cost_summary("lite-flat", "Llama-3-8B", max_batch=16,
                               share=np.array(["as-built", "x"])),
     r"^unknown network share an array of shape \(2,\); known: 'as-built', 'ports-used'$"),
], ids=["lifetime-huge", "switch-price-huge", "packaging-raising", "share-raising",
        "share-array"])
def test_cost_parameters_refused_by_name(call, match):
    with pytest.raises(UserError, match=match):
        call()


@pytest.mark.parametrize("param,needles", [
    ("cost.packaging_cost=1USD:2USD", ("packaging_cost 1 USD", "packaging_fixed 100 USD")),
    ("cost.packaging_cost=50:1500", ("packaging_cost 50 USD", "packaging_fixed 100 USD")),
    ("cost.packaging_fixed=50:1500", ("packaging_cost 750 USD", "packaging_fixed 1500 USD")),
])
def test_a_packaging_cost_below_its_fixed_part_says_what_is_allowed(tmp_path, param, needles):
    # the line named the two values but not which way to move them
    one_line_error(run_cli(["sweep", "--scenario", "h100-dgx", "--param", param, "--points",
                            "3", "--models", "Llama-3-8B", "-q"], tmp_path),
                   *needles, "give packaging_cost >= packaging_fixed")


@pytest.mark.parametrize("spec,key,value,match", [
    # numpy calls timedelta64 an integer and int() refuses it: TypeError
    ("single-switch", "n", np.timedelta64(5, "s"),
     r"^single-switch: n must be an integer >= 1, got " + re.escape(TD5) + "$"),
    ("rail-optimized", "domains", np.timedelta64(5, "s"), "got " + re.escape(TD5) + "$"),
    # a table holding an object whose repr raises: RuntimeError from describe
    ("leaf-spine", "bandwidth", {"a": RaisingRepr()}, "got a table of 1 key$"),
    ("torus", "bandwidth", {"a": RaisingRepr()}, "got a table of 1 key$"),
], ids=["n-timedelta", "domains-timedelta", "leaf-spine-table", "torus-table"])
def test_fabric_parameters_refused_by_name(spec, key, value, match):
    with pytest.raises(UserError, match=match):
        netmodel.build_fabric(spec, {key: value})


TD = np.timedelta64(5, "s")


@pytest.mark.parametrize("call,match", [
    (lambda: netmodel.evaluate("Llama-3-8B", "H100-SXM", tp=TD, batch=8), "TP degree"),
    (lambda: netmodel.evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=TD), "batch must be"),
    (lambda: netmodel.evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=8, pp=TD), "PP degree"),
    (lambda: netmodel.evaluate("Mixtral-8x7B", "H100-SXM", tp=8, batch=8, ep=TD), "EP degree"),
    (lambda: netmodel.evaluate("Llama-3-8B", "H100-SXM", "prefill", tp=1, batch=8, prompt=TD),
     "tokens"),
    (lambda: netmodel.search("Llama-3-8B", "H100-SXM", max_batch=TD), "max_batch"),
    (lambda: netmodel.search("Llama-3-8B", "H100-SXM", tp=[TD]), "TP"),
    (lambda: netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["decode"], max_batch=TD),
     "max_batch"),
    (lambda: netmodel.sweep(["h100-dgx"], ["cost.test_cost=375:1500"], max_batch=TD),
     "max_batch"),
    (lambda: netmodel.collective_time("h100-dgx", "all-reduce", 1e6, group=TD), "group"),
], ids=["tp", "batch", "pp", "ep", "prompt", "search-max-batch", "search-tp-list",
        "compare-max-batch", "sweep-max-batch", "collective-group-on-scenario"])
def test_a_timedelta_is_no_whole_number(call, match):
    # every 'isinstance(x, int | np.integer)' took numpy's timedelta64 (an np.integer) and
    # int() of it raised TypeError; compute.validate.is_whole refuses it
    with pytest.raises(UserError, match=match):
        call()


_TD = np.timedelta64(5, "s")


@pytest.mark.parametrize("call, match", [
    (lambda g: netmodel.collective_time(g, "all-reduce", 1e6, group=_TD), "group must be"),
    (lambda g: FabricCostModel(g).group(_TD), "group must be"),
    (lambda g: FabricCostModel(g, max_transfers=_TD), "max_transfers must be"),
    (lambda g: FabricCostModel(g, placement="random", seed=_TD),
     "seed must be"),
    (lambda g: netmodel.collectives.placement.partition(g, _TD, "contiguous"),
     "group size must be"),
], ids=["collective_time", "group", "max_transfers", "seed", "partition"])
def test_the_collective_model_names_a_timedelta(call, match):
    """numpy registers timedelta64 as an integer; the collective model's whole-number checks
    (model.py, placement.py, concurrent.py) let it through to int(), a TypeError."""
    graph = netmodel.build_fabric("leaf-spine")
    with pytest.raises(UserError, match=f"^{match}.*timedelta64"):
        call(graph)


@pytest.mark.parametrize("make, said", [
    (lambda td: ServingWorkload("w", prompt=td, output=100),
     "workload 'w': prompt must be a whole number from 1 to"),
    (lambda td: ServingWorkload("w", prompt=100, output=100, rate=td),
     "workload 'w': rate must be a number from"),
    (lambda td: Adjust(hop_latency=td), "adjust.hop_latency must be a number from"),
])
def test_validate_number_refuses_numpys_timedelta_by_name(make, said):
    # compute.validate.number took numpy's timedelta64 (registered Integral) for an integer
    # and int() of it raised TypeError through ServingWorkload and a scenario's Adjust
    td = np.timedelta64(5, "s")
    with pytest.raises(UserError) as err:
        make(td)
    assert said in str(err.value) and str(err.value).endswith(f"got {TD5}")
