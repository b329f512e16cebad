"""NCCL's Simple send/recv inside one NVLink domain copies each chunk twice in turn (h285,
issue 11): the sender into the peer's buffer, then the peer out of it, one
NCCL_P2P_NVL_CHUNKSIZE (512 KiB) step at a time (NVIDIA/nccl src/init.cc computeBuffSizes,
src/enqueue.cc addP2pToPlan), so a channel's first chunk costs its copy time twice. A peer's
bytes are split over nChannelsMin channels (scheduleP2pTasksToPlan: p2pnChannelsPerPeer 32
halved while it times the ranks exceeds the 32 p2p channels), so C = min(32, (p - 1) x
nChannelsMin) channels run and the direct all-to-all's time gains ``b x min(n, C x 512 KiB x
p / (p - 1))``, ``b`` its seconds per byte. Every figure below is derived by hand from those
constants and the links (NVLink5: 18 x 50 GB/s a GPU at topo.h's 40.1/50 = 0.802)."""

import numpy as np
import pytest

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build

MiB = 2**20
CHUNK = 524288                      # NCCL_P2P_NVL_CHUNKSIZE
NVL5 = 18 * 50e9 * 0.802            # a Blackwell GPU's NVLink rate as NCCL's topology has it


def _models(spec, release=None):
    """The shipped model and the same without the fill (p2p_nvlink_chunk 0); ``release``:
    the NCCL release costed (None: the newest)."""
    g = build(spec)
    model = FabricCostModel(g, validated=True, algorithms="nccl",
                            calibration=default_calibration().with_(nccl_release=release))
    cal = model.calibration
    return model, FabricCostModel(g, calibration=cal.with_(p2p_nvlink_chunk=0.0),
                                  validated=True, algorithms="nccl")


@pytest.mark.parametrize("spec, p, slice_, share", [
    # 8 B200: nChannelsMin 32 -> 4 (4 x 8 = 32), 7 x 4 = 28 channels: 28 chunks x 8/7
    ("single-switch:n=8,gpu=B200-HGX", 8, 28 * CHUNK * 8 / 7, 28 / 32),
    # a GB300 tray's 4 GPUs: 8 channels a peer, 3 x 8 = 24 run: 24 chunks x 4/3 = 16 MiB
    ("nvl72:gpu=GB300-NVL72", 4, 24 * CHUNK * 4 / 3, 24 / 32),
    # 64 GPUs of a GB300 rack (an MNNVL clique): 1 channel a peer, all 32 run
    ("nvl72:gpu=GB300-NVL72", 64, 32 * CHUNK * 64 / 63, 1.0),
])
def test_the_simple_all_to_all_fills_one_chunk_a_channel(spec, p, slice_, share):
    """Up to 512 MiB the 8 B200 and the tray's 4 GPUs run on those channels, at ``share`` of
    the links' rate (28 or 24 of the 32 ring channels, one peer a channel:
    pipeline_fill.p2p_simple_channels), which the model without the chunk (no p2p steps,
    so no lines by channel) does not: the fill and the share both count there."""
    model, plain = _models(spec)
    b = (p - 1) / p / NVL5
    n = np.array([0.5, 1.0, 4.0]) * slice_
    n = np.append(n[n > p * 32 * 16384], [2.0**30, 2.0**31])   # Simple above p x 32 x 16 KiB
    t = model.sweep("all-to-all", n, p, "direct")
    t0 = plain.sweep("all-to-all", n, p, "direct")
    assert set(t.protocol) == set(t0.protocol) == {"Simple"}
    s = np.where(n <= 512 * MiB, share, 1.0)
    assert t.time - t0.time == pytest.approx(
        b / s * np.minimum(n, slice_) + b * n * (1 / s - 1), rel=1e-9)
    # past the slice the time grows at the links' rate: b a byte, not 2 b
    assert (t.time[-1] - t.time[-2]) / (n[-1] - n[-2]) == pytest.approx(b, rel=1e-9)


