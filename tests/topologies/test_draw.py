"""Pictures: layouts, the representative part of big fabrics, files written atomically."""

from __future__ import annotations

import functools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from topologies import build, fat_tree, lite_groups, ocs, realize, ring, superpod, torus
from topologies.draw import (
    circuit_groups,
    figure,
    layout,
    plot,
    representative,
)
from topologies.draw_layout import SAMPLE_GPUS, SAMPLE_SWITCHES


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


# --- pictures that tell the truth (issue 15) --------------------------------------------
# An independent check of what is drawn, from the figure's own artists and renderer: every
# text's extent, every symbol's extent (its marker path times its size) and every line
# (straight links, arcs, circuits) sampled in display pixels.


def _ring_pairs(members, copies):
    """Ring neighbours of ``members``, each pair ``copies`` times (what the study's
    ``lite-ocs`` scenario costs: ports/2 parallel circuits per neighbour)."""
    n = len(members)
    return [(members[i], members[(i + 1) % n]) for i in range(n)] * copies


def _lines(ax):
    import numpy as np
    from matplotlib.collections import LineCollection
    from matplotlib.patches import FancyArrowPatch

    out = []
    for line in ax.lines:
        if line.get_gid() != "shade":
            out.append(line.get_transform().transform(line.get_xydata()))
    for coll in ax.collections:
        if isinstance(coll, LineCollection):
            out += [coll.get_transform().transform(s) for s in coll.get_segments()]
    for patch in ax.patches:
        if isinstance(patch, FancyArrowPatch):
            path = patch.get_transform().transform_path(patch.get_path())
            out += path.to_polygons(closed_only=False)
    # sample every segment densely so that a line crossing a box is seen inside it
    return [np.vstack([np.linspace(p[k], p[k + 1], 16) for k in range(len(p) - 1)])
            for p in out if len(p) > 1]


def _symbols(ax):
    """(x, y, half-size) in pixels of every node symbol."""
    out = []
    for coll in ax.collections:
        if coll.get_gid() == "nodes":
            ext = coll.get_paths()[0].get_extents()
            half = max(abs(ext.x0), ext.x1, abs(ext.y0), ext.y1)
            half *= coll.get_sizes()[0] ** 0.5 * ax.figure.dpi / 72
            xy = coll.get_offset_transform().transform(coll.get_offsets())
            out += [(x, y, half) for x, y in xy]
    return out


def _texts(fig):
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    out = [(t.get_gid() or "text", t.get_text(),
            (t.get_bbox_patch() or t).get_window_extent(renderer))
           for t in ax.texts if t.get_text()]
    out.append(("title", ax.title.get_text(), ax.title.get_window_extent(renderer)))
    legend = ax.get_legend()
    out += [("legend", t.get_text(), t.get_window_extent(renderer)) for t in legend.get_texts()]
    out += [("legend", "", h.get_window_extent(renderer)) for h in legend.legend_handles]
    return out


def _overlap(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _collisions(fig):
    """Every text that overlaps another (a legend's own entries aside), every label on a
    symbol, every label a line runs through."""
    fig.canvas.draw()  # as saved: aspect applied, every artist laid out
    ax = fig.axes[0]
    texts = _texts(fig)
    bad = [(a[1], b[1]) for i, a in enumerate(texts) for b in texts[i + 1:]
           if not (a[0] == b[0] == "legend") and _overlap(a[2], b[2])]
    symbols, lines = _symbols(ax), _lines(ax)
    for kind, text, box in texts:
        if kind != "label":
            continue
        for x, y, half in symbols:
            if box.x0 < x + half and x - half < box.x1 and box.y0 < y + half and y - half < box.y1:
                bad.append((text, "symbol"))
        for pts in lines:
            if ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                    & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)).any():
                bad.append((text, "line"))
                break
    return bad


