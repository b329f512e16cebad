"""Files both ways: JSON and GraphML keep every attribute; user graphs; atomic writes."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from compute.errors import UserError
from topologies import build, validate
from topologies.analysis import summary
from topologies.io import read_graph, write_graph


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
@pytest.mark.parametrize("spec", ["superpod", "lite-groups:base=[ring:n=3],lites=3",
                                  "ocs:gpus=6,ports=2,logical=ring", "torus:dims=3x2"])
def test_round_trip_keeps_everything(tmp_path, spec, suffix):
    g = build(spec)
    path = tmp_path / f"fabric{suffix}"
    write_graph(g, path)
    back = read_graph(path)
    assert nx.utils.graphs_equal(g, back)  # nodes, edges and all attributes, with types
    assert type(back.nodes["gpu0"]["gpu"]) is str and type(back.graph["gpus"]) is int
    assert summary(back) == summary(g)  # closed forms still apply: counts unchanged


def _users_graph():
    g = nx.Graph(name="my lab", gpus=3)
    for i in range(3):
        g.add_node(f"a{i}", kind="gpu", gpu="H100-SXM", server=0)
    g.add_node("sw", kind="switch", tier=1, radix=4, latency=2e-7, in_network_reduction=False)
    for i in range(3):
        g.add_edge(f"a{i}", "sw", bandwidth=25e9, latency=1e-8, medium="copper", lanes=2)
    return g


def test_users_own_graph_works_everywhere(tmp_path):
    path = tmp_path / "lab.json"
    write_graph(_users_graph(), path)
    g = build(str(path))  # a file path is a spec too
    assert g.graph["spec"] == "" and g.graph["name"] == "my lab"
    s = summary(g)
    assert (s.gpus, s.diameter, s.bisection_bandwidth) == (3, 2, 25e9)
    assert s.bisection_method == "max-flow" and s.diameter_method == "breadth-first search"


def test_links_key_of_older_networkx_is_read(tmp_path):
    data = nx.node_link_data(_users_graph(), edges="links")
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    assert validate(read_graph(path)).number_of_edges() == 3


def test_bad_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="bad.json is not a readable json fabric"):
        read_graph(bad)
    with pytest.raises(UserError, match="does not exist"):
        read_graph(tmp_path / "missing.graphml")
    with pytest.raises(UserError, match="unknown fabric file type '.txt'"):
        write_graph(build("ring"), tmp_path / "x.txt")
    g = _users_graph()
    g.add_node("lonely", kind="gpu", gpu="H100-SXM")
    g.graph["gpus"] = 4
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(nx.node_link_data(g, edges="edges")))
    with pytest.raises(UserError, match="GPU 'lonely' cannot reach GPU 'a0'"):
        read_graph(path)


def test_failed_write_leaves_nothing(tmp_path):
    g = build("ring")
    g.edges["gpu0", "gpu1"]["bandwidth"] = float("nan")
    with pytest.raises(UserError, match="bandwidth must be finite"):
        write_graph(g, tmp_path / "x.json")
    g.edges["gpu0", "gpu1"]["bandwidth"] = 1e9
    g.graph["odd"] = object()  # json cannot encode it: the write fails midway
    with pytest.raises(TypeError):
        write_graph(g, tmp_path / "x.json")
    assert list(tmp_path.iterdir()) == []
