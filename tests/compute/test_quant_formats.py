"""Quantized formats a 2026 serving stack ships, each with its bytes and GEMM rate by hand:

* int8 w8a8 (compressed-tensors int8 weights and int8 input activations, RedHatAI's
  ``*-quantized.w8a8``): the GEMMs on int8 weights run at the GPU's dense int8 peak
  (A100 624 TOPS, H100/H200 1,979, B200 4,500: NVIDIA datasheets, compute/data/gpus.toml),
  the LM head (kept bf16) at the bf16 peak. Before: every GEMM at bf16.
* MXFP4 (gpt-oss): 4-bit e2m1 with an e8m0 scale per 32 = 4.25 bits, on the routed experts
  only; weight-only (bf16 rate). Before: refused ("quant_method 'mxfp4' is not modelled").
* NVFP4 (modelopt, compressed-tensors): e2m1 with an e4m3 scale per 16 = 4.5 bits; W4A4
  GEMMs at the fp4 peak on B200 (9,000 TFLOPS dense), weight-only (bf16) elsewhere;
  modelopt FP8 as w8a8 fp8. Before: refused.
"""

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import GpuSpec, get_gpu, load_gpu_file
from compute.models import DTYPE_BYTES, get_model, load_hf_config
from compute.power import gpu_at_clock
from compute.stage_peaks import stage_peaks
from compute.stages import STAGES

DATA = Path(__file__).parent / "data" / "hf_quantized"
LINEAR = ("qkv", "out_proj", "mlp_up", "mlp_down")
# Llama-3.1-8B by hand (as tests/compute/test_hf_quantized.py)
L8_LINEAR = 32 * (4096 * (4096 + 2 * 1024) + 4096 * 4096 + 3 * 4096 * 14336)
L8_TOKENS = 2 * 128256 * 4096
L8_NORMS = (2 * 32 + 1) * 4096


def stages(model, gpu, batch=4):
    r = evaluate(model, gpu, tp=1, batch=batch, phase="prefill")
    return {s.name: s for s in r.stages}


# ---- int8 peaks -------------------------------------------------------------------------

@pytest.mark.parametrize("gpu, tops", [("A100-SXM-80GB", 624), ("H100-SXM", 1979),
                                       ("H200-SXM", 1979), ("B200-HGX", 4500),
                                       ("Lite", 1979 / 4), ("Lite+BW+FLOPS", 1979 / 4 * 1.2)])
def test_int8_dense_peaks_from_the_datasheets_and_the_lite_derivation(gpu, tops):
    g = get_gpu(gpu)
    assert g.flops_int8 == pytest.approx(tops * 1e12, rel=1e-12)
    assert g.peak_flops("int8") == g.flops_int8


def test_int8_peak_follows_the_clock():
    half = gpu_at_clock("H100-SXM", 0.5)
    assert half.flops_int8 == pytest.approx(1979e12 / 2, rel=1e-12)
    b200 = gpu_at_clock("B200-HGX", 0.8)
    assert (b200.flops_int8, b200.flops_fp4) == pytest.approx((3600e12, 7200e12), rel=1e-12)


def test_gpu_file_int8_row(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[gpu."X"]\nsms = 10\nbf16_dense_TFLOPs = 100\nhbm_capacity_GB = 10\n'
                 'hbm_bandwidth_TBps = 1\nscaleup_GBps_per_direction = 10\nscaleout_Gbps = 100\n'
                 'tdp_W = 100\nmax_instance = 8\nsource = "test"\n'
                 'int8_dense_TOPs = {value = 200, unit = "TOPS", source = "mine", '
                 'confidence = "guess"}\n'
                 '[gpu."Y"]\nderive_from = "X"\nsource = "test"\nfraction = 0.5\n')
    gpus = load_gpu_file(p)
    assert (gpus["X"].flops_int8, gpus["Y"].flops_int8) == (200e12, 100e12)
    p.write_text(p.read_text().replace('unit = "TOPS"', 'unit = "TFLOPS"'))
    with pytest.raises(UserError, match="int8_dense_TOPs must be a row") as exc:
        load_gpu_file(p)
    assert "\n" not in str(exc.value)


