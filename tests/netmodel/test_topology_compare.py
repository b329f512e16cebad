"""Fabrics side by side (netmodel.study.topology_compare): values derived by hand on small
fabrics, the shipped scenarios' fabrics, formatting, caching and bad input. The hardware
blast radius it reports is tested in tests/topologies/test_hardware_radius.py."""

from __future__ import annotations

import math
import re

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from netmodel.collectives.calibration_files import default_calibration
from netmodel.study.fabric_ref import resolve_fabric
from netmodel.study.network_bill import network_costs
from netmodel.study.scenario_catalog import scenario_names
from netmodel.study.topology_compare import COLUMNS, SIZES, compare_topologies
from topologies import build
from topologies.hardware_radius import hardware_radius

H100 = get_gpu("H100-SXM")
LITE = get_gpu("Lite")


@pytest.fixture(scope="module")
def switch_vs_ring():
    return compare_topologies(["single-switch:n=8", "ring:n=8"])


@pytest.fixture(scope="module")
def shipped():
    return compare_topologies(list(scenario_names()))


def by_fabric(result):
    return {r.fabric: r for r in result.rows}


def radius(row):
    return {b.cls: b for b in row.blast_radius}


def test_single_switch_vs_ring_by_hand(switch_vs_ring):
    sw, ring = switch_vs_ring.rows
    bw = H100.scaleup_bandwidth                      # 450 GB/s per GPU
    assert (sw.gpus, ring.gpus) == (8, 8)
    assert (sw.diameter, ring.diameter) == (2, 4)    # GPU-switch-GPU; 4 hops round a ring of 8
    assert (sw.switches, ring.switches) == (1, 0)
    assert sw.switches_by_tier == {0: 1} and ring.switches_by_tier == {}
    assert (sw.links, ring.links) == (8, 8)
    assert (sw.switch_ports_used, sw.switch_ports) == (8, 8)
    # every GPU injects its whole bandwidth on either fabric
    assert sw.injection_per_gpu == ring.injection_per_gpu == bw
    assert sw.injection_total == ring.injection_total == 8 * bw
    # bisection: 4 GPUs' links to the switch; on the ring two links of bw/2 cross the cut
    assert sw.bisection_bandwidth == pytest.approx(4 * bw)
    assert ring.bisection_bandwidth == pytest.approx(2 * bw / 2)
    assert sw.bisection_per_gpu == pytest.approx(bw)            # non-blocking
    assert ring.bisection_per_gpu == pytest.approx(bw / 4)
    # one path through the switch; two ways round the ring to the opposite GPU
    assert (sw.paths, ring.paths, ring.path_hops) == (1, 2, 4)


def test_ring_all_reduce_at_1_gib_is_link_bandwidth_times_efficiency(switch_vs_ring):
    ring = switch_vs_ring.rows[1]
    assert switch_vs_ring.group == 8 and [a.bytes for a in ring.all_reduce] == list(SIZES)
    large = ring.all_reduce[-1]
    cal = default_calibration()
    simple = cal.protocol("Simple").bandwidth_factor
    # a bidirectional ring uses both neighbour links (bw/2 each way) of every GPU
    ceiling = 2 * (H100.scaleup_bandwidth / 2) * cal.scaleup_efficiency * simple
    assert large.algorithm == "bidirectional-ring"
    assert large.busbw < ceiling
    assert large.busbw == pytest.approx(ceiling, rel=0.02)       # latency costs ~1% at 1 GiB
    # busbw = algbw x 2(n-1)/n
    assert large.busbw == pytest.approx(2**30 / large.time * 2 * 7 / 8)
    # busbw grows with the message (latency matters less)
    assert [a.busbw for a in ring.all_reduce] == sorted(a.busbw for a in ring.all_reduce)


