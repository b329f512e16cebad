"""reliability_spares.png: lite-flat's and lite-ocs's curves (global spares) drop again at
100% spares. That is the model, not a wrap or an index bug at the last point: a lost plane
leaf (lite-flat) or OCS (lite-ocs) slows all 8 instances, and global spares re-create them
only all together (a failure's ask is granted all or nothing), on 8 x 16 = 128 spares, the
cluster's whole size. The step sits exactly at 128, is no larger than the leaf's slow-down
loss (rate x time slowed x share of the capacity), and the curve goes on past 100%."""

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


def test_step_is_at_the_whole_ask_and_bounded_by_its_loss(flat):
    pct, mean, _below = spare_curve(flat, "global", counts=[112, 127, 128, 256])
    u = 1 - mean
    assert u[0] == pytest.approx(u[1], rel=1e-9)          # flat up to 127 spares
    k = next(k for k in event_kinds(flat, "global") if k.units == flat.gpus)
    # what swapping the slowed instances saves at most: the leaf's slow loss between the
    # swap and the repair (instances' worth per instance of the cluster)
    most = k.rate * (k.hold - k.d_swap) * k.slow / flat.instances_total
    assert 0.9 * most <= u[1] - u[2] <= most
    assert pct[3] == 200.0 and u[3] <= u[2]                # past 100%: no wrap
