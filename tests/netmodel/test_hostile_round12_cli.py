"""Hostile round 12 through the command line: an output folder that is a symbolic link
loop, a calibrated profile whose name or texts its own reader refuses, a swept [adjust]
value outside the range a scenario file takes. Each: one line, exit 2, nothing written."""

from __future__ import annotations

import re

import pytest

from compute.errors import UserError
from compute.measurements import read_measurements
from compute.profile_fit import fit_profile
from compute.profiles import read_profile
from tests.netmodel.cli_helpers import measured_csv, one_line_error, run_cli


@pytest.mark.parametrize("args", [
    ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--phase", "decode",
     "--max-batch", "16", "-q", "--no-plot", "--out"],
    ["sweep", "--scenario", "h100-dgx", "--param", "adjust.hop_latency=1us,2us", "--models",
     "Llama-3-8B", "--phase", "decode", "--max-batch", "16", "-q", "--no-plot", "--out"],
    ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "16",
     "--out"],
    ["costs", "--fabric", "single-switch:n=8", "--sizes", "1MiB:2MiB", "--groups", "2",
     "--format", "vidur", "-o"],
])
def test_an_output_folder_that_is_a_symlink_loop(tmp_path, args):
    # pathlib's resolve() raised RuntimeError('Symlink loop from ...'): a traceback, exit 1
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    r = run_cli(args + ["loop"], tmp_path)
    one_line_error(r, "output folder 'loop' is a symbolic link that loops")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop"]


@pytest.mark.parametrize("option, value, needle", [
    ("--name", "a\nb", "profile name 'a\\nb' must be non-empty text of at most 200 characters"),
    ("--name", "x" * 300, "profile name 'xxxx"),
    ("--engine", "e" * 3000, "engine must be text of at most 2,000 characters"),
    ("--system", "s" * 3000, "system must be text of at most 2,000 characters"),
])
def test_calibrate_writes_no_profile_its_reader_refuses(tmp_path, option, value, needle):
    # the profile was written (exit 0) and then refused by every --profile that read it:
    # 'mine.toml: [profile]: profile name 'a\nb' must be non-empty text ...'
    csv = measured_csv(tmp_path)
    r = run_cli(["calibrate", "--measurements", csv, "-o", "mine.toml", option, value], tmp_path)
    one_line_error(r, needle)
    assert not (tmp_path / "mine.toml").exists()


def test_fit_profile_checks_the_texts_first(tmp_path):
    csv = measured_csv(tmp_path)
    ms = read_measurements(csv)
    with pytest.raises(UserError, match=re.escape("profile name 'a\\tb' must be")):
        fit_profile(ms, name="a\tb")
    with pytest.raises(UserError, match="engine must be text of at most 2,000 characters"):
        fit_profile(ms, name="ok", engine=5)
    # what passes is read back: the same name and engine
    r = run_cli(["calibrate", "--measurements", csv, "-o", "mine.toml",
              "--name", "vLLM é 0.6", "--engine", "vLLM"], tmp_path)
    assert r.exit_code == 0, r.output
    p = read_profile(tmp_path / "mine.toml")
    assert (p.name, p.engine) == ("vLLM é 0.6", "vLLM")


@pytest.mark.parametrize("param, needle", [
    ("adjust.hop_latency=1e308s,1us", "adjust.hop_latency must be a number from 0 to 0.001 s, "
                                      "got 1e+308"),
    ("adjust.hop_latency=5s,1us", "adjust.hop_latency must be a number from 0 to 0.001 s, got 5.0"),
    ("adjust.hop_latency=1us:2s", "got 2.0"),
    # a hop's latency is a link's (limits.toml [quantity.link_latency]: at most 1 ms); 0.5 s
    # was taken where a builder's latency=0.5 is refused
    ("adjust.hop_latency=0.5,1us", "adjust.hop_latency must be a number from 0 to 0.001 s, "
                                   "got 0.5"),
    ("adjust.latency_scale=0.5,1e7", "adjust.latency_scale must be a number from 0 to "
                                     "1,000,000, got 10000000.0"),
    ("adjust.bandwidth_scale=1e-12,1", "adjust.bandwidth_scale must be a number from"),
])
def test_a_swept_adjustment_out_of_range_is_refused(tmp_path, param, needle):
    # each such point was shown as '-' without a word (the scenario refused it) and
    # 1e308 s headed its column 'inf' with numpy's overflow warning; a scenario file's
    # [adjust] refuses the same values
    r = run_cli(["sweep", "--scenario", "lite-flat", "--param", param, "--models", "Llama-3-8B",
              "--phase", "decode", "--max-batch", "16", "-q", "--no-plot", "--out", "d"],
             tmp_path)
    one_line_error(r, needle)
    assert not (tmp_path / "d").exists()


LONG = "x" * 10_000


@pytest.mark.parametrize("option, value, needle", [
    ("--fail", LONG, "failed node 'xxxxx"),
    ("--fail", f"gpu0/{LONG}", "failed link 'gpu0' - 'xxxxx"),
    ("--group", f"gpu0,{LONG}", "group member 'xxxxx"),
])
def test_a_long_unknown_node_is_cut(tmp_path, option, value, needle):
    # the whole 10,000-character name was echoed: a 10,050-character error line
    group = [] if option == "--group" else ["--group", "2"]   # an option is given once
    args = ["collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "1M",
            *group, option, value]
    line = one_line_error(run_cli(args, tmp_path), needle)
    assert len(line) < 200


def test_an_unhashable_group_member_or_failure():
    import netmodel

    # a list inside the group raised TypeError (unhashable) from 'g in graph'
    with pytest.raises(UserError, match=r"group member \['gpu0'\] is not a node"):
        netmodel.collective_time("single-switch:n=8", "all-reduce", 1e6, [["gpu0"], "gpu1"])
    from netmodel.collectives.degraded import degrade
    from topologies.registry import build

    with pytest.raises(UserError, match=r"failed node \['gpu0'\] is not a node"):
        degrade(build("single-switch:n=8"), nodes=[["gpu0"]])
