"""A user's fabric over the reliability models' cluster limit is named as the fabric the user
gave, not as a scenario: ``blast-radius --fabric ring:n=131073`` said "scenario
ring:n=131073@H100-SXM's fabric has 131,073 GPUs" (h275's final read); the shipped-scenario
wording is unchanged (tests/netmodel/test_hostile_h223.py)."""

from __future__ import annotations

from tests.netmodel.cli_helpers import one_line_error, run_cli


def test_a_fabric_over_the_limit_is_named_as_the_fabric():
    r = run_cli(["blast-radius", "--model", "Llama-3-8B", "--fabric", "ring:n=131073"])
    one_line_error(r, "fabric 'ring:n=131073' has 131,073 GPUs", "(131,072 GPUs)")
    assert "scenario" not in r.output
