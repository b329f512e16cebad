"""The NICs of a fabric are one fact (topologies.nics.nic_share): the failure domains'
``nic`` parts and the bill's NICs' worth count the same NICs. lite-direct's four Lites
share their H100's NIC (a breakout of its 400G cable): 32 NICs for 128 Lites, not 128."""

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from topologies import build
from topologies.failure_domains import components
from topologies.nics import nic_ports

SPECS = ["rail-optimized:domains=2", "rail-optimized:domains=2,nics_per_server=4",
         "leaf-spine:leaves=2,radix=4", "fat-tree:k=4",
         "lite-groups:base=[rail-optimized:domains=4],lites=4",
         "lite-groups:base=[fat-tree:k=4],lites=2",
         "lite-groups:base=[rail-optimized:domains=2],lites=4,split=gateway"]


@pytest.mark.parametrize("spec", SPECS)
def test_failure_domain_nics_are_the_bills(spec):
    g = build(spec)
    nics = components(g, classes=["nic"])["nic"]
    assert sum(c.parts for c in nics) == pytest.approx(sum(c for _, _, c in nic_ports(g)))


def test_lite_direct_shares_one_nic_per_h100():
    g = build("lite-groups:base=[rail-optimized:domains=4],lites=4")
    nics = components(g, classes=["nic"])["nic"]
    # 4 H100 domains x 8 = 32 H100 NICs; each Lite rides a quarter of one 400G cable
    assert len(nics) == 32 and sum(c.parts for c in nics) == 32
    # one NIC failing takes the scale-out link of every Lite of its group
    assert all(len(c.edges) == 4 for c in nics)


def _json(*args):
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_blast_radius_and_cost_count_32_nics():
    rows = _json("blast-radius", "--scenario", "lite-direct", "--model", "Llama-3-70B",
                 "--json", "--no-plot")["rows"]
    nic, = [r for r in rows if r["cls"] == "nic"]
    assert nic["count"] == 32                                   # was 128
    # 32 NICs x 3.3e-7 /h x 8,766 h/yr (the catalog's NIC rate)
    assert nic["events_per_year"] == pytest.approx(32 * nic["rate_per_hour"] * 8766, rel=1e-9)
    cost = _json("cost", "--scenario", "lite-direct", "--model", "Llama-3-70B", "--phase",
                 "decode", "--json")["summaries"][0]
    # 32 NICs' worth of a 400G ConnectX-7 at $1,599 (compute/data/economics.toml)
    assert cost["nics"]["capex_usd"] == pytest.approx(32 * 1599)
