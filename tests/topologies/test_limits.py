"""Requests too large for the machine are refused before anything is allocated, with the
estimate, the limit and how to proceed; the limits are settable."""

from __future__ import annotations

import time

import pytest

from compute.errors import UserError
from topologies import build
from topologies.limits import DEFAULTS, ENV, MAX_RADIX, check_size, max_edges, max_nodes

# (spec, estimated nodes, estimated edges) past the default limits, each estimate derived by
# hand from the builder's shape
HUGE = [
    ("ring:n=3000000", "3,000,000", "3,000,000"),
    ("full-mesh:n=5000", "5,000", "12,497,500"),          # n(n-1)/2
    ("torus:dims=200x200x200", "8,000,000", "24,000,000"),  # n nodes, 3 ports pairs each
    ("single-switch:n=2500000", None, None),  # its switch would pass the radix limit
    ("flat:n=1000000,planes=16,radix=1000000", "1,000,016", "16,000,000"),
    # 4000 leaves of 2000 GPUs + 2000 spines; each leaf has 2000 GPU and 2000 spine edges
    ("leaf-spine:leaves=4000,radix=4000", "8,006,000", "16,000,000"),
    # k=256: 256^3/4 GPUs + 256 pods x (128 leaves + 128 spines) + 128^2 cores
    ("fat-tree:k=256", "4,276,224", "12,582,912"),
    ("superpod:sus=20000", None, None),
    ("nvl72:racks=40000", None, None),
    ("ocs:gpus=100000,ports=200,ocs_ports=100000", "100,200", "20,000,000"),
    # 8192 big GPUs as 64 Lites each: 9472 - 8192 + 8192 * 64 nodes; 2016 mesh edges per
    # group and the base's 24,576 edges 64 times over (even split)
    ("lite-groups:base=[fat-tree:k=32],lites=64", "525,568", "18,087,936"),
]


@pytest.mark.parametrize("spec, nodes, edges", HUGE)
def test_huge_fabrics_are_refused_quickly(spec, nodes, edges):
    t0 = time.process_time()
    with pytest.raises(UserError) as info:
        build(spec)
    assert time.process_time() - t0 < 5  # refused from the estimate, nothing built
    text = str(info.value)
    if "radix" in text and "must be an integer in" in text:
        assert f"{MAX_RADIX:,}" in text
        return
    if spec.startswith("superpod"):   # one spine tier holds 8 SUs at most, whatever the size
        assert "sus must be at most 8, got 20000" in text
        return
    assert "the fabric would have about" in text and "over the limit of 2,000,000 nodes and " \
        "10,000,000 edges" in text and "NETMODEL_MAX_FABRIC_NODES" in text
    if nodes:
        assert f"about {nodes} nodes and {edges} edges" in text


def test_limits_are_settable_by_environment(monkeypatch):
    assert (max_nodes(), max_edges()) == (DEFAULTS["nodes"], DEFAULTS["edges"])
    monkeypatch.setenv(ENV["nodes"], "100")
    with pytest.raises(UserError, match="ring: the fabric would have about 101 nodes and 101 "
                                        "edges, over the limit of 100 nodes"):
        build("ring:n=101")
    assert build("ring:n=100").graph["gpus"] == 100
    monkeypatch.setenv(ENV["nodes"], "10000000")   # digits as every number: no "_"
    monkeypatch.setenv(ENV["edges"], "3e7")
    check_size("x", 8_000_000, 24_000_000)  # the torus above now fits
    monkeypatch.setenv(ENV["edges"], "lots")
    with pytest.raises(UserError, match="environment variable NETMODEL_MAX_FABRIC_EDGES='lots' "
                                        "must be a whole number from 1 to 1e30"):
        max_edges()
    monkeypatch.setenv(ENV["edges"], "-5")
    with pytest.raises(UserError, match="must be a whole number from 1 to 1e30"):
        build("ring")


def test_huge_integers_never_crash():
    digits = "9" * 4000  # Python converts up to 4300 digits
    for spec in (f"ring:n={digits}", f"fat-tree:k={digits}0", f"torus:dims={digits}x2",
                 f"ring:bandwidth={digits}", f"ring:length={digits}"):
        with pytest.raises(UserError) as info:
            build(spec)
        assert len(str(info.value)) < 400, spec
    with pytest.raises(UserError, match="must be an integer, got '99999"):
        build("ring:n=" + "9" * 5000)  # past Python's conversion limit
    with pytest.raises(UserError, match=r"about 10\^\d+ nodes"):
        build("torus", {"dims": [10**40, 10**40]})
