"""A Scenario built in code checks its tuner as a file or a CLI option does (h316): None is
NCCL's own tuner (``"none"``), as ``tuner_refusal`` and ``get_tuner`` read it, and an unknown
name is refused in one line listing the known ones. Before, ``replace(s, tuner="bogus")``
was taken as given, and ``tuner=None`` was read as a tuner by the fabric search (its tests
compared with ``"none"``: costed by the model's own path, keyed apart) while the rest read
it as none, and ``to_toml`` refused it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compute.errors import UserError
from netmodel.collectives.tuner_plugin import NO_TUNER, tuner_names
from netmodel.study.scenario_catalog import get_scenario


def test_an_unknown_tuner_is_refused_in_one_line_listing_the_known_ones():
    with pytest.raises(UserError) as err:
        replace(get_scenario("h100-dgx"), tuner="bogus")
    line = str(err.value)
    assert "\n" not in line
    assert line.startswith("unknown tuner 'bogus'; known: ")
    for name in tuner_names():
        assert name in line


def test_none_is_read_as_no_tuner():
    assert replace(get_scenario("h100-dgx"), tuner=None).tuner == NO_TUNER == "none"


def test_tuner_none_writes_and_keys_as_tuner_none_named():
    # before: to_toml refused ('cannot write None to TOML'), and the network key (what
    # scenarios share collective costs by) carried None, so the two shared nothing
    from netmodel.study.scenario_fabric import network_key, scenario_calibration

    base = get_scenario("h100-dgx")
    unset = replace(base, tuner=None)
    assert unset.to_toml() == base.to_toml()
    assert network_key(unset, scenario_calibration(unset)) == \
        network_key(base, scenario_calibration(base))


def test_tuner_none_compares_exactly_as_tuner_none_named():
    from netmodel.study.compare import run_compare

    base = get_scenario("h100-dgx")
    named = run_compare(["Llama-3-8B"], [replace(base, tuner="none")], ["decode"],
                        max_batch=8)
    unset = run_compare(["Llama-3-8B"], [replace(base, tuner=None)], ["decode"],
                        max_batch=8)
    assert unset.to_json() == named.to_json()
