"""Hostile input, helper 265: ``--fabric SPEC@GPU`` on a spec that already names its GPU.

A builder takes its GPU as a parameter, so ``NAME:...@GPU`` is refused with the spec to give
instead (tests/netmodel/test_hostile_round8.py). Where the spec already named one,
``ring:n=8,gpu=H100-SXM@A100-SXM-80GB`` (blast-radius, availability, collective, costs,
topology), the advice appended a second: '(ring:n=8,gpu=H100-SXM,gpu=A100-SXM-80GB)',
itself refused ("spec parameter 'gpu' is given twice"). Now the GPU after '@' takes the
place of the one the spec names.
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli


@pytest.mark.parametrize("ref,advice", [
    ("ring:n=8,gpu=H100-SXM@A100-SXM-80GB", "(ring:n=8,gpu=A100-SXM-80GB)"),
    ("ring:gpu=H100-SXM,n=8@A100-SXM-80GB", "(ring:n=8,gpu=A100-SXM-80GB)"),
    ("lite-groups:lite=Lite,lites=4@Lite+BW", "(lite-groups:lites=4,lite=Lite+BW)"),
    ("ring:n=8@A100-SXM-80GB", "(ring:n=8,gpu=A100-SXM-80GB)"),   # unchanged: none named
])
@pytest.mark.parametrize("cmd", [["blast-radius", "--model", "Llama-3-8B", "--fabric"],
                                 ["topology", "show"]])
def test_the_advice_replaces_the_gpu_the_spec_names(cmd, ref, advice):
    one_line_error(run_cli(cmd + [ref]), "'@GPU' re-types a scenario", advice)
    fixed = advice.strip("()")
    assert fixed.count("gpu=") + fixed.count("lite=") == 1
    assert run_cli(["topology", "show", fixed]).exit_code == 0   # the advice works
