"""A k-fold cluster's blast radius, for any k: every part a cell owns counted k times, each
failure's share of the cluster's tokens/s 1/k of one cell's; the parts cells share
(lite-direct's leaves and spines, those of the h100-dgx SU whose ports an eighth of a cell
fills) counted once per 8 cells, whole, as the builder builds them; the links between
switches at the cells' share (64 transceivers a cell). lite-ocs's OCSes are its own (a cell
fills 128 of 136 ports). By hand from one cell's table, whatever k."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.study.blast_radius import blast_radius
from tests.netmodel.reliability_g2_helpers import shipped_cluster

ONE = {}


def _one(scenario):
    if scenario not in ONE:
        # one cell's table, of the one-cell cluster the reliability tests share
        table = blast_radius(scenario, "Llama-3-70B", cluster=shipped_cluster(scenario))
        ONE[scenario] = {r.cls: r for r in table.rows}
    return ONE[scenario]


@settings(max_examples=6, deadline=None)
@given(scenario=st.sampled_from(["lite-direct", "lite-ocs"]), k=st.integers(2, 24))
def test_k_cells_scale_by_hand(scenario, k):
    one = _one(scenario)
    rows = {r.cls: r for r in blast_radius(scenario, "Llama-3-70B", gpus=128 * k).rows}
    assert rows.keys() == one.keys()
    sets = math.ceil(k / 8)                 # SUs the cells fill (lite-direct)
    for cls, a in one.items():
        b = rows[cls]
        if scenario == "lite-direct" and cls in ("leaf", "spine"):
            count = a.count * sets
        elif scenario == "lite-direct" and cls == "transceiver":
            count = 160 * k + 64 * k        # GPU cables' ends; uplinks at the cells' share
            assert a.count == 224
        else:
            count = a.count * k
        assert b.count == pytest.approx(count, rel=1e-12), cls
        assert b.events_per_year == pytest.approx(a.events_per_year * count / a.count,
                                                  rel=1e-9), cls
        # the same failure's radius in GPUs and instances; its share of k cells
        assert b.gpus_mean == a.gpus_mean and b.instances_down_mean == a.instances_down_mean
        assert b.tokens_lost_pct_mean == pytest.approx(a.tokens_lost_pct_mean / k,
                                                       rel=1e-9, abs=1e-12), cls
        assert b.recovery_without_spares_s == a.recovery_without_spares_s
