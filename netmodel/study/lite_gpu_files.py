"""The files of the Lite-GPU study (:mod:`netmodel.study.lite_gpu`): each part's CSV, JSON
and figures as ``{name: bytes or writer(path)}``, figures drawn ahead into bytes, and the
whole set written at once (:func:`compute.outputs.write_outputs`: all or nothing).
matplotlib is imported only when a figure is drawn."""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from compute.outputs import write_outputs
from compute.validate import flag
from netmodel.study.collector import GC_YOUNG, few_collections  # noqa: F401 - GC_YOUNG read by tests

#: :class:`netmodel.study.lite_gpu.FullStudy` and ``StudyResult`` (not imported: that
#: module imports this one)
_FullStudy = _StudyResult = Any

__all__ = ["draw_figures", "full_study_files", "study_files", "write_full_study", "write_study"]


@few_collections
def write_full_study(result: _FullStudy, out_dir: str | PathLike[str], *, plot: bool = True,
                     run: Mapping | None = None) -> list[Path]:
    """Every file of the study into ``out_dir``, all or nothing: ``study.*`` and
    ``tokens_per_sm.png`` (ideal networks), ``compare.*`` and its figures (fabrics),
    ``compare_paper.*`` (fabrics under the paper's assumption), ``sweep.*`` (per-hop
    latency), the other parts' files and ``summary.md`` (the findings). Figures the run
    already drew (``result.figures``) are written as drawn. ``run`` (what produced them)
    goes into the manifest."""
    files = full_study_files(result, plot=plot)
    for name, data in result.figures.items():
        if plot and callable(files.get(name)):
            files[name] = data
    return write_outputs(out_dir, files, run=run)


def full_study_files(result: _FullStudy, *, plot: bool = True, summary: bool = True) -> dict:
    """The study's files, ``{name: bytes or writer(path)}``, for the parts ``result``
    holds (``summary``: with ``summary.md``)."""
    flag("", "plot", plot), flag("", "summary", summary)
    from netmodel.study.compare import compare_files
    from netmodel.study.sweep import sweep_files

    files = study_files(result.ideal, plot=plot)
    if result.fabric is not None:
        files.update(compare_files(result.fabric, plot=plot))
    if result.paper is not None:
        files["compare_paper.csv"] = result.paper.to_csv().encode()
        files["compare_paper.json"] = result.paper.to_json().encode()
    if result.crossovers is not None and result.crossovers.rows:
        files["crossovers.csv"] = result.crossovers.to_csv().encode()
        files["crossovers.json"] = result.crossovers.to_json().encode()
        if plot:
            from netmodel.study.crossovers import plot_crossovers

            files["crossovers.png"] = \
                lambda path: plot_crossovers(result.crossovers, path)
    files.update(_serving_files(result.serving, plot))
    for name in ("moe", "packed"):
        part = getattr(result, name)
        if part is not None:
            files[f"compare_{name}.csv"] = part.to_csv().encode()
            files[f"compare_{name}.json"] = part.to_json().encode()
    files.update(_reliability_files(result.reliability, plot))
    files.update(_cost_files(result.cost, plot))
    if result.sweep is not None:
        files.update(sweep_files(result.sweep, plot=plot))
    if summary:   # imported only then: the processes that draw figures write no summary
        from netmodel.study.summary import summary_markdown

        files["summary.md"] = summary_markdown(result, written=set(files)).encode()
    return files


def draw_figures(files: dict) -> dict:
    """``{name: bytes}`` of the figures among ``files`` (``writer(path)`` entries), drawn
    here into a scratch folder."""
    import tempfile

    out = {}
    with tempfile.TemporaryDirectory(prefix="netmodel-figures-") as scratch:
        for name, writer in files.items():
            if callable(writer):
                path = Path(scratch) / name
                writer(str(path))
                out[name] = path.read_bytes()
    return out


def _reliability_files(part, plot: bool) -> dict:
    if part is None or not part.summaries:
        return {}
    from compute.results import rows_to_csv
    from netmodel.study.availability_kinds import QUANTILE, THRESHOLD
    from netmodel.study.reliability_summary import SUMMARY_COLUMNS

    files = {"reliability.csv": rows_to_csv(part.to_dicts(), SUMMARY_COLUMNS).encode(),
             "reliability.json": json.dumps({"reliability": part.to_dicts(),
                                             "not_computed": part.notes},
                                            indent=2).encode()}
    if plot and part.curves:
        def figure(path: str) -> None:
            from netmodel.study.reliability_plots import plot_spares

            plot_spares(part.curves, path, threshold=THRESHOLD, quantile=QUANTILE)

        files["reliability_spares.png"] = figure
    return files


def _serving_files(part, plot: bool) -> dict:
    if part is None or not part.results:
        return {}
    from compute.results import rows_to_csv

    rows = part.rows()
    # each result with its ratio to the baseline, as serving.csv has it (rows are in
    # the results' order)
    results = [r.to_dict() | {"vs_baseline": row["vs_baseline"]}
               for r, row in zip(part.results, rows, strict=True)]
    files = {"serving.csv": rows_to_csv(rows, tuple(rows[0])).encode(),
             "serving.json": json.dumps({"serving": results, "baseline": part.baseline},
                                        indent=2).encode()}
    if plot:
        from netmodel.study.lite_gpu_parts import plot_serving

        files["serving.png"] = lambda path: plot_serving(part, path)
    return files


def _cost_files(part, plot: bool) -> dict:
    if part is None or not part.summaries:
        return {}
    files = {"cost.json": json.dumps({"cost": [s.to_dict() for s in part.summaries],
                                      "not_computed": part.notes}, indent=2).encode()}
    if plot:
        from netmodel.study import cost_plots

        files["cost_per_scenario.png"] = \
            lambda path: cost_plots.plot_cost_per_scenario(part.summaries, path)
        files["cost_yield_vs_area.png"] = \
            lambda path: cost_plots.plot_yield_vs_area(part.curves, path, part.marks)
    return files


def write_study(study: _StudyResult, out_dir: str | PathLike[str], *, plot: bool = True
               ) -> list[Path]:
    """Write ``study.csv``, ``study.json`` and (with ``plot``) ``tokens_per_sm.png`` into
    ``out_dir`` atomically (see :func:`write_outputs`)."""
    return write_outputs(out_dir, study_files(study, plot=plot))


def study_files(study: _StudyResult, *, plot: bool = True) -> dict:
    """The files of the ideal-network study: ``{name: bytes or writer(path)}``."""
    flag("", "plot", plot)   # "no" drew the figure
    files = {"study.csv": study.to_csv().encode(), "study.json": study.to_json().encode()}
    if plot:
        def figure(path: str) -> None:
            from netmodel.study import lite_gpu_plots as study_plots

            study_plots.plot_tokens_per_sm(study, path)

        files["tokens_per_sm.png"] = figure
    return files