def test_ll_and_steps_across_the_network_do_not_fill():
    """LL moves flagged lines the peer reads as they land (no chunk held back); a step
    crossing the scale-out network (NET chunk, the proxy's own pipeline) is not this rule."""
    # NCCL 2.28: LL up to 8 x 32 x 16 KiB (2.29 on: 8 x 16 KiB)
    model, plain = _models("single-switch:n=8,gpu=B200-HGX", "2.28")
    n = np.array([64e3, 1 * MiB, 4 * MiB])   # at most 8 x 32 x 16 KiB: LL
    t, t0 = (m.sweep("all-to-all", n, 8, "direct") for m in (model, plain))
    assert set(t.protocol) == {"LL"} and np.array_equal(t.time, t0.time)
    model, plain = _models("rail-optimized:domains=2")
    n = np.array([16 * MiB, 2.0**30])
    t, t0 = (m.sweep("all-to-all", n, 16, "direct") for m in (model, plain))
    assert np.array_equal(t.time, t0.time)


def test_the_vultr_8xb200_simple_sizes_come_within_the_mid_range_target():
    """Measured busbw (tests/netmodel/data/nccl_ops_published.csv, b200-8-sweep): 212.00
    and 286.16 GB/s at 8 and 16 MiB; the model was +56% and +59% without the fill.
    By hand: t = a + 2 b n (n <= 16 MiB, the slice), a = 11.97 us (below), b = (7/8) /
    (28/32 x 721.8 GB/s), the 28 channels that carry a peer each (test_alltoall_simple_
    channels_h547.py): 35.2 and 58.4 us, busbw (7/8) n / t = 208.4 and 251.1 GB/s (227.2
    and 278.8 at the links' rate)."""
    model, _ = _models("single-switch:n=8,gpu=B200-HGX")
    n = np.array([8 * MiB, 16 * MiB])
    sw = model.sweep("all-to-all", n, 8)
    busbw = 7 / 8 * n / sw.time / 1e9
    b = 7 / 8 / (28 / 32 * NVL5)
    # a: the send/recv all-to-all is one step, paid as NCCL's Simple ring row pays it
    # (netmodel/data/collective_defaults.toml [protocols.Simple]): base_latency 8.4 us +
    # step_latency_scaleup 3.4 us (one step on NVLink) + the longest route, GPU -> NVSwitch
    # -> GPU: two 10 ns board links and the switch's 150 ns = 0.17 us; 8.4 + 3.4 + 0.17 =
    # 11.97 us
    simple = next(p for p in model.calibration.protocols if p.name == "Simple")
    assert (simple.base_latency, simple.step_latency_scaleup) == (8.4e-6, 3.4e-6)
    g = model.graph
    route = 2 * g.edges["gpu0", "nvs0"]["latency"] + g.nodes["nvs0"]["latency"]
    assert route == pytest.approx(0.17e-6, rel=1e-12)
    a = simple.base_latency + simple.step_latency_scaleup + route
    assert a == pytest.approx(11.97e-6, rel=1e-12)
    assert sw.time == pytest.approx(a + 2 * b * n, rel=1e-9)
    assert busbw == pytest.approx([208.4, 251.1], abs=0.1)
    assert abs(busbw / np.array([212.00, 286.16]) - 1).max() < 0.25


def test_the_h100_maintainer_point_stays():
    """8 x H100 all-to-all at 8 GiB: a maintainer's 370 GB/s; the fill adds b x 16 MiB to
    10.6 ms (0.2%): 370.6 -> 369.8 GB/s."""
    model, plain = _models("single-switch:n=8,gpu=H100-SXM")
    n = 8.0 * 2**30
    t, t0 = (m.sweep("all-to-all", [n], 8).time[0] for m in (model, plain))
    b = 7 / 8 / (18 * 25e9 * 0.824)
    assert t - t0 == pytest.approx(b * 16 * MiB, rel=1e-6)
    assert 7 / 8 * n / t / 1e9 == pytest.approx(370, rel=0.01)


def test_a_calibration_file_refuses_a_negative_chunk(tmp_path):
    from compute.errors import UserError
    from netmodel.collectives.calibration import DEFAULTS_PATH
    from netmodel.collectives.calibration_files import load_calibration

    text = DEFAULTS_PATH.read_text().replace("nvlink_chunk = 524288", "nvlink_chunk = -1")
    assert "nvlink_chunk = -1" in text
    path = tmp_path / "cal.toml"
    path.write_text(text)
    with pytest.raises(UserError, match="p2p_nvlink_chunk"):
        load_calibration(path)
