"""Figures of the Lite-GPU study. matplotlib is imported inside the functions (Agg backend),
so importing this module costs nothing."""

from __future__ import annotations

from os import PathLike
from typing import Any

__all__ = ["plot_tokens_per_sm"]


def plot_tokens_per_sm(study: Any, path: str | PathLike[str], *, network: str | None = None,
                       overlay: str | None = "ideal") -> None:
    """``tokens_per_sm.png``: one panel per phase, a group of bars per model, one bar per
    GPU type; bar height is the best tokens/s/SM under the SLO for ``network`` (default:
    the study's first), labelled at its foot with its ratio to the baseline GPU. Where the study also
    has ``overlay`` (default ``"ideal"``), a black tick marks that network's value. The
    y axis is logarithmic because the models differ by more than 10x. An infeasible
    configuration is marked with an x at the bottom of its slot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from compute.units import format_time

    nets = study.networks
    network = network or nets[0]
    overlay = overlay if overlay in nets and overlay != network else None
    rows = [r for r in study.rows if r.network == network]
    phases = list(dict.fromkeys(r.phase for r in rows))
    models = list(dict.fromkeys(r.model for r in rows))
    gpus = list(dict.fromkeys(r.gpu for r in rows))
    colors = plt.get_cmap("tab10").colors

    fig, axes = plt.subplots(1, len(phases), figsize=(6.2 * len(phases), 4.8), squeeze=False)
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
        for k, gpu in enumerate(gpus):
            xs = x - 0.4 + width * (k + 0.5)
            for m, model in enumerate(models):
                r = study.row(model, gpu, phase, network)
                if not r.feasible:
                    ax.plot(xs[m], floor * 1.3, marker="x", color=colors[k % 10], ms=8)
                    continue
                ax.bar(xs[m], r.tokens_per_s_per_sm - floor, width * 0.92, bottom=floor,
                       color=colors[k % 10], label=gpu if m == 0 else None)
                if r.vs_baseline is not None:
                    ax.annotate(f"{r.vs_baseline:.2f}x", (xs[m], floor),
                                xytext=(0, 3), textcoords="offset points", ha="center",
                                va="bottom", fontsize=7, rotation=90, color="white")
                if overlay:
                    o = study.row(model, gpu, phase, overlay)
                    if o.feasible:
                        ax.plot([xs[m] - width * 0.32, xs[m] + width * 0.32],
                                [o.tokens_per_s_per_sm] * 2, color="black", lw=1.6,
                                solid_capstyle="butt",
                                label=(f"{overlay} network" if (k, m) == (0, 0) else None))
        ax.set_yscale("log")
        ax.set_ylim(floor, max(values) * 1.6 if values else 1.0)
        ax.set_xticks(x, models)
        lat = "TTFT" if phase == "prefill" else "TBT"
        limit = next(r.latency_limit_s for r in rows if r.phase == phase)
        ax.set_title(f"{phase} ({lat} <= {format_time(limit)})")
        ax.set_ylabel("tokens/s per SM (best config under SLO)")
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.set_axisbelow(True)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 7), fontsize=8,
               frameon=False)
    fig.suptitle(f"Lite-GPU study: tokens/s/SM, {network} network (labels: vs {study.baseline})",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, format="png", dpi=130)
    plt.close(fig)
