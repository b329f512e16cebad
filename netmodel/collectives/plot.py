"""Figures of collective costs: busbw against message size, one line per algorithm.

matplotlib is imported inside the functions (the CLI stays fast to start). Files are
written atomically.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from compute.units import format_bytes

__all__ = ["curve_labels", "plot_busbw", "title_lines"]

#: One colour per algorithm, the same in every figure (matplotlib's tab10 palette).
COLOURS = {"ring": "tab:blue", "bidirectional-ring": "tab:cyan", "tree": "tab:brown",
           "halving-doubling": "tab:orange", "recursive-doubling": "tab:red",
           "direct": "tab:gray", "pairwise": "tab:olive", "hierarchical": "tab:purple",
           "in-network": "tab:green", "in-network-tree": "tab:pink",
           "collnet-direct": "darkcyan", "collnet-chain": "maroon",
           "two-shot": "black", "torus": "gold"}


def curve_labels(curves: Mapping[str, np.ndarray]) -> dict[str, tuple[str, bool]]:
    """``{name: (legend label, dashed)}``: a curve equal to one drawn before it (in the
    mapping's order, the order they are drawn) is labelled with that one's name and dashed,
    so it shows over the line it would hide (on a one-hop fabric ``bidirectional-ring`` is
    ``ring``: its legend entry had no visible line). A curve is any array of numbers
    (several arrays of one curve concatenated).

    >>> same = np.array([1e9, 2e9])
    >>> labels = curve_labels({"bidirectional-ring": same, "ring": same, "tree": same / 2})
    >>> labels["ring"], labels["bidirectional-ring"], labels["tree"]
    (('ring (= bidirectional-ring)', True), ('bidirectional-ring', False), ('tree', False))
    """
    out: dict[str, tuple[str, bool]] = {}
    drawn: list[tuple[str, np.ndarray]] = []
    for name, bus in curves.items():
        bus = np.asarray(bus, dtype=float)
        twin = next((n for n, b in drawn if b.shape == bus.shape
                     and np.allclose(b, bus, rtol=1e-9, atol=0.0)), None)
        out[name] = (name, False) if twin is None else (f"{name} (= {twin})", True)
        drawn.append((name, bus))
    return out


def title_lines(title: str, width: int) -> list[str]:
    """``title`` in lines of at most ``width`` characters, broken at spaces; a word longer
    than ``width`` (a fabric's spec, ``[rail-optimized:scaleup_bandwidth=450GB/s,...]``)
    is broken after its commas, never inside a name or a number (textwrap cut it at the
    width: ``...,n`` / ``ic_bandwidth=50GB/s``). A piece with no comma to break at is kept
    whole, however long.

    >>> title_lines("4 x 8 H100 [ring:n=4,bandwidth=450GB/s,latency=1us]", 24)
    ['4 x 8 H100 [ring:n=4,', 'bandwidth=450GB/s,', 'latency=1us]']
    >>> title_lines("all-reduce on 16 GPUs", 40)
    ['all-reduce on 16 GPUs']
    """
    tokens: list[tuple[str, bool]] = []            # (text, a space before it)
    for word in title.split():
        pieces = [word] if len(word) <= width else \
            [p + "," for p in word.split(",")[:-1]] + [word.split(",")[-1]]
        tokens.extend((p, i == 0) for i, p in enumerate(pieces) if p)
    lines: list[str] = []
    line = ""
    for text, spaced in tokens:
        add = (" " if spaced and line else "") + text
        if line and len(line) + len(add) > width:
            lines.append(line)
            line = text
        else:
            line += add
    return [*lines, line] if line else lines


def plot_busbw(panels: Sequence[tuple[str, np.ndarray, Mapping[str, np.ndarray],
                                     Sequence[tuple[float, float, str]]]],
               path: str | os.PathLike[str], *, title: str = "") -> str:
    """Draw busbw (GB/s) vs size (log x) and write ``path`` (its suffix the format: .png,
    .svg or .pdf).

    ``panels``: list of ``(subtitle, sizes, {algorithm: busbw bytes/s array}, marks)``;
    ``marks``: list of ``(size, busbw, label)`` points to highlight (may be empty).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from compute.output_paths import check_file_path, figure_format
    from compute.outputs import atomic_write

    check_file_path(path, "figure")
    fmt = figure_format(path)
    cols = len(panels)
    fig, axes = plt.subplots(1, cols, figsize=(6.4 * cols, 4.6), squeeze=False)
    for ax, (sub, sizes, curves, marks) in zip(axes[0], panels, strict=True):
        labels = curve_labels(dict(sorted(curves.items())))
        for name, bus in sorted(curves.items()):
            label, dashed = labels[name]
            ax.plot(sizes, np.asarray(bus) / 1e9, marker=".", label=label,
                    color=COLOURS.get(name), linestyle="--" if dashed else "-")
        for size, bus, label in marks:
            ax.plot([size], [bus / 1e9], "k*", markersize=12, zorder=5)
            ax.annotate(label, (size, bus / 1e9), textcoords="offset points",
                        xytext=(6, -12), fontsize=8, zorder=6,   # readable over the curves
                        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
                              "edgecolor": "none", "alpha": 0.85})
        ax.set_xscale("log", base=2)
        ticks = [s for s in sizes if np.log2(s) % 4 == 0] or list(sizes)
        ax.set_xticks(ticks)
        ax.set_xticklabels([format_bytes(t).replace(" ", "") for t in ticks], rotation=45)
        ax.set_xlabel("message size (nccl-tests convention)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(sub, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        width = max(40, int(75 * cols))  # characters that fit across the figure
        fig.suptitle("\n".join(title_lines(title, width)), fontsize=11)
    fig.tight_layout()
    try:
        return atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format=fmt), "figure")
    finally:
        plt.close(fig)
