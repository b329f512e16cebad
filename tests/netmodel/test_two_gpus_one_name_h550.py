"""Two GPU files of ``--gpus`` that define one GPU name differently are said as such
(scripts/hostile_round18.py). Before: 'scenarios 'h100-dgx' and 'h100-dgx' differ but are
both h100-dgx@Mine; give each scenario its own name', blaming one scenario given once; now
the two files, the name and the first field they differ in."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.scenario_catalog import expand_scenarios
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli


def _gpu_files(folder):
    """g1.toml and g2.toml in ``folder``: GPU 'Mine' of 132 and of 66 SMs."""
    text = (ROOT / "compute/data/gpus.toml").read_text()
    at = text.index('[gpu."H100-SXM"]')
    table = text[at:text.index("\n[", at + 1)].replace('"H100-SXM"', '"Mine"') + "\n"
    (folder / "g1.toml").write_text(table)
    (folder / "g2.toml").write_text(table.replace("sms = 132", "sms = 66"))
    return "g1.toml", "g2.toml"


@pytest.mark.parametrize("scenarios", [["h100-dgx"], ["lite-flat", "h100-dgx"]])
def test_the_files_and_the_field_are_said(tmp_path, monkeypatch, scenarios):
    monkeypatch.chdir(tmp_path)
    g1, g2 = _gpu_files(tmp_path)
    with pytest.raises(UserError) as err:
        expand_scenarios(scenarios, [g1, g2])
    assert str(err.value) == (f"gpus: {g1!r} and {g2!r} both define a GPU named 'Mine', "
                              "differently (sms 132 and 66); give each its own name")


def test_one_file_twice_is_one_gpu(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    g1, _ = _gpu_files(tmp_path)
    assert [s.label for s in expand_scenarios(["lite-flat"], [g1, g1])] == ["lite-flat@Mine"]


def test_two_scenarios_of_one_label_are_still_said_as_scenarios(tmp_path):
    text = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text()
    (tmp_path / "lite-flat.toml").write_text(text.replace("planes = 4", "planes = 2"))
    with pytest.raises(UserError, match=r"^scenarios 'lite-flat' and '/.*' differ but are "
                                        r"both lite-flat@Lite; give each scenario its own"):
        expand_scenarios(["lite-flat", str(tmp_path / "lite-flat.toml")])


def test_compare_names_gpus(tmp_path):
    _gpu_files(tmp_path)
    line = one_line_error(run_cli(["compare", "--scenarios", "h100-dgx", "--models",
                                   "Llama-3-8B", "--gpus", "g1.toml,g2.toml", "--max-batch",
                                   "8", "--no-plot", "-q"], cwd=tmp_path))
    assert line == ("error: --gpus 'g1.toml,g2.toml': gpus: 'g1.toml' and 'g2.toml' both define "
                    "a GPU named 'Mine', differently (sms 132 and 66); give each its own name")
