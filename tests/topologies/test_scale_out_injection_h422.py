"""Scale-out injection per GPU where GPUs of a server share its NICs (rail_optimized's
``nics_per_server``): the server's NIC bandwidth over its GPUs, by hand. The injection
figure itself stays the smallest GPU's own links (a GPU without a NIC: its NVLinks)."""
import pytest

from topologies import build
from topologies.analysis import scale_out_share, summary


@pytest.mark.parametrize(("spec", "share"), [
    # 8 GPUs a server, NICs of 50 GB/s (H100's default): nics x 50 / 8
    ("rail-optimized:domains=2,nics_per_server=4", 4 * 50e9 / 8),    # 25 GB/s
    ("rail-optimized:domains=2,nics_per_server=2", 2 * 50e9 / 8),    # 12.5
    ("rail-optimized:domains=2,nics_per_server=1", 1 * 50e9 / 8),    # 6.25
    ("rail-optimized:domains=3,nics_per_server=4,nic_bandwidth=25GB/s", 4 * 25e9 / 8),
    # 4 GPUs a server, one NIC: 50 / 4
    ("rail-optimized:domains=2,domain_size=4,gpus_per_server=4,nics_per_server=1", 50e9 / 4),
])
def test_nic_share_per_gpu_by_hand(spec, share):
    g = build(spec)
    assert scale_out_share(g) == pytest.approx(share, rel=1e-12)
    s = summary(g)
    assert s.scale_out_share == pytest.approx(share, rel=1e-12)
    assert s.to_dict()["scale_out_share"] == pytest.approx(share, rel=1e-12)
    # the injection figure is still the smallest GPU's own links: a NIC-less GPU's NVLinks
    assert s.injection_bandwidth == 450e9
    assert s.injection_by_peer == {"switch tier 0": 450e9}


@pytest.mark.parametrize("spec", ["rail-optimized:domains=2", "rail-optimized:domains=2,"
                                  "nics_per_server=8", "superpod", "nvl72:racks=2",
                                  "leaf-spine:leaves=2,radix=4,gpu=Lite", "fat-tree:k=4"])
def test_a_nic_a_gpu_says_nothing_new(spec):
    """A NIC a GPU: its own links already are its scale-out share; no key, no field."""
    s = summary(build(spec))
    assert s.scale_out_share is None and "scale_out_share" not in s.to_dict()


def test_a_lost_nic_lowers_its_servers_share():
    """4 NICs, gpu0's NIC link cut: server 0 has 3 x 50 GB/s for 8 GPUs (18.75 GB/s), the
    smallest; 8 NICs, one cut: the server's GPUs share 7 x 50 (43.75 GB/s)."""
    g = build("rail-optimized:domains=2,nics_per_server=4")
    g.remove_edge("gpu0", "leaf0")
    assert scale_out_share(g) == pytest.approx(3 * 50e9 / 8)
    g = build("rail-optimized:domains=2")
    g.remove_edge("gpu0", "leaf0")
    assert scale_out_share(g) == pytest.approx(7 * 50e9 / 8)
