"""What the spares cost is booked by worth's share of a failure's total, not per instance.

``Recovery.restored`` (the capacity a failure's instances still lose while spares stand
in) is costed per instance but carried as the failure's total; a failure granted in part
books its granted instances their worth's share of it (``Kind.backs``; ``Kind.saved`` per
instance's worth in the grant). That is each instance's own loss summed where all or none
are granted or they cost alike; docs/reliability.md bounds the rest. On the shipped
fabrics the spares cost no kind anything, so the split moves nothing there.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.reliability_cluster import build_cluster


@pytest.mark.parametrize(("scenario", "placement"), [("lite-flat", "pod"), ("lite-ocs", "pod"),
                                                     ("h100-dgx", "global"),
                                                     ("lite-flat", "global")])
def test_the_shipped_spares_cost_nothing(scenario, placement):
    kinds = event_kinds(build_cluster(scenario, "Llama-3-70B", "decode"), placement)
    asking = [k for k in kinds if k.units > 0]
    assert asking
    assert all(k.restored == 0.0 and k.slow_restored == 0.0 for k in asking)


def test_granted_in_part_books_the_worth_share():
    # 2 down instances on 4 spares each, worth 0.5 and 1.5, losing 0.4 in all while on
    # spares: with 4 free the grant brings back the 1.5 one (3/4 of the down worth) and
    # books it 3/4 of the 0.4, whatever its own share was
    k = Kind("host", "x", 1.0, down=2, slow=0.0, units=8, restored=0.4, d_repair=10.0,
             d_swap=0.0, hold=10.0, d_slow=0.0, worth=2.0, each=(4, 4), worths=(0.5, 1.5))
    step = k.granted(4)
    kd, _ = k.backs(step)
    assert kd == pytest.approx(0.75)
    # the capacity-seconds a grant saves, per the down worth: (10 - 0.4 / 2 x 10) a unit
    assert k.saved == pytest.approx(2.0 * 10.0 - 0.4 * 10.0)
