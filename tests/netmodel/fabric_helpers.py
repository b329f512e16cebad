"""Helpers the collective tests of tests/netmodel share (fixtures are in conftest.py)."""

import networkx as nx


def zero_latency(graph: nx.Graph) -> nx.Graph:
    """``graph`` with every link's and switch's latency set to 0 (in place), so that costs
    are the closed forms the tests derive by hand: ``alpha`` per step plus bytes over
    bandwidth."""
    for _, _, d in graph.edges(data=True):
        d["latency"] = 0.0
    for _, d in graph.nodes(data=True):
        if "latency" in d:
            d["latency"] = 0.0
    return graph
