"""A scenario swapped to another GPU follows its NVLink count (issue 11).

``h100-dgx`` wrote ``nvlinks = 18`` outright, so ``h100-dgx@A100-SXM-80GB`` (infer/calibrate
on A100 rows) wired each A100 to its NVSwitch with the H100's 18 NVLinks, 144 switch ports
in the domain, where an A100 has 12 NVLink3 links of 25 GB/s (its 300 GB/s, gpus.toml;
a DGX A100's 8 GPUs take 96 NVSwitch ports). The fabric token ``"$nvlinks"`` counts them
from the GPU: its scale-up bandwidth over its generation's NVLink line rate
(``nvlink_bandwidth`` in collective_generations.toml: 25 GB/s Ampere and Hopper, 50 GB/s
Blackwell), 300 / 25 = 12, 450 / 25 = 18, 900 / 50 = 18. A GPU derived from another keeps
its base's links (the Lites: the H100's 18, what they had); a user GPU whose bandwidth is not
a whole number of links is refused in one line.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric

# NVLinks a GPU, as the GPUs' sources give them (gpus.toml comments: "NVLink3: 12 links x
# 25 GB/s", "NVLink4: 18 links x 25 GB/s", "NVLink5: 18 links x 50 GB/s")
PUBLISHED = {"A100-SXM-80GB": 12, "H100-SXM": 18, "H200-SXM": 18, "B200-HGX": 18,
             "GB200-NVL72": 18, "B300-HGX": 18, "GB300-NVL72": 18}


def _domain(label: str) -> tuple[int, int]:
    g = build_fabric(get_scenario(label))
    return g.edges["gpu0", "nvs0"]["links"], g.nodes["nvs0"]["radix"]


def test_a100_swap_has_12_nvlinks_and_96_ports():
    # before: 18 links a GPU and a 144-port domain switch
    assert _domain("h100-dgx@A100-SXM-80GB") == (12, 8 * 12)
    assert "nvlinks=12," in get_scenario("h100-dgx@A100-SXM-80GB").fabric_spec()


@pytest.mark.parametrize("gpu", ["H100-SXM", "B200-HGX", "Lite", "Lite+NetBW", "Lite+BW"])
def test_other_gpus_keep_18(gpu):
    # the H100 baseline is unchanged (its spec string, so the study's, too); the B200 has
    # 18 NVLink5; the Lites keep the H100's 18 (derived from it, each link a share)
    assert _domain(f"h100-dgx@{gpu}") == (18, 8 * 18)


def test_the_count_is_the_published_one_for_every_catalog_gpu():
    from compute.hardware import get_gpu
    from netmodel.study.fabric_table import nvlinks_of

    assert {g: nvlinks_of(get_gpu(g)) for g in PUBLISHED} == PUBLISHED


GPU = """[gpu."{name}"]
sms = 132
bf16_dense_TFLOPs = 989.4
fp8_dense_TFLOPs = 1978.9
hbm_capacity_GB = 80
hbm_bandwidth_TBps = 3.35
scaleup_GBps_per_direction = {bw}
scaleout_Gbps = 400
tdp_W = 700
max_instance = 8
source = "test: a user's GPU"
"""


def test_a_user_gpu_of_whole_links(tmp_path):
    # 400 GB/s on the default (Hopper) generation: 16 NVLink4 links of 25 GB/s
    f = tmp_path / "g16.toml"
    f.write_text(GPU.format(name="Sixteen", bw=400))
    assert _domain(f"h100-dgx@{f}") == (16, 8 * 16)


def test_a_user_gpu_of_a_fraction_of_a_link_is_refused(tmp_path):
    # 112.5 GB/s (a Lite's, but not derived from the H100): 4.5 links; before it was
    # wired with 18
    f = tmp_path / "g45.toml"
    f.write_text(GPU.format(name="Halfway", bw=112.5))
    with pytest.raises(UserError, match=r"112\.5 ?GB/s is not a whole number from 1 to "
                                        r"1,024 of NVLinks of 25 ?GB/s \(the H100-SXM's\) "
                                        r"\(4\.5\)"):
        get_scenario(f"h100-dgx@{f}").fabric_spec()
    r = CliRunner().invoke(cli, ["cost", "--scenario", f"h100-dgx@{f}", "--model",
                                 "Llama-3-70B", "--phase", "decode"])
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and "Traceback" not in r.output, r.output
    assert "'$nvlinks'" in r.output and "nvlinks = N" in r.output


def test_a_gpu_file_chain_counts_its_roots_nvlinks(tmp_path):
    # a GPU derived from another of the same file (MyC from MyB from the B200) has the
    # B200's 18 NVLinks; nvlinks_of looked MyB up in the catalog ("unknown GPU 'MyB'")
    from compute.hardware import load_gpu_file
    from netmodel.study.fabric_table import nvlinks_of

    path = tmp_path / "gpus.toml"
    path.write_text('[gpu."MyB"]\nderive_from = "B200-HGX"\nfraction = 0.5\nsource = "x"\n'
                    '[gpu."MyC"]\nderive_from = "MyB"\nfraction = 0.5\nsource = "x"\n')
    gpus = load_gpu_file(path)
    assert nvlinks_of(gpus["MyC"]) == nvlinks_of(gpus["MyB"]) == PUBLISHED["B200-HGX"]


def test_a_gpu_files_own_nvlinks_wire_the_scenario_as_the_builder(tmp_path):
    # a GPU entry's nvlinks key is what rail-optimized defaults to (e74666f); "$nvlinks"
    # counted the root's bandwidth instead, so h100-dgx@Own had 18 links a GPU where
    # rail-optimized:gpu=Own had 6; and a bandwidth of 4.5 links was refused even where the
    # file says how many links there are
    from compute.hardware import load_gpu_file
    from netmodel.study.fabric_table import nvlinks_of

    path = tmp_path / "own.toml"
    path.write_text('[gpu."Own"]\nderive_from = "H100-SXM"\nnvlinks = 6\nsource = "x"\n'
                    + GPU.format(name="Halfway4", bw=112.5) + "nvlinks = 4\n")
    gpus = load_gpu_file(path)
    assert nvlinks_of(gpus["Own"]) == 6
    assert nvlinks_of(gpus["Halfway4"]) == 4
    one = tmp_path / "own1.toml"
    one.write_text('[gpu."Own"]\nderive_from = "H100-SXM"\nnvlinks = 6\nsource = "x"\n')
    assert _domain(f"h100-dgx@{one}") == (6, 8 * 6)
