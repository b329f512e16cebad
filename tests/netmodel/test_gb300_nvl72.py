"""The GB300 NVL72 example scenario (docs/examples/gb300-nvl72.toml) against hand
derivations: its fabric, a compute tray as the host, the 9 NVLink switch trays of a rack
in the failure model, the blast-radius table's columns, and the decode step at batch 1."""

from pathlib import Path

import pytest

from compute.hardware import get_gpu
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from topologies.failure_domains import TIER0_BOXES

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "gb300-nvl72.toml"


@pytest.fixture(scope="module")
def cluster():
    return build_cluster(str(EXAMPLE), "Llama-3.1-405B", "decode")


@pytest.fixture(scope="module")
def table(cluster):
    return blast_radius(str(EXAMPLE), "Llama-3.1-405B", "decode", cluster=cluster)


def test_fabric_by_hand():
    s = get_scenario(str(EXAMPLE))
    g = build_fabric(s)
    gpu = get_gpu("GB300-NVL72")
    # 2 racks x 72 GPUs; 18 NVLink5 x 50 GB/s = 900 GB/s into the rack's switch; an 800 Gb/s
    # ConnectX-8 = 100 GB/s to a rail leaf
    assert g.graph["gpus"] == 144 and gpu.sms == 148
    assert g.edges["gpu0", "nvs0"]["bandwidth"] == pytest.approx(900e9)
    assert g.edges["gpu0", "leaf0"]["bandwidth"] == pytest.approx(100e9)
    # 4 GPUs per compute tray: GPU i on tray i // 4, rail i % 4
    assert [g.nodes["gpu5"][k] for k in ("server", "rail", "rack")] == [1, 1, 0]
    assert g.graph["builder"] == "nvl72" and TIER0_BOXES["nvl72"] == 9


def test_compute_tray_is_the_host(cluster):
    # 4 GPUs per compute tray: 36 hosts in 144 GPUs (the catalog's 8 is for unlabelled fabrics)
    hosts = cluster.components["host"]
    assert len(hosts) == 36 and {len(h.nodes) for h in hosts} == {4}
    e = next(x for x in cluster.effects() if x.cls == "host")
    # TP 4 instances placed contiguously fill exactly one tray: a tray takes one instance
    assert cluster.tp == 4 and (e.gpus_lost, e.sms, e.instances_down) == (4, 4 * 148, 1)


def test_switch_trays_are_parts(cluster, table):
    # one logical switch per rack stands for 9 NVLink switch trays: 18 parts in 2 racks,
    # each at a switch's 3.33e-6 per hour (the old count was 2, one per rack)
    comps = cluster.components["nvswitch"]
    assert len(comps) == 2 and sum(c.parts for c in comps) == 18
    row = next(r for r in table.rows if r.cls == "nvswitch")
    assert row.count == 18
    assert row.events_per_year == pytest.approx(18 * 3.33e-6 * 8766, rel=1e-9)


def test_table_columns_stay_apart(table):
    # a rack is 72 x 148 = 10,656 SMs: the old table printed '721.066e+04' (GPUs and SMs run
    # together); every cell keeps a space before it
    rack = next(line for line in table.table().splitlines() if line.startswith("rack "))
    assert rack.split()[4:7] == ["72", "10,656", "18"]


def test_decode_step_at_batch_one():
    # weights 487.2 GB over TP 4 at 8 TB/s = 15.2 ms: the step is at least that and, with two
    # all-reduces of 126 layers on NVLink, under the 50 ms SLO
    from compute.evaluate_one import evaluate

    r = evaluate("Llama-3.1-405B", "GB300-NVL72", 4, 1, "decode")
    weights = 487.2e9 / 4 / 8e12
    assert weights <= r.latency < 1.25 * weights
    assert r.tokens_per_s == pytest.approx(1 / r.latency)