def test_a_gpu_without_an_int8_row_runs_int8_at_bf16(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[gpu."Z"]\nsms = 10\nbf16_dense_TFLOPs = 100\nhbm_capacity_GB = 100\n'
                 'hbm_bandwidth_TBps = 1\nscaleup_GBps_per_direction = 10\nscaleout_Gbps = 100\n'
                 'tdp_W = 100\nmax_instance = 8\nsource = "test"\n')
    z = load_gpu_file(p)["Z"]
    assert (z.flops_int8, z.flops_fp4) == (0.0, 0.0)
    m = get_model(str(DATA / "llama-3.1-8b-instruct-quantized.w8a8.json"))
    assert set(stage_peaks(m, z, STAGES)) == {100e12}
    with pytest.raises(UserError, match="no int8 tensor cores"):
        z.peak_flops("int8")


# ---- the peaks are GpuSpec fields --------------------------------------------------------

W8A8 = DATA / "llama-3.1-8b-instruct-quantized.w8a8.json"
QKV_FLOPS = 301_989_888_000   # 2 x 4 x 1500 tokens x 4096 x (4096 + 2 x 1024)


def test_a_gpu_built_in_code_runs_int8_at_its_own_peak():
    # a spec made in code (not read from any file) carries its own int8 and fp4 peaks
    mine = GpuSpec(name="Mine", sms=100, flops_bf16=500e12, flops_fp8=0.0,
                   flops_int8=1500e12, hbm_capacity=80e9, hbm_bandwidth=4e12,
                   scaleup_bandwidth=450e9, scaleout_bandwidth=50e9, tdp=700, max_instance=8)
    s = stages(get_model(str(W8A8)), mine)
    assert s["qkv"].compute_time == pytest.approx(QKV_FLOPS / 1500e12, rel=1e-12)   # 201.3 us
    assert s["lm_head"].compute_time == pytest.approx(s["lm_head"].flops / 500e12, rel=1e-12)
    # a catalog GPU changed with dataclasses.replace, under a new name or its own
    for name in ("H100-2xINT8", "H100-SXM"):
        fast = replace(get_gpu("H100-SXM"), name=name, flops_int8=3958e12)
        s = stages(get_model(str(W8A8)), fast)
        assert s["qkv"].compute_time == pytest.approx(QKV_FLOPS / 3958e12, rel=1e-12)
    # 0: no int8 tensor cores, the int8 GEMMs at the bf16 peak
    slow = replace(get_gpu("H100-SXM"), flops_int8=0.0)
    assert stages(get_model(str(W8A8)), slow)["qkv"].compute_time == \
        pytest.approx(QKV_FLOPS / 989.4e12, rel=1e-12)


def test_two_gpu_files_with_one_name_keep_their_own_peaks(tmp_path):
    rows = []
    for tops in (200, 300):
        p = tmp_path / f"g{tops}.toml"
        p.write_text('[gpu."X"]\nsms = 10\nbf16_dense_TFLOPs = 100\nhbm_capacity_GB = 10\n'
                     'hbm_bandwidth_TBps = 1\nscaleup_GBps_per_direction = 10\n'
                     'scaleout_Gbps = 100\ntdp_W = 100\nmax_instance = 8\nsource = "test"\n'
                     f'int8_dense_TOPs = {{value = {tops}, unit = "TOPS", source = "mine", '
                     'confidence = "guess"}\n')
        rows.append(load_gpu_file(p)["X"])
    assert [g.peak_flops("int8") for g in rows] == [200e12, 300e12]


