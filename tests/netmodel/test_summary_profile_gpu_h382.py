"""summary.md under ``--profile`` says which of the study's GPUs and models the engine profile
was not measured on: the shipped profile is fitted on Llama-2-70B on H100-SXM, and the study
runs it unchanged on the Lite family (its per-layer and per-sequence overheads, fixed
seconds, carried over), which ``search`` and ``infer`` say in a note and the summary did
not."""

from __future__ import annotations

from types import SimpleNamespace

from compute.profiles import get_profile
from compute.roofline_options import RooflineOptions
from netmodel.study.run_words import noted_settings
from netmodel.study.summary import _notes


def _study(gpus, models=("Llama-2-70B",), profile="vllm-dgx-h100"):
    options = RooflineOptions(profile=get_profile(profile))
    rows = tuple(SimpleNamespace(gpu=g, model=m) for m in models for g in gpus)
    settings = noted_settings({"options": options.to_dict()}, options, rows)
    return SimpleNamespace(ideal=SimpleNamespace(settings=settings, networks=("ring",),
                                                 rows=rows), fabric=None)


def test_settings_name_the_profile_gpu():
    d = RooflineOptions(profile=get_profile("vllm-dgx-h100")).to_dict()
    assert d["profile"]["gpu"] == "H100-SXM"


def test_notes_name_the_gpus_a_profile_is_carried_to():
    text = "\n".join(_notes(_study(["H100-SXM", "Lite", "Lite+BW", "Lite"])))
    assert (" Profile vllm-dgx-h100 was fitted on model Llama-2-70B on GPU H100-SXM; this is "
            "model Llama-2-70B on GPUs H100-SXM, Lite, Lite+BW: an extrapolation (on Lite and "
            "Lite+BW its efficiencies and fixed overheads are H100-SXM's, carried over, not "
            "measured; ") in text
    # only its own GPU and model: nothing carried over, nothing said
    assert "extrapolation" not in "\n".join(_notes(_study(["H100-SXM"])))
    # a profile fitted on three models covers each; a fourth is an extrapolation
    own = ("Llama-3-8B", "Mixtral-8x7B")
    assert "extrapolation" not in "\n".join(_notes(_study(["H100-SXM"], own,
                                                           "vllm-h100-2024")))
    text = "\n".join(_notes(_study(["H100-SXM"], (*own, "Llama-2-70B"), "vllm-h100-2024")))
    assert ("fitted on models Llama-3-8B, Llama-3-70B, Mixtral-8x7B on GPU H100-SXM; this is "
            "models Llama-3-8B, Mixtral-8x7B, Llama-2-70B on GPU H100-SXM: an extrapolation."
            in text)
