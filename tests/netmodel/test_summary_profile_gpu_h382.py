"""summary.md under ``--profile`` says which of the study's GPUs the engine profile was not
measured on: the shipped profile is fitted on H100-SXM, and the study runs it unchanged on
the Lite family (its per-layer and per-sequence overheads, fixed seconds, carried over),
which ``search`` and ``infer`` say in a note and the summary did not."""

from __future__ import annotations

from types import SimpleNamespace

from compute.profiles import get_profile
from compute.roofline_options import RooflineOptions
from netmodel.study.summary import _notes


def _study(profile, gpus):
    rows = tuple(SimpleNamespace(gpu=g) for g in gpus)
    return SimpleNamespace(ideal=SimpleNamespace(settings={"options": {"profile": profile}},
                                                 networks=("ring",), rows=rows), fabric=None)


def test_settings_name_the_profile_gpu():
    d = RooflineOptions(profile=get_profile("vllm-dgx-h100")).to_dict()
    assert d["profile"]["gpu"] == "H100-SXM"


def test_notes_name_the_gpus_a_profile_is_carried_to():
    profile = RooflineOptions(profile=get_profile("vllm-dgx-h100")).to_dict()["profile"]
    text = "\n".join(_notes(_study(profile, ["H100-SXM", "Lite", "Lite+BW", "Lite"])))
    assert (" Fitted on H100-SXM, it runs unchanged on Lite, Lite+BW: there its efficiencies "
            "and fixed overheads are H100-SXM's, carried over, not measured") in text
    # only its own GPU: nothing carried over, nothing said
    assert "carried over" not in "\n".join(_notes(_study(profile, ["H100-SXM"])))
    # a profile fitted on two GPUs covers both
    both = {**profile, "gpu": "H100-SXM, Lite"}
    text = "\n".join(_notes(_study(both, ["H100-SXM", "Lite", "Lite+BW"])))
    assert "it runs unchanged on Lite+BW:" in text
