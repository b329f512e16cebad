"""An audit of every builder's picture: what the drawing claims (legend widths and colours,
group bands, the representative part's note) measured from the figure's own artists with the
Agg renderer, against the graph."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest

from topologies import build, fat_tree
from topologies.draw import figure, representative
from topologies.registry import builders

# every builder at its defaults, and the realistic sizes a design review asks for
DEFAULTS = [b.name for b in builders()]
SIZES = ["flat:n=64,planes=4", "leaf-spine:leaves=8,radix=16,oversubscription=2",
         "fat-tree:k=8", "rail-optimized:domains=4", "superpod:sus=1", "nvl72:racks=4",
         "torus:dims=4x4x4", "lite-groups:base=fat-tree", "full-mesh:n=8"]


@pytest.fixture(scope="module")
def pictures():
    """``(build(spec), figure(graph))`` of a spec, each drawn once for this module's tests
    (they read the figure's artists, or draw it and read where they fell, and change
    nothing); let go with the module. With ``drawn``, the figure rendered on its canvas
    (once, until :func:`plot` saves it: its tight bounding box leaves the canvas's
    renderer another size, so the next test that reads extents renders it again)."""
    made: dict = {}
    rendered: set = set()

    def get(spec, drawn=False):
        if spec not in made:
            graph = build(spec)
            made[spec] = (graph, figure(graph))
        if drawn and spec not in rendered:
            made[spec][1].canvas.draw()
            rendered.add(spec)
        elif drawn is None:   # saved by plot: render again when next read
            rendered.discard(spec)
        return made[spec]

    yield get
    made.clear()


def _drawn_widths(ax):
    """(width in points, colour) of every link line drawn (straight links and arcs)."""
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_hex
    from matplotlib.patches import FancyArrowPatch

    out = []
    for coll in ax.collections:
        if isinstance(coll, LineCollection) and coll.get_gid() == "link":
            lws = list(coll.get_linewidths())
            lws = lws * len(coll.get_segments()) if len(lws) == 1 else lws
            out += [(round(w, 6), to_hex(c)) for w, c in
                    zip(lws, coll.get_colors(), strict=True)]
    out += [(round(p.get_linewidth(), 6), to_hex(p.get_edgecolor()), p.get_linestyle())
            for p in ax.patches if isinstance(p, FancyArrowPatch)]
    return out


@pytest.mark.parametrize("spec", DEFAULTS + SIZES)
def test_the_legend_widths_are_the_drawn_widths(spec, pictures):
    """Before: every link of a fabric with one bandwidth was drawn 2.3 points wide while the
    legend showed a 0.6-point 'thinnest' line; now 'every link' at the drawn width."""
    ax = pictures(spec)[1].axes[0]
    drawn = {w[0] for w in _drawn_widths(ax) if len(w) == 2 or w[2] == "-"}
    legend = {h.get_label(): h.get_linewidth() for h in ax.get_legend().legend_handles}
    sizes = {k.split(":")[0]: v for k, v in legend.items()
             if k.startswith(("thinnest", "widest", "every"))}
    if len(drawn) == 1:
        assert list(sizes) in (["every link"], ["every circuit"])
        assert sizes.popitem()[1] == pytest.approx(drawn.pop())
    else:
        assert sizes == {"thinnest": pytest.approx(min(drawn)),
                         "widest": pytest.approx(max(drawn))}


@pytest.mark.parametrize("spec", ["torus", "torus:dims=4x4x4", "torus:dims=3x5"])
def test_the_wrap_around_legend_entry_looks_like_the_wrap_arcs(spec, pictures):
    """Before: grey dashes in the legend, pale orange dashes in the picture."""
    from matplotlib.colors import to_hex

    ax = pictures(spec)[1].axes[0]
    arcs = {w for w in _drawn_widths(ax) if len(w) == 3 and w[2] == "--"}
    assert len(arcs) == 1  # one bandwidth, one medium
    (width, colour, _), = arcs
    (handle,) = [h for h in ax.get_legend().legend_handles if h.get_label() == "wrap-around link"]
    assert to_hex(handle.get_color()) == colour and handle.get_linestyle() == "--"
    assert handle.get_linewidth() == pytest.approx(width)


@pytest.mark.parametrize("spec", ["superpod:sus=1", "nvl72:racks=4", "rail-optimized:domains=16",
                                  "superpod:sus=4"])
def test_group_bands_stay_apart_and_hug_their_gpus(spec, pictures):
    """Before: a band padded by 0.01 data units (several GPU slots on a long row), so the 31
    scale-up domains of a SuperPOD SU were one continuous band; now each band ends half way
    to the next group and is a GPU symbol plus a few points high."""
    fig = pictures(spec, drawn=True)[1]
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    bands = sorted((p.get_window_extent(renderer) for p in ax.patches if p.get_gid() == "shade"),
                   key=lambda b: b.x0)
    groups = {d["group"] for _, d in representative(build(spec))[0].nodes(data=True)
              if "group" in d}
    assert len(bands) == len(groups) > 1
    assert all(a.x1 < b.x0 for a, b in zip(bands, bands[1:], strict=False))
    gpu = next(c for c in ax.collections if c.get_gid() == "nodes"
               and len(c.get_offsets()) == max(len(k.get_offsets()) for k in ax.collections
                                                if k.get_gid() == "nodes"))
    diameter = math.sqrt(gpu.get_sizes()[0]) * fig.dpi / 72
    for b in bands:
        assert diameter < b.height <= diameter + 6 * fig.dpi / 72 + 1


BIG = ["fat-tree:k=64,pods=16", "superpod:sus=4", "fat-tree:k=16", "rail-optimized:domains=128",
       "lite-groups:base=fat-tree:k=16", "nvl72:racks=8"]


def _tier_name(d):
    return d.get("tier", -1) if d["kind"] == "switch" else d["kind"]


@pytest.mark.parametrize("spec", BIG)
def test_the_note_counts_what_is_drawn_and_what_the_fabric_has(spec, pictures):
    """Every 'a of b things' line of the note: a counted in the drawn part (from the
    figure's own node scatters), b in the whole graph (what topology show counts)."""
    graph, fig = pictures(spec)
    ax = fig.axes[0]
    (note,) = [t.get_text() for t in ax.texts if t.get_gid() == "note"]
    part, _ = representative(graph)
    drawn = sum(len(c.get_offsets()) for c in ax.collections if c.get_gid() == "nodes")
    assert drawn == part.number_of_nodes()
    whole = Counter(_tier_name(d) for _, d in graph.nodes(data=True))
    shown = Counter(_tier_name(d) for _, d in part.nodes(data=True))
    seen = set()
    for line in note.splitlines():
        m = re.match(r"(?:representative part: )?([\d,]+) of ([\d,]+) (.*)", line)
        assert m, line
        a, b = (int(x.replace(",", "")) for x in m.groups()[:2])
        what = m.group(3)
        tier = re.search(r"\(tier (\d+)\)", what)
        key = (int(tier.group(1)) if tier else "ocs" if what.startswith("OCS")
               else "gpu" if what == "GPUs" else "links")
        if key == "links":
            assert (a, b) == (part.number_of_edges(), graph.number_of_edges())
        else:
            assert (a, b) == (shown[key], whole[key]), line
        seen.add(key)
    assert seen == set(whole) | {"links"}


def test_every_switch_of_the_part_keeps_a_link_up_where_the_fabric_has_one():
    """Before: the first 16 cores of fat-tree:k=64 were all spine0's, so 15 of the 16
    spines drawn had no link upwards and the cores looked like spine0's alone."""
    graph = fat_tree(64, pods=16)
    part, _ = representative(graph)
    for n, d in part.nodes(data=True):
        if d["kind"] == "switch" and d["tier"] == 2:
            assert any(part.nodes[v].get("tier") == 3 for v in part[n]), n
    cores = [n for n, d in part.nodes(data=True) if d.get("tier") == 3]
    assert len(cores) == 16 and len({next(iter(part[c])) for c in cores}) == 16


@pytest.mark.parametrize("spec", ["torus:dims=8x8x16", "torus:dims=32x32", *BIG])
def test_the_note_is_short_lines_and_counts_the_torus_corner(spec, pictures):
    """Before: a torus corner's note was one 100-character line that widened the picture to
    1,564 pixels; every line of a note now fits beside the legend."""
    graph, fig = pictures(spec)
    (note,) = [t.get_text() for t in fig.axes[0].texts if t.get_gid() == "note"]
    assert max(len(line) for line in note.splitlines()) <= 60
    if spec.startswith("torus"):
        part, _ = representative(graph)
        assert f"{part.graph['gpus']} of {graph.graph['gpus']:,} GPUs" in note
        assert f"{part.number_of_edges():,} of {graph.number_of_edges():,} links drawn" in note


@pytest.mark.parametrize("spec", [*DEFAULTS, "fat-tree:k=64,pods=16", "torus:dims=8x8x16",
                                  "lite-groups:lites=4,base=[rail-optimized:domains=4]"])
def test_the_picture_stays_a_page_wide(spec, tmp_path, pictures, monkeypatch):
    """At 120 dpi: at most 1,500 x 1,200 pixels whatever the fabric (a title, legend or
    note does not stretch it), and a small fabric no larger than a big one. plot saves
    the module's figure of the spec (figure(graph) of the same graph, not drawn twice)."""
    from PIL import Image

    from topologies import draw

    graph, fig = pictures(spec)
    asked = []

    def same(g, *, title=None):
        asked.append((g, title))
        return fig

    monkeypatch.setattr(draw, "figure", same)
    try:
        out = draw.plot(graph, tmp_path / "f.png")
    finally:
        pictures(spec, drawn=None)
    assert asked == [(graph, None)]
    with Image.open(out) as im:
        width, height = im.size
    assert width <= 1500 and height <= 1200


@pytest.mark.parametrize("spec", ["leaf-spine:leaves=16,radix=32,oversubscription=4",
                                  "flat:n=256,planes=8,radix=256", "superpod:sus=1",
                                  "nvl72:racks=4"])
def test_links_into_crowded_gpus_are_narrower_than_the_gpus_are_apart(spec, pictures):
    """Before: 2.3-point lines (4 points for NVLink) into GPUs 2-3 points apart, so each
    leaf's fan of links was one solid triangle; now the widths narrow with the crowding,
    the thinnest line staying as it was."""
    import numpy as np

    fig = pictures(spec, drawn=True)[1]
    ax = fig.axes[0]
    gpu = max((c for c in ax.collections if c.get_gid() == "nodes"),
              key=lambda c: len(c.get_offsets()))
    xy = gpu.get_offset_transform().transform(gpu.get_offsets())
    pitch = np.diff(np.sort(xy[:, 0])).min() * 72 / fig.dpi  # points between GPU centres
    widest = max(w[0] for w in _drawn_widths(ax))
    assert widest < pitch
    assert min(w[0] for w in _drawn_widths(ax)) >= 0.6


@pytest.mark.parametrize("spec", ["lite-groups", "lite-groups:base=fat-tree",
                                  "lite-groups:base=nvl72",
                                  "lite-groups:lites=4,base=[rail-optimized:domains=4]"])
def test_lite_group_labels_are_a_regular_stride_from_gpu0(spec, pictures):
    """Before: each Lite group's ring began at the top, where its links to the switches
    arrive, so gpu0, gpu4, ... found no free side: lite-groups:base=nvl72 and the default
    labelled gpu0 alone, base=fat-tree the irregular gpu1, gpu2, gpu6, ..., gpu62, gpu63;
    now a ring begins at the bottom and the labels are every k-th Lite from gpu0."""
    graph, fig = pictures(spec)
    ax = fig.axes[0]
    numbers = [int(t.get_text()[3:]) for t in ax.texts
               if t.get_gid() == "label" and t.get_text().startswith("gpu")]
    lites = Counter(d["group"] for _, d in graph.nodes(data=True) if "group" in d)
    per_group = max(lites.values())
    stride = numbers[1] - numbers[0]
    assert numbers == list(range(0, len(numbers) * stride, stride))
    assert stride % per_group == 0 and len(numbers) >= min(8, len(lites))


REVIEW = [*DEFAULTS, *SIZES, *BIG, "single-switch:n=32", "ring:n=64", "full-mesh:n=16",
          "torus:dims=8x8x16", "ocs:gpus=8,ports=4,logical=ring",
          "leaf-spine:leaves=8,radix=32,gpu=Lite,medium=co-packaged-optics",
          "flat:n=128,planes=4,radix=144,gpu=Lite,medium=co-packaged-optics",
          "ocs:gpus=128,ports=4,gpu=Lite"]


@pytest.mark.parametrize("spec", REVIEW)
def test_no_two_symbols_share_a_place_and_no_two_texts_overlap(spec, pictures):
    """Node positions all differ (also after the Lite rings and the 3D torus's oblique
    slices), and no label, title, legend entry or note box overlaps another text."""
    graph, fig = pictures(spec, drawn=True)
    ax = fig.axes[0]
    xy = [tuple(p) for c in ax.collections if c.get_gid() == "nodes"
          for p in c.get_offset_transform().transform(c.get_offsets()).round(3)]
    assert len(set(xy)) == len(xy) == representative(graph)[0].number_of_nodes()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_gid(), (t.get_bbox_patch() or t).get_window_extent(renderer))
             for t in ax.texts if t.get_text()]
    boxes += [("title", ax.title.get_window_extent(renderer)),
              ("legend", ax.get_legend().get_window_extent(renderer))]
    for i, (a, p) in enumerate(boxes):
        for b, q in boxes[i + 1:]:
            assert not (p.x0 < q.x1 and q.x0 < p.x1 and p.y0 < q.y1 and q.y0 < p.y1), (a, b)


