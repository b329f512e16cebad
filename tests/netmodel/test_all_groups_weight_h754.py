"""collective --all-groups' estimate (concurrent.all_groups_work) counts a unit of work 4
times (DAG_UNIT_WEIGHT) on a fabric of up to DAG_NODES (4,096) nodes that links join, where
the router searches and keeps each destination's shortest paths node by node: there a unit
took ~17 us against ~4.7 us past it (tori in groups of 64), so a small fabric near the limit
ran ~3.6 times its 2 minutes. The weight follows the router's own rule, at its edge: a
16x16x16 torus (4,096 nodes) weighed, a 17x16x16 one (4,352) not."""

import pytest

from netmodel.collectives.algorithms import transfer_count
from netmodel.collectives.concurrent import all_groups_work, dag_searched
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_types import DAG_NODES
from topologies.registry import build


@pytest.mark.parametrize(("dims", "weight"), [("16x16x16", 4), ("17x16x16", 1)])
def test_weight_at_the_edge_of_the_searched_routes(dims, weight):
    model = FabricCostModel(build(f"torus:dims={dims}"))
    nodes = model.graph.number_of_nodes()
    assert dag_searched(model) == (nodes <= DAG_NODES)
    per = sum(transfer_count(a, "all-reduce", 64) for a in model.algorithm_names("all-reduce"))
    groups = nodes // 64   # every node a GPU
    assert all_groups_work(model, 64, "all-reduce") == (groups, weight * groups * (per + nodes))

