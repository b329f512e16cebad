"""Hostile round 15 (netmodel): what helper 155's driver found at the package's boundaries.
Each test fails on the code before its fix: numpy's 'iteration over a 0-d array' TypeError
raised through the API, or a refusal that listed every one of a file's 2,000 GPUs."""

from __future__ import annotations

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

ZERO_D = np.array(8)   # an Iterable by type that will not iterate


@pytest.mark.parametrize(("call", "name"), [
    (lambda: netmodel.compare(ZERO_D, ["lite-flat"], ["decode"], max_batch=8), "models"),
    (lambda: netmodel.compare(["Llama-3-8B"], ZERO_D, ["decode"], max_batch=8), "scenarios"),
    (lambda: netmodel.compare(["Llama-3-8B"], ["lite-flat"], ZERO_D, max_batch=8), "phases"),
    (lambda: netmodel.compare(["Llama-3-8B"], ["lite-flat"], ["decode"], gpus=ZERO_D), "gpus"),
    (lambda: netmodel.sweep(["lite-flat"], ZERO_D, ["Llama-3-8B"]), "params"),
    (lambda: netmodel.run_study(["Llama-3-8B"], ["Lite"], ZERO_D, fabric=False), "phases"),
    (lambda: netmodel.run_study(["Llama-3-8B"], ["Lite"], ["decode"], fabric=False,
                                networks=ZERO_D), "networks"),
])
def test_zero_d_array_refused_naming_the_parameter(call, name):
    with pytest.raises(UserError) as e:
        call()
    one = {"phases": "phase ('prefill' or 'decode')", "params": "'PATH=LO:HI' or 'PATH=V1,V2' "
           "text", "networks": "network name"}.get(name, "name, file or object")
    assert str(e.value) == f"{name} must be one {one}, or a list of them, got array(8)"


def test_gpu_file_of_many_gpus_refusal_is_bounded(tmp_path):
    """search --gpu-file of 2,000 GPUs without --gpu listed all 2,000 names (about 17 kB
    on one line); now the first 40 and how many more."""
    path = tmp_path / "many.toml"
    path.write_text("".join(f'[gpu."G{i:04}"]\nderive_from = "H100-SXM"\nsource = "x"\n'
                            for i in range(2000)))
    line = one_line_error(run_cli(["search", "--gpu-file", path, "--model", "Llama-3-8B"]),
                          "holds GPUs 'G0000', 'G0001',", "'G0039' and 1,960 more; choose one with --gpu")
    assert len(line) < 1200


@pytest.mark.parametrize("command", [
    ["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-8B"],
    ["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B"],
    ["compare", "--models", "Llama-3-8B"],
    ["sweep", "--scenario", "lite-flat", "--param", "adjust.hop_latency=1us:2us"],
    ["study", "lite-gpu"],
])
def test_out_folder_with_a_nul_byte(command, tmp_path):
    """Every --out DIR was click.Path(file_okay=False), whose os.stat raised ValueError
    ('embedded null byte': a traceback, exit 1) before the command's own folder check; now
    the type is that check (netmodel.cli.options.OutputFolder), nothing written."""
    out = tmp_path / "o\x00x"
    one_line_error(run_cli([*command, "--out", str(out)]),
                   "Invalid value for '--out': output folder", "holds a control character")
    assert list(tmp_path.iterdir()) == []


def test_scenario_named_as_a_formula_refused(tmp_path):
    """A scenario named '$\\undefinedmacro$' passed the name check and every figure of
    compare --out raised matplotlib's ParseFatalException (a traceback, exit 1); names
    (compute.validate.name: GPUs, models, scenarios, profiles) now hold no '$'."""
    text = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace('name = "lite-flat"', 'name = "$\\\\undefinedmacro$"'))
    one_line_error(run_cli(["compare", "--models", "Llama-3-8B", "--scenarios", path, "--phase",
                            "decode", "--max-batch", "8", "-q", "--out", tmp_path / "out"]),
                   "scenario name '$\\\\undefinedmacro$' must be non-empty text of at most 200 "
                   "characters without control or format characters (such as U+202E) or '$'")
    assert not (tmp_path / "out").exists()


class RaisingRepr:
    def __repr__(self):
        raise RuntimeError("repr")


@pytest.mark.parametrize(("call", "needle"), [
    (lambda: netmodel.get_scenario(RaisingRepr()),
     "a scenario must be a name or a .toml path, got a RaisingRepr"),
    (lambda: netmodel.build_fabric("torus", {"dims": RaisingRepr()}),
     "dims must be sides joined by 'x' (e.g. '4x4x4') or a list of sides, got a RaisingRepr"),
    (lambda: netmodel.build_fabric("torus", {"dims": [4] * 100}),
     "dims a list of 100 items must have 1 to 3 sides"),
    (lambda: netmodel.build_fabric("ocs", {"logical": RaisingRepr()}),
     "got a RaisingRepr"),
])
def test_values_shown_by_describe(call, needle):
    """Three refusals showed the value by repr or str()[:40]: a __repr__ that raises raised
    through them (RuntimeError); now compute.validate.describe, which never raises."""
    with pytest.raises(UserError) as e:
        call()
    assert needle in str(e.value)


def test_sweep_of_a_subnormal_lifetime():
    """sweep cost.lifetime=1e-320:1: the lifetime in years underflowed to 0.0 and the capex
    per year raised ZeroDivisionError (traceback, exit 1); now it is the overflow the cost
    check names."""
    one_line_error(run_cli(["sweep", "--scenario", "lite-flat", "--models", "Llama-3-8B",
                            "--max-batch", "8", "--phase", "decode", "-q", "--param",
                            "cost.lifetime=1e-320:1", "--points", "3"]),
                   "make the capex per year of lite-flat@Lite overflow to infinity")


def test_zero_d_array_as_group_or_algorithms_refused():
    """FabricCostModel took a 0-d array for its algorithms, and collective_time for its group,
    as an Iterable and iterated it: numpy's TypeError (left by helper 155)."""
    from netmodel.collectives.model import FabricCostModel
    from topologies.registry import build

    graph = build("single-switch:n=8,gpu=H100-SXM")
    with pytest.raises(UserError, match=r"^group must be a size \(int\) or a list of GPU "
                                        r"nodes, got array\(8\)$"):
        FabricCostModel(graph).collective_time("all-reduce", 1e6, ZERO_D)
    with pytest.raises(UserError, match=r"^algorithms must be 'nccl', a comma list or a "
                                        r"sequence of algorithm names, got array\(8\)$"):
        FabricCostModel(graph, algorithms=ZERO_D)