def test_network_bill_by_hand(switch_vs_ring):
    sw, ring = switch_vs_ring.rows
    p = {k: v.value for k, v in network_costs().items()}
    # the ring: 8 copper cables of 2 m, no switch, copper ends draw nothing
    cable = p["copper_cable_price"] + 2 * p["copper_price_per_m"]
    assert ring.network_capex == pytest.approx(8 * cable)
    assert ring.network_capex_per_gpu == pytest.approx(cable)
    assert ring.network_power == 0
    # the switch: a tier-0 baseboard of 8 ports x 450 GB/s (its links are board traces)
    bits = 8 * H100.scaleup_bandwidth * 8
    assert sw.network_capex == pytest.approx(bits * p["scaleup_switch_price"])
    assert sw.network_power == pytest.approx(bits * p["switch_energy"]
                                             * p["scaleup_switch_overhead"])
    assert sw.network_power_per_gpu == pytest.approx(sw.network_power / 8)


def test_blast_radius_by_hand(switch_vs_ring):
    sw, ring = (radius(r) for r in switch_vs_ring.rows)
    # the switch gone, its 8 GPUs stop with it (NVIDIA Fabric Manager: with an NVSwitch
    # unavailable the GPUs fail to register and CUDA launches fail): 8, where 8 islands
    # (1 the largest part left, 7 cut off) counted 7
    assert sw["nvswitch"].gpus_max == 8
    # a GPU's only link is a trace of the HGX board (single-switch's default medium): no
    # connector to fail, it fails with the board (was a copper-end taking its GPU, mean 1)
    assert "copper-end" not in sw
    assert ring["copper-end"].gpus_max == 0         # a ring less one cable is a path
    assert ring["gpu-die"].gpus_max == 1            # the GPU itself; the path survives
    assert "nvswitch" not in ring
    assert sw["host"].gpus_max == 8                 # 8 H100 per host
    # the reliability catalog's rule (8 full-size GPUs per DGX/HGX host, Lites by silicon):
    # a B200 fat tree has hosts of 8 (the old silicon rule made them round(1056/148) = 7)
    cmp = compare_topologies(["fat-tree:k=4,gpu=B200-HGX", "fat-tree:k=4,gpu=Lite"])
    hosts = [radius(row)["host"].gpus_max for row in cmp.rows]
    assert hosts == [8, 16]      # Lites: 32 a host, but a k=4 fat tree has 16 GPUs


def test_shipped_scenarios(shipped):
    rows = by_fabric(shipped)
    assert list(rows) == list(scenario_names())
    assert shipped.group == 8
    flat, dgx, hier, ocs = rows["lite-flat"], rows["h100-dgx"], rows["lite-hier"], rows["lite-ocs"]
    # a flat fabric: every Lite its whole bandwidth on its planes, non-blocking, one switch
    assert flat.injection_per_gpu == pytest.approx(LITE.scaleup_bandwidth)
    assert flat.bisection_per_gpu == pytest.approx(LITE.scaleup_bandwidth)
    assert flat.diameter == 2 and flat.switches_by_tier == {1: 4}
    # h100-dgx: 16 GPUs of one half reach the other through their 50 GB/s NICs only
    assert dgx.bisection_bandwidth == pytest.approx(16 * H100.scaleout_bandwidth)
    assert dgx.injection_per_gpu == pytest.approx(H100.scaleup_bandwidth
                                                  + H100.scaleout_bandwidth)
    # lite-hier: a leaf of radix 32 holds 16 Lites, each on one cable
    assert radius(hier)["leaf"].gpus_max == 16
    assert radius(hier)["cpo-engine"].gpus_max == 1
    assert radius(flat)["leaf"].gpus_max == 0      # 3 other planes remain
    # lite-ocs: 4 OCS, no switch; circuits are set for the group, a ring on 2 ports each way
    assert (ocs.ocs, ocs.switches, ocs.ocs_ports) == (4, 0, 4 * 136)
    assert all(a.busbw > 0 for a in ocs.all_reduce)
    assert any("ring of circuits" in n for n in ocs.notes)
    # in-network reduction only adds a candidate: never slower
    for a, b in zip(rows["lite-flat-inr"].all_reduce, flat.all_reduce, strict=True):
        assert a.busbw >= b.busbw * (1 - 1e-12)
    assert all(r.network_capex > 0 and r.network_power > 0 for r in shipped.rows)


