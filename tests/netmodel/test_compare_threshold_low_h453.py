"""``compare --reliability`` says where its spares count rests on a time below that may
read low, as ``availability`` does (``threshold_low``).

``spares_needed`` (the fewest spares for 99% of the capacity 99.9% of the time) is read
off the closed form's time below 99%, the quantity availability's table flags with
``threshold_low`` where a busy pool refuses failures together and the thinning reads it
low; compare carried no flag. Now ``ReliabilitySummary.threshold_low`` is the flag of the
run that accepted the count (a size refused on a low reading is refused the more), carried
by the row's reliability group, and compare's table names the rows in a note.

Case: 512 H100 (``h100-dgx``) serving Llama-3-8B at TP 1, 512 instances, the GPU rate
1e-3 an hour and one-day GPU repairs: a GPU's failure downs 1 instance of 512, so it takes
6 refused at once to fall below 99% (5.12 instances): the regime. The closed form accepts
23 global spares (time below 8.1e-4 <= 1e-3) with the flag set; the Monte Carlo at 23
reads 2.7e-3 +- 2.3e-4 (400 trials; here 200), past the target: the count is low, as the
flag warned.
"""

from __future__ import annotations

import pytest

from netmodel.study import reliability_summary as summary_module
from netmodel.study.availability_analytic import ClosedForms, analytic
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.compare import CompareRow, threshold_low_lines
from netmodel.study.reliability_catalog import catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import spare_pools
from netmodel.study.reliability_summary import SUMMARY_COLUMNS, reliability_summary


@pytest.fixture(scope="module")
def busy():
    cat = catalog().with_(gpu_rate_per_hour=1e-3,
                          repair_hours={"gpu-die": 24, "gpu-package": 24})
    return build_cluster("h100-dgx", "Llama-3-8B", "decode", gpus=512, catalog_=cat)


def test_the_accepted_runs_flag_is_carried(busy, monkeypatch):
    c = busy
    assert (c.tp, c.instances_total) == (1, 512)
    # the summary's search solves the global pools of 0, 1, ... spares with the closed
    # form: each solve is kept here, and the two read below are taken from it where its
    # arguments are the ones asked for (the closed form is a function of them alone)
    solved = []

    def kept(kinds, pools, instances, threshold):
        out = ClosedForms(kinds, pools, instances, threshold)
        solved.append(((kinds, pools, instances, threshold), out))
        return out

    monkeypatch.setattr(summary_module, "ClosedForms", kept)
    r = reliability_summary(None, None, cluster=c, method="analytic")
    monkeypatch.undo()
    assert "threshold_low" in SUMMARY_COLUMNS
    assert (r.spares_needed_placement, r.spares_needed) == ("global", 23)
    kinds = event_kinds(c, "global")

    def closed_form(spares):
        args = (kinds, spare_pools(c, spares, "global"), 512, 0.99)
        return next((out for given, out in solved if given == args), None) \
            or analytic(*args)

    run = closed_form(23)
    assert run.below_threshold <= 1e-3 and run.threshold_low
    assert closed_form(22).below_threshold > 1e-3
    assert r.threshold_low is True and r.to_dict()["threshold_low"] is True
    # the warning holds: the Monte Carlo at the accepted pool misses the target
    mc = simulate(kinds, spare_pools(c, 23, "global"), 512, horizon="1y", trials=200,
                  seed=0, threshold=0.99)
    assert mc.below_threshold - mc.below_threshold_ci > 1e-3
    # compare's row carries it, and its table names the row
    row = CompareRow(model="Llama-3-8B", gpu="H100-SXM", phase="decode", feasible=True,
                     scenario="h100-dgx", label="h100-dgx@H100-SXM", latency_name="tbt",
                     latency_limit_s=0.05).with_group("reliability", r.to_dict())
    assert row.threshold_low is True
    (line,) = threshold_low_lines([row])
    assert line.startswith("note: spares_needed of h100-dgx@H100-SXM Llama-3-8B decode ")


def test_no_flag_where_the_reading_is_not_in_that_regime():
    # lite-flat, Llama-3-70B: 8 instances, one refused failure alone falls below 99%
    r = reliability_summary("lite-flat", "Llama-3-70B", "decode", method="analytic")
    assert r.spares_needed is not None and r.threshold_low is False
    row = CompareRow(model="Llama-3-70B", gpu="Lite", phase="decode", feasible=True,
                     scenario="lite-flat", label="lite-flat@Lite", latency_name="tbt",
                     latency_limit_s=0.05).with_group("reliability", r.to_dict())
    assert row.threshold_low is False and threshold_low_lines([row]) == []
