"""A fabric spec whose GPU is named at another clock (``H100-SXM@0.5x``).

``--fabric NAME:...@GPU`` is refused with the spec to give instead (a builder takes its GPU
as a parameter; tests/netmodel/test_hostile_round8.py, test_fabric_at_gpu_hint_h265.py).
The text after '@' was taken for a GPU even where it is a clock ratio or inside a bracketed
value: ``ring:n=4,gpu=H100-SXM@0.5x`` was advised '(ring:n=4,gpu=0.5x)' and
``ring:n=4,gpu=[H100-SXM@0.5x]`` '(ring:n=4,gpu=0.5x])', both refused in turn. Now a clock
ratio is said to be one, and an '@' inside brackets is left to the value it is in (the
builder names the GPU it does not know).
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

CMDS = [["topology", "show"], ["collective", "all-reduce", "--fabric"]]


@pytest.mark.parametrize("cmd", CMDS)
@pytest.mark.parametrize("ratio", ["0.5x", "2x"])
def test_a_gpu_at_another_clock_is_said_to_be_one(cmd, ratio):
    ref = f"ring:n=4,gpu=H100-SXM@{ratio}"
    line = one_line_error(run_cli(cmd + [ref]))
    # an option: its flag; the argument: the words 'fabric' (the text typed after either)
    said = f"--fabric {ref!r}: " if cmd[-1] == "--fabric" else f"fabric {ref!r}: "
    assert line == (f"error: {said}'@{ratio}' marks a GPU at another clock, which "
                    f"fabric builder 'ring' does not take; give a catalog GPU or a GPU file "
                    f"as its gpu (e.g. gpu=H100-SXM)")


@pytest.mark.parametrize("cmd", CMDS)
def test_an_at_inside_brackets_is_the_values(cmd):
    one_line_error(run_cli(cmd + ["ring:n=4,gpu=[H100-SXM@0.5x]"]),
                   "ring: gpu: unknown GPU 'H100-SXM@0.5x'")


@pytest.mark.parametrize(("ref", "advice"), [
    ("ring:n=4@Lite", "(ring:n=4,gpu=Lite)"),
    ("ring:n=4,gpu=H100-SXM@A100-SXM-80GB", "(ring:n=4,gpu=A100-SXM-80GB)"),
    ("ring:n=4@x", "(ring:n=4,gpu=x)"),   # not a ratio: a GPU's name, advised as before
])
def test_a_gpu_after_at_is_still_advised(ref, advice):
    one_line_error(run_cli(["topology", "show", ref]), "'@GPU' re-types a scenario", advice)
