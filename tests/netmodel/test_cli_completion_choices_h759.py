"""Shell completion offers an option's choices (docs/units-and-errors.md, 'Shell
completion': commands, options and choices). Found trying it (h759): only the five
options typed as a click Choice completed; --phase, --phases, --mode, --instances,
--spare-placement, --placement, --tuner, --share, --compute-dtype and yield's --model,
whose choices are read by netmodel's own rule and listed in their placeholder, completed
nothing."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import run_cli


def _complete(*words: str) -> list[str]:
    """What bash completion offers for the last of ``words`` (``netmodel`` first)."""
    r = run_cli([], env={"_NETMODEL_COMPLETE": "bash_complete",
                         "COMP_WORDS": " ".join(("netmodel", *words)),
                         "COMP_CWORD": str(len(words))})
    assert r.exit_code == 0, r.output
    return [line.split(",", 1)[1] for line in r.output.splitlines() if line]


@pytest.mark.parametrize("command, option", [
    (("cost",), "--phase"), (("compare",), "--phases"), (("infer",), "--mode"),
    (("compare",), "--instances"), (("availability",), "--spare-placement"),
    (("collective",), "--placement"), (("collective",), "--tuner"),
    (("cost",), "--share"), (("yield",), "--model"),
    (("infer",), "--compute-dtype"), (("search",), "--compute-dtype"),
    (("availability",), "--repair"),   # a click Choice: completed before too
])
def test_each_choice_its_help_lists_is_offered(command, option):
    help_text = run_cli([*command, "--help"]).output
    line = next(x for x in help_text.splitlines() if x.strip().startswith(option + " "))
    listed = line.split()[1].split("|")
    assert len(listed) >= 2, line
    assert _complete(*command, option, "") == listed
    first = listed[0]
    assert _complete(*command, option, first[:2]) == [n for n in listed if n.startswith(first[:2])]


def test_a_list_option_completes_after_its_last_comma():
    assert _complete("compare", "--phases", "prefill,d") == ["prefill,decode"]


def test_no_names_offered_for_a_placeholder_that_is_no_choice():
    # NAME, FILE, N: nothing to offer (the catalog names are not completed)
    assert _complete("cost", "--scenario", "") == []
    assert _complete("yield", "--wafer-diameter", "") == []
