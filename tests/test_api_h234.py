"""collective_time on a scenario refuses an algorithm or placement of its own and says how to
choose one (h234): the line quoted the scenario's fabric spec, which UserError shortens past
40 characters ('flat:n=128,...length=20.0'), so the spec it told the user to pass could not
be copied from it; it now names the call that gives it."""

from __future__ import annotations

import pytest

import netmodel
from compute.errors import UserError
from netmodel.study.scenario_catalog import get_scenario


def test_the_refusal_names_where_the_spec_comes_from():
    with pytest.raises(UserError, match=r"pass its fabric spec \(get_scenario\(\.\.\.\)"
                                        r"\.fabric_spec\(\), here 'flat:n=128,"):
        netmodel.collective_time("lite-flat", "all-reduce", 1e6, 8, algorithm="ring")
    # and what that call gives builds the same fabric, on which the choice is taken
    spec = get_scenario("lite-flat").fabric_spec()
    ring = netmodel.collective_time(spec, "all-reduce", 1e6, 8, algorithm="ring")
    assert float(ring) > 0
