"""Hostile round 13 on the command line (h424).

An option that takes one value given twice (netmodel.cli.main.refuse_repeated_options):
the refusal named the option by its first declared flag (``-o``) where the user typed
``--output``, and two spellings of one value (``--tbt 50ms --tbt 0.05``) were refused as
two values. Now the flag first typed is named, and values are compared as the command
reads them (its unit parser, or the option's click type); different values are still
refused."""

from __future__ import annotations

import click
import pytest

from compute.errors import UserError
from netmodel.cli.main import cli, refuse_repeated_options
from tests.netmodel.cli_helpers import one_line_error, run_cli

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]


def _command(*path: str) -> click.Command:
    cmd = cli
    for name in path:
        cmd = cmd.get_command(click.Context(cmd), name)
    return cmd


@pytest.mark.parametrize("args, line", [
    # before: '-o is given twice' though -o was never typed
    (["costs", "--fabric", "flat", "--output", "a.csv", "--output", "b.csv"],
     "error: --output is given twice ('a.csv' and 'b.csv'); it takes one value: give it once"),
    (["costs", "--fabric", "flat", "--output", "a.csv", "-o", "b.csv"],
     "error: --output is given twice (--output 'a.csv' and -o 'b.csv'); it takes one value: "
     "give it once"),
    (["topology", "export", "ring:n=4", "--output=a.json", "--output", "b.json"],
     "error: --output is given twice ('a.json' and 'b.json'); it takes one value: give it "
     "once"),
    # an alias typed first (before: named --cluster-gpus)
    (["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--gpus", "64",
      "--cluster-gpus", "128"],
     "error: --gpus is given twice (--gpus '64' and --cluster-gpus '128'); it takes one "
     "value: give it once"),
])
def test_the_flag_named_is_the_one_typed(tmp_path, args, line):
    assert one_line_error(run_cli(args, tmp_path)) == line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path, args", [
    (("infer",), ["--tbt", "50ms", "--tbt", "0.05"]),          # 50 ms = 0.05 s
    (("infer",), ["--ttft", "1s", "--ttft=1000ms"]),
    (("search",), ["--max-batch", "64", "--max-batch", "6.4e1"]),
    (("availability",), ["--horizon", "1y", "--horizon", "365.25d"]),   # a year is 365.25 d
    (("availability",), ["--threshold", "99%", "--threshold", "0.99"]),
    (("availability",), ["--trials", "1000", "--trials", "1e3"]),
    (("availability",), ["--detection", "30s", "--detection", "0.5min"]),
    (("availability",), ["--load-bandwidth", "12.5GB/s", "--load-bandwidth", "100Gb/s"]),
    (("availability",), ["--cluster-gpus", "1024", "--gpus", "1,024"]),
    (("availability",), ["--area-share", "0.5", "--area-share", ".5"]),     # click's REAL
    (("collective",), ["--size", "1MiB", "--size", "1048576"]),             # 2**20 B
    (("collective",), ["--group", "8", "--group", "+8"]),
    (("collective",), ["--nccl-buffsize", "4MiB", "--nccl-buffsize", "4194304"]),
    (("collective",), ["--seed", "1", "--seed", "+1"]),                     # click's WHOLE
])
def test_two_spellings_of_one_value_are_one_value(path, args):
    refuse_repeated_options(_command(*path), path[-1], args)   # before: UserError


@pytest.mark.parametrize("path, args, typed", [
    (("infer",), ["--tbt", "50ms", "--tbt", "51ms"], "('50ms' and '51ms')"),
    (("infer",), ["--tbt", "50ms", "--tbt", "abc"], "('50ms' and 'abc')"),   # unread: as typed
    (("infer",), ["--tbt", "inf", "--tbt", "1e400"], "('inf' and '1e400')"),
    (("availability",), ["--horizon", "1y", "--horizon", "365d"], "('1y' and '365d')"),
    (("collective",), ["--size", "1MB", "--size", "1MiB"], "('1MB' and '1MiB')"),
    (("collective",), ["--group", "gpu0,gpu1", "--group", "gpu1,gpu0"],
     "('gpu0,gpu1' and 'gpu1,gpu0')"),
    (("search",), ["--max-batch", "64", "--max-batch", "65"], "('64' and '65')"),
])
def test_different_values_are_still_refused(path, args, typed):
    with pytest.raises(UserError, match=rf"^{args[0]} is given twice \({typed[1:-1]}\)"):
        refuse_repeated_options(_command(*path), path[-1], args)


def test_one_value_spelled_twice_runs_as_once():
    once = run_cli([*INFER, "--tbt", "50ms", "--json"])
    twice = run_cli([*INFER, "--tbt", "50ms", "--tbt", "0.05", "--json"])
    assert once.exit_code == 0 and twice.exit_code == 0, twice.output   # before: exit 2
    assert twice.output == once.output


def _unset_parameters():
    from topologies import builders

    return [(b.name, p.name) for b in builders() for p in b.params if p.default is None]


@pytest.mark.parametrize("builder, key", _unset_parameters())
def test_auto_as_topology_list_shows_it_is_taken_back(builder, key):
    """``topology list`` shows a parameter the builder works out as ``KEY=auto``; a spec
    with that very text was refused ('nics_per_server must be an integer, got 'auto'').
    Now ``auto`` (any case) is the parameter left out: the same fabric."""
    import networkx as nx

    from topologies import build

    small = {"rail-optimized": "domains=2,", "ocs": "gpus=8,", "fat-tree": "",
             "superpod": "", "nvl72": ""}.get(builder, "")
    plain, auto = build(f"{builder}:{small}".rstrip(",:")), \
        build(f"{builder}:{small}{key}=AUTO")
    assert nx.utils.graphs_equal(plain, auto)


def test_topology_list_shows_what_a_spec_takes():
    r = run_cli(["topology", "list"])
    line = next(t for t in r.output.splitlines() if "nics_per_server" in t)
    assert "nics_per_server=auto" in line
    r = run_cli(["topology", "show", "rail-optimized:domains=2,nics_per_server=auto", "--json"])
    assert r.exit_code == 0 and r.output == run_cli(
        ["topology", "show", "rail-optimized:domains=2", "--json"]).output
