"""``netmodel study lite-gpu`` with a scenario whose fabric is a saved file (h291).

A scenario file may name a saved fabric (``fabric = "FILE"``, h288), whose GPUs are part of
the graph: it cannot be swapped onto another GPU. The study swapped every scenario not on the
baseline GPU onto each Lite GPU of the run (:func:`netmodel.study.lite_gpu.fabric_scenarios`),
so ``--scenarios mine.toml`` was refused ("runs on the fabric file 'ring.json', whose GPUs are
'Lite', not 'Lite+NetBW'"). Now such a scenario runs with its own GPU alone (even where
``--gpus`` lacks it), the shipped ones are still swapped onto every Lite GPU, and the
summary's notes say which scenario ran on its own GPU alone. The study's row of it is the row
``netmodel compare`` gives the same scenario file.
"""

from __future__ import annotations

import csv
import io

import pytest

from tests.netmodel.cli_helpers import run_cli
from tests.netmodel.scenario_helpers import export_fabric, write_scenario

#: Every part but the fabric comparison off, one model and phase: the run stays short.
LEAN = ["--models", "Llama-3-8B", "--phases", "decode", "--networks", "ring", "--no-sweep",
        "--no-paper", "--no-reliability", "--no-cost", "--no-crossovers", "--no-serving",
        "--no-packed", "--moe-model", "none", "--no-plot", "-q"]


@pytest.fixture
def mine(tmp_path):
    export_fabric(tmp_path, "ring:n=8,gpu=Lite", "ring.json")
    return write_scenario(tmp_path, "mine", "Lite", "ring.json", sources="the file",
                          description="8 Lites in a ring read from a file")


def test_a_file_fabric_scenario_runs_with_its_own_gpu_alone(mine):
    from netmodel.study.defaults import DEFAULT_GPUS
    from netmodel.study.lite_gpu import fabric_scenarios
    from netmodel.study.scenario_catalog import get_scenario

    lites = [g for g in DEFAULT_GPUS if g.startswith("Lite")]
    assert len(lites) >= 2   # a swap onto each would have been tried
    scens = fabric_scenarios(DEFAULT_GPUS, [str(mine), "lite-flat"])
    labels = [s.label for s in scens]
    assert labels == ["h100-dgx@H100-SXM", "mine@Lite",
                      *(f"lite-flat@{g}" for g in lites)]
    assert [s.fixed_gpu for s in scens] == [False, True] + [False] * len(lites)
    # its own GPU even where the run lacks it (the others run on the GPUs given)
    assert [s.label for s in fabric_scenarios(["H100-SXM", "Lite+BW"], [str(mine)])] \
        == ["h100-dgx@H100-SXM", "mine@Lite"]
    # what the swap refuses, still refused where a swap is asked for by name
    with pytest.raises(Exception, match="runs on the fabric file 'ring.json'"):
        get_scenario(f"{mine}@Lite+BW")


def test_the_study_runs_it_and_says_so(mine, tmp_path):
    out = tmp_path / "out"
    r = run_cli(["study", "lite-gpu", "--scenarios", mine, *LEAN, "--out", out])
    assert r.exit_code == 0, (r.output, r.exception)
    rows = list(csv.DictReader(io.StringIO((out / "compare.csv").read_text())))
    assert [(x["label"], x["gpu"]) for x in rows] == [("h100-dgx@H100-SXM", "H100-SXM"),
                                                      ("mine@Lite", "Lite")]
    ours = next(x for x in rows if x["scenario"] == "mine")
    assert ours["fabric"] == "ring.json"
    notes = (out / "summary.md").read_text()
    assert ("- Run with its own GPU alone, not swapped onto the study's other GPUs (the GPUs "
            "of a saved fabric are part of its graph): mine (Lite, fabric ring.json).") in notes
    # the row compare gives the same scenario file
    r = run_cli(["compare", "--scenarios", mine, "--models", "Llama-3-8B", "--phases",
                 "decode", "--no-plot", "--out", tmp_path / "cmp"])
    assert r.exit_code == 0, (r.output, r.exception)
    ref = next(x for x in csv.DictReader(io.StringIO(
        (tmp_path / "cmp" / "compare.csv").read_text())) if x["scenario"] == "mine")
    for key in ("tp", "batch", "latency_s", "tokens_per_s", "tokens_per_s_per_sm"):
        assert ours[key] == ref[key], key
    assert float(ours["tokens_per_s_per_sm"]) > 0
