"""reliability_spares.png: lite-flat's and lite-ocs's curves (global spares) at 100% spares.
A lost plane leaf (lite-flat) or OCS (lite-ocs) slows all 8 instances, and global spares
re-create them on 16 spares each, 8 x 16 = 128 spares, the cluster's whole size. While a
failure's ask was granted all or nothing, the curve stayed flat from 50% to 99% and
dropped at 128 by the whole leaf's saving; now each 16 spares bring one more instance back
(test_availability_partial_grants_h377), so the step at 128 is one instance's share of it,
and the curve goes on past 100% (no wrap or index bug at the last point)."""

import pytest

from netmodel.study.availability import event_kinds, spare_curve
from netmodel.study.reliability_cluster import build_cluster


@pytest.fixture(scope="module")
def flat():
    return build_cluster("lite-flat", "Llama-3-70B", "decode")


def test_the_whole_cluster_ask_is_a_plane_failure_slowing_every_instance(flat):
    whole = [k for k in event_kinds(flat, "global") if k.units == flat.gpus]
    assert [k.cls for k in whole] == ["leaf"]
    k = whole[0]
    assert k.down == 0 and k.slow > 0   # no instance down: all 8 slowed
    assert (flat.gpus, flat.instances_total) == (128, 8)
    assert k.units == flat.instances_total * (flat.gpus // flat.instances_total)


def test_the_last_step_is_one_instance_of_the_whole_ask(flat):
    pct, mean, _below = spare_curve(flat, "global", counts=[112, 127, 128, 256])
    u = 1 - mean
    assert u[0] == pytest.approx(u[1], rel=1e-9)          # flat from 112 to 127 spares
    k = next(k for k in event_kinds(flat, "global") if k.units == flat.gpus)
    # what swapping the slowed instances saves at most: the leaf's slow loss between the
    # swap and the repair (instances' worth per instance of the cluster); the 128th spare
    # brings back the 8th of them, and no other kind's 8th instance waits on it more than
    # rarely: the step is about an eighth of it (all or nothing it was 0.9-1 of it)
    most = k.rate * (k.hold - k.d_swap) * k.slow / flat.instances_total
    assert 0.1 * most <= u[1] - u[2] <= 0.2 * most
    assert pct[3] == 200.0 and u[3] <= u[2]                # past 100%: no wrap
