"""Names (GPUs, models, scenarios, profiles: compute.validate.name) refuse Unicode format
characters (category Cf) as they refuse control characters: a bidirectional control
(U+202A-U+202E, U+2066-U+2069) makes a name print as another in every table (a GPU file's
'\\u202eXS-001H' shows as 'H100-SX'), a zero-width one makes two names that print alike.
Hostile round: such names were accepted; nothing shipped holds one."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.hardware import catalog, load_gpu_file
from compute.models import model_catalog
from compute.profiles import get_profile, profile_names
from compute.validate import name
from netmodel.study.scenario_catalog import shipped_scenarios
from netmodel.study.serving import WORKLOADS
from tests.netmodel.cli_helpers import ROOT, measured_csv, one_line_error, run_cli

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
OTHER_CF = ["\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad"]  # zero-width, word joiner, BOM, SHY


def test_bidi_and_format_characters_are_category_cf():
    assert all(unicodedata.category(c) == "Cf" for c in BIDI + OTHER_CF)


@pytest.mark.parametrize("char", BIDI + OTHER_CF)
def test_name_check_refuses_format_characters(char):
    with pytest.raises(UserError, match=r"^g.toml: GPU name .* without control or format "
                                        r"characters \(such as U\+202E\) or '\$'"):
        name("g.toml", "GPU", f"Lite{char}X")
    assert name("g.toml", "GPU", "Lite-ünï (β)") == "Lite-ünï (β)"   # letters are fine


def test_gpu_file_name_refused(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('[gpu."\u202eXS-001H"]\nderive_from = "H100-SXM"\n', encoding="utf-8")
    with pytest.raises(UserError, match="format characters"):
        load_gpu_file(path)
    r = run_cli(["hardware", "--gpu-file", path])
    assert "\u202e" not in r.output
    one_line_error(r, "GPU name '\\u202eXS-001H'", "format characters")


def test_scenario_name_refused(tmp_path):
    text = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace('name = "lite-flat"', 'name = "lite\u2066-flat"'),
                    encoding="utf-8")
    one_line_error(run_cli(["topology", "show", path]), "scenario name 'lite\\u2066-flat'",
                   "format characters")


def test_calibrate_name_refused(tmp_path):
    out = tmp_path / "p.toml"
    one_line_error(run_cli(["calibrate", "--measurements", measured_csv(tmp_path), "-o", out,
                            "--name", "vllm\u202d"]), "format characters")
    assert not out.exists()


def test_nothing_shipped_holds_a_format_character():
    names = [*catalog(), *model_catalog(), *shipped_scenarios(), *profile_names(),
             *WORKLOADS, *(get_profile(p).name for p in profile_names())]
    for s in shipped_scenarios().values():
        names += [s.name, s.gpu]
    assert len(names) > 30
    assert not [n for n in names if any(unicodedata.category(c) == "Cf" for c in n)]
    data = [*Path(ROOT / "compute/data").rglob("*.toml"), *Path(ROOT / "netmodel/data").rglob("*.toml")]
    assert len(data) > 10
    for path in data:
        text = path.read_text(encoding="utf-8")
        assert not [c for c in text if unicodedata.category(c) == "Cf"], path
