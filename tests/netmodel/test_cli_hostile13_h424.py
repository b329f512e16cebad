"""Hostile round 13 on the command line (h424).

An option that takes one value given twice (netmodel.cli.refusals.refuse_repeated_options):
the refusal named the option by its first declared flag (``-o``) where the user typed
``--output``, and two spellings of one value (``--tbt 50ms --tbt 0.05``) were refused as
two values. Now the flag first typed is named, and values are compared as the command
reads them (its unit parser, or the option's click type); different values are still
refused."""

from __future__ import annotations

import re

import click
import pytest

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.cli.refusals import refuse_repeated_options
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

    return [(b.name, p.name, p.unset) for b in builders() for p in b.params
            if p.default is None]


_SMALL = {"rail-optimized": "domains=2,", "ocs": "gpus=8,"}


@pytest.mark.parametrize("builder, key, word", _unset_parameters())
def test_auto_as_topology_list_shows_it_is_taken_back(builder, key, word):
    """``topology list`` shows a parameter the builder works out as ``KEY=auto`` (ocs's
    ``logical``, whose None is no circuits, as ``KEY=none``); a spec with that very text
    was refused ('nics_per_server must be an integer, got 'auto''). Now that word (any
    case) is the parameter left out: the same fabric, the same spec."""
    import networkx as nx

    from topologies import build

    small = _SMALL.get(builder, "")
    plain, unset = build(f"{builder}:{small}".rstrip(",:")), \
        build(f"{builder}:{small}{key}={word.upper()}")
    assert nx.utils.graphs_equal(plain, unset)
    assert unset.graph["spec"] == plain.graph["spec"]


def test_each_parameter_takes_its_own_word_only():
    """'none' where the builder works a value out read as that value: single-switch's
    in_network_reduction=none built an H100 switch that reduces (none read as on), and
    ocs's logical=auto the bare cabling (no circuits worked out). Each is refused now,
    naming the word it takes."""
    from compute.errors import UserError
    from topologies import build

    assert [(b, k, w) for b, k, w in _unset_parameters() if w == "none"] == \
        [("ocs", "logical", "none")]   # the one parameter whose None is none of it
    with pytest.raises(UserError, match=r"^single-switch: in_network_reduction takes auto "
                       r"\(left to the builder, as if not given\) or a value, not 'none'"):
        build("single-switch:n=8,in_network_reduction=none")
    with pytest.raises(UserError, match=r"^ocs: logical takes none \(none of it, as if not "
                       r"given\) or a value, not 'Auto'"):
        build("ocs:gpus=8,logical=Auto")
    for builder, key, word in _unset_parameters():
        other = "none" if word == "auto" else "auto"
        small = _SMALL.get(builder, "")
        with pytest.raises(UserError, match=rf"^{builder}: {key} takes {word} "):
            build(f"{builder}:{small}{key}={other}")


def test_topology_list_shows_what_a_spec_takes():
    r = run_cli(["topology", "list"])
    line = next(t for t in r.output.splitlines() if "nics_per_server" in t)
    assert "nics_per_server=auto" in line
    ocs = re.search(r"^ocs:.*\n((?:    .*\n)+)", r.output, re.M)[1]   # its parameters
    assert "logical=none" in ocs   # before: 'logical=auto', which built no circuits
    r = run_cli(["topology", "show", "rail-optimized:domains=2,nics_per_server=auto", "--json"])
    assert r.exit_code == 0 and r.output == run_cli(
        ["topology", "show", "rail-optimized:domains=2", "--json"]).output


# ------------------------------------------------------------ values refused by the flag typed

AVAIL = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B", "-q"]


