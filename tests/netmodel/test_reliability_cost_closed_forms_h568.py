"""Closed forms of the reliability, availability and cost side checked by hand:

* a network bill is its inventory, counted by hand, at the unit prices and energies of
  netmodel/data/network_costs.toml (a k=4 fat tree, a 4-leaf leaf-spine);
* one instance's availability is the product of its parts' MTBF / (MTBF + MTTR), and
  without spares the capacity lost is the sum over failure kinds of rate x capacity lost
  x duration;
* with spares a pool is an Erlang loss system: one kind asking 4 spares of a pool of 4 is
  refused a / (1 + a) of the time, of 8 (two servers) (a^2/2) / (1 + a + a^2/2);
* one kind of failure: more spares, a longer MTBF or a shorter repair never lower the
  mean capacity (hypothesis). With several kinds first come, first served can: a pool
  one more spare lets a large short ask take whole keeps a long one waiting (the Monte
  Carlo agrees), so that is not asserted;
* blast radius on a k=4 fat tree counted by hand, never past the cluster; the shipped
  lite-flat's spare curve never falls as spares are added."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study.availability import spare_curve
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.blast_radius import blast_radius
from netmodel.study.network_bill import network_bill, network_costs
from netmodel.study.optic_classes import module_rows
from netmodel.study.reliability_cluster import YEAR, build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario
from netmodel.study.reliability_spares import SparePools
from topologies.registry import build

PORT = 50e9 * 8          # the builders' default link: 50 GB/s, 400 Gb/s a port


def _price(key: str) -> float:
    return network_costs()[key].value


def _module(table: str) -> float:
    """USD or W of one single-port 400G module (a 400 Gb/s end, module_ports 1), its row
    of network_costs.toml's module classes: $700 and 9 W (P46, P41)."""
    return module_rows()[f"{table}.400G"].value


def _cables(lengths: dict) -> float:
    """Fibre cables: a fixed price plus a price per metre, ``{metres: count}``."""
    return sum(n * (_price("fibre_cable_price") + _price("fibre_price_per_m") * m)
               for m, n in lengths.items())


def _switches(ports: int) -> tuple[float, float]:
    """(capex, watts) of switches with ``ports`` ports of 400 Gb/s in all (tier >= 1)."""
    return (ports * PORT * _price("switch_price"),
            ports * PORT * _price("switch_energy") * _price("switch_overhead"))


def test_fat_tree_k4_bill_is_its_inventory_at_unit_prices():
    # k=4: 16 GPUs, 8 edge + 8 aggregation + 4 core switches of 4 ports (80 ports, all
    # used); 16 GPU-edge + 16 edge-aggregation + 16 aggregation-core cables, every end on
    # a pluggable module (96); cables 20 / 50 / 100 m (latency 0.1 / 0.25 / 0.5 us at
    # 5 ns/m)
    bill = network_bill(build("fat-tree:k=4"), share="as-built")
    assert bill.counts["cables"] == {"pluggable-optics": 48}
    assert bill.counts["pluggable_transceivers"] == 96
    assert (bill.counts["switch_ports"], bill.counts["switch_ports_used"]) == (80, 80)
    assert bill.counts["nics"] == 16
    sw_usd, sw_w = _switches(20 * 4)
    optics_usd = 96 * _module("pluggable_module_price")
    optics_w = 96 * _module("pluggable_module_power")
    assert bill.capex == pytest.approx(sw_usd + optics_usd + _cables({20: 16, 50: 16, 100: 16}),
                                       rel=1e-12)
    assert bill.power == pytest.approx(sw_w + optics_w, rel=1e-12)
    # at the shipped prices: $6,240 a switch, $700 a module (9 W), $5,120 of cables; a
    # module was $625 and 8.5 W, the 800G class per bit: $189,920 and 1,379.2 W before
    assert bill.capex == pytest.approx(197_120.0) and bill.power == pytest.approx(1_427.2)


def test_leaf_spine_bill_as_built_and_as_a_slice():
    # 4 leaves of 8 ports (4 GPUs down, 4 up), 4 spines of 8 ports of which 4 are wired;
    # 32 cables (16 of 20 m to GPUs, 16 of 50 m leaf-spine), 64 modules
    graph = build("leaf-spine")
    built = network_bill(graph, share="as-built")
    assert built.counts["pluggable_transceivers"] == 64
    assert (built.counts["switch_ports"], built.counts["switch_ports_used"]) == (64, 48)
    optics_usd = 64 * _module("pluggable_module_price")
    optics_w = 64 * _module("pluggable_module_power")
    sw_usd, sw_w = _switches(8 * 8)
    assert built.capex == pytest.approx(sw_usd + optics_usd + _cables({20: 16, 50: 16}))
    assert built.power == pytest.approx(sw_w + optics_w)
    # as a slice of the full-size fabric (every GPU port used, fill 1): a spine is
    # charged for the 4 ports it uses, half of it
    used = network_bill(graph, share="ports-used")
    half_usd, half_w = _switches(4 * 4)
    assert used.capex == pytest.approx(built.capex - half_usd)
    assert used.power == pytest.approx(built.power - half_w)


def _pool(s: int) -> SparePools:
    return SparePools("global", s, 1, (s,))


