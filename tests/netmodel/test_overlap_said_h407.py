"""Every command that takes ``--overlap-collectives`` says so where it says its other modes.

The option moves the numbers (each per-layer all-reduce hidden behind the GEMM producing its
input), but infer, search, compare, sweep and study lite-gpu printed nothing that said it
was on, and infer's and search's ``--json`` results did not carry it: a saved output did
not tell which way it was costed. Now each prints one line,
:data:`netmodel.cli.resolve.OVERLAP_LINE`, where it prints the calibrated mode's (infer and
search under their collectives line, the others above their tables), a result carries
``overlap_collectives: true`` and serving's settings say it as they say the other options.
"""

import json

import click
import pytest
from click.testing import CliRunner

from netmodel.cli.help_format import command_paths
from netmodel.cli.main import cli

#: How the line starts and ends (written here, not imported: the test reads the output).
HEAD, TAIL = "overlapped collectives: ", "(--overlap-collectives)"

#: A small run of each command that takes the option.
ARGS = {
    ("infer",): ["--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "64"],
    ("search",): ["--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8",
                  "--max-batch", "8"],
    ("compare",): ["--models", "Llama-3-70B", "--phases", "decode", "--scenarios",
                   "lite-flat", "-q", "--max-batch", "8"],
    ("sweep",): ["--scenarios", "lite-flat", "--param", "fabric.latency=1e-7,1e-6",
                 "--models", "Llama-3-70B", "--phases", "decode", "-q", "--max-batch", "8"],
    ("study", "lite-gpu"): ["--models", "Llama-3-70B", "--gpus", "Lite", "--phases", "prefill",
                            "--networks", "ring", "--no-fabric", "--no-plot", "-q"],
}


def run(args, tmp_path=None):
    args = list(args)
    if args[:2] == ["study", "lite-gpu"]:
        args += ["--out", str(tmp_path / f"s{len(list(tmp_path.iterdir()))}")]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return r.stdout


def _taking_it() -> set[tuple[str, ...]]:
    """The commands with ``--overlap-collectives``, read from the command line itself."""
    out = set()
    for path in command_paths(cli):
        cmd, ctx = cli, click.Context(cli)
        for name in path:
            cmd = cmd.get_command(ctx, name)
        if not isinstance(cmd, click.Group) and any(
                "--overlap-collectives" in p.opts for p in cmd.params
                if isinstance(p, click.Option)):
            out.add(tuple(path))
    return out


def test_every_command_taking_it_is_checked():
    assert _taking_it() == set(ARGS)


def _said(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(HEAD)]


@pytest.mark.parametrize("path", list(ARGS), ids=" ".join)
def test_each_command_says_it_once(path, tmp_path):
    on = run([*path, *ARGS[path], "--overlap-collectives"], tmp_path)
    off = run([*path, *ARGS[path]], tmp_path)
    said = _said(on)
    assert len(said) == 1 and said[0].endswith(TAIL), on
    assert _said(off) == [] and TAIL not in off
    # the same line in every command, the one the helper writes
    from netmodel.cli.resolve import OVERLAP_LINE

    assert said == [OVERLAP_LINE]
    lines = on.splitlines()
    if path in (("infer",), ("search",)):   # under the collectives line, as --profile's
        assert lines[lines.index(said[0]) - 1].startswith("collectives: ")
    else:                                     # above the tables, as --profile's
        assert lines[0] == said[0]
    # the option moved the numbers the line is about
    assert on.replace(said[0] + "\n", "") != off


def test_json_results_carry_it():
    infer_on = json.loads(run(["infer", *ARGS[("infer",)], "--json", "--overlap-collectives"]))
    infer_off = json.loads(run(["infer", *ARGS[("infer",)], "--json"]))
    assert infer_on["overlap_collectives"] is True and "overlap_collectives" not in infer_off
    # hidden collectives: the step is shorter by what they hid (TP 8 all-reduces > 0)
    assert infer_on["latency_s"] < infer_off["latency_s"]
    best = json.loads(run(["search", *ARGS[("search",)], "--json",
                           "--overlap-collectives"]))["best"]
    assert best["overlap_collectives"] is True
    assert "overlap_collectives" not in json.loads(run(["search", *ARGS[("search",)],
                                                        "--json"]))["best"]


def test_result_records_it_on_every_path():
    """The one-configuration path (evaluate) and the grid's (search's best) both record it,
    and agree with each other."""
    from compute.evaluate_one import evaluate
    from compute.roofline import make_workload
    from compute.roofline_options import RooflineOptions
    from compute.search import search

    wl = make_workload("decode", 1500, 1513)
    for on in (False, True):
        o = RooflineOptions(overlap_collectives=on)
        one = evaluate("Llama-3-70B", "H100-SXM", 8, 8, wl, options=o)
        best = search("Llama-3-70B", "H100-SXM", wl, options=o, tp=[8], max_batch=8).best
        assert one.overlap_collectives is on and best.overlap_collectives is on
        assert best.batch == 8 and best.latency == one.latency


def test_serving_settings_say_it():
    from compute.roofline_options import RooflineOptions
    from netmodel.study.serving import serve

    on = serve("Llama-3-70B", "lite-flat", options=RooflineOptions(
        overlap_collectives=True), max_batch=8)
    off = serve("Llama-3-70B", "lite-flat", max_batch=8)
    assert on.settings["options"]["overlap_collectives"] is True
    assert off.settings["options"]["overlap_collectives"] is False
