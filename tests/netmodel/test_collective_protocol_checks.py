"""compute's collective-cost protocol refuses a bad group size or message size with one
line, in every implementation (compute.comm.check_group_size / check_nbytes). Before,
ScenarioCollectives.collective_time gave 0 s for a negative size or a group of 0 and took
the string "16" as a group of 16; RingAlphaBeta also took "16", and FunctionComm gave 0 s
for a group of 0."""

from __future__ import annotations

import numpy as np
import pytest

from compute.comm import (
    FunctionComm,
    NoCommunication,
    RingAlphaBeta,
    check_group_size,
    check_nbytes,
)
from compute.errors import UserError
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives


@pytest.fixture(scope="module")
def lite_flat():
    return ScenarioCollectives(get_scenario("lite-flat"))


def _models(lite_flat):
    return [lite_flat, RingAlphaBeta(bandwidth=450e9, step_latency=1e-6),
            FunctionComm(lambda op, n, p: 1e-6 + n / 1e11), NoCommunication()]


@pytest.mark.parametrize("group, shown", [
    (0, "0"), (-4, "-4"), ("16", "'16'"), (16.0, "16.0"), (True, "True"), (None, "None")])
def test_bad_group_size_is_refused_by_every_model(lite_flat, group, shown):
    for m in _models(lite_flat):
        with pytest.raises(UserError) as e:
            m.collective_time("all-reduce", 1e6, group)
        msg = str(e.value)
        assert msg == f"group_size must be a whole number of GPUs >= 1, got {shown}", m


@pytest.mark.parametrize("size, shown", [
    (-1.0, "-1.0"), (float("nan"), "nan"), (float("inf"), "inf"),
    (np.array([1e6, -5.0]), "-5.0"), (-3, "-3.0")])
def test_bad_message_size_is_refused_by_every_model(lite_flat, size, shown):
    for m in _models(lite_flat):
        with pytest.raises(UserError) as e:
            m.collective_time("all-reduce", size, 8)
        assert str(e.value) == f"message size must be a finite number of bytes >= 0, got {shown}"


def test_string_size_is_refused(lite_flat):
    with pytest.raises(UserError, match=r"message size must be a number of bytes, got '1e6'"):
        lite_flat.collective_time("all-reduce", "1e6", 8)


def test_good_calls_unchanged(lite_flat):
    # a numpy integer group, zero bytes (free) and one GPU (free) still work
    t = lite_flat.collective_time("all-reduce", np.array([0.0, 1e6]), np.int64(8))
    assert t[0] == 0.0 and t[1] > 0
    assert float(lite_flat.collective_time("all-reduce", 1e6, 1)) == 0.0
    assert float(lite_flat.collective_time("all-reduce", 1e6, np.int32(8))) == \
        float(lite_flat.collective_time("all-reduce", 1e6, 8))
    ring = RingAlphaBeta(bandwidth=450e9, step_latency=1e-6, efficiency=1.0)
    # ring all-reduce of 8: 2*7 steps of 1 us + 2*7/8 * 1e9 B / 450e9 B/s
    assert ring.collective_time("all-reduce", 1e9, 8) == pytest.approx(14e-6 + 1.75e9 / 450e9)
    assert type(ring.collective_time("all-reduce", 1e9, 8)) is float
    assert check_group_size(np.int64(8)) == 8 and type(check_group_size(np.int64(8))) is int
    assert check_nbytes(0.0) == 0.0
