"""availability's and blast-radius's cluster size is ``--cluster-gpus N`` (h256).

Everywhere else in the CLI ``--gpus`` (and its singular ``--gpu``) names GPUs: compare,
sweep, study lite-gpu and costs take ``--gpus H100-SXM,Lite``. These two commands took
``--gpus N`` as a count, so ``availability --scenario lite-flat --gpus H100-SXM`` (a user
asking for H100s) was told only that it must be a whole number. The help now shows
``--cluster-gpus N``; ``--gpus N`` still works, an alias of the one option (not a second,
hidden one: an ``--out`` folder's manifest records the run the same under either
spelling); a GPU name given as the size is told how these commands take a GPU: in the
scenario, ``NAME@GPU``.
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

BLAST = ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--no-plot"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--no-plot",
         "-q", "--trials", "20"]


@pytest.mark.parametrize("command", [BLAST, AVAIL])
def test_cluster_gpus_is_the_cluster_size_and_gpus_still_works(command):
    new = run_cli([*command, "--cluster-gpus", "64"])
    old = run_cli([*command, "--gpus", "64"])
    assert new.exit_code == old.exit_code == 0, new.output
    assert new.output == old.output
    # 64 GPUs = 2 copies of h100-dgx's 32; TP 4: 16 instances
    assert "64 GPUs" in new.output.splitlines()[0]
    assert "16 instances" in new.output.splitlines()[0]


@pytest.mark.parametrize("command", [BLAST, AVAIL])
def test_the_help_shows_cluster_gpus_not_gpus(command):
    r = run_cli([command[0], "--help"])
    assert r.exit_code == 0
    assert "--cluster-gpus N" in r.output
    assert "--gpus" not in r.output.replace("also --gpus N", "")


def test_a_gpu_name_as_the_size_is_told_to_name_it_in_the_scenario():
    r = run_cli(["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-70B",
                 "--gpus", "H100-SXM"])
    assert one_line_error(r) == (
        "error: --cluster-gpus 'H100-SXM' must be a whole number of GPUs (digits, thousands grouped "
        "by commas: 131,072); it is the cluster size here: run on H100-SXM "
        "with --scenario lite-flat@H100-SXM")
    r = run_cli([*BLAST, "--cluster-gpus", "Lite,H100-SXM"])
    assert one_line_error(r).endswith("run on Lite with --scenario h100-dgx@Lite")
    # a plain non-number is told only what is allowed
    r = run_cli([*BLAST, "--cluster-gpus", "abc"])
    assert one_line_error(r) == ("error: --cluster-gpus 'abc' must be a whole number of GPUs "
                                 "(digits, thousands grouped by commas: "
                                 "131,072)")


def test_either_spelling_is_recorded_as_the_same_run(tmp_path):
    # h256 took --gpus as a second, hidden option: the manifest of '--gpus 64' recorded
    # gpus: '64', cluster-gpus: null, and that of '--cluster-gpus 64' the reverse
    runs = []
    for flag in ("--gpus", "--cluster-gpus"):
        out = tmp_path / flag.strip("-")
        assert run_cli([*BLAST, flag, "64", "--out", str(out)]).exit_code == 0
        runs.append(json.loads((out / "netmodel-manifest.json").read_text())["run"])
    assert runs[0] == runs[1]
    assert runs[0]["cluster-gpus"] == "64" and "gpus" not in runs[0]


@pytest.mark.parametrize("flag", ["--cluster-gpus", "--gpus"])
def test_zero_names_the_option(flag):
    # the library's line 'gpus must be a whole number >= 1, got 0' named no option
    assert one_line_error(run_cli([*BLAST, flag, "0"])) == (
        "error: --cluster-gpus '0' must be at least 1 GPU: a multiple of the scenario's fabric "
        "(leave it out for one copy)")
