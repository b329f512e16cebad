"""A sixteenth pod spare of lite-flat reads worse once more than one Lite failure of a cell
is in progress: first-come grants (docs/reliability.md, "Not modelled").

lite-flat's decode cell serves 8 TP-16 instances; a host takes 2 of them down and
re-creates one only on 16 spares at once (all or nothing a piece: ``Kind.per``), a Lite's
die or package failure takes 1. With 15 pod spares no host is ever granted; with 16 a host
failing while the pool is whole (no 1-spare ask in progress: ``exp(-a1)``, a Poisson count
of them) takes all 16 to its repair. That saves its instance ``d_repair - d_swap``, and
costs each Lite failure arriving meanwhile (``r_gpu x hold`` of them) the same, as it waits
for its repair instead of a swap. So the step from 15 to 16 is, to first order,

    r_host exp(-a1) [(d_rep_h - d_swap) - r_gpu hold_h (d_rep_g - d_swap)] / instances

which changes sign where ``r_gpu x hold`` (Lite failures in progress) passes 1: at the
catalog's rates 0.24 (vendor repair, 11.9 days) and the mean gains 1.43e-3; at the GPU
rate 4.2 times the catalog's it passes 1. The Monte Carlo draws the same failures for every
spare count (same seed), so its step is the grant's too, not sampling noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from netmodel.study.availability import spare_curve
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_catalog import catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import spare_pools

#: the catalog's reference GPU (H100) failure rate per hour
CATALOG_RATE = 1.26e-5
_CLUSTERS: dict = {}


def _cluster(gpu_rate):
    if gpu_rate not in _CLUSTERS:
        cat = catalog().with_(repair="vendor", gpu_rate_per_hour=gpu_rate)
        _CLUSTERS[gpu_rate] = build_cluster("lite-flat", "Llama-3-70B", "decode",
                                            catalog_=cat)
    return _CLUSTERS[gpu_rate]


def _by_hand(cluster):
    """(Lite failures in progress, the step 15 -> 16 pod spares to first order)."""
    k = {x.cls: x for x in event_kinds(cluster, "pod")}
    gpu, host = k["gpu-die"], k["host"]
    assert (host.down, host.per, host.units, gpu.units) == (2, 16, 32, 1)
    assert k["gpu-package"].hold == gpu.hold and k["gpu-package"].d_repair == gpu.d_repair
    r_gpu = gpu.rate + k["gpu-package"].rate
    a1 = sum(x.rate * x.hold for x in k.values() if x.units == 1)   # 1-spare asks held
    step = host.rate * math.exp(-a1) * ((host.d_repair - host.d_swap)
                                        - r_gpu * host.hold * (gpu.d_repair - gpu.d_swap))
    return r_gpu * gpu.hold, step / cluster.instances_total


def test_the_catalog_rates_gain_from_the_sixteenth_spare():
    c = _cluster(CATALOG_RATE)
    busy, hand = _by_hand(c)
    assert c.catalog.gpu_rate_per_hour == CATALOG_RATE == catalog().gpu_rate_per_hour
    assert busy == pytest.approx(0.2402, abs=1e-4)   # 7.37 Lite failures a year x 11.9 d
    _, mean, _ = spare_curve(c, "pod", range(0, 25))
    assert np.diff(mean).min() >= 0
    assert mean[16] - mean[15] == pytest.approx(hand, rel=0.05)       # 1.43e-3
    assert mean[16] - mean[15] == pytest.approx(1.428e-3, rel=1e-3)


@pytest.mark.parametrize("gpu_rate, busy", [(4.5e-5, 0.858), (6e-5, 1.144), (1e-4, 1.906),
                                            (2e-4, 3.813)])
def test_the_step_changes_sign_where_one_lite_failure_is_in_progress(gpu_rate, busy):
    c = _cluster(gpu_rate)
    got, hand = _by_hand(c)
    assert got == pytest.approx(busy, abs=1e-3)
    _, mean, _ = spare_curve(c, "pod", range(0, 25))
    steps = np.diff(mean)
    # the only step that can lose is the one where a host's ask first fits the pool
    assert np.delete(steps, 15).min() >= 0
    assert steps[15] == pytest.approx(hand, rel=0.05)
    assert (steps[15] < 0) == (busy > 1)


def test_the_monte_carlo_sees_the_dip_on_the_same_failures():
    c = _cluster(1e-4)
    kinds = event_kinds(c, "pod")
    runs = [simulate(kinds, spare_pools(c, n, "pod"), c.instances_total, horizon="5y",
                     trials=400, seed=3) for n in (15, 16)]
    assert runs[0].events_per_year == runs[1].events_per_year   # the same failures drawn
    d = runs[0].trial_means - runs[1].trial_means                # paired: trial by trial
    ci = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
    _, hand = _by_hand(c)
    assert d.mean() > 3 * ci                                     # the dip, not noise
    assert abs(d.mean() + hand) < 4 * ci, (d.mean(), ci, -hand)  # the hand step's size
    # the pairing is what resolves it: independent runs' intervals add to more than it
    assert runs[0].mean_ci + runs[1].mean_ci > 2 * ci
