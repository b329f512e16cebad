"""A member's spare is picked among the switches the failure leaves, not on the failed one.

Six DGX-like servers of 8 H100 on rail leaves of radix 8, 3 servers a leaf (leaf3 holds
gpu3, gpu11, gpu19 and a spine link); Mixtral-8x7B decode, TP-4 instances placed at
random. The pod spare sites fill nvs0 first, one per rail leaf: spare0-3 on nvs0 with
leaves 0-3 (group sites of server 1: nvs1 with leaves 0-3). The instance (gpu11, gpu20,
gpu21, gpu34) has gpu11 alone on server 1 (nvs1, leaf3): leaf3's failure cuts it off (no
NIC left, no member on its NVSwitch to relay through) and the instance is down, gpu11 to
replace.

The nearest site was the one sharing most of gpu11's switches, the failed leaf included:
the site on leaf3, cut off the same way (its only NIC on leaf3, no member on its
NVSwitch). The substitution failed and the instance was re-created on 4 spares (pod), or
waited for the repair (group). Costed with every site of the plan wired in (before
2c2d4ac), the idle pod sites on nvs0 lent spare3 their NICs and the substitution passed:
idle spares changed a costing where GPUs forward no traffic. Now the failed leaf is no
shared switch and a site on it comes last among equals: the site on leaf0 stands in, alone
on its server with its own rail leaf as gpu11 was, and the instance serves as it did
healthy.
"""

import pytest

from netmodel.study.reliability_cluster import Effect, build_cluster
from netmodel.study.reliability_recovery import recovery
from netmodel.study.reliability_spares import _every
from netmodel.study.scenario_files import load_scenario_text

from .test_reliability_placed_classes import TEMPLATE, member_by_member

SIX = load_scenario_text(TEMPLATE.format(
    name="six-dgx-random", gpu="H100-SXM", placement="random", links="as-built",
    fabric='builder = "rail-optimized"\ndomains = 6\ndomain_size = 8\ngpus_per_server = 8\n'
           'nvswitch_radix = 256\nservers_per_leaf = 3\nleaf_radix = 8'))

KEPT: list = []   # recovery() memoizes by the effect's id: keep them alive


@pytest.fixture(scope="module")
def six():
    return build_cluster(SIX, "Mixtral-8x7B", "decode")


def _alone(c, name):
    comp = next(x for x in c.components["leaf"] if x.name == name)
    r = c._evaluate(comp, *c._local(comp)[1:])
    KEPT.append(Effect(cls="leaf", example=name, components=1, parts=comp.parts, sms=0,
                       component=comp, **r))
    return KEPT[-1]


def test_the_spare_is_not_on_the_failed_leaf(six):
    c = six
    assert c.tp == 4
    i = c.member_of["gpu11"]
    assert c.instances[i] == ("gpu11", "gpu20", "gpu21", "gpu34")
    g = c.graph
    assert sorted(g.neighbors("gpu11")) == ["leaf3", "nvs1"]
    assert [sorted(n for n, _ in edges) for _, _, edges in _every(c)[:4]] == [
        ["leaf0", "nvs0"], ["leaf1", "nvs0"], ["leaf2", "nvs0"], ["leaf3", "nvs0"]]
    e = _alone(c, "leaf3")
    assert e.down == (i,)
    pod = recovery(c, e, "pod")
    # was 're-create on 4 spares' (pod) and 'no spare in the group meets the SLO' (group)
    assert (pod.path, pod.units, pod.restored) == ("substitute 1 spare", 1, 0.0)
    grp = recovery(c, e, "group")
    assert (grp.path, grp.units, grp.restored) == ("substitute 1 spare", 1, 0.0)


def test_classes_still_agree_member_by_member(six):
    classes, own = member_by_member(six, "leaf")
    assert classes == own
