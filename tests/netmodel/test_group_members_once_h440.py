"""The cell's GPUs by group are worked out once per cluster.

With ``group`` spares each failure's recovery, ``by_group`` and the pools asked for the
groups' members, and each walked every GPU of the cell for its label: ~885 times on a
16,384-H100 rail-optimized cell (121 of 240 s profiled). Four DGX-like servers of 8 H100
(rail-optimized, one ``group`` a server): the groups are the servers' 8 GPUs each, in the
cell's order, and the cell is walked once however often they are asked, availability
included; the cluster under other failure figures (``with_catalog``) keeps them.
"""

from __future__ import annotations

from netmodel.study import reliability_spares as rs
from netmodel.study.availability import availability
from netmodel.study.reliability_cluster import build_cluster
from topologies.schema import gpu_nodes

from .test_group_spares import FOUR
from .test_spare_recovery_classes import gpus_only


def test_the_cell_is_walked_once(monkeypatch):
    c = build_cluster(FOUR, "Llama-3-70B", "decode", catalog_=gpus_only(1e-3))
    walks = []

    def counted(graph):
        walks.append(1)
        return gpu_nodes(graph)

    monkeypatch.setattr(rs, "gpu_nodes", counted)
    groups = rs._groups(c)
    # by hand: 4 servers of 8, a group each, the GPUs in the cell's order
    order = list(gpu_nodes(c.graph))
    assert [len(m) for m in groups.values()] == [8, 8, 8, 8]
    assert [g for m in groups.values() for g in m] == sorted(order, key=lambda g: (
        c.graph.nodes[g]["group"], order.index(g)))
    assert all(len({c.graph.nodes[g]["group"] for g in m}) == 1 for m in groups.values())
    availability(None, None, cluster=c, spares=8, placement="group", trials=20,
                 horizon="1y", seed=0)
    assert rs._groups(c) is groups
    assert rs._groups(c.with_catalog(gpus_only(2e-3))) is groups
    assert len(walks) == 1
