"""The words of a sweep's table: the table itself and its notes, written from the numbers.

:func:`table` (:meth:`~netmodel.study.sweep_result.SweepResult.table`) ends with a note where
no scenario crosses the baseline in the swept range (:func:`no_crossing_lines`), where the
parameter moves a curve not at all (:func:`unchanged_lines`) and where a point could not be
built (:func:`refused_lines`), with the swept values written apart
(:func:`~netmodel.study.sweep_params._written`).

>>> from netmodel.study.sweep_result import _example
>>> print(table(_example([("a", [2.0, 1.0, 0.5]), ("b", [1.0, 1.0, 1.0])])))
M, decode: tokens/s/SM by adjust.latency_scale
            1         2         3
a       2.000     1.000     0.500
b       1.000     1.000     1.000
M, decode: b overtakes a at adjust.latency_scale = 2
note: M, decode: adjust.latency_scale moves no point of b (1.000 tokens/s/SM at every buildable value): its best configuration's step time does not depend on it
"""

from __future__ import annotations

from netmodel.study.rows import mtp_note
from netmodel.study.sweep_params import _written

#: How each metric is named in tables and figures.
_METRIC_NAMES = {"tokens_per_s_per_sm": "tokens/s/SM", "usd_per_mtoken": "USD per million tokens"}
#: The key of a sweep's note for a point whose cost values were refused (:func:`~netmodel.study.sweep_pricing._row`).
_COST_AT = "cost not computed at "


def no_crossing_lines(result) -> list[str]:
    """The :meth:`no_crossings` in words, so that a sweep in which a scenario never
    crosses the baseline says so: a note per model x phase (x second value) and side
    of the baseline (pairs over the same values together), naming where the nearest
    pair comes closest."""
    from netmodel.study.summary_words import and_list

    p0 = result.params[0]
    k, unit = p0.display()
    unit = f" {unit}" if unit else ""
    d = p0.digits()
    base = result.labels[0]
    groups: dict[tuple, list[dict]] = {}
    for n in result.no_crossings():
        groups.setdefault((n["model"], n["phase"], n["y"], n["above"] == base, n["lo"],
                           n["hi"], n["points"]), []).append(n)
    lines = []
    for (model, phase, y, over, lo, hi, points), ns in groups.items():
        extra = "" if y is None else f", {result.params[1].show(y)}"
        others = and_list(n["below" if over else "above"] for n in ns)
        who = f"{base} stays above {others}" if over else \
            f"{others} {'stays' if len(ns) == 1 else 'stay'} above {base}"
        total = len(result.curve(base, model, phase, y)[0])
        where = "" if points == total else \
            f" (at the {points} of {total} values where both are feasible)"
        near = min(ns, key=lambda n: (n["closest"][1] - n["closest"][2])
                   / abs(n["closest"][1]))
        cx, va, vb = near["closest"]
        which = "" if len(ns) == 1 else f", {near['below' if over else 'above']},"
        lines.append(f"note: {model}, {phase}{extra}: no crossing in the swept range: "
                     f"{who} from {p0.path} = {_written(lo * k, d)} to {_written(hi * k, d)}{unit}"
                     f"{where} (closest{which} at {_written(cx * k, d)}{unit}: {va:.3f} vs "
                     f"{vb:.3f} "
                     f"{_METRIC_NAMES[result.metric]})")
    return lines


def unchanged_lines(result) -> list[str]:
    """A note per curve of :meth:`unchanged`, so that a flat line is never silent."""
    p0, lines = result.params[0], []
    for u in result.unchanged():
        extra = "" if u["y"] is None else f", {result.params[1].show(u['y'])}"
        what = _METRIC_NAMES[result.metric]
        # where it is infeasible at some values the parameter does move it (1 OCS port:
        # nothing fits): the note counts the values it holds at
        at = "at every buildable value" if u["points"] == u["total"] else \
            f"at the {u['points']} of {u['total']} values where it is feasible"
        line = (f"note: {u['model']}, {u['phase']}{extra}: {p0.path} moves no point of "
                f"{u['label']} ({u['value']:.3f} {what} {at}): "
                + ("its cost per token does not depend on it"
                   if result.metric == "usd_per_mtoken"
                   else "its best configuration's step time does not depend on it"))
        if "usd_per_mtoken" in u:
            line += f" (USD per million tokens moves: {_cost_moves(result, u)})"
        lines.append(line)
    return lines