@pytest.mark.parametrize("args, line", [
    # before: 'spares must be >= 0' / 'horizon ...': the library's parameter, not the flag
    ([*AVAIL, "--spares", "-1"], "error: --spares '-1' is below 0; allowed: 0 to 128 (100%), a "
     "pool as large as the cluster"),
    ([*AVAIL, "--spares", "nan%"],
     "error: --spares 'nan%' must be a whole number or a percentage such as 2%; allowed: 0 "
     "to 128 (100%), a pool as large as the cluster"),
    ([*AVAIL, "--horizon", "1"],
     "error: --horizon '1' is shorter than an hour; allowed: 1 h to 100 y"),
    # before: 'detection time must be a number of seconds from 0 to 3.156e+09 (a century),
    # got 3.15576e+37': no flag, and seconds for a time typed in years; the catalog's check
    # (said once, there), its refusal said with the flag, the text typed and the longest
    # time in the unit typed
    ([*AVAIL, "--detection", "1e30y"],
     "error: --detection '1e30y': detection time is longer than 100 y, the longest time "
     "taken; allowed: 0 to 100y"),
    (["blast-radius", *AVAIL[1:5], "--warmup", "101y"],
     "error: --warmup '101y': warm-up time is longer than 100 y, the longest time taken; "
     "allowed: 0 to 100y"),
    # before: 'repair time of gpu-die must be a number of seconds ... got 8.64e+34'
    ([*AVAIL, "--repair-time", "gpu-die=1e30d"],
     "error: --repair-time 'gpu-die=1e30d': repair time of gpu-die is longer than 100 y, "
     "the longest time taken; allowed: 0 to 36525d"),
    # before: 'rate of nic must be a number from 0 to 1 per hour, got 1e+300'
    ([*AVAIL, "--rate", "nic=1e300"],
     "error: --rate 'nic=1e300': rate of nic must be a number from 0 to 1 per hour, got "
     "1e+300"),
    # before: 'size must be a finite number > 0' (parse_bytes' default name)
    (["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "nan"],
     "error: --size must be a whole number of bytes from 1 B to 1 PiB (1,125,899,906,842,624 B, "
     "more than any GPU's memory holds), got 'nan'"),
    (["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "64mb"],
     "error: --size '64mb' has unknown unit 'mb' (allowed: B, kB, KB, MB, GB, TB, PB, KiB, "
     "MiB, GiB, TiB, PiB, K, M, G, T, P)"),
    # before: after the whole search, 'clock 2.0 is outside the modelled range ...'
    (["cost", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--clock", "2"],
     "error: --clock '2': clock 2.0 is outside the modelled range [0.05, 1.5] x nominal"),
])
def test_a_refusal_names_the_flag_and_the_text_typed(tmp_path, args, line):
    assert one_line_error(run_cli([*args, "--out", str(tmp_path / "o")]
                                  if args[0] in ("availability", "blast-radius") else args,
                                  tmp_path)) == line
    assert list(tmp_path.iterdir()) == []


def test_the_clock_range_is_the_power_laws():
    from compute.power import ClockPowerLaw

    law = ClockPowerLaw()
    assert (law.ratio_min, law.ratio_max) == (0.05, 1.5)   # the line above states these


def test_a_fabric_cut_apart_healthy_too_reports_no_infinite_time():
    """An OCS fabric with no circuits set is cut apart before any failure: the failure's
    comparison printed 'healthy: none inf s' and its JSON 'healthy_time': Infinity, which a
    strict JSON parser refuses."""
    import json

    args = ["collective", "all-reduce", "--fabric", "ocs:gpus=8", "--fail", "ocs0"]
    r = run_cli(args)
    assert r.exit_code == 0 and "failed: ocs0; healthy: cut apart too" in r.output
    assert " inf " not in r.output

    def no_constants(word):
        raise AssertionError(f"not JSON: {word}")

    doc = json.loads(run_cli([*args, "--json"]).output, parse_constant=no_constants)
    assert doc["failures"]["healthy_time"] is None and doc["failures"]["cut"] is True
    # a healthy fabric that is whole keeps its time and algorithm
    doc = json.loads(run_cli(["collective", "all-reduce", "--fabric", "ring:n=8", "--fail",
                              "gpu1/gpu2", "--json"]).output, parse_constant=no_constants)
    assert doc["failures"]["healthy_time"] > 0 and doc["failures"]["healthy_algorithm"]


@pytest.mark.parametrize("args, line", [
    # before: the same lines without the help pointer (click gives them no context)
    ([*INFER, "--tbt"],
     "error: Option '--tbt' requires an argument (see 'netmodel infer --help')"),
    (["topology", "show", "ring:n=4", "--pair", "gpu0"],
     "error: Option '--pair' requires 2 arguments (see 'netmodel topology show --help')"),
    (["study", "lite-gpu", "--out"],
     "error: Option '--out' requires an argument (see 'netmodel study lite-gpu --help')"),
    ([*INFER, "--json=1"],
     "error: Option '--json' does not take a value (see 'netmodel infer --help')"),
])
def test_a_missing_value_points_to_its_commands_help(args, line):
    assert one_line_error(run_cli(args)) == line
