"""The blast-radius part of ``study lite-gpu`` leaves out the spare curves only its figure
reads where no figure is drawn (``run_full_study(plot=False)``, the CLI's ``--no-plot``),
and its summaries are the same floats either way (h746)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study import availability
from netmodel.study.compare import run_compare
from netmodel.study.lite_gpu import run_full_study
from netmodel.study.lite_gpu_parts import reliability_part

MODEL = "Llama-3-70B"


@pytest.fixture(scope="module")
def compared():
    # two scenarios on their own GPUs: an electrical one and an optical one (circuits)
    return run_compare([MODEL], ["h100-dgx", "lite-ocs"], ["decode"])


def test_summaries_alike_without_curves(compared):
    # without the curves first: the closed forms' kept chains and moments (module-level,
    # last one kept) then meet the next scenario's summary in another order than with them
    lean = reliability_part(compared, MODEL, curves=False)
    full = reliability_part(compared, MODEL)
    assert lean.curves == {}
    assert len(full.curves) == len(full.summaries) == 2
    assert lean.to_dicts() == full.to_dicts()   # every figure, the same floats
    assert (lean.notes, lean.sms_per_gpu, lean.recovery) == \
        (full.notes, full.sms_per_gpu, full.recovery)
    for pct, mean, below, fallback in full.curves.values():
        assert pct[0] == 0.0 and np.all(np.diff(pct) > 0)
        assert np.all((0 < mean) & (mean <= 1)) and np.all((0 <= below) & (below <= 1))
        assert fallback.dtype == bool


def test_curves_flag_checked(compared):
    with pytest.raises(UserError, match="curves must be true or false, got 'no'"):
        reliability_part(compared, MODEL, curves="no")


def test_study_not_plotted_works_out_no_curve(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("a spare curve worked out for a study not drawn")

    monkeypatch.setattr(availability, "spare_curve", refused)
    r = run_full_study([MODEL], ["H100-SXM", "Lite"], ["decode"],
                       scenarios=["h100-dgx", "lite-flat"], paper=False, sweep=False,
                       cost=False, crossovers=False, serving=False, moe=None,
                       packed=False, plot=False)
    assert r.reliability.curves == {}
    assert [s.scenario for s in r.reliability.summaries] == ["h100-dgx@H100-SXM",
                                                             "lite-flat@Lite"]


def test_figures_of_a_study_not_plotted_refused():
    with pytest.raises(UserError, match="figures=True with plot=False"):
        run_full_study([MODEL], ["H100-SXM"], ["decode"], figures=True, plot=False)


def test_plot_flag_checked():
    with pytest.raises(UserError, match="^the study: plot must be true or false, got 'no'$"):
        run_full_study([MODEL], ["H100-SXM"], ["decode"], plot="no")
