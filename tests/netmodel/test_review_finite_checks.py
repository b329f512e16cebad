"""Two range checks that spelled their own finiteness test (review, code health): a Python
integer past a float's range raised OverflowError from ``math.isfinite`` instead of the
check's one line, a numpy float32 share was refused, and a bool passed as an efficiency of 1.
Both now ask :func:`compute.validate.is_finite`, the project's one finiteness rule."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.calibration_files import default_calibration
from netmodel.study.availability import availability


@pytest.mark.parametrize("key", ["reduction_rate", "in_network_ceiling", "p2p_ll_threshold",
                                 "nvlink_bandwidth"])
def test_calibration_refuses_an_integer_past_a_float_in_one_line(key):
    with pytest.raises(UserError, match=rf"^calibration: {key} must be a finite number >= 0"
                                        r".*, got an integer of 401 digits$"):
        replace(default_calibration(), **{key: 10**400})


def test_calibration_takes_a_float_range_integer_and_a_numpy_float():
    cal = default_calibration()
    assert replace(cal, reduction_rate=10**12).reduction_rate == 10**12
    # kept as given: float32's 2.5e10 is 24,999,999,488, equal to the float 2.5e10 only
    # under numpy 2's comparison (NEP 50: in float32), not numpy 1.26's (in float64)
    assert replace(cal, nvlink_bandwidth=np.float32(2.5e10)).nvlink_bandwidth == \
        np.float32(2.5e10)


@pytest.mark.parametrize("value", [True, 10**400, float("nan")])
def test_calibration_efficiency_must_be_a_real_fraction(value):
    with pytest.raises(UserError, match=r"^scaleup_efficiency must be in \(0, 1\], got "):
        replace(default_calibration(), scaleup_efficiency=value)


def test_protocol_bandwidth_factor_is_no_bool():
    proto = default_calibration().protocols[0]
    with pytest.raises(UserError, match=r"bandwidth_factor must be in \(0, 1\], got True$"):
        replace(proto, bandwidth_factor=True)


@pytest.mark.parametrize("value", [10**400, 1.5, 0, True, "0.5"])
def test_availability_threshold_refused_in_one_line_before_any_work(value):
    # the threshold is checked before the cluster is built (scenario and model are None)
    with pytest.raises(UserError, match=r"^capacity threshold must be a share in \(0, 1\], "):
        availability(None, None, threshold=value)


def test_availability_threshold_takes_a_numpy_float():
    # np.float32(0.5) is a share; it was refused. Past the threshold check, the missing
    # scenario is what is refused.
    with pytest.raises(UserError) as err:
        availability(None, None, threshold=np.float32(0.5))
    assert "threshold" not in str(err.value)


def test_reliability_overrides_refuse_hours_past_a_float_in_one_line():
    # 10**400 hours x 3600 s overflowed converting the integer (OverflowError, a traceback)
    from netmodel.study.reliability_catalog import catalog

    with pytest.raises(UserError, match=r"^repair time of leaf must be a number of seconds "
                                        r".*, got an integer of 401 digits$"):
        catalog().with_(repair_hours={"leaf": 10**400})


def test_reliability_overrides_take_numpy_numbers():
    # np.int64(4) hours was refused as 'must be a number of seconds from 0 to 3.156e+09
    # (a century), got 4'; numpy's numbers are numbers here as everywhere else
    from netmodel.study.reliability_catalog import HOUR, catalog

    c = catalog().with_(repair_hours={"leaf": np.int64(4)}, detection_s=np.int64(30),
                        area_share=np.float32(0.75), rates={"leaf": np.float64(1e-6)})
    leaf = dict(c.classes)["leaf"]
    assert leaf.repair_local_s == 4 * HOUR
    assert (c.detection_s, c.area_share, leaf.rate_per_hour) == (30.0, 0.75, 1e-6)


@pytest.mark.parametrize("horizon", [10**400, float("inf"), -1.0])
def test_availability_horizon_refused_in_one_line(horizon):
    # a horizon of 10**400 seconds raised OverflowError from float() (a traceback)
    with pytest.raises(UserError, match=r"^horizon must be a duration from 1 h to 100 y, got "):
        availability(None, None, horizon=horizon)
