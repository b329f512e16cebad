"""A torus's blast radius reuses what one failure's re-costing makes: one cost model (and
router) per degraded cell for every instance the failure touches, a gpu-package class
grouped and answered as its gpu-die twin, degraded copies that share the cell's attribute
dicts where the failure only removes parts, and link codes keyed cheaply but apart by the
values' types. Each must give what the plain way gives."""

from __future__ import annotations

from dataclasses import replace

import pytest

import netmodel.study.reliability_cluster as rc
import netmodel.study.reliability_recost as rr
import netmodel.study.scenario_fabric as sf
from netmodel.study.cell_routes import CellRoutes
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario
from topologies.specs import build


def _cluster(spec="torus:dims=8x8x4", model="Llama-3-70B"):
    return build_cluster(fabric_cluster_scenario(spec), model, "decode")


def _recosted(c, comp):
    """The instances a failure of ``comp`` re-costs (touched, none of their members lost)."""
    _, lost, _, touched = c._local(comp)
    return [i for i in sorted(touched) if not any(m in lost for m in c.instances[i])]


def test_one_cost_model_per_degraded_cell(monkeypatch):
    c = _cluster()
    assert c.direct
    assert c.healthy   # costed first, on a graph of its own
    comp = next(x for x in c.components["gpu-die"] if len(_recosted(c, x)) >= 3)
    made = []
    plain = sf.scenario_cost_model
    monkeypatch.setattr(sf, "scenario_cost_model",
                        lambda *a, **k: made.append(a[1]) or plain(*a, **k))
    out = c.evaluate(comp, *c.local(comp)[1:])
    assert len(made) == 1   # one model of the one degraded cell, for 3 or more instances
    monkeypatch.setattr(sf, "scenario_cost_model", plain)
    # the plain way: each instance on a graph and a model of its own
    d = _cluster()
    assert d.healthy
    for i in _recosted(c, comp):
        inst = c.instances[i]
        d.__dict__.pop("_last_direct", None)
        d.costing.release()
        want = d.rebalanced(d.recost_graph([comp], inst), inst)
        got, _ = c._recost((comp,), inst)
        assert (got.batch, got.tokens_per_s, got.latency) == \
            (want.batch, want.tokens_per_s, want.latency)
    assert out["slow"] == d.evaluate(comp, *d.local(comp)[1:])["slow"]


def test_package_class_is_its_die_twin(monkeypatch):
    c = _cluster()
    seen = []
    local, copy = rc.Cluster._local, rr.copy_graph
    monkeypatch.setattr(rc.Cluster, "_local",
                        lambda self, x: seen.append(("local", x.cls)) or local(self, x))
    monkeypatch.setattr(rr, "copy_graph",
                        lambda g, **k: seen.append(("copy", None)) or copy(g, **k))
    die, package = (c.effects([cls]) for cls in ("gpu-die", "gpu-package"))
    assert len(die) > 1
    # effects of one call each: the package class worked out in full, as the die class
    assert [replace(e, cls="gpu-die") for e in package] == die
    seen.clear()
    d = _cluster()
    both = d.effects(["gpu-die", "gpu-package"])
    assert [e for e in both if e.cls == "gpu-package"] == package
    # together: the package class's components grouped as the die's (one local effect
    # per group, its first), and no degraded cell copied for it (the die's answers)
    monkeypatch.setattr(rc.Cluster, "_local", local)
    first = next(k for k, s in enumerate(seen) if s == ("local", "gpu-package"))
    assert seen.count(("local", "gpu-package")) == len(package) < len(d.components["gpu-package"])
    assert ("copy", None) not in seen[first:]


def test_removal_copies_share_the_cell_dicts():
    c = _cluster()
    comp = c.components["copper-end"][0]
    assert comp.edges and not comp.scaled
    inst = c.instances[0]
    g = c.recost_graph([comp], inst)
    u, v = comp.edges[0]
    assert not g.has_edge(u, v) and c.graph.has_edge(u, v)
    assert g.nodes["gpu1"] is c.graph.nodes["gpu1"]
    w = next(iter(g._adj["gpu1"]))
    assert g._adj["gpu1"][w] is c.graph._adj["gpu1"][w] is g._adj[w]["gpu1"]


def test_nic_handing_copies_its_own_dicts():
    # a GPU holding its server's one NIC hands the NIC's link on: degrade wires it anew,
    # so the copy is a full one and the cell keeps its own links as they were
    c = _cluster("rail-optimized:domains=2,nics_per_server=1")
    comp = next(x for x in c.components["gpu-die"] if x.handed)
    assert c.direct
    before = {(a, b): dict(d) for a, b, d in c.graph.edges(data=True)}
    inst = next(i for i in c.instances if not set(i) & set(comp.nodes))
    g = c.recost_graph([comp], inst)
    c.rebalanced(g, inst)
    assert not any(g.nodes[n] is c.graph.nodes[n] for n in g)
    assert {(a, b): d for a, b, d in c.graph.edges(data=True)} == before


@pytest.mark.parametrize("attrs", [[{"x": 1}, {"x": 1.0}, {"x": True}],
                                   [{"a": 1, "b": 2}, {"b": 2, "a": 1}]])
def test_codes_keep_types_apart_and_orders_together(attrs):
    # codes are kept by dict id, for a cell's dicts: every dict here stays alive
    r = CellRoutes(build("ring:n=4"))
    codes = [r._code(d) for d in attrs]
    if len(attrs) == 3:   # 1, 1.0 and True are equal in Python, not as attributes
        assert len(set(codes)) == 3
    else:                 # the same items set in another order: one code
        assert len(set(codes)) == 1
    again = [dict(d) for d in attrs]
    assert [r._code(d) for d in again] == codes   # equal dicts, equal codes
    a, b, c = {"x": [1]}, {"x": [1]}, {"x": [2]}  # a value not hashable: by its repr
    assert r._code(a) == r._code(b) != r._code(c)
