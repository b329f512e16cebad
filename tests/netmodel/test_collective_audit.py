"""Audit of the collective engine against hand-derived closed forms (ideal calibration, zero
route latency) and the refusals it owes every group size."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build

ALPHA = 1e-6
N = 2**30


# ---------------------------------------------------------------- a group of one GPU
@pytest.mark.parametrize("call, match", [
    (lambda m: m.cost("all-reduce", 1e6, 1, algorithm="pairwise"), "does not implement"),
    (lambda m: m.sweep("all-to-all", [1e3, 1e6], 1, algorithm="ring"), "does not implement"),
    (lambda m: m.cost("all-reduce", 1e6, 1, algorithm="magic"), "unknown algorithm"),
])
def test_one_gpu_refuses_what_two_refuse(call, match):
    # a group of one GPU returned 0 s for an algorithm that does not implement the op
    # (the same call on two GPUs is refused)
    m = FabricCostModel(build("torus:dims=3x5"))
    with pytest.raises(UserError, match=match):
        call(m)


def test_one_gpu_model_algorithm_and_candidates_checked():
    g = build("torus:dims=3x5")
    with pytest.raises(UserError, match="does not implement"):
        FabricCostModel(g, algorithm="pairwise").collective_time("all-reduce", 1e6, 1)
    with pytest.raises(UserError, match="no algorithm can run all-to-all"):
        FabricCostModel(g, algorithms=("ring",)).collective_time("all-to-all", 1e6, 1)
    # what runs still costs nothing on one GPU
    m = FabricCostModel(g, algorithm="ring")
    assert float(m.collective_time("all-reduce", 1e6, 1)) == 0.0
    assert m.cost("all-gather", 1e6, 1).time == 0.0


def test_one_gpu_cli_exit_2():
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "torus:dims=3x5",
                                 "--group", "1", "--algorithm", "pairwise"])
    assert r.exit_code == 2, r.output
    assert "does not implement 'all-reduce'" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_one_gpu_header_singular():
    # the header said 'all-reduce of 1 MiB on 1 GPUs (gpu0)'
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "ring:n=4",
                                 "--group", "1", "--size", "1MiB"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == "all-reduce of 1 MiB on 1 GPU (gpu0)"
    assert "0 s" in r.output


# ---------------------------------------------------------------- splitting over paths
def test_torus_size_two_dimension_splits_by_what_each_path_carries(ideal_model):
    # 2x3x4 torus: the size-2 dimension's two ports to one neighbour are one 150 GB/s edge,
    # the others 75 GB/s. gpu0 -> gpu13 (one step in dims 0 and 2) has two 2-hop paths,
    # 150 then 75 GB/s and 75 then 150 GB/s: each carries 75 GB/s, so the transfer takes
    # alpha + n / 150 GB/s. Splitting at gpu0 by first-hop bandwidth sent 2/3 down the
    # 150 GB/s edge onto a 75 GB/s link: alpha + (2/3) n / 75 GB/s, 1.33x.
    m = ideal_model("torus:dims=2x3x4")
    t = m.cost("send-recv", N, ["gpu0", "gpu13"], "direct").time
    assert t == pytest.approx(ALPHA + N / 150e9, rel=1e-9)


def test_a_faster_first_hop_does_not_slow_a_ring_fabric_route(ideal_model):
    # ring of 6 (225 GB/s a side); gpu0-gpu1 doubled to 450 GB/s. gpu0 <-> gpu3 has two
    # 3-hop paths, each limited to 225 GB/s by its other links: alpha + n / 450 GB/s, as
    # before the upgrade. The bandwidth split put 2/3 on the upgraded side: 1.33x slower
    # than with the slower cable.
    m = ideal_model("ring:n=6")
    before = m.cost("send-recv", N, ["gpu0", "gpu3"], "direct").time
    g = m.graph.copy()
    g.edges["gpu0", "gpu1"]["bandwidth"] = 450e9
    after = FabricCostModel(g, calibration=Calibration.ideal(ALPHA)).cost(
        "send-recv", N, ["gpu0", "gpu3"], "direct").time
    assert before == pytest.approx(ALPHA + N / 450e9, rel=1e-9)
    assert after == pytest.approx(before, rel=1e-9)


# ---------------------------------------------------------------- rings over uneven domains
@pytest.mark.parametrize("domains, p", [(2, 12), (3, 20)])
def test_ring_over_uneven_domains_uses_the_smaller_domains_rails(ideal_model, domains, p):
    # 8 + 4 (or 8 + 8 + 4) H100 of a rail-optimized fabric, 50 GB/s NICs: 4 rings, one per
    # NIC the 4-GPU server has, each on n/4; a ring step moves n / (4 p) through each of
    # those NICs, 2(p - 1) steps: 2(p-1) alpha + 2(p-1) n / (4 p) / 50 GB/s (12 GPUs, 1 GiB:
    # 9.865 ms). It was one ring through one NIC, 2(p-1) n / p / 50 GB/s (39.39 ms, busbw
    # 47 GB/s on the default calibration against 362 for 16 GPUs).
    m = ideal_model(f"rail-optimized:domains={domains}")
    t = m.cost("all-reduce", N, p, "ring").time
    assert t == pytest.approx(2 * (p - 1) * ALPHA + 2 * (p - 1) * N / (4 * p) / 50e9,
                              rel=1e-9)


def test_a_cut_ocs_fabric_says_it_has_no_circuits():
    # an OCS fabric without circuits (the lite-ocs scenario's physical fabric too) printed
    # only 'CUT: the group is cut apart, no path joins gpu0 and gpu1', as if it were broken
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "ocs:gpus=8",
                                 "--group", "8"])
    assert r.exit_code == 0, r.output
    lines = r.output.strip().splitlines()
    assert lines[-2] == "CUT: the group is cut apart, no path joins gpu0 and gpu1"
    assert "has none: set them with logical=, e.g. --fabric ocs:gpus=8,logical=ring" in lines[-1]
    # the suggested fabric runs
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric",
                                 "ocs:gpus=8,logical=ring", "--group", "8"])
    assert r.exit_code == 0 and "CUT" not in r.output
    # a fabric cut for another reason gets no such line
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "ring:n=4",
                                 "--group", "4", "--fail", "gpu0/gpu1,gpu2/gpu3"])
    assert "CUT" in r.output and "logical=" not in r.output


@pytest.mark.parametrize("op", ["broadcast", "reduce"])
def test_ring_broadcast_over_uneven_domains_uses_the_smaller_domains_rails(ideal_model, op):
    # 8 + 4 H100, 50 GB/s NICs: 4 pipelined chains from the root, one per NIC of the
    # 4-GPU server, each on n/4: (p - 1) alpha + n / 4 / 50 GB/s = 5.380 ms for 1 GiB on
    # 12 GPUs. It was one chain through one NIC: n / 50 GB/s, 21.49 ms (16 GPUs: 2.70 ms).
    m = ideal_model("rail-optimized:domains=2")
    t = m.cost(op, N, 12, "ring").time
    assert t == pytest.approx(11 * ALPHA + N / 4 / 50e9, rel=1e-9)
