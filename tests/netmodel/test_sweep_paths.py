"""The scenarios a sweep parameter is read against (netmodel.study.sweep_paths.sweep_scenarios).

Before, ``parse_param(text, "lite-flat")`` read the name letter by letter (``unknown scenario
'l'``), ``None`` raised TypeError, no scenario left the parameter without a unit (``1us``
refused as 'not a number', ``fabric.planes=2:8`` taken as seven fractional planes with
unit None), and a generator was spent by the first check, so the builder's unset word
(``auto``) reached the number reader instead of its own refusal.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.sweep import parse_param

LIST = "scenarios must be a list of scenario names, paths or Scenario objects, got "


@pytest.mark.parametrize(("scenarios", "message"), [
    ("lite-flat", LIST + "'lite-flat'"),
    (None, LIST + "None"),
    ([], "a sweep parameter is checked against the sweep's scenarios: give at least one"),
])
def test_the_scenarios_are_a_list_of_at_least_one(scenarios, message):
    for text in ("adjust.hop_latency=1us", "fabric.planes=2:8"):
        with pytest.raises(UserError) as e:
            parse_param(text, scenarios)
        assert str(e.value) == message


def test_a_generator_of_scenarios_is_read_once_for_every_check():
    with pytest.raises(UserError) as e:
        parse_param("fabric.nics_per_server=auto,2", (s for s in ["h100-dgx"]))
    assert str(e.value).startswith("sweep parameter fabric.nics_per_server value 'auto' is "
                                   "auto (the builder works the value out")
    p = parse_param("fabric.planes=2:8:3", iter(["lite-flat"]))
    assert (p.values, p.integer) == ((2.0, 4.0, 8.0), True)
