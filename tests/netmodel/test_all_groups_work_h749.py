"""``collective --all-groups`` on a large fabric is refused by an estimate of its work before
any is done (netmodel.collectives.concurrent.all_groups_work, ALL_GROUPS_WORK): every group of
64 GPUs of a 40x40x40 torus at once (1,000 groups) ran past 100 s, of a 100x100x100 torus
past 120 s, with no estimate at all. The estimate counts each group's transfers of every
algorithm tried and the fabric's nodes once a group (its joined check searches the fabric
towards the group's first member)."""

import pytest

import netmodel.collectives.concurrent as concurrent
from compute.comm import OPERATIONS
from compute.errors import UserError
from netmodel.collectives.concurrent import (
    ALL_GROUPS_WORK,
    all_groups_cost,
    all_groups_work,
)
from netmodel.collectives.model import FabricCostModel
from netmodel.study.scenario_catalog import scenario_names
from netmodel.study.scenario_fabric import build_fabric
from topologies.registry import build

from .cli_helpers import run_cli


def _ring_model() -> FabricCostModel:
    return FabricCostModel(build("ring:n=8"), algorithms=["ring"])


def test_work_of_two_groups_on_a_ring_by_hand():
    # ring all-reduce's bound 4 p log2: 4 * 4 * bit_length(4) = 48 transfers a group,
    # plus the ring's 8 nodes, for 8 // 4 = 2 groups; each unit 4 (h754: 8 nodes, routes
    # searched node by node, DAG_UNIT_WEIGHT)
    assert all_groups_work(_ring_model(), 4, "all-reduce") == (2, 4 * 2 * (48 + 8))
    # groups of 3: 8 // 3 = 2 at most, 4 * 3 * 2 = 24 transfers each
    assert all_groups_work(_ring_model(), 3, "all-reduce") == (2, 4 * 2 * (24 + 8))


def test_the_limit_is_exact(monkeypatch):
    monkeypatch.setattr(concurrent, "ALL_GROUPS_WORK", 448)
    doc = all_groups_cost(_ring_model(), 4, "all-reduce", 2**20)
    assert doc["groups"] == 2 and doc["makespan"] > 0
    monkeypatch.setattr(concurrent, "ALL_GROUPS_WORK", 447)
    with pytest.raises(UserError, match=r"^all_groups: all-reduce on all 2 groups of 4 GPUs "
                                        r"at once would take about 448 units of work .* "
                                        r"each counted 4 times: routes on a fabric this small "
                                        r"are searched node by node\), "
                                        r"more than the limit of 447 "):
        all_groups_cost(_ring_model(), 4, "all-reduce", 2**20)


def test_a_40_cubed_torus_in_groups_of_64_is_refused_before_any_work(monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("worked before the refusal")

    # neither the group alone nor the groups are costed or cut
    monkeypatch.setattr(FabricCostModel, "cost", no_work)
    monkeypatch.setattr(concurrent, "partition", no_work)
    out = run_cli(["collective", "all-reduce", "--fabric", "torus:dims=40x40x40", "--group",
                   "64", "--all-groups"])
    assert out.exit_code == 2, out.output
    # 13 all-reduce algorithms tried over 64 GPUs: 27,776 transfers a group, 64,000 nodes
    work = 1000 * (27_776 + 64_000)
    assert out.output == (
        f"error: --all-groups: all-reduce on all 1,000 groups of 64 GPUs at once would take "
        f"about {work:,} units of work (each group's transfers of every algorithm tried, and "
        f"the fabric's 64,000 nodes searched once a group), more than the limit of "
        f"{ALL_GROUPS_WORK:,} (some 2 minutes): use larger groups, a smaller fabric, or one "
        f"group alone\n")


@pytest.mark.parametrize("name", scenario_names())
def test_every_shipped_scenario_runs_all_groups_of_two(name):
    # groups of 2 are the most groups a fabric cuts, every op the most algorithms
    model = FabricCostModel(build_fabric(name))
    assert max(all_groups_work(model, 2, op)[1] for op in OPERATIONS) <= ALL_GROUPS_WORK


def test_the_docs_example_runs():
    # docs/output-formats.md's sample: fat-tree:k=4, groups of 8, a spine failed
    out = run_cli(["collective", "all-reduce", "--fabric", "fat-tree:k=4", "--group", "8",
                   "--size", "64MiB", "--fail", "spine0", "--all-groups"])
    assert out.exit_code == 0, out.output
    assert "all 2 groups of 8 at once" in out.output
