"""compare's --list and --show read the rest of the command line (h416).

They were eager options that printed and exited before click read anything else:
``compare --list --json`` printed the text table, ``--show X --list`` dropped --list
without a word, and ``--list --models nosuch`` exited 0 ignoring the bad name. Now each
takes --json (the listing, or the scenario, as JSON), and with each other or with an option
of a comparison is refused in one line, exit 2."""

from __future__ import annotations

import json
import tomllib

import pytest

from netmodel.study.scenario_catalog import get_scenario, scenario_names
from tests.netmodel.cli_helpers import one_line_error, run_cli


def test_list_json_is_the_catalog():
    r = run_cli(["compare", "--list", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [row["name"] for row in rows] == list(scenario_names())
    for row in rows:
        s = get_scenario(row["name"])
        assert (row["gpu"], row["description"]) == (s.gpu, s.description)


def test_list_text_is_one_line_a_scenario():
    r = run_cli(["compare", "--list"])
    assert r.exit_code == 0, r.output
    assert [line.split()[0] for line in r.output.splitlines()] == list(scenario_names())


def test_show_json_is_the_toml_as_json():
    r = run_cli(["compare", "--show", "lite-flat@Lite+BW", "--json"])
    assert r.exit_code == 0, r.output
    shown = json.loads(r.output)
    assert shown == tomllib.loads(get_scenario("lite-flat@Lite+BW").to_toml())
    assert shown["gpu"] == "Lite+BW"


@pytest.mark.parametrize("args, line", [
    # before: the TOML of lite-flat, exit 0 (--list dropped)
    (["--show", "lite-flat", "--list"],
     "error: --list and --show each print and exit: give one of them"),
    # before: the listing, exit 0 (the bad name never read)
    (["--list", "--models", "nosuch"],
     "error: --list prints and exits, taking no option but --json; --models is an option of "
     "a comparison: drop it or --list"),
    (["--show", "h100-dgx", "--scenarios", "lite-flat", "--out", "o"],
     "error: --show prints and exits, taking no option but --json; --scenarios, --out are "
     "options of a comparison: drop them or --show"),
    (["--list", "--quiet"],
     "error: --list prints and exits, taking no option but --json; --quiet is an option of a "
     "comparison: drop it or --list"),
])
def test_listing_with_other_options_is_refused(args, line, tmp_path):
    r = run_cli(["compare", *args], cwd=tmp_path)
    assert one_line_error(r) == line
    assert list(tmp_path.iterdir()) == []
