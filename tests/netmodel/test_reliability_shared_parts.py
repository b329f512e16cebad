"""A cluster of ``--gpus N`` copies of a scenario's fabric counts the switches and OCSes
copies share in a full build (leaves, spines, OCSes) once per set of cells they serve
(topologies.inventory.cells_per_shared_part), whole, as the builder would build that many
GPUs; the links between switches and their ends at the cells' share of them
(topologies.inventory.port_fill a cell), as the cost model charges a cell (network_bill,
share ports-used): a slice of an SU counts the uplinks of its own ports, not those of
absent servers. A shared part's failure touches every cell of its set, so rate x radius
is unchanged."""

from __future__ import annotations

import pytest

from netmodel.study.blast_radius import blast_radius
from netmodel.study.network_bill import network_bill
from netmodel.study.reliability_catalog import HOUR
from netmodel.study.reliability_cluster import YEAR
from netmodel.study.scenario_fabric import build_fabric
from tests.netmodel.fabric_helpers import h100_x4_scenario
from topologies import build
from topologies.failure_domains import class_counts, components

CLASSES = ("nic", "transceiver", "nvswitch", "leaf", "spine")


def _counts(scenario, model, gpus):
    rows = {r.cls: r for r in blast_radius(scenario, model, gpus=gpus).rows}
    return {c: rows[c].count for c in CLASSES}


@pytest.mark.parametrize("cells, hand", [
    # h100-dgx is 4 servers x 8 H100 on the 8 rail leaves of one SU (32 servers, 64-port
    # leaves with 32 uplinks, 4 spines: 8 parallel cables a leaf-spine pair), port_fill
    # 32 / (8 x 32) = 1/8. 8 cells fill one SU: 8 leaves, 4 spines, 256 uplinks (512
    # ends) + 256 GPU cables (512), in twin-port modules (two ends a module, P40): 512.
    (8, {"nic": 256, "transceiver": 512, "nvswitch": 32, "leaf": 8, "spine": 4}),
    # 12 cells = 48 servers = 2 SUs (the second half full): 16 leaves, 8 spines whole;
    # 384 GPU cables (768) and the 48 servers' share of the 512 uplinks, 12/16 = 384
    # (768): 1,536 ends (was 1,792, the second SU's uplinks of its 16 absent servers
    # too), 768 modules
    (12, {"nic": 384, "transceiver": 768, "nvswitch": 48, "leaf": 16, "spine": 8}),
    # 2 cells = 8 servers on the same 8 leaves: the SU's switches once, whole; 64 GPU
    # cables (128) and 2/8 of the 256 uplinks (128): 256 ends (was 640), 128 modules
    (2, {"nic": 64, "transceiver": 128, "nvswitch": 8, "leaf": 8, "spine": 4}),
    # 1 cell, the study's: 32 GPU cables (64) and 1/8 of the uplinks (64): 128 ends, the
    # optics ends the cost model charges it (was 576: 64 + the SU's 512), 64 modules
    (1, {"nic": 32, "transceiver": 64, "nvswitch": 4, "leaf": 8, "spine": 4}),
])
def test_cells_count_the_parts_of_one_build(cells, hand):
    got = _counts("h100-dgx", "Llama-3-70B", 32 * cells)
    assert got == hand
    # the rail-optimized builder's own fabric of that many GPUs (same leaves and spines,
    # whole), its transceivers as the cost model charges them (ports-used)
    g = build(f"rail-optimized:domains={4 * cells},module_ports=2")
    built = class_counts(components(g))
    assert {c: built[c] for c in CLASSES if c != "transceiver"} == \
        {c: n for c, n in hand.items() if c != "transceiver"}
    optics = sum(i.count for i in network_bill(g).items if i.category == "optics")
    assert optics == 2 * hand["transceiver"]   # ends, priced each at half a module


