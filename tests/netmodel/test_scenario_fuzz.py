"""Scenario files: whatever a document holds, the reader answers with a scenario or one
UserError line (never a traceback, never a silently absurd value)."""

from __future__ import annotations

import copy
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_files import load_scenario_text, scenario_from_dict

BASE = get_scenario("lite-flat").to_dict()

#: Values a hostile or careless file may hold where anything else was expected.
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
    st.just(10**4000), st.just(-(10**4000)),
    st.floats(allow_nan=True, allow_infinity=True), st.just(1e300),
    st.text(max_size=20), st.just("a\nb"), st.just("\x1b[31m"), st.just("$gpu"),
    st.just("$scaleup"), st.just("9*$scaleup"), st.just("1e9TB/s"),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(),
                                                          max_size=2),
)


def _paths(d, prefix=()):
    for k, v in d.items():
        yield (*prefix, k)
        if isinstance(v, dict):
            yield from _paths(v, (*prefix, k))


PATHS = list(_paths(BASE))


def _one_line(exc: UserError) -> str:
    text = str(exc)
    assert text and "\n" not in text and "\r" not in text, repr(text)
    assert len(text) < 2000
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), VALUES), min_size=1, max_size=3))
def test_a_mutated_scenario_is_read_or_refused_in_one_line(changes):
    doc = copy.deepcopy(BASE)
    for path, value in changes:
        table = doc
        for k in path[:-1]:
            if not isinstance(table.get(k), dict):
                break
            table = table[k]
        else:
            table[path[-1]] = value
    try:
        s = scenario_from_dict(doc, "fuzz.toml")
    except UserError as exc:
        _one_line(exc)
        return
    # accepted: it must be usable, and its numbers sane
    for key in ("latency_scale", "hop_latency", "bandwidth_scale"):
        v = getattr(s.adjust, key)
        assert math.isfinite(v) and v >= 0
    assert "\n" not in s.name and "\n" not in s.description


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([p for p in PATHS if p[0] == "fabric" and p[-1] != "builder"]),
       st.one_of(st.integers(min_value=-5, max_value=10**7), st.just(10**4000),
                 st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8)))
def test_a_fabric_value_builds_or_is_refused(path, value):
    doc = copy.deepcopy(BASE)
    table = doc
    for k in path[:-1]:
        table = table[k]
    table[path[-1]] = value
    try:
        ScenarioCollectives(scenario_from_dict(doc, "fuzz.toml"))
    except UserError as exc:
        _one_line(exc)


@pytest.mark.parametrize("text", [
    "name = " + "[" * 5000 + "]" * 5000,
    'name = "x"\n' + "a = 1\n" * 3 + "[fabric]\n" + "b = " + "9" * 5000 + "\n",
    "\x00\x01binary",
    "[fabric\n",
    "name = 'x'\n[[fabric]]\nbuilder = 'flat'\n",
])
def test_hostile_texts_are_refused_in_one_line(text):
    with pytest.raises(UserError) as err:
        load_scenario_text(text, "hostile.toml")
    _one_line(err.value)


@pytest.mark.parametrize("field, value", [("name", "a\nb"), ("description", "line\x1b[2J"),
                                          ("name", "x" * 5000)])
def test_control_characters_and_absurd_lengths_in_names_are_refused(field, value):
    doc = copy.deepcopy(BASE)
    doc[field] = value
    with pytest.raises(UserError) as err:
        scenario_from_dict(doc, "s.toml")
    assert field in _one_line(err.value)
