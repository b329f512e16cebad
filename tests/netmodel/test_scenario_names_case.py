"""Shipped scenario names are read as builder names are (topologies.registry.canonical_name:
case-insensitive, '_' for '-'): 'LITE-OCS' was refused ('unknown scenario') where
'Rail_Optimized' builds; the refusal still lists the shipped names."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.fabric_ref import resolve_fabric
from netmodel.study.scenario_catalog import (
    get_scenario,
    is_scenario_ref,
    scenario_names,
    shipped_scenario,
    shipped_scenarios,
)
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.registry import canonical_name, get_builder


@pytest.mark.parametrize("ref, name", [("LITE-OCS", "lite-ocs"), ("h100_DGX", "h100-dgx"),
                                       (" Lite_Flat-INR ", "lite-flat-inr")])
def test_scenario_names_are_case_insensitive_as_builders_are(ref, name):
    assert get_scenario(ref) is shipped_scenarios()[name]
    assert is_scenario_ref(ref) and shipped_scenario(ref).name == name
    assert get_scenario(ref + "@Lite+BW").label == get_scenario(name + "@Lite+BW").label
    assert resolve_fabric(ref).scenario.name == name
    # the same reading as builder names
    assert get_builder("Rail_Optimized") is get_builder("rail-optimized")
    assert canonical_name(ref) == name


def test_shipped_names_are_canonical_and_the_refusal_lists_them():
    assert all(canonical_name(n) == n for n in scenario_names())
    with pytest.raises(UserError, match=r"unknown scenario 'LITE-NOPE'; known: 'h100-dgx', "
                                        r"'lite-direct', .*'lite-ocs'"):
        get_scenario("LITE-NOPE")


def test_command_line_takes_any_case():
    r = run_cli(["compare", "--show", "LITE-OCS"])
    assert r.exit_code == 0 and 'name = "lite-ocs"' in r.output
    one_line_error(run_cli(["compare", "--show", "Lite-Nope"]), "unknown scenario 'Lite-Nope'",
                   "'lite-ocs'")
