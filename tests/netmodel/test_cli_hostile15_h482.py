"""Hostile-input round 15 on the command line (h482): the leftovers of the last stop and
what the newest features took badly.

``--cluster-gpus`` is read by its declared parser (a :class:`~netmodel.cli.options.ReadAs`,
as ``--horizon`` and ``--trials``), not in the command body: the command gets the whole
number, and the parser asks click nothing about how the option was given (click 8.4.0
records that only after converting the value).
"""

from __future__ import annotations

import click
import pytest

from netmodel.cli.options import ReadAs
from netmodel.cli.reliability import availability, blast_radius
from tests.netmodel.cli_helpers import one_line_error, run_cli

BLAST = ["blast-radius", "--model", "Llama-3-70B", "--no-plot"]


def _cluster_option(command: click.Command) -> click.Option:
    return next(p for p in command.params if "--cluster-gpus" in p.opts)


@pytest.mark.parametrize("command", [blast_radius, availability])
def test_cluster_gpus_is_read_by_its_declared_parser(command):
    # before, the option was a string the body read: the type handed the text on
    opt = _cluster_option(command)
    assert isinstance(opt.type, ReadAs)
    assert opt.type.convert("131,072", opt, None) == 131_072
    assert opt.type.convert(" 64 ", opt, None) == 64
    assert opt.type.convert(None, opt, None) is None


def test_the_parser_refuses_without_a_click_context():
    opt = _cluster_option(availability)
    from compute.errors import UserError

    with pytest.raises(UserError, match=r"^--cluster-gpus '0' must be at least 1 GPU"):
        opt.type.convert("0", opt, None)
    with pytest.raises(UserError, match=r"^--cluster-gpus 'H100-SXM' must be a whole number "
                                        r".*run on H100-SXM with --scenario NAME@H100-SXM$"):
        opt.type.convert("H100-SXM", opt, None)


def test_a_gpu_name_beside_fabric_is_told_the_gpu_is_the_fabrics():
    r = run_cli([*BLAST, "--fabric", "ring:n=8", "--cluster-gpus", "Lite"])
    assert one_line_error(r) == (
        "error: --cluster-gpus 'Lite' must be a whole number of GPUs (digits, thousands "
        "grouped by commas: 131,072); it is the cluster size here: the GPU is the fabric's "
        "(a spec's gpu=Lite sets it)")


def test_a_gpu_name_names_the_scenario_typed_after_it():
    # the parser runs while click converts, in typed order: the scenario is read off the
    # words typed, wherever it stands
    r = run_cli([*BLAST, "--gpus", "Lite", "--scenario", "h100-dgx@H100-SXM"])
    assert one_line_error(r).endswith("run on Lite with --scenario h100-dgx@Lite")


AVAIL = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B", "-q", "--trials",
         "5", "--no-plot", "--max-batch", "8"]


@pytest.mark.parametrize("command", [AVAIL, BLAST[:1] + ["--scenario", "lite-flat"] + BLAST[1:]])
def test_a_spare_placement_the_fabric_cannot_take_names_the_flag(command, tmp_path):
    # the library said "spare placement 'group' needs GPUs labelled ..." with no flag
    out = tmp_path / "out"
    spares = ["--spares", "1"] if command is AVAIL else []   # a placement places spares
    r = run_cli([*command, *spares, "--spare-placement", "group", "--out", out])
    assert one_line_error(r) == (
        "error: --spare-placement 'group': spare placement 'group' needs GPUs labelled with "
        "their group; lite-flat@Lite's fabric has none (use pod or global)")
    assert not out.exists()


@pytest.mark.parametrize("command", [AVAIL, BLAST[:1] + ["--scenario", "lite-flat"] + BLAST[1:]])
def test_an_unknown_spare_placement_names_the_flag(command):
    assert one_line_error(run_cli([*command, "--spare-placement", "rack"])) == (
        "error: --spare-placement 'rack': unknown spare placement 'rack'; known: 'global', "
        "'group', 'pod'")


