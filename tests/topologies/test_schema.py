"""validate refuses every malformed graph at load time with the node, edge or graph
attribute named: self-loops, unknown GPU types, bad lane counts, tiers, radixes, labels and
graph attributes of the wrong type."""

from __future__ import annotations

import math
import re

import networkx as nx
import pytest

from compute.errors import UserError
from topologies import build, validate


def _small():
    return build("leaf-spine:leaves=2,radix=4")  # gpu0..gpu3, leaf0-1, spine0-1


def _edit(where, key, value):
    def apply(g):
        target = {"graph": g.graph, "gpu": g.nodes["gpu0"], "switch": g.nodes["leaf0"],
                  "edge": g.edges["gpu0", "leaf0"]}[where]
        target[key] = value
    return apply


CASES = [
    (_edit("edge", "lanes", math.nan), "edge 'leaf0'-'gpu0' lanes must be a whole number >= 1, "
                                       "got nan"),
    (_edit("edge", "lanes", True), "lanes must be a whole number >= 1, got True"),
    (_edit("edge", "lanes", "4"), "lanes must be a whole number >= 1, got the text '4', not a "
                                  "number"),
    (_edit("edge", "lanes", 2.5), "lanes must be a whole number >= 1, got 2.5"),
    (_edit("edge", "lanes", 0), "lanes must be a whole number >= 1, got 0"),
    (_edit("edge", "bandwidth", "fast"), "bandwidth must be finite and > 0 bytes/s, got the "
                                         "text 'fast', not a number"),
    (_edit("edge", "bandwidth", 10**400), "bandwidth must be finite and > 0 bytes/s, got an integer of 401 digits"),
    (_edit("edge", "latency", [1]), "latency must be finite and >= 0 s, got [1]"),
    (_edit("edge", "links", False), "links must be finite and > 0 cables, got False"),
    (_edit("edge", "medium", ["copper"]), "medium ['copper'] is not one of"),
    (_edit("switch", "tier", -1), "switch 'leaf0' tier must be a whole number >= 0, got -1"),
    (_edit("switch", "tier", 1.5), "tier must be a whole number >= 0, got 1.5"),
    (_edit("switch", "tier", "1"), "tier must be a whole number >= 0, got '1'"),
    (_edit("switch", "tier", True), "tier must be a whole number >= 0, got True"),
    (_edit("switch", "radix", "8"), "switch 'leaf0' radix must be a positive integer, got '8'"),
    (_edit("switch", "radix", 8.0), "radix must be a positive integer, got 8.0"),
    (_edit("switch", "latency", math.inf), "switch 'leaf0' latency must be finite"),
    (_edit("switch", "in_network_reduction", "yes"), "in_network_reduction must be true or "
                                                     "false, got 'yes'"),
    (_edit("gpu", "gpu", "H900"), "gpu node 'gpu0' names GPU type 'H900', which is neither"),
    (_edit("gpu", "gpu", ["H100-SXM"]), "gpu node 'gpu0' must name its GPU type in 'gpu', got "
                                        "['H100-SXM']"),
    (_edit("gpu", "rack", -2), "gpu node 'gpu0' label 'rack' must be a whole number >= 0, "
                               "got -2"),
    (_edit("gpu", "rack", "r1"), "label 'rack' must be a whole number >= 0, got 'r1'"),
    (_edit("gpu", "kind", {"a": 1}), "node 'gpu0' has kind {'a': 1}; allowed: 'gpu'"),
    (_edit("graph", "gpus", "4"), "graph attribute 'gpus' must be a whole number, got '4'"),
    (_edit("graph", "gpus", True), "graph attribute 'gpus' must be a whole number, got True"),
    (_edit("graph", "name", 3), "graph attribute 'name' must be text, got 3"),
    (_edit("graph", "args", []), "graph attribute 'args' must be a table (a JSON object), got []"),
    (_edit("graph", "gpu_types", {"X": 1}), "gpu_types['X'] must be the GpuSpec named 'X'"),
    (_edit("graph", "reconfiguration_time", -1.0), "'reconfiguration_time' must be finite"),
]


@pytest.mark.parametrize("edit, message", CASES)
def test_malformed_graphs_are_refused_naming_the_part(edit, message):
    g = _small()
    validate(g)
    edit(g)
    with pytest.raises(UserError, match=re.escape(message)) as info:
        validate(g)
    assert str(info.value).startswith("invalid fabric graph: ")


def test_self_loops_and_other_structure():
    g = _small()
    g.add_edge("leaf0", "leaf0", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    with pytest.raises(UserError, match="edge 'leaf0'-'leaf0' joins a node to itself"):
        validate(g)
    with pytest.raises(UserError, match="expected an undirected simple networkx Graph, got "
                                        "DiGraph"):
        validate(nx.DiGraph(_small()))
    with pytest.raises(UserError, match="got MultiGraph"):
        validate(nx.MultiGraph(_small()))
    with pytest.raises(UserError, match="got dict"):
        validate({"nodes": []})
    g = _small()
    g.add_node("ocs0", kind="ocs", ports=1, reconfiguration_time=0.0, latency=0.0)
    g.add_edge("ocs0", "gpu0", bandwidth=1e9, latency=0.0, medium="fibre", lanes=1)
    g.add_edge("ocs0", "gpu1", bandwidth=1e9, latency=0.0, medium="fibre", lanes=1)
    with pytest.raises(UserError, match="ocs 'ocs0' uses 2 ports but it has 1"):
        validate(g)
    g.nodes["ocs0"]["ports"] = 2
    g.nodes["ocs0"]["latency"] = math.nan
    with pytest.raises(UserError, match="ocs 'ocs0' latency must be finite and >= 0 s"):
        validate(g)


def test_numbers_of_other_types_that_are_whole_are_accepted():
    import numpy as np

    g = _small()
    g.edges["gpu0", "leaf0"]["lanes"] = 4.0  # a JSON float that is whole
    g.edges["gpu0", "leaf0"]["bandwidth"] = np.float64(50e9)
    g.nodes["leaf0"]["tier"] = np.int64(1)
    g.nodes["gpu0"]["rack"] = np.int64(0)
    g.edges["gpu1", "leaf0"]["links"] = 0.5  # a breakout share of a port
    assert validate(g) is g


@pytest.mark.parametrize(("where", "key", "said"), [
    ("switch", "radix", "switch 'leaf0' radix must be a positive integer"),
    ("switch", "tier", "switch 'leaf0' tier must be a whole number >= 0"),
    ("edge", "lanes", "edge 'leaf0'-'gpu0' lanes must be a whole number >= 1"),
])
def test_numpys_timedelta_is_no_whole_number(where, key, said):
    # numpy registers timedelta64 as an integer: the whole-number check took it and
    # validate raised numpy's UFuncTypeError further on (a traceback, not one line)
    import numpy as np

    g = _small()
    _edit(where, key, np.timedelta64(4, "s"))(g)
    with pytest.raises(UserError, match=re.escape(f"{said}, got {np.timedelta64(4, 's')!r}")):
        validate(g)
