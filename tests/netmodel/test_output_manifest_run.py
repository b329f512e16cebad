"""An ``--out`` folder's ``netmodel-manifest.json`` names the run that wrote it (docs/
output-formats.md): the command and its options as typed. Before, ``compare``, ``sweep``
and ``study lite-gpu`` wrote ``"run": {}``, and ``blast-radius`` and ``availability`` left
out ``--gpus``, ``--rate``, ``--ttft`` and the rest, so two different runs had one record."""

import json

from click.testing import CliRunner

from netmodel.cli.main import cli


def _run(tmp_path, args):
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, [*args, "--out", str(out), "--no-plot"])
    assert r.exit_code == 0, r.output
    return json.loads((out / "netmodel-manifest.json").read_text())["run"]


def test_compare_names_its_run(tmp_path):
    run = _run(tmp_path, ["compare", "--models", "Llama-3-8B", "--scenarios", "lite-flat",
                          "--phase", "decode", "--max-batch", "64", "-q"])
    assert run["command"] == "compare"
    # --phase typed: recorded under its documented name, --phases (a list)
    assert (run["models"], run["scenarios"], run["phases"], run["max-batch"], run["tbt"]) == \
        ("Llama-3-8B", "lite-flat", "decode", "64", "50ms")
    assert not {"out", "json", "quiet", "no-plot", "workers"} & set(run)


def test_sweep_names_its_run(tmp_path):
    run = _run(tmp_path, ["sweep", "--scenario", "lite-flat", "--models", "Llama-3-8B",
                          "--param", "adjust.hop_latency=100ns,1us", "-q"])
    assert run["command"] == "sweep"
    # --scenario typed: recorded under its documented name, --scenarios
    assert run["scenarios"] == ["lite-flat"] and run["param"] == ["adjust.hop_latency=100ns,1us"]


def test_blast_radius_names_the_cluster_size_and_rates(tmp_path):
    run = _run(tmp_path, ["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-8B",
                          "--gpus", "256", "--rate", "leaf=1e-5"])
    assert run["command"] == "blast-radius"
    # --gpus is an alias of --cluster-gpus (202403b): recorded under the option's name
    assert run["cluster-gpus"] == "256" and "gpus" not in run and run["rate"] == ["leaf=1e-5"]


def test_json_help_points_at_the_page_that_has_the_shape():
    # hardware, models, infer and search said 'Print JSON (shape in README)'; README has
    # no JSON shape: docs/output-formats.md has them
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "output-formats.md").read_text()
    for cmd in (["hardware"], ["models"], ["infer"], ["search"]):
        text = CliRunner().invoke(cli, [*cmd, "--help"], terminal_width=200).output
        assert "README" not in text, cmd
        assert "docs/output-formats.md" in text, cmd
    for cmd in ("hardware", "models", "infer", "search"):
        assert f"netmodel {cmd} " in page


def test_study_json_help_names_every_part_the_json_has():
    # the help said '({study, fabric, sweep})'; the document has ten parts
    from netmodel.study.lite_gpu import run_full_study

    result = run_full_study(["Llama-3-8B"], ["H100-SXM"], ["decode"], fabric=False)
    keys = list(json.loads(result.to_json()))
    text = " ".join(CliRunner().invoke(cli, ["study", "lite-gpu", "--help"],
                                       terminal_width=200).output.split())
    for k in keys:
        assert k in text.split("--json", 1)[1].split("--", 1)[0], k
    assert len(keys) == 10


def test_infer_refuses_json_and_csv_together():
    # Before: 'infer ... --json --csv' printed the JSON and dropped --csv without a word
    r = CliRunner().invoke(cli, ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM",
                                 "--tp", "1", "--batch", "1", "--json", "--csv"])
    assert r.exit_code == 2
    assert r.output.strip() == "error: give --json or --csv, not both (each prints the whole " \
                               "result)"
