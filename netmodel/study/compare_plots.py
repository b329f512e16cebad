"""Figures of ``netmodel compare`` (and of the fabric part of ``netmodel study lite-gpu``).
matplotlib is imported inside the functions (Agg backend), so importing this module costs
nothing.

* :func:`plot_compare_tokens`: tokens/s/SM of the best configuration per scenario, a panel
  per model (rows) and phase (columns); bars grouped by scenario, one colour per GPU type.
* :func:`plot_compare_split`: the step time (TTFT or TBT) of that configuration, stacked into
  compute, memory and network, per scenario.
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike
from typing import Any

from netmodel.study import figure_kit
from netmodel.study.figure_kit import (
    DPI,
    bars,
    figure_style,
    fitted_suptitle,
    label,
    legend_entries,
    plain_log_labels,
    pyplot,
    set_margins,
    static_ticks,
)

__all__ = ["gpu_colours", "plot_compare_split", "plot_compare_tokens", "plot_sweep"]

#: Colours of the resources in stacked bars.
RESOURCE_COLOURS = {"compute": "#4c72b0", "memory": "#dd8452", "network": "#c44e52"}
#: The MTP module's draft passes in a decode step with multi-token prediction.
MTP_COLOUR = "#8172b3"
#: Dash length (in line widths) of sweep lines that coincide, drawn in turns.
_DASH = 3.0


def gpu_colours(gpus: Iterable[str]) -> dict[str, tuple[float, ...]]:
    """A fixed colour per GPU type: the study's order first (H100 blue, then the Lite
    family), so every figure uses the same colour for the same GPU."""
    import matplotlib.pyplot as plt

    from netmodel.study.defaults import DEFAULT_GPUS

    palette = plt.get_cmap("tab10").colors
    order = list(DEFAULT_GPUS) + [g for g in gpus if g not in DEFAULT_GPUS]
    return {g: palette[i % 10] for i, g in enumerate(order)}


def _grid(plt, result, width, height):
    models, phases = result.models, result.phases
    fig, axes = plt.subplots(len(models), len(phases), squeeze=False, dpi=DPI,
                             figsize=(width * len(phases), height * len(models) + 1.2))
    return fig, axes, models, phases


def _title(phase, model, limit) -> str:
    from compute.phases import slo_text

    return f"{model}, {phase} ({slo_text(phase, limit)})"


@figure_style
def plot_compare_tokens(result: Any, path: str | PathLike[str]) -> None:
    """``compare_tokens_per_sm.png``: per panel (model x phase), a group of bars per scenario,
    one bar per GPU type, height = best tokens/s/SM under the SLO on that fabric; a black
    tick marks the same GPU with an ideal network (free collectives), a dashed line the
    baseline scenario; the number at a bar's foot is its ratio to the baseline (on a bar
    too short to hold it, and above its tick where the tick is close). An infeasible
    configuration is an x on the axis."""
    plt = pyplot()
    import numpy as np
    from matplotlib.transforms import ScaledTranslation

    names = list(dict.fromkeys(s.name for s in result.scenarios))
    gpus = list(dict.fromkeys(s.gpu for s in result.scenarios))
    colours = gpu_colours(gpus)
    per_name = {n: [s for s in result.scenarios if s.name == n] for n in names}
    most = max(len(v) for v in per_name.values())
    width = 0.84 / most
    n_bars = len(result.scenarios)
    fig, axes, models, phases = _grid(plt, result,
                                      min(8.0, 2.5 + 0.22 * n_bars + 0.35 * len(names)), 3.0)
    up = ScaledTranslation(0, 2 / 72, fig.dpi_scale_trans)   # 2 points above the anchor
    seen = set()
    for i, model in enumerate(models):
        for j, phase in enumerate(phases):
            ax = axes[i][j]
            rows = [r for r in result.rows if r.model == model and r.phase == phase]
            top = max([r.tokens_per_s_per_sm or 0 for r in rows]
                      + [r.ideal_tokens_per_s_per_sm or 0 for r in rows] + [1e-9])
            per_gpu: dict = {}      # gpu -> ([x], [height]); one artist per GPU
            ideal_x, ideal_y = [], []
            for g, name in enumerate(names):
                group = per_name[name]
                for k, s in enumerate(group):
                    x = g - width * (len(group) - 1) / 2 + k * width
                    r = result.row(model, s.label, phase)
                    if not r.feasible:
                        ax.plot(x, top * 0.02, marker="x", color=colours[s.gpu], ms=6)
                        continue
                    per_gpu.setdefault(s.gpu, ([], []))
                    per_gpu[s.gpu][0].append(x)
                    per_gpu[s.gpu][1].append(r.tokens_per_s_per_sm)
                    if r.ideal_tokens_per_s_per_sm:
                        ideal_x.append(x)
                        ideal_y.append(r.ideal_tokens_per_s_per_sm)
                    if r.vs_baseline is not None:
                        v = r.tokens_per_s_per_sm
                        tall = v > 0.14 * top  # room inside the bar
                        # a short bar's label sits on it, or above its ideal tick where the
                        # tick is close enough above the bar for the label to cross it (a
                        # label above a far tick read as the tick's)
                        tick = r.ideal_tokens_per_s_per_sm
                        near = tick is not None and v <= tick < v + 0.2 * top
                        label(ax, x, 0 if tall else tick if near else v,
                              f"{r.vs_baseline:.2f}", transform=ax.transData + up,
                              ha="center", va="bottom", rotation=90 if most > 2 else 0,
                              fontsize=6 if most > 2 else 7.5,
                              color="white" if tall else "black")
            if ideal_x:
                ix = np.array(ideal_x)
                ax.hlines(ideal_y, ix - width * 0.42, ix + width * 0.42, color="black", lw=1.2,
                          label="same GPU, ideal network" if "ideal" not in seen else None)
                seen.add("ideal")
            base = [r for r in rows if r.label == result.baseline and r.feasible]
            if base:
                ax.axhline(base[0].tokens_per_s_per_sm, color="0.35", ls="--", lw=1,
                           label=f"baseline {result.baseline}" if "base" not in seen
                           else None)
                seen.add("base")
            for gpu, (bx, by) in per_gpu.items():
                bars(ax, bx, by, width * 0.9, color=colours[gpu],
                     label=gpu if gpu not in seen else None)
                seen.add(gpu)
            ax.set_xlim(-0.6, len(names) - 0.4)
            ax.set_ylim(0, top * 1.12)
            ax.set_axisbelow(True)
            ax.set_title(_title(phase, model, rows[0].latency_limit_s), fontsize=9, y=1.0)
            if j == 0:
                ax.set_ylabel("tokens/s per SM", fontsize=8)
    handles, labels = legend_entries(axes)
    ncol = max(1, min(len(labels), int(fig.get_figwidth() * len(phases) // 2.4)
                      if len(phases) == 1 else 8))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    extra = fitted_suptitle(fig, "Best tokens/s per SM under the SLO on each fabric\n(numbers "
                            f"at the bar's foot: ratio to {result.baseline})", fontsize=10)
    rows = -(-len(labels) // ncol)
    set_margins(fig, bottom=0.22 * rows + 0.5, top=0.75 + extra, hspace=0.5)
    for i, row in enumerate(axes):
        for ax in row:
            static_ticks(ax, "x", np.arange(len(names)),
                         names if i == len(models) - 1 else None, labelsize=8)
            static_ticks(ax, "y", labelsize=7, grid_alpha=0.3)
    figure_kit.save_figure(fig, path)


def _config_tag(r) -> str:
    """A bar's configuration, short: ``tp8``, ``tp3 pp8``, ``tp8 ep8 dp8`` (degrees of 1
    after TP left out), so a pipelined instance does not read as TP alone."""
    return " ".join([f"tp{r.tp}"] + [f"{k}{v}" for k, v in (
        ("pp", r.pp), ("ep", r.ep), ("dp", r.attention_dp)) if v > 1])


@figure_style
def plot_compare_split(result: Any, path: str | PathLike[str]) -> None:
    """``compare_time_split.png``: per panel (model x phase), one stacked bar per scenario:
    the best configuration's step time (TTFT for prefill; TBT, the time between one token
    and the next, for decode) split into the time bound by compute, by memory and by the
    network, in ms; the dashed red line is the SLO. Above each bar: its TP degree (with
    its pipeline stages, EP and attention DP where they are not 1) and batch. Scenarios are grouped by name with a gap between groups.
    With multi-token prediction a decode bar is the time per output token (TPOT, which
    the SLO checks): the step, the MTP module's draft passes on top, over the expected
    tokens a sequence emits a step."""
    plt = pyplot()
    import numpy as np

    labels = list(result.labels)
    names = [s.name for s in result.scenarios]
    xs, x = [], 0.0
    for k, _ in enumerate(labels):
        if k and names[k] != names[k - 1]:
            x += 0.6
        xs.append(x)
        x += 1.0
    fig, axes, models, phases = _grid(plt, result, max(5.0, 0.28 * len(labels) + 2.5), 3.3)
    # labels longer than 'tp16 b165' (pipeline stages, EP, DP) need more room above the SLO
    spread = any(_config_tag(r) != f"tp{r.tp}" for r in result.rows if r.feasible)
    mtp = any(getattr(r, "tpot_s", None) is not None for r in result.rows)
    drafted = False   # the draft passes' legend entry drawn
    for i, model in enumerate(models):
        for j, phase in enumerate(phases):
            ax = axes[i][j]
            rows = [result.row(model, lab, phase) for lab in labels]
            limit = rows[0].latency_limit_s * 1e3
            feasible = [(x, r) for x, r in zip(xs, rows, strict=True) if r.feasible]
            bad = [x for x, r in zip(xs, rows, strict=True) if not r.feasible]
            if bad:
                ax.plot(bad, [limit * 0.03] * len(bad), ls="none", marker="x", color="black",
                        ms=5)
            ax.axhline(limit, color="#c44e52", ls="--", lw=1,     # first in the legend
                       label="SLO" if (i, j) == (0, 0) else None)
            if feasible:
                fx = [x for x, _ in feasible]
                bottom = np.zeros(len(feasible))
                # per output token with MTP (the step over the expected tokens), else 1
                per = np.array([1.0 / (r.mtp_expected_tokens or 1.0) for _, r in feasible])
                for res in ("compute", "memory", "network"):   # one artist per resource
                    v = np.array([getattr(r, f"{res}_s") * 1e3 for _, r in feasible])
                    v = v * per   # exact without MTP (x 1.0)
                    bars(ax, fx, v, 0.8, bottom=bottom, color=RESOURCE_COLOURS[res],
                         label=f"{res}-bound" if (i, j) == (0, 0) else None)
                    bottom = bottom + v
                if mtp and phase == "decode":
                    v = np.array([(r.mtp_draft_s or 0.0) * 1e3 for _, r in feasible]) * per
                    bars(ax, fx, v, 0.8, bottom=bottom, color=MTP_COLOUR,
                         label="MTP draft passes" if not drafted else None)
                    drafted = True
                for x, r in feasible:
                    # above the SLO line, never across it (a feasible bar ends below it)
                    label(ax, x, limit * 1.04, f"{_config_tag(r)} b{r.batch}", ha="center",
                          va="bottom", rotation=90, fontsize=5.5)
            ax.set_ylim(0, limit * (1.75 if spread else 1.42))
            ax.set_xlim(xs[0] - 0.7, xs[-1] + 0.7)
            ax.set_axisbelow(True)
            ax.set_title(_title(phase, model, rows[0].latency_limit_s), fontsize=9, y=1.0)
            ax.set_ylabel(("TTFT" if phase == "prefill" else "TPOT" if mtp else "TBT")
                          + " (ms)", fontsize=8)
    handles, labs = axes[0][0].get_legend_handles_labels()
    if drafted and "MTP draft passes" not in labs:   # drawn in a decode panel only
        handles += [h for ax in (a for row in axes for a in row)
                    for h, lab in zip(*ax.get_legend_handles_labels(), strict=True)
                    if lab == "MTP draft passes"][:1]
        labs.append("MTP draft passes")
    fig.legend(handles, labs, loc="lower center", ncol=len(labs), fontsize=8, frameon=False)
    extra = fitted_suptitle(
        fig, "Step time of the best configuration, split by what bounds it (above each bar: "
        "its " + ("configuration, tp pp ep dp for TP, pipeline stages, EP and attention DP,"
                  if spread else "TP degree") + " and batch)", fontsize=10)
    longest = max(len(lab) for lab in labels)
    set_margins(fig, bottom=0.55 + 0.055 * longest, top=0.6 + extra, left=0.65, hspace=0.3)
    for i, row in enumerate(axes):
        for ax in row:
            static_ticks(ax, "x", xs, labels if i == len(models) - 1 else None, rotation=90,
                         labelsize=6.5)
            static_ticks(ax, "y", labelsize=7, grid_alpha=0.3)
    figure_kit.save_figure(fig, path)


@figure_style
def plot_sweep(result: Any, path: str | PathLike[str]) -> None:
    """``sweep.png``: tokens/s/SM of the best configuration (USD per million tokens when a
    cost parameter is swept) against the first swept
    parameter, a panel per model and phase, a line per scenario (colour and marker); with
    a second parameter, one line style per value of it. A star marks each point where one
    scenario overtakes another, named in the panel's corner (a line crossing lines drawn
    as one names them together at one star; at most six stars a panel, the rest
    counted). A key names what the lines are (colour, marker and style), except what is one
    for every line, said in the title instead: one line a panel (one scenario, one value of
    any second parameter) has no key entry, a second parameter of one value no style.
    Infeasible points are left out (the line stops) and marked by an x on the x
    axis in the line's colour; a point with no drawn neighbour (a lone buildable
    value) has a larger marker, so that another line's at the same place does not hide
    it (lines keep their thinning widths for the same reason). A cost is drawn
    as the straight line in the swept value it is between two points (curved on a log
    axis), so its lines meet at the star; tokens/s/SM straight between them."""
    plt = pyplot()
    import numpy as np

    p0 = result.params[0]
    ys = result.params[1].values if len(result.params) > 1 else (None,)
    one_y = len(ys) == 1 and ys[0] is not None   # a second parameter of one value
    alone = len(result.labels) * len(ys) == 1    # one line a panel: nothing for a key
    styles = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]
    palette = plt.get_cmap("tab10").colors
    colours = {lab: palette[k % 10] for k, lab in enumerate(result.labels)}
    panels = [(m, ph) for m in result.models for ph in result.phases]
    ncols = len(result.phases) if len(result.phases) > 1 else min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, dpi=DPI,
                             figsize=(5.2 * ncols, 3.7 * nrows + 1.1))
    cross = result.crossovers()
    xs_all = np.array(p0.values, dtype=float)
    logx = figure_kit.log_axis(xs_all)
    scale = p0.display()
    if result.metric == "usd_per_mtoken":  # a cost parameter: lower is better
        ylabel, title = "USD per million tokens", "Sweep: USD per million tokens as costs change"
    else:
        ylabel, title = "tokens/s per SM", "Sweep: best tokens/s per SM as the fabric changes"
    said = [result.labels[0]] if alone else []   # what every line is: in the title
    if one_y:
        said.append(result.params[1].show(ys[0]))
    if said:
        title += f" ({', '.join(said)})"
    # a scenario's name alone where no two lines share it (with --gpus several GPUs, the
    # whole label: "lite-ocs" would name two lines)
    names = [lab.split("@")[0] for lab in result.labels]
    short = (lambda lab: lab.split("@")[0]) if len(set(names)) == len(names) \
        else (lambda lab: lab)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)

    def drawn(curve: tuple) -> tuple:
        """A curve as drawn, and where its markers go (``None``: at every point)."""
        return _straight_in_x(*curve) if result.metric == "usd_per_mtoken" else (*curve, None)

    boxes = []  # (axes, corner box, curves) of the panels that name crossings
    infeasible = coincide = False
    # curves within COINCIDENT of each other at every value: one line would hide the
    # others, so a group's solid lines are drawn in turns (dashes of each colour, offset)
    # and the panel names the group
    groups = result.coinciding()
    together = {(g["model"], g["phase"], g["y"], lab): (i, g)
                for g in groups for i, lab in enumerate(g["labels"])}
    width = {lab: 2.2 - 1.4 * n / max(len(result.labels) - 1, 1)
             for n, lab in enumerate(result.labels)}
    for (model, phase), ax in zip(panels, axes.flat, strict=False):
        for n, lab in enumerate(result.labels):
            for k, y in enumerate(ys):
                x, v, at = drawn(result.curve(lab, model, phase, y))
                name = lab if y is None or one_y else f"{lab}, {result.params[1].show(y)}"
                style = dict(marker=markers[n % len(markers)], ms=4.5, mfc="none",
                             color=colours[lab], ls=styles[k % len(styles)], lw=width[lab],
                             alpha=1.0 if k < len(styles) else 0.5)
                label = name if ax is axes.flat[0] and not alone else None
                turn = together.get((model, phase, y, lab))
                if turn is not None and style["ls"] == "-":
                    i, g = turn
                    if label is not None:   # the legend keeps the line's own style
                        ax.plot([], [], **style, label=label)
                    label, m = None, len(g["labels"])
                    style.update(lw=width[g["labels"][0]],
                                 ls=(_DASH * i, (_DASH, _DASH * (m - 1))))
                ax.plot(x * scale[0], v, markevery=at, **style, label=label)
                cx, cv = result.curve(lab, model, phase, y)
                lone = _lone(cv)
                if lone.any():
                    ax.plot(cx[lone] * scale[0], cv[lone], marker=markers[n % len(markers)],
                            ms=9, mew=1.6, mfc="none", color=colours[lab], ls="none",
                            zorder=4)
                bad = [r.x for r in result.rows if (r.label, r.model, r.phase, r.y)
                       == (lab, model, phase, y) and not r.feasible]
                if bad:   # on the x axis, whatever the y scale
                    ax.plot(np.array(bad) * scale[0], [0.0] * len(bad), marker="x", ms=6,
                            mew=1.4, color=colours[lab], ls="none", clip_on=False, zorder=5,
                            transform=ax.get_xaxis_transform())
                    infeasible = True
        here = [c for c in cross if (c["model"], c["phase"]) == (model, phase)]
        stars = _named_crossings(here, result.labels, short, result.higher_is_better,
                                 scale, result.params[1].show if len(result.params) > 1
                                 else None)
        for c, _ in stars[:_NAMED]:
            ax.plot(c["x"] * scale[0], c[result.metric], marker="*", ms=10,
                    color="black", zorder=5, ls="none")
        lines = [f"* {note}" for _, note in stars[:_NAMED]]
        if len(stars) > _NAMED:
            more = len(stars) - _NAMED
            lines.append(f"{more} more crossing{'s' if more > 1 else ''}, not starred "
                         "(crossovers in sweep.json)")
        for g in groups:
            if (g["model"], g["phase"]) == (model, phase):
                sign, how = (" = ", "equal at every value") if g["spread"] <= 1e-9 else \
                    (" \u2248 ", f"within {g['spread'] * 100:.2g}% at every value")
                lines.append(sign.join(short(lab) for lab in g["labels"]) + f" ({how}"
                             + ("" if g["y"] is None
                                else f", {result.params[1].show(g['y'])}") + ")")
                coincide = True
        if lines:
            boxes.append((ax, ax.text(
                0.02, 0.03, "\n".join(lines), transform=ax.transAxes,
                fontsize=6.5, va="bottom", ha="left",
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="0.7", alpha=0.9)),
                [drawn(result.curve(lab, model, phase, y))[:2]
                 for lab in result.labels for y in ys]))
        if logx:
            ax.set_xscale("log")
            plain_log_labels(ax.xaxis)
        ax.set_xlabel(f"{p0.path}" + (f" ({scale[1]})" if scale[1] else ""), fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        shown = np.array([v for lab in result.labels for y in ys
                          for v in result.curve(lab, model, phase, y)[1] if v > 0])
        if result.metric == "usd_per_mtoken" and shown.size and shown.max() >= 10 * shown.min():
            ax.set_yscale("log")  # a price swept over decades moves the cost as much
        else:
            ax.set_ylim(bottom=0)
        lat = "TTFT" if phase == "prefill" else "TBT"
        ax.set_title(f"{model}, {phase} (best under the {lat} SLO)", fontsize=9, y=1.0)
    if cross:
        axes.flat[0].plot([], [], marker="*", ms=10, color="black", ls="none",
                          label="one scenario overtakes another")
    if infeasible:
        axes.flat[0].plot([], [], marker="x", ms=6, mew=1.4, color="0.3", ls="none",
                          label="x on the axis: no feasible point at that value")
    if coincide:
        axes.flat[0].plot([], [], color="0.3", lw=1.6, ls=(0, (_DASH, _DASH)),
                          label=f"dashed in turns: lines within {groups[0]['rtol']:.0%} of each "
                                "other at every value (named in the panel)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    rows = 0   # a key's rows: none where there is nothing to tell apart
    if labels:
        ncol = max(1, min(len(labels), int(fig.get_figwidth() // 3.2)))
        fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=7.5,
                   frameon=False)
        rows = -(-len(labels) // ncol)
    from netmodel.collectives.plot import title_lines

    heading = title_lines(title, int(fig.get_figwidth() * 11))   # ~11 characters an inch
    fig.suptitle("\n".join(heading), fontsize=10)
    set_margins(fig, bottom=0.17 * rows + 0.65, top=0.55 + 0.18 * (len(heading) - 1),
                left=0.6, hspace=0.5, wspace=0.22)
    for ax in axes.flat[:len(panels)]:
        for axis in "xy":
            static_ticks(ax, axis, labelsize=7, grid_alpha=0.3)
    for ax, box, curves in boxes:
        _clear_corner(fig, ax, box, curves)
    figure_kit.save_figure(fig, path)


_NAMED = 6   # crossings a panel stars and names at most; the rest are counted


def _named_crossings(here: list[dict], labels: tuple, short: Any, higher_is_better: bool,
                     scale: tuple, show: Any) -> list[tuple[dict, str]]:
    """A panel's crossings, one per star with its note: crossings of one line with lines
    drawn as one (same place as shown, same mover) share a star, their names joined
    (``lite-ocs overtakes lite-flat, lite-hier at 1.16 us``). The line later in
    ``labels`` is the subject, so a crossing with the baseline (the first) names the
    other line; those with the baseline come first, then the others in order of ``x``.

    >>> c = [dict(x=2.0, y=None, before="b", after="c"),
    ...      dict(x=2.0, y=None, before="a", after="c"),
    ...      dict(x=3.0, y=None, before="b", after="d"),
    ...      dict(x=5.0, y=None, before="c", after="a")]
    >>> lab = ("a", "b", "c", "d")
    >>> [n for _, n in _named_crossings(c, lab, str, True, (1.0, ""), None)]
    ['c overtakes a, b at 2', 'c falls below a at 5', 'd overtakes b at 3']
    """
    order = {lab: k for k, lab in enumerate(labels)}
    stars: dict[tuple, list] = {}
    for c in here:
        subject, other = sorted((c["before"], c["after"]), key=order.__getitem__,
                                reverse=True)
        verb = "overtakes" if c["after"] == subject else \
            "falls below" if higher_is_better else "rises above"
        at = f"{c['x'] * scale[0]:.3g} {scale[1]}".rstrip() + \
            ("" if c["y"] is None else f" ({show(c['y'])})")
        stars.setdefault((subject, verb, at, c["y"]), [c, []])[1].append(other)
    first = labels[0]
    out = [(c, f"{short(subject)} {verb} "
            f"{', '.join(short(o) for o in sorted(others, key=order.__getitem__))} at {at}",
            first not in others)
           for (subject, verb, at, _), (c, others) in stars.items()]
    out.sort(key=lambda t: (t[2], t[0]["x"] if t[2] else 0.0))
    return [(c, note) for c, note, _ in out]


def _lone(v: Any) -> Any:
    """Which points of a curve (values ``v``, NaN where none) have no drawn neighbour: no
    segment leads to them, only their marker shows.

    >>> import numpy as np
    >>> _lone(np.array([np.nan, 1.0, np.nan, 2.0, 3.0])).tolist()
    [False, True, False, False, False]
    """
    import numpy as np

    ok = np.isfinite(v)
    left = np.concatenate([[False], ok[:-1]])
    right = np.concatenate([ok[1:], [False]])
    return ok & ~left & ~right


def _straight_in_x(x: Any, v: Any, per: int = 24) -> tuple[Any, Any, list[int]]:
    """``(x, v)`` with ``per`` points per segment, linear in ``x``, and the indices of the
    original points: a cost is a straight line in the swept value between two points
    (:func:`netmodel.study.sweep_curves._crossings` places its crossings so), which on a log axis
    is no straight segment: drawn straight there, lite-ocs met lite-flat at 338 USD/port,
    off the star at 576 where the two lines meet. A segment with an infeasible end is left
    out, as before (NaN)."""
    import numpy as np

    if len(x) < 2:
        return x, v, list(range(len(x)))
    t = np.linspace(0.0, 1.0, per, endpoint=False)
    xs = [x[k] + t * (x[k + 1] - x[k]) for k in range(len(x) - 1)] + [x[-1:]]
    vs = [np.concatenate([v[k:k + 1], v[k] + t[1:] * (v[k + 1] - v[k])])
          for k in range(len(x) - 1)] + [v[-1:]]
    return (np.concatenate(xs).astype(float), np.concatenate(vs).astype(float),
            list(range(0, per * (len(x) - 1) + 1, per)))


def _clear_corner(fig: Any, ax: Any, box: Any, curves: list) -> None:
    """Move the corner ``box`` (drawn lower left) to the first corner of ``ax`` (lower
    left, lower right, upper right, upper left) that no curve crosses, or the one fewest
    cross: a cost that stays low all along ran under it (limits final)."""
    import numpy as np

    renderer = fig.canvas.get_renderer()
    ext = box.get_window_extent(renderer).transformed(ax.transAxes.inverted())
    w, h = ext.width + 0.02, ext.height + 0.03
    points = []
    for x, v in curves:
        ok = np.isfinite(v)
        for k in range(1, len(x)):
            if ok[k - 1] and ok[k]:  # the straight segment as drawn, sampled
                seg = ax.transData.transform(np.column_stack([x[k - 1:k + 1], v[k - 1:k + 1]]))
                t = np.linspace(0, 1, 25)[:, None]
                points.append(seg[0] + t * (seg[1] - seg[0]))
        points += [ax.transData.transform(np.column_stack([x[ok], v[ok]]))]
    if not points:
        return
    xy = ax.transAxes.inverted().transform(np.vstack(points))
    corners = [(0.02, 0.03, "left", "bottom"), (0.98, 0.03, "right", "bottom"),
               (0.98, 0.97, "right", "top"), (0.02, 0.97, "left", "top")]

    def hits(corner) -> int:
        cx, cy, ha, va = corner
        x0 = cx if ha == "left" else cx - w
        y0 = cy if va == "bottom" else cy - h
        return int(((xy[:, 0] >= x0 - 0.02) & (xy[:, 0] <= x0 + w + 0.02)
                    & (xy[:, 1] >= y0 - 0.02) & (xy[:, 1] <= y0 + h + 0.02)).sum())

    counts = [hits(c) for c in corners]
    best = next((c for c, n in zip(corners, counts, strict=True) if n == 0),
                corners[int(np.argmin(counts))])
    if best is not corners[0]:
        box.set_position(best[:2])
        box.set_ha(best[2])
        box.set_va(best[3])