@pytest.mark.parametrize("row, message", [
    ("{value = 3e6, unit = \"TOPS\", source = \"x\"}",
     "int8_dense_TOPs must be a number 0 or from 0.001 to 2,000,000 TOP/s, got 3000000.0"),
    ("{value = -1, unit = \"TOPS\", source = \"x\"}", "int8_dense_TOPs must be a number"),
    ("{value = nan, unit = \"TOPS\", source = \"x\"}", "int8_dense_TOPs must be a"),
    ("{value = 5, unit = \"TOPS\"}", "int8_dense_TOPs must be a row {value, unit = 'TOPS'"),
    ("624", "int8_dense_TOPs must be a table")])
def test_bad_int8_rows_are_refused_in_one_line(tmp_path, row, message):
    p = tmp_path / "g.toml"
    p.write_text('[gpu."X"]\nsms = 10\nbf16_dense_TFLOPs = 100\nhbm_capacity_GB = 10\n'
                 'hbm_bandwidth_TBps = 1\nscaleup_GBps_per_direction = 10\nscaleout_Gbps = 100\n'
                 f'tdp_W = 100\nmax_instance = 8\nsource = "test"\nint8_dense_TOPs = {row}\n')
    with pytest.raises(UserError, match=re.escape(message)) as exc:
        load_gpu_file(p)
    assert "\n" not in str(exc.value)


def test_a_derived_gpu_derives_its_int8_and_fp4_peaks(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[gpu."Half-B200"]\nderive_from = "B200-HGX"\nsource = "test"\nfraction = 0.5\n'
                 'flops_multiplier = 1.5\n')
    g = load_gpu_file(p)["Half-B200"]
    assert (g.flops_int8, g.flops_fp4) == (4500e12 * 0.75, 9000e12 * 0.75)
    p.write_text(p.read_text() + 'fp4_dense_TFLOPs = {value = 1, unit = "TFLOPS", '
                 'source = "x"}\n')
    with pytest.raises(UserError, match="unknown key.s. fp4_dense_TFLOPs; a derived GPU"):
        load_gpu_file(p)


# ---- int8 w8a8 --------------------------------------------------------------------------

def test_int8_w8a8_runs_its_linear_layers_at_the_int8_peak():
    m = get_model(str(DATA / "llama-3.1-8b-instruct-quantized.w8a8.json"))
    assert (m.weight_dtype, m.embedding_dtype, m.compute_dtype) == ("int8", "bf16", "int8")
    for gpu, int8, bf16 in (("A100-SXM-80GB", 624e12, 312e12), ("H100-SXM", 1979e12, 989.4e12),
                            ("B200-HGX", 4500e12, 2250e12)):
        s = stages(m, gpu)
        for name in LINEAR:
            assert s[name].compute_time == pytest.approx(s[name].flops / int8, rel=1e-12)
        for name in ("lm_head", "attention"):  # LM head kept bf16 (ignore: lm_head)
            assert s[name].compute_time == pytest.approx(s[name].flops / bf16, rel=1e-12)


def test_int8_qkv_gemm_time_by_hand():
    # a prefill of 4 x 1500 tokens: Q, K, V of Llama-3.1-8B are 2 x tokens x 4096 x 6144
    # FLOPs a layer (32 of them), at 1979 TOPS: 152.6 us a layer (305.2 us at bf16)
    m = get_model(str(DATA / "llama-3.1-8b-instruct-quantized.w8a8.json"))
    s = stages(m, "H100-SXM")
    flops = 2 * 4 * 1500 * 4096 * (4096 + 2 * 1024)
    assert (s["qkv"].flops, s["qkv"].count) == (flops, 32)
    assert s["qkv"].compute_time == pytest.approx(301_989_888_000 / 1979e12, rel=1e-12)


