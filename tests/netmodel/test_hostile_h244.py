"""Hostile files, pass h244: a scenario file's [fabric] values that only its builder checks.
Before, the builder's refusal named the builder alone ('flat: n must be an integer >= 1, got
-1'), not the file the value was read from; every test here fails on that code."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from netmodel.study.scenario_files import load_scenario
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

FLAT = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text().replace(
    'name = "lite-flat"', 'name = "mine"')


@pytest.mark.parametrize("line,new,needle", [
    ("n = 128", "n = -1", "flat: n must be an integer >= 1, got -1"),
    ("planes = 4", 'planes = "x"', "flat: planes must be an integer, got 'x'"),
    ("radix = 144", "radix = 1000000000000", "flat: radix must be an integer in 1..1,000,000"),
    ('medium = "co-packaged-optics"', 'medium = "x"', "flat: medium 'x' is not a known medium"),
    ("in_network_reduction = false", "in_network_reduction = 0",
     "flat: in_network_reduction must be true or false, got 0"),
], ids=["n", "planes", "radix", "medium", "reduction"])
def test_a_fabric_value_the_builder_refuses_names_the_file(tmp_path, line, new, needle):
    assert line in FLAT
    f = tmp_path / "s.toml"
    f.write_text(FLAT.replace(line, new, 1))
    want = f"{f}: [fabric]: {needle}"
    with pytest.raises(UserError) as e:
        build_fabric(load_scenario(f))
    assert str(e.value).startswith(want), str(e.value)
    for args in (["cost", "--scenario", f, "--model", "Llama-3-8B"],
                 ["topology", "show", f],
                 ["collective", "all-reduce", "--scenario", f, "--size", "8M"],
                 ["compare", "--scenarios", f"{f}@Lite+BW", "--models", "Llama-3-8B", "-q"]):
        one_line_error(run_cli(args), want)


def test_a_value_set_on_a_file_names_both_and_a_shipped_scenario_neither(tmp_path):
    # a value set by with_param (a sweep) on a file's scenario: the file and the value set
    # (the refused value may be either); a shipped scenario is no file's: the builder alone
    f = tmp_path / "s.toml"
    f.write_text(FLAT)
    s = load_scenario(f)
    assert s.source == str(f) and s == get_scenario(str(f))
    swept = s.with_param("fabric.n", 0)
    assert swept.source == f"{f} with fabric.n = 0"
    with pytest.raises(UserError) as e:
        build_fabric(swept)
    assert str(e.value) == f"{f} with fabric.n = 0: [fabric]: flat: n must be an integer " \
        f">= 1, got 0"
    with pytest.raises(UserError, match=r"^flat: n must be an integer >= 1, got 0$"):
        build_fabric(get_scenario("lite-flat").with_param("fabric.n", 0))
    # the sweep's line names the file too (before: 'no point of the sweep can be built:
    # flat: bandwidth must be at least 1 bytes/s ...')
    f.write_text(FLAT.replace('bandwidth = "$scaleup"', 'bandwidth = "1e-30B/s"', 1))
    one_line_error(run_cli(["sweep", "--scenario", f, "--param", "fabric.latency=100ns,1us",
                            "-q", "--no-plot"]),
                   f"no point of the sweep can be built: {f} with fabric.latency = 1e-07: "
                   f"[fabric]: flat: bandwidth 1e-30 B/s, outside the 125 kB/s to 1 PB/s")


@pytest.mark.parametrize("gpu,needle", [
    ('"H100"', "gpu: unknown GPU 'H100'; known: "),
    ('"missing.toml"', "gpu: GPU file '{dir}/missing.toml' does not exist"),
    ('"empty.toml"', "gpu: {dir}/empty.toml: expected a top-level table 'gpu'"),
], ids=["unknown", "missing-file", "empty-file"])
def test_a_scenario_gpu_that_does_not_resolve_names_the_scenario(tmp_path, gpu, needle):
    # before: "unknown GPU 'H100'; ..." and "GPU file '.../missing.toml' does not exist",
    # with no word of the scenario file that named it
    (tmp_path / "empty.toml").write_text("")
    f = tmp_path / "s.toml"
    f.write_text(FLAT.replace('gpu = "Lite"', f"gpu = {gpu}", 1))
    want = f"{f}: " + needle.format(dir=tmp_path)
    with pytest.raises(UserError) as e:
        load_scenario(f)
    assert str(e.value).startswith(want), str(e.value)
    for args in (["cost", "--scenario", f, "--model", "Llama-3-8B"], ["topology", "show", f]):
        one_line_error(run_cli(args), want)


def test_a_misspelt_token_names_the_file_and_key(tmp_path):
    # before: "fabric value '$nope' is not one of the tokens ...", no file, no key
    f = tmp_path / "s.toml"
    f.write_text(FLAT.replace('bandwidth = "$scaleup"', 'bandwidth = "$nope"', 1))
    want = (f"{f}: [fabric] bandwidth: fabric value '$nope' is not one of the tokens '$gpu', "
            f"'$scaleup'")
    with pytest.raises(UserError) as e:
        load_scenario(f)
    assert str(e.value).startswith(want), str(e.value)
    one_line_error(run_cli(["cost", "--scenario", f, "--model", "Llama-3-8B"]), want)