def _cost_moves(result, u: dict) -> str:
    """How a flat curve's USD per million tokens moves, in the swept order: its cost at the
    first and the last value it is priced at, named (the least and the most, written
    first, read as a cost rising with the parameter where it fell), and its range too
    where an end is not an extreme."""
    p0 = result.params[0]
    k, unit = p0.display()
    unit, d = f" {unit}" if unit else "", p0.digits()
    lo, hi = u["usd_per_mtoken"]
    priced = sorted((r.x, r.usd_per_mtoken) for r in result.rows
                    if r.feasible and r.usd_per_mtoken is not None
                    and (r.label, r.model, r.phase, r.y) == (u["label"], u["model"],
                                                             u["phase"], u["y"]))
    (x0, c0), (x1, c1) = priced[0], priced[-1]
    words = (f"{c0:.3f} to {c1:.3f} from {p0.path} = {_written(x0 * k, d)} to "
             f"{_written(x1 * k, d)}{unit}")
    if {min(c0, c1), max(c0, c1)} != {lo, hi}:
        words += f"; {lo:.3f} to {hi:.3f} between"
    return words


def refused_lines(result) -> list[str]:
    """A note per scenario and reason a point could not be built at (its ``-`` in the
    table; the reason is in the CSV and JSON rows), once whatever the models and
    phases, with the values it was refused at.

    >>> from dataclasses import replace
    >>> from netmodel.study.sweep_result import _example
    >>> r = _example([("a", [1.0, 2.0, 3.0])])
    >>> r = replace(r, rows=r.rows[:2] + (replace(r.rows[2], feasible=False,
    ...     reason="fabric refused: ring: n must be an integer >= 2, got 1"),))
    >>> r.refused_lines()
    ['note: a: no point at adjust.latency_scale = 3: fabric refused: ring: n must be an integer >= 2, got 1']
    """
    refused: dict[tuple[str, str], list[str]] = {}
    p0, k, d = result.params[0], result.params[0].display()[0], result.params[0].digits()
    for r in result.rows:
        if r.feasible or not r.reason.startswith("fabric refused"):
            continue
        at = _written(r.x * k, d) + ("" if r.y is None else
                                     f" ({result.params[1].show(r.y)})")
        at_list = refused.setdefault((r.label, r.reason), [])
        if at not in at_list:
            at_list.append(at)
    return [f"note: {label}: no point at {p0.path} = {', '.join(at)}: {reason}"
            for (label, reason), at in refused.items()]


def table(result) -> str:
    """A plain-text table: tokens/s/SM per scenario along the first parameter, then
    the crossovers, and why a point could not be built (:meth:`refused_lines`)."""
    p0 = result.params[0]
    k, unit = p0.display()
    d = p0.digits()
    name = f"{p0.path} ({unit})" if unit else p0.path
    lines = []
    for model, phase, y in result.panels():
        extra = "" if y is None else f", {result.params[1].show(y)}"
        lines.append(f"{model}, {phase}{extra}: {_METRIC_NAMES[result.metric]} "
                     f"by {name}")
        xs = result.curve(result.labels[0], model, phase, y)[0]
        width = max(len(lab) for lab in result.labels) + 2
        cells = [[_written(x * k, d) for x in xs]] + [
            ["-" if v_ != v_ else f"{v_:.3f}" if abs(v_) < 1e9 else f"{v_:.4g}"
             for v_ in result.curve(lab, model, phase, y)[1]]
            for lab in result.labels]
        # 10 characters a column, wider where a value needs it (USD per
        # million tokens at a price swept over decades: 124144.292) so that
        # neighbouring values never run together
        col = max([10] + [len(c) + 2 for row in cells for c in row])
        lines.append(" " * width + "".join(f"{c:>{col}}" for c in cells[0]))
        for lab, row in zip(result.labels, cells[1:], strict=True):
            lines.append(f"{lab:<{width}}" + "".join(f"{c:>{col}}" for c in row))
    for c in result.crossovers():
        extra = "" if c["y"] is None else f", {result.params[1].show(c['y'])}"
        lines.append(f"{c['model']}, {c['phase']}{extra}: {c['after']} overtakes "
                     f"{c['before']} at {p0.path} = {_written(c['x'] * k, d)} {unit}".rstrip())
    lines += result.no_crossing_lines()
    lines += result.unchanged_lines()
    lines += result.refused_lines()
    capped = result.batch_limit_line(" at some points")
    if capped:
        lines.append(capped)
    note = mtp_note(result.settings.get("options", {}))
    if note is not None:
        lines.append(note)
    lines += [f"note: {k}: {v}" for k, v in result.settings.get("not_computed", {}).items()
              if k.startswith(("schedule of ", _COST_AT))]
    return "\n".join(lines)
