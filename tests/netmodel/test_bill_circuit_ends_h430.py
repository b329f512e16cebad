"""The bill prices and labels each end of each OCS circuit at its own rate.

realize gives a pair's parallel circuits one edge; where they differ (a GPU's ports
unequal, as a fabric file may give them) ``via_bandwidth`` holds each one's. The bill
labelled every end at the edge's mean rate: a Lite's ports at 37.5, 9.375 and 18.75 GB/s
to a Lite of 37.5 GB/s ports, 3 circuits of 300, 75 and 150 Gb/s, were 6 ends 'ocs-circuit
end 175 Gb/s' (the totals right: price x the edge's bits at each end). Now 2 ends of each
circuit's rate, the totals unchanged.
"""

from __future__ import annotations

import pytest

from netmodel.study.network_bill import NetworkPrices, network_bill
from topologies.common import lanes_for
from topologies.optical import ocs, realize


def _uneven():
    """2 Lites x 3 ports; gpu0's port on ocs1 a quarter of the others', on ocs2 a half."""
    g = ocs(gpus=2, ports=3, ocs_ports=2, gpu="Lite")
    for o, share in (("ocs1", 4), ("ocs2", 2)):
        d = g.edges["gpu0", o]
        d["bandwidth"] /= share
        d["lanes"] = lanes_for(d["bandwidth"])
    return realize(g, [("gpu0", "gpu1")] * 3)


def _no_cabling(g):
    """``g`` without its ``ocs_cabling`` (as realize leaves fibres of several media)."""
    g.graph.pop("ocs_cabling")
    return g


# 2 USD per Gb/s, 3 pJ a bit: hand figures for an end of r Gb/s: 2 r USD, 3e-12 r 1e9 W
PRICES = NetworkPrices(cpo_price=2e-9, cpo_energy=3e-12)


@pytest.mark.parametrize("share", ["as-built", "ports-used"])
def test_each_circuit_end_at_its_own_rate(share):
    out = _no_cabling(_uneven())
    assert out.edges["gpu0", "gpu1"]["optics"] == "co-packaged-optics"
    ends = {i.what: i for i in network_bill(out, share=share, prices=PRICES).items
            if i.category == "optics"}
    assert sorted(ends) == ["ocs-circuit end 150 Gb/s", "ocs-circuit end 300 Gb/s",
                            "ocs-circuit end 75 Gb/s"]
    for rate in (300, 75, 150):
        item = ends[f"ocs-circuit end {rate} Gb/s"]
        assert item.count == 2
        assert item.capex == pytest.approx(2 * 2 * rate)
        assert item.power == pytest.approx(2 * 3e-12 * rate * 1e9)
    # the totals as before: both ends of 525 Gb/s
    assert sum(i.capex for i in ends.values()) == pytest.approx(2 * 2 * 525)


def test_equal_circuits_keep_one_label():
    """The ocs builder's circuits are alike (no via_bandwidth): one label, as before."""
    out = _no_cabling(realize(ocs(gpus=2, ports=3, ocs_ports=2, gpu="Lite"),
                              [("gpu0", "gpu1")] * 3))
    assert "via_bandwidth" not in out.edges["gpu0", "gpu1"]
    ends = [i for i in network_bill(out, share="as-built", prices=PRICES).items
            if i.category == "optics"]
    assert [(i.what, i.count) for i in ends] == [("ocs-circuit end 300 Gb/s", 6)]
    assert ends[0].capex == pytest.approx(6 * 2 * 300)


def test_with_its_cabling_every_port_is_priced():
    """The uneven fabric with its cabling: 6 fibres, gpu0's of 300, 75 and 150 Gb/s, gpu1's 3
    x 300 Gb/s: each priced at its own rate (realize keeps the cabling's fibres, h508), 1,425
    Gb/s in all. A fabric file written before that record keeps 15 lanes (gpu0 3 + 1 + 2,
    gpu1 3 x 3; lanes of 12.5 GB/s rounded up) and no port's rate: priced at the circuits'
    rate a lane, 65.625 GB/s over their 3 + 1 + 2 lanes: 15 x 65.625 / 6 GB/s = 1,312.5
    Gb/s, 218.75 an end, and the bill says it inferred them."""
    out = _uneven()
    assert {k: v for k, v in out.graph["ocs_cabling"].items() if k != "fibres"} == {
        "medium": "co-packaged-optics", "cables": 6, "lanes": 15}
    bill = network_bill(out, share="as-built", prices=PRICES)
    ends = [i for i in bill.items if i.category == "optics"]
    assert sorted((i.what, i.count) for i in ends) == [
        ("co-packaged-optics end 150 Gb/s", 1), ("co-packaged-optics end 300 Gb/s", 4),
        ("co-packaged-optics end 75 Gb/s", 1)]
    assert sum(i.capex for i in ends) == pytest.approx(2 * 1425)
    assert bill.notes == ()
    out.graph["ocs_cabling"] = {k: v for k, v in out.graph["ocs_cabling"].items()
                                if k != "fibres"}   # an older fabric file's
    bill = network_bill(out, share="as-built", prices=PRICES)
    ends = [i for i in bill.items if i.category == "optics"]
    assert [(i.what, i.count) for i in ends] == [("co-packaged-optics end 218.75 Gb/s", 6)]
    assert ends[0].capex == pytest.approx(2 * 1312.5)
    assert len(bill.notes) == 1 and "inferred" in bill.notes[0]
