"""Helpers the collective tests of tests/netmodel share (fixtures are in conftest.py)."""

from pathlib import Path

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


def h100_x4_scenario(tmp_path: Path) -> str:
    """The path of a scenario file written in ``tmp_path``: h100-dgx with servers of 4 H100
    (domain_size = gpus_per_server = 4), 8 servers a cell on 4 rail leaves of 32 down ports,
    so 4 cells fill a set of shared parts; Llama-3.1-405B decode there runs TP 8 across two
    servers, so a rail leaf's loss slows instances of every cell it serves."""
    text = (Path(__file__).resolve().parents[2] / "netmodel" / "data" / "scenarios"
            / "h100-dgx.toml").read_text()
    for a, b in (("domains = 4", "domains = 8"), ("domain_size = 8", "domain_size = 4"),
                 ("gpus_per_server = 8", "gpus_per_server = 4"),
                 ('name = "h100-dgx"', 'name = "h100-x4"')):
        assert a in text
        text = text.replace(a, b, 1)
    path = tmp_path / "h100-x4.toml"
    path.write_text(text)
    return str(path)
