"""Every --scenario/--scenarios option's help is written by one helper and lists the
shipped scenarios (only collective's did; the others, written by hand in 7 places, named
none), read from the data folder's file names so that help loads no scenario file."""

import subprocess
import sys

import click

from netmodel.cli.main import cli
from netmodel.cli.options import shipped_scenario_names
from netmodel.study.scenario_catalog import scenario_names


def _commands(group: click.Group, path: list[str]):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, [*path, name])
        else:
            yield [*path, name], cmd


def test_names_from_file_names_are_the_loaded_scenarios_in_order():
    assert shipped_scenario_names() == scenario_names()
    assert shipped_scenario_names()[0] == "h100-dgx"


def test_every_scenario_option_lists_the_shipped_names():
    seen = []
    for path, cmd in _commands(cli, []):
        ctx = click.Context(cmd, info_name=path[-1])
        for param in cmd.params:
            if not {"--scenario", "--scenarios"} & set(getattr(param, "opts", ())):
                continue
            record = param.get_help_record(ctx)
            text = " ".join(record[1].split())
            seen.append(" ".join(path))
            for name in scenario_names():
                assert f"{name}," in text or f"{name};" in text, (path, name, text)
            assert "NAME@GPU" in text and ".toml" in text, (path, text)
    assert set(seen) >= {"collective", "costs", "cost", "availability", "blast-radius",
                         "infer", "search", "serve", "compare", "sweep", "study lite-gpu"}


def test_scenario_help_loads_no_scenario_file():
    code = ("import sys\nfrom netmodel.cli.options import scenario_help\nscenario_help()\n"
            "scenario_help(many=True)\n"
            "print([m for m in ('networkx', 'numpy', 'netmodel.study.scenarios') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
