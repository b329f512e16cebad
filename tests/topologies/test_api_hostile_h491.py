"""Hostile hand-built graphs through ``netmodel.build_fabric`` (docs/api.md: a graph is
validated and returned) whose fix lies in topologies/schema*.py, another helper's this
wave: strict xfails, so the fix turns them into failures to remove the mark."""

import math

import pytest

import netmodel
from compute.errors import UserError


def graph_with_length(value):
    g = netmodel.build_fabric("single-switch:n=4")
    g.edges["nvs0", "gpu0"]["length"] = value
    return g


@pytest.mark.parametrize("value", [math.nan, -1.0, math.inf, "2m"])
def test_hand_graph_edge_length_is_checked(value):
    with pytest.raises(UserError, match=r"length"):
        netmodel.build_fabric(graph_with_length(value))


def test_builder_refuses_the_same_lengths():
    # the guard beside the xfail: the builders' own check, which the graph check would match
    for value in (math.nan, -1.0, math.inf):
        with pytest.raises(UserError, match=r"^ring: length must be a finite number >= 0"):
            netmodel.build_fabric("ring", {"n": 4, "length": value})
    assert netmodel.build_fabric(graph_with_length(3.0)).edges["nvs0", "gpu0"]["length"] == 3.0
