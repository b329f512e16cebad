"""rail_optimized's ``nics_per_server`` where it builds no NIC (one domain: no scale-out
network) and where it builds fewer NICs than GPUs: hand-derived counts and cuts."""
import itertools

import pytest

from compute.errors import UserError
from topologies import build
from topologies.analysis import _exact_diameter, bisection_maxflow, summary
from topologies.astra_sim import astra_sim_network
from topologies.closed_forms import closed_form
from topologies.hierarchical import rail_optimized
from topologies.schema import gpu_nodes


def test_one_domain_ignores_its_nic_count():
    """One domain builds no leaf, spine or NIC, so nics_per_server changes nothing: the
    same ASTRA-sim network (before: refused as 'fewer NICs than GPUs a server') and the
    same closed form, diameter 2 and bisection 4 x 450 GB/s (before: none)."""
    one = build("rail-optimized:domains=1")
    four = build("rail-optimized:domains=1,nics_per_server=4")
    assert astra_sim_network(four) == astra_sim_network(one)
    cf = closed_form(four)
    assert cf is not None and (cf.diameter, cf.bisection) == (2, 4 * 450e9)


def test_two_domains_with_fewer_nics_still_refused():
    with pytest.raises(UserError, match="nics_per_server 4"):
        astra_sim_network(build("rail-optimized:domains=2,nics_per_server=4"))


@pytest.mark.parametrize("nics", [1, 2, 4])
def test_cuts_and_counts_follow_the_nics(nics):
    """4 servers of 8 H100, nics NICs of 50 GB/s each: half the servers send through
    2 x nics NICs (bisection 2 x nics x 50 GB/s); 4 x nics NIC cables and 2 x nics
    leaves' 32 uplinks each (leaf_radix 64), 2 transceivers a cable; the farthest pair,
    two GPUs without a NIC in servers under one leaf, 6 hops (gpu-nvs-gpu-leaf-gpu-nvs-gpu)."""
    g = build(f"rail-optimized:domains=4,nics_per_server={nics}")
    s = summary(g)
    assert s.bisection_bandwidth == pytest.approx(2 * nics * 50e9)
    leaves = sum(1 for n in g if n.startswith("leaf"))
    assert leaves == nics
    nic_cables = sum(1 for u, v in g.edges if {u[:3], v[:3]} == {"gpu", "lea"})
    assert nic_cables == 4 * nics
    assert s.diameter == 6


@pytest.mark.parametrize("bad", [0, -1, 16, 3, float("nan"), 2.5, "x", True])
def test_bad_nic_counts_refused_by_name(bad):
    with pytest.raises(UserError, match=r"^nics_per_server"):
        rail_optimized(domains=2, nics_per_server=bad)


def test_a_non_divisor_is_told_the_divisors():
    """16 NICs for 8 GPUs (more NICs than GPUs) is told what it may be (before: only
    'must divide gpus_per_server 8')."""
    with pytest.raises(UserError, match=r"must divide gpus_per_server 8: one of 1, 2, 4, 8$"):
        rail_optimized(domains=2, nics_per_server=16)


def _grid():
    for domains, (size, gps), nics, per_leaf in itertools.product(
            (2, 3, 4, 6), ((8, 8), (24, 8), (8, 4)), (1, 2, 4), (1, 2, 3)):
        sus = -(-(domains * size // gps) // per_leaf)
        if nics < gps and sus * nics <= 64:   # one spine tier of 64-port spines
            yield (f"rail-optimized:domains={domains},domain_size={size},"
                   f"gpus_per_server={gps},nics_per_server={nics},servers_per_leaf={per_leaf}")


def test_closed_form_equals_the_exact_search():
    """With fewer NICs than GPUs the closed form (diameter 6 or 8: two NIC-less GPUs'
    domains sharing a scalable unit or not, a domain of 3 servers reaching into the next
    unit; bisection n / 2 / stride NICs for an even number of domains) equals the
    all-pairs breadth-first search and the max-flow on every case of the grid (before:
    no closed form, 4.4 s for topology show at 1,024 GPUs, a lower bound and no
    bisection at 16,384)."""
    for spec in _grid():
        g = build(spec)
        cf = closed_form(g)
        gpus = gpu_nodes(g)
        assert cf is not None, spec
        assert cf.diameter == _exact_diameter(g, gpus, gpus), spec
        if cf.bisection is not None:
            assert cf.bisection == pytest.approx(bisection_maxflow(g), rel=1e-12), spec


def test_closed_form_at_scale():
    """16,384 H100 (2,048 servers, 4 NICs each, 16 units of 128 servers): half the
    servers' 4,096 NICs x 50 GB/s = 204.8 TB/s; two NIC-less GPUs in servers of units
    apart, gpu - nvs - gpu - leaf - spine - leaf - gpu - nvs - gpu, 8 hops."""
    g = build("rail-optimized:domains=2048,leaf_radix=256,spine_radix=256,"
              "servers_per_leaf=128,nics_per_server=4")
    cf = closed_form(g)
    assert cf is not None and cf.diameter == 8
    assert cf.bisection == pytest.approx(1024 * 4 * 50e9, rel=1e-12)
