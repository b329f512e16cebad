"""``serve --kv-ports N``: on an optical circuit-switched scenario, the optical ports each GPU
sets aside for the KV cache's circuits (``serve(..., kv_ports=N)``), 1 to a GPU's ports less
one (lite-ocs: 4 ports, 1 to 3); refused in one line, exit status 2, on any other scenario
and past the range. Its help's ranges are the API's (``kv_splits``)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from netmodel.study.scenario_catalog import get_scenario, shipped_scenarios
from netmodel.study.serving import serve
from netmodel.study.serving_transfer import kv_ports_help, kv_splits
from tests.netmodel.cli_helpers import one_line_error, run_cli

SERVE = ["serve", "--model", "Llama-3-8B", "--tp-only", "--max-batch", "8", "--json"]
RANGE = ("must be a whole number from 1 to 3 (a GPU's 4 optical ports less one, which its "
         "instance's circuits keep)")


@pytest.mark.parametrize("typed", ["2", "+2", "2.0", "2e0"])
def test_the_flag_fixes_the_split_as_the_api_does(typed):
    r = run_cli([*SERVE, "--scenario", "lite-ocs", "--kv-ports", typed])
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    want = serve("Llama-3-8B", "lite-ocs", dimensions="tp", max_batch=8, kv_ports=2)
    assert got["settings"]["kv_ports"] == 2 and got == json.loads(want.to_json())


def test_each_split_is_the_one_asked_for():
    # lite-ocs' Lites have 4 optical ports: 1, 2 and 3 set aside each run as asked
    for n in (1, 3):
        r = run_cli([*SERVE, "--scenario", "lite-ocs", "--kv-ports", str(n)])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["settings"]["kv_ports"] == n


@pytest.mark.parametrize(("typed", "got"), [
    ("0", "0"), ("4", "4"), ("-1", "-1"), ("1.5", "'1.5'"), ("nan", "'nan'"),
    ("inf", "'inf'"), ("abc", "'abc'"), ("", "''"), ("1e400", "an integer of 401 digits"),
    ("99999999999999999999", "an integer of 20 digits")])
def test_out_of_range_refused_in_one_line(typed, got):
    r = run_cli([*SERVE, "--scenario", "lite-ocs", "--kv-ports", typed])
    assert one_line_error(r) == f"error: --kv-ports {typed!r}: {RANGE}, got {got}"


@pytest.mark.parametrize("scenario", ["lite-flat", "h100-dgx", "lite-flat@H100-SXM"])
def test_refused_where_it_means_nothing(scenario):
    r = run_cli([*SERVE, "--scenario", scenario, "--kv-ports", "1"])
    label = get_scenario(scenario).label
    assert one_line_error(r) == (f"error: --kv-ports '1': scenario {label!r} is not optical "
                                 f"circuit-switched (its KV cache takes the fabric's paths)")


def test_refused_on_an_ocs_of_one_port(tmp_path):
    toml = resources.files("netmodel").joinpath("data/scenarios/lite-ocs.toml").read_text(
        encoding="utf-8")
    (tmp_path / "one.toml").write_text(toml.replace('name = "lite-ocs"', 'name = "one"')
                                       .replace("ports = 4\n", "ports = 1\n", 1))
    r = run_cli([*SERVE, "--scenario", "one.toml", "--kv-ports", "1"], cwd=tmp_path)
    assert one_line_error(r, "1 optical port, none to set aside").startswith(
        "error: --kv-ports '1': scenario ")


def test_given_twice_is_refused_unless_one_value():
    r = run_cli([*SERVE, "--scenario", "lite-ocs", "--kv-ports", "2", "--kv-ports", "3"])
    assert one_line_error(r) == ("error: --kv-ports is given twice ('2' and '3'); it takes "
                                 "one value: give it once")
    r = run_cli([*SERVE, "--scenario", "lite-ocs", "--kv-ports", "2", "--kv-ports", "+2"])
    assert r.exit_code == 0, r.output


def test_help_says_the_apis_range_of_each_shipped_ocs():
    ocs = {n: kv_splits(s) for n, s in shipped_scenarios().items() if kv_splits(s) != (0,)}
    assert ocs == {"lite-ocs": (1, 2, 3)}
    text = kv_ports_help()
    for name, splits in ocs.items():
        assert f"{name}: 1 to {max(splits)}" in text
    r = run_cli(["serve", "--help"])
    assert r.exit_code == 0 and "--kv-ports N" in r.output
    assert "(lite-ocs: 1 to 3)" in " ".join(r.output.split())
