"""Inside one NVL72 rack, GPUs of two compute trays at the same position (same rail: gpu0
and gpu4) talk over NVLink, as NCCL's P2P does within an MNNVL clique (its topology fused
into one node, src/graph/topo.cc; transports tried p2p first, src/transport.cc
selectTransport). The routing had split their traffic over the rail's InfiniBand leaf too
(gpu0 - leaf0 - gpu4 is as short as gpu0 - NVSwitch - gpu4, and the routing splits over
equal-cost shortest paths), so the step was charged NCCL's network latencies. Found by the
audit of helper 220 (issue 11, item 2: hand derivation against the tool); now two GPUs with
a tier-0 switch in common are routed over their tier-0 switches only
(netmodel/collectives/route_templates.py, ``_full_template``).

Hand-derived, docs/examples/gb300-nvl72.toml (links as-built, Blackwell constants):
all-reduce of 2 MiB among gpu0-7 (two compute trays), halving-doubling, LL:
  bandwidth 900 GB/s x 0.802 (NVLink5 efficiency) x 0.391 (LL, Blackwell) = 282.22 GB/s
  a step's latency 0.6 us (LL, NVLink) + 2 x 2 m copper x 5 ns/m + 150 ns NVSwitch = 0.77 us
  6.6 us start-up + 6 steps x 0.77 us + 2 x (1 + 1/2 + 1/4) MiB / 282.22 GB/s
  = 6.6 + 4.62 + 13.00 = 24.22 us.
The old routing: 28.40 us, its d = 4 steps (gpu0 <-> gpu4) at 3.23 us of latency (2.7 us,
NCCL's LL network step, + 0.53 us GPU - leaf - GPU). The ring, whose neighbours sit on
different rails, is 30.38 us either way (6.6 + 14 x 0.77 + 13.00). A send-recv gpu0 -> gpu4
of 1 MiB (Simple): 8.4 + 3.4 + 0.17 + 1 MiB / (900 x 0.802 GB/s) = 13.42 us, as gpu0 ->
gpu1 costs; the old routing charged 24.24 us (14.0 us network step latency), more than with
leaf0 failed (13.42 us).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.collectives.routing import Router
from topologies import build

SCENARIO = str(Path(__file__).resolve().parents[2] / "docs" / "examples" / "gb300-nvl72.toml")


def _collective(*args):
    r = CliRunner().invoke(cli, ["collective", *args, "--json"], prog_name="netmodel")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_ring_neighbours_on_different_rails_are_nvlink():
    """The ring's figure, which no same-rail pair touches, is the hand one: 30.38 us."""
    doc = _collective("all-reduce", "--scenario", SCENARIO, "--group", "8", "--size", "2MiB",
                      "--algorithm", "ring")
    want = 6.6e-6 + 14 * 0.77e-6 + 2 * 7 / 8 * 2**21 / (900e9 * 0.802 * 0.391)
    assert doc["time"] == pytest.approx(want, rel=1e-3)


def test_same_rail_trays_of_one_rack_talk_over_nvlink():
    ar = _collective("all-reduce", "--scenario", SCENARIO, "--group", "8", "--size", "2MiB")
    want = 6.6e-6 + 6 * 0.77e-6 + 2 * 7 / 8 * 2**21 / (900e9 * 0.802 * 0.391)
    assert ar["time"] == pytest.approx(want, rel=1e-3)
    sr = _collective("send-recv", "--fabric", SCENARIO, "--group", "gpu0,gpu4", "--size",
                     "1MiB")
    # Simple on a peer's 16 channels of the 32 ring channels' rate (2 ranks, one NVLink
    # domain: pipeline_fill.p2p_simple_channels)
    assert sr["time"] == pytest.approx(8.4e-6 + 3.57e-6 + 2**20 / (900e9 * 0.802 * 16 / 32),
                                       rel=1e-3)
    assert not any(s["scaleout"] for s in sr["steps"])


def test_same_rail_route_is_the_nvswitch_alone():
    """nvl72:racks=2 (B200: 900 GB/s NVLink5, 50 GB/s NIC): gpu0 -> gpu4 crosses nvs0 only,
    all of it (the old split: 900/950 over nvs0, 50/950 over leaf0), in 2 x 2 m copper x
    5 ns/m + 150 ns NVSwitch = 170 ns, no scale-out link. The same on a 16-GPU NVLink domain
    of two 8-GPU servers (gpu0 and gpu8 on one rail leaf)."""
    for spec, peer in (("nvl72:racks=2", "gpu4"),
                       ("rail-optimized:domains=2,domain_size=16,gpus_per_server=8", "gpu8")):
        r = Router(build(spec))
        route = r.route("gpu0", peer)
        assert [r.link_name(i) for i in route.links] == [("gpu0", "nvs0"), ("nvs0", peer)]
        assert route.weights.tolist() == [1.0, 1.0]
        assert route.latency == pytest.approx(170e-9, rel=1e-12)
        assert not route.scaleout


def test_nvlink_failed_keeps_the_nic():
    """A GPU whose NVLink failed shares no tier-0 switch with its peer, and still reaches it
    through its rail leaf: send-recv gpu0 -> gpu4 of 1 MiB with gpu0/nvs0 failed crosses the
    scale-out network, NCCL's network step latency (Simple, 14.0 us) plus GPU - leaf - GPU
    (2 x 20 m x 5 ns/m + 330 ns = 0.53 us), bottleneck gpu0's NIC."""
    sr = _collective("send-recv", "--fabric", SCENARIO, "--group", "gpu0,gpu4", "--size",
                     "1MiB", "--fail", "gpu0/nvs0")
    (step,) = sr["steps"]
    assert step["scaleout"]
    assert step["bottleneck"] == ["gpu0", "leaf0"]
    assert step["latency"] == pytest.approx(14.0e-6 + 0.53e-6, rel=1e-9)


@pytest.mark.parametrize("op", ["all-to-all", "all-gather"])
@pytest.mark.parametrize("spec, alone, n", [
    ("nvl72:racks=2", "nvl72", 72),
    ("rail-optimized:domains=2,domain_size=16,gpus_per_server=8",
     "rail-optimized:domains=1,domain_size=16,gpus_per_server=8", 16)])
def test_one_domain_costs_as_without_nics(op, spec, alone, n):
    """A collective of one NVLink domain's GPUs costs what it costs on the same domain
    without NICs (one rack: no leaves), every step on the scale-up network. The old routing
    sent the same-rail pairs' share through the leaves: all-to-all of 64 MiB among the 72
    GPUs of rack 0 of nvl72:racks=2 113.46 us against 103.65 us for the lone rack."""
    got = _collective(op, "--fabric", spec, "--group", str(n), "--size", "64MiB")
    want = _collective(op, "--fabric", alone, "--group", str(n), "--size", "64MiB")
    assert not any(s["scaleout"] for s in got["steps"])
    assert (got["algorithm"], got["protocol"]) == (want["algorithm"], want["protocol"])
    assert got["time"] == pytest.approx(want["time"], rel=1e-12)
