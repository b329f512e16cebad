"""A failure's local effect (``Cluster._local``) gathers the places of the members it hits
from the GPUs it takes or is wired to, and keeps the instances touched by routes alone as
their shapes; the plain way (every member of every touched instance looked at, each touched
instance one entry) must give the same GPUs lost and wired, the same touched instances and
the same symmetry classes (components grouped alike, in the same order)."""

from __future__ import annotations

import pytest

from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario
from topologies.graph_ops import edge_key


def _plain(c, comp) -> tuple:
    """(the per-instance part of the signature, lost, wired, touched) the plain way."""
    g, kind, index, member_of = c.graph, c.kinds, c._index, c.member_of
    failed = {n for n in comp.nodes if kind[n] == "gpu"}
    stopped = set(comp.disabled) - failed
    lost = failed | stopped
    wired, touched = set(), set()
    for u, v in (*comp.edges, *(e for e, _ in comp.scaled)):
        wired.update(x for x in (u, v) if kind[x] == "gpu")
        touched.update(index.get(edge_key(u, v), ()))
    for n in comp.nodes:
        touched.update(index.get(n, ()))
        if kind[n] != "gpu":
            wired.update(x for x in g.neighbors(n) if kind[x] == "gpu")
    wired -= lost
    touched.update(member_of[n] for n in lost | wired if n in member_of)
    touched.update(member_of[h] for _, hs in comp.handed for h in hs if h in member_of)
    per = []
    for i in touched:
        hit = tuple(sorted((m in failed, m in stopped, c._place(m)) for m in c.instances[i]
                           if m in lost or m in wired))
        f = sum(1 for m in c.instances[i] if m in failed)
        s = sum(1 for m in c.instances[i] if m in stopped)
        per.append((f, s, len(hit) - f - s, c.shape_ids[i], hit))
    return tuple(sorted(per)), lost, wired, touched


def _partition(sigs) -> list:
    """Each item's first item of the same signature (the grouping, in order)."""
    first: dict = {}
    return [first.setdefault(s, k) for k, s in enumerate(sigs)]


@pytest.mark.parametrize(("spec", "model"), [("torus:dims=8x8x4", "Llama-3-8B"),
                                             ("rail-optimized:domains=8", "Llama-3-8B")])
def test_local_matches_plain(spec, model):
    c = build_cluster(fabric_cluster_scenario(spec), model, "decode")
    comps = [x for cls in c.components.values() for x in cls]
    fast, plain = [], []
    routed_alone = 0
    for comp in comps:
        sig, lost, wired, touched = c._local(comp)
        per, p_lost, p_wired, p_touched = _plain(c, comp)
        assert (lost, wired, touched) == (p_lost, p_wired, p_touched), comp.name
        # the fast signature's two per-instance parts hold the plain one's entries: those
        # hit, and the shapes of those touched by routes alone, (0, 0, 0, shape, ()) each
        assert tuple(sorted([*sig[5], *((0, 0, 0, x, ()) for x in sig[6])])) == per
        fast.append(sig)
        # the plain signature: the fast one with its two per-instance parts replaced
        plain.append((sig[:5], per, sig[7:]))
        routed_alone += sum(1 for e in per if not e[4])
    assert _partition(fast) == _partition(plain)
    assert len(set(fast)) == len(set(plain)) > 1
    if spec.startswith("torus"):
        # links and GPUs of a torus lie on other instances' routes: the routed-alone part
        # is exercised (each such entry is (0, 0, 0, shape, ()))
        assert routed_alone > 0


def test_effects_collect_less_often_and_restore_the_collector(monkeypatch):
    """Cluster.effects works out the classes under the raised youngest threshold
    (collector.GC_YOUNG) and puts the thresholds back after."""
    import gc

    from netmodel.study.collector import GC_YOUNG
    from netmodel.study.reliability_cluster import Cluster

    c = build_cluster(fabric_cluster_scenario("torus:dims=4x4"), "Llama-3-8B", "decode")
    seen = []
    plain = Cluster._class_effects

    def spy(self, cls):
        seen.append(gc.get_threshold())
        return plain(self, cls)

    monkeypatch.setattr(Cluster, "_class_effects", spy)
    before = gc.get_threshold()
    assert c.effects()
    assert seen and set(seen) == {(max(before[0], GC_YOUNG), *before[1:])}
    assert gc.get_threshold() == before
