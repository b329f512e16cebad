"""A twin-port module's failure (topologies.optic_modules) is judged by what its two
cables share, not only by the places in their instance of the GPUs it hits.

rail-optimized:domains=8,domain_size=2,gpus_per_server=2 with module_ports 2: 16 H100, 8
servers of 2 (an NVLink domain each), 2 rails (leaf0, leaf1). Llama-3-70B decode runs TP 4:
4 instances of 2 servers. A server's module holds both its GPUs' NIC cables: the server is
cut off the network and its instance goes down (8 modules). A leaf's down module holds
rail r's cables of two servers of one instance: each of those GPUs still reaches the other
rail through its NVLink peer, no instance down (8 modules). The GPUs both hit sit in the
same places of their instance (every GPU of a TP-4 instance reads (NVSwitch, 2), (leaf, 2)),
so the cluster's symmetry classes took the 16 as one and said 16 modules took an instance
down. Transceivers alone failing at 1e-3 an hour: 8 x 1e-3 x 8,766 = 70.128 instance-down
events a year (140.256 before), Monte Carlo and the closed forms agreeing.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability import availability
from netmodel.study.reliability_catalog import catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_files import load_scenario_text
from topologies.failure_domains import CLASSES

SCENARIO = """name = "twin-rail"
description = "test fabric"
gpu = "H100-SXM"
[fabric]
builder = "rail-optimized"
domains = 8
domain_size = 2
gpus_per_server = 2
gpu = "$gpu"
module_ports = {ports}
[collective]
placement = "contiguous"
algorithm = "auto"
links = "as-built"
calibration = "default"
[sources]
bandwidth = "test"
latency = "test"
"""


def _cluster(ports):
    rates = {c: 0.0 for c in CLASSES if c not in ("gpu-die", "gpu-package", "transceiver")}
    cat = catalog().with_(gpu_rate_per_hour=0.0, rates={**rates, "transceiver": 1e-3})
    return build_cluster(load_scenario_text(SCENARIO.format(ports=ports)), "Llama-3-70B",
                         "decode", catalog_=cat)


def test_a_server_module_and_a_leaf_module_are_judged_apart():
    c = _cluster(2)
    assert (c.tp, len(c.instances), c.gpus) == (4, 4, 16)
    fx = [e for e in c.effects() if e.cls == "transceiver"]
    down = [e for e in fx if e.instances_down]
    assert [(e.components, e.gpus_cut, e.example) for e in down] == [(8, 2, "gpu0 module 0")]
    leaf = next(e for e in fx if e.example.startswith("leaf0 module 0"))
    assert (leaf.components, leaf.gpus_cut, leaf.instances_down) == (8, 0, 0)
    assert sum(e.components for e in fx) == 8 + 8 + 2 * 16 + 32   # + 2 leaves up, a spine
    a = availability(None, None, cluster=c, spares=0, trials=600, seed=3)
    assert a.analytic.instance_down_events_per_year == pytest.approx(8 * 1e-3 * 8766,
                                                                      rel=1e-9)
    assert abs(a.mc.mean - a.analytic.mean) <= 4 * a.mc.mean_ci
    assert a.mc.instance_down_events_per_year == pytest.approx(
        a.analytic.instance_down_events_per_year, rel=0.1)


def test_single_port_cables_take_no_instance_down():
    # a module an end: one GPU's NIC cable, its NVLink peer's rail still there
    c = _cluster(1)
    assert not any(e.instances_down for e in c.effects() if e.cls == "transceiver")
