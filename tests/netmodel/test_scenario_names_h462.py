"""A scenario file's name obeys the rule of every catalog name typed back
(compute.validate.typed_name: none of '@', ',', '=', ':'), as GPU and model names do.

Before: only '@' was refused. A scenario named 'a,b' loaded, but ``--scenarios a,b`` splits
at the comma; one named 'x:gpu=Lite' (a name with ':' and then ':gpu=Lite' or ',gpu=Lite')
was taken for a fabric spec naming its GPU and its label lost its '@Lite'.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.scenario_catalog import shipped_scenarios
from netmodel.study.scenario_files import load_scenario, load_scenario_text
from tests.netmodel.cli_helpers import one_line_error, run_cli

GOOD = shipped_scenarios()["lite-flat"].to_toml()
_WHY = {
    ",": "it separates the names of a list, as in H100-SXM,Lite",
    "=": "it joins a fabric spec's parameter to its value, as in gpu=Lite",
    ":": "it ends a fabric spec's builder, as in ring:n=4",
    "@": "it joins a name to a GPU or a clock, as in lite-flat@Lite and H100-SXM@0.5x",
}


def _named(name: str) -> str:
    assert GOOD.startswith('name = "lite-flat"\n')
    return GOOD.replace('name = "lite-flat"', f'name = "{name}"', 1)


@pytest.mark.parametrize("mark", list(_WHY))
def test_a_scenario_name_holding_a_mark_is_refused(mark):
    with pytest.raises(UserError) as e:
        load_scenario_text(_named(f"mine{mark}2"), "s.toml")
    assert str(e.value) == (f"s.toml: scenario name 'mine{mark}2' must not contain {mark!r} "
                            f"({_WHY[mark]}); a scenario's name holds none of "
                            f"'@', ',', '=', ':'")


@pytest.mark.parametrize(("name", "first"), [("x:gpu=Lite", "="), ("x:n=1,gpu=Lite", ",")])
def test_the_label_case_is_refused(name, first):
    """'x:gpu=Lite' on Lite was labelled 'x:gpu=Lite' (no '@Lite'): it read as a fabric
    spec naming its GPU. The first of the marks in NAME_MARKS' order is named."""
    with pytest.raises(UserError, match=f"scenario name '{name}' must not contain '{first}'"):
        load_scenario_text(_named(name), "s.toml")


@pytest.mark.parametrize("name", ["mine", "lite-flat 2", "lite+flat/2", "mine (test)", "x;y"])
def test_other_scenario_names_load_and_label_with_their_gpu(name):
    s = load_scenario_text(_named(name), "s.toml")
    assert (s.name, s.label) == (name, f"{name}@Lite")


def test_shipped_scenarios_obey_it():
    assert not [n for n in shipped_scenarios() if any(m in n for m in _WHY)]


def test_the_cli_refuses_it_in_one_line(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(_named("a,b"))
    with pytest.raises(UserError):
        load_scenario(path)
    one_line_error(run_cli(["compare", "--scenarios", path, "--models", "Llama-3-8B"]),
                   f"{path}: scenario name 'a,b' must not contain ','")
