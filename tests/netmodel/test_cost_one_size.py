"""FabricCostModel.cost takes one size and says so; sweep takes several."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.collectives.model import FabricCostModel
from topologies.specs import build


def test_cost_of_several_sizes_names_sweep():
    # [1e6, 1e9] raised TypeError: only 0-dimensional arrays can be converted to Python scalars
    m = FabricCostModel(build("single-switch:n=8"), algorithm="ring")
    with pytest.raises(UserError, match=r"cost takes one message size, got 2 \(sweep costs "
                                        r"several\)"):
        m.cost("all-reduce", [1e6, 1e9], 8)
    one = m.cost("all-reduce", [1e9], 8)
    assert one.time == m.cost("all-reduce", 1e9, 8).time == float(m.sweep("all-reduce", [1e9], 8).time[0])
