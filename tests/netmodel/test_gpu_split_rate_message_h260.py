"""A rate set on a class the GPU split derives is refused naming both parameters that set
it (h260 review of 61cbcbc): ``Catalog.with_`` took ``gpu_rate_per_hour`` from then on,
the only way to turn GPU failures off, yet its refusal of ``rates={"gpu-die": ...}`` still
named ``area_share`` alone, which cannot (it is at least the HBM share)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.reliability_catalog import catalog


@pytest.mark.parametrize("name", ["gpu-die", "gpu-package"])
def test_a_split_class_rate_names_gpu_rate_per_hour(name):
    with pytest.raises(UserError) as e:
        catalog().with_(rates={name: 0.0})
    assert str(e.value) == (
        f"the rate of {name!r} comes from the GPU split; set gpu_rate_per_hour (the "
        f"reference GPU's whole rate; 0 turns GPU failures off) or area_share instead")
    assert "--" not in str(e.value)   # a library error names parameters, not flags


def test_gpu_rate_per_hour_zero_turns_both_split_classes_off():
    r = catalog().with_(gpu_rate_per_hour=0.0).rates("H100-SXM")
    assert r["gpu-die"] == 0 and r["gpu-package"] == 0
