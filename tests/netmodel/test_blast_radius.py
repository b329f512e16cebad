"""Static blast radius: the catalog against the published figures, hand-derived small
cases (an 8-GPU direct group, a flat fabric losing a plane, an OCS losing a switch, a leaf
cutting off its GPUs), invariants over the shipped scenarios, cluster scaling, the
command line and bad input."""

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_catalog import HOUR, catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import MAX_GPUS
from netmodel.study.reliability_recovery import recovery
from netmodel.study.scenario_catalog import scenario_names
from netmodel.study.scenario_files import load_scenario_text
from tests.netmodel.lite_ocs_ring_h479 import ring_scenario
from tests.netmodel.reliability_g2_helpers import shipped_cluster
from topologies.degrade import degrade
from topologies.failure_domains import CLASSES

#: ../shared/reference beside the project root, wherever pytest runs from (a path relative
#: to the working directory skipped the reference test from any other folder)
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"

TEMPLATE = """name = "{name}"
description = "test fabric"
gpu = "{gpu}"
[fabric]
{fabric}
[collective]
placement = "contiguous"
algorithm = "auto"
links = "{links}"
calibration = "default"
{extra}
[sources]
bandwidth = "test"
latency = "test"
"""


def scenario(name, gpu, fabric, links="scale-up", extra=""):
    return load_scenario_text(TEMPLATE.format(name=name, gpu=gpu, fabric=fabric, links=links,
                                              extra=extra))


#: An 8-GPU directly wired group: a full mesh of 8 H100, serving Llama-3.1-405B at TP 8.
MESH8 = scenario("mesh8", "H100-SXM", 'builder = "full-mesh"\nn = 8\ngpu = "$gpu"')


# ---------------------------------------------------------------------- the catalog

def test_catalog_has_a_source_and_confidence_for_every_class():
    c = catalog()
    assert set(c.classes) == set(CLASSES)
    for name, cls in c.classes.items():
        assert cls.source and cls.repair_source, name
        assert cls.confidence in ("read-primary", "read-secondary", "read-estimate",
                                  "vendor-claim", "derived", "assumption"), name
        assert cls.repair_local_s <= cls.repair_vendor_s


def test_gpu_split_by_hand():
    c = catalog()
    # default area share: (HBM3 72 + SRAM 19 + SDC 6 + half of 'faulty GPU' 148) / 268
    assert c.area_share == pytest.approx((72 + 19 + 6 + 74) / 268, abs=5e-4)
    assert c.area_share_range == pytest.approx(((17 + 6 + 74) / 268, (268 - 23) / 268), abs=5e-4)
    assert c.hbm_share == pytest.approx(72 / 268, abs=5e-4)
    base = 1.26e-5
    h100 = c.rates("H100-SXM")
    assert (h100["gpu-die"] + h100["gpu-package"]) * HOUR == pytest.approx(base)
    # a Lite is a quarter of an H100 in SMs and HBM: its die part shrinks, its package not
    for a in (c.area_share_range[0], c.area_share, c.area_share_range[1]):
        lite = c.with_(area_share=a).rates("Lite")
        assert (lite["gpu-die"] + lite["gpu-package"]) * HOUR == pytest.approx(
            base * (1 - a + a / 4))
    # a larger area share shrinks the Lite's rate; SM-hours lost per H100 worth of Lites
    lo, hi = (c.with_(area_share=a).rates("Lite") for a in c.area_share_range)
    assert sum(hi[k] for k in ("gpu-die", "gpu-package")) < sum(
        lo[k] for k in ("gpu-die", "gpu-package"))


@pytest.mark.skipif(not (REFERENCE / "failures_components.csv").exists(),
                    reason="../shared/reference is absent")
