"""A profile used on a model or GPU it was not fitted on says so, in the text and in the JSON.

The shipped profiles list what they were fitted on in their ``[[measurement]]`` tables:
vllm-dgx-h100 six steps of Llama-2-70B on H100-SXM (Splitwise), vllm-h100-2024 one decode
step each of Llama-3-8B, Llama-3-70B and Mixtral-8x7B on H100-SXM (vLLM's performance CI).
Before, infer, search, compare, sweep and study applied vllm-dgx-h100 to Llama-3-70B on its
own GPU without a word, and no ``--json`` document said it anywhere."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from compute.profiles import EngineProfile, get_profile
from netmodel.cli.main import cli
from netmodel.study.run_words import profile_note

ONE = "profile vllm-dgx-h100 was fitted on model Llama-2-70B on GPU H100-SXM; this is "
THREE = ("profile vllm-h100-2024 was fitted on models Llama-3-8B, Llama-3-70B, Mixtral-8x7B "
         "on GPU H100-SXM; this is ")
CARRIED = ("(on {g} its efficiencies and fixed overheads are H100-SXM's, carried over, not "
           "measured; netmodel calibrate fits a profile from measurements on {g})")


def _run(*args) -> str:
    out = CliRunner().invoke(cli, list(args))
    assert out.exit_code in (0, 3), out.output
    return out.output


def _json(*args) -> dict:
    return json.loads(_run(*args, "--json"))


def test_the_shipped_profiles_list_the_models_and_gpus_they_were_fitted_on():
    assert get_profile("vllm-dgx-h100").fitted_models == ("Llama-2-70B",)
    assert get_profile("vllm-h100-2024").fitted_models == ("Llama-3-8B", "Llama-3-70B",
                                                          "Mixtral-8x7B")
    assert get_profile("vllm-dgx-h100").fitted_gpus == ("H100-SXM",)
    assert get_profile("vllm-h100-2024").fitted_gpus == ("H100-SXM",)


def test_a_profile_without_measurements_is_judged_by_its_gpu_alone():
    hand = EngineProfile("hand", gpu="H100-SXM", layer_overhead_s=1e-4)
    assert profile_note(hand, ["Llama-3-8B"], ["H100-SXM"]) == ""
    assert profile_note(hand, ["Llama-3-8B"], ["B200-HGX"]) == (
        "profile hand was fitted on GPU H100-SXM; this is model Llama-3-8B on GPU B200-HGX: "
        "an extrapolation " + CARRIED.format(g="B200-HGX"))
    assert profile_note(EngineProfile("bare"), ["Llama-3-8B"], ["B200-HGX"]) == ""


def test_infer_notes_another_model_in_its_text_and_json():
    base = ["infer", "--gpu", "H100-SXM", "--tp", "8", "--batch", "8", "--phase", "decode",
            "--context", "1024", "--profile", "vllm-dgx-h100"]
    note = ONE + "model Llama-3-70B on GPU H100-SXM: an extrapolation"
    assert f"\nnote: {note}\n" in _run(*base, "--model", "Llama-3-70B")
    assert _json(*base, "--model", "Llama-3-70B")["profile_note"] == note
    own = _json(*base, "--model", "Llama-2-70B")
    assert own["profile"] == "vllm-dgx-h100" and "profile_note" not in own
    assert "extrapolation" not in _run(*base, "--model", "Llama-2-70B")
    assert "profile_note" not in _json(*base[:-2], "--model", "Llama-3-70B")   # the roofline


def test_search_notes_model_and_gpu_together():
    doc = _json("search", "--model", "Llama-3-8B", "--gpu", "B200-HGX", "--phase", "decode",
                "--profile", "vllm-h100-2024")
    assert doc["profile_note"] == (THREE + "model Llama-3-8B on GPU B200-HGX: an "
                                   "extrapolation " + CARRIED.format(g="B200-HGX"))
    own = _json("search", "--model", "Mixtral-8x7B", "--gpu", "h100-sxm", "--phase", "decode",
                "--profile", "vllm-h100-2024")
    assert "profile_note" not in own


def test_compare_and_sweep_carry_it_in_their_settings():
    args = ["--scenarios", "h100-dgx", "--phase", "decode", "--profile", "vllm-h100-2024"]
    note = THREE + "model Llama-2-70B on GPU H100-SXM: an extrapolation"
    assert _json("compare", "--models", "Llama-2-70B", *args)["settings"]["profile_note"] \
        == note
    assert f"\nnote: {note}\n" in _run("compare", "--models", "Llama-2-70B", *args)
    assert "profile_note" not in _json("compare", "--models", "Llama-3-8B",
                                       *args)["settings"]
    sweep = _json("sweep", "--scenarios", "h100-dgx", "--param", "adjust.hop_latency=0.1us,1us",
                  "--models", "Llama-3-70B", "--gpus", "B200-HGX", "--profile",
                  "vllm-h100-2024")
    # --gpus B200-HGX: the baseline h100-dgx also runs on its own GPU
    assert sweep["settings"]["profile_note"] == (
        THREE + "model Llama-3-70B on GPUs H100-SXM, B200-HGX: an extrapolation "
        + CARRIED.format(g="B200-HGX"))


def test_study_says_it_in_its_summary_and_json(tmp_path: Path):
    out = tmp_path / "study"
    _run("study", "lite-gpu", "--out", str(out), "--models", "Llama-2-70B", "--gpus",
         "H100-SXM", "--phases", "decode", "--networks", "ring", "--no-fabric", "--profile",
         "vllm-dgx-h100")
    assert "profile_note" not in json.loads((out / "study.json").read_text())["settings"]
    out = tmp_path / "study2"
    _run("study", "lite-gpu", "--out", str(out), "--models", "Llama-3-8B", "--gpus",
         "H100-SXM", "--phases", "decode", "--networks", "ring", "--no-fabric", "--profile",
         "vllm-dgx-h100")
    note = ONE + "model Llama-3-8B on GPU H100-SXM: an extrapolation"
    assert json.loads((out / "study.json").read_text())["settings"]["profile_note"] == note
    assert f" P{note[1:]}." in (out / "summary.md").read_text()
