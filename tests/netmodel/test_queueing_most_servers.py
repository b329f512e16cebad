"""The M/D/c, M^X/D/c and batch waits refuse more servers (or a larger batch) than
MOST_SERVERS before their roots are sought: each takes that many roots in complex arrays,
and 10^9 (taken before) needed about 16 GB. mxdc_wait checks its service as mdc_wait does."""

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study import queueing
from netmodel.study.queueing import MOST_SERVERS, batch_wait, mdc_wait, mxdc_wait


@pytest.mark.parametrize("call", [
    lambda n: mdc_wait(0.5, n, 1.0),
    lambda n: mxdc_wait(0.5, n, 1.0, [1.0]),
    lambda n: batch_wait(0.5, n, 1.0),
    lambda n: batch_wait(0.5, np.array([4, n]), 1.0),
])
def test_one_past_the_most_is_refused_before_any_root(call, monkeypatch):
    def never(*_):
        raise AssertionError("roots sought")
    monkeypatch.setattr(queueing, "_roots", never)
    monkeypatch.setattr(queueing, "_compound_roots", never)
    for n in (MOST_SERVERS + 1, 10**9):
        with pytest.raises(UserError, match=f"from 1 to {MOST_SERVERS:,}"):
            call(n)


def test_the_most_is_taken():
    assert queueing._batches(MOST_SERVERS) == MOST_SERVERS
    assert list(queueing._batches(np.array([1, MOST_SERVERS]))) == [1, MOST_SERVERS]


def test_mxdc_service_is_checked_as_mdc_s():
    for bad in ("x", float("nan"), -1.0, None):
        for f in (lambda s: mdc_wait(0.5, 4, s), lambda s: mxdc_wait(0.5, 4, s, [1.0])):
            with pytest.raises(UserError, match="service must be a number"):
                f(bad)
    assert mxdc_wait(0.9, 46, 0.6, [1.0]) == mdc_wait(0.9, 46, 0.6)