def _w8(tmp_path, **weights_or_act):
    cfg = json.loads((DATA / "llama-3.1-8b-instruct-quantized.w8a8.json").read_text())
    g = cfg["quantization_config"]["config_groups"]["group_0"]
    for k, v in weights_or_act.items():
        if v is None:
            g[k] = None
        else:
            g[k].update(v)
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    return load_hf_config(p)


def test_int8_weight_only_and_w4a8_stay_bf16(tmp_path):
    assert _w8(tmp_path, input_activations=None).compute_dtype == "bf16"      # w8a16
    w4a8 = _w8(tmp_path, weights={"num_bits": 4})
    assert (w4a8.weight_dtype, w4a8.compute_dtype) == ("int4", "bf16")


def test_int8_compute_dtype_needs_int8_weights():
    with pytest.raises(UserError, match="compute_dtype 'int8'.*needs weights stored in int8"):
        replace(get_model("Llama-3-8B"), compute_dtype="int8")


# ---- MXFP4: gpt-oss ---------------------------------------------------------------------

def _gpt_oss_counts(layers, experts):
    """Parameters of gpt-oss by hand: attention Q 2880x4096, K and V 2880x512, O 4096x2880,
    biases 4096 + 2 x 512 + 2880; an expert 3 x 2880 x 2880 with biases 5760 + 2880; the
    router 2880 x E; two norms a layer; embedding and LM head 201088 x 2880; final norm."""
    attn = 2880 * (4096 + 1024) + 4096 * 2880 + (4096 + 1024 + 2880)
    expert = 3 * 2880 * 2880 + 5760 + 2880
    tokens = 2 * 201088 * 2880
    total = layers * (attn + experts * expert + 2880 * experts + 2 * 2880) + tokens + 2880
    active = layers * (attn + 4 * expert + 2880 * experts + 2 * 2880) + tokens + 2880
    return total, active, layers * experts * expert


@pytest.mark.parametrize("name, layers, experts, total_b, active_b", [
    ("gpt-oss-120b", 36, 128, 116.83, 5.13), ("gpt-oss-20b", 24, 32, 20.91, 3.61)])
