"""Twin-port optical modules (graph attribute ``module_ports``, topologies.optic_modules):
counts, what one module's failure takes, and how files without the attribute read.

Hand counts. One SU of a DGX H100 SuperPOD (``superpod:sus=1``): 31 DGX (248 GPUs, one slot
of 32 holds the UFM), 8 rail leaves and 4 spines of 64 ports, 32 uplinks a leaf (8 to each
spine). Optical cable ends: 248 NIC cables and 256 leaf-spine cables, two ends each, 1,008.
Twin-port (two 400G ends a module, P40; 4 cages for a DGX's 8 NICs, DGX H100 User Guide
Table 6): GPUs 248 / 2 = 124; a leaf's 31 down ports in 16 modules (one half used) and 32 up
in 16: 8 x 32 = 256; a spine's 64 in 32: 4 x 32 = 128; 124 + 256 + 128 = 508 (504 were
every module full). h100-dgx's cell (4 servers, rail-optimized:domains=4): 32 NIC ends in 16
modules, a leaf's 4 down in 2 and 32 up in 16 (8 leaves: 144), a spine's 64 in 32 (4: 128):
288, half of 576 ends.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies import build, read_graph, write_graph
from topologies.degrade import degrade
from topologies.failure_domains import class_counts, components
from topologies.hardware_radius import hardware_radius
from topologies.inventory import bill_of_materials
from topologies.optic_modules import module_ports


def test_superpod_counts_twin_port_modules_by_hand():
    g = build("superpod:sus=1")
    assert module_ports(g) == 2
    assert bill_of_materials(g).pluggable_transceivers == 124 + 8 * (16 + 16) + 4 * 32 == 508
    assert class_counts(components(g, classes=["transceiver"]))["transceiver"] == 508
    single = build("superpod:sus=1,module_ports=1")
    assert module_ports(single) == 1 and "module_ports" not in single.graph
    assert bill_of_materials(single).pluggable_transceivers == 2 * (248 + 256) == 1008
    # single-port: a component a cable, both its ends (2 parts), as before
    assert class_counts(components(single, classes=["transceiver"]))["transceiver"] == 1008


def test_h100_dgx_cell_holds_half_its_ends_in_modules():
    g = build("rail-optimized:domains=4,module_ports=2")
    assert bill_of_materials(g).pluggable_transceivers == 16 + 8 * (2 + 16) + 4 * 32 == 288
    assert bill_of_materials(build("rail-optimized:domains=4")).pluggable_transceivers == 576


def test_one_module_takes_both_of_its_links():
    g = build("rail-optimized:domains=4,module_ports=2")
    mods = {c.name: c for c in components(g)["transceiver"]}
    assert all(c.parts == 1.0 for c in mods.values())
    # GPUs 0 and 1 of server 0 share a cage: their NIC cables (rails 0 and 1) go with it
    nic = mods["gpu0 module 0"]
    assert nic.edges == (("gpu0", "leaf0"), ("gpu1", "leaf1")) and not nic.shared
    # a leaf's first two down ports: servers 0 and 1 on rail 0
    down = mods["leaf0 module 0"]
    assert down.edges == (("gpu0", "leaf0"), ("gpu8", "leaf0"))
    # an up module holds 2 of the 8 cables to spine 0: 6 / 8 of its bandwidth stays
    up = mods["leaf0 module 2"]
    assert up.scaled == ((("leaf0", "spine0"), 0.75),) and up.shared
    cut = degrade(g, [nic])
    assert not cut.has_edge("gpu0", "leaf0") and not cut.has_edge("gpu1", "leaf1")
    assert cut.has_edge("gpu2", "leaf2")
    thin = degrade(g, [up])
    assert thin.edges["leaf0", "spine0"]["bandwidth"] == 0.75 * g.edges["leaf0", "spine0"][
        "bandwidth"]


def test_blast_radius_of_a_module_is_two_links():
    # no GPU is cut off by one module on a rail fabric (each GPU keeps NVLink to its
    # server); the class counts modules, one part each
    for spec, parts in (("rail-optimized:domains=4,module_ports=2", 288),
                        ("rail-optimized:domains=4", 576)):
        r = {b.cls: b for b in hardware_radius(build(spec))}["transceiver"]
        assert r.parts == parts and r.gpus_max == 0


def test_files_without_the_attribute_read_single_port(tmp_path):
    path = tmp_path / "sp.json"
    write_graph(build("superpod:sus=1"), path)
    data = json.loads(path.read_text())
    assert data["graph"]["module_ports"] == 2
    assert bill_of_materials(read_graph(path)).pluggable_transceivers == 508
    gml = tmp_path / "sp.graphml"   # GraphML keeps it too, as a whole number
    write_graph(build("superpod:sus=1"), gml)
    back = read_graph(gml)
    assert back.graph["module_ports"] == 2 and type(back.graph["module_ports"]) is int
    assert (bill_of_materials(back).pluggable_transceivers,
            bill_of_materials(back).pluggable_ends) == (508, 1008)
    assert class_counts(components(back, classes=["transceiver"]))["transceiver"] == 508
    del data["graph"]["module_ports"]   # a file written before the attribute
    path.write_text(json.dumps(data))
    assert bill_of_materials(read_graph(path)).pluggable_transceivers == 1008
    data["graph"]["module_ports"] = 4
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="'module_ports' must be 1 or 2"):
        read_graph(path)
    with pytest.raises(UserError, match="module_ports must be 1 or 2"):
        build("rail-optimized:domains=2,module_ports=3")


def test_a_switch_side_module_cuts_off_two_gpus():
    # leaf-spine:leaves=2,radix=4: 4 GPUs, 2 down and 2 up a leaf (one cable to each of 2
    # spines). Single-port: 8 cables of 2 ends, each GPU's cable cutting that GPU off (4 of
    # 8 cables, 1 GPU), an uplink nothing: mean 0.5, max 1. Twin-port (the attribute set
    # by hand; no server labels, so a GPU's one end is a module half used): a leaf's down
    # module cuts its 2 GPUs (2 modules), a GPU's module its GPU (4), a leaf's up module
    # both its uplinks, its leaf and 2 GPUs apart from the other 2 (2 modules, 2 GPUs), a
    # spine's module both cables to that spine, nothing (the other spine joins the
    # leaves): (2 x 2 + 4 x 1 + 2 x 2 + 2 x 0) / 10 = 1.2, max 2.
    g = build("leaf-spine:leaves=2,radix=4")
    single = {b.cls: b for b in hardware_radius(g)}["transceiver"]
    assert (single.parts, single.gpus_mean, single.gpus_max) == (16, 0.5, 1)
    g.graph["module_ports"] = 2
    twin = {b.cls: b for b in hardware_radius(g)}["transceiver"]
    assert (twin.components, twin.parts, twin.gpus_max) == (10, 10, 2)
    assert twin.gpus_mean == pytest.approx(1.2, rel=1e-12)
    mods = {c.name: c for c in components(g)["transceiver"]}
    assert mods["leaf0 module 0"].edges == (("leaf0", "gpu0"), ("leaf0", "gpu1"))
    assert mods["spine0 module 0"].edges == (("leaf0", "spine0"), ("leaf1", "spine0"))


def test_a_middle_switch_keeps_its_down_and_up_ports_apart():
    # fat-tree:k=6 with module_ports 2 set by hand: 54 GPUs (no server labels: a GPU's one
    # end a module, half used), 18 edge and 18 aggregation switches of 3 down and 3 up
    # ports (2 + 2 modules each, one of each half used), 9 cores of 6 down (3): 54 + 36 x
    # 4 + 9 x 3 = 225 modules for 324 ends (3 layers of 54 cables). An aggregation switch's 6
    # ends taken as one row made 3 modules, 2 of them holding a down and an up port
    # (207 modules, 18 mixed).
    from topologies.edge_arrays import edge_arrays
    from topologies.optic_modules import module_worth, optical_modules

    g = build("fat-tree:k=6")
    g.graph["module_ports"] = 2
    e = edge_arrays(g)
    mods = optical_modules(g, e)
    assert len(mods) == 54 + 36 * 4 + 9 * 3 == 225
    assert bill_of_materials(g).pluggable_transceivers == 225
    assert bill_of_materials(g).pluggable_ends == 2 * 3 * 54 == 54 + 36 * 6 + 9 * 6
    assert module_worth(g, e).sum() == 225
    kinds = dict(g.nodes(data=True))
    for where, held in mods:
        if kinds[where]["kind"] != "switch":
            continue
        tier = kinds[where]["tier"]
        sides = {kinds[far]["kind"] == "gpu" or kinds[far]["tier"] < tier
                 for i, _ in held
                 for far in (e.nodes[e.u[i]], e.nodes[e.v[i]]) if far != where}
        assert len(sides) == 1, (where, held)


def test_lite_groups_keep_the_bases_twin_port_modules():
    # lite-direct's shape (rail-optimized:domains=4, 4 Lites an H100) with a twin-port base:
    # 128 Lites' NIC shares (links 1/4, breakouts) stay one a module: 128 at the Lites and
    # 128 x 1/4 = 32 ports' worth at the leaves; the 256 leaf-spine cables' 512 ends two a
    # module (8 leaves x 16 up, 4 spines x 32): 256. 128 + 32 + 256 = 416 modules for 672
    # ends (single-port 672). The co-packaged mesh (384 ends) holds no module. split=gateway:
    # Lite 0 of each group takes the whole NIC cable, paired by server as the H100s were:
    # 16 + 8 x (2 + 16) + 4 x 32 = 288 for 576 ends.
    base = "rail-optimized:domains=4,module_ports={}"
    for ports, split, modules, ends in ((1, "even", 672, 672), (2, "even", 416, 672),
                                        (2, "gateway", 288, 576)):
        g = build(f"lite-groups:base=[{base.format(ports)}],lites=4,split={split}")
        b = bill_of_materials(g)
        assert module_ports(g) == ports
        assert (b.pluggable_transceivers, b.pluggable_ends, b.cpo_ports) == (modules, ends, 384)
        assert class_counts(components(g, classes=["transceiver"]))["transceiver"] == (
            modules if ports == 2 else 2 * 256 + 128 + 32)
