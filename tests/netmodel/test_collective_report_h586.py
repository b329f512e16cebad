"""netmodel.study.collective_report: the costs ``netmodel collective`` and ``netmodel costs``
print, made by one library call each (collective_report, cost_table), checked against the
cost model itself and the values the command-line tests expect; refusals carry the
parameter they refuse, and the commands print exactly the result objects."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from compute.errors import UserError
from netmodel.collectives.model import FabricCostModel
from netmodel.study.collective_report import collective_report, cost_table
from netmodel.study.collective_setup import collective_setup
from netmodel.study.scenario_collectives import ScenarioCollectives
from tests.netmodel.cli_helpers import run_cli
from topologies import build


def test_named_algorithm_is_the_models_cost():
    r = collective_report(collective_setup(fabric="single-switch:n=8", algorithm="ring"),
                          "all-reduce", 2.0**26, 8)
    want = FabricCostModel(build("single-switch:n=8")).cost("all-reduce", 2.0**26, 8, "ring")
    assert r.result.time == want.time and r.result.busbw == want.busbw
    assert r.alternatives == {}   # a named algorithm has none
    doc = r.to_dict()
    assert doc["placement"] == "contiguous" and doc["group_size"] == 8
    assert "plot" not in doc and "failures" not in doc and "chosen_by" not in doc
    text = r.table()
    assert "algorithm: ring (Simple protocol)\n" in text   # no 'chosen by': named
    assert f"busbw {want.busbw / 1e9:.2f} GB/s" in text


def test_auto_lists_every_alternative_fastest_first():
    r = collective_report(collective_setup(fabric="single-switch:n=8"), "all-reduce",
                          2.0**30, 8)
    # NVLS: in-network wins at 1 GiB, its busbw above the 450 GB/s link rate
    assert r.result.algorithm == "in-network" and r.result.busbw > 450e9
    assert min(r.alternatives, key=r.alternatives.get) == "in-network"
    assert r.alternatives["in-network"] == r.result.time
    line = next(x for x in r.table().splitlines() if x.startswith("alternatives"))
    assert line.startswith("alternatives (best protocol each): in-network 3.984 ms, ")


def test_failures_slow_the_pod_by_four_thirds():
    # one of the pod's two spines gone: a leaf's off-leaf traffic (n) on one uplink instead
    # of the 3/4 n on a GPU link (as test_cli_collective's --fail test)
    setup = collective_setup(fabric="fat-tree:k=4", algorithm="direct")
    r = collective_report(setup, "all-to-all", 2.0**30, 4, failed_nodes=["spine0"])
    assert r.failures["slowdown"] == pytest.approx(4 / 3, rel=2e-3)
    assert r.failures["failed"] == "spine0"   # spelled from the parameters
    assert r.to_dict()["fabric"].endswith("(degraded)")
    assert r.at_once is None
    cut = collective_report(setup, "all-to-all", 2.0**26, 4,
                            failed_links=[("leaf0", "spine0"), ("leaf0", "spine1")],
                            failed="leaf0/spine0, leaf0/spine1")
    assert not cut.result.connected and cut.failures["cut"] is True
    assert cut.failures["failed"] == "leaf0/spine0, leaf0/spine1"   # as the caller spelled it
    assert "CUT: the group is cut apart, no path joins gpu0 and gpu2" in cut.table()


def test_every_group_at_once_shares_one_uplink_four_ways():
    setup = collective_setup(fabric="fat-tree:k=8,oversubscription=4", placement="spread",
                             algorithm="ring")
    r = collective_report(setup, "all-reduce", 2.0**34, 4, all_groups=True)
    # one GPU of 4 groups on every leaf, one uplink per leaf: 4x at large sizes
    assert r.all_groups["groups"] == 32
    assert r.all_groups["slowdown_max"] == pytest.approx(4, rel=0.01)
    assert "all 32 groups of 4 at once: ring/" in r.table()


def test_instances_all_is_compares_charge(tmp_path):
    text = resources.files("netmodel").joinpath("data/scenarios/lite-hier.toml").read_text()
    path = tmp_path / "all.toml"
    path.write_text(text.replace('calibration = "default"',
                                 'calibration = "default"\ninstances = "all"', 1))
    r = collective_report(collective_setup(scenario=str(path)), "all-reduce", 2.0**30, 16)
    want = float(ScenarioCollectives(str(path)).collective_time("all-reduce", 2.0**30, 16))
    assert r.at_once == want and r.to_dict()["instances_all"] == {"time": want}
    assert want >= r.result.time   # alone is never slower than together


def test_refusals_carry_their_parameter():
    setup = collective_setup(fabric="fat-tree:k=4")
    with pytest.raises(UserError, match="^group size 99 is larger than the fabric's 16") as e:
        collective_report(setup, "all-reduce", 2.0**20, 99)
    assert e.value.parameter == "group"
    with pytest.raises(UserError, match="^failed node") as e:
        collective_report(setup, "all-reduce", 2.0**20, 4, failed_nodes=["nope0"])
    assert e.value.parameter == "failed"


def test_plot_written_or_said_why_not(tmp_path):
    setup = collective_setup(fabric="single-switch:n=8")
    png = tmp_path / "ar.png"
    r = collective_report(setup, "all-reduce", 2.0**30, 8, plot=str(png))
    assert r.plot == str(png) and r.to_dict()["plot"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    one = tmp_path / "one.png"
    r = collective_report(setup, "all-reduce", 2.0**30, 1, plot=str(one))
    assert r.plot is None and r.to_dict()["plot"] is None and not one.exists()
    assert r.plot_skipped == "a group of one GPU has no bus bandwidth"
    assert r.table().endswith("a group of one GPU communicates nothing: 0 s")


def test_collective_command_prints_the_report():
    argv = ["collective", "all-to-all", "--fabric", "fat-tree:k=4", "--group", "4", "--size",
            "1GiB", "--algorithm", "direct", "--fail", "spine0"]
    r = collective_report(collective_setup(fabric="fat-tree:k=4", algorithm="direct"),
                          "all-to-all", 2.0**30, 4, failed_nodes=["spine0"])
    out = run_cli(argv)
    assert out.exit_code == 0 and out.output == r.table() + "\n"
    out = run_cli([*argv, "--json"])
    assert out.exit_code == 0 and out.output == json.dumps(r.to_dict(), indent=1) + "\n"


def test_cost_table_rows_are_the_models_times():
    setup = collective_setup(fabric="single-switch:n=8")
    sizes = [2.0**k for k in range(10, 21)]
    t = cost_table(setup, ["all-reduce", "all-gather"], sizes, [2, 8])
    assert len(t.rows) == 44 and t.algorithm == "auto"
    last = t.rows[-1]
    assert (last["op"], last["group_size"], last["bytes"]) == ("all-gather", 8, 2**20)
    m = FabricCostModel(build("single-switch:n=8"))
    assert last["seconds"] == pytest.approx(float(m.collective_time("all-gather", 2.0**20, 8)),
                                            rel=1e-9)
    doc = t.to_dict()
    assert doc["schema"][0] == "op" and doc["rows"] == t.rows and doc["placement"] == "contiguous"
    assert t.table("json") == json.dumps(doc, indent=1) + "\n"
    assert len(t.table("csv").splitlines()) == 45
    assert t.table("nccl") == t.table("nccl-short")
    assert "# all-reduce, 8 GPUs" in t.table("nccl")
    out = run_cli(["costs", "--fabric", "single-switch:n=8", "--ops", "all-reduce,all-gather",
                   "--sizes", "1KiB:1MiB", "--groups", "2,8", "--format", "nccl-tests"])
    assert out.exit_code == 0 and out.output == t.table("nccl-tests")
    with pytest.raises(UserError, match="unknown table format 'xml'"):
        t.table("xml")


def test_cost_table_every_algorithm_and_refusal():
    setup = collective_setup(fabric="fat-tree:k=4")
    t = cost_table(setup, ["all-to-all"], [2.0**20], [4], all_algorithms=True)
    assert t.algorithm == "all" and {r["algorithm"] for r in t.rows} == {"direct", "pairwise"}
    with pytest.raises(UserError, match="^group size") as e:
        cost_table(setup, ["all-reduce"], [2.0**20], [2, 32])
    assert e.value.parameter == "groups"

