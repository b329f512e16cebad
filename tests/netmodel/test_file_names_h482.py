"""A name ending in .toml or .json is a file's path, never a catalog name (h482): where no
such file exists and the name less its suffix is a catalog model or GPU or a shipped
scenario, the refusal says the rule and the name meant, instead of only 'does not exist'.
A file of that path is read as before (a user's file beside a catalog name is not
shadowed), and a name the catalog does not hold is refused as before."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from compute.models import get_model
from netmodel.study.scenario_catalog import get_scenario
from tests.netmodel.cli_helpers import one_line_error, run_cli


@pytest.mark.parametrize("get, ref, line", [
    (get_model, "Llama-3-8B.toml", "model file 'Llama-3-8B.toml' does not exist; a name "
     "ending in .toml or .json is read as a file's path: the catalog's model 'Llama-3-8B' "
     "is named without '.toml'"),
    (get_model, "llama-3-8b.JSON", "model file 'llama-3-8b.JSON' does not exist; a name "
     "ending in .toml or .json is read as a file's path: the catalog's model 'Llama-3-8B' "
     "is named without '.JSON'"),
    (get_gpu, "H100-SXM.json", "GPU file 'H100-SXM.json' does not exist; a name ending in "
     ".toml or .json is read as a file's path: the catalog's GPU 'H100-SXM' is named "
     "without '.json'"),
    (get_scenario, "lite-flat.toml@Lite", "scenario file 'lite-flat.toml' does not exist; a "
     "name ending in .toml is read as a file's path: the shipped scenario 'lite-flat' is "
     "named without '.toml'"),
])
def test_a_catalog_name_with_a_suffix_is_told_the_rule(get, ref, line, tmp_path,
                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as exc:
        get(ref)
    assert str(exc.value) == line


def test_no_hint_where_the_name_names_no_entry_or_has_a_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for get, ref, line in [(get_model, "nope.json", "model file 'nope.json' does not exist"),
                           (get_scenario, "x/lite-flat.toml",
                            "scenario file 'x/lite-flat.toml' does not exist")]:
        with pytest.raises(UserError) as exc:
            get(ref)
        assert str(exc.value) == line


def test_a_file_of_that_name_is_read(tmp_path, monkeypatch):
    # a user's GPU file named after a catalog GPU is read, not the catalog's entry
    monkeypatch.chdir(tmp_path)
    (tmp_path / "H100-SXM.toml").write_text("[gpu.Mine]\nsms = 0\n")
    with pytest.raises(UserError) as exc:
        get_gpu("H100-SXM.toml")
    assert "H100-SXM.toml" in str(exc.value) and "does not exist" not in str(exc.value)


def test_the_cli_says_it_in_one_line(tmp_path):
    r = run_cli(["infer", "--model", "Llama-3-8B.toml", "--gpu", "H100-SXM", "--tp", "1",
                 "--batch", "1"], cwd=tmp_path)
    assert one_line_error(r).endswith("the catalog's model 'Llama-3-8B' is named without "
                                      "'.toml'")
