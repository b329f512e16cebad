"""Node names are ordered with their ASCII digit runs as numbers, whatever other characters
they hold: a fabric file may name a switch '²' (a superscript, which str.isdigit() calls a
digit and int() refuses), and placed_alike orders a member's neighbours by that key."""
import networkx as nx

from netmodel.study.placed_alike import _natural, placed_alike


def test_superscript_and_other_scripts_stay_text():
    assert _natural("²") == ("²",)
    assert _natural("gpu٣") == ("gpu٣",)
    assert _natural("gpu10") == ("gpu", 10, "")
    assert sorted(["gpu10", "gpu9", "gpu2"], key=_natural) == ["gpu2", "gpu9", "gpu10"]


def test_placed_alike_with_a_superscript_switch_name():
    # two GPUs on switch '²', two on switch '³': each pair is placed as the other
    g = nx.Graph()
    for s in ("²", "³"):
        g.add_node(s, kind="switch", tier=1)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu")
        g.add_edge(f"gpu{i}", "²" if i < 2 else "³", bandwidth=50e9, latency=1e-6)
    assert placed_alike(g, ["gpu2", "gpu3"], ["gpu0", "gpu1"])
    assert not placed_alike(g, ["gpu1", "gpu2"], ["gpu0", "gpu1"])
