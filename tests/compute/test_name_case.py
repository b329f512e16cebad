"""GPU and model names are read as scenario and builder names are: case-insensitive
(compute.errors.find_name). 'netmodel models llama-3-70b' and 'gpu=h100-sxm' were refused
('unknown model', 'unknown GPU') where 'compare --scenarios H100-DGX' ran; a name that
differs from another only in case is still refused, listing both."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.hardware import get_gpu, load_gpu_file
from compute.models import get_model
from netmodel.cli.main import cli
from topologies import build


def test_catalog_names_ignore_case():
    assert get_gpu("h100-sxm") is get_gpu("H100-SXM")
    assert get_gpu("LITE+BW").name == "Lite+BW"
    assert get_model("llama-3-70b").name == "Llama-3-70B"
    assert get_model("GPT-OSS-20B").name == "gpt-oss-20b"
    # a builder's gpu= parameter keeps the catalog's spelling in its arguments
    assert build("rail-optimized:domains=1,gpu=b200-hgx").graph["args"]["gpu"] == "B200-HGX"


def test_cli_reads_any_case():
    r = CliRunner().invoke(cli, ["hardware", "h100-sxm"])
    assert r.exit_code == 0 and r.output.startswith("H100-SXM\n")
    r = CliRunner().invoke(cli, ["models", "MIXTRAL-8X7B"])
    assert r.exit_code == 0 and r.output.startswith("Mixtral-8x7B:")


def test_names_differing_only_in_case(tmp_path):
    f = tmp_path / "gpus.toml"
    base = 'derive_from = "H100-SXM"\nfraction = 0.5\nsource = "test"\n'
    f.write_text(f'[gpu.gpu-a]\n{base}\n[gpu."GPU-A"]\n{base}')
    gpus = load_gpu_file(f)
    r = CliRunner().invoke(cli, ["hardware", "gpu-a", "--gpu-file", str(f)])
    assert r.exit_code == 0 and r.output.startswith("gpu-a\n")
    r = CliRunner().invoke(cli, ["hardware", "Gpu-A", "--gpu-file", str(f)])
    assert r.exit_code == 2 and "unknown GPU 'Gpu-A'" in r.output
    assert "'GPU-A'" in r.output and "'gpu-a'" in r.output
    assert sorted(gpus) == ["GPU-A", "gpu-a"]


def test_a_user_file_may_not_take_a_catalog_name_in_another_case(tmp_path):
    f = tmp_path / "gpus.toml"
    f.write_text('[gpu."h100-sxm"]\nderive_from = "H100-SXM"\nfraction = 0.5\nsource = "test"\n')
    with pytest.raises(UserError, match="'h100-sxm' already name.* catalog GPU.*"
                                        "derive_from = 'H100-SXM'"):
        load_gpu_file(f)
