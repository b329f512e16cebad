"""Every option's placeholder in ``--help`` says what it takes (never click's bare TEXT,
INTEGER or FLOAT), the same option reads the same on every command that declares it, and
placeholders that list choices list the registry's; ``--parallelism``'s help says what each
choice searches, as :func:`netmodel.study.search_options.parallel_dimensions` does."""

from __future__ import annotations

import re

import click
import pytest

from compute.models import get_model
from compute.phases import PHASES
from compute.units import parse_bytes, parse_time, size_units, time_units
from netmodel.cli.main import cli
from netmodel.collectives.names import PLACEMENTS
from netmodel.study.defaults import PARALLELISM
from netmodel.study.search_options import parallel_dimensions


def _commands():
    """``(path, command, context)`` of every leaf command."""
    def walk(cmd, ctx, path):
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                yield from walk(sub, click.Context(sub, info_name=name, parent=ctx),
                                path + (name,))
        else:
            yield " ".join(path), cmd, ctx

    root = click.Context(cli, info_name="netmodel")
    return list(walk(cli, root, ()))


def _records():
    """``(command, flag, placeholder-and-flags column, help)`` of every shown option."""
    out = []
    for path, cmd, ctx in _commands():
        for p in cmd.params:
            if isinstance(p, click.Option):
                rec = p.get_help_record(ctx)
                if rec is not None:
                    out.append((path, max(p.opts, key=len), rec[0], rec[1]))
    return out


def test_no_bare_type_placeholder():
    bare = [f"{cmd}: {first}" for cmd, _, first, _ in _records()
            if re.search(r"(^|\s)(TEXT|INTEGER|FLOAT)(\s|$)", first)]
    assert not bare, bare   # 39 on the old code (--ttft TEXT, --seed INTEGER, ...)


def _by_flag(flag):
    return [(cmd, first, help_) for cmd, f, first, help_ in _records() if f == flag]


@pytest.mark.parametrize("flag", ["--ttft", "--tbt"])
def test_slo_options_take_a_time_in_the_parsers_units(flag):
    rows = _by_flag(flag)
    assert len(rows) >= 8   # infer, search, compare, sweep, study, serve, cost, reliability
    assert {first for _, first, _ in rows} == {f"{flag} TIME"}
    for _, _, help_ in rows:
        for unit in time_units():
            assert unit in help_, (unit, help_)
            assert parse_time("2" + unit, flag) > 0


def test_phase_placeholder_lists_the_phases():
    rows = _by_flag("--phase") + _by_flag("--phases")   # --phases: a list (compare, sweep, study)
    assert len(rows) >= 8
    for cmd, first, _ in rows:
        shown = first.split()[1].split("|")
        assert shown[:2] == list(PHASES), (cmd, first)
        assert shown[2:] in ([], ["both"]), (cmd, first)


def test_placement_placeholder_is_the_registry():
    rows = _by_flag("--placement")
    assert {first for _, first, _ in rows} == {"--placement " + "|".join(PLACEMENTS)}


def test_size_help_names_the_units_parse_bytes_takes():
    (_, first, help_), = _by_flag("--size")
    assert first == "--size SIZE"
    for unit in size_units():
        assert unit in help_
        assert parse_bytes("1" + unit) >= 1


@pytest.mark.parametrize("name", PARALLELISM)
def test_parallelism_help_says_what_the_search_opens(name):
    """Each choice's text in --help names every dimension parallel_dimensions opens for a
    dense and a mixture-of-experts model (the old help left out that 'all' gives dense
    models attention data parallelism too)."""
    help_ = " ".join(_by_flag("--parallelism")[0][2].split())
    text = help_.split(f"{name}: ", 1)[1]
    text = re.split(r"; (?:" + "|".join(PARALLELISM) + r"): |\.\s+\[default", text)[0]
    words = {"pp": "pipeline", "ep": "expert", "attention_dp": "attention data parallelism"}
    for model in ("Llama-3-70B", "Mixtral-8x7B"):
        dims = parallel_dimensions(get_model(model), name, 64)
        opened = {k for k in words if dims.get(k) not in (None, (1,))}
        for k in opened:
            assert words[k] in text, (name, model, k, text)
    if "dense" not in text and "every model" not in text:
        assert not parallel_dimensions(get_model("Llama-3-70B"), name, 64)
