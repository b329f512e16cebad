"""docs/economics.md says what the study's cost.json holds: its top-level keys are the ones
the page names, those of the shipped docs/figures/cost.json (the page once said the yield
curves and the H100 and Lite packages were in it; they are only drawn)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_cost_json_keys_are_the_documented_ones():
    text = " ".join((ROOT / "docs" / "economics.md").read_text().split())
    said = re.search(r"writes `cost\.json` \((.*?)\) and two figures", text)
    assert said, "the study part's sentence on cost.json moved"
    named = set(re.findall(r"`(\w+)`:", said.group(1)))
    shipped = set(json.loads((ROOT / "docs" / "figures" / "cost.json").read_text()))
    assert named == shipped
