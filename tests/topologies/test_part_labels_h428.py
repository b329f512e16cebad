"""A cell's connected parts as an array (CellArrays.part_labels, which partition's dict
and the cluster's failure effects are made from): hand-worked parts of a ring and a
leaf-spine, and the dict equal to the one made node by node."""
import numpy as np

from topologies.graph_ops import CellArrays, labels_to_parts
from topologies.specs import build


def test_a_ring_cut_twice_falls_in_two_parts():
    # ring gpu0-gpu1-gpu2-gpu3-gpu0: gpu1 gone and link gpu2-gpu3 cut leave gpu2 alone
    # and gpu3-gpu0 together
    labels = CellArrays(build("ring:n=4")).part_labels({"gpu1"}, [("gpu3", "gpu2")])
    assert labels[1] == -1
    assert labels[0] == labels[3] != labels[2]
    assert len(set(labels.tolist()) - {-1}) == 2


def test_nothing_gone_is_one_part():
    labels = CellArrays(build("fat-tree:k=4")).part_labels(set(), [])
    assert (labels >= 0).all() and len(set(labels.tolist())) == 1


def test_a_leaf_gone_cuts_off_its_gpus_one_by_one():
    # leaf-spine of 4 leaves of radix 8: 4 GPUs a leaf; leaf0 gone leaves its 4 GPUs
    # each a part of its own, the other 12 GPUs and the switches one part
    g = build("leaf-spine:leaves=4,radix=8")
    cells = CellArrays(g)
    leaf = "leaf0"
    alone = sorted(g.neighbors(leaf))
    alone = [n for n in alone if g.nodes[n]["kind"] == "gpu"]
    labels = cells.part_labels({leaf}, [])
    parts = labels_to_parts(cells.nodes, labels)
    assert leaf not in parts and len(parts) == len(g) - 1
    assert len(alone) == 4 and len({parts[n] for n in alone}) == 4
    rest = {parts[n] for n in g if n != leaf and n not in alone}
    assert len(rest) == 1 and not rest & {parts[n] for n in alone}


def test_the_dict_is_the_one_made_node_by_node():
    g = build("torus:dims=4x4")
    cells = CellArrays(g)
    gone, cut = {"gpu5", "gpu6"}, [("gpu0", "gpu1"), ("gpu4", "gpu0")]
    labels = cells.part_labels(gone, cut)
    by_node = {n: int(labels[i]) for i, n in enumerate(cells.nodes) if n not in gone}
    got = cells.partition(gone, cut)
    assert got == by_node and list(got) == list(by_node)
    assert all(type(v) is int for v in got.values())
    assert labels_to_parts(["a", "b"], np.array([-1, -1])) == {}
