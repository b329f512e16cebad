"""A graph attribute of the wrong type is refused in words a file's writer reads
(scripts/hostile_round18.py): 'graph attribute 'gpu_file_facts' must be dict, got []' named
Python's type; now 'must be a table (a JSON object)', 'a whole number', 'text', 'a number',
'true or false'."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build
from topologies.schema import _TYPE_WORDS, GRAPH_TYPES, validate


def test_every_type_has_its_words():
    assert set(GRAPH_TYPES.values()) <= set(_TYPE_WORDS)


@pytest.mark.parametrize("key, value, words", [
    ("gpu_file_facts", [], "a table (a JSON object)"), ("gpus", 4.0, "a whole number"),
    ("spec", 3, "text"), ("reconfiguration_time", "1s", "a number"),
    ("degraded", 1, "true or false"),
])
def test_the_words_are_said(key, value, words):
    g = build("ring:n=4")
    g.graph[key] = value
    with pytest.raises(UserError) as err:
        validate(g)
    assert f"graph attribute {key!r} must be {words}, got " in str(err.value)
