"""crossovers.json records the SLO and serving.json the whole roofline options, as
compare, sweep and the study record them: ``settings.slo`` (compute.phases.Slo.to_dict)
and ``settings.options`` (RooflineOptions.to_dict)."""

from __future__ import annotations

import json
from pathlib import Path

from compute.phases import Slo
from compute.roofline_options import RooflineOptions
from netmodel.study.compare import run_compare
from netmodel.study.crossovers import find_crossovers
from netmodel.study.serving import serve

FIGURES = Path(__file__).resolve().parents[2] / "docs" / "figures"


def test_slo_to_dict_is_seconds():
    assert Slo(ttft=2.0, tbt=0.1).to_dict() == {"ttft_s": 2.0, "tbt_s": 0.1}


def test_crossovers_record_the_slo():
    slo = Slo(ttft=2.0, tbt=0.1)
    fab = run_compare(["Llama-3-8B"], ["h100-dgx", "lite-flat"], ["decode"], slo=slo)
    found = find_crossovers(fab, slo=slo, latency=False)
    assert found.settings["slo"] == {"ttft_s": 2.0, "tbt_s": 0.1}
    assert found.settings["slo"] == fab.settings["slo"]
    plain = find_crossovers(run_compare(["Llama-3-8B"], ["h100-dgx", "lite-flat"],
                                        ["decode"]), latency=False)
    assert plain.settings["slo"] == {"ttft_s": 1.0, "tbt_s": 0.05}   # compute's defaults


def test_serving_records_the_options():
    on = serve("Llama-3-70B", "lite-flat", max_batch=8,
               options=RooflineOptions(overlap_collectives=True, flops_efficiency=0.5))
    assert on.settings["options"] == RooflineOptions(overlap_collectives=True,
                                                     flops_efficiency=0.5).to_dict()
    assert on.settings["options"]["flops_efficiency"] == 0.5
    off = serve("Llama-3-70B", "lite-flat", max_batch=8)
    assert off.settings["options"] == RooflineOptions().to_dict()
    assert off.settings["slo"] == {"ttft_s": 1.0, "tbt_s": 0.05}


def test_shipped_figures_say_them_alike():
    study = json.loads((FIGURES / "study.json").read_text())["settings"]
    said = {name: [json.loads((FIGURES / name).read_text())["settings"]]
            for name in ("crossovers.json", "compare.json", "sweep.json")}
    said["serving.json"] = [r["settings"] for r in
                            json.loads((FIGURES / "serving.json").read_text())["serving"]]
    for name, each in said.items():
        assert each, name
        for settings in each:
            assert settings["slo"] == study["slo"], name
            assert settings["options"] == study["options"], name
