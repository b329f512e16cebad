"""A scale-up switch reduces in the switch (NVLS) by default only where the GPU's
generation can (GpuSpec.scaleup_reduction): an A100 NVSwitch system's all-reduce is a ring
at ~230 GB/s busbw, not NVLS at ~310."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu
from topologies import build
from topologies.io import read_graph, write_graph


@pytest.mark.parametrize("spec, expected", [
    ("single-switch:n=8", True),
    ("single-switch:n=8,gpu=A100-SXM-80GB", False),
    ("single-switch:n=8,gpu=A100-SXM-80GB,in_network_reduction=true", True),
    ("single-switch:n=8,gpu=H200-SXM,in_network_reduction=false", False),
    ("rail-optimized:domains=2,gpu=A100-SXM-80GB", False),
    ("superpod:gpu=A100-SXM-80GB", False),
    ("superpod", True),
    ("nvl72", True),
])
def test_domain_switch_reduction_follows_the_gpu_unless_given(spec, expected):
    g = build(spec)
    domain = [d for _, d in g.nodes(data=True) if d["kind"] == "switch" and d["tier"] == 0]
    assert domain and all(d["in_network_reduction"] is expected for d in domain)


def test_packet_switches_keep_their_own_default():
    """Scale-out switches (flat planes, leaves, spines) never reduce unless asked, whatever
    the GPU (SHARP is a switch feature, not a GPU one)."""
    for spec in ("flat:n=16,planes=2,radix=16", "leaf-spine:leaves=2,radix=8",
                 "rail-optimized:domains=2"):
        g = build(spec)
        assert not any(d.get("in_network_reduction") for _, d in g.nodes(data=True)
                       if d["kind"] == "switch" and d["tier"] >= 1)


def test_python_api_refuses_a_non_boolean():
    from topologies.switched import single_switch

    with pytest.raises(UserError, match="in_network_reduction must be true or false"):
        single_switch(4, in_network_reduction="yes")


def test_a_saved_fabric_without_the_field_still_reads(tmp_path):
    """Fabric files written before the field existed lack it in gpu_types: they read with
    the GpuSpec default (true)."""
    from topologies.switched import single_switch

    mine = derive_gpu(get_gpu("H100-SXM"), "Mine", fraction=0.5)   # not in the catalog
    path = tmp_path / "f.json"
    write_graph(single_switch(4, mine), path)
    doc = json.loads(path.read_text())
    types = doc["graph"]["gpu_types"]
    assert types["Mine"].pop("scaleup_reduction") is True
    path.write_text(json.dumps(doc))
    g = read_graph(path)
    assert g.graph["gpu_types"]["Mine"] == mine
    types["Mine"]["scaleup_reduction"] = "no"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="scaleup_reduction must be true or false"):
        read_graph(path)
