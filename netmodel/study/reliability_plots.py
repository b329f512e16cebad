"""Figures of ``netmodel blast-radius`` and ``netmodel availability`` (matplotlib imported
inside the functions, Agg backend).

* :func:`plot_blast_radius`: SMs down per failure of each component class, hardware
  (GPUs lost or cut off) against software (GPUs of the instances taken down), and the
  SMs' worth of tokens/s lost by the instances that stay up slowed.
* :func:`plot_capacity`: delivered capacity over the horizon, median and p1-p99 band over
  trials, with the threshold.
* :func:`plot_event_loss`: the distribution (CDF) of capacity lost per failure.
* :func:`plot_spares`: spares against availability, one line per scenario or placement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from os import PathLike
from typing import Any

from netmodel.study.figure_kit import figure_style, pyplot
from netmodel.study.reliability_catalog import percent
from netmodel.study.reliability_timings import recovery_times

__all__ = ["plot_blast_radius", "plot_capacity", "plot_event_loss", "plot_spares"]


#: Characters of a 9-point title line that fit across an inch of figure (a --fabric spec
#: is a scenario label of hundreds of characters): 100 on the capacity figure's 7.5
#: inches, 86 on the event-loss figure's 6.5 (:func:`_title_width`).
_TITLE_CHARS_PER_INCH = 40 / 3
#: Characters of a 7-point legend label line that fit in half the spares figure (the longest label of study lite-gpu, 50, on one line).
_LEGEND_WIDTH = 60


def _title_width(inches: float, fontsize: float = 9) -> int:
    """Characters of a ``fontsize``-point title line that fit across a figure ``inches``
    wide (:data:`_TITLE_CHARS_PER_INCH` at 9 points, more at smaller type).

    >>> _title_width(7.5), _title_width(6.5), _title_width(7.5, 8)
    (100, 86, 112)
    """
    return int(_TITLE_CHARS_PER_INCH * inches * 9 / fontsize)


def _wrapped(*lines: str, width: int) -> str:
    """``lines``, each broken into lines of at most ``width`` characters
    (:func:`netmodel.collectives.plot.title_lines`: a spec after its commas), one text."""
    from netmodel.collectives.plot import title_lines

    return "\n".join(x for line in lines for x in title_lines(line, width))


def _save(fig: Any, path: str | PathLike[str]) -> None:
    """Lay ``fig`` out tightly, write it to ``path`` as a 120-dpi PNG, and close it."""
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=120)
    pyplot().close(fig)


def plot_blast_radius(result: Any, path: str | PathLike[str]) -> None:
    """``blast_radius.png``: per class, the mean SMs a failure takes out of service on the
    hardware (lost or cut off) and in software (every GPU of the instances it takes down),
    and, hatched, the SMs' worth of tokens/s it takes from the instances that stay up
    (:meth:`~netmodel.study.blast_radius.BlastRadius.slow_sms_mean`: a class that only slows
    the cluster, a plane's leaf, has a bar), log scale; the rate of the class (failures per
    year in the cluster) under its name."""
    plt = pyplot()
    import numpy as np

    c = result.cluster
    rows = [r for r in result.rows if r.events_per_year > 0 or r.instances_down_mean > 0]
    x = np.arange(len(rows))
    hw = [r.sms_mean for r in rows]
    sw = [r.gpus_down_mean * c.gpu.sms for r in rows]
    slow_of = result.slow_sms_mean()
    slow = [slow_of[r.cls] for r in rows]
    fig, ax = plt.subplots(figsize=(max(6.5, 1.1 * len(rows) + 2), 4.4))
    floor, width = 0.5, 0.28
    ax.bar(x - width, np.maximum(hw, floor), width, color="#4c72b0",
           label="hardware: SMs of GPUs lost or cut off")
    ax.bar(x, np.maximum(sw, floor), width, color="#c44e52",
           label="software: SMs of the instances taken down")
    ax.bar(x + width, np.maximum(slow, floor), width, color="white", edgecolor="#dd8452",
           hatch="///", label="slow-down: SMs' worth of tokens/s lost by instances that stay up")
    ax.set_yscale("log")
    ax.set_ylim(floor, max(hw + sw + slow + [10.0]) * 30)   # room for the legend
    ax.set_xticks(x, [f"{r.cls}\n{r.events_per_year:.3g}/y" for r in rows], fontsize=7)
    ax.set_ylabel("SMs (or SMs' worth) per failure (mean)", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=7, frameon=False, loc="upper center", ncol=2)
    ax.set_title(_wrapped(f"Blast radius per failure: {c.scenario.label}, {c.model.name} "
                          f"{c.workload.phase},",
                          f"{c.parallelism.label}, {c.gpus:,} GPUs (bars at the floor: none; "
                          "under each class: its failures per year in the cluster)",
                          width=_title_width(fig.get_figwidth(), 8)), fontsize=8)
    _save(fig, path)


def plot_capacity(avail: Any, path: str | PathLike[str]) -> None:
    """``availability_capacity.png``: the cluster's delivered share of its healthy
    capacity over the horizon: median over trials and the p1-p99 band (where it has any
    width), the threshold."""
    plt = pyplot()
    import numpy as np

    m = avail.mc
    days = m.grid_s / 86400
    p1, p50, p99 = m.band
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    # the band in the legend only where it has width somewhere: where p1 = p99 at every
    # instant (every trial at full capacity at every sampled instant, as lite-flat's) it
    # draws nothing, and a legend entry for it pointed at nothing
    band = bool(np.any(np.asarray(p99) > np.asarray(p1)))
    if band:
        ax.fill_between(days, p1, p99, color="#4c72b0", alpha=0.25, lw=0,
                        label="p1-p99 over trials")
    ax.plot(days, p50, color="#4c72b0", lw=1.2, label="median over trials")
    ax.axhline(avail.threshold, color="#c44e52", ls="--", lw=1,
               label=f"threshold {percent(avail.threshold)}")
    ax.axhline(m.mean, color="0.3", ls=":", lw=1, label=f"mean {m.mean:.5f}")
    low = float(min(np.min(p1), avail.threshold, m.mean))
    pad = max(1e-4, (1 - low) * 0.15)
    ax.set_ylim(low - pad, 1 + pad)
    ax.set_xlim(0, days[-1] + days[0])
    ax.set_xlabel("days", fontsize=8)
    ax.set_ylabel("delivered share of capacity", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    # below the axes: inside, at the lower left, it hid the p1 floor of the first months
    ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.14),
              ncol=4)
    c, p = avail.cluster, avail.pools
    ax.set_title(_wrapped(f"{c.scenario.label}, {c.model.name} {c.workload.phase}: "
                          f"{c.gpus:,} GPUs, {c.instances_total:,} instances of "
                          f"{c.parallelism.label}",
                          f"{p.spares:,} spares ({p.placement}, {p.reachable_total:,} "
                          f"reachable), {m.trials:,} trials (capacity at {len(days)} instants)",
                          width=_title_width(fig.get_figwidth())), fontsize=9)
    _save(fig, path)


def plot_event_loss(avail: Any, path: str | PathLike[str]) -> None:
    """``availability_event_loss.png``: CDF of the capacity each failure costs, in
    instance-hours (instances down x hours down, plus slow-downs), log scale."""
    plt = pyplot()
    import numpy as np

    v = np.sort(avail.mc.event_lost[avail.mc.event_lost > 0])
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    if len(v):
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color="#4c72b0")
        ax.set_xscale("log")
        for x, label in ((recovery_times(avail.cluster).swap_s() / 3600, "hot-spare swap"),
                         (recovery_times(avail.cluster).repair_down_s("gpu-die") / 3600, "GPU repair")):
            ax.axvline(x, color="0.4", ls=":", lw=1)
            ax.annotate(label, (x, 0.03), rotation=90, fontsize=7, ha="right", va="bottom")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("capacity lost per failure (instance-hours)", fontsize=8)
    ax.set_ylabel("share of failures", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    c = avail.cluster
    ax.set_title(_wrapped(f"Capacity lost per failure: {c.scenario.label}, "
                          f"{avail.pools.spares:,} spares ({avail.pools.placement})",
                          f"{len(v):,} failures sampled; dotted: one instance down for a "
                          "swap, for a GPU repair", width=_title_width(fig.get_figwidth())),
                 fontsize=9)
    _save(fig, path)


@figure_style
def plot_spares(curves: Mapping[str, tuple], path: str | PathLike[str], *, threshold: float,
                quantile: float,
                marks: Iterable[tuple[str, float, float, float]] = ()) -> None:
    """``availability_spares.png``: for each curve ``label -> (spares % of GPUs, mean
    capacity, share of time below threshold)`` (closed forms), the unavailability
    ``1 - mean`` (left) and the time below the threshold (right) against the spare pool,
    drawn as steps (a pool between two points serves as the smaller);
    ``marks``: Monte Carlo points ``(label, spares %, mean, below)``. A curve's optional
    fourth array (:func:`~netmodel.study.availability.spare_curve`'s ``fallback``) marks
    the points where the closed form passed the spare chain's limit and took a fallback
    (an approximation): drawn as open circles, the title saying so. A curve whose spares
    reach no GPU (a placement with no free port to wire a spare: ``pod`` on a direct
    mesh) is its one point at 0 spares, the no-spares point every curve starts at: it is
    not drawn (it would hide under the others' first point, its legend mark matching
    nothing seen) and the title says so. lite-flat's and lite-ocs's global curves fall in
    even steps to 100%: a lost plane leaf or OCS slows every instance, and each
    instance's worth of spares re-creates one more of them (a failure short of spares
    brings back the whole instances they hold)."""
    plt = pyplot()
    import numpy as np

    from netmodel.collectives.plot import curve_labels, title_lines
    from netmodel.study.figure_kit import DPI, fit_inside, save_figure, set_margins, static_ticks

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=DPI)
    colours = plt.get_cmap("tab10").colors
    floor = 1e-9
    # steps, not slopes: a pool between two points serves as the smaller one (its extra
    # spares are short of the next whole need, spare_curve)
    # a curve equal to an earlier one (lite-flat-inr's to lite-flat's) would hide under it:
    # named after it and dashed
    # the points past the spare chain's limit (a curve's fourth array, where given)
    past = {label: np.asarray(curve[3], dtype=bool) if len(curve) > 3
            else np.zeros(len(curve[0]), dtype=bool) for label, curve in curves.items()}
    curves = {label: tuple(curve[:3]) for label, curve in curves.items()}
    stuck = [label for label, (pct, _mean, _below) in curves.items()
             if np.max(pct, initial=0.0) <= 0]
    if len(stuck) == len(curves):   # nothing to hide under: each drawn as it is
        stuck = []
    twins = curve_labels({label: np.concatenate([np.ravel(v) for v in curve])
                          for label, curve in curves.items() if label not in stuck})
    approx = False
    for i, (label, (pct, mean, below)) in enumerate(curves.items()):
        col = colours[i % 10]
        if label in stuck:
            continue
        shown, dashed = twins[label]
        shown = "\n".join(title_lines(shown, _LEGEND_WIDTH))   # a --fabric spec's label
        ls = "--" if dashed else "-"
        axes[0].plot(pct, np.maximum(1 - np.asarray(mean), floor), color=col, marker=".",
                     lw=1.2, label=shown, drawstyle="steps-post", ls=ls)
        axes[1].plot(pct, np.maximum(below, floor), color=col, marker=".", lw=1.2,
                     label=shown, drawstyle="steps-post", ls=ls)
        if past[label].any():   # the closed form's fallback: an approximation
            approx = True
            on = past[label]
            for ax, y in ((axes[0], 1 - np.asarray(mean)), (axes[1], np.asarray(below))):
                ax.plot(np.asarray(pct)[on], np.maximum(y[on], floor), ls="none",
                        marker="o", ms=6, mfc="none", mec=col, mew=1.0)
    for label, pct, mean, below in marks:
        if label in stuck:   # its curve is not drawn: a mark would sit by another's
            continue
        axes[0].plot(pct, max(1 - mean, floor), "kx", ms=7)
        axes[1].plot(pct, max(below, floor), "kx", ms=7)
    axes[1].axhline(1 - quantile, color="#c44e52", ls="--", lw=1,
                    label=f"target: below {percent(threshold)} at most {percent(1 - quantile)} of time")
    for ax, ylab in ((axes[0], "unavailability (1 - mean capacity)"),
                     (axes[1], f"share of time below {percent(threshold)} capacity")):
        ax.set_yscale("log")
        ax.set_xlabel("spares (% of the cluster's GPUs)", fontsize=8)
        ax.set_ylabel(ylab, fontsize=8)
    # the labels not drawn in lines that fit across the figure (a --fabric spec is a
    # label of hundreds of characters)
    note = title_lines(f"not drawn: {', '.join(stuck)}, whose spares reach no GPU (no free "
                       "port to wire one)", _title_width(fig.get_figwidth(), 10)) if stuck else []
    if approx:
        note += title_lines("o: past the spare chain's limit, the closed form an approximation "
                            "(a fallback)", _title_width(fig.get_figwidth(), 10))
    fig.suptitle("\n".join(["Spares against availability (closed forms"
                            + ("; x: this run's Monte Carlo)" if marks else ")"), *note]),
                 fontsize=10)
    set_margins(fig, bottom=0.5, top=0.45 + 0.2 * len(note), left=0.75, right=0.1,
                wspace=0.2)
    for ax in axes:
        for axis in "xy":
            static_ticks(ax, axis, labelsize=7, grid_alpha=0.3)
    fit_inside(fig, [axes[0].yaxis.label])
    axes[1].legend(fontsize=7, frameon=False)
    save_figure(fig, path)