def test_catalog_against_the_reference_rows():
    rows = {}
    with open(REFERENCE / "failures_components.csv") as f:
        for r in csv.DictReader(x for x in f if not x.startswith("#")):
            rows[r["id"]] = r
    with open(REFERENCE / "failures_llama3.csv") as f:
        counts = {r["component"]: int(r["count"])
                  for r in csv.DictReader(x for x in f if not x.startswith("#"))}
    hours = 16384 * 54 * 24
    assert float(rows["F02"]["value"]) == hours
    gpu = sum(v for k, v in counts.items() if k in (
        "Faulty GPU", "GPU HBM3 memory", "GPU SRAM memory", "GPU system processor",
        "Silent data corruption", "GPU thermal interface and sensor"))
    c = catalog()
    assert gpu == 268
    assert c.gpu_rate_per_hour == pytest.approx(gpu / hours, rel=0.01)
    assert c.gpu_rate_per_hour == pytest.approx(float(rows["F04"]["value"]))
    assert c.classes["nic"].rate_per_hour == pytest.approx(float(rows["F07"]["value"]))
    host = sum(counts[k] for k in ("Host maintenance", "SSD", "Power supply", "Server chassis",
                                   "IO expansion board", "CPU", "System memory"))
    assert c.classes["host"].rate_per_hour == pytest.approx(host / (2048 * 54 * 24), rel=0.01)
    # transceivers: the network's share (F06) over ~2.5 transceivers per GPU (F70)
    assert c.classes["transceiver"].rate_per_hour == pytest.approx(
        float(rows["F06"]["value"]) / (10000 / 4000), rel=0.01)
    # switches: mlsysim's 300,000 h MTTF (F54)
    assert c.classes["leaf"].rate_per_hour == pytest.approx(1 / float(rows["F54"]["value"]),
                                                            rel=0.01)
    assert c.detection_s == float(rows["F60"]["value"].split("/")[0])


# ---------------------------------------------------------------------- hand-derived cases

def test_eight_gpu_direct_group():
    c = build_cluster(MESH8, "Llama-3.1-405B", "decode")
    assert (c.tp, len(c.instances), c.idle) == (8, 1, ())
    by = {e.cls: e for e in c.effects()}
    die = by["gpu-die"]
    # every GPU is the same to the group: one symmetry class of 8, one GPU lost, the one
    # instance down, all its tokens
    assert (die.components, die.gpus_lost, die.gpus_cut, die.instances_down) == (8, 1, 0, 1)
    assert die.sms == 132
    # one host holds the 8 GPUs (no server labels: the silicon of one 8-H100 host)
    assert by["host"].components == 1 and by["host"].gpus_lost == 8
    # a mesh has no free port: no spare can stand in
    rec = recovery(c, die, "pod")
    assert rec.units is None and "no free port" in rec.path
    # a lost mesh link: traffic takes two hops; the instance is down iff that misses the SLO
    # at every batch (else it re-balances to a smaller one)
    link = by["copper-end"]
    g = degrade(c.graph, [link.component])
    r = c.instance_result(g, c.instances[0])
    assert r.latency >= c.best.latency
    assert link.instances_down == (1 if c.rebalanced(g, c.instances[0]) is None else 0)
    assert link.rebalanced == (0 if r.feasible else 1 - link.instances_down)
    table = blast_radius(MESH8, "Llama-3.1-405B", cluster=c)
    row = next(x for x in table.rows if x.cls == "gpu-die")
    assert row.tokens_lost_pct_mean == pytest.approx(100.0)
    assert row.count == 8 and row.gpus_down_mean == 8


def test_flat_fabric_losing_a_plane_slows_every_instance_alike():
    c = shipped_cluster("lite-flat")
    plane = next(e for e in c.effects() if e.cls == "leaf")
    assert plane.components == 4 and plane.instances_down == 0 and plane.gpus == 0
    r = c.instance_result(degrade(c.graph, [plane.component]), c.instances[0])
    assert r.feasible and r.latency > c.best.latency
    assert plane.slow == pytest.approx(len(c.instances) * (1 - r.tokens_per_s / c.tokens_per_s))


