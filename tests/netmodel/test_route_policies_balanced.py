"""The ``"balanced"`` routing policy in an all-pairs step
(netmodel.collectives.route_policies).

Hand derivations (lite-direct: 4 Lites a group, a 37.5 GB/s cable to each partner, a
112.5 GB/s NVSwitch port each, scale-up efficiency 0.824): two-shot all-reduce of ``n``
bytes on 4 GPUs is two all-pairs steps, each GPU sending ``n / 4`` to each of its 3
partners. Over the cables a step takes ``(n / 4) / (0.824 x 37.5 GB/s)``; all over the
port, ``(3n/4) / (0.824 x 112.5 GB/s)``, the same; split by capacity (1 : 3), the port
carries ``3 x 3/4 x n/4 = 9n/16``: ``(9n/16) / (0.824 x 112.5 GB/s)``; balanced,
``S / (S + 3 C) = 1/2`` over the switch: each cable ``n/8`` and the port ``3n/8``, both
``(n/8) / (0.824 x 37.5 GB/s)``, two thirds of split's.
"""

import pytest

from netmodel.api import build_fabric
from netmodel.collectives.model import FabricCostModel

GIB = 2 ** 30
EFF = 0.824


@pytest.fixture(scope="module")
def lite_direct():
    return build_fabric("lite-direct")


def test_two_shot_all_pairs_step_balanced_by_hand(lite_direct):
    m = FabricCostModel(lite_direct, algorithm="two-shot")
    by = {c.routing: c for c in m.compiled_variants("all-reduce", "two-shot", m.group(4))}
    assert list(by) == ["shortest", "widest", "split", "balanced"]
    n = GIB
    hand = {"shortest": (n / 4) / (EFF * 37.5e9), "widest": (3 * n / 4) / (EFF * 112.5e9),
            "split": (9 * n / 16) / (EFF * 112.5e9), "balanced": (n / 8) / (EFF * 37.5e9)}
    for name, comp in by.items():
        assert [s.beta * n for s in comp.steps] == pytest.approx([hand[name]] * 2, rel=1e-12)
    r = m.cost("all-reduce", n, 4)
    assert r.routing == "balanced"
    # 2 steps of 3.57 us (the switch path's latency) and n/8 at the cable's rate, plus the
    # same start-up and reduction as under split: 13.05 -> 8.70 ms
    split = r.time - 2 * hand["balanced"] + 2 * hand["split"]
    assert round(split * 1e3, 2) == 13.05 and round(r.time * 1e3, 2) == 8.70


def test_ring_has_no_balanced_variant(lite_direct):
    """A ring step sends to one partner (k = 1): balanced is split, not costed again."""
    m = FabricCostModel(lite_direct, algorithm="ring")
    assert [c.routing for c in m.compiled_variants("all-reduce", "ring", m.group(4))] \
        == ["shortest", "widest", "split"]
