"""Substitution short of spare sites is taken over re-creation where it needs fewer spares.

Where a failure's down instances each replace ``per`` of their ``size`` members and the
cell's free sites hold fewer than all of them, the instances whose members the sites
hold are substituted and the rest wait for the repair, or whole instances are re-created
on the sites. Substitution was taken only where it brought back more instances; on a tie
(``floor(sites / per) == floor(sites / size)``, possible where ``per > size / 2``)
re-creation was kept, though each instance then holds ``size`` spares to the repair
where substitution holds ``per``: a failure finding between ``per`` and ``size - 1`` free
spares brought none back, and every grant kept more from the failures after it.

The case: lite-flat with instances placed ``spread`` (Llama-3-70B, TP 16, 8 instances)
and a host failure made to take 9 members of each instance (its own 4 and 5 more), on
the cell's 16 free ports: 72 spares to substitute, ``16 // 9 = 1`` instance back by
substitution, ``16 // 16 = 1`` by re-creation. Where every member is replaced
(``per = size``: a contiguous host taking 2 whole instances) the two take the same
spares and re-creation stays.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.study import reliability_recovery as rr
from netmodel.study import reliability_spares as rs
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_catalog import get_scenario


def _host_cluster(placement):
    c = build_cluster(replace(get_scenario("lite-flat"), placement=placement),
                      "Llama-3-70B", "decode")
    return c, next(e for e in c.effects() if e.cls == "host")


@pytest.fixture
def nine_of_sixteen(monkeypatch):
    c, e = _host_cluster("spread")
    own = rr._replace

    def more(cluster, comp, effect):   # 5 more members of each instance to replace
        return [(inst, gone + [m for m in inst if m not in gone][:5])
                for inst, gone in own(cluster, comp, effect)]
    monkeypatch.setattr(rr, "_replace", more)
    return c, e


def test_a_tie_substitutes_on_fewer_spares(nine_of_sixteen):
    c, e = nine_of_sixteen
    assert (rs.capacity(c, "pod"), c.instance_gpus, e.instances_down) == (16, 16, 8)
    rec = rr._recovery(c, e, "pod")
    # 8 instances x 9 members: 72 to substitute; 16 sites hold one instance's 9 (one
    # instance's 16 to re-create); each instance a grain of 9 (was 16)
    assert (rec.units, rec.per) == (72, 9)
    assert rec.path.startswith("substitute 9 of 72 spares (1 of 8 instances")
    # a pool with 12 free: one instance back on 9 (a grain of 16 brought none)
    assert 12 // rec.per == 1


def test_every_member_replaced_keeps_recreation():
    c, e = _host_cluster("contiguous")   # a host takes 2 whole instances of 16
    rec = rr._recovery(c, e, "pod")
    assert (rec.units, rec.per) == (32, 16)
    assert rec.path.startswith("re-create 1 of 2 on 16 spares")
