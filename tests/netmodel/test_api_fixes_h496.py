"""The library API's refusals beside the strict xfails turned passes in
test_api_hostile_h491.py: what must keep working around them."""

import math

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from compute.evaluate_many import evaluate_many
from compute.parallel import Parallelism
from netmodel.collectives.degraded import degrade
from netmodel.collectives.model import FabricCostModel


def test_empty_algorithms_names_the_registry():
    # every registered algorithm is offered, and a one-name list still runs
    from netmodel.collectives.algorithms import ALGORITHMS

    with pytest.raises(UserError, match=r"^algorithms is empty") as err:
        FabricCostModel(netmodel.build_fabric("single-switch:n=8"), algorithms=())
    assert all(repr(a) in str(err.value) for a in ALGORITHMS)
    t = float(netmodel.collective_time("single-switch:n=8", "all-reduce", 1e6, 8,
                                       algorithms=["ring"]))
    assert t == float(netmodel.collective_time("single-switch:n=8", "all-reduce", 1e6, 8,
                                               algorithm="ring"))


def test_uncircuited_ocs_one_gpu_is_free_and_cut_circuits_stay_inf():
    # one GPU talks to nobody: 0 s, nothing to route (not refused)
    assert float(netmodel.collective_time("ocs:gpus=4,ports=2", "all-reduce", 1e6, 1)) == 0
    # the blast-radius path: circuits set, then an OCS fails and takes its circuits:
    # a cut fabric keeps its 'inf where cut', with no fibre left to be mistaken for cabling
    g = netmodel.build_fabric("ocs:gpus=4,ports=2,logical=ring")
    cut = degrade(g, nodes=["ocs0", "ocs1"])
    r = FabricCostModel(cut).cost("all-reduce", 1e6, ["gpu0", "gpu2"])
    assert math.isinf(r.time) and not r.connected


def test_length_rule_is_the_builders():
    from topologies.common import check_length
    from topologies.schema import check_length as graph_rule

    assert check_length is graph_rule   # one rule, two homes
    g = netmodel.build_fabric("single-switch:n=4")
    g.edges["nvs0", "gpu0"]["length"] = 1e5 + 1   # the builders' 100 km ceiling
    with pytest.raises(UserError, match=r"edge 'nvs0'-'gpu0' length must be at most 100000 m"):
        netmodel.build_fabric(g)
    g.edges["nvs0", "gpu0"]["length"] = 0   # a builder takes 0 m
    assert netmodel.build_fabric(g).edges["nvs0", "gpu0"]["length"] == 0


def test_skew_at_ep1_refused_for_one_configuration_kept_for_a_grid():
    with pytest.raises(UserError, match=r"with ep 1 there is one group"):
        netmodel.evaluate("Mixtral-8x7B", "H100-SXM", "decode", tp=8, ep=1, pp=2, batch=8,
                          expert_skew=2)
    # a skew that is read is taken: at EP 8 the busiest GPU's experts slow the step
    even = netmodel.evaluate("Mixtral-8x7B", "H100-SXM", "decode", tp=8, ep=8, batch=64)
    skew = netmodel.evaluate("Mixtral-8x7B", "H100-SXM", "decode", tp=8, ep=8, batch=64,
                             expert_skew=2.0)
    assert skew.expert_skew == 2.0 and skew.latency > even.latency
    # a grid holds one skew for all its configurations: its EP-1 row re-evaluated
    # (result) is the uniform one, as the grid recorded it
    ev = evaluate_many("Mixtral-8x7B", "H100-SXM",
                       [Parallelism(8, 1, 1, 1), Parallelism(8, 1, 8, 1)], [64, 64],
                       expert_skew=2.0)
    one, eight = ev.result(0), ev.result(1)
    assert one.expert_skew == 1.0 and eight.expert_skew == 2.0
    assert one.latency == netmodel.evaluate("Mixtral-8x7B", "H100-SXM", "decode", tp=8,
                                            batch=64).latency
    assert np.isclose(eight.latency, skew.latency, rtol=1e-12)
