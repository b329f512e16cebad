"""An option that takes a list is named in the plural and answers to its singular too
(h242, item 4). Before, compare took --scenarios and --phase (a list), sweep --scenario (a
list) and --phase, study lite-gpu --phases, costs --sizes and --groups beside collective's
--size and --group: 'compare --scenario X' or 'study lite-gpu --phase decode' was
'No such option'. Now each list option (netmodel.cli.options.LIST_ALIASES) shows its plural in
the help and takes either spelling; no command line that ran before changes."""

from __future__ import annotations

import json

import click
import pytest

from netmodel.cli.main import cli
from netmodel.cli.options import LIST_ALIASES
from tests.netmodel.cli_helpers import one_line_error, run_cli

COMPARE = ["compare", "--max-batch", "8", "-q", "--json"]
#: List options whose name has no plural: verbs (calibrate --fit, collective --fail) and
#: search's degrees, named as infer names one (--tp 8 there, --tp 8,16 here)
SINGULAR_LISTS = {"--fit", "--fail", "--tp", "--pp", "--ep", "--attention-dp"}


def _commands():
    def walk(cmd, path, ctx):
        if isinstance(cmd, click.Group):
            for n in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, n)
                yield from walk(sub, [*path, n], click.Context(sub, parent=ctx, info_name=n))
        else:
            yield " ".join(path), cmd, ctx

    return list(walk(cli, [], click.Context(cli, info_name="netmodel")))


def test_compare_takes_either_spelling_alike():
    plural = run_cli([*COMPARE, "--models", "Llama-3-8B", "--scenarios", "lite-flat",
                      "--gpus", "Lite+BW", "--phases", "decode"])
    singular = run_cli([*COMPARE, "--model", "Llama-3-8B", "--scenario", "lite-flat",
                        "--gpu", "Lite+BW", "--phase", "decode"])
    assert plural.exit_code == singular.exit_code == 0, (plural.output, singular.output)
    rows = json.loads(plural.output)["rows"]
    assert [r["label"] for r in rows] == ["lite-flat@Lite+BW"]
    assert json.loads(singular.output) == json.loads(plural.output)


def test_sweep_takes_scenarios_and_phases():
    args = ["sweep", "--param", "adjust.hop_latency=1us", "--models", "Llama-3-8B",
            "--max-batch", "8", "-q", "--json"]
    old = run_cli([*args, "--scenario", "lite-flat", "--scenario", "lite-hier",
                   "--phase", "decode"])
    new = run_cli([*args, "--scenarios", "lite-flat,lite-hier", "--phases", "decode"])
    assert old.exit_code == new.exit_code == 0, (old.output, new.output)
    assert json.loads(old.output) == json.loads(new.output)


def test_costs_takes_size_and_group():
    base = ["costs", "--fabric", "ring:n=8"]
    a = run_cli([*base, "--sizes", "1MiB", "--groups", "8"])
    b = run_cli([*base, "--size", "1MiB", "--group", "8"])
    assert a.exit_code == b.exit_code == 0 and a.output == b.output
    assert a.output.splitlines()[1].startswith("all-reduce,bidirectional-ring,LL,8,1048576,")


def test_a_list_error_names_the_documented_option():
    one_line_error(run_cli(["compare", "--scenario", "lite-flat,", "--model", "Llama-3-8B"]),
                   "--scenarios 'lite-flat,' has an empty item")


def test_every_list_option_is_plural_and_takes_its_singular():
    # a list option: its placeholder says LIST, or it was declared as one (list_option);
    # availability's and blast-radius's --gpus N is a count (the cluster size), no list
    seen = set()
    for path, cmd, ctx in _commands():
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.get_help_record(ctx) is None:
                continue
            aliases = getattr(p, "aliases", ())
            if not (aliases or "LIST" in (p.metavar or "")):
                continue
            shown = [o for o in p.opts if o not in aliases]
            if shown[0] in SINGULAR_LISTS:
                continue
            assert len(shown) == 1 and shown[0].endswith("s"), (path, p.opts)
            if shown[0] in LIST_ALIASES:
                assert aliases == (LIST_ALIASES[shown[0]],), (path, p.opts)
                seen.add(shown[0])
            for alias in aliases:   # an alias never hides another option of the command
                assert sum(alias in q.opts for q in cmd.params) == 1, (path, alias)
    assert seen == set(LIST_ALIASES)


@pytest.mark.parametrize("command, shown, alias", [
    ("compare", "--phases", "--phase"), ("sweep", "--scenarios", "--scenario"),
    ("study lite-gpu", "--phases", "--phase"), ("costs", "--groups", "--group")])
def test_the_help_shows_the_plural_only(command, shown, alias):
    out = run_cli([*command.split(), "--help"]).output
    assert f"  {shown} " in out and f"{alias} " not in out.replace(f"{alias}s ", "")