def test_default_group_is_the_largest_power_of_two_every_fabric_holds():
    assert compare_topologies(["ring:n=8", "ring:n=6"]).group == 4
    assert compare_topologies(["ring:n=3", "full-mesh:n=16"]).group == 2
    assert compare_topologies(["ring:n=16", "full-mesh:n=16"]).group == 8
    r = compare_topologies(["ring:n=16", "full-mesh:n=16"], group=16)
    assert r.group == 16 and all(row.group == 16 for row in r.rows)


def test_sources_and_gpu_retyping(tmp_path):
    from topologies.io import write_graph

    path = tmp_path / "r.json"
    write_graph(build("ring:n=8"), path)
    r = compare_topologies(["ring:n=8", str(path)])
    spec, saved = r.rows
    assert (spec.source, saved.source) == ("spec", "file")
    for key in ("diameter", "bisection_bandwidth", "network_capex", "paths"):
        assert getattr(spec, key) == getattr(saved, key)
    assert spec.all_reduce == saved.all_reduce
    t = compare_topologies(["ring:n=4", "lite-flat"], gpu="Lite+BW")
    ring, flat = t.rows
    assert flat.fabric == "lite-flat@Lite+BW" and flat.source == "scenario"
    assert ring.gpu_types == {"Lite+BW": 4} and flat.gpu_types == {"Lite+BW": 128}
    bw = get_gpu("Lite+BW").scaleup_bandwidth
    assert ring.injection_per_gpu == pytest.approx(bw)            # bandwidth=auto follows
    assert flat.injection_per_gpu == pytest.approx(bw)            # $scaleup follows
    assert resolve_fabric("lite-flat@Lite+BW").graph is resolve_fabric("lite-flat@Lite+BW").graph
    assert resolve_fabric("ring:n=8").graph is resolve_fabric("ring:n=8").graph   # cached


def test_realized_ocs_circuits_are_used_as_built():
    r = compare_topologies(["ocs:gpus=8,ports=2,logical=ring", "ocs:gpus=8,ports=2"])
    built, bare = r.rows
    assert not any("circuits set" in n for n in built.notes)
    assert any("ring of circuits" in n for n in bare.notes)
    # the same ring of one circuit per neighbour either way
    assert [a.busbw for a in built.all_reduce] == pytest.approx([a.busbw for a in
                                                                 bare.all_reduce])


def test_json_shape(switch_vs_ring):
    d = switch_vs_ring.to_dict()
    assert d["group"] == 8 and d["sizes"] == list(SIZES)
    assert len(d["rows"]) == 2 and list(d["rows"][0]) == list(COLUMNS)
    row = d["rows"][0]
    assert row["switches_by_tier"] == {"0": 1}
    assert [a["bytes"] for a in row["all_reduce"]] == list(SIZES)
    assert set(row["all_reduce"][0]) == {"bytes", "time", "busbw", "algorithm", "protocol"}
    assert {b["cls"] for b in row["blast_radius"]} >= {"gpu-die", "nvswitch"}
    assert "copper-end" in {b["cls"] for b in d["rows"][1]["blast_radius"]}   # the ring's
    import json

    assert json.loads(switch_vs_ring.to_json()) == d


def test_table_formats_each_row_one_way(shipped):
    rows = shipped.table_rows()
    names = [n for n, _ in rows]
    assert "bisection (TB/s)" in names and "injection per GPU (GB/s)" in names
    assert "network capex per GPU (k$)" in names
    for name, values in rows:
        if re.search(r"\((TB/s|GB/s|MB/s|B/s|M\$|k\$|\$|MW|kW|W)\)$", name):
            decimals = {len(v.split(".")[1]) if "." in v else 0 for v in values if v != "-"}
            assert len(decimals) == 1, (name, values)
    text = shipped.table()
    assert "e+" not in text                          # no scientific notation
    head = text.splitlines()[0].split()
    assert head == list(scenario_names())
    bis = dict(rows)["bisection (TB/s)"]
    assert bis[0] == "0.800" and bis[2] == "7.200"


