"""The crossovers' settings carry the roofline options as a comparison's, sweep's and
study's do (``settings.options``: the profile and --overlap-collectives among them)."""

from __future__ import annotations

import json
import pathlib

import pytest

from compute.profiles import get_profile
from compute.roofline_options import RooflineOptions

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def baseline_only():
    from netmodel.study.compare import run_compare

    return run_compare(["Llama-3-8B"], ["h100-dgx"], ["decode"])


@pytest.mark.parametrize("options", [None, RooflineOptions(overlap_collectives=True),
                                     RooflineOptions(profile=get_profile("vllm-dgx-h100"))],
                         ids=["roofline", "overlap", "profile"])
def test_crossovers_settings_carry_the_options(baseline_only, options):
    from netmodel.study.crossovers import find_crossovers

    settings = find_crossovers(baseline_only, options=options, latency=False).settings
    want = (options or RooflineOptions()).to_dict()
    assert settings["options"] == want
    assert settings["options"]["overlap_collectives"] is (options is not None
                                                          and options.overlap_collectives)
    assert ("profile" in settings["options"]) is (options is not None
                                                 and options.profile is not None)
    # as the comparison's, in the JSON written
    assert json.loads(find_crossovers(baseline_only, options=options, latency=False)
                      .to_json())["settings"]["options"]["mode"] == "overlap"


def test_shipped_crossovers_json_has_the_studys_options():
    """docs/figures' crossovers.json and study.json are one run's: the same options."""
    figures = ROOT / "docs" / "figures"
    cross = json.loads((figures / "crossovers.json").read_text())["settings"]
    for name in ("study.json", "compare.json", "sweep.json"):
        assert cross["options"] == json.loads((figures / name).read_text())["settings"]["options"]
