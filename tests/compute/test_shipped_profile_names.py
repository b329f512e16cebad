"""A shipped engine profile is found by its file's name (``--profile NAME`` reads
``compute/data/profiles/NAME.toml``) and reported by its ``[profile] name``: the two must be
one. A profile added by copying a shipped file and editing its figures, its name left as
the original's, ran as the new profile and was reported under the old one's name
(``--profile mine`` printed 'engine profile vllm-dgx-h100')."""

from __future__ import annotations

import shutil

import pytest

from compute import profiles
from compute.errors import UserError


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A profiles folder of our own in place of the package's, caches cleared."""
    folder = tmp_path / "profiles"
    shutil.copytree(profiles._shipped(), folder)
    monkeypatch.setattr(profiles, "_shipped", lambda: folder)
    for f in (profiles.profile_names, profiles._shipped_profile):
        f.cache_clear()
    yield folder
    for f in (profiles.profile_names, profiles._shipped_profile):
        f.cache_clear()


def test_every_shipped_profile_is_named_as_its_file():
    for name in profiles.profile_names():
        assert profiles.get_profile(name).name == name


def test_a_copy_that_kept_its_original_name_is_refused(shipped):
    text = (shipped / "vllm-dgx-h100.toml").read_text(encoding="utf-8")
    (shipped / "mine.toml").write_text(text, encoding="utf-8")
    assert "mine" in profiles.profile_names()
    with pytest.raises(UserError) as err:
        profiles.get_profile("mine")
    assert str(err.value) == (
        "compute/data/profiles/mine.toml: [profile] name 'vllm-dgx-h100' is not its file's "
        "name 'mine' (a shipped profile is found by its file's name: give both the same)")


def test_a_copy_renamed_is_taken_with_its_own_figures(shipped):
    text = (shipped / "vllm-dgx-h100.toml").read_text(encoding="utf-8")
    original = profiles.get_profile("vllm-dgx-h100")
    text = text.replace('name = "vllm-dgx-h100"', 'name = "mine"', 1)
    text = text.replace(f"value = {original.layer_overhead_s!r}", "value = 0.0005", 1)
    (shipped / "mine.toml").write_text(text, encoding="utf-8")
    profiles.profile_names.cache_clear()   # the folder listed again, with it
    mine = profiles.get_profile("mine")
    assert mine.name == "mine" and mine.layer_overhead_s == 0.0005
    assert original.layer_overhead_s != 0.0005
