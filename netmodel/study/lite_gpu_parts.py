"""The blast-radius and the power-and-cost parts of ``netmodel study lite-gpu``.

Both reuse what the fabric comparison found: each shipped scenario with its own GPU
(``h100-dgx`` on the H100, the Lite fabrics on the plain Lite) serving the study's first
model, with the best configuration the comparison's search picked.

* :func:`reliability_part`: per scenario, the blast radius of a GPU failure (SMs out of
  service in hardware and in software), availability without spares and with the reference
  pool, and the smallest pool that keeps 99% of the capacity 99.9% of the time
  (:func:`netmodel.study.availability.reliability_summary`, closed forms), plus the curve
  of availability against the spare pool for the figure.
* :func:`cost_part`: per scenario and phase, the :class:`~netmodel.study.cost.CostSummary`
  (capex and power split, tokens/s/W, USD per million tokens) and the yield curves of die
  cost per good SM against area with the H100 and the Lite marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.errors import UserError

__all__ = ["CostPart", "ReliabilityPart", "cost_part", "own_gpu_rows", "reliability_part"]


def own_gpu_rows(fab, model: str, phase: str) -> list:
    """The comparison's (row, FabricSearch) pairs of each scenario with its own GPU."""
    from netmodel.study.scenarios import shipped_scenarios

    shipped = shipped_scenarios()
    out = []
    for row, found in zip(fab.rows, fab.searches, strict=True):
        own = shipped.get(row.scenario)
        if (row.model, row.phase) == (model, phase) and own is not None \
                and own.gpu == row.gpu:
            out.append((row, found))
    return out


@dataclass(frozen=True, eq=False)
class ReliabilityPart:
    """Reliability summaries (one per scenario), the spare curves of the figure and what
    could not be computed."""

    summaries: tuple = ()
    curves: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)

    def to_dicts(self) -> list[dict]:
        return [s.to_dict() for s in self.summaries]


def reliability_part(fab, model: str, phase: str = "decode", *, slo=None,
                     options=None) -> ReliabilityPart:
    """Blast radius and availability of each scenario with its own GPU (see the module
    docstring)."""
    from netmodel.study.availability import reliability_summary, spare_curve
    from netmodel.study.blast_radius import build_cluster

    out, curves, notes = [], {}, {}
    for row, found in own_gpu_rows(fab, model, phase):
        if not row.feasible:
            notes[row.label] = row.reason
            continue
        try:
            cluster = build_cluster(found.scenario, model, phase, search=found, slo=slo,
                                    options=options)
            summary = reliability_summary(found.scenario, model, phase, cluster=cluster,
                                          method="analytic")
            placement = summary.spares_needed_placement or summary.spare_placement
            curves[f"{row.label} ({placement})"] = spare_curve(cluster, placement)
            out.append(summary)
        except UserError as exc:
            notes[row.label] = str(exc)
    return ReliabilityPart(tuple(out), curves, notes)


@dataclass(frozen=True, eq=False)
class CostPart:
    """Cost summaries (scenario x phase), the yield curves and the H100 / Lite packages."""

    summaries: tuple = ()
    curves: dict = field(default_factory=dict)
    marks: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)


#: Defect densities (per cm^2) of the yield figure: TSMC N5's published 0.1 and a
#: pessimistic and an optimistic bracket (compute/data/economics.toml).
DEFECT_DENSITIES_PER_CM2 = (0.05, 0.1, 0.2)


def cost_part(fab, model: str, phases) -> CostPart:
    """Power and cost of each scenario with its own GPU in each phase, and the yield
    curves (see the module docstring)."""
    from compute.yield_model import package_cost, yield_curve
    from netmodel.study.cost import cost_summary

    out, notes = [], {}
    for phase in phases:
        for row, found in own_gpu_rows(fab, model, phase):
            if not row.feasible:
                continue
            try:
                out.append(cost_summary(found.scenario, model, phase, found.best))
            except UserError as exc:
                notes[row.label] = str(exc)
    curves = {f"D = {d:g}/cm^2": yield_curve(defect_density=d * 1e4)
              for d in DEFECT_DENSITIES_PER_CM2}
    marks = {}
    for name in ("H100-SXM", "Lite"):
        try:
            marks[name] = package_cost(name)
        except UserError as exc:
            notes[name] = str(exc)
    return CostPart(tuple(out), curves, marks, notes)
