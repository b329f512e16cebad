"""Hostile round 38 (scripts/hostile_round38.py): public library functions no round called
before, given text, NaN, None, Decimal, negatives and arrays where a number is taken, and
dataclasses built with absurd fields.

Found wrong, each checked here:

(a) ``netmodel.study.queueing.md1_wait`` multiplied ``rate`` by ``service`` before any
check: text raised TypeError ("can't multiply sequence"), None and a Decimal TypeError,
and ``service=True`` was one second. ``batch_wait`` read ``batch`` by ``int()``: a
fraction of an array raised ZeroDivisionError, -1 gave a wait of -1.5 cycles, inf an
OverflowError; ``cycle`` was taken as anything numpy reads: text ('0.5'), NaN, None (a
NaN wait) and a negative cycle (a negative wait). ``mdc_wait`` took any ``service``. Now
each names its parameter and the range it takes, before any root is sought.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.queueing import batch_wait, md1_wait, mdc_wait


@pytest.mark.parametrize("rate", ["0.5", None, Decimal("0.5"), True, float("nan")])
def test_md1_wait_rate_refused(rate):
    with pytest.raises(UserError, match="md1_wait: rate must be a number from 0"):
        md1_wait(rate, 1.0)


@pytest.mark.parametrize("service", ["0.5", None, True, -1.0, float("inf")])
def test_md1_and_mdc_wait_service_refused(service):
    with pytest.raises(UserError, match="md1_wait: service must be a number from 0"):
        md1_wait(0.5, service)
    with pytest.raises(UserError, match="mdc_wait: service must be a number from 0"):
        mdc_wait(0.5, 2, service)


@pytest.mark.parametrize("batch", [-1.0, np.array([0.5, 0.6]), Decimal("0.5"), float("inf"),
                                   None, np.array([0, 2]), True])
def test_batch_wait_batch_refused(batch):
    with pytest.raises(UserError, match="batch_wait: batch must be a whole number from 1"):
        batch_wait(0.5, batch, 1.0)


@pytest.mark.parametrize("cycle", ["0.5", float("nan"), None, -1.0, np.array([0.5, -1.0]),
                                   np.array(["0.5"]), 10**31])
def test_batch_wait_cycle_refused(cycle):
    with pytest.raises(UserError, match="batch_wait: cycle must be .*from 0 to 1"):
        batch_wait(0.5, 4, cycle)


def test_md1_wait_closed_form_kept():
    # R D^2 / (2 (1 - R D)) at R = 0.25/s, D = 2 s: 0.25 * 4 / (2 * 0.5) = 1 s
    assert md1_wait(0.25, 2.0) == pytest.approx(1.0)
    assert md1_wait(np.float64(0.25), 2) == pytest.approx(1.0)


def test_batch_wait_arrays_kept():
    # one a batch is M/D/1 in cycles (rho^2 / (2 (1 - rho)) / rho at rho 0.5: 0.5 cycle)
    w = batch_wait(0.5, np.array([1, 1]), np.array([1.0, 2.0]))
    assert w.tolist() == pytest.approx([0.5, 1.0])
    assert float(batch_wait(0.5, np.int64(1), 2)) == pytest.approx(1.0)
