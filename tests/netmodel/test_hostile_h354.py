"""Hostile input, round h354: the command line fed fabric files with hostile names and
output folders holding a user's inputs. Each test fails on the code before its fix."""

from __future__ import annotations

from click.testing import CliRunner

from netmodel.cli.main import cli


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_compare_out_keeps_a_scenario_file_put_in_an_earlier_output(tmp_path):
    # was: exit 0, and the folder (an earlier output: it held netmodel-manifest.json) was
    # replaced whole, deleting the scenario file the run had just read from it
    out = tmp_path / "out"
    args = ("compare", "--models", "Llama-3-8B", "--phases", "decode", "--no-plot", "-q",
            "--out", str(out))
    assert _run(*args, "--scenarios", "h100-dgx").exit_code == 0
    scenario = out / "mine.toml"
    scenario.write_text(_run("compare", "--show", "h100-dgx").output)
    before = sorted(p.name for p in out.iterdir())
    r = _run(*args, "--scenarios", str(scenario))
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and "Traceback" not in r.output
    assert f"output folder '{out}' holds 'mine.toml', which its netmodel-manifest.json does " \
           f"not list" in r.output
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_fabric_file_named_as_a_formula_is_refused_before_any_figure(tmp_path):
    # was: ParseFatalException (a traceback, exit 1) from collective --plot, the name drawn
    # in the figure's title; a node id of the same text did so from topology plot
    import json

    path = tmp_path / "f.json"
    assert _run("topology", "export", "single-switch:n=2", "-o", str(path)).exit_code == 0
    doc = json.loads(path.read_text())
    doc["graph"]["name"] = "$\\undefinedmacro$"
    path.write_text(json.dumps(doc))
    png = tmp_path / "c.png"
    r = _run("collective", "all-reduce", "--fabric", str(path), "--group", "2", "--plot",
             str(png))
    assert r.exit_code == 2, r.output
    assert r.output == (f"error: {path}: the fabric's name '$\\\\undefinedmacro$' holds '$' "
                        f"(a figure reads the text between two as a formula)\n")
    assert not png.exists()


def test_a_scenario_file_of_a_million_values_is_refused_before_parsing(tmp_path):
    # was: parsed in full (2 us a value; a 16 MiB file of '[],' 30 s and 0.9 GB), then
    # refused for the first key it reached: '[fabric] n must be a string, number or boolean,
    # got a list of 1,100,000 items'
    text = _run("compare", "--show", "lite-flat").output
    path = tmp_path / "s.toml"
    path.write_text(text.replace("n = 128", "n = [" + "1," * 1_100_000 + "]"))
    r = _run("topology", "show", str(path))
    assert r.exit_code == 2
    assert r.output == (f"error: {path} holds about 1,100,000 values in lists and tables, "
                        f"more than the 1,000,000 netmodel reads in such a file; is it the "
                        f"right file?\n")
