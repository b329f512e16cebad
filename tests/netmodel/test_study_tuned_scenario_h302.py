"""The study runs a scenario whose ``[collective] tuner`` is set (h302), its packed part too
(h337): every instance at once takes the plugin's choice per instance, as one alone does
(ScenarioCollectives refused the two together until h337, so the packed part left such a
scenario out; before h302 the whole study was refused in one line, 'tuner ... chooses for
instances alone', --no-packed the only way to run it)."""

from __future__ import annotations

import pytest

from netmodel.study.scenario_files import load_scenario_text
from tests.netmodel.scenario_helpers import efa_tuned_toml

TUNED = efa_tuned_toml("aws-ofi-nccl:p5")


@pytest.fixture(scope="module")
def study():
    from netmodel.study.lite_gpu import run_full_study

    tuned = load_scenario_text(TUNED, "efa-tuned.toml")
    return run_full_study(["Llama-3-70B"], ["H100-SXM", "Lite"], ["decode"],
                          networks=["ring"], scenarios=[tuned], sweep=False, paper=False,
                          reliability=False, cost=False, crossovers=False, serving=False,
                          moe=None)


def test_a_tuned_scenario_runs_in_the_study_and_its_packed_part(study):
    labels = {r.label for r in study.fabric.rows}
    assert labels == {"h100-dgx@H100-SXM", "efa-tuned@Lite"}
    tuned = next(s for s in study.fabric.scenarios if s.name == "efa-tuned")
    assert tuned.tuner == "aws-ofi-nccl:p5"
    assert study.packed is not None
    assert {r.label for r in study.packed.rows} == {"h100-dgx@H100-SXM", "efa-tuned@Lite"}


def test_the_packed_part_of_the_baseline_is_what_it_is_without_the_tuned_scenario(study):
    # the tuned scenario beside it changes nothing of the rest of the packed part
    from netmodel.study.lite_gpu import run_full_study

    alone = run_full_study(["Llama-3-70B"], ["H100-SXM"], ["decode"], networks=["ring"],
                           scenarios=["h100-dgx"], sweep=False, paper=False,
                           reliability=False, cost=False, crossovers=False, serving=False,
                           moe=None)
    key = [(r.label, r.tp, r.batch, r.tokens_per_s_per_sm) for r in study.packed.rows
           if r.label == "h100-dgx@H100-SXM"]
    assert key == [(r.label, r.tp, r.batch, r.tokens_per_s_per_sm) for r in alone.packed.rows]


def test_a_scenario_with_no_tuner_plugin_is_packed():
    # tuner None is NCCL's own tuner, as "none" is (tuner_refusal, ScenarioCollectives):
    # the packed part keeps it (h302: the selection compared with "none" left it out)
    from dataclasses import replace

    from netmodel.study.lite_gpu import run_full_study
    from netmodel.study.scenario_catalog import get_scenario

    own = replace(get_scenario("h100-dgx"), tuner=None)
    r = run_full_study(["Llama-3-70B"], ["H100-SXM"], ["decode"], networks=["ring"],
                       scenarios=[own], sweep=False, paper=False, reliability=False,
                       cost=False, crossovers=False, serving=False, moe=None)
    assert r.packed is not None
    assert {x.label for x in r.packed.rows} == {"h100-dgx@H100-SXM"}
