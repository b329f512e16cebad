"""The router reads routes from the kept shortest paths towards each destination up to
``DAG_NODES`` nodes that links join, not nodes in all: an OCS cell's circuits keep every
OCS as a node without links (the bill of materials'), and 4,096 of them beside 128 GPUs
made every pair searched on its own (lite-ocs at 4,096 ports: a 128-GPU ring's all-reduce
4.7 s, 16,000 searches), where the kept paths give the same routes."""

from __future__ import annotations

import numpy as np
import pytest

import netmodel.collectives.route_search as route_search
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_types import DAG_NODES
from topologies.optical import ocs, realize

SIZES = np.array([1e3, 1e6, 1e9])


@pytest.fixture(scope="module")
def cells():
    """16 GPUs' circuits (a 4x4 torus) with more OCS than DAG_NODES kept unlinked, and the
    same circuits with only the OCS they are set through."""
    circuits = realize(ocs(gpus=16, ports=DAG_NODES + 4), "torus:4x4")
    used = {o for _, _, via in circuits.edges(data="via") for o in via.split(",")}
    bare = circuits.copy()
    del bare.graph["ocs_cabling"]   # the bill of materials' fibres: no cost reads them
    bare.remove_nodes_from([n for n, k in circuits.nodes(data="kind")
                            if k == "ocs" and n not in used])
    assert circuits.number_of_nodes() > DAG_NODES >= bare.number_of_nodes()
    return circuits, bare


@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "all-to-all"])
def test_unlinked_nodes_change_no_cost(cells, op, monkeypatch):
    circuits, bare = cells
    group = tuple(f"gpu{i}" for i in range(16))
    want = FabricCostModel(bare).collective_time(op, SIZES, group)

    search = route_search.SearchedRoutes._search

    def no_search(self, src, dst, *, gpu_transit, **k):   # GPUs forward: a pair's own
        assert not gpu_transit, "searched pair by pair"
        return search(self, src, dst, gpu_transit=gpu_transit, **k)

    monkeypatch.setattr(route_search.SearchedRoutes, "_search", no_search)
    got = FabricCostModel(circuits).collective_time(op, SIZES, group)
    assert np.array_equal(got, want)
