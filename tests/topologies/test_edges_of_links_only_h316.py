"""edges_of names which differs (h316): arrays of the same node list whose link count is not
the graph's (a link removed after they were built) were refused as "another graph's" with
this graph's own node count; now they are said to be of the same nodes with their links."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build
from topologies.edge_arrays import edge_arrays, edges_of


def test_links_only_differ_said_so_in_one_line():
    graph = build("ring:n=4")                      # 4 GPUs in a ring: 4 links
    edges = edge_arrays(graph)
    graph.remove_edge(*next(iter(graph.edges)))    # 3 links, the same 4 nodes
    with pytest.raises(UserError) as e:
        edges_of(graph, edges)
    assert str(e.value) == ("edges must be edge_arrays(graph) of this graph (4 nodes, "
                            "3 links), got arrays of the same nodes with 4 links")


def test_another_node_list_is_another_graphs():
    with pytest.raises(UserError) as e:             # ring:n=8: 8 nodes, 8 links
        edges_of(build("ring:n=4"), edge_arrays(build("ring:n=8")))
    assert str(e.value).endswith("got another graph's (8 nodes, 8 links)")
