"""The hardware blast radius (:mod:`topologies.hardware_radius`, which ``netmodel topology
compare`` reports): values by hand on a leaf-spine, the shortcut and the grouping by local
structure against every component evaluated, and the cutter against networkx. Moved from
tests/netmodel/test_topology_compare.py (h335; bodies unchanged, the leaf-spine lines were
the end of its test_blast_radius_by_hand)."""

import networkx as nx
import pytest

from topologies import build
from topologies.failure_domains import components
from topologies.hardware_radius import _Cutter, hardware_radius


def test_leaf_spine_by_hand():
    r = {b.cls: b for b in hardware_radius(build("leaf-spine:leaves=2,radix=4"))}
    assert (r["leaf"].gpus_max, r["spine"].gpus_max) == (2, 0)
    # 4 GPU cables (cut 1 each) and 4 leaf-spine cables (cut 0), 2 transceivers each
    assert (r["transceiver"].gpus_mean, r["transceiver"].gpus_max) == (0.5, 1)
    assert r["transceiver"].parts == 16


@pytest.mark.parametrize("spec", [
    "fat-tree:k=4,oversubscription=2", "torus:dims=3x4", "lite-groups:split=gateway",
    "lite-groups:base=[leaf-spine:leaves=2,radix=4],lites=4", "superpod",
    "ocs:gpus=16,ports=4", "flat:n=12,planes=3,radix=16", "full-mesh:n=5",
])
def test_symmetry_grouping_equals_every_component_evaluated(spec):
    """The shortcut (no articulation point / no bridge cuts nothing) and the grouping by
    local structure give what evaluating every single component gives."""
    g = build(spec)
    per_host = 4
    got = {b.cls: b for b in hardware_radius(g, gpus_per_host=per_host)}
    cutter = _Cutter(g)
    for cls, comps in components(g, gpus_per_host=per_host).items():
        if not comps:
            assert cls not in got
            continue
        # a tier-0 switch's GPUs stop with it (Component.disabled): gone as it is
        radii = [sum(1 for n in (*c.nodes, *c.disabled) if g.nodes[n]["kind"] == "gpu")
                 + cutter.cut((*c.nodes, *c.disabled), c.edges) for c in comps]
        weights = [c.parts for c in comps]
        mean = sum(w * r for w, r in zip(weights, radii, strict=True)) / sum(weights)
        assert got[cls].gpus_max == max(radii), cls
        assert got[cls].gpus_mean == pytest.approx(mean), cls
        assert got[cls].components == len(comps)


def test_cutter_counts_against_networkx():
    g = build("lite-groups:split=gateway")
    cutter = _Cutter(g)
    gpus = [n for n, k in g.nodes(data="kind") if k == "gpu"]
    for node in ("gpu0", "gpu1", "nvs0"):
        h = g.copy()
        h.remove_node(node)
        parts = [sum(1 for n in c if h.nodes[n]["kind"] == "gpu")
                 for c in nx.connected_components(h)]
        alive = len(gpus) - (node in gpus)
        assert cutter.cut([node], []) == alive - max(parts)
    # the gateway Lite 0 of a group takes its 3 group-mates with it
    assert cutter.cut(["gpu0"], []) == 3 and cutter.cut(["gpu1"], []) == 0
