"""Pictures: layouts, the representative part of big fabrics, files written atomically."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build, fat_tree, lite_groups, ocs, ring, superpod, torus
from topologies.draw import SAMPLE_GPUS, SAMPLE_SWITCHES, layout, plot, representative


def test_tiers_are_stacked_and_gpus_in_order():
    pos, how = layout(superpod(1))
    assert how == "tiers"
    assert pos["gpu0"][1] == 0 < pos["nvs0"][1] < pos["leaf0"][1] < pos["spine0"][1]
    xs = [pos[f"gpu{i}"][0] for i in range(248)]
    assert xs == sorted(xs)
    # a scale-up switch sits above the middle of its 8 GPUs
    assert pos["nvs1"][0] == pytest.approx(sum(xs[8:16]) / 8)
    assert xs[8] - xs[7] > xs[1] - xs[0]  # a gap between domains


def test_other_layouts():
    pos, how = layout(ring(6))
    assert how == "circle" and all(abs(x * x + y * y - 1) < 1e-9 for x, y in pos.values())
    pos, how = layout(torus("3x4"))
    assert how == "grid" and pos["gpu5"] == (1.0, -1.0)  # row 1, column 1
    pos, how = layout(ocs(gpus=4, ports=2))
    assert how == "two rows" and {pos["ocs0"][1], pos["gpu3"][1]} == {1.0, 0.0}


def test_lite_groups_drawn_as_small_rings():
    g = lite_groups("fat-tree:k=4", lites=4)
    pos, _ = layout(g)
    members = [pos[f"gpu{i}"] for i in range(4)]
    cx = sum(x for x, _ in members) / 4
    assert len({round(y, 9) for _, y in members}) > 1  # not a flat row: the mesh shows
    other = [pos[f"gpu{i}"][0] for i in range(4, 8)]
    assert max(x for x, _ in members) < min(other) and cx < min(other)


def test_big_fabric_is_drawn_as_a_representative_part():
    g = fat_tree(32)  # 8192 GPUs
    part, note = representative(g)
    kinds = [d.get("tier", -1) for _, d in part.nodes(data=True)]
    assert kinds.count(-1) == SAMPLE_GPUS
    assert all(kinds.count(t) <= SAMPLE_SWITCHES for t in (1, 2, 3))
    assert kinds.count(3) > 0  # the cores above are shown
    assert "64 of 8,192 GPUs" in note and "of 256 cores (tier 3)" in note
    small, note = representative(fat_tree(4))
    assert small.number_of_nodes() == 36 and note == ""


def test_plot_writes_png(tmp_path):
    for spec in ("superpod:sus=4", "ocs:gpus=8,ports=2,logical=ring", "torus:dims=3x3x3"):
        out = plot(build(spec), tmp_path / "f.png")
        assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert out == str(tmp_path / "f.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png"]  # no temporary left
    with pytest.raises(UserError, match=r"figure '.*f.gif' must end in one of: .png, .svg, .pdf"):
        plot(ring(4), tmp_path / "f.gif")
    with pytest.raises(UserError, match="folder '.*missing' does not exist"):
        plot(ring(4), tmp_path / "missing" / "f.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png"]


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".pdf", b"%PDF"),
                                           (".PNG", b"\x89PNG")])
def test_the_suffix_decides_the_format(tmp_path, suffix, magic):
    out = plot(ring(4), tmp_path / f"f{suffix}")
    assert open(out, "rb").read()[:len(magic)] == magic