def test_one_instance_is_its_parts_in_series_and_the_loss_adds_by_kind():
    # 4 instances of 4 GPUs; a GPU (16) fails at lam and takes its instance down for D;
    # a host (2, each holding 2 instances) at mu and takes both down for D2
    lam, mu, d, d2 = 2e-9, 5e-9, 86_400.0, 3 * 86_400.0
    gpu = Kind("gpu", "g", rate=16 * lam, down=1, slow=0.0, units=-1, restored=0.0,
               d_repair=d, d_swap=d, hold=d, d_slow=0.0)
    host = Kind("host", "h", rate=2 * mu, down=2, slow=0.0, units=-1, restored=0.0,
                d_repair=d2, d_swap=d2, hold=d2, d_slow=0.0)
    a = analytic([gpu, host], _pool(0), 4, components={0: 16, 1: 2})

    def avail(rate, mttr):   # one part: MTBF / (MTBF + MTTR)
        return (1 / rate) / (1 / rate + mttr)

    assert a.instance_availability == pytest.approx(avail(lam, d) ** 4 * avail(mu, d2),
                                                    rel=1e-12)
    lost = 16 * lam * 1 * d + 2 * mu * 2 * d2   # rate x instances down x duration
    # the first-order loss; the mean adds back the share by which outages in progress
    # would run past the whole cluster (a host's two and a GPU's two more: ~4e-9 here)
    assert a.overlap == pytest.approx(lost / 4, rel=1e-12)
    assert 0 <= a.mean - (1 - lost / 4) < 1e-8
    assert sum(a.lost_per_year.values()) == pytest.approx((1 - a.mean) * YEAR, rel=1e-9)


@settings(max_examples=12, deadline=None)
@given(st.floats(1e-9, 1e-6), st.floats(3_600.0, 7 * 86_400.0), st.integers(4, 64))
def test_a_pool_is_an_erlang_loss_system(rate, hold, instances):
    # one kind asking 4 spares (an instance re-created); 4 spares: one server, 8: two
    swap, repair = 90.0, hold + 60.0
    k = Kind("gpu", "g", rate=rate, down=1, slow=0.0, units=4, restored=0.0,
             d_repair=repair, d_swap=swap, hold=hold, d_slow=0.0)
    a = rate * hold
    for spares, blocked in ((3, 1.0), (4, a / (1 + a)),
                            (8, a * a / 2 / (1 + a + a * a / 2))):
        got = analytic([k], _pool(spares), instances)
        assert got.blocking[0] == pytest.approx(blocked, rel=1e-9)
        lost = rate * (blocked * repair + (1 - blocked) * swap)
        assert got.overlap == pytest.approx(lost / instances, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-9, 1e-5), st.floats(3_600.0, 7 * 86_400.0), st.integers(1, 3),
       st.sampled_from([1, 2, 4, 8]), st.integers(4, 32), st.integers(0, 24))
def test_one_kind_more_spares_longer_mtbf_or_faster_repair_never_lower_the_mean(
        rate, repair, down, per, instances, spares):
    k = Kind("gpu", "g", rate=rate, down=down, slow=0.0, units=down * per, restored=0.0,
             d_repair=repair, d_swap=90.0, hold=repair - 30.0, d_slow=0.0,
             per=per if down > 1 else 0)
    base = analytic([k], _pool(spares), instances).mean
    assert analytic([k], _pool(spares + 1), instances).mean >= base - 1e-15
    assert analytic([replace(k, rate=rate / 2)], _pool(spares), instances).mean >= base - 1e-15
    faster = replace(k, d_repair=repair / 2, hold=repair / 2 - 30.0)
    assert analytic([faster], _pool(spares), instances).mean >= base - 1e-15


@pytest.fixture(scope="module")
def fat_tree():
    # k=4 fat tree of 16 H100, Llama-3-70B decode at TP 4: 4 instances of 4 GPUs, each
    # on two edge switches of 2 GPUs; hosts are blocks of 8 GPUs (2 instances)
    return build_cluster(fabric_cluster_scenario("fat-tree:k=4"), "Llama-3-70B", "decode")


def test_fat_tree_blast_radius_by_hand(fat_tree):
    c = fat_tree
    assert (c.gpus, c.instance_gpus, c.instances_total) == (16, 4, 4)
    by = {}
    for e in c.effects():
        by.setdefault(e.cls, []).append(e)
        assert e.gpus <= c.gpus and e.instances_down + len(e.slowed) <= c.instances_total
    # a GPU, its NIC or its edge switch takes down the one instance it holds; a host
    # the 2 of its 8 GPUs; a core switch nothing (3 others carry every path)
    want = {"gpu-die": (1, 1), "gpu-package": (1, 1), "nic": (1, 1), "leaf": (2, 1),
            "host": (8, 2), "core": (0, 0)}
    for cls, (gpus, down) in want.items():
        assert {(e.gpus, e.instances_down) for e in by[cls]} == {(gpus, down)}, cls
    # a module on a GPU's only link (32 of 96, either end) cuts that GPU off: 1/3
    t = by["transceiver"]
    parts = sum(e.parts for e in t)
    assert parts == 96
    assert sum(e.parts * e.instances_down for e in t) / parts == pytest.approx(1 / 3)
    # the table: events a year are parts x rate x a year; instances down and tokens lost
    # as counted above (an instance is a quarter of the tokens)
    rows = {r.cls: r for r in blast_radius(None, None, cluster=c).rows}
    for cls, r in rows.items():
        assert r.events_per_year == pytest.approx(r.count * r.rate_per_hour * YEAR / 3600,
                                                  rel=1e-12), cls
    assert (rows["leaf"].count, rows["transceiver"].count, rows["host"].count) == (8, 96, 2)
    assert rows["host"].instances_down_mean == 2 and rows["host"].tokens_lost_pct_mean == 50
    assert rows["transceiver"].instances_down_mean == pytest.approx(1 / 3)


def test_lite_flat_spare_curve_never_falls():
    c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    for placement in ("pod", "global"):
        _, mean, _ = spare_curve(c, placement, range(0, 33))
        assert np.all(np.diff(mean) >= -1e-15), placement
        assert mean[-1] > mean[0]
    assert math.isclose(spare_curve(c, "pod", [0])[1][0],
                        spare_curve(c, "global", [0])[1][0])
