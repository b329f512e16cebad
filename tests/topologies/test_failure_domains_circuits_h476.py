"""A realized OCS fabric (circuits set) fails by the same physical parts as its bare
cabling: the GPU-OCS fibres its circuits ride on are in ``ocs_cabling``, not its edges, and
each fibre's GPU end (a co-packaged engine, or a transceiver and its NIC) failing takes the
one circuit on it. On the old code a realized fabric had no cable-end part at all."""

from __future__ import annotations

import pytest

from topologies.degrade import degrade
from topologies.failure_domains import class_counts, components
from topologies.hardware_radius import hardware_radius
from topologies.optical import ocs, realize
from topologies.specs import build

CELL = "ocs:gpus=16,ports=4,gpu=Lite"


def _counts(graph):
    return {c: v for c, v in class_counts(components(graph)).items() if v}


@pytest.mark.parametrize("medium, ends", [
    ("co-packaged-optics", {"cpo-engine": 64.0}),
    # a pluggable module at the GPU end sits in a NIC's cage, one NIC port a fibre
    ("pluggable-optics", {"transceiver": 64.0, "nic": 64.0}),
])
def test_circuits_set_fail_by_the_cabling_parts(medium, ends):
    # 16 GPUs x 4 ports: 64 fibres, one GPU-end part each, none at the (passive) OCS end;
    # 16 GPU dies and packages, 4 OCS
    want = {"gpu-die": 16.0, "gpu-package": 16.0, **ends, "ocs": 4.0}
    bare = build(f"{CELL},medium={medium}")
    for logical in ("torus:4x4", "ring"):
        realized = build(f"{CELL},medium={medium},logical={logical}")
        assert _counts(bare) == want
        assert _counts(realized) == want
        for cls in ends:   # the same fibres, named as the cabling's edges
            assert [c.name for c in components(realized)[cls]] == \
                [c.name for c in components(bare)[cls]]


def test_a_failed_gpu_end_takes_the_circuit_on_its_fibre():
    g = build(f"{CELL},logical=torus:4x4")   # 32 circuits, every port of every GPU used
    assert g.graph["circuits"] == 32
    by_name = {c.name: c for c in components(g)["cpo-engine"]}
    for partner, d in g.adj["gpu0"].items():
        (plane,) = d["via"].split(",")
        out = degrade(g, [by_name[f"gpu0-{plane}"]])
        assert not out.has_edge("gpu0", partner)   # that circuit, and only it, is gone
        assert out.graph["circuits"] == 31
        assert out.number_of_edges() == 31
        assert out.degree("gpu0") == 3


def test_a_failed_fibre_of_parallel_circuits_takes_its_one():
    # torus 2x2 over 4 GPUs: each neighbour pair twice (the side of 2 wraps), 2 circuits
    # on 2 OCS per pair, 8 in all
    g = build("ocs:gpus=4,ports=4,logical=torus:2x2")
    assert g.graph["circuits"] == 8
    d = g.edges["gpu0", "gpu1"]
    assert d["links"] == 2
    plane = d["via"].split(",")[0]
    fibre = next(c for c in components(g)["cpo-engine"] if c.name == f"gpu1-{plane}")
    out = degrade(g, [fibre])
    left = out.edges["gpu0", "gpu1"]
    assert left.get("links", 1) == 1
    assert left["bandwidth"] == d["bandwidth"] / 2
    assert left["via"] == d["via"].split(",")[1]
    assert out.graph["circuits"] == 7


def test_unused_fibres_fail_and_cut_nothing():
    # a ring over 16 GPUs of 4 ports uses 2 ports a GPU: 32 of the 64 fibres carry nothing
    comps = components(build(f"{CELL},logical=ring"))["cpo-engine"]
    assert sum(1 for c in comps if not c.edges and not c.scaled) == 32
    assert sum(1 for c in comps if c.edges) == 32


def test_fibres_whose_ends_are_not_known_are_counted():
    g = build(f"{CELL},logical=ring")
    # a fabric file's counts alone (written before realize recorded each fibre, h508)
    g.graph["ocs_cabling"] = {**{k: v for k, v in g.graph["ocs_cabling"].items()
                                 if k != "fibres"}, "cables": 40, "lanes": 120}
    comps = components(g)["cpo-engine"]
    # the 32 fibres the 16 circuits ride, and 8 more of unknown ends as one component
    assert sum(c.parts for c in comps) == 40
    assert len(comps) == 33
    assert not comps[-1].edges and comps[-1].parts == 8


def test_radius_of_a_fibre_on_a_path_of_circuits():
    # 4 GPUs x 2 ports, circuits 0-1, 1-2, 2-3: 8 fibres (every GPU to every OCS), 6 under
    # circuits. A fibre of an end circuit cuts its end GPU off (1), of the middle one a
    # pair from the other (2 of 4: the largest part is the first pair), an unused one
    # nothing: mean (4 x 1 + 2 x 2) / 8 = 1.0, worst 2
    g = realize(ocs(gpus=4, ports=2, ocs_ports=4), "0-1;1-2;2-3")
    r = {b.cls: b for b in hardware_radius(g)}["cpo-engine"]
    assert (r.components, r.parts, r.gpus_mean, r.gpus_max) == (8, 8.0, 1.0, 2)
