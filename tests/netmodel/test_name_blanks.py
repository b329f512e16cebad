"""Blanks around a catalog name: the rule of a choice (compute.errors.chosen) for every
name looked up (compute.errors.find_name): blanks at either end are dropped.

Before, ``--scenario ' h100-dgx'`` and ``--fabric ' ring:n=8'`` ran while ``--model
' Llama-3-8B'`` ('unknown model ' Llama-3-8B''), ``--gpu 'H100-SXM '`` and ``--profile
' vllm-dgx-h100'`` were refused; and the scenario's and fabric's refusals quoted the value
without the blanks typed. Now each name runs as the name without its blanks (the same
output), and a name that is none is refused quoting it as typed, blanks shown. A name a
file *defines* with a blank at either end is still refused (compute.validate.name): a
reader drops the blank, so the name could not be looked up as written. Library choices
(a cost model's ``scope`` and ``ring_order``, a modelopt ``quant_algo``, a generations
file's ``default``) read by the same rule."""

from __future__ import annotations

from pathlib import Path

import pytest

import netmodel
from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli

MODELS = ("'BLOOM-176B', 'DeepSeek-V3', 'GPT-3-175B', 'Llama-2-70B', 'Llama-3-70B', "
          "'Llama-3-8B', 'Llama-3.1-405B', 'Mixtral-8x7B', 'Qwen1.5-MoE-A2.7B', "
          "'gpt-oss-120b', 'gpt-oss-20b'")
GPUS = ("'A100-SXM-80GB', 'B200-HGX', 'B300-HGX', 'GB200-NVL72', 'GB300-NVL72', 'H100-SXM', "
        "'H200-SXM', 'Lite', 'Lite+BW', 'Lite+BW+FLOPS', 'Lite+MemBW', 'Lite+NetBW'")
SCENARIOS = ("'h100-dgx', 'lite-direct', 'lite-flat', 'lite-flat-inr', 'lite-hier', "
             "'lite-ocs'")
BUILDERS = ("'fat-tree', 'flat', 'full-mesh', 'leaf-spine', 'lite-groups', 'nvl72', 'ocs', "
            "'rail-optimized', 'ring', 'single-switch', 'superpod', 'torus'")


def infer(model="Llama-3-8B", gpu="H100-SXM", *more):
    return ["infer", "--model", model, "--gpu", gpu, "--tp", "1", "--batch", "1", *more]


#: (id, argv of the name, the line the name ' nope ' gets in its place)
CASES = [
    ("--model", lambda n: infer(model=n),
     f"error: unknown model ' nope '; known: {MODELS}; or the path of a model file "
     f"(.toml or .json) or of a HuggingFace config (.json)"),
    ("--gpu", lambda n: infer(gpu=n),
     f"error: unknown GPU ' nope '; known: {GPUS}; or the path of a GPU file (.toml or .json)"),
    ("--profile", lambda n: infer("Llama-3-8B", "H100-SXM", "--profile", n),
     "error: --profile ' nope ': unknown profile ' nope '; known: 'vllm-dgx-h100', "
     "'vllm-h100-2024' (or a path to a .toml profile)"),
    ("--scenario", lambda n: ["cost", "--scenario", n, "--model", "Llama-3-8B",
                              "--max-batch", "8"],
     f"error: unknown scenario ' nope '; known: {SCENARIOS} (or a path to a .toml file; "
     f"NAME@GPU swaps the GPU)"),
    ("--workload", lambda n: ["serve", "--model", "Llama-3-8B", "--scenario", "h100-dgx",
                              "--workload", n],
     "error: --workload ' nope ': unknown workload ' nope '; known: 'coding', "
     "'conversation', or a .toml/.json file with prompt, output (and rate)"),
    ("--fabric", lambda n: ["collective", "all-reduce", "--fabric", n, "--group", "8",
                            "--size", "1MiB"],
     f"error: unknown fabric ' nope ': neither a fabric builder (known: {BUILDERS}) nor a "
     f"scenario (known: {SCENARIOS}) nor a .json/.graphml file"),
]
NAMES = {"--model": "Llama-3-8B", "--gpu": "H100-SXM", "--profile": "vllm-dgx-h100",
         "--scenario": "h100-dgx", "--workload": "coding", "--fabric": "ring:n=8"}


