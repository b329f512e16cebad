"""The study says, as ``infer`` does, when its engine profile was fitted with other
collectives than its first part's networks cost (the profile's fitted overheads absorbed
those, so the run does not reproduce its fit). Before, ``infer --profile vllm-dgx-h100``
noted that the profile was fitted with scenario h100-dgx's collectives, not the ring it ran;
``study lite-gpu --profile vllm-dgx-h100 --networks bound`` (and ``run_lite_gpu_study``)
said nothing. One helper (``run_words.collectives_note``) says it for both."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from compute.hardware import get_gpu
from compute.profiles import get_profile
from compute.roofline_options import RooflineOptions
from netmodel.cli.main import cli
from netmodel.study.lite_gpu import run_lite_gpu_study
from netmodel.study.run_words import profile_line, ring_description

FITTED = "profile vllm-dgx-h100 was fitted with collectives scenario h100-dgx, not this run's "
BOUND = "lower bound over scale-up switch algorithms (network bound)"
RING = "ring alpha-beta over scale-up bandwidth (network ring)"
OPTIONS = RooflineOptions(profile=get_profile("vllm-dgx-h100"))


def _part(network: str, options: RooflineOptions = OPTIONS):
    return run_lite_gpu_study(["Llama-3-8B"], ["H100-SXM"], ["decode"], network=network,
                              options=options)


def test_infer_says_it_as_before():
    line = profile_line(get_profile("vllm-dgx-h100"), ring_description(get_gpu("H100-SXM")))
    assert line.splitlines()[-1] == (
        "note: " + FITTED + "ring alpha-beta over scale-up bandwidth; give the same "
        "scenario or fabric to reproduce its fit")


def test_each_part_and_their_sum_say_the_networks_not_fitted_with():
    bound, ring, ideal = _part("bound"), _part("ring"), _part("ideal")
    assert bound.settings["profile_collectives_note"] == FITTED + BOUND
    assert ring.settings["profile_collectives_note"] == FITTED + RING
    # free collectives are no model a profile is fitted with; the roofline has no profile
    assert "profile_collectives_note" not in ideal.settings
    assert "profile_collectives_note" not in _part("bound", RooflineOptions()).settings
    assert (ideal + bound + ring).settings["profile_collectives_note"] == \
        FITTED + BOUND + " and " + RING
    # a profile fitted on the ring: only the bound is noted
    own = replace(get_profile("vllm-dgx-h100"), name="mine",
                  collectives="ring alpha-beta over scale-up bandwidth")
    options = RooflineOptions(profile=own)
    assert "profile_collectives_note" not in _part("ring", options).settings
    assert _part("bound", options).settings["profile_collectives_note"] == (
        "profile mine was fitted with collectives ring alpha-beta over scale-up bandwidth, "
        "not this run's " + BOUND)


def test_the_study_command_says_it_in_its_text_summary_and_json(tmp_path: Path):
    out = tmp_path / "study"
    args = ["study", "lite-gpu", "--out", str(out), "--models", "Llama-3-8B", "--gpus",
            "H100-SXM", "--phases", "decode", "--networks", "bound,ideal", "--no-fabric",
            "--quiet", "--no-plot", "--profile", "vllm-dgx-h100"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    note = FITTED + BOUND
    assert r.stdout.count("fitted with collectives") == 1
    assert f"note: {note}\n" in r.stdout
    assert json.loads((out / "study.json").read_text())["settings"][
        "profile_collectives_note"] == note
    assert f" P{note[1:]}." in (out / "summary.md").read_text()
    r = CliRunner().invoke(cli, [*args[:3], str(tmp_path / "j"), *args[4:], "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["study"]["settings"]["profile_collectives_note"] == note
