"""A name has one spelling: written in Unicode's composed form (NFC). 'Café' as e + U+0301
and as U+00E9 print alike; a GPU file could define both, two GPUs no table or figure could
tell apart (h710's hostile round 30). compute.validate.name refuses the decomposed one in
one line that spells both forms' code points."""

from __future__ import annotations

import unicodedata

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.validate import name
from netmodel.cli.main import cli

ENTRY = '[gpu."{n}"]\nderive_from = "H100-SXM"\nfraction = 0.5\nsource = "what-if: a test"\n'
DECOMPOSED, COMPOSED = "Cafe\u0301", "Caf\u00e9"


def test_the_two_spellings_print_alike_and_differ():
    assert unicodedata.normalize("NFC", DECOMPOSED) == COMPOSED != DECOMPOSED


def test_the_library_refuses_the_decomposed_spelling_and_takes_the_composed():
    assert name("g.toml", "GPU", COMPOSED) == COMPOSED
    with pytest.raises(UserError, match=r"GPU name 'Cafe\\u0301' must be written in "
                                        r"Unicode's composed form \(NFC\), 'Caf\\xe9'"):
        name("g.toml", "GPU", DECOMPOSED)


@pytest.mark.parametrize("names", [[DECOMPOSED], [COMPOSED, DECOMPOSED]])
def test_a_gpu_file_with_a_decomposed_name_is_refused_in_one_line(tmp_path, names):
    f = tmp_path / "g.toml"
    f.write_text("".join(ENTRY.format(n=n) for n in names), encoding="utf-8")
    r = CliRunner().invoke(cli, ["hardware", "--gpu-file", str(f)])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "Cafe\\u0301" in lines[0] and "NFC" in lines[0]


def test_a_gpu_file_with_the_composed_name_is_read(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text(ENTRY.format(n=COMPOSED), encoding="utf-8")
    r = CliRunner().invoke(cli, ["hardware", "--gpu-file", str(f)])
    assert r.exit_code == 0, r.output
    assert COMPOSED in r.output
