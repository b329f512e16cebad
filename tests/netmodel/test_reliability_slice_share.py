"""A scenario cut from a larger build (h100-dgx: 4 servers of a SuperPOD SU; lite-direct:
the same leaves and spines) counts its share of the links between switches, the share the
cost model charges it (topologies.inventory.port_fill), not the whole SU's: its leaves and
spines fail whole, but the uplinks of the 28 absent servers' ports are not its parts
(audit of helper 232: 576 transceivers, 3.33 failures a year, for 32 GPUs). One failure of
a shared link touches every cell of its set, so a cluster whose last set is part-filled
weighs its sets by the links each holds."""

from __future__ import annotations

import pytest

from netmodel.study.availability import availability
from netmodel.study.availability_kinds import _kinds
from netmodel.study.blast_radius import blast_radius
from netmodel.study.network_bill import network_bill
from netmodel.study.reliability_catalog import HOUR
from netmodel.study.reliability_cluster import YEAR, _shared, build_cluster
from netmodel.study.scenario_fabric import build_fabric


def _rows(scenario, gpus=None):
    return {r.cls: r for r in blast_radius(scenario, "Llama-3-70B", gpus=gpus).rows}


def _optics_charged(scenario) -> float:
    bill = network_bill(build_fabric(scenario))   # share="ports-used"
    return sum(i.count for i in bill.items if i.category == "optics"
               and i.what.startswith("pluggable-optics"))


def test_h100_dgx_counts_its_slice_of_the_su():
    # 32 NIC-leaf cables (64 ends) + 1/8 (port_fill: 32 of 8 x 32 down ports) of the SU's
    # 256 leaf-spine cables (512 ends): 64 + 64 = 128 ends (was 576), in twin-port modules
    # (P40: two ends a module, every count even): 64 modules (128 single-port)
    rows = _rows("h100-dgx")
    t = rows["transceiver"]
    assert t.count == (32 * 2 + 256 * 2 / 8) / 2 == 64 == _optics_charged("h100-dgx") / 2
    # 6.6e-7 per module-hour (netmodel/data/failures.toml): 0.370 a year (0.741 single-port)
    assert t.rate_per_hour == pytest.approx(6.6e-7, rel=1e-12)
    assert t.events_per_year == pytest.approx(64 * 6.6e-7 * YEAR / HOUR, rel=1e-12)
    assert t.events_per_year == pytest.approx(0.3703, abs=1e-4)
    # leaves and spines fail whole, whatever share of them the slice uses
    assert (rows["leaf"].count, rows["spine"].count, rows["nic"].count) == (8, 4, 32)


def test_lite_direct_counts_its_slice_of_the_su():
    # 128 Lites on 32 breakout NIC cables: 128 GPU ends + 32 switch ends = 160; 1/8 of
    # the 256 leaf-spine cables' 512 ends = 64: 224 (was 672), what cost charges
    rows = _rows("lite-direct")
    assert rows["transceiver"].count == 160 + 512 / 8 == 224 == _optics_charged("lite-direct")
    assert (rows["leaf"].count, rows["spine"].count) == (8, 4)


def test_a_part_filled_last_set_weighs_by_its_links():
    # 9 cells of h100-dgx, 8 a set: one full SU and a second holding one cell. Leaves: 2
    # sets of 8, whole, a failure touching 8 or 1 cells, 4.5 on average. Leaf-spine
    # modules (twin-port, two ends a module: the SU's 512 ends in 256): 9/8 of the 256
    # (288), 256 of them touching 8 cells and 32 one cell: (256 x 8 + 32 x 1) / 288 = 65/9
    # cells a failure (was 4.5, each set alike; the same with 512 single-port ends)
    c = build_cluster("h100-dgx", "Llama-3-70B", "decode", gpus=288)
    link = next(e for e in c.effects(("transceiver",)) if _shared(e))
    leaf = next(e for e in c.effects(("leaf",)))
    assert link.parts == 256 and leaf.parts == 8   # a cell's, each class one effect
    assert c.copies(link) == 9 / 8 and c.copies(leaf) == 2
    assert c.cells_hit(link) == (pytest.approx(65 / 9, rel=1e-15), 8)
    assert c.cells_hit(leaf) == (4.5, 8)
    # the availability model's kinds of that link: the full set (8 cells at once) at the
    # SU's 256, the last set (1 cell) at its 32; cell-failures as the blast radius counts
    r = c.rates["transceiver"]
    kinds = _kinds(c, link, link.parts, "pod", -1)
    assert [(k.cells, k.sets) for k in kinds] == [(8, 1), (1, 1)]
    assert [k.rate / r for k in kinds] == [pytest.approx(256), pytest.approx(32)]
    assert sum(k.rate * k.cells for k in kinds) == pytest.approx(
        link.parts * r * c.copies(link) * c.cells_hit(link)[0], rel=1e-12)


def test_availability_is_unchanged_where_the_links_take_nothing_down():
    # h100-dgx's leaf-spine transceivers take no instance down and slow none: no event
    # kind, so the availability is the same with or without their failures (it was
    # 0.9982935027031756 before and after this count changed, analytic)
    rows = _rows("h100-dgx")
    assert rows["transceiver"].instances_down_mean == rows["transceiver"].tokens_lost_pct_mean == 0
    c = build_cluster("h100-dgx", "Llama-3-70B", "decode")
    quiet = c.with_catalog(c.catalog.with_(rates={"transceiver": 0.0}))
    a = availability(None, None, cluster=c, spares=0, trials=20)
    b = availability(None, None, cluster=quiet, spares=0, trials=20)
    assert a.analytic.mean == b.analytic.mean and a.mc.mean == b.mc.mean
    assert [k.cls for k in a.kinds] == [k.cls for k in b.kinds]
    assert "transceiver" not in {k.cls for k in a.kinds}
