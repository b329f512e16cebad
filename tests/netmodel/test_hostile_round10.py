"""Hostile input, round 10: what changed on 2026-12-02 (board links, two-shot and torus,
sweep cost units, run records, breakout failure domains) attacked through the CLI and API.
Each test fails on the code before its fix."""

from __future__ import annotations

import networkx as nx


def _switch_and_ocs(ocs_medium: str = "fibre") -> nx.Graph:
    """4 GPUs on one board switch, gpu0 and gpu1 also cabled to an OCS (a user's file)."""
    g = nx.Graph(name="hybrid", spec="", gpus=4)
    g.add_node("nvs0", kind="switch", tier=0, radix=4, latency=1.5e-7,
               in_network_reduction=True)
    g.add_node("ocs0", kind="ocs", ports=8, reconfiguration_time=0.01, latency=0.0)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        g.add_edge("nvs0", f"gpu{i}", bandwidth=450e9, latency=1e-8, medium="board", lanes=36)
    for i in range(2):
        g.add_edge("ocs0", f"gpu{i}", bandwidth=50e9, latency=5e-8, medium=ocs_medium, lanes=4)
    return g


def test_draw_a_fabric_with_switches_and_an_ocs():
    # was: KeyError 'nvs0' (a traceback from 'netmodel topology plot FILE'): the layout
    # put GPUs and OCS on two rows and left the switches out
    from topologies.draw import figure, layout

    g = _switch_and_ocs()
    pos, how = layout(g)
    assert how == "tiers"
    assert set(pos) == set(g)
    assert pos["gpu0"][1] < pos["nvs0"][1] < pos["ocs0"][1]
    figure(g)   # draws
