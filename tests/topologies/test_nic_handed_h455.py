"""A failed GPU does not take down the NIC its server's other GPUs share.

``rail-optimized`` with fewer ``nics_per_server`` than GPUs wires each NIC's cable to the
first GPU of every ``gpus_per_server / nics_per_server``: the others reach the network
through the NVSwitch and that GPU. The NIC itself sits on the host's PCIe switch
(GPUDirect RDMA), so a GPU failure leaves it up for the others; a NIC (or host) failure
takes it down.

Hand-derived on ``rail-optimized:domains=2,nics_per_server=1`` (2 servers of 8 H100, one
NIC each, on the one leaf ``leaf0``): gpu0 and gpu8 hold the NICs. Before, one GPU
failure took out 1 GPU, and a NIC holder's also cut its 7 partners off the network:
radius 8 for 2 of the 16 GPUs, 1 for the other 14, mean (2 x 8 + 14 x 1) / 16 = 1.875,
most 8. Now every GPU failure takes out its GPU alone: mean 1, most 1. A NIC failure
still cuts its server's 8 GPUs off (8, both before and after).
"""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies.degrade import degrade
from topologies.failure_domains import GPU_CLASSES, components, handed_labels, nic_heirs
from topologies.graph_ops import CellArrays
from topologies.hardware_radius import hardware_radius
from topologies.specs import build

ONE_NIC = "rail-optimized:domains=2,nics_per_server=1"


def _radius(spec: str) -> dict:
    return {b.cls: b for b in hardware_radius(build(spec))}


def _gpu(graph: nx.Graph, cls: str, name: str):
    return next(c for c in components(graph)[cls] if c.nodes == (name,))


def _gpus_off(graph: nx.Graph) -> int:
    """GPUs outside the largest connected part (by GPUs)."""
    gpu = {n for n, k in graph.nodes(data="kind") if k == "gpu"}
    parts = sorted((len(gpu & c) for c in nx.connected_components(graph)), reverse=True)
    return sum(parts[1:])


def test_one_nic_server_gpu_failure_takes_one_gpu():
    r = _radius(ONE_NIC)
    for cls in GPU_CLASSES:   # was 1.875 and 8: a NIC holder cut its 7 partners off
        assert (r[cls].gpus_mean, r[cls].gpus_max) == (1.0, 1)
    # the NIC itself failing still cuts the server's 8 GPUs off the network
    assert (r["nic"].gpus_mean, r["nic"].gpus_max) == (8.0, 8)
    assert r["host"].gpus_mean == 8.0


def test_degrade_hands_the_nic_to_the_next_gpu():
    g = build(ONE_NIC)
    out = degrade(g, [_gpu(g, "gpu-die", "gpu0")])
    assert "gpu0" not in out and out.graph["gpus"] == 15
    # the same NIC cable, its latency with gpu1's way to it over nvs0 (10 + 150 + 10 ns)
    cable = {**g.edges["gpu0", "leaf0"], "latency": g.edges["gpu0", "leaf0"]["latency"]
             + 170e-9}
    assert out.edges["gpu1", "leaf0"] == pytest.approx(cable)
    assert not any(out.has_edge(f"gpu{i}", "leaf0") for i in range(2, 8))
    assert nx.is_connected(out) and _gpus_off(out) == 0
    # the healthy graph is untouched (a copy)
    assert g.has_edge("gpu0", "leaf0") and not g.has_edge("gpu1", "leaf0")


def test_nic_failure_still_cuts_the_server():
    g = build(ONE_NIC)
    nic = next(c for c in components(g)["nic"] if c.name == "gpu0-leaf0")
    out = degrade(g, [nic])
    assert out.graph["gpus"] == 16 and _gpus_off(out) == 8
    # the NIC and its GPU both failed, in either order: nothing is handed on
    gpu0 = _gpu(g, "gpu-package", "gpu0")
    for failed in ([nic, gpu0], [gpu0, nic]):
        out = degrade(g, failed)
        assert out.graph["gpus"] == 15 and _gpus_off(out) == 7
        assert not out.has_edge("gpu1", "leaf0")


def test_heir_failing_too_hands_on_to_the_next():
    g = build(ONE_NIC)
    a, b = _gpu(g, "gpu-die", "gpu0"), _gpu(g, "gpu-die", "gpu1")
    for failed in ([a, b], [b, a]):
        out = degrade(g, failed)
        assert out.has_edge("gpu2", "leaf0") and _gpus_off(out) == 0
    # the connected parts a failure leaves, as the study labels them, agree
    cells = CellArrays(g)
    labels = handed_labels(cells.part_labels({"gpu0", "gpu1"}, []), cells.index, [a, b])
    at = cells.index
    assert labels[at["gpu7"]] == labels[at["gpu8"]] and labels[at["gpu1"]] == -1


def test_host_failure_hands_nothing_on():
    g = build(ONE_NIC)
    host = components(g)["host"][0]
    assert host.handed == ()
    out = degrade(g, [host])
    assert out.graph["gpus"] == 8 and not any(n.startswith("nvs0") for n in out)


def test_heirs_follow_the_stride():
    heirs = nic_heirs(build("rail-optimized:domains=2,nics_per_server=2"))
    assert sorted(heirs, key=lambda n: int(n[3:])) == ["gpu0", "gpu4", "gpu8", "gpu12"]
    assert heirs["gpu4"] == ((("gpu4", "leaf1"), ("gpu5", "gpu6", "gpu7")),)


@settings(max_examples=25, deadline=None)
@given(domains=st.integers(2, 3), gps=st.sampled_from([1, 2, 4, 8]),
       per_domain=st.integers(1, 2), per_leaf=st.integers(1, 4))
def test_a_nic_a_gpu_changes_nothing(domains, gps, per_domain, per_leaf):
    """With a NIC a GPU (the default, and nics_per_server=8 on 8 GPUs) no GPU hands
    anything on: its failure removes the GPU and its own cable, as before."""
    spec = (f"rail-optimized:domains={domains},gpus_per_server={gps},"
            f"domain_size={gps * per_domain},servers_per_leaf={per_leaf},nics_per_server={gps}")
    g = build(spec)
    assert nic_heirs(g) == {}
    comps = components(g)
    gpus = [n for n, k in g.nodes(data="kind") if k == "gpu"]
    for cls in GPU_CLASSES:
        assert [(c.nodes, c.handed) for c in comps[cls]] == [((n,), ()) for n in gpus]
    out = degrade(g, [comps["gpu-die"][0]])
    plain = g.copy()
    plain.remove_node(gpus[0])
    assert sorted(out.edges(data=True)) == sorted(plain.edges(data=True))
    assert _radius(spec)["gpu-die"].gpus_max == 1


@settings(max_examples=20, deadline=None)
@given(nics=st.sampled_from([1, 2, 4, 8]), failed=st.sets(st.integers(0, 15), min_size=1,
                                                        max_size=6))
def test_gpu_failures_never_cut_a_survivor_off(nics, failed):
    """Any GPU failures on 2 servers of 8: every GPU left keeps a path to the network
    while a GPU of its server with a NIC link, or one inheriting it, is left."""
    g = build(f"rail-optimized:domains=2,nics_per_server={nics}")
    comps = [_gpu(g, "gpu-die", f"gpu{i}") for i in sorted(failed)]
    out = degrade(g, comps)
    assert out.graph["gpus"] == 16 - len(failed)
    assert nx.is_connected(out)