def test_16k_h100_against_llama3():
    # 512 cells of h100-dgx = 64 full SUs: 16,384 GPU cables and 64 x 256 = 16,384
    # uplinks, 2 ends each = 65,536 (was 294,912: each copy's 8 leaves kept 32 uplinks for
    # 4 servers), in twin-port modules (two ends a module, P40): 32,768, 2 a GPU; 512
    # leaves (was 4,096), 64 x 4 = 256 spines (was 2,048), 2,048 NVSwitch boards. Llama 3
    # (Table 5): 35 network events in 54 days = 237 a year.
    got = _counts("h100-dgx", "Llama-3-70B", 16384)
    assert got == {"nic": 16384, "transceiver": 32768, "nvswitch": 2048, "leaf": 512,
                   "spine": 256}
    rows = {r.cls: r for r in blast_radius("h100-dgx", "Llama-3-70B", gpus=16384).rows}
    assert rows["transceiver"].events_per_year == pytest.approx(189.6, abs=0.05)   # was 379.2
    network = sum(rows[c].events_per_year for c in ("transceiver", "nvswitch", "leaf", "spine"))
    assert network == pytest.approx((32768 * 6.6e-7 + 2816 * 3.33e-6) * YEAR / HOUR, rel=1e-9)
    assert network == pytest.approx(271.78, abs=0.01)   # was 461.36 single-port


def test_cost_and_failure_models_read_one_bill():
    # per cell, once the cluster fills a set (8 cells), the failure model counts what the
    # cost model charges a cell: 128 optics ends (64 twin-port modules, each priced as its
    # two ends), 1 leaf, half a spine, 64 cables
    bill = network_bill(build_fabric("h100-dgx"))
    charged = {(i.category, i.what.split(" ")[0]): i.count for i in bill.items}
    per_cell = {c: n / 8 for c, n in _counts("h100-dgx", "Llama-3-70B", 256).items()}
    assert 2 * per_cell["transceiver"] == charged[("optics", "pluggable-optics")] == 128
    assert per_cell["leaf"] == 1.0 == bill.fill * 8
    assert per_cell["spine"] == 0.5
    cables = sum(i.count for i in bill.items if i.category == "cable")
    assert cables == 64 == per_cell["transceiver"]


def test_a_shared_failure_touches_its_set(tmp_path):
    # Servers of 4 H100 (domain_size = gpus_per_server = 4), 8 servers a cell on 4 rail
    # leaves of 32 down ports: 4 cells fill a set. Llama-3.1-405B decode runs TP 8 across
    # two servers, so a rail leaf's loss slows instances. At 8 cells: 2 sets of 4 leaves,
    # each failure touching 4 cells; expected capacity lost (rate x radius) is the cells'
    # as evaluated on one cell, whatever the count.
    path = h100_x4_scenario(tmp_path)
    one = {r.cls: r for r in blast_radius(str(path), "Llama-3.1-405B").rows}
    br = blast_radius(str(path), "Llama-3.1-405B", gpus=256)
    eight = {r.cls: r for r in br.rows}
    assert br.cluster.cells_per_shared_part == 4
    assert one["leaf"].count == 4 and eight["leaf"].count == 8
    assert one["spine"].count == 2 and eight["spine"].count == 4
    # 32 GPU cables (64 ends) + 4 x 32 uplinks (256 ends) a cell, at port_fill 32 / 128
    # = 1/4 of them (64): 128 ends (was 320); 8 cells: 8 x 64 + 2 x 256, each set whole;
    # in twin-port modules (two ends a module, P40; every node's count even): 64 and 512
    assert one["transceiver"].count == 64 and eight["transceiver"].count == 512
    leaf = one["leaf"].tokens_lost_pct_mean
    assert leaf > 0
    # one leaf failure: the cell's loss in each of 4 cells, of the 8 cells' tokens/s
    assert eight["leaf"].tokens_lost_pct_mean == pytest.approx(leaf * 4 / 8, rel=1e-12)
    assert eight["leaf"].tokens_lost_pct_max == pytest.approx(
        one["leaf"].tokens_lost_pct_max * 4 / 8, rel=1e-12)
    for cls in ("leaf", "spine", "transceiver", "nic", "gpu-die", "host"):
        # rate x radius: 8 copies of the cell, each losing its share
        assert eight[cls].events_per_year * eight[cls].tokens_lost_pct_mean == pytest.approx(
            8 * one[cls].events_per_year * one[cls].tokens_lost_pct_mean / 8, rel=1e-9)
