"""NCCL's LL send/recv on a path slower than the flagship's: the path's channels, each at its own rate.

Under LL a send/recv channel moves its lines at its send warps' rate, a share of the ring's LL
rate (NCCL's ``llMaxBws``, the LL factor times the links' rate) over the ring's channels and
warps (netmodel/collectives/pipeline_fill.py p2p_ll_share). The model took that share of the
path's own LL rate with NCCL's 32 channels of the flagship's NVLinks: on a Lite's 37.5 GB/s mesh
link 16 channels (32 halved for 2 ranks) at a channel's rate shrunk with the link. NCCL gives a
peer two channels a whole NVLink of its path (src/graph/paths.cc ncclTopoGetNchannels: a 37.5
GB/s link is one 25 GB/s NVLink to it, so 2), and a channel's rate is its warps' and the GPU's,
which a Lite keeps (Hopper): each channel copies what it copies on the H100's 450 GB/s NVLinks.

By hand on ``lite-direct`` (2 Lites of one package, their 37.5 GB/s mesh link; Hopper LL factor
0.38, scale-up efficiency 0.824, 24 ring channels of 512 LL threads = 16 warps, a send/recv
channel of 640 threads = 20 warps, half of them, 10, sending: collective_defaults.toml,
collective_generations.toml): one channel moves 450 x 0.824 x 0.38 x 10 / (24 x 16) = 3.67
GB/s, two 7.34 GB/s, under the link's LL rate 37.5 x 0.824 x 0.38 = 11.74 GB/s; LL pays 6.6 us
once and 0.6 us a step plus the link's route latency. LL runs to 16 KiB x 2 channels = 32 KiB.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.pipeline_fill import p2p_ll_share, p2p_path_channels
from tests.netmodel.lite_direct import FLAGSHIPS, ROUTE

KIB = 2 ** 10
LL = 0.824 * 0.38                                # Hopper's scale-up efficiency x LL factor
LL_CHANNEL = 18 * 25e9 * LL * 10 / (24 * 16)     # one send/recv channel's LL rate (H100's)
LINK_LL = 37.5e9 * LL                            # the mesh link's LL rate



@pytest.mark.parametrize("n", [4 * KIB, 8 * KIB, 16 * KIB])
def test_two_lites_ll_by_hand(lite_pair, n):
    m, group = lite_pair
    r = m.cost("send-recv", n, group)
    assert (r.algorithm, r.protocol) == ("direct", "LL")
    (step,) = r.steps
    assert r.base_latency == pytest.approx(6.6e-6)
    assert step.latency == pytest.approx(0.6e-6 + ROUTE, rel=1e-9)   # a step, the route
    assert 2 * LL_CHANNEL < LINK_LL                  # two channels do not fill the link
    assert step.serialization == pytest.approx(n / (2 * LL_CHANNEL), rel=1e-9)
    # 8.889 us at 8 KiB before: 16 channels at 11.74 x 10 / 384 = 0.306 GB/s each (4.89 GB/s)
    assert r.time == pytest.approx(6.6e-6 + 0.6e-6 + ROUTE + n / (2 * LL_CHANNEL), rel=1e-9)


def test_lite_shares():
    lite = default_calibration().for_gpu("Lite")
    old = 16 * 10 / (24 * 16)                        # the path unknown: 16 channels
    assert float(p2p_ll_share(2, lite, 1)) == pytest.approx(old, rel=1e-15)
    assert float(p2p_ll_share(2, lite, 1, 37.5e9)) == pytest.approx(2 * 10 / 384 * 12,
                                                                    rel=1e-15)
    # behind a 112.5 GB/s port: 4 NVLinks to NCCL, 8 channels at ratio 4
    assert float(p2p_ll_share(2, lite, 1, 112.5e9)) == pytest.approx(8 * 10 / 384 * 4,
                                                                     rel=1e-15)
    # a 10 GB/s path: 2 channels would move 7.34 GB/s at 0.38 x 0.824 x 10 = 3.13: the path's
    assert float(p2p_ll_share(2, lite, 1, 10e9)) == 1.0


@settings(max_examples=150, deadline=None)
@given(gpu=st.sampled_from(FLAGSHIPS), p=st.integers(2, 128), peers=st.sampled_from([0, 1]),
       faster=st.floats(1.0, 8.0))
def test_flagship_shares_unchanged(gpu, p, peers, faster):
    # on a flagship's own NVLinks, or any faster path, the share is as with no path, exactly
    cal = default_calibration().for_gpu(gpu)
    old = float(p2p_ll_share(p, cal, peers))
    assert float(p2p_ll_share(p, cal, peers, cal.flagship_bandwidth * faster)) == old
    assert float(p2p_ll_share(p, cal, peers, 0.0)) == old


@settings(max_examples=150, deadline=None)
@given(path=st.floats(1e9, 449e9))
def test_lite_pair_rate_is_its_channels_at_most_the_path(path):
    # 2 Lites, any path below the flagship's (within 1e-9 of it the ratio is 1, as rates
    # summed over planes round: p2p_channel_ratio): the LL rate is min(path's LL rate, C channels x
    # one channel's flagship LL rate), C NCCL's channels for that path (two a whole NVLink)
    lite = default_calibration().for_gpu("Lite")
    c = min(16, p2p_path_channels(lite, path))       # 32 halved once for 2 ranks
    rate = float(p2p_ll_share(2, lite, 1, path)) * path * LL
    assert rate == pytest.approx(min(path * LL, c * LL_CHANNEL), rel=1e-12)


@pytest.mark.parametrize("n", [8 * KIB, 16 * KIB])
def test_concurrent_pairs_as_alone(lite_pair, n):
    # the concurrent costing reads each group's path as the collective alone does
    from netmodel.collectives.concurrent import concurrent_cost

    m, group = lite_pair
    r = concurrent_cost(m, [group, ("gpu2", "gpu3")], "send-recv", n)
    assert r.time[:, 0].tolist() == pytest.approx([m.cost("send-recv", n, group).time] * 2,
                                                  rel=1e-12)
