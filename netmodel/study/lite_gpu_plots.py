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
    """``tokens_per_sm.png``: one panel per phase, a group of bars per model, one bar per
    GPU type; bar height is the best tokens/s/SM under the SLO for ``network`` (default:
    the study's first), labelled at its foot with its ratio to the baseline GPU. Where the study also
    has ``overlay`` (default ``"ideal"``), a black tick marks that network's value. The
    y axis is logarithmic because the models differ by more than 10x. An infeasible
    configuration is marked with an x at the bottom of its slot."""
    import numpy as np
    from matplotlib.transforms import ScaledTranslation

    from compute.units import format_time
    from netmodel.study.figure_kit import (
        bars,
        fit_inside,
        label,
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

    fig, axes = plt.subplots(1, len(phases), figsize=(6.2 * len(phases), 4.8), squeeze=False,
                             dpi=130)
    up = ScaledTranslation(0, 3 / 72, fig.dpi_scale_trans)     # 3 points above the anchor
    width = 0.8 / len(gpus)
    x = np.arange(len(models))
    for ax, phase in zip(axes[0], phases, strict=True):
        values = [v for r in rows if r.phase == phase and r.feasible
                  for v in [r.tokens_per_s_per_sm]]
        if overlay:
            values += [study.row(r.model, r.gpu, phase, overlay).tokens_per_s_per_sm
                       for r in rows if r.phase == phase
                       and study.row(r.model, r.gpu, phase, overlay).feasible]
        floor = min(values) / 3 if values else 1e-3
        ticks: tuple[list, list, list] = ([], [], [])     # the overlay's x0, x1, y
        for k, gpu in enumerate(gpus):
            xs = x - 0.4 + width * (k + 0.5)
            bar_x, bar_h, bad = [], [], []
            for m, model in enumerate(models):
                r = study.row(model, gpu, phase, network)
                if not r.feasible:
                    bad.append(xs[m])
                    continue
                bar_x.append(xs[m])
                bar_h.append(r.tokens_per_s_per_sm - floor)
                if r.vs_baseline is not None:
                    label(ax, xs[m], floor, f"{r.vs_baseline:.2f}x", transform=ax.transData + up,
                          ha="center", va="bottom", fontsize=7, rotation=90, color="white")
                if overlay:
                    o = study.row(model, gpu, phase, overlay)
                    if o.feasible:
                        ticks[0].append(xs[m] - width * 0.32)
                        ticks[1].append(xs[m] + width * 0.32)
                        ticks[2].append(o.tokens_per_s_per_sm)
            if bad:
                ax.plot(bad, [floor * 1.3] * len(bad), ls="none", marker="x",
                        color=colors[gpu], ms=8)
            if bar_x:
                bars(ax, bar_x, bar_h, width * 0.92, bottom=floor, color=colors[gpu],
                     label=gpu)
        if ticks[0]:
            ax.hlines(ticks[2], ticks[0], ticks[1], color="black", lw=1.6, capstyle="butt",
                      label=f"{overlay} network", zorder=2)
        ax.set_yscale("log")
        ax.set_ylim(floor, max(values) * 1.6 if values else 1.0)
        ax.set_xlim(-0.55, len(models) - 0.45)
        ax.set_axisbelow(True)
        lat = "TTFT" if phase == "prefill" else "TBT"
        limit = next(r.latency_limit_s for r in rows if r.phase == phase)
        ax.set_title(f"{phase} ({lat} <= {format_time(limit)})", y=1.0)
        ax.set_ylabel("tokens/s per SM (best config under SLO)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda n: labels[n] in gpus)   # overlay first
    fig.legend([handles[n] for n in order], [labels[n] for n in order], loc="lower center",
               ncol=min(len(labels), 7), fontsize=8, frameon=False)
    fig.suptitle(f"Lite-GPU study: tokens/s/SM, {network} network (labels: vs {study.baseline})",
                 fontsize=11)
    set_margins(fig, bottom=0.75, top=0.68, left=0.65, right=0.1, wspace=0.17)
    for ax in axes[0]:
        static_ticks(ax, "x", x, models)
        static_ticks(ax, "y", grid_alpha=0.3)
    fit_inside(fig, [axes[0][0].yaxis.label])     # wide labels within a decade: 6×10¹
    save_figure(fig, path)