def test_gpt_oss_parameters_and_bytes_by_hand(name, layers, experts, total_b, active_b):
    total, active, mlp = _gpt_oss_counts(layers, experts)
    for m in (get_model(name), load_hf_config(DATA / f"{name}.json")):
        assert (m.parameters, m.active_parameters) == (total, active)
        # OpenAI's model card: 116.83B / 20.91B; active without the 201088 x 2880 embedding
        assert total / 1e9 == pytest.approx(total_b, abs=0.005)
        assert (active - 201088 * 2880) / 1e9 == pytest.approx(active_b, abs=0.005)
        # experts in MXFP4 (4.25 bits), everything else bf16
        assert m.weight_storage_bytes == mlp * 4.25 / 8 + (total - mlp) * 2
        assert (m.mlp_weight_dtype, m.weight_dtype, m.compute_dtype) == ("mxfp4", "bf16", "bf16")
        assert (m.sliding_window, m.windowed_layers, m.kv_heads, m.head_dim) == \
            (128, layers // 2, 8, 64)
    assert DTYPE_BYTES["mxfp4"] * 8 == 4.25 and DTYPE_BYTES["nvfp4"] * 8 == 4.5


def test_gpt_oss_120b_weights_are_65_gb():
    # 114,701,598,720 expert parameters x 4.25 / 8 + 2,127,551,040 others x 2
    assert get_model("gpt-oss-120b").weight_storage_bytes == 65_190_326_400


def test_gpt_oss_runs_weight_only_at_bf16_even_on_blackwell():
    m = get_model("gpt-oss-120b")
    for gpu in ("H100-SXM", "B200-HGX"):
        g = get_gpu(gpu)
        assert set(stage_peaks(m, g, STAGES)) == {g.flops_bf16}


@pytest.mark.parametrize("kept, message", [
    (["model.layers.*.mlp.experts"], "keeps 'model.layers.*.mlp.experts' unquantized"),
    ("lm_head", "modules_to_not_convert must be a list")])
def test_mxfp4_refusals_in_one_line(tmp_path, kept, message):
    cfg = json.loads((DATA / "gpt-oss-20b.json").read_text())
    cfg["quantization_config"]["modules_to_not_convert"] = kept
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    with pytest.raises(UserError, match=message) as exc:
        load_hf_config(p)
    assert "\n" not in str(exc.value)


# ---- NVFP4 and modelopt -----------------------------------------------------------------

def _llama8(tmp_path, quant, side=None):
    cfg = json.loads((DATA / "llama-3.1-8b-instruct-quantized.w4a16.json").read_text())
    cfg["quantization_config"] = quant
    if quant is None:
        del cfg["quantization_config"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    if side is not None:
        (tmp_path / "hf_quant_config.json").write_text(json.dumps(side))
    return load_hf_config(tmp_path / "config.json")


def test_modelopt_nvfp4_bytes_and_fp4_rate_on_blackwell_only(tmp_path):
    q = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
         "kv_cache_quant_algo": None, "exclude_modules": ["lm_head"]}
    m = _llama8(tmp_path, q)
    assert (m.weight_dtype, m.embedding_dtype, m.compute_dtype) == ("nvfp4", "bf16", "fp4")
    assert m.weight_storage_bytes == (L8_LINEAR + L8_NORMS) * 4.5 / 8 + L8_TOKENS * 2
    # B200: linear layers at the 9,000 TFLOPS fp4 peak, the bf16 LM head at 2,250
    s = stages(m, "B200-HGX")
    for name in LINEAR:
        assert s[name].compute_time == pytest.approx(s[name].flops / 9000e12, rel=1e-12)
    assert s["lm_head"].compute_time == pytest.approx(s["lm_head"].flops / 2250e12, rel=1e-12)
    # H100 has no fp4 tensor cores: weight-only (FP4 Marlin), every GEMM at bf16
    h = get_gpu("H100-SXM")
    assert set(stage_peaks(m, h, STAGES)) == {h.flops_bf16}
    with pytest.raises(UserError, match="no fp4 tensor cores"):
        h.peak_flops("fp4")


def test_fp4_peaks():
    assert get_gpu("B200-HGX").flops_fp4 == 9000e12
    assert [get_gpu(g).flops_fp4 for g in ("H100-SXM", "A100-SXM-80GB", "Lite")] == \
        [0.0, 0.0, 0.0]


def test_hf_quant_config_json_beside_config(tmp_path):
    side = {"producer": {"name": "modelopt", "version": "0.23"},
            "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                             "exclude_modules": ["lm_head"]}}
    m = _llama8(tmp_path, None, side)
    assert (m.weight_dtype, m.compute_dtype, m.kv_dtype) == ("fp8", "fp8", "fp8")
    assert m.weight_storage_bytes == L8_LINEAR + L8_NORMS + L8_TOKENS * 2


def test_compressed_tensors_nvfp4(tmp_path):
    fp4 = {"type": "float", "num_bits": 4, "strategy": "tensor_group", "group_size": 16}
    q = {"quant_method": "compressed-tensors", "ignore": ["lm_head"], "format":
         "nvfp4-pack-quantized", "config_groups": {"group_0": {
             "targets": ["Linear"], "weights": fp4, "input_activations": fp4}}}
    m = _llama8(tmp_path, q)
    assert (m.weight_dtype, m.compute_dtype) == ("nvfp4", "fp4")          # W4A4
    assert m.weight_storage_bytes == (L8_LINEAR + L8_NORMS) * 4.5 / 8 + L8_TOKENS * 2
    del q["config_groups"]["group_0"]["input_activations"]
    assert _llama8(tmp_path, q).compute_dtype == "bf16"                    # NVFP4A16


@pytest.mark.parametrize("quant, message", [
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 32},
     "NVFP4 group_size 32 is not modelled; allowed: 16"),
    ({"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "NVFP4"},
     "kv_cache_quant_algo 'NVFP4' is not modelled"),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4",
      "exclude_modules": ["model.layers.0.self_attn*"]}, "partly quantized")])
