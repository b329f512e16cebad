"""How the curves of a sweep lie against one another: crossings, coinciding curves, scenarios
that never cross the baseline, and curves the swept parameter does not move.

Where one scenario overtakes another (:func:`crossovers`, placed by :func:`_crossings`),
curves drawn one over the other (:func:`coinciding`), scenarios that never cross the baseline
(:func:`no_crossings`) and curves the swept parameter does not move (:func:`unchanged`): each
takes a :class:`~netmodel.study.sweep_result.SweepResult` and reads its curves
(:meth:`~netmodel.study.sweep_result.SweepResult.curve`); its methods of the same names call
them.

>>> from netmodel.study.sweep_result import _example
>>> r = _example([("a", [2.0, 1.0, 0.5]), ("b", [1.0, 1.0, 1.0])])
>>> [(c["before"], c["after"], c["x"]) for c in crossovers(r)]
[('a', 'b', 2.0)]
"""

from __future__ import annotations

import numpy as np

from netmodel.study import figure_kit

#: Curves of one panel within this share of each other at every swept value (feasible at
#: the same values) coincide in the figure: a line 1-2.2 points wide on a panel some 180
#: points tall from 0 covers about 1% of its height, so the later one hides the earlier
#: (:meth:`SweepResult.coinciding`; sweep.png names them and draws them in turns).
COINCIDENT = 0.01


def _crossings(ca, cb, la, lb, where, metric: str = "tokens_per_s_per_sm",
               higher_is_better: bool = True) -> list[dict]:
    """Sign changes of ``ca - cb`` between neighbouring points where both are feasible
    (the leader has the higher metric, or the lower one when lower is better), placed
    where the two curves meet between the points. A cost (``usd_per_mtoken``) is taken as
    a straight line in the swept value, which it is in a price, a power or an energy
    figure (the best configuration does not depend on them), so the crossing is exact
    there; in ``lifetime``, ``utilization``, a yield figure or a parameter other than a
    cost's it is an estimate between the two points (log-linear interpolation put
    lite-ocs's OCS-port crossing with lite-flat, between 100 and 1,000 USD, at 338 where
    the lines meet at 576). tokens/s/SM is taken as a straight line in the space its
    figure draws (:func:`~netmodel.study.figure_kit.log_axis`): log-linearly on a log
    axis, linearly on a linear one, so a crossing is where the drawn lines meet. Curves
    that meet at a swept value and part on the side they came from, or meet at the last
    one, touch without crossing: no crossover (the next value where both are feasible and
    differ decides).

    >>> from netmodel.study.sweep_result import _example
    >>> r = _example([("a", [2.0, 1.0, 2.0]), ("b", [1.0, 1.0, 1.0])])
    >>> r.crossovers()
    []
    >>> [(c["before"], c["after"], c["x"]) for c in
    ...  _example([("a", [2.0, 1.0, 0.5]), ("b", [1.0, 1.0, 1.0])]).crossovers()]
    [('a', 'b', 2.0)]
    """
    x, va = ca
    vb = cb[1]
    d = (va - vb) if higher_is_better else (vb - va)
    out = []
    linear = metric == "usd_per_mtoken" or not figure_kit.log_axis(x)
    for k in range(1, len(x)):
        d0, d1 = d[k - 1], d[k]
        if not (np.isfinite(d0) and np.isfinite(d1)) or d0 == 0 or d0 * d1 > 0:
            continue
        if d1 == 0:   # they meet at x[k]: a crossing only if the next that differs is across
            after = d[k + 1:][np.isfinite(d[k + 1:]) & (d[k + 1:] != 0)]
            if not len(after) or after[0] * d0 > 0:
                continue
        t = d0 / (d0 - d1)
        x0, x1 = x[k - 1], x[k]
        xc = x0 + t * (x1 - x0) if linear else x0 * (x1 / x0) ** t
        value = va[k - 1] + t * (va[k] - va[k - 1])
        before, after = (la, lb) if d0 > 0 else (lb, la)
        out.append({**where, "x": float(xc), metric: float(value),
                    "before": before, "after": after})
    return out


def crossovers(result) -> list[dict]:
    """Where one scenario overtakes another along the first parameter: for every pair
    of scenarios whose :attr:`metric` difference changes sign between two neighbouring
    values, ``{model, phase, y, x, METRIC, before, after}`` (``METRIC`` the
    :attr:`metric`'s name, ``tokens_per_s_per_sm`` or ``usd_per_mtoken``; ``before``
    led below ``x``, ``after`` leads above it), with ``x`` and the value there
    interpolated (a cost linearly in ``x``, exact where it is a price; tokens/s/SM
    in the space its figure draws, log-linearly on a log axis: :func:`_crossings`)."""
    out = []
    for model, phase, y in result.panels():
        curves = [result.curve(lab, model, phase, y) for lab in result.labels]
        for a in range(len(curves)):
            for b in range(a + 1, len(curves)):
                out += _crossings(curves[a], curves[b], result.labels[a],
                                  result.labels[b], dict(model=model, phase=phase,
                                                       y=y), result.metric,
                                  result.higher_is_better)
    return out


