"""A failure that costs no instance anything is not evaluated again for each group.

With ``group`` spares ``by_group`` splits a symmetry class by the group its components sit
in, and evaluated the class's failure again on a component of each group, so that each
group's recovery is its own. Where the class's failure takes no instance down and slows
none there is nothing to recover in any group: a NIC of a 4,096-GPU rail-optimized cell
re-costed an instance for each of its 512 groups (7 of the availability's 20 s CPU). Now
such a class's groups take its effect as evaluated once. On 8 DGX-like servers of 8 H100
(rail-optimized, a ``group`` a server) serving Llama-3-8B at TP 1, a NIC's or a
transceiver's loss cuts one GPU's rail link only, and a TP-1 instance uses no link: no
instance down, none slowed, no GPU lost (by hand), in each of the 8 groups, the same as
evaluating each group's own component gives. A GPU's failure still takes its own instance
down in its own group: evaluated per group, its own instance.
"""

from __future__ import annotations

from netmodel.study import reliability_recovery as rr
from netmodel.study import reliability_spares as rs
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario

FIELDS = ("gpus_lost", "gpus_disabled", "gpus_cut", "instances_down", "slo_down",
          "cut_down", "slow", "rebalanced", "down_members", "down", "slowed")


def _cluster(monkeypatch):
    c = build_cluster(fabric_cluster_scenario("rail-optimized:domains=8"), "Llama-3-8B",
                      "decode")
    original, calls = type(c).evaluate, []

    def counted(self, comp, *local):
        calls.append(comp)
        return original(self, comp, *local)

    monkeypatch.setattr(type(c), "evaluate", counted)   # a frozen dataclass: its class
    return c, lambda *a: original(c, *a), calls


def test_harmless_classes_are_evaluated_once(monkeypatch):
    c, evaluate, calls = _cluster(monkeypatch)
    assert (c.tp, c.gpus) == (1, 64)
    members = rs._groups(c)
    effects = [e for e in c.effects() if e.cls in ("nic", "transceiver")
               and e.components == 64]
    assert len(effects) == 2
    for effect in effects:
        assert not effect.down and not effect.slowed and effect.gpus_lost == 0
        calls.clear()
        out = rr.by_group(c, effect)
        assert calls == []   # the old code: 7, one per group past the first
        assert sorted(g for g, *_ in out) == list(range(8))
        assert sum(e.components for _, e, *_ in out) == 64
        for g, e, parts, follows, shares in out:
            assert (follows, shares) == (False, None)
            assert e.components == 8 and parts == e.parts
            # each group's own component, in its group, fares as evaluating it gives
            _, lost, wired, touched = c.local(e.component)
            assert (lost | wired) <= set(list(members.values())[g])
            own = evaluate(e.component, lost, wired, touched)
            assert {f: getattr(e, f) for f in FIELDS} == {f: own[f] for f in FIELDS}
            assert (e.instances_down, e.down, e.slowed) == (0, (), ())


def test_a_gpu_failure_is_still_its_own_groups(monkeypatch):
    c, _, calls = _cluster(monkeypatch)
    effect = next(e for e in c.effects() if e.cls == "gpu-die")
    out = rr.by_group(c, effect)
    assert len(calls) == 7   # every group but the class's own example's
    assert sorted(g for g, *_ in out) == list(range(8))
    for _, e, *_ in out:   # TP 1: the failed GPU's own instance, down
        gpu = next(n for n in e.component.nodes)
        assert e.instances_down == 1 and e.down == (c.member_of[gpu],)


def test_a_recovery_of_lost_members_asks_no_partition(monkeypatch):
    # a GPU's failure takes its own instance down by the member it lost: the members to
    # replace are that one (by hand), and the cell's connected parts (a dict of every node,
    # once per recovery: 8,192 recoveries on a 16,384-GPU cell) are not asked for
    c, _, _ = _cluster(monkeypatch)
    effect = next(e for e in c.effects() if e.cls == "gpu-die")
    original, asked = type(c).partition, []

    def counted(self, comps):
        asked.append(comps)
        return original(self, comps)

    monkeypatch.setattr(type(c), "partition", counted)
    for _, e, *_ in rr.by_group(c, effect):
        gpu = next(n for n in e.component.nodes)
        inst = c.instances[c.member_of[gpu]]
        assert rr._replace(c, e.component, e) == [(inst, [gpu])]
    assert asked == []   # the old code: once per group


def test_the_blocking_reads_each_kinds_failure_once(monkeypatch):
    # the closed form's blocking, per pool slot (one a group: 8 here), read which failure
    # strikes each kind from a pass over every kind, once per slot (2,048 slots of
    # ~8,000 kinds on a 16,384-GPU cell); now once, and each slot's asks as before
    from netmodel.study import availability_analytic as aa
    from netmodel.study.availability_kinds import event_kinds

    c, _, _ = _cluster(monkeypatch)
    kinds = event_kinds(c, "group")
    pools = rs.spare_pools(c, 16, "group")
    assert pools.groups == 8
    lead, calls = aa._lead, []

    def counted(ks):
        calls.append(1)
        return lead(ks)

    monkeypatch.setattr(aa, "_lead", counted)
    aa._blocking(kinds, pools)
    assert len(calls) == 1
    family = lead(kinds)
    # a kind that follows another is struck by its failure: its lead, by hand
    assert all(family[k] == family[k - 1] for k, x in enumerate(kinds) if k and x.follows)
    for g in range(8):
        ks = [k for k, x in enumerate(kinds) if x.group == g]
        assert aa._asks(kinds, ks, family) == aa._asks(kinds, ks)
