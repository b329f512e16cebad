"""A GPU with no NIC of its own (``scaleout_Gbps = 0``, ``scaleout_bandwidth = 0``): used
within one scale-up domain, its scale-out bandwidth enters no roofline. d383f12 held a
hand-built GpuSpec to the GPU file's ranges, which had no 0 for it, so such a GPU
(evaluated fine before) was refused at construction; the file never took it. Now 0 means
none, as for ``fp8_dense_TFLOPs``, and a builder that would default a link to it asks for
the bandwidth in one line."""

from __future__ import annotations

from dataclasses import replace

import pytest

import netmodel
import topologies
from compute.errors import UserError
from compute.hardware import get_gpu, load_gpu_file
from netmodel.study.fabric_table import parse_gpu_token

H100 = get_gpu("H100-SXM")


def _no_nic():
    return replace(H100, name="NoNic", scaleout_bandwidth=0.0)


def test_a_gpuspec_with_no_scaleout_is_taken_and_costs_as_with_one():
    g = _no_nic()
    assert g.scaleout_bandwidth == 0.0
    # TP 4 inside the NVLink domain: the step reads the scale-up bandwidth only
    alone = netmodel.evaluate("Llama-3-70B", g, "decode", tp=4, batch=16)
    with_nic = netmodel.evaluate("Llama-3-70B", H100, "decode", tp=4, batch=16)
    assert alone.latency == with_nic.latency > 0


def test_a_gpu_file_entry_with_scaleout_gbps_0_loads(tmp_path):
    path = tmp_path / "gpus.toml"
    path.write_text('[gpu.NoNic]\nsms = 132\nbf16_dense_TFLOPs = 989\nfp8_dense_TFLOPs = 1979\n'
                    'hbm_capacity_GB = 80\nhbm_bandwidth_TBps = 3.35\n'
                    'scaleup_GBps_per_direction = 450\nscaleout_Gbps = 0\ntdp_W = 700\n'
                    'max_instance = 8\nsource = "test"\n')
    g = load_gpu_file(path)["NoNic"]
    assert (g.scaleout_bandwidth, g.scaleup_bandwidth) == (0.0, 450e9)


@pytest.mark.parametrize("spec, key", [("leaf-spine", "bandwidth"),
                                       ("rail-optimized", "nic_bandwidth")])
def test_a_builder_asks_for_the_nic_bandwidth_it_would_default_to_0(spec, key):
    with pytest.raises(UserError, match=rf"{key} defaults to the GPU's scale-out bandwidth, "
                                        rf"which is 0 .*give {key}$"):
        topologies.build(spec, {"gpu": _no_nic()})
    g = topologies.build(spec, {"gpu": _no_nic(), key: 50e9})
    nic = [d["bandwidth"] for u, v, d in g.edges(data=True)
           if {g.nodes[u]["kind"], g.nodes[v]["kind"]} == {"gpu", "switch"}
           and max(g.nodes[x].get("tier", 0) for x in (u, v)) == 1]
    assert nic and set(nic) == {50e9}


def test_a_scaleup_only_fabric_builds_without_a_nic_bandwidth():
    g = topologies.build("single-switch", {"n": 8, "gpu": _no_nic()})
    assert {d["bandwidth"] for *_, d in g.edges(data=True)} == {H100.scaleup_bandwidth}


def test_the_scaleout_token_of_a_gpu_with_none_is_refused():
    assert parse_gpu_token("$scaleup", _no_nic()) == 450e9
    with pytest.raises(UserError, match=r"'4\*\$scaleout': GPU 'NoNic' has no scale-out"):
        parse_gpu_token("4*$scaleout", _no_nic())


def test_a_fabric_of_it_is_saved_and_read_back_with_its_gpu(tmp_path):
    g = topologies.build("leaf-spine", {"gpu": _no_nic(), "bandwidth": 50e9})
    path = tmp_path / "fabric.json"
    topologies.write_graph(g, path)
    assert topologies.read_graph(path).graph["gpu_types"]["NoNic"] == _no_nic()
