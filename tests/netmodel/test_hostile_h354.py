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
