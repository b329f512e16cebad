"""costs takes --nccl-release and --nccl-buffsize as collective does (h339).

Both commands share --scenario's help, which said --nccl-release and --nccl-buffsize
override a scenario's keys; costs had neither option ("No such option '--nccl-release'"),
so its lookup tables could emulate a release or buffer only through a scenario file. Now
the options are among the routing options both commands take, and costs' rows are
collective's figures for the same settings, bit for bit.
"""

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli


def _run(*args):
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


@pytest.mark.parametrize("where, flag, value, group, size", [
    ("h100-dgx@B200-HGX", "--nccl-release", "2.26", 8, 2 ** 29),
    ("h100-dgx@B200-HGX", "--nccl-buffsize", "64KiB", 16, 2 ** 26),
])
def test_costs_rows_are_collectives_figures_under_the_setting(where, flag, value, group,
                                                              size):
    code, out = _run("costs", "--scenario", where, "--groups", str(group), "--sizes",
                     str(size), flag, value, "--format", "json")
    assert code == 0, out
    table = json.loads(out)
    code, out = _run("collective", "all-reduce", "--scenario", where, "--group", str(group),
                     "--size", str(size), flag, value, "--json")
    assert code == 0, out
    one = json.loads(out)
    assert table["rows"][0]["seconds"] == one["time"]
    assert table["collectives"]["overrides"] == one["collectives"]["overrides"] != {}
    code, out = _run("costs", "--scenario", where, "--groups", str(group), "--sizes",
                     str(size), "--format", "json")
    assert json.loads(out)["rows"][0]["seconds"] != one["time"]   # the setting counts


@pytest.mark.parametrize("flag, value", [("--nccl-release", "2.99"),
                                         ("--nccl-buffsize", "7")])
def test_costs_refuses_a_bad_setting_in_one_line(flag, value):
    code, out = _run("costs", "--fabric", "ring:n=4", flag, value)
    assert code == 2 and len(out.strip().splitlines()) == 1 and flag in out, out
