"""find_crossovers builds each scenario's collective costs once, not once a row.

``colls.setdefault(label, ScenarioCollectives(s))`` built a ScenarioCollectives (its
fabric, calibration and network key) for every row it searched and kept the first: in
study lite-gpu 90 built for 25 scenarios. Now one a scenario; the crossovers are those of
each model's comparison on its own (which meets each scenario once).
"""

from __future__ import annotations

import pytest

import netmodel.study.scenario_collectives as sc
from netmodel.study.compare import run_compare
from netmodel.study.crossovers import find_crossovers

MODELS = ["Llama-3-70B", "GPT-3-175B"]
SCENARIOS = ["h100-dgx", "lite-flat@Lite", "lite-flat@Lite+BW"]


@pytest.fixture(scope="module")
def fab():
    return run_compare(MODELS, SCENARIOS, ["decode"])


def test_one_collectives_a_scenario_and_the_same_rows(fab, monkeypatch):
    built: list = []
    real = sc.ScenarioCollectives

    class Counted(real):
        def __init__(self, scenario, *a, **k):
            built.append(scenario.label)
            super().__init__(scenario, *a, **k)

    monkeypatch.setattr(sc, "ScenarioCollectives", Counted)
    both = find_crossovers(fab, latency=False)
    lite = [r.label for r in fab.rows if r.label != fab.baseline]
    assert len(lite) == len(MODELS) * (len(SCENARIOS) - 1)
    assert sorted(built) == sorted(set(lite))   # HEAD: one a row, 4 for 2
    monkeypatch.setattr(sc, "ScenarioCollectives", real)
    alone = [r for m in MODELS
             for r in find_crossovers(run_compare([m], SCENARIOS, ["decode"]),
                                      latency=False).rows]
    key = lambda r: (r.model, r.gpu)   # noqa: E731
    assert sorted(both.rows, key=key) == sorted(alone, key=key)
