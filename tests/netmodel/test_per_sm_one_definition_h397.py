"""Availability's tokens/s/SM figures have one definition.

:func:`netmodel.study.reliability_summary.reliability_summary`'s closed-form path
restated the healthy and goodput formulas that
:class:`~netmodel.study.availability.Availability` holds; both now call
:meth:`~netmodel.study.reliability_cluster.Cluster.tokens_per_s_per_sm`.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.study.availability import availability
from netmodel.study.reliability_cluster import Cluster, build_cluster
from netmodel.study.reliability_summary import reliability_summary


@pytest.fixture(scope="module")
def hier():
    # a cell of 128 holds 5 instances of TP 24: 8 GPUs idle, so healthy != serving
    return build_cluster("lite-hier", "GPT-3-175B", "prefill")


def _as_analytic(a):
    """``a`` with its Monte Carlo mean replaced by the closed form's (the summary's
    ``method="analytic"`` figures are the closed form's)."""
    return replace(a, mc=replace(a.mc, mean=a.analytic.mean))


def test_summary_figures_equal_availabilitys(hier):
    """Invariant: the closed-form summary's per-SM figures are Availability's for the same
    cluster, spare count and placement (the Monte Carlo mean swapped for the closed form)."""
    s = reliability_summary(None, None, cluster=hier, spares=8, method="analytic")
    base = _as_analytic(availability(None, None, cluster=hier, spares=0, placement="global",
                                     trials=20))
    ref = _as_analytic(availability(None, None, cluster=hier, spares=s.spares,
                                    placement=s.spare_placement, trials=20))
    assert s.availability == base.analytic.mean
    assert s.healthy_tokens_per_s_per_sm == base.healthy_per_sm
    assert s.goodput_tokens_per_s_per_sm == base.goodput_per_sm
    assert s.availability_with_spares == ref.analytic.mean
    assert s.goodput_tokens_per_s_per_sm_with_spares == ref.goodput_per_sm
    # by hand: goodput with spares = capacity x tokens/s over (128 + 8) Lites' SMs
    assert s.goodput_tokens_per_s_per_sm_with_spares == pytest.approx(
        s.availability_with_spares * hier.cluster_tokens_per_s / (136 * hier.gpu.sms),
        rel=1e-12)


def test_both_read_the_one_definition(hier, monkeypatch):
    """Changing the cluster's definition changes every figure: nothing restates it (the old
    summary computed tokens / sms itself and kept its own figures)."""
    monkeypatch.setattr(Cluster, "tokens_per_s_per_sm",
                        lambda self, capacity=1.0, spares=0: 1000.0 * capacity + spares,
                        raising=False)
    s = reliability_summary(None, None, cluster=hier, spares=8, method="analytic")
    assert s.healthy_tokens_per_s_per_sm == 1000.0
    assert s.goodput_tokens_per_s_per_sm == 1000.0 * s.availability
    assert s.goodput_tokens_per_s_per_sm_with_spares == 1000.0 * s.availability_with_spares + 8
    a = availability(None, None, cluster=hier, spares=8, placement="global", trials=20)
    assert a.healthy_per_sm == 1000.0
    assert a.goodput_per_sm == 1000.0 * a.mc.mean + 8
