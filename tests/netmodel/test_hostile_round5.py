"""Hostile input on this session's new surfaces (round 5), through the CLI: one line naming the
value and what is allowed, exit status 2, no traceback. Compute-level cases:
tests/compute/test_hostile_round5_*.py."""
import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from tests.compute.test_hostile_round5_dies import gpu_file


def run(*args, env=None):
    return CliRunner().invoke(cli, list(args), env=env)


def refused(r, needle):
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and "Traceback" not in r.output, r.output
    assert needle in r.output, r.output


# ---------------------------------------------------------------- sweep link limit

@pytest.mark.parametrize("value", ["abc", "-1", "nan", "1e400", "0", "1e3.5", "0x10",
                                   "9" * 40])
def test_bad_sweep_link_limit_is_said_as_such(value):
    # before: 'no point of the sweep can be built: environment variable ...', after every
    # point's fabric was built (each point caught the bad setting as a refused point)
    r = run("sweep", "--scenario", "lite-ocs", "--param", "adjust.hop_latency=1us,2us",
            "--phase", "decode", env={"NETMODEL_MAX_SWEEP_LINKS": value})
    refused(r, "environment variable NETMODEL_MAX_SWEEP_LINKS=")
    assert r.output.startswith("error: environment variable NETMODEL_MAX_SWEEP_LINKS=")
    assert "must be a whole number from 1 to 1e30 (default " in r.output


def test_bad_sweep_link_limit_builds_no_fabric(monkeypatch):
    import netmodel.study.scenario_collectives as fs
    import netmodel.study.scenario_fabric as sf
    from compute.errors import UserError
    from netmodel.study.sweep import run_sweep

    def no_build(*a, **k):
        raise AssertionError("a fabric was built before the setting was read")

    monkeypatch.setattr(fs, "build_fabric", no_build)   # ScenarioCollectives'
    monkeypatch.setattr(sf, "build_fabric", no_build)   # sweep's own
    monkeypatch.setenv("NETMODEL_MAX_SWEEP_LINKS", "abc")
    with pytest.raises(UserError, match="^environment variable NETMODEL_MAX_SWEEP_LINKS='abc'"):
        run_sweep(["lite-ocs"], ["adjust.hop_latency=1us,2us"], models=["Llama-3-8B"],
                  phases=["decode"])


# ---------------------------------------------------------------- die tables through cost

@pytest.mark.parametrize("name", ["H100-SXM@x", "Lite@0.5x"])
def test_cost_refuses_a_gpu_named_like_a_clocked_one(tmp_path, name):
    # before: exit 0, priced as the H100's die / a Lite slice, its own die table ignored
    f = gpu_file(tmp_path, name)
    refused(run("cost", "--scenario", f"h100-dgx@{f}", "--model", "Llama-3-70B",
                "--phase", "decode"), f"GPU name {name!r} must not contain '@'")


@pytest.mark.parametrize("area", ["80000", "1e30"])
def test_cost_names_the_file_of_a_die_beyond_the_wafer(tmp_path, area):
    f = gpu_file(tmp_path, f"R5-cli-{area}", area=(area, "mm^2"))
    r = run("cost", "--scenario", f"h100-dgx@{f}", "--model", "Llama-3-70B",
            "--phase", "decode")
    refused(r, f"{f}: GPU 'R5-cli-{area}' die: die area")
    assert "is larger than the usable wafer (70686 mm^2 on a 300 mm wafer)" in r.output


# ---------------------------------------------------------------- sliding-window HF fields

def _hf(tmp_path, **over):
    import json

    from tests.compute.test_sliding_window import GEMMA2_9B
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**GEMMA2_9B, **over}))
    return path


@pytest.mark.parametrize("entry", ["linear_attention", "chunked_attention", "banana"])
def test_models_refuses_unmodelled_layer_types(tmp_path, entry):
    # before: exit 0, the layer read as a full-attention one
    f = _hf(tmp_path, layer_types=[entry, "sliding_attention"] * 21)
    refused(run("models", "--hf-config", str(f)),
            f"layer_types entry {entry!r} is not modelled; known: 'attention', "
            f"'full_attention', 'sliding_attention'")


def test_models_reads_window_zero_as_none(tmp_path):
    # before: exit 2, "sliding_layers (21) needs sliding_window"
    import json
    r = run("models", "--hf-config", str(_hf(tmp_path, sliding_window=0)), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert (d["sliding_window"], d["sliding_layers"]) == (0, 0)
