"""A symmetry class's split by recovery on pod spares
(:meth:`~netmodel.study.reliability_cluster.Cluster._by_recovery`) keeps each component's
:func:`~netmodel.study.reliability_recovery_key.recovery_key` by what the key reads: the
component's nodes and its local effect. The effects are the same as with every key worked
out afresh, and the components that share a kept key have equal fresh keys (h746)."""

from __future__ import annotations

import pytest

from netmodel.study import reliability_recovery_key as rk
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import capacity

MODEL = "Llama-3-70B"


class _Forget(dict):
    """A memo that keeps nothing: every key worked out afresh."""

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, value):
        pass


def _effects(cluster) -> list:
    return [(e, tuple(c.name for c in cluster.class_members(e))) for e in cluster.effects()]


@pytest.mark.parametrize("scenario", ["lite-ocs", "lite-flat"])
def test_kept_keys_split_as_fresh_ones(scenario, monkeypatch):
    calls = []
    original = rk.recovery_key

    def counted(*args):
        calls.append(args[1].name)
        return original(*args)

    monkeypatch.setattr(rk, "recovery_key", counted)
    kept = build_cluster(scenario, MODEL, "decode")
    assert capacity(kept, "pod") > 0   # pod spare sites: classes are split by recovery
    got = _effects(kept)
    asked = len(calls)
    fresh = build_cluster(scenario, MODEL, "decode")
    fresh.__dict__["_recovery_keys"] = _Forget()
    want = _effects(fresh)
    assert got == want   # every effect and its class's components, in order
    assert 0 < asked < len(calls) - asked   # fewer keys worked out than components split


def test_alike_names_alike_keys():
    # what the kept key is named by decides it: components of every class of a cell with
    # pod sites, grouped by (nodes, lost, wired, touched), have one fresh key a group
    c = build_cluster("lite-flat", MODEL, "decode")
    assert capacity(c, "pod") > 0
    groups: dict = {}
    for comps in c.components.values():
        for comp in comps:
            _, lost, wired, touched = c.local(comp)
            name = (comp.nodes, frozenset(lost), frozenset(wired), frozenset(touched))
            groups.setdefault(name, set()).add(
                rk.recovery_key(c, comp, lost, wired, touched))
    assert all(len(keys) == 1 for keys in groups.values())
    assert len({k for keys in groups.values() for k in keys}) > 1   # keys that split
    shared = sum(1 for comps in c.components.values() for _ in comps) - len(groups)
    assert shared > 0   # gpu-package's components are gpu-die's nodes, at least