@pytest.mark.parametrize("option, argv, refused", CASES, ids=[c[0] for c in CASES])
def test_blanks_around_a_name_are_dropped(tmp_path, option, argv, refused):
    """``OPTION ' NAME '`` (and ``' NAME'``, ``'NAME '``) runs as ``OPTION NAME``, output
    for output; ``' nope '`` is refused in one line quoting the blanks typed."""
    name = NAMES[option]
    plain = run_cli(argv(name), tmp_path)
    assert plain.exit_code == 0, plain.output
    for padded in (f" {name}", f"{name} ", f" {name}\t"):
        blank = run_cli(argv(padded), tmp_path)
        assert blank.exit_code == 0, blank.output
        assert blank.output == plain.output
    assert one_line_error(run_cli(argv(" nope "), tmp_path)) == refused


def test_a_lookalike_with_blanks_is_still_named():
    """Round 26's look-alike question fires through the blanks: a Cyrillic Н in ``' Н100-SXM '``
    is named, and the value is quoted as typed."""
    assert one_line_error(run_cli(infer(gpu=" \u041d100-SXM "))) == (
        f"error: unknown GPU ' \u041d100-SXM '; did you mean 'H100-SXM'? (it has '\u041d', "
        f"U+041D CYRILLIC CAPITAL LETTER EN); known: {GPUS}; or the path of a GPU file "
        f"(.toml or .json)")


def test_a_name_defined_with_a_blank_is_refused(tmp_path):
    """A file's name is a definition, not a look-up: a blank at its end is refused, not
    dropped (a reader would drop it, so the name could not be given back as written)."""
    path = tmp_path / "g.toml"
    path.write_text('[gpu."Mine "]\nderive_from = "H100-SXM"\nsource = "t"\n')
    line = one_line_error(run_cli(["infer", "--model", "Llama-3-8B", "--gpu-file", str(path),
                                   "--gpu", "Mine", "--tp", "1", "--batch", "1"]))
    assert line.endswith("GPU name 'Mine ' must be non-empty text of at most 200 characters "
                         "without control or format characters (such as U+202E) or '$', and "
                         "no blank at either end"), line


def test_library_choices_with_blanks(tmp_path):
    from compute.hf_quant import _modelopt
    from netmodel.collectives.calibration_files import load_generations
    from netmodel.collectives.model import FabricCostModel
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from topologies.registry import build

    graph = build("ring:n=4")
    model = FabricCostModel(graph, scope=" collectives ", ring_order="greedy ")
    assert (model.scope, model.ring_order) == ("collectives", "greedy")
    with pytest.raises(UserError, match=r"^ring_order must be 'given' or 'greedy', got "
                                        r"'gree dy'$"):
        FabricCostModel(graph, ring_order="gree dy")
    assert ScenarioCollectives("lite-flat", scope=" every-op").scope == "every-op"
    assert _modelopt({"quant_algo": " NVFP4 "}, "c") == ("nvfp4", "fp4", "")
    with pytest.raises(UserError, match=r"^c: quant_algo 'NV FP4' is not modelled; "
                                        r"allowed: 'FP8', 'NVFP4'$"):
        _modelopt({"quant_algo": "NV FP4"}, "c")
    shipped = Path(netmodel.__file__).parent / "data" / "collective_generations.toml"
    text = shipped.read_text()
    default = "hopper"   # the shipped file's default generation
    padded = tmp_path / "g.toml"
    padded.write_text(text.replace(f'default = "{default}"', f'default = " {default} "', 1))
    assert load_generations(padded)[1] == load_generations(shipped)[1] == default
