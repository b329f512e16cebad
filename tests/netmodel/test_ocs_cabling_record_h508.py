"""A realized OCS fabric keeps its cabling's own per-fibre facts (rate, lanes, length, ends)
in ``ocs_cabling["fibres"]``, and the bill, the inventory and the failure model read them
instead of inferring them from the circuits set (h508).

Before, the realized graph kept only ``{"medium", "cables", "lanes"}``: a fibre's rate was
read back as the circuits' rate a lane (the slower end's) and its length as the mean of the
set circuits' fibres, so the bill depended on which circuits were set.

Hand-derived on 4 H100 x 2 pluggable ports (225 GB/s = 1,800 Gb/s each, 8 fibres of 10 m;
network_costs.toml: pluggable optics 1.5625 USD per Gb/s an end, a pluggable-optics cable
50 + 1 USD/m, so 60 USD at 10 m and 80 USD at 30 m). A fibre's GPU end is one module of
its rate, 1,800 or 3,600 Gb/s, which no module class is: priced per bit of the nearest,
800G ($1,250 / 800 Gb/s = 1.5625 USD per Gb/s), and the bill says so in its notes.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from netmodel.study.network_bill import INFERRED_CABLING, network_bill
from netmodel.study.optic_classes import estimate_note
from topologies import build
from topologies.common import cable_latency
from topologies.failure_domains import CLASSES, _circuit_fibres
from topologies.io import read_graph, write_graph
from topologies.nics import nic_ports, ocs_fibre_rows, ocs_fibres
from topologies.optical import realize
from topologies.schema import validate

CABLING = "ocs:gpus=4,ports=2,ocs_ports=4,medium=pluggable-optics"
PORT = 225e9
#: the notes of _fast_gpu0's modules (gpu0's 3,600 Gb/s, the others' 1,800), per bit of 800G
ESTIMATED = tuple(estimate_note("pluggable-optics", r, "800G") for r in (3600e9, 1800e9))


def _cable(graph) -> float:
    return network_bill(graph, share="as-built").by_category()["cable"]["capex"]


def _optics(graph) -> float:
    return network_bill(graph, share="as-built").by_category()["optics"]["capex"]


def _long_gpu0():
    # gpu0's two fibres 30 m, the other six 10 m: 2 x 80 + 6 x 60 = 520 USD of cable
    g = build(CABLING)
    for o in ("ocs0", "ocs1"):
        g.edges["gpu0", o].update(latency=cable_latency(30, "pluggable-optics"), length=30.0)
    return g


def _fast_gpu0():
    # gpu0's two ports at twice the rate on as many lanes: optics
    # (6 x 1,800 + 2 x 3,600) Gb/s x 1.5625 USD = 28,125 USD
    g = build(CABLING)
    for o in ("ocs0", "ocs1"):
        g.edges["gpu0", o]["bandwidth"] *= 2
    return g


def test_unequal_fibre_lengths_are_priced_as_cabled_whichever_circuits_are_set():
    g = _long_gpu0()
    assert _cable(g) == pytest.approx(520)
    # before: the ring 520 (mean 15 m), gpu0-gpu1 alone 560 (mean 20 m), gpu2-gpu3 480
    for circuits in ("ring", [("gpu0", "gpu1")], [("gpu2", "gpu3")],
                     [("gpu0", "gpu1"), ("gpu0", "gpu1")]):
        r = realize(g, circuits)
        assert _cable(r) == pytest.approx(520), circuits
        items = {i.what: i.count for i in network_bill(r, share="as-built").items
                 if i.category == "cable"}
        assert items == {"pluggable-optics cable 10 m": 6.0, "pluggable-optics cable 30 m": 2.0}


def test_unequal_port_rates_are_priced_as_cabled():
    g = _fast_gpu0()
    assert _optics(g) == pytest.approx(28_125)
    for circuits in ("ring", [("gpu2", "gpu3")]):
        r = realize(g, circuits)
        assert _optics(r) == pytest.approx(28_125), circuits
        assert network_bill(r, share="as-built").notes == ESTIMATED   # no inference
    # the NIC ports: gpu0's two at 450 GB/s, the six others at 225 GB/s, one cable each
    ports = nic_ports(realize(g, [("gpu2", "gpu3")]))
    assert sorted((p[0], p[1]) for p in ports) == sorted(
        [("gpu0", 2 * PORT)] * 2 + [(f"gpu{i}", PORT) for i in (1, 2, 3) for _ in range(2)])


def test_the_record_is_the_cablings_own_and_shared():
    g = _fast_gpu0()
    a, b = realize(g, "ring"), realize(g, [("gpu0", "gpu1")])
    rows = ocs_fibre_rows(a)
    assert rows == ocs_fibre_rows(b)
    assert [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows[:2]] == [
        ("gpu0", "ocs0", 1, 2 * PORT, 18, 10.0), ("gpu0", "ocs1", 1, 2 * PORT, 18, 10.0)]
    # one object per realized graph: its columns are tuples, not copied per edge
    assert all(isinstance(c, tuple) for c in a.graph["ocs_cabling"]["fibres"].values())
    assert ocs_fibres(b) == ([(r[0], r[1]) for r in rows], 0)


def test_the_failure_model_reads_the_recorded_fibres():
    r = realize(build(CABLING), [("gpu0", "gpu1")])
    out = {c: [] for c in CLASSES}
    _circuit_fibres(r, CLASSES, out)
    names = [c.name for c in out["nic"]]
    assert names == [f"gpu{g}-ocs{o}" for g in range(4) for o in range(2)]


@pytest.mark.parametrize("ext", ["json", "graphml"])
def test_the_record_round_trips_through_fabric_files(tmp_path, ext):
    r = realize(_fast_gpu0(), "ring")
    path = tmp_path / f"ring.{ext}"
    write_graph(r, path)
    back = read_graph(path)
    got, want = back.graph["ocs_cabling"], r.graph["ocs_cabling"]
    assert {k: v for k, v in got.items() if k != "fibres"} == {
        k: v for k, v in want.items() if k != "fibres"}
    assert {k: list(v) for k, v in got["fibres"].items()} == {
        k: list(v) for k, v in want["fibres"].items()}
    assert _optics(back) == pytest.approx(28_125)
    assert network_bill(back, share="as-built").notes == ESTIMATED


def test_an_old_fabric_file_without_the_record_is_inferred_and_says_so(tmp_path):
    # a file written before the record: ocs_cabling {"medium", "cables", "lanes"} only
    r = realize(_fast_gpu0(), "ring")
    path = tmp_path / "old.json"
    write_graph(r, path)
    doc = json.loads(path.read_text())
    text = json.dumps(doc)
    assert '"fibres"' in text
    doc["graph"]["ocs_cabling"].pop("fibres")
    path.write_text(json.dumps(doc))
    old = read_graph(path)
    assert "fibres" not in old.graph["ocs_cabling"]
    bill = network_bill(old, share="as-built")
    # every circuit at the slower end's 225 GB/s: 8 x 1,800 Gb/s x 1.5625 = 22,500 USD
    assert bill.by_category()["optics"]["capex"] == pytest.approx(22_500)
    assert bill.notes == (INFERRED_CABLING, ESTIMATED[1])
    assert bill.to_dict()["notes"] == [INFERRED_CABLING, ESTIMATED[1]]


@pytest.mark.parametrize(("change", "words"), [
    (lambda f: f.update(bandwidth=(0.0,) + f["bandwidth"][1:]), "fibre bandwidth must be > 0"),
    (lambda f: f.update(lanes=(0,) + f["lanes"][1:]), "fibre lanes must be whole >= 1"),
    (lambda f: f.update(length=(-1.0,) + f["length"][1:]), "fibre length must be >= 0"),
    (lambda f: f.update(gpu=("ocs0",) + f["gpu"][1:]), "fibre 'ocs0'-'ocs0'; a fibre joins"),
    (lambda f: f.update(ocs=("ocs9",) + f["ocs"][1:]), "fibre 'gpu0'-'ocs9'; a fibre joins"),
    (lambda f: f.update(ocs=(["x"],) + f["ocs"][1:]), "a fibre joins a GPU"),
    (lambda f: f.update(lanes=(19,) + f["lanes"][1:]), "but its fibres 8 and 145"),
    (lambda f: f.pop("length"), "columns of one length"),
])
def test_a_wrong_record_is_refused_in_one_line(change, words):
    r = realize(build(CABLING), "ring")
    fibres = dict(r.graph["ocs_cabling"]["fibres"])
    change(fibres)
    r.graph["ocs_cabling"] = {**r.graph["ocs_cabling"], "fibres": fibres}
    with pytest.raises(UserError, match=words):
        validate(r)
