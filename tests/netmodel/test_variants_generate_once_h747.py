"""compiled_variants routes the steps compiled() generated under its other policies, instead
of generating them again (netmodel.collectives.model).

On lite-direct (4 Lites a group, a cable to each partner and a wider NVSwitch port: the
widest and split policies move a ring's transfers, tests/netmodel/test_route_policies.py),
a ring all-reduce's variants are compiled from one generation of its steps, and their
lines are those of a model that generates the steps anew for each policy, bit for bit.
"""

import pytest

import netmodel.collectives.model as model_module
from netmodel.api import build_fabric
from netmodel.collectives.model import FabricCostModel


@pytest.fixture(scope="module")
def lite_direct():
    return build_fabric("lite-direct")


def _lines(comps, cal):
    return [(c.routing, [c.lines(p, cal) for p in c.protocols(cal)]) for c in comps]


def test_variants_from_one_generation_h747(lite_direct, monkeypatch):
    calls = []
    generate = model_module.generate

    def counted(*args):
        calls.append(args[:2])
        return generate(*args)

    m = FabricCostModel(lite_direct, algorithm="ring")
    group = m.group(4)
    monkeypatch.setattr(model_module, "generate", counted)
    once = m.compiled_variants("all-reduce", "ring", group)
    assert [c.routing for c in once] == ["shortest", "widest", "split"]
    assert calls == [("ring", "all-reduce")]   # generated once, for all three
    # asked again: kept, nothing generated
    assert m.compiled_variants("all-reduce", "ring", group) is once
    assert len(calls) == 1
    # compiled() first, the variants later: the steps generated again (none kept)
    fresh = FabricCostModel(lite_direct, algorithm="ring")
    fresh.compiled("all-reduce", "ring", group)
    assert fresh._made_steps is None   # compiled() alone holds no steps after it
    again = fresh.compiled_variants("all-reduce", "ring", group)
    assert len(calls) == 3
    assert _lines(again, fresh.calibration) == _lines(once, m.calibration)
    assert m._made_steps is None and fresh._made_steps is None   # none held after a call