def test_ocs_losing_a_switch_resets_every_ring_on_three_ports():
    # lite-ocs with its circuits fixed as rings (the shipped one sets 16 Lites as a torus)
    c = build_cluster(ring_scenario(), "Llama-3-70B", "decode")
    ocs = next(e for e in c.effects() if e.cls == "ocs")
    g = degrade(c.graph, [ocs.component])
    results = [c.instance_result(g, inst) for inst in c.instances]
    assert len({round(r.latency, 12) for r in results}) == 1   # every instance alike
    # down only when no batch meets the SLO; otherwise re-balanced to a smaller batch
    rb = c.rebalanced(g, c.instances[0])
    assert ocs.instances_down == (len(c.instances) if rb is None else 0)
    assert ocs.rebalanced == (0 if results[0].feasible or rb is None else len(c.instances))
    # with 3 ports a ring has one circuit per neighbour (3 // 2): half the bandwidth
    from netmodel.study.placed_graph import instance_circuits
    circ = instance_circuits(c.scenario, g, c.instances[0])
    a, b = c.instances[0][:2]
    healthy = instance_circuits(c.scenario, c.graph, c.instances[0])
    assert circ.edges[a, b]["bandwidth"] == pytest.approx(healthy.edges[a, b]["bandwidth"] / 2)


