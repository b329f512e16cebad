"""Hostile input round 6 (helper 68) through the CLI: one line, exit status 2, no traceback;
and the same answer for one checkpoint however it is named. Library cases:
tests/compute/test_hostile6.py."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli

DATA = Path(__file__).parents[1] / "compute" / "data" / "hf_quantized"
W8A8 = json.loads((DATA / "llama-3.1-8b-instruct-quantized.w8a8.json").read_text())
PLAIN = {k: v for k, v in W8A8.items() if k != "quantization_config"}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def refused(r, needle):
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and "Traceback" not in r.output, r.output
    assert needle in r.output, r.output


@pytest.mark.parametrize("algo", [["NVFP4"], {"a": 1}])
def test_modelopt_quant_algo_not_text_is_one_line(tmp_path, algo):
    # before: exit 1 with TypeError: unhashable type
    (tmp_path / "config.json").write_text(json.dumps(
        {**PLAIN, "quantization_config": {"quant_method": "modelopt", "quant_algo": algo}}))
    refused(run("models", "--hf-config", tmp_path), "quant_algo")


def test_sidecar_on_dev_zero_is_one_line(tmp_path):
    # before: exit 0, read as a bf16 checkpoint (weights 16 GB)
    (tmp_path / "config.json").write_text(json.dumps(PLAIN))
    (tmp_path / "hf_quant_config.json").symlink_to("/dev/zero")
    refused(run("models", "--hf-config", tmp_path), "is not a regular file")


def test_nvfp4_checkpoint_prices_alike_by_folder_and_by_path(tmp_path):
    # before: infer --hf-config read NVFP4 (fp4 peak on B200); compare/infer --model PATH
    # read bf16 (the sidecar skipped): 3,907 vs 1,058.8 prefill tokens/s/SM
    (tmp_path / "config.json").write_text(json.dumps(PLAIN))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"quantization": {"quant_algo": "NVFP4", "group_size": 16,
                          "exclude_modules": ["lm_head"]}}))
    common = ("infer", "--gpu", "B200-HGX", "--tp", 1, "--batch", 64, "--phase", "prefill",
              "--json")
    a = run(*common, "--hf-config", tmp_path)
    b = run(*common, "--model", tmp_path / "config.json")
    assert a.exit_code == b.exit_code == 0, (a.output, b.output)
    ja, jb = json.loads(a.output), json.loads(b.output)
    assert ja == jb
