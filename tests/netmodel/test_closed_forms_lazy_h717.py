"""The closed forms worked out in part give the floats the whole gives (h717).

``study lite-gpu``'s blast radius part solved every closed form in full: the spare search
read only the time below of each pool it tried (and the flag of the one it accepted), the
spare curve the mean and the time below, yet each solve also bounded what the thinning
misses (``_threshold_low``: chains of holdings of its own) and the saturation's Panjer
recursion walked its 8,192 lattice points one at a time in Python. Now
:class:`~netmodel.study.availability_analytic.ClosedForms` works each figure out when first
read, and :func:`~netmodel.study.availability_loss._panjer` adds each loss to a block of
points at once where every loss spans at least :data:`PANJER_BLOCK` of them. Both must give
exactly what :func:`~netmodel.study.availability_analytic.analytic` and the point-by-point
recursion gave: the study's files are compared byte for byte.
"""

from __future__ import annotations

import math
import random

import pytest

from netmodel.study import availability_loss as loss
from netmodel.study.availability_analytic import ClosedForms, analytic
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import SparePools, spare_pools

DAY = 86400.0


def _point_by_point(streams, step: float, top: int, split: bool) -> list[float]:
    """The recursion a point at a time, as ``_panjer`` had it (the reference)."""
    lam: dict = {}
    for m, x in streams:
        x = x / step
        if not split:
            parts = [(max(1, int(round(x))), m)]
        elif x < 1:
            parts = [(1, m * x)]
        else:
            j = int(math.floor(x))
            parts = [(j, m * (j + 1 - x)), (j + 1, m * (x - j))]
        for j, mj in parts:
            if mj > 0:
                lam[j] = lam.get(j, 0.0) + mj
    total = sum(lam.values()) if split else sum(m for m, _ in streams)
    terms = [(j, j * m) for j, m in lam.items()]
    p = [0.0] * (top + 1)
    p[0] = math.exp(-total)
    for n in range(1, top + 1):
        s = 0.0
        for j, jm in terms:   # in the terms' order, from 0, one rounding each
            if j <= n:
                s += jm * p[n - j]
        p[n] = s / n
    return p


@pytest.mark.parametrize("seed", range(6))
def test_panjer_in_blocks_is_the_point_by_point_recursion(seed):
    rng = random.Random(seed)
    blocks = 0
    for _ in range(40):
        step = rng.choice([1.0, 0.37, 1e-3])
        streams = [(rng.choice([0.0, rng.expovariate(1.0) * rng.choice([1e-3, 1.0, 30.0])]),
                    step * rng.uniform(0.3, 400.0)) for _ in range(rng.randint(1, 10))]
        top, split = rng.choice([1, 17, 256, 2048]), rng.random() < 0.5
        got = loss._panjer(streams, step, top, split)
        assert got == _point_by_point(streams, step, top, split)
        assert all(type(v) is float for v in got)
        blocks += min(max(1, round(x / step)) for _, x in streams) >= loss.PANJER_BLOCK
    assert blocks >= 10   # the block path was taken, not only the point-by-point one


def _hand_kinds():
    """test_threshold_low_h429's hand case: 200 instances, hosts down 2 instances 0.1 a
    day, GPUs 1 instance 0.5 a day; with 32 global spares its time below reads low."""
    def kind(name, per_day, down, units, per):
        return Kind(name, "x", rate=per_day / DAY, down=down, slow=0.0, units=units,
                    restored=0.0, d_repair=DAY, d_swap=600.0, hold=DAY, d_slow=0.0, per=per)
    return [kind("host", 0.1, 2, 32, 16), kind("gpu", 0.5, 1, 1, 0)]


def _cases():
    kinds = _hand_kinds()
    for s in (0, 8, 32, 64):
        yield kinds, SparePools("global", s, 1, (s,)), 200, 0.99
    for name, model in (("h100-dgx", "Llama-3-70B"), ("lite-flat", "Llama-3-70B")):
        c = build_cluster(name, model, "decode")
        for placement in ("pod", "global"):
            for s in (0, 3, 16):
                yield (event_kinds(c, placement), spare_pools(c, s, placement),
                       c.instances_total, 0.99)


@pytest.mark.parametrize("read", ["mean", "below_threshold", "threshold_low", "all"])
def test_each_figure_read_alone_is_analytics(read):
    flagged = 0
    for kinds, pools, instances, threshold in _cases():
        whole = analytic(kinds, pools, instances, threshold)
        part = ClosedForms(kinds, pools, instances, threshold)
        assert part.fallback == whole.fallback
        if read == "all":
            assert part.result() == whole
        else:   # the first figure read of a fresh one, and the others after it
            assert getattr(part, read) == getattr(whole, read)
            assert (part.mean, part.below_threshold, part.threshold_low) \
                == (whole.mean, whole.below_threshold, whole.threshold_low)
        flagged += whole.threshold_low
    assert flagged >= 1   # the flag's bound was worked out where it is set
