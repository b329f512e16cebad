"""Hostile values through the collective settings' library paths (h339).

collective_setup(simple_buffer=) for a scenario turned the value into whole bytes (its
override record) before any check: 'abc' and '4MiB' raised ValueError, nan ValueError, inf
OverflowError, and 0 was taken (recorded as an override of the scenario's 4,194,304 bytes,
the calibration reading 0 as its own 'no buffer'); for a fabric 0 was taken too.
ScenarioCollectives(calibration=) took any object (an int raised AttributeError inside
network_key). Each is now one line naming the parameter, as the CLI's --nccl-buffsize is.
"""

import math

import pytest

from compute.errors import UserError
from netmodel.study.collective_setup import collective_setup
from netmodel.study.scenario_collectives import ScenarioCollectives


@pytest.mark.parametrize("where", [{"scenario": "h100-dgx"}, {"fabric": "h100-dgx"}])
@pytest.mark.parametrize("value", ["abc", "4MiB", math.nan, math.inf, 0, 7, 1.5, True,
                                   2 ** 40 + 8])
def test_a_buffer_no_nccl_takes_is_refused_by_name(where, value):
    with pytest.raises(UserError) as e:
        collective_setup(**where, simple_buffer=value)
    text = str(e.value)
    assert "\n" not in text and text.startswith("simple_buffer must be a whole number")


def test_a_buffer_nccl_takes_is_kept_and_recorded():
    s = collective_setup(scenario="h100-dgx", simple_buffer=65536.0)
    assert s.calibration.simple_buffer == 65536.0
    assert s.overrides["nccl_buffsize"] == (4194304, 65536)   # NCCL's 4 MiB, the given


@pytest.mark.parametrize("value", [1, "default", True, object()])
def test_scenario_collectives_refuses_what_is_no_calibration(value):
    with pytest.raises(UserError, match=r"^calibration must be a netmodel\.collectives"):
        ScenarioCollectives("h100-dgx", calibration=value)


@pytest.mark.parametrize("given", [{"simple_buffer": 65536}, {"nccl_release": "2.26"}])
def test_nccl_settings_on_an_ideal_scenario_are_refused_as_its_keys_are(given):
    # a scenario file with calibration "ideal" refuses [collective] nccl_buffsize and
    # nccl_release (it holds no NCCL constants); the same settings given over it were a
    # silent no-op (the buffer: 0.16794 ms at 64 MiB on 8 GPUs with or without it,
    # recorded as an override) or refused without naming the scenario (the release)
    from dataclasses import replace

    from netmodel.study.scenario_catalog import get_scenario

    ideal = replace(get_scenario("h100-dgx"), calibration="ideal")
    with pytest.raises(UserError, match="scenario h100-dgx@H100-SXM's calibration 'ideal' "
                                        "holds no NCCL constants") as e:
        collective_setup(scenario=ideal, **given)
    assert "\n" not in str(e.value)
    with pytest.raises(UserError, match="calibration \"ideal\" holds no NCCL constants"):
        replace(ideal, **{"nccl_buffsize" if "simple_buffer" in given else "nccl_release":
                          next(iter(given.values()))})


def test_the_at_once_refusal_names_parameters_and_every_choice_it_takes(tmp_path):
    # CollectiveSetup.at_once_time (library) named flags ('--algorithms and --seed: ...;
    # override only --placement, --algorithm, --nccl-release or --nccl-buffsize'), and its
    # list had lost tuner, which c2618d1 made apply to every instance at once
    from dataclasses import replace

    from click.testing import CliRunner

    from netmodel.cli.main import cli
    from netmodel.study.scenario_catalog import get_scenario

    s = replace(get_scenario("h100-dgx"), instances="all")
    setup = collective_setup(scenario=s, seed=3, algorithms="ring,tree")
    with pytest.raises(UserError) as e:
        setup.at_once_time("all-reduce", 2.0 ** 20, 8)
    text = str(e.value)
    assert "--" not in text and text.startswith("algorithms='ring,tree' and seed=3: ")
    assert text.endswith("only placement, algorithm, tuner, nccl_release and nccl_buffsize "
                         "are taken")
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--scenario", "h100-dgx",
                                 "--group", "8", "--placement", "random", "--seed", "3"])
    assert r.exit_code == 0   # instances alone: the seed is taken (by random placement)
    f = tmp_path / "all.toml"
    f.write_text(s.to_toml())
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--scenario", str(f), "--group",
                                 "8", "--placement", "random", "--seed", "3"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert r.output.startswith("error: --seed 3: scenario 'h100-dgx@H100-SXM' runs")
    assert "tuner, --nccl-release and --nccl-buffsize are taken" in r.output


def test_the_buffer_refusal_states_the_default_the_data_file_holds(tmp_path, monkeypatch):
    # the message typed NCCL's default as 4194304 beside the data file's [pipeline]
    # simple_buffer (a fact said twice); it is read from the file now
    from netmodel.collectives import calibration as c
    from netmodel.collectives.calibration_files import default_calibration

    def said(v):
        with pytest.raises(UserError) as e:
            c.check_simple_buffer(v)
        return str(e.value)

    assert f"NCCL's default {int(default_calibration().simple_buffer)})" in said(7)
    text = c.DEFAULTS_PATH.read_text().replace("simple_buffer = 4194304",
                                               "simple_buffer = 8388608", 1)
    assert "simple_buffer = 8388608" in text
    path = tmp_path / "defaults.toml"
    path.write_text(text)
    monkeypatch.setattr(c, "DEFAULTS_PATH", path)
    c._nccl_buffer.cache_clear()
    try:
        assert "NCCL's default 8388608)" in said(7)
    finally:
        c._nccl_buffer.cache_clear()
