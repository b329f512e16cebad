"""The result of a sweep: its rows, parameters, curves, table, CSV and JSON.

:class:`SweepRow` is the best configuration of one scenario x model x phase at a point of
:func:`netmodel.study.sweep.run_sweep`; :class:`SweepResult` holds them with the parameters
swept, their curves and crossings (:mod:`netmodel.study.sweep_curves`), its table and notes
(:mod:`netmodel.study.sweep_notes`).

>>> r = _example([("a", [2.0, 1.0, 0.5]), ("b", [1.0, 1.0, 1.0])])
>>> r.metric, r.curve("b", "M", "decode")[1].tolist()
('tokens_per_s_per_sm', [1.0, 1.0, 1.0])
>>> r.columns()[3:6]
('label', 'scenario', 'adjust.latency_scale')
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from netmodel.study import sweep_curves, sweep_notes
from netmodel.study.rows import FabricRow, RowsResult, key
from netmodel.study.sweep_curves import COINCIDENT
from netmodel.study.sweep_params import SweepParam
from netmodel.study.sweep_values import COST


@dataclass(frozen=True, kw_only=True)
class SweepRow(FabricRow):
    """Best configuration of one model x scenario x phase at one point of the sweep."""

    label: str = key()       #: ``scenario@gpu``
    scenario: str = key()
    x: float = key()         #: the first parameter's value (its column is named by its path)
    y: float | None = key(default=None)  #: the second parameter's value (None with one)


@dataclass(frozen=True, eq=False)
class SweepResult(RowsResult):
    """Rows of the sweep and the parameters swept."""

    rows: tuple[SweepRow, ...] = ()
    settings: dict = field(default_factory=dict)
    params: tuple[SweepParam, ...] = ()
    labels: tuple[str, ...] = ()

    ROW = SweepRow

    @property
    def metric(self) -> str:
        """What the curves show: ``usd_per_mtoken`` (lower is better) when a cost
        parameter is swept, else ``tokens_per_s_per_sm`` (higher is better)."""
        return "usd_per_mtoken" if any(p.path.startswith(COST) for p in self.params) \
            else "tokens_per_s_per_sm"

    @property
    def higher_is_better(self) -> bool:
        return self.metric != "usd_per_mtoken"

    def panels(self) -> list[tuple]:
        """Every (model, phase, second parameter's value) whose curves the results hold, in
        the order tables and figures take them (``y`` None with one parameter)."""
        ys = self.params[1].values if len(self.params) > 1 else (None,)
        return [(m, ph, y) for m in self.models for ph in self.phases for y in ys]

    def curve(self, label: str, model: str, phase: str,
              y: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(x, metric)`` of one scenario (NaN where infeasible or not priced)."""
        rows = [r for r in self.rows if (r.label, r.model, r.phase, r.y) == (label, model,
                                                                            phase, y)]
        values = [getattr(r, self.metric) if r.feasible else None for r in rows]
        return (np.array([r.x for r in rows]),
                np.array([np.nan if v is None else v for v in values], dtype=float))


    def crossovers(self) -> list[dict]:
        """:func:`~netmodel.study.sweep_curves.crossovers` of this sweep."""
        return sweep_curves.crossovers(self)

    def coinciding(self, rtol: float = COINCIDENT) -> list[dict]:
        """:func:`~netmodel.study.sweep_curves.coinciding` of this sweep."""
        return sweep_curves.coinciding(self, rtol)

    def no_crossings(self) -> list[dict]:
        """:func:`~netmodel.study.sweep_curves.no_crossings` of this sweep."""
        return sweep_curves.no_crossings(self)

    def no_crossing_lines(self) -> list[str]:
        """:func:`~netmodel.study.sweep_notes.no_crossing_lines` of this sweep."""
        return sweep_notes.no_crossing_lines(self)

    def unchanged(self) -> list[dict]:
        """:func:`~netmodel.study.sweep_curves.unchanged` of this sweep."""
        return sweep_curves.unchanged(self)

    def unchanged_lines(self) -> list[str]:
        """:func:`~netmodel.study.sweep_notes.unchanged_lines` of this sweep."""
        return sweep_notes.unchanged_lines(self)

    def columns(self) -> tuple[str, ...]:
        """The row columns, ``x`` and ``y`` named by the parameters' paths (``y`` only
        with a second parameter)."""
        names = {"x": self.params[0].path,
                 "y": self.params[1].path if len(self.params) > 1 else None}
        return tuple(names.get(c, c) for c in super().columns() if names.get(c, c))

    def to_dicts(self) -> list[dict]:
        out = []
        unset = self.unset_columns()
        for r in self.rows:
            d = r.to_dict(unset)
            x, y = d.pop("x"), d.pop("y")
            out.append({**d, self.params[0].path: x,
                        **({self.params[1].path: y} if len(self.params) > 1 else {})})
        return out


    def refused_lines(self) -> list[str]:
        """:func:`~netmodel.study.sweep_notes.refused_lines` of this sweep."""
        return sweep_notes.refused_lines(self)

    def table(self) -> str:
        """:func:`~netmodel.study.sweep_notes.table` of this sweep."""
        return sweep_notes.table(self)

    def to_json(self, indent: int | None = 2) -> str:
        """``{"sweep", "params", "scenarios", "settings", "crossovers", "rows"}``, and
        ``"unchanged"`` (:meth:`unchanged`) where the parameter moves some curve not at
        all."""
        unchanged = self.unchanged()
        unset = self.unset_columns()
        return json.dumps({"sweep": [p.path for p in self.params],
                           "params": [asdict(p) for p in self.params],
                           "scenarios": list(self.labels), "settings": self.settings,
                           "crossovers": self.crossovers(),
                           **({"unchanged": unchanged} if unchanged else {}),
                           "rows": [r.to_dict(unset) for r in self.rows]}, indent=indent)


def _example(curves: list[tuple[str, list[float]]], xs: tuple[float, ...] = (1.0, 2.0, 3.0)
             ) -> SweepResult:
    """A :class:`SweepResult` of tokens/s/SM ``curves`` ``[(label, values), ...]`` along
    ``adjust.latency_scale`` = ``xs`` (model ``M``, decode), for the examples."""
    rows = [SweepRow(label=lab, scenario=lab, gpu="G", model="M", phase="decode", x=x,
                     feasible=True, tp=1, batch=1, latency_name="tbt", latency_s=0.01,
                     latency_limit_s=0.05, tokens_per_s_per_sm=v, network_share=0.5)
            for lab, vals in curves for x, v in zip(xs, vals, strict=True)]
    return SweepResult(rows=tuple(rows), params=(SweepParam("adjust.latency_scale", xs),),
                       labels=tuple(lab for lab, _ in curves))
