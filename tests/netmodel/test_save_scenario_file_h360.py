"""save_scenario writes one file, beside whatever its folder holds.

It wrote through compute.outputs.write_outputs with the file's folder as the output folder,
which replaces that folder whole: saving b.toml after a.toml into one folder deleted
a.toml, a netmodel-manifest.json appeared beside the scenario, and a folder holding any
other file (notes, the fabric the scenario reads) refused the save.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_files import load_scenario, save_scenario


def test_two_scenarios_saved_into_one_folder_both_stay(tmp_path):
    flat, hier = get_scenario("lite-flat"), get_scenario("lite-hier")
    save_scenario(flat, tmp_path / "a.toml")
    save_scenario(hier, tmp_path / "b.toml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.toml", "b.toml"]
    assert load_scenario(tmp_path / "a.toml") == flat
    assert load_scenario(tmp_path / "b.toml") == hier


def test_a_folder_with_other_files_takes_the_scenario(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    path = save_scenario(get_scenario("lite-flat"), tmp_path / "s.toml")
    assert (tmp_path / "notes.txt").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "s.toml"]
    assert load_scenario(path) == get_scenario("lite-flat")


def test_a_saved_scenario_is_replaced_in_place(tmp_path):
    path = tmp_path / "s.toml"
    save_scenario(get_scenario("lite-flat"), path)
    save_scenario(get_scenario("lite-hier"), path)
    assert load_scenario(path) == get_scenario("lite-hier")
    assert [p.name for p in tmp_path.iterdir()] == ["s.toml"]


def test_the_suffix_and_a_folder_path_are_refused(tmp_path):
    with pytest.raises(UserError, match=r"must end in \.toml"):
        save_scenario(get_scenario("lite-flat"), tmp_path / "s.txt")
    (tmp_path / "d.toml").mkdir()
    with pytest.raises(UserError, match="is an existing folder"):
        save_scenario(get_scenario("lite-flat"), tmp_path / "d.toml")
