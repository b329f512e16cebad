"""A failure that leaves the cell in one part is labelled without a pass over the cell.

``Cluster._part_labels`` labelled the whole cell's connected parts (scipy, a pass over
every link) for every failure evaluated: ~10,000 times for a 16,384-H100 rail-optimized
cell with group spares (one per group and class), ~8 of its 16 s CPU. A cell that was one
part stays one without a failed part iff the survivors next to it still meet (every part
left holds one of them), so a search from them that stops once they have all met proves
it, and the labels are then known: the removed nodes -1, every other node the label of
the first survivor. Where the search does not prove it (it finds a wall, or runs past its
budget), the cell is labelled whole as before.

On 8 DGX-like servers of 8 H100 (rail-optimized, a ``group`` a server): a GPU hangs from
its server's NVSwitch and its rail leaf; without it the two still meet through another
GPU of the server (by hand), so no labelling is run and every other node has label 0.
On ``lite-hier`` each Lite hangs from one leaf only: a leaf's failure leaves its 16 Lites
each a part of its own (by hand), which the search cannot prove connected: the whole
labelling, as before.
"""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import fabric_cluster_scenario
from topologies.graph_ops import CellArrays


@pytest.fixture(scope="module")
def cell():
    return build_cluster(fabric_cluster_scenario("rail-optimized:domains=8"), "Llama-3-8B",
                         "decode")


def _whole(c, comp):
    return c._csr.part_labels({*comp.nodes, *comp.disabled}, list(comp.edges))


def test_a_gpu_failure_is_labelled_without_a_pass_over_the_cell(cell, monkeypatch):
    c = cell
    comp = c.components["gpu-die"][0]
    c._part_labels([c.components["gpu-die"][1]])   # the cell's arrays, before the patch
    assert comp.nodes == ("gpu0",) and sorted(c.graph.adj["gpu0"]) == ["leaf0", "nvs0"]

    def refuse(self, keep):
        raise AssertionError("the whole cell labelled")

    c.__dict__.pop("_last_partition", None)
    monkeypatch.setattr(CellArrays, "labels", refuse)
    labels = c._part_labels([comp])[1]   # the old code: the whole cell labelled
    monkeypatch.undo()
    at = c._csr.index
    expect = np.zeros(len(c._csr.nodes), dtype=np.int32)
    expect[at["gpu0"]] = -1
    assert labels.dtype == expect.dtype and np.array_equal(labels, expect)
    assert np.array_equal(labels, _whole(c, comp))
    assert c.partition([comp])["nvs0"] == c.partition([comp])["leaf0"] == 0


def test_a_failure_that_cuts_the_cell_is_labelled_whole(monkeypatch):
    c = build_cluster("lite-hier", "Llama-3-70B", "decode")
    leaf = c.components["leaf"][0]
    lites = [f"gpu{i}" for i in range(16)]
    assert leaf.nodes == ("leaf0",) and all(list(c.graph.adj[g]) == ["leaf0"] for g in lites)
    c._part_labels([c.components["gpu-die"][0]])   # the cell's arrays, before the count
    calls = []
    original = CellArrays.labels

    def counted(self, keep):
        calls.append(1)
        return original(self, keep)

    c.__dict__.pop("_last_partition", None)
    monkeypatch.setattr(CellArrays, "labels", counted)
    labels = c._part_labels([leaf])[1]
    assert calls == [1]   # not proven: labelled whole
    at = c._csr.index
    # each of the leaf's 16 Lites hangs from nothing: a part of its own (by hand)
    for g in lites:
        assert labels[at[g]] >= 0 and int(np.sum(labels == labels[at[g]])) == 1
    rest = [at[n] for n in c._csr.nodes if n not in lites and n != "leaf0"]
    assert len(set(labels[rest].tolist())) == 1
    assert np.array_equal(labels, _whole(c, leaf))


def test_every_failure_labelled_as_the_whole_labelling(cell):
    c = cell
    for comps in c.components.values():
        for comp in comps:
            c.__dict__.pop("_last_partition", None)
            labels = c._part_labels([comp])[1]
            assert np.array_equal(labels, _whole(c, comp)), comp.name
