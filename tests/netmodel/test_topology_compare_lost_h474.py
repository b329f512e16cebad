"""topology compare's expected GPU time lost to failures and network capex per GPU up,
hand-derived for two 16-GPU fabrics from the failure catalog's rates and repair times (data)
and the parts each fabric is built of."""

from dataclasses import fields

import pytest

from netmodel.study.reliability_catalog import catalog
from netmodel.study.topology_compare import TopologyRow, compare_topologies

DAY, HOURS4 = 86_400.0, 14_400.0


@pytest.fixture(scope="module")
def result():
    return compare_topologies(["rail-optimized:domains=2", "fat-tree:k=4"])


def _rate(cls):
    return catalog().rates("H100-SXM")[cls]


def test_repair_times_as_derived():
    # the derivation below uses these repair times: a part swapped in a day, optics in 4 h
    cat = catalog()
    assert [cat.repair_s(c) for c in ("gpu-die", "host", "nvswitch", "nic", "leaf")] == [DAY] * 5
    assert cat.repair_s("transceiver") == HOURS4


def test_rail_optimized_by_hand(result):
    # 2 servers of 8 H100: a die or package takes its GPU (16 parts x 1 GPU), a host or its
    # NVSwitch baseboard its 8 GPUs (2 parts x 8); 8 rails of leaves under 4 spines give
    # every GPU 8 NIC links, so no NIC, optic, leaf or spine cuts a GPU off; racks: rate 0.
    # Per GPU: (die + package + host + nvswitch) x a day.
    row = result.rows[0]
    want = DAY * (_rate("gpu-die") + _rate("gpu-package") + _rate("host") + _rate("nvswitch"))
    assert _rate("rack") == 0.0
    assert row.gpu_time_lost == pytest.approx(want, rel=1e-12)
    assert row.gpu_time_lost == pytest.approx(86_400 * 9.230556e-9, rel=1e-6)   # 7.975e-4


def test_fat_tree_by_hand(result):
    # k=4: 16 GPUs, 2 per edge switch (8 edges), one NIC link each. Per GPU: die + package;
    # 2 hosts x 8 GPUs; each GPU's NIC (16 x 1); an edge switch takes its 2 GPUs (8 x 2);
    # 48 links x 2 optics = 96, of which the 32 on GPU links cut 1 GPU (mean 1/3), so 2 a
    # GPU, each out 4 h; aggregation and core switches cut nothing.
    row = result.rows[1]
    want = (DAY * (_rate("gpu-die") + _rate("gpu-package") + _rate("host") + _rate("nic")
                   + _rate("leaf")) + 2 * _rate("transceiver") * HOURS4)
    assert row.gpu_time_lost == pytest.approx(want, rel=1e-12)
    assert row.gpu_time_lost == pytest.approx(8.1072e-4, rel=1e-4)


def test_capex_per_gpu_up(result):
    # the network's price over the GPUs up on average: capex / (GPUs x (1 - share lost))
    for row in result.rows:
        assert row.network_capex_per_gpu_up == pytest.approx(
            row.network_capex / (row.gpus * (1 - row.gpu_time_lost)), rel=1e-12)
        assert row.network_capex_per_gpu < row.network_capex_per_gpu_up


def test_columns_and_table(result):
    names = {f.name for f in fields(TopologyRow)}
    assert {"gpu_time_lost", "network_capex_per_gpu_up"} <= names
    assert set(result.rows[0].to_dict()) == names
    lines = {ln.split("  ")[0]: ln.split()[-2:] for ln in result.table().splitlines() if ln}
    assert lines["expected GPU time lost to failures (%)"] == ["0.07975", "0.08107"]


def test_ring_by_hand():
    # ring:n=4 has no server labels: one host of 4 H100 (the catalog puts 8 in one), so a
    # host failure takes all 4; a GPU out of a ring leaves the others joined; a copper end
    # cuts nothing. Per GPU: (die + package + host) x a day, 86,400 x 8.3056e-9.
    row = compare_topologies(["ring:n=4", "ring:n=8"], group=2).rows[0]
    want = DAY * (_rate("gpu-die") + _rate("gpu-package") + _rate("host"))
    assert row.gpu_time_lost == pytest.approx(want, rel=1e-12)
    assert row.gpu_time_lost == pytest.approx(7.176e-4, rel=1e-4)


def test_mixed_gpu_types_say_whose_rates(tmp_path):
    # a saved fabric of two GPU types is charged the first GPU's rates, and says so
    import json

    from topologies import build
    from topologies.io import write_graph

    path = tmp_path / "r4.json"
    write_graph(build("ring:n=4"), path)
    data = json.loads(path.read_text())
    data["nodes"][0]["gpu"] = "H200-SXM"
    path.write_text(json.dumps(data))
    rows = compare_topologies([str(path), "ring:n=4"], group=2).rows
    assert "GPU time lost: every GPU at the failure rates of H200-SXM" in rows[0].notes
    assert not any("GPU time lost" in n for n in rows[1].notes)
    h200, h100 = catalog().rates("H200-SXM"), catalog().rates("H100-SXM")
    assert rows[0].gpu_time_lost - rows[1].gpu_time_lost == pytest.approx(
        DAY * (h200["gpu-die"] - h100["gpu-die"] + h200["gpu-package"]
               - h100["gpu-package"]), rel=1e-9)


def test_figure_panel_in_percent(result):
    # the figure's panel reads as the table's row: per cent, four significant digits
    from netmodel.study.topology_compare_plots import _panels

    panels = {title: (stacks, texts) for title, stacks, texts in _panels(result)}
    stacks, texts = panels["expected GPU time lost to failures (%)"]
    assert texts == ["0.07975", "0.08107"]
    assert stacks[0] == pytest.approx([100 * r.gpu_time_lost for r in result.rows])
