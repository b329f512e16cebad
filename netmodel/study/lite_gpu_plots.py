"""Figures of the Lite-GPU study. matplotlib is imported inside the functions (Agg backend),
so importing this module costs nothing."""

from __future__ import annotations

from os import PathLike
from typing import Any

from netmodel.study.figure_kit import figure_style, pyplot

__all__ = ["plot_tokens_per_sm"]


@figure_style
def plot_tokens_per_sm(study: Any, path: str | PathLike[str], *, network: str | None = None,
                       overlay: str | None = "ideal") -> None:
    """``tokens_per_sm.png``: one panel per phase (rows) and model (columns), one bar per
    GPU type; bar height is the best tokens/s/SM under the SLO for ``network`` (default:
    the study's first), labelled at its foot with its ratio to the baseline GPU (above a
    bar too short to hold it, and above its tick where the tick is close). Where the study
    also has ``overlay`` (default ``"ideal"``), a black tick marks that network's value.
    Each panel has a linear y axis from 0 of its own, so a bar's height against the
    baseline's is its ratio (a log axis with one floor for all models drew a 0.02x Lite a
    third as tall as the H100). An infeasible configuration is marked with an x at the
    bottom of its slot."""
    import numpy as np
    from matplotlib.transforms import ScaledTranslation

    from compute.phases import slo_text
    from netmodel.study.figure_kit import (
        bars,
        fit_inside,
        fitted_suptitle,
        label,
        legend_entries,
        save_figure,
        set_margins,
        static_ticks,
    )

    plt = pyplot()
    nets = study.networks
    network = network or nets[0]
    overlay = overlay if overlay in nets and overlay != network else None
    rows = [r for r in study.rows if r.network == network]
    phases = list(dict.fromkeys(r.phase for r in rows))
    models = list(dict.fromkeys(r.model for r in rows))
    gpus = list(dict.fromkeys(r.gpu for r in rows))
    from netmodel.study.compare_plots import gpu_colours

    colors = gpu_colours(gpus)   # the same colour per GPU as the fabric figures

    panel_w = max(2.6, 0.42 * len(gpus) + 0.6)
    fig, axes = plt.subplots(len(phases), len(models), squeeze=False, dpi=130,
                             figsize=(panel_w * len(models) + 0.8, 2.5 * len(phases) + 1.5))
    up = ScaledTranslation(0, 2 / 72, fig.dpi_scale_trans)     # 2 points above the anchor
    width = 0.84
    x = np.arange(len(gpus))
    seen: set = set()
    for i, phase in enumerate(phases):
        limit = next(r.latency_limit_s for r in rows if r.phase == phase)
        for j, model in enumerate(models):
            ax = axes[i][j]
            here = [study.row(model, g, phase, network) for g in gpus]
            over = [study.row(model, g, phase, overlay) if overlay else None for g in gpus]
            top = max([r.tokens_per_s_per_sm for r in here if r.feasible]
                      + [o.tokens_per_s_per_sm for o in over if o is not None and o.feasible]
                      + [1e-9])
            ticks: tuple[list, list, list] = ([], [], [])     # the overlay's x0, x1, y
            for k, (gpu, r, o) in enumerate(zip(gpus, here, over, strict=True)):
                if not r.feasible:
                    ax.plot(x[k], top * 0.03, ls="none", marker="x", color=colors[gpu], ms=7)
                    continue
                v = r.tokens_per_s_per_sm
                bars(ax, [x[k]], [v], width * 0.9, color=colors[gpu],
                     label=gpu if gpu not in seen else None)
                seen.add(gpu)
                tick = o.tokens_per_s_per_sm if o is not None and o.feasible else None
                if tick is not None:
                    ticks[0].append(x[k] - width * 0.4)
                    ticks[1].append(x[k] + width * 0.4)
                    ticks[2].append(tick)
                if r.vs_baseline is not None:
                    tall = v > 0.2 * top                 # room inside the bar
                    # a short bar's label sits on it, or above its tick where the tick is
                    # close enough above the bar for the label to cross it
                    near = tick is not None and v <= tick < v + 0.2 * top
                    y = 0 if tall else tick if near else v
                    label(ax, x[k], y, f"{r.vs_baseline:.2f}x", transform=ax.transData + up,
                          ha="center", va="bottom", fontsize=6.5, rotation=90,
                          color="white" if tall else "black")
            if ticks[0]:
                ax.hlines(ticks[2], ticks[0], ticks[1], color="black", lw=1.6,
                          capstyle="butt", zorder=2,
                          label=f"{overlay} network" if "overlay" not in seen else None)
                seen.add("overlay")
            ax.set_ylim(0, top * 1.15)
            ax.set_xlim(-0.6, len(gpus) - 0.4)
            ax.set_axisbelow(True)
            ax.set_title(f"{model}, {phase} ({slo_text(phase, limit)})", fontsize=8.5,
                         y=1.0)
            if j == 0:
                ax.set_ylabel("tokens/s per SM", fontsize=8)
    handles, labels = legend_entries(axes)
    order = sorted(range(len(labels)), key=lambda n: labels[n] in gpus)   # overlay first
    ncol = max(1, min(len(labels), int(fig.get_figwidth() // 1.3)))
    fig.legend([handles[n] for n in order], [labels[n] for n in order], loc="lower center",
               ncol=ncol, fontsize=8, frameon=False)
    extra = fitted_suptitle(fig, f"Lite-GPU study: best tokens/s/SM under the SLO, {network} "
                            f"network (labels: vs {study.baseline})", fontsize=10)
    legend_rows = -(-len(labels) // ncol)
    set_margins(fig, bottom=0.22 * legend_rows + 0.3, top=0.62 + extra, left=0.65,
                right=0.15, wspace=0.22, hspace=0.42)
    for ax in axes.flat:
        static_ticks(ax, "x", x, None, length=0)
        static_ticks(ax, "y", labelsize=7, grid_alpha=0.3)
    fit_inside(fig, [a.yaxis.label for a in axes[:, 0]])
    save_figure(fig, path)
