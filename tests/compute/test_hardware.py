"""GPU catalog and user GPU files: figures against the reference, bad files as UserErrors."""

import csv

import pytest

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu, load_gpu_file


def test_catalog_matches_the_reference_csv(reference_dir):
    with open(reference_dir / "gpus.csv") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    assert len(rows) == 4
    for row in rows:
        g = get_gpu(row["name"])
        assert g.sms == int(row["sms"])
        assert g.flops_bf16 == pytest.approx(float(row["bf16_dense_tflops"]) * 1e12)
        assert g.flops_fp8 == pytest.approx(float(row["fp8_dense_tflops"] or 0) * 1e12)
        # the sheet's "80 GB" is NVIDIA's binary figure; the catalog holds what CUDA reports
        # (nvidia-smi total), that many GiB less the driver's share (B200: 179 of 192 GiB)
        assert 0.93 * float(row["hbm_GB"]) * 2**30 <= g.hbm_capacity
        assert g.hbm_capacity <= float(row["hbm_GB"]) * 2**30
        assert g.hbm_bandwidth == pytest.approx(float(row["hbm_TBps"]) * 1e12)
        assert g.scaleup_bandwidth == pytest.approx(float(row["scaleup_GBps_per_direction"]) * 1e9)
        assert g.scaleout_bandwidth == pytest.approx(float(row["scaleout_Gbps_per_nic"]) * 1e9 / 8)
        assert g.tdp == float(row["tdp_W"])


def test_lite_is_a_quarter_of_an_h100_with_instances_of_32():
    h, lite = get_gpu("H100-SXM"), get_gpu("Lite")
    assert (lite.sms, lite.max_instance) == (33, 32)
    for key in ("flops_bf16", "flops_fp8", "hbm_capacity", "hbm_bandwidth",
                "scaleup_bandwidth", "scaleout_bandwidth"):
        assert getattr(lite, key) == pytest.approx(getattr(h, key) / 4)
    bw = get_gpu("Lite+BW+FLOPS")
    assert bw.hbm_bandwidth == pytest.approx(2 * lite.hbm_bandwidth)
    assert bw.scaleup_bandwidth == pytest.approx(2 * lite.scaleup_bandwidth)
    assert bw.flops_bf16 == pytest.approx(1.2 * lite.flops_bf16)


@pytest.mark.parametrize("body, match", [
    # a list where a GPU name belongs used to escape as "TypeError: unhashable type"
    ('[gpu.x]\nderive_from = ["H100-SXM"]\n', "derives from unknown GPU"),
    # a boolean used to pass as the number 1 (a "fraction" of the whole H100)
    ('[gpu.x]\nderive_from = "H100-SXM"\nfraction = true\n', "fraction must be a number from"),
    ('[gpu.x]\nderive_from = "H100-SXM"\nflops_multiplier = false\n', "flops_multiplier"),
])
def test_bad_derived_gpu_file_is_a_user_error(tmp_path, body, match):
    path = tmp_path / "gpu.toml"
    path.write_text(body)
    with pytest.raises(UserError, match=match):
        load_gpu_file(path)


def test_derive_refuses_booleans():
    with pytest.raises(UserError, match="hbm_bandwidth_multiplier"):
        derive_gpu(get_gpu("H100-SXM"), "x", hbm_bandwidth_multiplier=True)


def test_in_switch_reduction_is_a_fact_of_the_gpu_generation(tmp_path):
    """NVLink SHARP (NVLS) came with Hopper's NVSwitch: the catalog says so per GPU, a
    derived GPU inherits it, and a file may set it (true or false only)."""
    assert [get_gpu(g).scaleup_reduction for g in
            ("A100-SXM-80GB", "H100-SXM", "H200-SXM", "B200-HGX", "Lite")] == \
        [False, True, True, True, True]
    path = tmp_path / "gpu.toml"
    path.write_text('[gpu.x]\nderive_from = "A100-SXM-80GB"\nfraction = 0.5\nsource = "test"\n'
                    '[gpu.y]\nderive_from = "H100-SXM"\nscaleup_reduction = false\n'
                    'source = "test"\n')
    gpus = load_gpu_file(path)
    assert (gpus["x"].scaleup_reduction, gpus["y"].scaleup_reduction) == (False, False)
    assert gpus["y"].sms == get_gpu("H100-SXM").sms
    path.write_text('[gpu.x]\nderive_from = "H100-SXM"\nscaleup_reduction = 1\n')
    with pytest.raises(UserError, match="scaleup_reduction must be true or false, got 1"):
        load_gpu_file(path)