def _script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "hostile_round15.py"
    spec = importlib.util.spec_from_file_location("hostile_round15", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("prefix", ["tuner ", "nccl-", "fail ", "compare --group",
                                    "spare-placement", "graphml kind", "csv "])
def test_the_round_15_script_finds_these_refused_cleanly(prefix):
    # scripts/hostile_round15.py: exit 2, one 'error:' line, no traceback, nothing written
    script = _script()
    cases = [c for c in (*script.cases(), *script.mutations()) if c[0].startswith(prefix)]
    assert cases
    # a line naming no flag is the script's warning (the noun may name it), not a failure
    failed = [(name, why) for name, argv, setup in cases
              if (why := script.run_case(name, argv, setup)[0]) is not None
              and not why.startswith("NAMES NO FLAG")]
    assert not failed


COLL = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "1MiB"]


@pytest.mark.parametrize("args, line", [
    (["--tuner", "nope"], "--tuner 'nope': unknown tuner 'nope'; known: 'aws-ofi-nccl:p5', "
                          "'nccl', 'none'"),
    (["--algorithm", "nope"], "--algorithm 'nope': unknown algorithm 'nope'; known: 'auto', "),
    (["--algorithms", "ring,nope"], "--algorithms 'ring,nope': unknown algorithm 'nope'; "
                                    "known: 'bidirectional-ring', "),
    (["--algorithm", "nvls"], "--algorithm 'nvls': unknown algorithm 'nvls' ('nvls' is "
                              "NCCL's name; netmodel calls it 'in-network')"),
])
@pytest.mark.parametrize("command", [COLL, ["costs", *COLL[2:4]]])
def test_a_collective_name_refused_names_its_flag(command, args, line):
    # the library's 'unknown tuner/algorithm ...' named no option (found by the script)
    assert one_line_error(run_cli([*command, *args])).startswith("error: " + line)


TC = ["topology", "compare", "ring:n=8", "torus:dims=2x4"]


@pytest.mark.parametrize("args, line", [
    (["--group", "-1"], "--group '-1': group must be a whole number of GPUs >= 2, got -1"),
    (["--group", "+9"], "--group '+9': group of 9 GPUs does not fit fabric 'ring:n=8' (8 GPUs)"),
    (["--gpu", "nope"], "--gpu 'nope': unknown GPU 'nope'; known: 'A100-SXM-80GB'"),
    (["--plot", "x.txt"], "--plot 'x.txt': figure 'x.txt' must end in one of: .png, .svg, .pdf"),
])
def test_topology_compare_names_its_flags(args, line, tmp_path):
    # the library's lines ('group must be ...', 'ring: gpu: unknown GPU ...', 'figure ...')
    # named no option
    r = run_cli([*TC, *args], cwd=tmp_path)
    assert one_line_error(r).startswith("error: " + line)
    assert not list(tmp_path.iterdir())


def test_a_spec_of_its_own_gpu_is_not_said_as_gpu_flag():
    r = run_cli(["topology", "compare", "ring:n=8,gpu=nope", "torus:dims=2x4"])
    # named as the fabric of the comparison it is (h502), not as --gpu
    assert one_line_error(r).startswith("error: fabric 'ring:n=8,gpu=nope': ring: gpu: "
                                        "unknown GPU 'nope'")


def test_cost_share_names_its_flag():
    r = run_cli(["cost", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--share", "half"])
    assert one_line_error(r) == ("error: --share 'half': unknown network share 'half'; known: "
                                 "'as-built', 'ports-used'")


@pytest.mark.parametrize("command", [
    ["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-8B"],
    ["sweep", "--scenario", "lite-flat", "--models", "Llama-3-8B", "--param", "cost.pue=1,2"]])
@pytest.mark.parametrize("out", ["", " "])
def test_an_empty_out_names_its_flag(command, out, tmp_path):
    # 'output folder must not be empty' named no option
    r = run_cli([*command, "--out", out], cwd=tmp_path)
    assert one_line_error(r).startswith(
        "error: Invalid value for '--out': output folder must not be empty")
    assert not list(tmp_path.iterdir())
