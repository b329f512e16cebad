"""A user's own GPU and model files work everywhere a catalog name does."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_files import load_scenario

GPU_FILE = '[gpu."MyLite"]\nderive_from = "Lite"\nhbm_bandwidth_multiplier = 2.0\n' \
           'source = "test: a Lite with twice the HBM bandwidth"\n'


@pytest.fixture
def gpu_file(tmp_path):
    path = tmp_path / "my_gpu.toml"
    path.write_text(GPU_FILE)
    return path


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_compare_with_a_gpu_file(tmp_path, gpu_file):
    r = run("compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx,lite-flat",
            "--gpus", f"H100-SXM,{gpu_file}", "--phase", "decode", "--out", tmp_path / "o",
            "--no-plot", "--json")
    assert r.exit_code == 0, r.output
    labels = {row["label"] for row in json.loads(r.output[:r.output.rindex("}") + 1])["rows"]}
    assert "lite-flat@MyLite" in labels and "h100-dgx@MyLite" in labels


def test_sweep_with_a_gpu_file(tmp_path, gpu_file):
    r = run("sweep", "--scenario", f"lite-flat@{gpu_file}", "--param",
            "adjust.hop_latency=0.1us:1us:2", "--models", "Llama-3-8B", "--out", tmp_path / "o",
            "--no-plot")
    assert r.exit_code == 0, r.output
    assert "lite-flat@MyLite" in r.output


def test_study_with_a_gpu_file(tmp_path, gpu_file):
    # Llama-3-70B: its fewer instances make the study's blast radius a quarter of
    # Llama-3-8B's, and the labels and GPUs read below are the same
    r = run("study", "lite-gpu", "--models", "Llama-3-70B", "--gpus", f"H100-SXM,{gpu_file}",
            "--phases", "decode", "--scenarios", "h100-dgx,lite-flat", "--no-sweep",
            "--no-plot", "--out", tmp_path / "o", "-q")
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "o" / "compare.json").read_text())["rows"]
    assert {row["label"] for row in rows} == {"h100-dgx@H100-SXM", "lite-flat@MyLite"}
    study = json.loads((tmp_path / "o" / "study.json").read_text())["rows"]
    assert {row["gpu"] for row in study} == {"H100-SXM", "MyLite"}


def test_a_scenario_file_naming_a_gpu_file(tmp_path, gpu_file):
    text = get_scenario("lite-flat").to_toml().replace('gpu = "Lite"', 'gpu = "my_gpu.toml"', 1)
    scen = tmp_path / "mine.toml"
    scen.write_text(text.replace('name = "lite-flat"', 'name = "mine"'))
    s = load_scenario(scen)
    assert (s.gpu, s.label, s.gpu_spec.hbm_bandwidth) == \
        ("MyLite", "mine@MyLite", 2 * get_scenario("lite-flat").gpu_spec.hbm_bandwidth)
    # written back, it still names the file
    assert 'gpu = "my_gpu.toml"' in s.to_toml()
    r = run("compare", "--models", "Llama-3-8B", "--scenarios", scen, "--phase", "decode",
            "--out", tmp_path / "o", "--no-plot")
    assert r.exit_code == 0, r.output
    assert "mine@MyLite" in r.output


def test_a_model_file_works_in_compare(tmp_path):
    model = tmp_path / "small.toml"
    model.write_text('[model."Small"]\nlayers = 4\nhidden = 1024\nheads = 8\nkv_heads = 8\n'
                     'ffn = 4096\nvocab = 32000\nsource = "test"\n')
    r = run("compare", "--models", model, "--scenarios", "lite-flat", "--phase", "decode",
            "--out", tmp_path / "o", "--no-plot")
    assert r.exit_code == 0, r.output
    assert "decode Small" in r.output
