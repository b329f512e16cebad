"""What netmodel/study/scenarios.py says of a scenario's default tuner.

Since 56f2e77 the tuner 'none' (NO_TUNER, the default, which None is read as) is no tuner:
the model's own auto, the fastest of its own costs; 'nccl' emulates NCCL's tuner. The
Scenario.tuner attribute's doc comment and __post_init__'s comment still called 'none'
"NCCL's own tuner", the name of what 'nccl' emulates.
"""

from __future__ import annotations

import inspect

from netmodel.collectives.tuner_plugin import NCCL_TUNER, NO_TUNER, get_tuner
from netmodel.study import scenario_catalog, scenarios


def _doc_comment(source: str, attribute: str) -> str:
    """The ``#:`` lines just above ``attribute``'s annotation in ``source``."""
    lines = source.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{attribute}:"))
    above = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith("#:"):
            break
        above.append(line.strip()[2:].strip())
    return " ".join(reversed(above))


def test_the_default_tuner_is_not_called_nccls_own():
    source = inspect.getsource(scenarios.Scenario)
    assert "NCCL's own tuner" not in source
    doc = _doc_comment(source, "tuner")
    assert "the model's own ``auto``" in doc and f'``"{NCCL_TUNER}"`` emulates' in doc


def test_what_the_words_say_holds():
    """None is read as 'none', and 'none' and 'nccl' are different tuners."""
    s = scenario_catalog.shipped_scenarios()["lite-flat"]
    assert s.tuner == NO_TUNER == "none"
    assert type(get_tuner(NO_TUNER)) is not type(get_tuner(NCCL_TUNER))
