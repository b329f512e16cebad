"""circuits = "best" keeps a size's chosen layout and its model together whatever the
process-wide cache (scenario_collectives._SHARED, oldest dropped past _SHARED_MAX) drops.

The models of a ``best`` scenario and of each layout's (``with_circuits``) are kept in
separate entries of that cache, dropped one at a time. Before, a ``best`` scenario's
costs made after its layout's entry was dropped kept the chosen model yet realized and
compiled the layout again for ``with_circuits(layout)`` (an equal model, not the kept one);
seeding the layout's new costs with the kept model alone (a reverted attempt) left them a
model without its layout, so ``best_layout`` found no layout it could set and
``blast-radius --scenario lite-ocs`` raised "cannot unpack non-iterable NoneType object".
Every way of dropping the three entries is tried here, with the realizations counted.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations

import pytest

from compute.memo import Lru
from netmodel.study import scenario_collectives as sc
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from tests.netmodel.cli_helpers import run_cli

#: 9 Lites: a ring (the 3x3 torus the 4 ports cannot set); 16: a 4x4 torus, chosen
CHOSEN = {9: "ring", 16: "torus"}


@pytest.fixture
def made(monkeypatch):
    """An empty process-wide cache, and the count of each (circuits, size) realized and
    compiled (:func:`~netmodel.study.scenario_fabric.layout_model` as the costs call it)."""
    monkeypatch.setattr(sc, "_SHARED", Lru(sc._SHARED_MAX))
    count: Counter = Counter()
    real = sc.layout_model

    def counting(scenario, graph, size, *args, **kwargs):
        count[scenario.circuits, int(size)] += 1
        return real(scenario, graph, size, *args, **kwargs)

    monkeypatch.setattr(sc, "layout_model", counting)
    return count


def _drop(*colls: ScenarioCollectives) -> None:
    """Drop each of ``colls``' models from the process-wide cache, as its eviction does."""
    for c in colls:
        keys = [k for k, d in sc._SHARED.items() if d is c._models]
        assert keys, c
        for k in keys:
            del sc._SHARED[k]


DROPS = [set(c) for r in range(4) for c in combinations(("best", "ring", "torus"), r)]


@pytest.mark.parametrize("dropped", DROPS, ids=lambda d: "+".join(sorted(d)) or "none")
def test_the_kept_model_is_its_layouts_own_whatever_is_dropped(made, dropped):
    s = get_scenario("lite-ocs")
    assert s.circuits == "best"
    first = ScenarioCollectives(s)
    assert {p: first.layout(p) for p in CHOSEN} == CHOSEN
    # each layout set once a size (9's torus too: the ports set it as a ring, refused)
    assert made == {(lay, p): 1 for lay in ("ring", "torus") for p in CHOSEN}
    _drop(*({"best": first, "ring": first.with_circuits("ring"),
             "torus": first.with_circuits("torus")}[n] for n in dropped))
    made.clear()
    coll = ScenarioCollectives(s)
    for p, lay in CHOSEN.items():
        assert coll.layout(p) == lay
        fixed = coll.with_circuits(lay)
        assert fixed.layout(p) == lay
        assert fixed.model(p) is coll.model(p)
    # nothing is realized again while the best scenario's entry keeps the chosen models
    # (before: 1 a size whose layout's entry was dropped); without it, the choice is made
    # again, each layout set again where its own entry was dropped too
    assert sum(made.values()) == (2 * len(dropped - {"best"}) if "best" in dropped else 0)


def test_a_layouts_costs_made_earlier_take_a_size_kept_later(made):
    # the first costs make their ring and torus costs at 9; those entries are dropped, and
    # other costs of the scenario (sharing the best entry) keep 16 as a torus made anew
    s = get_scenario("lite-ocs")
    first = ScenarioCollectives(s)
    first.model(9)
    torus = first.with_circuits("torus")
    _drop(torus, first.with_circuits("ring"))
    kept = ScenarioCollectives(s).model(16)
    made.clear()
    # before: the first costs' torus realized 16 again, not the model they keep
    assert torus.model(16) is kept and torus.layout(16) == "torus"
    assert first.model(16) is kept and first.layout(16) == "torus"
    assert not made


def test_blast_radius_after_the_layouts_entries_then_the_best_one_are_dropped(made):
    # the reverted attempt's failure: costs made after the layouts' entries were dropped
    # gave their new layout costs the kept models without their layouts; once the best
    # entry was dropped too, a new choice found no layout set ("cannot unpack
    # non-iterable NoneType object")
    args = ["blast-radius", "--scenario", "lite-ocs", "--model", "Llama-3-8B", "--json"]
    r = run_cli(args)
    assert r.exit_code == 0, (r.output, r.exception)
    clean = json.loads(r.output)
    s = get_scenario("lite-ocs")
    coll = ScenarioCollectives(s)
    sizes = sorted(k for k in coll._models if isinstance(k, int))
    assert sizes == [2, 4, 8, 16, 32]   # what the blast radius costs
    chosen = {p: coll.layout(p) for p in sizes}
    _drop(coll.with_circuits("ring"), coll.with_circuits("torus"))
    again = ScenarioCollectives(s)
    for p in sizes:
        assert again.with_circuits(chosen[p]).model(p) is again.model(p)
    _drop(again)
    last = ScenarioCollectives(s)
    assert {p: last.layout(p) for p in sizes} == chosen
    for p, lay in chosen.items():
        assert last.with_circuits(lay).layout(p) == lay
    r = run_cli(args)
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.output) == clean
