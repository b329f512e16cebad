"""Helpers the collective tests of tests/netmodel share (fixtures are in conftest.py)."""

from pathlib import Path

import networkx as nx
import numpy as np

#: docs/study.md's hier-os2.toml: lite-hier with 2:1 oversubscribed leaves and instances
#: spread over them (its sources line aside).
HIER_OS2 = """name = "hier-os2"
description = "lite-hier with 2:1 oversubscribed leaves and instances spread over the leaves"
gpu = "Lite"
[fabric]
builder = "leaf-spine"
leaves = 8
radix = 32
oversubscription = 2
gpu = "$gpu"
bandwidth = "$scaleup"
latency = "330ns"
in_network_reduction = false
medium = "co-packaged-optics"
[collective]
placement = "spread"
algorithm = "auto"
links = "scale-up"
calibration = "default"
[sources]
bandwidth = "as lite-hier"
latency = "as lite-hier"
"""


def hand_fabric(switches, links, gpus) -> nx.Graph:
    """A fabric drawn by hand, no latency anywhere: ``switches`` (tier 1) joined by 1 GB/s
    ``links``; GPU ``i`` (an H100) on switch ``gpus[i][0]`` by a link of ``gpus[i][1]``
    bytes/s each way."""
    g = nx.Graph(name="hand", spec="", gpus=len(gpus))
    for s in switches:
        g.add_node(s, kind="switch", tier=1, radix=16, latency=0.0, in_network_reduction=False)
    for a, b in links:
        g.add_edge(a, b, bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    for i, (sw, bw) in enumerate(gpus):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        g.add_edge(f"gpu{i}", sw, bandwidth=bw, latency=0.0, medium="copper", lanes=1)
    return g


def two_leaves(gpus: int, leaf_of) -> nx.Graph:
    """:func:`hand_fabric` of two leaves under one spine, every link 1 GB/s; GPU ``i`` on
    ``leaf{leaf_of(i)}``."""
    return hand_fabric(["leaf0", "leaf1", "spine"], [("leaf0", "spine"), ("leaf1", "spine")],
                       [(f"leaf{leaf_of(i)}", 1e9) for i in range(gpus)])


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


def random_groups(gpus, seed=0, largest=16) -> list[tuple]:
    """Disjoint groups of 2 to ``largest`` GPUs, sizes drawn at random, taken in turn from a
    random permutation of ``gpus`` while a largest group still fits (the rest idle)."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(gpus).tolist()
    groups, i = [], 0
    while i + largest <= len(perm):
        s = int(rng.integers(2, largest + 1))
        groups.append(tuple(perm[i:i + s]))
        i += s
    return groups
