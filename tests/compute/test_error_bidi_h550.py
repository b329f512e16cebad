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


@pytest.mark.parametrize("args", [
    ["topology", "export", "ring:n=4", "-o", "a\u202enosj.json"],
    ["costs", "--fabric", "ring:n=8", "--sizes", "1MiB", "--groups", "8", "-o",
     "c\u2067.csv"],
    ["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
     "--no-plot", "-q", "--out", "o\u202eut"],
])
def test_an_output_path_with_a_control_is_refused(tmp_path, args):
    # before: written, and 'wrote a<U+202E>nosj.json' printed showed as another name
    line = one_line_error(run_cli(args, cwd=tmp_path))
    mark = next(c for c in args[-1] if c in BIDI_CONTROLS)
    assert f"{args[-1][:1]}\\u{ord(mark):04x}" in line
    assert line.endswith("holds a bidirectional control (U+202A-U+202E, U+2066-U+2069), "
                         "which would turn the line 'wrote ...' around")
    assert not BIDI_CONTROLS.intersection(line)
    assert list(tmp_path.iterdir()) == []
