"""The analytic reliability summary solves each (placement, spares) once.

``_summary_analytic`` asked the closed form for the base (global, 0 spares), for the
reference pool under each placement, for every step of each placement's search of the
fewest spares, and for the chosen reference pool again: the base is the global search's
first step and the chosen pool was solved for the choice, so each summary solved at least
two runs twice (the study's blast radius part: 6 summaries). Now each is solved once
(:class:`~netmodel.study.availability_analytic.ClosedForms`, each figure worked out when
read); the summary's columns are the same as :func:`analytic`'s runs asked for one by one.
"""

from __future__ import annotations

import pytest

import netmodel.study.reliability_summary as rs
from netmodel.study.availability_analytic import ClosedForms, analytic
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import spare_pools


@pytest.fixture(scope="module")
def cluster():
    return build_cluster("h100-dgx", "Llama-3-8B", "decode", gpus=64)


def test_each_run_solved_once_and_the_same(cluster, monkeypatch):
    c = cluster
    asked: list = []

    def counted(kinds, pools, instances, threshold):
        asked.append((pools.placement, pools.spares))
        return ClosedForms(kinds, pools, instances, threshold)

    monkeypatch.setattr(rs, "ClosedForms", counted)
    r = rs.reliability_summary(None, None, cluster=c, method="analytic", spares="1%")
    assert len(asked) == len(set(asked)) >= 3   # every run once (HEAD: the base twice)
    assert ("global", 0) in asked and ("global", r.spares) in asked

    def one(placement, k):   # each column from its own run, asked alone
        return analytic(event_kinds(c, placement), spare_pools(c, k, placement),
                        c.instances_total, r.threshold)

    assert r.availability == one("global", 0).mean
    assert r.spare_placement == max(("pod", "global"), key=lambda p: one(p, r.spares).mean)
    assert r.availability_with_spares == one(r.spare_placement, r.spares).mean
    if r.spares_needed is not None:
        p, k = r.spares_needed_placement, r.spares_needed
        assert one(p, k).below_threshold <= 1 - r.quantile
        assert r.threshold_low == one(p, k).threshold_low
        per = spare_pools(c, 0, p).pools
        assert all(one(p, j).below_threshold > 1 - r.quantile for j in range(0, k, per))
