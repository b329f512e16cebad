"""A GPU file's entry must say where its figures come from (h242): every figure read from a
file carries its source, as the shipped gpus.toml's entries do, a scenario file's
``[sources]`` (bandwidth and latency required) and an engine profile's ``source`` of each
parameter (required). Before, a GPU file's entry without ``source`` (or with a blank one)
was read and its made-up figures reported beside sourced ones with nothing to tell them
apart."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hardware import catalog, load_gpu_file
from tests.netmodel.cli_helpers import one_line_error, run_cli

OWN = '''[gpu."MI300X"]
sms = 304
bf16_dense_TFLOPs = 1307.4
fp8_dense_TFLOPs = 2614.9
hbm_capacity_GB = 206.158430208
hbm_bandwidth_TBps = 5.3
scaleup_GBps_per_direction = 448
scaleout_Gbps = 400
tdp_W = 750
max_instance = 8
nvlinks = 7
'''
DERIVED = '[gpu.Half]\nderive_from = "H100-SXM"\nfraction = 0.5\n'
WHY = "(where its figures come from: a datasheet, a paper, or 'what-if: ...' for a GPU of your own)"


@pytest.mark.parametrize("body, name", [(OWN, "MI300X"), (DERIVED, "Half")])
def test_an_entry_without_a_source_is_refused(tmp_path, body, name):
    path = tmp_path / "g.toml"
    path.write_text(body)
    with pytest.raises(UserError) as e:
        load_gpu_file(path)
    assert str(e.value) == f"{path}: GPU {name!r} lacks key source {WHY}"
    one_line_error(run_cli(["hardware", "--gpu-file", path]), f"GPU {name!r} lacks key source")
    one_line_error(run_cli(["infer", "--model", "Llama-3-8B", "--gpu", path, "--tp", "1",
                            "--batch", "1"]), f"GPU {name!r} lacks key source")


@pytest.mark.parametrize("blank", ['""', '"   "'])
def test_a_blank_source_is_refused(tmp_path, blank):
    path = tmp_path / "g.toml"
    path.write_text(DERIVED + f"source = {blank}\n")
    with pytest.raises(UserError, match="GPU 'Half': source is blank; say where its figures"):
        load_gpu_file(path)


def test_a_sourced_entry_keeps_its_source(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text(OWN + 'source = "AMD Instinct MI300X datasheet"\n'
                    + DERIVED + 'source = "what-if: half an H100"\n')
    gpus = load_gpu_file(path)
    assert [g.source for g in gpus.values()] == ["AMD Instinct MI300X datasheet",
                                                 "what-if: half an H100"]
    r = run_cli(["hardware", "Half", "--gpu-file", path])
    assert r.exit_code == 0 and "  source            what-if: half an H100" in r.output


def test_every_catalog_entry_has_its_source():
    assert all(g.source.strip() for g in catalog().values())


def test_hardware_names_scale_up_links_by_count_not_brand(tmp_path):
    # an AMD GPU's nvlinks = 7 are Infinity Fabric links: 'hardware' said 'over 7 NVLinks'
    # (h242, item 2); the count is the GPU's, the brand is not the model's to say
    path = tmp_path / "g.toml"
    path.write_text(OWN + 'source = "AMD Instinct MI300X datasheet: 7 x 64 GB/s"\n')
    out = run_cli(["hardware", "MI300X", "--gpu-file", path]).output
    assert "  scale-up          448 GB/s per direction over 7 links\n" in out
    assert "NVLink" not in out


MODEL = '[model.Tiny]\nlayers = 2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\n'
MODEL_WHY = ("(where its figures come from: a config.json, a paper, or 'what-if: ...' for a "
             "model of your own)")


@pytest.mark.parametrize("suffix, text", [
    (".toml", MODEL),
    (".json", '{"model": {"Tiny": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 128, '
              '"vocab": 100}}}')])
def test_a_model_file_entry_without_a_source_is_refused_alike(tmp_path, suffix, text):
    # a model file is a user file as a GPU file is: its entries say where they come from
    from compute.models import get_model

    path = tmp_path / f"m{suffix}"
    path.write_text(text)
    with pytest.raises(UserError) as e:
        get_model(str(path))
    assert str(e.value) == f"{path}: model 'Tiny' lacks key source {MODEL_WHY}"
    one_line_error(run_cli(["models", "--model-file", path]), "model 'Tiny' lacks key source")
    path.write_text(text.replace("100\n", '100\nsource = " "\n') if suffix == ".toml"
                    else text.replace('"vocab": 100', '"vocab": 100, "source": "  "'))
    with pytest.raises(UserError, match="model 'Tiny' has a blank source"):
        get_model(str(path))


def test_a_json_model_file_may_not_redefine_a_catalog_model(tmp_path):
    # get_model read a catalog-format .json without load_model_file's checks: a 2-layer
    # 'Llama-3-8B' was taken under the catalog's name (the .toml was refused)
    from compute.models import get_model

    path = tmp_path / "m.json"
    path.write_text('{"model": {"Llama-3-8B": {"layers": 2, "hidden": 64, "heads": 4, '
                    '"ffn": 128, "vocab": 100, "source": "test"}}}')
    with pytest.raises(UserError, match="'Llama-3-8B' already name"):
        get_model(str(path))