@pytest.mark.parametrize("spec", ["fat-tree:k=8,oversubscription=2", "fat-tree:k=64,pods=16",
                                  "nvl72:racks=4", "superpod:sus=1", "fat-tree:k=8"])
def test_a_thinned_switch_label_is_nearer_its_own_switch(spec, pictures):
    """Where only some switches of a tier are labelled, each label's centre is nearer its
    own switch than any other symbol by a fifth or more. Before: 'spine0' of
    fat-tree:k=8,oversubscription=2 stood below and right of spine0, as near spine1."""
    import numpy as np

    graph, fig = pictures(spec, drawn=True)
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    part, _ = representative(graph)
    names = [n for c in ("ocs", "switch", "gpu") for n, d in part.nodes(data=True)
             if d["kind"] == c]
    xy = np.vstack([c.get_offset_transform().transform(c.get_offsets())
                    for c in ax.collections if c.get_gid() == "nodes"])
    where = dict(zip(names, map(tuple, xy), strict=True))
    labels = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts
              if t.get_gid() == "label" and not t.get_text().startswith("gpu")}
    tiers = Counter(part.nodes[n].get("tier") for n in labels)
    whole = Counter(d.get("tier") for _, d in part.nodes(data=True) if d["kind"] == "switch")
    checked = 0
    for name, box in labels.items():
        if tiers[part.nodes[name].get("tier")] == whole[part.nodes[name].get("tier")]:
            continue  # a fully labelled row: every label on the same side of its switch
        centre = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])
        own = np.linalg.norm(centre - where[name])
        others = min(np.linalg.norm(centre - p) for n, p in where.items() if n != name)
        assert 1.2 * own <= others + 1e-6, name
        checked += 1
    assert checked
