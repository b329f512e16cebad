"""A fabric spec's float typed as -0 is zero (h250's rule for every number read, carried to
spec strings): 'ring:n=4,length=-0' was shown as length=-0.0 and exported -0.0."""
import math

import pytest

from topologies.registry import build


@pytest.mark.parametrize("typed", ["-0", "-0.0", "-0e5", "-0.000"])
def test_a_typed_negative_zero_reads_as_zero(typed):
    g = build(f"ring:n=4,length={typed}")
    assert g.graph["spec"] == build("ring:n=4,length=0").graph["spec"] == "ring:n=4,length=0.0"
    assert g.graph["args"]["length"] == 0.0
    assert math.copysign(1.0, g.graph["args"]["length"]) == 1.0