def _lite_ocs_circuits(gpus=32, size=8, ports=4):
    """The circuits the lite-ocs scenario costs for instances of ``size`` GPUs: a ring per
    instance, ports/2 parallel circuits between neighbours (scenario_fabric.instance_graph)."""
    base = ocs(gpus=gpus, ports=ports, gpu="Lite")
    pairs = [p for k in range(0, gpus, size)
             for p in _ring_pairs([f"gpu{i}" for i in range(k, k + size)], ports // 2)]
    return realize(base, pairs)


@functools.cache
def _lite_ocs_picture():
    """``(_lite_ocs_circuits(), its figure)``, drawn once for the tests that read its
    artists (and change nothing)."""
    g = _lite_ocs_circuits()
    return g, figure(g)


PICTURES = ["single-switch", "leaf-spine", "fat-tree:k=4", "rail-optimized:domains=4",
            "nvl72", "ring:n=8", "full-mesh:n=8", "torus:dims=4x4", "torus:dims=3x3x3",
            "lite-groups", "ocs:gpus=16,ports=4", "ocs:gpus=128,ports=4,gpu=Lite",
            "ocs:gpus=8,ports=4,logical=ring", "flat:n=128,radix=144"]


@pytest.mark.parametrize("spec", PICTURES)
def test_no_label_collides_with_a_line_a_symbol_or_a_text(spec):
    fig = figure(build(spec))
    assert _collisions(fig) == []
    labels = [t for t in fig.axes[0].texts if t.get_gid() == "label"]
    assert labels  # something is labelled on every shipped builder's picture


def test_realized_circuits_have_no_collisions_and_the_big_part_neither():
    assert _collisions(figure(_lite_ocs_circuits(gpus=64, size=32))) == []
    assert _collisions(figure(fat_tree(32))) == []  # 8,192 GPUs: the representative part


def test_every_circuit_is_its_own_curve_in_its_ocs_colour():
    g, fig = _lite_ocs_picture()  # 4 rings of 8, 2 parallel circuits per neighbour pair
    assert g.graph["circuits"] == 4 * 8 * 2 and g.number_of_edges() == 4 * 8
    ax = fig.axes[0]
    curves = [p for p in ax.patches if p.get_gid() == "circuit"]
    assert len(curves) == g.graph["circuits"] == 64
    # the two curves of each pair: different colours (one per OCS) and apart in the middle
    mids: dict = {}
    for p in curves:
        pts = p.get_transform().transform_path(p.get_path()).to_polygons(closed_only=False)[0]
        mids.setdefault(tuple(p.get_facecolor()), []).append(pts[len(pts) // 2])
    assert len(mids) == 4  # four OCS, four colours
    assert sorted(len(v) for v in mids.values()) == [16, 16, 16, 16]  # 64 / 4 each


def test_parallel_circuits_are_side_by_side_not_on_top_of_each_other():
    import numpy as np

    ax = _lite_ocs_picture()[1].axes[0]
    by_ends: dict = {}
    for p in ax.patches:
        if p.get_gid() == "circuit":
            pts = p.get_transform().transform_path(p.get_path()).to_polygons(closed_only=False)[0]
            key = tuple(sorted((tuple(np.round(pts[0])), tuple(np.round(pts[-1])))))
            by_ends.setdefault(key, []).append(pts[len(pts) // 2])
    assert len(by_ends) == 32 and all(len(m) == 2 for m in by_ends.values())
    px = ax.figure.dpi / 72
    gaps = [np.linalg.norm(a - b) / px for a, b in by_ends.values()]
    assert min(gaps) > 3.0  # points between the two curves at their middle


def test_circuits_between_neighbours_show_beside_the_gpu_symbols():
    """At least 40% of every circuit, and 2 points of it, lie outside both end symbols,
    also on a ring of 128 GPUs, where neighbours are closer than a default GPU symbol."""
    import numpy as np

    for fig in (_lite_ocs_picture()[1], figure(_lite_ocs_circuits(gpus=128, size=128))):
        ax = fig.axes[0]
        half = _symbols(ax)[-1][2]  # GPUs are drawn last
        px = ax.figure.dpi / 72
        for p in ax.patches:
            if p.get_gid() != "circuit":
                continue
            pts = p.get_transform().transform_path(p.get_path()).to_polygons(closed_only=False)[0]
            pts = np.vstack([np.linspace(pts[k], pts[k + 1], 8) for k in range(len(pts) - 1)])
            steps = np.linalg.norm(np.diff(pts, axis=0), axis=1)
            outside = ((np.linalg.norm(pts - pts[0], axis=1) > half)
                       & (np.linalg.norm(pts - pts[-1], axis=1) > half))[1:]
            assert steps[outside].sum() >= max(0.4 * steps.sum(), 2 * px)


def test_ocs_labels_sit_beside_their_symbols_and_count_their_circuits():
    g = _lite_ocs_circuits(gpus=16)  # every GPU uses each of its 4 ports once
    ax = figure(g).axes[0]
    renderer = ax.figure.canvas.get_renderer()
    ax.figure.canvas.draw()
    ocs_xy = {n: xy for n, xy in zip(
        sorted(n for n in g if n.startswith("ocs")),
        ax.collections[0].get_offset_transform().transform(ax.collections[0].get_offsets()),
        strict=True)}
    half = _symbols(ax)[0][2]
    px = ax.figure.dpi / 72
    labels = {t.get_text().split(":")[0]: t for t in ax.texts if t.get_text().startswith("ocs")}
    assert sorted(labels) == ["ocs0", "ocs1", "ocs2", "ocs3"]
    for name, t in labels.items():
        assert t.get_text() == f"{name}: 8 circuits"  # 16 GPUs x 1 port / 2 ends
        box, (x, y) = t.get_window_extent(renderer), ocs_xy[name]
        # beside: not on the symbol, and its nearest edge within a few points of it
        assert not (box.x0 < x + half and x - half < box.x1
                    and box.y0 < y + half and y - half < box.y1)
        nearest = max(box.x0 - x, x - box.x1, box.y0 - y, y - box.y1)
        assert half < nearest <= half + 4 * px


def test_the_note_says_how_many_ports_the_circuits_use():
    note = [t.get_text() for t in figure(build("ocs:gpus=8,ports=4,logical=ring")).axes[0].texts
            if t.get_gid() == "note"]
    assert note and "circuits per GPU: 2 of its 4 ports" in note[0]  # a ring: 2 of 4
    note = [t.get_text() for t in _lite_ocs_picture()[1].axes[0].texts
            if t.get_gid() == "note"][0]
    assert "4 groups of 8 GPUs" in note and "32 GPU pairs joined by 2 circuits each" in note
    assert "circuits per GPU: 4 of its 4 ports" in note  # what lite-ocs costs


def test_gpu_labels_are_thinned_to_a_regular_stride():
    ax = figure(build("ocs:gpus=128,ports=4,gpu=Lite")).axes[0]
    names = [t.get_text() for t in ax.texts if t.get_gid() == "label"
             and t.get_text().startswith("gpu")]
    numbers = [int(n[3:]) for n in names]
    stride = numbers[1] - numbers[0]
    assert numbers[0] == 0 and stride in (2, 4, 8, 16) and len(numbers) >= 8
    assert numbers == list(range(0, 128, stride))


def test_circuit_groups_follow_the_ring_and_sit_on_circles():
    import math

    g = realize(ocs(gpus=5, ports=2), "0-2;2-1;1-3;3-0")  # a ring out of index order
    groups, alone = circuit_groups(g)
    assert groups == [["gpu0", "gpu2", "gpu1", "gpu3"]] and alone == ["gpu4"]
    pos, how = layout(g)
    assert how == "circuits"
    ring = groups[0]
    sides = [math.dist(pos[ring[i]], pos[ring[(i + 1) % 4]]) for i in range(4)]
    assert max(sides) - min(sides) < 1e-9  # ring neighbours next to each other
    assert pos["gpu4"][1] < min(pos[m][1] for m in ring)  # the GPU without circuits below


@settings(max_examples=8, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)).filter(lambda p: p[0] != p[1]),
                min_size=1, max_size=12))
def test_circuits_drawn_equal_circuits_in_the_graph(pairs):
    """Any set of circuits that can be set up on 8 GPUs x 4 ports: one curve each."""
    try:
        g = realize(ocs(gpus=8, ports=4), [list(p) for p in pairs])
    except UserError:
        assume(False)
    ax = figure(g).axes[0]
    assert sum(p.get_gid() == "circuit" for p in ax.patches) == g.graph["circuits"] == len(pairs)


def test_legend_counts_cables_as_the_bill_of_materials_does():
    # SuperPOD, 1 SU: 248 GPUs x 18 NVLinks = 4,464 baseboard traces drawn as 248 lines
    # (not cables: each DGX's GPUs and NVSwitch chips are on one board; was "copper (4,464
    # cables as 248 lines)"); 248 NIC cables + 8 leaves x 32 uplinks = 504 optical cables as
    # 248 + 32 lines. The old legend said "copper (248 links)" and "pluggable-optics (280 links)"
    texts = [t.get_text() for t in figure(superpod(1)).axes[0].get_legend().get_texts()]
    assert "board (4,464 traces as 248 lines)" in texts
    assert "pluggable-optics (504 cables as 280 lines)" in texts
    # a ring: one cable per line
    texts = [t.get_text() for t in figure(ring(6)).axes[0].get_legend().get_texts()]
    assert "copper (6 cables)" in texts
