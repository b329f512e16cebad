"""A GPU that names no NVLink count is wired by one rule (compute.gpu_facts.nvlink_count) in
the fabric builders and a scenario's "$nvlinks": its root's scale-up bandwidth over the
H100's NVLink4 line rate (gpus.toml: 450 GB/s over 18 links = 25 GB/s, NVIDIA H100
datasheet). Before, rail-optimized (and superpod, nvl72) wired 18 whatever the bandwidth
while "$nvlinks" counted bandwidth / 25 GB/s: a user's 400 GB/s GPU had 18 links a GPU on
rail-optimized:gpu=Sixteen and 16 on h100-dgx@Sixteen, and a 112.5 GB/s one (4.5 links) was
wired with 18 by the builder where the scenario refused it."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.gpu_facts import nvlink_count
from compute.hardware import load_gpu_file
from netmodel.study.fabric_table import nvlinks_of
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from topologies.hierarchical import nvl72, rail_optimized, superpod

GPU = """[gpu."{name}"]
sms = 132
bf16_dense_TFLOPs = 989.4
hbm_capacity_GB = 80
hbm_bandwidth_TBps = 3.35
scaleup_GBps_per_direction = {bw}
scaleout_Gbps = 400
tdp_W = 700
max_instance = 8
source = "test: a user's GPU without nvlinks"
"""


def _links(g) -> set[int]:
    return {d.get("links", 1) for u, v, d in g.edges(data=True) if "nvs" in (u[:3], v[:3])}


@pytest.mark.parametrize("bw, hand", [(400, 16), (300, 12), (25, 1), (900, 36)])
def test_builder_and_token_count_alike_and_as_by_hand(tmp_path, bw, hand):
    # by hand: bw GB/s / 25 GB/s (the H100's 450 GB/s over its 18 NVLink4 links)
    assert bw / (450 / 18) == hand
    path = tmp_path / "mine.toml"
    path.write_text(GPU.format(name="Mine", bw=bw))
    mine = load_gpu_file(path)["Mine"]
    assert mine.nvlinks is None
    assert nvlink_count(mine) == nvlinks_of(mine) == hand
    g = rail_optimized(domains=1, gpu=mine)
    assert _links(g) == {hand} and g.nodes["nvs0"]["radix"] == 8 * hand
    scenario = build_fabric(get_scenario(f"h100-dgx@{path}"))
    assert _links(scenario) == {hand} and scenario.nodes["nvs0"]["radix"] == 8 * hand
    if hand <= 18:   # superpod's and nvl72's switches have room for 18 links a GPU
        assert _links(superpod(1, mine)) == {hand}
        assert _links(nvl72(gpu=mine)) == {hand}


def test_a_gpu_derived_from_a_users_root_keeps_the_roots_count(tmp_path):
    # Kid is half of Mine (400 GB/s: 16 links): 16 links of 12.5 GB/s, as the Lites keep
    # the H100's 18 links at a quarter of their rate
    path = tmp_path / "chain.toml"
    path.write_text(GPU.format(name="Mine", bw=400)
                    + '[gpu."Kid"]\nderive_from = "Mine"\nfraction = 0.5\nsource = "x"\n')
    kid = load_gpu_file(path)["Kid"]
    assert nvlink_count(kid) == nvlinks_of(kid) == 16
    assert _links(rail_optimized(domains=1, gpu=kid)) == {16}


@pytest.mark.parametrize("bw, ratio", [(112.5, r"4\.5"), (30, r"1\.2"), (10, r"0\.4")])
def test_a_fraction_of_a_link_is_refused_by_the_builder_too(tmp_path, bw, ratio):
    path = tmp_path / "odd.toml"
    path.write_text(GPU.format(name="Odd", bw=bw))
    odd = load_gpu_file(path)["Odd"]
    line = (r"^GPU 'Odd' gives no NVLink count and its scale-up bandwidth .+ is not a whole "
            r"number from 1 to 1,024 of NVLinks of 25 ?GB/s \(the H100-SXM's\) \(" + ratio
            + r"\); give the GPU an nvlinks = N key$")
    with pytest.raises(UserError, match=line):
        rail_optimized(domains=1, gpu=odd)
    # the builder's own argument still wins
    assert _links(rail_optimized(domains=1, gpu=odd, nvlinks=4)) == {4}


@pytest.mark.parametrize("gpu", [None, "H100-SXM", 18, object()])
def test_nvlink_count_takes_a_gpu_spec(gpu):
    with pytest.raises(UserError, match=r"^gpu must be a compute\.hardware\.GpuSpec"):
        nvlink_count(gpu)
