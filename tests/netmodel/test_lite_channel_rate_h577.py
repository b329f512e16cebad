"""A send/recv channel copies at its GPU generation's per-channel rate, however slow the path.

NCCL's Simple send-recv inside one NVLink domain runs ``C`` channels (CTAs). The model gave each
channel the path's rate over the generation's ring channels (NCCL's tuner: busBw = nChannels x
bwIntra), which is right on the flagship's NVLinks (H100: 18 x 25 GB/s x 0.824 / 24 = 15.45
GB/s a channel) but on a Lite's 37.5 GB/s mesh link gave a channel 37.5 x 0.824 / 24 = 1.29
GB/s: a 64 KiB send-recv between two Lites took 62.72 us (1.04 GB/s). A CTA's copy rate is its
SMs' and clock's, which a Lite keeps (an H100 derivative, Hopper's generation), so a channel
moves 15.45 GB/s there too and ``C`` of them ``min(path, C x 15.45 GB/s)``
(netmodel/collectives/pipeline_fill.py p2p_channel_ratio, p2p_simple_channels).

By hand on ``lite-direct`` (2 Lites of one package, their 37.5 GB/s mesh link): Simple pays
8.4 us once and 3.4 us a step plus the link's route latency (collective_defaults.toml); a
peer's bytes go on ``ceil(n / 64 KiB)`` channels (minPartSize = 512 KiB chunk / 8) up to 16:
one channel at 64 KiB, 15.45 GB/s (half the link's 30.9 GB/s); 16 at 1 MiB, the link's 30.9.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.pipeline_fill import p2p_simple_channels
from tests.netmodel.lite_direct import FLAGSHIPS, ROUTE

KIB, MIB = 2 ** 10, 2 ** 20
LINK = 37.5e9 * 0.824                 # the mesh link's Simple rate
CHANNEL = 18 * 25e9 * 0.824 / 24      # an H100's NVLinks at Hopper's efficiency over 24 channels



@pytest.mark.parametrize("n, rate", [(64 * KIB, CHANNEL), (1 * MIB, LINK)])
def test_two_lites_send_recv_by_hand(lite_pair, n, rate):
    m, group = lite_pair
    r = m.cost("send-recv", n, group)
    assert (r.algorithm, r.protocol) == ("direct", "Simple")
    (step,) = r.steps
    assert r.base_latency == pytest.approx(8.4e-6)
    assert step.latency == pytest.approx(3.4e-6 + ROUTE, rel=1e-9)   # a step, the route
    assert step.serialization == pytest.approx(n / rate, rel=1e-9)
    # 62.72 us at 64 KiB and 1 MiB before (1.29 GB/s a channel: 1 channel, then 16 of 24)
    assert r.time == pytest.approx(8.4e-6 + 3.4e-6 + ROUTE + n / rate, rel=1e-9)


def _old(p, cal, peers):
    """The rule before: a channel at the path's rate over the ring channels (path unknown)."""
    return p2p_simple_channels(p, cal, peers)


@settings(max_examples=150, deadline=None)
@given(gpu=st.sampled_from(FLAGSHIPS), p=st.integers(2, 128), peers=st.sampled_from([0, 1]),
       faster=st.floats(1.0, 8.0))
def test_flagship_lines_unchanged(gpu, p, peers, faster):
    # on a flagship's own NVLinks, or any faster path, the shares are C / ring_channels
    cal = default_calibration().for_gpu(gpu)
    new = p2p_simple_channels(p, cal, peers, cal.flagship_bandwidth * faster)
    assert new == _old(p, cal, peers)
    assert all(s == 1.0 or (s * cal.ring_channels).is_integer() for s, _, _ in new)


@settings(max_examples=200, deadline=None)
@given(gpu=st.sampled_from((*FLAGSHIPS, "Lite")), p=st.integers(2, 64),
       peers=st.sampled_from([0, 1]), path=st.floats(1e9, 2e12),
       n=st.floats(1.0, 2.0 ** 34))
def test_time_never_exceeds_the_old(gpu, p, peers, path, n):
    # at every size the share is at least the old one, and at most 1
    cal = default_calibration().for_gpu(gpu)

    def share(lines):
        return next((s for s, lo, hi in lines if lo < n <= hi), 1.0)

    old, new = share(_old(p, cal, peers)), share(p2p_simple_channels(p, cal, peers, path))
    assert old <= new <= 1.0
    if path >= cal.flagship_bandwidth:
        assert new == old


def test_slower_path_same_channels_faster_copy():
    # 2 Lites on the 37.5 GB/s mesh: 1 channel at half the link to 64 KiB, the link above
    lite = default_calibration().for_gpu("Lite")
    assert lite.flagship_bandwidth == 18 * 25e9
    assert [(s, lo / KIB, hi / KIB) for s, lo, hi in p2p_simple_channels(2, lite, 1, 37.5e9)] \
        == [(0.5, 0.0, 64.0), (1.0, 64.0, float("inf"))]
    # the same pair as before: 1 / 24 of the link per channel, 16 channels to 16 MiB
    assert p2p_simple_channels(2, lite, 1)[0] == (1 / 24, 0.0, 64 * KIB)


@pytest.mark.parametrize("n", [64 * KIB, MIB])
def test_concurrent_pairs_as_alone(lite_pair, n):
    # the concurrent costing reads each group's path as the collective alone does: the
    # package partners (gpu0, gpu1) and (gpu2, gpu3) on their own mesh links, at once
    from netmodel.collectives.concurrent import concurrent_cost

    m, group = lite_pair
    other = ("gpu2", "gpu3")
    r = concurrent_cost(m, [group, other], "send-recv", n)
    assert r.time[:, 0].tolist() == pytest.approx([m.cost("send-recv", n, group).time] * 2,
                                                  rel=1e-12)
