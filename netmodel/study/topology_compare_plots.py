"""The figure of ``netmodel topology compare``: small multiples, one panel per metric, one
horizontal bar per fabric (the same colour and row in every panel), each bar labelled with
its value in the panel's unit (the table's unit and number format for that row).

matplotlib is imported inside the function (Agg backend), so importing this module costs
nothing. Write through :func:`compute.outputs.atomic_write`, e.g.
``atomic_write("cmp.png", lambda p: plot_topology_compare(result, p))``.
"""

from __future__ import annotations

from os import PathLike
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from netmodel.study.topology_compare import TopologyComparison

__all__ = ["PANELS", "plot_topology_compare"]

#: Panels of the figure: keys of :meth:`TopologyComparison.series` rows (several keys are
#: stacked in one bar, the first solid, the next hatched) and a title (None: the row's
#: name). ``all_reduce:*`` is one panel per size; ``blast:worst`` the worst single failure
#: of a network part.
PANELS = (
    (("gpus",), None),
    (("switches",), None),
    (("pluggable_transceivers", "cpo_engines"),
     "optics: transceivers (solid) + CPO engines (hatched)"),
    (("switch_ports_used", "ocs_ports_used"), "ports used: switch (solid) + OCS (hatched)"),
    (("diameter",), None),
    (("paths",), "shortest paths, gpu0 to the farthest GPU"),
    (("injection_per_gpu",), None),
    (("bisection_per_gpu",), None),
    (("all_reduce:*",), None),
    (("network_capex_per_gpu",), None),
    (("network_power_per_gpu",), None),
    (("blast:worst",), "worst failure of a network part (GPUs cut off)"),
    (("gpu_time_lost",), None),
)
#: Component classes counted as network parts for the blast-radius panel.
_NETWORK_CLASSES = ("nic", "transceiver", "cpo-engine", "copper-end", "nvswitch", "leaf",
                    "spine", "core", "ocs")
_MAX_LABEL = 26


def _short(text: str) -> str:
    return text if len(text) <= _MAX_LABEL else text[:_MAX_LABEL - 1] + "\u2026"


def _panels(result) -> list[tuple[str, list[list], list[str]]]:
    """``(title, stacked value lists in the panel's unit, per-bar text)`` per panel."""
    from netmodel.study.topology_compare import count_texts, row_unit

    rows = {key: (name, fmt, values) for key, name, fmt, values in result.series()}
    out = []
    for keys, title in PANELS:
        if keys == ("all_reduce:*",):
            for n in result.sizes:
                name, fmt, values = rows[f"all_reduce:{n}"]
                unit, scale, digits = row_unit(values, fmt)
                head = name.replace("all-reduce busbw, ", "all-reduce busbw\n")
                out.append((f"{head} ({unit})", [[(v or 0.0) / scale for v in values]],
                            ["-" if v is None else f"{v / scale:,.{digits}f}"
                             for v in values]))
            continue
        if keys == ("blast:worst",):
            worst = []
            for r in result.rows:
                net = [b for b in r.blast_radius if b.cls in _NETWORK_CLASSES]
                worst.append(max(net, key=lambda b: b.gpus_max, default=None))
            out.append((title, [[b.gpus_max if b else 0 for b in worst]],
                        [f"{b.gpus_max:,} ({b.cls})" if b and b.gpus_max else
                         ("0" if b else "-") for b in worst]))
            continue
        name, fmt, _ = rows[keys[0]]
        stacks = [[v or 0 for v in rows[k][2]] for k in keys]
        totals = [sum(col) for col in zip(*stacks, strict=True)]
        if fmt == "count":
            out.append((title or name, stacks, count_texts(totals)))
            continue
        if fmt == "share":   # as the table shows it: per cent, four significant digits
            out.append((f"{title or name} (%)", [[100 * v for v in st] for st in stacks],
                        [f"{100 * v:.4g}" for v in totals]))
            continue
        unit, scale, digits = row_unit(totals, fmt)
        out.append((f"{title or name} ({unit})", [[v / scale for v in st] for st in stacks],
                    [f"{v / scale:,.{digits}f}" for v in totals]))
    return out


def plot_topology_compare(result: TopologyComparison, path: str | PathLike[str]) -> None:
    """Draw a :class:`~netmodel.study.topology_compare.TopologyComparison` to ``path`` (the
    format from its suffix): one panel per metric of :data:`PANELS`, the three all-reduce
    sizes as three panels, stacked parts (optics, ports) in two shades."""
    import numpy as np

    from compute.output_paths import figure_format
    from netmodel.study.figure_kit import pyplot

    plt = pyplot()
    panels = _panels(result)
    names = [_short(r.fabric) for r in result.rows]
    k = len(names)
    cols = 3
    nrows = -(-len(panels) // cols)
    height = 0.9 + 0.28 * k
    fig, axes = plt.subplots(nrows, cols, figsize=(13, 0.9 + nrows * height), squeeze=False)
    colours = plt.get_cmap("tab10")(np.arange(k) % 10)
    y = np.arange(k)[::-1]
    for i, ax in enumerate(axes.flat):
        if i >= len(panels):
            ax.axis("off")
            continue
        title, stacks, text = panels[i]
        left = np.zeros(k)
        for j, values in enumerate(stacks):
            v = np.asarray(values, dtype=float)
            ax.barh(y, v, left=left, color=colours, alpha=1.0 if j == 0 else 0.45,
                    edgecolor="white", height=0.7,
                    hatch=None if j == 0 else "///")
            left += v
        top = float(left.max()) if left.size else 0.0
        span = top if top > 0 else 1.0
        for yy, total, t in zip(y, left, text, strict=True):
            ax.text(total + 0.02 * span, yy, t, va="center", ha="left", fontsize=8)
        ax.set_xlim(0, span * 1.45)
        ax.set_title(title, fontsize=9)
        ax.set_yticks(y)
        ax.set_yticklabels(names if i % cols == 0 else [""] * k, fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_ylim(-0.6, k - 0.4)
    fig.suptitle(f"Fabrics side by side (all-reduce: {result.group} GPUs, contiguous; busbw "
                 f"as nccl-tests)", fontsize=11)
    width = 0.1 * max(len(n) for n in names) * 8 / 12  # inches of the longest y label
    fig.subplots_adjust(left=(0.35 + width) / 13, right=0.985, bottom=0.35 / fig.get_figheight(),
                        top=1 - 0.75 / fig.get_figheight(), wspace=0.12,
                        hspace=0.75 * 2.2 / height)
    fig.savefig(path, format=figure_format(path), dpi=110)
    plt.close(fig)
