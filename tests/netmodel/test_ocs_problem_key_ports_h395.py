"""An OCS instance costed in slices is keyed by its members' optical ports on the cell.

The blast radius costs an instance once per costing problem (InstanceCosting's key). On
an OCS fabric under pipeline stages a stage boundary's send-recv runs on circuits re-set
for each boundary pair, and a pair's circuits go through the OCS planes both of its GPUs
still reach, which the instance's own ring does not show. The key's part for that was read
from the instance's circuit graph (no optical link in it: the same empty part for every
cell), so two cells leaving the same ring but different boundary pairs shared one costing.

Here two ports of lite-ocs's Lites fail: member 0's on ocs3 and member ``tp``'s (its
boundary partner) either also on ocs3 (the pair keeps 3 common planes) or on ocs2 (2 common
planes). Both leave every member 3 ports or more, so the instance's ring is one circuit a
neighbour pair either way (3 // 2), the same graph once the OCS each circuit takes is
dropped.
"""

import networkx as nx
import pytest

from netmodel.study.placed_graph import canonical, instance_circuits, problem_key, unlabelled
from netmodel.study.reliability_cluster import build_cluster


def _cluster():
    return build_cluster("lite-ocs", "Llama-3-70B", "prefill", parallelism="all")


def _cells(cluster):
    m = tuple(cluster.instances[0])
    tp = cluster.parallelism.tp
    same = cluster.graph.copy()
    same.remove_edges_from([(m[0], "ocs3"), (m[tp], "ocs3")])
    other = cluster.graph.copy()
    other.remove_edges_from([(m[0], "ocs3"), (m[tp], "ocs2")])
    return m, tp, same, other


def _common_planes(graph: nx.Graph, a, b) -> int:
    return len(set(graph[a]) & set(graph[b]) & {n for n in graph if n.startswith("ocs")})


@pytest.fixture(scope="module")
def cluster():
    return _cluster()


def test_the_two_cells_differ_only_in_the_boundary_pair(cluster):
    m, tp, same, other = _cells(cluster)
    assert cluster.parallelism.pp > 1          # stage boundaries to cost
    assert _common_planes(same, m[0], m[tp]) == 3
    assert _common_planes(other, m[0], m[tp]) == 2
    keys = []
    for cell in (same, other):
        ring = unlabelled(instance_circuits(cluster.scenario, cell, m))
        # one circuit a neighbour pair (3 ports carry floor(3 / 2) copies of the ring), a
        # quarter of the Lite's 112.5 GB/s over its 4 ports
        assert {(d.get("links", 1), d["bandwidth"]) for _, _, d in ring.edges(data=True)} \
            == {(1, 112.5e9 / 4)}
        keys.append(problem_key(*canonical(ring, m)))
    assert keys[0] == keys[1]


def test_each_cell_is_costed_on_its_own_ports(cluster):
    m, _, same, other = _cells(cluster)
    shared_same = cluster.instance_result(same, m).latency
    shared_other = cluster.instance_result(other, m).latency
    alone_other = _cluster().instance_result(other, m).latency
    # one layout for the instance (placed_graph.pipeline_circuits): every GPU keeps 3
    # ports, so each stage's pair takes 1 circuit and each stage link 1, whether the
    # boundary pair shares 3 planes or 2: the same step
    assert alone_other == shared_same
    # old code: the second cell took the first's costing (0.48225 s, not 0.48278 s)
    assert shared_other == alone_other
