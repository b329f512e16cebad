"""Spec strings and the registry."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build, builders, fat_tree, get_builder, parse_spec


def test_issue_examples():
    g = build("fat-tree:k=8,oversubscription=2,gpu=Lite")
    assert g.graph["gpus"] == 128 and g.nodes["gpu0"]["gpu"] == "Lite"
    assert g.edges["gpu0", "leaf0"]["bandwidth"] == 400e9 / 8 / 4  # a quarter of a 400G NIC
    o = build("ocs:gpus=32,ports=4")
    assert o.graph["gpus"] == 32 and sum(1 for n in o if n.startswith("ocs")) == 4


def test_units_and_types_are_converted():
    g = build("single-switch:n=4,bandwidth=400Gb/s,latency=0.1us,in_network_reduction=no")
    assert g.edges["gpu0", "nvs0"]["bandwidth"] == 50e9
    assert g.nodes["nvs0"]["latency"] == pytest.approx(1e-7)
    assert g.nodes["nvs0"]["in_network_reduction"] is False
    assert build("leaf-spine:spines=auto").graph["gpus"] == 16


def test_bracketed_nested_spec():
    name, params = parse_spec("lite-groups:base=[fat-tree:k=4,gpu=H200-SXM], lites=2")
    assert name == "lite-groups"
    assert params == {"base": "fat-tree:k=4,gpu=H200-SXM", "lites": "2"}
    assert build("lite-groups:base=[fat-tree:k=4,gpu=H200-SXM],lites=2").graph["gpus"] == 32


@pytest.mark.parametrize("spec, message", [
    ("fat-tre:k=4", "unknown fabric builder 'fat-tre'; known: .*'fat-tree'.*'torus'"),
    ("fat-tree:q=4", "unknown key 'q' for fabric 'fat-tree'; known: .*'k'.*'oversubscription'"),
    ("fat-tree:k=four", "fat-tree: k must be an integer, got 'four'"),
    ("fat-tree:k", "must be KEY=VALUE"),
    ("fat-tree:k=4,k=6", "given twice"),
    ("ring:bandwidth=-5GB/s", "must be a finite number > 0"),
    ("ring:bandwidth=nan", "must be a finite number > 0"),
    ("ring:bandwidth=5 parsecs", "unknown unit"),
    # beyond a physical ceiling: a unit slip, not hardware
    ("flat:latency=1e300s", r"flat: latency 1e\+300 s, outside the 0 to 1 ms allowed"),
    ("flat:latency=1.5s", "latency 1.5 s, outside the 0 to 1 ms"),
    ("fat-tree:k=4,bandwidth=2PB/s", "bandwidth 2 PB/s, outside the 125 kB/s to 1 PB/s"),
    ("ring:n=4,length=1e9", "length must be at most 100000 m"),
    ("ocs:reconfiguration_time=7200s", "reconfiguration_time must be at most 3600 s"),
    ("rail-optimized:nic_bandwidth=1e20", "nic_bandwidth 1e\\+05 PB/s, outside"),
    ("lite-groups:base=[ring", "unmatched"),
    ("", "non-empty string"),
])
def test_bad_specs(spec, message):
    with pytest.raises(UserError, match=message):
        build(spec)


def test_registry_lists_every_builder_with_defaults():
    infos = {b.name: b for b in builders()}
    assert {"ring", "full-mesh", "torus", "lite-groups", "single-switch", "flat", "leaf-spine",
            "fat-tree", "rail-optimized", "superpod", "nvl72", "ocs"} <= set(infos)
    ft = {p.name: p for p in infos["fat-tree"].params}
    assert ft["k"].default == 4 and ft["k"].type == "int"
    assert ft["bandwidth"].default is None and ft["bandwidth"].unit == "bytes/s"
    assert ft["pods"].type == "int | None"
    assert infos["fat-tree"].summary.startswith("Three-tier k-ary fat tree")
    assert get_builder("Fat_Tree") is fat_tree


def test_a_parameter_tables_keys_take_dashes_as_a_spec_strings_do():
    """build(name, {...}) (netmodel.build_fabric's) refused the keys a spec string takes
    since 6dadaf0 (unknown key 'in-network-reduction'): one normalisation now reads both."""
    plain = build("single-switch", {"n": 2, "in_network_reduction": False})
    for params in ({"n": 2, "in-network-reduction": False},
                   {"N": 2, "In-Network-Reduction": "false"}):
        g = build("single-switch", params)
        assert g.nodes["nvs0"]["in_network_reduction"] is False
        assert g.graph["args"] == plain.graph["args"] == {"n": 2, "in_network_reduction": False}
        assert g.graph["spec"] == plain.graph["spec"]
    assert build(("single-switch", {"n": 2, "in-network-reduction": False})).graph["args"] == \
        plain.graph["args"]
    with pytest.raises(UserError, match=r"^key 'in_network_reduction' of fabric "
                                        r"'single-switch' is given twice: as "
                                        r"'in-network-reduction' and 'in_network_reduction'$"):
        build("single-switch", {"in-network-reduction": True, "in_network_reduction": False})
    with pytest.raises(UserError, match=r"unknown key 'no-such-key' for fabric"):
        build("single-switch", {"no-such-key": 1})


def test_keys_take_dashes_for_underscores_as_fabrics_md_says():
    """fabrics.md: "names are case-insensitive and `_` may be written `-`"; a key spelled
    with dashes (as click spells options) was refused: unknown key 'in-network-reduction'."""
    dashed = build("single-switch:n=2,In-Network-Reduction=false")
    assert dashed.nodes["nvs0"]["in_network_reduction"] is False
    assert dashed.graph["args"] == build("single-switch:n=2,in_network_reduction=false").graph["args"]
    assert parse_spec("rail_optimized:gpus-per-server=4")[1] == {"gpus_per_server": "4"}
    with pytest.raises(UserError, match="given twice"):
        parse_spec("single-switch:in_network_reduction=true,in-network-reduction=false")