def test_leaf_failure_cuts_off_its_gpus():
    c = shipped_cluster("lite-hier")
    by = {}
    for e in c.effects():
        by.setdefault(e.cls, []).append(e)
    (leaf,) = by["leaf"]
    assert (leaf.gpus_lost, leaf.gpus_cut) == (0, 16)   # 16 Lites per leaf
    assert leaf.instances_down == (16 // c.tp if c.tp <= 16 else 1)
    # a Lite's one link to its leaf cut: that Lite is cut off; a leaf-spine link only thins
    ends = sorted(by["cpo-engine"], key=lambda e: e.gpus_cut)
    assert [e.gpus_cut for e in ends] == [0, 1]
    assert ends[1].instances_down == 1


@pytest.mark.parametrize("gpu", ["A100-SXM-80GB", "B200-HGX", "H100-SXM"])
def test_a_host_of_full_size_gpus_is_eight_of_them(gpu):
    # DGX A100, DGX/HGX H100 and DGX B200 are 8-GPU servers (failures.toml host_gpus).
    # On a fabric without server labels a host used to be 1056 SMs of silicon:
    # round(1056 / 108) = 10 A100 and round(1056 / 148) = 7 B200 per host.
    fat = scenario("fat", gpu, 'builder = "fat-tree"\nk = 4\ngpu = "$gpu"')
    c = build_cluster(fat, "Llama-3-8B", "decode")
    hosts = [e for e in c.effects() if e.cls == "host"]
    assert sum(e.components for e in hosts) == 16 // 8
    assert all(e.gpus_lost == 8 for e in hosts)


def test_a_host_of_lites_is_the_silicon_of_eight_h100():
    assert catalog().gpus_per_host("Lite") == 8 * 132 // 33


def test_healthy_instance_recosted_equals_the_search():
    for name in scenario_names():
        c = shipped_cluster(name)
        r = c.instance_result(c.graph, c.instances[0])
        assert r.latency == pytest.approx(c.best.latency, rel=1e-9), name


@pytest.mark.parametrize("name", scenario_names())
@pytest.mark.parametrize("model", ["Llama-3-70B", "Llama-3.1-405B"])
def test_software_radius_of_a_gpu_failure_is_never_below_hardware(name, model):
    c = shipped_cluster(name, model)
    for e in c.effects(["gpu-die", "gpu-package", "host"]):
        serving = [m for m in e.component.nodes if m in c.member_of]
        if serving:
            assert e.instances_down >= 1
            assert e.instances_down * c.tp >= len(serving)


def test_cluster_size_scales_counts_and_shares():
    one = blast_radius("lite-flat", "Llama-3-70B")
    many = blast_radius("lite-flat", "Llama-3-70B", gpus=128 * 64)
    assert many.cluster.cells == 64 and many.cluster.instances_total == 64 * 8
    for a, b in zip(one.rows, many.rows, strict=True):
        assert b.count == 64 * a.count
        assert b.events_per_year == pytest.approx(64 * a.events_per_year)
        assert b.gpus_mean == a.gpus_mean and b.instances_down_mean == a.instances_down_mean
        assert b.tokens_lost_pct_mean == pytest.approx(a.tokens_lost_pct_mean / 64)


def test_bad_input():
    with pytest.raises(UserError, match="not a multiple"):
        build_cluster("lite-flat", "Llama-3-70B", gpus=1000)
    with pytest.raises(UserError, match="exceeds the largest"):
        build_cluster("lite-flat", "Llama-3-70B", gpus=MAX_GPUS + 128)
    with pytest.raises(UserError, match="whole number"):
        build_cluster("lite-flat", "Llama-3-70B", gpus=0)
    c = build_cluster("lite-flat", "Llama-3-70B")
    with pytest.raises(UserError, match="unknown component class 'fan'"):
        c.effects(["fan"])
    with pytest.raises(UserError, match="spare placement"):
        recovery(c, c.effects()[0], "rack")
    with pytest.raises(UserError, match="group"):
        from netmodel.study.reliability_spares import spare_pools
        spare_pools(c, 4, "group")


# ---------------------------------------------------------------------- command line

def test_cli_json_table_and_files(tmp_path):
    out = tmp_path / "br"
    r = CliRunner().invoke(cli, ["blast-radius", "--scenario", "lite-ocs", "--model",
                                 "Llama-3-70B", "--json", "--out", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["scenario"] == "lite-ocs@Lite" and d["tp"] >= 1
    assert {row["cls"] for row in d["rows"]} == {"gpu-die", "gpu-package", "host",
                                                 "cpo-engine", "ocs"}
    assert sorted(p.name for p in out.iterdir()) == [
        "blast_radius.csv", "blast_radius.json", "blast_radius.png", "netmodel-manifest.json"]
    assert json.loads((out / "blast_radius.json").read_text()) == d
    rows = list(csv.DictReader((out / "blast_radius.csv").open()))
    assert rows[0]["cls"] == "gpu-die"
    r = CliRunner().invoke(cli, ["blast-radius", "--scenario", "h100-dgx", "--model",
                                 "Llama-3-70B", "--repair", "vendor"])
    assert r.exit_code == 0 and "gpu-die" in r.output and "286 h" in r.output


# Link-end parts by hand, the same in the bill of materials (topology show) and in the
# failure domains (blast-radius). lite-direct: 32 groups of 4 Lites on rail-optimized
# H100s; each group's NIC cable a 4-way breakout (a transceiver at the leaf port and one at
# each Lite: 5), 8 leaves x 4 spines x 8 optical cables (2 ends), one NIC a group (its
# H100's, shared by its 4 Lites, as the cost charges a quarter each); the
# group's 18 NVLinks are its H100's baseboard traces (the Lites on the same board): no
# copper end (were 18 switch ends + 4 x 5 Lite ends a group, 1,216); the mesh 6 CPO
# cables a group (2 ends). h100-dgx: 32 NIC cables + 8 x 4 x 8 leaf-spine cables (2 ends),
# one NIC a GPU, its 18 NVLinks baseboard traces (were 2 x 18 x 32 = 1,152 copper ends);
# its optics twin-port modules, two ends each (P40; every node's count even).
# lite-flat: 128 Lites x 4 planes (2 ends); lite-hier: 128 GPU-leaf + 8 x 16 leaf-spine
# cables (2 ends); lite-ocs: 128 x 4 GPU ends (an OCS end is passive).
LINK_PARTS = {
    "h100-dgx": {"transceiver": (2 * 32 + 2 * 8 * 4 * 8) // 2, "copper-end": 0, "nic": 32},
    "lite-direct": {"transceiver": 32 * 5 + 2 * 8 * 4 * 8, "cpo-engine": 2 * 6 * 32,
                    "copper-end": 0, "nic": 32},   # 4 Lites share their H100's NIC
    "lite-flat": {"cpo-engine": 2 * 128 * 4},
    "lite-hier": {"cpo-engine": 2 * (128 + 8 * 16)},
    "lite-ocs": {"cpo-engine": 128 * 4},
}
# blast-radius counts a cell's share of the links between switches (port_fill, the share
# the cost model charges): h100-dgx and lite-direct fill 32 of the 8 x 32 GPU ports of
# their SU's leaves, so 1/8 of the leaf-spine cables' ends (64); the rest are as built
# (lite-hier fills its leaves: 1; the others have no link between switches)
BLAST_PARTS = {
    **LINK_PARTS,
    "h100-dgx": {**LINK_PARTS["h100-dgx"], "transceiver": (2 * 32 + 2 * 8 * 4 * 8 // 8) // 2},
    "lite-direct": {**LINK_PARTS["lite-direct"], "transceiver": 32 * 5 + 2 * 8 * 4 * 8 // 8},
}


@pytest.mark.parametrize("name", sorted(LINK_PARTS))
def test_link_parts_agree_in_topology_show_and_blast_radius(name):
    want = LINK_PARTS[name]
    r = CliRunner().invoke(cli, ["topology", "show", name, "--json"])
    assert r.exit_code == 0, r.output
    bom = json.loads(r.output)["bom"]
    assert (bom["pluggable_transceivers"], bom["cpo_ports"]) == (
        want.get("transceiver", 0), want.get("cpo-engine", 0))
    assert "copper" not in bom["cables"]         # no shipped scenario has a copper cable
    # blast-radius's rows (its --json prints their to_dict(): test_cli_json_table_and_files)
    # of the cluster the other tests read, its failure effects worked out once
    rows = blast_radius(name, "Llama-3-70B", cluster=shipped_cluster(name)).to_dict()["rows"]
    count = {row["cls"]: row["count"] for row in rows}
    for cls in ("transceiver", "cpo-engine", "copper-end", "nic"):
        assert count.get(cls, 0) == BLAST_PARTS[name].get(cls, 0), cls


@pytest.mark.parametrize("args, message", [
    (["--rate", "transceiver=-1"], "finite number >= 0"),
    (["--rate", "transceiver=nan"], "finite number >= 0"),
    (["--rate", "laser=1e-6"], "unknown component class 'laser'"),
    (["--rate", "gpu-die=1e-6"], "--area-share"),
    (["--repair-time", "host=-2h"], "a duration from 0 to 100 y"),
    (["--area-share", "1.5"], "--area-share"),
    (["--gpus", "1000"], "not a multiple"),
    (["--gpus", "262144"], "exceeds the largest"),
    (["--spare-placement", "rack"], "unknown spare placement"),
    (["--detection", "inf"], "a duration from 0 to 100 y"),
])
def test_cli_bad_input_one_line_exit_2_nothing_written(tmp_path, args, message):
    out = tmp_path / "never"
    r = CliRunner().invoke(cli, ["blast-radius", "--scenario", "lite-flat", "--model",
                                 "Llama-3-70B", "--out", str(out), *args])
    assert r.exit_code == 2, r.output
    assert message in r.output and r.output.count("\n") == 1
    assert not out.exists()


def test_a_search_already_run_is_reused():
    from netmodel.study.fabric_search import fabric_search

    r = fabric_search("Llama-3-70B", "lite-hier", "decode")
    c = build_cluster("lite-hier", "Llama-3-70B", "decode", search=r)
    assert c.best is r.best and len(c.instances) == 128 // r.best.tp
    with pytest.raises(ValueError, match="another model"):
        build_cluster("lite-hier", "Llama-3-8B", "decode", search=r)


def test_effects_of_some_classes_are_those_of_every_class():
    """Effects are evaluated once per class: asking for some classes first and every
    class after gives the same effects (the same objects), in CLASSES order."""
    c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    some = c.effects(("leaf", "gpu-die"))
    every = c.effects()
    assert [e.cls for e in some] == [x for x in CLASSES if x in ("leaf", "gpu-die")
                                     for _ in range(sum(e.cls == x for e in some))]
    assert all(any(e is f for f in every) for e in some)
    fresh = build_cluster("lite-flat", "Llama-3-70B", "decode").effects()
    def fields(effects):
        return [{k: v for k, v in vars(e).items() if k != "component"} for e in effects]

    assert fields(every) == fields(fresh)
    # losing a plane takes no instance down but slows all 8 alike (see the test above)
    leaf = next(e for e in some if e.cls == "leaf")
    assert leaf.instances_down == 0 and leaf.slow > 0


def test_failures_that_leave_the_same_graph_are_costed_once(tmp_path):
    """A NIC and the transceiver of the same GPU link leave the same degraded graph: the
    instance is costed once, and both effects agree (beside its healthy costing, h343).
    With single-port optics (h100-dgx's own are twin-port: a module there cuts two GPUs'
    links, a NIC one)."""
    text = (Path(__file__).resolve().parents[2] / "netmodel" / "data" / "scenarios"
            / "h100-dgx.toml").read_text()
    assert "module_ports = 2" in text
    path = tmp_path / "h100-single.toml"
    path.write_text(text.replace("module_ports = 2", "module_ports = 1", 1)
                    .replace('name = "h100-dgx"', 'name = "h100-single"', 1))
    c = build_cluster(str(path), "Llama-3-70B", "decode")
    assert c.healthy
    before = len(c.costing._costed)
    by = {e.cls: e for e in c.effects(("nic", "transceiver")) if e.example == "gpu0-leaf0"}
    assert set(by) == {"nic", "transceiver"}
    assert by["nic"].slow == by["transceiver"].slow
    assert len(c.costing._costed) == before + 1


@pytest.mark.parametrize("name", ["h100-dgx", "lite-flat", "lite-ocs", "lite-flat-inr"])
def test_instances_renamed_by_place_cost_the_same_to_the_last_bit(name, monkeypatch):
    """Costing an instance under names by place (so that symmetric instances are one
    costing) changes no number: every effect and every recovery equal those costed under
    the fabric's own names, exactly."""
    import netmodel.study.instance_cost as br
    import netmodel.study.placed_cost as pc

    def seen(cluster):
        effects = [{k: v for k, v in vars(e).items() if k != "component"}
                   for e in cluster.effects()]
        return effects, [recovery(cluster, e, p) for e in cluster.effects()
                         for p in ("pod", "global")]

    renamed = build_cluster(name, "Llama-3-70B", "decode")
    got = seen(renamed)
    for module in (br, pc):   # an instance's graph and its slices' (OCS) not renamed
        monkeypatch.setattr(module, "canonical", lambda g, m: (g, tuple(m)))
    # and not the short way to the renamed graph (InstanceCosting._switch_problem)
    monkeypatch.setattr(br.InstanceCosting, "_switch_problem", lambda self, g, m: None)
    own = build_cluster(name, "Llama-3-70B", "decode")
    assert got == seen(own)
    assert len(renamed.costing._costed) <= len(own.costing._costed)
    if name == "lite-flat":   # 8 instances slowed alike by a plane lost: one costing
        def leaf_costings(cluster):   # beside the healthy costing (h343)
            assert cluster.healthy
            before = len(cluster.costing._costed)
            cluster.effects(("leaf",))
            return len(cluster.costing._costed) - before

        own_leaf = leaf_costings(build_cluster(name, "Llama-3-70B", "decode"))
        monkeypatch.undo()
        renamed_leaf = leaf_costings(build_cluster(name, "Llama-3-70B", "decode"))
        assert (renamed_leaf, own_leaf) == (1, 8)


def test_circuits_costed_without_their_labels_cost_the_same_to_the_last_bit(monkeypatch):
    """Costing an OCS instance's circuits without the OCS each one goes through (and the
    circuit list by name), so that failures which re-set the same circuits through other
    planes are one costing, changes no number: every effect and recovery equal those
    costed with the labels, exactly, with fewer costings."""
    import netmodel.study.instance_cost as br
    import netmodel.study.placed_cost as pc

    def seen(cluster):
        effects = [{k: v for k, v in vars(e).items() if k != "component"}
                   for e in cluster.effects()]
        return effects, [recovery(cluster, e, p) for e in cluster.effects()
                         for p in ("pod", "global")]

    dropped = build_cluster("lite-ocs", "Llama-3-70B", "decode")
    got = seen(dropped)
    for module in (br, pc):   # an instance's circuits and its slices'
        monkeypatch.setattr(module, "unlabelled", lambda g: g)
    kept = build_cluster("lite-ocs", "Llama-3-70B", "decode")
    assert got == seen(kept)
    assert any(e["slow"] > 0 or e["instances_down"] for e in got[0])   # not all healthy
    # one OCS plane lost re-sets the same circuits whichever plane it is
    assert len(dropped.costing._costed) <= len(kept.costing._costed) - 4


def _at_batch(c, batch):
    """The cluster ``c`` with its instances costed at ``batch`` (the scalar evaluate path)."""
    import dataclasses

    return dataclasses.replace(c, best=dataclasses.replace(c.best, batch=batch))


def test_ocs_failure_rebalances_to_the_largest_batch_that_meets_the_slo():
    # lite-ocs: losing one of 4 OCS leaves 3 ports per GPU, where no torus fits (one circuit
    # to each of 4 neighbours), so the 16 Lites' torus is re-set as a ring of one circuit
    # per neighbour (3 // 2): 30 steps an all-reduce where the 4x4 torus took 12, on the
    # bandwidth of one circuit a neighbour (tests/netmodel/test_ocs_best_circuits_h464.py).
    # At the healthy batch the step misses the 50 ms TBT; the instance serves at the
    # largest batch that meets it.
    c = shipped_cluster("lite-ocs")
    ocs = next(e for e in c.effects() if e.cls == "ocs")
    inst = c.instances[0]
    g = degrade(c.graph, [ocs.component])
    limit = c.slo.limit("decode")
    assert c.best.latency <= limit < c.instance_result(g, inst).latency
    # by hand: walk the batch down from the healthy one, costing each step on the
    # degraded fabric, until the step time meets the SLO
    b = c.batch
    while _at_batch(c, b).instance_result(g, inst).latency > limit:
        b -= 1
    step = _at_batch(c, b).instance_result(g, inst).latency
    r = c.rebalanced(g, inst)
    assert r.batch == b < c.batch and r.feasible
    assert r.latency == pytest.approx(step, rel=1e-12)
    assert r.tokens_per_s == pytest.approx(b / step, rel=1e-12)   # one token per sequence
    # every instance alike: up, each losing 1 - (b / step) / healthy of its tokens/s
    assert (ocs.instances_down, ocs.slo_down, ocs.rebalanced) == (0, 0, len(c.instances))
    kept = (b / step) / c.tokens_per_s
    assert 0 < kept < 1
    assert ocs.slow == pytest.approx(len(c.instances) * (1 - kept), rel=1e-9)
    row = next(x for x in blast_radius("lite-ocs", "Llama-3-70B", cluster=c).rows
               if x.cls == "ocs")
    # no instance down: every one restarts on the circuits left (NCCL has no failover:
    # the swap's 90.1 s), then stays slow for detection (30 s) and the OCS's 24 h repair
    assert row.instances_down_mean == 0
    assert row.recovery_without_spares == "restart (90.1 s), then slowed until repair (24 h)"
    assert row.recovery_without_spares_s == 30 + 24 * 3600
    assert row.tokens_lost_pct_mean == pytest.approx(100 * (1 - kept), rel=1e-9)


@pytest.mark.parametrize("name", scenario_names())
def test_capacity_kept_by_an_instance_that_stays_up_is_a_share_of_healthy(name):
    # invariant: an instance a failure slows keeps between 0 and 1 of its tokens/s, at a
    # batch no larger than the healthy one that meets the SLO; it is down (slo_down) only
    # when no batch does, i.e. not even batch 1
    c = shipped_cluster(name)
    for e in c.effects():
        assert 0 <= e.slow and e.instances_down + e.slow <= len(c.instances) + 1e-9
        assert e.rebalanced + e.instances_down <= len(c.instances)
        _, lost, _, touched = c._local(e.component)
        part = c.partition([e.component])
        slo_down = 0
        for i in touched:
            inst = c.instances[i]
            if any(m in lost for m in inst) or len({part[m] for m in inst}) > 1:
                continue
            g = c.recost_graph([e.component], inst)
            r = c.rebalanced(g, inst)
            if r is None:
                one = _at_batch(c, 1).instance_result(g, inst)
                assert one is None or not one.feasible
                slo_down += one is not None
                continue
            assert r.feasible and 1 <= r.batch <= c.batch
            assert 0 < r.tokens_per_s <= c.tokens_per_s * (1 + 1e-12)
            if r.batch < c.batch:   # the next batch up misses the SLO
                assert not _at_batch(c, r.batch + 1).instance_result(g, inst).feasible
        assert slo_down == e.slo_down


@pytest.mark.parametrize("name", ["h100-dgx", "docs/examples/gb300-nvl72.toml"])
def test_short_way_to_the_renamed_graph_gives_the_long_ways_graph(name, monkeypatch):
    """Where GPUs forward no traffic, an instance's renamed graph is made from the switches'
    part renamed once plus the failure's edits and the members
    (InstanceCosting._switch_problem), not by copying and renaming the whole graph: for
    every instance costed, and for switches lost, switches' links cut and thinned and a
    member's link thinned, the same nodes, neighbours, attributes and order as
    canonical(adjusted(graph)) gives, and keys equal exactly where the long way's are."""
    import netmodel.study.instance_cost as ic
    from netmodel.study.placed_graph import canonical, problem_key
    from netmodel.study.scenario_fabric import adjusted
    from topologies.failure_domains import Component

    short = ic.InstanceCosting._switch_problem
    seen = {}

    def both(self, graph, members):
        out = short(self, graph, members)
        assert out is not None
        g, m, key = out
        h, hm = canonical(adjusted(graph, self.scenario.adjust), members)
        assert (m, h.graph) == (hm, g.graph)
        assert list(h.nodes(data=True)) == list(g.nodes(data=True))
        assert all(list(h.adj[n].items()) == list(g.adj[n].items()) for n in h)
        assert seen.setdefault(key, problem_key(h, hm)) == problem_key(h, hm)
        return out

    monkeypatch.setattr(ic.InstanceCosting, "_switch_problem", both)
    c = build_cluster(name, "Llama-3-70B", "decode")
    c.effects()
    assert len(set(seen.values())) == len(seen) == len(c.costing._costed) > 1
    inst = c.instances[0]
    (a, b), (x, y) = list(c._switches.edges)[:2]
    member_link = (inst[0], next(iter(c.graph.adj[inst[0]])))
    comps = [Component("t", "cut", edges=((a, b),)),
             Component("t", "cut-again", edges=((b, a), (a, b))),             # the same graph
             Component("t", "thin", scaled=(((x, y), 0.5), (member_link, 0.25))),
             Component("t", "thin-cut", edges=((x, y),), scaled=(((x, y), 0.5),)),
             Component("t", "lost", nodes=(x,)),
             Component("t", "lost-cut", nodes=(x,), edges=((x, y),), scaled=(((y, x), 0.5),))]
    keys = [c.costing._problem(c.recost_graph([comp], inst), inst)[2] for comp in comps]
    assert keys[0] == keys[1] and keys[4] == keys[5] and len(set(keys)) == 4
