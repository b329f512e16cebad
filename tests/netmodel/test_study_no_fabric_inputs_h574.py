"""``study lite-gpu --no-fabric`` with an option only the fabric parts read: --parallelism
all ran part 1 with plain TP and exit 0, --moe-model and --scenarios were checked and
dropped. Each is refused in one line, as --workers is; a bad value still says what is
wrong with it first, and --moe-model none (it skips the part --no-fabric skips) stays."""

from __future__ import annotations

import re

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

STUDY = ["study", "lite-gpu", "-q", "--no-plot", "--models", "Llama-3-8B", "--gpus", "Lite",
         "--phases", "decode", "--no-fabric"]


@pytest.mark.parametrize("extra, line", [
    (["--parallelism", "all"],
     "error: --parallelism all with --no-fabric: only the fabric parts read it (the GPUs "
     "alone search the TP degree only); drop it or --no-fabric"),
    # the default's own value, typed: still not read
    (["--parallelism", "auto"],
     "error: --parallelism auto with --no-fabric: only the fabric parts read it (the GPUs "
     "alone search the TP degree only); drop it or --no-fabric"),
    (["--moe-model", "Mixtral-8x7B"],
     "error: --moe-model Mixtral-8x7B with --no-fabric: only the fabric parts read it; drop "
     "it or --no-fabric"),
    (["--scenarios", "lite-flat,lite-ocs@Lite+BW"],
     "error: --scenarios lite-flat,lite-ocs@Lite+BW with --no-fabric: only the fabric parts "
     "read it; drop it or --no-fabric"),
    (["--parallelism", "tp", "--moe-model", "Mixtral-8x7B", "--scenarios", "lite-flat"],
     "error: --parallelism tp, --moe-model Mixtral-8x7B and --scenarios lite-flat with "
     "--no-fabric: only the fabric parts read them (the GPUs alone search the TP degree "
     "only); drop them or --no-fabric"),
])
def test_fabric_only_inputs_refused_with_no_fabric(extra, line, tmp_path):
    assert one_line_error(run_cli([*STUDY, "--out", tmp_path / "o", *extra])) == line
    assert not (tmp_path / "o").exists()


def test_a_bad_value_is_named_before_the_refusal(tmp_path):
    one_line_error(run_cli([*STUDY, "--out", tmp_path / "o", "--scenarios", "nosuch"]),
                   "unknown scenario 'nosuch'")
    one_line_error(run_cli([*STUDY, "--out", tmp_path / "o", "--moe-model", "Llama-3-8B"]),
                   "--moe-model 'Llama-3-8B' is not a mixture of experts")


def test_moe_model_none_and_the_defaults_run(tmp_path):
    r = run_cli([*STUDY, "--out", tmp_path / "o", "--moe-model", "none"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o" / "study.csv").exists()


def test_parallelism_help_says_what_reads_it():
    text = run_cli(["study", "lite-gpu", "--help"]).output
    help_ = " ".join(re.search(r"--parallelism\s+(.*?)\n  --", text, re.S).group(1).split())
    assert "The fabric parts read it; the first part (the GPUs alone) searches the TP " \
           "degree only." in help_, help_
    # the commands whose every search reads it say nothing of the kind
    text = run_cli(["compare", "--help"]).output
    assert "fabric parts read it" not in " ".join(text.split())
