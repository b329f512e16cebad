"""What study lite-gpu's fabric comparisons and serving part keep or skip (h755), and that
each kept or skipped value is the one worked out afresh, to the last bit:

* the searches with an ideal network (compare's ``vs ideal``), kept process-wide by
  everything they read (:func:`netmodel.study.compare._ideal_search`): a second
  comparison of the same settings (the study's packed one) does not search again, one of
  other options does, and the rows are those of a fresh run;
* the optical ports of a built fabric (:func:`netmodel.study.serving_transfer._ports`),
  counted once per frozen graph, afresh for a graph that may change;
* ``circuits = "best"`` on a fabric of fewer than 4 ports a GPU (a serving pool's, ports set
  aside for the KV cache): the torus is not realized and modelled only to be found a ring.
"""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import pytest

import netmodel.study.compare as compare
from compute.roofline_options import RooflineOptions
from netmodel.study.circuit_copies import ocs_ports
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.serving_transfer import _PORTS, _ports, kv_splits, pool_scenario
from topologies.schema import gpu_nodes


def _ideal_searches(monkeypatch) -> list:
    """Record each search compare runs with an ideal network."""
    calls: list = []
    real = compare.search

    def counted(*args, **kwargs):
        if type(kwargs.get("comm")).__name__ == "NoCommunication":
            calls.append(args[:3])
        return real(*args, **kwargs)

    monkeypatch.setattr(compare, "search", counted)
    return calls


def test_ideal_search_kept_by_what_it_reads(monkeypatch):
    compare._IDEAL.clear()
    calls = _ideal_searches(monkeypatch)
    args = (["Llama-3-8B"], ["h100-dgx", "lite-flat"], ["decode"])
    first = compare.run_compare(*args)
    assert len(calls) == 2          # one GPU each: H100-SXM and Lite
    again = compare.run_compare(*args)
    assert len(calls) == 2          # kept: not searched again
    assert again.rows == first.rows
    # other options: searched again (the key holds the options)
    compare.run_compare(*args, options=RooflineOptions(overlap_collectives=True))
    assert len(calls) == 4
    # another largest batch: searched again
    compare.run_compare(*args, max_batch=64)
    assert len(calls) == 6
    # the rows of a kept search are those of a fresh one, to the last bit
    compare._IDEAL.clear()
    fresh = compare.run_compare(*args)
    assert len(calls) == 8
    assert [r.to_dict() for r in fresh.rows] == [r.to_dict() for r in again.rows]
    assert [r.ideal_tokens_per_s_per_sm for r in fresh.rows] == \
        [r.ideal_tokens_per_s_per_sm for r in first.rows]


def test_ports_counted_once_per_frozen_graph():
    from netmodel.study.scenario_fabric import build_fabric

    s = get_scenario("lite-ocs")
    graph = build_fabric(s)
    assert nx.is_frozen(graph)
    assert _ports(s) == ocs_ports(graph, gpu_nodes(graph)) == 4
    assert _PORTS[graph] == 4
    for k in kv_splits(s):   # each pool's fabric: 4 - k ports
        pool = pool_scenario(s, k)
        assert _ports(pool) == 4 - k
        g = build_fabric(pool)
        assert _PORTS[g] == ocs_ports(g, gpu_nodes(g))


def test_ports_of_a_graph_that_may_change_counted_afresh():
    from netmodel.study.scenario_fabric import build_fabric

    s = get_scenario("lite-ocs")
    mine = nx.Graph(build_fabric(s))   # a thawed copy, as a caller's graph may be
    assert not nx.is_frozen(mine)
    own = replace(s, graph=mine)
    assert _ports(own) == 4
    gpu = gpu_nodes(mine)[0]
    mine.remove_edge(gpu, next(o for o in mine.neighbors(gpu)
                               if mine.nodes[o]["kind"] == "ocs"))
    assert _ports(own) == 3            # not a count kept from before
    assert mine not in _PORTS


@pytest.mark.parametrize("kv", [1, 2])
def test_torus_under_four_ports_not_modelled(kv, monkeypatch):
    """A pool of 3 or 2 ports a GPU: ``best``'s torus is a ring there; make("torus") says
    None without realizing and modelling the torus's circuits, as building them found."""
    import netmodel.study.scenario_collectives as sc
    from compute.memo import Lru

    monkeypatch.setattr(sc, "_SHARED", Lru(256))   # no model kept from another test
    made: list = []
    real = sc.layout_model

    def counted(scenario, *args, **kwargs):
        made.append(scenario.circuits)
        return real(scenario, *args, **kwargs)

    monkeypatch.setattr(sc, "layout_model", counted)
    pool = pool_scenario(get_scenario("lite-ocs"), kv)
    coll = ScenarioCollectives(pool)
    for size in (8, 16):
        assert coll._layout_model(size)("torus") is None
        assert "torus" not in made                          # nothing realized or modelled
        assert size not in coll.with_circuits("torus")._models
    # what building them gives: the circuits set as a ring, so no torus to choose
    built = ScenarioCollectives(replace(pool, circuits="torus"))
    assert [built.layout(size) for size in (8, 16)] == ["ring", "ring"]
    assert coll.layout(16) == "ring"


def test_torus_on_four_ports_still_modelled():
    """lite-ocs's 4 ports a GPU take a torus of 16: it is made and weighed."""
    coll = ScenarioCollectives(get_scenario("lite-ocs"))
    made = coll._layout_model(16)("torus")
    assert made is not None
    assert coll.with_circuits("torus").layout(16) == "torus"


def test_pool_scenario_made_once_a_call(monkeypatch):
    """serve makes each pool scenario once a call (for the pools and the instance cap, 3
    times before), and a second call gives the same service."""
    import netmodel.study.serving as serving

    made: list = []
    real = serving.pool_scenario

    def counted(s, kv):
        made.append(kv)
        return real(s, kv)

    monkeypatch.setattr(serving, "pool_scenario", counted)
    out = serving.serve("Llama-3-8B", "lite-ocs", "coding", kv_ports=2)
    assert made.count(2) == 1
    monkeypatch.setattr(serving, "pool_scenario", real)
    again = serving.serve("Llama-3-8B", "lite-ocs", "coding", kv_ports=2)
    assert again.feasible and again.to_json() == out.to_json()


def test_row_fields_as_the_search_charged():
    """compare's row, made at once: the packed fields, the ideal per packed share and
    vs ideal as the search found them, to the last bit."""
    r = compare.run_compare(["Llama-3-8B"], ["lite-flat"], ["decode"], instances="all")
    row, found = r.rows[0], r.searches[0]
    assert row.feasible
    assert (row.instances, row.packed_fraction) == (found.instances, found.packed_fraction)
    assert row.tokens_per_s_per_sm == found.best.tokens_per_s_per_sm * found.packed_fraction
    assert row.tokens_per_s == found.best.tokens_per_s * found.instances
    assert row.reconfiguration_s == found.reconfiguration_s
    alone = compare.run_compare(["Llama-3-8B"], ["lite-flat"], ["decode"]).rows[0]
    assert row.ideal_tokens_per_s_per_sm == \
        alone.ideal_tokens_per_s_per_sm * found.packed_fraction
    assert row.ideal_tokens_per_s_per_sm is not None
    assert row.vs_ideal == row.tokens_per_s_per_sm / row.ideal_tokens_per_s_per_sm
