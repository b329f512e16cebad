"""A fabric SPEC given as a command's argument (``topology show``, ``export``, ``plot``,
``compare``) whose refusal quotes only the builder and its parameters, or the scenario, is
said with the text typed in front, as ``--fabric`` says it with its flag
(netmodel.cli.refusals.typed_options, named_by_value): the library no longer quotes the spec
whole ('ring: spec parameter '' must be KEY=VALUE (in 'n=8,')'), so without it the user
could not see which text to mend."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

#: spec typed -> the library's words for it (the part after the prefix).
REFUSED = {
    "ring:n=8,": "ring: spec parameter '' must be KEY=VALUE (in 'n=8,')",
    "ring:n=8@": "'@GPU' re-types a scenario, and 'ring' is a fabric builder; give the GPU "
                 "as its parameter (ring:n=8,gpu=GPU)",
    "h100-dgx@": "scenario 'h100-dgx' names no GPU after '@' (NAME@GPU swaps the "
                 "scenario's GPU)",
    "ring:n=8,n=4": "ring: spec parameter 'n' is given twice (in 'n=8,n=4')",
    "ring:n=0": "ring: n must be an integer >= 2, got 0",
}


@pytest.mark.parametrize("spec", list(REFUSED))
def test_topology_show_names_the_spec_typed(spec):
    r = run_cli(["topology", "show", spec])
    assert r.exit_code == 2, r.output
    assert one_line_error(r) == f"error: fabric {spec!r}: {REFUSED[spec]}"


@pytest.mark.parametrize("spec", ["ring:n=8,", "ring:n=8@", "h100-dgx@"])
def test_topology_export_names_the_spec_typed_and_writes_nothing(tmp_path, spec):
    out = tmp_path / "f.json"
    r = run_cli(["topology", "export", spec, "-o", out])
    assert r.exit_code == 2, r.output
    assert one_line_error(r) == f"error: fabric {spec!r}: {REFUSED[spec]}"
    assert not out.exists()


def test_topology_compare_says_the_spec_once():
    """compare's library already names the fabric it refuses: said once, not twice."""
    r = run_cli(["topology", "compare", "ring:n=8", "ring:n=8,"])
    assert r.exit_code == 2, r.output
    assert one_line_error(r) == f"error: fabric 'ring:n=8,': {REFUSED['ring:n=8,']}"


def test_a_spec_after_options_and_a_separator_is_named():
    """The argument found as click parses it: after ``--pair`` (two values) and ``--``."""
    r = run_cli(["topology", "show", "--pair", "gpu0", "gpu1", "--", "ring:n=8@"])
    assert r.exit_code == 2, r.output
    assert one_line_error(r) == f"error: fabric 'ring:n=8@': {REFUSED['ring:n=8@']}"


def test_a_refusal_naming_a_flag_is_left_as_it_is():
    """--pair's refusal names its flag: the spec is not put in front."""
    r = run_cli(["topology", "show", "ring:n=4", "--pair", "gpu0", "gpu9"])
    assert r.exit_code == 2, r.output
    line = one_line_error(r)
    assert line.startswith("error: --pair 'gpu0 gpu9': "), line
