"""docs/study.md's scenario key ``tuner``: every name a scenario takes, each said as it is.

The page said ``"none"`` was "NCCL's own tuner" and that the names come from the plugin
data file; since the tuner ``nccl`` (NCCL's own tuner, emulated) was added, ``none`` is the
model's own ``auto`` (the fastest pair by the model's costs, as tuner_plugin.tuner_names
says) and ``nccl`` is a name of its own, not a table of the file.
"""

import re
from pathlib import Path

from netmodel.collectives.tuner_plugin import NCCL_TUNER, NO_TUNER, tuner_names

STUDY = Path(__file__).resolve().parent.parent / "docs" / "study.md"


def _tuner_sentence() -> str:
    text = " ".join(STUDY.read_text().split())
    start = text.index('`tuner = "')
    return text[start:text.index("lets a tuner", start)]


def test_every_tuner_name_is_said():
    said = _tuner_sentence()
    names = set(tuner_names())
    assert {NO_TUNER, NCCL_TUNER} <= names
    for name in (NO_TUNER, NCCL_TUNER):
        assert f'`"{name}"`' in said, name
    # the plugin tables come from the data file: each one is named as the example names one
    for name in names - {NO_TUNER, NCCL_TUNER}:
        assert ":" in name
    assert "collective_tuner_plugins.toml" in said


def test_none_is_the_models_auto_and_nccl_is_nccls_tuner():
    said = _tuner_sentence()
    none_part = said[said.index(f'`"{NO_TUNER}"`'):said.index(f'`"{NCCL_TUNER}"`')]
    assert "NCCL's own tuner" not in none_part
    assert re.search(r"model's own `auto`", none_part)
    nccl_part = said[said.index(f'`"{NCCL_TUNER}"`'):]
    assert "NCCL's own tuner, emulated" in nccl_part
