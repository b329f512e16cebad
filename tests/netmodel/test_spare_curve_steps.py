"""spare_curve's default counts: whole spares every pool can use.

Global spares re-create an instance on ``tp x pp`` of them (reliability_spares), so a pool
of 3 spares on h100-dgx (TP 4 for Llama-3-70B decode) serves as 0 and one of 6 as 4. The
study's reliability_spares.png drew its points at 0, 3, 6, 9, ... GPUs (9.4%, 18.75%, ...
of 32), so the first drop of the curve sat at 18.75% where 4 spares (12.5%) already give
it, and the Lites' at 22 of 128 (17.2%) where 16 (12.5%) do.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability import _components_per_kind, analytic, spare_curve
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import spare_pools


@pytest.mark.parametrize("scenario, instance", [("h100-dgx", 4), ("lite-flat", 16),
                                                ("lite-hier", 16)])
def test_global_points_are_whole_instances(scenario, instance):
    c = build_cluster(scenario, "Llama-3-70B", "decode")
    assert c.parallelism.tp * c.parallelism.pp == instance   # TP 4 on H100, 16 on Lites
    pct, mean, _ = spare_curve(c, "global")
    counts = [round(p * c.gpus / 100) for p in pct]
    assert counts[:3] == [0, instance, 2 * instance]
    assert all(n % instance == 0 for n in counts)
    # each point is the closed form at its count, and a spare short of it serves nothing:
    # the count one instance lower has the same mean as every count up to the point
    kinds = event_kinds(c, "global")
    comps = _components_per_kind(c, kinds)

    def mean_at(n):
        return analytic(kinds, spare_pools(c, n, "global"), c.instances_total, 0.99,
                        comps).mean

    for n, m in zip(counts[1:3], mean[1:3], strict=True):
        assert mean_at(n) == m
        assert mean_at(n - 1) == mean_at(n - instance) < m


def test_pod_points_stay_single_spares():
    """Where a spare stands in for one GPU (pod placement on lite-flat), every count
    counts: steps of one spare, up to the 16 free ports (a host's failure re-creates one
    of its two TP-16 instances on all 16, so the curve reaches them: at most 16 steps;
    in about a dozen, 16 / 12 rounded up to steps of 2 and the odd counts went undrawn;
    to 8% of the GPUs, 11, while the host could not be helped)."""
    c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    pct, _, _ = spare_curve(c, "pod")
    counts = [round(p * c.gpus / 100) for p in pct]
    assert counts == list(range(0, 17))


def test_spares_figure_draws_steps(tmp_path, monkeypatch):
    """Between two points a pool serves as the smaller one, so the figure draws steps:
    its sloped lines put h100-dgx's crossing of the 0.1%-of-time target at ~19% of the
    GPUs, where no pool between 4 (12.5%) and 8 (25%) spares reaches it."""
    import numpy as np

    from netmodel.study import figure_kit
    from netmodel.study.reliability_plots import plot_spares

    drawn = []
    monkeypatch.setattr(figure_kit, "save_figure",
                        lambda fig, path: drawn.extend(ax.get_lines() for ax in fig.axes))
    curve = (np.array([0.0, 12.5, 25.0]), np.array([0.998, 0.9995, 0.99999]),
             np.array([1e-2, 2e-3, 5e-5]))
    plot_spares({"h100-dgx@H100-SXM (global)": curve}, tmp_path / "s.png", threshold=0.99,
                quantile=0.999)
    curves = [ln for lines in drawn for ln in lines if ln.get_label().endswith("(global)")]
    assert len(curves) == 2 and all(ln.get_drawstyle() == "steps-post" for ln in curves)