def test_modelopt_refusals_in_one_line(tmp_path, quant, message):
    with pytest.raises(UserError, match=message) as exc:
        _llama8(tmp_path, quant)
    assert "\n" not in str(exc.value)


def test_a_refused_gpu_file_leaves_the_catalog_int8_peaks_alone(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[gpu."H100-SXM"]\nsms = 10\nbf16_dense_TFLOPs = 100\nhbm_capacity_GB = 10\n'
                 'hbm_bandwidth_TBps = 1\nscaleup_GBps_per_direction = 10\nscaleout_Gbps = 100\n'
                 'tdp_W = 100\nmax_instance = 8\nsource = "test"\n'
                 'int8_dense_TOPs = {value = 1, unit = "TOPS", source = "x", confidence = "x"}\n')
    with pytest.raises(UserError, match="already name"):
        load_gpu_file(p)
    assert get_gpu("H100-SXM").flops_int8 == 1979e12


# ---- saved fabrics and the CLI ------------------------------------------------------------

def test_saved_fabrics_keep_the_peaks_and_older_files_still_read(tmp_path):
    from topologies.io import read_graph, write_graph
    from topologies.switched import single_switch

    mine = replace(get_gpu("B200-HGX"), name="Mine", flops_int8=4000e12, flops_fp4=8000e12)
    path = tmp_path / "f.json"
    write_graph(single_switch(4, mine), path)
    doc = json.loads(path.read_text())
    saved = doc["graph"]["gpu_types"]["Mine"]
    assert (saved["flops_int8"], saved["flops_fp4"]) == (4000e12, 8000e12)
    assert read_graph(path).graph["gpu_types"]["Mine"] == mine
    # a file saved before the fields existed: no int8 or fp4 tensor cores, as it then read
    for key in ("flops_int8", "flops_fp4"):
        del saved[key]
    path.write_text(json.dumps(doc))
    old = read_graph(path).graph["gpu_types"]["Mine"]
    assert old == replace(mine, flops_int8=0.0, flops_fp4=0.0)
    saved["flops_int8"] = 3e18   # 3,000,000 TOP/s: past limits.toml's 2,000,000
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="flops_int8 must be a number 0 or from") as exc:
        read_graph(path)
    assert "\n" not in str(exc.value)


def _cli(*args):
    from click.testing import CliRunner

    from netmodel.cli.main import cli
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_hardware_shows_the_int8_and_fp4_peaks():
    r = _cli("hardware", "B200-HGX", "--json")
    assert r.exit_code == 0
    d = json.loads(r.output)
    assert (d["flops_int8"], d["flops_fp4"]) == (4500e12, 9000e12)
    assert list(d)[2:6] == ["flops_bf16", "flops_fp8", "flops_int8", "flops_fp4"]
    text = _cli("hardware", "Lite").output
    assert "int8 dense        494.75 TOP/s" in text and "fp4 dense         none" in text


def test_a_gpu_file_with_a_bad_int8_row_exits_2_in_one_line(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[gpu."X"]\nsms = 10\nbf16_dense_TFLOPs = 100\nhbm_capacity_GB = 10\n'
                 'hbm_bandwidth_TBps = 1\nscaleup_GBps_per_direction = 10\nscaleout_Gbps = 100\n'
                 'tdp_W = 100\nmax_instance = 8\nsource = "test"\n'
                 'int8_dense_TOPs = {value = "fast", unit = "TOPS", source = "x"}\n')
    r = _cli("hardware", "X", "--gpu-file", p)
    assert r.exit_code == 2
    assert "int8_dense_TOPs must be a number" in r.output
    assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output
