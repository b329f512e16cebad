"""Hostile round 29 (scripts/hostile_round29.py): module_ports, saved fabrics edited by
hand, serve/availability/blast-radius/yield/cost options at their ends, and the library
called with bad objects.

Found wrong, each checked here:

(a) ``compute.die_yield.yield_curve`` of 10^10 die areas (a numpy view of one number, no
memory of its own) raised MemoryError ('Unable to allocate 74.5 GiB') after 58 s of
trying; its areas run a Python call each (about 80 us), so a million is already 80 s. Now
counted before any array is made and refused past NETMODEL_MAX_YIELD_AREAS (1,000,000).
"""

from __future__ import annotations

import numpy as np
import pytest

from compute.die_yield import MAX_CURVE_AREAS, yield_curve
from compute.errors import UserError


def test_yield_curve_counts_its_areas_before_any_array():
    view = np.broadcast_to(814e-6, (10**5, 10**5))   # 10^10 areas in no memory
    with pytest.raises(UserError, match=r"^yield_curve: about 10,000,000,000 die areas, "
                                        r"over the limit of 1,000,000; give fewer areas "
                                        r"\(each about 80 us\), or raise "
                                        r"NETMODEL_MAX_YIELD_AREAS$"):
        yield_curve(view)
    assert MAX_CURVE_AREAS == 1_000_000


def test_yield_curve_limit_is_settable(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_YIELD_AREAS", "1")
    assert yield_curve([814e-6])["sms_physical"].tolist() == [144]   # 144 SMs, as an H100
    with pytest.raises(UserError, match="about 2 die areas, over the limit of 1"):
        yield_curve([814e-6, 203.5e-6])
    with pytest.raises(UserError, match=r"^die area must be numbers"):   # ragged: named
        yield_curve([[1e-4], [2e-4, 3e-4]])
