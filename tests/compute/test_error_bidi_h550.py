"""An error line escapes the bidirectional controls a file's text brings
(scripts/hostile_round18.py). Before: a GPU file with the key ``"x\\u202eyz" = 1`` was
refused as 'unknown key(s) x<U+202E>yz; allowed: ...', the right-to-left override printed
raw, so a terminal showed the rest of the line reversed (newlines, NUL and ESC were
already escaped); now the control is written ``\\u202e``. Names are refused for holding
one as before (:func:`compute.validate.string`, which reads the same set)."""

from __future__ import annotations

import pytest

from compute import validate
from compute.errors import BIDI_CONTROLS, UserError, shown
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli


@pytest.mark.parametrize("mark", sorted(BIDI_CONTROLS))
def test_each_control_is_escaped(mark):
    said = str(UserError(f"unknown key(s) a{mark}b"))
    assert said == f"unknown key(s) a\\u{ord(mark):04x}b"
    assert shown(f"a{mark}\nb") == f"a\\u{ord(mark):04x}\\nb"


def test_the_set_is_the_nine_controls_and_validate_reads_it():
    assert sorted(map(ord, BIDI_CONTROLS)) == [0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
                                               0x2066, 0x2067, 0x2068, 0x2069]
    assert validate._BIDI is BIDI_CONTROLS
    # other text is left as it is: accents, emoji and their zero-width joiner
    assert shown("caf\u00e9 \U0001f468\u200d\U0001f469") == "caf\u00e9 \U0001f468\u200d\U0001f469"


def test_a_gpu_file_key_with_an_override_is_said_escaped(tmp_path):
    text = (ROOT / "compute/data/gpus.toml").read_text()
    at = text.index('[gpu."H100-SXM"]')
    table = text[at:text.index("\n[", at + 1)].replace('"H100-SXM"', '"Mine"')
    (tmp_path / "g.toml").write_text(table + '\n"x\\u202eyz" = 1\n')
    line = one_line_error(run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "g.toml", "--tp",
                                   "1", "--batch", "1"], cwd=tmp_path))
    assert line.startswith("error: g.toml: GPU 'Mine' has unknown key(s) x\\u202eyz; allowed: ")
    assert not BIDI_CONTROLS.intersection(line)
