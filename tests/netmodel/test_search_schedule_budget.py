"""The fabric search's charge of every instance at once (``instances = "all"``) falls back
to the lockstep where working out the schedule in time passes its budget, as ``collective
--all-groups`` does; ``--all-groups`` says so (``ConcurrentResult.schedule``), and now the
search does too: ``ScenarioCollectives.past_budget`` and a note in compare's and sweep's settings
(``not_computed``, in its JSON) and table."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np

from netmodel.collectives import concurrent_time
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.concurrent_time import LOCKSTEP_BUDGET, TIME
from netmodel.study.compare import run_compare
from netmodel.study.scenario_collectives import ScenarioCollectives


def _scenario(tmp_path) -> str:
    # h100-dgx with every instance at once, placed at random: instances of 4 GPUs fall
    # within a server or across two, and run different algorithms at some sizes
    text = resources.files("netmodel").joinpath("data/scenarios/h100-dgx.toml").read_text()
    text = text.replace('calibration = "default"',
                        'calibration = "default"\ninstances = "all"', 1)
    text = text.replace('placement = "contiguous"', 'placement = "random"', 1)
    assert 'instances = "all"' in text and 'placement = "random"' in text
    path = tmp_path / "h100_all_random.toml"
    path.write_text(text)
    return str(path)


def test_the_search_charge_says_where_it_fell_back(tmp_path, monkeypatch):
    sc = ScenarioCollectives(_scenario(tmp_path))
    n = 2.0 ** 22
    m, inst = sc.model(4), sc.instances(4)
    assert concurrent_cost(m, inst, "all-reduce", n).schedule == (TIME,)
    sc.collective_time("all-reduce", n, 4)
    assert sc.past_budget == []
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    ref = concurrent_cost(m, inst, "all-reduce", n)
    assert ref.schedule == (LOCKSTEP_BUDGET,)
    # the charge is --all-groups' lockstep, bit for bit, and the search now knows it
    assert np.asarray(sc.collective_time("all-reduce", n, 4)).tobytes() == \
        ref.makespan[0].tobytes()
    assert sc.past_budget == [("all-reduce", 4)]


def test_compare_notes_the_fallback(tmp_path, monkeypatch):
    path = _scenario(tmp_path)
    r = run_compare(["Llama-3-8B"], [path], phases=("decode",))
    label = r.scenarios[0].label
    assert f"schedule of {label}" not in r.settings.get("not_computed", {})
    assert "note: schedule of" not in r.table()
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    r = run_compare(["Llama-3-8B"], [path], phases=("decode",))
    note = r.settings["not_computed"][f"schedule of {label}"]
    assert "all-reduce on 4 GPUs" in note and "lockstep" in note
    assert f"note: schedule of {label}: {note}" in r.table().splitlines()
    assert json.loads(r.to_json())["settings"]["not_computed"][f"schedule of {label}"] == note


def test_sweep_notes_the_fallback(tmp_path, monkeypatch):
    from netmodel.study.sweep import run_sweep

    path = _scenario(tmp_path)
    r = run_sweep([path], ["adjust.hop_latency=0.1us"], ["Llama-3-8B"])
    assert not any(k.startswith("schedule of ") for k in r.settings.get("not_computed", {}))
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    r = run_sweep([path], ["adjust.hop_latency=0.1us"], ["Llama-3-8B"])
    said = {k: v for k, v in r.settings["not_computed"].items() if k.startswith("schedule of ")}
    assert len(said) == 1
    (k, v), = said.items()
    assert k.startswith(f"schedule of {r.labels[0]} at adjust.hop_latency=")
    assert "all-reduce on 4 GPUs" in v and "lockstep" in v
    assert f"note: {k}: {v}" in r.table().splitlines()


def test_search_notes_the_fallback(tmp_path, monkeypatch):
    # netmodel search --scenario (instances all) charges as compare does, and says where the
    # charge fell back as compare does: its key and words, a 'note:' line and, in its JSON,
    # not_computed
    from click.testing import CliRunner

    from netmodel.cli.main import cli
    from netmodel.cli.refusals import flag_of
    from netmodel.study.run_words import parameters_named_by

    path = _scenario(tmp_path)
    args = ["search", "--scenario", path, "--model", "Llama-3-8B", "--phase", "decode"]
    runner = CliRunner()
    quiet = runner.invoke(cli, args)
    assert quiet.exit_code == 0, quiet.output
    assert "note: schedule of" not in quiet.output
    assert "not_computed" not in json.loads(runner.invoke(cli, [*args, "--json"]).output)
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    with parameters_named_by(flag_of):   # the command line names the run's flags
        ref = run_compare(["Llama-3-8B"], [path], phases=("decode",))
    label = ref.scenarios[0].label
    note = ref.settings["not_computed"][f"schedule of {label}"]
    assert "all-reduce on 4 GPUs" in note and "collective --all-groups" in note
    said = runner.invoke(cli, args)
    assert said.exit_code == 0, said.output
    assert f"note: schedule of {label}: {note}" in said.output.splitlines()
    doc = json.loads(runner.invoke(cli, [*args, "--json"]).output)
    assert doc["not_computed"] == {f"schedule of {label}": note}


def test_sweep_of_a_cost_parameter_notes_every_point(tmp_path, monkeypatch):
    # points differing only in a cost parameter share one search and its charge: the note
    # named the first point only ('at cost.lifetime=9.46728e+07', the 3 years), as if the
    # 5-year point ran in time; now it names the scenario, every point of it
    from netmodel.study.sweep import run_sweep

    path = _scenario(tmp_path)
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    r = run_sweep([path], ["cost.lifetime=3y,5y"], ["Llama-3-8B"])
    said = {k: v for k, v in r.settings["not_computed"].items() if k.startswith("schedule of ")}
    assert list(said) == [f"schedule of {r.labels[0]}"]
    assert "all-reduce on 4 GPUs" in said[f"schedule of {r.labels[0]}"]
    # beside a search parameter, the note names its value only
    r = run_sweep([path], ["adjust.hop_latency=0.1us", "cost.lifetime=3y,5y"], ["Llama-3-8B"])
    said = [k for k in r.settings["not_computed"] if k.startswith("schedule of ")]
    assert said == [f"schedule of {r.labels[0]} at adjust.hop_latency=1e-07"]


def test_a_comparison_notes_its_own_charges_only(tmp_path, monkeypatch):
    # the study hands one comparison's collectives to the next (compare, then the paper's
    # and the packed parts): the second said the first's fallback though its own searches
    # all ran in time, ScenarioCollectives.past_budget counting every charge since it was built
    path = _scenario(tmp_path)
    colls: dict = {}
    budget = concurrent_time._TIMED_WORK
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    first = run_compare(["Llama-3-8B"], [path], phases=("decode",), collectives=colls)
    label = first.scenarios[0].label
    assert "all-reduce on 4 GPUs" in first.settings["not_computed"][f"schedule of {label}"]
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", budget)
    again = run_compare(["Llama-3-8B"], [path], phases=("decode",), collectives=colls)
    assert f"schedule of {label}" not in again.settings.get("not_computed", {})
    assert "note: schedule of" not in again.table()
    # the collectives still hold every charge since they were built: the first's
    from netmodel.study.scenario_collectives import schedule_note

    assert first.settings["not_computed"][f"schedule of {label}"] == \
        schedule_note(colls[label].past_budget)


def _says_the_fallback(monkeypatch, args, where):
    # the command (args) notes nothing at the shipped budget; with the budget forced to 0
    # one 'note: schedule of ...' line on 4-GPU instances, the same key and words in its
    # JSON's not_computed (where(doc): the dict that carries it)
    from click.testing import CliRunner

    from netmodel.cli.main import cli

    runner = CliRunner()
    quiet = runner.invoke(cli, args)
    assert quiet.exit_code == 0, quiet.output
    assert "note: schedule of" not in quiet.output
    assert "not_computed" not in where(json.loads(runner.invoke(cli, [*args, "--json"]).output))
    monkeypatch.setattr(concurrent_time, "_TIMED_WORK", 0)
    said = runner.invoke(cli, args)
    assert said.exit_code == 0, said.output
    lines = [x for x in said.output.splitlines() if x.startswith("note: schedule of ")]
    assert len(lines) == 1 and " on 4 GPUs" in lines[0]
    doc = json.loads(runner.invoke(cli, [*args, "--json"]).output)
    key, note = lines[0][len("note: "):].split(": ", 1)
    assert where(doc)["not_computed"] == {key: note}


def test_infer_notes_the_fallback(tmp_path, monkeypatch):
    # netmodel infer --scenario (instances all) charges one configuration as search does and
    # said nothing where that charge fell back: now search's note line and JSON key
    _says_the_fallback(monkeypatch, ["infer", "--scenario", _scenario(tmp_path), "--model",
                                     "Llama-3-8B", "--phase", "decode", "--tp", "4",
                                     "--batch", "64"], lambda doc: doc)


def test_serve_notes_the_fallback(tmp_path, monkeypatch):
    # netmodel serve (and the study's serving part) searches both pools through the
    # scenario's collectives and said nothing where their instances = all charge fell back:
    # now in its settings (not_computed, so its JSON) and a note line under its table.
    # --tp-only: the note is the pools' charges whatever the search's space (with it the
    # note names the all-gathers and all-reduces on 4 and 8 GPUs, without it the
    # reduce-scatters too), and the command runs 4x faster (4 runs here)
    _says_the_fallback(monkeypatch, ["serve", "--scenario", _scenario(tmp_path), "--model",
                                     "Llama-3-8B", "--tp-only"], lambda doc: doc["settings"])
