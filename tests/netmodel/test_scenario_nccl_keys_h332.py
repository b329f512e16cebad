"""A scenario's [collective] nccl_release and nccl_buffsize (h332, issue 11: one cost for
every command).

``netmodel collective --nccl-release/--nccl-buffsize`` reached only that command: infer,
search, compare, sweep, study and cost cost a scenario's collectives through its own
calibration (netmodel.study.scenario_fabric.scenario_calibration), which always took the
defaults, and a scenario file had no key for either (refused as unknown). Now both are
[collective] keys, declared as ``tuner`` is: optional, None the library's default, checked
by the library's own checks (Releases.check, check_simple_buffer), written back only when
set, refused in one line naming the key, the value and what is allowed. The calibration
holds them, so network_key (and the caches keyed by it) keep each release's costs apart.
Every test here fails on the old code (the keys unknown, the fields absent).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.collective_setup import collective_setup
from netmodel.study.scenario_catalog import get_scenario, scenario_names, shipped_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_fabric import network_key, scenario_calibration
from netmodel.study.scenario_files import load_scenario_text

H100 = get_scenario("h100-dgx")


def _text(keys: str, calibration: str = "default") -> str:
    return H100.to_toml().replace('calibration = "default"',
                                  f'calibration = "{calibration}"\n{keys}', 1)


def test_the_keys_are_read_normalised_and_written_back():
    s = load_scenario_text(_text('nccl_release = "v2.26.5-1"\nnccl_buffsize = 65536.0'))
    assert (s.nccl_release, s.nccl_buffsize) == ("2.26", 65536)
    assert 'nccl_release = "2.26"\nnccl_buffsize = 65536\n' in s.to_toml()
    assert load_scenario_text(s.to_toml()) == s
    cal = scenario_calibration(s)
    assert (cal.nccl_release, cal.simple_buffer) == ("2.26", 65536.0)
    # the Simple protocol's chunk is a step of the buffer: 65536 / NCCL_STEPS 8
    assert next(p.chunk for p in cal.protocols if p.name == "Simple") == 8192.0


@pytest.mark.parametrize("name", scenario_names())
def test_shipped_scenarios_set_neither_and_write_neither(name):
    s = shipped_scenario(name)
    assert s.nccl_release is None and s.nccl_buffsize is None
    assert not {"nccl_release", "nccl_buffsize"} & set(s.to_dict()["collective"])
    # the defaults: the newest release, NCCL's 4 MiB
    cal = scenario_calibration(s)
    if s.calibration == "default":
        assert (cal.nccl_release, cal.simple_buffer) == ("2.30", 4194304.0)


@pytest.mark.parametrize("keys, says", [
    ("nccl_release = 2.26", r"\[collective\]\.nccl_release must be a string \(\"2\.26\"\), "
                            r"got 2\.26"),
    ("nccl_release = 2.2", r"\[collective\]\.nccl_release must be a string"),
    ('nccl_release = "2.99"', r"\[collective\]\.nccl_release '2\.99' is not a release whose "
                              r"constants the data file holds: NCCL 2\.17\.\.2\.30"),
    ('nccl_release = "2.16"', r"\[collective\]\.nccl_release '2\.16' is not a release"),
    ('nccl_release = "two"', r"\[collective\]\.nccl_release must be an NCCL release "
                             r"MAJOR\.MINOR\[\.PATCH\].*got 'two'"),
    ('nccl_release = " 2.26"', r"\[collective\]\.nccl_release must be an NCCL release"),
    ("nccl_release = true", r"\[collective\]\.nccl_release must be an NCCL release.*got True"),
    ("nccl_buffsize = 0", r"\[collective\]\.nccl_buffsize must be a whole number of bytes from 8 B to 1 TiB "
                          r"\(1,099,511,627,776 B\) .*got 0$"),
    ("nccl_buffsize = 7", r"\[collective\]\.nccl_buffsize must be .*got 7$"),
    ("nccl_buffsize = -4194304", r"\[collective\]\.nccl_buffsize must be .*got -4194304$"),
    ("nccl_buffsize = 1.5", r"\[collective\]\.nccl_buffsize must be .*got 1\.5$"),
    ("nccl_buffsize = nan", r"\[collective\]\.nccl_buffsize must be .*got nan$"),
    ("nccl_buffsize = inf", r"\[collective\]\.nccl_buffsize must be .*got inf$"),
    ("nccl_buffsize = 2199023255552", r"\[collective\]\.nccl_buffsize must be .*got "
                                      r"2199023255552$"),
    ('nccl_buffsize = "4MiB"', r"\[collective\]\.nccl_buffsize must be .*got '4MiB'$"),
    ("nccl_buffsize = true", r"\[collective\]\.nccl_buffsize must be .*got True$"),
    ("nccl_buffsize = [4194304]", r"\[collective\]\.nccl_buffsize must be .*got \[4194304\]$"),
])
def test_hostile_values_are_refused_in_one_line(keys, says):
    with pytest.raises(UserError, match=says) as e:
        load_scenario_text(_text(keys))
    assert "\n" not in str(e.value)


def test_the_ideal_calibration_holds_no_nccl_constants():
    with pytest.raises(UserError, match=r"\[collective\]\.nccl_release '2\.26' and "
                                        r"\[collective\]\.nccl_buffsize 65536: calibration "
                                        r"\"ideal\" holds no NCCL constants"):
        load_scenario_text(_text('nccl_release = "2.26"\nnccl_buffsize = 65536', "ideal"))
    with pytest.raises(UserError, match=r"nccl_buffsize 64: calibration \"ideal\""):
        replace(get_scenario("lite-flat"), calibration="ideal", nccl_buffsize=64)


def test_a_release_before_the_gpu_is_refused_when_swapped():
    """NCCL supports Blackwell from 2.25 (h327): a scenario at 2.24 swapped onto B200 is
    refused there, not when its first collective is costed."""
    s = replace(H100, nccl_release="2.24")
    with pytest.raises(UserError, match=r"scenario 'h100-dgx': \[collective\]\.nccl_release "
                                        r"'2\.24': NCCL supports blackwell GPUs \(B200-HGX\) "
                                        r"from 2\.25 on"):
        s.with_gpu("B200-HGX")
    assert s.with_gpu("H200-SXM").nccl_release == "2.24"


def test_cli_refuses_a_hostile_key_in_one_line_naming_the_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(_text("nccl_buffsize = 1.5"))
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--scenario", str(path),
                                 "--size", "1MiB"])
    assert r.exit_code == 2
    # the file's key, not the flag --nccl-buffsize
    assert r.output.strip().splitlines() == [
        f"error: {path}: [collective].nccl_buffsize must be a whole number of bytes from 8 B to "
        f"1 TiB (1,099,511,627,776 B) (NCCL_BUFFSIZE; NCCL's default 4194304), got 1.5"]


def test_network_key_and_caches_keep_releases_apart():
    """B200 4 x 8 rail, 512 MiB all-reduce on 8 GPUs (NVLS in the server): 1.1972 ms at the
    newest release, 1.2109 ms at 2.26 (32 NVLS channels, not 24). Costed in one process,
    the default first, neither takes the other's cached models; the newest release named
    is the default (the same key, the same cache)."""
    b200 = get_scenario("h100-dgx@B200-HGX")
    at_226 = replace(b200, nccl_release="2.26")
    keys = {network_key(s, scenario_calibration(s)) for s in
            (b200, at_226, replace(b200, nccl_buffsize=2**16))}
    assert len(keys) == 3
    newest = replace(b200, nccl_release="2.30")
    assert network_key(newest, scenario_calibration(newest)) == \
        network_key(b200, scenario_calibration(b200))
    times = [float(ScenarioCollectives(s).collective_time("all-reduce", 2.0**29, 8))
             for s in (b200, at_226, b200, newest)]
    # each what a cost model of its own (no shared cache) gives (h339: was a pin of these
    # four, 1.1972/1.2109/1.1972/1.1972 ms, rounded)
    from netmodel.study.scenario_fabric import build_fabric, scenario_model

    fresh = [float(scenario_model(s, build_fabric(s), 8, scenario_calibration(s))
                   .collective_time("all-reduce", 2.0**29, 8)) for s in (b200, at_226)]
    assert times == [fresh[0], fresh[1], fresh[0], fresh[0]]
    assert fresh[1] > fresh[0]   # 32 NVLS channels fill longer than 24 (h322's knee)


def test_collective_names_the_scenarios_keys_and_the_overrides():
    s = replace(H100, nccl_release="2.26", nccl_buffsize=2**20)
    assert "nccl_release 2.26; nccl_buffsize 1048576" in collective_setup(scenario=s).note()
    setup = collective_setup(scenario=s, nccl_release="2.28.9", simple_buffer=2.0**20)
    assert setup.overrides == {"nccl_release": ("2.26", "2.28")}
    assert "nccl_release 2.28 (given; the scenario's: 2.26); nccl_buffsize 1048576" in \
        setup.note()
    assert setup.calibration.nccl_release == "2.28"
    # a shipped scenario's note says neither
    assert "nccl" not in collective_setup(scenario="h100-dgx").note()
