"""docs/collectives.md writes out ``FabricCostModel``'s whole signature in prose; it names
every parameter the class takes, in order (it lacked ``tuner`` once the tuner plugins came)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from netmodel.collectives.model import FabricCostModel

ROOT = Path(__file__).resolve().parent.parent


def test_collectives_page_names_every_fabric_cost_model_parameter():
    text = " ".join((ROOT / "docs" / "collectives.md").read_text().split())
    written = re.search(r"`FabricCostModel\((graph,[^`]*)\)`", text)
    assert written, "the page no longer writes the signature out"
    names = [p.split("=")[0].strip() for p in written.group(1).split(",")]
    names = [n for n in names if n and n != "*"]
    code = [n for n in inspect.signature(FabricCostModel).parameters]
    assert names == code
