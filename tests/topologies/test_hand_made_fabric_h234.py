"""A hand-made fabric without the graph attribute ``gpus`` (h234): the schema refused it as
"graph attribute 'gpus' is None but it has 2 GPU nodes", which names a value the user never
wrote and not what to give; it now says the attribute is missing and the number to set."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from compute.errors import UserError
from topologies import validate
from topologies.io import read_graph


def _pair(**graph_attrs) -> nx.Graph:
    g = nx.Graph(**graph_attrs)
    for i in range(2):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    g.add_edge("gpu0", "gpu1", bandwidth=100e9, latency=1e-6, medium="copper", lanes=4)
    return g


def test_missing_gpus_says_what_to_set():
    with pytest.raises(UserError, match=r"graph attribute 'gpus' is missing; set it to the "
                       r"number of GPU nodes, 2 \(graph\.graph\['gpus'\] = 2"):
        validate(_pair())
    assert validate(_pair(gpus=2)).graph["gpus"] == 2


def test_wrong_gpus_says_the_count(tmp_path):
    with pytest.raises(UserError, match=r"'gpus' is 3 but it has 2 GPU nodes; set it to 2$"):
        validate(_pair(gpus=3))
    # a fabric file without it says the same, naming the file's key
    g = _pair()
    data = nx.node_link_data(g, edges="edges")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match=r"'gpus' is missing.*\"gpus\": 2 in a file's graph table"):
        read_graph(path)
