"""A folder given where a profile is expected is told so, not 'unknown profile'."""

import pytest

from compute.errors import UserError
from compute.profiles import get_profile, profile_names


def test_a_folder_is_named_a_folder(tmp_path):
    with pytest.raises(UserError) as err:
        get_profile(str(tmp_path))
    line = str(err.value)
    assert line.startswith(f"profile {str(tmp_path)!r} is a folder;")
    assert all(repr(name) in line for name in profile_names())
    assert "unknown" not in line


def test_an_unknown_name_is_still_unknown(tmp_path):
    with pytest.raises(UserError, match=r"^unknown profile 'no-such'"):
        get_profile("no-such")
    # a path that does not exist is not a folder
    with pytest.raises(UserError, match=r"^unknown profile"):
        get_profile(str(tmp_path / "missing"))
    # an empty name is not the working folder
    with pytest.raises(UserError, match=r"^unknown profile ''"):
        get_profile("")
