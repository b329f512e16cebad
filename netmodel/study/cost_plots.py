"""Figures of the cost model. matplotlib is imported inside the functions (Agg backend), so
importing this module costs nothing. Each function takes result objects and a path and
writes one figure there (the format from the path's suffix); write through
:func:`compute.outputs.atomic_write` or :func:`compute.outputs.write_outputs`, e.g.
``atomic_write("yield.png", lambda p: plot_yield_vs_area(curves, p, marks))``.

* :func:`plot_yield_vs_area`: yield (defect-free and harvested) and logic cost per good SM
  against die area, one line per curve of :func:`compute.yield_model.yield_curve`, the
  H100 and the Lite (or any :class:`~compute.yield_model.PackageCost`) marked, with their
  whole package cost per SM beside.
* :func:`plot_cost_per_scenario`: tokens/s/W, $ per million tokens (capex, energy and
  colocation stacked) and the network's share of capex and power, one bar per scenario, a column per
  phase, from :class:`~netmodel.study.cost.CostSummary` objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike
from typing import TYPE_CHECKING

from netmodel.study.figure_kit import figure_style, pyplot

if TYPE_CHECKING:
    from compute.yield_model import PackageCost
    from netmodel.study.cost import CostSummary

__all__ = ["plot_cost_per_scenario", "plot_yield_vs_area"]


@figure_style
def plot_yield_vs_area(curves: dict[str, dict], path: str | PathLike[str],
                       marks: dict[str, PackageCost] | None = None) -> None:
    """Two panels against die area (mm^2): yield, and logic cost per good SM (USD, log).

    ``curves``: ``{label: yield_curve(...)}`` (e.g. one per defect density); solid lines
    are harvested yield, dashed the defect-free yield. ``marks``: ``{name: PackageCost}``
    (e.g. ``package_cost("H100-SXM")``, ``package_cost("Lite")``), drawn as points with
    their package cost per SM in the legend. Curves are best taken at the default areas of
    ``yield_curve`` (whole multiples of 12 physical SMs, so every die keeps the H100's
    132/144 share enabled; other areas round the spare count and the curve saw-tooths).
    """
    import numpy as np

    from compute.errors import UserError
    from netmodel.study.figure_kit import DPI, fit_inside, save_figure, set_margins, static_ticks

    if not curves:
        raise UserError("plot_yield_vs_area needs at least one curve")
    plt = pyplot()
    fig, (ax_y, ax_c) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=DPI)
    colours = plt.get_cmap("viridis")(np.linspace(0.1, 0.85, len(curves)))
    for colour, (label, c) in zip(colours, curves.items(), strict=True):
        area = np.asarray(c["area"]) * 1e6
        ax_y.plot(area, c["yield"], color=colour, marker=".", label=f"{label}: harvested")
        ax_y.plot(area, c["defect_free_yield"], color=colour, ls="--", lw=1,
                  label=f"{label}: defect-free")
        ax_c.plot(area, c["cost_per_good_sm"], color=colour, marker=".", label=label)
    names = []
    for i, (name, pkg) in enumerate((marks or {}).items()):
        die = pkg.die
        style = dict(marker="os^Dv"[i % 5], ms=8, mfc="white", mew=2, color=f"C{i + 3}",
                     ls="none")
        ax_y.plot(die.area * 1e6, die.yield_, **style,
                  label=f"{name} ({die.sms_enabled}/{die.sms_physical} SMs)")
        ax_c.plot(die.area * 1e6, die.cost_per_good_sm, **style,
                  label=f"{name}: logic \\${die.cost_per_good_sm:.2f}/SM, package "
                        f"\\${pkg.per_sm:.2f}/SM")
        for ax, y in ((ax_y, die.yield_), (ax_c, die.cost_per_good_sm)):
            names.append(ax.annotate(name, (die.area * 1e6, y), textcoords="offset points",
                                     xytext=(6, 6), fontsize=8))
    ax_y.set(xlabel="die area (mm\u00b2)", ylabel="yield", ylim=(0, 1.02))
    ax_y.set_title("Yield: harvested (solid) and defect-free (dashed)", y=1.0)
    ax_c.set(xlabel="die area (mm\u00b2)", ylabel="logic cost per good SM (USD)")
    ax_c.set_title("Wafer cost per good SM (harvested)", y=1.0)
    ax_c.set_ylim(bottom=0)
    set_margins(fig, bottom=0.55, top=0.4, left=0.6, right=0.12, wspace=0.2)
    for ax in (ax_y, ax_c):
        for axis in "xy":
            static_ticks(ax, axis, grid_alpha=0.3)
    fit_inside(fig, [*names, ax_y.yaxis.label])
    for ax in (ax_y, ax_c):
        ax.legend(fontsize=7, loc="best")
    save_figure(fig, path)


@figure_style
def plot_cost_per_scenario(summaries: Iterable[CostSummary], path: str | PathLike[str]) -> None:
    """Per phase (columns): tokens/s/W, USD per million tokens (capex, energy and the
    facility's colocation rent stacked)
    and the network's share of capex and of power, one bar group per scenario. A scenario
    with nothing feasible under the SLO (or no summary) in a phase is an x on the axis."""
    import numpy as np

    from compute.errors import UserError
    from compute.units import SECONDS_PER_YEAR

    summaries = list(summaries)
    if not summaries:
        raise UserError("plot_cost_per_scenario needs at least one cost summary")
    plt = pyplot()
    from netmodel.study.figure_kit import (
        DPI,
        bars,
        fit_inside,
        save_figure,
        set_margins,
        static_ticks,
    )
    from netmodel.study.summary_words import sig3

    phases = list(dict.fromkeys(s.phase for s in summaries))
    labels = list(dict.fromkeys(f"{s.scenario}\n{s.model}" if len({x.model for x in summaries})
                                > 1 else s.scenario for s in summaries))
    fig, axes = plt.subplots(3, len(phases), squeeze=False, dpi=DPI,
                             figsize=(max(5.0, 0.75 * len(labels) + 2) * len(phases), 9))
    x = np.arange(len(labels))
    pad = 0.4 + 0.05 * (len(labels) - 0.2)       # as ax.bar's autoscale: 5% beyond the bars
    names: list = []                              # the scenario names under the bottom row
    for j, phase in enumerate(phases):
        rows = {(f"{s.scenario}\n{s.model}" if "\n" in labels[0] else s.scenario): s
                for s in summaries if s.phase == phase}
        got = [rows.get(lab) for lab in labels]
        ok = [s is not None and s.tokens_per_s > 0 for s in got]
        tpw = [s.tokens_per_s_per_w if k else 0 for s, k in zip(got, ok, strict=True)]
        ax = axes[0][j]
        bars(ax, x, tpw, 0.8, color="#4c72b0")
        ax.set_ylabel("tokens/s per W (IT)")
        ax.set_title(phase, y=1.0)
        cap, en, colo = [], [], []
        for s, k in zip(got, ok, strict=True):
            per_mtok = 1e6 / (s.tokens_per_s * SECONDS_PER_YEAR) if k else 0
            cap.append(s.capex_per_year * per_mtok if k else 0)
            en.append(s.energy_per_year * per_mtok if k else 0)
            colo.append(s.colocation_per_year * per_mtok if k else 0)
        # the first column's legends (rows 1 and 2) are placed at "best", which avoids
        # Rectangles' boxes: ax.bar there; elsewhere one collection a colour (the same
        # pixels, a tenth of the artists)
        put = (lambda ax, *a, **k: ax.bar(*a, **k)) if j == 0 else bars
        ax = axes[1][j]
        put(ax, x, cap, 0.8, color="#dd8452", label="capex (amortized + maintenance)")
        put(ax, x, en, 0.8, bottom=cap, color="#55a868", label="energy")
        put(ax, x, colo, 0.8, bottom=[c + e for c, e in zip(cap, en, strict=True)],
            color="#937860", label="colocation (facility rent)")
        ax.set(ylabel="USD per million tokens")
        ax = axes[2][j]
        w = 0.38
        put(ax, x - w / 2, [s.network_share_capex if s else 0 for s in got], w,
            color="#c44e52", label="network share of capex")
        put(ax, x + w / 2, [s.network_share_power if s else 0 for s in got], w,
            color="#8172b2", label="network share of IT power")
        ax.set(ylabel="network share", ylim=(0, 1))
        for r in (0, 1):
            bad = [i for i, k in enumerate(ok) if not k]
            if bad:
                axes[r][j].plot(bad, [0] * len(bad), "kx", ms=9, clip_on=False)
        for r, vals in ((0, tpw), (1, [c + e + f for c, e, f in zip(cap, en, colo,
                                                                     strict=True)])):
            top = max(vals + [1e-12])
            axes[r][j].set_ylim(0, 1.12 * top)
            for i, v in enumerate(vals):
                if v > 0:
                    axes[r][j].text(i, v + 0.01 * top, sig3(v), ha="center", va="bottom",
                                    fontsize=7)
        for r in range(3):
            axes[r][j].set_xlim(-pad, len(labels) - 1 + pad)
            axes[r][j].set_axisbelow(True)
    models = ", ".join(dict.fromkeys(s.model for s in summaries))
    fig.suptitle(f"Energy and cost per token at the SLO-best configuration ({models})",
                 fontsize=10)
    set_margins(fig, bottom=0.4, top=0.7, left=0.75, right=0.15, wspace=0.14, hspace=0.12)
    for r, row in enumerate(axes):
        for ax in row:
            names += static_ticks(ax, "x", x, labels if r == 2 else None, rotation=30,
                                  ha="right", labelsize=8)
            static_ticks(ax, "y", grid_alpha=0.3)
    fit_inside(fig, [*names, *(row[0].yaxis.label for row in axes)])
    axes[1][0].legend(fontsize=8)
    axes[2][0].legend(fontsize=8)
    save_figure(fig, path)
