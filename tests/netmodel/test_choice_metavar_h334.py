"""Every choice option's placeholder in --help has one style, ``a|b|c``, written from its
registry (h334): click's own Choice placeholder was ``[auto|tp|all]`` beside hand-written
``group|pod|global``, and --mode, --compute-dtype named no choices at all (MODE, DTYPE)."""

import importlib

import click
import pytest

from netmodel.cli.main import cli
from netmodel.cli.options import RegistryChoice, choice_metavar


def _options():
    """(command path, option, its help placeholder) of every option of every command."""
    out = []

    def walk(cmd, path):
        ctx = click.Context(cmd, info_name=path[-1])
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), [*path, name])
            return
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.is_flag:
                record = p.get_help_record(ctx)
                if record:
                    placeholder = record[0].split(" ", 1)[1] if " " in record[0] else ""
                    out.append((" ".join(path[1:]), p, placeholder))

    walk(cli, ["netmodel"])
    return out


OPTIONS = _options()


def test_every_choice_type_shows_its_choices_bar_separated_without_brackets():
    choices = [(cmd, p, mv) for cmd, p, mv in OPTIONS if isinstance(p.type, click.Choice)]
    # --parallelism (5 commands and study lite-gpu), costs --format, --repair and
    # --load-from (2 each), topology export --format
    assert len(choices) >= 11
    for cmd, p, mv in choices:
        assert isinstance(p.type, RegistryChoice), (cmd, p.opts)
        assert mv == "|".join(p.type.choices), (cmd, p.opts, mv)
    assert not [(cmd, mv) for cmd, _, mv in OPTIONS if mv.startswith("[")]


#: option -> the registry its placeholder lists (module, attribute)
REGISTRIES = {
    "--parallelism": ("netmodel.study.defaults", "PARALLELISM"),
    "--spare-placement": ("netmodel.study.reliability_spares", "PLACEMENTS"),  # the users'
    #  registries; the command line reads them from netmodel.study.choice_names
    "--repair": ("netmodel.study.reliability_catalog", "REPAIRS"),
    "--load-from": ("netmodel.study.reliability_catalog", "LOAD_SOURCES"),
    "--instances": ("netmodel.study.scenarios", "INSTANCES"),
    "--share": ("netmodel.study.network_bill", "SHARES"),
    "--mode": ("compute.roofline_options", "MODES"),
    "--compute-dtype": ("compute.hardware", "DTYPES"),
    "--placement": ("netmodel.collectives.names", "PLACEMENTS"),
}


@pytest.mark.parametrize("flag", sorted(REGISTRIES))
def test_a_choice_placeholder_is_its_registry(flag):
    module, name = REGISTRIES[flag]
    names = getattr(importlib.import_module(module), name)
    found = [(cmd, mv) for cmd, p, mv in OPTIONS if flag in p.opts]
    assert found, flag
    for cmd, mv in found:
        assert mv == choice_metavar(names), (cmd, mv)


def test_named_placeholders_by_hand():
    by = {(cmd, p.opts[0]): mv for cmd, p, mv in OPTIONS}
    assert by[("availability", "--spare-placement")] == "group|pod|global"
    assert by[("infer", "--mode")] == "overlap|serial"
    assert by[("infer", "--compute-dtype")] == "bf16|fp8|int8|fp4"
    assert by[("compare", "--parallelism")] == "auto|tp|all"
    assert by[("yield", "--model")] == "poisson|murphy|negative-binomial"
    assert by[("costs", "--format")] == "csv|json|nccl-tests|nccl-short|nccl|vidur"
    assert by[("topology export", "--format")] == "json|graphml|astra-sim"


def test_a_registry_choice_still_refuses_what_it_does_not_hold(tmp_path):
    from click.testing import CliRunner

    r = CliRunner().invoke(cli, ["topology", "export", "ring:n=4", "-o",
                                 str(tmp_path / "x.json"), "--format", "yaml"])
    assert r.exit_code == 2 and "'yaml' is not one of 'json', 'graphml', 'astra-sim'" in r.output
    assert not (tmp_path / "x.json").exists()
