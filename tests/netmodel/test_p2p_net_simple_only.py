"""NCCL's send/recv runs Simple at every size with a peer across the network.

NVIDIA/nccl src/transport/net.cc (commit 022c022a), sendProxyConnect: a send/recv connection
over the network (no graph, connIndex 1) takes the shared buffers (NCCL_NET_SHARED_BUFFERS,
default -2: shared), which hold Simple's buffer only; it gets an LL buffer only when the
communicator's allocP2pNetLLBuffers is set, the NCCL_ALLOC_P2P_NET_LL_BUFFERS parameter,
default 0 (src/init.cc). src/enqueue.cc (commit 01e6dd91), addP2pToPlan: a direction keeps
LL only while every channel's connection to the peer has an LL buffer, and only then the
size rule (a peer's bytes at most nChannelsMax x NCCL_P2P_LL_THRESHOLD). So an all-to-all
whose peers cross the network has no LL size range, and its time has no step down where
that rule would switch: on h100-dgx (4 x 8 H100, a 400G NIC a GPU) DeepSeek-V3's decode at
TP 32 x EP 32 took 96.69 us for its MoE combine at batch 576 (2,064,384 B, 63 KiB a peer:
LL at 0.380 of the NIC) and 57.87 us at 577 (2,179,072 B, Simple), TBT 21.05 -> 18.99 ms.

Inside one NVLink domain the step is NCCL's own and stays: every peer there has an LL
buffer, and the measured nccl-tests alltoall sweeps take less time at twice the size across
the switch (tests/netmodel/data/nccl_ops_published.csv: 8xB200 4 -> 8 MiB, one GB300 tray
2 -> 4 MiB, busbw 94.49 -> 212.00 and 65.84 -> 136.59 GB/s).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from netmodel.api import evaluate
from netmodel.collectives.calibration_files import default_calibration, load_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build

KIB, MIB = 2 ** 10, 2 ** 20
#: PXN's route GPU - NVSwitch - GPU - leaf - GPU (tests/netmodel/test_p2p_protocol_by_size.py)
ROUTE_PXN = 0.70e-6
DATA = Path(__file__).parent / "data" / "nccl_ops_published.csv"


def simple(n: float, share: float) -> float:
    """Simple's direct all-to-all across the network by hand: 8.4 us once, a scale-out step
    of 14 us and the route, ``share`` of ``n`` out of a 400G NIC at 0.94 (47 GB/s)."""
    return 8.4e-6 + 14e-6 + ROUTE_PXN + n * share / 47e9


@pytest.mark.parametrize("n", [16 * KIB, 64 * KIB, 640 * KIB, MIB])
def test_a_peer_across_the_network_runs_simple_at_every_size(n):
    # 16 B200 of two servers: with LL buffers (NCCL_ALLOC_P2P_NET_LL_BUFFERS=1) these sizes
    # run LL up to 16 x 4 channels x 16 KiB = 1 MiB (test_p2p_protocol_by_size.py); by
    # NCCL's default every one is Simple, 8/16 of n out of each GPU's NIC
    m = FabricCostModel(build("rail-optimized:domains=2,gpu=B200-HGX"), algorithms="nccl",
                        validated=True)
    r = m.cost("all-to-all", n, 16)
    assert (r.algorithm, r.protocol) == ("direct", "Simple")
    assert r.time == pytest.approx(simple(n, 8 / 16), rel=1e-3)
    direct = m.compiled("all-to-all", "direct", m.group(16))
    assert direct.size_range("LL", m.calibration) == (0.0, 0.0)
    assert direct.size_range("Simple", m.calibration) == (0.0, float("inf"))
    # with LL buffers and NCCL 2.28's LL rule (a peer's bytes up to its 4 channels x 16
    # KiB); from 2.29 LL holds to one channel's 16 KiB a peer, 256 KiB among 16
    cal = default_calibration().with_(p2p_net_ll_buffers=True)
    net = FabricCostModel(build("rail-optimized:domains=2,gpu=B200-HGX"), algorithms="nccl",
                          validated=True, calibration=cal.with_(p2p_ll_per_channel=False))
    assert net.cost("all-to-all", n, 16).protocol == "LL"
    new = FabricCostModel(build("rail-optimized:domains=2,gpu=B200-HGX"), algorithms="nccl",
                          validated=True, calibration=cal)
    assert new.cost("all-to-all", n, 16).protocol == ("LL" if n <= 256 * KIB else "Simple")


def test_deepseek_decode_combine_has_no_step_at_576():
    # 576 and 577 sequences over 32 attention groups: 18 and 19 (18.03) tokens a GPU, each to
    # its 8 experts, 7168 bf16 values back: 2,064,384 and 2,179,072 B a GPU. Each GPU sends
    # 24/32 of them across the network (its 24 peers in other servers): 56.04 and 57.87 us
    # by hand (8.4 + 14 + 0.70 us, then 1,548,288 B and 1,634,304 B at 47 GB/s), both
    # Simple; before, 96.69 us at 576 under LL.
    times = {}
    for batch, size in ((576, 2064384.0), (577, 2179072.0)):
        r = evaluate("DeepSeek-V3", phase="decode", tp=32, ep=32, attention_dp=32,
                     batch=batch, scenario="h100-dgx")
        st = next(s for s in r.stages if s.name == "moe_combine")
        assert (st.collective, st.collective_bytes) == ("all-to-all", size)
        assert st.network_time == pytest.approx(simple(size, 24 / 32), rel=1e-3)
        times[batch] = (st.network_time, r.latency)
    assert times[576][0] * 1e6 == pytest.approx(56.04, abs=0.01)
    assert times[577][0] * 1e6 == pytest.approx(57.87, abs=0.01)
    assert times[576][1] < times[577][1]   # one more sequence no longer lowers the TBT


def test_a_file_may_give_the_network_ll_buffers(tmp_path):
    from netmodel.collectives.calibration import DEFAULTS_PATH

    assert default_calibration().p2p_net_ll_buffers is False
    src = DEFAULTS_PATH.read_text()
    assert "\nnet_ll_buffers = false\n" in src
    path = tmp_path / "cal.toml"
    path.write_text(src.replace("\nnet_ll_buffers = false\n", "\nnet_ll_buffers = true\n"))
    assert load_calibration(path).p2p_net_ll_buffers is True
    path.write_text(src.replace("\nnet_ll_buffers = false\n", "\nnet_ll_buffers = 1\n"))
    from compute.errors import UserError
    with pytest.raises(UserError, match=r"\[p2p\]\.net_ll_buffers must be true or false, got 1"):
        load_calibration(path)


def _measured(case: str, size: int) -> float:
    with DATA.open() as f:
        rows = [r for r in csv.DictReader(x for x in f if not x.startswith("#"))
                if r["case"] == case and r["op"] == "all-to-all" and int(r["bytes"]) == size]
    assert len(rows) == 1
    return float(rows[0]["busbw_GBps"])


@pytest.mark.parametrize("case, spec, p, last_ll", [
    ("b200-8-sweep", "single-switch:n=8,gpu=B200-HGX", 8, 4 * MIB),
    ("gb300-oci-a2a-1tray", "nvl72:gpu=GB300-NVL72", 4, 2 * MIB),
])
def test_inside_nvlink_the_step_at_512_kib_a_peer_is_nccls_own(case, spec, p, last_ll):
    # the last LL size, 512 KiB a peer (32 channels x 16 KiB), takes longer than twice its
    # bytes under Simple, in the measured sweep (time = size / algbw, algbw = busbw x
    # p / (p - 1)) as in the model, which keeps the step there
    def measured_time(size):
        return size / (_measured(case, size) * 1e9 * p / (p - 1))

    assert measured_time(2 * last_ll) < measured_time(last_ll)
    # at NCCL 2.28: OCI's run printed 2.28.7, Vultr's is inferred <= 2.28 by this step (the
    # data file's comments); 2.29's LL stops at 16 KiB a peer
    m = FabricCostModel(build(spec), algorithms="nccl", validated=True,
                        calibration=default_calibration().with_(nccl_release="2.28"))
    group = m.group(p)
    at, above = (m.cost("all-to-all", n, group) for n in (last_ll, last_ll + p))
    assert (at.protocol, above.protocol) == ("LL", "Simple")
    assert above.time < at.time