def coinciding(result, rtol: float = COINCIDENT) -> list[dict]:
    """Curves drawn one over the other: per model x phase (x second value), each group
    of two or more scenarios feasible at the same values whose metric is within
    ``rtol`` of the group's first (in :attr:`labels` order) at every one of them,
    ``{model, phase, y, labels, spread, rtol}`` (``spread``: the largest relative
    difference, ``|a - b| / max(|a|, |b|)``, from the first; 0 where they are equal).

    >>> from netmodel.study.sweep_result import _example
    >>> r = _example([("a", [2.0, 1.5, 1.0]), ("b", [2.0, 1.5, 1.0]),
    ...               ("c", [2.0, 1.5, 1.005])])
    >>> [(g["labels"], round(g["spread"], 6)) for g in r.coinciding()]
    [(('a', 'b', 'c'), 0.004975)]
    >>> r.coinciding(rtol=0.001)[0]["labels"]
    ('a', 'b')
    """
    out = []
    for model, phase, y in result.panels():
        curves = {lab: result.curve(lab, model, phase, y)[1] for lab in result.labels}
        taken: set[str] = set()
        for lab in result.labels:
            if lab in taken:
                continue
            a = curves[lab]
            ok = np.isfinite(a)
            group, spread = [lab], 0.0
            for other in result.labels:
                b = curves[other]
                if other == lab or other in taken or len(b) != len(a) \
                        or not ok.any() or (np.isfinite(b) != ok).any():
                    continue
                top = np.maximum(np.abs(a[ok]), np.abs(b[ok]))
                rel = np.abs(a[ok] - b[ok]) / np.where(top > 0, top, 1.0)
                if rel.max() <= rtol:
                    group.append(other)
                    spread = max(spread, float(rel.max()))
            if len(group) > 1:
                taken.update(group)
                out.append({"model": model, "phase": phase, "y": y,
                            "labels": tuple(group), "spread": spread,
                            "rtol": rtol})
    return out


def no_crossings(result) -> list[dict]:
    """The scenarios whose curve never crosses the first scenario's (the baseline,
    ``labels[0]``): per model x phase (x second value) and other scenario feasible
    together with it at two or more values and on one side of it at every one of them,
    ``{model, phase, y, above, below, lo, hi, points, closest}``: ``above`` has the
    higher :attr:`metric` from ``lo`` to ``hi`` (the first and last of the ``points``
    values where both are feasible); ``closest`` is ``(x, above's value, below's)``
    where they are nearest, relatively. Crossings are :meth:`crossovers`; equal curves
    are neither.

    >>> from netmodel.study.sweep_result import _example
    >>> r = _example([("a", [2.0, 1.5, 1.2]), ("b", [1.0, 1.1, 1.0]),
    ...               ("c", [3.0, 1.0, 0.5])])
    >>> [(n["above"], n["below"], n["closest"]) for n in r.no_crossings()]
    [('a', 'b', (3.0, 1.2, 1.0))]
    """
    out = []
    base = result.labels[0]
    for model, phase, y in result.panels():
        x, a = result.curve(base, model, phase, y)
        for lab in result.labels[1:]:
            b = result.curve(lab, model, phase, y)[1]
            if len(b) != len(a):
                continue
            ok = np.isfinite(a) & np.isfinite(b)
            d = a[ok] - b[ok]
            if ok.sum() < 2 or not ((d > 0).all() or (d < 0).all()):
                continue
            hi_v, lo_v = (a, b) if d[0] > 0 else (b, a)
            above, below = (base, lab) if d[0] > 0 else (lab, base)
            xs, top, bottom = x[ok], hi_v[ok], lo_v[ok]
            k = int(np.argmin((top - bottom) / np.abs(top)))
            out.append({"model": model, "phase": phase, "y": y, "above": above,
                        "below": below, "lo": float(xs[0]), "hi": float(xs[-1]),
                        "points": int(ok.sum()),
                        "closest": (float(xs[k]), float(top[k]),
                                    float(bottom[k]))})
    return out


def unchanged(result) -> list[dict]:
    """The curves the first parameter does not move: ``{label, model, phase, y, value,
    points, total}`` (feasible at ``points`` of the ``total`` values) for each scenario
    x model x phase (x second value) feasible at two or more values of it with the same
    metric at all of them (a parameter its best configurations do
    not depend on, e.g. ``fabric.nic_bandwidth`` where TP fits in a scale-up domain),
    with the range of USD per million tokens there when that moves instead."""
    out = []
    for model, phase, y in result.panels():
        for lab in result.labels:
            every = result.curve(lab, model, phase, y)[1]
            v = every[np.isfinite(every)]
            if len(v) < 2 or v.max() - v.min() > 1e-12 * abs(v.max()):
                continue
            # points: the values it is feasible at, of total swept
            d = {"label": lab, "model": model, "phase": phase, "y": y,
                 "value": float(v[0]), "points": len(v), "total": len(every)}
            cost = [r.usd_per_mtoken for r in result.rows if r.feasible
                    and (r.label, r.model, r.phase, r.y) == (lab, model, phase, y)
                    and r.usd_per_mtoken is not None]
            if result.metric != "usd_per_mtoken" and cost and \
                    max(cost) - min(cost) > 1e-12 * max(cost):
                d["usd_per_mtoken"] = [min(cost), max(cost)]
            out.append(d)
    return out
