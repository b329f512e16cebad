"""Hostile input, helper 233: the reliability commands' options.

(a) ``--rate CLASS=R`` and ``--repair-time CLASS=T`` given twice for one class: the later
value was taken without a word (``--repair-time host=1d --repair-time host=9d`` ran with 9
days, exit 0). Refused now, naming the class and both options' texts.

(b) ``availability --trials 1e12`` said 'must be a whole number from 1 to 1,000,000,000'
(the bound of any whole number on the command line), while the Monte Carlo takes at most
:data:`~netmodel.study.availability_mc.MAX_TRIALS` (100,000): ``--trials 500000000``, within
the range the line gave, was then refused with another. The line now states 100,000.
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

BLAST = ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--no-plot"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--no-plot", "-q"]


@pytest.mark.parametrize("command", [BLAST, AVAIL])
@pytest.mark.parametrize("option, first, second, cls", [
    ("--rate", "transceiver=1e-6", " transceiver = 2e-6", "transceiver"),
    ("--repair-time", "host=1d", "host=9d", "host"),
])
def test_a_class_given_twice_is_refused(command, option, first, second, cls):
    r = run_cli([*command, option, first, option, second])
    assert one_line_error(r) == (f"error: {option} gives class {cls} twice ({first!r} and "
                                 f"{second!r}); give each class once")


def test_two_classes_each_once_are_taken():
    r = run_cli([*BLAST, "--repair-time", "host=1d", "--repair-time", "nvswitch=2d"])
    assert r.exit_code == 0, r.output
    assert "repair (48 h)" in r.output   # the NVSwitch row's recovery


@pytest.mark.parametrize("text", ["1e12", "500000000", "100001"])
def test_trials_past_the_monte_carlos_bound_name_it(text):
    r = run_cli([*AVAIL, "--trials", text])
    assert one_line_error(r) == (f"error: --trials must be a whole number from 1 to 100,000, "
                                 f"got {text!r}")


def test_a_files_allowed_keys_stay_keys():
    """(c) The command line writes a library error's parameter names as flags; a model
    file's list of allowed keys came out with '--compute-dtype' in it, a key no model file
    takes (infer has the option --compute-dtype). The list after 'allowed: ' or 'known: '
    is left as it is; the words before it are still rewritten."""
    import click

    from netmodel.cli.refusals import flags_for_parameters

    cmd = click.Command("x", params=[click.Option(["--compute-dtype"])])
    msg = "set compute_dtype or drop it; allowed: layers, compute_dtype, weight_dtype"
    assert flags_for_parameters(msg, cmd, []) == (
        "set --compute-dtype or drop it; allowed: layers, compute_dtype, weight_dtype")
    msg = "unknown x; known: 'compute_dtype'"
    assert flags_for_parameters(msg, cmd, []) == msg


def test_the_model_file_refusal_lists_compute_dtype_as_a_key(tmp_path):
    (tmp_path / "m.toml").write_text("[model.M]\nlayers = 4\ncolour = 1\n")
    r = run_cli(["infer", "--model", "M", "--model-file", "m.toml", "--gpu", "H100-SXM",
                 "--tp", "1", "--batch", "1"], cwd=tmp_path)
    line = one_line_error(r, "error: m.toml: model 'M': unknown key(s) colour; allowed: ",
                          ", compute_dtype, ")
    assert "--compute-dtype" not in line


@pytest.mark.parametrize("text", ["3,2", "32,64", "1,0,2,4", "-32"])
def test_gpus_with_misplaced_commas_is_refused(text):
    """(d) --gpus dropped every comma: '3,2' ran 32 GPUs, '32,64' (a list, as sweep's and
    compare's --gpus take one) 3,264, refused only as not a multiple of the fabric. --gpus
    is now an alias of --cluster-gpus, which the line names (as compare's --gpu is told
    --gpus)."""
    r = run_cli([*BLAST, "--gpus", text])
    assert one_line_error(r) == (f"error: --cluster-gpus {text!r} must be a whole number of GPUs "
                                 f"(digits, thousands grouped by commas: "
                                 f"131,072)")


def test_gpus_grouped_in_thousands_is_read():
    r = run_cli([*BLAST, "--gpus", "1,024"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("h100-dgx@H100-SXM, Llama-3-70B decode: 1,024 GPUs (32 x 32)")


MODELS = "Llama-3-70B,GPT-3-175B,Llama-3.1-405B,Llama-3-8B,Mixtral-8x7B,BLOOM-176B,Llama-2-70B,DeepSeek-V3"
GPUS = "H100-SXM,Lite,B200-HGX,H200-SXM,A100-SXM-80GB,Lite+BW,Lite+MemBW,Lite+NetBW,Lite+BW+FLOPS,B300-HGX"


def test_compare_counts_its_searches_before_running(tmp_path):
    """(e) sweep refuses more than 20,000 searches up front; compare had no such count:
    300 scenario files x 10 GPUs x 8 models x 2 phases (48,000 searches) ran on past 60 s.
    Here 126 files: 126 x 10 x 8 x 2 = 20,160 searches, just over, refused before any is
    built."""
    base = run_cli(["compare", "--show", "h100-dgx"]).output
    names = []
    for i in range(126):
        (tmp_path / f"s{i}.toml").write_text(base.replace('name = "h100-dgx"', f'name = "s{i}"'))
        names.append(f"s{i}.toml")
    r = run_cli(["compare", "--no-plot", "--scenarios", ",".join(names), "--models", MODELS,
                 "--gpus", GPUS], cwd=tmp_path)
    assert one_line_error(r) == (
        "error: compare: about 20,160 searches, over the limit of 20,000; compare fewer "
        "scenarios, GPUs, models or phases, or raise NETMODEL_MAX_COMPARE_SEARCHES")


def test_run_compare_holds_the_limit_the_environment_sets(monkeypatch):
    from compute.errors import UserError
    from netmodel.study.compare import run_compare

    monkeypatch.setenv("NETMODEL_MAX_COMPARE_SEARCHES", "3")
    with pytest.raises(UserError) as info:
        run_compare(["Llama-3-8B"], ["h100-dgx", "lite-flat"], ["decode", "prefill"])
    assert str(info.value) == (
        "compare: about 4 searches, over the limit of 3; compare fewer scenarios, GPUs, "
        "models or phases, or raise NETMODEL_MAX_COMPARE_SEARCHES")


def test_the_study_counts_its_fabric_comparison_before_any_part(monkeypatch):
    """(f) study lite-gpu with 150 Lite scenario files x 9 GPUs x 8 models x 2 phases (21,616
    searches) ran the GPUs-alone part and, forked, the packed comparison before its fabric
    comparison was refused (still running at 60 s): the count is now checked with the
    other inputs, before the first part."""
    from compute.errors import UserError
    from netmodel.study.lite_gpu import run_full_study

    monkeypatch.setenv("NETMODEL_MAX_COMPARE_SEARCHES", "1")
    with pytest.raises(UserError) as info:
        run_full_study(["Llama-3-8B"], ["H100-SXM", "Lite"], ["decode"],
                       scenarios=["h100-dgx", "lite-flat"], sweep=False, paper=False,
                       reliability=False, cost=False, crossovers=False, serving=False,
                       moe=None, packed=False)
    assert str(info.value) == (
        "study: about 2 searches of the fabric comparison, over the limit of 1; give fewer "
        "scenarios, GPUs, models or phases, or raise NETMODEL_MAX_COMPARE_SEARCHES")
