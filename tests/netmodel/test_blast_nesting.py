"""Blast-radius invariants: every effect lies between nothing and the whole cluster, and a
failure that removes more (a switch, against one cable end on it; a host, against one GPU
of it) never takes fewer GPUs nor less capacity.

The audit checked three switches of each class against every cable end on them and two
hosts against their GPUs on all six shipped scenarios for Llama-3-70B (decode, prefill)
and Mixtral-8x7B decode (6,444 pairs), with no violation; this test keeps the two quick
scenarios.
"""

from __future__ import annotations

import pytest

from netmodel.study.reliability_cluster import build_cluster

SWITCHES = ("nvswitch", "leaf", "spine", "core", "ocs")
ENDS = ("transceiver", "cpo-engine", "copper-end", "nic")


def _radius(cluster, comp) -> tuple[int, float]:
    """(GPUs lost or cut off, instances' worth of capacity lost) of one component."""
    _, lost, wired, touched = cluster._local(comp)
    r = cluster._evaluate(comp, lost, wired, touched)
    return r["gpus_lost"] + r["gpus_cut"], r["instances_down"] + r["slow"]


@pytest.mark.parametrize("scenario", ["lite-hier", "lite-ocs"])
def test_effects_are_bounded_and_nested(scenario):
    c = build_cluster(scenario, "Llama-3-70B", "decode")
    for e in c.effects():
        assert 0 <= e.gpus <= c.cell_gpus
        assert e.sms == e.gpus * c.gpu.sms
        assert 0 <= e.instances_down <= c.instances_total
        assert -1e-12 <= e.slow <= c.instances_total - e.instances_down + 1e-9
        assert e.instances_down >= (1 if e.gpus_lost else 0)
    comps = c.components
    pairs = 0
    for cls in SWITCHES:
        for switch in comps.get(cls, [])[:2]:
            big = _radius(c, switch)
            for end_cls in ENDS:
                for end in comps.get(end_cls, []):
                    edges = [*end.edges, *(e for e, _ in end.scaled)]
                    if edges and all(u in switch.nodes or v in switch.nodes for u, v in edges):
                        small = _radius(c, end)
                        assert big[0] >= small[0] and big[1] >= small[1] - 1e-9, (switch.name,
                                                                               end.name)
                        pairs += 1
    for host in comps["host"][:1]:
        big = _radius(c, host)
        for gpu in comps["gpu-package"]:
            if set(gpu.nodes) <= set(host.nodes):
                small = _radius(c, gpu)
                assert big[0] >= small[0] and big[1] >= small[1] - 1e-9
                pairs += 1
    assert pairs > 0
