"""A GpuSpec built by hand (netmodel.evaluate, search and build_fabric take one) was not
checked: None, NaN, infinity, 0, 10**400 or a string in a field crashed the roofline and
the builders with TypeError, ValueError, OverflowError or ZeroDivisionError, or gave NaN
tokens/s (hostile round 16: 107 API cases). Its fields are now held to the ranges a GPU
file's entry is (compute/data/limits.toml, scaled to SI), in one line naming the GPU and
the field; plain numbers of other types (numpy's) are made int/float."""

import dataclasses
import math

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from compute.hardware import get_gpu

H100 = get_gpu("H100-SXM")
BAD = [None, math.nan, math.inf, -1.0, 0.0, 10**400, "8", [8], True]
FIELDS = ["sms", "flops_bf16", "hbm_capacity", "hbm_bandwidth", "scaleup_bandwidth",
          "scaleout_bandwidth", "tdp", "max_instance"]


#: 0 means none where the GPU file's key takes it (scaleout_Gbps = 0: a GPU with no NIC)
ZERO_OK = {"scaleout_bandwidth"}


@pytest.mark.parametrize("field, value", [(f, v) for v in BAD for f in FIELDS
                                          if not (f in ZERO_OK and v == 0.0 and v is not True)],
                         ids=repr)
def test_bad_field_refused_at_construction(field, value):
    with pytest.raises(UserError) as e:
        dataclasses.replace(H100, name="Hx", **{field: value})
    msg = str(e.value)
    assert msg.startswith(f"GPU 'Hx': {field} must be") and "\n" not in msg


def test_evaluate_and_build_with_a_bad_spec_say_so_not_crash():
    with pytest.raises(UserError, match="hbm_bandwidth"):
        netmodel.evaluate("Llama-3-8B", dataclasses.replace(H100, name="Z", hbm_bandwidth=0.0),
                          tp=1, batch=1)


def test_numpy_numbers_become_plain_and_valid_specs_are_unchanged():
    g = dataclasses.replace(H100, name="Np", sms=np.int64(132), tdp=np.float64(700.0))
    assert type(g.sms) is int and type(g.tdp) is float
    assert dataclasses.replace(g, name="H100-SXM") == H100
    assert dataclasses.replace(H100, name="Zero8", flops_fp8=0.0).flops_fp8 == 0.0  # or_zero
    assert dataclasses.replace(H100, name="NoNic", scaleout_bandwidth=0).scaleout_bandwidth == 0.0


@pytest.mark.parametrize("name", [None, "", "x" * 10_001, 5])
def test_bad_name_refused(name):
    with pytest.raises(UserError, match="name must be non-empty text"):
        dataclasses.replace(H100, name=name)


def test_flag_and_source_checked():
    with pytest.raises(UserError, match="scaleup_reduction"):
        dataclasses.replace(H100, name="F", scaleup_reduction="yes")
    with pytest.raises(UserError, match="source must be text"):
        dataclasses.replace(H100, name="S", source=None)
