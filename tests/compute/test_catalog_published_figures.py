"""Catalog figures against what their sources print (an audit of compute/data/gpus.toml and
models.toml): NVIDIA's datasheets print tensor-core rates with 2:4 sparsity and NVLink
bidirectional, the catalog holds dense rates and bandwidth per direction; parameter counts
are derived by hand from each config.json, so a changed dimension fails here, not only a
count that drifts past the 2% of test_models.py."""

import pytest

from compute.hardware import get_gpu
from compute.models import get_model

MIB = 2**20


# (GPU, bf16 TFLOPS with sparsity, fp8 TFLOPS with sparsity, NVLink GB/s bidirectional,
#  HBM GB as printed, HBM TB/s, max TDP W): NVIDIA A100 80GB SXM datasheet (bf16 624
#  sparse, NVLink 600 GB/s, 2,039 GB/s, 400 W); H100 SXM datasheet (bf16 1,979, fp8 3,958
#  with sparsity, NVLink 900 GB/s, 3.35 TB/s, up to 700 W); H200 SXM product brief (as
#  H100, 141 GB at 4.8 TB/s).
DATASHEETS = [
    ("A100-SXM-80GB", 624, 0, 600, 80, 2.039, 400),
    ("H100-SXM", 1979, 3958, 900, 80, 3.35, 700),
    ("H200-SXM", 1979, 3958, 900, 141, 4.8, 700),
]


@pytest.mark.parametrize("name,bf16_sp,fp8_sp,nvlink_bidir,hbm_gb,hbm_tbps,tdp", DATASHEETS)
def test_hopper_and_ampere_rows_are_the_datasheets_dense_and_per_direction(
        name, bf16_sp, fp8_sp, nvlink_bidir, hbm_gb, hbm_tbps, tdp):
    g = get_gpu(name)
    # dense = sparse / 2; the datasheets round 1978.9 to 1,979 and 3957.8 to 3,958
    assert g.flops_bf16 == pytest.approx(bf16_sp / 2 * 1e12, abs=0.6e12)
    assert g.flops_fp8 == pytest.approx(fp8_sp / 2 * 1e12, abs=0.6e12)
    assert 2 * g.scaleup_bandwidth == nvlink_bidir * 1e9
    assert g.hbm_bandwidth == round(hbm_tbps * 1000) * 1e9   # the GB/s printed, read exactly
    # NVIDIA's "80 GB" / "141 GB" are GiB; CUDA shows that less the driver's reservation
    assert 0.99 * hbm_gb * 2**30 < g.hbm_capacity <= hbm_gb * 2**30
    assert g.tdp == tdp


def test_llama31_405b_parameters_from_its_config_by_hand():
    # config.json: 126 layers, hidden 16384, 128 heads of 128, 8 KV heads, FFN 53248,
    # vocab 128256, untied LM head. 405,853,388,800: the '405B' ('406B' on Hugging Face).
    h, kv = 16384, 8 * 128
    layer = 2 * h * h + 2 * h * kv + 3 * h * 53248 + 2 * h
    total = 2 * 128256 * h + 126 * layer + h
    assert get_model("Llama-3.1-405B").parameters == total == 405_853_388_800


def test_deepseek_v3_counts_are_the_main_model_without_its_mtp_module():
    # config.json: 61 layers (3 dense, FFN 18432; 58 MoE of 256 routed + 1 shared expert
    # of 2048, 8 routed per token), MLA q_lora 1536, kv_lora 512, 128 heads of 128 + 64
    # rotary, v 128, vocab 129280. DeepSeek-AI's 671B / 37B activated leave out the 14B
    # multi-token-prediction module (685B on Hugging Face); the router's 256 bias terms a
    # layer (e_score_correction_bias, 14,848 in all) are left out too.
    d = 7168
    attn = (d * 1536 + 1536 + 1536 * 128 * 192 + d * (512 + 64) + 512
            + 512 * 128 * (128 + 128) + 128 * 128 * d)
    expert = 3 * d * 2048
    common = 61 * (attn + 2 * d) + 3 * 3 * d * 18432 + 2 * 129280 * d + d
    total = common + 58 * (257 * expert + 256 * d)
    active = common + 58 * (9 * expert + 256 * d)
    m = get_model("DeepSeek-V3")
    assert (m.parameters, m.active_parameters) == (total, active)
    assert total == 671_026_404_352
    # 37.55B active with the 0.93B embedding table (as netmodel counts it), 36.63B without:
    # the paper's '37B activated' is the latter rounded (or the former truncated)
    assert round((active - 129280 * d) / 1e9) == 37 and int(active / 1e9) == 37

def test_gpt_oss_active_counts_are_the_model_cards_plus_the_embedding_table():
    # OpenAI gpt-oss model card Table 1: 116.83B / 20.91B total, 5.13B / 3.61B active per
    # token without the 201088 x 2880 embedding table (the catalog counts it active)
    emb = 201088 * 2880
    for name, total, active in (("gpt-oss-120b", 116.83e9, 5.13e9), ("gpt-oss-20b", 20.91e9, 3.61e9)):
        m = get_model(name)
        assert m.parameters == pytest.approx(total, abs=0.005e9)
        assert m.active_parameters - emb == pytest.approx(active, abs=0.005e9)
