"""A server with fewer scale-out NICs than GPUs (rail_optimized's ``nics_per_server``):
every NIC carries its share of the server's traffic, hand-derived times."""
import pytest

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from topologies import build

GIB = 2**30


@pytest.mark.parametrize("nics", [2, 4])
def test_nic_less_gpus_share_their_own_nic(nics):
    """GPU i of a server with a NIC every stride = 8 / nics GPUs reaches the network
    through GPU stride * (i // stride)'s NIC (the builder's grouping), not all through
    the server's first NIC."""
    g = build(f"rail-optimized:domains=2,nics_per_server={nics}")
    r = Router(g)
    stride = 8 // nics
    for i in range(8):
        names = [r.link_name(x) for x in r.route(f"gpu{i}", "gpu8").links]
        lender = f"gpu{stride * (i // stride)}"
        assert any(a == lender and b.startswith("leaf") for a, b in names), (i, names)


@pytest.mark.parametrize(("servers", "nics"), [(2, 1), (2, 2), (2, 4), (2, 8), (4, 2),
                                               (4, 4)])
def test_all_to_all_charges_each_nic_its_share(servers, nics):
    """Direct all-to-all of S = 1 GiB a rank over every GPU: a GPU sends S (P - 8) / P
    out of its server, the server 8 times that through its nics x 50 GB/s NICs; the
    ideal calibration (no efficiency, no latency but the links') makes the time that
    over the NICs, equal for every NIC count (before: 2 and 4 NICs 1.75x and 2.5x it,
    every NIC-less GPU through the server's first NIC)."""
    p = 8 * servers
    g = build(f"rail-optimized:domains={servers},nics_per_server={nics}")
    m = FabricCostModel(g, algorithm="direct", calibration=Calibration.ideal(),
                        validated=True)
    t = m.cost("all-to-all", GIB, p).time
    hand = 8 * GIB * (p - 8) / p / (nics * 50e9)
    assert t == pytest.approx(hand, rel=2e-3)
