"""The command line names its flags where a library error names the parameter behind one
(``give mtp_tokens 0`` -> ``give --mtp-tokens 0``, ``area_share must be`` -> ``--area-share
must be``); the library keeps naming parameters (names at the boundary)."""

from __future__ import annotations

import click
import pytest

from compute.errors import UserError
from compute.roofline_options import RooflineOptions
from netmodel.cli.refusals import flags_for_parameters
from tests.netmodel.cli_helpers import one_line_error, run_cli

INFER = ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1"]


@pytest.mark.parametrize("args, flag, parameter", [
    # compute.mtp.check_model: Llama-3-70B has no MTP module
    (INFER + ["--mtp-tokens", "1"], "give --mtp-tokens 0", "mtp_tokens"),
    (INFER + ["--mode", "serial", "--overlap-collectives"], "--overlap-collectives needs",
     "overlap_collectives"),
    (INFER + ["--dense-mlp-tp", "3"], "(--dense-mlp-tp) must be 1", "dense_mlp_tp"),
    (["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--area-share",
      "0.01", "--trials", "2"], "--area-share must be in", "area_share"),
    (["yield", "--area", "800", "--defect-density", "1000"], "--defect-density 1000 per cm^2",
     "defect_density"),
    (["yield", "--area", "800", "--wafer-diameter", "2m"], "--wafer-diameter 2000 mm",
     "wafer_diameter"),
    # --rate gpu-die: its rate comes from the GPU split, set by --area-share (not typed)
    (["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--rate",
      "gpu-die=1e-6"], "or the split with --area-share", "area_share"),
    (["collective", "all-to-all", "--fabric", "single-switch:n=16", "--group", "16",
      "--max-transfers", "5"], "(--max-transfers)", "max_transfers"),
])
def test_command_line_says_the_flag(args, flag, parameter):
    line = one_line_error(run_cli(args), flag)
    assert parameter not in line, line


def test_library_keeps_the_parameter_name():
    from compute.evaluate_one import evaluate
    from compute.hardware import get_gpu
    from compute.models import get_model
    from compute.roofline import make_workload

    with pytest.raises(UserError, match=r"give mtp_tokens 0$"):
        evaluate(get_model("Llama-3-70B"), get_gpu("H100-SXM"), 8, 1,
                 make_workload("decode", 1500, 1513), options=RooflineOptions(mtp_tokens=1))


def test_a_files_key_and_other_names_are_left():
    """A file's key of an option's name (``m.toml: compute_dtype``, as compute.validate
    writes one) and a name that is no option of the command stay as they are."""
    cmd = click.Command("x", params=[click.Option(["--compute-dtype"]),
                                     click.Option(["--mtp-tokens"])])
    msg = ("m.toml: compute_dtype 'int8' needs int8 weights, or the compute_dtype option; "
           "mtp_modules 0; mtp_tokens 1")
    want = ("m.toml: compute_dtype 'int8' needs int8 weights, or the --compute-dtype option; "
            "mtp_modules 0; --mtp-tokens 1")
    assert flags_for_parameters(msg, cmd, []) == want
    group = click.Group("g", commands={"x": cmd})
    assert flags_for_parameters(msg, group, ["x", "--compute-dtype=int8"]) == want
    assert flags_for_parameters(msg, group, ["y"]) == msg