@pytest.mark.parametrize("fabrics, kwargs, needle", [
    (["ring:n=8"], {}, "at least 2 fabrics, got 1"),
    ("ring:n=8", {}, "a list of at least 2 fabrics"),
    (["ring:n=8", "nope"], {}, "unknown fabric 'nope': neither a fabric builder"),
    (["ring:n=8", "lite-flat@Nope"], {}, "Nope"),
    (["ring:n=8", "ring:n=4"], {"group": 8}, "group of 8 GPUs does not fit fabric 'ring:n=4'"),
    (["ring:n=8", "ring:n=4"], {"group": 1}, "group must be a whole number of GPUs >= 2"),
    (["ring:n=8", "ring:n=4"], {"group": True}, "group must be a whole number"),
    (["ring:n=8", "ring:n=8"], {}, "fabrics 'ring:n=8 ring:n=8' names ring:n=8 more than once"),
    (["ring:n=8", "single-switch:n=1"], {}, "has 1 GPU; an all-reduce needs at least 2"),
    (["ring:n=8", "torus"], {"gpu": ""}, "gpu must be a GPU type name"),
    (["ring:n=8", "x.json"], {"gpu": "Lite"}, "cannot re-type the saved fabric file"),
    (["ring:n=8", "fat-tree:k=5"], {}, "k must be even"),
])
def test_bad_input(fabrics, kwargs, needle):
    with pytest.raises(UserError, match=re.escape(needle)):
        compare_topologies(fabrics, **kwargs)


def test_islands_of_circuits():
    """Circuits that leave islands (fabric files must be connected, but a circuit set may
    not be): the group is cut apart, and a GPU's loss cuts its partner off."""
    from netmodel.study.fabric_ref import Fabric
    from netmodel.study.topology_compare import _all_reduce
    from topologies.optical import realize

    g = realize(build("ocs:gpus=8,ports=2"), "0-1;2-3;4-5;6-7")
    out, note = _all_reduce(Fabric("islands", "spec", g), 4)
    assert all(a.busbw == 0 and math.isinf(a.time) for a in out)
    assert "cut apart" in note
    r = {b.cls: b for b in hardware_radius(g, gpus_per_host=8)}
    # 4 islands of 2, one GPU gone: the largest part left holds 2 GPUs, so 1 lost + 5 cut
    # off (the definition blast_radius uses; a fabric as built is connected)
    assert r["gpu-die"].gpus_max == 6 and r["gpu-die"].evaluated == 1


def test_twin_port_ends_said_as_show_says_them():
    """One SU of a SuperPOD, twin-port (its default) and single-port: modules by hand, 124
    at the 248 NIC ends, 8 leaves x (16 down for 31 GPU ends + 16 up for 32), 4 spines x 32
    for 64: 508 modules holding 248 + 8 x 63 + 4 x 64 = 1,008 ends; one a module, 1,008 of
    each. The note is topology show's words; single-port says nothing more."""
    from topologies import superpod
    from topologies.analysis import summary

    r = compare_topologies(["superpod:sus=1", "superpod:sus=1,module_ports=1"])
    twin, single = r.rows
    assert (twin.pluggable_transceivers, twin.pluggable_ends, twin.module_ports) == \
        (124 + 8 * (16 + 16) + 4 * 32, 248 + 8 * (31 + 32) + 4 * 64, 2) == (508, 1008, 2)
    assert (single.pluggable_transceivers, single.pluggable_ends, single.module_ports) == \
        (1008, 1008, 1)
    said = "twin-port modules holding 1,008 optical cable ends"
    assert f"pluggable transceivers: {said}" in twin.notes
    assert not any("optical cable end" in n for n in single.notes)
    assert f"508 pluggable transceivers ({said})" in summary(superpod(1)).table()
    text = r.table()
    assert text.count(said) == 1 and "    pluggable transceivers: " + said in text
    rows = r.to_dict()["rows"]
    assert [(d["pluggable_transceivers"], d["pluggable_ends"], d["module_ports"])
            for d in rows] == [(508, 1008, 2), (1008, 1008, 1)]
    assert f"pluggable transceivers: {said}" in rows[0]["notes"]
