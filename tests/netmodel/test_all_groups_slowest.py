"""``collective --all-groups --json``'s ``slowest_group`` is the group whose time together
is the makespan (docs/output-formats.md: makespan, the seconds of the slowest group). It was
the group slowed down most against running alone, which with equal slowdowns is the first
group: on h100-dgx (8 GPUs a server) groups of 6 cut gpu0-5 inside server 0 and gpu6-11
across servers 0 and 1, whose all-to-all crosses the 50 GB/s NICs; every group shares no
link with another (slowdown 1x everywhere), and the JSON named gpu0-5, the fastest."""

import json

import pytest

from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from netmodel.study.scenario_fabric import build_fabric

from .cli_helpers import run_cli


@pytest.mark.parametrize("op, size", [("all-to-all", "256KiB"), ("all-reduce", "64MiB")])
def test_slowest_group_is_the_one_that_takes_the_makespan(op, size):
    out = run_cli(["collective", op, "--fabric", "h100-dgx", "--group", "6", "--size", size,
                   "--all-groups", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    conc = doc["all_groups"]
    # the first group (gpu0-5, one server, NVLink only) is the one costed alone: faster
    assert doc["group"] == [f"gpu{i}" for i in range(6)]
    assert conc["makespan"] > 2 * doc["time"]
    # the slowest spans two servers, so it is not the first group
    slowest = conc["slowest_group"]
    assert slowest != doc["group"]
    assert len({int(g[3:]) // 8 for g in slowest}) == 2
    # and its time together is the makespan, by the library's own figures
    model = FabricCostModel(build_fabric("h100-dgx"))
    res = concurrent_cost(model, 6, op, doc["nbytes"])
    i = [list(map(str, g)) for g in res.groups].index(slowest)
    assert res.time[i, 0] == pytest.approx(conc["makespan"])
