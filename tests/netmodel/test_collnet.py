"""NCCL's CollNetDirect and CollNetChain all-reduce (``collnet-direct``, ``collnet-chain``):
the GPUs of a scale-up domain reduce among themselves over NVLink, the SHARP switches above
reduce across the domains, each GPU's ``1/m`` share through its own NIC (NVIDIA/nccl
src/device/all_reduce.h; latencies src/graph/tuning.cc). Hand figures on 8 B200 a node
(netmodel/data/collective_generations.toml: NVLink 900 GB/s x 0.802; collective_defaults.toml:
NIC 50 GB/s x 0.94; the in-network factor 0.74 on the SHARP step)."""

from __future__ import annotations

import pytest

from netmodel.collectives.algorithms import NotApplicable, generate
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.names import NCCL_OPS
from topologies import build

GIB = 2.0 ** 30
NO_NVLS = "gpu=B200-HGX,sharp=true,in_network_reduction=false"
NVLINK = 900e9 * 0.802          # a B200's NVLink payload rate per direction
NIC = 50e9 * 0.94 * 0.74        # a 400G NIC's rate under the in-network factor


def _slope(model, p):
    """Seconds per byte once every pipeline is full (two sizes beyond any slice)."""
    t1 = model.cost("all-reduce", 16 * GIB, p).time
    t2 = model.cost("all-reduce", 32 * GIB, p).time
    return (t2 - t1) / (16 * GIB)


@pytest.mark.parametrize("algorithm", ["collnet-direct", "collnet-chain"])
@pytest.mark.parametrize(("domains", "busbw"), [(4, 539.09e9), (64, 555.39e9)])
def test_collnet_is_bound_by_each_gpus_nic_share(algorithm, domains, busbw):
    # each GPU's NIC carries n/8 each way: algbw 8 x 50 x 0.94 x 0.74 = 278.24 GB/s, busbw
    # 2 (p-1)/p of it: 539.09 GB/s on 32 GPUs, 555.39 on 512 (NCCL measures 551-606 and
    # 530-546 with CollnetDirect, 534.5 with CollnetChain on 512); the NVLink ports carry
    # 2 x 7/8 n each way, 2.42 ps/B against the NIC's 3.59
    g = build(f"rail-optimized:domains={domains},{NO_NVLS}")
    p = 8 * domains
    model = FabricCostModel(g, algorithm=algorithm)
    assert _slope(model, p) == pytest.approx(0.125 / NIC, rel=1e-9)
    assert 0.125 / NIC > 2 * 7 / 8 / NVLINK
    r = model.cost("all-reduce", 32 * GIB, p)
    assert r.algorithm == algorithm
    assert r.busbw == pytest.approx(busbw, rel=2e-3)
    assert r.busbw < busbw


@pytest.mark.parametrize("algorithm", ["collnet-direct", "collnet-chain"])
def test_collnet_is_bound_by_nvlink_when_the_nics_are_fast(algorithm):
    # 200 GB/s NICs: n/8 / (200 x 0.94 x 0.74 GB/s) = 0.90 ps/B, below NVLink's reduce-scatter
    # and all-gather together on each port, 2 x 7/8 n / 721.8 GB/s = 2.4245 ps/B
    g = build(f"rail-optimized:domains=4,{NO_NVLS},nic_bandwidth=200e9")
    model = FabricCostModel(g, algorithm=algorithm)
    assert _slope(model, 32) == pytest.approx(2 * 7 / 8 / NVLINK, rel=1e-9)


def test_chain_pays_m_minus_1_nvlink_latencies_each_way_direct_one():
    # tuning.cc: CollNetDirect 2 intraLat + interLat, CollNetChain 2 (ppn-1) intraLat + interLat
    g = build(f"rail-optimized:domains=4,{NO_NVLS}")
    steps = {a: FabricCostModel(g, algorithm=a).cost("all-reduce", GIB, 32).steps
             for a in ("collnet-direct", "collnet-chain")}
    direct, chain = steps["collnet-direct"], steps["collnet-chain"]
    assert [s.scaleout for s in direct] == [False, True, False]
    for i in (0, 2):
        assert chain[i].latency == pytest.approx(7 * direct[i].latency, rel=1e-12)
    assert chain[1].latency == direct[1].latency       # one SHARP all-reduce across


def test_auto_over_nccls_algorithms_takes_collnet_on_a_sharp_fabric_without_nvls():
    # NCCL runs CollNetDirect and CollNetChain wherever CollNet is on (src/enqueue.cc
    # updateCollCostTable), NVLS on or off; the model's auto was the ring at 375 GB/s here
    g = build(f"rail-optimized:domains=4,{NO_NVLS}")
    assert {"collnet-direct", "collnet-chain"} <= set(NCCL_OPS["all-reduce"])
    r = FabricCostModel(g, algorithms="nccl").cost("all-reduce", 32 * GIB, 32)
    assert r.algorithm.startswith("collnet-")
    assert r.busbw == pytest.approx(8 * NIC * 2 * 31 / 32, rel=2e-3)   # 539.09 GB/s, above


@pytest.mark.parametrize("algorithm", ["collnet-direct", "collnet-chain"])
def test_collnet_refuses_domains_of_more_than_8_gpus_and_fabrics_without_sharp(algorithm):
    # src/enqueue.cc: "CollNetDirect is only supported for up to 8 local GPUs"
    big = build("rail-optimized:domains=2,domain_size=16,sharp=true")
    with pytest.raises(NotApplicable, match="at most 8 GPUs"):
        generate(algorithm, "all-reduce", [f"gpu{i}" for i in range(32)], big)
    plain = build("rail-optimized:domains=2,in_network_reduction=false")
    with pytest.raises(NotApplicable, match="in_network_reduction"):
        generate(algorithm, "all-reduce", [f"gpu{i}" for i in range(16)], plain)
    nvls_only = build("rail-optimized:domains=2")
    with pytest.raises(NotApplicable, match=f"{algorithm} needs SHARP"):
        generate(algorithm, "all-reduce", [f"gpu{i}" for i in range(16)], nvls_only)
