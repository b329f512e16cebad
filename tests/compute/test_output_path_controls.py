"""An output path is refused when it holds a control character, by the rule names follow
(compute.errors.one_line: C0, DEL, C1 and U+2028/2029). Only C0 (below 0x20) was refused:
a path with DEL, NEL (U+0085) or U+2028 was written, and the command's 'wrote PATH' line
carried the raw character (NEL and U+2028 end a line on terminals that honour them)."""

import pytest

from compute.errors import UserError
from compute.output_paths import check_file_path, check_folder_path


@pytest.mark.parametrize("char", ["\x7f", "\x85", "\x9f", "\u2028", "\u2029"])
def test_a_control_character_in_an_output_path_is_refused(tmp_path, char):
    name = f"a{char}b"
    with pytest.raises(UserError, match="holds a control character"):
        check_file_path(str(tmp_path / f"{name}.csv"))
    with pytest.raises(UserError, match="holds a control character"):
        check_folder_path(str(tmp_path / name))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["a\xa0b.csv", "caf\u00e9.csv", "a\udcffb.csv"])
def test_printable_and_undecodable_names_are_kept(tmp_path, name):
    # no-break space, an accent and a byte that is not UTF-8 (surrogate-escaped) are no
    # control characters: a Linux file system holds them
    assert check_file_path(str(tmp_path / name)).name == name
